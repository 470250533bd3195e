//! Deprecation of one clause key within a line (docs/src/reference/contract.md#deprecated): a
//! contract may announce that one key it promises — a whole clause, one attribute of a map
//! clause, one member of a set clause — goes away after a given day, while still promising it
//! until then. The kinds never bend: removing the key stays breaking by its clause's kind. What
//! a deprecation adds is notice, and a date before which `propose` refuses the removal.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::Serialize;

use super::value::ClauseValue;

/// One `[deprecated]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Deprecation {
    /// The clause key: `crs`, `optional_attributes.pop_est`, `permitted_geometry.MultiPoint`.
    pub key: String,
    pub reason: String,
    /// What to use instead, if anything.
    pub replacement: Option<String>,
    /// The last day the key is promised (inclusive, unlike a sunset): the version that
    /// removes it may take effect the day after.
    pub remove_after: NaiveDate,
}

impl Deprecation {
    /// The entry as JSON, for change records and reports.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The clause the key belongs to.
    pub fn clause(&self) -> &str {
        clause_of(&self.key)
    }
}

/// The clause part of a key (`optional_attributes` of `optional_attributes.pop_est`).
pub fn clause_of(key: &str) -> &str {
    key.split_once('.').map_or(key, |(c, _)| c)
}

/// The attribute a key names, if its clause is keyed by attribute: what consumers declare in
/// `uses` and what `can-remove` asks about.
pub fn attribute_of(key: &str) -> Option<&str> {
    let (clause, member) = key.split_once('.')?;
    matches!(
        clause,
        "required_attributes" | "optional_attributes" | "attribute_semantics" | "max_null_fraction"
    )
    .then_some(member)
}

/// The members a clause value has keys for: a set's members, a map's keys, per-key limits.
pub fn members(value: &ClauseValue) -> Option<Vec<&str>> {
    match value {
        ClauseValue::Set(s) => Some(s.iter().map(String::as_str).collect()),
        ClauseValue::Map(m) | ClauseValue::Meanings(m) => {
            Some(m.keys().map(String::as_str).collect())
        }
        ClauseValue::UpperBounds(b) => Some(b.keys.keys().map(String::as_str).collect()),
        _ => None,
    }
}

/// A contract's clause values by name (the kinded ones).
pub type ValueOf<'a> = &'a dyn Fn(&str) -> Option<&'a ClauseValue>;

/// Whether `key` names a clause (`value_of` gives its value), or one member of it. `Err`
/// says why not.
pub fn resolve(value_of: ValueOf<'_>, key: &str) -> Result<(), String> {
    let Some((clause, member)) = key.split_once('.') else {
        return if value_of(key).is_some() {
            Ok(())
        } else {
            Err(format!("`{key}` is not a clause of this contract"))
        };
    };
    let Some(value) = value_of(clause) else {
        return Err(format!("`{clause}` is not a clause of this contract"));
    };
    match members(value) {
        Some(m) if m.contains(&member) => Ok(()),
        Some(m) => Err(format!(
            "`{member}` is not in clause `{clause}` (it has {})",
            if m.is_empty() {
                "no key".to_string()
            } else {
                m.iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )),
        None => Err(format!(
            "clause `{clause}` has no members to deprecate one by one: deprecate `{clause}` itself"
        )),
    }
}

/// Check the `[deprecated]` table: each key names a clause of the contract or one member of
/// it (`known` are the kinded clauses; a clause in `raw` only is one the reading side set
/// aside, whose members it cannot check), each entry has a `reason` and a `remove_after`
/// date, and an optional `replacement`. Every mistake goes to `fail`, at its entry.
pub(super) fn parse_entries(
    entries: &BTreeMap<String, toml::Spanned<toml::Value>>,
    known: ValueOf<'_>,
    raw: &BTreeMap<String, toml::Spanned<toml::Value>>,
    fail: &mut dyn FnMut(std::ops::Range<usize>, String),
) -> BTreeMap<String, Deprecation> {
    let mut out = BTreeMap::new();
    for (key, value) in entries {
        let span = value.span();
        let mut bad = |msg: String| fail(span.clone(), format!("deprecated `{key}`: {msg}"));
        let set_aside = known(clause_of(key)).is_none() && raw.contains_key(clause_of(key));
        if !set_aside {
            if let Err(e) = resolve(known, key) {
                bad(e);
            }
        }
        let Some(table) = value.get_ref().as_table() else {
            bad("must be a table: { reason = \"…\", remove_after = YYYY-MM-DD }".to_string());
            continue;
        };
        for k in table.keys() {
            if !matches!(k.as_str(), "reason" | "replacement" | "remove_after") {
                bad(format!(
                    "unknown key `{k}` (expected `reason`, `replacement`, `remove_after`)"
                ));
            }
        }
        let text = |name: &str| table.get(name).map(|v| v.as_str().map(str::to_string));
        let reason = match text("reason") {
            Some(Some(r)) if !r.trim().is_empty() => Some(r),
            Some(Some(_)) => {
                bad("`reason` is empty: say why the key goes away".to_string());
                None
            }
            Some(None) => {
                bad("`reason` must be a string".to_string());
                None
            }
            None => {
                bad("has no `reason`: say why the key goes away".to_string());
                None
            }
        };
        let replacement = match text("replacement") {
            Some(Some(r)) => Some(r),
            Some(None) => {
                bad("`replacement` must be a string".to_string());
                None
            }
            None => None,
        };
        let remove_after = match table.get("remove_after").map(super::day::toml_day) {
            Some(Ok(d)) => Some(d),
            Some(Err(e)) => {
                bad(format!("remove_after: {e}"));
                None
            }
            None => {
                bad("has no `remove_after`: the last day the key is promised".to_string());
                None
            }
        };
        if let (Some(reason), Some(remove_after)) = (reason, remove_after) {
            out.insert(
                key.clone(),
                Deprecation {
                    key: key.clone(),
                    reason,
                    replacement,
                    remove_after,
                },
            );
        }
    }
    out
}
