//! Where each consumer of a dataset stands, from its newest read (docs/src/commands/consumers.md).
//! Pure: the lines, the registry and the newest reads come in; a sorted list of standings goes out.

use std::collections::HashMap;

use chrono::{DateTime, FixedOffset, NaiveDate};
use semver::Version;
use serde::Serialize;

use super::reads::NewestRead;
use super::registry::{ConsumerKind, Registry};
use crate::model::Line;

/// How a consumer stands towards the lines of a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Registered; its newest read is of a line older than the newest line: it still has to
    /// move. These are the consumers `notify` writes to once the line has a sunset.
    StillOn,
    /// Registered; its newest read is of the newest line, and it read an older line earlier in
    /// the lookback: seen moving.
    Migrated,
    /// Registered; every read in the lookback is of the newest line.
    Current,
    /// Registered, but no read in the lookback: listed apart, never dropped, because a
    /// consumer that reads monthly is still a consumer.
    Silent,
    /// Registered, subscribed to other datasets but not to this one, and reads it: it declared
    /// it does not rely on this dataset, so it is not told about it and does not hold a line.
    Unsubscribed,
    /// Reads under a name that is not in `consumers.toml`: nobody can be told.
    Unknown,
    /// Registered; its newest read names a version the store does not have (a typo, a
    /// pre-release build, another dataset's number). Never a migration: its line is that of
    /// its newest read of a version the store has, and `notify` writes about that line.
    UnknownVersion,
    /// Registered with `kind = "automation"` (a CI robot, a monitor) and reads a line: its
    /// reads never hold a line back from retiring. Set by [`exempt`], never by [`classify`]:
    /// `notify` still tells it.
    Automation,
    /// Registered, and its reads of its line in the lookback are fewer than `[consumption]
    /// min_reads` or fall on fewer than `min_days` days: it does not hold the line back.
    /// Set by [`exempt`], never by [`classify`]: `notify` still tells it.
    Incidental,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::StillOn => "still-on",
            Status::Migrated => "migrated",
            Status::Current => "current",
            Status::Silent => "silent",
            Status::Unsubscribed => "unsubscribed",
            Status::Unknown => "unknown",
            Status::UnknownVersion => "unknown-version",
            Status::Automation => "automation",
            Status::Incidental => "incidental",
        }
    }

    /// Whether a consumer with this status holds the line of its newest read: it is
    /// registered, subscribed, and reads it in earnest.
    pub fn holds(self) -> bool {
        matches!(
            self,
            Status::StillOn | Status::Migrated | Status::Current | Status::UnknownVersion
        )
    }
}

crate::model::display_as!(as_str: Status);

/// One consumer of one dataset.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standing {
    pub consumer: String,
    pub status: Status,
    pub team: Option<String>,
    /// The line of the newest read; `None` for a silent consumer. For `unknown-version`, the
    /// line of the newest read of a version the store has (`None` when there is none).
    pub line: Option<u64>,
    /// The contract version of the newest read (for `unknown-version`, of the newest read of
    /// a version the store has).
    #[serde(serialize_with = "crate::model::wire::version")]
    pub version: Option<Version>,
    /// For `unknown-version`: the version read that the store does not have.
    #[serde(serialize_with = "crate::model::wire::version")]
    pub unknown_version: Option<Version>,
    #[serde(serialize_with = "crate::model::wire::instant")]
    pub last_read: Option<DateTime<FixedOffset>>,
    /// Reads counted in the lookback.
    pub reads: u64,
    /// No read in the last `[consumption] stale_after_days` (see [`mark_stale`]).
    pub stale: bool,
    /// Its reads of the line of its newest read in the lookback, where they were counted
    /// (see [`exempt`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<LineUse>,
}

/// A consumer's reads of a line in the lookback, by consumer name and line.
pub type UsageOf<'a> = &'a dyn Fn(&str, u64) -> LineUse;

