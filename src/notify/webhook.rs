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

use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use super::error_chain;
use super::plan::Notice;
use super::run::{Clock, DeliveryError, Transport};
use crate::consumers::{Registry, Webhook, WebhookKind};
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

/// The facts every payload carries.
fn facts(n: &Notice, page: Option<&str>) -> Value {
    let changes: Vec<Value> = n
        .told
        .iter()
        .map(|c| {
            json!({
                "clause": c.clause,
                "old": c.old,
                "new": c.new,
                "rationale": c.rationale,
            })
        })
        .collect();
    json!({
        "type": "contracts.sunset_notice",
        "id": n.message_id,
        "dataset": n.dataset,
        "line": n.line,
        "milestone": n.milestone.to_string(),
        // Every milestone the one message serves: `["published", "before-60"]` when the
        // countdown tells the window's opening too, else `[milestone]`.
        "milestones": n.milestones(),
        "sunset": n.sunset.to_string(),
        "days_left": n.days_left,
        "consumer": n.consumer,
        "team": n.team,
        "reads_version": n.reads_version.to_string(),
        "new_line": n.new_line,
        "new_version": n.new_version.to_string(),
        "verdict": n.verdict,
        "breaking_changes": changes,
        "registry_url": page,
        // `published` tells the window's first day; `waiver:<id>` what was waived.
        "window_opens": n.opens.map(|d| d.to_string()),
        "waiver": n.waiver,
    })
}

/// One sentence a person reads first: what retires when, and what to do.
fn headline(n: &Notice) -> String {
    if let Some(w) = &n.waiver {
        let measured = match (&w.release, &w.measured) {
            (Some(r), Some(m)) => {
                format!("; release {r} measured {}", value_text(&Some(m.clone())))
            }
            _ => String::new(),
        };
        return format!(
            "{} line {}: {} (bound {}) is waived until {} by {}: {}{measured}",
            n.dataset,
            n.line,
            w.clause,
            value_text(&w.bound),
            w.until,
            w.by,
            w.reason
        );
    }
    // A countdown that tells the opening too has it in its headline, below.
    if let Some(opens) = n.opens.filter(|_| n.also.is_empty()) {
        return format!(
            "{} line {} opened on {opens}: {} reads line {}, which retires on {}; move to {} \
             (line {}) in the window",
            n.dataset, n.new_line, n.consumer, n.line, n.sunset, n.new_version, n.new_line
        );
    }
    let when = match n.days_left {
        d if d > 1 => format!("in {d} days"),
        1 => "tomorrow".to_string(),
        _ => "already (it is past its sunset)".to_string(),
    };
    let opened = match n.opens {
        Some(opens) => format!("{} line {} opened on {opens}; ", n.dataset, n.new_line),
        None => String::new(),
    };
    format!(
        "{opened}{} line {} retires {when}, on {}: move {} to {} (line {})",
        n.dataset, n.line, n.sunset, n.consumer, n.new_version, n.new_line
    )
}

fn verdict_text(n: &Notice) -> &'static str {
    match n.told.is_empty() {
        true => "nothing it declared in `uses` changes; it must still move before the sunset",
        false => "breaking changes touch what it uses",
    }
}

fn value_text(v: &Option<Value>) -> String {
    match v {
        None => "—".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

fn change_lines(n: &Notice) -> Vec<String> {
    n.told
        .iter()
        .map(|c| {
            format!(
                "{}: {} → {} ({})",
                c.clause,
                value_text(&c.old),
                value_text(&c.new),
                c.rationale
            )
        })
        .collect()
}

/// A Slack incoming-webhook message: `text` for notifications, `blocks` for the channel.
pub fn slack_payload(n: &Notice, page: Option<&str>) -> Value {
    let mut blocks = vec![
        json!({"type": "header", "text": {"type": "plain_text", "text": format!("{}: line {} sunset {}", n.dataset, n.line, n.sunset)}}),
        json!({"type": "section", "text": {"type": "mrkdwn", "text": headline(n)}}),
        json!({"type": "section", "fields": [
            {"type": "mrkdwn", "text": format!("*Consumer*\n{}", n.consumer)},
            {"type": "mrkdwn", "text": format!("*Reads*\n{}", n.reads_version)},
            {"type": "mrkdwn", "text": format!("*Milestone*\n{}", n.milestone_text())},
            {"type": "mrkdwn", "text": format!("*Days left*\n{}", n.days_left)},
        ]}),
        json!({"type": "section", "text": {"type": "mrkdwn", "text": format!("*Verdict*: {}", verdict_text(n))}}),
    ];
    let lines = change_lines(n);
    if !lines.is_empty() {
        let text = lines
            .iter()
            .map(|l| format!("• {l}"))
            .collect::<Vec<_>>()
            .join("\n");
        blocks.push(json!({"type": "section", "text": {"type": "mrkdwn", "text": text}}));
    }
    if let Some(page) = page {
        blocks.push(json!({"type": "context", "elements": [{"type": "mrkdwn", "text": format!("<{page}|Registry page>")}]}));
    }
    json!({"text": headline(n), "blocks": blocks})
}

/// A Teams Workflows message carrying one Adaptive Card (1.4), not the retired Office 365
/// connector card.
pub fn teams_payload(n: &Notice, page: Option<&str>) -> Value {
    let mut body = vec![
        json!({"type": "TextBlock", "size": "Medium", "weight": "Bolder", "wrap": true,
               "text": format!("{}: line {} sunset {}", n.dataset, n.line, n.sunset)}),
        json!({"type": "TextBlock", "wrap": true, "text": headline(n)}),
        json!({"type": "FactSet", "facts": [
            {"title": "Consumer", "value": n.consumer},
            {"title": "Reads", "value": n.reads_version.to_string()},
            {"title": "Milestone", "value": n.milestone_text()},
            {"title": "Days left", "value": n.days_left.to_string()},
            {"title": "Verdict", "value": verdict_text(n)},
        ]}),
    ];
    for l in change_lines(n) {
        body.push(json!({"type": "TextBlock", "wrap": true, "text": format!("- {l}")}));
    }
    let mut card = json!({
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": body,
    });
    if let Some(page) = page {
        card["actions"] =
            json!([{"type": "Action.OpenUrl", "title": "Registry page", "url": page}]);
    }
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "contentUrl": null,
            "content": card,
        }],
    })
}

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

    fn send(&mut self, n: &Notice) -> Result<(), WebhookError> {
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
            "http" if super::send::is_loopback(&host) => {}
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

/// Every channel of a run: mail through `mail`, each `webhook:<name>` through `hooks`. A
/// webhook's failure never ends the batch: mail and the other webhooks go on.
pub struct Channels<'a> {
    pub mail: Box<dyn Transport + 'a>,
    pub hooks: WebhookTransport<'a>,
}

