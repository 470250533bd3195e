//! Webhooks end to end: the real binary, the notify world, a real SMTP server and a real HTTP
//! receiver on loopback (a TcpListener thread here) that records each request and answers
//! the statuses a test scripts. Signatures are checked by recomputing them in Python's
//! standard library (hmac, hashlib), a second implementation, not ours.

use crate::common;
use crate::common::webhook::{Receiver, Request};
use crate::common::world;
use crate::common::Rows;

use world::{SmtpServer, World};

const TODAY: &str = "2026-11-29";
/// A Standard Webhooks secret: `whsec_` and base64 of the key bytes.
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// A path token that stands for the credential part of a real webhook URL.
const TOKEN: &str = "T0KEN-s3cr3t-path";

/// A scripted receiver (see `Receiver::scripted`) at a path that holds the token.
fn receiver(script: &[u16]) -> Receiver {
    Receiver::scripted(script).at(&format!("/hooks/{TOKEN}"))
}

/// A relay, a receiver answering with `script`, and the world whose atlas has a generic
/// webhook to it: where most tests of this file start.
fn generic_hook(script: &[u16]) -> (SmtpServer, Receiver, World) {
    let smtp = SmtpServer::start();
    let hook = receiver(script);
    let w = world_with_hook(&smtp, "generic");
    (smtp, hook, w)
}

/// The notify world with atlas reached by one webhook of `kind` too.
fn world_with_hook(smtp: &SmtpServer, kind: &str) -> World {
    let w = World::new(smtp.port);
    let secret = match kind {
        "generic" => ", secret_env = \"ATLAS_HOOK_SECRET\"",
        _ => "",
    };
    w.write(
        "consumers.toml",
        &world::registry(
            world::FLOOD_AND_LEAD,
            [
                Some(""),
                Some(&format!(
                    r#"webhooks = [{{ kind = "{kind}", url_env = "ATLAS_HOOK_URL"{secret} }}]"#
                )),
                Some(""),
                None,
            ],
        ),
    );
    w
}

/// [`notify`], which must exit `code` and never show the webhook URL.
#[track_caller]
fn notify_exits(w: &World, hook: &Receiver, code: i32) -> world::Run {
    let run = notify(w, hook);
    run.assert_code(code);
    no_url_in(&run);
    run
}

fn notify(w: &World, hook: &Receiver) -> world::Run {
    let url = hook.url();
    w.run_env(
        TODAY,
        &["--format", "json", "notify"],
        &[("ATLAS_HOOK_URL", &url), ("ATLAS_HOOK_SECRET", SECRET)],
    )
}

fn no_url_in(run: &world::Run) {
    for text in [run.stdout(), run.stderr()] {
        assert!(!text.contains(TOKEN), "the webhook URL leaked: {text}");
        assert!(!text.contains("/hooks/"), "the webhook URL leaked: {text}");
    }
}

/// `check` reads the ledger with its webhook entries and finds nothing in it (the world's
/// fixture contracts have findings of their own, unrelated).
fn ledger_checks(w: &World) {
    let run = w.run(TODAY, &["--format", "json", "check"]);
    assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
    let text = run.stdout();
    assert!(text.contains("\"findings\""), "{text}");
    assert!(!text.contains("notifications/"), "{text}");
}

/// The signature as Python's standard library computes it.
fn python_signature(id: &str, timestamp: &str, body: &str) -> String {
    let script = "import base64,hashlib,hmac,sys\n\
                  key = base64.b64decode(sys.argv[1].split('_', 1)[1])\n\
                  msg = (sys.argv[2] + '.' + sys.argv[3] + '.').encode() + sys.stdin.buffer.read()\n\
                  print('v1,' + base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest()).decode())\n";
    python_says(&["-c", script, SECRET, id, timestamp], body, "")
}

