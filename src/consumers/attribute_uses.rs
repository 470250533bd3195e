//! Declared against observed, attribute by attribute (`consumers DATASET --attributes`,
//! `diff --attributes`): for each consumer, whether its use of each attribute of a dataset
//! rests on its `uses` in consumers.toml, on reads seen reading it in the lookback, or on
//! both; and the two gaps between them worth a producer's attention, a declared use that the
//! reads never showed and a read of an attribute the declaration leaves out. Pure: the
//! contracts, the declarations and what the reads showed come in, the judgement goes out, and
//! both commands only print it.
//!
//! The same rule as [`super::attributes`] holds: a read whose source cannot tell which
//! attributes it touched is never taken for a read of none. So "declared, not seen since" is
//! said only of a consumer every read of which told its attributes, and an attribute neither
//! declared nor seen is `unknown`, not absent, while some read could not tell.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, FixedOffset, NaiveDate};
use serde::Serialize;
use serde_json::Value;

use super::attributes::declares;
use super::reads::SeenColumns;
use super::standing::{Standing, Status};
use crate::model::deprecation::{attribute_of, members};
use crate::model::{Change, Contract, Use};

/// One attribute a dataset's contracts promise, with the clauses that promise it under its
/// name (`required_attributes`, `attribute_semantics`, …): a `uses` entry of any of them
/// declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetAttribute {
    pub name: String,
    pub clauses: Vec<String>,
}

/// The attributes that `contracts` promise (the newest version of each line, say), in name
/// order, each with every clause keyed by attribute that names it.
pub fn dataset_attributes<'a>(
    contracts: impl IntoIterator<Item = &'a Contract>,
) -> Vec<DatasetAttribute> {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for contract in contracts {
        for (clause, c) in &contract.clauses {
            // Only the clauses keyed by attribute: a member of `permitted_geometry` is no
            // attribute.
            let keyed = |member: &&str| attribute_of(&format!("{clause}.{member}")).is_some();
            for member in members(&c.value)
                .unwrap_or_default()
                .into_iter()
                .filter(keyed)
            {
                let clauses = by_name.entry(member.to_string()).or_default();
                if !clauses.contains(clause) {
                    clauses.push(clause.clone());
                }
            }
        }
    }
    by_name
        .into_iter()
        .map(|(name, clauses)| DatasetAttribute { name, clauses })
        .collect()
}

/// Where a consumer's use of one attribute is known from: the one word set of both commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttributeEvidence {
    /// Declared in `uses` and seen read in the lookback.
    Both,
    /// Declared in `uses`; no read in the lookback was seen reading it.
    Declared,
    /// Seen read in the lookback; `uses` does not name it (or the consumer has no `uses`).
    Observed,
    /// Neither declared nor seen, but some of the consumer's reads cannot tell which
    /// attributes they read: it may read it.
    Unknown,
}

impl AttributeEvidence {
    pub const ALL: [AttributeEvidence; 4] = [
        AttributeEvidence::Both,
        AttributeEvidence::Declared,
        AttributeEvidence::Observed,
        AttributeEvidence::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AttributeEvidence::Both => "both",
            AttributeEvidence::Declared => "declared",
            AttributeEvidence::Observed => "observed",
            AttributeEvidence::Unknown => "unknown",
        }
    }
}

crate::model::display_as!(as_str: AttributeEvidence);

/// A gap between a consumer's declaration and its reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Gap {
    /// Declared, and not seen read since `since` (the lookback's first day), though every read
    /// of the consumer told its attributes.
    DeclaredNotSeen { since: NaiveDate },
    /// Seen read, and its `uses` (which it has) does not name it.
    NotInUses,
}

/// How one consumer uses one attribute.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttributeUse {
    pub attribute: String,
    pub evidence: AttributeEvidence,
    /// The newest read seen reading it (null when none was).
    #[serde(serialize_with = "crate::model::wire::instant")]
    pub last_read: Option<DateTime<FixedOffset>>,
    /// The gap between declaration and reads, if there is one.
    pub gap: Option<Gap>,
}

/// One consumer's attributes: every attribute it declares, is seen reading, or may read
/// unseen; an attribute it is shown not to read, or that nothing says it reads, is left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConsumerAttributes {
    pub consumer: String,
    pub team: Option<String>,
    /// Whether it has `uses` for the dataset (without them, nothing is declared).
    pub declares: bool,
    /// Its reads of the dataset in the lookback.
    pub reads: u64,
    /// Of those, the reads whose source cannot tell which attributes they read.
    pub unknown_reads: u64,
    pub attributes: Vec<AttributeUse>,
}

/// What the scan is worth: the first day of the lookback, and whether a consumption source
/// is blind (its reads, if any, are missing, so no read's absence proves anything).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookback {
    pub since: NaiveDate,
    pub blind: bool,
}

