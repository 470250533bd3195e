//! Every console example of the README and the manual runs against the real binary (issue 44,
//! section 2), so the docs cannot drift from it.
//!
//! A ```` ```console ```` block is a list of `$ contracts …` commands, each followed by the
//! exact output a terminal shows: stdout and stderr merged into one pipe, in the order the tool
//! wrote them. Into a pipe the tool never shortens a table, so what the docs show is all of
//! it. The blocks run in a clone of this repository at HEAD (the example store: the tool
//! reads it at HEAD anyway), never in the checkout, with a cleared environment; a page that
//! runs on the test fixtures names them by their path from the root. The pages of [`SCRATCH`]
//! build a store of their own instead, with shell steps, in a scratch folder.
//!
//! A block that cannot run either way (it needs a store laid out by hand, a server, object
//! storage, or a commit id that changes with this repository's HEAD) is listed in [`NOT_RUN`]
//! with the reason. A block that is neither run nor listed
//! fails the suite, and so does a listed block that is gone or changed its first command.
//! `UPDATE_DOCS=1 cargo test --test runner -- test_doc_examples` rewrites the outputs.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::docs;

/// The console blocks that are not run: page, number of the block among the page's console
/// blocks (from 1), its first command without `$ `, and why it is not run.
const NOT_RUN: &[(&str, usize, &str, &str)] = &[
    (
        "docs/src/commands/advisory.md",
        1,
        "contracts advisory world",
        "a store with a `world` dataset and its recorded releases, not this repository",
    ),
    (
        "docs/src/commands/check.md",
        4,
        "contracts check",
        "the count of commits checked grows with every commit of this repository",
    ),
    (
        "docs/src/commands/sunset.md",
        1,
        "contracts sunset countries 1 --on 2027-05-01 --rationale \"Flood model needs a month more.\"",
        "a store where the sunset of countries line 1 is still 2027-04-01",
    ),
    (
        "docs/src/guides/object-storage-and-dask.md",
        1,
        "contracts profile data/world/                                  # every data file below it",
        "a local `data/world/` folder and an S3 bucket the page supposes",
    ),
    (
        "docs/src/guides/object-storage-and-dask.md",
        2,
        "contracts profile --verbose s3://releases/countries.parquet > profile.json",
        "an S3 bucket, and a redirection into a file",
    ),
    (
        "docs/src/guides/object-storage-and-dask.md",
        3,
        "python3 examples/dask/profile_release.py --local-workers 4 data/world/ > world.json",
        "Dask and a `data/world/` folder the page supposes",
    ),
    (
        "docs/src/guides/object-storage-and-dask.md",
        4,
        "python3 examples/dask/profile_release.py --scheduler tcp://scheduler:8786 --contracts /usr/local/bin/contracts s3://releases/world/2026-11/year=2026/ ...",
        "a Dask scheduler and an S3 bucket",
    ),
    (
        "docs/src/guides/object-storage-and-dask.md",
        5,
        "python3 examples/dask/summarize_reads.py --local-workers 4 --out summary/2026-11.jsonl 'log/day=2026-11-*/*.jsonl.gz'",
        "Dask and access logs the page supposes",
    ),
    (
        "docs/src/reference/access-logs.md",
        1,
        "contracts --today 2026-12-02 consumers countries",
        "a store whose consumption source is an S3 access log this repository does not ship",
    ),
    (
        "docs/src/reference/access-logs.md",
        2,
        "contracts --today 2026-12-02 consumers countries",
        "a store whose consumption source is a CloudFront log this repository does not ship",
    ),
    (
        "docs/src/reference/access-logs.md",
        3,
        "contracts --today 2026-12-02 consumers countries",
        "a store whose consumption source is an nginx log this repository does not ship",
    ),
];

/// The pages whose console blocks build a store of their own, step by step with shell commands
/// between them: their blocks run in order, in one scratch folder per page
/// ([`docs::Scratch`]), each command through `sh`.
///
/// Each page comes with the shell command that prepares its folder, run first and not shown:
/// the pages whose examples write files run in a clone of the example store.
const SCRATCH: &[(&str, &str)] = &[
    ("docs/src/commands/init.md", ""),
    ("docs/src/guides/first-store.md", ""),
    ("docs/src/guides/when-a-release-must-ship.md", ""),
    ("docs/src/commands/waive.md", PLACES),
    ("docs/src/reference/waivers.md", PLACES),
    ("docs/src/commands/check.md", PLACES_WAIVED),
    ("docs/src/commands/consumption-summarize.md", CLONE),
    ("docs/src/commands/propose.md", ROADS),
    ("docs/src/commands/sunset.md", COPY),
    ("docs/src/reference/store-files.md", EVIL),
    ("docs/src/commands/export.md", CLONE),
    ("docs/src/commands/import.md", ODCS),
    ("docs/src/commands/man.md", CLONE),
    ("docs/src/commands/schema.md", CLONE),
    ("docs/src/commands/site.md", CLONE),
    ("docs/src/commands/timeline.md", CLONE),
    ("docs/src/commands/review.md", PULL_REQUEST),
];

