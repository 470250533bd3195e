//! Who gets which notice today (docs/src/commands/notify.md). Pure: the day, the `[notify]`
//! settings, each windowed line with the consumers still on it, and the ledger of notices already
//! sent come in; the list of notices to send goes out. No clock, no files, no SMTP, so every rule
//! below is a table test, and `--dry-run` prints exactly what a real run would send.

use std::collections::HashSet;
use std::fmt;

use chrono::NaiveDate;
use semver::Version;
use serde::{Serialize, Serializer};

use crate::model::config::Notify;
use crate::model::{ConsumerVerdict, Use};

/// The channel of mail, and of every ledger entry that names none.
pub const MAIL: &str = "mail";

/// What a consumer is told about, as the ledger names it: a point in a line's countdown, the
/// opening of a window, or a waiver on a line it reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Milestone {
    /// `days_before` milestone: this many days before the sunset.
    Before(i64),
    /// The n-th overdue period (1-based) after the sunset, while the consumer still reads.
    Overdue(i64),
    /// `published`: the successor line opened (its `valid_from` came), and a window with it.
    Published,
    /// `waiver:<id>`: a waiver was granted on the line, for a clause key the consumer uses.
    Waiver(String),
    /// `deprecated:<key>:<step>`: a deprecation of a key the consumer uses, at one step of
    /// its own countdown to `remove_after` (`published`, `before-<days>` or `overdue-<n>`).
    Deprecated(String, Box<Milestone>),
}

impl Milestone {
    /// The milestone as one dot-atom piece of a Message-ID: a waiver id's `:` and any other
    /// character a dot-atom may not hold become `.` and `_`.
    pub fn atom(&self) -> String {
        self.to_string()
            .chars()
            .map(|c| match c {
                ':' => '.',
                c if c.is_ascii_alphanumeric() || "-_.".contains(c) => c,
                _ => '_',
            })
            .collect()
    }
}

impl fmt::Display for Milestone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Milestone::Before(d) => write!(f, "before-{d}"),
            Milestone::Overdue(n) => write!(f, "overdue-{n}"),
            Milestone::Published => f.write_str("published"),
            Milestone::Waiver(id) => write!(f, "waiver:{id}"),
            Milestone::Deprecated(key, step) => write!(f, "deprecated:{key}:{step}"),
        }
    }
}

/// A milestone string that is none of `before-<days>`, `overdue-<n>`, `published`,
/// `waiver:<id>` or `deprecated:<key>:<step>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "milestone {0:?} is none of `before-<days>`, `overdue-<n>` (n from 1), `published`, \
     `waiver:<id>` or `deprecated:<key>:<published, before-<days> or overdue-<n>>`"
)]
pub struct BadMilestone(pub String);

impl std::str::FromStr for Milestone {
    type Err = BadMilestone;

    fn from_str(s: &str) -> Result<Milestone, BadMilestone> {
        let bad = || BadMilestone(s.to_string());
        // Digits only: `before-+3` or `before- 3` is not a milestone this tool writes.
        let number = |n: &str| {
            (!n.is_empty() && n.len() <= 6 && n.bytes().all(|b| b.is_ascii_digit()))
                .then(|| n.parse::<i64>().ok())
                .flatten()
        };
        if s == "published" {
            return Ok(Milestone::Published);
        }
        if let Some(n) = s.strip_prefix("before-") {
            return number(n).map(Milestone::Before).ok_or_else(bad);
        }
        if let Some(n) = s.strip_prefix("overdue-") {
            return number(n)
                .filter(|n| *n >= 1)
                .map(Milestone::Overdue)
                .ok_or_else(bad);
        }
        if let Some(rest) = s.strip_prefix("deprecated:") {
            // The key is a clause or `clause.member`, and a member is an attribute name as the
            // data spells it (a `:` or a space in it included): the step, which has no `:`,
            // is what follows the last one.
            let (key, step) = rest.rsplit_once(':').ok_or_else(bad)?;
            let key_ok = !key.is_empty() && !key.chars().any(char::is_control);
            let step = step.parse::<Milestone>().map_err(|_| bad())?;
            let step_ok = matches!(
                step,
                Milestone::Published | Milestone::Before(_) | Milestone::Overdue(_)
            );
            return (key_ok && step_ok)
                .then(|| Milestone::Deprecated(key.to_string(), Box::new(step)))
                .ok_or_else(bad);
        }
        if let Some(id) = s.strip_prefix("waiver:") {
            let ok = !id.is_empty()
                && id.starts_with(|c: char| c.is_ascii_alphanumeric())
                && !id
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control() || c == '"');
            return ok
                .then(|| Milestone::Waiver(id.to_string()))
                .ok_or_else(bad);
        }
        Err(bad())
    }
}

