//! What a run ends with: its error, its rows, its report, and the notices it may send.

use std::path::PathBuf;

use chrono::{DateTime, FixedOffset};
use serde::Serialize;

use super::transport::{DeliveryError, Usage};
use crate::notify::message::RenderError;
use crate::notify::plan::Notice;
use crate::notify::send::MailError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Templates(RenderError),
    #[error("notice {notice}: {source}")]
    Render {
        notice: String,
        source: Box<RenderError>,
    },
    #[error(transparent)]
    Message(MailError),
    /// No git identity to record with: nothing was sent.
    #[error(transparent)]
    Identity(StoreError),
    /// The transport failed to open: nothing was sent or recorded.
    #[error("{source}")]
    Open {
        source: DeliveryError,
        pending: usize,
    },
    #[error("cannot write the journal of this run in {}, so nothing was sent: {source}", dir.display())]
    Journal {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("could not claim the notices in the ledger, so none was sent: {source}")]
    Claim { source: Box<RunError> },
    /// The batch stopped at a failure that ends it; `unsent` notices after it were released.
    #[error(
        "the batch stopped at the first connection failure: {why}; {unsent} notice(s) after it \
         were not sent and not recorded"
    )]
    Stopped { why: String, unsent: usize },
    #[error("{failed} notice(s) could not be sent and were not recorded")]
    Undelivered { failed: usize },
    #[error("{sent} notice(s) were sent but could not be confirmed in the ledger: {source}")]
    Confirm {
        sent: usize,
        journal: PathBuf,
        stale_minutes: i64,
        source: StoreError,
    },
}

impl RunError {
    /// Whether the store's content or the configuration is at fault rather than the
    /// environment.
    pub fn is_input(&self) -> bool {
        match self {
            RunError::Store(e) | RunError::Identity(e) | RunError::Confirm { source: e, .. } => {
                e.is_input()
            }
            RunError::Templates(_) | RunError::Render { .. } => true,
            RunError::Message(e) => e.is_input(),
            RunError::Open { source, .. } => match source {
                DeliveryError::Mail(e) => e.is_input(),
                DeliveryError::Webhook(e) => e.is_input(),
            },
            RunError::Journal { .. } | RunError::Stopped { .. } | RunError::Undelivered { .. } => {
                false
            }
            RunError::Claim { source } => source.is_input(),
        }
    }
}

/// One notice in a run's report.
#[derive(Debug, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub notice: Notice,
    /// `planned` in a dry run, else `sent`, `failed`, `unsent` (the batch stopped first), or
    /// `recovered` (delivered by a run that died before recording it, as its journal says:
    /// recorded now, not sent again).
    pub status: &'static str,
    /// Whether this notice was claimed by a run that never confirmed it, so it may have
    /// been delivered already: it is sent again with the same Message-ID.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub resent: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    pub sent: usize,
    pub failed: usize,
    pub unsent: usize,
    pub recovered: usize,
    /// Why the batch stopped before its end, if it did.
    pub stopped: Option<String>,
    /// What the transports used, once closed.
    pub usage: Usage,
}

impl Report {
    /// The error a run ends with when not every notice went out.
    pub fn failure(&self) -> Option<RunError> {
        if let Some(why) = &self.stopped {
            return Some(RunError::Stopped {
                why: why.clone(),
                unsent: self.unsent,
            });
        }
        (self.failed > 0).then_some(RunError::Undelivered {
            failed: self.failed,
        })
    }

    /// The run's summary, one line for stderr.
    pub fn summary(&self) -> String {
        let recovered = (self.recovered > 0).then(|| format!(", {} recovered", self.recovered));
        let requests = match self.usage.requests {
            0 => String::new(),
            n => format!(" and {n} webhook request(s)"),
        };
        format!(
            "notify: {} sent, {} failed, {} unsent{}, over {} SMTP connection(s){requests}",
            self.sent,
            self.failed,
            self.unsent,
            recovered.unwrap_or_default(),
            self.usage.connections,
        )
    }
}

/// The summary of a run that planned and sent nothing, one line for stderr: a dry run's
/// `n` notices, or a real run with nothing due.
pub fn planned_summary(n: usize, dry_run: bool) -> String {
    if dry_run {
        format!("notify: dry run, {n} notice(s) planned and rendered, none sent")
    } else {
        "notify: nothing to send".to_string()
    }
}

/// A notice this run may send, with the stale claim it takes over, if any.
#[derive(Debug)]
pub struct Todo {
    pub notice: Notice,
    /// The newest stale claim, by run and time.
    pub(super) stale: Option<(String, DateTime<FixedOffset>)>,
    /// Every run with an open (stale) claim on the notice.
    pub(super) earlier: Vec<String>,
    /// The notice's mail as rendered (subject and body), for a preview.
    pub rendered: Option<crate::notify::message::Rendered>,
}

impl Todo {
    /// The row of a planned notice, for a dry run.
    pub fn planned(&self) -> Row {
        self.row("planned", None)
    }

    pub(super) fn row(&self, status: &'static str, error: Option<String>) -> Row {
        Row {
            notice: self.notice.clone(),
            status,
            resent: self.stale.is_some(),
            error,
        }
    }
}
