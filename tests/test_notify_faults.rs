//! `contracts notify` under the faults of issue 10: no git identity, two runs at once, a claim
//! left by a killed run, a doubled ledger, a relay that echoes the AUTH line, a relay that
//! never answers, a template that breaks only when rendered. The real binary against real SMTP
//! servers on loopback (mailin-embedded, and the small server of `notify_support`).

use crate::common;
use crate::common::notify_support;
use crate::common::world;
use crate::common::Rows;

use std::collections::HashMap;

use notify_support::{add_consumers, message_id, run_without_identity, Auth, MiniSmtp, Tls};
use world::{SmtpServer, World};

const TODAY: &str = "2026-11-29";

/// The world's config with `smtp` lines after `tls` and `notify` lines after `from`.
fn config_with(port: u16, smtp: &str, notify: &str) -> String {
    world::config(port)
        .replace("tls = \"none\"\n", &format!("tls = \"none\"\n{smtp}"))
        .replace(
            "from = \"Data Platform <data-platform@example.org>\"\n",
            &format!("from = \"Data Platform <data-platform@example.org>\"\n{notify}"),
        )
}

/// `check`'s findings about the ledgers. The world's hand-made contracts have findings of
/// their own (no change records), which are not this file's business.
fn ledger_findings(w: &World, day: &str) -> Vec<serde_json::Value> {
    let run = w.run(day, &["--format", "json", "check"]);
    assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
    world::ledger_findings(&run)
}

fn text(o: &std::process::Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn without_a_git_identity_nothing_is_sent_and_the_next_run_sends_once() {
    // Issue 10, failure 3: with no identity the notices went out, could not be recorded, exit 3,
    // and the next run sent them again.
    let (smtp, w) = world::with_relay();
    let (code, out, err) = text(&run_without_identity(w.root(), TODAY, &["notify"], &[]));
    assert!(code == 2 || code == 3, "exit {code}\n{out}\n{err}");
    assert!(err.contains("identity"), "{err}");
    assert_eq!(smtp.mails().len(), 0, "mail went out without an identity");
    assert_eq!(smtp.sessions(), 0, "the relay was contacted");
    assert!(w.read("notifications/roads.toml").is_none());
    // With an identity: each notice once, and a rerun sends nothing.
    w.run(TODAY, &["notify"]).assert_code(0);
    w.run(TODAY, &["notify"]).assert_code(0);
    assert_eq!(smtp.mails().len(), 2);
}

#[test]
fn check_fails_a_ledger_that_records_a_notice_twice() {
    let (_smtp, w) = world::with_relay();
    w.run(TODAY, &["notify"]).assert_code(0);
    assert!(ledger_findings(&w, TODAY).is_empty());
    // A second record of atlas's notice, appended as a second runner would have.
    let ledger = w.read("notifications/roads.toml").unwrap();
    let start = ledger.find("[[notice]]\nconsumer   = \"atlas\"").unwrap();
    let end = ledger[start + 1..]
        .find("[[")
        .map_or(ledger.len(), |e| start + 1 + e);
    let again = format!("\n{}", &ledger[start..end]);
    w.append("notifications/roads.toml", &again);
    w.run(TODAY, &["check"]).assert_code(1);
    let findings = ledger_findings(&w, TODAY);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["file"], "notifications/roads.toml");
    let m = findings[0]["message"].as_str().unwrap();
    assert!(
        m.contains("`atlas`")
            && m.contains("line 1")
            && m.contains("before-60")
            && m.contains("2 times"),
        "{m}"
    );
}