impl Serialize for Milestone {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The milestone reached on `today` for a line whose sunset is `sunset`, if any.
///
/// Before the sunset it is the smallest milestone not yet passed (`days_left <= m`): the most
/// recent one reached, so a cron that missed days sends one notice, not a burst of every
/// milestone skipped. From the sunset day on (the sunset is exclusive, so the line is no longer
/// published that day) it is the overdue period: `overdue-1` for the first
/// `overdue_every_days` days, `overdue-2` for the next, and so on.
pub fn milestone_due(
    today: NaiveDate,
    sunset: NaiveDate,
    days_before: &[i64],
    overdue_every_days: i64,
) -> Option<Milestone> {
    let days_left = (sunset - today).num_days();
    if days_left <= 0 {
        let every = overdue_every_days.max(1);
        return Some(Milestone::Overdue(-days_left / every + 1));
    }
    days_before
        .iter()
        .copied()
        .filter(|m| days_left <= *m)
        .min()
        .map(Milestone::Before)
}

/// A line with a sunset, and the line its consumers should move to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowedLine {
    pub line: u64,
    pub sunset: NaiveDate,
    /// The newest version of the old line.
    pub old_version: Version,
    /// The newest line of the dataset: where a consumer should go.
    pub new_line: u64,
    pub new_version: Version,
    /// The day the newest line opened (its first `valid_from`): the window's first day.
    pub opens: NaiveDate,
}

/// A registered consumer whose newest read is still on a windowed line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Holder {
    pub consumer: String,
    pub team: Option<String>,
    pub recipients: Vec<String>,
    /// The version of its newest read.
    pub reads_version: Version,
    /// What it relies on in the dataset (`consumers.toml` `uses`); `None` is everything.
    pub uses: Option<Vec<Use>>,
}

/// One dataset's input to the planner.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetInput {
    pub dataset: String,
    pub lines: Vec<(WindowedLine, Vec<Holder>)>,
}

/// A notice already sent: (dataset, consumer, line, milestone), as the ledgers record it.
pub type SentKey = (String, String, u64, String);

/// One notice to send.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Notice {
    pub dataset: String,
    pub consumer: String,
    pub team: Option<String>,
    pub line: u64,
    pub milestone: Milestone,
    /// Further milestones this one message serves: `published`, when the announcement of a
    /// window falls due on the same run as a countdown milestone (`milestone`). The ledger
    /// records each of them, with the one Message-ID of the countdown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Milestone>,
    pub recipients: Vec<String>,
    pub sunset: NaiveDate,
    /// Days until the sunset; 0 or negative once the line is overdue.
    pub days_left: i64,
    pub old_version: Version,
    pub reads_version: Version,
    pub new_line: u64,
    pub new_version: Version,
    pub message_id: String,
    /// `mail`, or `webhook:<name>`: each channel of a consumer is a notice of its own in the
    /// ledger, carrying the same id.
    #[serde(skip_serializing_if = "is_mail")]
    pub channel: String,
    /// What the consumer relies on; `None` is everything. The notice tells it only the
    /// breaking changes that touch these.
    #[serde(skip)]
    pub uses: Option<Vec<Use>>,
    /// Set once the notice is rendered: `breaks` when a breaking change it is told touches
    /// what the consumer uses (or it declared nothing and one exists), else `unaffected`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<ConsumerVerdict>,
    /// The clauses of the breaking changes it is told.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub breaking_changes: Vec<String>,
    /// Those changes with their values and rationale, for the webhook payloads.
    #[serde(skip)]
    pub told: Vec<ToldChange>,
    /// For a `published` notice, or one that serves it too: the day the window opened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opens: Option<NaiveDate>,
    /// For a `waiver:<id>` notice: what was waived, until when, by whom and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiver: Option<WaiverFacts>,
    /// For a `deprecated:<key>:<step>` notice: the key, why, what replaces it, its last day
    /// and how the consumer was found to use it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation: Option<DeprecationFacts>,
}

