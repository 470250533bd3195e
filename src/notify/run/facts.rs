//! What a run is told of the store, as values: its caller reads them once (the lines, the
//! waivers, the consumption log's standings, the ledgers, the history, the contracts and the
//! release records a notice names) and hands them in, so that planning and rendering read
//! nothing. Only the claim and the confirmation, which must see the newest ledgers, read the
//! store again.

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDate;

use crate::consumers::Standing;
use crate::model::config::Notify;
use crate::model::history::History;
use crate::model::waiver::Waivers;
use crate::model::{Contract, Line};
use crate::notify::deprecation_notices::{KeyEvidence, LineDeprecation};
use crate::notify::ledger::Ledger;
use crate::notify::plan::milestone_due;
use crate::release::record::ReleaseRecord;

/// Everything a run plans and renders from.
#[derive(Debug, Default)]
pub struct Facts {
    /// The subject and body templates as the store holds them (`None`: the built-in one).
    pub templates: (Option<String>, Option<String>),
    /// The datasets with something due today ([`is_due`]), by name.
    pub datasets: BTreeMap<String, DatasetFacts>,
}

/// What a run knows of one dataset with something due.
#[derive(Debug, Default)]
pub struct DatasetFacts {
    pub lines: Vec<Line>,
    pub waivers: Waivers,
    /// Its readers in the lookback, as the consumption log classifies them.
    pub standings: Vec<Standing>,
    /// Its notification ledger at the store's HEAD.
    pub ledger: Ledger,
    pub history: History,
    /// The contracts of the versions [`wanted_contracts`] names, by version; one that could
    /// not be read is absent (a notice is still worth sending without its values).
    pub contracts: BTreeMap<String, Contract>,
    /// Its release records, when a live waiver names a release ([`wants_records`]) and they
    /// read; else `None`.
    pub records: Option<Vec<ReleaseRecord>>,
    /// The deprecations the current version of each live line carries.
    pub deprecations: Vec<LineDeprecation>,
    /// What its consumers' reads show of each deprecated key, where a source reports the
    /// attributes a read touched; a consumer absent here is judged by reads that cannot tell.
    pub key_evidence: KeyEvidence,
}

/// Whether a dataset has something due `today`: a milestone on a line other than the newest
/// (a countdown milestone, or an open window to announce), a live waiver to tell, or a
/// milestone of a deprecation. Only these are worth a pass over the consumption log.
pub fn is_due(
    lines: &[Line],
    waivers: &Waivers,
    deprecations: &[LineDeprecation],
    today: NaiveDate,
    notify: &Notify,
) -> bool {
    let newest = lines.iter().max_by_key(|l| l.major);
    let newest_major = newest.map(|l| l.major);
    // A window is announced from its first day on (the ledger keeps it to once).
    let opened = notify.announce && newest.is_some_and(|n| n.opens <= today);
    let any_due = lines.iter().any(|l| {
        Some(l.major) != newest_major
            && l.sunset.is_some_and(|s| {
                opened
                    || milestone_due(today, s, &notify.days_before, notify.overdue_every_days)
                        .is_some()
            })
    });
    any_due
        || waivers.live(today).next().is_some()
        || crate::notify::deprecation_notices::any_due(deprecations, today, notify)
}

/// The deprecations a dataset's live lines carry on `today`: each line not yet retired, in
/// the contract of its current version (the newest whose `valid_from` has come), which
/// `contract_of` reads (`None`: it does not read, and tells nothing).
pub fn current_deprecations(
    lines: &[Line],
    today: NaiveDate,
    contract_of: &mut dyn FnMut(&semver::Version) -> Option<Contract>,
) -> Vec<LineDeprecation> {
    let mut out = Vec::new();
    for l in lines.iter().filter(|l| l.sunset.is_none_or(|s| today < s)) {
        let current = l
            .versions
            .iter()
            .rev()
            .filter_map(&mut *contract_of)
            .find(|c| c.valid_from <= today);
        for d in current.iter().flat_map(|c| c.deprecated.values()) {
            out.push(LineDeprecation {
                line: l.major,
                version: current
                    .as_ref()
                    .map_or_else(|| l.newest().clone(), |c| c.version.clone()),
                deprecation: d.clone(),
            });
        }
    }
    out
}

