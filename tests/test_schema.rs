//! The JSON Schemas under `schema/`: in sync with what this build generates, accepting every
//! contract, config, registry and manifest in `tests/` and the example store, and rejecting
//! wrong ones that the parsers reject too.

use crate::common;

use std::path::{Path, PathBuf};

use common::TestEnv;
use contracts::model::{parse_config, parse_contract, KindTable, Strictness};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// TOML as an editor's TOML-to-JSON bridge sees it: dates and times become strings.
fn to_json(v: toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        toml::Value::String(s) => J::String(s),
        toml::Value::Integer(i) => J::from(i),
        toml::Value::Float(f) => J::from(f),
        toml::Value::Boolean(b) => J::Bool(b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(a) => J::Array(a.into_iter().map(to_json).collect()),
        toml::Value::Table(t) => J::Object(t.into_iter().map(|(k, v)| (k, to_json(v))).collect()),
    }
}

fn schema(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("schema").join(name))
        .unwrap_or_else(|e| panic!("schema/{name}: {e}"));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("schema/{name} compiles: {e}"))
}

fn errors(v: &jsonschema::Validator, file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let value: toml::Value =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    v.iter_errors(&to_json(value))
        .map(|e| e.to_string())
        .collect()
}

fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(toml_files(&p));
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn the_committed_schemas_are_what_this_build_generates() {
    let env = TestEnv::new();
    let run = env.run_in(env.home(), &["schema"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let generated = run.json();
    let names: Vec<&String> = generated.as_object().unwrap().keys().collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(
        generated.get("webhook-generic.schema.json").is_some(),
        "{names:?}"
    );
    for (name, schema) in generated.as_object().unwrap() {
        let committed: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root().join("schema").join(name))
                .unwrap_or_else(|e| panic!("schema/{name} is not committed: {e}")),
        )
        .unwrap();
        assert_eq!(
            &committed, schema,
            "schema/{name} is stale: run `cargo run -- schema --out schema` and commit it"
        );
    }
}

#[test]
fn every_real_file_validates() {
    let contract = schema("contract.schema.json");
    let mut contracts: Vec<PathBuf> = toml_files(&root().join("contracts"));
    contracts.extend(
        toml_files(&root().join("tests/fixtures/diff"))
            .into_iter()
            .filter(|p| !p.ends_with("bad-syntax.toml")),
    );
    assert!(contracts.len() >= 14, "{contracts:?}");
    let config_text = std::fs::read_to_string(root().join("contracts.toml")).unwrap();
    let custom_kinds = parse_config("contracts.toml", &config_text).unwrap().kinds;
    for f in &contracts {
        let e = errors(&contract, f);
        assert!(e.is_empty(), "{}: {e:#?}", f.display());
    }
    // The example store's contracts parse with its kinds, as the schema says they should.
    for f in toml_files(&root().join("contracts")) {
        let text = std::fs::read_to_string(&f).unwrap();
        parse_contract(
            &f.display().to_string(),
            &text,
            &custom_kinds,
            Strictness::Writing,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    for (schema_name, file) in [
        ("contracts-toml.schema.json", "contracts.toml"),
        ("consumers.schema.json", "consumers.toml"),
        (
            "release-manifest.schema.json",
            "tests/fixtures/schema/release.toml",
        ),
        (
            "waivers.schema.json",
            "tests/fixtures/schema/places.waivers.toml",
        ),
    ] {
        let e = errors(&schema(schema_name), &root().join(file));
        assert!(e.is_empty(), "{file}: {e:#?}");
    }
    contracts::release::validate::parse_manifest(
        "release.toml",
        &std::fs::read_to_string(root().join("tests/fixtures/schema/release.toml")).unwrap(),
    )
    .unwrap();
    contracts::model::waiver::parse_waivers(
        "places.waivers.toml",
        "places",
        &std::fs::read_to_string(root().join("tests/fixtures/schema/places.waivers.toml")).unwrap(),
        90,
    )
    .unwrap();
}

#[test]
fn wrong_files_are_rejected_by_the_schema_and_the_parser() {
    let dir = root().join("tests/fixtures/schema");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let kinds = KindTable::builtin();

    let typo = errors(
        &schema("contract.schema.json"),
        &dir.join("wrong-contract-typo.toml"),
    );
    assert!(typo.iter().any(|e| e.contains("valid_form")), "{typo:#?}");
    assert!(parse_contract(
        "x",
        &read("wrong-contract-typo.toml"),
        &kinds,
        Strictness::Writing
    )
    .is_err());

    let types = errors(
        &schema("contract.schema.json"),
        &dir.join("wrong-contract-types.toml"),
    );
    // One error each for the geometry name, the attribute type and the envelope's length.
    assert_eq!(types.len(), 3, "{types:#?}");
    assert!(parse_contract(
        "x",
        &read("wrong-contract-types.toml"),
        &kinds,
        Strictness::Writing
    )
    .is_err());

    let config = errors(
        &schema("contracts-toml.schema.json"),
        &dir.join("wrong-config.toml"),
    );
    assert_eq!(config.len(), 3, "tls, lookback_days, shape: {config:#?}");
    assert!(parse_config("x", &read("wrong-config.toml")).is_err());

    let consumers = errors(
        &schema("consumers.schema.json"),
        &dir.join("wrong-consumers.toml"),
    );
    assert!(!consumers.is_empty());
    assert!(contracts::consumers::parse_registry("x", &read("wrong-consumers.toml")).is_err());
    // A `uses` entry that does not start with a clause name.
    let uses = errors(
        &schema("consumers.schema.json"),
        &dir.join("wrong-consumers-uses.toml"),
    );
    assert!(!uses.is_empty());
    assert!(contracts::consumers::parse_registry("x", &read("wrong-consumers-uses.toml")).is_err());

    let release = errors(
        &schema("release-manifest.schema.json"),
        &dir.join("wrong-release.toml"),
    );
    assert_eq!(release.len(), 2, "date and metric: {release:#?}");
    assert!(
        contracts::release::validate::parse_manifest("x", &read("wrong-release.toml")).is_err()
    );
}

#[test]
fn taplo_is_pointed_at_the_schemas() {
    let taplo: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join(".taplo.toml")).unwrap()).unwrap();
    let rules = taplo["rule"].as_array().unwrap();
    for path in [
        "./schema/contract.schema.json",
        "./schema/contracts-toml.schema.json",
        "./schema/consumers.schema.json",
    ] {
        assert!(
            rules
                .iter()
                .any(|r| r["schema"]["path"].as_str() == Some(path)),
            "no rule for {path}"
        );
        assert!(root().join(path).is_file(), "{path}");
    }
}

