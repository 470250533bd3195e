//! Snapshots of each command's main paths (jj's way): exit code, stdout and stderr of the real
//! binary on a copy of this repository's example store, committed with fixed dates and run with
//! a fixed `--today` and clock, so every byte is reproducible. A change to any output shows up
//! here as a snapshot diff to review (`cargo insta review`, or `INSTA_UPDATE=always`).
//!
//! The only redactions: the temporary store's path (`[STORE]`), this repository's path
//! (`[REPO]`), the test's HOME (`[HOME]`) and commit ids (`[COMMIT]`), which change whenever
//! the example store does.

use crate::common;
use crate::common::{copy_dir, data_str};

use std::path::{Path, PathBuf};

use common::World;

const DATE: &str = "1795000000 +0000";

pub(crate) struct Example {
    pub(crate) env: World,
    pub(crate) dir: PathBuf,
}

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The example store as committed in this repository, in a fresh repository of one commit.
/// `[store] since` names a commit of this repository's history, so the copy drops it.
/// (`tests/test_review.rs` builds its pull requests on it too.)
pub(crate) fn example() -> Example {
    let env = World::empty();
    let dir = env.home().join("store");
    for d in [
        "contracts",
        "history",
        "notifications",
        "templates",
        "consumption",
    ] {
        copy_dir(&repo_root().join(d), &dir.join(d));
    }
    std::fs::copy(
        repo_root().join("consumers.toml"),
        dir.join("consumers.toml"),
    )
    .unwrap();
    let config = std::fs::read_to_string(repo_root().join("contracts.toml")).unwrap();
    let config: String = config
        .lines()
        .filter(|l| !l.starts_with("[store]") && !l.starts_with("since"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("contracts.toml"), config).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(&dir)
            .env("HOME", env.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", common::AUTHOR.0)
            .env("GIT_AUTHOR_EMAIL", common::AUTHOR.1)
            .env("GIT_COMMITTER_NAME", common::AUTHOR.0)
            .env("GIT_COMMITTER_EMAIL", common::AUTHOR.1)
            .env("GIT_AUTHOR_DATE", DATE)
            .env("GIT_COMMITTER_DATE", DATE)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "the example store"]);
    Example { env, dir }
}

/// Replace every 40- or 12-digit hexadecimal word (a commit id, whole or short) by `[COMMIT]`.
fn redact_ids(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let hex = word
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
        if hex && (word.len() == 40 || word.len() == 12) && word.bytes().any(|b| b.is_ascii_digit())
        {
            out.push_str("[COMMIT]");
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

impl Example {
    /// One run, as the snapshot text: exit code, stdout, stderr.
    pub(crate) fn run(&self, today: &str, args: &[&str]) -> String {
        let out = self
            .env
            .command(&self.dir)
            .env("CONTRACTS_TODAY", today)
            .env("CONTRACTS_NOW", format!("{today}T09:00:00Z"))
            .env("GIT_AUTHOR_DATE", DATE)
            .env("GIT_COMMITTER_DATE", DATE)
            .args(args)
            .output()
            .unwrap();
        let text = format!(
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = text
            .replace(&self.dir.display().to_string(), "[STORE]")
            .replace(&self.env.home().display().to_string(), "[HOME]")
            .replace(&repo_root().display().to_string(), "[REPO]");
        redact_ids(&text)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.env.home().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

#[test]
fn redaction_keeps_words_that_only_look_like_ids() {
    let id = "0123456789abcdef0123456789abcdef01234567";
    assert_eq!(
        redact_ids(&format!("commit {id} (short {}), deadbeefcafe", &id[..12])),
        "commit [COMMIT] (short [COMMIT]), deadbeefcafe"
    );
}

#[test]
fn reading_commands() {
    let s = example();
    for (name, today, args) in [
        ("status", "2026-11-29", vec!["status"]),
        (
            "status_all_json",
            "2027-06-01",
            vec!["--format", "json", "status", "--all"],
        ),
        ("log", "2026-11-29", vec!["log", "countries"]),
        ("show", "2026-11-29", vec!["show", "countries@2.0.0"]),
        ("check", "2026-11-29", vec!["check"]),
        ("consumers", "2027-03-05", vec!["consumers", "countries"]),
        ("notify_dry_run", "2027-03-05", vec!["notify", "--dry-run"]),
        ("advisory", "2027-01-15", vec!["advisory", "countries"]),
        ("new", "2026-11-29", vec!["new", "rivers"]),
    ] {
        insta::assert_snapshot!(name, s.run(today, &args));
    }
}

#[test]
fn diff_and_propose() {
    let s = example();
    let old = s.dir.join("contracts/countries/1.2.0.toml");
    let new = s.dir.join("contracts/countries/2.0.0.toml");
    insta::assert_snapshot!(
        "diff",
        s.run(
            "2026-11-29",
            &["diff", old.to_str().unwrap(), new.to_str().unwrap()]
        )
    );
    // A breaking change (the CRS) offered as a minor of line 2: refused, naming the clause
    // with its old and new value.
    let text: String = std::fs::read_to_string(&new)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("sunset"))
        .map(|l| {
            if l.starts_with("version") {
                "version = \"2.1.0\"\n".to_string()
            } else if l.starts_with("supersedes") {
                "supersedes = \"2.0.0\"\n".to_string()
            } else {
                format!("{l}\n").replace("\"EPSG:4326\"", "\"EPSG:3857\"")
            }
        })
        .collect();
    assert!(text.contains("\"EPSG:3857\""), "{text}");
    let draft = s.write("minor.toml", &text);
    insta::assert_snapshot!(
        "propose_refused",
        s.run(
            "2026-11-29",
            &["propose", &draft, "--rationale", "r", "--dry-run"]
        )
    );
}

#[test]
fn releases() {
    let s = example();
    let gpkg = data_str("naturalearth/countries.gpkg");
    insta::assert_snapshot!("profile", s.run("2027-01-15", &["profile", &gpkg]));
    insta::assert_snapshot!(
        "validate_window",
        s.run("2027-01-15", &["validate", "countries", &gpkg])
    );
}

#[test]
fn errors() {
    let s = example();
    insta::assert_snapshot!("unknown_dataset", s.run("2026-11-29", &["show", "nosuch"]));
    insta::assert_snapshot!(
        "earlier_sunset",
        s.run(
            "2026-11-29",
            &[
                "sunset",
                "countries",
                "1",
                "--on",
                "2027-03-01",
                "--rationale",
                "sooner"
            ]
        )
    );
    let bad = s.write("bad.toml", "dataset = \"countries\"\nversion = 3\n");
    insta::assert_snapshot!(
        "bad_draft",
        s.run("2026-11-29", &["propose", &bad, "--rationale", "r"])
    );
}
