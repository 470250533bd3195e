//! One notify run, from the facts to the ledger: plan today's notices, sift them by the
//! ledgers, render them ([`prepare`]), then claim → send and journal → confirm ([`deliver`]),
//! taking over (and first recovering from their journals) the claims of runs that died.
//!
//! The protocol lives here so that every channel goes through the same ledger. The caller
//! gathers the [`Facts`] once (the due datasets' lines, waivers, standings, ledgers, history
//! and contracts) and hands them in as values, with the day and the run's start in
//! [`Settings`], one [`Transport`] (the run's edge with the world: mail, webhooks, and the
//! clock that stamps deliveries) and an event sink; nothing here scans, reads the clock,
//! prints or knows the terminal, and the store is touched only to check that a run can
//! record ([`ready`]) and by the claim and the confirmation, which must see the newest ledgers.
//! What a run did comes back as rows and [`Event`]s, which the CLI turns into its table and
//! its talk.

mod claim;
mod deliver;
mod deprecation_facts;
mod events;
mod facts;
mod mail;
mod pending;
mod report;
mod transport;
mod waiver_facts;

pub use claim::read_ledgers;
pub use deliver::deliver;
pub use events::{about, Event};
pub use facts::{
    current_deprecations, is_due, wanted_contracts, wants_records, DatasetFacts, Facts,
};
pub use mail::render_mail;
pub use pending::pending;
pub use report::{planned_summary, Report, Row, RunError, Todo};
pub use transport::{Clock, DeliveryError, Transport, Usage};

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, FixedOffset, NaiveDate, Timelike};
use lettre::message::Mailbox;
use lettre::Message;

use crate::consumers::Registry;
use crate::model::config::Config;
use crate::store::Store;

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

/// What a caller hands a run besides the facts: the plan's inputs and the run's settings.
pub struct Inputs<'a> {
    pub registry: &'a Registry,
    pub config: &'a Config,
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

/// Today's notices this run may send, rendered: [`pending`] from the `facts`, then
/// [`render_mail`].
pub fn prepare(
    facts: &Facts,
    inputs: &Inputs,
    sink: Sink,
) -> Result<(Vec<Todo>, BTreeMap<String, Message>), RunError> {
    let (registry, config, from) = (inputs.registry, inputs.config, inputs.from);
    let domain = from.email.domain().to_string();
    let mut todo = pending(facts, registry, &inputs.settings, config, &domain, sink);
    let messages = render_mail(facts, config, from, &mut todo)?;
    Ok((todo, messages))
}

/// Whether the prepared `todo` is to be sent now: not when there is nothing to send, nor in a
/// dry run. Before `true`, the git identity is checked (nothing is sent unless it can be
/// recorded), so the caller opens its transports, and reads their credentials, only then.
pub fn ready(store: &Store, todo: &[Todo], dry_run: bool) -> Result<bool, RunError> {
    if todo.is_empty() {
        return Ok(false);
    }
    if dry_run {
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
        return Ok(false);
    }
    store.identity().map_err(RunError::Identity)?;
    Ok(true)
}
