//! `contracts import odcs`: an ODCS document as a draft, proposed into a real store and
//! exported back. The round trip is checked as data, the way another tool reads YAML: both
//! documents are read by PyYAML (with YAML 1.2's reading of dates: plain `2022-10-03` stays
//! a string) and compared as JSON values; and `datacontract lint` (pinned in test.sh) must
//! grade the export as it grades the original. Fails loudly without python3, PyYAML or
//! datacontract-cli.

use std::path::{Path, PathBuf};

use crate::common;
use crate::common::Store;
use crate::test_export_odcs_graded::datacontract_run;

/// What importing one official example must give, written from reading each file.
enum Expect {
    /// Imports (with this `--dataset`, if any) and round-trips.
    Imports(Option<&'static str>),
    /// Refused, the error naming each of these reasons.
    Refused(&'static [&'static str]),
}

const EXAMPLES: [(&str, Expect); 18] = {
    use Expect::*;
    [
        (
            "all/full-example.odcs.yaml",
            Refused(&["2 schema objects", "no `name`"]),
        ),
        (
            "all/postgresql-adventureworks-contract.odcs.yaml",
            Refused(&["68 schema objects", "no `name`"]),
        ),
        (
            "data-types/all-data-types.odcs.yaml",
            Refused(&[
                "`txn_time`: logicalType `time`",
                "`latest_txns`: logicalType `array`",
                "`customer_details`: logicalType `object`",
            ]),
        ),
        (
            "fundamentals/table-column-description.odcs.yaml",
            Imports(None),
        ),
        ("quality/column-accuracy.odcs.yaml", Imports(None)),
        ("quality/column-completeness.odcs.yaml", Imports(None)),
        ("quality/column-custom.odcs.yaml", Imports(None)),
        ("quality/column-validity.odcs.yaml", Imports(None)),
        (
            "roles/service-and-operational-roles.odcs.yaml",
            Refused(&["no schema object"]),
        ),
        (
            "schema/all-schema-types.odcs.yaml",
            Refused(&["3 schema objects"]),
        ),
        (
            "schema/kafka-schema.odcs.yaml",
            Refused(&["name `Orders Event Stream` is not a dataset name"]),
        ),
        (
            "schema/kafka-schemaregistry.odcs.yaml",
            Refused(&["name `Orders Event Stream` is not a dataset name"]),
        ),
        ("schema/table-column.odcs.yaml", Imports(None)),
        (
            "schema/table-columns-with-partition.odcs.yaml",
            Imports(None),
        ),
        (
            "server/azure-server.odcs.yaml",
            Refused(&["no `name`", "no schema object"]),
        ),
        ("server/kafka-server.odcs.yaml", Refused(&["no `name`"])),
        (
            "sla/database-table-sla.odcs.yaml",
            Refused(&["no schema object"]),
        ),
        (
            "stakeholders/basic-four-dpo.odcs.yaml",
            Refused(&["no schema object"]),
        ),
    ]
};

fn example(rel: &str) -> PathBuf {
    common::data(&format!("odcs/examples/{rel}"))
}

