//! Claiming a batch in the ledgers, and the ledger lines a run appends.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, FixedOffset, NaiveDate};

use super::pending::{read_ledgers, sift};
use super::report::{RunError, Todo};
use super::{Settings, Sink};
use crate::notify::ledger::{
    claim_text, entry_text, ledger_header, release_text, Claim, LedgerEntry, NoticeRecord, Release,
};
use crate::notify::plan::Notice;
use crate::store::{layout, Edit, Step, Store, StoreError};

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

/// What the ledger records of `n`, claimed or sent at `at` by a run for `today`.
fn record_of(n: &Notice, at: DateTime<FixedOffset>, today: NaiveDate) -> NoticeRecord {
    NoticeRecord {
        consumer: n.consumer.clone(),
        line: n.line,
        milestone: n.milestone.to_string(),
        recipients: n.recipients.clone(),
        message_id: n.message_id.clone(),
        at,
        for_date: today,
        sunset: n.sunset,
        channel: n.channel.clone(),
    }
}

pub(super) fn claim_of(n: &Notice, s: &Settings) -> Claim {
    Claim {
        notice: record_of(n, s.now, s.today),
        run: s.run.to_string(),
    }
}

pub(super) fn release_of(
    n: &Notice,
    run: &str,
    at: DateTime<FixedOffset>,
    reason: String,
) -> (String, String) {
    (
        n.dataset.clone(),
        release_text(&release_record(n, run, at, reason)),
    )
}

/// The `[[release]]` of notice `n` by run `run` at `at`; a `[[failed]]` adds the status.
pub(super) fn release_record(
    n: &Notice,
    run: &str,
    at: DateTime<FixedOffset>,
    reason: String,
) -> Release {
    Release {
        consumer: n.consumer.clone(),
        line: n.line,
        milestone: n.milestone.to_string(),
        run: run.to_string(),
        at,
        reason,
        channel: n.channel.clone(),
    }
}

pub(super) fn entry_of(
    n: &Notice,
    at: DateTime<FixedOffset>,
    today: NaiveDate,
    run: &str,
) -> String {
    entry_text(&LedgerEntry {
        notice: record_of(n, at, today),
        run: Some(run.to_string()),
    })
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
        let todo = sift(notices.clone(), &ledgers, s.now, s.stale_minutes, sink);
        if todo.is_empty() {
            return Ok(Step::Nothing(todo));
        }
        let appends = by_ledger(todo.iter().map(|t| {
            (
                t.notice.dataset.clone(),
                claim_text(&claim_of(&t.notice, s)),
            )
        }));
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