#[test]
fn a_ledger_written_before_claims_still_works() {
    // The format of every earlier release: [[notice]] entries only, no `run`.
    let (smtp, w) = world::with_relay();
    w.write(
        "notifications/roads.toml",
        "# Notices sent by `contracts notify`, one [[notice]] per delivered message.\n\
         \n[[notice]]\nconsumer   = \"atlas\"\nline       = 1\nmilestone  = \"before-60\"\n\
         recipients = [\"atlas@example.org\"]\n\
         message_id = \"<contracts.roads.1.atlas.before-60@example.org>\"\n\
         at         = 2026-11-29T06:15:00Z\nfor_date   = 2026-11-29\nsunset     = 2027-01-15\n",
    );
    w.run(TODAY, &["notify"]).assert_code(0);
    assert_eq!(smtp.mails().len(), 1);
    assert_eq!(smtp.mail_to("atlas@example.org").len(), 0);
    assert!(ledger_findings(&w, TODAY).is_empty());
}

fn claim_entry(consumer: &str, run: &str, at: chrono::DateTime<chrono::Utc>) -> String {
    format!(
        "\n[[claim]]\nconsumer   = \"{consumer}\"\nline       = 1\nmilestone  = \"before-60\"\n\
         recipients = [\"x@example.org\"]\n\
         message_id = \"<contracts.roads.1.{consumer}.before-60@example.org>\"\n\
         run        = \"{run}\"\nat         = {}\nfor_date   = 2026-11-29\n\
         sunset     = 2027-01-15\n",
        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

#[test]
fn a_fresh_claim_is_left_alone_and_a_stale_one_resent_with_the_same_message_id() {
    let (smtp, w) = world::with_relay();
    let now = chrono::Utc::now();
    // atlas was claimed two minutes ago by a run that may still be sending; flood-model two
    // hours ago by a run that died (the default stale age is 60 minutes).
    w.write(
        "notifications/roads.toml",
        &format!(
            "{}{}",
            claim_entry(
                "atlas",
                "other-host.1.1",
                now - chrono::Duration::minutes(2)
            ),
            claim_entry(
                "flood-model",
                "dead-host.2.2",
                now - chrono::Duration::hours(2)
            ),
        ),
    );
    let run = w.run(TODAY, &["--format", "json", "notify"]);
    run.assert_code(0);
    assert!(smtp.mail_to("atlas@example.org").is_empty());
    let flood = smtp.mail_to("hydro-oncall@example.org");
    assert_eq!(flood.len(), 1);
    assert_eq!(
        flood[0].header("Message-ID").unwrap(),
        "<contracts.roads.1.flood-model.before-60@example.org>"
    );
    let err = run.stderr();
    assert!(
        err.contains("skipped roads line 1 before-60 to atlas") && err.contains("other-host.1.1"),
        "{err}"
    );
    assert!(
        err.contains("resending roads line 1 before-60 to flood-model with the same Message-ID")
            && err.contains("dead-host.2.2"),
        "{err}"
    );
    let rows = run.json();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "sent");
    assert_eq!(rows[0]["resent"], true);
    assert!(ledger_findings(&w, TODAY).is_empty());
}

#[test]
fn two_runs_at_once_never_deliver_a_message_id_twice() {
    // Issue 10, failure 3: two runs at once both sent and both recorded every notice.
    const RUNS: usize = 4;
    let (smtp, w) = world::with_relay();
    add_consumers(&w, 8);
    let mut expected = 0;
    let mut codes: HashMap<i32, usize> = HashMap::new();
    for day in notify_support::MILESTONE_DAYS {
        let plan = w.run(day, &["--format", "json", "notify", "--dry-run"]);
        plan.assert_code(0);
        expected += plan.json().as_array().unwrap().len();
        let children: Vec<_> = (0..RUNS)
            .map(|_| {
                notify_support::notify_command(w.root(), w.home.path(), day)
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            let code = out.status.code().unwrap_or(-1);
            *codes.entry(code).or_default() += 1;
            assert_eq!(
                code,
                0,
                "a concurrent run failed on {day}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let delivered = notify_support::deliveries(&smtp);
    let twice: Vec<_> = delivered.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "delivered more than once: {twice:?}");
    // 10 consumers on line 1 and 8 milestones: 80 notices, each delivered once.
    assert_eq!(expected, 80);
    assert_eq!(delivered.len(), expected);
    assert!(ledger_findings(&w, "2027-01-29").is_empty());
    eprintln!(
        "{} days x {RUNS} concurrent runs: {expected} notices, {} deliveries, exit codes {codes:?}",
        notify_support::MILESTONE_DAYS.len(),
        smtp.mails().len()
    );
}

#[test]
fn a_535_reply_echoing_the_auth_line_leaks_no_credential() {
    // Issue 10, failure 5: the base64 AUTH PLAIN token was printed, in text and JSON.
    let user = "notifier@example.org";
    let password = "s3cret-Pa55word";
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let forbidden = [
        password.to_string(),
        b64(&format!("\0{user}\0{password}")),
        b64(user),
        b64(password),
    ];
    for mechanism in ["PLAIN", "LOGIN"] {
        for format in ["text", "json"] {
            let relay = MiniSmtp::start(Tls::None, Auth::EchoReject(mechanism));
            let w = World::new(relay.port);
            w.write(
                "contracts.toml",
                &config_with(
                    relay.port,
                    "username_env = \"CONTRACTS_SMTP_USER\"\npassword_env = \"CONTRACTS_SMTP_PASSWORD\"\n",
                    "",
                ),
            );
            let run = w.run_env(
                TODAY,
                &["--format", format, "notify"],
                &[
                    ("CONTRACTS_SMTP_USER", user),
                    ("CONTRACTS_SMTP_PASSWORD", password),
                ],
            );
            run.assert_code(3);
            // The server did get the credentials and did echo them back.
            let sent = relay.auth_lines().join("\n");
            assert!(
                sent.contains(&forbidden[1]) || sent.contains(&forbidden[3]),
                "{mechanism}: {sent}"
            );
            let shown = format!("{}{}", run.stdout(), run.stderr());
            for f in &forbidden {
                assert!(
                    !shown.contains(f.as_str()),
                    "{mechanism}/{format} shows {f:?}:\n{shown}"
                );
            }
            assert!(shown.contains("refused the login"), "{shown}");
            assert!(shown.contains("535"), "{shown}");
            // One login attempt for the batch, not one per notice; nothing sent or recorded.
            assert_eq!(relay.connections(), 1, "{mechanism}/{format}");
            assert!(relay.mails().is_empty());
            assert!(w.read("notifications/roads.toml").is_none());
        }
    }
}

#[test]
fn a_relay_that_never_answers_times_out_once_with_a_clear_message() {
    // Issue 10, failure 7: the whole timeout once per notice, as "Resource temporarily
    // unavailable (os error 11)".
    let relay = MiniSmtp::silent();
    let w = World::new(relay.port);
    w.write(
        "contracts.toml",
        &config_with(relay.port, "timeout_seconds = 1\n", ""),
    );
    let head = w.git(&["rev-parse", "HEAD"]);
    let run = w.run(TODAY, &["notify"]);
    run.assert_code(3);
    let err = run.stderr();
    assert!(
        err.contains(&format!(
            "timed out after 1 s waiting for the greeting of 127.0.0.1:{}",
            relay.port
        )),
        "{err}"
    );
    assert!(
        !err.contains("os error 11") && !err.contains("temporarily unavailable"),
        "{err}"
    );
    assert_eq!(relay.connections(), 1, "one attempt for the batch");
    assert_eq!(w.git(&["rev-parse", "HEAD"]), head, "a failed run wrote");
    // `timeout_secs`, the spelling of the issue, is the same setting.
    w.write(
        "contracts.toml",
        &config_with(relay.port, "timeout_secs = 1\n", ""),
    );
    let run = w.run(TODAY, &["notify"]);
    run.assert_code(3);
    run.assert_stderr_has("timed out after 1 s");
}

#[test]
fn a_relay_that_drops_the_connection_mid_batch_ends_the_batch() {
    // The first message is accepted, then the relay drops the connection: the rest are not
    // tried one by one over new connections; they are released unsent, only the first is
    // recorded, exit 3, and the next run sends the rest.
    let relay = MiniSmtp::dying_after(1);
    let w = World::new(relay.port);
    add_consumers(&w, 3);
    let run = w.run(TODAY, &["--format", "json", "notify"]);
    run.assert_code(3);
    assert_eq!(relay.mails().len(), 1);
    assert_eq!(
        relay.connections(),
        1,
        "the batch reconnected after the failure"
    );
    let statuses: Vec<String> = run
        .json()
        .rows()
        .map(|r| r["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(statuses, ["sent", "failed", "unsent", "unsent", "unsent"]);
    assert_eq!(w.ledger().len(), 1);
    run.assert_stderr_has("the batch stopped");
    let smtp = SmtpServer::start();
    w.set_smtp_port(smtp.port);
    w.run(TODAY, &["notify"]).assert_code(0);
    assert_eq!(smtp.mails().len(), 4);
    assert_eq!(w.ledger().len(), 5);
    assert!(ledger_findings(&w, TODAY).is_empty());
}

#[test]
fn a_dry_run_renders_every_notice_and_a_template_error_is_exit_2() {
    // Issue 10, failure 7: the dry run said "planned", the real run then exited 2.
    let (smtp, w) = world::with_relay();
    w.write(
        "templates/notice.txt.j2",
        "Hello {{ team }},\n\nline {{ line }} of {{ datset }} retires.\n",
    );
    let run = w.run(TODAY, &["notify", "--dry-run"]);
    run.assert_code(2);
    let err = run.stderr();
    assert!(err.contains("notice.txt.j2"), "{err}");
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("`datset`"), "{err}");
    assert_eq!(smtp.sessions(), 0);
    // A template that loops is stopped, in a dry run too.
    w.write(
        "templates/notice.txt.j2",
        "{% for a in range(10000) %}{% for b in range(10000) %}{% endfor %}{% endfor %}",
    );
    let run = w.run(TODAY, &["notify", "--dry-run"]);
    run.assert_code(2);
    run.assert_stderr_has("fuel");
}

#[test]
fn message_ids_parse_from_the_mini_server() {
    // The helper the crash test counts with.
    assert_eq!(
        message_id("From: a\r\nMessage-ID: <x@y>\r\n\r\nbody").as_deref(),
        Some("<x@y>")
    );
}

#[test]
fn a_notice_a_dead_run_journalled_is_recorded_not_resent() {
    // A run claimed atlas and flood-model two hours ago, delivered atlas (its journal says so)
    // and was killed before confirming. The next run records atlas without sending it and
    // sends flood-model, which the dead run never got to.
    let (smtp, w) = world::with_relay();
    let then = chrono::Utc::now() - chrono::Duration::hours(2);
    w.write(
        "notifications/roads.toml",
        &format!(
            "{}{}",
            claim_entry("atlas", "dead-host.7.7", then),
            claim_entry("flood-model", "dead-host.7.7", then),
        ),
    );
    let journal = w.root().join(".git/contracts-notify");
    std::fs::create_dir_all(&journal).unwrap();
    std::fs::write(
        journal.join("dead-host.7.7.log"),
        format!(
            "roads atlas 1 before-60 {}\n",
            then.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
    )
    .unwrap();
    let run = w.run(TODAY, &["--format", "json", "notify"]);
    run.assert_code(0);
    assert!(
        smtp.mail_to("atlas@example.org").is_empty(),
        "atlas was resent"
    );
    assert_eq!(smtp.mail_to("hydro-oncall@example.org").len(), 1);
    let mut statuses = common::string_pairs(&run.json(), "consumer", "status");
    statuses.sort();
    assert_eq!(
        statuses,
        [
            ("atlas".to_string(), "recovered".to_string()),
            ("flood-model".to_string(), "sent".to_string())
        ]
    );
    run.assert_stderr_has("recorded roads line 1 before-60 to atlas: run dead-host.7.7");
    assert_eq!(
        world::sorted(w.ledger()),
        world::pairs(&[("atlas", "before-60"), ("flood-model", "before-60")])
    );
    // Both journals are done with: the dead run's is wholly recorded, this run's confirmed.
    assert_eq!(std::fs::read_dir(&journal).unwrap().count(), 0);
    assert!(ledger_findings(&w, TODAY).is_empty());
}

#[test]
fn two_hosts_sharing_a_remote_send_each_notice_once_and_push_the_ledger() {
    // Issue 10: "two runs at once (two crons, or two hosts sharing a remote) never send one
    // notice twice", and the ledger must leave the machine. Two checkouts of one bare remote,
    // one `notify` on each at the same moment, on every milestone day.
    let (smtp, w) = world::with_relay();
    add_consumers(&w, 8);
    let hosts = notify_support::TwoHosts::new(&w);
    let host_b = &hosts.host_b;
    let spawn = |repo: &std::path::Path, day: &str| {
        notify_support::notify_command(repo, w.home.path(), day)
            .spawn()
            .unwrap()
    };
    for day in notify_support::MILESTONE_DAYS {
        let children = [spawn(w.root(), day), spawn(host_b, day)];
        for child in children {
            let out = child.wait_with_output().unwrap();
            common::assert_exit(&out, 0, &format!("a run failed on {day}: "));
        }
    }
    let delivered = notify_support::deliveries(&smtp);
    let twice: Vec<_> = delivered.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "delivered more than once: {twice:?}");
    // 10 consumers on line 1 and 8 milestones, as in the test of two runs on one checkout.
    assert_eq!(delivered.len(), 80);
    // The remote holds the whole ledger: each notice recorded once, whichever host sent it.
    let ledger = hosts.remote_ledger();
    let mut recorded: HashMap<(String, String), usize> = HashMap::new();
    for key in world::notice_keys(&ledger) {
        *recorded.entry(key).or_default() += 1;
    }
    assert_eq!(recorded.len(), 80, "{recorded:?}");
    assert!(recorded.values().all(|n| *n == 1), "{recorded:?}");
}

#[test]
fn a_linked_notifications_folder_is_the_stores_content_exit_2() {
    // Issue 25, item 2: the link was named and nothing written or sent, but the run exited 3
    // (environment) where `propose` and `sunset` exit 2 for a link in the store.
    let (smtp, w) = world::with_relay();
    let outside = tempfile::tempdir().unwrap();
    let _ = std::fs::remove_dir_all(w.root().join("notifications"));
    std::os::unix::fs::symlink(outside.path(), w.root().join("notifications")).unwrap();
    let head = w.git(&["rev-parse", "HEAD"]);
    let run = w.run(TODAY, &["notify"]);
    run.assert_code(2);
    // The link itself is named, as a link, with the file the claim would have written.
    run.assert_stderr_has(
        "`notifications` is a symbolic link (in the work tree) on the way to \
                       notifications/roads.toml",
    );
    assert_eq!(smtp.mails().len(), 0);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert_eq!(w.git(&["rev-parse", "HEAD"]), head);
    // No journal of a run that sent nothing is left behind either.
    let journals = w.root().join(".git/contracts-notify");
    let left = std::fs::read_dir(&journals).map_or(0, |d| d.count());
    assert_eq!(left, 0, "a journal was left in {}", journals.display());
    // Issue 44, item 2: a dry run exited 0 here. It writes nothing, but it must refuse what
    // the real run refuses, with the same words and the same exit code.
    let refusal = run
        .stderr()
        .lines()
        .find(|l| l.contains("is a symbolic link"))
        .expect("the real run names the link")
        .to_string();
    for args in [
        &["notify", "--dry-run"][..],
        &["notify", "--dry-run", "--show"],
    ] {
        let dry = w.run(TODAY, args);
        dry.assert_code(2);
        assert!(
            dry.stderr().lines().any(|l| l == refusal),
            "{args:?} does not refuse as the real run does ({refusal:?}):\n{}",
            dry.stderr()
        );
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        assert_eq!(w.git(&["rev-parse", "HEAD"]), head);
    }
    // With the link gone the dry run plans again: the refusal was the link's.
    std::fs::remove_file(w.root().join("notifications")).unwrap();
    w.run(TODAY, &["notify", "--dry-run"]).assert_code(0);
}

/// Issue 44 (3.4): a notice that serves the announcement and the 60-day countdown, killed
/// after its delivery and before its confirmation, is taken over whole by the next run:
/// recorded from the dead run's journal when it has one (nothing sent), else resent once with
/// the same Message-ID; either way both milestones end recorded, and nothing more is sent.
#[test]
fn a_notice_serving_two_milestones_is_taken_over_whole_after_a_kill() {
    for journalled in [true, false] {
        let (smtp, w) = world::with_relay();
        w.write(
            "contracts.toml",
            &world::config(smtp.port).replace(
                "announce = false\n",
                "announce = true\nclaim_stale_minutes = 0\n",
            ),
        );
        w.run(TODAY, &["notify"]).assert_code(0);
        let first: Vec<String> = smtp
            .mails()
            .iter()
            .filter_map(|m| m.header("Message-ID"))
            .collect();
        assert_eq!(first.len(), 2, "one message per consumer");
        // The confirmation undone: the claims are left open, as a kill after the send leaves
        // them, and the run's journal (removed once confirmed) is written back if it has one.
        w.git(&["reset", "-q", "--hard", "HEAD~1"]);
        let ledger: toml::Value =
            toml::from_str(&w.read("notifications/roads.toml").unwrap()).unwrap();
        let claims = ledger["claim"].as_array().unwrap();
        assert_eq!(claims.len(), 4, "a claim per milestone: {claims:#?}");
        if journalled {
            let dir = w.root().join(".git/contracts-notify");
            std::fs::create_dir_all(&dir).unwrap();
            let field = |c: &toml::Value, k: &str| c[k].as_str().unwrap().to_string();
            let lines: String = claims
                .iter()
                .map(|c| {
                    format!(
                        "roads {} 1 {} {}\n",
                        field(c, "consumer"),
                        field(c, "milestone"),
                        c["at"]
                    )
                })
                .collect();
            std::fs::write(dir.join(format!("{}.log", field(&claims[0], "run"))), lines).unwrap();
        }
        let run = w.run(TODAY, &["--format", "json", "notify"]);
        run.assert_code(0);
        let status = if journalled { "recovered" } else { "sent" };
        let mut statuses = common::string_pairs(&run.json(), "consumer", "status");
        statuses.sort();
        assert_eq!(
            statuses,
            [
                ("atlas".to_string(), status.to_string()),
                ("flood-model".to_string(), status.to_string())
            ],
            "journalled: {journalled}"
        );
        let again: Vec<String> = smtp
            .mails()
            .iter()
            .filter_map(|m| m.header("Message-ID"))
            .skip(2)
            .collect();
        match journalled {
            true => assert!(again.is_empty(), "{again:?}"),
            false => assert_eq!(again, first),
        }
        let all: Vec<(&str, &str)> = ["atlas", "flood-model"]
            .into_iter()
            .flat_map(|c| [(c, "before-60"), (c, "published")])
            .collect();
        assert_eq!(
            world::sorted(w.ledger()),
            world::pairs(&all),
            "journalled: {journalled}"
        );
        let sent = smtp.mails().len();
        w.run(TODAY, &["notify"])
            .assert_code(0)
            .assert_stderr_has("nothing to send");
        assert_eq!(smtp.mails().len(), sent);
        assert!(ledger_findings(&w, TODAY).is_empty());
    }
}
