//! The geometry column of an ODCS document read back as spatial clauses. Two spellings are
//! read: ours (`physicalType: geometry(MultiPolygon,4326)`, every geometry clause whole as a
//! custom property whose description names it), and the geometry logical type proposed for
//! ODCS (RFC 0048: `logicalType: geometry` with `logicalTypeOptions` `crs`, `subType`, `bbox`,
//! `dimensions`; the same four names are also read as custom properties). Where two places
//! say different things the column is refused, never one of them preferred silently.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

const TYPES: [&str; 7] = [
    "Point",
    "LineString",
    "Polygon",
    "MultiPoint",
    "MultiLineString",
    "MultiPolygon",
    "GeometryCollection",
];

/// Whether a property is the geometry column: the geometry logical type, or a PostGIS-style
/// `geometry` physical type.
pub fn is_geometry(p: &Map<String, Value>) -> bool {
    let s = |k: &str| {
        p.get(k)
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
    };
    s("logicalType").as_deref() == Some("geometry")
        || s("physicalType").is_some_and(|t| t == "geometry" || t.starts_with("geometry("))
}

/// The clauses kept whole by our export: custom properties described "contracts clause `x`".
pub fn kept_clauses(list: Option<&Value>) -> Vec<(usize, String, Value)> {
    let mut out = Vec::new();
    for (i, c) in list
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let d = c.get("description").and_then(Value::as_str).unwrap_or("");
        let Some(rest) = d.strip_prefix("contracts clause `") else {
            continue;
        };
        if let (Some((name, _)), Some(v)) = (rest.split_once('`'), c.get("value")) {
            out.push((i, name.to_string(), v.clone()));
        }
    }
    out
}

/// A geometry type name as the clauses spell it, and the dimensions its `Z`/`M` suffix says.
fn base_type(t: &str) -> Result<(String, &'static str), String> {
    let lower = t.to_ascii_lowercase();
    for (suffix, dims) in [("zm", "XYZM"), ("z", "XYZ"), ("m", "XYM"), ("", "XY")] {
        if let Some(base) = lower.strip_suffix(suffix) {
            if let Some(name) = TYPES.iter().find(|n| n.to_ascii_lowercase() == base) {
                return Ok((name.to_string(), dims));
            }
        }
    }
    Err(format!(
        "`{t}` is not a geometry type ({})",
        TYPES.join(", ")
    ))
}

/// One clause's value from several places: they must agree.
#[derive(Default)]
struct Said(BTreeMap<&'static str, (Value, String)>);

impl Said {
    fn put(&mut self, clause: &'static str, v: Value, from: &str) -> Result<(), String> {
        match self.0.get(clause) {
            Some((old, was)) if *old != v => Err(format!(
                "{was} says {clause} {old}, {from} says {v}: say it once"
            )),
            _ => {
                self.0.insert(clause, (v, from.to_string()));
                Ok(())
            }
        }
    }
}

fn crs_of(v: &Value) -> Result<Value, String> {
    match v {
        Value::Number(n) if n.as_u64().is_some() => Ok(json!(format!("EPSG:{n}"))),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(json!(format!("EPSG:{s}")))
        }
        Value::String(s) if !s.is_empty() => Ok(json!(s)),
        v => Err(format!(
            "crs {v} is neither an EPSG code nor AUTHORITY:CODE"
        )),
    }
}

fn types_of(v: &Value) -> Result<(Value, BTreeSet<&'static str>), String> {
    let names: Vec<&str> = match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        v => {
            return Err(format!(
                "subType {v} is not a geometry type or a list of them"
            ))
        }
    };
    let mut types = BTreeSet::new();
    let mut dims = BTreeSet::new();
    for n in names {
        let (t, d) = base_type(n)?;
        types.insert(t);
        dims.insert(d);
    }
    Ok((json!(types), dims))
}

fn dims_of(v: &Value) -> Result<Value, String> {
    let d = match v {
        Value::Number(n) => match n.as_u64() {
            Some(2) => "XY",
            Some(3) => "XYZ",
            Some(4) => "XYZM",
            _ => return Err(format!("dimensions {n} is not 2, 3 or 4")),
        },
        Value::String(s) => match s.to_ascii_uppercase().as_str() {
            "XY" => "XY",
            "XYZ" => "XYZ",
            "XYM" => "XYM",
            "XYZM" => "XYZM",
            _ => return Err(format!("dimensions `{s}` is not XY, XYZ, XYM or XYZM")),
        },
        v => {
            return Err(format!(
                "dimensions {v} is not 2, 3, 4 or XY, XYZ, XYM, XYZM"
            ))
        }
    };
    Ok(json!([d]))
}

