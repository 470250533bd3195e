//! Who is told about a deprecation: the plan side of the `deprecated:<key>:<step>` notices.
//!
//! When the version that carries a `[deprecated]` entry is current on a line, each consumer on
//! that line that uses the key is told once (`published`), then again at the milestones of a
//! sunset's countdown (`[notify] days_before`, then every `overdue_every_days`), counted to the
//! day after `remove_after` (its last promised day is inclusive; a sunset is exclusive).
//! Whether a consumer uses the key is `can-remove`'s rule ([`judge`]): its `uses` names the key
//! (declared), a read in the lookback was seen reading it (observed), or it has no `uses` and
//! its reads cannot tell (unknown) — all three are told. A consumer shown not to use it, and
//! automations and incidental readers, are not. Pure: the deprecations, the standings, the
//! evidence of the reads and what the ledger already holds come in; the notices go out.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use semver::Version;

use crate::consumers::attributes::{judge, Evidence, KeyStanding, KeyUse};
use crate::consumers::{Registry, Standing, Status};
use crate::model::config::Notify;
use crate::model::deprecation::Deprecation;
use crate::notify::plan::{milestone_due, Milestone};

/// A deprecation carried by the current version of a live line.
#[derive(Debug, Clone, PartialEq)]
pub struct LineDeprecation {
    pub line: u64,
    /// The line's current version, whose contract carries it.
    pub version: Version,
    pub deprecation: Deprecation,
}

/// What the reads of a dataset's consumers show of each deprecated key: key → consumer →
/// evidence. A consumer (or a key) absent from it has reads whose sources cannot tell which
/// attributes they read.
pub type KeyEvidence = BTreeMap<String, BTreeMap<String, Evidence>>;

/// The day a deprecated key may go: the day after `remove_after`, as a sunset counts.
pub fn removal_day(d: &Deprecation) -> NaiveDate {
    d.remove_after.succ_opt().unwrap_or(d.remove_after)
}

/// One notice to send about one deprecation.
#[derive(Debug, Clone, PartialEq)]
pub struct DeprecationNotice {
    pub consumer: String,
    pub dataset: String,
    pub line: u64,
    pub version: Version,
    /// The milestone of the message; with `also`, every milestone it serves.
    pub milestone: Milestone,
    pub also: Vec<Milestone>,
    pub deprecation: Deprecation,
    /// How the consumer stands towards the key: declared, observed or unknown.
    pub standing: KeyStanding,
}

/// The milestones of `d` due on `today`, each as the ledger names it: its announcement
/// while the key is still promised, and its countdown milestone, if one is reached.
fn due(d: &Deprecation, today: NaiveDate, notify: &Notify) -> Vec<Milestone> {
    let wrap = |m: Milestone| Milestone::Deprecated(d.key.clone(), Box::new(m));
    let mut out = Vec::new();
    if today <= d.remove_after {
        out.push(wrap(Milestone::Published));
    }
    let removal = removal_day(d);
    out.extend(
        milestone_due(
            today,
            removal,
            &notify.days_before,
            notify.overdue_every_days,
        )
        .map(wrap),
    );
    out
}

/// Whether any deprecation of `deprecations` has a milestone due `today`: a dataset worth a
/// pass over the consumption log.
pub fn any_due(deprecations: &[LineDeprecation], today: NaiveDate, notify: &Notify) -> bool {
    deprecations
        .iter()
        .any(|d| !due(&d.deprecation, today, notify).is_empty())
}

