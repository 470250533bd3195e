//! Readable in a terminal: tables fit the width (JSON keeps values whole), map-valued clauses
//! key by key, one validate row per failing key, colour on request, `status --all`.

mod common;
mod world;

use std::path::Path;

use world::World;

fn data(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
        .display()
        .to_string()
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn tables_fit_columns_and_json_keeps_values_whole() {
    let w = World::new(25);
    let rationale = "Move to British National Grid — to match the other layers.";
    // `log` has ten columns and a long rationale.
    let wide = w.run_env("2026-11-29", &["log", "roads"], &[("COLUMNS", "300")]);
    wide.assert_code(0);
    assert!(wide.stdout().contains(rationale), "{}", wide.stdout());
    let narrow = w.run_env("2026-11-29", &["log", "roads"], &[("COLUMNS", "140")]);
    narrow.assert_code(0);
    assert!(widest(&narrow.stdout()) <= 140, "{}", narrow.stdout());
    // The widest column gives way first; the short ones stay whole.
    assert!(
        narrow.stdout().contains(" 2026-10-01 "),
        "{}",
        narrow.stdout()
    );
    assert!(narrow.stdout().contains('…'), "{}", narrow.stdout());
    assert!(!narrow.stdout().contains(rationale));
    // Not a terminal and no COLUMNS: nothing is shortened, whatever the width.
    let piped = w.run("2026-11-29", &["log", "roads"]);
    assert!(piped.stdout().contains(rationale), "{}", piped.stdout());
    assert!(!piped.stdout().contains('…'), "{}", piped.stdout());
    // JSON is never shortened.
    let json = w.run_env(
        "2026-11-29",
        &["--format", "json", "log", "roads"],
        &[("COLUMNS", "40")],
    );
    assert_eq!(json.json()[0]["rationale"], rationale);
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
    let env = common::TestEnv::new();
    let dir = env.home();
    let old = contract(
        dir,
        "1.0.0",
        "CNTY_ = \"float64\", CNTY_ID = \"float64\", NAME = \"string\"",
    );
    let new = contract(dir, "1.1.0", "CNTY_ID = \"int64\", NAME = \"string\"");
    let mut cmd = env.command(dir);
    cmd.env("COLUMNS", "200").args(["diff", &old, &new]);
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
    assert!(
        run.stderr.contains(
            "required_attributes (fixed, changed): `CNTY_` removed (was float64); \
             `CNTY_ID` float64 → int64"
        ),
        "{}",
        run.stderr
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
    // float64 (as in tests/release_validate.rs); `nickname` is not in the file.
    w.write(
        "contracts/world/1.0.0.toml",
        "dataset = \"world\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n[clauses]\n\
         required_attributes = { name = \"string\", pop_est = \"int64\", nickname = \"string\" }\n",
    );
    let run = w.run(
        "2026-11-29",
        &["validate", "world", &data("naturalearth/countries.gpkg")],
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
    let env = common::TestEnv::new();
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
            .as_array()
            .unwrap()
            .iter()
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
