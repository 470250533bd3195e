//! A reader that goes away (`contracts log | head -c 10`) is not an error (issue 44): the
//! command says nothing about it and exits with its own code, whether the reader left before
//! the first line or after the last. The pipe here is closed before the binary starts, so its
//! first write fails with EPIPE every time: no timing is involved.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::{contracts, scratch_home};

/// The binary on the example store this repository carries, `--quiet` (so stderr holds only
/// errors), with stdout a pipe whose read end is already closed.
fn into_a_closed_pipe(args: &[&str]) -> Output {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut c: Command = contracts(&scratch_home());
    c.current_dir(repo)
        .arg("--repo")
        .arg(repo)
        .args(["--quiet", "--today", "2027-01-15"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped());
    c.output().expect("contracts starts")
}

const COUNTRIES: &str = "tests/data/naturalearth/countries.gpkg";

#[test]
fn a_closed_pipe_ends_a_command_quietly_with_its_own_exit_code() {
    let cases: &[(&[&str], i32)] = &[
        (&["log"], 0),
        (&["--format", "json", "log"], 0),
        (&["status"], 0),
        (&["show", "countries@1.2.0"], 0),
        (&["validate", "countries", COUNTRIES], 0),
        (&["--format", "json", "validate", "countries", COUNTRIES], 0),
        // A release that fails its contract still says so by its exit code.
        (&["validate", "cities", COUNTRIES], 1),
    ];
    for (args, code) in cases {
        let out = into_a_closed_pipe(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?} said something about the pipe");
    }
}