/// Judge one consumer: `uses` its declaration for the dataset (`None`: none), `seen` what
/// those of its reads (the standing's) whose source could tell showed.
pub fn consumer_attributes(
    standing: &Standing,
    attributes: &[DatasetAttribute],
    uses: Option<&[Use]>,
    seen: Option<&SeenColumns>,
    lookback: Lookback,
) -> ConsumerAttributes {
    let reads = standing.reads;
    let since = lookback.since;
    // The reads that told are those of the scan; the standing may count fewer, as in
    // `Evidence::of`.
    let told = seen.map_or(0, |s| s.told.min(reads));
    let unknown_reads = reads - told;
    // Under a blind source, reads may be missing: an attribute no read showed may still be
    // read, as when a read cannot tell.
    let cannot_tell = unknown_reads > 0 || lookback.blind;
    let judged = attributes
        .iter()
        .filter_map(|a| {
            let declared = uses.is_some_and(|u| {
                a.clauses
                    .iter()
                    .any(|c| declares(u, &format!("{c}.{}", a.name)))
            });
            let last_read = seen.and_then(|s| s.last_read_of(&a.name));
            let (evidence, gap) = match (declared, last_read.is_some()) {
                (true, true) => (AttributeEvidence::Both, None),
                (true, false) => (
                    AttributeEvidence::Declared,
                    (reads > 0 && !cannot_tell).then_some(Gap::DeclaredNotSeen { since }),
                ),
                (false, true) => (
                    AttributeEvidence::Observed,
                    uses.is_some().then_some(Gap::NotInUses),
                ),
                (false, false) if cannot_tell => (AttributeEvidence::Unknown, None),
                (false, false) => return None,
            };
            Some(AttributeUse {
                attribute: a.name.clone(),
                evidence,
                last_read,
                gap,
            })
        })
        .collect();
    ConsumerAttributes {
        consumer: standing.consumer.clone(),
        team: standing.team.clone(),
        declares: uses.is_some(),
        reads,
        unknown_reads,
        attributes: judged,
    }
}

/// Whether a consumer's standing is judged at all: registered and subscribed to the dataset,
/// as `can-remove` judges them.
pub fn judged(standing: &Standing) -> bool {
    !matches!(standing.status, Status::Unsubscribed | Status::Unknown)
}

/// Every subscribed consumer's attributes (see [`judged`]), in the standings' order, leaving
/// out a consumer of which nothing is said (no `uses`, no read).
pub fn of_consumers<'a>(
    standings: &[Standing],
    attributes: &[DatasetAttribute],
    uses_of: impl Fn(&str) -> Option<&'a [Use]>,
    seen: &BTreeMap<String, SeenColumns>,
    lookback: Lookback,
) -> Vec<ConsumerAttributes> {
    standings
        .iter()
        .filter(|s| judged(s))
        .map(|s| {
            consumer_attributes(
                s,
                attributes,
                uses_of(&s.consumer),
                seen.get(&s.consumer),
                lookback,
            )
        })
        .filter(|c| !c.attributes.is_empty())
        .collect()
}

