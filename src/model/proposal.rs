//! The rules a new contract version must pass (docs/src/commands/propose.md), shared by `propose`,
//! which refuses a draft that breaks one, and `check`, which finds a committed version that does.

use std::fmt;

use chrono::{DateTime, Utc};
use semver::Version;

use super::change::{derive_changes, Bump, Change, ChangeSet, Direction, Verdict};
use super::config::{NewClauses, Policy};
use super::contract::Contract;
use super::history::{ChangeRecord, WindowRecord, WHOLE_CONTRACT};
use super::value::ClauseValue;
use super::window::{first_day_over_two_live, lines, Line, SunsetMove, SunsetSource};

/// Why a version may not follow the one before it.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The draft's version is already in the store: published contracts never change, so this
    /// is the one reason given, whatever else the draft would be compared with.
    AlreadyPublished {
        version: Version,
        /// The day its change record was written, and the commit that wrote it, when known.
        on: Option<chrono::NaiveDate>,
        commit: Option<String>,
    },
    /// The description is still the placeholder `new --from` writes ("TODO: …"): a published
    /// contract can never be edited, so it would stay so for good.
    Placeholder {
        description: String,
    },
    FirstHasSupersedes {
        supersedes: Version,
    },
    FirstHasSunset,
    NotNewer {
        version: Version,
        newest: Version,
    },
    WrongSupersedes {
        version: Version,
        supersedes: Option<Version>,
        newest: Version,
    },
    InsufficientBump {
        from: Version,
        to: Version,
        actual: Bump,
        required: Bump,
        /// Each change that demands more than the actual bump.
        demanding: Vec<Change>,
    },
    MissingSunset {
        version: Version,
    },
    SunsetOnMinor {
        version: Version,
    },
    WindowOutsidePolicy {
        version: Version,
        days: i64,
        min: i64,
        max: i64,
    },
    ValidFromBackwards {
        version: Version,
        valid_from: chrono::NaiveDate,
        previous: Version,
        previous_valid_from: chrono::NaiveDate,
    },
    ThreeLive {
        day: chrono::NaiveDate,
        lines: Vec<u64>,
    },
    /// A new major declares a sunset for the line it retires that differs from the one a
    /// `[[sunset]]` event already recorded: a line has one sunset.
    SunsetDisagrees {
        version: Version,
        line: u64,
        declared: chrono::NaiveDate,
        recorded: chrono::NaiveDate,
        recorded_at: DateTime<Utc>,
    },
    NotAdvisory {
        version: Version,
        clause: String,
    },
    /// An envelope crossing the antimeridian wider than 180° that the contract does not list
    /// in `wide_antimeridian`: most often minx and maxx swapped.
    WideCrossing {
        version: Version,
        clause: String,
        minx: f64,
        maxx: f64,
        width: f64,
    },
    NoKind {
        clause: String,
        /// The known clause it is nearest to, when it looks like a typo of one.
        nearest: Option<String>,
    },
    /// A deprecated key removed by a version that takes effect on or before its
    /// `remove_after`, the last day it is promised (lifted by `propose --force`).
    RemovedBeforeDeadline {
        version: Version,
        key: String,
        remove_after: chrono::NaiveDate,
        valid_from: chrono::NaiveDate,
    },
}

fn value(v: &Option<serde_json::Value>) -> String {
    match v {
        None => "(absent)".to_string(),
        Some(v) => v.to_string(),
    }
}

