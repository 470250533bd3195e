//! Send and journal, then confirm: one batch through one transport.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, FixedOffset};

use super::claim::{by_ledger, claim, entry_of, read_ledgers, release_of, release_records};
use super::events::Event;
use super::pending::keys_of;
use super::report::{Report, Row, RunError, Todo};
use super::transport::Transport;
use super::{Settings, Sink};
use crate::notify::journal::{self, Delivered, Journal};
use crate::notify::ledger::{commit_ledger, failure_text, Failure};
use crate::store::Store;

/// Send `todo` through `transport`: open it, claim the batch in the ledgers (one commit),
/// record what a dead run's journal says it delivered, send the rest one by one (each
/// journalled before the next), close the transport and confirm the batch (one more commit).
///
/// Errors before the claim mean nothing was sent or written. After it, a failed delivery is
/// a row (released in the ledger, for the next run); a failure that ends the batch leaves the
/// rest `unsent` and released.
pub fn deliver(
    store: Store,
    todo: Vec<Todo>,
    s: &Settings,
    transport: &mut dyn Transport,
    sink: Sink,
) -> Result<Report, RunError> {
    // Everything needed to record and to send, before the first delivery: a git identity for
    // the commits, and a transport that works.
    store.identity().map_err(RunError::Identity)?;
    transport.open().map_err(|source| RunError::Open {
        source,
        pending: todo.len(),
    })?;
    let journal_dir = store.notify_journal_dir();
    let mut journal = Journal::create(&journal_dir, s.run).map_err(|source| RunError::Journal {
        dir: journal_dir.clone(),
        source,
    })?;

    let (after, todo) = match claim(store, todo, s, sink) {
        Ok(x) => x,
        Err(e) => {
            journal.remove();
            return Err(RunError::Claim {
                source: Box::new(e),
            });
        }
    };
    let after_ledgers = read_ledgers(&after, todo.iter().map(|t| t.notice.dataset.as_str()))?;
    let mut mine = Vec::new();
    let mut releases = Vec::new();
    for t in todo {
        let held = after_ledgers
            .get(&t.notice.dataset)
            .is_some_and(|l| l.holds(&keys_of(&t.notice), s.run, s.now, s.stale_minutes));
        if held {
            mine.push(t);
        } else {
            sink(Event::ClaimedFirst { notice: &t.notice });
            releases.push(release_of(
                &t.notice,
                s.run,
                transport.now(),
                "another run claimed it first".into(),
            ));
        }
    }

    // A stale claim's run may have delivered the notice before it died: its journal says.
    let mut journals: BTreeMap<String, HashMap<Delivered, DateTime<FixedOffset>>> = BTreeMap::new();
    for t in &mine {
        for old in &t.earlier {
            if !journals.contains_key(old) {
                journals.insert(old.clone(), journal::read(&journal_dir, old));
            }
        }
    }
    // Every milestone of the message, as one write journals them.
    let delivered_by = |t: &Todo| {
        let keys = keys_of(&t.notice);
        t.earlier.iter().find_map(|old| {
            let at = keys
                .iter()
                .map(|k| journals[old].get(&(t.notice.dataset.clone(), k.clone())))
                .collect::<Option<Vec<_>>>()?;
            Some((old.clone(), **at.first()?))
        })
    };

    let mut report = Report {
        rows: Vec::with_capacity(mine.len()),
        ..Report::default()
    };
    let mut confirmations = Vec::new();
    let mut confirmed: HashSet<Delivered> = HashSet::new();
    for t in &mine {
        let n = &t.notice;
        if let Some((old, at)) = delivered_by(t) {
            sink(Event::Recovered {
                notice: n,
                run: &old,
                at,
            });
            confirmations.push((n.dataset.clone(), entry_of(n, at, s.today, &old)));
            confirmed.extend(keys_of(n).into_iter().map(|k| (n.dataset.clone(), k)));
            report.recovered += 1;
            report.rows.push(Row {
                resent: false,
                ..t.row("recovered", None)
            });
            continue;
        }
        if let Some(why) = &report.stopped {
            releases.push(release_of(
                n,
                s.run,
                transport.now(),
                format!("not sent: the batch stopped ({why})"),
            ));
            report.rows.push(t.row("unsent", None));
            report.unsent += 1;
            continue;
        }
        if let Some((old, at)) = &t.stale {
            sink(Event::Resending {
                notice: n,
                run: old,
                at: *at,
                stale_minutes: s.stale_minutes,
            });
        }
        match transport.deliver(n) {
            Ok(()) => {
                // The instant the server accepted it, on disk before the next send.
                let at = transport.now();
                if let Err(e) = journal.record(&n.dataset, &keys_of(n), at) {
                    report.stopped = Some(format!(
                        "cannot write the journal {}: {e}",
                        journal.path().display()
                    ));
                }
                sink(Event::Sent { notice: n });
                confirmations.push((n.dataset.clone(), entry_of(n, at, s.today, s.run)));
                confirmed.extend(keys_of(n).into_iter().map(|k| (n.dataset.clone(), k)));
                report.sent += 1;
                report.rows.push(t.row("sent", None));
            }
            Err(e) => {
                report.failed += 1;
                sink(Event::Failed {
                    notice: n,
                    error: &e,
                });
                if e.ends_batch() {
                    report.stopped = Some(e.to_string());
                }
                match e.refused_status() {
                    // Refused for good: recorded, so later runs do not send it again.
                    Some(status) => {
                        let text = release_records(n, s.run, transport.now(), e.to_string())
                            .into_iter()
                            .map(|entry| failure_text(&Failure { entry, status }))
                            .collect();
                        releases.push((n.dataset.clone(), text));
                    }
                    None => releases.push(release_of(
                        n,
                        s.run,
                        transport.now(),
                        format!("not sent: {e}"),
                    )),
                }
                report.rows.push(t.row("failed", Some(e.to_string())));
            }
        }
    }
    transport.close();
    report.usage = transport.usage();
    if !confirmations.is_empty() || !releases.is_empty() {
        let mut message = format!("notify: {} notice(s) sent for {}", report.sent, s.today);
        if report.recovered > 0 {
            message.push_str(&format!(
                ", {} recovered from a dead run's journal",
                report.recovered
            ));
        }
        let changes = by_ledger(confirmations.into_iter().chain(releases));
        commit_ledger(after, changes, &message).map_err(|source| RunError::Confirm {
            sent: report.sent,
            journal: journal.path().to_path_buf(),
            stale_minutes: s.stale_minutes,
            source,
        })?;
    }
    // Confirmed: this run's journal, and those of dead runs now wholly recorded, are done.
    journal.remove();
    for (old, entries) in &journals {
        let done = entries.keys().all(|d| {
            confirmed.contains(d)
                || after_ledgers
                    .get(&d.0)
                    .is_some_and(|l| l.sent().contains(&d.1))
        });
        if done {
            journal::remove_run(&journal_dir, old);
        }
    }
    Ok(report)
}
