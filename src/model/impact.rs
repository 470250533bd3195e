//! Whom a change breaks: per-consumer verdicts from what each consumer says it uses.
//!
//! A consumer declares, per dataset, the clauses and clause keys it relies on (`uses`): `crs`,
//! `required_attributes.class`, `max_null_fraction.name`, `attribute_semantics.class`. A
//! breaking change breaks that consumer only when it touches one of them; a consumer that
//! declares nothing relies on everything, the safe default. Pure: the change list and the
//! consumers' declarations come in, one verdict per consumer goes out.
//!
//! A keyed use is judged on that key alone, by the clause's kind: for a fixed map any
//! difference at the key breaks, for a widening map the key losing its entry or its type, for
//! per-key upper bounds the limit that applies to the key (its own entry, else the clause's
//! single limit) loosening or disappearing. A keyed use of a clause whose value has no keys is
//! read as a use of the whole clause (conservative; `check` reports such an entry).

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::change::{Change, Direction, Verdict};
use super::contract::Contract;
use super::kind::Kind;
use super::value::ClauseValue;

/// One entry of a consumer's `uses`: a clause, or one key of a clause.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Use {
    pub clause: String,
    pub key: Option<String>,
}

impl Use {
    /// Read `clause` or `clause.key`. The clause part must be a clause name
    /// (`[a-z][a-z0-9_]*`), the key non-empty; anything else is refused with the reason.
    pub fn parse(text: &str) -> Result<Use, String> {
        let (clause, key) = match text.split_once('.') {
            Some((c, k)) => (c, Some(k)),
            None => (text, None),
        };
        let mut chars = clause.chars();
        let good = matches!(chars.next(), Some('a'..='z'))
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !good {
            return Err(format!(
                "`{text}` does not start with a clause name ([a-z][a-z0-9_]*)"
            ));
        }
        if key.is_some_and(|k| k.is_empty() || k.chars().any(char::is_control)) {
            return Err(format!("`{text}` names an empty key"));
        }
        Ok(Use {
            clause: clause.to_string(),
            key: key.map(str::to_string),
        })
    }
}

impl fmt::Display for Use {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(k) => write!(f, "{}.{k}", self.clause),
            None => f.write_str(&self.clause),
        }
    }
}

/// A consumer's verdict on a set of changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConsumerVerdict {
    Breaks,
    Unaffected,
}

impl ConsumerVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ConsumerVerdict::Breaks => "breaks",
            ConsumerVerdict::Unaffected => "unaffected",
        }
    }
}

super::display_as!(as_str: ConsumerVerdict);

/// One consumer's verdict, with the breaking changes that touch what it uses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Impact {
    pub consumer: String,
    pub verdict: ConsumerVerdict,
    /// The clause (as in the change table) of each breaking change that touches its uses.
    pub changes: Vec<String>,
    /// The consumer declared no `uses`: it relies on everything.
    pub uses_everything: bool,
}

impl Impact {
    /// The verdict in words, as the text output prints it.
    pub fn verdict_text(&self) -> String {
        match (self.verdict, self.uses_everything) {
            (ConsumerVerdict::Breaks, true) => "breaks (uses everything)".to_string(),
            (v, _) => v.to_string(),
        }
    }
}

/// The clause a change is about, and its key when the change is about one key
/// (`attribute_semantics.class` is clause `attribute_semantics`, key `class`).
fn clause_and_key(change: &Change) -> (&str, Option<&str>) {
    match change.clause.split_once('.') {
        Some((c, k)) => (c, Some(k)),
        None => (change.clause.as_str(), None),
    }
}

/// The value a clause's JSON gives one key: a map's entry; for per-key bounds the key's own
/// limit, else the single limit (`"*"`, or the whole value when it is one number).
fn at_key<'a>(value: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    match value? {
        Value::Object(m) => m.get(key).or_else(|| m.get("*")),
        n @ Value::Number(_) => Some(n),
        _ => None,
    }
}

fn is_keyed(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::Object(_)) | Some(Value::Number(_)))
}

