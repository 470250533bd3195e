//! Typed clause values and containment, one rule per shape.
//!
//! "a contains b" always means: every release that satisfies `b` also satisfies `a`. For a
//! widening clause the new value must contain the old; for a narrowing clause the old must
//! contain the new. Writing containment once, in that single sense, is what lets one function
//! serve both kinds with opposite safe directions.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use super::kind::{Domain, Shape};

/// OGC simple-feature geometry type names (ISO 19125 and its SQL/MM curve types).
pub const GEOMETRY_TYPES: &[&str] = &[
    "Point",
    "LineString",
    "Polygon",
    "MultiPoint",
    "MultiLineString",
    "MultiPolygon",
    "GeometryCollection",
    "CircularString",
    "CompoundCurve",
    "CurvePolygon",
    "MultiCurve",
    "MultiSurface",
    "PolyhedralSurface",
    "Tin",
    "Triangle",
];

/// Attribute type names (SPEC §3).
pub const ATTRIBUTE_TYPES: &[&str] = &[
    "bool", "int32", "int64", "float64", "string", "date", "datetime", "binary",
];

/// An envelope `[minx, miny, maxx, maxy]`. `minx > maxx` means the box crosses the
/// antimeridian (RFC 7946 §5.2): it covers `minx..=180` and `-180..=maxx`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(into = "[f64; 4]")]
pub struct Envelope {
    pub minx: f64,
    pub miny: f64,
    pub maxx: f64,
    pub maxy: f64,
}

impl From<Envelope> for [f64; 4] {
    fn from(e: Envelope) -> Self {
        [e.minx, e.miny, e.maxx, e.maxy]
    }
}

impl Envelope {
    pub fn crosses_antimeridian(&self) -> bool {
        self.minx > self.maxx
    }

    /// The width in x: for a crossing box, `minx..=180` plus `-180..=maxx`.
    pub fn width(&self) -> f64 {
        if self.crosses_antimeridian() {
            360.0 - (self.minx - self.maxx)
        } else {
            self.maxx - self.minx
        }
    }

    /// A crossing box wider than half the globe: most often minx and maxx swapped by
    /// mistake (`[170, .., -170, ..]` meant as 20° wide reads as 340°), so `propose` and
    /// `check` refuse one unless the contract lists the clause in `wide_antimeridian`.
    pub fn is_wide_crossing(&self) -> bool {
        self.crosses_antimeridian() && self.width() > 180.0
    }

    /// Whether the point lies inside (edges included).
    pub fn covers_point(&self, x: f64, y: f64) -> bool {
        let in_y = self.miny <= y && y <= self.maxy;
        let in_x = if self.crosses_antimeridian() {
            x >= self.minx || x <= self.maxx
        } else {
            self.minx <= x && x <= self.maxx
        };
        in_x && in_y
    }

    /// Whether every point of `other` lies inside `self`.
    pub fn contains(&self, other: &Envelope) -> bool {
        if !(self.miny <= other.miny && other.maxy <= self.maxy) {
            return false;
        }
        match (self.crosses_antimeridian(), other.crosses_antimeridian()) {
            (false, false) => self.minx <= other.minx && other.maxx <= self.maxx,
            // `self` is two pieces, `minx..` and `..maxx`; a plain interval must fit in one.
            (true, false) => other.minx >= self.minx || other.maxx <= self.maxx,
            (true, true) => other.minx >= self.minx && other.maxx <= self.maxx,
            // A crossing box reaches both ends of the axis, so only a box spanning the whole
            // axis holds it.
            (false, true) => self.minx <= -180.0 && self.maxx >= 180.0,
        }
    }
}

/// Per-key upper limits, with an optional limit for every key not named.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpperBounds {
    /// The limit for any key without its own entry (`max_null_fraction = 0.1`).
    pub all: Option<f64>,
    pub keys: BTreeMap<String, f64>,
}

impl UpperBounds {
    /// The limit that applies to `key`; `None` is no limit at all.
    pub fn limit(&self, key: &str) -> Option<f64> {
        self.keys.get(key).copied().or(self.all)
    }

    /// Whether every release within `other`'s limits is within ours.
    pub fn contains(&self, other: &UpperBounds) -> bool {
        let at_most = |inner: Option<f64>, outer: Option<f64>| match (inner, outer) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(i), Some(o)) => i <= o,
        };
        at_most(other.all, self.all)
            && self
                .keys
                .keys()
                .chain(other.keys.keys())
                .all(|k| at_most(other.limit(k), self.limit(k)))
    }
}