/// What `python3 args…` prints for `body` on its stdin, trimmed; it must exit 0, or the test
/// fails with `missing` (what to install) and its stderr.
fn python_says(args: &[&str], body: &str, missing: &str) -> String {
    let out = common::python3_with_stdin(args, body).expect("python3 runs");
    assert!(
        out.status.success(),
        "{missing}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_generic_webhook_is_signed_carries_the_facts_and_is_delivered_once_across_two_runs() {
    let (smtp, hook, w) = generic_hook(&[]);

    notify_exits(&w, &hook, 0);
    notify_exits(&w, &hook, 0);

    let got = hook.requests();
    assert_eq!(got.len(), 1, "delivered once across two runs: {got:#?}");
    let r = &got[0];
    assert_eq!(r.path, format!("/hooks/{TOKEN}"));
    assert_eq!(r.header("content-type"), "application/json");
    // The same id as the mail's Message-ID, so a receiver can de-duplicate a resend.
    let mail = smtp.mail_to("atlas@example.org");
    assert_eq!(mail.len(), 1, "mail goes out as before");
    let message_id = mail[0].header("Message-ID").unwrap();
    assert_eq!(r.header("webhook-id"), message_id.trim());
    let ts = r.header("webhook-timestamp");
    assert!(ts.parse::<i64>().is_ok_and(|t| t > 1_700_000_000), "{ts}");
    assert_eq!(
        r.header("webhook-signature"),
        python_signature(r.header("webhook-id"), ts, &r.body)
    );

    let body = r.json();
    assert_eq!(body["dataset"], "roads");
    assert_eq!(body["line"], 1);
    assert_eq!(body["consumer"], "atlas");
    assert_eq!(body["milestone"], "before-60");
    assert_eq!(body["sunset"], world::SUNSET);
    assert_eq!(body["days_left"], world::days_left(TODAY));
    assert_eq!(body["verdict"], "breaks");
    let change = &body["breaking_changes"][0];
    assert_eq!(change["clause"], "crs");
    assert_eq!(change["old"], "EPSG:4326");
    assert_eq!(change["new"], "EPSG:27700");
    assert!(change["rationale"]
        .as_str()
        .unwrap()
        .contains("British National Grid"));

    // Recorded once on its own channel, next to the mail; `check` accepts the ledger.
    let sent = ("atlas".to_string(), "before-60".to_string());
    assert_eq!(
        w.ledger_entries("notice", "webhook:generic"),
        std::slice::from_ref(&sent)
    );
    assert!(w.ledger_entries("notice", "mail").contains(&sent));
    ledger_checks(&w);
}

/// What the reference Standard Webhooks library (PyPI `standardwebhooks`, pinned in test.sh)
/// says of a request: `ok`, or its error.
fn reference_verdict(r: &Request, body: &str) -> String {
    let script = "import json,sys\n\
                  from standardwebhooks.webhooks import Webhook\n\
                  headers = json.loads(sys.argv[2])\n\
                  try:\n    Webhook(sys.argv[1]).verify(sys.stdin.read(), headers); print('ok')\n\
                  except Exception as e:\n    print(type(e).__name__)\n";
    let headers = serde_json::to_string(&r.headers).unwrap();
    python_says(
        &["-c", script, SECRET, &headers],
        body,
        "the standardwebhooks package (pip install standardwebhooks==1.0.0) is needed: ",
    )
}

#[test]
fn the_reference_standard_webhooks_library_verifies_the_signature() {
    let (_smtp, hook, w) = generic_hook(&[]);
    notify(&w, &hook).assert_code(0);
    let r = &hook.requests()[0];
    assert_eq!(reference_verdict(r, &r.body), "ok");
    // And it would catch a body changed on the way.
    let tampered = r.body.replace("EPSG:27700", "EPSG:3857");
    assert_ne!(tampered, r.body);
    assert_eq!(reference_verdict(r, &tampered), "WebhookVerificationError");
}

/// The receiver got the same delivery twice (the same id, the same body), and the ledger
/// records it once.
fn retried_once_and_recorded_once(hook: &Receiver, w: &World) {
    let got = hook.requests();
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(got[0].header("webhook-id"), got[1].header("webhook-id"));
    assert_eq!(got[0].body, got[1].body);
    assert_eq!(w.ledger_entries("notice", "webhook:generic").len(), 1);
}

#[test]
fn a_500_is_retried_with_the_same_id_and_then_delivered() {
    let (_smtp, hook, w) = generic_hook(&[500]);
    notify_exits(&w, &hook, 0);
    retried_once_and_recorded_once(&hook, &w);
}

#[test]
fn a_429_with_retry_after_is_retried_with_the_same_id_then_delivered() {
    // How long a retry waits is decided by a pure function with its own unit test
    // (`wait_before_retry` in src/notify/webhook/post.rs): no clock is compared here. This run
    // proves the 429 path end to end: retried, the same delivery, recorded once.
    let smtp = SmtpServer::start();
    let hook = Receiver::scripted_retry_after(&[429], 1).at(&format!("/hooks/{TOKEN}"));
    let w = world_with_hook(&smtp, "generic");
    notify_exits(&w, &hook, 0);
    retried_once_and_recorded_once(&hook, &w);
}

#[test]
fn a_receiver_that_stays_down_is_left_for_the_next_run_which_delivers_it() {
    // Three attempts, each 503 with Retry-After: 1; the next run's first attempt succeeds.
    let (smtp, hook, w) = generic_hook(&[503, 503, 503]);
    let run = notify_exits(&w, &hook, 3);
    run.assert_stderr_has("HTTP 503");
    assert_eq!(hook.requests().len(), 3);
    assert!(w.ledger_entries("notice", "webhook:generic").is_empty());
    // Mail is not held back by a webhook.
    assert_eq!(smtp.mails().len(), 2);

    let next = notify(&w, &hook);
    next.assert_code(0);
    assert_eq!(hook.requests().len(), 4);
    assert_eq!(w.ledger_entries("notice", "webhook:generic").len(), 1);
    assert_eq!(smtp.mails().len(), 2, "the mail is not sent again");
    ledger_checks(&w);
}

#[test]
fn a_400_fails_that_delivery_alone_with_its_status() {
    let (smtp, hook, w) = generic_hook(&[400]);
    let run = notify_exits(&w, &hook, 3);
    run.assert_stderr_has("HTTP 400");
    assert_eq!(hook.requests().len(), 1, "a 400 is not retried");
    let rows = run.json();
    let failed: Vec<_> = rows.rows().filter(|r| r["status"] == "failed").collect();
    assert_eq!(failed.len(), 1, "{rows:#}");
    assert_eq!(failed[0]["channel"], "webhook:generic");
    assert_eq!(smtp.mails().len(), 2, "both mails still went out");
    assert!(w.ledger_entries("notice", "webhook:generic").is_empty());
}

#[test]
fn a_400_is_recorded_as_failed_and_not_retried_by_the_next_run() {
    // Were the next run to retry, this receiver would accept it.
    let (smtp, hook, w) = generic_hook(&[400]);
    let run = notify(&w, &hook);
    run.assert_code(3);
    let failed = w.ledger_entries("failed", "webhook:generic");
    assert_eq!(failed.len(), 1, "the 400 is recorded as failed");
    let text = w.read("notifications/roads.toml").unwrap();
    let v: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(v["failed"][0]["status"].as_integer(), Some(400), "{text}");
    assert!(w.ledger_entries("notice", "webhook:generic").is_empty());

    let next = notify(&w, &hook);
    next.assert_code(0);
    assert_eq!(
        hook.requests().len(),
        1,
        "the next run does not retry a 400"
    );
    assert_eq!(smtp.mails().len(), 2, "the mail is not sent again");
    assert!(w.ledger_entries("notice", "webhook:generic").is_empty());
    ledger_checks(&w);
}

#[test]
fn slack_and_teams_receive_their_own_payloads_unsigned() {
    for kind in ["slack", "teams"] {
        let smtp = SmtpServer::start();
        let hook = receiver(&[]);
        let w = world_with_hook(&smtp, kind);
        notify_exits(&w, &hook, 0);
        let got = hook.requests();
        assert_eq!(got.len(), 1, "{kind}");
        assert_eq!(
            got[0].header("webhook-signature"),
            "",
            "{kind} is not signed"
        );
        let body = got[0].json();
        let text = got[0].body.clone();
        for fact in ["roads", world::SUNSET, "atlas", "crs", "EPSG:27700"] {
            assert!(text.contains(fact), "{kind} payload lacks {fact}: {text}");
        }
        match kind {
            "slack" => {
                assert!(body["text"].is_string());
                let blocks = body["blocks"].as_array().unwrap();
                assert_eq!(blocks[0]["type"], "header");
                assert!(blocks.len() <= 50, "Slack allows 50 blocks a message");
            }
            _ => {
                assert_eq!(body["type"], "message");
                let a = &body["attachments"][0];
                assert_eq!(a["contentType"], "application/vnd.microsoft.card.adaptive");
                assert_eq!(a["content"]["type"], "AdaptiveCard");
                assert_eq!(a["content"]["version"], "1.4");
            }
        }
        assert_eq!(
            w.ledger_entries("notice", &format!("webhook:{kind}")).len(),
            1
        );
    }
}

#[test]
fn a_missing_url_variable_is_named_and_the_url_never_shown() {
    let smtp = SmtpServer::start();
    let w = world_with_hook(&smtp, "slack");
    let run = w.run(TODAY, &["notify"]);
    run.assert_code(3);
    run.assert_stderr_has("ATLAS_HOOK_URL");
    assert_eq!(smtp.mails().len(), 2);
}

#[test]
fn three_failed_deliveries_to_one_host_end_that_hosts_deliveries_but_not_mail() {
    let (smtp, hook, w) = generic_hook(&[400, 400, 400, 400]);
    let hooks: Vec<String> = (1..=4)
        .map(|i| {
            format!(
                "{{ kind = \"generic\", name = \"h{i}\", url_env = \"ATLAS_HOOK_URL\", \
                 secret_env = \"ATLAS_HOOK_SECRET\" }}"
            )
        })
        .collect();
    let registry = w.read("consumers.toml").unwrap();
    let start = registry.find("webhooks = [").unwrap();
    let end = start + registry[start..].find('\n').unwrap();
    let registry = format!(
        "{}webhooks = [{}]{}",
        &registry[..start],
        hooks.join(", "),
        &registry[end..]
    );
    w.write("consumers.toml", &registry);

    let run = notify_exits(&w, &hook, 3);
    assert_eq!(
        hook.requests().len(),
        3,
        "the fourth is not sent: {}",
        run.stderr()
    );
    run.assert_stderr_has("deliveries in a row");
    let rows = run.json();
    let failed = rows.rows().filter(|r| r["status"] == "failed").count();
    assert_eq!(failed, 4, "{rows:#}");
    assert_eq!(
        smtp.mails().len(),
        2,
        "mail is not stopped by a webhook host"
    );
}

#[test]
fn a_webhook_claimed_by_a_run_that_died_is_resent_once_with_the_same_id() {
    let (_smtp, hook, w) = generic_hook(&[]);
    // What a run killed after its claim commit leaves: an open claim on the webhook channel,
    // older than `[notify] claim_stale_minutes`.
    let id = "<contracts.roads.1.atlas.before-60@example.org>";
    w.write(
        "notifications/roads.toml",
        &format!(
            "\n[[claim]]\nconsumer   = \"atlas\"\nline       = 1\nmilestone  = \"before-60\"\n\
             recipients = [\"atlas@example.org\"]\nmessage_id = \"{id}\"\n\
             channel    = \"webhook:generic\"\nrun        = \"dead.1.1\"\n\
             at         = {TODAY}T00:00:00Z\nfor_date   = {TODAY}\nsunset     = {}\n",
            world::SUNSET
        ),
    );
    let run = notify(&w, &hook);
    run.assert_code(0);
    run.assert_stderr_has("resending roads line 1 before-60 to atlas by webhook:generic");
    let got = hook.requests();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].header("webhook-id"), id);
    notify(&w, &hook).assert_code(0);
    assert_eq!(hook.requests().len(), 1, "recorded: not sent again");
    assert_eq!(w.ledger_entries("notice", "webhook:generic").len(), 1);
    ledger_checks(&w);
}