/// Whether a breaking `change` touches `u`. Compatible changes touch nothing.
pub fn touches(u: &Use, change: &Change) -> bool {
    if change.verdict != Verdict::Breaking {
        return false;
    }
    let (clause, change_key) = clause_and_key(change);
    if clause != u.clause {
        return false;
    }
    let Some(key) = &u.key else {
        // The whole clause is used: any breaking change of it (or of one of its keys) breaks.
        return true;
    };
    if let Some(k) = change_key {
        // A change of one key (a meaning) touches a use of that key only.
        return k == key;
    }
    // A change of the enforcement status (relaxed) is about the whole clause.
    if change.direction == Direction::Relaxed {
        return true;
    }
    let (old, new) = (change.old.as_ref(), change.new.as_ref());
    if !is_keyed(old) && !is_keyed(new) {
        // A value without keys: the key cannot be told apart from the clause.
        return true;
    }
    let (a, b) = (at_key(old, key), at_key(new, key));
    match change.kind {
        Kind::Fixed => a != b,
        // A widening map breaks a key that loses its entry or changes its type.
        Kind::Widening => a.is_some() && a != b,
        // Upper bounds: the key's limit loosened, or went away.
        Kind::Narrowing => match (a.and_then(Value::as_f64), b.and_then(Value::as_f64)) {
            (Some(_), None) => true,
            (Some(x), Some(y)) => y > x,
            (None, _) => false,
        },
    }
}

/// One consumer's verdict on `changes`. `uses` is `None` when it declared none: it relies on
/// everything, and every breaking change breaks it.
pub fn impact(consumer: &str, uses: Option<&[Use]>, changes: &[Change]) -> Impact {
    let touching: Vec<String> = changes
        .iter()
        .filter(|c| c.verdict == Verdict::Breaking)
        .filter(|c| uses.is_none_or(|uses| uses.iter().any(|u| touches(u, c))))
        .map(|c| c.clause.clone())
        .collect();
    Impact {
        consumer: consumer.to_string(),
        verdict: if touching.is_empty() {
            ConsumerVerdict::Unaffected
        } else {
            ConsumerVerdict::Breaks
        },
        changes: touching,
        uses_everything: uses.is_none(),
    }
}

/// Every consumer's verdict, in the order given.
pub fn impacts<'a>(
    consumers: impl IntoIterator<Item = (&'a str, Option<&'a [Use]>)>,
    changes: &[Change],
) -> Vec<Impact> {
    consumers
        .into_iter()
        .map(|(name, uses)| impact(name, uses, changes))
        .collect()
}

