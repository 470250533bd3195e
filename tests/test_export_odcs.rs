//! `contracts export odcs`: the contract as an ODCS v3.1.0 YAML document, read back with a
//! real YAML parser (PyYAML) and validated against the standard's own JSON Schema
//! (tests/data/odcs). Fails loudly without python3 and PyYAML (.ci/run installs them).

use crate::common;
use crate::common::world;

use world::World;

/// YAML → JSON with PyYAML, the way another tool would read the export.
fn parse_yaml(text: &str) -> serde_json::Value {
    let out = common::python3_with_stdin(
        &[
            "-c",
            "import sys, json, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)",
        ],
        text,
    )
    .unwrap_or_else(|e| {
        panic!("PYTHON3 IS MISSING ({e}): this test reads the YAML with PyYAML (apt-get install python3-yaml)")
    });
    assert!(
        out.status.success(),
        "PyYAML could not read the export (is python3-yaml installed?): {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn odcs_validator() -> jsonschema::Validator {
    common::schema_validator("odcs/odcs-json-schema-v3.1.0.json")
}

fn export(w: &World, today: &str, target: &str) -> serde_json::Value {
    let run = w.run(today, &["export", "odcs", target]);
    run.assert_code(0);
    let doc = parse_yaml(&run.stdout());
    let errors: Vec<String> = odcs_validator()
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not valid ODCS v3.1.0: {errors:#?}\n{}",
        run.stdout()
    );
    doc
}

fn custom<'a>(list: &'a serde_json::Value, property: &str) -> Option<&'a serde_json::Value> {
    list.as_array()?
        .iter()
        .find(|c| c["property"] == property)
        .map(|c| &c["value"])
}

const ROADS_3: &str = r#"dataset = "roads"
version = "3.0.0"
supersedes = "2.0.0"
valid_from = 2027-06-01
sunset = 2027-12-01
description = "Road centrelines"
advisory = ["min_feature_count"]
[clauses]
crs = "EPSG:27700"
envelope = [0.0, 0.0, 700000.0, 1300000.0]
permitted_geometry = ["LineString", "MultiLineString"]
required_attributes = { id = "int64", class = "string", opened = "date" }
optional_attributes = { name = "string", toll = "bool" }
attribute_semantics = { class = "road classification", name = "name as signed" }
max_null_fraction = { name = 0.1 }
metric_tolerances = { positional_rmse_m = 1.0 }
min_feature_count = 100000
"#;

#[test]
fn every_clause_is_mapped_or_kept() {
    let w = World::new(25);
    world::with_feature_count_kind(&w);
    w.write("contracts/roads/3.0.0.toml", ROADS_3);
    let doc = export(&w, "2026-11-29", "roads@3.0.0");
    assert_eq!(doc["apiVersion"], "v3.1.0");
    // The schema check can fail: a wrong kind and a property type ODCS does not know.
    let mut wrong = doc.clone();
    wrong["kind"] = "Contract".into();
    assert!(!odcs_validator().is_valid(&wrong));
    let mut wrong = doc.clone();
    wrong["schema"][0]["properties"][0]["logicalType"] = "int64".into();
    assert!(!odcs_validator().is_valid(&wrong));
    assert_eq!(doc["kind"], "DataContract");
    assert_eq!(doc["version"], "3.0.0");
    // valid_from 2027-06-01 is after --today.
    assert_eq!(doc["status"], "proposed");
    let object = &doc["schema"][0];
    assert_eq!(object["name"], "roads");
    let props = object["properties"].as_array().unwrap();
    let prop = |n: &str| {
        props
            .iter()
            .find(|p| p["name"] == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    // Types by hand from the mapping table: int64 → integer, date → date, bool → boolean.
    assert_eq!(prop("id")["logicalType"], "integer");
    assert_eq!(prop("id")["physicalType"], "int64");
    assert_eq!(prop("id")["required"], true);
    assert_eq!(prop("opened")["logicalType"], "date");
    assert_eq!(prop("toll")["logicalType"], "boolean");
    assert_eq!(prop("toll")["required"], false);
    assert_eq!(prop("class")["description"], "road classification");
    // max_null_fraction name = 0.1 → nullValues at most 10 percent.
    let q = &prop("name")["quality"][0];
    assert_eq!(q["metric"], "nullValues");
    assert_eq!(q["unit"], "percent");
    assert_eq!(q["mustBeLessOrEqualTo"], 10.0);
    // The feature-count floor → rowCount, a warning while advisory.
    let rows = &object["quality"][0];
    assert_eq!(rows["metric"], "rowCount");
    assert_eq!(rows["mustBeGreaterOrEqualTo"], 100000.0);
    assert_eq!(rows["severity"], "warning");
    // No place in ODCS: kept whole.
    let customs = &object["customProperties"];
    assert_eq!(custom(customs, "crs").unwrap(), "EPSG:27700");
    assert_eq!(
        custom(customs, "envelope").unwrap(),
        &serde_json::json!([0.0, 0.0, 700000.0, 1300000.0])
    );
    assert_eq!(
        custom(customs, "permittedGeometry").unwrap(),
        &serde_json::json!(["LineString", "MultiLineString"])
    );
    assert_eq!(
        custom(customs, "metricTolerances").unwrap()["positional_rmse_m"],
        1.0
    );
    // Mapped clauses are not repeated as custom properties.
    for mapped in [
        "requiredAttributes",
        "optionalAttributes",
        "attributeSemantics",
        "maxNullFraction",
        "minFeatureCount",
    ] {
        assert!(
            custom(customs, mapped).is_none(),
            "{mapped} is mapped, not custom"
        );
    }
    let top = &doc["customProperties"];
    assert_eq!(custom(top, "validFrom").unwrap(), "2027-06-01");
    assert_eq!(custom(top, "supersedes").unwrap(), "2.0.0");
    assert_eq!(custom(top, "previousLineSunset").unwrap(), "2027-12-01");
}

#[test]
fn status_follows_the_lines_on_the_day() {
    let w = World::new(25);
    // Line 1 sunsets on 2027-01-15 with line 2 live from 2026-11-01.
    assert_eq!(
        export(&w, "2026-11-29", "roads@1.1.0")["status"],
        "deprecated"
    );
    assert_eq!(export(&w, "2026-11-29", "roads")["status"], "active");
    assert_eq!(export(&w, "2027-02-01", "roads@1.1.0")["status"], "retired");
    // 1.0.0 is superseded by 1.1.0 within its line.
    assert_eq!(
        export(&w, "2026-05-01", "roads@1.0.0")["status"],
        "deprecated"
    );
    w.run("2026-11-29", &["export", "odcs", "roads@9.9.9"])
        .assert_code(2);
}