impl Refusal {
    /// The refusal in words, where an insufficient bump says each change that demands more on
    /// a line of its own, with its old and new values as `values` puts them (`Display` prints
    /// both whole; `propose` names what breaks). Any other refusal is its `Display`.
    pub fn text_with(&self, values: impl Fn(&Change) -> String) -> String {
        let Refusal::InsufficientBump {
            from,
            to,
            actual,
            required,
            demanding,
        } = self
        else {
            return self.to_string();
        };
        let mut s = format!(
            "{from} -> {to} is a {actual} bump, but the changes require a {required} bump:"
        );
        for c in demanding {
            s += &format!(
                "\n    {} ({} {}, {}): {}",
                c.clause,
                c.kind,
                c.direction,
                c.verdict,
                values(c)
            );
        }
        s
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::AlreadyPublished {
                version,
                on,
                commit,
            } => {
                write!(f, "{version} is already published")?;
                match (on, commit) {
                    (Some(on), Some(c)) => write!(f, " (on {on}, commit {c})")?,
                    (Some(on), None) => write!(f, " (on {on})")?,
                    (None, Some(c)) => write!(f, " (commit {c})")?,
                    (None, None) => {}
                }
                write!(
                    f,
                    "; published contracts never change: propose a new version instead"
                )
            }
            Refusal::Placeholder { description } => write!(
                f,
                "the description is a placeholder (\"{description}\"): say what the dataset is, \
                 since a published contract never changes (or pass --allow-placeholder)"
            ),
            Refusal::FirstHasSupersedes { supersedes } => write!(
                f,
                "the first version of a dataset supersedes nothing, but it names `{supersedes}`"
            ),
            Refusal::FirstHasSunset => write!(
                f,
                "the first version of a dataset has no earlier line to sunset; remove `sunset`"
            ),
            Refusal::NotNewer { version, newest } => write!(
                f,
                "version {version} is not greater than the newest version {newest}"
            ),
            Refusal::WrongSupersedes {
                version,
                supersedes,
                newest,
            } => match supersedes {
                Some(s) => write!(
                    f,
                    "{version} supersedes `{s}`, but the newest version is {newest}"
                ),
                None => write!(
                    f,
                    "{version} has no `supersedes`; it must name the newest version, {newest}"
                ),
            },
            Refusal::InsufficientBump { .. } => f.write_str(
                &self.text_with(|c| format!("{} -> {}", value(&c.old), value(&c.new))),
            ),
            Refusal::MissingSunset { version } => write!(
                f,
                "{version} is a major bump and must carry `sunset`, the day the previous line stops"
            ),
            Refusal::SunsetOnMinor { version } => write!(
                f,
                "{version} is not a major bump; only the first version of a new line declares a sunset \
                 (use `contracts sunset` to move one)"
            ),
            Refusal::WindowOutsidePolicy {
                version,
                days,
                min,
                max,
            } => write!(
                f,
                "{version}: the window from valid_from to sunset is {days} days, outside the policy's {min}..{max}"
            ),
            Refusal::ValidFromBackwards {
                version,
                valid_from,
                previous,
                previous_valid_from,
            } => write!(
                f,
                "{version} becomes valid on {valid_from}, before {previous} ({previous_valid_from})"
            ),
            Refusal::ThreeLive { day, lines } => write!(
                f,
                "lines {} would all be live on {day}: more than two live contracts is not a window, it is drift",
                lines
                    .iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Refusal::SunsetDisagrees {
                version,
                line,
                declared,
                recorded,
                recorded_at,
            } => write!(
                f,
                "{version} declares sunset = {declared} for line {line}, but line {line}'s sunset is already \
                 {recorded} (a `contracts sunset` event of {}); a line has one sunset: declare \
                 sunset = {recorded}, or move it first with `contracts sunset`",
                recorded_at.format("%Y-%m-%d %H:%M UTC")
            ),
            Refusal::WideCrossing {
                version,
                clause,
                minx,
                maxx,
                width,
            } => write!(
                f,
                "{version}: `{clause}` has minx {minx} > maxx {maxx}, so it crosses the antimeridian and is \
                 {width:.1}° wide — were minx and maxx swapped? A box that wide on purpose is listed in \
                 wide_antimeridian = [\"{clause}\"]"
            ),
            Refusal::NoKind {
                clause,
                nearest: Some(near),
            } => write!(
                f,
                "clause `{clause}` is not a known clause: did you mean `{near}`? (A new custom \
                 clause must first be declared in contracts.toml [kinds].)"
            ),
            Refusal::NoKind {
                clause,
                nearest: None,
            } => write!(
                f,
                "clause `{clause}` has no kind: declare it in contracts.toml [kinds] before using it, \
                 or its change rule will be decided under pressure"
            ),
            Refusal::NotAdvisory { version, clause } => write!(
                f,
                "{version} adds clause `{clause}` enforced; policy.new_clauses = \"advisory\" requires \
                 it in `advisory` first (a later minor version may enforce it)"
            ),
            Refusal::RemovedBeforeDeadline {
                version,
                key,
                remove_after,
                valid_from,
            } => write!(
                f,
                "{version} removes `{key}` from {valid_from}, but its deprecation promises it \
                 through {remove_after}: take effect on {} or later, or give --force",
                *remove_after + chrono::Days::new(1)
            ),
        }
    }
}

/// The changes that demand more than `actual`.
pub fn demanding(changes: &[Change], actual: Bump) -> Vec<Change> {
    changes
        .iter()
        .filter(|c| {
            (actual < Bump::Major && c.verdict == Verdict::Breaking) || actual < Bump::Minor
        })
        .cloned()
        .collect()
}