fn bbox_of(v: &Value) -> Result<Value, String> {
    let n: Vec<f64> = v
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    match n.as_slice() {
        [a, b, c, d] if v.as_array().map(Vec::len) == Some(4) => Ok(json!([a, b, c, d])),
        _ => Err(format!(
            "bbox {v} is not four numbers [minx, miny, maxx, maxy]"
        )),
    }
}

/// The spatial clauses a geometry property says, by clause name, in `to_json` form.
pub fn clauses(p: &Map<String, Value>) -> Result<BTreeMap<String, Value>, String> {
    let kept = kept_clauses(p.get("customProperties"));
    if !kept.is_empty() {
        return Ok(kept.into_iter().map(|(_, n, v)| (n, v)).collect());
    }
    let mut said = Said::default();
    if let Some(t) = p.get("physicalType").and_then(Value::as_str) {
        let inner = t
            .split_once('(')
            .and_then(|(_, r)| r.strip_suffix(')'))
            .unwrap_or("");
        let mut parts = inner.splitn(2, ',');
        let types = parts.next().unwrap_or("").trim();
        if !types.is_empty() && !types.eq_ignore_ascii_case("geometry") {
            let names: Vec<Value> = types.split('|').map(|s| json!(s.trim())).collect();
            let (set, dims) = types_of(&Value::Array(names))?;
            said.put("permitted_geometry", set, "physicalType")?;
            if dims.iter().any(|d| *d != "XY") {
                said.put("dimensions", json!(dims), "physicalType")?;
            }
        }
        match parts.next().map(str::trim) {
            Some("0") | None => {}
            Some(srid) => said.put("crs", crs_of(&json!(srid))?, "physicalType")?,
        }
    }
    let customs: Map<String, Value> = p
        .get("customProperties")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some((
                c.get("property")?.as_str()?.to_string(),
                c.get("value")?.clone(),
            ))
        })
        .collect();
    let options = p.get("logicalTypeOptions").and_then(Value::as_object);
    for (from, m) in [
        ("logicalTypeOptions", options),
        ("customProperties", Some(&customs)),
    ] {
        let Some(m) = m else { continue };
        if let Some(v) = m.get("crs") {
            said.put("crs", crs_of(v)?, from)?;
        }
        if let Some(v) = m.get("subType").or_else(|| m.get("subtype")) {
            said.put("permitted_geometry", types_of(v)?.0, from)?;
        }
        if let Some(v) = m.get("bbox") {
            said.put("envelope", bbox_of(v)?, from)?;
        }
        if let Some(v) = m.get("dimensions") {
            said.put("dimensions", dims_of(v)?, from)?;
        }
    }
    Ok(said
        .0
        .into_iter()
        .map(|(k, (v, _))| (k.to_string(), v))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(p: Value) -> Result<BTreeMap<String, Value>, String> {
        clauses(p.as_object().unwrap())
    }

    #[test]
    fn postgis_types_and_the_proposed_options_read_alike() {
        let postgis = of(json!({"name": "g", "physicalType": "geometry(MULTIPOLYGONZ,2056)"}));
        let proposed = of(json!({"name": "g", "logicalType": "geometry",
            "logicalTypeOptions": {"crs": 2056, "subType": ["MultiPolygon"], "dimensions": 3}}));
        let want: BTreeMap<String, Value> = [
            ("crs", json!("EPSG:2056")),
            ("dimensions", json!(["XYZ"])),
            ("permitted_geometry", json!(["MultiPolygon"])),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(postgis, Ok(want.clone()));
        assert_eq!(proposed, Ok(want));
        assert_eq!(of(json!({"physicalType": "geometry"})), Ok(BTreeMap::new()));
    }

    #[test]
    fn places_that_disagree_are_refused() {
        let e = of(json!({"physicalType": "geometry(Point,4326)",
            "logicalTypeOptions": {"crs": "EPSG:3857"}}))
        .unwrap_err();
        assert!(e.contains("physicalType says crs \"EPSG:4326\""), "{e}");
        assert!(
            of(json!({"logicalType": "geometry", "logicalTypeOptions": {"subType": "Blob"}}))
                .is_err()
        );
        assert!(
            of(json!({"logicalType": "geometry", "logicalTypeOptions": {"bbox": [1, 2, 3]}}))
                .is_err()
        );
    }
}
