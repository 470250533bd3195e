//! Webhooks, the notifier's second transport: one HTTP POST per notice and channel, to the
//! URL a consumer's `webhooks` entry names by environment variable (docs/src/guides/webhooks.md).
//!
//! A webhook URL is a credential (anyone holding a Slack or Teams URL can post to the
//! channel), so it is read from the environment when the notice is sent and never formatted
//! into an error, a row or the talk: reqwest's errors carry the URL, and are stripped of it.
//!
//! `generic` webhooks follow the Standard Webhooks convention: `webhook-id` is the notice's
//! stable id (the one its mail's Message-ID carries, so a receiver de-duplicates a resend),
//! `webhook-timestamp` the run's clock in unix seconds, `webhook-signature` `v1,` and the
//! base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the decoded `whsec_` secret.
//!
//! Outcomes: 2xx is delivered. 429, 5xx, a timeout or a failed connection is retried a few
//! times (honouring `Retry-After`, within a bound), then given up for this run: the claim is
//! released and the next run tries again. Any other status fails that delivery alone.

//!
//! The room is split by job: `payload.rs` builds what is posted (the generic facts, Slack's
//! blocks, a Teams card), `post.rs` posts it (signing, retries, the circuit breaker), and this
//! file holds what both share: the errors and the Standard Webhooks signature.

use base64::Engine;

use super::error_chain;

mod payload;
mod post;

pub use payload::{payload, preview, slack_payload, teams_payload};
pub use post::WebhookTransport;

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("{channel} of `{consumer}`: the registry has no such webhook")]
    Unknown { consumer: String, channel: String },
    #[error("{channel} of `{consumer}`: {var} (its url_env) is not set")]
    MissingUrl {
        consumer: String,
        channel: String,
        var: String,
    },
    /// The URL itself is never shown: it is a credential.
    #[error(
        "{channel} of `{consumer}`: {var} does not hold an https URL (http is allowed only to \
         a loopback host)"
    )]
    BadUrl {
        consumer: String,
        channel: String,
        var: String,
    },
    #[error("{channel} of `{consumer}`: {var} (its secret_env) is not set")]
    MissingSecret {
        consumer: String,
        channel: String,
        var: String,
    },
    #[error("{channel} of `{consumer}`: {var} is not a Standard Webhooks secret (whsec_<base64>)")]
    BadSecret {
        consumer: String,
        channel: String,
        var: String,
    },
    /// A status that retrying will not change (4xx other than 429).
    #[error("{channel} of `{consumer}`: the receiver answered HTTP {status}")]
    Refused {
        consumer: String,
        channel: String,
        status: u16,
    },
    /// 429, 5xx, a timeout or no connection, after every attempt.
    #[error("{channel} of `{consumer}`: {why} after {attempts} attempt(s); left for the next run")]
    Unavailable {
        consumer: String,
        channel: String,
        why: String,
        attempts: u32,
    },
    /// The circuit breaker: the host failed [`BREAKER`] deliveries in a row this run. The
    /// host is not named: a URL's host can be as private as its path.
    #[error(
        "{channel} of `{consumer}`: not sent, its host failed {failures} deliveries in a row \
         this run; left for the next run"
    )]
    HostDown {
        consumer: String,
        channel: String,
        failures: u32,
    },
    #[error("cannot start the HTTP client: {0}")]
    Client(String),
    #[error("[notify] ca_file {path}: {reason}")]
    CaFile { path: String, reason: String },
}

impl WebhookError {
    /// Whether the registry or the environment's settings are at fault rather than the
    /// receiver. A variable that is not set at all is the environment's (the run's secrets
    /// were not given to it), not the input's. Every variant is named, so that a new one is
    /// decided here.
    pub fn is_input(&self) -> bool {
        use WebhookError as E;
        match self {
            E::Unknown { .. } | E::BadUrl { .. } | E::BadSecret { .. } | E::CaFile { .. } => true,
            E::MissingUrl { .. } | E::MissingSecret { .. } => false,
            E::Refused { .. } | E::Unavailable { .. } | E::HostDown { .. } | E::Client(_) => false,
        }
    }
}

/// The root certificates of `[notify] ca_file` (`file`, relative to the store root `root`,
/// or absolute), which webhook deliveries trust beside the system's.
pub fn ca_roots(
    root: &std::path::Path,
    file: &str,
) -> Result<Vec<reqwest::Certificate>, WebhookError> {
    let path = root.join(file);
    let ca = |reason: String| WebhookError::CaFile {
        path: path.display().to_string(),
        reason,
    };
    let pem = super::send::read_pem(&path).map_err(ca)?;
    let roots = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| ca(error_chain(&e)))?;
    match roots.is_empty() {
        true => Err(ca("no certificate could be read from it".into())),
        false => Ok(roots),
    }
}

/// The Standard Webhooks signature of `body`: `v1,` and the base64 HMAC-SHA256 of
/// `{id}.{timestamp}.{body}` keyed with `key`.
pub fn signature(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    let mut ctx = ring::hmac::Context::with_key(&key);
    ctx.update(format!("{id}.{timestamp}.").as_bytes());
    ctx.update(body);
    let tag = ctx.sign();
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag.as_ref())
    )
}

/// The HMAC key of a `whsec_<base64>` secret (the prefix is optional, as the reference
/// libraries take it).
pub fn secret_key(secret: &str) -> Option<Vec<u8>> {
    let b64 = secret
        .trim()
        .strip_prefix("whsec_")
        .unwrap_or(secret.trim());
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .ok()
        .filter(|k| !k.is_empty())
}
