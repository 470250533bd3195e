//! The export of a contract imported from ODCS: its kept document written back, with the
//! clauses in place of the parts they were read from. A part stays exactly as it was while
//! reading it (the import's own function) still gives the contract's clause; otherwise the
//! clause's own form replaces it, a clause with no part is added the way `document` writes it,
//! and a part whose clause is gone is removed. So `export(import(x))` is `x` as data, and a
//! later version's changes show where a reader of `x` looks for them.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::geometry_column::clauses as geometry_clauses;
use super::import::{property_attr, row_floor, the_object};
use super::{
    clause_custom, geometry_property, is_geometry_clause, lineage, logical_type, null_check,
    row_check, whole,
};
use crate::model::{ClauseValue, Contract};

/// The document of `c` from its kept ODCS text. `status` is the store's word for the
/// version: a live version keeps the document's own (`production`, `development` ...).
pub fn document(
    c: &Contract,
    kept: &str,
    status: &str,
    line_sunset: Option<chrono::NaiveDate>,
) -> Result<Value, String> {
    let mut doc = super::yaml_read::read(kept)
        .map_err(|p| format!("the kept ODCS document does not read: {}", p[0].message))?
        .doc;
    the_object(&doc)?;
    doc["version"] = json!(c.version.to_string());
    // A live version keeps the document's own word (`production`, `draft` ...), unless that
    // word is one the store gives a version in another state: the store knows better.
    let kept_word = doc.get("status").and_then(Value::as_str);
    let keeps = kept_word.is_some_and(|w| !["proposed", "deprecated", "retired"].contains(&w));
    if !(status == "active" && keeps) {
        doc["status"] = json!(status);
    }
    let created = doc.get("contractCreatedTs").and_then(Value::as_str);
    if created.is_some_and(|ts| ts.get(..10) != Some(c.valid_from.to_string().as_str())) {
        doc["contractCreatedTs"] = json!(format!("{}T00:00:00+00:00", c.valid_from));
    }
    if let Some(Value::Object(object)) = doc.pointer_mut("/schema/0") {
        let mapped = write_object(c, object);
        let rest: Vec<Value> = c
            .clauses
            .iter()
            .filter(|(n, _)| !mapped.contains(&n.as_str()))
            .map(|(n, cl)| clause_custom(c, n, cl))
            .collect();
        set_customs(object, rest, |d, _| d.starts_with("contracts clause `"));
    }
    if let Value::Object(top) = &mut doc {
        // Only the lineage is rewritten: our export's `validFrom` and `line` stay as kept.
        const LINEAGE: [&str; 4] = ["supersedes", "previousLineSunset", "sunset", "advisory"];
        set_customs(top, lineage(c, line_sunset), |d, p| {
            d.starts_with("contracts: ") && LINEAGE.contains(&p)
        });
    }
    Ok(doc)
}

/// Replace the custom properties `ours` describes with `new`, keeping every other one (and
/// each of ours that `new` holds unchanged) in place.
fn set_customs(o: &mut Map<String, Value>, new: Vec<Value>, ours: impl Fn(&str, &str) -> bool) {
    let old = o.remove("customProperties");
    let mut list: Vec<Value> = old
        .as_ref()
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let text = |c: &Value, k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    list.retain(|c| !ours(&text(c, "description"), &text(c, "property")) || new.contains(c));
    for n in new {
        if !list.contains(&n) {
            list.push(n);
        }
    }
    if !list.is_empty() || old.is_some() {
        o.insert("customProperties".into(), Value::Array(list));
    }
}

