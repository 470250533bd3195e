//! What a webhook posts for a notice: the generic facts (Standard Webhooks receivers), Slack's
//! blocks and a Teams Adaptive Card, each with the registry page where one is configured.

use serde_json::{json, Value};

use crate::consumers::{Registry, WebhookKind};
use crate::notify::plan::Notice;

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
        // `deprecated:<key>:<step>`: the key, why, its replacement and how it is used.
        "deprecation": n.deprecation,
    })
}

/// The title of a chat message: what the notice is about, and its day.
fn title(n: &Notice) -> String {
    match &n.deprecation {
        Some(d) => format!(
            "{}: {} deprecated, promised through {}",
            n.dataset, d.key, d.remove_after
        ),
        None => format!("{}: line {} sunset {}", n.dataset, n.line, n.sunset),
    }
}

/// One sentence a person reads first: what retires when, and what to do.
fn headline(n: &Notice) -> String {
    if let Some(d) = &n.deprecation {
        let instead = match &d.replacement {
            Some(r) => format!("; use {r} instead"),
            None => String::new(),
        };
        let how = match d.evidence {
            crate::consumers::attributes::KeyUse::Declared => "its `uses` names it",
            crate::consumers::attributes::KeyUse::Observed => "it was seen reading it",
            _ => "it declared no `uses` and its reads cannot tell",
        };
        return format!(
            "{} line {}: {} is deprecated ({}) and promised through {}{instead}; {} is told \
             because {how}",
            n.dataset, n.line, d.key, d.reason, d.remove_after, n.consumer
        );
    }
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
    if n.deprecation.is_some() {
        return "a key it uses is deprecated: nothing breaks before its last day";
    }
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
        json!({"type": "header", "text": {"type": "plain_text", "text": title(n)}}),
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
               "text": title(n)}),
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

/// The registry page of a notice's dataset, under `[notify] registry_url`.
pub(super) fn page_of(registry_url: Option<&str>, n: &Notice) -> Option<String> {
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