/// A consumer's reads of one line in the lookback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LineUse {
    pub reads: u64,
    /// Distinct UTC days with a read.
    pub days: u64,
}

pub use crate::model::config::Thresholds;

/// What the thresholds say of a reader (the type is the config's, `[consumption]`).
impl Thresholds {
    /// Whether they can call anyone incidental: a consumer whose newest read is on a line
    /// has at least one read on one day there.
    pub fn bite(&self) -> bool {
        self.min_reads > 1 || self.min_days > 1
    }

    pub fn incidental(&self, u: LineUse) -> bool {
        u.reads < self.min_reads || u.days < self.min_days
    }
}

/// Mark the readers that do not hold their line back from retiring: automations, and, given
/// `usage` (a consumer's reads of a line in the lookback; `None` when they were not counted),
/// those under the thresholds. Only consumers that would hold a line change status. The
/// registry comes in for each consumer's kind.
pub fn exempt(
    standings: &mut [Standing],
    registry: &Registry,
    thresholds: Thresholds,
    usage: Option<UsageOf<'_>>,
) {
    for s in standings.iter_mut().filter(|s| s.status.holds()) {
        let Some(line) = s.line else { continue };
        if let Some(usage) = usage {
            s.usage = Some(usage(&s.consumer, line));
        }
        let automation = registry
            .get(&s.consumer)
            .is_some_and(|c| c.kind == ConsumerKind::Automation);
        if automation {
            s.status = Status::Automation;
        } else if s.usage.is_some_and(|u| thresholds.incidental(u)) {
            s.status = Status::Incidental;
        }
    }
    standings.sort_by(|a, b| (a.status, a.line, &a.consumer).cmp(&(b.status, b.line, &b.consumer)));
}

/// The line after a line, as the retirement gate sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Successor {
    pub line: u64,
    pub opens: NaiveDate,
    /// Live on the day asked about.
    pub live: bool,
}

/// The answer to "can the producer stop publishing this line?".
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    pub can_retire: bool,
    /// The first line after it that is not retired on the day (`None`: there is none).
    pub successor: Option<Successor>,
    /// The producer discontinues the dataset (`--no-successor`): no successor is needed.
    pub no_successor: bool,
    /// Why the successor rule says no, in words; `None` when it says yes.
    pub blocked_by_successor: Option<String>,
    /// The subscribed consumers whose newest read is on the line and who count.
    pub holders: Vec<Standing>,
    /// Readers of the line the gate does not count: automations and incidental readers,
    /// each with its status and counts.
    pub ignored: Vec<Standing>,
    pub thresholds: Thresholds,
}

/// The retirement gate of line `major` on `today`: a line retires only when a live line
/// succeeds it (without one, consumers would have nothing to move to; discontinuing the
/// dataset is said with `no_successor`), and no registered, subscribed consumer holds it.
/// `standings` are [`classify`]'s, passed through [`exempt`].
pub fn retire_gate(
    lines: &[Line],
    major: u64,
    today: NaiveDate,
    standings: &[Standing],
    thresholds: Thresholds,
    no_successor: bool,
) -> Gate {
    let successor = lines
        .iter()
        .filter(|l| l.major > major && l.sunset.is_none_or(|s| today < s))
        .min_by_key(|l| l.major)
        .map(|l| Successor {
            line: l.major,
            opens: l.opens,
            live: l.is_live(today),
        });
    let blocked_by_successor = match successor {
        _ if no_successor => None,
        Some(s) if s.live => None,
        Some(s) => Some(format!("line {} opens on {}", s.line, s.opens)),
        None => Some("no successor line".to_string()),
    };
    let on_line = |s: &&Standing| s.line == Some(major);
    let holders: Vec<Standing> = standings
        .iter()
        .filter(on_line)
        .filter(|s| s.status.holds())
        .cloned()
        .collect();
    let ignored: Vec<Standing> = standings
        .iter()
        .filter(on_line)
        .filter(|s| matches!(s.status, Status::Automation | Status::Incidental))
        .cloned()
        .collect();
    Gate {
        can_retire: blocked_by_successor.is_none() && holders.is_empty(),
        successor,
        no_successor,
        blocked_by_successor,
        holders,
        ignored,
        thresholds,
    }
}

