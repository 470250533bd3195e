//! One notify run, from the store to the ledger: plan today's notices, sift them by the
//! ledgers, render them, then claim → send and journal → confirm, taking over (and first
//! recovering from their journals) the claims of runs that died.
//!
//! The protocol lives here so that every channel goes through the same ledger: the caller
//! hands in the clock, one [`Transport`] (mail today) and an event sink; nothing here reads
//! the clock, prints or knows the terminal. What a run did comes back as rows and [`Event`]s,
//! which the CLI turns into its table and its talk.

mod claim;
mod deliver;
mod events;
mod mail;
mod pending;
mod report;
mod transport;
mod waiver_facts;

pub use deliver::deliver;
pub use events::Event;
pub use mail::render_mail;
pub use pending::{due, pending};
pub use report::{planned_summary, Report, Row, RunError, Todo};
pub use transport::{DeliveryError, Transport, Usage};

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, FixedOffset, NaiveDate, Timelike};
use lettre::message::Mailbox;
use lettre::Message;

use crate::consumers::{Registry, Scan};
use crate::store::Store;

/// The clock of a run: the instant a claim, a delivery or a release is stamped with.
pub type Clock<'a> = &'a dyn Fn() -> DateTime<FixedOffset>;

/// Where a run says what it does, as it does it.
pub type Sink<'a> = &'a mut dyn FnMut(Event<'_>);

/// The fixed facts of one run.
pub struct Settings<'a> {
    pub today: NaiveDate,
    /// When the run started, in whole seconds as the ledger records it (so this run's own
    /// claim reads back as made `now`).
    pub now: DateTime<FixedOffset>,
    pub stale_minutes: i64,
    /// This run's name in the ledger's claims ([`run_id`]).
    pub run: &'a str,
}

/// The instant a run starts and its name ([`run_id`]), from the clock read at the caller's
/// edge: in whole seconds, as the ledger records it, so that this run's own claim reads back
/// as made `now`.
pub fn start(now: DateTime<FixedOffset>) -> (DateTime<FixedOffset>, String) {
    let now = now
        .with_nanosecond(0)
        .expect("zero nanoseconds is a valid time");
    (now, run_id(now))
}

/// A run's name in the ledger's claims: host, process and start instant, unique enough that
/// two runs never share one.
pub fn run_id(now: DateTime<FixedOffset>) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
        .collect();
    let host = if host.is_empty() { "host".into() } else { host };
    format!(
        "{host}.{}.{}",
        std::process::id(),
        now.timestamp_nanos_opt().unwrap_or_default()
    )
}

/// What a caller hands a run besides the store: the plan's inputs and the run's facts.
pub struct Inputs<'a> {
    pub registry: &'a Registry,
    /// The sender of every mail (`[notify] from`).
    pub from: &'a Mailbox,
    pub settings: Settings<'a>,
    /// Plan and render every notice, and claim, send and write nothing.
    pub dry_run: bool,
}

/// How a run ended.
#[derive(Debug)]
pub enum Ran {
    /// Planned and rendered, nothing claimed or sent: a dry run, or nothing to send.
    Planned(Vec<Todo>),
    /// Sent through the protocol: what became of each notice.
    Delivered(Report),
}

/// One notify run: plan today's notices and sift them by the ledgers ([`prepare`]); stop there
/// for a dry run or when nothing is left to send; else check the git identity, get the
/// transports from `open` (given the store, the notices to send and their rendered mails by
/// Message-ID; called only now, so a run with nothing to send reads no credentials) and
/// [`deliver`]: claim, send and journal, confirm, recovering a dead run's journal on the way.
/// `scan` is the consumption log's scan of the store's datasets with a milestone due.
pub fn run<E: From<RunError>, T: Transport>(
    store: Store,
    inputs: &Inputs,
    scan: impl FnOnce(&Store, BTreeSet<String>) -> Result<Scan, E>,
    open: impl FnOnce(&Store, &[Todo], BTreeMap<String, Message>) -> Result<T, E>,
    clock: Clock,
    sink: Sink,
) -> Result<Ran, E> {
    let (registry, from, s) = (inputs.registry, inputs.from, &inputs.settings);
    let scan = |datasets| scan(&store, datasets);
    let (todo, messages) = prepare(&store, registry, from, s, scan, &mut *sink)?;
    if todo.is_empty() {
        return Ok(Ran::Planned(todo));
    }
    if inputs.dry_run {
        // A dry run writes nothing, but it refuses what the claim of its real run would refuse
        // (a link on the way to a ledger), with the same error: it is how a user checks a run.
        let ledgers: BTreeSet<String> = todo
            .iter()
            .map(|t| crate::store::layout::notifications(&t.notice.dataset))
            .collect();
        let paths: Vec<&str> = ledgers.iter().map(String::as_str).collect();
        store.refuse_writing(&paths).map_err(|e| RunError::Claim {
            source: Box::new(RunError::Store(e)),
        })?;
        return Ok(Ran::Planned(todo));
    }
    // The identity before the credentials, as `deliver` checks it first: nothing is sent
    // unless it can be recorded.
    store.identity().map_err(RunError::Identity)?;
    let mut transport = open(&store, &todo, messages)?;
    Ok(Ran::Delivered(deliver(
        store,
        todo,
        s,
        clock,
        &mut transport,
        sink,
    )?))
}

/// Today's notices this run may send, rendered: [`due`], then the consumption log's `scan`
/// of the due datasets (only when there are any), [`pending`] and [`render_mail`].
pub fn prepare<E: From<RunError>>(
    store: &Store,
    registry: &Registry,
    from: &Mailbox,
    settings: &Settings,
    scan: impl FnOnce(BTreeSet<String>) -> Result<Scan, E>,
    sink: Sink,
) -> Result<(Vec<Todo>, BTreeMap<String, Message>), E> {
    let config = store.config();
    let due = due(store, settings.today, config)?;
    let scan = match due.is_empty() {
        true => None,
        false => Some(scan(due.keys().cloned().collect())?),
    };
    let domain = from.email.domain().to_string();
    let mut todo = pending(
        store,
        registry,
        &due,
        scan.as_ref(),
        settings,
        config,
        &domain,
        sink,
    )?;
    let messages = render_mail(store, config, from, &mut todo)?;
    Ok((todo, messages))
}