/// What a deprecation notice tells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeprecationFacts {
    /// The deprecated clause key (`optional_attributes.pop_est`).
    pub key: String,
    /// The attribute it names, if its clause is keyed by attribute.
    pub attribute: Option<String>,
    pub reason: String,
    pub replacement: Option<String>,
    /// The last day the key is promised (inclusive).
    pub remove_after: NaiveDate,
    /// The version whose contract carries the deprecation.
    pub version: Version,
    /// How the consumer was found to use it: `declared` (its `uses` names it), `observed`
    /// (seen reading it in the lookback) or `unknown` (no `uses`, and its reads cannot tell).
    pub evidence: crate::consumers::attributes::KeyUse,
    /// Its newest read seen reading the key, when one was.
    #[serde(serialize_with = "crate::model::wire::instant")]
    pub key_last_read: Option<chrono::DateTime<chrono::FixedOffset>>,
}

/// What a waiver notice tells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaiverFacts {
    pub id: String,
    /// The waived key, `clause` or `clause.key`.
    pub clause: String,
    /// The contract's bound for that key on the covered line, when the contract has it.
    pub bound: Option<serde_json::Value>,
    /// The release it was granted for (`--release`), if named.
    pub release: Option<String>,
    /// That release's measured value for the key, when its record kept a profile.
    pub measured: Option<serde_json::Value>,
    pub granted: NaiveDate,
    /// The last day it covers.
    pub until: NaiveDate,
    pub by: String,
    pub reason: String,
}

/// One breaking change a notice tells, as a webhook payload carries it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToldChange {
    pub clause: String,
    pub old: Option<serde_json::Value>,
    pub new: Option<serde_json::Value>,
    pub rationale: String,
}

impl Notice {
    /// Every milestone this notice serves, in the order they come: the announcement first.
    pub fn milestones(&self) -> Vec<&Milestone> {
        self.also.iter().chain([&self.milestone]).collect()
    }

