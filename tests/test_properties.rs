//! Properties of containment and of the change derivation, over generated values.

use std::collections::{BTreeMap, BTreeSet};

use contracts::model::{derive_changes, ClauseValue, Envelope, UpperBounds};
use proptest::prelude::*;

/// Envelopes on a 10-degree grid, so edges coincide often; a quarter of them cross the
/// antimeridian.
fn envelope() -> impl Strategy<Value = Envelope> {
    (-18i32..=18, -18i32..=18, -9i32..=9, -9i32..=9).prop_map(|(a, b, c, d)| {
        let (miny, maxy) = (c.min(d) as f64 * 10.0, c.max(d) as f64 * 10.0);
        Envelope {
            minx: a as f64 * 10.0,
            maxx: b as f64 * 10.0,
            miny,
            maxy,
        }
    })
}

/// Every point of `e` on a 5-degree grid: finer than the envelopes' own grid, so a box that
/// is not contained always has a sampled point outside.
fn sample_points(e: &Envelope) -> Vec<(f64, f64)> {
    let xs: Vec<f64> = (-36..=36)
        .map(|i| i as f64 * 5.0)
        .filter(|x| {
            if e.crosses_antimeridian() {
                *x >= e.minx || *x <= e.maxx
            } else {
                e.minx <= *x && *x <= e.maxx
            }
        })
        .collect();
    let ys: Vec<f64> = (-18..=18)
        .map(|i| i as f64 * 5.0)
        .filter(|y| e.miny <= *y && *y <= e.maxy)
        .collect();
    xs.iter()
        .flat_map(|x| ys.iter().map(move |y| (*x, *y)))
        .collect()
}

fn names() -> impl Strategy<Value = BTreeSet<String>> {
    prop::collection::btree_set(prop::sample::select(vec!["a", "b", "c", "d"]), 0..4)
        .prop_map(|s| s.into_iter().map(String::from).collect())
}

fn type_map() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(
        prop::sample::select(vec!["a", "b", "c"]).prop_map(String::from),
        prop::sample::select(vec!["int64", "string"]).prop_map(String::from),
        0..3,
    )
}

fn bounds() -> impl Strategy<Value = UpperBounds> {
    (
        prop::option::of(0u8..4),
        prop::collection::btree_map(
            prop::sample::select(vec!["a", "b", "c"]).prop_map(String::from),
            0u8..4,
            0..3,
        ),
    )
        .prop_map(|(all, keys)| UpperBounds {
            all: all.map(|n| n as f64 / 4.0),
            keys: keys.into_iter().map(|(k, v)| (k, v as f64 / 4.0)).collect(),
        })
}

/// Values of every shape. Small domains, so containment holds often enough to matter.
fn value() -> impl Strategy<Value = ClauseValue> {
    prop_oneof![
        envelope().prop_map(ClauseValue::Bbox),
        names().prop_map(ClauseValue::Set),
        type_map().prop_map(ClauseValue::Map),
        type_map().prop_map(ClauseValue::Meanings),
        (0u8..5).prop_map(|n| ClauseValue::UpperBound(n as f64)),
        (0u8..5).prop_map(|n| ClauseValue::LowerBound(n as f64)),
        bounds().prop_map(ClauseValue::UpperBounds),
        prop::sample::select(vec!["x", "y"])
            .prop_map(|s| ClauseValue::Value(toml::Value::String(s.into()))),
    ]
}