/// Why the channels of a run could not be opened: nothing was claimed or sent.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The relay's settings or credentials.
    #[error(transparent)]
    Mail(#[from] super::send::MailError),
    /// `[notify] ca_file` is missing, unreadable or holds no certificate.
    #[error(transparent)]
    CaFile(WebhookError),
}

impl<'a> Channels<'a> {
    /// The channels of a run that sends `todo`, under `config`: the relay (its credentials
    /// read through `env`) only when a mail is due, so a run with webhook deliveries alone
    /// does not depend on it; then `[notify] ca_file`, read before anything is claimed, and
    /// the webhooks' settings. `messages` are the rendered mails by Message-ID; `root` is the
    /// store's root, which relative files are read from.
    pub fn open(
        config: &crate::model::config::Config,
        root: &std::path::Path,
        registry: &Registry,
        env: impl Fn(&str) -> Option<String> + Copy + 'a,
        clock: Clock<'a>,
        todo: &[super::run::Todo],
        messages: std::collections::BTreeMap<String, lettre::Message>,
    ) -> Result<Channels<'a>, OpenError> {
        let mail = match todo.iter().any(|t| t.notice.channel == super::ledger::MAIL) {
            true => super::send::MailTransport::new(
                super::send::Mailer::new(&config.smtp, root, env)?,
                messages,
            ),
            false => super::send::MailTransport::idle(),
        };
        let roots = match &config.notify.ca_file {
            Some(file) => ca_roots(root, file).map_err(OpenError::CaFile)?,
            None => Vec::new(),
        };
        let hooks = WebhookTransport::new(
            registry.clone(),
            env,
            clock,
            config.notify.registry_url.clone(),
        )
        .with_timeout(Duration::from_secs(config.notify.webhook_timeout_seconds))
        .with_roots(roots);
        Ok(Channels {
            mail: Box::new(mail),
            hooks,
        })
    }
}

impl Transport for Channels<'_> {
    fn open(&mut self) -> Result<(), DeliveryError> {
        self.mail.open()
    }

    fn deliver(&mut self, notice: &Notice) -> Result<(), DeliveryError> {
        match notice.channel.as_str() {
            super::ledger::MAIL => self.mail.deliver(notice),
            _ => Ok(self.hooks.send(notice)?),
        }
    }

    fn close(&mut self) {
        self.mail.close();
    }

    fn usage(&self) -> super::run::Usage {
        super::run::Usage {
            requests: self.hooks.requests,
            ..self.mail.usage()
        }
    }
}

/// The registry page of a notice's dataset, under `[notify] registry_url`.
fn page_of(registry_url: Option<&str>, n: &Notice) -> Option<String> {
    registry_url.map(|u| {
        format!(
            "{}/{}",
            u.trim_end_matches('/'),
            crate::render::html::dataset_page(&n.dataset)
        )
    })
}

/// What the webhook delivery `n` would post, for a preview: the hook's kind and the payload.
/// Nothing of the environment is read, so neither the URL nor the secret can show. `None` for
/// a mail notice or a channel the registry does not have.
pub fn preview(
    registry: &Registry,
    registry_url: Option<&str>,
    n: &Notice,
) -> Option<(WebhookKind, Value)> {
    let name = n.channel.strip_prefix("webhook:")?;
    let hook = registry
        .get(&n.consumer)?
        .webhooks
        .iter()
        .find(|w| w.name == name)?;
    let page = page_of(registry_url, n);
    Some((hook.kind, payload(hook.kind, n, page.as_deref())))
}

/// The payload kinds by name, for the docs and tests.
pub fn payload(kind: WebhookKind, n: &Notice, page: Option<&str>) -> Value {
    match kind {
        WebhookKind::Generic => facts(n, page),
        WebhookKind::Slack => slack_payload(n, page),
        WebhookKind::Teams => teams_payload(n, page),
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
