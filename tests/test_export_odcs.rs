//! `contracts export odcs`: the contract as an ODCS v3.1.0 YAML document, read back with a
//! real YAML parser (PyYAML) and validated against the standard's own JSON Schema
//! (tests/data/odcs). Fails loudly without python3 and PyYAML (.ci/run installs them).

use crate::common;
use crate::common::world;

use world::World;

/// YAML → JSON with PyYAML, the way another tool would read the export.
pub(crate) fn parse_yaml(text: &str) -> serde_json::Value {
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
    export_text(w, today, target).1
}

/// The export's text and the document PyYAML reads from it, checked against the ODCS schema.
fn export_text(w: &World, today: &str, target: &str) -> (String, serde_json::Value) {
    let run = w.run(today, &["export", "odcs", target]);
    run.assert_code(0);
    (run.stdout(), valid_odcs(&run.stdout()))
}

/// The export `text` as PyYAML reads it, asserted valid against the ODCS v3.1.0 JSON Schema.
pub(crate) fn valid_odcs(text: &str) -> serde_json::Value {
    let doc = parse_yaml(text);
    let errors: Vec<String> = odcs_validator()
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not valid ODCS v3.1.0: {errors:#?}\n{text}"
    );
    doc
}

pub(crate) fn custom<'a>(
    list: &'a serde_json::Value,
    property: &str,
) -> Option<&'a serde_json::Value> {
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
    // No place in ODCS: kept whole, the geometry's on the geometry column.
    let customs = &object["customProperties"];
    assert_eq!(
        custom(&prop("geometry")["customProperties"], "crs").unwrap(),
        "EPSG:27700"
    );
    assert_eq!(
        prop("geometry")["physicalType"],
        "geometry(LineString|MultiLineString,27700)"
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

/// A contract of `rivers` 1.0.0 with `description` (TOML basic-string text) and `clauses`.
fn rivers(w: &World, description: &str, clauses: &str) {
    w.write(
        "contracts/rivers/1.0.0.toml",
        &format!(
            "dataset = \"rivers\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
             description = \"{description}\"\n[clauses]\n{clauses}"
        ),
    );
}

#[test]
fn descriptions_with_control_characters_read_back_unchanged() {
    // PyYAML refuses C1 characters and DEL written raw, and folds a raw NEL, LINE SEPARATOR
    // or PARAGRAPH SEPARATOR into a space: each must travel as an escape.
    let w = World::new(25);
    rivers(
        &w,
        r"a\u0086b\u007Fc\u2028d\u0085e\u2029f\u0001g\th\ni\u009Fj",
        "crs = \"EPSG:4326\"\n",
    );
    let (text, doc) = export_text(&w, "2026-11-29", "rivers");
    let sent = "a\u{86}b\u{7f}c\u{2028}d\u{85}e\u{2029}f\u{1}g\th\ni\u{9f}j";
    assert_eq!(doc["description"]["purpose"], sent);
    assert_eq!(doc["schema"][0]["description"], sent);
    for raw in [
        '\u{86}', '\u{7f}', '\u{2028}', '\u{85}', '\u{2029}', '\u{1}', '\u{9f}',
    ] {
        assert!(!text.contains(raw), "{raw:?} is written raw:\n{text}");
    }
}

#[test]
fn null_limits_are_decimal_percentages_and_counts_integers() {
    let w = World::new(25);
    world::with_feature_count_kind(&w);
    rivers(
        &w,
        "Rivers",
        "optional_attributes = { a = \"string\", b = \"string\", c = \"string\" }\n\
         max_null_fraction = { a = 0.07, b = 0.57, c = 0.125 }\n\
         min_feature_count = 170\n",
    );
    let (text, doc) = export_text(&w, "2026-11-29", "rivers");
    let props = doc["schema"][0]["properties"].as_array().unwrap();
    let limit = |name: &str| {
        props.iter().find(|p| p["name"] == name).unwrap()["quality"][0]["mustBeLessOrEqualTo"]
            .clone()
    };
    // 0.07 is 7 percent and 0.57 is 57, not 7.000000000000001 and 56.99999999999999.
    assert_eq!(limit("a"), serde_json::json!(7));
    assert_eq!(limit("b"), serde_json::json!(57));
    assert_eq!(limit("c"), serde_json::json!(12.5));
    assert!(text.contains("mustBeLessOrEqualTo: 7\n"), "{text}");
    assert!(text.contains("mustBeLessOrEqualTo: 57\n"), "{text}");
    // A count of features is an integer: 170, not 170.0.
    let rows = &doc["schema"][0]["quality"][0];
    assert_eq!(rows["metric"], "rowCount");
    assert_eq!(rows["mustBeGreaterOrEqualTo"], serde_json::json!(170));
    assert!(text.contains("mustBeGreaterOrEqualTo: 170\n"), "{text}");
}

#[test]
fn the_geometry_column_is_a_property() {
    let w = World::new(25);
    rivers(
        &w,
        "Rivers",
        "crs = \"EPSG:27700\"\nunits = \"metre\"\n\
         envelope = [0.0, 0.0, 700000.0, 1300000.0]\n\
         permitted_geometry = [\"LineString\", \"MultiLineString\"]\n\
         emitted_geometry = [\"MultiLineString\"]\ndimensions = [\"XYZ\"]\n\
         required_attributes = { name = \"string\" }\n",
    );
    let doc = export(&w, "2026-11-29", "rivers");
    let object = &doc["schema"][0];
    let geometry = object["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "geometry")
        .expect("a geometry property");
    // PostGIS's way to write a type with its SRID: the emitted type, 3-D, in EPSG:27700.
    assert_eq!(geometry["physicalType"], "geometry(MultiLineStringZ,27700)");
    let customs = &geometry["customProperties"];
    for (property, value) in [
        ("crs", serde_json::json!("EPSG:27700")),
        ("units", serde_json::json!("metre")),
        (
            "envelope",
            serde_json::json!([0.0, 0.0, 700000.0, 1300000.0]),
        ),
        (
            "permittedGeometry",
            serde_json::json!(["LineString", "MultiLineString"]),
        ),
        ("emittedGeometry", serde_json::json!(["MultiLineString"])),
        ("dimensions", serde_json::json!(["XYZ"])),
    ] {
        assert_eq!(custom(customs, property), Some(&value), "{property}");
    }
    // The geometry clauses live on the geometry, not on the schema object.
    assert!(custom(&object["customProperties"], "crs").is_none());
}
