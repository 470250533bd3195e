//! What a run tells as it goes, and how the CLI says it.

use chrono::{DateTime, FixedOffset};

use super::transport::DeliveryError;
use crate::consumers::Standing;
use crate::model::history::instant_text;
use crate::notify::ledger::MAIL;
use crate::notify::plan::Notice;

/// What a run tells as it goes.
#[derive(Debug)]
pub enum Event<'a> {
    /// The standings of a dataset with a milestone due, as classified.
    Standings {
        dataset: &'a str,
        standings: &'a [Standing],
    },
    /// Registered readers still on a retiring line that are not subscribed to the dataset.
    Unsubscribed {
        dataset: &'a str,
        count: usize,
    },
    /// Readers still on a retiring line that are not registered at all.
    Unregistered {
        dataset: &'a str,
        count: usize,
    },
    /// Left alone: another run claimed it `minutes` ago and may still be sending it.
    InFlight {
        notice: &'a Notice,
        run: &'a str,
        minutes: i64,
        stale_minutes: i64,
    },
    /// Left alone: another run's claim landed first.
    ClaimedFirst {
        notice: &'a Notice,
    },
    /// Recorded without sending: the dead run `run` delivered it at `at`, as its journal says.
    Recovered {
        notice: &'a Notice,
        run: &'a str,
        at: DateTime<FixedOffset>,
    },
    /// About to be sent again: the dead run `run` claimed it at `at` and never confirmed it.
    Resending {
        notice: &'a Notice,
        run: &'a str,
        at: DateTime<FixedOffset>,
        stale_minutes: i64,
    },
    Sent {
        notice: &'a Notice,
    },
    Failed {
        notice: &'a Notice,
        error: &'a DeliveryError,
    },
}

/// A notice as the talk names it.
pub(super) fn about(n: &Notice) -> String {
    let by = match n.channel.as_str() {
        MAIL => String::new(),
        c => format!(" by {c}"),
    };
    format!(
        "{} line {} {} to {}{by}",
        n.dataset,
        n.line,
        n.milestone_text(),
        n.consumer
    )
}

/// What the CLI says of an event, one line on stderr. (`Standings` says nothing here: the CLI
/// warns about unknown versions as `consumers` does.)
impl std::fmt::Display for Event<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Standings { .. } => Ok(()),
            Event::Unsubscribed { dataset: d, count } => write!(
                f,
                "warning: {d}: {count} registered reader(s) still on a retiring line are not \
                 subscribed to {d} in consumers.toml and are not told (add datasets.{d} to \
                 their entry)"
            ),
            Event::Unregistered { dataset: d, count } => write!(
                f,
                "warning: {d}: {count} reader(s) still on a retiring line are not in \
                 consumers.toml and cannot be told (see `contracts consumers {d}`)"
            ),
            Event::InFlight {
                notice,
                run,
                minutes,
                stale_minutes,
            } => write!(
                f,
                "skipped {}: claimed {minutes} min ago by run {run}, which may still be sending \
                 it (a claim is stale after {stale_minutes} min)",
                about(notice)
            ),
            Event::ClaimedFirst { notice } => {
                write!(f, "skipped {}: another run claimed it first", about(notice))
            }
            Event::Recovered { notice, run, at } => write!(
                f,
                "recorded {}: run {run} delivered it at {} and died before recording it (its \
                 journal says so); not sent again",
                about(notice),
                instant_text(at)
            ),
            Event::Resending {
                notice,
                run,
                at,
                stale_minutes,
            } => write!(
                f,
                "resending {} with the same Message-ID: run {run} claimed it at {} and never \
                 confirmed it (stale after {stale_minutes} min)",
                about(notice),
                instant_text(at)
            ),
            // A webhook is named, never its URL: the URL is a credential.
            Event::Sent { notice } if notice.channel != MAIL => {
                write!(f, "sent {}", about(notice))
            }
            Event::Sent { notice } => {
                write!(
                    f,
                    "sent {} ({})",
                    about(notice),
                    notice.recipients.join(", ")
                )
            }
            Event::Failed { notice, error } => write!(f, "failed {}: {error}", about(notice)),
        }
    }
}
