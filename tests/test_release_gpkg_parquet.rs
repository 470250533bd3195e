//! GeoPackage and GeoParquet edge cases through the real binary: several layers, GDAL's
//! placeholder, attributes-only and tiles-only files, a user column named `rowid`, GeoParquet
//! encodings and hostile files.
//!
//! Expected figures come from GDAL (`ogrinfo -ro -al -so FILE`, GDAL 3.6.2) or pyarrow, as
//! noted at each test; the GeoPackage files are made by `tests/data/gpkg/make.sh`.

use crate::common;
use crate::common::data;

use std::process::{Command, Output};

use serde_json::Value;

fn run(args: &[&str]) -> Output {
    common::contracts(&common::scratch_home())
        .args(args)
        .output()
        .expect("the binary runs")
}

fn profile_ok(args: &[&str]) -> Value {
    let mut all = vec!["--format", "json", "profile"];
    all.extend_from_slice(args);
    let out = run(&all);
    common::assert_exit(&out, 0, &format!("{args:?}: "));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// Runs `profile` expecting exit 2; returns stderr.
fn profile_fails(args: &[&str]) -> String {
    let mut all = vec!["profile"];
    all.extend_from_slice(args);
    let out = run(&all);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "nothing on stdout when it fails");
    err
}

fn gpkg(name: &str) -> String {
    data(&format!("gpkg/{name}")).display().to_string()
}

#[test]
fn several_feature_tables_need_layer_and_the_error_lists_them() {
    let f = gpkg("two_layers.gpkg");
    let err = profile_fails(&[&f]);
    assert!(err.contains("2 feature tables"), "{err}");
    assert!(err.contains("--layer"), "{err}");
    assert!(err.contains("capitals, cities"), "{err}");
    // ogrinfo -ro -al -so two_layers.gpkg: cities 243 features, capitals 9.
    assert_eq!(profile_ok(&["--layer", "cities", &f])["feature_count"], 243);
    assert_eq!(profile_ok(&["--layer", "capitals", &f])["feature_count"], 9);
    let err = profile_fails(&["--layer", "towns", &f]);
    assert!(err.contains("no feature table `towns`"), "{err}");
    assert!(err.contains("capitals, cities"), "{err}");
}