/// The attributes `changes` touch: the key of a change of one key (`attribute_semantics.class`),
/// else each key of a clause keyed by attribute whose entry differs between the old and the
/// new value (a map's entry, a set's member, a per-key bound). A single bound for every
/// attribute names none.
pub fn changed_attributes(changes: &[Change]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for change in changes {
        if let Some(attribute) = attribute_of(&change.clause) {
            out.insert(attribute.to_string());
            continue;
        }
        if attribute_of(&format!("{}._", change.clause)).is_none() {
            continue;
        }
        let entries = |v: &Option<Value>| -> BTreeMap<String, Value> {
            match v {
                Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                Some(Value::Array(items)) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|k| (k.to_string(), Value::Bool(true)))
                    .collect(),
                _ => BTreeMap::new(),
            }
        };
        let (old, new) = (entries(&change.old), entries(&change.new));
        for k in old.keys().chain(new.keys()) {
            if k != "*" && old.get(k) != new.get(k) {
                out.insert(k.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standing(reads: u64) -> Standing {
        crate::consumers::attributes::tests::standing(Status::Current, reads)
    }

    fn lookback(blind: bool) -> Lookback {
        Lookback {
            since: NaiveDate::from_ymd_opt(2026, 8, 1).unwrap(),
            blind,
        }
    }

    fn attrs() -> Vec<DatasetAttribute> {
        ["iso_a3", "name", "pop_est"]
            .map(|n| DatasetAttribute {
                name: n.into(),
                clauses: vec!["optional_attributes".into()],
            })
            .into()
    }

    fn words(c: &ConsumerAttributes) -> Vec<(String, String, Option<Gap>)> {
        c.attributes
            .iter()
            .map(|a| (a.attribute.clone(), a.evidence.to_string(), a.gap.clone()))
            .collect()
    }

    fn row(a: &str, e: &str, gap: Option<Gap>) -> (String, String, Option<Gap>) {
        (a.into(), e.into(), gap)
    }

    #[test]
    fn declared_and_observed_meet_attribute_by_attribute() {
        let at = DateTime::parse_from_rfc3339("2026-11-01T00:00:00Z").unwrap();
        let since = lookback(false);
        let uses = [
            Use::parse("optional_attributes.name").unwrap(),
            Use::parse("optional_attributes.iso_a3").unwrap(),
        ];
        let seen = SeenColumns::reading(at, &["NAME", "pop_est"]);
        // One read, and it told: iso_a3 declared and not seen is a gap; pop_est read and not
        // declared is one.
        let c = consumer_attributes(&standing(1), &attrs(), Some(&uses), Some(&seen), since);
        assert_eq!(
            words(&c),
            [
                row(
                    "iso_a3",
                    "declared",
                    Some(Gap::DeclaredNotSeen {
                        since: "2026-08-01".parse().unwrap()
                    })
                ),
                row("name", "both", None),
                row("pop_est", "observed", Some(Gap::NotInUses)),
            ]
        );
        assert_eq!(c.attributes[1].last_read, Some(at));
        // A second read that could not tell: iso_a3 may have been read by it.
        let c = consumer_attributes(&standing(2), &attrs(), Some(&uses), Some(&seen), since);
        assert_eq!(words(&c)[0], row("iso_a3", "declared", None));
        assert_eq!(c.unknown_reads, 1);
        // So does a blind source, which may hold reads the scan never saw.
        let c = consumer_attributes(
            &standing(1),
            &attrs(),
            Some(&uses),
            Some(&seen),
            lookback(true),
        );
        assert_eq!(words(&c)[0], row("iso_a3", "declared", None));
        let c = consumer_attributes(&standing(1), &attrs(), None, Some(&seen), lookback(true));
        assert_eq!(words(&c)[0], row("iso_a3", "unknown", None));
    }

    #[test]
    fn reads_that_cannot_tell_leave_unknown_never_none() {
        let since = lookback(false);
        let c = consumer_attributes(&standing(3), &attrs(), None, None, since);
        assert!(c
            .attributes
            .iter()
            .all(|a| a.evidence == AttributeEvidence::Unknown));
        assert_eq!(c.attributes.len(), 3);
        // No read at all: nothing is said of any attribute, and no declaration is a gap.
        let uses = [Use::parse("optional_attributes").unwrap()];
        let c = consumer_attributes(&standing(0), &attrs(), Some(&uses), None, since);
        assert!(c
            .attributes
            .iter()
            .all(|a| a.evidence == AttributeEvidence::Declared && a.gap.is_none()));
        // Without `uses`, a read attribute is observed but no gap: it declared nothing.
        let at = DateTime::parse_from_rfc3339("2026-11-01T00:00:00Z").unwrap();
        let seen = SeenColumns::reading(at, &["*"]);
        let c = consumer_attributes(&standing(1), &attrs(), None, Some(&seen), since);
        assert!(c
            .attributes
            .iter()
            .all(|a| a.evidence == AttributeEvidence::Observed && a.gap.is_none()));
    }

    #[test]
    fn a_change_names_the_attributes_whose_entries_differ() {
        use crate::model::{Direction, Kind, Verdict};
        let change = |clause: &str, old: Value, new: Value| Change {
            clause: clause.into(),
            kind: Kind::Widening,
            old: Some(old).filter(|v| !v.is_null()),
            new: Some(new).filter(|v| !v.is_null()),
            direction: Direction::Changed,
            verdict: Verdict::Breaking,
        };
        let changed = changed_attributes(&[
            // A map: pop_est retyped, name unchanged, gdp added.
            change(
                "optional_attributes",
                serde_json::json!({"pop_est": "float64", "name": "string"}),
                serde_json::json!({"pop_est": "int64", "name": "string", "gdp": "int64"}),
            ),
            // One meaning; a set (no attribute clause) and a single bound name none.
            change(
                "attribute_semantics.class",
                serde_json::json!("a"),
                serde_json::json!("b"),
            ),
            change(
                "permitted_geometry",
                serde_json::json!(["Point"]),
                serde_json::json!(["Point", "Polygon"]),
            ),
            change(
                "max_null_fraction",
                serde_json::json!(0.1),
                serde_json::json!(0.2),
            ),
            // A clause removed names each attribute it had.
            change(
                "required_attributes",
                serde_json::json!({"iso_a3": "string"}),
                Value::Null,
            ),
        ]);
        let want: BTreeSet<String> = ["class", "gdp", "iso_a3", "pop_est"]
            .map(String::from)
            .into();
        assert_eq!(changed, want);
    }
}