/// The example store on `main` in a repository of its own (fixed commit ids), and a branch
/// `enforce-geometry` checked out on it with the example draft of countries 2.1.0 committed.
const PULL_REQUEST: &str = "{ mkdir store && cd store && git init -q -b main \
     && cp -r ~/contracts/contracts.toml ~/contracts/consumers.toml ~/contracts/contracts \
        ~/contracts/history ~/contracts/notifications ~/contracts/consumption . \
     && git add -A && git commit -qm 'the example store' \
     && git checkout -q -b enforce-geometry && mkdir drafts \
     && cp ~/contracts/examples/drafts/countries-2.1.0.toml drafts/ \
     && git add drafts && git commit -qm 'countries 2.1.0: enforce the geometry'; \
     } >/dev/null 2>&1 || echo the setup failed";

/// The `places` store of the waiver guide, made from the files beside it as the guide does.
const PLACES: &str = "{ contracts init places-store && cd places-store \
     && cp ~/contracts/docs/src/guides/waiver-example/* . \
     && contracts --today 2026-01-01 propose places-1.0.0.toml --rationale First; } >/dev/null 2>&1 || echo the setup failed";

/// [`PLACES`] with the guide's waiver of `pop_est` on line 1, until 2026-12-31.
const PLACES_WAIVED: &str = "{ contracts init places-store && cd places-store \
     && cp ~/contracts/docs/src/guides/waiver-example/* . \
     && contracts --today 2026-01-01 propose places-1.0.0.toml --rationale First \
     && contracts --today 2026-11-29 waive places max_null_fraction.pop_est --line 1 \
        --until 2026-12-31 --reason 'Census feed outage; fixed feed due 2026-12-20'; \
     } >/dev/null 2>&1 || echo the setup failed";

/// [`CLONE`] with `roads` 1.3.0 of the test fixtures published, and a draft 1.4.0 that
/// loosens its `positional_rmse_m` from 2.0 to 3.0.
const ROADS: &str = "git clone -q ~/contracts . && { mkdir -p drafts \
     && sed '/^supersedes/d' ~/contracts/tests/fixtures/diff/roads-1.3.0.toml > drafts/roads-1.3.0.toml \
     && contracts --today 2026-06-01 propose drafts/roads-1.3.0.toml --rationale First \
     && sed -e 's/^version .*/version     = \"1.4.0\"/' -e 's/^supersedes .*/supersedes  = \"1.3.0\"/' \
        -e 's/^valid_from .*/valid_from  = 2027-01-01/' -e 's/positional_rmse_m = 2.0/positional_rmse_m = 3.0/' \
        ~/contracts/tests/fixtures/diff/roads-1.3.0.toml > drafts/roads-1.4.0.toml; \
     } >/dev/null 2>&1 || echo the setup failed";

/// `copy`: the example store's files in a new repository, one commit, so the commit ids of
/// writes in it do not change with every commit of this repository.
const COPY: &str = "{ mkdir copy && cd copy && git init -q \
     && cp -r ~/contracts/contracts.toml ~/contracts/consumers.toml ~/contracts/contracts \
        ~/contracts/history ~/contracts/notifications . \
     && git add -A && git commit -qm 'the example store' && cd ..; \
     } >/dev/null 2>&1 || echo the setup failed";

/// [`COPY`]'s store, entered, with the ODCS documents the import page reads in `odcs/`.
const ODCS: &str = "{ mkdir copy && cd copy && git init -q \
     && cp -r ~/contracts/contracts.toml ~/contracts/consumers.toml ~/contracts/contracts \
        ~/contracts/history ~/contracts/notifications . \
     && git add -A && git commit -qm 'the example store' && mkdir odcs \
     && cp ~/contracts/tests/data/odcs/examples/quality/column-completeness.odcs.yaml \
        ~/contracts/tests/data/odcs/examples/all/full-example.odcs.yaml \
        ~/contracts/tests/fixtures/odcs/parcels-rfc0048.odcs.yaml odcs/; \
     } >/dev/null 2>&1 || echo the setup failed";

