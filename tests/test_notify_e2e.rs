//! `contracts notify` end to end: the real binary, a store laid out by hand, and a real SMTP
//! server on loopback (mailin-embedded) that collects what is delivered.

use crate::common;
use crate::common::world;
use crate::common::Rows;

use world::{closed_port, days_left, pairs, sorted, SmtpServer, World, SUNSET};

const FLOOD: [&str; 2] = ["hydro-oncall@example.org", "lead@example.org"];
const ATLAS: &str = "atlas@example.org";

#[test]
fn notices_name_dataset_versions_sunset_days_left_and_rationale() {
    let (smtp, w) = world::with_relay();
    let today = "2026-11-29";
    let left = days_left(today);
    assert!(
        left <= 60 && left > 30,
        "the fixture expects the 60-day milestone"
    );

    let run = w.run(today, &["notify"]);
    run.assert_code(0);

    // Exactly the two registered consumers still on line 1; not router (migrated), archive
    // (silent) or ghost (unregistered).
    let mails = smtp.mails();
    assert_eq!(mails.len(), 2, "{mails:#?}");
    let flood = smtp.mail_to(FLOOD[0]);
    assert_eq!(flood.len(), 1);
    let mut to = flood[0].to.clone();
    to.sort();
    assert_eq!(to, FLOOD);
    assert_eq!(smtp.mail_to(ATLAS).len(), 1);
    assert!(smtp.mail_to("routing@example.org").is_empty());
    assert!(smtp.mail_to("records@example.org").is_empty());
    assert_eq!(flood[0].from, "data-platform@example.org");

    let subject = flood[0].header("Subject").unwrap();
    for needle in ["roads", SUNSET, &format!("{left} days left"), "2.0.0"] {
        assert!(
            subject.contains(needle),
            "subject lacks {needle:?}: {subject}"
        );
    }
    let body = flood[0].body();
    for needle in [
        "roads",
        "1.1.0",
        "2.0.0",
        SUNSET,
        &format!("{left} days left"),
        "Move to British National Grid — to match the other layers.",
        "crs",
        "How to migrate",
        "flood-model",
        "<contracts.roads.1.flood-model.before-60@example.org>",
    ] {
        assert!(body.contains(needle), "body lacks {needle:?}:\n{body}");
    }
    assert_eq!(
        flood[0].header("Message-ID").unwrap(),
        "<contracts.roads.1.flood-model.before-60@example.org>"
    );
    // One SMTP session for the whole batch.
    assert_eq!(smtp.sessions(), 1);

    // Recorded in the ledger; reported one line per notice on stderr, the table on stdout.
    assert_eq!(
        sorted(w.ledger()),
        pairs(&[("atlas", "before-60"), ("flood-model", "before-60")])
    );
    let ledger = w.read("notifications/roads.toml").unwrap();
    assert!(
        ledger.contains(&format!("for_date   = {today}")),
        "{ledger}"
    );
    let sent_lines = run
        .stderr()
        .lines()
        .filter(|l| l.starts_with("sent roads line 1 before-60 to "))
        .count();
    assert_eq!(sent_lines, 2, "{}", run.stderr());
    assert!(run.stdout().contains("flood-model"));
}

#[test]
fn a_second_run_the_same_day_sends_nothing() {
    let (smtp, w) = world::with_relay();
    w.run("2026-11-29", &["notify"]).assert_code(0);
    assert_eq!(smtp.mails().len(), 2);
    // The ledger is one commit by the notifier, and the checkout is clean.
    let log = w.git(&["log", "--format=%an|%s", "-1"]);
    assert_eq!(
        log.trim(),
        "Notifier|notify: 2 notice(s) sent for 2026-11-29"
    );
    assert!(w
        .git(&["status", "--porcelain", "--untracked-files=no"])
        .is_empty());
    let head = w.git(&["rev-parse", "HEAD"]);
    let again = w.run("2026-11-29", &["notify"]);
    again.assert_code(0);
    assert_eq!(smtp.mails().len(), 2, "a rerun sent again");
    assert_eq!(w.ledger().len(), 2);
    assert_eq!(
        w.git(&["rev-parse", "HEAD"]),
        head,
        "a run that sent nothing committed"
    );
    again.assert_stderr_has("nothing to send");
}

