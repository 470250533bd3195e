//! The two milestones beside the countdown, through the real binary and a real SMTP server on
//! loopback: `published` (a window announced once when it opens) and `waiver:<id>` (a waiver
//! told once to the consumers that rely on the waived clause), and `check` refusing a ledger
//! whose milestone is none of these.

use crate::common::webhook::Receiver;
use crate::common::world;

use world::{SmtpServer, World};

const FLOOD: &str = "hydro-oncall@example.org";
const ATLAS: &str = "atlas@example.org";

fn announcing(w: &World) {
    let text = w.read("contracts.toml").unwrap();
    w.write(
        "contracts.toml",
        &text.replace("announce = false", "announce = true"),
    );
}

#[test]
fn a_window_is_announced_once_per_consumer_still_on_the_old_line() {
    let (smtp, w) = world::with_relay();
    announcing(&w);
    // atlas declares it relies on `crs`, which 2.0.0 changes; flood-model declares `name`
    // only (not in the contract), so nothing it declared changes: the short form.
    w.append(
        "consumers.toml",
        "\n[consumers.atlas.datasets.roads]\nuses = [\"crs\"]\n\
         \n[consumers.flood-model.datasets.roads]\nuses = [\"bbox\"]\n",
    );
    // Before line 2 opens (2026-11-01) nothing is announced and no countdown is due.
    w.run("2026-10-20", &["notify"]).assert_code(0);
    assert!(smtp.mails().is_empty(), "{:#?}", smtp.mails());

    // 2026-11-29: the window is open, and the 60-day countdown is due beside it.
    w.run("2026-11-29", &["notify"]).assert_code(0);
    let announced = |to: &str| -> Vec<world::Mail> {
        smtp.mail_to(to)
            .into_iter()
            .filter(|m| m.header("Subject").unwrap().contains("is published"))
            .collect()
    };
    assert_eq!(announced(ATLAS).len(), 1);
    assert_eq!(announced(FLOOD).len(), 1);
    assert!(smtp.mail_to("routing@example.org").is_empty());
    let atlas = &announced(ATLAS)[0];
    let subject = atlas.header("Subject").unwrap();
    assert!(subject.contains("line 2 is published"), "{subject}");
    assert!(subject.contains(world::SUNSET), "{subject}");
    let body = atlas.body();
    assert!(body.contains("opened on 2026-11-01"), "{body}");
    assert!(body.contains(world::SUNSET), "{body}");
    assert!(body.contains("- crs (fixed, changed)"), "{body}");
    assert!(body.contains("was:  EPSG:4326"), "{body}");
    assert!(body.contains("now:  EPSG:27700"), "{body}");
    // The short form: nothing flood-model declared changes.
    let body = announced(FLOOD)[0].body();
    assert!(body.contains("Nothing \"flood-model\" declared"), "{body}");
    assert!(!body.contains("- crs ("), "{body}");
    let milestones = || -> Vec<String> { w.ledger().into_iter().map(|(_, m)| m).collect() };
    let count = |m: &str| milestones().iter().filter(|x| *x == m).count();
    assert_eq!(count("published"), 2, "{:?}", milestones());
    assert_eq!(count("before-60"), 2, "{:?}", milestones());

    // Once: later runs send no second announcement.
    let sent = smtp.mails().len();
    w.run("2026-11-30", &["notify"]).assert_code(0);
    assert_eq!(smtp.mails().len(), sent);
    assert_eq!(count("published"), 2);
}

