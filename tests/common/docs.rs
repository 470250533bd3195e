//! The fenced blocks of the README and the manual, for the tests that run their examples
//! (`test_doc_examples.rs`) and compare their pasted `--help` (`test_doc_help.rs`), and the one
//! way those tests rewrite a block's output when `UPDATE_DOCS=1` asks them to.

use std::path::{Path, PathBuf};

/// The repository root: the example store the examples run on.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every page under `docs/src/`, as paths relative to the root, sorted.
pub fn pages() -> Vec<String> {
    let mut out = vec!["README.md".to_string()];
    let mut found = Vec::new();
    walk(&root().join("docs/src"), &mut found);
    let mut rel: Vec<String> = found
        .iter()
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("md"))
        .map(|p| {
            p.strip_prefix(root())
                .expect("under the root")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    rel.sort();
    out.extend(rel);
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("a docs folder") {
        let p = e.expect("an entry").path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// One fenced block: the lines between its fences, and the index of its opening fence.
pub struct Fence {
    pub open: usize,
    pub lines: Vec<String>,
}

/// The blocks of `text` whose info string is exactly `info` (```` ```console ````), in order.
/// An unclosed fence is an error of the page, not a block.
pub fn fences(text: &str, info: &str) -> Vec<Fence> {
    let mut out = Vec::new();
    let mut current: Option<Fence> = None;
    let mut inside_other = false;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut current, fence) {
            (Some(_), true) => out.push(current.take().expect("open")),
            (Some(f), false) => f.lines.push(line.to_string()),
            (None, true) if inside_other => inside_other = false,
            (None, true) if line.trim_start().trim_start_matches('`').trim() == info => {
                current = Some(Fence {
                    open: i,
                    lines: Vec::new(),
                })
            }
            (None, true) => inside_other = true,
            (None, false) => {}
        }
    }
    assert!(current.is_none(), "a ```{info} block is never closed");
    out
}

/// Whether the tests should rewrite the docs instead of comparing them.
pub fn updating() -> bool {
    std::env::var_os("UPDATE_DOCS").is_some_and(|v| v == "1")
}

/// Replace lines `from..to` (0-based, end excluded) of `page` with `with`, several at once:
/// `edits` are applied from the last to the first, so their indices all refer to the page as
/// it was read. Writes the page only when it changes; returns whether it did.
pub fn rewrite(page: &str, mut edits: Vec<(usize, usize, String)>) -> bool {
    let path = root().join(page);
    let text = std::fs::read_to_string(&path).expect("the page");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    for (from, to, with) in edits {
        let new: Vec<String> = with.lines().map(str::to_string).collect();
        lines.splice(from..to, new);
    }
    let mut new = lines.join("\n");
    if text.ends_with('\n') {
        new.push('\n');
    }
    if new == text {
        return false;
    }
    std::fs::write(&path, new).expect("write the page");
    true
}

/// The end of a test that compares blocks of the docs with the binary: with `UPDATE_DOCS=1`,
/// each page's `edits` are written; otherwise every difference in `wrong` fails the test,
/// counted as `what` ("help block(s)").
pub fn rewrite_or_fail(
    edits: std::collections::BTreeMap<String, Vec<(usize, usize, String)>>,
    wrong: &[String],
    what: &str,
) {
    if updating() {
        for (page, e) in edits {
            rewrite(&page, e);
        }
        return;
    }
    assert!(
        wrong.is_empty(),
        "{} {what} differ from the binary (UPDATE_DOCS=1 rewrites them):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// `expected` and `actual` compared exactly (snapbox, with none of its wildcards), as the
/// diff snapbox renders when they differ.
pub fn difference(name: &str, expected: &str, actual: &str) -> Option<String> {
    snapbox::Assert::new()
        .action(snapbox::assert::Action::Verify)
        .try_eq(
            Some(&name),
            snapbox::Data::text(actual.to_string()),
            snapbox::Data::text(expected.to_string()).raw(),
        )
        .err()
        .map(|e| e.to_string())
}

/// The binary with a cleared environment (`PATH` and a `HOME` of the test binary's own), run
/// in the repository root, its stderr merged into its stdout as a terminal shows them.
pub fn example_command(args: &[String]) -> snapbox::cmd::Command {
    snapbox::cmd::Command::new(env!("CARGO_BIN_EXE_contracts"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", super::scratch_home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .current_dir(root())
        .args(args)
}

/// Where a page whose examples build a store of their own runs them: a fresh folder, shown as
/// `/tmp` in the output, each command run by `sh` where the one before left off (so `cd`
/// carries over), with `contracts` on `PATH`, `~/contracts` a link to this repository, a fixed
/// git identity and a fixed instant for every commit and record, so commit ids repeat.
pub struct Scratch {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
    cwd: PathBuf,
}

/// Who commits in a scratch run: the steward the guides name.
const SCRATCH_AUTHOR: (&str, &str) = ("Ana Steward", "ana@example.org");

/// 2026-12-01T09:00:00Z, as git's raw date: the instant of every commit of a scratch run.
const SCRATCH_DATE: &str = "1796115600 +0000";

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("a scratch folder");
        let home = tempfile::tempdir().expect("a scratch HOME");
        std::os::unix::fs::symlink(root(), home.path().join("contracts")).expect("~/contracts");
        let bin = home.path().join("bin");
        std::fs::create_dir(&bin).expect("~/bin");
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_contracts"), bin.join("contracts"))
            .expect("~/bin/contracts");
        let cwd = dir.path().to_path_buf();
        Scratch { dir, home, cwd }
    }

    /// The output of `command` (stdout and stderr in one pipe), the folder's path as `/tmp`.
    pub fn run(&mut self, command: &str) -> String {
        let state = self.home.path().join("cwd");
        let script = format!(
            "{command}\nstatus=$?\npwd > '{}'\nexit $status",
            state.display()
        );
        let path = format!(
            "{}:{}",
            self.home.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let (name, email) = SCRATCH_AUTHOR;
        let out = snapbox::cmd::Command::new("sh")
            .arg("-c")
            .arg(script)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", name)
            .env("GIT_AUTHOR_EMAIL", email)
            .env("GIT_COMMITTER_NAME", name)
            .env("GIT_COMMITTER_EMAIL", email)
            .env("GIT_AUTHOR_DATE", SCRATCH_DATE)
            .env("GIT_COMMITTER_DATE", SCRATCH_DATE)
            .env("CONTRACTS_NOW", "2026-12-01T09:00:00Z")
            .current_dir(&self.cwd)
            .stderr_to_stdout()
            .output()
            .expect("sh runs");
        if let Ok(dir) = std::fs::read_to_string(&state) {
            self.cwd = PathBuf::from(dir.trim_end());
        }
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        let real = self.dir.path().canonicalize().expect("the scratch folder");
        for p in [real.as_path(), self.dir.path()] {
            text = text.replace(&p.display().to_string(), "/tmp");
        }
        text
    }
}