#[test]
fn missed_days_send_one_notice_not_a_burst() {
    let (smtp, w) = world::with_relay();
    // The 60-day notice, then the cron is down until 10 days before the sunset: the 30- and
    // 14-day milestones have both passed, only the 14-day notice goes out.
    w.run("2026-11-29", &["notify"]).assert_code(0);
    let later = "2027-01-05";
    assert_eq!(days_left(later), 10);
    w.run(later, &["notify"]).assert_code(0);
    assert_eq!(smtp.mails().len(), 4);
    assert_eq!(
        sorted(w.ledger()),
        pairs(&[
            ("atlas", "before-14"),
            ("atlas", "before-60"),
            ("flood-model", "before-14"),
            ("flood-model", "before-60"),
        ])
    );
}

#[test]
fn overdue_notices_every_period_while_still_read() {
    let (smtp, w) = world::with_relay();
    // On the sunset day the line is no longer published: the first overdue notice.
    w.run(SUNSET, &["notify"]).assert_code(0);
    let first = smtp.mail_to(FLOOD[0]);
    assert_eq!(first.len(), 1);
    let subject = first[0].header("Subject").unwrap();
    assert!(subject.contains("retired on"), "{subject}");
    assert!(
        first[0].body().contains("no longer published"),
        "{}",
        first[0].body()
    );
    // Within the same 7-day period: nothing new.
    w.run("2027-01-21", &["notify"]).assert_code(0);
    assert_eq!(smtp.mails().len(), 2);
    // Seven days after the sunset: the second period.
    w.run("2027-01-22", &["notify"]).assert_code(0);
    let second = smtp.mail_to(FLOOD[0]);
    assert_eq!(second.len(), 2);
    assert!(
        second[1].body().contains("7 days ago"),
        "{}",
        second[1].body()
    );
    assert_eq!(
        sorted(w.ledger()),
        pairs(&[
            ("atlas", "overdue-1"),
            ("atlas", "overdue-2"),
            ("flood-model", "overdue-1"),
            ("flood-model", "overdue-2"),
        ])
    );
    // Once flood-model reads line 2, the overdue notices stop for it.
    w.append(
        "consumption/reads.jsonl",
        "{\"at\":\"2027-01-23T03:00:00Z\",\"consumer\":\"flood-model\",\"dataset\":\"roads\",\"contract\":\"2.0.0\"}\n",
    );
    w.run("2027-01-29", &["notify"]).assert_code(0);
    assert_eq!(smtp.mail_to(FLOOD[0]).len(), 2);
    assert_eq!(smtp.mail_to(ATLAS).len(), 3);
}

#[test]
fn server_down_exits_3_records_nothing_and_the_next_run_delivers() {
    let w = World::new(closed_port());
    let head = w.git(&["rev-parse", "HEAD"]);
    let down = w.run("2026-11-29", &["notify"]);
    down.assert_code(3);
    assert!(w.read("notifications/roads.toml").is_none());
    assert_eq!(
        w.git(&["rev-parse", "HEAD"]),
        head,
        "a failed run committed"
    );
    // The relay is tried before anything is claimed, once for the whole batch.
    assert!(
        down.stderr().contains("cannot connect to 127.0.0.1:")
            && down.stderr().contains("nothing was sent"),
        "{}",
        down.stderr()
    );

    let smtp = SmtpServer::start();
    w.set_smtp_port(smtp.port);
    w.run("2026-11-29", &["notify"]).assert_code(0);
    assert_eq!(smtp.mails().len(), 2);
    assert_eq!(w.ledger().len(), 2);
}

