//! Lines, live contracts and deprecation windows (docs/src/reference/contract.md).
//!
//! A line is every version with one major number. It opens on its first version's
//! `valid_from` and closes on its sunset, which the next major's first version declares and a
//! `[[sunset]]` record may move. Everything is a function of the contracts, the recorded sunset
//! moves and a day passed in by the caller.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use semver::Version;
use serde::Serialize;

use super::contract::Contract;

/// One major line of a dataset.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    pub major: u64,
    /// The first version's `valid_from`: the day the line becomes live.
    pub opens: NaiveDate,
    /// The line's effective sunset: the day it stops being live (exclusive); `None` while
    /// neither a successor nor a `[[sunset]]` event sets one. The one value every command uses.
    pub sunset: Option<NaiveDate>,
    /// Where the effective sunset comes from.
    pub source: Option<SunsetSource>,
    /// Versions of the line, oldest first.
    pub versions: Vec<Version>,
}

/// Where a line stands on a day: not opened yet, live, or past its sunset. Computed here,
/// once, for every command that shows it (`status`, `site`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineState {
    Upcoming,
    Live,
    Retired,
}

impl LineState {
    pub fn as_str(self) -> &'static str {
        match self {
            LineState::Upcoming => "upcoming",
            LineState::Live => "live",
            LineState::Retired => "retired",
        }
    }
}

impl std::fmt::Display for LineState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where one contract version stands on a day, for a document that publishes a single version
/// (`export odcs`): not valid yet, live, deprecated (its line's window is open, or a later
/// version of its line is current) or retired (its line is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VersionState {
    Upcoming,
    Live,
    Deprecated,
    Retired,
}

impl VersionState {
    pub fn as_str(self) -> &'static str {
        match self {
            VersionState::Upcoming => "upcoming",
            VersionState::Live => "live",
            VersionState::Deprecated => "deprecated",
            VersionState::Retired => "retired",
        }
    }
}

impl std::fmt::Display for VersionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The state on `day` of `version`, valid from `valid_from`, among the dataset's `lines`;
/// `current` is its line's current version on `day`.
pub fn version_state(
    version: &Version,
    valid_from: NaiveDate,
    lines: &[Line],
    current: Option<&Version>,
    day: NaiveDate,
) -> VersionState {
    let line = lines.iter().find(|l| l.major == version.major);
    match line {
        _ if valid_from > day => VersionState::Upcoming,
        Some(l) if l.state(day) == LineState::Retired => VersionState::Retired,
        // An old line is deprecated once its successor is live: the window is open.
        Some(l) if l.sunset.is_some() && l.superseded(lines, day) => VersionState::Deprecated,
        _ if current.is_some_and(|cur| cur != version) => VersionState::Deprecated,
        _ => VersionState::Live,
    }
}

impl Line {
    /// The line's state on `day`.
    pub fn state(&self, day: NaiveDate) -> LineState {
        if self.is_live(day) {
            LineState::Live
        } else if self.opens > day {
            LineState::Upcoming
        } else {
            LineState::Retired
        }
    }

    pub fn is_live(&self, day: NaiveDate) -> bool {
        self.opens <= day && self.sunset.is_none_or(|s| day < s)
    }

    /// Whether a later line of `lines` has opened by `day`: this line's deprecation window is
    /// open (or, past its sunset, over).
    pub fn superseded(&self, lines: &[Line], day: NaiveDate) -> bool {
        lines.iter().any(|n| n.major > self.major && n.opens <= day)
    }

    pub fn newest(&self) -> &Version {
        self.versions
            .last()
            .expect("a line is built from at least one version")
    }

    /// The last day the line is live, if it has a sunset.
    pub fn last_day(&self) -> Option<NaiveDate> {
        self.sunset.and_then(|s| s.pred_opt())
    }
}

/// A deprecation window: from the new major's `valid_from` to the old line's sunset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Window {
    pub old_line: u64,
    pub new_line: u64,
    pub opens: NaiveDate,
    pub sunset: NaiveDate,
}

impl Window {
    pub fn days(&self) -> i64 {
        (self.sunset - self.opens).num_days()
    }
}

/// Where a line's effective sunset comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SunsetSource {
    /// Declared by `sunset` in the first version of the next line.
    Contract { version: Version },
    /// Set or moved by `contracts sunset` (a `[[sunset]]` event).
    SunsetEvent {
        at: DateTime<Utc>,
        rationale: String,
        forced: bool,
    },
}

/// A recorded move of a line's sunset (`[[sunset]]` in the history).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SunsetMove {
    pub line: u64,
    pub to: NaiveDate,
    pub at: DateTime<Utc>,
    pub rationale: String,
    pub forced: bool,
}

