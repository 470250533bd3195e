//! What a run tells as it goes, as facts: the CLI's printer words each event.

use chrono::{DateTime, FixedOffset};

use super::transport::DeliveryError;
use crate::consumers::Standing;
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

/// A notice as the talk and the errors name it.
pub fn about(n: &Notice) -> String {
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
