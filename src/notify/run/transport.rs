//! The channels' side of a run: what a transport does and how a delivery fails.

use chrono::{DateTime, FixedOffset};

use crate::notify::plan::Notice;
use crate::notify::send::MailError;

/// The clock a transport reads, at the edge: the caller builds it with the transports it
/// hands a run, and the run asks the transport ([`Transport::now`]), never a clock of its own.
pub type Clock<'a> = &'a dyn Fn() -> DateTime<FixedOffset>;

/// A delivery that did not happen.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error(transparent)]
    Mail(#[from] MailError),
    #[error(transparent)]
    Webhook(#[from] crate::notify::webhook::WebhookError),
}

impl DeliveryError {
    /// The HTTP status of a webhook delivery the receiver refused for good (a 4xx other than
    /// 429): recorded as failed rather than released for the next run.
    pub fn refused_status(&self) -> Option<u16> {
        match self {
            DeliveryError::Webhook(crate::notify::webhook::WebhookError::Refused {
                status,
                ..
            }) => Some(*status),
            _ => None,
        }
    }

    /// Whether every later delivery through the same transport would fail the same way.
    pub fn ends_batch(&self) -> bool {
        match self {
            DeliveryError::Mail(e) => e.ends_batch(),
            // One receiver down says nothing of mail or of the other receivers.
            DeliveryError::Webhook(_) => false,
        }
    }
}

/// One way notices reach people. `open` is called before anything is claimed, so a transport
/// that cannot work fails the run with nothing written; `deliver` sends one rendered notice;
/// `close` ends the session after the last; `now` is the instant at the edge, which a delivery
/// (when the server accepted it) or a release is stamped with.
pub trait Transport {
    fn open(&mut self) -> Result<(), DeliveryError>;
    fn deliver(&mut self, notice: &Notice) -> Result<(), DeliveryError>;
    fn close(&mut self);
    fn now(&self) -> DateTime<FixedOffset>;
    /// What the transport used so far, for the run's summary.
    fn usage(&self) -> Usage {
        Usage::default()
    }
}

/// The connections and requests a run's transports made.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// SMTP connections opened.
    pub connections: u64,
    /// Webhook requests made, retries included.
    pub requests: u64,
}