/// [`CLONE`] with `evil.toml`, a draft first contract of a dataset `evil`.
const EVIL: &str =
    "git clone -q ~/contracts . && printf 'dataset = \"evil\"\\nversion = \"1.0.0\"\\n\
     valid_from = 2027-01-01\\n[clauses]\\ncrs = \"EPSG:4326\"\\n' > evil.toml";

/// The example store at HEAD, cloned into the scratch folder.
const CLONE: &str = "git clone -q ~/contracts .";

/// One command of a block and the output shown under it (lines `out_from..out_to`).
struct Step {
    command: String,
    out_from: usize,
    out_to: usize,
    shown: String,
}

struct Block {
    page: String,
    number: usize,
    line: usize,
    steps: Vec<Step>,
}

impl Block {
    fn first(&self) -> &str {
        self.steps.first().map_or("", |s| s.command.as_str())
    }

    fn name(&self) -> String {
        format!(
            "{} block {} (line {})",
            self.page,
            self.number,
            self.line + 1
        )
    }
}

/// The console blocks of `page`: each `$ ` line starts a command (a line ending in `\`
/// continues it), the lines up to the next command are its output.
fn blocks(page: &str) -> Vec<Block> {
    let text = std::fs::read_to_string(docs::root().join(page)).expect("the page");
    let mut out = Vec::new();
    for (n, f) in docs::fences(&text, "console").into_iter().enumerate() {
        let mut steps: Vec<Step> = Vec::new();
        let mut continued = false;
        for (i, line) in f.lines.iter().enumerate() {
            let at = f.open + 1 + i;
            if continued {
                let s = steps.last_mut().expect("a command");
                s.command.push(' ');
                s.command
                    .push_str(line.trim().trim_end_matches('\\').trim_end());
                continued = line.ends_with('\\');
                s.out_from = at + 1;
                s.out_to = at + 1;
            } else if let Some(cmd) = line.strip_prefix("$ ") {
                continued = cmd.ends_with('\\');
                steps.push(Step {
                    command: cmd.trim_end_matches('\\').trim_end().to_string(),
                    out_from: at + 1,
                    out_to: at + 1,
                    shown: String::new(),
                });
            } else {
                let s = steps
                    .last_mut()
                    .unwrap_or_else(|| panic!("{page}:{}: output before a `$ ` command", at + 1));
                s.shown.push_str(line);
                s.shown.push('\n');
                s.out_to = at + 1;
            }
        }
        out.push(Block {
            page: page.to_string(),
            number: n + 1,
            line: f.open,
            steps,
        });
    }
    out
}

/// `command` as the words a POSIX shell would pass (quotes, backslashes, a `#` comment), or
/// `None` when it is more than one plain `contracts` command: a pipe, a redirection, `&&`.
fn words(command: &str) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => out.extend(word.take()),
            '#' if word.is_none() => break,
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                w.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    match c {
                        '"' => break,
                        '$' | '`' | '\\' => return None,
                        c => w.push(c),
                    }
                }
            }
            '|' | '>' | '<' | '&' | ';' | '$' | '`' | '(' | ')' | '*' | '?' | '\\' | '~' => {
                return None
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    (out.first().map(String::as_str) == Some("contracts")).then(|| out.split_off(1))
}

/// A clone of this repository at HEAD, removed when the test ends: the examples may read and
/// write in it, never in the checkout.
fn clone_of_the_store() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("doc-examples-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a folder for the clone");
    let out = std::process::Command::new("git")
        .args(["clone", "-q"])
        .arg(docs::root())
        .arg(dir.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git clone: {out:?}");
    dir
}

fn head_and_status(dir: &Path) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["log", "-1", "--format=%H"])
        .output()
        .expect("git runs");
    let status = std::process::Command::new("git")
        .current_dir(dir)
        .args(["status", "--porcelain"])
        .output()
        .expect("git runs");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&status.stdout)
    )
}