/// A YAML document as data: PyYAML's safe reading, less its YAML 1.1 timestamps.
fn as_data(text: &str) -> serde_json::Value {
    const READ: &str = "import sys, json, yaml\n\
class L(yaml.SafeLoader): pass\n\
L.yaml_implicit_resolvers = {k: [r for r in v if r[0] != 'tag:yaml.org,2002:timestamp'] \
for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}\n\
json.dump(yaml.load(sys.stdin, Loader=L), sys.stdout)";
    let out = common::python3_with_stdin(&["-c", READ], text).unwrap_or_else(|e| {
        panic!("PYTHON3 IS MISSING ({e}): the round trip is compared with PyYAML (python3-yaml)")
    });
    assert!(
        out.status.success(),
        "PyYAML could not read (is python3-yaml installed?): {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Import `file` into `store`, propose the draft, export it: the export's text.
fn round_trip(store: &Store, file: &Path, dataset: Option<&str>) -> String {
    let draft = store.env.home().join("imported.toml");
    let mut args = vec![
        "import",
        "odcs",
        file.to_str().unwrap(),
        "--out",
        draft.to_str().unwrap(),
    ];
    if let Some(d) = dataset {
        args.extend(["--dataset", d]);
    }
    let run = store.run(&args);
    assert_eq!(run.code, 0, "import {}: {}", file.display(), run.stderr);
    let text = std::fs::read_to_string(&draft).unwrap();
    let run = store.run(&[
        "propose",
        draft.to_str().unwrap(),
        "--rationale",
        "imported",
    ]);
    assert_eq!(
        run.code,
        0,
        "propose {}: {}{}\n{text}",
        file.display(),
        run.stdout,
        run.stderr
    );
    let name = text
        .lines()
        .find_map(|l| l.strip_prefix("dataset     = "))
        .unwrap()
        .trim_matches('"')
        .to_string();
    let run = store.run(&["export", "odcs", &name]);
    assert_eq!(run.code, 0, "export {name}: {}", run.stderr);
    run.stdout
}

/// Whether `datacontract lint` passes a file.
fn lints(file: &Path) -> bool {
    let run = datacontract_run(&[Path::new("lint"), file]);
    assert!(
        run.code <= 1,
        "datacontract lint failed to run: {}{}",
        run.stdout,
        run.stderr
    );
    run.code == 0
}

fn assert_round_trips(store: &Store, rel: &str, dataset: Option<&str>) {
    let file = example(rel);
    let original = std::fs::read_to_string(&file).unwrap();
    let exported = round_trip(store, &file, dataset);
    assert_eq!(
        as_data(&exported),
        as_data(&original),
        "{rel}: export(import(x)) is not x as data:\n{exported}"
    );
    let out = store.env.home().join("exported.odcs.yaml");
    std::fs::write(&out, &exported).unwrap();
    assert_eq!(
        lints(&out),
        lints(&file),
        "{rel}: datacontract lint grades the round trip unlike the original"
    );
}

#[test]
fn every_official_example_imports_and_round_trips_or_is_refused_for_its_reason() {
    let on_disk: Vec<String> = common::files_under(&common::data("odcs/examples"))
        .iter()
        .filter_map(|p| p.to_str()?.split("odcs/examples/").nth(1).map(String::from))
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    let listed: Vec<String> = EXAMPLES.iter().map(|(p, _)| p.to_string()).collect();
    let mut sorted = on_disk.clone();
    sorted.sort();
    assert_eq!(
        sorted, listed,
        "every vendored example has an expected outcome"
    );
    for (rel, expect) in &EXAMPLES {
        // A fresh store each: several examples share one name.
        let store = Store::new();
        match expect {
            Expect::Imports(dataset) => assert_round_trips(&store, rel, *dataset),
            Expect::Refused(reasons) => {
                let out = store.env.home().join("refused.toml");
                let file = example(rel);
                let run = store.run(&[
                    "import",
                    "odcs",
                    file.to_str().unwrap(),
                    "--out",
                    out.to_str().unwrap(),
                ]);
                assert_eq!(run.code, 2, "{rel} is refused as bad input: {}", run.stderr);
                for r in *reasons {
                    assert!(run.stderr.contains(r), "{rel}: no `{r}` in {}", run.stderr);
                }
                assert!(!out.exists(), "{rel}: a refused import writes nothing");
            }
        }
    }
}

#[test]
fn a_name_that_is_no_dataset_name_imports_with_dataset() {
    assert_round_trips(
        &Store::new(),
        "schema/kafka-schema.odcs.yaml",
        Some("orders"),
    );
}

const ROW: &str =
    "min_feature_count = { kind = \"narrowing\", shape = \"lower_bound\", metric = \"feature_count\" }";

/// `store` with the `[kinds]` row of a feature-count floor, committed.
fn with_feature_count_kind(store: &Store) {
    let path = store.dir.join("contracts.toml");
    let config = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        config.replace(
            "# [kinds]\n# min_feature_count",
            "[kinds]\nmin_feature_count",
        ),
    )
    .unwrap();
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains(&format!("[kinds]\n{ROW}")));
    let author = ("Test Author", "author@example.org");
    common::git_as(
        &store.dir,
        store.env.home(),
        author,
        &["commit", "-qam", "kinds"],
    );
}

