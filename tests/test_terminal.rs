//! Readable in a terminal: tables fit the width (JSON keeps values whole), map-valued clauses
//! key by key, one validate row per failing key, colour on request, `status --all`.

use crate::common;
use crate::common::data_str;
use crate::common::world;
use crate::common::Rows;

use std::path::Path;

use world::World;

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

const LONG: &str = "us-states-boundaries-generalised";
const LONG_RATIONALE: &str = "State ids become integers so that every join downstream \
     matches the census tables, and the duplicate id column goes.";
const MISSPELT: &str = "consumer `tlc-routing-nightly` reads dataset \
     `us-states-boundaries-generalized`, which the store does not have; did you mean \
     `us-states-boundaries-generalised`?";

/// The world, plus a dataset with a long name, a long rationale, a map change and a
/// consumer who misspells it.
fn long_world() -> World {
    let w = World::new(25);
    let attrs = "STATE_FIPS_CODE = \"float64\", STATE_NAME = \"string\"";
    w.write(
        &format!("contracts/{LONG}/1.0.0.toml"),
        &format!(
            "dataset = \"{LONG}\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
             [clauses]\ncrs = \"EPSG:4326\"\nrequired_attributes = {{ {attrs} }}\n"
        ),
    );
    w.write(
        &format!("contracts/{LONG}/2.0.0.toml"),
        &format!(
            "dataset = \"{LONG}\"\nversion = \"2.0.0\"\nsupersedes = \"1.0.0\"\n\
             valid_from = 2026-11-01\nsunset = {}\n[clauses]\ncrs = \"EPSG:4326\"\n\
             required_attributes = {{ STATE_FIPS_CODE = \"int64\", STATE_NAME = \"string\" }}\n",
            world::SUNSET
        ),
    );
    w.write(
        &format!("history/{LONG}.toml"),
        &format!(
            "[[change]]\nat = 2026-10-01T17:00:00Z\nfrom = \"1.0.0\"\nto = \"2.0.0\"\n\
             clause = \"required_attributes\"\nkind = \"fixed\"\ndirection = \"changed\"\n\
             verdict = \"breaking\"\nwindow = {{ opens = 2026-11-01, sunset = {} }}\n\
             rationale = \"{LONG_RATIONALE}\"\n",
            world::SUNSET
        ),
    );
    let consumers = w.read("consumers.toml").unwrap();
    w.write(
        "consumers.toml",
        &format!(
            "{consumers}\n[consumers.tlc-routing-nightly]\ncontacts = [\"tlc@example.org\"]\n\
             datasets.us-states-boundaries-generalized = {{}}\n"
        ),
    );
    w
}

#[test]
fn into_a_pipe_nothing_is_cut_whatever_columns_says() {
    let w = long_world();
    w.write(
        "contracts/world/1.0.0.toml",
        "dataset = \"world\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n[clauses]\n\
         required_attributes = { name = \"string\", nickname_in_the_local_language = \"string\" }\n",
    );
    let gpkg = data_str("naturalearth/countries.gpkg");
    let old = format!("{LONG}@1.0.0");
    let new = format!("{LONG}@2.0.0");
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["check"], vec![MISSPELT]),
        (
            vec!["diff", &old, &new],
            vec!["`STATE_FIPS_CODE` float64 → int64"],
        ),
        (
            vec!["validate", "world", &gpkg],
            vec!["required_attributes.nickname_in_the_local_language"],
        ),
        (
            vec!["show", &new],
            vec![r#"{"STATE_FIPS_CODE":"int64","STATE_NAME":"string"}"#],
        ),
        (vec!["status"], vec![LONG, "2026-11-01", world::SUNSET]),
        (vec!["log", LONG], vec![LONG, LONG_RATIONALE, "2026-10-01"]),
    ];
    for (args, whole) in &cases {
        for columns in [None, Some("40")] {
            let env: Vec<(&str, &str)> = columns.iter().map(|c| ("COLUMNS", *c)).collect();
            let run = w.run_env("2026-11-29", args, &env);
            let out = run.stdout();
            for text in whole {
                assert!(
                    out.contains(text),
                    "{args:?} COLUMNS={columns:?} cuts {text:?}:\n{out}{}",
                    run.stderr()
                );
            }
            assert!(!out.contains('…'), "{args:?} COLUMNS={columns:?}:\n{out}");
        }
    }
    // JSON is never shortened either.
    let json = w.run_env(
        "2026-11-29",
        &["--format", "json", "log", LONG],
        &[("COLUMNS", "40")],
    );
    assert_eq!(json.json()[0]["rationale"], LONG_RATIONALE);
}

