//! The proofs behind `contracts check` that need no git: recorded verdicts against the ones
//! re-derived from the contract files, and "this file only grew at its end".

use std::collections::BTreeSet;

use super::change::{Direction, Verdict};
use super::config::Policy;
use super::contract::Contract;
use super::history::{History, WindowRecord};
use super::kind::Kind;
use super::proposal::{check_step, check_two_live, records};
use super::window::SunsetMove;

/// A problem with one dataset's versions or history, before git names who caused it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The version the problem is about, when there is one (to find the commit that added it).
    pub version: Option<String>,
    pub message: String,
}

/// The facts of a record that are derived, not chosen: everything but time and rationale.
type Derived = (
    Option<String>,
    String,
    Option<Kind>,
    Direction,
    Verdict,
    Option<WindowRecord>,
);

fn describe(d: &Derived) -> String {
    let kind = d.2.map(|k| format!("{k}, ")).unwrap_or_default();
    let window =
        d.5.map(|w| format!(", window {}..{}", w.opens, w.sunset))
            .unwrap_or_default();
    format!("`{}` ({kind}{}, {}{window})", d.1, d.3, d.4)
}

/// Re-derive every step of a dataset's versions (sorted oldest first) and compare with its
/// history. Returns every problem found.
pub fn audit_dataset(contracts: &[Contract], history: &History, policy: &Policy) -> Vec<Problem> {
    let mut problems = Vec::new();
    let versions: BTreeSet<String> = contracts.iter().map(|c| c.version.to_string()).collect();
    for (i, next) in contracts.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| &contracts[j]);
        let version = next.version.to_string();
        let step = check_step(prev, next, policy);
        for r in &step.refusals {
            problems.push(Problem {
                version: Some(version.clone()),
                message: r.to_string(),
            });
        }
        let expected: Vec<Derived> = records(
            prev,
            next,
            &step.changes,
            step.bump,
            chrono::DateTime::UNIX_EPOCH,
            "",
        )
        .into_iter()
        .map(|r| (r.from, r.clause, r.kind, r.direction, r.verdict, r.window))
        .collect();
        let recorded: Vec<Derived> = history
            .change
            .iter()
            .filter(|r| r.to == version)
            .map(|r| {
                (
                    r.from.clone(),
                    r.clause.clone(),
                    r.kind,
                    r.direction,
                    r.verdict,
                    r.window,
                )
            })
            .collect();
        if recorded.is_empty() {
            problems.push(Problem {
                version: Some(version.clone()),
                message: format!(
                    "contract {version} has no change records: it was added without `contracts propose`"
                ),
            });
            continue;
        }
        for r in &recorded {
            if !expected.contains(r) {
                problems.push(Problem {
                    version: Some(version.clone()),
                    message: format!(
                        "the record of {version} says {}, which the contract files do not give",
                        describe(r)
                    ),
                });
            }
        }
        for e in &expected {
            if !recorded.contains(e) {
                problems.push(Problem {
                    version: Some(version.clone()),
                    message: format!(
                        "the contract files give {} for {version}, but no record says so",
                        describe(e)
                    ),
                });
            }
        }
    }
    for r in &history.change {
        if !versions.contains(&r.to) {
            problems.push(Problem {
                version: None,
                message: format!(
                    "a change record names version {}, which has no contract file",
                    r.to
                ),
            });
        }
        if r.rationale.trim().is_empty() {
            problems.push(Problem {
                version: Some(r.to.clone()),
                message: format!("the record of `{}` in {} has no rationale", r.clause, r.to),
            });
        }
    }
    for s in &history.sunset {
        if let Some(from) = s.from {
            if s.to < from && !s.forced {
                problems.push(Problem {
                    version: None,
                    message: format!(
                        "line {}'s sunset was moved earlier ({from} -> {}) without --force",
                        s.line, s.to
                    ),
                });
            }
        }
    }
    let refs: Vec<&Contract> = contracts.iter().collect();
    if let Some(r) = check_two_live(&refs, &moves_of(history)) {
        problems.push(Problem {
            version: None,
            message: r.to_string(),
        });
    }
    problems
}

/// The sunset moves a history records, in order.
pub fn moves_of(history: &History) -> Vec<SunsetMove> {
    history
        .sunset
        .iter()
        .map(|s| SunsetMove {
            line: s.line,
            to: s.to,
        })
        .collect()
}

/// Whether `new` only appended to `old`: byte prefix, or else — so that a re-indented but
/// equal record is no false alarm — every top-level array of tables in `old` is a prefix of
/// the same array in `new` and every other key is unchanged. `Err` says what changed.
pub fn appended_only(old: &str, new: &str) -> Result<(), String> {
    if new.starts_with(old) {
        return Ok(());
    }
    let parse = |t: &str, which: &str| {
        t.parse::<toml::Table>().map_err(|e| {
            format!(
                "the {which} version does not parse: {}",
                e.message().trim_end()
            )
        })
    };
    let (old, new) = (parse(old, "earlier")?, parse(new, "later")?);
    for (key, before) in &old {
        let Some(after) = new.get(key) else {
            return Err(format!("`{key}` was removed"));
        };
        match (before, after) {
            (toml::Value::Array(b), toml::Value::Array(a)) => {
                if a.len() < b.len() {
                    return Err(format!(
                        "`[[{key}]]` shrank from {} to {} records",
                        b.len(),
                        a.len()
                    ));
                }
                if let Some(i) = b.iter().zip(a).position(|(x, y)| x != y) {
                    return Err(format!("`[[{key}]]` record {} was rewritten", i + 1));
                }
            }
            _ if before != after => return Err(format!("`{key}` was changed")),
            _ => {}
        }
    }
    Ok(())
}