/// Whether a description still holds a placeholder: a `TODO` anywhere in it.
pub fn is_placeholder(description: &str) -> bool {
    description.contains("TODO")
}

/// What `next` demands, following `prev` (the version before it, if any).
pub struct Step {
    pub changes: ChangeSet,
    pub bump: Bump,
    pub refusals: Vec<Refusal>,
}

/// The rules between one version and the next: supersedes, bump, sunset, window, new clauses.
pub fn check_step(prev: Option<&Contract>, next: &Contract, policy: &Policy) -> Step {
    let mut refusals = wide_crossings(next);
    let Some(prev) = prev else {
        if let Some(s) = &next.supersedes {
            refusals.push(Refusal::FirstHasSupersedes {
                supersedes: s.clone(),
            });
        }
        if next.sunset.is_some() {
            refusals.push(Refusal::FirstHasSunset);
        }
        return Step {
            changes: ChangeSet {
                changes: Vec::new(),
                required: Bump::Patch,
            },
            bump: Bump::Major,
            refusals,
        };
    };
    if next.version <= prev.version {
        refusals.push(Refusal::NotNewer {
            version: next.version.clone(),
            newest: prev.version.clone(),
        });
    }
    if next.supersedes.as_ref() != Some(&prev.version) {
        refusals.push(Refusal::WrongSupersedes {
            version: next.version.clone(),
            supersedes: next.supersedes.clone(),
            newest: prev.version.clone(),
        });
    }
    if next.valid_from < prev.valid_from {
        refusals.push(Refusal::ValidFromBackwards {
            version: next.version.clone(),
            valid_from: next.valid_from,
            previous: prev.version.clone(),
            previous_valid_from: prev.valid_from,
        });
    }
    let changes = derive_changes(prev, next);
    let bump = Bump::between(&prev.version, &next.version);
    if bump < changes.required {
        refusals.push(Refusal::InsufficientBump {
            from: prev.version.clone(),
            to: next.version.clone(),
            actual: bump,
            required: changes.required,
            demanding: demanding(&changes.changes, bump),
        });
    }
    match (bump == Bump::Major, next.sunset) {
        (true, None) => refusals.push(Refusal::MissingSunset {
            version: next.version.clone(),
        }),
        (true, Some(sunset)) => {
            let days = (sunset - next.valid_from).num_days();
            if days < policy.min_window_days || days > policy.max_window_days {
                refusals.push(Refusal::WindowOutsidePolicy {
                    version: next.version.clone(),
                    days,
                    min: policy.min_window_days,
                    max: policy.max_window_days,
                });
            }
        }
        (false, Some(_)) => refusals.push(Refusal::SunsetOnMinor {
            version: next.version.clone(),
        }),
        (false, None) => {}
    }
    if policy.new_clauses == NewClauses::Advisory {
        for c in &changes.changes {
            if c.direction == Direction::Added
                && next.clauses.contains_key(&c.clause)
                && !next.is_advisory(&c.clause)
            {
                refusals.push(Refusal::NotAdvisory {
                    version: next.version.clone(),
                    clause: c.clause.clone(),
                });
            }
        }
    }
    Step {
        changes,
        bump,
        refusals,
    }
}

/// A new major's `sunset` against the effective sunset of the line it retires, in `before`
/// (the lines without the draft). Only a `[[sunset]]` event can have set one — the draft is
/// the line's first successor — and the two must agree, so the line keeps one value.
pub fn check_recorded_sunset(before: &[Line], prev: &Contract, next: &Contract) -> Option<Refusal> {
    if next.version.major <= prev.version.major {
        return None;
    }
    let declared = next.sunset?;
    let retiring = before.iter().find(|l| l.major == prev.version.major)?;
    match (&retiring.source, retiring.sunset) {
        (Some(SunsetSource::SunsetEvent { at, .. }), Some(recorded)) if recorded != declared => {
            Some(Refusal::SunsetDisagrees {
                version: next.version.clone(),
                line: retiring.major,
                declared,
                recorded,
                recorded_at: *at,
            })
        }
        _ => None,
    }
}

