//! GeoJSON, streamed: the `features` array is walked one feature at a time with a serde
//! visitor, so memory holds one feature, never the file (geozero's and serde_json's
//! whole-document readers would hold it all).
//!
//! CRS: RFC 7946 fixes GeoJSON to WGS 84 longitude/latitude. We report `EPSG:4326`, the
//! identifier the other formats use for the same data, so one dataset gives one profile in
//! every format (`validate` treats `EPSG:4326` and `OGC:CRS84` as the same system anyway). A
//! legacy (2008) `crs` member naming a code is honoured, as GDAL does.
//!
//! Attribute types are inferred from the values, as GDAL does: booleans are `bool`, integral
//! numbers `int64` (JSON numbers have no width, and every typed format here stores the same
//! columns as 64-bit), other numbers `float64`, ISO dates and date-times `date`/`datetime`,
//! other strings, arrays and objects `string`. Mixed columns take the common type of
//! [`AttrType::join`], or `string` if there is none. A property absent from a feature is
//! null in it; a column that is null everywhere is `string`.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::geom::GeomScan;
use super::profile::{AttrAcc, AttrType};
use super::{corrupt, io_err, Accumulator, Format, Progress, ReleaseError};
use crate::model::spatial::GeometryType;

const F: Format = Format::GeoJson;

struct Column {
    name: String,
    ty: Option<AttrType>,
    present: u64,
}

struct State {
    acc: Accumulator,
    columns: Vec<Column>,
    index: HashMap<String, usize>,
    crs: Option<String>,
    kind: Option<String>,
}

fn is_date(s: &[u8]) -> bool {
    s.len() == 10
        && s.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        })
}

fn is_datetime(s: &[u8]) -> bool {
    s.len() >= 19
        && is_date(&s[..10])
        && matches!(s[10], b'T' | b' ')
        && s[11..19].iter().enumerate().all(|(i, b)| match i {
            2 | 5 => *b == b':',
            _ => b.is_ascii_digit(),
        })
        && s[19..]
            .iter()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'Z' | b'+' | b'-' | b':'))
}

fn value_type(v: &Value) -> Option<AttrType> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(_) => AttrType::Bool,
        Value::Number(n) if n.is_i64() => AttrType::Int64,
        Value::Number(_) => AttrType::Float64,
        Value::String(s) if is_date(s.as_bytes()) => AttrType::Date,
        Value::String(s) if is_datetime(s.as_bytes()) => AttrType::Datetime,
        _ => AttrType::String,
    })
}

impl State {
    fn property(&mut self, key: String, v: &Value) {
        let Some(t) = value_type(v) else { return };
        let i = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                self.columns.push(Column {
                    name: key.clone(),
                    ty: None,
                    present: 0,
                });
                self.index.insert(key, self.columns.len() - 1);
                self.columns.len() - 1
            }
        };
        let c = &mut self.columns[i];
        c.present += 1;
        c.ty = Some(match c.ty {
            None => t,
            Some(old) => AttrType::join(old, t).unwrap_or(AttrType::String),
        });
    }
}

/// A GeoJSON geometry object, with its coordinates kept as JSON until walked.
#[derive(Deserialize)]
struct RawGeometry {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    coordinates: Value,
    #[serde(default)]
    geometries: Vec<RawGeometry>,
}

/// A position's x and y; a third number (a height) marks the geometry `XYZ`. A fourth is
/// ignored, as GDAL does: RFC 7946 gives positions no measure.
fn position(v: &Value, scan: &mut GeomScan) -> Result<(f64, f64), String> {
    let a = v.as_array().ok_or("a position is not an array")?;
    if a.len() >= 3 {
        scan.z = true;
    }
    match (
        a.first().and_then(Value::as_f64),
        a.get(1).and_then(Value::as_f64),
    ) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err("a position needs two numbers".to_string()),
    }
}

fn positions(v: &Value, scan: &mut GeomScan) -> Result<Vec<(f64, f64)>, String> {
    let a = v.as_array().ok_or("coordinates are not an array")?;
    let mut out = Vec::with_capacity(a.len());
    for p in a {
        let (x, y) = position(p, scan)?;
        scan.coord(x, y);
        out.push((x, y));
    }
    Ok(out)
}

fn list(v: &Value) -> Result<&Vec<Value>, String> {
    v.as_array()
        .ok_or_else(|| "coordinates are not an array".to_string())
}

fn polygon(v: &Value, scan: &mut GeomScan) -> Result<(), String> {
    for ring in list(v)? {
        let pts = positions(ring, scan)?;
        match (pts.first(), pts.last()) {
            (Some(&a), Some(&b)) => scan.ring(pts.len(), a, b),
            _ => scan.ring(0, (0.0, 0.0), (0.0, 0.0)),
        }
    }
    Ok(())
}

fn walk(g: &RawGeometry, scan: &mut GeomScan, depth: usize) -> Result<GeometryType, String> {
    if depth > 32 {
        return Err("geometry nested too deep".to_string());
    }
    let c = &g.coordinates;
    let t = match g.kind.as_str() {
        "Point" => {
            if list(c)?.is_empty() {
                // An empty position is the empty point.
            } else {
                let (x, y) = position(c, scan)?;
                scan.point(x, y);
            }
            GeometryType::Point
        }
        "LineString" => {
            let n = positions(c, scan)?.len();
            scan.line(n);
            GeometryType::LineString
        }
        "Polygon" => {
            polygon(c, scan)?;
            GeometryType::Polygon
        }
        "MultiPoint" => {
            positions(c, scan)?;
            GeometryType::MultiPoint
        }
        "MultiLineString" => {
            let parts = list(c)?;
            for p in parts {
                let n = positions(p, scan)?.len();
                scan.line(n);
            }
            GeometryType::MultiLineString
        }
        "MultiPolygon" => {
            let parts = list(c)?;
            for p in parts {
                polygon(p, scan)?;
            }
            GeometryType::MultiPolygon
        }
        "GeometryCollection" => {
            for m in &g.geometries {
                walk(m, scan, depth + 1)?;
            }
            GeometryType::GeometryCollection
        }
        other => return Err(format!("unknown geometry type `{other}`")),
    };
    Ok(t)
}