/// Why a `uses` entry names nothing of a dataset, or `None` when it names something. The
/// clause must be one of the newest contract (`versions` is every version, oldest first); a
/// key must belong to a clause with keys and be a key of it in some version, so a key the
/// newest version dropped is not taken for a typo (it is what the verdict is about), and a
/// single limit for every key (`max_null_fraction = 0.1`) covers any key.
pub fn unknown_use(u: &Use, versions: &[&Contract]) -> Option<String> {
    let newest = versions.last()?;
    let Some(clause) = newest.clauses.get(&u.clause) else {
        if newest.unknown.contains_key(&u.clause) {
            return None;
        }
        return Some(format!(
            "`{u}` names no clause of {}@{} (its clauses: {})",
            newest.dataset,
            newest.version,
            newest
                .clauses
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let key = u.key.as_ref()?;
    let has_key = |v: &ClauseValue| match v {
        ClauseValue::Map(m) | ClauseValue::Meanings(m) => m.contains_key(key),
        ClauseValue::UpperBounds(b) => b.all.is_some() || b.keys.contains_key(key),
        _ => false,
    };
    if !matches!(
        clause.value,
        ClauseValue::Map(_) | ClauseValue::Meanings(_) | ClauseValue::UpperBounds(_)
    ) {
        return Some(format!(
            "`{u}`: clause `{}` of {}@{} has no keys; name the clause alone",
            u.clause, newest.dataset, newest.version
        ));
    }
    let known = versions
        .iter()
        .filter_map(|c| c.clauses.get(&u.clause))
        .any(|c| has_key(&c.value));
    (!known).then(|| {
        format!(
            "`{u}`: `{key}` is not a key of `{}` in any version of {}",
            u.clause, newest.dataset
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ch(clause: &str, kind: Kind, old: Value, new: Value, direction: Direction) -> Change {
        Change {
            clause: clause.to_string(),
            kind,
            old: Some(old),
            new: Some(new),
            direction,
            verdict: super::super::change::verdict(kind, direction),
        }
    }

    fn uses(list: &[&str]) -> Vec<Use> {
        list.iter().map(|u| Use::parse(u).unwrap()).collect()
    }

    #[test]
    fn parses_uses_and_refuses_bad_ones() {
        assert_eq!(
            Use::parse("required_attributes.class").unwrap(),
            Use {
                clause: "required_attributes".into(),
                key: Some("class".into())
            }
        );
        assert_eq!(Use::parse("crs").unwrap().key, None);
        // A key may itself hold a dot: only the first one separates.
        assert_eq!(
            Use::parse("max_null_fraction.a.b").unwrap().key.as_deref(),
            Some("a.b")
        );
        for bad in ["", "Crs", "1crs", "crs.", ".class", "re quired"] {
            assert!(Use::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_fixed_map_breaks_only_the_keys_that_differ() {
        let c = ch(
            "required_attributes",
            Kind::Fixed,
            json!({"id": "int64", "class": "string", "old": "string"}),
            json!({"id": "int64", "class": "string", "new": "int32"}),
            Direction::Changed,
        );
        let t = |u: &str| touches(&Use::parse(u).unwrap(), &c);
        assert!(t("required_attributes"));
        assert!(!t("required_attributes.class"));
        assert!(!t("required_attributes.id"));
        assert!(t("required_attributes.old"), "a removed key");
        assert!(t("required_attributes.new"), "an added key of a fixed map");
        assert!(!t("crs"));
    }

    #[test]
    fn a_widening_map_breaks_a_key_that_loses_its_entry_or_type() {
        let c = ch(
            "optional_attributes",
            Kind::Widening,
            json!({"name": "string", "ref": "string"}),
            json!({"name": "int64", "extra": "string"}),
            Direction::Shrank,
        );
        let t = |u: &str| touches(&Use::parse(u).unwrap(), &c);
        assert!(t("optional_attributes.name"));
        assert!(t("optional_attributes.ref"));
        assert!(
            !t("optional_attributes.extra"),
            "a new optional entry breaks nobody"
        );
        assert!(!t("optional_attributes.other"));
    }

    #[test]
    fn upper_bounds_break_a_key_whose_limit_loosens_or_goes() {
        let c = ch(
            "max_null_fraction",
            Kind::Narrowing,
            json!({"*": 0.1, "name": 0.2, "ref": 0.5}),
            json!({"name": 0.3, "ref": 0.4}),
            Direction::Loosened,
        );
        let t = |u: &str| touches(&Use::parse(u).unwrap(), &c);
        assert!(t("max_null_fraction.name"), "0.2 -> 0.3 loosens");
        assert!(!t("max_null_fraction.ref"), "0.5 -> 0.4 tightens");
        assert!(
            t("max_null_fraction.class"),
            "the single limit 0.1 went away"
        );
        // A single number applies to every key.
        let c = ch(
            "max_null_fraction",
            Kind::Narrowing,
            json!(0.1),
            json!({"name": 0.1, "*": 0.2}),
            Direction::Loosened,
        );
        let t = |u: &str| touches(&Use::parse(u).unwrap(), &c);
        assert!(!t("max_null_fraction.name"));
        assert!(t("max_null_fraction.class"));
    }

    #[test]
    fn meanings_are_one_change_per_key() {
        let c = ch(
            "attribute_semantics.class",
            Kind::Fixed,
            json!("road class"),
            json!("road category"),
            Direction::Changed,
        );
        let t = |u: &str| touches(&Use::parse(u).unwrap(), &c);
        assert!(t("attribute_semantics"));
        assert!(t("attribute_semantics.class"));
        assert!(!t("attribute_semantics.name"));
    }

    #[test]
    fn a_relaxed_clause_and_an_unkeyed_value_touch_every_key() {
        let c = ch(
            "metric_tolerances",
            Kind::Narrowing,
            json!({"rmse": 1.0}),
            json!({"rmse": 1.0}),
            Direction::Relaxed,
        );
        assert!(touches(&Use::parse("metric_tolerances.other").unwrap(), &c));
        let c = ch(
            "crs",
            Kind::Fixed,
            json!("EPSG:4326"),
            json!("EPSG:27700"),
            Direction::Changed,
        );
        assert!(touches(&Use::parse("crs.x").unwrap(), &c));
    }

    #[test]
    fn a_use_must_name_a_clause_of_the_newest_version() {
        use crate::model::{parse_contract, KindTable, Strictness};
        let v1 = parse_contract(
            "1.0.0",
            "dataset = \"roads\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
             [clauses]\ncrs = \"EPSG:4326\"\nunits = \"metre\"\n\
             required_attributes = { class = \"string\", gone = \"int64\" }\n\
             max_null_fraction = 0.1\n",
            &KindTable::builtin(),
            Strictness::Writing,
        )
        .unwrap();
        let v2 = parse_contract(
            "2.0.0",
            "dataset = \"roads\"\nversion = \"2.0.0\"\nsupersedes = \"1.0.0\"\n\
             valid_from = 2026-06-01\nsunset = 2026-12-01\n\
             [clauses]\ncrs = \"EPSG:27700\"\n\
             required_attributes = { class = \"string\" }\nmax_null_fraction = { name = 0.1 }\n",
            &KindTable::builtin(),
            Strictness::Writing,
        )
        .unwrap();
        let versions = [&v1, &v2];
        let check = |u: &str| unknown_use(&Use::parse(u).unwrap(), &versions);
        assert_eq!(check("crs"), None);
        assert_eq!(check("required_attributes.class"), None);
        assert_eq!(
            check("required_attributes.gone"),
            None,
            "dropped by 2.0.0, not a typo"
        );
        assert_eq!(
            check("max_null_fraction.anything"),
            None,
            "1.0.0 limits every key"
        );
        assert!(check("units")
            .unwrap()
            .contains("names no clause of roads@2.0.0"));
        assert!(check("crss").is_some());
        assert!(check("required_attributes.clas")
            .unwrap()
            .contains("not a key"));
        assert!(check("crs.x").unwrap().contains("has no keys"));
    }

    #[test]
    fn verdicts_per_consumer() {
        let changes = vec![
            ch(
                "crs",
                Kind::Fixed,
                json!("EPSG:4326"),
                json!("EPSG:27700"),
                Direction::Changed,
            ),
            ch(
                "envelope",
                Kind::Widening,
                json!([0, 0, 1, 1]),
                json!([0, 0, 2, 2]),
                Direction::Grew,
            ),
        ];
        let a = uses(&["crs"]);
        let b = uses(&["envelope", "required_attributes.class"]);
        let got = impacts(
            [
                ("a", Some(a.as_slice())),
                ("b", Some(b.as_slice())),
                ("c", None),
                ("d", Some(&[][..])),
            ],
            &changes,
        );
        let v: Vec<(&str, ConsumerVerdict, Vec<String>, String)> = got
            .iter()
            .map(|i| {
                (
                    i.consumer.as_str(),
                    i.verdict,
                    i.changes.clone(),
                    i.verdict_text(),
                )
            })
            .collect();
        assert_eq!(
            v,
            vec![
                (
                    "a",
                    ConsumerVerdict::Breaks,
                    vec!["crs".into()],
                    "breaks".into()
                ),
                (
                    "b",
                    ConsumerVerdict::Unaffected,
                    vec![],
                    "unaffected".into()
                ),
                (
                    "c",
                    ConsumerVerdict::Breaks,
                    vec!["crs".into()],
                    "breaks (uses everything)".into()
                ),
                (
                    "d",
                    ConsumerVerdict::Unaffected,
                    vec![],
                    "unaffected".into()
                ),
            ]
        );
        // Nothing breaking: even a consumer relying on everything is unaffected.
        let i = impact("c", None, &changes[1..]);
        assert_eq!(i.verdict, ConsumerVerdict::Unaffected);
        assert_eq!(i.verdict_text(), "unaffected");
    }
}
