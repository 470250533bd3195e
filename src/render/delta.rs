//! A clause change in words: what a reader needs to see of an old and a new value. A map is
//! compared key by key ("`CNTY_` removed; `CNTY_ID` float64 → int64"), a set item by item
//! ("removed Polygon; added MultiLineString"), anything else as "old → new". Used by the
//! notice, the change tables of `diff` and `propose`, and a refused proposal, so none of them
//! prints two whole JSON maps and leaves the reader to find the difference.

use serde_json::Value;

use crate::model::{Change, Direction};

/// A value for a reader: a string without quotes, a list comma-separated, a map as
/// `key value` pairs; `-` for an absent value.
pub fn words(v: Option<&Value>) -> String {
    match v {
        None => "-".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => {
            let inner: Vec<String> = items.iter().map(|i| words(Some(i))).collect();
            if items.iter().all(Value::is_string) {
                inner.join(", ")
            } else {
                format!("[{}]", inner.join(", "))
            }
        }
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| format!("{k} {}", words(Some(v))))
            .collect::<Vec<_>>()
            .join(", "),
        Some(v) => v.to_string(),
    }
}

/// One part of a change, e.g. "`CNTY_ID` float64 → int64".
pub fn parts(old: Option<&Value>, new: Option<&Value>) -> Vec<String> {
    match (old, new) {
        (None, None) => Vec::new(),
        (None, Some(n)) => vec![format!("added: {}", words(Some(n)))],
        (Some(o), None) => vec![format!("removed (was {})", words(Some(o)))],
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .filter_map(|k| match (a.get(k), b.get(k)) {
                    (Some(x), None) => Some(format!("`{k}` removed (was {})", words(Some(x)))),
                    (None, Some(y)) => Some(format!("`{k}` added: {}", words(Some(y)))),
                    (Some(x), Some(y)) if x != y => {
                        Some(format!("`{k}` {} → {}", words(Some(x)), words(Some(y))))
                    }
                    _ => None,
                })
                .collect()
        }
        (Some(Value::Array(a)), Some(Value::Array(b)))
            if a.iter().chain(b).all(Value::is_string) =>
        {
            let removed: Vec<String> = a
                .iter()
                .filter(|x| !b.contains(x))
                .map(|x| words(Some(x)))
                .collect();
            let added: Vec<String> = b
                .iter()
                .filter(|x| !a.contains(x))
                .map(|x| words(Some(x)))
                .collect();
            let mut out = Vec::new();
            if !removed.is_empty() {
                out.push(format!("removed {}", removed.join(", ")));
            }
            if !added.is_empty() {
                out.push(format!("added {}", added.join(", ")));
            }
            if out.is_empty() {
                // Same members: only the order moved, or the status (advisory) changed.
                out.push(format!("unchanged: {}", words(new)));
            }
            out
        }
        (Some(o), Some(n)) if o == n => vec![format!("unchanged: {}", words(Some(n)))],
        (Some(o), Some(n)) => vec![format!("{} → {}", words(Some(o)), words(Some(n)))],
    }
}

/// The whole change as one phrase, parts separated by `; `.
pub fn delta(old: Option<&Value>, new: Option<&Value>) -> String {
    parts(old, new).join("; ")
}

/// What changed in one row of a change table. An enforcement row (`enforced`, `relaxed`) is
/// about the status of the promise, not its value: the value may be the same on both sides,
/// and when it moved too that is a row of its own, so the row says which way the status went.
pub fn change_words(c: &Change) -> String {
    match c.direction {
        Direction::Enforced => "advisory → enforced".to_string(),
        Direction::Relaxed => "enforced → advisory".to_string(),
        Direction::Deprecated => c.new.as_ref().map_or_else(String::new, deprecation_words),
        Direction::Undeprecated => format!(
            "deprecation withdrawn (was: {})",
            c.old.as_ref().map_or_else(String::new, deprecation_words)
        ),
        _ => delta(c.old.as_ref(), c.new.as_ref()),
    }
}

/// A `[deprecated]` entry as a phrase: `remove after 2027-09-01: why (use pop_2026)`.
fn deprecation_words(d: &Value) -> String {
    let field = |k: &str| d.get(k).and_then(Value::as_str);
    let mut s = format!(
        "remove after {}: {}",
        field("remove_after").unwrap_or("?"),
        field("reason").unwrap_or("")
    );
    if let Some(r) = field("replacement") {
        s += &format!(" (use {r})");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_key_by_key_sets_item_by_item() {
        let old = json!({"CNTY_": "float64", "CNTY_ID": "float64", "NAME": "string"});
        let new = json!({"CNTY_ID": "int64", "NAME": "string", "FIPS": "string"});
        assert_eq!(
            delta(Some(&old), Some(&new)),
            "`CNTY_` removed (was float64); `CNTY_ID` float64 → int64; `FIPS` added: string"
        );
        let old = json!(["LineString", "MultiLineString"]);
        let new = json!(["LineString", "Polygon"]);
        assert_eq!(
            delta(Some(&old), Some(&new)),
            "removed MultiLineString; added Polygon"
        );
        assert_eq!(
            delta(Some(&json!("EPSG:4326")), Some(&json!("EPSG:27700"))),
            "EPSG:4326 → EPSG:27700"
        );
        assert_eq!(
            delta(
                Some(&json!([0.0, 0.0, 1.5, 2.0])),
                Some(&json!([0.0, 0.0, 1.0, 2.0]))
            ),
            "[0.0, 0.0, 1.5, 2.0] → [0.0, 0.0, 1.0, 2.0]"
        );
        assert_eq!(delta(None, Some(&json!(0.02))), "added: 0.02");
        assert_eq!(delta(Some(&json!({"a": 0.1})), None), "removed (was a 0.1)");
    }
}
