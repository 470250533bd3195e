//! `contracts diff` through the real binary: the table, the JSON, the exit codes.

use crate::common;

use common::{fixture, fixture_str, World};

fn diff(args: &[&str]) -> common::Run {
    let env = World::empty();
    // Run outside any store, so only the built-in kinds apply unless --repo is given.
    env.run_in(env.home(), args)
}

#[test]
fn a_major_bump_covering_breaking_changes_passes_with_a_table() {
    let old = fixture_str("diff/roads-1.3.0.toml");
    let new = fixture_str("diff/roads-2.0.0.toml");
    let run = diff(&["diff", &old, &new]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn the_json_report_carries_every_change_with_direction_and_verdict() {
    let old = fixture_str("diff/roads-1.3.0.toml");
    let new = fixture_str("diff/roads-2.0.0.toml");
    let run = diff(&["--format", "json", "diff", &old, &new]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["required_bump"], "major");
    assert_eq!(j["actual_bump"], "major");
    assert_eq!(j["sufficient"], true);
    assert_eq!(j["old"]["version"], "1.3.0");
    assert_eq!(j["new"]["dataset"], "roads");
    let rows = common::string_triples(&j["changes"], "clause", "direction", "verdict");
    let expect = |clause: &str, direction: &str, verdict: &str| {
        assert!(
            rows.contains(&(clause.into(), direction.into(), verdict.into())),
            "no row {clause} {direction} {verdict} in {rows:?}"
        );
    };
    // Worked out by hand from the two fixture files and the verdict table of
    // docs/src/reference/contract.md.
    expect("crs", "changed", "breaking");
    expect("units", "changed", "breaking");
    expect("envelope", "shrank", "breaking");
    expect("permitted_crs", "tightened", "compatible");
    expect("optional_attributes", "grew", "compatible");
    expect("attribute_semantics.name", "added", "compatible");
    expect("max_null_fraction", "tightened", "compatible");
    expect("metric_tolerances", "tightened", "compatible");
    expect("max_imputed_fraction", "added", "compatible");
    expect("supported_output_formats", "grew", "compatible");
    assert_eq!(rows.len(), 10, "{rows:?}");
    let crs = &j["changes"].as_array().unwrap()[0];
    assert_eq!(crs["clause"], "attribute_semantics.name");
    assert_eq!(crs["old"], serde_json::Value::Null);
    assert_eq!(crs["new"], "name as signed");
}

#[test]
fn a_minor_bump_hiding_a_breaking_change_exits_1_naming_the_clause_with_old_and_new() {
    let old = fixture_str("diff/roads-1.3.0.toml");
    let new = fixture_str("diff/roads-1.4.0.toml");
    let run = diff(&["diff", &old, &new]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    run.assert_stderr_has("1.3.0 -> 1.4.0 is a minor bump, but the changes require a major bump");
    // The key that breaks, not both maps.
    run.assert_stderr_has("metric_tolerances (narrowing, loosened): `positional_rmse_m` 2.0 → 3.0");
    // The compatible change in the same version is not blamed.
    assert!(
        !run.stderr.contains("optional_attributes"),
        "{}",
        run.stderr
    );
    run.assert_stdout_has("INSUFFICIENT");
}

#[test]
fn a_compatible_minor_and_a_clean_patch_exit_0() {
    let old = fixture_str("diff/roads-1.3.0.toml");
    let run = diff(&[
        "diff",
        &old,
        &fixture_str("diff/roads-1.4.0-compatible.toml"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.assert_stdout_has("required bump: minor");
    let run = diff(&[
        "--format",
        "json",
        "diff",
        &old,
        &fixture_str("diff/roads-1.3.1.toml"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["required_bump"], "patch");
    assert_eq!(j["changes"].as_array().unwrap().len(), 0);
}

#[test]
fn a_patch_that_changes_a_clause_exits_1() {
    let env = World::empty();
    let text = std::fs::read_to_string(fixture("diff/roads-1.4.0-compatible.toml"))
        .unwrap()
        .replace("\"1.4.0\"", "\"1.3.1\"");
    let new = env.home().join("roads-1.3.1.toml");
    std::fs::write(&new, text).unwrap();
    let run = env.run_in(
        env.home(),
        &[
            "diff",
            &fixture_str("diff/roads-1.3.0.toml"),
            new.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    run.assert_stderr_has("require a minor bump");
    run.assert_stderr_has("metric_tolerances (narrowing, tightened)");
}

#[test]
fn bad_toml_exits_2_with_file_line_and_column() {
    let bad = fixture_str("diff/bad-syntax.toml");
    let run = diff(&["diff", &fixture_str("diff/roads-1.3.0.toml"), &bad]);
    assert_eq!(run.code, 2);
    run.assert_stderr_has(&format!("{bad}:6:17:"));
    run.assert_stderr_has("crs = \"EPSG:4326");
    assert!(run.stdout.is_empty());
}

#[test]
fn bad_inputs_exit_2() {
    let old = fixture_str("diff/roads-1.3.0.toml");
    let new = fixture_str("diff/roads-2.0.0.toml");
    // reversed: NEW not greater than OLD
    let run = diff(&["diff", &new, &old]);
    assert_eq!(run.code, 2);
    run.assert_stderr_has("NEW version 1.3.0 is not greater than OLD version 2.0.0");
    // two datasets
    let run = diff(&["diff", &fixture_str("diff/rivers-1.0.0.toml"), &new]);
    assert_eq!(run.code, 2);
    run.assert_stderr_has("dataset `rivers`");
    // missing file
    let run = diff(&["diff", &old, "/nonexistent/roads.toml"]);
    assert_eq!(run.code, 2);
    run.assert_stderr_has("cannot read /nonexistent/roads.toml");
    // bad usage
    let run = diff(&["diff", &old]);
    assert_eq!(run.code, 2);
}

#[test]
fn a_custom_clause_needs_its_kind_from_the_store() {
    let old = fixture_str("diff/roads-custom-1.0.0.toml");
    let new = fixture_str("diff/roads-custom-1.1.0.toml");
    let run = diff(&["diff", &old, &new]);
    assert_eq!(run.code, 2);
    run.assert_stderr_has("clause `min_feature_count` has no kind");
    run.assert_stderr_has("roads-custom-1.0.0.toml:7:21");

    let env = World::empty();
    std::fs::write(
        env.home().join("contracts.toml"),
        "[kinds]\nmin_feature_count = { kind = \"narrowing\", shape = \"lower_bound\", metric = \"feature_count\" }\n",
    )
    .unwrap();
    let repo = env.home().to_string_lossy().into_owned();
    let run = env.run_in(
        env.home(),
        &["--repo", &repo, "--format", "json", "diff", &old, &new],
    );
    // 100000 -> 90000 lowers a lower bound: loosened, so a minor bump is not enough.
    assert_eq!(run.code, 1, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["changes"][0]["clause"], "min_feature_count");
    assert_eq!(j["changes"][0]["direction"], "loosened");
    assert_eq!(j["changes"][0]["verdict"], "breaking");
}

#[test]
fn a_closed_stdout_ends_quietly_with_the_diffs_own_exit_code() {
    let env = World::empty();
    let mut child = env
        .command(env.home())
        .args([
            "diff",
            &fixture_str("diff/roads-1.3.0.toml"),
            &fixture_str("diff/roads-2.0.0.toml"),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end before the table is written, as `| head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
    // The diff's own exit code (a major bump covering its breaking changes), whether the
    // reader left before the table was written or after (see test_closed_pipe.rs).
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn crs84_for_4326_is_no_change_but_another_crs_is() {
    let env = World::empty();
    let old = fixture_str("diff/roads-1.3.0.toml");
    let text = std::fs::read_to_string(&old).unwrap();
    let crs84 = text
        .replace("version     = \"1.3.0\"", "version     = \"1.3.1\"")
        .replace(
            "crs                      = \"EPSG:4326\"",
            "crs                      = \"OGC:CRS84\"",
        )
        .replace(
            "\"EPSG:4326\", \"EPSG:3857\"]",
            "\"OGC:CRS84\", \"EPSG:3857\"]",
        );
    assert_ne!(
        crs84,
        text.replace("version     = \"1.3.0\"", "version     = \"1.3.1\"")
    );
    let new = env.home().join("roads-1.3.1-crs84.toml");
    std::fs::write(&new, &crs84).unwrap();
    let run = env.run_in(
        env.home(),
        &["--format", "json", "diff", &old, new.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["changes"].as_array().unwrap().len(), 0);
    let moved = crs84.replace("\"OGC:CRS84\"", "\"EPSG:4258\"");
    std::fs::write(&new, moved).unwrap();
    let run = env.run_in(
        env.home(),
        &["--format", "json", "diff", &old, new.to_str().unwrap()],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
}

/// Each command's formats are one table: a format the command does not speak is exit 2 before
/// anything runs (no store is opened here: the directory is empty), naming what it speaks.
#[test]
fn a_format_a_command_does_not_speak_is_refused_before_it_runs() {
    let env = common::World::empty();
    let dir = tempfile::tempdir().unwrap();
    for (format, command, speaks) in [
        ("junit", "status", "text, json"),
        ("sarif", "log", "text, json"),
        ("junit", "check", "text, json, github, sarif"),
        ("github", "notify", "text, json"),
    ] {
        let r = env.run_in(dir.path(), &["--format", format, command]);
        assert_eq!(r.code, 2, "{format} {command}: {}", r.stderr);
        assert!(
            r.stderr
                .starts_with(&format!("error: `{command}` speaks --format {speaks}; ")),
            "{format} {command}: {}",
            r.stderr
        );
        assert!(r.stdout.is_empty());
    }
    // validate speaks junit: it gets as far as looking for the store.
    let r = env.run_in(
        dir.path(),
        &["--format", "junit", "validate", "x", "y.geojson"],
    );
    assert!(!r.stderr.contains("speaks --format"), "{}", r.stderr);
}

#[test]
fn a_bare_dataset_name_is_told_to_name_a_version() {
    let w = common::world::World::new(common::world::closed_port());
    let run = w.run("2026-11-29", &["diff", "roads", "cycle_hire"]);
    run.assert_code(2);
    let err = run.stderr();
    let hints: Vec<&str> = err.lines().filter(|l| l.starts_with("hint: ")).collect();
    assert_eq!(hints.len(), 1, "{err}");
    // The dataset exists: the hint names the form and the versions it can take.
    for want in ["DATASET@VERSION", "roads@2.0.0", "1.0.0, 1.1.0, 2.0.0"] {
        assert!(hints[0].contains(want), "{want}: {err}");
    }

    // Outside a store, or a name that is no dataset: the form alone.
    let run = diff(&["diff", "world", "cycle_hire"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let hints: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("hint: "))
        .collect();
    assert_eq!(hints.len(), 1, "{}", run.stderr);
    assert!(hints[0].contains("DATASET@VERSION"), "{}", run.stderr);
    assert!(hints[0].contains("`world`"), "{}", run.stderr);
}

#[test]
fn an_enforcement_rows_change_cell_says_which_way_the_status_moved() {
    // Issue 44, item 5: a clause that moved from advisory to enforced had an empty change cell
    // when its value stayed, and repeated its value's change (a row of its own) when it moved.
    let env = World::empty();
    let contract = |version: &str, advisory: &str, max_null: f64| {
        format!(
            "dataset = \"roads\"\nversion = \"{version}\"\nvalid_from = 2026-01-01\n\
             advisory = [{advisory}]\n\n[clauses]\ncrs = \"EPSG:4326\"\nunits = \"degree\"\n\
             max_null_fraction = {{ name = {max_null:?} }}\n"
        )
    };
    let old = env.home().join("roads-1.0.0.toml");
    let new = env.home().join("roads-2.0.0.toml");
    // crs: enforced, same value; max_null_fraction: enforced and tightened; units: relaxed.
    std::fs::write(
        &old,
        contract("1.0.0", "\"crs\", \"max_null_fraction\"", 0.1),
    )
    .unwrap();
    std::fs::write(&new, contract("2.0.0", "\"units\"", 0.05)).unwrap();
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let run = env.run_in(env.home(), &["diff", old, new]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // (clause, change, direction) of each row: cells are two or more spaces apart.
    let rows: Vec<(String, String, String)> = run
        .stdout
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            assert_eq!(cells.len(), 5, "{l:?}");
            (cells[0].into(), cells[2].into(), cells[3].into())
        })
        .collect();
    let row = |clause: &str, direction: &str| {
        rows.iter()
            .find(|(c, _, d)| c == clause && d == direction)
            .map(|(_, change, _)| change.clone())
            .unwrap_or_else(|| panic!("no {clause} {direction} row in {rows:?}"))
    };
    assert_eq!(row("crs", "enforced"), "advisory → enforced");
    assert_eq!(row("max_null_fraction", "enforced"), "advisory → enforced");
    assert_eq!(row("units", "relaxed"), "enforced → advisory");
    // The value's own change keeps its row and its words.
    assert_eq!(row("max_null_fraction", "tightened"), "`name` 0.1 → 0.05");
    assert_eq!(rows.len(), 4, "{rows:?}");
}