/// Mark each consumer with no read in the `stale_after_days` up to `today` as stale: a
/// consumer that has stopped reading is a liveness question for its team, whatever line it
/// was on.
pub fn mark_stale(standings: &mut [Standing], today: chrono::NaiveDate, stale_after_days: i64) {
    for s in standings {
        s.stale = s.last_read.is_none_or(|t| {
            (today - t.with_timezone(&chrono::Utc).date_naive()).num_days() >= stale_after_days
        });
    }
}

/// Classify every registered consumer and every unknown reader of one dataset.
/// A consumer not subscribed to `dataset` is listed only when it reads it (`unsubscribed`):
/// it is silent only for the datasets it declared.
/// Sorted by status, then line, then name, so output is stable.
pub fn classify(
    dataset: &str,
    lines: &[Line],
    registry: &Registry,
    newest: &HashMap<String, NewestRead>,
) -> Vec<Standing> {
    let newest_line = lines.iter().map(|l| l.major).max();
    let known = |v: &Version| lines.iter().any(|l| l.versions.contains(v));
    let mut out: Vec<Standing> = Vec::with_capacity(registry.consumers.len());
    for c in registry.consumers.values() {
        if !c.subscribes(dataset) {
            if let Some(r) = newest.get(&c.name) {
                let mut s = standing(&c.name, Status::Unsubscribed, c.team.clone(), r);
                if !known(&r.version) {
                    s.line = r.known.as_ref().map(|k| k.version.major);
                    s.version = r.known.as_ref().map(|k| k.version.clone());
                    s.unknown_version = Some(r.version.clone());
                }
                out.push(s);
            }
            continue;
        }
        out.push(match newest.get(&c.name) {
            None => Standing {
                consumer: c.name.clone(),
                status: Status::Silent,
                team: c.team.clone(),
                line: None,
                version: None,
                unknown_version: None,
                last_read: None,
                reads: 0,
                stale: false,
                usage: None,
            },
            Some(r) if !known(&r.version) => Standing {
                consumer: c.name.clone(),
                status: Status::UnknownVersion,
                team: c.team.clone(),
                line: r.known.as_ref().map(|k| k.version.major),
                version: r.known.as_ref().map(|k| k.version.clone()),
                unknown_version: Some(r.version.clone()),
                last_read: Some(r.at),
                reads: r.reads,
                stale: false,
                usage: None,
            },
            Some(r) => {
                let line = r.version.major;
                let status = match newest_line {
                    Some(n) if line < n => Status::StillOn,
                    Some(n) if r.oldest_line < n => Status::Migrated,
                    _ => Status::Current,
                };
                standing(&c.name, status, c.team.clone(), r)
            }
        });
    }
    for (name, r) in newest {
        if registry.get(name).is_none() {
            out.push(standing(name, Status::Unknown, None, r));
        }
    }
    in_report_order(out)
}

/// By status, line and name. A consumer is listed once, so no two keys are equal and any
/// sort gives this one order. The standings are large: sorting their places and moving each
/// once was a quarter of the time of `classify` on ten thousand consumers, where sorting
/// them moved each many times.
fn in_report_order(standings: Vec<Standing>) -> Vec<Standing> {
    let mut order: Vec<usize> = (0..standings.len()).collect();
    let key = |i: usize| {
        let s = &standings[i];
        (s.status, s.line, s.consumer.as_str())
    };
    order.sort_unstable_by(|&a, &b| key(a).cmp(&key(b)));
    let mut taken: Vec<Option<Standing>> = standings.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| taken[i].take()).collect()
}