#[test]
fn every_console_example_is_run_or_listed_with_a_reason() {
    let all: Vec<Block> = docs::pages().iter().flat_map(|p| blocks(p)).collect();
    assert!(
        all.len() > 40,
        "only {} console blocks: is the parser broken?",
        all.len()
    );
    let listed = |b: &Block| {
        NOT_RUN
            .iter()
            .find(|(page, n, _, _)| *page == b.page && *n == b.number)
    };
    // The list names blocks that exist, by their first command, each with a reason.
    let mut problems = Vec::new();
    for (page, n, first, why) in NOT_RUN {
        match all.iter().find(|b| b.page == *page && b.number == *n) {
            None => problems.push(format!("NOT_RUN names {page} block {n}, which is gone")),
            Some(b) if b.first() != *first => problems.push(format!(
                "NOT_RUN names {} as `{first}`, but its first command is `{}`",
                b.name(),
                b.first()
            )),
            Some(_) if why.trim().is_empty() => {
                problems.push(format!("NOT_RUN gives {page} block {n} no reason"))
            }
            Some(_) => {}
        }
    }
    // The tool ends no line in whitespace (issue 44, item 10), so no example may either, run
    // or not.
    for b in &all {
        for s in &b.steps {
            if s.shown.lines().any(|l| l.ends_with([' ', '\t'])) {
                problems.push(format!(
                    "{}: the output of `{}` has a line ending in whitespace",
                    b.name(),
                    s.command
                ));
            }
        }
    }
    let clone = clone_of_the_store();
    let store = clone.path();
    let before = head_and_status(store);
    let mut wrong = Vec::new();
    let mut edits: BTreeMap<String, Vec<(usize, usize, String)>> = BTreeMap::new();
    // A step's output against the page: a difference is reported, and kept as the edit
    // UPDATE_DOCS makes.
    let mut judge = |b: &Block, s: &Step, actual: String| {
        let name = format!("{}: $ {}", b.name(), s.command);
        if let Some(diff) = docs::difference(&name, &s.shown, &actual) {
            wrong.push(diff);
            edits
                .entry(b.page.clone())
                .or_default()
                .push((s.out_from, s.out_to, actual));
        }
    };
    let mut ran = 0;
    let mut scratch: Option<(String, docs::Scratch)> = None;
    for b in all.iter().filter(|b| listed(b).is_none()) {
        if let Some((_, setup)) = SCRATCH.iter().find(|(page, _)| *page == b.page) {
            if scratch.as_ref().is_none_or(|(page, _)| *page != b.page) {
                let mut folder = docs::Scratch::new();
                let said = folder.run(setup);
                assert_eq!(said, "", "{}: `{setup}` failed", b.page);
                scratch = Some((b.page.clone(), folder));
            }
            let (_, folder) = scratch.as_mut().expect("made above");
            ran += 1;
            for s in &b.steps {
                let actual = folder.run(&s.command);
                judge(b, s, actual);
            }
            continue;
        }
        let parsed: Option<Vec<Vec<String>>> = b.steps.iter().map(|s| words(&s.command)).collect();
        let Some(argv) = parsed.filter(|a| !a.is_empty()) else {
            problems.push(format!(
                "{} (`{}`) is not plain `contracts` commands: make it one, or list it in NOT_RUN \
                 with the reason",
                b.name(),
                b.first()
            ));
            continue;
        };
        ran += 1;
        for (s, args) in b.steps.iter().zip(argv) {
            let out = docs::example_command(&args)
                .current_dir(store)
                .stderr_to_stdout()
                .output()
                .expect("binary runs");
            judge(b, s, String::from_utf8_lossy(&out.stdout).into_owned());
        }
    }
    assert_eq!(
        head_and_status(store),
        before,
        "a run example wrote to the store: list it in NOT_RUN"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(ran > 0, "no console example ran");
    docs::rewrite_or_fail(edits, &wrong, "console example(s)");
}

#[test]
fn the_example_parser_reads_commands_as_a_shell_would() {
    let w = |s: &str| words(s).map(|v| v.join("|"));
    assert_eq!(w("contracts status"), Some("status".into()));
    assert_eq!(
        w("contracts diff a b   # two files"),
        Some("diff|a|b".into())
    );
    assert_eq!(
        w("contracts propose x --rationale \"Tolerance was unrealistic.\""),
        Some("propose|x|--rationale|Tolerance was unrealistic.".into())
    );
    assert_eq!(
        w("contracts profile 'a/*.parquet'"),
        Some("profile|a/*.parquet".into())
    );
    assert_eq!(w("contracts man > x"), None);
    assert_eq!(w("contracts schema | python3"), None);
    assert_eq!(w("ls first"), None);
    assert_eq!(w("git commit -qam x && contracts check"), None);
}
