//! Parity is the oracle: every release file of `tests/data` loaded into PostGIS with GDAL's
//! `ogr2ogr` profiles as a table exactly as the file does, against a real PostgreSQL with
//! PostGIS started for the test.

use serde_json::Value;

use crate::common::postgres::Cluster;
use crate::common::{self, data};
use crate::test_postgis::{comparable, profile};

/// The release files of `tests/data` the file readers refuse (corrupt or of a kind this build
/// does not read, each tested where its refusal is): there is nothing to compare a table with.
/// Any other refusal fails the parity test, so no file drops out of it unseen.
const REFUSED_FILES: &[&str] = &[
    "geojson/features_twice.geojson",
    "gpkg/attributes_only.gpkg",
    "gpkg/tiles_only.gpkg",
    "shp/multipatch.shp",
];

/// Release files GDAL refuses to load while the file reader reads them, and why.
const NOT_LOADED: &[(&str, &str)] = &[(
    "corpus/pyshp/corrupt_too_long.shp",
    "its index (.shx) lists more records than the .shp holds: GDAL stops, the reader reads the records there are",
)];

/// GeoPackages of several feature tables: each table is compared on its own (`--layer`).
const LAYERS: &[(&str, &[&str])] = &[
    ("gpkg/two_layers.gpkg", &["capitals", "cities"]),
    ("gpkg/view.gpkg", &["cities", "cities_view"]),
];

/// Where a table may differ from its file, and why (docs/src/reference/release-formats.md,
/// "Parity"): GDAL loads a GeoJSON with Z as EPSG:4979 (WGS 84 with ellipsoidal heights),
/// while the GeoJSON reader names EPSG:4326, as RFC 7946 fixes the CRS whatever the Z; and a
/// GeoPackage view's `OGC_FID` column is an attribute to the GeoPackage reader (a view has no
/// primary key) but the feature id to GDAL, which then writes it as the table's key.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "geojson/feature.geojson",
        "crs",
        "the CRS GDAL gives a 3-D GeoJSON",
    ),
    (
        "gpkg/view.gpkg",
        "attributes",
        "OGC_FID of the view cities_view",
    ),
];

/// Parity is the oracle: every release file of `tests/data` (GeoPackage, Shapefile,
/// FlatGeobuf, GeoJSON; Debian's GDAL has no Parquet driver) loaded into PostGIS with
/// `ogr2ogr` profiles as a table exactly as the file does, field by field, but for `files`,
/// `format` and the [`KNOWN_DIFFERENCES`].
#[test]
fn every_release_file_loaded_into_postgis_profiles_as_the_file() {
    let pg = Cluster::start();
    let root = data("");
    let mut files: Vec<String> = common::files_under(&root)
        .iter()
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("gpkg" | "shp" | "fgb" | "geojson")
            )
        })
        .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    files.sort();
    assert!(files.len() > 60, "{files:?}");
    let mut refused = Vec::new();
    let mut compared = 0;
    let mut differences = Vec::new();
    let mut not_loaded = Vec::new();
    for rel in &files {
        let layers: Vec<Option<&str>> = match LAYERS.iter().find(|(f, _)| f == rel) {
            Some((_, names)) => names.iter().map(|n| Some(*n)).collect(),
            None => vec![None],
        };
        for layer in layers {
            let mut args = vec!["profile", "--format", "json"];
            args.extend(layer.iter().flat_map(|l| ["--layer", *l]));
            let path = data(rel).display().to_string();
            args.push(&path);
            let r = common::run_with_env(&[], &args);
            if r.code != 0 {
                refused.push(rel.clone());
                continue;
            }
            let file = r.json();
            let table = format!("public.t{compared}");
            // Names and numeric types as the file has them, each geometry's own type, the
            // file's dimensions (GEOMETRY alone is 2-D), and GeoJSON's one integer type.
            let mut extra = vec![
                "-nlt",
                "GEOMETRY",
                "-lco",
                "LAUNDER=NO",
                "-lco",
                "PRECISION=NO",
            ];
            // A shapefile of the test data without its index (.shx): GDAL rebuilds it, as the
            // shapefile reader reads without one.
            if rel.ends_with(".shp") && !data(rel).with_extension("shx").exists() {
                extra.extend(["--config", "SHAPE_RESTORE_SHX", "YES"]);
            }
            let dims = file["dimensions"].as_array().cloned().unwrap_or_default();
            if let [d] = dims.as_slice() {
                extra.extend(["-dim", d.as_str().unwrap()]);
            }
            if rel.ends_with(".geojson") {
                extra.extend([
                    "-mapFieldType",
                    "Integer(Boolean)=Integer(Boolean),Integer=Integer64",
                ]);
            }
            extra.extend(layer);
            if let Err(e) = pg.try_load("postgres", &data(rel), &table, &extra) {
                not_loaded.push((rel.clone(), e));
                continue;
            }
            let url = pg.socket_url("postgres", &table);
            let table_profile = profile(&[], &url);
            assert_eq!(table_profile["format"], "PostGIS");
            assert_eq!(table_profile["files"], serde_json::json!([url]));
            compared += 1;
            let (a, b) = (comparable(file), comparable(table_profile));
            for (key, va) in a.as_object().unwrap() {
                let vb = &b[key];
                if va != vb {
                    differences.push((rel.clone(), key.clone(), va.to_string(), vb.to_string()));
                }
            }
            assert_eq!(
                a.as_object().unwrap().len(),
                b.as_object().unwrap().len(),
                "{rel}"
            );
        }
    }
    assert_eq!(refused, REFUSED_FILES, "files the readers refuse");
    let gdal_refused: Vec<&str> = not_loaded.iter().map(|(f, _)| f.as_str()).collect();
    let expected: Vec<&str> = NOT_LOADED.iter().map(|(f, _)| *f).collect();
    assert_eq!(
        gdal_refused, expected,
        "files GDAL cannot load: {not_loaded:?}"
    );
    let fields: Vec<(&str, &str)> = differences
        .iter()
        .map(|(f, k, _, _)| (f.as_str(), k.as_str()))
        .collect();
    let known: Vec<(&str, &str)> = KNOWN_DIFFERENCES.iter().map(|(f, k, _)| (*f, *k)).collect();
    assert_eq!(
        fields, known,
        "file profile vs table profile: {differences:#?}"
    );
    // Each known difference is exactly the one named.
    for (file, key, a, b) in &differences {
        match (file.as_str(), key.as_str()) {
            ("geojson/feature.geojson", "crs") => {
                assert_eq!((a.as_str(), b.as_str()), ("\"EPSG:4326\"", "\"EPSG:4979\""))
            }
            _ => {
                let (mut a, b): (Value, Value) = (
                    serde_json::from_str(a).unwrap(),
                    serde_json::from_str(b).unwrap(),
                );
                assert!(a.as_object_mut().unwrap().remove("OGC_FID").is_some());
                assert_eq!(a, b, "{file}: the attributes but OGC_FID");
            }
        }
    }
    assert!(compared > 60, "{compared}");
}
