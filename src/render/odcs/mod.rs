//! A contract as an Open Data Contract Standard v3.1.0 document (`contracts export odcs`).
//!
//! ODCS describes tables of properties with quality checks; a spatial contract is a feature layer
//! with attributes plus promises about geometry, CRS and extent that ODCS has no field for. Every
//! clause is therefore mapped where ODCS has a place (attributes and the geometry column become
//! properties, their meanings descriptions, null bounds `nullValues` checks, a feature-count
//! floor a `rowCount` check) and kept whole as a custom property where it has none, so no
//! promise is lost in the export.
//!
//! Other tools compare two exports to grade a change (`datacontract breaking`, consumer view):
//! they read types, requiredness and quality thresholds, never custom properties. So each
//! breaking change `diff` can report is written where such a tool sees it breaking where ODCS
//! allows: the geometry clauses in the geometry's physical type, the required set in a check
//! whose expected count follows it. The table of docs/src/commands/export.md lists the mapping
//! and the grading clause by clause, with what ODCS cannot express.
//!
//! The way back (`contracts import odcs`) is here too, since each mapping is read with the
//! function that decides how it is written: `import` drafts a contract from a document and
//! keeps the document verbatim; `kept` exports such a contract by writing that document back
//! with the clauses in place.

use serde_json::{json, Map, Value};

use crate::model::deprecation::Deprecation;
use crate::model::{Check, Clause, ClauseValue, Contract, Kind, VersionState};

mod geometry_column;
mod import;
mod kept;
mod yaml;
mod yaml_read;
pub use import::{import, Options};
pub use kept::document as kept_document;
pub use yaml::yaml;
pub use yaml_read::OdcsErrors;

/// The ODCS version written.
pub const API_VERSION: &str = "v3.1.0";

/// The ODCS logical type of an attribute type, and whether it is exact (`binary` has no
/// logical type of its own: it is a string with physical type `binary`).
fn logical_type(ty: &str) -> &'static str {
    match ty {
        "bool" => "boolean",
        "int32" | "int64" => "integer",
        "float64" => "number",
        "date" => "date",
        "datetime" => "timestamp",
        _ => "string",
    }
}

/// `snake_case` to ODCS's camelCase for custom property names.
fn camel(s: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in s.chars() {
        if c == '_' || c == '.' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Widening => "widening",
        Kind::Narrowing => "narrowing",
        Kind::Fixed => "fixed",
    }
}

fn custom(property: &str, value: Value, description: String) -> Value {
    json!({ "property": property, "value": value, "description": description })
}

/// `fraction` × 100, computed in decimal: the shortest text that reads back as the fraction
/// (`0.57`) has its point moved two digits (`57`). A float multiply gives 56.99999999999999
/// there, a limit stricter than the contract's. A whole percentage is an integer.
fn percent(fraction: f64) -> Value {
    let text = format!("{}", fraction.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let frac = format!("{frac:0<2}");
    let (moved, rest) = frac.split_at(2);
    let int = format!("{int}{moved}");
    let int = match int.trim_start_matches('0') {
        "" => "0",
        digits => digits,
    };
    let rest = rest.trim_end_matches('0');
    if rest.is_empty() {
        // Fractions are validated into 0..=1, so the whole part is at most 100.
        int.parse::<u64>()
            .map_or(json!(fraction * 100.0), Value::from)
    } else {
        format!("{int}.{rest}")
            .parse::<f64>()
            .map_or(json!(fraction * 100.0), Value::from)
    }
}

/// The `nullValues` check of one attribute's null bound.
fn null_check(name: &str, limit: f64, severity: &str) -> Value {
    json!({
        "name": format!("{name}_null_fraction"),
        "type": "library",
        "metric": "nullValues",
        "unit": "percent",
        "mustBeLessOrEqualTo": percent(limit),
        "severity": severity,
        "description": format!("max_null_fraction: at most {limit} of the features have no {name}"),
    })
}

/// The `rowCount` check of a feature-count floor.
fn row_check(name: &str, n: f64, severity: &str) -> Value {
    json!({
        "name": name,
        "type": "library",
        "metric": "rowCount",
        "mustBeGreaterOrEqualTo": whole(n),
        "severity": severity,
        "description": format!("{name}: at least {n} features"),
    })
}

/// A number that is whole (a count) as an integer, so it is written `170`, not `170.0`.
fn whole(n: f64) -> Value {
    // Below 2^53 every whole f64 is exactly an i64.
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Value::from(n as i64)
    } else {
        json!(n)
    }
}

/// A clause kept whole as a custom property: its value as `show --format json` writes it, and
/// a description naming the clause, its kind and shape, and whether it is advisory.
fn clause_custom(c: &Contract, name: &str, cl: &Clause) -> Value {
    custom(
        &camel(name),
        cl.value.to_json(),
        format!(
            "contracts clause `{name}` ({}, {}){}",
            kind_word(cl.spec.kind),
            cl.spec.shape,
            if c.is_advisory(name) {
                ", advisory"
            } else {
                ""
            }
        ),
    )
}

