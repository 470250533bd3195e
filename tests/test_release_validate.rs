//! `contracts validate`, `advisory` and `new` against a store written by hand in a temporary
//! directory and committed with plain git (the store reads at HEAD), with a fixed `--today`.
//! Hand-written, not proposed: line 2 carries a clause this build has no kind for, which
//! `propose` would refuse but a reader must tolerate.

use crate::common;
use crate::common::data_str;
use crate::common::Rows;

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

struct Store {
    dir: tempfile::TempDir,
}

const CONFIG: &str = r#"
[kinds]
min_feature_count = { kind = "narrowing", shape = "lower_bound", metric = "feature_count" }
"#;

/// Line 1: what the countries release satisfies.
const V1: &str = r#"
dataset = "world"
version = "1.0.0"
valid_from = 2026-01-01
advisory = ["max_imputed_fraction"]
[clauses]
crs = "EPSG:4326"
envelope = [-180.0, -90.0, 180.0, 90.0]
permitted_geometry = ["Polygon", "MultiPolygon"]
# The GeoPackage stores every country as a MultiPolygon (ogrinfo: 177 MULTIPOLYGON).
emitted_geometry = ["MultiPolygon"]
required_attributes = { name = "string", gdp_md_est = "int64" }
optional_attributes = { pop_est = "float64", nickname = "string" }
max_null_fraction = 0.0
metric_tolerances = { invalid_geometry_fraction = 0.0 }
max_imputed_fraction = 0.02
supported_output_formats = ["GPKG", "FlatGeobuf"]
min_feature_count = 100
units = "degree"
"#;

/// Line 2, live from 2026-05-01 while line 1 sunsets on 2026-10-01: a window.
const V2: &str = r#"
dataset = "world"
version = "2.0.0"
supersedes = "1.0.0"
valid_from = 2026-05-01
sunset = 2026-10-01
advisory = ["min_feature_count"]
[clauses]
crs = "EPSG:3857"
required_attributes = { name = "string", pop_est = "int64" }
metric_tolerances = { positional_rmse_m = 1.0 }
min_feature_count = 200
clause_from_the_future = { x = 1 }
"#;

impl Store {
    fn new(contracts: &[(&str, &str)]) -> Store {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("contracts.toml"), CONFIG).unwrap();
        let d = dir.path().join("contracts/world");
        std::fs::create_dir_all(&d).unwrap();
        for (version, text) in contracts {
            std::fs::write(d.join(format!("{version}.toml")), text).unwrap();
        }
        let s = Store { dir };
        s.git(&["init", "-q"]);
        s.commit();
        s
    }

    fn git(&self, args: &[&str]) -> String {
        common::git_as(
            self.dir.path(),
            self.dir.path(),
            ("Fixture", "fixture@example.org"),
            args,
        )
    }

    /// Commit whatever the work tree holds.
    fn commit(&self) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", "fixture"]);
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn run(&self, today: &str, args: &[&str]) -> Output {
        common::contracts_as(self.dir.path(), ("Validator", "validator@example.org"))
            .current_dir(self.dir.path())
            .arg("--repo")
            .arg(self.dir.path())
            .arg("--today")
            .arg(today)
            .args(args)
            .output()
            .unwrap()
    }

    /// `--format json validate world` of the countries release on `today`.
    fn validate_countries(&self, today: &str) -> (Option<i32>, Value) {
        self.json(
            today,
            &[
                "validate",
                "world",
                &data_str("naturalearth/countries.gpkg"),
            ],
        )
    }

    fn json(&self, today: &str, args: &[&str]) -> (Option<i32>, Value) {
        let mut a = vec!["--format", "json"];
        a.extend(args);
        let out = self.run(today, &a);
        let v = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), v)
    }
}

/// A store whose only contract is world 1.0.0 ([`V1`]) with `envelope` in place of the globe.
fn world_with_envelope(envelope: &str) -> Store {
    let v = V1.replace(
        "envelope = [-180.0, -90.0, 180.0, 90.0]",
        &format!("envelope = {envelope}"),
    );
    Store::new(&[("1.0.0", &v)])
}

/// The status of `clause` under the contract at index `c`.
fn status<'a>(report: &'a Value, c: usize, clause: &str) -> &'a str {
    report["contracts"][c]["results"]
        .rows()
        .find(|r| r["clause"] == clause)
        .unwrap_or_else(|| panic!("no {clause} in {}", report["contracts"][c]))["status"]
        .as_str()
        .unwrap()
}