/// The notices due on `today` for the deprecations of `dataset`: one message per deprecation
/// and consumer on its line that uses the key, serving each of its due milestones that `sent`
/// (consumer, line, milestone) says the ledger does not have. When the announcement and a
/// countdown milestone are both owed, they are one message, as for a sunset: the countdown,
/// which also serves `published`.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    dataset: &str,
    deprecations: &[LineDeprecation],
    today: NaiveDate,
    notify: &Notify,
    standings: &[Standing],
    registry: &Registry,
    evidence: &KeyEvidence,
    sent: &dyn Fn(&str, u64, &str) -> bool,
) -> Vec<DeprecationNotice> {
    let mut out = Vec::new();
    for ld in deprecations {
        let d = &ld.deprecation;
        let due = due(d, today, notify);
        if due.is_empty() {
            continue;
        }
        for s in standings {
            if matches!(s.status, Status::Unsubscribed | Status::Unknown) || s.line != Some(ld.line)
            {
                continue;
            }
            let Some(c) = registry.get(&s.consumer) else {
                continue;
            };
            // The scan's evidence for this consumer and key; none means no read told its
            // attributes (the rule of `Evidence::of`), which leaves a consumer without
            // `uses` "unknown", never "not used".
            let seen = evidence
                .get(&d.key)
                .and_then(|by| by.get(&s.consumer))
                .copied()
                .unwrap_or_else(|| Evidence::of(s.reads, None, None));
            let standing = judge(s, c.uses(dataset), &d.key, true, seen);
            if !matches!(
                standing.key_use,
                KeyUse::Declared | KeyUse::Observed | KeyUse::Unknown
            ) {
                continue;
            }
            let owed: Vec<Milestone> = due
                .iter()
                .filter(|m| !sent(&s.consumer, ld.line, &m.to_string()))
                .cloned()
                .collect();
            // Announcement first, countdown last: the countdown is the message.
            let Some((milestone, also)) = owed.split_last() else {
                continue;
            };
            out.push(DeprecationNotice {
                consumer: s.consumer.clone(),
                dataset: dataset.to_string(),
                line: ld.line,
                version: ld.version.clone(),
                milestone: milestone.clone(),
                also: also.to_vec(),
                deprecation: d.clone(),
                standing,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consumers::parse_registry;
    use crate::notify::test_fixtures::{day as d, evidence as read_of, line, standings};

    #[test]
    fn users_of_the_key_are_told_on_publication_then_at_each_milestone_once() {
        let registry = parse_registry(
            "consumers.toml",
            "[consumers.a]\ncontacts=[\"a@x.org\"]\ndatasets.places = { uses = [\"optional_attributes.pop_est\"] }\n\
             [consumers.b]\ncontacts=[\"b@x.org\"]\ndatasets.places = { uses = [\"optional_attributes.name\"] }\n\
             [consumers.c]\ncontacts=[\"c@x.org\"]\n\
             [consumers.o]\ncontacts=[\"o@x.org\"]\n",
        )
        .unwrap();
        let lines = [line(1, "2026-01-01", None, &["1.1.0"])];
        let at = "2026-11-28T03:00:00Z";
        let standings = standings(
            "places",
            &lines,
            &registry,
            (at, 1),
            &["a", "b", "c", "o"].map(|c| (c, "1.1.0")),
        );
        let deprecations = [LineDeprecation {
            line: 1,
            version: Version::new(1, 1, 0),
            deprecation: Deprecation {
                key: "optional_attributes.pop_est".into(),
                reason: "superseded".into(),
                replacement: Some("pop_2026".into()),
                remove_after: d("2027-03-31"),
            },
        }];
        // o's reads are known to touch other attributes only: shown not to use the key.
        let other = read_of(at, &["name"], "pop_est");
        let evidence: KeyEvidence = [(
            "optional_attributes.pop_est".to_string(),
            [("o".to_string(), other)].into(),
        )]
        .into();
        let notify = Notify::default();
        let told = |today: &str, sent: &dyn Fn(&str, u64, &str) -> bool| {
            plan(
                "places",
                &deprecations,
                d(today),
                &notify,
                &standings,
                &registry,
                &evidence,
                sent,
            )
            .into_iter()
            .map(|n| {
                // The message's milestone, then each other one it serves.
                let mut m = vec![n.milestone.to_string()];
                m.extend(n.also.iter().map(ToString::to_string));
                (n.consumer, m, n.standing.key_use)
            })
            .collect::<Vec<_>>()
        };
        let published = "deprecated:optional_attributes.pop_est:published";
        assert_eq!(
            told("2026-12-06", &|_, _, _| false),
            [
                (
                    "a".to_string(),
                    vec![published.to_string()],
                    KeyUse::Declared
                ),
                (
                    "c".to_string(),
                    vec![published.to_string()],
                    KeyUse::Unknown
                ),
            ]
        );
        // Announced: nothing more until the 60-day milestone before 2027-04-01.
        let announced = |_: &str, _: u64, m: &str| m == published;
        assert!(told("2026-12-07", &announced).is_empty());
        let got = told("2027-01-31", &announced);
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[0].1,
            ["deprecated:optional_attributes.pop_est:before-60"]
        );
        // Both owed on one run: one message, the countdown, serving the announcement too.
        let got = told("2027-01-31", &|_, _, _| false);
        assert_eq!(
            got[0].1,
            [
                "deprecated:optional_attributes.pop_est:before-60",
                "deprecated:optional_attributes.pop_est:published"
            ]
        );
        // After its last day: overdue, never published.
        let got = told("2027-04-01", &|_, _, _| false);
        assert_eq!(
            got[0].1,
            ["deprecated:optional_attributes.pop_est:overdue-1"]
        );

        // b declared only `name`, but a read shows it reading `pop_est`: it is told, observed.
        let read_it = read_of(at, &["pop_est"], "pop_est");
        let seen: KeyEvidence = [(
            "optional_attributes.pop_est".to_string(),
            [("b".to_string(), read_it), ("o".to_string(), other)].into(),
        )]
        .into();
        let got: Vec<(String, KeyUse)> = plan(
            "places",
            &deprecations,
            d("2026-12-06"),
            &notify,
            &standings,
            &registry,
            &seen,
            &|_, _, _| false,
        )
        .into_iter()
        .map(|n| (n.consumer, n.standing.key_use))
        .collect();
        assert_eq!(
            got,
            [
                ("a".to_string(), KeyUse::Declared),
                ("b".to_string(), KeyUse::Observed),
                ("c".to_string(), KeyUse::Unknown),
            ]
        );
    }
}