/// The versions whose contracts a run may need: both sides of each breaking change (for the
/// values a notice tells), and the newest version of each line a live waiver covers (for the
/// bound it suspends).
pub fn wanted_contracts(
    lines: &[Line],
    waivers: &Waivers,
    history: &History,
    today: NaiveDate,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for c in history.breaking_between(0, u64::MAX) {
        if let Some(from) = &c.from {
            out.insert(from.clone());
            out.insert(c.to.clone());
        }
    }
    for w in waivers.live(today) {
        let covered = lines.iter().filter(|l| w.line.is_none_or(|n| n == l.major));
        out.extend(covered.map(|l| l.newest().to_string()));
    }
    out
}

/// Whether a run may need the dataset's release records: a live waiver names a release.
pub fn wants_records(waivers: &Waivers, today: NaiveDate) -> bool {
    waivers.live(today).any(|w| w.release.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consumers::parse_registry;
    use crate::model::change::{Direction, Verdict};
    use crate::model::config::Config;
    use crate::model::history::ChangeRecord;
    use crate::model::waiver::Waiver;
    use crate::notify::plan::Milestone;
    use crate::notify::run::{pending, Event, Settings};
    use crate::notify::test_fixtures::{day, standings};
    use semver::Version;

    fn line(major: u64, sunset: Option<&str>) -> Line {
        let versions = [format!("{major}.0.0"), format!("{major}.2.0")];
        let versions = versions.each_ref().map(String::as_str);
        crate::notify::test_fixtures::line(major, "2026-01-01", sunset, &versions)
    }

    fn waiver(line: Option<u64>, until: &str, release: Option<&str>) -> Waiver {
        Waiver {
            id: "roads:all:crs:2026-12-01".into(),
            line,
            clause: "crs".into(),
            granted: day("2026-12-01"),
            until: day(until),
            at: "2026-12-01T00:00:00Z".parse().unwrap(),
            by: "A <a@example.org>".into(),
            reason: "a reason".into(),
            release: release.map(str::to_string),
        }
    }

    fn change(from: Option<&str>, to: &str, verdict: Verdict) -> ChangeRecord {
        ChangeRecord {
            at: "2026-12-01T00:00:00Z".parse().unwrap(),
            from: from.map(str::to_string),
            to: to.into(),
            clause: "crs".into(),
            kind: None,
            direction: Direction::Changed,
            verdict,
            window: None,
            rationale: "why".into(),
        }
    }

    /// roads `version` from `valid_from`, deprecating `crs` through `remove_after` if given.
    fn contract(version: &str, valid_from: &str, remove_after: Option<&str>) -> Contract {
        let deprecated = remove_after.map_or(String::new(), |d| {
            format!("[deprecated]\ncrs = {{ reason = \"grid\", remove_after = {d} }}\n")
        });
        let text = format!(
            "dataset = \"roads\"\nversion = \"{version}\"\nvalid_from = {valid_from}\n\
             [clauses]\ncrs = \"EPSG:4326\"\n{deprecated}"
        );
        crate::model::contract::parse_contract(
            "c.toml",
            &text,
            &crate::model::kind::KindTable::builtin(),
            crate::model::Strictness::Reading,
        )
        .unwrap()
    }

    #[test]
    fn the_deprecations_told_are_those_of_each_live_lines_current_version() {
        let today = day("2026-12-06");
        let notify = Notify::default();
        // Line 1 retired on 2026-12-01; line 2's 2.2.0 deprecates `crs` from 2027-01-01 only.
        let lines = [line(1, Some("2026-12-01")), line(2, None)];
        let mut read = |v: &Version| {
            Some(match (v.major, v.minor) {
                (1, _) => contract(&v.to_string(), "2026-01-01", Some("2027-06-30")),
                (2, 0) => contract("2.0.0", "2026-06-01", None),
                _ => contract("2.2.0", "2027-01-01", Some("2027-06-30")),
            })
        };
        assert!(current_deprecations(&lines, today, &mut read).is_empty());
        // From 2027-01-01 2.2.0 is current, and its deprecation is due (announced).
        let later = day("2027-01-01");
        let found = current_deprecations(&lines, later, &mut read);
        let got: Vec<(u64, String, String)> = found
            .iter()
            .map(|d| (d.line, d.version.to_string(), d.deprecation.key.clone()))
            .collect();
        assert_eq!(got, [(2, "2.2.0".to_string(), "crs".to_string())]);
        let due = crate::notify::deprecation_notices::any_due;
        assert!(due(&found, later, &notify) && !due(&[], later, &notify));
    }

    #[test]
    fn a_dataset_is_due_for_a_milestone_of_an_old_line_or_a_live_waiver() {
        let notify = Notify {
            announce: false,
            ..Notify::default()
        };
        // The sunset is 30 days after the day: a milestone of the default countdown.
        let (today, none) = (day("2026-12-06"), Waivers::default());
        let windowed = [line(1, Some("2027-01-05")), line(2, None)];
        assert!(is_due(&windowed, &none, &[], today, &notify));
        // The newest line's sunset is no milestone of anyone's: nobody moves off it.
        let newest = [line(1, None), line(2, Some("2027-01-05"))];
        assert!(!is_due(&newest, &none, &[], today, &notify));
        let waived = Waivers {
            waiver: vec![waiver(None, "2026-12-31", None)],
            unwaive: Vec::new(),
        };
        assert!(is_due(&newest, &waived, &[], today, &notify));
        // A waiver that ended yesterday is nothing to tell.
        let ended = Waivers {
            waiver: vec![waiver(None, "2026-12-05", None)],
            unwaive: Vec::new(),
        };
        assert!(!is_due(&newest, &ended, &[], today, &notify));
    }

    #[test]
    fn the_contracts_wanted_are_both_sides_of_each_breaking_change_and_each_waived_line() {
        let today = day("2026-12-06");
        let lines = [line(1, None), line(2, None), line(3, None)];
        let history = History {
            change: vec![
                change(None, "1.0.0", Verdict::Breaking),
                change(Some("1.2.0"), "2.0.0", Verdict::Breaking),
                change(Some("2.0.0"), "2.2.0", Verdict::Compatible),
            ],
            ..History::default()
        };
        let waivers = Waivers {
            waiver: vec![waiver(Some(3), "2026-12-31", Some("3.2.0"))],
            unwaive: Vec::new(),
        };
        let wanted = wanted_contracts(&lines, &waivers, &history, today);
        let expected: BTreeSet<String> = ["1.2.0", "2.0.0", "3.2.0"].map(String::from).into();
        assert_eq!(wanted, expected);
        assert!(wants_records(&waivers, today));
        assert!(!wants_records(&Waivers::default(), today));
        // A waiver of every line wants each line's newest contract.
        let all = Waivers {
            waiver: vec![waiver(None, "2026-12-31", None)],
            unwaive: Vec::new(),
        };
        let wanted = wanted_contracts(&lines, &all, &History::default(), today);
        let expected: BTreeSet<String> = ["1.2.0", "2.2.0", "3.2.0"].map(String::from).into();
        assert_eq!(wanted, expected);
    }

    /// A run plans from the facts it is handed, with no store at all: the one reader still on
    /// the retiring line is told, the one already moved is not, and an unregistered reader is
    /// an event.
    #[test]
    fn the_plan_comes_from_the_facts_alone() {
        let registry = parse_registry(
            "consumers.toml",
            "[consumers.a]\ncontacts=[\"a@x.org\"]\n[consumers.b]\ncontacts=[\"b@x.org\"]\n",
        )
        .unwrap();
        // The sunset is 30 days after the day: a milestone of the default countdown.
        let (today, sunset) = ("2026-12-06", "2027-01-05");
        let lines = vec![line(1, Some(sunset)), line(2, None)];
        let standings = standings(
            "roads",
            &lines,
            &registry,
            ("2026-12-01T03:00:00Z", 3),
            &[("a", "1.0.0"), ("b", "2.0.0"), ("z", "1.0.0")],
        );
        let mut facts = Facts::default();
        facts.datasets.insert(
            "roads".into(),
            DatasetFacts {
                lines,
                standings,
                ..DatasetFacts::default()
            },
        );
        let settings = Settings {
            today: day(today),
            now: format!("{today}T08:00:00Z").parse().unwrap(),
            stale_minutes: 60,
            run: "test",
        };
        let mut unregistered = Vec::new();
        let mut sink = |e: Event<'_>| {
            if let Event::Unregistered { dataset, count } = e {
                unregistered.push((dataset.to_string(), count));
            }
        };
        // The countdown alone: the window's announcement is a milestone of its own.
        let mut config = Config::default();
        config.notify.announce = false;
        let todo = pending(&facts, &registry, &settings, &config, "x.org", &mut sink);
        let told: Vec<(&str, u64, Vec<Milestone>)> = todo
            .iter()
            .map(|t| {
                let n = &t.notice;
                let milestones = n.milestones().into_iter().cloned().collect();
                (n.consumer.as_str(), n.line, milestones)
            })
            .collect();
        assert_eq!(told, vec![("a", 1, vec![Milestone::Before(30)])]);
        assert_eq!(unregistered, vec![("roads".to_string(), 1)]);
    }
}
