//! The merge property: `merge(profile(A), profile(B)) == profile(A ∪ B)`, through the real
//! GeoJSON reader (the format whose schema is inferred per feature, so missing and all-null
//! columns, type widening, null and invalid geometries are all exercised).

use std::path::Path;

use contracts::release::{profile_file, NoProgress, Profile, ReadNotes};
use proptest::prelude::*;
use serde_json::{json, Value};

/// One generated feature: an optional geometry and a few optional properties.
#[derive(Debug, Clone)]
struct Feature {
    geometry: Value,
    properties: serde_json::Map<String, Value>,
}

fn coord() -> impl Strategy<Value = f64> {
    (-1000i32..1000, 0u8..4).prop_map(|(i, d)| f64::from(i) / 8.0 + f64::from(d) * 0.001)
}

fn geometry() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        (coord(), coord()).prop_map(|(x, y)| json!({"type": "Point", "coordinates": [x, y]})),
        (coord(), coord(), 1u8..3).prop_map(|(x, y, n)| {
            let pts: Vec<Value> = (0..n).map(|i| json!([x + f64::from(i), y])).collect();
            json!({"type": "LineString", "coordinates": pts})
        }),
        (coord(), coord(), any::<bool>()).prop_map(|(x, y, closed)| {
            let end = if closed {
                json!([x, y])
            } else {
                json!([x + 9.0, y])
            };
            let ring = json!([[x, y], [x + 1.0, y], [x + 1.0, y + 1.0], end]);
            json!({"type": "MultiPolygon", "coordinates": [[ring.clone()], [ring]]})
        }),
    ]
}

/// Each column has its own kind of values, so the column types of any two parts have a
/// common type (a conflict would rightly fail the merge).
fn properties() -> impl Strategy<Value = serde_json::Map<String, Value>> {
    let maybe = |s: BoxedStrategy<Value>| {
        prop_oneof![Just(None), Just(Some(Value::Null)), s.prop_map(Some)]
    };
    (
        maybe(any::<i32>().prop_map(|i| json!(i)).boxed()),
        maybe(
            prop_oneof![
                any::<i16>().prop_map(|i| json!(i)),
                (0u8..100).prop_map(|i| json!(f64::from(i) + 0.5))
            ]
            .boxed(),
        ),
        maybe("[a-z]{0,3}".prop_map(|s| json!(s)).boxed()),
        maybe(any::<bool>().prop_map(|b| json!(b)).boxed()),
    )
        .prop_map(|(a, b, c, d)| {
            let mut m = serde_json::Map::new();
            for (k, v) in [("a", a), ("b", b), ("c", c), ("d", d)] {
                if let Some(v) = v {
                    m.insert(k.to_string(), v);
                }
            }
            m
        })
}

fn feature() -> impl Strategy<Value = Feature> {
    (geometry(), properties()).prop_map(|(geometry, properties)| Feature {
        geometry,
        properties,
    })
}

fn write(path: &Path, features: &[Feature]) {
    let fc = json!({
        "type": "FeatureCollection",
        "features": features.iter().map(|f| json!({
            "type": "Feature", "geometry": f.geometry, "properties": f.properties
        })).collect::<Vec<_>>()
    });
    std::fs::write(path, serde_json::to_vec(&fc).unwrap()).unwrap();
}

fn profile(path: &Path) -> Profile {
    profile_file(path, &NoProgress, &mut ReadNotes::default()).expect("a valid file profiles")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn merge_of_profiles_is_profile_of_union(
        a in prop::collection::vec(feature(), 0..12),
        b in prop::collection::vec(feature(), 0..12),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (pa, pb, pab) = (dir.path().join("a.geojson"), dir.path().join("b.geojson"), dir.path().join("ab.geojson"));
        write(&pa, &a);
        write(&pb, &b);
        let all: Vec<Feature> = a.iter().chain(&b).cloned().collect();
        write(&pab, &all);
        let mut merged = profile(&pa).merge(&profile(&pb)).expect("compatible parts merge");
        let mut whole = profile(&pab);
        // The file lists differ by construction; everything measured must not.
        merged.files.clear();
        whole.files.clear();
        prop_assert_eq!(merged, whole);
    }
}

#[test]
fn a_saved_profile_round_trips_through_json() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.geojson");
    write(
        &p,
        &[Feature {
            geometry: json!({"type": "Point", "coordinates": [0.1, 0.2]}),
            properties: serde_json::Map::new(),
        }],
    );
    let prof = profile(&p);
    let text = serde_json::to_string(&prof).unwrap();
    let back: Profile = serde_json::from_str(&text).unwrap();
    assert_eq!(back.checked().unwrap(), prof);
}

/// `OGC:CRS84` (as an older profile or a GeoParquet file states it) and `EPSG:4326` are one
/// system: the parts merge, and the merged profile prints the EPSG code.
#[test]
fn crs84_and_4326_parts_merge_and_print_as_4326() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.geojson");
    write(&p, &[]);
    let a = profile(&p);
    let mut b = a.clone();
    b.crs = Some("OGC:CRS84".into());
    let m = b.merge(&a).expect("one system");
    assert_eq!(m.crs.as_deref(), Some("EPSG:4326"));
    let mut c = a.clone();
    c.crs = Some("EPSG:4258".into());
    assert!(a.merge(&c).is_err());
}