fn import(store: &Store, file: &Path, extra: &[&str]) -> common::Run {
    let mut args = vec!["import", "odcs", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    store.run(&args)
}

#[test]
fn a_clause_whose_kind_the_store_lacks_is_refused_with_the_row_to_add() {
    let store = Store::new();
    let parcels = common::fixture("odcs/parcels-rfc0048.odcs.yaml");
    let out = store.env.home().join("parcels.toml");
    let run = import(&store, &parcels, &["--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    // The rowCount check starts at line 43, column 9 of the fixture.
    run.assert_stderr_has("parcels-rfc0048.odcs.yaml:43:9: a rowCount floor")
        .assert_stderr_has(ROW);
    assert!(!out.exists(), "a refused import writes nothing");

    with_feature_count_kind(&store);
    let run = import(&store, &parcels, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let draft: toml::Value = toml::from_str(&run.stdout).unwrap();
    assert_eq!(
        draft["clauses"]["min_feature_count"].as_float(),
        Some(1001.0),
        "more than 1000"
    );
}

#[test]
fn the_proposed_geometry_type_becomes_spatial_clauses_and_round_trips() {
    let store = Store::new();
    with_feature_count_kind(&store);
    let parcels = common::fixture("odcs/parcels-rfc0048.odcs.yaml");
    let run = import(&store, &parcels, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.assert_stderr_has("parcels-rfc0048.odcs.yaml:8:9: status `production` is no clause");
    let draft: toml::Value = toml::from_str(&run.stdout).unwrap();
    let expected: toml::Value = toml::from_str(
        r#"
        crs = "EPSG:2056"
        permitted_geometry = ["MultiPolygon"]
        envelope = [2485000.0, 1075000.0, 2834000.0, 1296000.0]
        dimensions = ["XY"]
        required_attributes = { parcel_id = "string" }
        optional_attributes = { area_m2 = "float64", surveyed = "date" }
        max_null_fraction = { area_m2 = 0.07 }
        min_feature_count = 1001.0
        "#,
    )
    .unwrap();
    assert_eq!(draft["clauses"], expected);
    assert_eq!(draft["valid_from"].to_string(), "2026-11-01");
    assert_eq!(
        draft["description"].as_str(),
        Some("Cadastral parcels of the canton")
    );
    let kept = draft["odcs"]["document"].as_str().unwrap();
    assert_eq!(
        kept,
        std::fs::read_to_string(&parcels).unwrap(),
        "kept verbatim"
    );

    let original = std::fs::read_to_string(&parcels).unwrap();
    let exported = round_trip(&store, &parcels, None);
    assert_eq!(as_data(&exported), as_data(&original), "{exported}");
}

#[test]
fn a_later_version_exports_its_changed_clauses_in_the_kept_document() {
    let store = Store::new();
    with_feature_count_kind(&store);
    let parcels = common::fixture("odcs/parcels-rfc0048.odcs.yaml");
    round_trip(&store, &parcels, None);
    // 1.1.0: a tighter null bound, a higher floor, and one more optional attribute.
    let v1 = store.run(&["show", "parcels", "--format", "json"]);
    assert_eq!(v1.code, 0, "{}", v1.stderr);
    let text = std::fs::read_to_string(store.dir.join("contracts/parcels/1.0.0.toml")).unwrap();
    let next = text
        .replace(
            "version     = \"1.0.0\"",
            "version     = \"1.1.0\"\nsupersedes  = \"1.0.0\"",
        )
        .replace("valid_from  = 2026-11-01", "valid_from  = 2026-11-29")
        .replace("{ area_m2 = 0.07 }", "{ area_m2 = 0.05 }")
        .replace("min_feature_count = 1001.0", "min_feature_count = 1200.0")
        .replace(
            "surveyed = \"date\"",
            "surveyed = \"date\", owner = \"string\"",
        );
    assert_ne!(next, text);
    store.propose_ok(&next, "tighter");
    let run = store.run(&["export", "odcs", "parcels"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got = as_data(&run.stdout);
    let mut want = as_data(&std::fs::read_to_string(&parcels).unwrap());
    want["version"] = "1.1.0".into();
    want["contractCreatedTs"] = "2026-11-29T00:00:00+00:00".into();
    let props = want["schema"][0]["properties"].as_array_mut().unwrap();
    // A new attribute joins after the kept ones.
    props.push(serde_json::json!({
        "name": "owner", "logicalType": "string", "physicalType": "string", "required": false,
    }));
    props[2]["quality"] = serde_json::json!([{
        "name": "area_m2_null_fraction", "type": "library", "metric": "nullValues",
        "unit": "percent", "mustBeLessOrEqualTo": 5, "severity": "error",
        "description": "max_null_fraction: at most 0.05 of the features have no area_m2",
    }]);
    // The lineage the document had no place for, as `export odcs` writes it for any contract.
    want["customProperties"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "property": "supersedes", "value": "1.0.0",
            "description": "contracts: the version this one follows",
        }));
    let floor = &mut want["schema"][0]["quality"][0];
    floor.as_object_mut().unwrap().remove("mustBeGreaterThan");
    floor["mustBeGreaterOrEqualTo"] = 1200.into();
    assert_eq!(got, want, "{}", run.stdout);
}

#[test]
fn bad_yaml_and_every_problem_are_named_with_file_line_and_column() {
    let store = Store::new();
    let bad = store.write(
        "bad.odcs.yaml",
        "apiVersion: v3.1.0\nkind: DataContract\nschema: [\n",
    );
    let run = import(&store, Path::new(&bad), &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("{bad}:4:1: not YAML")),
        "{}",
        run.stderr
    );
    // Three problems in one document: all of them, in line order.
    let many = store.write(
        "many.odcs.yaml",
        "apiVersion: v2.2.2\nkind: DataContract\nname: Not A Name\nversion: 1.0\nschema:\n  - name: a\n    properties:\n      - name: t\n        logicalType: time\n",
    );
    let run = import(&store, Path::new(&many), &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    for (i, want) in [
        "many.odcs.yaml:1:13: apiVersion `v2.2.2`",
        "many.odcs.yaml:3:7: name `Not A Name`",
        "many.odcs.yaml:4:10: version 1.0 is not a semantic version",
        "many.odcs.yaml:8:9: property `t`: logicalType `time`",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            lines.get(i).is_some_and(|l| l.contains(want)),
            "line {i}: {want}\n{}",
            run.stderr
        );
    }
}

#[test]
fn our_own_export_imports_back_to_its_clauses() {
    let store = Store::new();
    with_feature_count_kind(&store);
    let contract = "dataset = \"rivers\"\nversion = \"1.0.0\"\nvalid_from = 2026-11-01\n\
        description = \"Rivers\"\n[clauses]\ncrs = \"EPSG:4326\"\n\
        permitted_geometry = [\"LineString\", \"MultiLineString\"]\n\
        emitted_geometry = [\"MultiLineString\"]\ndimensions = [\"XYZ\"]\n\
        envelope = [-10.5, 35.0, 30.25, 60.0]\n\
        required_attributes = { name = \"string\" }\n\
        optional_attributes = { width = \"float64\" }\n\
        max_null_fraction = { width = 0.57 }\nmin_feature_count = 170.0\n";
    store.propose_ok(contract, "first");
    let run = store.run(&["export", "odcs", "rivers"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let exported = store.write("rivers.odcs.yaml", &run.stdout);
    let run = import(&store, Path::new(&exported), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let draft: toml::Value = toml::from_str(&run.stdout).unwrap();
    let original: toml::Value = toml::from_str(contract).unwrap();
    assert_eq!(draft["clauses"], original["clauses"], "{}", run.stdout);
}

#[test]
fn checks_that_look_like_clauses_but_are_none_are_named_and_kept() {
    let store = Store::new();
    with_feature_count_kind(&store);
    // Five null rows is no fraction; a row count below a ceiling is no floor.
    let doc = store.write(
        "counts.odcs.yaml",
        "apiVersion: v3.1.0\nkind: DataContract\nid: c\nname: counts\nversion: 1.0.0\n\
         status: active\nschema:\n  - name: counts\n    properties:\n      - name: n\n\
         \x20       logicalType: integer\n        quality:\n          - metric: nullValues\n\
         \x20           mustBeLessOrEqualTo: 5\n    quality:\n      - metric: rowCount\n\
         \x20       mustBeLessThan: 10\n",
    );
    let run = import(&store, Path::new(&doc), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.assert_stderr_has(
        "counts.odcs.yaml:13:13: property `n`: this nullValues check is no fraction",
    )
    .assert_stderr_has("counts.odcs.yaml:16:9: this rowCount check is no floor");
    let draft: toml::Value = toml::from_str(&run.stdout).unwrap();
    let clauses = draft["clauses"].as_table().unwrap();
    assert_eq!(
        clauses.keys().collect::<Vec<_>>(),
        ["optional_attributes"],
        "{}",
        run.stdout
    );
    let original = std::fs::read_to_string(&doc).unwrap();
    let exported = round_trip(&store, Path::new(&doc), None);
    assert_eq!(as_data(&exported), as_data(&original), "{exported}");
}

#[test]
fn a_status_the_store_gives_otherwise_is_the_stores_on_export() {
    let store = Store::new();
    let doc = store.write(
        "old.odcs.yaml",
        "apiVersion: v3.1.0\nkind: DataContract\nid: o\nname: old\nversion: 1.0.0\n\
         status: retired\nschema:\n  - name: old\n    properties:\n      - name: n\n\
         \x20       logicalType: string\n",
    );
    let run = import(&store, Path::new(&doc), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.assert_stderr_has("old.odcs.yaml:6:9: status `retired` is no clause");
    let exported = as_data(&round_trip(&store, Path::new(&doc), None));
    // Proposed on --today, the version is live: `active`, whatever the document said.
    assert_eq!(exported["status"], "active");
    let mut want = as_data(&std::fs::read_to_string(&doc).unwrap());
    want["status"] = "active".into();
    assert_eq!(exported, want);
}
