//! `notify --dry-run --show`: every notice printed in full, nothing sent, nothing written, no
//! webhook URL or secret shown. What the preview says is checked against what a real run then
//! sends: the mail the SMTP server receives and the body the webhook receiver is posted.

use crate::common::webhook::Receiver;
use crate::common::world;

use world::{SmtpServer, World};

const TODAY: &str = "2026-11-29";
/// The credential part of the webhook URL, which must never show.
const TOKEN: &str = "sl4ck-T0KEN-path";

/// The notify world with atlas reached by a Slack webhook too.
fn world_with_slack(smtp: &SmtpServer) -> World {
    let w = World::new(smtp.port);
    let text = w.read("consumers.toml").unwrap();
    w.write(
        "consumers.toml",
        &text.replace(
            "contacts = [\"atlas@example.org\"]\n",
            "contacts = [\"atlas@example.org\"]\n\
             webhooks = [{ kind = \"slack\", url_env = \"ATLAS_SLACK_URL\", name = \"atlas-slack\" }]\n",
        ),
    );
    w
}

#[test]
fn show_prints_each_mail_and_payload_in_full_sends_nothing_and_hides_the_url() {
    let smtp = SmtpServer::start();
    let hook = Receiver::start().at(&format!("/services/{TOKEN}"));
    let w = world_with_slack(&smtp);
    let url = hook.url();
    let env = [("ATLAS_SLACK_URL", url.as_str())];

    let text = w.run_env(TODAY, &["notify", "--dry-run", "--show"], &env);
    text.assert_code(0);
    let json = w.run_env(
        TODAY,
        &["--format", "json", "notify", "--dry-run", "--show"],
        &env,
    );
    json.assert_code(0);
    for run in [&text, &json] {
        for out in [run.stdout(), run.stderr()] {
            assert!(!out.contains(TOKEN), "the webhook URL leaked: {out}");
            assert!(!out.contains(&url), "the webhook URL leaked: {out}");
        }
    }
    // Nothing sent, nothing written.
    assert!(smtp.mails().is_empty(), "{:#?}", smtp.mails());
    assert!(hook.bodies().is_empty());
    assert!(w.read("notifications/roads.toml").is_none());

    // Now the real run: what it sends is what the preview showed.
    w.run_env(TODAY, &["notify"], &env).assert_code(0);
    let mail = &smtp.mail_to("atlas@example.org")[0];
    let subject = mail.header("Subject").unwrap();
    let body = mail.body();
    let message_id = mail.header("Message-ID").unwrap();
    let posted: serde_json::Value = serde_json::from_str(&hook.bodies()[0]).unwrap();

    let out = text.stdout();
    assert!(out.contains(&format!("Subject: {subject}")), "{out}");
    assert!(out.contains(&format!("Message-ID: {message_id}")), "{out}");
    assert!(out.contains("To: atlas@example.org"), "{out}");
    assert!(
        out.contains("From: Data Platform <data-platform@example.org>"),
        "{out}"
    );
    assert!(
        out.contains(body.trim_end()),
        "body missing:\n{body}\nin:\n{out}"
    );
    assert!(out.contains("webhook:atlas-slack (slack)"), "{out}");
    assert!(out.contains(&format!("webhook-id: {message_id}")), "{out}");
    assert!(
        out.contains(&serde_json::to_string_pretty(&posted).unwrap()),
        "the Slack payload, pretty-printed, is not in:\n{out}"
    );

    // JSON: each planned row carries its preview (a mail row has no `channel`).
    let rows = json.json();
    let rows = rows.as_array().unwrap();
    let of = |channel: &str| {
        rows.iter()
            .find(|r| {
                r["consumer"] == "atlas" && r["channel"].as_str().unwrap_or("mail") == channel
            })
            .unwrap_or_else(|| panic!("no {channel} row for atlas: {rows:#?}"))
    };
    let m = &of("mail")["preview"];
    assert_eq!(m["subject"], subject.as_str());
    assert_eq!(m["message_id"], message_id.as_str());
    assert_eq!(m["body"].as_str().unwrap().trim_end(), body.trim_end());
    let h = &of("webhook:atlas-slack")["preview"];
    assert_eq!(h["kind"], "slack");
    assert_eq!(h["webhook_id"], message_id.as_str());
    assert_eq!(h["payload"], posted);
}

#[test]
fn show_without_dry_run_is_a_usage_error_and_sends_nothing() {
    let (smtp, w) = world::with_relay();
    let run = w.run(TODAY, &["notify", "--show"]);
    run.assert_code(2);
    run.assert_stderr_has("--dry-run");
    assert!(smtp.mails().is_empty());
    assert!(w.read("notifications/roads.toml").is_none());
}
