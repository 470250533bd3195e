//! What a new user meets first (issue 44): the README's two commands, and `test.sh` on a
//! machine where the user is root and `sudo` is not installed, or the other way round.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The commands of the README's "The two commands" block, without their comments.
fn readme_commands() -> Vec<String> {
    let readme = read("README.md");
    let section = readme
        .split("## The two commands")
        .nth(1)
        .expect("README has a section `The two commands`");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section starts with a sh block");
    block
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn the_readme_runs_the_suite_without_sudo() {
    assert_eq!(
        readme_commands(),
        ["cargo run -- status", "./test.sh"],
        "a fresh Debian machine where one is root has no sudo"
    );
    let dev = read("docs/src/development.md");
    assert!(
        !dev.contains("sudo ./test.sh"),
        "docs/src/development.md still tells the user to run `sudo ./test.sh`"
    );
}

#[test]
fn test_sh_checks_for_root_before_it_does_anything_else() {
    let script = read("test.sh");
    let commands: Vec<&str> = script
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(commands[0], "set -euo pipefail", "{script}");
    assert!(
        commands[1].starts_with("if [ \"$(id -u)\" -ne 0 ]"),
        "the second command of test.sh must be the root check, found {:?}",
        commands[1]
    );
    let check = commands.iter().position(|l| l.contains("id -u")).unwrap();
    for later in ["apt-get", "pip install", "cargo "] {
        let first = commands
            .iter()
            .position(|l| l.contains(later) && !l.starts_with("echo"))
            .unwrap_or_else(|| panic!("test.sh runs no `{later}`"));
        assert!(check < first, "`{later}` runs before the root check");
    }
}

/// A directory for `PATH` holding `bash`, an `id` that answers `uid`, and, when `sudo` is
/// given, a `sudo` script with that body.
fn fake_bin(dir: &Path, uid: u32, sudo: Option<&str>) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let bash = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.join("bash"))
        .find(|p| p.is_file())
        .expect("bash is on PATH");
    std::os::unix::fs::symlink(bash, bin.join("bash")).unwrap();
    let mut scripts = vec![("id", format!("#!/bin/sh\necho {uid}\n"))];
    if let Some(body) = sudo {
        scripts.push(("sudo", format!("#!/bin/sh\n{body}\n")));
    }
    for (name, text) in scripts {
        let path = bin.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// test.sh run by its shebang with only `bin` on `PATH`: nothing it could install with is there,
/// so a script that went past its root check fails on the first missing program.
fn run_test_sh(bin: &Path, cwd: &Path) -> Output {
    Command::new(repo().join("test.sh"))
        .env_clear()
        .env("PATH", bin)
        .env("HOME", cwd)
        .current_dir(cwd)
        .output()
        .expect("test.sh starts")
}

#[test]
fn test_sh_reruns_itself_under_sudo_when_not_root() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("sudo-args");
    let bin = fake_bin(
        dir.path(),
        1000,
        Some(&format!(
            "printf '%s\\n' \"$@\" > '{}'\nexit 0",
            record.display()
        )),
    );
    let out = run_test_sh(&bin, dir.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let args = std::fs::read_to_string(&record).expect("test.sh called sudo");
    let script = repo().join("test.sh");
    assert_eq!(
        args.lines().last(),
        Some(script.to_str().unwrap()),
        "sudo runs test.sh itself: {args}"
    );
    assert!(
        args.lines().any(|a| a == format!("PATH={}", bin.display())),
        "the caller's PATH (cargo's) goes along: {args}"
    );
}

#[test]
fn test_sh_says_what_to_do_when_neither_root_nor_sudo() {
    let dir = tempfile::tempdir().unwrap();
    let bin = fake_bin(dir.path(), 1000, None);
    let out = run_test_sh(&bin, dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("test.sh needs root") && err.contains("sudo is not installed"),
        "{err}"
    );
    assert!(!err.contains("command not found"), "{err}");
}

#[test]
fn test_sh_as_root_does_not_call_sudo() {
    let dir = tempfile::tempdir().unwrap();
    let bin = fake_bin(dir.path(), 0, Some("echo 'sudo was called' >&2\nexit 42"));
    let out = run_test_sh(&bin, dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("sudo was called"), "{err}");
    assert_ne!(out.status.code(), Some(42), "{err}");
}

/// Every (section, key) the config schema knows, but the former names it still reads.
fn schema_keys() -> Vec<(String, String)> {
    let schema: serde_json::Value =
        serde_json::from_str(&read("schema/contracts-toml.schema.json")).unwrap();
    let defs = &schema["$defs"];
    let mut out = Vec::new();
    for (section, v) in schema["properties"].as_object().unwrap() {
        let resolved = match v.get("$ref").and_then(|r| r.as_str()) {
            Some(r) => &defs[r.rsplit('/').next().unwrap()],
            None => v,
        };
        let Some(props) = resolved.get("properties").and_then(|p| p.as_object()) else {
            out.push((section.clone(), String::new()));
            continue;
        };
        for (key, p) in props {
            let description = p["description"].as_str().unwrap_or("");
            if !description.starts_with("The former name") {
                out.push((section.clone(), key.clone()));
            }
        }
    }
    out
}

/// Every (section, key) the init template writes, set or commented out; a section alone (a
/// table of free keys such as `[kinds]`) as (section, "").
fn template_keys() -> std::collections::BTreeSet<(String, String)> {
    let mut out = std::collections::BTreeSet::new();
    let mut section = String::new();
    for line in read("templates/contracts.toml").lines() {
        let text = line.trim_start_matches('#').trim();
        if let Some(name) = text.strip_prefix("[[").and_then(|t| t.split("]]").next()) {
            // An array of tables, `[[consumption.source]]`: a key of its parent section.
            let (parent, key) = name.rsplit_once('.').unwrap_or((name, ""));
            out.insert((parent.to_string(), key.to_string()));
            section = name.to_string();
        } else if let Some(name) = text.strip_prefix('[').and_then(|t| t.split(']').next()) {
            section = name.to_string();
            out.insert((section.clone(), String::new()));
        } else if let Some((key, _)) = text.split_once('=') {
            let key = key.trim();
            if !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                out.insert((section.clone(), key.to_string()));
            }
        }
    }
    out
}

#[test]
fn the_init_template_shows_every_key_of_the_config() {
    let keys = schema_keys();
    assert!(
        keys.len() > 20,
        "the schema lists the config's keys: {keys:?}"
    );
    let shown = template_keys();
    let missing: Vec<String> = keys
        .iter()
        .filter(|k| !shown.contains(k))
        .map(|(s, k)| format!("[{s}] {k}"))
        .collect();
    assert!(
        missing.is_empty(),
        "templates/contracts.toml says every key is shown, but lacks: {}",
        missing.join(", ")
    );
}