/// Three values of one shape.
fn triple() -> impl Strategy<Value = (ClauseValue, ClauseValue, ClauseValue)> {
    prop_oneof![
        (envelope(), envelope(), envelope()).prop_map(|(a, b, c)| (
            ClauseValue::Bbox(a),
            ClauseValue::Bbox(b),
            ClauseValue::Bbox(c)
        )),
        (names(), names(), names()).prop_map(|(a, b, c)| (
            ClauseValue::Set(a),
            ClauseValue::Set(b),
            ClauseValue::Set(c)
        )),
        (type_map(), type_map(), type_map()).prop_map(|(a, b, c)| (
            ClauseValue::Map(a),
            ClauseValue::Map(b),
            ClauseValue::Map(c)
        )),
        (0u8..5, 0u8..5, 0u8..5).prop_map(|(a, b, c)| (
            ClauseValue::UpperBound(a as f64),
            ClauseValue::UpperBound(b as f64),
            ClauseValue::UpperBound(c as f64)
        )),
        (0u8..5, 0u8..5, 0u8..5).prop_map(|(a, b, c)| (
            ClauseValue::LowerBound(a as f64),
            ClauseValue::LowerBound(b as f64),
            ClauseValue::LowerBound(c as f64)
        )),
        (bounds(), bounds(), bounds()).prop_map(|(a, b, c)| (
            ClauseValue::UpperBounds(a),
            ClauseValue::UpperBounds(b),
            ClauseValue::UpperBounds(c)
        )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn containment_is_reflexive(v in value()) {
        prop_assert!(v.contains(&v));
    }

    #[test]
    fn containment_is_transitive((a, b, c) in triple()) {
        if a.contains(&b) && b.contains(&c) {
            prop_assert!(a.contains(&c), "{a} ⊇ {b} ⊇ {c} but not {a} ⊇ {c}");
        }
    }

    /// Box containment agrees with sampling: `a` contains `b` exactly when every sampled
    /// point of `b` lies in `a`, whether either crosses the antimeridian or not.
    #[test]
    fn bbox_containment_agrees_with_points(a in envelope(), b in envelope()) {
        let by_points = sample_points(&b).iter().all(|(x, y)| a.covers_point(*x, *y));
        prop_assert_eq!(a.contains(&b), by_points, "a={:?} b={:?}", a, b);
    }

    /// Upper bounds contain each other exactly when every key's limit is at least as loose.
    #[test]
    fn upper_bounds_agree_with_per_key_limits(a in bounds(), b in bounds()) {
        let keys = ["a", "b", "c", "some_other"];
        let looser = |outer: Option<f64>, inner: Option<f64>| match (outer, inner) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(o), Some(i)) => i <= o,
        };
        let by_keys = keys.iter().all(|k| looser(a.limit(k), b.limit(k)));
        prop_assert_eq!(a.contains(&b), by_keys);
    }

    #[test]
    fn a_contract_diffed_with_itself_reports_nothing(v in value()) {
        use contracts::model::{Clause, Contract, KindTable};
        let table = KindTable::builtin();
        // Put the value under a built-in clause of the same shape.
        let name = match &v {
            ClauseValue::Bbox(_) => "envelope",
            ClauseValue::Set(_) => "permitted_geometry",
            ClauseValue::Map(_) => "optional_attributes",
            ClauseValue::Meanings(_) => "attribute_semantics",
            ClauseValue::UpperBound(_) => "max_imputed_fraction",
            ClauseValue::UpperBounds(_) => "max_null_fraction",
            ClauseValue::Value(_) => "crs",
            ClauseValue::LowerBound(_) => "max_imputed_fraction",
        };
        let mut clauses = BTreeMap::new();
        clauses.insert(name.to_string(), Clause { spec: table.get(name).unwrap().clone(), value: v });
        let c = Contract {
            dataset: "d".into(),
            version: semver::Version::new(1, 0, 0),
            supersedes: None,
            valid_from: chrono::NaiveDate::from_ymd_opt(2027, 1, 1).unwrap(),
            sunset: None,
            description: None,
            advisory: BTreeSet::new(),
            wide_antimeridian: BTreeSet::new(),
            clauses,
            unknown: BTreeMap::new(),
            deprecated: BTreeMap::new(),
            unknown_keys: BTreeMap::new(),
            odcs: None,
        };
        prop_assert!(derive_changes(&c, &c).changes.is_empty());
    }
}