/// A deprecated attribute's own custom properties: ODCS v3.1.0 has no `deprecated` on a
/// property (its schema refuses one), so `deprecated`, `reason`, `replacement` and
/// `removeAfter` are custom properties of the property, as `import odcs` reads them back.
fn deprecation_customs(d: &Deprecation) -> Vec<Value> {
    let through = format!(
        "contracts: `{}` is promised through {}",
        d.key, d.remove_after
    );
    let mut out = vec![
        custom("deprecated", json!(true), through),
        custom(
            "reason",
            json!(d.reason),
            "contracts: why it goes away".into(),
        ),
    ];
    if let Some(r) = &d.replacement {
        out.push(custom(
            "replacement",
            json!(r),
            "contracts: what to use instead".into(),
        ));
    }
    out.push(custom(
        "removeAfter",
        json!(d.remove_after.to_string()),
        "contracts: the last day it is promised (inclusive)".into(),
    ));
    out
}

/// Deprecations of keys that are no attribute property (a geometry type, a whole clause, a
/// limit): one `deprecated` custom property listing them with their keys, where the key's
/// clause is written (the geometry column or the schema object).
fn deprecated_list(ds: &[&Deprecation]) -> Option<Value> {
    let list: Vec<Value> = ds
        .iter()
        .map(|d| {
            let mut e = json!({
                "key": d.key,
                "reason": d.reason,
                "removeAfter": d.remove_after.to_string(),
            });
            if let Some(r) = &d.replacement {
                e["replacement"] = json!(r);
            }
            e
        })
        .collect();
    (!list.is_empty()).then(|| {
        custom(
            "deprecated",
            json!(list),
            "contracts: clause keys announced to go away, each promised through its removeAfter"
                .into(),
        )
    })
}

/// Whether a deprecation is of one attribute property (`required_attributes.x`,
/// `optional_attributes.x`), which carries it itself.
fn of_property(d: &Deprecation) -> bool {
    matches!(
        d.key.split_once('.'),
        Some(("required_attributes" | "optional_attributes", _))
    )
}

/// Whether a clause promises something about the geometry column: decided by how `validate`
/// checks it, so a custom clause never lands here; `units`, which `validate` does not check,
/// by its name (it is the CRS's).
fn is_geometry_clause(name: &str, cl: &Clause) -> bool {
    matches!(
        cl.spec.check,
        Check::CrsEquals
            | Check::CrsListed
            | Check::EnvelopeInside
            | Check::TypesSubset
            | Check::TypesEqual
            | Check::DimensionsEqual
    ) || (cl.spec.builtin && name == "units")
}

/// The geometry column as a schema property, and the clauses it holds. ODCS v3.1.0 has no
/// geometry type (its schema refuses the geometry `logicalTypeOptions` proposed since), so the
/// column has no `logicalType`; its `physicalType` is written the way PostGIS writes a column
/// type, `geometry(MultiPolygon,4326)`, from the enforced clauses only: the emitted types (else
/// the permitted ones; several joined by `|` where PostGIS would say `Geometry`, so that any
/// change of the set changes the type), with `Z`, `M` or `ZM` for the dimensions, and the EPSG
/// code of the CRS (another authority's code whole). A type string is what other tools compare:
/// `datacontract breaking` grades any change of it breaking, as `diff` grades a changed CRS.
/// Every geometry clause is also kept whole as a custom property of the column.
fn geometry_property<'c>(
    c: &'c Contract,
    taken: &std::collections::BTreeSet<String>,
) -> (Value, Vec<&'c str>) {
    let enforced = |check: Check| {
        c.clauses
            .iter()
            .find(|(name, cl)| cl.spec.check == check && !c.is_advisory(name))
            .map(|(_, cl)| &cl.value)
    };
    let set = |check: Check| match enforced(check) {
        Some(ClauseValue::Set(s)) if !s.is_empty() => Some(s.iter().cloned().collect::<Vec<_>>()),
        _ => None,
    };
    let types = set(Check::TypesEqual)
        .or_else(|| set(Check::TypesSubset))
        .unwrap_or_else(|| vec!["Geometry".to_string()]);
    let suffixes: Vec<&str> = match set(Check::DimensionsEqual) {
        Some(dims) => dims
            .iter()
            .map(|d| match d.as_str() {
                "XYZ" => "Z",
                "XYM" => "M",
                "XYZM" => "ZM",
                _ => "",
            })
            .collect(),
        None => vec![""],
    };
    let subtype: Vec<String> = types
        .iter()
        .flat_map(|t| suffixes.iter().map(move |s| format!("{t}{s}")))
        .collect();
    let srid = match enforced(Check::CrsEquals) {
        Some(ClauseValue::Value(toml::Value::String(crs))) => {
            Some(crs.strip_prefix("EPSG:").unwrap_or(crs).to_string())
        }
        _ => None,
    };
    let physical = match (subtype.join("|"), srid) {
        (t, None) if t == "Geometry" => "geometry".to_string(),
        (t, None) => format!("geometry({t})"),
        (t, Some(srid)) => format!("geometry({t},{srid})"),
    };
    // The column's name is the format's (`geom`, `geometry`, ...); the first free of these.
    let name = ["geometry", "geom", "the_geom", "wkb_geometry"]
        .into_iter()
        .find(|n| !taken.contains(*n))
        .unwrap_or("geometry_column");
    let mut held = Vec::new();
    let mut customs = Vec::new();
    for (clause, cl) in &c.clauses {
        if is_geometry_clause(clause, cl) {
            held.push(clause.as_str());
            customs.push(clause_custom(c, clause, cl));
        }
    }
    let mut p = json!({
        "name": name,
        "physicalType": physical,
        "description": "the features' geometry",
    });
    let deprecated: Vec<&Deprecation> = c
        .deprecated
        .values()
        .filter(|d| held.contains(&d.clause()))
        .collect();
    customs.extend(deprecated_list(&deprecated));
    if !customs.is_empty() {
        p["customProperties"] = json!(customs);
    }
    (p, held)
}