/// Issue 44 (3.4): on the first run in an open window the announcement and the 60-day
/// countdown fall due together. Each recipient gets one message that serves both, and each
/// channel one post; the ledger records both milestones, so no later run sends either.
#[test]
fn an_announcement_due_with_a_countdown_is_one_message_by_every_channel() {
    let smtp = SmtpServer::start();
    let hook = Receiver::start();
    let w = World::new(smtp.port);
    announcing(&w);
    w.write(
        "consumers.toml",
        &world::registry(
            world::FLOOD_ONCALL,
            [
                Some(""),
                Some(r#"webhooks = [{ kind = "generic", url_env = "ATLAS_HOOK_URL", secret_env = "ATLAS_HOOK_SECRET", name = "atlas-hook" }]"#),
                None,
                None,
            ],
        ),
    );
    let url = format!("http://127.0.0.1:{}/generic", hook.port);
    let env = [
        ("ATLAS_HOOK_URL", url.as_str()),
        (
            "ATLAS_HOOK_SECRET",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        ),
    ];
    // 2026-11-29: line 2 opened on 2026-11-01 and the sunset is 47 days away, inside the
    // 60-day milestone: both are due on this first run.
    w.run_env("2026-11-29", &["notify"], &env).assert_code(0);
    for to in [FLOOD, ATLAS] {
        let mails = smtp.mail_to(to);
        assert_eq!(mails.len(), 1, "{to}: {mails:#?}");
        let subject = mails[0].header("Subject").unwrap();
        assert!(subject.contains("line 2 is published"), "{subject}");
        let left = world::days_left("2026-11-29");
        assert!(subject.contains(&format!("{left} days left")), "{subject}");
        let body = mails[0].body();
        assert!(body.contains("opened on 2026-11-01"), "{body}");
        assert!(body.contains(&format!("{left} days left")), "{body}");
    }
    let posts = hook.requests();
    assert_eq!(posts.len(), 1, "{posts:#?}");
    let body: serde_json::Value = serde_json::from_str(&posts[0].body).unwrap();
    assert_eq!(body["milestone"], "before-60", "{body}");
    assert_eq!(
        body["milestones"],
        serde_json::json!(["published", "before-60"]),
        "{body}"
    );
    assert_eq!(body["window_opens"], "2026-11-01", "{body}");

    let both = |consumer: &str| world::pairs(&[(consumer, "before-60"), (consumer, "published")]);
    let mut by_mail = both("atlas");
    by_mail.extend(both("flood-model"));
    let recorded = || {
        (
            world::sorted(w.ledger_entries("notice", "mail")),
            world::sorted(w.ledger_entries("notice", "webhook:atlas-hook")),
        )
    };
    assert_eq!(recorded(), (world::sorted(by_mail), both("atlas")));

    // Neither milestone is sent again: not the same day, not the next.
    let before = recorded();
    for today in ["2026-11-29", "2026-11-30"] {
        w.run_env(today, &["notify"], &env).assert_code(0);
    }
    assert_eq!(smtp.mails().len(), 2);
    assert_eq!(hook.requests().len(), 1);
    assert_eq!(recorded(), before);
}

#[test]
fn announce_false_sends_only_the_countdown() {
    let (_smtp, w) = world::with_relay();
    w.run("2026-11-29", &["notify"]).assert_code(0);
    let milestones: Vec<String> = w.ledger().into_iter().map(|(_, m)| m).collect();
    assert_eq!(milestones, ["before-60", "before-60"]);
}

#[test]
fn a_waiver_is_told_once_to_the_consumers_that_use_its_clause() {
    let (smtp, w) = world::with_relay();
    // atlas relies on another clause only: it is not told.
    w.append(
        "consumers.toml",
        "\n[consumers.atlas.datasets.roads]\nuses = [\"bbox\"]\n",
    );
    w.waive_crs("2026-11-29");
    w.run("2026-11-29", &["notify"]).assert_code(0);
    let waived = || -> Vec<world::Mail> {
        smtp.mails()
            .into_iter()
            .filter(|m| m.header("Subject").unwrap().contains("waived"))
            .collect()
    };
    assert_eq!(waived().len(), 1, "{:#?}", smtp.mails());
    assert!(waived()[0].to.contains(&FLOOD.to_string()));
    let flood = &waived()[0];
    let subject = flood.header("Subject").unwrap();
    assert!(subject.contains("crs waived until 2026-12-20"), "{subject}");
    let body = flood.body();
    for needle in [
        "clause: crs",
        "bound:  EPSG:4326",
        "until:  2026-12-20",
        "The reprojection job is down; fixed next week",
        "by:     ",
    ] {
        assert!(body.contains(needle), "lacks {needle:?}: {body}");
    }
    let told: Vec<(String, String)> = w
        .ledger()
        .into_iter()
        .filter(|(_, m)| m.starts_with("waiver:"))
        .collect();
    assert_eq!(
        told,
        [(
            "flood-model".to_string(),
            "waiver:roads:1:crs:2026-11-29".to_string()
        )]
    );
    // Once each.
    w.run("2026-11-30", &["notify"]).assert_code(0);
    assert_eq!(waived().len(), 1);
}

#[test]
fn a_revoked_waiver_is_not_announced() {
    let (smtp, w) = world::with_relay();
    w.waive_crs("2026-11-29");
    w.run(
        "2026-11-29",
        &[
            "unwaive", "roads", "crs", "--line", "1", "--reason", "fixed",
        ],
    )
    .assert_code(0);
    w.run("2026-11-29", &["notify"]).assert_code(0);
    assert!(!smtp.mails().is_empty());
    assert!(w.ledger().iter().all(|(_, m)| !m.starts_with("waiver:")));
}

#[test]
fn a_ledger_with_a_malformed_milestone_fails_check() {
    let (_smtp, w) = world::with_relay();
    w.run("2026-11-29", &["notify"]).assert_code(0);
    let before = w.run("2026-11-29", &["check"]);
    assert!(
        !before.stderr().contains("milestone"),
        "{}",
        before.stderr()
    );
    let text = w.read("notifications/roads.toml").unwrap();
    assert!(text.contains("\"before-60\""));
    w.write(
        "notifications/roads.toml",
        &text.replacen("\"before-60\"", "\"before-sixty\"", 1),
    );
    let run = w.run("2026-11-29", &["check"]);
    // A finding of the store's audit (exit 1), naming the bad value.
    assert_eq!(run.code(), 1, "{}", run.stderr());
    let said = format!("{}{}", run.stdout(), run.stderr());
    assert!(said.contains("before-sixty"), "{said}");
    assert!(!before.stdout().contains("before-sixty"));
}
