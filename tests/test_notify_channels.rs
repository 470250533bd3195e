//! Webhook transport settings through the real binary: `[notify] ca_file` (a receiver on
//! loopback over HTTPS whose certificate comes from a private CA made in the test with rcgen)
//! and a run with only webhook deliveries due, which must not need the SMTP relay at all.

use crate::common::notify_support;
use crate::common::webhook::Receiver;
use crate::common::world;

use std::net::TcpListener;

use notify_support::Pki;
use world::{SmtpServer, World};

const TODAY: &str = "2026-11-29";
const TOKEN: &str = "hook-T0KEN-s3cret";
const SLACK: &str =
    "webhooks = [{ kind = \"slack\", url_env = \"ATLAS_HOOK_URL\", name = \"atlas-slack\" }]\n";

/// The notify world with atlas reached by a Slack webhook too.
fn with_hook(w: &World) {
    let text = w.read("consumers.toml").unwrap();
    w.write(
        "consumers.toml",
        &text.replace(
            "contacts = [\"atlas@example.org\"]\n",
            &format!("contacts = [\"atlas@example.org\"]\n{SLACK}"),
        ),
    );
}

/// `[notify]` gains `extra`.
fn notify_config(w: &World, extra: &str) {
    let text = w.read("contracts.toml").unwrap();
    w.write(
        "contracts.toml",
        &text.replace("announce = false\n", &format!("announce = false\n{extra}")),
    );
}

/// A private CA, a TLS receiver it signed at the secret path, a relay, and a world whose
/// atlas has that webhook: where the `ca_file` tests start.
fn tls_hook_world() -> (Pki, Receiver, SmtpServer, World) {
    let pki = Pki::new();
    let hook = Receiver::tls(pki.server.clone()).at(&format!("/hooks/{TOKEN}"));
    let (smtp, w) = world::with_relay();
    with_hook(&w);
    (pki, hook, smtp, w)
}

fn no_url_in(run: &world::Run) {
    for text in [run.stdout(), run.stderr()] {
        assert!(!text.contains(TOKEN), "the webhook URL leaked: {text}");
    }
}

#[test]
fn a_receiver_signed_by_a_private_ca_is_trusted_with_notify_ca_file_only() {
    let (pki, hook, _smtp, w) = tls_hook_world();
    let url = hook.url();
    let env = [("ATLAS_HOOK_URL", url.as_str())];
    const CHANNEL: &str = "webhook:atlas-slack";

    // Without ca_file: the system's roots do not know the private CA. An environment error;
    // the delivery is released for the next run, not recorded; mail goes out as before.
    let run = w.run_env(TODAY, &["notify"], &env);
    run.assert_code(3);
    no_url_in(&run);
    let err = run.stderr();
    assert!(
        err.contains("certificate") || err.contains("UnknownIssuer"),
        "{err}"
    );
    assert_eq!(hook.received(), 0);
    assert!(w.ledger_entries("notice", CHANNEL).is_empty());
    let atlas = ("atlas".to_string(), "before-60".to_string());
    assert_eq!(w.ledger_entries("release", CHANNEL), vec![atlas.clone()]);
    assert!(w.ledger_entries("notice", "mail").contains(&atlas));

    // With the CA's PEM in the store, relative to its root: delivered and recorded.
    w.write("certs/hooks-ca.pem", &pki.ca_pem);
    notify_config(&w, "ca_file = \"certs/hooks-ca.pem\"\n");
    let run = w.run_env(TODAY, &["notify"], &env);
    run.assert_code(0);
    no_url_in(&run);
    assert_eq!(hook.received(), 1);
    let posted: serde_json::Value = serde_json::from_str(&hook.bodies()[0]).unwrap();
    assert!(posted["text"].as_str().unwrap().contains("roads line 1"));
    assert_eq!(w.ledger_entries("notice", CHANNEL), vec![atlas]);
}