#[test]
fn on_an_80_column_terminal_status_and_log_fit_with_identifiers_whole() {
    let w = long_world();
    for args in [vec!["status"], vec!["log", LONG], vec!["log"]] {
        let out = w.run_pty("2026-11-29", &args, 80);
        assert!(
            widest(&out) <= 80,
            "{args:?} is {} wide:\n{out}",
            widest(&out)
        );
        let words: Vec<&str> = out.split_whitespace().collect();
        let keys: &[&str] = if args[0] == "status" {
            &[LONG, "2026-11-01", world::SUNSET, "2.0.0", "live"]
        } else {
            &[
                LONG,
                "2026-10-01",
                "breaking",
                "required_attributes",
                "1.0.0",
                "2.0.0",
            ]
        };
        for key in keys {
            assert!(
                words.contains(key),
                "{args:?} does not show {key} whole:\n{out}"
            );
        }
        if args[0] == "log" {
            // The rationale is free text: wrapped or cut, each word that is shown is whole.
            assert!(out.contains("State ids become"), "{out}");
        }
    }
    // Where the identifiers fit on a line, the free text gives way with an ellipsis.
    let out = w.run_pty("2026-11-29", &["log", "roads"], 140);
    assert!(widest(&out) <= 140, "{out}");
    assert!(out.split_whitespace().any(|w| w == "2026-10-01"), "{out}");
    assert!(out.contains('…'), "{out}");
}

#[test]
fn long_help_wraps_to_a_60_column_terminal_and_is_whole_into_a_pipe() {
    let w = World::new(25);
    let cases: [&[&str]; 6] = [
        &["--help"],
        &["consumers", "--help"],
        &["can-retire", "--help"],
        &["notify", "--help"],
        &["validate", "--help"],
        &["profile", "--help"],
    ];
    for args in cases {
        let piped = w.run("2026-11-29", args);
        piped.assert_code(0);
        let piped = piped.stdout();
        // The pipe's help has lines a 60-column terminal must wrap, or the case proves nothing.
        assert!(widest(&piped) > 60, "{args:?} is narrow anyway:\n{piped}");
        let tty = w.run_pty("2026-11-29", args, 60);
        assert!(tty.contains("Usage:"), "{args:?} printed no help:\n{tty}");
        assert!(
            widest(&tty) <= 60,
            "{args:?} is {} wide on a 60-column terminal:\n{tty}",
            widest(&tty)
        );
        // Wrapped, not shortened: the same words in the same order.
        let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            words(&tty),
            words(&piped),
            "{args:?}: the terminal's help is not the pipe's, rewrapped"
        );
    }
}

fn contract(dir: &Path, version: &str, attrs: &str) -> String {
    let p = dir.join(format!("counties-{version}.toml"));
    std::fs::write(
        &p,
        format!(
            "dataset = \"counties\"\nversion = \"{version}\"\nvalid_from = 2026-01-01\n\
             [clauses]\ncrs = \"EPSG:4267\"\nrequired_attributes = {{ {attrs} }}\n"
        ),
    )
    .unwrap();
    p.display().to_string()
}

#[test]
fn a_map_clause_is_shown_key_by_key_in_diff_and_its_refusal() {
    let env = common::World::empty();
    let dir = env.home();
    let old = contract(
        dir,
        "1.0.0",
        "CNTY_ = \"float64\", CNTY_ID = \"float64\", NAME = \"string\"",
    );
    let new = contract(dir, "1.1.0", "CNTY_ID = \"int64\", NAME = \"string\"");
    let mut cmd = env.command(dir);
    cmd.args(["diff", &old, &new]);
    let out = cmd.output().unwrap();
    let run = common::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    assert_eq!(run.code, 1, "a minor bump for a breaking change");
    let row = run
        .stdout
        .lines()
        .find(|l| l.contains("required_attributes"))
        .unwrap_or_else(|| panic!("no row:\n{}", run.stdout));
    assert!(
        row.contains("`CNTY_` removed (was float64); `CNTY_ID` float64 → int64"),
        "{row}"
    );
    assert!(!row.contains('{'), "no JSON map in the table: {row}");
    run.assert_stderr_has(
        "required_attributes (fixed, changed): `CNTY_` removed (was float64); \
             `CNTY_ID` float64 → int64",
    );
    // JSON keeps both whole maps.
    let json = env.run_in(dir, &["--format", "json", "diff", &old, &new]);
    let j = json.json();
    let c = &j["changes"][0];
    assert_eq!(c["clause"], "required_attributes");
    assert_eq!(c["old"]["CNTY_"], "float64");
    assert_eq!(c["new"]["CNTY_ID"], "int64");
}

