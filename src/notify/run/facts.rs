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
}

/// Whether a dataset has something due `today`: a milestone on a line other than the newest
/// (a countdown milestone, or an open window to announce), or a live waiver to tell. Only
/// these are worth a pass over the consumption log.
pub fn is_due(lines: &[Line], waivers: &Waivers, today: NaiveDate, notify: &Notify) -> bool {
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
    any_due || waivers.live(today).next().is_some()
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