#[test]
fn a_missing_or_empty_notify_ca_file_is_a_config_error_naming_it() {
    let (_pki, hook, smtp, w) = tls_hook_world();
    let url = hook.url();
    let env = [("ATLAS_HOOK_URL", url.as_str())];

    notify_config(&w, "ca_file = \"certs/none.pem\"\n");
    let run = w.run_env(TODAY, &["notify"], &env);
    run.assert_code(2);
    run.assert_stderr_has("certs/none.pem");
    run.assert_stderr_has("ca_file");

    w.write("certs/empty.pem", "not a certificate\n");
    let text = w.read("contracts.toml").unwrap();
    w.write(
        "contracts.toml",
        &text.replace("certs/none.pem", "certs/empty.pem"),
    );
    let run = w.run_env(TODAY, &["notify"], &env);
    run.assert_code(2);
    run.assert_stderr_has("certs/empty.pem")
        .assert_stderr_has("BEGIN CERTIFICATE");
    // Nothing was sent or written.
    assert!(smtp.mails().is_empty());
    assert_eq!(hook.received(), 0);
    assert!(w.read("notifications/roads.toml").is_none());
}

#[test]
fn a_run_with_only_webhook_deliveries_due_never_connects_to_the_relay() {
    let (smtp, w) = world::with_relay();
    // The mails of today go out first, while atlas has no webhook.
    w.run(TODAY, &["notify"]).assert_code(0);
    let mails = smtp.mails().len();
    assert!(mails > 0);

    // Then atlas gains a webhook, and the relay goes away (a closed port).
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let text = w.read("contracts.toml").unwrap();
    w.write(
        "contracts.toml",
        &text.replace(
            &format!("port = {}\n", smtp.port),
            &format!("port = {closed}\n"),
        ),
    );
    with_hook(&w);
    let hook = Receiver::start().at(&format!("/hooks/{TOKEN}"));
    let url = hook.url();
    let run = w.run_env(TODAY, &["notify"], &[("ATLAS_HOOK_URL", url.as_str())]);
    run.assert_code(0);
    no_url_in(&run);
    assert_eq!(hook.received(), 1);
    assert_eq!(
        w.ledger_entries("notice", "webhook:atlas-slack"),
        vec![("atlas".to_string(), "before-60".to_string())]
    );
    assert_eq!(smtp.mails().len(), mails, "no mail is sent again");

    // A mail due with the relay down still fails the run before anything is sent.
    let run = w.run("2026-12-16", &["notify"]);
    run.assert_code(3);
}

/// The rows of a text table as maps from header to cell, cut at the headers' offsets (every
/// column is left-aligned, and a pipe is never fitted).
fn table_rows(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut lines = text.lines();
    let head = lines.next().expect("a header line");
    let mut starts: Vec<(usize, String)> = Vec::new();
    let mut at = 0;
    for name in head.split("   ").map(str::trim).filter(|n| !n.is_empty()) {
        let i = head[at..].find(name).unwrap() + at;
        starts.push((i, name.to_string()));
        at = i + name.len();
    }
    lines
        .map(|l| {
            let mut row = std::collections::BTreeMap::new();
            for (k, (i, name)) in starts.iter().enumerate() {
                let end = starts.get(k + 1).map_or(l.len(), |s| s.0.min(l.len()));
                row.insert(
                    name.clone(),
                    l.get(*i..end).unwrap_or("").trim().to_string(),
                );
            }
            row
        })
        .collect()
}

#[test]
fn the_notify_table_names_each_rows_channel_and_its_own_recipients() {
    let w = World::new(world::closed_port());
    with_hook(&w);
    let secret_url = format!("https://hooks.example.org/{TOKEN}");
    let env = [("ATLAS_HOOK_URL", secret_url.as_str())];
    let run = w.run_env(TODAY, &["notify", "--dry-run"], &env);
    run.assert_code(0);
    no_url_in(&run);
    let rows = table_rows(&run.stdout());
    let atlas: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r["consumer"] == "atlas")
        .map(|r| {
            let channel = r.get("channel").cloned().unwrap_or_default();
            (channel, r["recipients"].clone())
        })
        .collect();
    assert_eq!(
        world::sorted(atlas),
        world::pairs(&[
            ("mail", "atlas@example.org"),
            ("webhook:atlas-slack", "atlas-slack (slack)"),
        ]),
        "{}",
        run.stdout()
    );
    // Every other consumer has mail only, to its own contacts.
    for r in rows.iter().filter(|r| r["consumer"] != "atlas") {
        assert_eq!(r.get("channel").map(String::as_str), Some("mail"), "{r:?}");
        assert!(r["recipients"].contains('@'), "{r:?}");
    }
}