#[test]
fn validate_gives_one_row_per_failing_key() {
    let w = World::new(25);
    // The Natural Earth countries: name, iso_a3 and continent are strings, pop_est is a
    // float64 (as in tests/test_release_validate.rs); `nickname` is not in the file.
    w.write(
        "contracts/world/1.0.0.toml",
        "dataset = \"world\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n[clauses]\n\
         required_attributes = { name = \"string\", pop_est = \"int64\", nickname = \"string\" }\n",
    );
    let run = w.run(
        "2026-11-29",
        &[
            "validate",
            "world",
            &data_str("naturalearth/countries.gpkg"),
        ],
    );
    run.assert_code(1);
    let out = run.stdout();
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.starts_with(" world@1.0.0 "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        vec![
            vec![
                "world@1.0.0",
                "required_attributes.nickname",
                "FAIL",
                "missing",
                "string"
            ],
            vec![
                "world@1.0.0",
                "required_attributes.pop_est",
                "FAIL",
                "float64",
                "int64"
            ],
        ],
        "{out}"
    );
}

#[test]
fn colour_on_request_honouring_no_color() {
    let env = common::World::empty();
    let dir = env.home();
    let old = contract(dir, "1.0.0", "NAME = \"string\"");
    let new = contract(dir, "2.0.0", "NAME = \"int64\"");
    let red = "\u{1b}[31mbreaking\u{1b}[0m";
    let run = |args: &[&str], no_color: bool| {
        let mut c = env.command(dir);
        c.args(args).args(["diff", &old, &new]);
        if no_color {
            c.env("NO_COLOR", "1");
        }
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    assert!(run(&["--color", "always"], false).contains(red));
    // An explicit choice wins over the environment.
    assert!(run(&["--color", "always"], true).contains(red));
    // auto: stdout here is a pipe, not a terminal.
    assert!(!run(&[], false).contains('\u{1b}'));
    assert!(!run(&["--color", "never"], false).contains('\u{1b}'));
    assert!(!run(&["--color", "auto"], true).contains('\u{1b}'));
    // Colour never reaches JSON.
    assert!(!run(&["--color", "always", "--format", "json"], false).contains('\u{1b}'));
}

#[test]
fn status_all_includes_retired_lines() {
    let w = World::new(25);
    // After line 1's sunset (2027-01-15) it is retired.
    let states = |args: &[&str]| -> Vec<(u64, String)> {
        let mut a = vec!["--format", "json", "status"];
        a.extend(args);
        let run = w.run("2027-03-01", &a);
        run.assert_code(0);
        run.json()
            .rows()
            .map(|r| {
                (
                    r["line"].as_u64().unwrap(),
                    r["state"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(states(&[]), vec![(2, "live".to_string())]);
    assert_eq!(
        states(&["--all"]),
        vec![(1, "retired".to_string()), (2, "live".to_string())]
    );
}

/// Colour marks the role of a value: in `log`, a rationale that reads "breaking" stays plain
/// while the verdict column is coloured, and with colour off the table is unchanged.
#[test]
fn a_rationale_reading_breaking_is_not_coloured_but_the_verdict_is() {
    let w = World::new(25);
    w.append(
        "history/roads.toml",
        r#"
[[change]]
at        = 2026-10-02T09:00:00Z
from      = "2.0.0"
to        = "2.1.0"
clause    = "crs"
kind      = "fixed"
direction = "unchanged"
verdict   = "compatible"
rationale = "breaking"
"#,
    );
    let coloured = w.run("2026-12-01", &["--color", "always", "log", "roads"]);
    let plain = w.run("2026-12-01", &["--color", "never", "log", "roads"]);
    let out = coloured.assert_code(0).stdout();
    let red = "\u{1b}[31mbreaking\u{1b}[0m";
    let green = "\u{1b}[32mcompatible\u{1b}[0m";
    // Two cells read "breaking": the verdict of the crs record and the new rationale.
    assert_eq!(out.matches("breaking").count(), 2, "{out:?}");
    assert_eq!(out.matches(red).count(), 1, "{out:?}");
    let new_record = out.lines().find(|l| l.contains("2.0.0 -> 2.1.0")).unwrap();
    assert!(new_record.contains(green), "{new_record:?}");
    assert!(
        new_record.contains(" breaking "),
        "plain rationale: {new_record:?}"
    );
    assert!(!new_record.contains(red), "{new_record:?}");
    let old_record = out.lines().find(|l| l.contains("1.1.0 -> 2.0.0")).unwrap();
    assert!(old_record.contains(red), "{old_record:?}");
    assert_eq!(world::strip_ansi(&out), plain.stdout());
}
