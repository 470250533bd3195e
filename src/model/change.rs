//! The change derivation of docs/src/reference/contract.md: for each clause, old vs new gives a
//! direction, and kind plus direction gives a verdict. Nothing here is a judgement call; that is
//! the point.

use semver::Version;
use serde::{Deserialize, Serialize};

use super::contract::Contract;
use super::kind::{Kind, Shape};
use super::value::ClauseValue;

/// How a clause moved between two versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Grew,
    Shrank,
    Tightened,
    Loosened,
    Changed,
    Added,
    Removed,
    Enforced,
    Relaxed,
    /// A clause key announced to go away (`[deprecated]` entry added or changed).
    Deprecated,
    /// A deprecation withdrawn while its key stays.
    Undeprecated,
    /// No clause changed (a patch). Only in a whole-contract change record.
    Unchanged,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Grew => "grew",
            Direction::Shrank => "shrank",
            Direction::Tightened => "tightened",
            Direction::Loosened => "loosened",
            Direction::Changed => "changed",
            Direction::Added => "added",
            Direction::Removed => "removed",
            Direction::Enforced => "enforced",
            Direction::Relaxed => "relaxed",
            Direction::Deprecated => "deprecated",
            Direction::Undeprecated => "undeprecated",
            Direction::Unchanged => "unchanged",
        }
    }
}

super::display_as!(as_str: Direction);

/// Whether a consumer written against the old version survives the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Compatible,
    Breaking,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Compatible => "compatible",
            Verdict::Breaking => "breaking",
        }
    }
}

super::display_as!(as_str: Verdict);

/// The verdict table of docs/src/reference/contract.md, as one function of kind and direction.
pub fn verdict(kind: Kind, direction: Direction) -> Verdict {
    use Direction as D;
    match (kind, direction) {
        // A deprecation promises the key until its day: the removal is the breaking change.
        (
            _,
            D::Grew
            | D::Tightened
            | D::Added
            | D::Enforced
            | D::Unchanged
            | D::Deprecated
            | D::Undeprecated,
        ) => Verdict::Compatible,
        (_, D::Shrank | D::Loosened | D::Changed | D::Relaxed) => Verdict::Breaking,
        // A missing value is permissive: losing a limit loosens, losing a promised area
        // only widens.
        (Kind::Widening, D::Removed) => Verdict::Compatible,
        (Kind::Narrowing | Kind::Fixed, D::Removed) => Verdict::Breaking,
    }
}

/// One changed clause between two versions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The clause name; `attribute_semantics.<key>` for one meaning.
    pub clause: String,
    pub kind: Kind,
    pub old: Option<serde_json::Value>,
    pub new: Option<serde_json::Value>,
    pub direction: Direction,
    pub verdict: Verdict,
}

/// A semantic version bump, ordered by size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bump {
    /// Same version (only for `diff` of a file with itself).
    None,
    Patch,
    Minor,
    Major,
}

impl Bump {
    pub fn as_str(self) -> &'static str {
        match self {
            Bump::None => "none",
            Bump::Patch => "patch",
            Bump::Minor => "minor",
            Bump::Major => "major",
        }
    }

    /// The bump from `old` to `new` (assumed `new > old`). The major number is read literally,
    /// also below 1.0.0: a contract's promise does not get weaker for being young.
    pub fn between(old: &Version, new: &Version) -> Bump {
        if new.major != old.major {
            Bump::Major
        } else if new.minor != old.minor {
            Bump::Minor
        } else if new.patch != old.patch || new.pre != old.pre {
            Bump::Patch
        } else {
            Bump::None
        }
    }
}

super::display_as!(as_str: Bump);

/// Every change between two versions, and what it demands of the version number.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangeSet {
    pub changes: Vec<Change>,
    pub required: Bump,
}

impl ChangeSet {
    pub fn breaking(&self) -> impl Iterator<Item = &Change> {
        self.changes
            .iter()
            .filter(|c| c.verdict == Verdict::Breaking)
    }
}

fn change(
    clause: String,
    kind: Kind,
    old: Option<&ClauseValue>,
    new: Option<&ClauseValue>,
    direction: Direction,
) -> Change {
    Change {
        clause,
        kind,
        old: old.map(ClauseValue::to_json),
        new: new.map(ClauseValue::to_json),
        direction,
        verdict: verdict(kind, direction),
    }
}

/// A CRS clause's value with every CRS in its canonical name, so that `OGC:CRS84` →
/// `EPSG:4326` is no change (the one equivalence rule of [`super::crs`]).
fn crs_canonical(name: &str, v: &ClauseValue) -> ClauseValue {
    use super::crs::canonical_text;
    match (name, v) {
        ("crs", ClauseValue::Value(toml::Value::String(s))) => {
            ClauseValue::Value(toml::Value::String(canonical_text(s)))
        }
        ("permitted_crs", ClauseValue::Set(set)) => {
            ClauseValue::Set(set.iter().map(|s| canonical_text(s)).collect())
        }
        _ => v.clone(),
    }
}