/// The attributes, their null bounds, the geometry column and the feature-count floor written
/// into the schema object; the names of the clauses written.
fn write_object<'c>(c: &'c Contract, object: &mut Map<String, Value>) -> Vec<&'c str> {
    let mut mapped = Vec::new();
    let mut attrs: BTreeMap<&str, (&str, bool)> = BTreeMap::new();
    for (clause, required) in [
        ("required_attributes", true),
        ("optional_attributes", false),
    ] {
        if let Some(ClauseValue::Map(m)) = c.clauses.get(clause).map(|cl| &cl.value) {
            mapped.push(clause);
            attrs.extend(m.iter().map(|(k, t)| (k.as_str(), (t.as_str(), required))));
        }
    }
    let bounds = match c.clauses.get("max_null_fraction").map(|cl| &cl.value) {
        Some(ClauseValue::UpperBounds(b))
            if b.all.is_none() && b.keys.keys().all(|k| attrs.contains_key(k.as_str())) =>
        {
            mapped.push("max_null_fraction");
            b.keys.clone()
        }
        _ => BTreeMap::new(),
    };
    let severity = |clause: &str| {
        if c.is_advisory(clause) {
            "warning"
        } else {
            "error"
        }
    };

    let geometry: BTreeMap<String, Value> = c
        .clauses
        .iter()
        .filter(|(n, cl)| is_geometry_clause(n, cl))
        .map(|(n, cl)| (n.clone(), cl.value.to_json()))
        .collect();
    mapped.extend(
        c.clauses
            .iter()
            .filter(|(n, cl)| is_geometry_clause(n, cl))
            .map(|(n, _)| n.as_str()),
    );

    let old = match object.remove("properties") {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    let mut props = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut has_geometry = false;
    for p in old {
        let Some(pm) = p.as_object() else {
            props.push(p);
            continue;
        };
        let name = pm
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match property_attr(pm) {
            Ok(None) => {
                has_geometry = true;
                if geometry_clauses(pm).ok() == Some(geometry.clone()) {
                    props.push(p);
                } else if !geometry.is_empty() {
                    let mut g = geometry_property(c, &Default::default()).0;
                    g["name"] = json!(name);
                    props.push(g);
                }
            }
            Ok(Some(got)) => {
                let Some((ty, required)) = attrs.get(name.as_str()) else {
                    continue; // the attribute is gone
                };
                seen.insert(name.clone());
                let limit = bounds.get(&name).copied();
                let mut pm = pm.clone();
                if got.ty != *ty {
                    pm.insert("logicalType".into(), json!(logical_type(ty)));
                    pm.insert("physicalType".into(), json!(ty));
                }
                if got.required != *required {
                    pm.insert("required".into(), json!(required));
                }
                if got.null.map(|n| n.0) != limit {
                    let mut q = match pm.remove("quality") {
                        Some(Value::Array(q)) => q,
                        _ => Vec::new(),
                    };
                    if let Some((_, i)) = got.null {
                        q.remove(i);
                    }
                    if let Some(l) = limit {
                        q.push(null_check(&name, l, severity("max_null_fraction")));
                    }
                    if !q.is_empty() {
                        pm.insert("quality".into(), Value::Array(q));
                    }
                }
                props.push(Value::Object(pm));
            }
            // Not an attribute the import could read: kept as it is.
            Err(_) => props.push(p),
        }
    }
    for (name, (ty, required)) in &attrs {
        if seen.contains(*name) {
            continue;
        }
        let mut p = json!({
            "name": name, "logicalType": logical_type(ty), "physicalType": ty, "required": required,
        });
        if let Some(l) = bounds.get(*name) {
            p["quality"] = json!([null_check(name, *l, severity("max_null_fraction"))]);
        }
        props.push(p);
    }
    if !has_geometry && !geometry.is_empty() {
        props.insert(0, geometry_property(c, &Default::default()).0);
    }
    object.insert("properties".into(), Value::Array(props));

    // The feature-count floor: the first rowCount floor of the object carries it.
    let floor = c
        .clauses
        .iter()
        .find_map(|(n, cl)| match (&cl.value, cl.spec.metric.as_deref()) {
            (ClauseValue::LowerBound(v), Some("feature_count")) => Some((n.as_str(), *v)),
            _ => None,
        });
    let mut q = match object.remove("quality") {
        Some(Value::Array(q)) => q,
        _ => Vec::new(),
    };
    let had = !q.is_empty();
    let mut placed = false;
    q.retain_mut(|check| {
        let Some(n) = row_floor(check) else {
            return true;
        };
        match floor {
            Some((_, v)) if !placed => {
                placed = true;
                if n != v {
                    if let Some(m) = check.as_object_mut() {
                        m.remove("mustBeGreaterThan");
                        m.insert("mustBeGreaterOrEqualTo".into(), whole(v));
                    }
                }
                true
            }
            _ => false,
        }
    });
    if let (Some((name, v)), false) = (floor, placed) {
        q.push(row_check(name, v, severity(name)));
    }
    if let Some((name, _)) = floor {
        mapped.push(name);
    }
    if had || !q.is_empty() {
        object.insert("quality".into(), Value::Array(q));
    }
    mapped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn customs_outside_ours_stay_in_place() {
        let mut o = Map::new();
        o.insert(
            "customProperties".into(),
            json!([{"property": "a", "value": 1}, {"property": "x", "value": 2, "description": "contracts clause `x` (fixed, value)"}]),
        );
        set_customs(&mut o, vec![], |d, _| d.starts_with("contracts clause `"));
        assert_eq!(
            o["customProperties"],
            json!([{"property": "a", "value": 1}])
        );
    }
}