#[test]
fn a_release_that_meets_its_only_live_contract_passes() {
    let s = Store::new(&[("1.0.0", V1), ("2.0.0", V2)]);
    // 2026-03-01: only line 1 is live.
    let (code, r) = s.validate_countries("2026-03-01");
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["contracts"].as_array().unwrap().len(), 1);
    for clause in [
        "crs",
        "envelope",
        "permitted_geometry",
        "emitted_geometry",
        "required_attributes",
        "optional_attributes",
        "max_null_fraction",
        "metric_tolerances.invalid_geometry_fraction",
        "supported_output_formats",
        "min_feature_count",
    ] {
        assert_eq!(status(&r, 0, clause), "pass", "{clause}");
    }
    // No manifest: the imputed fraction is unknown, and units are never measured.
    assert_eq!(status(&r, 0, "max_imputed_fraction"), "not-evaluated");
    assert_eq!(status(&r, 0, "units"), "not-evaluated");
}

#[test]
fn in_a_window_the_release_must_satisfy_both_contracts() {
    let s = Store::new(&[("1.0.0", V1), ("2.0.0", V2)]);
    let (code, r) = s.validate_countries("2026-06-01");
    assert_eq!(code, Some(1), "{r}");
    assert_eq!(r["contracts"][0]["version"], "1.0.0");
    assert_eq!(r["contracts"][0]["passed"], true);
    assert_eq!(r["contracts"][1]["version"], "2.0.0");
    assert_eq!(r["contracts"][1]["passed"], false);
    assert_eq!(status(&r, 1, "crs"), "fail");
    assert_eq!(r["contracts"][1]["results"][1]["clause"], "crs");
    // pop_est is float64 in the data (ogrinfo: Real), the contract says int64.
    assert_eq!(status(&r, 1, "required_attributes"), "fail");
    // 177 features < 200, but the clause is advisory: a warning, not a failure.
    assert_eq!(status(&r, 1, "min_feature_count"), "advisory-fail");
    // Not measurable from data, not in a manifest.
    assert_eq!(
        status(&r, 1, "metric_tolerances.positional_rmse_m"),
        "not-evaluated"
    );
    // A clause this build has no kind for.
    assert_eq!(status(&r, 1, "clause_from_the_future"), "not-evaluated");
    // After the sunset only line 2 is live.
    let (code, r) = s.validate_countries("2026-10-01");
    assert_eq!(code, Some(1));
    assert_eq!(r["contracts"].as_array().unwrap().len(), 1);
    assert_eq!(r["contracts"][0]["version"], "2.0.0");
}

#[test]
fn failures_carry_the_measured_value_and_the_limit() {
    let s = world_with_envelope("[-10.0, 30.0, 40.0, 72.0]");
    let cities = data_str("naturalearth/cities.fgb");
    let (code, r) = s.json("2026-03-01", &["validate", "world", &cities]);
    assert_eq!(code, Some(1));
    let env = r["contracts"][0]["results"]
        .rows()
        .find(|x| x["clause"] == "envelope")
        .unwrap();
    assert_eq!(env["status"], "fail");
    assert_eq!(env["limit"], serde_json::json!([-10.0, 30.0, 40.0, 72.0]));
    // geopandas total_bounds of cities
    assert_eq!(
        env["measured"],
        serde_json::json!([
            -175.2205645,
            -41.2920679923151,
            179.2166471,
            64.14345946317033
        ])
    );
    // Cities are points and have no gdp_md_est: both fail, with their reasons.
    assert_eq!(status(&r, 0, "permitted_geometry"), "fail");
    assert_eq!(status(&r, 0, "required_attributes"), "fail");
    // Text output shows FAIL and the reason.
    let out = s.run("2026-03-01", &["validate", "world", &cities]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FAIL"), "{text}");
    assert!(text.contains("`gdp_md_est` is missing"), "{text}");
}

#[test]
fn an_antimeridian_envelope_contains_a_release_on_either_side() {
    // Fiji-like box from 170E across the antimeridian to 170W.
    let s = world_with_envelope("[170.0, -90.0, -170.0, 90.0]");
    let (_, r) = s.validate_countries("2026-03-01");
    // The release spans the whole globe, more than the box: fail.
    assert_eq!(status(&r, 0, "envelope"), "fail");
    // Points east of 170E lie in the crossing box's eastern piece. (A profile's envelope is
    // a plain min/max box, so a release straddling the antimeridian shows as spanning the
    // globe: that case fails, conservatively, and is documented.)
    let fiji = s.path("fiji.geojson");
    std::fs::write(
        &fiji,
        r#"{"type":"FeatureCollection","features":[
        {"type":"Feature","geometry":{"type":"Point","coordinates":[175.0,-17.0]},"properties":{}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[176.5,-16.0]},"properties":{}}]}"#,
    )
    .unwrap();
    let (_, r) = s.json(
        "2026-03-01",
        &["validate", "world", &fiji.display().to_string()],
    );
    assert_eq!(status(&r, 0, "envelope"), "pass");
}

