//! Posting a notice to a consumer's webhook: the URL and secret read from the environment at
//! the moment of sending, the signature, retries with the receiver's `Retry-After` honoured
//! within a bound, and a circuit breaker per host.

use std::time::Duration;

use super::payload::{page_of, payload};
use super::{secret_key, signature, WebhookError};
use crate::consumers::{Registry, Webhook, WebhookKind};
use crate::notify::error_chain;
use crate::notify::plan::Notice;
use crate::notify::run::Clock;
use crate::retry::Pauses;

/// Consecutive failed deliveries to one host that end that host's deliveries for the run.
const BREAKER: u32 = 3;
/// Attempts per delivery, the first included.
const ATTEMPTS: u32 = 3;
/// The seconds a `Retry-After` header asks for (its delay-seconds form).
fn retry_after(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// The pauses between a delivery's attempts when the receiver asks for none: 0.5 s, then
/// doubling. Without jitter: one client retrying one receiver has nobody to fall out of step
/// with.
fn backoff() -> Pauses {
    Pauses::steady(Duration::from_millis(500), MAX_RETRY_AFTER)
}

/// How long to wait before the next attempt: what the receiver asked for, else the backoff's
/// next pause; `None` when the receiver asked for longer than [`MAX_RETRY_AFTER`] (the
/// delivery is given up for this run).
fn wait_before_retry(asked: Option<Duration>, backoff: Duration) -> Option<Duration> {
    let wait = asked.unwrap_or(backoff);
    (wait <= MAX_RETRY_AFTER).then_some(wait)
}

/// The longest wait a `Retry-After` may ask for; a longer one gives the delivery up for the
/// run instead, so a receiver cannot hold a nightly batch for hours.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// Reads an environment variable (the process environment in the CLI).
type Env<'a> = Box<dyn Fn(&str) -> Option<String> + 'a>;

/// Delivers the `webhook:<name>` notices of a run.
pub struct WebhookTransport<'a> {
    registry: Registry,
    env: Env<'a>,
    clock: Clock<'a>,
    /// `[notify] registry_url`, without its trailing `/`.
    registry_url: Option<String>,
    timeout: Duration,
    /// `[notify] ca_file`'s roots, trusted beside the system's.
    roots: Vec<reqwest::Certificate>,
    client: Option<(tokio::runtime::Runtime, reqwest::Client)>,
    /// Requests made so far, retries included.
    pub requests: u64,
    /// Consecutive failed deliveries by host (`host:port`), for the circuit breaker.
    failures: std::collections::HashMap<String, u32>,
}

