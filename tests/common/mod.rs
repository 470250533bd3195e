//! A hermetic environment for running the real binary: its own HOME, no global git config,
//! a fixed author and a fixed `--today`, so a test depends on nothing of the machine.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "hermetic.rs"]
mod hermetic;
pub use hermetic::*;

mod rng;
pub use rng::Rng;

mod store;
pub use store::{
    draft, roads, world_crs, world_store, world_store_with, Store, CLAUSES, VALIDATE_WORLD,
};

mod json;
pub use json::{schema_validator, string_pairs, string_triples, Rows};

mod process;
pub use process::{assert_exit, assert_stderr_names, python3_with_stdin, require_python, run_ok};

pub mod docs;
pub mod github;
pub mod look;
pub mod notify_support;
pub mod pg_audit_lines;
pub mod postgres;
pub mod remote_support;
pub mod smtp;
pub mod test_module;
pub mod webhook;
pub mod world;
pub use world::World;

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// Assert that stderr contains `needle`, showing stderr when it does not: the check most
    /// tests of a refusal make.
    #[track_caller]
    pub fn assert_stderr_has(&self, needle: &str) -> &Self {
        assert!(self.stderr.contains(needle), "{}", self.stderr);
        self
    }

    /// Assert that stdout contains `needle`, showing stdout when it does not.
    #[track_caller]
    pub fn assert_stdout_has(&self, needle: &str) -> &Self {
        assert!(self.stdout.contains(needle), "{}", self.stdout);
        self
    }

    /// Assert the exit code, showing both streams when it differs.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    // The fields again as calls: the tests written against the notify world read a run
    // this way, and its assertions stay as they were written.

    pub fn code(&self) -> i32 {
        self.code
    }

    pub fn stdout(&self) -> String {
        self.stdout.clone()
    }

    pub fn stderr(&self) -> String {
        self.stderr.clone()
    }
}

impl Run {
    /// What a finished child process left.
    pub fn of(out: std::process::Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// The binary in a scratch home with a clean environment plus `env`, outside any store.
pub fn run_with_env(env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut c = contracts(&scratch_home());
    c.envs(env.iter().copied());
    Run::of(c.args(args).output().expect("the binary runs"))
}

/// `rel` in the folder `tests/<dir>` of this repository.
fn under_tests(dir: &str, rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir)
        .join(rel)
}

pub fn fixture(path: &str) -> PathBuf {
    under_tests("fixtures", path)
}

pub fn fixture_str(path: &str) -> String {
    fixture(path).to_string_lossy().into_owned()
}

/// A release file of `tests/data` (GeoPackage, Parquet, shapefiles, partitions...): one
/// definition for the ten test files that profile or validate them.
pub fn data(rel: &str) -> PathBuf {
    under_tests("data", rel)
}

/// Every file below `dir`, at any depth, in the order the directories list them: one walk
/// for the tests that compare a tree with a list.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// [`data`] as text, for an argument.
pub fn data_str(rel: &str) -> String {
    data(rel).display().to_string()
}

/// Run plain git in `dir` as `author` (name, email), with `home` as HOME and no system config:
/// how tests lay out fixtures and tamper with a store, as a user would. Panics on failure.
pub fn git_as(dir: &Path, home: &Path, author: (&str, &str), args: &[&str]) -> String {
    let out = run_ok(
        Command::new("git")
            .current_dir(dir)
            .env("HOME", home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", author.0)
            .env("GIT_AUTHOR_EMAIL", author.1)
            .env("GIT_COMMITTER_NAME", author.0)
            .env("GIT_COMMITTER_EMAIL", author.1)
            .args(args),
        &format!("git {args:?}"),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Copy the folder `from`, with everything below it, to `to` (made if missing).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