/// The document's lifecycle status for a version in `state`.
pub fn status_word(state: VersionState) -> &'static str {
    match state {
        VersionState::Live => "active",
        VersionState::Deprecated => "deprecated",
        VersionState::Upcoming => "proposed",
        VersionState::Retired => "retired",
    }
}

/// The contract's lineage as top-level custom properties: what it follows, its sunsets, and
/// the clauses it publishes without enforcing.
fn lineage(c: &Contract, line_sunset: Option<chrono::NaiveDate>) -> Vec<Value> {
    let mut top = Vec::new();
    if let Some(s) = &c.supersedes {
        top.push(custom(
            "supersedes",
            json!(s.to_string()),
            "contracts: the version this one follows".into(),
        ));
    }
    if let Some(s) = c.sunset {
        top.push(custom(
            "previousLineSunset",
            json!(s.to_string()),
            "contracts: the day the previous line stops being published (as declared)".into(),
        ));
    }
    if let Some(s) = line_sunset {
        top.push(custom(
            "sunset",
            json!(s.to_string()),
            "contracts: the day this line stops being published".into(),
        ));
    }
    if !c.advisory.is_empty() {
        top.push(custom(
            "advisory",
            json!(c.advisory.iter().collect::<Vec<_>>()),
            "contracts: clauses published but not yet enforced".into(),
        ));
    }
    top
}

