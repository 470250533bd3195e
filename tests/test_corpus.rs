//! Real files from public projects (tests/data/corpus, sources and licences in
//! tests/data/README.md), each profiled and compared with what GDAL reads from it:
//! `tests/data/corpus/expected.toml`, written by `make_expected.py` from `ogrinfo` output
//! (GDAL 3.6.2), never from this tool's.
//!
//! GDAL's words map to the profile's as the README says: a feature's WKT type word is its
//! geometry type (`MULTIPOLYGON` is `MultiPolygon`) and its `Z`/`M`/`ZM` word its dimension;
//! field types `Integer` int32 (`int64` in GeoJSON, whose numbers have no width),
//! `Integer(Int16)` int32, `Integer(Boolean)` bool, `Integer64` int64, `Real` and
//! `Real(Float32)` float64, `String` string, `Date`, `DateTime`, `Binary`. `ogrinfo` prints
//! the extent with six decimals, so envelopes agree to 1e-6.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use contracts::release::{profile_file, NoProgress, ReadNotes};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    file: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    path: String,
    feature_count: u64,
    null_geometries: u64,
    extent: Option<[f64; 4]>,
    geometries: BTreeMap<String, u64>,
    fields: BTreeMap<String, String>,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus")
}

fn geometry_type(word: &str) -> &'static str {
    match word {
        "POINT" => "Point",
        "LINESTRING" => "LineString",
        "POLYGON" => "Polygon",
        "MULTIPOINT" => "MultiPoint",
        "MULTILINESTRING" => "MultiLineString",
        "MULTIPOLYGON" => "MultiPolygon",
        "GEOMETRYCOLLECTION" => "GeometryCollection",
        "CIRCULARSTRING" => "CircularString",
        "COMPOUNDCURVE" => "CompoundCurve",
        "CURVEPOLYGON" => "CurvePolygon",
        "MULTICURVE" => "MultiCurve",
        "MULTISURFACE" => "MultiSurface",
        "POLYHEDRALSURFACE" => "PolyhedralSurface",
        "TIN" => "Tin",
        "TRIANGLE" => "Triangle",
        other => panic!("unknown WKT word {other}"),
    }
}

fn attribute_type(gdal: &str, geojson: bool) -> &'static str {
    match gdal {
        "Integer" if geojson => "int64",
        "Integer" | "Integer(Int16)" => "int32",
        "Integer(Boolean)" => "bool",
        "Integer64" => "int64",
        "Real" | "Real(Float32)" => "float64",
        "String" | "String(JSON)" => "string",
        "Date" => "date",
        "DateTime" => "datetime",
        "Binary" => "binary",
        other => panic!("unmapped GDAL field type {other}"),
    }
}

#[test]
fn every_corpus_file_profiles_as_gdal_reads_it() {
    let text = std::fs::read_to_string(dir().join("expected.toml")).unwrap();
    let expected: Expected = toml::from_str(&text).unwrap();
    // Every file of the corpus has an entry, so none is silently left out.
    let on_disk: BTreeSet<String> = crate::common::files_under(&dir())
        .into_iter()
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("fgb" | "geojson" | "shp")
            )
        })
        .map(|p| {
            p.strip_prefix(dir())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let listed: BTreeSet<String> = expected.file.iter().map(|e| e.path.clone()).collect();
    assert_eq!(
        on_disk, listed,
        "expected.toml is stale: rerun make_expected.py"
    );
    let mut formats = BTreeSet::new();
    for e in &expected.file {
        let path = dir().join(&e.path);
        let what = &e.path;
        let p = profile_file(&path, &NoProgress, &mut ReadNotes::default())
            .unwrap_or_else(|err| panic!("{what}: {err}"));
        formats.insert(p.format.clone());
        assert_eq!(p.feature_count, e.feature_count, "{what}: features");
        assert_eq!(
            p.null_geometries, e.null_geometries,
            "{what}: null geometries"
        );
        let types: BTreeSet<&str> = e
            .geometries
            .keys()
            .map(|k| geometry_type(k.split(' ').next().unwrap()))
            .collect();
        let ours: BTreeSet<&str> = p.geometry_types.iter().map(|t| t.name()).collect();
        assert_eq!(ours, types, "{what}: geometry types");
        let dims: BTreeSet<&str> = e
            .geometries
            .keys()
            .map(|k| k.split(' ').nth(1).unwrap())
            .collect();
        let ours: BTreeSet<&str> = p.dimensions.iter().map(|d| d.as_str()).collect();
        assert_eq!(ours, dims, "{what}: dimensions");
        match (e.extent, p.envelope) {
            (None, None) => {}
            (Some(want), Some(got)) => {
                let got: [f64; 4] = got.into();
                for (w, g) in want.iter().zip(got) {
                    assert!(
                        (w - g).abs() <= 1e-6,
                        "{what}: envelope {got:?}, GDAL {want:?}"
                    );
                }
            }
            (want, got) => panic!("{what}: envelope {got:?}, GDAL {want:?}"),
        }
        let geojson = p.format == "GeoJSON";
        let want: BTreeMap<&str, &str> = e
            .fields
            .iter()
            .map(|(k, v)| (k.as_str(), attribute_type(v, geojson)))
            .collect();
        let got: BTreeMap<&str, &str> = p
            .attributes
            .iter()
            .map(|(k, a)| (k.as_str(), a.ty.as_str()))
            .collect();
        assert_eq!(got, want, "{what}: attributes");
    }
    for f in ["GeoJSON", "FlatGeobuf", "Shapefile"] {
        assert!(formats.contains(f), "no {f} file in the corpus");
    }
    assert!(expected.file.len() >= 20, "{} files", expected.file.len());
}
