//! GeoParquet `geo` metadata against the data (issue 42): a declared `bbox`, `geometry_types`,
//! CRS or `covering` that the data contradicts is a warning naming both values, on stderr and
//! in validate's json, github, sarif and junit outputs; it changes no result and no exit code,
//! and the profile keeps what the data holds. The doctored files are real files with only
//! their `geo` metadata (or one covering column) rewritten: tests/data/parquet/doctor.py.

use crate::common::{data_str, world::World};

/// A contract every cities file passes, whatever its metadata says.
const CITIES: &str = "dataset = \"cities\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
[clauses]\nrequired_attributes = { name = \"string\" }\n";

fn world() -> World {
    let w = World::new(25);
    w.write("contracts/cities/1.0.0.toml", CITIES);
    w
}

fn validate(w: &World, format: &str, file: &str) -> crate::common::world::Run {
    w.run(
        "2026-11-29",
        &["--format", format, "validate", "cities", &data_str(file)],
    )
}

/// The reader's warnings as validate's json carries them.
fn json_warnings(run: &crate::common::world::Run) -> Vec<String> {
    run.json()["warnings"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|w| w.as_str().expect("a warning is text").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Assert that one of validate's json warnings names every one of `parts`.
#[track_caller]
fn assert_json_warns(run: &crate::common::world::Run, parts: &[&str]) {
    let warnings = json_warnings(run);
    assert!(
        warnings.iter().any(|m| parts.iter().all(|p| m.contains(p))),
        "{parts:?} in {warnings:?}"
    );
}

/// The profile of `file` without its file names: what the data holds.
fn profile(w: &World, file: &str) -> serde_json::Value {
    let run = w.run(
        "2026-11-29",
        &["--format", "json", "profile", &data_str(file)],
    );
    run.assert_code(0);
    let mut p = run.json();
    p.as_object_mut().expect("an object").remove("files");
    p
}

/// The real cities file's envelope as its own (untouched) metadata declares it, written by
/// geopandas: the data's envelope that a warning names.
const CITIES_ENVELOPE: &str = "[-175.2205645, -41.2920679923151, 179.2166471, 64.14345946317033]";

#[test]
fn real_files_agree_with_their_metadata() {
    let w = world();
    for file in [
        "naturalearth/cities.parquet",
        "naturalearth/countries.parquet",
        // Split from countries keeping its bbox: a declared box larger than the data.
        "partitions/countries_hive/continent=Europe/part-0.parquet",
        "corpus/geoparquet/data-point-encoding_wkb.parquet",
        "corpus/geoparquet/data-multipolygon-encoding_native.parquet",
        "parquet/native_xyz_interleaved.parquet",
        "parquet/cities_covering.parquet",
    ] {
        let run = w.run("2026-11-29", &["profile", &data_str(file)]);
        run.assert_code(0);
        assert!(
            !run.stderr().contains("`geo` metadata"),
            "{file}: {}",
            run.stderr()
        );
    }
    let run = validate(&w, "json", "parquet/cities_covering.parquet");
    run.assert_code(0);
    assert_eq!(json_warnings(&run), Vec::<String>::new());
}

#[test]
fn a_bbox_that_misses_the_data_is_a_warning_with_both_boxes() {
    let w = world();
    let real = validate(&w, "text", "naturalearth/cities.parquet");
    let run = validate(&w, "text", "parquet/cities_bad_bbox.parquet");
    assert_eq!(run.code(), real.code(), "{}", run.stderr());
    assert_eq!(run.code(), 0);
    run.assert_stderr_has("warning: ")
        .assert_stderr_has("[-10, -10, 10, 10]")
        .assert_stderr_has(CITIES_ENVELOPE);
    let json = validate(&w, "json", "parquet/cities_bad_bbox.parquet");
    json.assert_code(0);
    assert_json_warns(&json, &["[-10, -10, 10, 10]", CITIES_ENVELOPE]);
    let github = validate(&w, "github", "parquet/cities_bad_bbox.parquet");
    github.assert_code(0);
    assert!(
        github
            .stdout()
            .lines()
            .any(|l| l.starts_with("::warning") && l.contains("[-10, -10, 10, 10]")),
        "{}",
        github.stdout()
    );
    // The profile keeps what the data holds, not what the metadata says.
    assert_eq!(
        profile(&w, "parquet/cities_bad_bbox.parquet"),
        profile(&w, "naturalearth/cities.parquet")
    );
}

#[test]
fn undeclared_geometry_types_are_a_warning_with_both_lists() {
    let w = world();
    let run = validate(&w, "text", "parquet/cities_bad_types.parquet");
    run.assert_code(0)
        .assert_stderr_has("[\"Polygon\", \"Point Z\"]")
        .assert_stderr_has("[\"Point\"]");
    let sarif = validate(&w, "sarif", "parquet/cities_bad_types.parquet");
    sarif.assert_code(0);
    let log = sarif.json();
    let errors: Vec<String> = crate::common::schema_validator("sarif/sarif-schema-2.1.0.json")
        .iter_errors(&log)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "invalid SARIF: {errors:#?}");
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert!(
        results.iter().any(|r| r["level"] == "warning"
            && r["message"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("\"Point Z\""))),
        "{results:#?}"
    );
    assert_eq!(
        profile(&w, "parquet/cities_bad_types.parquet"),
        profile(&w, "naturalearth/cities.parquet")
    );
}

#[test]
fn an_unidentified_crs_is_a_warning_in_the_ci_outputs_too() {
    let w = world();
    let run = validate(&w, "json", "parquet/cities_bad_crs.parquet");
    run.assert_code(0)
        .assert_stderr_has("its PROJJSON CRS is not identified");
    assert_json_warns(&run, &["its PROJJSON CRS is not identified"]);
}

#[test]
fn a_covering_box_that_misses_its_geometry_is_counted_with_an_example_row() {
    let w = world();
    let run = validate(&w, "text", "parquet/cities_bad_covering.parquet");
    run.assert_code(0)
        .assert_stderr_has("2 of 243 rows")
        .assert_stderr_has("row 7");
    let junit = validate(&w, "junit", "parquet/cities_bad_covering.parquet");
    junit.assert_code(0);
    let out = junit.stdout();
    let err = out
        .split("<system-err>")
        .nth(1)
        .and_then(|s| s.split("</system-err>").next())
        .unwrap_or_else(|| panic!("no system-err in\n{out}"));
    assert!(
        err.contains("2 of 243 rows") && err.contains("row 7"),
        "{out}"
    );
    let json = validate(&w, "json", "parquet/cities_bad_covering.parquet");
    json.assert_code(0);
    assert_eq!(json_warnings(&json).len(), 1, "{:?}", json_warnings(&json));
}

#[test]
fn projected_coordinates_under_the_default_crs_are_a_warning() {
    let w = world();
    w.write(
        "contracts/boroughs/1.0.0.toml",
        "dataset = \"boroughs\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
         [clauses]\nrequired_attributes = { BoroName = \"string\" }\n",
    );
    let file = data_str("parquet/nybb_no_crs.parquet");
    let run = w.run(
        "2026-11-29",
        &["--format", "json", "validate", "boroughs", &file],
    );
    // The envelope the script that made the file printed (doctor.py's docstring).
    let envelope = "[913188.776184082, 120128.36999511719, 1067379.5294189453, 272844.2936401367]";
    run.assert_code(0)
        .assert_stderr_has("OGC:CRS84")
        .assert_stderr_has(envelope);
    assert_json_warns(&run, &["OGC:CRS84", envelope]);
}