#[test]
fn a_silent_receiver_times_out_after_webhook_timeout_seconds_and_is_left_for_the_next_run() {
    let (_smtp, hook, w) = generic_hook(&[0, 0, 0]);
    let config = w.read("contracts.toml").unwrap();
    assert!(config.contains("[notify]\n"));
    w.write(
        "contracts.toml",
        &config.replacen("[notify]\n", "[notify]\nwebhook_timeout_seconds = 1\n", 1),
    );
    let run = notify_exits(&w, &hook, 3);
    // The configured timeout is the one the run waited out, on each of its attempts: the
    // run's own word says so (no clock is read), and the receiver saw it connect.
    run.assert_stderr_has("no answer within 1 s after 3 attempt(s)");
    assert!(hook.received() >= 1, "the receiver saw no attempt");
    assert!(w.ledger_entries("notice", "webhook:generic").is_empty());
}

/// A waiver is told once to each consumer that uses its clause, by mail and by its webhook,
/// and to nobody else; a second run sends nothing more.
#[test]
fn a_waiver_is_told_by_mail_and_by_webhook_once_to_the_consumers_that_use_its_clause() {
    let (smtp, hook, w) = generic_hook(&[]);
    // atlas relies on crs; flood-model on bbox only, so a waiver of crs is not its business.
    w.append(
        "consumers.toml",
        "\n[consumers.atlas.datasets.roads]\nuses = [\"crs\"]\n\
         \n[consumers.flood-model.datasets.roads]\nuses = [\"bbox\"]\n",
    );
    let id = format!("roads:1:crs:{TODAY}");
    let reason = world::CRS_WAIVER_REASON;
    w.waive_crs(TODAY);
    let milestone = format!("waiver:{id}");
    let waiver_hooks = || -> Vec<serde_json::Value> {
        hook.requests()
            .iter()
            .map(Request::json)
            .filter(|b| b["milestone"] == milestone.as_str())
            .collect()
    };
    let waiver_mails = || -> Vec<world::Mail> {
        smtp.mails()
            .into_iter()
            .filter(|m| m.header("Subject").unwrap().contains("waived"))
            .collect()
    };

    notify(&w, &hook).assert_code(0);
    let hooks = waiver_hooks();
    assert_eq!(hooks.len(), 1, "{:#?}", hook.requests());
    assert_eq!(hooks[0]["consumer"], "atlas");
    assert_eq!(hooks[0]["dataset"], "roads");
    let mails = waiver_mails();
    assert_eq!(mails.len(), 1, "{mails:#?}");
    assert_eq!(mails[0].to, vec!["atlas@example.org".to_string()]);
    assert!(mails[0].body().contains(reason), "{}", mails[0].body());
    let told = (String::from("atlas"), milestone.clone());
    let of_waiver = |channel: &str| -> Vec<(String, String)> {
        w.ledger_entries("notice", channel)
            .into_iter()
            .filter(|(_, m)| m.starts_with("waiver:"))
            .collect()
    };
    assert_eq!(of_waiver("mail"), std::slice::from_ref(&told));
    assert_eq!(of_waiver("webhook:generic"), std::slice::from_ref(&told));

    // Once each: the next run tells nobody again.
    notify(&w, &hook).assert_code(0);
    assert_eq!(waiver_hooks().len(), 1);
    assert_eq!(waiver_mails().len(), 1);
    ledger_checks(&w);
}