/// A clause's value, typed by its shape.
#[derive(Debug, Clone, PartialEq)]
pub enum ClauseValue {
    Bbox(Envelope),
    Set(BTreeSet<String>),
    Map(BTreeMap<String, String>),
    UpperBound(f64),
    LowerBound(f64),
    UpperBounds(UpperBounds),
    Value(toml::Value),
    Meanings(BTreeMap<String, String>),
}

impl ClauseValue {
    /// Whether every release that satisfies `other` satisfies `self`. Values of different
    /// shapes never contain each other.
    pub fn contains(&self, other: &ClauseValue) -> bool {
        use ClauseValue as V;
        match (self, other) {
            (V::Bbox(a), V::Bbox(b)) => a.contains(b),
            (V::Set(a), V::Set(b)) => a.is_superset(b),
            (V::Map(a), V::Map(b)) | (V::Meanings(a), V::Meanings(b)) => {
                b.iter().all(|(k, v)| a.get(k) == Some(v))
            }
            (V::UpperBound(a), V::UpperBound(b)) => b <= a,
            (V::LowerBound(a), V::LowerBound(b)) => b >= a,
            (V::UpperBounds(a), V::UpperBounds(b)) => a.contains(b),
            (V::Value(a), V::Value(b)) => a == b,
            _ => false,
        }
    }

    /// The value as JSON, for reports and change records.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            ClauseValue::Bbox(e) => json!([e.minx, e.miny, e.maxx, e.maxy]),
            ClauseValue::Set(s) => json!(s),
            ClauseValue::Map(m) | ClauseValue::Meanings(m) => json!(m),
            ClauseValue::UpperBound(n) | ClauseValue::LowerBound(n) => json!(n),
            ClauseValue::UpperBounds(b) => match (b.all, b.keys.is_empty()) {
                (Some(all), true) => json!(all),
                _ => {
                    let mut m = serde_json::Map::new();
                    if let Some(all) = b.all {
                        m.insert("*".into(), json!(all));
                    }
                    for (k, v) in &b.keys {
                        m.insert(k.clone(), json!(v));
                    }
                    serde_json::Value::Object(m)
                }
            },
            ClauseValue::Value(v) => serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
        }
    }
}

impl fmt::Display for ClauseValue {
    /// Compact, TOML-like rendering for tables and messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClauseValue::Value(toml::Value::String(s)) => write!(f, "{s:?}"),
            ClauseValue::Value(v) => write!(f, "{v}"),
            _ => write!(f, "{}", self.to_json()),
        }
    }
}

/// Why a clause value does not fit its shape or domain.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ValueError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, ValueError> {
    Err(ValueError(msg.into()))
}

fn number(v: &toml::Value) -> Result<f64, ValueError> {
    match v {
        toml::Value::Float(f) if f.is_finite() => Ok(*f),
        toml::Value::Float(f) => err(format!("{f} is not a finite number")),
        toml::Value::Integer(i) => Ok(*i as f64),
        other => err(format!("expected a number, found {}", other.type_str())),
    }
}

fn check_number(n: f64, domain: Domain, key: Option<&str>) -> Result<f64, ValueError> {
    let fraction = match domain {
        Domain::Fraction => true,
        Domain::Metrics => key.is_some_and(|k| k.ends_with("_fraction")),
        _ => false,
    };
    let what = key.map(|k| format!("`{k}` ")).unwrap_or_default();
    if fraction && !(0.0..=1.0).contains(&n) {
        return err(format!("{what}{n} is not a fraction in 0..=1"));
    }
    if matches!(domain, Domain::Metrics | Domain::NonNegative) && n < 0.0 {
        return err(format!("{what}{n} is negative"));
    }
    Ok(n)
}

fn string(v: &toml::Value) -> Result<&str, ValueError> {
    v.as_str()
        .ok_or_else(|| ValueError(format!("expected a string, found {}", v.type_str())))
}

fn member(name: &str, domain: Domain) -> Result<(), ValueError> {
    match domain {
        Domain::GeometryTypes if !GEOMETRY_TYPES.contains(&name) => err(format!(
            "unknown geometry type `{name}` (expected one of: {})",
            GEOMETRY_TYPES.join(", ")
        )),
        Domain::AttributeTypes if !ATTRIBUTE_TYPES.contains(&name) => err(format!(
            "unknown attribute type `{name}` (expected one of: {})",
            ATTRIBUTE_TYPES.join(", ")
        )),
        _ => Ok(()),
    }
}