/// The envelopes of `c` crossing the antimeridian wider than 180° that it does not mean.
pub fn wide_crossings(c: &Contract) -> Vec<Refusal> {
    c.clauses
        .iter()
        .filter_map(|(name, clause)| match &clause.value {
            ClauseValue::Bbox(e) if e.is_wide_crossing() && !c.wide_antimeridian.contains(name) => {
                Some(Refusal::WideCrossing {
                    version: c.version.clone(),
                    clause: name.clone(),
                    minx: e.minx,
                    maxx: e.maxx,
                    width: e.width(),
                })
            }
            _ => None,
        })
        .collect()
}

/// The two-live cap over all versions of a dataset (with a draft among them, for `propose`).
pub fn check_two_live(all: &[&Contract], moves: &[SunsetMove]) -> Option<Refusal> {
    first_day_over_two_live(&lines(all, moves))
        .map(|(day, lines)| Refusal::ThreeLive { day, lines })
}

/// Every reason `propose` gives for refusing `draft` after `existing` (the dataset's published
/// versions, oldest first) and its recorded sunset `moves`: a clause with no kind, the
/// description placeholder (unless `allow_placeholder`), the rules between the newest version
/// and the draft, a sunset that disagrees with a recorded move, a third live line. `review`
/// asks the same question of a draft in a pull request, so both give the same answer.
pub fn judge(
    existing: &[Contract],
    moves: &[SunsetMove],
    draft: &Contract,
    config: &super::config::Config,
    allow_placeholder: bool,
) -> (Step, Vec<Refusal>) {
    let prev = existing.last();
    let step = check_step(prev, draft, &config.policy);
    let mut refusals: Vec<Refusal> = draft
        .unknown
        .keys()
        .map(|clause| Refusal::NoKind {
            clause: clause.clone(),
            nearest: super::suggest::nearest(clause, config.kinds.iter().map(|k| k.name.as_str()))
                .map(str::to_string),
        })
        .collect();
    if let Some(d) = &draft.description {
        if !allow_placeholder && is_placeholder(d) {
            refusals.push(Refusal::Placeholder {
                description: d.clone(),
            });
        }
    }
    refusals.extend(step.refusals.iter().cloned());
    let mut all: Vec<&Contract> = existing.iter().collect();
    if let Some(prev) = prev {
        if let Some(r) = check_recorded_sunset(&lines(&all, moves), prev, draft) {
            refusals.push(r);
        }
    }
    all.push(draft);
    if let Some(r) = check_two_live(&all, moves) {
        refusals.push(r);
    }
    (step, refusals)
}

/// The change records a proposal appends: one per changed clause, or one whole-contract
/// record for a first version (`added`) or a patch (`unchanged`).
pub fn records(
    prev: Option<&Contract>,
    next: &Contract,
    changes: &ChangeSet,
    bump: Bump,
    at: DateTime<Utc>,
    rationale: &str,
) -> Vec<ChangeRecord> {
    let window = match (bump, next.sunset) {
        (Bump::Major, Some(sunset)) if prev.is_some() => Some(WindowRecord {
            opens: next.valid_from,
            sunset,
        }),
        _ => None,
    };
    let base = |clause: String, kind, direction, verdict| ChangeRecord {
        at,
        from: prev.map(|p| p.version.to_string()),
        to: next.version.to_string(),
        clause,
        kind,
        direction,
        verdict,
        window,
        rationale: rationale.to_string(),
    };
    if prev.is_none() {
        return vec![base(
            WHOLE_CONTRACT.to_string(),
            None,
            Direction::Added,
            Verdict::Compatible,
        )];
    }
    if changes.changes.is_empty() {
        return vec![base(
            WHOLE_CONTRACT.to_string(),
            None,
            Direction::Unchanged,
            Verdict::Compatible,
        )];
    }
    changes
        .changes
        .iter()
        .map(|c| base(c.clause.clone(), Some(c.kind), c.direction, c.verdict))
        .collect()
}

/// A deprecated key that a version removes while it is still promised.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EarlyRemoval {
    pub key: String,
    pub remove_after: chrono::NaiveDate,
    pub valid_from: chrono::NaiveDate,
}

/// Every key `old` deprecates that `new` no longer promises although `new` takes effect on or
/// before the deprecation's `remove_after`: `propose` refuses each unless forced.
pub fn early_removals(old: &Contract, new: &Contract) -> Vec<EarlyRemoval> {
    old.deprecated
        .values()
        .filter(|d| !new.promises(&d.key) && new.valid_from <= d.remove_after)
        .map(|d| EarlyRemoval {
            key: d.key.clone(),
            remove_after: d.remove_after,
            valid_from: new.valid_from,
        })
        .collect()
}
