//! A contract as an Open Data Contract Standard v3.1.0 document (`contracts export odcs`).
//!
//! ODCS describes tables of properties with quality checks; a spatial contract is a feature layer
//! with attributes plus promises about geometry, CRS and extent that ODCS has no place for. Every
//! clause is therefore mapped where ODCS has a place (attributes become properties, their meanings
//! descriptions, null bounds `nullValues` checks, a feature-count floor a `rowCount` check) and
//! kept whole as a custom property where it has none, so no promise is lost in the export. The
//! table of docs/src/commands/export.md lists the mapping clause by clause.

use serde_json::{json, Map, Value};

use crate::model::{ClauseValue, Contract, Kind};

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

/// A number that is whole (a count) as an integer, so it is written `170`, not `170.0`.
fn whole(n: f64) -> Value {
    // Below 2^53 every whole f64 is exactly an i64.
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Value::from(n as i64)
    } else {
        json!(n)
    }
}

/// The document's lifecycle status on `state` ("live", "deprecated", "upcoming", "retired").
pub fn status_word(state: &str) -> &'static str {
    match state {
        "live" => "active",
        "deprecated" => "deprecated",
        "upcoming" => "proposed",
        _ => "retired",
    }
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
                p["quality"] = json!([{
                    "name": format!("{name}_null_fraction"),
                    "type": "library",
                    "metric": "nullValues",
                    "unit": "percent",
                    "mustBeLessOrEqualTo": percent(limit),
                    "severity": severity("max_null_fraction"),
                    "description": format!(
                        "max_null_fraction: at most {limit} of the features have no {name}"
                    ),
                }]);
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
            quality.push(json!({
                "name": name,
                "type": "library",
                "metric": "rowCount",
                "mustBeGreaterOrEqualTo": whole(*n),
                "severity": severity(name),
                "description": format!("{name}: at least {n} features"),
            }));
            mapped.push(name);
        }
    }

    // Everything else, whole, as custom properties of the schema object.
    let mut customs = Vec::new();
    for (name, cl) in &c.clauses {
        if mapped.contains(&name.as_str()) {
            continue;
        }
        customs.push(custom(
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
        ));
    }
    for (name, v) in &c.unknown {
        customs.push(custom(
            &camel(name),
            serde_json::to_value(v).unwrap_or(Value::Null),
            format!("contracts clause `{name}` (kind unknown to this build)"),
        ));
    }
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

/// A JSON value as a YAML document: block style, keys in the value's order, every string
/// double-quoted with JSON escapes (valid YAML, and never read as a date, number or `no`).
pub fn yaml(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, 0, false);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The place of a key in its mapping: the ODCS fields a reader looks for first.
fn rank(key: &str) -> usize {
    const FIRST: [&str; 17] = [
        "apiVersion",
        "kind",
        "id",
        "name",
        "property",
        "version",
        "status",
        "value",
        "description",
        "logicalType",
        "physicalType",
        "required",
        "type",
        "metric",
        "unit",
        "schema",
        "properties",
    ];
    FIRST.iter().position(|k| *k == key).unwrap_or(FIRST.len())
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "{}".to_string(),
        Value::Array(a) if a.is_empty() => "[]".to_string(),
        Value::String(s) => quoted(s),
        Value::Number(n) => match n.as_f64() {
            // Rust writes an f64 as its shortest round-trip decimal, never with an exponent
            // (YAML 1.1 reads `1e-05` as a string); `.0` keeps a whole float a float.
            Some(f) if n.is_f64() => {
                let text = format!("{f}");
                if text.contains('.') {
                    text
                } else {
                    format!("{text}.0")
                }
            }
            _ => n.to_string(),
        },
        v => serde_json::to_string(v).unwrap_or_default(),
    }
}

/// `s` as a YAML double-quoted scalar. A YAML 1.1 reader (PyYAML, and the tools built on it)
/// refuses C0 and C1 controls, DEL and the non-characters U+FFFE/U+FFFF written raw, and folds
/// a raw line break (NEL, U+2028, U+2029) into a space; each of those travels as a `\uXXXX`
/// escape (a newline and a tab as `\n` and `\t`), so any text reads back unchanged.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{feff}'
            | '\u{fffe}'
            | '\u{ffff}' => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_block(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

/// Write `v` at `indent`; `inline` means the first line continues a `- ` already written.
fn write_value(out: &mut String, v: &Value, indent: usize, inline: bool) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            // ODCS documents read top-down: identity first, then content; others by name.
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by_key(|(k, _)| (rank(k), (*k).clone()));
            for (i, (k, val)) in entries.into_iter().enumerate() {
                if !(inline && i == 0) {
                    out.push_str(&pad);
                }
                let key = if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    k.clone()
                } else {
                    quoted(k)
                };
                if is_block(val) {
                    out.push_str(&format!("{key}:\n"));
                    write_value(out, val, indent + 2, false);
                } else {
                    out.push_str(&format!("{key}: {}\n", scalar(val)));
                }
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for item in a {
                out.push_str(&pad);
                out.push_str("- ");
                if is_block(item) {
                    match item {
                        Value::Object(_) => write_value(out, item, indent + 2, true),
                        _ => {
                            out.pop();
                            out.push('\n');
                            write_value(out, item, indent + 2, false);
                        }
                    }
                } else {
                    out.push_str(&format!("{}\n", scalar(item)));
                }
            }
        }
        v => {
            if !inline {
                out.push_str(&pad);
            }
            out.push_str(&format!("{}\n", scalar(v)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_is_block_style_with_quoted_strings() {
        let v = json!({
            "a": "2027-01-01",
            "b": [1, {"c": "no", "d": []}],
            "e": {"f": true},
            "g": [[1, 2]],
        });
        assert_eq!(
            yaml(&v),
            "a: \"2027-01-01\"\nb:\n  - 1\n  - c: \"no\"\n    d: []\ne:\n  f: true\ng:\n  -\n    - 1\n    - 2\n"
        );
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
        assert_eq!(
            yaml(&json!({"a": 0.00001, "b": 170.0, "c": 3})),
            "a: 0.00001\nb: 170.0\nc: 3\n"
        );
        assert_eq!(quoted("a\u{86}\"\n\u{2028}é"), r#""a\u0086\"\n\u2028é""#);
    }
}
