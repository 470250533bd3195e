//! The envelopes `test_release_profile.rs` expects of the real data in `tests/data/`, and the
//! test that keeps them what GDAL reads: `tests/data/envelopes.py` asks `ogrinfo` (Debian's
//! `gdal-bin`) for each file's extent as exact doubles, and every one must equal the
//! expectation here, to the last bit. The profile tests assert these same constants of
//! `contracts profile`, so a figure can change only where both GDAL and the test agree.

use std::path::Path;
use std::process::Command;

/// Natural Earth countries (`naturalearth/countries.*`): geopandas' `total_bounds`, with
/// Fiji's 180.00000000000006 and the 17th digit of the northern tip.
pub const COUNTRIES: [f64; 4] = [-180.0, -90.0, 180.00000000000006, 83.64513000000001];
/// The countries' GeoJSON: its writer rounded those two values.
pub const COUNTRIES_GEOJSON: [f64; 4] = [-180.0, -90.0, 180.0, 83.64513];
/// Natural Earth populated places (`naturalearth/cities.*`), the same in every format.
pub const CITIES: [f64; 4] = [
    -175.2205645,
    -41.2920679923151,
    179.2166471,
    64.14345946317033,
];
/// North Carolina counties (`nc/nc.gpkg`), NAD27 degrees.
pub const NC: [f64; 4] = [
    -84.3238525390625,
    33.88199234008789,
    -75.45697784423828,
    36.58964920043945,
];
/// New York City boroughs (`nybb/nybb.shp`), US survey feet.
pub const NYBB: [f64; 4] = [
    913175.1090087891,
    120121.8812543372,
    1067382.5084228516,
    272844.2936401367,
];
/// One line and one null geometry (`edge/null_geom.geojson`, `made/null_geom.*`).
pub const NULL_GEOM: [f64; 4] = [
    -122.4051293283311,
    37.786780113640894,
    -73.85983235784927,
    40.487594916296196,
];

/// The envelope expected of `rel` (a path under `tests/data/`).
pub fn expected(rel: &str) -> [f64; 4] {
    let name = Path::new(rel).file_stem().unwrap().to_str().unwrap();
    match (name, rel.ends_with(".geojson")) {
        ("countries", true) => COUNTRIES_GEOJSON,
        ("countries", false) => COUNTRIES,
        ("cities" | "cities_rowgroups", _) => CITIES,
        ("nc", _) => NC,
        ("nybb", _) => NYBB,
        ("null_geom", _) => NULL_GEOM,
        _ => panic!("no envelope is expected of {rel}"),
    }
}

/// Every file whose envelope a profile test asserts and GDAL 3.6 reads (it has no Parquet
/// driver; the Parquet files are asserted equal to these).
const READ_BY_GDAL: [&str; 14] = [
    "naturalearth/countries.shp",
    "naturalearth/countries.gpkg",
    "naturalearth/countries.geojson",
    "naturalearth/countries.fgb",
    "naturalearth/cities.shp",
    "naturalearth/cities.gpkg",
    "naturalearth/cities.geojson",
    "naturalearth/cities.fgb",
    "nc/nc.gpkg",
    "nybb/nybb.shp",
    "edge/null_geom.geojson",
    "made/null_geom.gpkg",
    "made/null_geom.shp",
    "made/null_geom.fgb",
];

#[test]
fn the_expected_envelopes_are_what_gdal_reads_from_each_file() {
    let script = crate::common::data("envelopes.py");
    let out = Command::new("python3")
        .arg(&script)
        .output()
        .unwrap_or_else(|e| panic!("python3 {} does not start: {e}", script.display()));
    assert!(
        out.status.success(),
        "{} failed (it needs python3 and gdal-bin's ogrinfo, which test.sh installs):\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut seen = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(fields.len(), 5, "not PATH XMIN YMIN XMAX YMAX: {line:?}");
        let gdal: Vec<f64> = fields[1..]
            .iter()
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|e| panic!("{v:?} in {line:?}: {e}"))
            })
            .collect();
        // Compared bit for bit: the text is the shortest that reads back as GDAL's double.
        let want = expected(fields[0]);
        assert_eq!(
            gdal.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "{}: GDAL reads {gdal:?}, the tests expect {want:?}",
            fields[0]
        );
        seen.push(fields[0].to_string());
    }
    assert_eq!(seen, READ_BY_GDAL, "the files the script measured");
}