struct FeatureSeed<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for FeatureSeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FeatureSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a GeoJSON Feature object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.0;
        let mut geometry_seen = false;
        st.acc.features += 1;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "geometry" => {
                    geometry_seen = true;
                    match map.next_value::<Option<RawGeometry>>()? {
                        None => st.acc.null_geometries += 1,
                        Some(g) => {
                            let mut scan = GeomScan::default();
                            let t = walk(&g, &mut scan, 0).map_err(de::Error::custom)?;
                            scan.commit(&mut st.acc, t);
                        }
                    }
                }
                "properties" => {
                    if let Some(props) =
                        map.next_value::<Option<serde_json::Map<String, Value>>>()?
                    {
                        for (k, v) in props {
                            st.property(k, &v);
                        }
                    }
                }
                "type" => {
                    let t = map.next_value::<String>()?;
                    if t != "Feature" {
                        return Err(de::Error::custom(format!(
                            "a member of `features` has type `{t}`, not `Feature`"
                        )));
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !geometry_seen {
            // RFC 7946 requires the member; a feature without one has no geometry.
            st.acc.null_geometries += 1;
        }
        Ok(())
    }
}

struct Features<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for Features<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Features<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of Features")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(FeatureSeed(self.0))?.is_some() {}
        Ok(())
    }
}

struct Collection<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for Collection<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

/// A legacy `crs` member's name, e.g. `urn:ogc:def:crs:EPSG::2263`.
fn legacy_crs(v: &Value) -> Option<String> {
    let name = v.pointer("/properties/name")?.as_str()?;
    let upper = name.to_ascii_uppercase();
    if upper.ends_with("CRS84") {
        return Some("EPSG:4326".to_string());
    }
    let parts: Vec<&str> = upper.split(':').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [.., auth, code] if code.chars().all(|c| c.is_ascii_digit()) && !auth.is_empty() => {
            let auth = if auth.chars().all(|c| c.is_ascii_digit() || c == '.') {
                // `urn:ogc:def:crs:EPSG:6.6:4326` carries a version between the two.
                parts.iter().rev().nth(2)?
            } else {
                auth
            };
            Some(format!("{auth}:{code}"))
        }
        _ => None,
    }
}

impl<'de> Visitor<'de> for Collection<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a GeoJSON FeatureCollection object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.0;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "type" => st.kind = Some(map.next_value::<String>()?),
                "features" => map.next_value_seed(Features(st))?,
                "crs" => {
                    let v = map.next_value::<Value>()?;
                    st.crs = legacy_crs(&v);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// Counts bytes as they are read, for the progress bar.
struct Counting<'a, R> {
    inner: R,
    progress: &'a dyn Progress,
    pending: u64,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pending += n as u64;
        if self.pending >= 1 << 20 || n == 0 {
            self.progress.advance(self.pending);
            self.pending = 0;
        }
        Ok(n)
    }
}

pub fn read(
    path: &Path,
    progress: &dyn Progress,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    let file = File::open(path).map_err(io_err(path))?;
    let len = file.metadata().map_err(io_err(path))?.len();
    progress.start(path, len);
    let reader = Counting {
        inner: BufReader::with_capacity(1 << 20, file),
        progress,
        pending: 0,
    };
    let mut st = State {
        acc: Accumulator::default(),
        columns: Vec::new(),
        index: HashMap::new(),
        crs: Some("EPSG:4326".to_string()),
        kind: None,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    Collection(&mut st)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| corrupt(path, F, e.to_string()))?;
    if st.kind.as_deref() != Some("FeatureCollection") {
        return Err(corrupt(
            path,
            F,
            format!(
                "top-level type is {}, expected a FeatureCollection",
                st.kind.map_or("missing".to_string(), |k| format!("`{k}`"))
            ),
        ));
    }
    let features = st.acc.features;
    st.acc.attributes = st
        .columns
        .into_iter()
        .map(|c| AttrAcc {
            name: c.name,
            ty: c.ty.unwrap_or(AttrType::String),
            nulls: features - c.present,
        })
        .collect();
    Ok((st.crs, st.acc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_crs_names() {
        let v = |s: &str| serde_json::json!({"type": "name", "properties": {"name": s}});
        assert_eq!(
            legacy_crs(&v("urn:ogc:def:crs:EPSG::2263")).as_deref(),
            Some("EPSG:2263")
        );
        assert_eq!(
            legacy_crs(&v("urn:ogc:def:crs:OGC:1.3:CRS84")).as_deref(),
            Some("EPSG:4326")
        );
        assert_eq!(legacy_crs(&v("EPSG:27700")).as_deref(), Some("EPSG:27700"));
        assert_eq!(
            legacy_crs(&v("urn:ogc:def:crs:EPSG:6.6:4326")).as_deref(),
            Some("EPSG:4326")
        );
    }

    #[test]
    fn dates_are_recognised_by_shape() {
        assert!(is_date(b"2024-01-31"));
        assert!(is_datetime(b"2024-01-31T10:00:00Z"));
        assert!(is_datetime(b"2024-01-31 10:00:00.123+02:00"));
        assert!(!is_date(b"2024-1-31"));
        assert!(!is_datetime(b"2024-01-31"));
    }
}