/// Read and validate a clause value for `shape`. `geographic` says whether the contract's
/// CRS is geographic, the only case where an envelope may cross the antimeridian.
pub fn parse_value(
    v: &toml::Value,
    shape: Shape,
    domain: Domain,
    geographic: bool,
) -> Result<ClauseValue, ValueError> {
    match shape {
        Shape::Bbox => {
            let Some(items) = v.as_array() else {
                return err(format!(
                    "expected [minx, miny, maxx, maxy], found {}",
                    v.type_str()
                ));
            };
            if items.len() != 4 {
                return err(format!(
                    "expected 4 numbers [minx, miny, maxx, maxy], found {}",
                    items.len()
                ));
            }
            let n = items.iter().map(number).collect::<Result<Vec<_>, _>>()?;
            let e = Envelope {
                minx: n[0],
                miny: n[1],
                maxx: n[2],
                maxy: n[3],
            };
            if e.miny > e.maxy {
                return err(format!("miny {} is greater than maxy {}", e.miny, e.maxy));
            }
            if e.minx > e.maxx && !geographic {
                return err(format!(
                    "minx {} is greater than maxx {} (only an envelope in a geographic CRS may cross the antimeridian)",
                    e.minx, e.maxx
                ));
            }
            if geographic && (e.minx < -180.0 || e.maxx > 180.0 || e.miny < -90.0 || e.maxy > 90.0)
            {
                return err("a geographic envelope must lie within [-180, -90, 180, 90]");
            }
            Ok(ClauseValue::Bbox(e))
        }
        Shape::Set => {
            let Some(items) = v.as_array() else {
                return err(format!("expected a list, found {}", v.type_str()));
            };
            let mut set = BTreeSet::new();
            for item in items {
                let s = string(item)?;
                member(s, domain)?;
                if !set.insert(s.to_string()) {
                    return err(format!("`{s}` is listed twice"));
                }
            }
            Ok(ClauseValue::Set(set))
        }
        Shape::Map | Shape::Meanings => {
            let Some(table) = v.as_table() else {
                return err(format!("expected a table, found {}", v.type_str()));
            };
            let mut map = BTreeMap::new();
            for (k, item) in table {
                let s = string(item).map_err(|e| ValueError(format!("`{k}`: {e}")))?;
                member(s, domain).map_err(|e| ValueError(format!("`{k}`: {e}")))?;
                map.insert(k.clone(), s.to_string());
            }
            Ok(if shape == Shape::Map {
                ClauseValue::Map(map)
            } else {
                ClauseValue::Meanings(map)
            })
        }
        Shape::UpperBound => Ok(ClauseValue::UpperBound(check_number(
            number(v)?,
            domain,
            None,
        )?)),
        Shape::LowerBound => Ok(ClauseValue::LowerBound(check_number(
            number(v)?,
            domain,
            None,
        )?)),
        Shape::UpperBounds => match v {
            toml::Value::Table(table) => {
                let mut keys = BTreeMap::new();
                for (k, item) in table {
                    let n = number(item).map_err(|e| ValueError(format!("`{k}`: {e}")))?;
                    keys.insert(k.clone(), check_number(n, domain, Some(k))?);
                }
                Ok(ClauseValue::UpperBounds(UpperBounds { all: None, keys }))
            }
            other => Ok(ClauseValue::UpperBounds(UpperBounds {
                all: Some(check_number(number(other)?, domain, None)?),
                keys: BTreeMap::new(),
            })),
        },
        Shape::Value => Ok(ClauseValue::Value(v.clone())),
    }
}

/// Whether a CRS identifier names a geographic (longitude/latitude) system. Only those may
/// carry an envelope across the antimeridian.
pub fn is_geographic_crs(crs: &str) -> bool {
    const GEOGRAPHIC: &[&str] = &[
        "EPSG:4326",
        "EPSG:4258",
        "EPSG:4269",
        "EPSG:4267",
        "EPSG:4283",
        "EPSG:4617",
        "EPSG:4674",
        "EPSG:4979",
        "EPSG:4230",
        "EPSG:4277",
        "EPSG:7844",
        "OGC:CRS84",
        "OGC:CRS83",
        "OGC:CRS27",
    ];
    GEOGRAPHIC.iter().any(|g| g.eq_ignore_ascii_case(crs))
}
