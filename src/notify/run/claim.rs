//! Reading the ledgers, claiming a batch in them, and the ledger lines a run appends.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, FixedOffset, NaiveDate};

use super::pending::sift;
use super::report::{RunError, Todo};
use super::{Settings, Sink};
use crate::notify::ledger::{
    claim_text, entry_text, ledger_header, parse_ledger, release_text, Claim, Ledger, LedgerEntry,
    NoticeRecord, Release,
};
use crate::notify::plan::Notice;
use crate::store::{layout, Edit, Step, Store, StoreError};

/// The ledgers of `datasets` at the store's HEAD (the caller's facts, and the claim's fresh
/// look). A ledger that does not parse is a
/// [`StoreError::Toml`], as any store file that does not parse is.
pub fn read_ledgers<'a>(
    store: &Store,
    datasets: impl IntoIterator<Item = &'a str>,
) -> Result<BTreeMap<String, Ledger>, StoreError> {
    let mut out = BTreeMap::new();
    for d in datasets {
        if out.contains_key(d) {
            continue;
        }
        let path = layout::notifications(d);
        let ledger = match store.read(&path)? {
            Some(text) => parse_ledger(&path, &text)?,
            None => Ledger::default(),
        };
        out.insert(d.to_string(), ledger);
    }
    Ok(out)
}

/// Group `(dataset, text)` appends by ledger file.
pub(super) fn by_ledger(
    items: impl IntoIterator<Item = (String, String)>,
) -> Vec<(String, String)> {
    let mut m: BTreeMap<String, String> = BTreeMap::new();
    for (dataset, text) in items {
        m.entry(layout::notifications(&dataset))
            .or_default()
            .push_str(&text);
    }
    m.into_iter().collect()
}

/// What the ledger records of `n`, claimed or sent at `at` by a run for `today`: one record
/// per milestone it serves, each with the message's one Message-ID.
fn records_of(n: &Notice, at: DateTime<FixedOffset>, today: NaiveDate) -> Vec<NoticeRecord> {
    n.milestones()
        .into_iter()
        .map(|m| NoticeRecord {
            consumer: n.consumer.clone(),
            line: n.line,
            milestone: m.to_string(),
            recipients: n.recipients.clone(),
            message_id: n.message_id.clone(),
            at,
            for_date: today,
            sunset: n.sunset,
            channel: n.channel.clone(),
        })
        .collect()
}

/// The `[[claim]]` text of `n`: a claim per milestone, in one append, so a message is claimed
/// whole or not at all.
pub(super) fn claims_of(n: &Notice, s: &Settings) -> String {
    records_of(n, s.now, s.today)
        .into_iter()
        .map(|notice| {
            claim_text(&Claim {
                notice,
                run: s.run.to_string(),
            })
        })
        .collect()
}

pub(super) fn release_of(
    n: &Notice,
    run: &str,
    at: DateTime<FixedOffset>,
    reason: String,
) -> (String, String) {
    let text = release_records(n, run, at, reason)
        .iter()
        .map(release_text)
        .collect();
    (n.dataset.clone(), text)
}

/// The `[[release]]` of each milestone of notice `n` by run `run` at `at`; a `[[failed]]`
/// adds the status.
pub(super) fn release_records(
    n: &Notice,
    run: &str,
    at: DateTime<FixedOffset>,
    reason: String,
) -> Vec<Release> {
    n.milestones()
        .into_iter()
        .map(|m| Release {
            consumer: n.consumer.clone(),
            line: n.line,
            milestone: m.to_string(),
            run: run.to_string(),
            at,
            reason: reason.clone(),
            channel: n.channel.clone(),
        })
        .collect()
}

/// The `[[notice]]` text of `n`, delivered at `at`: an entry per milestone it serves.
pub(super) fn entry_of(
    n: &Notice,
    at: DateTime<FixedOffset>,
    today: NaiveDate,
    run: &str,
) -> String {
    records_of(n, at, today)
        .into_iter()
        .map(|notice| {
            entry_text(&LedgerEntry {
                notice,
                run: Some(run.to_string()),
            })
        })
        .collect()
}

/// Commit the claims of `todo` through [`Store::transact`]: at each HEAD it lands on, the
/// ledgers are read again and whatever was claimed or sent meanwhile is dropped before the
/// rest is claimed. Returns the store at the newest HEAD (the claims read back: of two claims
/// of one notice, the first in the ledger sends) and what is left to send (empty when others
/// took it all).
pub(super) fn claim(
    store: Store,
    todo: Vec<Todo>,
    s: &Settings,
    sink: Sink,
) -> Result<(Store, Vec<Todo>), RunError> {
    let datasets: BTreeSet<String> = todo.iter().map(|t| t.notice.dataset.clone()).collect();
    let notices: Vec<Notice> = todo.into_iter().map(|t| t.notice).collect();
    let done = store.transact(|current| -> Result<_, RunError> {
        let ledgers = read_ledgers(current, datasets.iter().map(String::as_str))?;
        let ledger_of = |d: &str| ledgers.get(d);
        let todo = sift(notices.clone(), &ledger_of, s.now, s.stale_minutes, sink);
        if todo.is_empty() {
            return Ok(Step::Nothing(todo));
        }
        let appends = by_ledger(
            todo.iter()
                .map(|t| (t.notice.dataset.clone(), claims_of(&t.notice, s))),
        );
        let files = appends
            .iter()
            .map(|(path, text)| Ok((path.clone(), current.appended(path, ledger_header(), text)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        let message = format!("notify: claim {} notice(s) for {}", todo.len(), s.today);
        Ok(Step::Commit(Edit { files, message }, todo))
    })?;
    let after = done.store.refreshed()?;
    Ok((after, done.value))
}