    /// The milestones as a person reads them: `before-60`, or `before-60 + published` for a
    /// message that serves both.
    pub fn milestone_text(&self) -> String {
        [&self.milestone]
            .into_iter()
            .chain(&self.also)
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// What is left of this notice once `settled` milestones need no message: `None` when it
    /// serves nothing else, else the notice for the rest, with the Message-ID of the one it
    /// then is. A channel that has one of a pair already (delivered before the pair was due,
    /// say) gets the other alone.
    pub fn without(self, settled: &dyn Fn(&Milestone) -> bool) -> Option<Notice> {
        if self.also.is_empty() {
            return (!settled(&self.milestone)).then_some(self);
        }
        // The countdown stays the message while it is owed, as the planner made it.
        let mut rest = [&self.milestone]
            .into_iter()
            .chain(&self.also)
            .filter(|m| !settled(m));
        let first = rest.next()?.clone();
        let also: Vec<Milestone> = rest.cloned().collect();
        if first == self.milestone && also == self.also {
            return Some(self);
        }
        let domain = self
            .message_id
            .rsplit_once('@')
            .map_or("", |(_, d)| d.trim_end_matches('>'));
        let message_id = message_id(&self.dataset, self.line, &self.consumer, &first, domain);
        let announces = first == Milestone::Published || also.contains(&Milestone::Published);
        Some(Notice {
            opens: self.opens.filter(|_| announces),
            message_id,
            milestone: first,
            also,
            ..self
        })
    }
}

fn is_mail(channel: &str) -> bool {
    channel == MAIL
}

/// The Message-ID of a notice: a function of (dataset, line, consumer, milestone) only, so a
/// retried notice carries the same id and a reader's mail client can tell it is the same one.
/// Every part is a validated name, a number or a fixed word, so the id is a valid dot-atom.
pub fn message_id(
    dataset: &str,
    line: u64,
    consumer: &str,
    milestone: &Milestone,
    domain: &str,
) -> String {
    let m = milestone.atom();
    format!("<contracts.{dataset}.{line}.{consumer}.{m}@{domain}>")
}

/// Decide today's notices. `domain` is the domain of the `from` address (for Message-IDs).
///
/// With `[notify] announce`, a line whose successor has opened (`today` on or after its
/// `valid_from`) and whose sunset is still ahead gets a `published` notice for each consumer
/// still on it, once: so the first run after an upgrade announces every window still open.
/// A window that has closed is not announced: its consumers get the overdue notices.
///
/// When the announcement and a countdown milestone are both due for a consumer on one run (the
/// first run in an open window, typically), they are one notice: the countdown, which carries
/// the sunset and the days left, with `also: [published]`, telling the window's opening too.
/// Two near-identical messages in the same minute would only be noise. Each milestone is still
/// its own key in the ledger, so neither is sent again.
pub fn plan(
    today: NaiveDate,
    notify: &Notify,
    domain: &str,
    datasets: &[DatasetInput],
    sent: &HashSet<SentKey>,
) -> Vec<Notice> {
    let mut out = Vec::new();
    for d in datasets {
        for (line, holders) in &d.lines {
            // Only while the window is open: after the sunset the old line is no longer
            // published, and the overdue notices say so.
            let open = line.opens <= today && today < line.sunset;
            let announce = (notify.announce && open).then_some(Milestone::Published);
            let countdown = milestone_due(
                today,
                line.sunset,
                &notify.days_before,
                notify.overdue_every_days,
            );
            // The announcements first, then the countdown (each pair with it), as the rows
            // have always come.
            let (mut announcements, mut countdowns) = (Vec::new(), Vec::new());
            for h in holders {
                let unsent = |m: &Milestone| {
                    let key = (
                        d.dataset.clone(),
                        h.consumer.clone(),
                        line.line,
                        m.to_string(),
                    );
                    !sent.contains(&key)
                };
                let due: Vec<Milestone> = announce
                    .iter()
                    .chain(&countdown)
                    .filter(|m| unsent(m))
                    .cloned()
                    .collect();
                // Both due: the countdown serves the announcement too (its `also`).
                let notices: Vec<(Milestone, Vec<Milestone>)> = match due.as_slice() {
                    [Milestone::Published, countdown] => {
                        vec![(countdown.clone(), vec![Milestone::Published])]
                    }
                    _ => due.into_iter().map(|m| (m, Vec::new())).collect(),
                };
                for (milestone, also) in notices {
                    let announces =
                        milestone == Milestone::Published || also.contains(&Milestone::Published);
                    let slot = match milestone {
                        Milestone::Published => &mut announcements,
                        _ => &mut countdowns,
                    };
                    slot.push(Notice {
                        dataset: d.dataset.clone(),
                        consumer: h.consumer.clone(),
                        team: h.team.clone(),
                        line: line.line,
                        recipients: h.recipients.clone(),
                        sunset: line.sunset,
                        days_left: (line.sunset - today).num_days(),
                        old_version: line.old_version.clone(),
                        reads_version: h.reads_version.clone(),
                        new_line: line.new_line,
                        new_version: line.new_version.clone(),
                        message_id: message_id(
                            &d.dataset,
                            line.line,
                            &h.consumer,
                            &milestone,
                            domain,
                        ),
                        channel: MAIL.to_string(),
                        uses: h.uses.clone(),
                        verdict: None,
                        breaking_changes: Vec::new(),
                        told: Vec::new(),
                        opens: announces.then_some(line.opens),
                        waiver: None,
                        deprecation: None,
                        milestone,
                        also,
                    });
                }
            }
            out.extend(announcements);
            out.extend(countdowns);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    const DAYS: [i64; 5] = [60, 30, 14, 7, 1];

    #[test]
    fn milestone_table() {
        use Milestone::*;
        // (today, expected) for a sunset on 2027-01-31 with weekly overdue notices.
        let sunset = day("2027-01-31");
        let table: &[(&str, Option<Milestone>)] = &[
            ("2026-11-01", None),             // 91 days left: before every milestone
            ("2026-12-01", None),             // 61 days: the first milestone is not reached
            ("2026-12-02", Some(Before(60))), // 60 days: reached exactly
            ("2026-12-20", Some(Before(60))), // 42 days: still the 60-day notice
            ("2027-01-01", Some(Before(30))), // 30 days
            ("2027-01-17", Some(Before(14))), // 14 days
            ("2027-01-20", Some(Before(14))), // 11 days
            ("2027-01-24", Some(Before(7))),  // 7 days
            ("2027-01-29", Some(Before(7))),  // 2 days
            ("2027-01-30", Some(Before(1))),  // 1 day: the last day the line is live
            ("2027-01-31", Some(Overdue(1))), // sunset day: no longer published
            ("2027-02-06", Some(Overdue(1))), // 6 days over
            ("2027-02-07", Some(Overdue(2))), // 7 days over: second period
            ("2027-02-21", Some(Overdue(4))), // 21 days over
        ];
        for (today, want) in table {
            assert_eq!(
                milestone_due(day(today), sunset, &DAYS, 7),
                *want,
                "today {today}"
            );
        }
    }

    #[test]
    fn milestones_need_not_be_sorted_and_may_be_empty() {
        let sunset = day("2027-01-31");
        assert_eq!(
            milestone_due(day("2027-01-25"), sunset, &[1, 30, 7], 3),
            Some(Milestone::Before(7))
        );
        assert_eq!(milestone_due(day("2027-01-25"), sunset, &[], 3), None);
        assert_eq!(
            milestone_due(day("2027-02-06"), sunset, &[], 3),
            Some(Milestone::Overdue(3))
        );
    }

    fn input(sunset: &str, consumers: &[&str]) -> DatasetInput {
        DatasetInput {
            dataset: "roads".to_string(),
            lines: vec![(
                WindowedLine {
                    line: 1,
                    sunset: day(sunset),
                    old_version: Version::new(1, 1, 0),
                    new_line: 2,
                    new_version: Version::new(2, 0, 0),
                    opens: day("2026-11-01"),
                },
                consumers
                    .iter()
                    .map(|c| Holder {
                        consumer: c.to_string(),
                        team: None,
                        recipients: vec![format!("{c}@example.org")],
                        reads_version: Version::new(1, 0, 0),
                        uses: None,
                    })
                    .collect(),
            )],
        }
    }

    fn keys(notices: &[Notice]) -> Vec<(String, String)> {
        notices
            .iter()
            .map(|n| (n.consumer.clone(), n.milestone.to_string()))
            .collect()
    }

    /// Run the planner day by day over `days`, recording what it sends, as a cron would.
    fn replay(days: &[&str], sunset: &str) -> Vec<(String, String, String)> {
        let notify = Notify {
            days_before: DAYS.to_vec(),
            overdue_every_days: 7,
            from: String::new(),
            announce: false,
            ..Notify::default()
        };
        let inputs = [input(sunset, &["a"])];
        let mut sent = HashSet::new();
        let mut log = Vec::new();
        for d in days {
            for n in plan(day(d), &notify, "example.org", &inputs, &sent) {
                sent.insert((
                    n.dataset.clone(),
                    n.consumer.clone(),
                    n.line,
                    n.milestone.to_string(),
                ));
                log.push((d.to_string(), n.consumer, n.milestone.to_string()));
            }
        }
        log
    }

    #[test]
    fn a_daily_cron_sends_each_milestone_once() {
        let start = day("2026-11-20");
        let days: Vec<String> = (0..100)
            .map(|i| (start + chrono::Days::new(i)).to_string())
            .collect();
        let refs: Vec<&str> = days.iter().map(String::as_str).collect();
        let got = replay(&refs, "2027-01-31");
        let milestones: Vec<&str> = got.iter().map(|(_, _, m)| m.as_str()).collect();
        assert_eq!(
            milestones,
            [
                "before-60",
                "before-30",
                "before-14",
                "before-7",
                "before-1",
                "overdue-1",
                "overdue-2",
                "overdue-3",
                "overdue-4",
            ]
        );
        assert_eq!(got[0].0, "2026-12-02");
        assert_eq!(got[5].0, "2027-01-31");
        assert_eq!(got[6].0, "2027-02-07");
    }

    #[test]
    fn missed_days_send_one_notice_not_a_burst() {
        // The cron last ran 70 days before and next runs 10 days before the sunset: the 60,
        // 30 and 14 day milestones all passed, but only the 14-day notice goes out.
        let got = replay(&["2026-11-22", "2027-01-21"], "2027-01-31");
        assert_eq!(
            got,
            vec![("2027-01-21".into(), "a".into(), "before-14".into())]
        );
    }

    #[test]
    fn a_second_run_the_same_day_sends_nothing() {
        let got = replay(&["2027-01-21", "2027-01-21"], "2027-01-31");
        assert_eq!(got.len(), 1);
    }

    #[test]
    fn the_ledger_is_per_consumer_and_line() {
        let notify = Notify {
            announce: false,
            ..Notify::default()
        };
        let inputs = [input("2027-01-31", &["a", "b"])];
        let sent: HashSet<SentKey> = [(
            "roads".to_string(),
            "a".to_string(),
            1,
            "before-14".to_string(),
        )]
        .into();
        let got = plan(day("2027-01-21"), &notify, "example.org", &inputs, &sent);
        assert_eq!(keys(&got), vec![("b".to_string(), "before-14".to_string())]);
        assert_eq!(got[0].days_left, 10);
        assert_eq!(
            got[0].message_id,
            "<contracts.roads.1.b.before-14@example.org>"
        );
        // Another line's notice does not count for this one.
        let other: HashSet<SentKey> = [(
            "roads".to_string(),
            "b".to_string(),
            2,
            "before-14".to_string(),
        )]
        .into();
        assert_eq!(
            plan(day("2027-01-21"), &notify, "x.org", &inputs, &other).len(),
            2
        );
    }

    #[test]
    fn a_window_is_announced_once_from_its_first_day_beside_the_countdown() {
        let notify = Notify::default();
        let inputs = [input("2027-01-31", &["a"])];
        // Line 2 opens 2026-11-01.
        assert!(plan(
            day("2026-10-31"),
            &notify,
            "x.org",
            &inputs,
            &HashSet::new()
        )
        .is_empty());
        let got = plan(
            day("2026-11-01"),
            &notify,
            "x.org",
            &inputs,
            &HashSet::new(),
        );
        assert_eq!(keys(&got), vec![("a".to_string(), "published".to_string())]);
        assert_eq!(got[0].opens, Some(day("2026-11-01")));
        assert_eq!(got[0].message_id, "<contracts.roads.1.a.published@x.org>");
        let sent: HashSet<SentKey> = [("roads".into(), "a".into(), 1, "published".into())].into();
        // Announced: on a day with a countdown milestone only that one follows.
        let got = plan(day("2026-12-02"), &notify, "x.org", &inputs, &sent);
        assert_eq!(keys(&got), vec![("a".to_string(), "before-60".to_string())]);
        let off = Notify {
            announce: false,
            ..Notify::default()
        };
        assert!(plan(day("2026-11-01"), &off, "x.org", &inputs, &HashSet::new()).is_empty());
    }

    #[test]
    fn an_announcement_due_with_a_countdown_is_one_notice_serving_both() {
        let notify = Notify::default();
        // Opens 2026-11-01, sunset 2027-01-15: on 2026-11-29 the 60-day milestone is due too.
        let inputs = [input("2027-01-15", &["a", "b"])];
        let sent: HashSet<SentKey> = [("roads".into(), "b".into(), 1, "published".into())].into();
        let got = plan(day("2026-11-29"), &notify, "x.org", &inputs, &sent);
        assert_eq!(
            keys(&got),
            vec![
                ("a".to_string(), "before-60".to_string()),
                ("b".to_string(), "before-60".to_string())
            ]
        );
        let (a, b) = (&got[0], &got[1]);
        assert_eq!(a.also, vec![Milestone::Published]);
        assert_eq!(a.milestone_text(), "before-60 + published");
        assert_eq!(a.opens, Some(day("2026-11-01")));
        assert_eq!(a.message_id, "<contracts.roads.1.a.before-60@x.org>");
        // b was announced already: its countdown is the plain one.
        assert!(b.also.is_empty() && b.opens.is_none());
        // Off: the countdown alone.
        let off = Notify {
            announce: false,
            ..Notify::default()
        };
        let got = plan(day("2026-11-29"), &off, "x.org", &inputs, &HashSet::new());
        assert!(got.iter().all(|n| n.also.is_empty() && n.opens.is_none()));
    }

    #[test]
    fn a_pair_without_a_settled_milestone_is_the_other_alone() {
        let inputs = [input("2027-01-15", &["a"])];
        let got = plan(
            day("2026-11-29"),
            &Notify::default(),
            "x.org",
            &inputs,
            &HashSet::new(),
        );
        let pair = got[0].clone();
        let nothing = |_: &Milestone| false;
        assert_eq!(pair.clone().without(&nothing), Some(pair.clone()));
        let countdown = pair
            .clone()
            .without(&|m| *m == Milestone::Published)
            .unwrap();
        assert_eq!(
            (countdown.milestone_text(), countdown.opens),
            ("before-60".to_string(), None)
        );
        assert_eq!(countdown.message_id, pair.message_id);
        let announcement = pair
            .clone()
            .without(&|m| *m == Milestone::Before(60))
            .unwrap();
        assert_eq!(announcement.milestone, Milestone::Published);
        assert!(announcement.also.is_empty());
        assert_eq!(announcement.opens, Some(day("2026-11-01")));
        assert_eq!(
            announcement.message_id,
            "<contracts.roads.1.a.published@x.org>"
        );
        assert_eq!(pair.without(&|_| true), None);
    }

    #[test]
    fn milestones_parse_back_and_malformed_ones_are_refused() {
        for m in [
            Milestone::Before(60),
            Milestone::Before(0),
            Milestone::Overdue(3),
            Milestone::Published,
            Milestone::Waiver("places:1:max_null_fraction.pop_est:2026-11-29".into()),
            Milestone::Deprecated(
                "optional_attributes.pop_est".into(),
                Box::new(Milestone::Before(30)),
            ),
            Milestone::Deprecated("crs".into(), Box::new(Milestone::Published)),
            Milestone::Deprecated(
                "optional_attributes.ns:pop est".into(),
                Box::new(Milestone::Overdue(2)),
            ),
        ] {
            assert_eq!(m.to_string().parse::<Milestone>(), Ok(m.clone()));
        }
        for bad in [
            "",
            "before-",
            "before-x",
            "before--1",
            "overdue-0",
            "overdue-",
            "publish",
            "Published",
            "waiver:",
            "waiver: x",
            "deprecated:crs",
            "deprecated::published",
            "deprecated:crs:waiver:x",
            "deprecated:crs:before-x",
            "sunset",
        ] {
            assert!(bad.parse::<Milestone>().is_err(), "{bad:?}");
        }
        // A waiver id's `:` cannot stand in a Message-ID.
        let m = Milestone::Waiver("roads:1:crs:2026-11-29".into());
        assert_eq!(
            message_id("roads", 1, "a", &m, "x.org"),
            "<contracts.roads.1.a.waiver.roads.1.crs.2026-11-29@x.org>"
        );
    }
}