impl<'a> WebhookTransport<'a> {
    pub fn new(
        registry: Registry,
        env: impl Fn(&str) -> Option<String> + 'a,
        clock: Clock<'a>,
        registry_url: Option<String>,
    ) -> WebhookTransport<'a> {
        WebhookTransport {
            registry,
            env: Box::new(env),
            clock,
            registry_url: registry_url.map(|u| u.trim_end_matches('/').to_string()),
            timeout: Duration::from_secs(10),
            roots: Vec::new(),
            client: None,
            requests: 0,
            failures: Default::default(),
        }
    }

    /// The timeout of one request (`[notify] webhook_timeout_seconds`).
    pub fn with_timeout(mut self, timeout: Duration) -> WebhookTransport<'a> {
        self.timeout = timeout;
        self
    }

    /// Trust `roots` beside the system's (`[notify] ca_file`, read by [`ca_roots`]).
    pub fn with_roots(mut self, roots: Vec<reqwest::Certificate>) -> WebhookTransport<'a> {
        self.roots = roots;
        self
    }

    fn hook(&self, n: &Notice) -> Result<&Webhook, WebhookError> {
        let name = n.channel.strip_prefix("webhook:").unwrap_or_default();
        self.registry
            .get(&n.consumer)
            .and_then(|c| c.webhooks.iter().find(|w| w.name == name))
            .ok_or_else(|| WebhookError::Unknown {
                consumer: n.consumer.clone(),
                channel: n.channel.clone(),
            })
    }

    fn client(&mut self) -> Result<&(tokio::runtime::Runtime, reqwest::Client), WebhookError> {
        if self.client.is_none() {
            // reqwest is built without a crypto provider of its own: use ring, as lettre does.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| WebhookError::Client(e.to_string()))?;
            let client = reqwest::Client::builder()
                .timeout(self.timeout)
                // A redirect would send the payload somewhere the registry did not name.
                .redirect(reqwest::redirect::Policy::none())
                .tls_certs_merge(self.roots.clone())
                .build()
                .map_err(|e| WebhookError::Client(e.without_url().to_string()))?;
            self.client = Some((rt, client));
        }
        Ok(self.client.as_ref().expect("set above"))
    }

    pub(crate) fn send(&mut self, n: &Notice) -> Result<(), WebhookError> {
        let hook = self.hook(n)?.clone();
        let err_ctx = (n.consumer.clone(), n.channel.clone());
        let url = (self.env)(&hook.url_env).ok_or_else(|| WebhookError::MissingUrl {
            consumer: err_ctx.0.clone(),
            channel: err_ctx.1.clone(),
            var: hook.url_env.clone(),
        })?;
        let bad_url = || WebhookError::BadUrl {
            consumer: err_ctx.0.clone(),
            channel: err_ctx.1.clone(),
            var: hook.url_env.clone(),
        };
        let parsed = reqwest::Url::parse(url.trim()).map_err(|_| bad_url())?;
        let host = parsed.host_str().unwrap_or_default().to_string();
        match parsed.scheme() {
            "https" => {}
            "http" if crate::notify::send::is_loopback(&host) => {}
            _ => return Err(bad_url()),
        }
        let authority = format!("{host}:{}", parsed.port_or_known_default().unwrap_or(0));
        let failures = self.failures.get(&authority).copied().unwrap_or(0);
        if failures >= BREAKER {
            return Err(WebhookError::HostDown {
                consumer: err_ctx.0,
                channel: err_ctx.1,
                failures,
            });
        }
        let outcome = self.post(n, &hook, &parsed, err_ctx);
        let count = self.failures.entry(authority).or_default();
        match &outcome {
            Ok(()) => *count = 0,
            Err(_) => *count += 1,
        }
        outcome
    }

    /// Render, sign and post one notice, with the retries.
    fn post(
        &mut self,
        n: &Notice,
        hook: &Webhook,
        parsed: &reqwest::Url,
        err_ctx: (String, String),
    ) -> Result<(), WebhookError> {
        let key = match (&hook.kind, &hook.secret_env) {
            (WebhookKind::Generic, Some(var)) => {
                let secret = (self.env)(var).ok_or_else(|| WebhookError::MissingSecret {
                    consumer: err_ctx.0.clone(),
                    channel: err_ctx.1.clone(),
                    var: var.clone(),
                })?;
                Some(secret_key(&secret).ok_or_else(|| WebhookError::BadSecret {
                    consumer: err_ctx.0.clone(),
                    channel: err_ctx.1.clone(),
                    var: var.clone(),
                })?)
            }
            _ => None,
        };
        let page = page_of(self.registry_url.as_deref(), n);
        let payload = payload(hook.kind, n, page.as_deref());
        let body = serde_json::to_vec(&payload).map_err(|e| WebhookError::Client(e.to_string()))?;

        let mut why = String::new();
        let mut pauses = backoff();
        for attempt in 1..=ATTEMPTS {
            let mut req = self
                .client()?
                .1
                .post(parsed.clone())
                .header("content-type", "application/json")
                .body(body.clone());
            if let Some(key) = &key {
                // Stamped per attempt: a receiver checks the timestamp against its clock.
                let timestamp = (self.clock)().timestamp();
                req = req
                    .header("webhook-id", &n.message_id)
                    .header("webhook-timestamp", timestamp.to_string())
                    .header(
                        "webhook-signature",
                        signature(key, &n.message_id, timestamp, &body),
                    );
            }
            self.requests += 1;
            let (rt, _) = self.client()?;
            let outcome = rt.block_on(async { req.send().await });
            let wait = match outcome {
                Ok(resp) if resp.status().is_success() => return Ok(()),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    if status != 429 && !(500..600).contains(&status) {
                        return Err(WebhookError::Refused {
                            consumer: err_ctx.0,
                            channel: err_ctx.1,
                            status,
                        });
                    }
                    why = format!("HTTP {status}");
                    resp.headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(retry_after)
                }
                Err(e) => {
                    let e = e.without_url();
                    why = match e.is_timeout() {
                        true => format!("no answer within {} s", self.timeout.as_secs()),
                        false => error_chain(&e),
                    };
                    None
                }
            };
            if attempt == ATTEMPTS {
                break;
            }
            let Some(wait) = wait_before_retry(wait, pauses.next_pause()) else {
                let asked = wait.map_or(0, |w| w.as_secs());
                why.push_str(&format!(" (Retry-After {asked} s is too long)"));
                return Err(WebhookError::Unavailable {
                    consumer: err_ctx.0,
                    channel: err_ctx.1,
                    why,
                    attempts: attempt,
                });
            };
            std::thread::sleep(wait);
        }
        Err(WebhookError::Unavailable {
            consumer: err_ctx.0,
            channel: err_ctx.1,
            why,
            attempts: ATTEMPTS,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_waits_what_the_receiver_asked_else_a_doubling_backoff_and_never_too_long() {
        assert_eq!(retry_after(" 2 "), Some(Duration::from_secs(2)));
        // The HTTP-date form is not read: the backoff applies.
        assert_eq!(retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        let mut pauses = backoff();
        let first = pauses.next_pause();
        assert_eq!(
            wait_before_retry(Some(Duration::from_secs(2)), first),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            wait_before_retry(None, first),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            wait_before_retry(None, pauses.next_pause()),
            Some(Duration::from_millis(1000))
        );
        assert_eq!(
            wait_before_retry(Some(MAX_RETRY_AFTER), first),
            Some(MAX_RETRY_AFTER)
        );
        assert_eq!(
            wait_before_retry(Some(MAX_RETRY_AFTER + Duration::from_secs(1)), first),
            None
        );
    }
}