#[test]
fn the_manifest_supplies_metrics_and_is_parsed_strictly() {
    let s = Store::new(&[("1.0.0", V1), ("2.0.0", V2)]);
    let countries = data_str("naturalearth/countries.gpkg");
    std::fs::write(
        s.path("release.toml"),
        "version = \"2026.03\"\ndate = 2026-02-28\nmetrics = { imputed_fraction = 0.05, positional_rmse_m = 0.5 }\n",
    )
    .unwrap();
    let m = s.path("release.toml").display().to_string();
    let (code, r) = s.json(
        "2026-03-01",
        &["validate", "world", &countries, "--manifest", &m],
    );
    // 0.05 > 0.02, but max_imputed_fraction is advisory in 1.0.0.
    assert_eq!(code, Some(0));
    assert_eq!(status(&r, 0, "max_imputed_fraction"), "advisory-fail");
    assert_eq!(r["release"]["version"], "2026.03");
    let (_, r) = s.json(
        "2026-06-01",
        &["validate", "world", &countries, "--manifest", &m],
    );
    assert_eq!(status(&r, 1, "metric_tolerances.positional_rmse_m"), "pass");

    std::fs::write(s.path("bad.toml"), "version = \"1\"\nmetrix = { a = 1 }\n").unwrap();
    let out = s.run(
        "2026-03-01",
        &[
            "validate",
            "world",
            &countries,
            "--manifest",
            &s.path("bad.toml").display().to_string(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    common::assert_stderr_names(&out, &["bad.toml:2:1", "metrix"]);
}

#[test]
fn a_corrupt_release_or_no_live_contract_is_exit_2() {
    let s = Store::new(&[("1.0.0", V1)]);
    std::fs::write(s.path("broken.fgb"), b"fgb\x03fgb\x00garbage").unwrap();
    let out = s.run(
        "2026-03-01",
        &[
            "validate",
            "world",
            &s.path("broken.fgb").display().to_string(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken.fgb"));
    let out = s.run(
        "2025-03-01",
        &[
            "validate",
            "world",
            &data_str("naturalearth/countries.gpkg"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no live contract"));
}

#[test]
fn a_geojson_file_with_a_second_text_is_exit_2_naming_its_offset() {
    let s = Store::new(&[("1.0.0", V1)]);
    let one = std::fs::read(data_str("naturalearth/countries.geojson")).unwrap();
    let mut twice = one.clone();
    twice.extend_from_slice(&one);
    std::fs::write(s.path("twice.geojson"), &twice).unwrap();
    let file = s.path("twice.geojson").display().to_string();
    // The parallel reader and the sequential one alone refuse it alike.
    for sequential in [false, true] {
        let mut cmd = common::contracts_as(s.dir.path(), ("Validator", "validator@example.org"));
        cmd.current_dir(s.dir.path())
            .arg("--repo")
            .arg(s.dir.path())
            .args(["--today", "2026-03-01", "validate", "world", &file]);
        if sequential {
            cmd.arg("--geojson-sequential");
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "sequential={sequential}: {err}");
        assert!(
            err.contains(&format!(
                "content after the GeoJSON text, at byte offset {}",
                one.len()
            )),
            "sequential={sequential}: {err}"
        );
    }
}

/// Check that `xml` is well formed enough for a CI parser: every tag closes in order.
fn balanced(xml: &str) -> bool {
    crate::common::look::tags_close_in_order(xml, false)
}

#[test]
fn junit_has_a_suite_per_contract_and_a_case_per_clause() {
    let s = Store::new(&[("1.0.0", V1), ("2.0.0", V2)]);
    let xml = failing_junit_of_countries(&s, "2026-06-01");
    assert!(xml.starts_with("<?xml"));
    assert!(balanced(&xml), "{xml}");
    assert_eq!(xml.matches("<testsuite ").count(), 2);
    assert!(xml.contains("<testsuite name=\"world@2.0.0\""));
    // Two enforced failures in 2.0.0 (crs, required_attributes), none in 1.0.0.
    assert_eq!(xml.matches("<failure ").count(), 2, "{xml}");
    // min_feature_count is advisory: it passes with its warning.
    assert!(xml.contains("<system-out>advisory-fail"), "{xml}");
    assert!(xml.contains("<skipped message=\"not evaluated"), "{xml}");
    let cases = xml.matches("<testcase ").count();
    let (_, r) = s.json(
        "2026-06-01",
        &[
            "validate",
            "world",
            &data_str("naturalearth/countries.gpkg"),
        ],
    );
    let results: usize = r["contracts"]
        .rows()
        .map(|c| c["results"].as_array().unwrap().len())
        .sum();
    assert_eq!(cases, results);
}

/// The JUnit report of validating the countries release on `today`, which must fail (exit 1).
fn failing_junit_of_countries(s: &Store, today: &str) -> String {
    let countries = data_str("naturalearth/countries.gpkg");
    let out = s.run(
        today,
        &["--format", "junit", "validate", "world", &countries],
    );
    assert_eq!(out.status.code(), Some(1));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn junit_drops_control_characters_of_a_contract_value() {
    // An attribute name holding SOH and a terminal colour sequence (pasted from a terminal):
    // the release lacks it, so it is named in a <failure>.
    let v1 = V1.replace(
        "required_attributes = { name = \"string\", gdp_md_est = \"int64\" }",
        "required_attributes = { name = \"string\", \"po\\u0001p\\u001b[31m\" = \"int64\" }",
    );
    assert!(v1.contains("\\u0001"), "the contract holds the escape");
    let s = Store::new(&[("1.0.0", &v1)]);
    let xml = failing_junit_of_countries(&s, "2026-03-01");
    assert_eq!(xml.matches("<failure ").count(), 1, "{xml}");
    assert!(
        xml.contains("po p [31m"),
        "the rest of the name is kept: {xml}"
    );
    assert!(!crate::common::look::has_forbidden_control(&xml), "{xml:?}");
    assert!(balanced(&xml), "{xml}");
}

#[test]
fn recorded_releases_are_counted_by_advisory() {
    let s = Store::new(&[("1.0.0", V1), ("2.0.0", V2)]);
    // Two releases in the window: countries (177 features) and cities (243 features); the
    // advisory min_feature_count = 200 of 2.0.0 would fail the first only.
    for f in ["naturalearth/countries.gpkg", "naturalearth/cities.gpkg"] {
        let out = s.run(
            "2026-06-01",
            &["validate", "world", &data_str(f), "--record"],
        );
        assert_eq!(out.status.code(), Some(1));
    }
    let text = std::fs::read_to_string(s.path("history/world.releases.toml")).unwrap();
    assert_eq!(text.matches("[[release]]").count(), 2, "{text}");
    // Each record is its own commit, and the checkout stays clean.
    let log = s.git(&["log", "--format=%an|%s"]);
    assert_eq!(
        log.matches("Validator|validate world: record release")
            .count(),
        2,
        "{log}"
    );
    assert!(s.git(&["status", "--porcelain"]).is_empty());
    let (code, counts) = s.json("2026-06-01", &["advisory", "world"]);
    assert_eq!(code, Some(0));
    let row = counts
        .rows()
        .find(|c| c["clause"] == "min_feature_count")
        .expect("min_feature_count is advisory in 2.0.0");
    assert_eq!(row["contract"], "2.0.0");
    assert_eq!(row["evaluated"], 2);
    assert_eq!(row["failed"], 1);
    // max_imputed_fraction (advisory in 1.0.0) was never evaluated: no manifest.
    let row = counts
        .rows()
        .find(|c| c["clause"] == "max_imputed_fraction")
        .unwrap();
    assert_eq!(row["evaluated"], 0);
}

#[test]
fn a_drafted_contract_accepts_the_release_it_was_drafted_from() {
    let s = Store::new(&[]);
    for f in [
        "naturalearth/countries.gpkg",
        "nybb/nybb.shp",
        "edge/test_gpkg_nulls.gpkg",
        "made/null_geom.parquet",
    ] {
        let out = s.run("2026-03-01", &["new", "world", "--from", &data_str(f)]);
        common::assert_exit(&out, 0, "");
        let draft = String::from_utf8(out.stdout).unwrap();
        assert!(draft.contains("advisory"), "{draft}");
        std::fs::write(s.path("contracts/world/1.0.0.toml"), &draft).unwrap();
        s.commit();
        let (code, r) = s.json("2026-03-01", &["validate", "world", &data_str(f)]);
        assert_eq!(code, Some(0), "{f}: {draft}\n{r}");
        assert!(
            r["contracts"][0]["results"]
                .rows()
                .all(|x| x["status"] == "pass"),
            "{f}: {r}"
        );
    }
}

/// The example store shipped at the root of this repository: its countries release passes in
/// the 1.x → 2.0 window, `emitted_geometry` included (the GeoPackage stores MultiPolygons
/// only, which is what 2.0.0 promises).
#[test]
fn the_example_store_release_passes_in_its_window() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = common::contracts(&common::scratch_home())
        .args(["--repo", root, "--today", "2027-01-15", "--format", "json"])
        .args([
            "validate",
            "countries",
            &data_str("naturalearth/countries.gpkg"),
        ])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{r}");
    assert_eq!(
        r["contracts"].as_array().unwrap().len(),
        2,
        "two live lines"
    );
    assert_eq!(status(&r, 1, "emitted_geometry"), "pass");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("advisory"),
        "no advisory failure either: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Record two releases of world, each given as an absolute path: one file inside the
/// store's folder (`drops/cities.gpkg`), one outside it (the countries in `tests/data`).
/// Returns the two paths as they were typed.
fn record_inside_and_outside(s: &Store) -> [String; 2] {
    std::fs::create_dir_all(s.path("drops")).unwrap();
    std::fs::copy(
        data_str("naturalearth/cities.gpkg"),
        s.path("drops/cities.gpkg"),
    )
    .unwrap();
    let inside = s.path("drops/cities.gpkg").to_str().unwrap().to_string();
    let outside = data_str("naturalearth/countries.gpkg");
    for f in [&inside, &outside] {
        assert!(f.starts_with('/'), "typed as an absolute path: {f}");
        let out = s.run("2026-06-01", &["validate", "world", f, "--record"]);
        common::assert_exit(&out, 1, "");
    }
    [inside, outside]
}

#[test]
fn a_recorded_release_names_its_files_without_the_producers_machine() {
    let s = Store::new(&[("1.0.0", V1), ("2.0.0", V2)]);
    record_inside_and_outside(&s);
    let text = std::fs::read_to_string(s.path("history/world.releases.toml")).unwrap();
    assert!(text.contains("files = [\"drops/cities.gpkg\"]"), "{text}");
    assert!(text.contains("files = [\"countries.gpkg\"]"), "{text}");
    assert!(!text.contains(env!("CARGO_MANIFEST_DIR")), "{text}");
    assert!(!text.contains(s.dir.path().to_str().unwrap()), "{text}");
}

#[test]
fn a_recorded_releases_commit_message_names_its_files_as_the_record_does() {
    // Issue 44, item 3: the record was clean, but the commit message carried the path as typed
    // (`record release /home/alice/countries.gpkg`), publishing the producer's machine layout
    // in the shared history for good.
    let s = Store::new(&[("1.0.0", V1), ("2.0.0", V2)]);
    let [inside, outside] = record_inside_and_outside(&s);
    // What the records store, oldest first, and the two commits that wrote them.
    let text = std::fs::read_to_string(s.path("history/world.releases.toml")).unwrap();
    let records: toml::Value = toml::from_str(&text).unwrap();
    let stored: Vec<String> = records["release"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let files = r["files"].as_array().unwrap();
            let files: Vec<&str> = files.iter().map(|f| f.as_str().unwrap()).collect();
            files.join(", ")
        })
        .collect();
    assert_eq!(stored.len(), 2, "{text}");
    let subjects = s.git(&["log", "--reverse", "--format=%s", "-n", "2"]);
    let subjects: Vec<&str> = subjects.lines().collect();
    assert_eq!(subjects.len(), 2, "{subjects:?}");
    for (subject, files) in subjects.iter().zip(&stored) {
        assert_eq!(
            *subject,
            format!("validate world: record release {files} (failed)")
        );
    }
    let messages = s.git(&["log", "--format=%B"]);
    for machine in [
        env!("CARGO_MANIFEST_DIR"),
        s.dir.path().to_str().unwrap(),
        inside.as_str(),
        outside.as_str(),
    ] {
        assert!(!messages.contains(machine), "{machine} in:\n{messages}");
    }
}