/// Derive every clause change from `old` to `new`. Both must have been parsed with the same
/// kind table; the result is in clause-name order.
pub fn derive_changes(old: &Contract, new: &Contract) -> ChangeSet {
    let mut changes = Vec::new();
    let names: std::collections::BTreeSet<&String> =
        old.clauses.keys().chain(new.clauses.keys()).collect();
    for name in names {
        let (a, b) = (old.clauses.get(name), new.clauses.get(name));
        let spec = &b.or(a).expect("name comes from one of the two maps").spec;
        let kind = spec.kind;
        match (a, b) {
            (None, Some(b)) => changes.push(change(
                name.clone(),
                kind,
                None,
                Some(&b.value),
                Direction::Added,
            )),
            (Some(a), None) => changes.push(change(
                name.clone(),
                kind,
                Some(&a.value),
                None,
                Direction::Removed,
            )),
            (Some(a), Some(b)) => {
                let (va, vb) = (crs_canonical(name, &a.value), crs_canonical(name, &b.value));
                let mut directions = Vec::new();
                if spec.shape == Shape::Meanings {
                    meanings(name, kind, &a.value, &b.value, &mut changes);
                } else if va != vb {
                    directions.push(match kind {
                        Kind::Widening if vb.contains(&va) => Direction::Grew,
                        Kind::Widening => Direction::Shrank,
                        Kind::Narrowing if va.contains(&vb) => Direction::Tightened,
                        Kind::Narrowing => Direction::Loosened,
                        Kind::Fixed => Direction::Changed,
                    });
                }
                // The enforcement status is a change of its own: a value can stay while the
                // promise behind it starts (or stops) failing releases.
                match (old.is_advisory(name), new.is_advisory(name)) {
                    (true, false) => directions.push(Direction::Enforced),
                    (false, true) => directions.push(Direction::Relaxed),
                    _ => {}
                }
                for direction in directions {
                    changes.push(change(
                        name.clone(),
                        kind,
                        Some(&a.value),
                        Some(&b.value),
                        direction,
                    ));
                }
            }
            (None, None) => {}
        }
    }
    changes.extend(deprecation_changes(old, new));
    let required = if changes.iter().any(|c| c.verdict == Verdict::Breaking) {
        Bump::Major
    } else if !changes.is_empty() {
        Bump::Minor
    } else {
        Bump::Patch
    };
    ChangeSet { changes, required }
}

/// `attribute_semantics`: each key is its own fixed clause, so a new meaning is an addition
/// and a changed or dropped meaning is a breach of that one promise.
fn meanings(name: &str, kind: Kind, a: &ClauseValue, b: &ClauseValue, out: &mut Vec<Change>) {
    let (ClauseValue::Meanings(a), ClauseValue::Meanings(b)) = (a, b) else {
        return;
    };
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        let (old, new) = (a.get(key), b.get(key));
        let direction = match (old, new) {
            (None, Some(_)) => Direction::Added,
            (Some(_), None) => Direction::Removed,
            (Some(x), Some(y)) if x != y => Direction::Changed,
            _ => continue,
        };
        let text = |v: Option<&String>| v.map(|s| serde_json::Value::String(s.clone()));
        out.push(Change {
            clause: format!("{name}.{key}"),
            kind,
            old: text(old),
            new: text(new),
            direction,
            verdict: verdict(kind, direction),
        });
    }
}

/// The deprecation rows of a step: `deprecated` for an entry added or changed, `undeprecated`
/// for one withdrawn while its key stays (a withdrawal is never silent). An entry that goes
/// with its key is no row of its own: the key's removal is, breaking by its clause's kind.
pub fn deprecation_changes(old: &Contract, new: &Contract) -> Vec<Change> {
    let mut out = Vec::new();
    let kind_of = |key: &str| {
        let clause = super::deprecation::clause_of(key);
        new.clauses
            .get(clause)
            .or_else(|| old.clauses.get(clause))
            .map(|c| c.spec.kind)
    };
    let keys: std::collections::BTreeSet<&String> =
        old.deprecated.keys().chain(new.deprecated.keys()).collect();
    for key in keys {
        let (a, b) = (old.deprecated.get(key), new.deprecated.get(key));
        let direction = match (a, b) {
            (None, Some(_)) => Direction::Deprecated,
            (Some(x), Some(y)) if x != y => Direction::Deprecated,
            (Some(_), None) if new.promises(key) => Direction::Undeprecated,
            _ => continue,
        };
        let Some(kind) = kind_of(key) else { continue };
        out.push(Change {
            clause: key.clone(),
            kind,
            old: a.map(super::deprecation::Deprecation::to_json),
            new: b.map(super::deprecation::Deprecation::to_json),
            direction,
            verdict: verdict(kind, direction),
        });
    }
    out
}
