//! The one way every CLI test starts the real binary (jj's `TestEnvironment`): a cleared
//! environment with only `PATH`, a `HOME` of the test's own, no system git config and, unless a
//! test asks otherwise, a fixed author. Each test file reaches it through `tests/common`, the
//! notify world or the notify support module, which all include this file.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The author and committer every store commit of a test is made by.
pub const AUTHOR: (&str, &str) = ("Ada Tester", "ada@example.org");

/// The binary with a cleared environment: `PATH` (for `git`, which syncing with a remote
/// runs), `HOME` and `GIT_CONFIG_NOSYSTEM`, nothing else. No git identity: see [`contracts`].
pub fn bare(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_contracts"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1");
    c
}

/// [`bare`] with `author` as the git author and committer.
pub fn contracts_as(home: &Path, author: (&str, &str)) -> Command {
    let mut c = bare(home);
    c.env("GIT_AUTHOR_NAME", author.0)
        .env("GIT_AUTHOR_EMAIL", author.1)
        .env("GIT_COMMITTER_NAME", author.0)
        .env("GIT_COMMITTER_EMAIL", author.1);
    c
}

/// [`bare`] with the fixed [`AUTHOR`].
pub fn contracts(home: &Path) -> Command {
    contracts_as(home, AUTHOR)
}

/// A HOME for tests that run no store command (profiling files): one empty directory under
/// cargo's per-target scratch space, shared by the whole test binary.
pub fn scratch_home() -> PathBuf {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("empty-home");
    std::fs::create_dir_all(&home).expect("scratch HOME");
    home
}

/// Pin the instant the run records (`--now`, hidden from the help): with a fixed `--today`
/// too, a test's history and ledgers are byte-for-byte reproducible.
pub fn fix_clock<'a>(c: &'a mut Command, now: &str) -> &'a mut Command {
    c.env("CONTRACTS_NOW", now)
}