fn standing(name: &str, status: Status, team: Option<String>, r: &NewestRead) -> Standing {
    Standing {
        consumer: name.to_string(),
        status,
        team,
        line: Some(r.version.major),
        version: Some(r.version.clone()),
        unknown_version: None,
        last_read: Some(r.at),
        reads: r.reads,
        stale: false,
        usage: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consumers::registry::parse_registry;
    use chrono::NaiveDate;

    fn line(major: u64, sunset: Option<&str>) -> Line {
        let d = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
        Line {
            major,
            opens: d,
            sunset: sunset.map(|s| s.parse().unwrap()),
            source: None,
            versions: vec![Version::new(major, 0, 0), Version::new(major, 1, 0)],
        }
    }

    fn read(v: &str, oldest_line: u64) -> NewestRead {
        NewestRead {
            at: "2026-11-28T03:00:00Z".parse().unwrap(),
            version: v.parse().unwrap(),
            oldest_line,
            reads: 3,
            known: None,
        }
    }

    #[test]
    fn classifies_each_kind_of_consumer() {
        let registry = parse_registry(
            "consumers.toml",
            "[consumers.a]\ncontacts=[\"a@x.org\"]\n[consumers.b]\ncontacts=[\"b@x.org\"]\n\
             [consumers.c]\ncontacts=[\"c@x.org\"]\n[consumers.d]\ncontacts=[\"d@x.org\"]\n",
        )
        .unwrap();
        let lines = [line(1, Some("2027-07-01")), line(2, None)];
        let newest: HashMap<String, NewestRead> = [
            ("a".to_string(), read("1.1.0", 1)),
            ("b".to_string(), read("2.0.0", 1)),
            ("c".to_string(), read("2.0.0", 2)),
            ("z".to_string(), read("1.0.0", 1)),
        ]
        .into();
        let got: Vec<(String, Status, Option<u64>)> = classify("roads", &lines, &registry, &newest)
            .into_iter()
            .map(|s| (s.consumer, s.status, s.line))
            .collect();
        let want = vec![
            ("a".to_string(), Status::StillOn, Some(1)),
            ("b".to_string(), Status::Migrated, Some(2)),
            ("c".to_string(), Status::Current, Some(2)),
            ("d".to_string(), Status::Silent, None),
            ("z".to_string(), Status::Unknown, Some(1)),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn silent_only_for_subscribed_datasets_and_unsubscribed_readers_apart() {
        let registry = parse_registry(
            "consumers.toml",
            "[consumers.a]\ncontacts=[\"a@x.org\"]\ndatasets.rivers = {}\n\
             [consumers.b]\ncontacts=[\"b@x.org\"]\ndatasets.rivers = {}\n\
             [consumers.c]\ncontacts=[\"c@x.org\"]\ndatasets.roads = {}\n",
        )
        .unwrap();
        let lines = [line(1, Some("2027-07-01")), line(2, None)];
        let newest: HashMap<String, NewestRead> = [("a".to_string(), read("1.1.0", 1))].into();
        let got: Vec<(String, Status)> = classify("roads", &lines, &registry, &newest)
            .into_iter()
            .map(|s| (s.consumer, s.status))
            .collect();
        // b reads rivers only and never roads: not listed at all; c is subscribed and silent.
        assert_eq!(
            got,
            vec![
                ("c".to_string(), Status::Silent),
                ("a".to_string(), Status::Unsubscribed),
            ]
        );
    }

    #[test]
    fn stale_after_days_without_a_read() {
        let mut s = vec![
            standing("a", Status::StillOn, None, &read("1.1.0", 1)),
            standing("b", Status::StillOn, None, &read("1.1.0", 1)),
        ];
        s[1].last_read = None;
        // The read is on 2026-11-28: 29 days before 2026-12-27 is fresh, 30 is stale.
        mark_stale(&mut s, "2026-12-27".parse().unwrap(), 30);
        assert_eq!((s[0].stale, s[1].stale), (false, true));
        mark_stale(&mut s, "2026-12-28".parse().unwrap(), 30);
        assert!(s[0].stale);
    }
}
