//! Declared against observed, through the real binary: `consumers roads --attributes` and
//! `diff --attributes` in the world of `test_can_remove` whose roads line 1 (`name`, `pop_est`)
//! is read through PostgreSQL, pgaudit logging each statement, and by archive through a log of
//! reads that cannot say which attributes a read touched.

use std::path::Path;

use crate::common::world::{registry, World, FLOOD_ONCALL};
use crate::test_can_remove::read_through_postgis;

const TODAY: &str = "2026-11-29";

/// flood-model declares `name` and its one statement reads only `pop_est`; atlas declares
/// nothing and reads `name`; router declares `crs` only; archive declares `pop_est` and reads
/// line 1 through the log that cannot tell.
fn world() -> World {
    let w = read_through_postgis("SELECT pop_est FROM roads_v1 WHERE pop_est > 1000", true);
    let uses = |u: &str| format!("datasets.roads = {{ uses = {u} }}");
    w.write(
        "consumers.toml",
        &registry(
            FLOOD_ONCALL,
            [
                Some(&uses(r#"["crs", "optional_attributes.name"]"#)),
                Some(""),
                Some(&uses(r#"["crs"]"#)),
                Some(&uses(r#"["optional_attributes.pop_est"]"#)),
            ],
        ),
    );
    w
}

/// Each (consumer, attribute, evidence, gap kind) of a report's `attributes`, sorted.
fn rows(j: &serde_json::Value) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    for c in j["attributes"].as_array().expect("attributes") {
        for a in c["attributes"].as_array().unwrap() {
            out.push((
                c["consumer"].as_str().unwrap().to_string(),
                a["attribute"].as_str().unwrap().to_string(),
                a["evidence"].as_str().unwrap().to_string(),
                a["gap"]["kind"].as_str().unwrap_or("-").to_string(),
            ));
        }
    }
    out.sort();
    out
}

fn row(c: &str, a: &str, e: &str, gap: &str) -> (String, String, String, String) {
    (c.into(), a.into(), e.into(), gap.into())
}

/// What the world's reads and declarations say of `name` and `pop_est`.
fn both_attributes() -> Vec<(String, String, String, String)> {
    vec![
        // archive's reads cannot tell: its declaration stands unconfirmed and without a gap,
        // and what it does not declare is unknown, never "not used".
        row("archive", "name", "unknown", "-"),
        row("archive", "pop_est", "declared", "-"),
        // atlas declares nothing: what it reads is observed, and no gap.
        row("atlas", "name", "observed", "-"),
        // flood-model's one read told its attributes: `name` declared and never seen,
        // `pop_est` seen and not declared.
        row("flood-model", "name", "declared", "declared-not-seen"),
        row("flood-model", "pop_est", "observed", "not-in-uses"),
    ]
}

fn of<'a>(j: &'a serde_json::Value, consumer: &str) -> &'a serde_json::Value {
    j["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["consumer"] == consumer)
        .unwrap_or_else(|| panic!("no {consumer} in {j:#}"))
}

#[test]
fn each_attribute_use_is_declared_observed_both_or_unknown() {
    let w = world();
    let run = w.run(
        TODAY,
        &["--format", "json", "consumers", "roads", "--attributes"],
    );
    run.assert_code(0);
    let j = run.json();
    assert_eq!(rows(&j), both_attributes());
    // router has no read and declares no attribute: nothing to say, so it is left out.
    let flood = of(&j, "flood-model");
    assert_eq!(
        (flood["reads"].as_u64(), flood["unknown_reads"].as_u64()),
        (Some(1), Some(0))
    );
    let name = &flood["attributes"][0];
    assert_eq!(name["gap"]["since"], j["lookback_from"], "{j:#}");
    assert_eq!(name["last_read"], serde_json::Value::Null);
    assert_eq!(
        flood["attributes"][1]["last_read"],
        "2026-11-27T10:00:00.120Z"
    );
    assert_eq!(of(&j, "archive")["unknown_reads"], 1);
    // Without --attributes the report has no such field, and the scan does not parse the
    // statements.
    let plain = w
        .run(TODAY, &["--format", "json", "consumers", "roads"])
        .json();
    assert!(plain.get("attributes").is_none(), "{plain:#}");
}

#[test]
fn the_text_names_both_gaps_and_the_reads_that_cannot_tell() {
    let w = world();
    let run = w.run(TODAY, &["consumers", "roads", "--attributes"]);
    run.assert_code(0)
        .assert_stdout_has("reads `pop_est`, not in `uses`")
        .assert_stdout_has("declared, not seen since ")
        .assert_stdout_has("archive: 1 of 1 read(s) cannot tell which attributes they read");
    let line = run
        .stdout
        .lines()
        .find(|l| l.contains("not in `uses`"))
        .unwrap();
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        cells[..4],
        ["flood-model", "pop_est", "observed", "2026-11-27T10:00:00Z"]
    );
}

#[test]
fn diff_says_it_of_the_attributes_the_changes_touch() {
    let w = world();
    // 2.0.0 drops optional_attributes (both `name` and `pop_est`) and changes crs.
    let run = w.run(
        TODAY,
        &[
            "--format",
            "json",
            "diff",
            "roads@1.1.0",
            "roads@2.0.0",
            "--attributes",
        ],
    );
    let j = run.json();
    assert_eq!(rows(&j), both_attributes());
    // A change that touches `pop_est` only names only it.
    w.write(
        "contracts/roads/2.0.0.toml",
        "dataset = \"roads\"\nversion = \"2.0.0\"\nsupersedes = \"1.1.0\"\n\
         valid_from = 2026-11-01\nsunset = 2027-01-15\n[clauses]\ncrs = \"EPSG:4326\"\n\
         optional_attributes = { name = \"string\" }\n",
    );
    let run = w.run(
        TODAY,
        &["diff", "roads@1.1.0", "roads@2.0.0", "--attributes"],
    );
    run.assert_stdout_has("reads `pop_est`, not in `uses`");
    assert!(!run.stdout.contains("declared, not seen"), "{}", run.stdout);
    // Outside a store there is nothing to scan: a usage error, not an empty table.
    let elsewhere = World::empty();
    for v in ["1.1.0", "2.0.0"] {
        let text = w.read(&format!("contracts/roads/{v}.toml")).unwrap();
        std::fs::write(elsewhere.root().join(format!("{v}.toml")), text).unwrap();
    }
    let root = elsewhere.root();
    elsewhere
        .run_in(root, &["diff", "1.1.0.toml", "2.0.0.toml", "--attributes"])
        .assert_code(2)
        .assert_stderr_has("--attributes reads the consumption sources of a store");
    // The same files compare without it.
    elsewhere
        .run_in(root, &["diff", "1.1.0.toml", "2.0.0.toml"])
        .assert_code(0);
}

#[test]
fn the_attributes_follow_their_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/attribute-uses.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let w = world();
    let j = w
        .run(
            TODAY,
            &["--format", "json", "consumers", "roads", "--attributes"],
        )
        .json();
    let errors: Vec<String> = validator
        .iter_errors(&j["attributes"])
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The schema is strict: a field it does not know fails it.
    let mut extra = j["attributes"].clone();
    extra[0]["surprise"] = serde_json::json!(1);
    assert!(!validator.is_valid(&extra));
}
