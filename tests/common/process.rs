//! Running the helper programs a test needs (git, python3, chromium, bash) and checking how a
//! child process ended, each failing with the context and the stderr a reader needs.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Run `c`, which must start and exit 0, or fail the test with `context` and its stderr: the
/// one way the harness runs a helper program whose failure is the test's.
#[track_caller]
pub fn run_ok(c: &mut Command, context: &str) -> Output {
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("{context}: could not start: {e}"));
    assert!(
        out.status.success(),
        "{context}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Assert that `out` exited with `code`, showing `context` (empty, or ending in `: `) and its
/// stderr when it did not: the check of a child the test started itself.
#[track_caller]
pub fn assert_exit(out: &Output, code: i32, context: &str) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{context}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Fail the test with `missing` unless python3 can `import` the modules `imports` names: the
/// loud stop of the tests that need a Python package (moto, dask), never a skip.
pub fn require_python(imports: &str, missing: &str) {
    let check = Command::new("python3").args(["-c", imports]).output();
    match check {
        Ok(o) if o.status.success() => {}
        _ => panic!("{missing}"),
    }
}

/// Assert that the stderr of `out` holds each of `needles`, showing it when one is missing.
#[track_caller]
pub fn assert_stderr_names(out: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in needles {
        assert!(err.contains(needle), "{err}");
    }
}

/// Run `python3 args…` with `input` on its stdin and its output captured: the tests that check
/// what the binary wrote with a reference library in Python (PyYAML, standardwebhooks,
/// slack-sdk). The error is the spawn's, for the caller to word.
pub fn python3_with_stdin(args: &[&str], input: &str) -> std::io::Result<Output> {
    let mut child = Command::new("python3")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child.stdin.take().unwrap().write_all(input.as_bytes())?;
    child.wait_with_output()
}