#[test]
fn dry_run_prints_the_plan_and_sends_nothing() {
    let (smtp, w) = world::with_relay();
    let run = w.run("2026-11-29", &["--format", "json", "notify", "--dry-run"]);
    run.assert_code(0);
    let plan = run.json();
    let rows = plan.as_array().unwrap();
    let mut got: Vec<(String, String, u64, Vec<String>)> = rows
        .iter()
        .map(|r| {
            (
                r["consumer"].as_str().unwrap().to_string(),
                r["milestone"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap(),
                r["recipients"]
                    .rows()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            (
                "atlas".into(),
                "before-60".into(),
                1,
                vec![ATLAS.to_string()]
            ),
            (
                "flood-model".into(),
                "before-60".into(),
                1,
                vec![
                    FLOOD[0].to_string(),
                    "Hydro Lead <lead@example.org>".to_string()
                ]
            ),
        ]
    );
    assert!(rows.iter().all(|r| r["status"] == "planned"));
    assert_eq!(smtp.mails().len(), 0);
    assert_eq!(smtp.sessions(), 0);
    assert!(w.read("notifications/roads.toml").is_none());
}

#[test]
fn an_invalid_mailbox_is_an_input_error_naming_the_consumer() {
    let (smtp, w) = world::with_relay();
    w.write(
        "consumers.toml",
        "[consumers.flood-model]\ncontacts = [\"hydro@example.org\\r\\nBcc: all@example.org\"]\n",
    );
    let run = w.run("2026-11-29", &["notify"]);
    run.assert_code(2);
    run.assert_stderr_has("flood-model");
    run.assert_stderr_has("consumers.toml:2:");
    assert_eq!(smtp.mails().len(), 0);
}

#[test]
fn clear_text_to_a_remote_host_is_refused() {
    let w = World::new(25);
    w.write(
        "contracts.toml",
        &world::config(25).replace("host = \"127.0.0.1\"", "host = \"smtp.example.org\""),
    );
    let run = w.run("2026-11-29", &["notify"]);
    run.assert_code(2);
    run.assert_stderr_has("loopback");
    // Also on a dry run, and on a day with nothing to send.
    w.run("2026-11-29", &["notify", "--dry-run"]).assert_code(2);
    w.run("2026-06-01", &["notify"]).assert_code(2);
}

#[test]
fn credentials_come_from_the_environment_and_are_never_printed() {
    let (smtp, w) = world::with_relay();
    w.write(
        "contracts.toml",
        &world::config(smtp.port).replace(
            "tls = \"none\"\n",
            "tls = \"none\"\nusername_env = \"CONTRACTS_SMTP_USER\"\n\
             password_env = \"CONTRACTS_SMTP_PASSWORD\"\n",
        ),
    );
    // Missing variable: named, exit 3.
    let missing = w.run("2026-11-29", &["notify"]);
    missing.assert_code(3);
    missing.assert_stderr_has("CONTRACTS_SMTP_USER");
    // Present, but this server offers no authentication: every send fails, the secret is in
    // no output.
    let secret = "s3cret-Pa55word";
    let run = w.run_env(
        "2026-11-29",
        &["notify"],
        &[
            ("CONTRACTS_SMTP_USER", "notifier"),
            ("CONTRACTS_SMTP_PASSWORD", secret),
        ],
    );
    run.assert_code(3);
    assert!(!run.stderr().contains(secret) && !run.stdout().contains(secret));
    assert_eq!(smtp.mails().len(), 0);
    assert!(w.read("notifications/roads.toml").is_none());
}

#[test]
fn a_store_template_overrides_the_builtin_one() {
    let (smtp, w) = world::with_relay();
    w.write(
        "templates/notice.subject.j2",
        "ACTION NEEDED {{ dataset }} {{ milestone }} {{ sunset }}",
    );
    w.run("2026-11-29", &["notify"]).assert_code(0);
    let m = smtp.mail_to(ATLAS);
    assert_eq!(
        m[0].header("Subject").unwrap(),
        format!("ACTION NEEDED roads before-60 {SUNSET}")
    );
    // The body still comes from the built-in template.
    assert!(m[0].body().contains("How to migrate"));
}

#[test]
fn a_moved_sunset_moves_the_milestones() {
    let (smtp, w) = world::with_relay();
    w.append(
        "history/roads.toml",
        "\n[[sunset]]\nat = 2026-11-20T10:00:00Z\nline = 1\nfrom = 2027-01-15\n\
         to = 2027-03-15\nrationale = \"Hydrology asked for two more months.\"\n",
    );
    // 106 days before the moved sunset: no milestone is reached yet.
    let run = w.run("2026-11-29", &["notify"]);
    run.assert_code(0);
    assert_eq!(smtp.mails().len(), 0);
    // 60 days before it: the first notice, announcing the moved date.
    w.run("2027-01-14", &["notify"]).assert_code(0);
    let m = smtp.mail_to(ATLAS);
    assert_eq!(m.len(), 1);
    assert!(m[0].header("Subject").unwrap().contains("2027-03-15"));
}

#[test]
fn a_body_line_starting_with_a_dot_arrives_intact() {
    // DATA transparency: the mailer doubles a leading dot and the server removes it again.
    let (smtp, w) = world::with_relay();
    w.write(
        "templates/notice.txt.j2",
        "first\n.{{ dataset }}\n..two dots\n.\nlast\n",
    );
    w.run("2026-11-29", &["notify"]).assert_code(0);
    let m = smtp.mail_to(ATLAS);
    assert_eq!(m.len(), 1);
    assert!(
        m[0].body().contains("first\n.roads\n..two dots\n.\nlast"),
        "{:?}",
        m[0].body()
    );
}

#[test]
fn one_refused_notice_exits_3_and_the_others_are_sent_and_recorded() {
    // The server refuses atlas's address: that notice fails first; flood-model's still goes out
    // (over a fresh connection, since the failure broke the first), and only flood-model's is
    // recorded. The next run retries atlas's alone.
    let smtp = SmtpServer::start_rejecting(Some(ATLAS));
    let w = World::new(smtp.port);
    let run = w.run("2026-11-29", &["--format", "json", "notify"]);
    run.assert_code(3);
    assert_eq!(smtp.mail_to(FLOOD[0]).len(), 1);
    assert!(smtp.mail_to(ATLAS).is_empty());
    assert_eq!(w.ledger(), pairs(&[("flood-model", "before-60")]));
    let statuses = common::string_pairs(&run.json(), "consumer", "status");
    assert_eq!(
        sorted(statuses),
        pairs(&[("atlas", "failed"), ("flood-model", "sent")])
    );
    run.assert_stderr_has("failed roads line 1 before-60 to atlas");

    let smtp = SmtpServer::start();
    w.set_smtp_port(smtp.port);
    w.run("2026-11-29", &["notify"]).assert_code(0);
    assert_eq!(smtp.mails().len(), 1);
    assert_eq!(smtp.mail_to(ATLAS).len(), 1);
    assert_eq!(
        sorted(w.ledger()),
        pairs(&[("atlas", "before-60"), ("flood-model", "before-60")])
    );
}

#[test]
fn a_distribution_list_of_ten_thousand_reaches_each_address_once_in_order() {
    // Issue 25, item 3: a consumer's `contacts` is a large distribution list. The mail's To
    // header was built one mailbox at a time, re-parsing the header each time (quadratic:
    // 10,000 contacts took 90 s in a release build). Whatever builds it, every address must
    // arrive once, in the registry's order, in the envelope, the header and the ledger.
    let n = 10_000;
    let list: Vec<String> = (0..n)
        .map(|i| format!("reader-{i:05}@lists.example.net"))
        .collect();
    let (smtp, w) = world::with_relay();
    let contacts: Vec<String> = list
        .iter()
        .enumerate()
        .map(|(i, a)| format!("\"Reader {i} <{a}>\""))
        .collect();
    let registry = w.read("consumers.toml").unwrap().replace(
        &format!("contacts = [\"{ATLAS}\"]"),
        &format!("contacts = [{}]", contacts.join(", ")),
    );
    w.write("consumers.toml", &registry);
    let today = "2026-11-29";

    let plan = w.run(today, &["--format", "json", "notify", "--dry-run"]);
    plan.assert_code(0);
    let rows = plan.json();
    let atlas = rows
        .rows()
        .find(|r| r["consumer"] == "atlas")
        .unwrap_or_else(|| panic!("no notice to atlas: {rows:#}"));
    assert_eq!(atlas["recipients"].as_array().unwrap().len(), n);

    w.run(today, &["notify"]).assert_code(0);
    let mails = smtp.mail_to(&list[0]);
    assert_eq!(mails.len(), 1, "one mail to the whole list");
    assert_eq!(
        mails[0].to, list,
        "the envelope: each address once, in order"
    );
    let header = mails[0].header("To").unwrap();
    let in_header: Vec<&str> = header
        .split(", ")
        .map(|m| {
            m.rsplit_once('<')
                .map_or(m, |(_, a)| a.trim_end_matches('>'))
        })
        .collect();
    assert_eq!(
        in_header, list,
        "the To header: each address once, in order"
    );
    let ledger = w.read("notifications/roads.toml").unwrap();
    assert_eq!(ledger.matches("@lists.example.net").count(), 2 * n);
}