/// Build the ODCS document of `c`. `status` is the ODCS status (see [`status_word`]);
/// `line_sunset` is the effective sunset of the contract's own line, if it has one.
pub fn document(c: &Contract, status: &str, line_sunset: Option<chrono::NaiveDate>) -> Value {
    let severity = |clause: &str| {
        if c.is_advisory(clause) {
            "warning"
        } else {
            "error"
        }
    };
    let mut mapped: Vec<&str> = Vec::new();
    let semantics: Map<String, Value> = match c.clauses.get("attribute_semantics") {
        Some(cl) => match &cl.value {
            ClauseValue::Meanings(m) => m.iter().map(|(k, v)| (k.clone(), json!(v))).collect(),
            _ => Map::new(),
        },
        None => Map::new(),
    };
    let null_bounds = c
        .clauses
        .get("max_null_fraction")
        .and_then(|cl| match &cl.value {
            ClauseValue::UpperBounds(b) => Some(b.clone()),
            ClauseValue::UpperBound(n) => Some(crate::model::UpperBounds {
                all: Some(*n),
                keys: Default::default(),
            }),
            _ => None,
        });

    // Attributes → properties.
    let mut properties = Vec::new();
    let mut described = std::collections::BTreeSet::new();
    for (clause, required) in [
        ("required_attributes", true),
        ("optional_attributes", false),
    ] {
        let Some(ClauseValue::Map(attrs)) = c.clauses.get(clause).map(|cl| &cl.value) else {
            continue;
        };
        mapped.push(clause);
        for (name, ty) in attrs {
            let mut p = json!({
                "name": name,
                "logicalType": logical_type(ty),
                "physicalType": ty,
                "required": required,
            });
            if let Some(d) = semantics.get(name) {
                p["description"] = d.clone();
                described.insert(name.clone());
            }
            if let Some(limit) = null_bounds.as_ref().and_then(|b| b.limit(name)) {
                p["quality"] = json!([null_check(name, limit, severity("max_null_fraction"))]);
            }
            if let Some(d) = c.deprecated.get(&format!("{clause}.{name}")) {
                p["customProperties"] = json!(deprecation_customs(d));
            }
            properties.push(p);
        }
    }
    // A clause is mapped only when ODCS holds all of it: a meaning or a null bound for an
    // attribute that is not a property, or one bound for every attribute, stays custom too.
    let names: std::collections::BTreeSet<String> = properties
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    if !semantics.is_empty() && described.len() == semantics.len() {
        mapped.push("attribute_semantics");
    }
    if null_bounds
        .as_ref()
        .is_some_and(|b| b.all.is_none() && b.keys.keys().all(|k| names.contains(k)))
    {
        mapped.push("max_null_fraction");
    }

    // A feature-count floor → rowCount.
    let mut quality = Vec::new();
    for (name, cl) in &c.clauses {
        if let (ClauseValue::LowerBound(n), Some("feature_count")) =
            (&cl.value, cl.spec.metric.as_deref())
        {
            quality.push(row_check(name, *n, severity(name)));
            mapped.push(name);
        }
    }

    // The required attributes → also one presence check of the schema. ODCS reads a property
    // that appears, or turns required, as a tightening a consumer may ignore, while `diff`
    // grades any change of the required set breaking (a fixed clause): the count this check
    // must find changes with the set, and a changed `mustBe` is what other tools grade
    // breaking (the contract tests only presence; the types are the properties').
    if let Some(ClauseValue::Map(attrs)) = c.clauses.get("required_attributes").map(|cl| &cl.value)
    {
        if !attrs.is_empty() {
            let listed: Vec<String> = attrs
                .keys()
                .map(|k| format!("'{}'", k.replace('\'', "''")))
                .collect();
            quality.push(json!({
                "name": "required_attributes",
                "type": "sql",
                "query": format!(
                    "SELECT COUNT(*) FROM information_schema.columns \
                     WHERE table_name = '{}' AND column_name IN ({})",
                    c.dataset,
                    listed.join(", ")
                ),
                "mustBe": attrs.len(),
                "severity": severity("required_attributes"),
                "description": format!(
                    "required_attributes: the layer has all {} required attributes",
                    attrs.len()
                ),
            }));
        }
    }

    // The geometry column → one more property, holding the geometry clauses.
    let (geometry, held) = geometry_property(c, &names);
    properties.insert(0, geometry);
    let held_by_geometry = held.clone();
    mapped.extend(held);

    // Everything else, whole, as custom properties of the schema object.
    let mut customs = Vec::new();
    for (name, cl) in &c.clauses {
        if !mapped.contains(&name.as_str()) {
            customs.push(clause_custom(c, name, cl));
        }
    }
    for (name, v) in &c.unknown {
        customs.push(custom(
            &camel(name),
            serde_json::to_value(v).unwrap_or(Value::Null),
            format!("contracts clause `{name}` (kind unknown to this build)"),
        ));
    }
    let on_object: Vec<&Deprecation> = c
        .deprecated
        .values()
        .filter(|d| !of_property(d) && !held_by_geometry.contains(&d.clause()))
        .collect();
    customs.extend(deprecated_list(&on_object));
    let mut object = json!({
        "name": c.dataset,
        "logicalType": "object",
        "physicalType": "feature layer",
        "properties": properties,
    });
    if let Some(d) = &c.description {
        object["description"] = json!(d);
    }
    if !quality.is_empty() {
        object["quality"] = json!(quality);
    }
    if !customs.is_empty() {
        object["customProperties"] = json!(customs);
    }

    // The contract's own dates and lineage.
    let mut top = vec![
        custom(
            "validFrom",
            json!(c.valid_from.to_string()),
            "contracts: the day this version becomes live".into(),
        ),
        custom(
            "line",
            json!(c.version.major),
            "contracts: the major line this version belongs to".into(),
        ),
    ];
    top.extend(lineage(c, line_sunset));
    let mut doc = json!({
        "apiVersion": API_VERSION,
        "kind": "DataContract",
        "id": format!("{}-{}", c.dataset, c.version),
        "name": c.dataset,
        "version": c.version.to_string(),
        "status": status,
        "schema": [object],
        "customProperties": top,
    });
    if let Some(d) = &c.description {
        doc["description"] = json!({ "purpose": d });
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_are_decimal() {
        assert_eq!(camel("max_null_fraction"), "maxNullFraction");
        for (fraction, expected) in [
            (0.07, json!(7)),
            (0.57, json!(57)),
            (0.125, json!(12.5)),
            (0.0, json!(0)),
            (1.0, json!(100)),
            (0.000001, json!(0.0001)),
        ] {
            assert_eq!(percent(fraction), expected, "{fraction}");
        }
        assert_eq!(whole(170.0), json!(170));
        assert_eq!(whole(0.5), json!(0.5));
    }
}
