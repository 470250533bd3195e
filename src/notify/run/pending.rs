//! Today's notices and what the ledgers say of them: the plan per channel, from the facts
//! the caller gathered, and the sift into notices to send and notices to leave alone.

use std::collections::HashSet;

use chrono::{DateTime, FixedOffset};

use super::deprecation_facts::deprecation_notice;
use super::events::Event;
use super::facts::Facts;
use super::report::Todo;
use super::waiver_facts::waiver_notice;
use super::{Settings, Sink};
use crate::consumers::{Registry, Status};
use crate::model::config::Config;
use crate::notify::ledger::{sent_keys, ClaimState, Key, Ledger, MAIL};
use crate::notify::plan::{plan, DatasetInput, Milestone, Notice, SentKey};

/// The ledger key of milestone `m` of notice `n`.
fn key_at(n: &Notice, m: &Milestone) -> Key {
    (n.consumer.clone(), n.line, m.to_string(), n.channel.clone())
}

/// The ledger keys of `n`: one per milestone it serves, claimed and confirmed together.
pub(super) fn keys_of(n: &Notice) -> Vec<Key> {
    n.milestones().into_iter().map(|m| key_at(n, m)).collect()
}

/// Every channel of `consumer`: mail, then its webhooks.
pub(super) fn channels(registry: &Registry, consumer: &str) -> Vec<String> {
    let mut out = vec![MAIL.to_string()];
    if let Some(c) = registry.get(consumer) {
        out.extend(c.webhooks.iter().map(crate::consumers::Webhook::channel));
    }
    out
}

/// Each planned notice once per channel of its consumer; the ledger then drops the channels
/// that already have it.
pub(super) fn per_channel(registry: &Registry, notices: Vec<Notice>) -> Vec<Notice> {
    let mut out = Vec::with_capacity(notices.len());
    for n in notices {
        for c in channels(registry, &n.consumer).into_iter().skip(1) {
            out.push(Notice {
                channel: c,
                ..n.clone()
            });
        }
        out.push(n);
    }
    out
}

/// Sort planned notices by their ledger state: free or stale ones to send, the rest (already
/// sent, or claimed by a run that may still be sending) told to `sink` and left alone.
pub(super) fn sift<'l>(
    notices: Vec<Notice>,
    ledger_of: &dyn Fn(&str) -> Option<&'l Ledger>,
    now: DateTime<FixedOffset>,
    stale_minutes: i64,
    sink: Sink,
) -> Vec<Todo> {
    let mut out = Vec::new();
    for n in notices {
        let free = |notice| Todo {
            notice,
            stale: None,
            earlier: Vec::new(),
            rendered: None,
        };
        let Some(ledger) = ledger_of(&n.dataset) else {
            out.push(free(n));
            continue;
        };
        // A channel that has one milestone of a pair already gets the other alone.
        let settled: Vec<Milestone> = n
            .milestones()
            .into_iter()
            .filter(|m| ledger.sent().contains(&key_at(&n, m)))
            .cloned()
            .collect();
        let Some(n) = n.without(&|m| settled.contains(m)) else {
            continue;
        };
        match ledger.state(&keys_of(&n), now, stale_minutes) {
            ClaimState::Free => out.push(free(n)),
            ClaimState::InFlight { run, minutes } => sink(Event::InFlight {
                notice: &n,
                run: &run,
                minutes,
                stale_minutes,
            }),
            ClaimState::Stale { run, at, runs } => out.push(Todo {
                notice: n,
                stale: Some((run, at)),
                earlier: runs,
                rendered: None,
            }),
        }
    }
    out
}

/// Today's notices not yet sent by the ledgers of `facts`, sifted by their claims: what this
/// run may send.
pub fn pending(
    facts: &Facts,
    registry: &Registry,
    settings: &Settings,
    config: &Config,
    domain: &str,
    sink: Sink,
) -> Vec<Todo> {
    let mut inputs: Vec<DatasetInput> = Vec::new();
    let mut sent: HashSet<SentKey> = HashSet::new();
    // The waiver and deprecation notices, each planned by its own kind.
    let mut keyed: Vec<Notice> = Vec::new();
    for (dataset, f) in &facts.datasets {
        sent.extend(sent_keys(dataset, &f.ledger, &|c| channels(registry, c)));
    }
    for (dataset, f) in &facts.datasets {
        let (lines, standings) = (&f.lines, &f.standings);
        sink(Event::Standings { dataset, standings });
        let windowed: Vec<u64> = lines
            .iter()
            .filter(|l| l.sunset.is_some())
            .map(|l| l.major)
            .collect();
        let count = |status: Status| {
            standings
                .iter()
                .filter(|s| s.status == status && s.line.is_some_and(|l| windowed.contains(&l)))
                .count()
        };
        let (unknown, unsubscribed) = (count(Status::Unknown), count(Status::Unsubscribed));
        if unsubscribed > 0 {
            sink(Event::Unsubscribed {
                dataset,
                count: unsubscribed,
            });
        }
        if unknown > 0 {
            sink(Event::Unregistered {
                dataset,
                count: unknown,
            });
        }
        inputs.push(crate::notify::dataset_input(
            dataset, lines, standings, registry,
        ));
        let is_sent = |c: &str, l: u64, m: &str| {
            sent.contains(&(dataset.clone(), c.to_string(), l, m.to_string()))
        };
        for w in crate::notify::waiver_notices::plan(
            dataset,
            &f.waivers,
            settings.today,
            standings,
            registry,
            &is_sent,
        ) {
            keyed.extend(waiver_notice(f, &w, registry, settings.today, domain));
        }
        for p in crate::notify::deprecation_notices::plan(
            dataset,
            &f.deprecations,
            settings.today,
            &config.notify,
            standings,
            registry,
            &f.key_evidence,
            &is_sent,
        ) {
            keyed.extend(deprecation_notice(f, &p, registry, settings.today, domain));
        }
    }
    let mut planned = plan(settings.today, &config.notify, domain, &inputs, &sent);
    planned.extend(keyed);
    let notices = per_channel(registry, planned);
    let ledger_of = |d: &str| facts.datasets.get(d).map(|f| &f.ledger);
    sift(
        notices,
        &ledger_of,
        settings.now,
        settings.stale_minutes,
        sink,
    )
}