/// Every bound the contract parser applies without the store (no policy, no CRS): a file it
/// refuses for one of them, the schema refuses too, so an editor flags it before `propose`.
#[test]
fn the_schema_refuses_every_static_bound_the_parser_refuses() {
    let base = "dataset = \"roads\"\nversion = \"1.0.0\"\nvalid_from = 2027-01-01\n\n[clauses]\n";
    let cases = [
        (
            "a null fraction above 1",
            "max_null_fraction = { pop_est = 1.5 }",
        ),
        (
            "an overall null fraction below 0",
            "max_null_fraction = -0.1",
        ),
        ("an imputed fraction above 1", "max_imputed_fraction = 2.0"),
        (
            "a negative tolerance",
            "metric_tolerances = { positional_rmse_m = -1.0 }",
        ),
        (
            "a metric fraction above 1",
            "metric_tolerances = { invalid_geometry_fraction = 1.2 }",
        ),
        ("an envelope of three numbers", "envelope = [0.0, 1.0, 2.0]"),
        (
            "a geometry type listed twice",
            "permitted_geometry = [\"Point\", \"Point\"]",
        ),
        (
            "an unknown geometry type",
            "permitted_geometry = [\"Blob\"]",
        ),
        (
            "an unknown attribute type",
            "required_attributes = { id = \"integer\" }",
        ),
        ("an unknown dimension", "dimensions = [\"XYW\"]"),
    ];
    let v = schema("contract.schema.json");
    let kinds = KindTable::builtin();
    for (what, clause) in cases {
        let text = format!("{base}{clause}\n");
        assert!(
            parse_contract("x.toml", &text, &kinds, Strictness::Writing).is_err(),
            "the parser accepts {what}"
        );
        let value: toml::Value = toml::from_str(&text).unwrap();
        assert!(
            v.iter_errors(&to_json(value)).next().is_some(),
            "the schema accepts {what}: {clause}"
        );
    }
    // Bad versions and dates, which the parser refuses too.
    for (what, head) in [
        (
            "a version that is not semver",
            "dataset = \"roads\"\nversion = \"1.0\"\nvalid_from = 2027-01-01\n",
        ),
        (
            "a bad dataset name",
            "dataset = \"Roads\"\nversion = \"1.0.0\"\nvalid_from = 2027-01-01\n",
        ),
        (
            "a quoted day",
            "dataset = \"roads\"\nversion = \"1.0.0\"\nvalid_from = \"15/01/2027\"\n",
        ),
    ] {
        assert!(
            parse_contract("x.toml", head, &kinds, Strictness::Writing).is_err(),
            "the parser accepts {what}"
        );
        let value: toml::Value = toml::from_str(head).unwrap();
        assert!(
            v.iter_errors(&to_json(value)).next().is_some(),
            "the schema accepts {what}"
        );
    }
}

/// Every `[notify]` key the parser takes, set at once: the parser accepts the file and so must
/// the schema (`claim_stale_minutes` was missing from it, so an editor flagged a valid key).
#[test]
fn every_notify_key_the_parser_takes_is_in_the_schema() {
    let text = r#"
[notify]
days_before = [30, 7]
overdue_every_days = 7
from = "Data Platform <data-platform@example.org>"
registry_url = "https://registry.example.org"
claim_stale_minutes = 30
webhook_timeout_seconds = 5
announce = false
ca_file = "certs/receivers.pem"

[smtp]
host = "127.0.0.1"
port = 2525
tls = "none"
ca_file = "certs/relay.pem"
"#;
    parse_config("contracts.toml", text).unwrap_or_else(|e| panic!("the parser: {e}"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("contracts.toml");
    std::fs::write(&file, text).unwrap();
    let e = errors(&schema("contracts-toml.schema.json"), &file);
    assert!(
        e.is_empty(),
        "the schema refuses what the parser takes: {e:#?}"
    );
}