#[test]
fn validate_takes_layer_too() {
    let out = run(&["validate", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--layer"), "{help}");
    assert!(help.contains("--geometry-column"), "{help}");
}

#[test]
fn gdal_placeholder_table_is_not_a_layer() {
    // ogrinfo -ro placeholder.gpkg lists one layer: cities (Point), 243 features.
    let p = profile_ok(&[&gpkg("placeholder.gpkg")]);
    assert_eq!(p["feature_count"], 243);
}

#[test]
fn attributes_only_is_no_feature_table_and_tiles_only_is_a_kind_not_read() {
    let err = profile_fails(&[&gpkg("attributes_only.gpkg")]);
    assert!(err.contains("no feature table"), "{err}");
    assert!(err.contains("table1"), "{err}");
    assert!(
        err.contains("a valid GPKG file of a kind this build does not read"),
        "{err}"
    );
    let err = profile_fails(&[&gpkg("tiles_only.gpkg")]);
    assert!(err.contains("raster tiles only (tiles_only)"), "{err}");
    assert!(
        err.contains("a valid GPKG file of a kind this build does not read"),
        "{err}"
    );
    assert!(!err.contains("damaged"), "{err}");
}

#[test]
fn a_user_column_named_rowid_does_not_change_which_features_are_read() {
    // ogrinfo -ro -al -so rowid_column.gpkg: Feature Count: 243, `rowid: Integer64`.
    let p = profile_ok(&[&gpkg("rowid_column.gpkg")]);
    assert_eq!(p["feature_count"], 243);
    // Null in the 122 odd fids (make.sh sets it for even fids only, 1..=243).
    assert_eq!(p["attributes"]["rowid"]["nulls"], 122);
    assert_eq!(p["attributes"]["rowid"]["type"], "int64");
}

#[test]
fn gdal_undefined_srs_is_null() {
    // A GDAL-written layer with an undefined CRS (srs_id 99999, organisation GDAL).
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("undefined.gpkg");
    std::fs::copy(data("gpkg/placeholder.gpkg"), &f).unwrap();
    let conn = rusqlite::Connection::open(&f).unwrap();
    conn.execute_batch(
        "INSERT INTO gpkg_spatial_ref_sys (srs_name, srs_id, organization, organization_coordsys_id, definition)
           VALUES ('Undefined SRS', 99999, 'GDAL', 99999, 'undefined');
         UPDATE gpkg_geometry_columns SET srs_id = 99999 WHERE table_name = 'cities';",
    )
    .unwrap();
    drop(conn);
    let p = profile_ok(&[f.to_str().unwrap()]);
    assert_eq!(p["crs"], Value::Null);
}

/// Every GeoPackage and GeoParquet file of the corpus profiles as GDAL / pyarrow read it:
/// `tests/data/corpus/expected-gpkg-parquet.toml`, written by the script beside it.
#[test]
fn corpus_profiles_as_gdal_and_pyarrow_read_it() {
    let text = std::fs::read_to_string(data("corpus/expected-gpkg-parquet.toml")).unwrap();
    let doc: toml::Value = toml::from_str(&text).unwrap();
    let files = doc["file"].as_array().unwrap();
    assert!(files.len() >= 20, "{} files", files.len());
    let mut wrong = Vec::new();
    for f in files {
        let rel = f["path"].as_str().unwrap();
        let path = data(rel).display().to_string();
        let mut args = vec![];
        let layer = f.get("layer").and_then(|l| l.as_str());
        if let Some(l) = layer {
            args.extend(["--layer", l]);
        }
        args.push(&path);
        let p = profile_ok(&args);
        let who = format!("{rel} {}", layer.unwrap_or(""));
        let int = |k: &str| f[k].as_integer().unwrap() as u64;
        if p["feature_count"].as_u64() != Some(int("feature_count")) {
            wrong.push(format!(
                "{who}: feature_count {} vs {}",
                p["feature_count"],
                int("feature_count")
            ));
        }
        if p["null_geometries"].as_u64() != Some(int("null_geometries")) {
            wrong.push(format!("{who}: null_geometries {}", p["null_geometries"]));
        }
        let crs = f["crs"].as_str().unwrap();
        let got_crs = p["crs"].as_str().unwrap_or("");
        if got_crs != crs {
            wrong.push(format!("{who}: crs {got_crs:?} vs {crs:?}"));
        }
        // GDAL prints 15 significant digits; pyarrow/shapely give the doubles themselves.
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(1.0);
        match f.get("envelope") {
            Some(e) => {
                let want: Vec<f64> = e
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_float().unwrap())
                    .collect();
                let got: Vec<f64> = p["envelope"]
                    .as_array()
                    .map(|a| a.iter().map(|v| v.as_f64().unwrap()).collect())
                    .unwrap_or_default();
                if got.len() != 4 || got.iter().zip(&want).any(|(a, b)| !close(*a, *b)) {
                    wrong.push(format!("{who}: envelope {got:?} vs {want:?}"));
                }
            }
            None => {
                if !p["envelope"].is_null() {
                    wrong.push(format!("{who}: envelope {} vs none", p["envelope"]));
                }
            }
        }
        let nulls = f["nulls"].as_table().unwrap();
        let attrs = p["attributes"].as_object().unwrap();
        let mut want_names: Vec<&String> = nulls.keys().collect();
        let mut got_names: Vec<&String> = attrs.keys().collect();
        want_names.sort();
        got_names.sort();
        if want_names != got_names {
            wrong.push(format!("{who}: attributes {got_names:?} vs {want_names:?}"));
        }
        for (k, v) in nulls {
            let got = attrs.get(k).and_then(|a| a["nulls"].as_u64());
            if got != Some(v.as_integer().unwrap() as u64) {
                wrong.push(format!("{who}: `{k}` nulls {got:?} vs {v}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn several_geometry_columns_primary_by_default_and_geometry_column_chooses() {
    // tests/data/parquet/make.py says what the file holds.
    let f = data("parquet/two_geoms.parquet").display().to_string();
    let p = profile_ok(&[&f]);
    assert_eq!(p["feature_count"], 3);
    assert_eq!(p["null_geometries"], 1);
    assert_eq!(p["envelope"], serde_json::json!([1.0, 2.0, 3.0, 4.0]));
    assert_eq!(p["crs"], "EPSG:4326");
    // Neither geometry column is an attribute.
    assert_eq!(
        p["attributes"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["n"]
    );
    let out = run(&["--format", "json", "profile", "--geometry-column", "b", &f]);
    assert_eq!(out.status.code(), Some(0));
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(p["null_geometries"], 0);
    assert_eq!(p["envelope"], serde_json::json!([10.0, 20.0, 30.0, 40.0]));
    assert_eq!(p["crs"], Value::Null);
    common::assert_stderr_names(&out, &["spherical edges", "`crs` is null"]);
    let err = profile_fails(&["--geometry-column", "c", &f]);
    assert!(err.contains("no geometry column `c`"), "{err}");
    assert!(err.contains("a, b"), "{err}");
}

#[test]
fn parquet_without_geo_metadata_is_a_valid_file_of_a_kind_not_read() {
    // pyogrio's fixture: a plain Parquet table with a binary column, no `geo` metadata.
    let f = data("corpus/geoparquet/list_field_values_file.parquet");
    let err = profile_fails(&[f.to_str().unwrap()]);
    assert!(
        err.contains("a valid GeoParquet file of a kind this build does not read"),
        "{err}"
    );
    assert!(err.contains("without `geo` metadata"), "{err}");
}

/// Hostile files: each exit 2 naming the file, never a panic (exit 101), within a memory
/// bound (the README's: 1 GiB of address space is more than enough).
#[test]
fn hostile_files_are_exit_2_within_the_memory_bound() {
    let dir = tempfile::tempdir().unwrap();
    let cities = std::fs::read(data("naturalearth/cities.parquet")).unwrap();
    let n = cities.len();
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    // A footer length pointing before the file's start.
    let mut c = cities.clone();
    c[n - 8..n - 4].copy_from_slice(&u32::MAX.to_le_bytes());
    cases.push(("footer_len.parquet", c));
    // The footer overwritten with 0xff (varints that never end, absurd counts).
    let mut c = cities.clone();
    let flen = u32::from_le_bytes(cities[n - 8..n - 4].try_into().unwrap()) as usize;
    for b in &mut c[n - 8 - flen..n - 8 - flen / 2] {
        *b = 0xff;
    }
    cases.push(("footer_ff.parquet", c));
    cases.push(("short.parquet", b"PAR1PAR1".to_vec()));
    // A GeoPackage cut in half, and one whose header is zeroed.
    let g = std::fs::read(data("naturalearth/cities.gpkg")).unwrap();
    cases.push(("half.gpkg", g[..g.len() / 2].to_vec()));
    let mut z = g.clone();
    z[..100].fill(0);
    cases.push(("zeroed.gpkg", z));
    for (name, bytes) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = Command::new("prlimit")
            .arg("--as=1073741824")
            .arg(env!("CARGO_BIN_EXE_contracts"))
            .args(["profile", p.to_str().unwrap()])
            .output()
            .expect("prlimit (util-linux) runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(name), "{name}: {err}");
        assert!(err.len() < 2000, "{name}: a short message: {err}");
    }
}

#[test]
fn a_view_registered_as_a_feature_table_is_read_in_one_pass() {
    // ogrinfo -ro -so view.gpkg cities_view: Feature Count: 243.
    let p = profile_ok(&["--layer", "cities_view", &gpkg("view.gpkg")]);
    assert_eq!(p["feature_count"], 243);
}

#[test]
fn native_interleaved_xyz_linestrings() {
    // tests/data/parquet/make.py: two LINESTRING Z and a null; z is not in the envelope.
    let p = profile_ok(&[data("parquet/native_xyz_interleaved.parquet")
        .to_str()
        .unwrap()]);
    assert_eq!(p["feature_count"], 3);
    assert_eq!(p["null_geometries"], 1);
    assert_eq!(p["invalid_geometries"], 0);
    assert_eq!(p["envelope"], serde_json::json!([-1.0, -2.0, 5.0, 5.0]));
    assert_eq!(p["attributes"]["k"]["nulls"], 1);
}
