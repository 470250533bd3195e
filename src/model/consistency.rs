//! The consistency proofs behind `contracts check` that need no git: recorded verdicts
//! against the ones re-derived from the contract files, and "this file only grew at its end".
//! (The proofs that walk the commits are `store::proofs`.)

use std::collections::BTreeSet;

use super::change::{Direction, Verdict};
use super::config::Policy;
use super::contract::Contract;
use chrono::NaiveDate;

use super::history::{Entry, History, SunsetRecord, WindowRecord};
use super::kind::Kind;
use super::proposal::{check_recorded_sunset, check_step, check_two_live, records};
use super::sunset::{check_move, windows_outside_policy};
use super::window::{lines, SunsetMove, SunsetSource};

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
        let mut differs = |message: String| {
            problems.push(Problem {
                version: Some(version.clone()),
                message,
            })
        };
        for r in recorded.iter().filter(|r| !expected.contains(r)) {
            differs(format!(
                "the record of {version} says {}, which the contract files do not give",
                describe(r)
            ));
        }
        for e in expected.iter().filter(|e| !recorded.contains(e)) {
            differs(format!(
                "the contract files give {} for {version}, but no record says so",
                describe(e)
            ));
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
    problems.extend(audit_sunsets(contracts, history, policy));
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
    history.sunset.iter().map(move_of).collect()
}

fn move_of(s: &SunsetRecord) -> SunsetMove {
    SunsetMove {
        line: s.line,
        to: s.to,
        at: s.at,
        rationale: s.rationale.clone(),
        forced: s.forced,
    }
}

/// Replay the history in file order against the sunset rules `propose` and `sunset` apply,
/// with the lines as they stood before each record: a new major's `sunset` must agree with a
/// sunset already recorded for the line it retires; a move must keep the rules (those `--force`
/// overrides only when the record says `forced`). Then every effective window must keep the
/// policy, however it was reached. Only "not in the past" is not replayed: a record's time is
/// the wall clock, while the command judged by its `--today`.
pub fn audit_sunsets(contracts: &[Contract], history: &History, policy: &Policy) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut known: Vec<&Contract> = Vec::new();
    let mut moves: Vec<SunsetMove> = Vec::new();
    for entry in &history.order {
        match *entry {
            Entry::Change(i) => {
                let to = &history.change[i].to;
                if known.iter().any(|c| &c.version.to_string() == to) {
                    continue;
                }
                let Some(next) = contracts.iter().find(|c| &c.version.to_string() == to) else {
                    continue;
                };
                if let Some(prev) = known.iter().max_by(|a, b| a.version.cmp(&b.version)) {
                    let before = lines(&known, &moves);
                    if let Some(r) = check_recorded_sunset(&before, prev, next) {
                        problems.push(Problem {
                            version: Some(to.clone()),
                            message: r.to_string(),
                        });
                    }
                }
                known.push(next);
            }
            Entry::Sunset(i) => {
                let record = &history.sunset[i];
                let before = lines(&known, &moves);
                let current = before
                    .iter()
                    .find(|l| l.major == record.line)
                    .and_then(|l| l.sunset);
                if record.from != current {
                    let show =
                        |d: Option<NaiveDate>| d.map_or("none".to_string(), |d| d.to_string());
                    problems.push(Problem {
                        version: None,
                        message: format!(
                            "a [[sunset]] record of line {} says it moved from {}, but the line's sunset was {} at that point",
                            record.line,
                            show(record.from),
                            show(current)
                        ),
                    });
                }
                let check = check_move(&before, record.line, record.to, None, policy);
                let broken = check
                    .refusals
                    .iter()
                    .chain(check.needs_force.iter().filter(|_| !record.forced));
                for r in broken {
                    let force = if r.overridable() {
                        " without --force"
                    } else {
                        ""
                    };
                    problems.push(Problem {
                        version: None,
                        message: format!(
                            "line {}'s sunset was set to {}{force}: {r}",
                            record.line, record.to
                        ),
                    });
                }
                moves.push(move_of(record));
            }
        }
    }
    let all: Vec<&Contract> = contracts.iter().collect();
    let effective = lines(&all, &moves_of(history));
    for w in windows_outside_policy(&effective, policy) {
        let from_event = effective.iter().any(|l| {
            l.major == w.old_line && matches!(l.source, Some(SunsetSource::SunsetEvent { .. }))
        });
        // A window a contract declares is judged by that contract's own step.
        if from_event {
            problems.push(Problem {
                version: None,
                message: format!(
                    "the window of line {} (from {}, line {} opens, to its sunset {}) is {} days, outside the policy's {}..{}",
                    w.old_line,
                    w.opens,
                    w.new_line,
                    w.sunset,
                    w.days(),
                    policy.min_window_days,
                    policy.max_window_days
                ),
            });
        }
    }
    problems
}

/// The `[[key]]` headers of a text, in file order: the order its records were appended in.
fn record_headers(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let inner = l.strip_prefix("[[")?;
            let end = inner.find("]]")?;
            Some(inner[..end].trim())
        })
        .collect()
}

/// Whether `new` only appended to `old`: byte prefix, or else — so that a re-indented but
/// equal record is no false alarm — every top-level array of tables in `old` is a prefix of
/// the same array in `new`, every other key is unchanged, and the records of `old` still come
/// first in the file (a record inserted before them, even of a kind `old` did not have, is a
/// rewrite: `check` replays the records in file order). `Err` says what changed.
pub fn appended_only(old: &str, new: &str) -> Result<(), String> {
    if new.starts_with(old) {
        return Ok(());
    }
    let (headers_before, headers_after) = (record_headers(old), record_headers(new));
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
    if !headers_after.starts_with(&headers_before) {
        let i = headers_before
            .iter()
            .zip(&headers_after)
            .position(|(a, b)| a != b)
            .unwrap_or(headers_before.len().min(headers_after.len()));
        return Err(match headers_after.get(i) {
            Some(key) if headers_after.len() > headers_before.len() => format!(
                "a `[[{key}]]` record was inserted before existing records (record {} of the file); records are only appended at the end",
                i + 1
            ),
            _ => format!("the records were reordered or removed from record {} on", i + 1),
        });
    }
    Ok(())
}
