//! What `notify --dry-run --show` shows of one planned notice: the mail as its recipients
//! would read it, or the webhook delivery as its receiver would get it.
//!
//! Built from the rendered notice and the registry only: no environment variable is read, so
//! neither a webhook's URL nor its secret can show.

use lettre::message::Mailbox;
use serde_json::{json, Value};

use super::ledger::MAIL;
use super::run::Todo;
use crate::consumers::Registry;

/// The preview of `t` as JSON: a mail's `from`, `to`, `subject`, `message_id` and `body`, or a
/// webhook delivery's `channel`, `kind`, `webhook_id` and `payload`.
pub fn preview(t: &Todo, from: &Mailbox, registry: &Registry, registry_url: Option<&str>) -> Value {
    let n = &t.notice;
    if n.channel == MAIL {
        let (subject, body) = t
            .rendered
            .as_ref()
            .map(|r| (r.subject.as_str(), r.body.as_str()))
            .unwrap_or_default();
        return json!({
            "from": from.to_string(),
            "to": n.recipients,
            "subject": subject,
            "message_id": n.message_id,
            "body": body,
        });
    }
    let (kind, payload) = match super::webhook::preview(registry, registry_url, n) {
        Some((kind, payload)) => (Some(kind.to_string()), payload),
        None => (None, Value::Null),
    };
    json!({
        "channel": n.channel,
        "kind": kind,
        "webhook_id": n.message_id,
        "payload": payload,
    })
}

/// The JSON row of `t` in a dry run, with its preview `p` (from [`preview`]) as `preview`.
pub fn row(t: &Todo, p: Value) -> Value {
    let mut row = serde_json::to_value(t.planned()).expect("a row serializes");
    row["preview"] = p;
    row
}

/// The preview `p` of `t` (from [`preview`]) as text: a heading naming the notice, then the
/// mail's headers, a blank line and its body, or the delivery's webhook-id, a blank line and
/// its payload, pretty-printed.
pub fn text(t: &Todo, p: &Value) -> String {
    let n = &t.notice;
    let field = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let about = format!(
        "{} line {} {} to {}",
        n.dataset,
        n.line,
        n.milestone_text(),
        n.consumer
    );
    if n.channel == MAIL {
        return format!(
            "=== mail: {about}\nFrom: {}\nTo: {}\nSubject: {}\nMessage-ID: {}\n\n{}",
            field(&p["from"]),
            n.recipients.join(", "),
            field(&p["subject"]),
            n.message_id,
            field(&p["body"]).trim_end()
        );
    }
    let kind = p["kind"].as_str().unwrap_or("unknown");
    format!(
        "=== {} ({kind}): {about}\nwebhook-id: {}\n\n{}",
        n.channel,
        n.message_id,
        serde_json::to_string_pretty(&p["payload"]).expect("JSON prints")
    )
}
