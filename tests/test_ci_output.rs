//! CI formats: `--format github` (workflow commands that annotate a file and line) and
//! `--format sarif` (SARIF 2.1.0, checked against the OASIS JSON Schema in tests/data/sarif).

use crate::common::world;

use world::World;

fn sarif_validator() -> jsonschema::Validator {
    crate::common::schema_validator("sarif/sarif-schema-2.1.0.json")
}

/// The log is valid SARIF 2.1.0; returns its results.
fn valid_sarif(stdout: &str) -> Vec<serde_json::Value> {
    let log: serde_json::Value =
        serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"));
    let v = sarif_validator();
    let errors: Vec<String> = v.iter_errors(&log).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "invalid SARIF: {errors:#?}\n{stdout}");
    assert_eq!(log["version"], "2.1.0");
    log["runs"][0]["results"].as_array().unwrap().clone()
}

/// A workflow command line: (command, properties, message).
fn command(line: &str) -> (String, Vec<(String, String)>, String) {
    let rest = line
        .strip_prefix("::")
        .unwrap_or_else(|| panic!("not a command: {line}"));
    let (head, message) = rest.split_once("::").unwrap();
    let (cmd, props) = head.split_once(' ').unwrap_or((head, ""));
    let props = props
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    (cmd.to_string(), props, message.to_string())
}

fn prop<'a>(props: &'a [(String, String)], key: &str) -> Option<&'a str> {
    props
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[test]
fn the_schema_check_can_fail() {
    let v = sarif_validator();
    let bad = serde_json::json!({
        "version": "2.1.0",
        "runs": [{ "tool": { "driver": { "name": "x" } },
                   "results": [{ "message": { "text": "m" }, "level": "fatal" }] }]
    });
    assert!(!v.is_valid(&bad), "level `fatal` is not SARIF");
    assert!(
        !v.is_valid(&serde_json::json!({ "version": "2.1.0" })),
        "runs is required"
    );
}

const WORLD: &str = "dataset = \"world\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
advisory = [\"max_null_fraction\"]\n[clauses]\n\
required_attributes = { name = \"string\", pop_est = \"int64\" }\n\
max_null_fraction = { name = 0.0 }\nmin_feature_count = 1000\n";

#[test]
fn validate_annotates_the_failing_clause_line() {
    let w = World::new(25);
    world::with_feature_count_kind(&w);
    w.write("contracts/world/1.0.0.toml", WORLD);
    let countries = crate::common::data_str("naturalearth/countries.gpkg");
    let run = w.run(
        "2026-11-29",
        &["--format", "github", "validate", "world", &countries],
    );
    run.assert_code(1);
    let lines: Vec<_> = run.stdout().lines().map(command).collect();
    // Counted by hand in WORLD: required_attributes is line 6, min_feature_count line 8.
    // pop_est is a float64 in the file; the file has 177 features, under 1000.
    let req = lines
        .iter()
        .find(|(_, p, _)| prop(p, "title").is_some_and(|t| t.starts_with("required_attributes")))
        .expect("required_attributes annotated");
    assert_eq!(req.0, "error");
    assert_eq!(prop(&req.1, "file"), Some("contracts/world/1.0.0.toml"));
    assert_eq!(prop(&req.1, "line"), Some("6"));
    assert!(
        req.2.contains("`pop_est` is float64, not int64"),
        "{}",
        req.2
    );
    let count = lines
        .iter()
        .find(|(_, p, _)| prop(p, "title").is_some_and(|t| t.starts_with("min_feature_count")))
        .expect("min_feature_count annotated");
    assert_eq!(prop(&count.1, "line"), Some("8"));
    // `name` is never null in the file, so the advisory clause passes: no warning for it.
    assert!(
        !run.stdout().contains("max_null_fraction"),
        "{}",
        run.stdout()
    );

    let run = w.run(
        "2026-11-29",
        &["--format", "sarif", "validate", "world", &countries],
    );
    run.assert_code(1);
    let results = valid_sarif(&run.stdout());
    assert_eq!(results.len(), 2, "{results:#?}");
    let loc = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "contracts/world/1.0.0.toml");
    assert!(results.iter().all(|r| r["level"] == "error"));
}

#[test]
fn diff_and_propose_annotate_the_draft() {
    let w = World::new(25);
    // A minor bump that changes the crs: breaking, so insufficient.
    let draft = w.root().join("draft.toml");
    std::fs::write(
        &draft,
        "dataset = \"roads\"\nversion = \"2.1.0\"\nsupersedes = \"2.0.0\"\n\
         valid_from = 2026-12-01\n[clauses]\ncrs = \"EPSG:3857\"\n",
    )
    .unwrap();
    let run = w.run(
        "2026-11-29",
        &["--format", "github", "diff", "roads@2.0.0", "draft.toml"],
    );
    run.assert_code(1);
    let (cmd, props, message) = command(run.stdout().trim());
    assert_eq!(cmd, "error");
    assert_eq!(prop(&props, "file"), Some("draft.toml"));
    assert_eq!(
        prop(&props, "line"),
        Some("6"),
        "crs is on line 6 of the draft"
    );
    assert!(message.contains("EPSG:27700 → EPSG:3857"), "{message}");
    let run = w.run(
        "2026-11-29",
        &["--format", "sarif", "diff", "roads@2.0.0", "draft.toml"],
    );
    let results = valid_sarif(&run.stdout());
    assert_eq!(results[0]["ruleId"], "insufficient-bump");

    let propose = |format: &str, dry_run: &[&str]| {
        let mut args = vec![
            "--format",
            format,
            "propose",
            "draft.toml",
            "--rationale",
            "x",
        ];
        args.extend(dry_run);
        w.run("2026-11-29", &args)
    };
    let run = propose("github", &["--dry-run"]);
    run.assert_code(1);
    let (cmd, props, _) = command(run.stdout().lines().next().unwrap());
    assert_eq!(cmd, "error");
    assert_eq!(prop(&props, "line"), Some("6"));
    let run = propose("sarif", &["--dry-run"]);
    valid_sarif(&run.stdout());
    // Only a dry run speaks the CI formats, and commands without findings do not at all.
    propose("github", &[]).assert_code(2);
    w.run("2026-11-29", &["--format", "sarif", "status"])
        .assert_code(2);
}

#[test]
fn check_annotates_an_edited_contract() {
    let w = World::new(25);
    let clean = w.run("2026-11-29", &["--format", "sarif", "check"]);
    let before = valid_sarif(&clean.stdout()).len();
    // Edit a published contract in place (only its description, so no verdict changes) and
    // commit it: check must find exactly that.
    w.write(
        "contracts/roads/1.0.0.toml",
        "dataset = \"roads\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
         description = \"edited\"\n[clauses]\ncrs = \"EPSG:4326\"\n",
    );
    let run = w.run("2026-11-29", &["--format", "github", "check"]);
    run.assert_code(1);
    let edited: Vec<_> = run
        .stdout()
        .lines()
        .map(command)
        .filter(|(_, p, m)| {
            prop(p, "file") == Some("contracts/roads/1.0.0.toml")
                && m.contains("a published contract was edited")
        })
        .collect();
    assert_eq!(edited.len(), 1, "{}", run.stdout());
    let run = w.run("2026-11-29", &["--format", "sarif", "check"]);
    assert_eq!(valid_sarif(&run.stdout()).len(), before + 1);
}
