//! `contracts profile` on real data, run through the real binary.
//!
//! Expected figures come from independent tools, never from this program's output:
//! - `ogrinfo -ro -al -so FILE` (GDAL 3.6.2, Debian bookworm `gdal-bin`) for feature counts,
//!   field types and layer geometry types;
//! - geopandas 1.x with pyogrio: `df = gpd.read_file(F)` (or `gpd.read_parquet`), then
//!   `len(df)`, `list(df.total_bounds)`, `df.isna().sum()`, `df.geom_type.value_counts()`.
//!   Envelopes are `total_bounds` as printed by Python (shortest round-trip repr); they are
//!   the constants of `test_envelopes.rs`, which runs `tests/data/envelopes.py` to check
//!   each against the extent GDAL's `ogrinfo` computes.

use crate::common;
use crate::common::data;
use crate::common::Rows;
use crate::test_envelopes as envelopes;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn bin() -> Command {
    common::contracts(&common::scratch_home())
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

fn profile(file: &Path) -> Value {
    let out = run(&["profile", "--format", "json", file.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "profile {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("profile prints JSON")
}

fn envelope(p: &Value) -> Vec<f64> {
    p["envelope"]
        .as_array()
        .expect("an envelope")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn types(p: &Value) -> Vec<&str> {
    p["geometry_types"]
        .rows()
        .map(|v| v.as_str().unwrap())
        .collect()
}

fn attr<'a>(p: &'a Value, name: &str) -> (&'a str, u64) {
    let a = &p["attributes"][name];
    (
        a["type"]
            .as_str()
            .unwrap_or_else(|| panic!("attribute {name} in {p}")),
        a["nulls"].as_u64().unwrap(),
    )
}

const FORMATS: [&str; 5] = ["shp", "gpkg", "geojson", "fgb", "parquet"];

#[test]
fn countries_in_five_formats_give_one_profile() {
    for ext in FORMATS {
        let p = profile(&data(&format!("naturalearth/countries.{ext}")));
        // ogrinfo: Feature Count: 177 in every format.
        assert_eq!(p["feature_count"], 177, "{ext}");
        assert_eq!(p["null_geometries"], 0, "{ext}");
        assert_eq!(p["invalid_geometries"], 0, "{ext}");
        assert_eq!(p["crs"], "EPSG:4326", "{ext}");
        // Types as stored. `ogrinfo -ro -al F | grep -oE '^  (MULTIPOLYGON|POLYGON)' | sort |
        // uniq -c`: the .shp and the .geojson hold 148 POLYGON and 29 MULTIPOLYGON, the .gpkg
        // and the .fgb 177 MULTIPOLYGON (their writer promoted every polygon); the .parquet's
        // WKB type codes (pyarrow, `struct.unpack('<I', wkb[1:5])`) are 148 × 3 and 29 × 6.
        let want: &[&str] = match ext {
            "gpkg" | "fgb" => &["MultiPolygon"],
            _ => &["MultiPolygon", "Polygon"],
        };
        assert_eq!(types(&p), want, "{ext}");
        // geopandas total_bounds; the GeoJSON writer rounded 180.00000000000006 to 180.
        let want = envelopes::expected(&format!("naturalearth/countries.{ext}"));
        assert_eq!(envelope(&p), want, "{ext}");
        // ogrinfo on the .shp: pop_est Real (24.15), continent/name/iso_a3 String (80.0),
        // gdp_md_est Integer64 (18.0); geopandas isna().sum() is 0 everywhere.
        for (name, ty) in [
            ("pop_est", "float64"),
            ("continent", "string"),
            ("name", "string"),
            ("iso_a3", "string"),
            ("gdp_md_est", "int64"),
        ] {
            assert_eq!(attr(&p, name), (ty, 0), "{ext} {name}");
        }
        assert_eq!(
            p["attributes"].as_object().unwrap().len(),
            5,
            "{ext}: fid is no attribute"
        );
        assert_eq!(p["metrics"]["feature_count"], 177.0);
    }
}

#[test]
fn cities_in_five_formats_give_one_profile() {
    for ext in FORMATS {
        let p = profile(&data(&format!("naturalearth/cities.{ext}")));
        assert_eq!(p["feature_count"], 243, "{ext}"); // ogrinfo: Feature Count: 243
        assert_eq!(types(&p), ["Point"], "{ext}"); // ogrinfo: Geometry: Point
                                                   // geopandas total_bounds (identical for .shp and .fgb; ogrinfo's Extent rounds them).
        assert_eq!(envelope(&p), envelopes::CITIES, "{ext}");
        assert_eq!(attr(&p, "name"), ("string", 0), "{ext}");
        assert_eq!(p["crs"], "EPSG:4326");
    }
}

#[test]
fn geoparquet_row_groups_read_in_parallel_give_the_same_profile() {
    // made/cities_rowgroups.parquet: the cities in 5 row groups of 50 rows (pyarrow).
    let one = profile(&data("naturalearth/cities.parquet"));
    let many = profile(&data("made/cities_rowgroups.parquet"));
    for k in [
        "feature_count",
        "envelope",
        "attributes",
        "geometry_types",
        "crs",
    ] {
        assert_eq!(one[k], many[k], "{k}");
    }
    assert_eq!(many["feature_count"], 243);
}

#[test]
fn geopackage_fid_is_not_an_attribute_and_nad27_is_read() {
    let p = profile(&data("nc/nc.gpkg"));
    // ogrinfo: FID Column = fid, 14 fields, Feature Count 100, SRS EPSG:4267.
    assert_eq!(p["feature_count"], 100);
    assert_eq!(p["crs"], "EPSG:4267");
    let attrs = p["attributes"].as_object().unwrap();
    assert_eq!(attrs.len(), 14);
    assert!(!attrs.contains_key("fid"));
    assert_eq!(attr(&p, "CRESS_ID"), ("int32", 0)); // ogrinfo: Integer
    assert_eq!(attr(&p, "BIR74"), ("float64", 0)); // ogrinfo: Real
    assert_eq!(attr(&p, "NAME"), ("string", 0));
    // ogrinfo -sql "select ST_MinX(extent(geom)), ..." -dialect sqlite
    assert_eq!(envelope(&p), envelopes::NC);
}

#[test]
fn shapefile_in_ny_state_plane_feet() {
    let p = profile(&data("nybb/nybb.shp"));
    // The .prj names NAD_1983_StatePlane_New_York_Long_Island_FIPS_3104_Feet: EPSG:2263.
    assert_eq!(p["crs"], "EPSG:2263");
    assert_eq!(p["feature_count"], 5);
    // geopandas: geom_type {'MultiPolygon': 5}
    assert_eq!(types(&p), ["MultiPolygon"]);
    assert_eq!(envelope(&p), envelopes::NYBB);
    // ogrinfo: BoroCode Integer (4.0), BoroName String (32.0), Shape_Leng Real (19.11)
    assert_eq!(attr(&p, "BoroCode"), ("int32", 0));
    assert_eq!(attr(&p, "BoroName"), ("string", 0));
    assert_eq!(attr(&p, "Shape_Leng"), ("float64", 0));
}

#[test]
fn nulls_in_every_attribute_type() {
    let p = profile(&data("edge/test_gpkg_nulls.gpkg"));
    assert_eq!(p["feature_count"], 4);
    // ogrinfo types; geopandas isna().sum() is 1 for every column.
    for (name, ty) in [
        ("col_bool", "bool"),       // Integer(Boolean)
        ("col_int8", "int32"),      // Integer(Int16)
        ("col_int16", "int32"),     // Integer(Int16)
        ("col_int32", "int32"),     // Integer
        ("col_int64", "int64"),     // Integer64
        ("col_uint8", "int32"),     // Integer(Int16)
        ("col_uint16", "int32"),    // Integer
        ("col_uint32", "int64"),    // Integer64
        ("col_uint64", "int64"),    // Integer64
        ("col_float32", "float64"), // Real(Float32)
        ("col_float64", "float64"), // Real
    ] {
        assert_eq!(attr(&p, name), (ty, 1), "{name}");
        assert_eq!(p["attributes"][name]["null_fraction"], 0.25);
    }
    // tests/data/made/typed_nulls.*: one null in each column and one null geometry,
    // per made/make.py; geopandas isna().sum() gives 1 for every column of every file.
    for ext in ["gpkg", "fgb", "geojson", "parquet"] {
        let p = profile(&data(&format!("made/typed_nulls.{ext}")));
        assert_eq!(p["feature_count"], 4, "{ext}");
        assert_eq!(p["null_geometries"], 1, "{ext}");
        for name in ["b", "i32", "i64", "f64", "s", "d", "dt"] {
            assert_eq!(attr(&p, name).1, 1, "{ext} {name}");
        }
        assert_eq!(attr(&p, "b").0, "bool", "{ext}");
        assert_eq!(attr(&p, "dt").0, "datetime", "{ext}");
        assert_eq!(attr(&p, "f64").0, "float64", "{ext}");
    }
}

#[test]
fn null_geometries_in_every_format() {
    let files = [
        "edge/null_geom.geojson",
        "made/null_geom.gpkg",
        "made/null_geom.shp",
        "made/null_geom.fgb",
        "made/null_geom.parquet",
    ];
    for f in files {
        let p = profile(&data(f));
        // geopandas: 2 rows, geom_type {nan: 1, 'LineString': 1}
        assert_eq!(p["feature_count"], 2, "{f}");
        assert_eq!(p["null_geometries"], 1, "{f}");
        assert_eq!(p["metrics"]["null_geometry_fraction"], 0.5, "{f}");
        assert_eq!(types(&p), ["LineString"], "{f}");
        assert_eq!(envelope(&p), envelopes::NULL_GEOM, "{f}");
    }
}

#[test]
fn empty_layers_have_no_envelope() {
    for ext in FORMATS {
        let p = profile(&data(&format!("made/empty.{ext}")));
        assert_eq!(p["feature_count"], 0, "{ext}");
        assert_eq!(p["envelope"], Value::Null, "{ext}");
        assert!(types(&p).is_empty(), "{ext}");
        assert_eq!(p["metrics"]["invalid_geometry_fraction"], 0.0, "{ext}");
        if ext != "geojson" {
            // A GeoJSON file declares no schema: with no feature there is no attribute.
            assert_eq!(attr(&p, "name"), ("string", 0), "{ext}");
        }
    }
}

fn dims(p: &Value) -> Vec<&str> {
    p["dimensions"]
        .rows()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[test]
fn dimensions_are_those_gdal_reports() {
    // ogrinfo -ro -al (GDAL 3.6.2) prints each feature's geometry as `LINESTRING ZM`,
    // `LINESTRING Z`, `LINESTRING M`; the edge/line_* copies were made from line_zm.gpkg with
    // ogr2ogr (tests/data/README.md).
    for (file, want) in [
        ("edge/line_zm.gpkg", "XYZM"),
        ("edge/line_zm.fgb", "XYZM"),
        ("edge/line_zm.shp", "XYZM"),
        ("edge/line_z.shp", "XYZ"),
        ("edge/line_m.shp", "XYM"),
        ("edge/line_zm.geojson", "XYZ"),
        ("edge/curve.gpkg", "XY"),
        ("naturalearth/countries.shp", "XY"),
        // shapefile-rs test data, read with `ogrinfo --config SHAPE_RESTORE_SHX YES -ro -al`
        // (they have no .shx): MULTILINESTRING ZM, POINT Z (its M values are all "no data"),
        // POINT M, POLYGON ZM, MULTIPOINT Z (M "no data").
        ("shp/linez.shp", "XYZM"),
        ("shp/pointz.shp", "XYZ"),
        ("shp/pointm.shp", "XYM"),
        ("shp/polygonz.shp", "XYZM"),
        ("shp/multipointz.shp", "XYZ"),
        ("naturalearth/cities.fgb", "XY"),
        ("naturalearth/countries.geojson", "XY"),
    ] {
        let p = profile(&data(file));
        assert_eq!(dims(&p), [want], "{file}");
    }
    // No geometry, no dimension.
    assert!(dims(&profile(&data("made/empty.gpkg"))).is_empty());
    // Several files (and so `--merge`): the union.
    let z = data("edge/line_z.shp");
    let m = data("edge/line_m.shp");
    let zm = data("edge/line_zm.shp");
    let p = profile_many(&[
        z.to_str().unwrap(),
        m.to_str().unwrap(),
        zm.to_str().unwrap(),
    ]);
    assert_eq!(dims(&p), ["XYZ", "XYM", "XYZM"]);
}

#[test]
fn z_and_m_are_dropped_and_curves_keep_their_name() {
    let p = profile(&data("edge/line_zm.gpkg"));
    // ogrinfo: "3D Measured Line String"; geopandas total_bounds (x/y only).
    assert_eq!(types(&p), ["LineString"]);
    assert_eq!(
        envelope(&p),
        [
            -123.21079845830354,
            48.98614986424009,
            -95.03529565821856,
            49.01476383135495
        ]
    );
    let p = profile(&data("edge/curve.gpkg"));
    // ogrinfo: "Compound Curve" (geopandas linearises it to LineString; we do not).
    assert_eq!(types(&p), ["CompoundCurve"]);
    assert_eq!(p["invalid_geometries"], 0);
    // geopandas total_bounds of the linearised curve: its parts are straight segments, so
    // the control points span the same box.
    assert_eq!(
        envelope(&p),
        [
            -123.12356779947976,
            49.01476383135495,
            -95.25337230527805,
            49.01476383135495
        ]
    );
}

#[test]
fn merged_profiles_equal_the_profile_of_all_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = data("naturalearth/cities.gpkg");
    let b = data("made/typed_nulls.gpkg");
    let save = |src: &Path, name: &str| {
        let out = run(&["profile", "--format", "json", src.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0));
        let p = dir.path().join(name);
        std::fs::write(&p, &out.stdout).unwrap();
        p
    };
    let pa = save(&a, "a.json");
    let pb = save(&b, "b.json");
    let both = profile_many(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    let out = run(&[
        "profile",
        "--format",
        "json",
        "--merge",
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
    ]);
    common::assert_exit(&out, 0, "");
    let merged: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(merged, both);
    // 243 cities + 4 typed features; `name` exists only in cities, so it is null in the 4.
    assert_eq!(both["feature_count"], 247);
    assert_eq!(attr(&both, "name"), ("string", 4));
    assert_eq!(attr(&both, "b"), ("bool", 1 + 243));
}

fn profile_many(files: &[&str]) -> Value {
    let mut args = vec!["profile", "--format", "json"];
    args.extend(files);
    let out = run(&args);
    common::assert_exit(&out, 0, "");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn merging_different_crs_is_refused() {
    let out = run(&[
        "profile",
        data("nybb/nybb.shp").to_str().unwrap(),
        data("naturalearth/countries.shp").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    common::assert_stderr_names(&out, &["CRS differ", "countries.shp"]);
}

#[test]
fn an_unidentified_prj_is_a_warning_and_a_null_crs() {
    let dir = tempfile::tempdir().unwrap();
    for ext in ["shp", "shx", "dbf"] {
        std::fs::copy(
            data(&format!("nybb/nybb.{ext}")),
            dir.path().join(format!("x.{ext}")),
        )
        .unwrap();
    }
    std::fs::write(
        dir.path().join("x.prj"),
        r#"PROJCS["Local_Grid",GEOGCS["GCS_Mystery",DATUM["D_Mystery",SPHEROID["S",6378137.0,298.0]]],PROJECTION["Foo"]]"#,
    )
    .unwrap();
    let out = run(&[
        "profile",
        "--format",
        "json",
        dir.path().join("x.shp").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(p["crs"], Value::Null);
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning:"));
}

#[test]
fn text_output_names_the_figures() {
    let out = run(&["profile", data("nybb/nybb.shp").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in ["EPSG:2263", "MultiPolygon", "BoroCode", "int32", "features"] {
        assert!(text.contains(needle), "{needle} in {text}");
    }
    assert!(
        out.stderr.is_empty(),
        "no progress bar when stderr is not a terminal"
    );
}

/// Copy every file of a dataset (a shapefile has siblings) into `dir`, returning the main
/// file's new path.
fn copy_set(stem: &str, ext: &str, dir: &Path, name: &str) -> PathBuf {
    let src = data(stem);
    let parent = src.parent().unwrap();
    let base = src.file_name().unwrap().to_str().unwrap();
    for e in std::fs::read_dir(parent).unwrap() {
        let p = e.unwrap().path();
        let fname = p.file_name().unwrap().to_str().unwrap().to_string();
        if let Some(rest) = fname.strip_prefix(&format!("{base}.")) {
            std::fs::copy(&p, dir.join(format!("{name}.{rest}"))).unwrap();
        }
    }
    dir.join(format!("{name}.{ext}"))
}

#[test]
fn corrupt_and_truncated_files_of_every_format_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for ext in FORMATS {
        let good = copy_set(
            "naturalearth/countries",
            ext,
            dir.path(),
            &format!("good_{ext}"),
        );
        let bytes = std::fs::read(&good).unwrap();
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("truncated", bytes[..bytes.len() / 3].to_vec()),
            ("tiny", bytes[..5].to_vec()),
            ("empty", Vec::new()),
            ("garbage", {
                let mut b = bytes.clone();
                let n = b.len();
                for x in &mut b[n / 3..n / 3 + 4000] {
                    *x = x.wrapping_mul(7).wrapping_add(13);
                }
                b
            }),
        ];
        for (what, content) in cases {
            let name = format!("{what}_{ext}");
            let path = copy_set("naturalearth/countries", ext, dir.path(), &name);
            std::fs::write(&path, content).unwrap();
            let out = run(&["profile", path.to_str().unwrap()]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{name}: {err}");
            assert!(err.contains(&format!("{name}.{ext}")), "{name}: {err}");
            assert!(err.contains("error:"), "{name}: {err}");
            assert!(!err.contains("panicked"), "{name}: {err}");
        }
    }
}

#[test]
fn damaged_files_never_panic() {
    // Cut and scramble each format at many places: every outcome must be a profile or a
    // clean error (exit 0 or 2), never a crash.
    let dir = tempfile::tempdir().unwrap();
    for ext in FORMATS {
        let good = copy_set("naturalearth/cities", ext, dir.path(), &format!("c_{ext}"));
        let bytes = std::fs::read(&good).unwrap();
        for k in 1..16 {
            let at = bytes.len() * k / 16;
            let mut cut = bytes[..at].to_vec();
            let mut flipped = bytes.clone();
            for x in &mut flipped[at.saturating_sub(64)..at] {
                *x ^= 0x5A;
            }
            for (what, content) in [("cut", &mut cut), ("flip", &mut flipped)] {
                std::fs::write(&good, &content).unwrap();
                let out = run(&["profile", good.to_str().unwrap()]);
                let code = out.status.code();
                assert!(
                    code == Some(0) || code == Some(2),
                    "{ext} {what} at {at}: {:?} {}",
                    code,
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

#[test]
fn an_unknown_extension_is_bad_input() {
    let out = run(&["profile", data("naturalearth/cities.cpg").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown format"));
}

#[test]
fn every_kind_of_geojson_document_opens() {
    // Each expectation is from `ogrinfo -ro -al -so F` (GDAL 3.6.2) on the file
    // (tests/data/README.md says how each was made).
    for (file, count, ty) in [
        // cities.geojson through `ogr2ogr -f GeoJSONSeq` (newline-delimited) and with
        // `-lco RS=YES` (RFC 8142): Feature Count: 243, Geometry: Point.
        ("geojson/cities.geojsonl", 243, "Point"),
        ("geojson/cities.geojsons", 243, "Point"),
        // edge/null_geom.geojson after a UTF-8 byte-order mark: Feature Count: 2.
        ("geojson/bom.geojson", 2, "LineString"),
        // A single Feature: Feature Count: 1, Geometry: 3D Multi Point.
        ("geojson/feature.geojson", 1, "MultiPoint"),
        // A bare geometry: Feature Count: 1, Geometry: Multi Polygon.
        ("geojson/geometry.geojson", 1, "MultiPolygon"),
    ] {
        let p = profile(&data(file));
        assert_eq!(p["feature_count"], count, "{file}");
        assert_eq!(types(&p), [ty], "{file}");
    }
    let p = profile(&data("geojson/cities.geojsons"));
    assert_eq!(attr(&p, "name"), ("string", 0));
    // ogrinfo Extent: (-175.220564, -41.292068) - (179.216647, 64.143460), as the cities.
    let e = envelope(&p);
    assert!((e[0] + 175.220564).abs() < 1e-6 && (e[3] - 64.143460).abs() < 1e-6);
    let p = profile(&data("geojson/feature.geojson"));
    // name: String, pop: Integer, note: String (null in the only feature).
    assert_eq!(attr(&p, "name"), ("string", 0));
    assert_eq!(attr(&p, "pop"), ("int64", 0));
    assert_eq!(attr(&p, "note"), ("string", 1));
    assert_eq!(dims(&p), ["XYZ"]);
    let p = profile(&data("geojson/geometry.geojson"));
    assert_eq!(envelope(&p), [-10.0, -5.0, 10.0, 5.0]);
    assert!(p["attributes"].as_object().unwrap().is_empty());
}

#[test]
fn a_geojson_property_null_everywhere_is_a_string_column() {
    // ogrinfo: `nothing: String (0.0)` although no feature gives it a value.
    let p = profile(&data("geojson/all_null.geojson"));
    assert_eq!(attr(&p, "nothing"), ("string", 2));
    assert_eq!(attr(&p, "name"), ("string", 0));
}

#[test]
fn a_geojson_member_given_twice_is_an_error_not_a_doubled_count() {
    // GDAL 3.6 reads both `features` arrays (Feature Count: 2); a document with a member
    // twice is not valid JSON text for an object (RFC 8259 §4: names SHOULD be unique) and
    // its meaning is the writer's bug, so it is refused.
    let f = data("geojson/features_twice.geojson");
    let out = run(&["profile", f.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("features_twice.geojson"), "{err}");
    assert!(err.contains("`features` is given twice"), "{err}");
}

#[test]
fn flatgeobuf_padding_after_the_last_property_and_every_column_type() {
    // alldatatypes.fgb (flatgeobuf test data; GDAL's autotest has the same file): its one
    // feature's property buffer ends in a padding byte. `ogrinfo -ro -al` (GDAL 3.6.2):
    // byte Integer, ubyte Integer, bool Integer(Boolean), short Integer(Int16), ushort
    // Integer, int Integer, uint Integer64, long Integer64, ulong Real (= 1.84467440737096e+19),
    // float Real(Float32), double Real, string String, json String, datetime DateTime,
    // binary Binary; Feature Count: 1; POINT (0 0).
    let p = profile(&data("fgb/alldatatypes.fgb"));
    assert_eq!(p["feature_count"], 1);
    assert_eq!(types(&p), ["Point"]);
    for (name, ty) in [
        ("byte", "int32"),
        ("ubyte", "int32"),
        ("bool", "bool"),
        ("short", "int32"),
        ("ushort", "int32"),
        ("int", "int32"),
        ("uint", "int64"),
        ("long", "int64"),
        ("ulong", "float64"),
        ("float", "float64"),
        ("double", "float64"),
        ("string", "string"),
        ("json", "string"),
        ("datetime", "datetime"),
        ("binary", "binary"),
    ] {
        assert_eq!(attr(&p, name), (ty, 0), "{name}");
    }
}

/// Run `profile` on a file; its exit code, JSON (when 0) and stderr.
fn profile_with_stderr(file: &Path) -> (Option<i32>, Value, String) {
    code_json_stderr(&run(&[
        "profile",
        "--format",
        "json",
        file.to_str().unwrap(),
    ]))
}

/// A profile run's exit code, JSON (`null` unless stdout is JSON) and stderr.
fn code_json_stderr(out: &Output) -> (Option<i32>, Value, String) {
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code(),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_shapefile_gdal_and_pyshp_read_is_read_with_a_warning_naming_what_was_ignored() {
    // Each variant is naturalearth/countries with one fault; `ogrinfo -ro -al -so` (GDAL
    // 3.6.2) and pyshp 2.x (`len(shapefile.Reader(f).shapes())`) both read 177 shapes from
    // every one but `shx` (their count there comes from the short .shx: 100; the .shp and
    // the .dbf both hold 177, and 177 is what is read here).
    let dir = tempfile::tempdir().unwrap();
    let shp = |name: &str| copy_set("naturalearth/countries", "shp", dir.path(), name);
    let header_len = |b: &mut Vec<u8>, len: usize| {
        b[24..28].copy_from_slice(&((len / 2) as u32).to_be_bytes());
    };
    // The header's length runs past the last record into 1000 zero bytes of padding.
    let pad = shp("pad");
    let mut b = std::fs::read(&pad).unwrap();
    b.extend([0u8; 1000]);
    let n = b.len();
    header_len(&mut b, n);
    std::fs::write(&pad, &b).unwrap();
    // Junk after the last record; the header is right.
    let junk = shp("junk");
    let mut b = std::fs::read(&junk).unwrap();
    b.extend((0..777u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8));
    std::fs::write(&junk, &b).unwrap();
    // A header length short of the last records.
    let short = shp("short");
    let mut b = std::fs::read(&short).unwrap();
    let n = b.len() - 2000;
    header_len(&mut b, n);
    std::fs::write(&short, &b).unwrap();
    // A .shx of 100 entries.
    let shx = shp("shx");
    let idx = dir.path().join("shx.shx");
    let mut x = std::fs::read(&idx).unwrap();
    x.truncate(100 + 8 * 100);
    header_len(&mut x, 900);
    std::fs::write(&idx, &x).unwrap();
    for (file, ignored) in [
        (&pad, "ignored 1000 bytes after the last record"),
        (&pad, "ignored the header's file length (181744 bytes)"),
        (&junk, "ignored 777 bytes after the last record"),
        (&short, "ignored the header's file length"),
        (
            &shx,
            "ignored its .shx, which lists 100 records where the .shp holds 177",
        ),
    ] {
        let (code, p, err) = profile_with_stderr(file);
        assert_eq!(code, Some(0), "{}: {err}", file.display());
        assert_eq!(p["feature_count"], 177, "{}", file.display());
        assert_eq!(types(&p), ["MultiPolygon", "Polygon"]);
        assert!(err.contains(ignored), "{}: {err}", file.display());
        assert!(
            err.contains(file.file_name().unwrap().to_str().unwrap()),
            "{err}"
        );
    }
    // Cut inside the last record: damage, not padding.
    let cut = shp("cut");
    let b = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &b[..b.len() - 10]).unwrap();
    let (code, _, err) = profile_with_stderr(&cut);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("cut.shp") && err.contains("truncated"),
        "{err}"
    );
}

#[test]
fn multipatch_is_a_valid_file_of_a_kind_this_build_does_not_read() {
    // shapefile-rs test data; `ogrinfo` needs its .shx restored (SHAPE_RESTORE_SHX=YES) and
    // then reads it as a MultiPolygon. This build refuses it, as unsupported, not damaged.
    let (code, _, err) = profile_with_stderr(&data("shp/multipatch.shp"));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("multipatch.shp"), "{err}");
    assert!(
        err.contains("a valid Shapefile file of a kind this build does not read"),
        "{err}"
    );
    assert!(err.contains("MultiPatch"), "{err}");
    assert!(
        !err.contains("is damaged") && !err.contains("corrupt"),
        "{err}"
    );
}

#[test]
fn one_huge_geojson_geometry_is_streamed_in_bounded_memory() {
    // A 24 MB LineString of 1.2 M positions, profiled under a 128 MiB address-space limit
    // (`ulimit -v`; the streaming reader runs in under 64 MiB): held as a JSON tree (about
    // 110 bytes a position as `serde_json::Value`s) it would need more than that.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.geojson");
    let mut text = String::from(
        r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":1},"geometry":{"type":"LineString","coordinates":["#,
    );
    let n = 1_200_000;
    for i in 0..n {
        let x = (i % 360) as f64 - 180.0 + 0.5;
        let y = (i % 170) as f64 - 85.0 + 0.25;
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("[{x},{y}]"));
    }
    text.push_str("]}}]}");
    std::fs::write(&path, &text).unwrap();
    drop(text);
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 131072 && exec "$0" profile --format json "$1""#)
        .arg(env!("CARGO_BIN_EXE_contracts"))
        .arg(&path)
        .env_remove("CONTRACTS_TODAY")
        .output()
        .unwrap();
    common::assert_exit(&out, 0, "");
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(p["feature_count"], 1);
    assert_eq!(types(&p), ["LineString"]);
    // Worked out from the generator: x runs over -179.5..=179.5, y over -84.75..=84.25.
    assert_eq!(envelope(&p), [-179.5, -84.75, 179.5, 84.25]);
}

/// `profile --format json FILE` with the GeoJSON reader `sequential` names: the parallel one
/// (the default, which falls back on the sequential one where it cannot cut the file), or
/// the sequential one alone.
fn profile_geojson(file: &Path, sequential: bool) -> (Option<i32>, Value, String) {
    let mut cmd = bin();
    cmd.args(["profile", "--format", "json"]).arg(file);
    if sequential {
        cmd.arg("--geojson-sequential");
    }
    code_json_stderr(&cmd.output().expect("the binary runs"))
}

#[test]
fn a_geojson_file_holds_one_text_and_a_feature_holds_one_feature() {
    let dir = tempfile::tempdir().unwrap();
    let one = std::fs::read(data("naturalearth/countries.geojson")).unwrap();
    let mut twice = one.clone();
    twice.extend_from_slice(&one);
    let feature = r#"{"type": "Feature", "properties": {"n": 1}, "geometry": {"type": "Point", "coordinates": [1, 2]},
 "features": [{"type": "Feature", "properties": {"n": 2}, "geometry": {"type": "Point", "coordinates": [3, 4]}},
              {"type": "Feature", "properties": {"n": 3}, "geometry": {"type": "Point", "coordinates": [5, 6]}}]}"#;
    // Both readers give the same answers: the parallel one and the sequential one alone.
    for sequential in [false, true] {
        let reader = if sequential { "sequential" } else { "parallel" };
        // Concatenated by mistake: an error at the second text, not 354 features.
        for name in ["twice.geojson", "twice.json"] {
            let path = dir.path().join(name);
            std::fs::write(&path, &twice).unwrap();
            let (code, _, stderr) = profile_geojson(&path, sequential);
            assert_eq!(code, Some(2), "{reader} {name}: {stderr}");
            // The second text starts where the first file's bytes end.
            let at = one.len();
            assert!(
                stderr.contains(&format!(
                    "content after the GeoJSON text, at byte offset {at}"
                )),
                "{reader} {name}: {stderr}"
            );
        }
        // Whitespace after the one text is no second text.
        let path = dir.path().join("spaced.geojson");
        let mut spaced = one.clone();
        spaced.extend_from_slice(b"\n\r\n \t\n");
        std::fs::write(&path, &spaced).unwrap();
        let (code, p, stderr) = profile_geojson(&path, sequential);
        assert_eq!(code, Some(0), "{reader}: {stderr}");
        assert_eq!(p["feature_count"], 177, "{reader}");
        // Named as a sequence, the same bytes are two collections: 2 × 177 features.
        let path = dir.path().join("twice.geojsonl");
        std::fs::write(&path, &twice).unwrap();
        let (code, p, stderr) = profile_geojson(&path, sequential);
        assert_eq!(code, Some(0), "{reader}: {stderr}");
        assert_eq!(p["feature_count"], 354, "{reader}");

        // A Feature with a foreign `features` member is one feature, with a warning.
        let path = dir.path().join("feature.geojson");
        std::fs::write(&path, feature).unwrap();
        let (code, p, stderr) = profile_geojson(&path, sequential);
        assert_eq!(code, Some(0), "{reader}: {stderr}");
        assert_eq!(p["feature_count"], 1, "{reader}: {p}");
        assert!(
            stderr.contains("a Feature has a `features` member; it is a foreign member"),
            "{reader}: {stderr}"
        );
    }
    // The switch is for the benchmark and tests, not a user's: it is not in the help.
    for command in ["profile", "validate"] {
        let out = run(&[command, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("--layer"), "{command}: {help}");
        assert!(!help.contains("geojson-sequential"), "{command}: {help}");
    }
}