/// Build the lines of one dataset from its contracts (any order; at least the first version of
/// each line) and its sunset moves (in record order: the last move of a line wins). Which
/// version of a line is current on a day depends on every version's `valid_from`; the store
/// answers that (`Store::current`), reading only as many versions as it needs.
pub fn lines(contracts: &[&Contract], moves: &[SunsetMove]) -> Vec<Line> {
    let mut by_major: BTreeMap<u64, Vec<&Contract>> = BTreeMap::new();
    for c in contracts {
        by_major.entry(c.version.major).or_default().push(c);
    }
    let mut out: Vec<Line> = by_major
        .into_values()
        .map(|mut vs| {
            vs.sort_by(|a, b| a.version.cmp(&b.version));
            Line {
                major: vs[0].version.major,
                opens: vs[0].valid_from,
                sunset: None,
                source: None,
                versions: vs.iter().map(|c| c.version.clone()).collect(),
            }
        })
        .collect();
    // The sunset of a line is declared by the first version of the line after it.
    let declared: Vec<Option<(NaiveDate, Version)>> = out
        .iter()
        .skip(1)
        .map(|next| {
            contracts
                .iter()
                .find(|c| c.version.major == next.major && c.version == next.versions[0])
                .and_then(|c| c.sunset.map(|s| (s, c.version.clone())))
        })
        .collect();
    for (line, declared) in out.iter_mut().zip(declared) {
        if let Some((sunset, version)) = declared {
            line.sunset = Some(sunset);
            line.source = Some(SunsetSource::Contract { version });
        }
    }
    // An event wins over the declaration, and a later event over an earlier one. `propose`
    // refuses a new major whose declared sunset disagrees with an event recorded before it,
    // so an event recorded before its successor existed and the successor's `sunset` agree.
    for m in moves {
        apply(&mut out, m);
    }
    out
}

/// Apply an accepted move to the lines (what [`lines`] gives with the move appended to the
/// history); `sunset` decides whether a move is accepted.
pub fn apply(lines: &mut [Line], m: &SunsetMove) {
    if let Some(line) = lines.iter_mut().find(|l| l.major == m.line) {
        line.sunset = Some(m.to);
        line.source = Some(SunsetSource::SunsetEvent {
            at: m.at,
            rationale: m.rationale.clone(),
            forced: m.forced,
        });
    }
}

/// The windows between consecutive lines.
pub fn windows(lines: &[Line]) -> Vec<Window> {
    lines
        .windows(2)
        .filter_map(|pair| {
            pair[0].sunset.map(|sunset| Window {
                old_line: pair[0].major,
                new_line: pair[1].major,
                opens: pair[1].opens,
                sunset,
            })
        })
        .collect()
}

/// The first day on which more than two lines are live, if any. Lines are live on intervals,
/// so it is enough to test the day each line opens.
pub fn first_day_over_two_live(lines: &[Line]) -> Option<(NaiveDate, Vec<u64>)> {
    let mut days: Vec<NaiveDate> = lines.iter().map(|l| l.opens).collect();
    days.sort();
    days.into_iter().find_map(|day| {
        let live: Vec<u64> = lines
            .iter()
            .filter(|l| l.is_live(day))
            .map(|l| l.major)
            .collect();
        (live.len() > 2).then_some((day, live))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn a_line_is_upcoming_before_it_opens_live_until_its_sunset_and_retired_from_it() {
        let line = Line {
            major: 1,
            opens: day("2026-03-01"),
            sunset: Some(day("2027-05-01")),
            source: None,
            versions: vec![semver::Version::new(1, 0, 0)],
        };
        assert_eq!(line.state(day("2026-02-28")), LineState::Upcoming);
        assert_eq!(line.state(day("2026-03-01")), LineState::Live);
        // The sunset is exclusive: its day is the first the line is no longer live.
        assert_eq!(line.state(day("2027-04-30")), LineState::Live);
        assert_eq!(line.state(day("2027-05-01")), LineState::Retired);
        let open_ended = Line {
            sunset: None,
            ..line
        };
        assert_eq!(open_ended.state(day("2099-01-01")), LineState::Live);
    }

    #[test]
    fn a_version_is_deprecated_from_the_day_its_successor_line_opens_or_a_newer_one_is_current() {
        let v = semver::Version::new;
        let old = Line {
            major: 1,
            opens: day("2026-01-01"),
            sunset: Some(day("2027-01-01")),
            source: None,
            versions: vec![v(1, 0, 0), v(1, 1, 0)],
        };
        let new = Line {
            major: 2,
            opens: day("2026-06-01"),
            sunset: None,
            source: None,
            versions: vec![v(2, 0, 0)],
        };
        let lines = [old.clone(), new];
        let at = |version: &semver::Version, from: &str, current: &semver::Version, on: &str| {
            version_state(version, day(from), &lines, Some(current), day(on))
        };
        let (v1, v11, v2) = (v(1, 0, 0), v(1, 1, 0), v(2, 0, 0));
        assert_eq!(
            at(&v2, "2026-06-01", &v2, "2026-05-31"),
            VersionState::Upcoming
        );
        assert_eq!(
            at(&v11, "2026-02-01", &v11, "2026-05-31"),
            VersionState::Live
        );
        // Superseded within its line.
        assert_eq!(
            at(&v1, "2026-01-01", &v11, "2026-05-31"),
            VersionState::Deprecated
        );
        // The window is open: the whole old line is deprecated, its current version too.
        assert!(old.superseded(&lines, day("2026-06-01")));
        assert!(!old.superseded(&lines, day("2026-05-31")));
        assert_eq!(
            at(&v11, "2026-02-01", &v11, "2026-06-01"),
            VersionState::Deprecated
        );
        assert_eq!(at(&v2, "2026-06-01", &v2, "2026-06-01"), VersionState::Live);
        assert_eq!(
            at(&v11, "2026-02-01", &v11, "2027-01-01"),
            VersionState::Retired
        );
        // The words the JSON and the documents carry.
        assert_eq!(
            serde_json::to_value([VersionState::Deprecated, VersionState::Upcoming]).unwrap(),
            serde_json::json!(["deprecated", "upcoming"])
        );
        assert_eq!(LineState::Retired.to_string(), "retired");
    }
}
