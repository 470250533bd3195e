//! Webhook deliveries under the faults mail is tested against in `notify_crash` and
//! `notify_faults` (issue 21): `contracts notify` killed with SIGKILL at random moments in a
//! batch of webhooks and mails, two runs at once on one store, and two checkouts of one remote
//! each running at the same moment. The real binary, a real SMTP server and an HTTP receiver on
//! loopback that answers 200 and counts the requests it gets per `webhook-id`.

use crate::common;
use crate::common::notify_support;
use crate::common::webhook::Receiver;
use crate::common::world;
use crate::common::Rng;
use crate::common::Rows;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use notify_support::{add_consumers, MILESTONE_DAYS};
use world::{SmtpServer, World};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const CHANNEL: &str = "webhook:generic";
/// Consumers added to the world, each with a mail contact and a generic webhook (the world's
/// own consumers are reached by mail alone).
const HOOKED: usize = 8;

/// The notify world with `HOOKED` more consumers of roads, each with a generic webhook.
fn hooked_world(smtp: &SmtpServer) -> World {
    let w = World::new(smtp.port);
    add_consumers(&w, HOOKED);
    let mut registry = w.read("consumers.toml").unwrap();
    for i in 0..HOOKED {
        let contacts = format!("contacts = [\"extra-{i}@example.org\"]\n");
        let with = format!(
            "{contacts}webhooks = [{{ kind = \"generic\", url_env = \"HOOK_URL\", \
             secret_env = \"HOOK_SECRET\" }}]\n"
        );
        registry = registry.replace(&contacts, &with);
    }
    w.write("consumers.toml", &registry);
    w
}

/// `contracts notify` on `day` in the store at `repo`, reaching `hook`.
fn notify(repo: &Path, w: &World, hook: &Receiver, day: &str) -> Command {
    let mut c = notify_support::notify_command(repo, w.home.path(), day);
    c.env("HOOK_URL", hook.url()).env("HOOK_SECRET", SECRET);
    c
}

/// What a dry run on `day` plans: (channel, id) of each delivery.
fn planned(w: &World, hook: &Receiver, day: &str) -> Vec<(String, String)> {
    let url = hook.url();
    let plan = w.run_env(
        day,
        &["--format", "json", "notify", "--dry-run", "--show"],
        &[("HOOK_URL", &url), ("HOOK_SECRET", SECRET)],
    );
    plan.assert_code(0);
    plan.json()
        .rows()
        .map(|r| {
            let p = &r["preview"];
            match p["webhook_id"].as_str() {
                Some(id) => (p["channel"].as_str().unwrap().to_string(), id.to_string()),
                None => (
                    "mail".to_string(),
                    p["message_id"].as_str().unwrap().to_string(),
                ),
            }
        })
        .collect()
}

/// Each (consumer, milestone, channel) of the ledger `text` with how often it is recorded.
fn recorded(text: &str) -> HashMap<(String, String, String), usize> {
    let v: toml::Value = toml::from_str(text).unwrap();
    let mut n = HashMap::new();
    for e in v["notice"].as_array().unwrap() {
        let key = (
            e["consumer"].as_str().unwrap().to_string(),
            e["milestone"].as_str().unwrap().to_string(),
            e.get("channel")
                .and_then(|c| c.as_str())
                .unwrap_or("mail")
                .to_string(),
        );
        *n.entry(key).or_default() += 1;
    }
    n
}

fn ledger_findings(w: &World) -> Vec<serde_json::Value> {
    let run = w.run("2027-01-29", &["--format", "json", "check"]);
    world::ledger_findings(&run)
}

/// The lock files a killed writer left in `.git`: no other writer runs here.
fn clear_stale_locks(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            clear_stale_locks(&p);
        } else if p.extension().is_some_and(|x| x == "lock") {
            std::fs::remove_file(&p).unwrap();
        }
    }
}

const KILL_DAYS: usize = 4;
/// Even kills at a random moment of the run, odd ones in the middle of its webhooks.
const KILLS_PER_DAY: usize = 3;

#[test]
fn notify_killed_during_webhook_deliveries_resends_at_most_one_per_kill_with_the_same_id() {
    let seed: u64 = std::env::var("NOTIFY_HOOK_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_2021_0000_0021);
    eprintln!("NOTIFY_HOOK_CRASH_SEED={seed}");
    let mut rng = Rng(seed | 1);
    let smtp = SmtpServer::start();
    let hook = Receiver::slow(Duration::from_millis(25));
    let w = hooked_world(&smtp);
    // Runs never overlap here, so a dead run's claim is stale at once.
    let config = w.read("contracts.toml").unwrap();
    w.write(
        "contracts.toml",
        &config.replacen("[notify]\n", "[notify]\nclaim_stale_minutes = 0\n", 1),
    );

    let mut plan: Vec<(String, String)> = Vec::new();
    let mut kills = 0usize;
    // Kills after the run had delivered something, and what the runs after them reported.
    let (mut mid_batch, mut resending, mut recovered) = (0usize, 0usize, 0usize);
    let sent = || hook.received() + smtp.mails().len();
    for day in &MILESTONE_DAYS[..KILL_DAYS] {
        plan.extend(planned(&w, &hook, day));
        let mut span = {
            let t = Instant::now();
            w.run(day, &["notify", "--dry-run"]).assert_code(0);
            t.elapsed() * 3
        };
        let mut killed_today = 0;
        loop {
            let t = Instant::now();
            let before = sent();
            let mut child = notify(w.root(), &w, &hook, day).spawn().unwrap();
            if killed_today < KILLS_PER_DAY {
                if killed_today % 2 == 0 {
                    // At any moment of the run: planning, claiming, sending or confirming.
                    std::thread::sleep(Duration::from_micros(rng.below(span.as_micros() as u64)));
                } else {
                    // In the middle of the webhooks: once the receiver has read the k-th
                    // request of this run, at most its answer's delay later.
                    let k = 1 + rng.below(HOOKED as u64) as usize;
                    let hooks_before = hook.received();
                    while hook.received() < hooks_before + k && child.try_wait().unwrap().is_none()
                    {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    std::thread::sleep(Duration::from_micros(rng.below(40_000)));
                }
                if child.try_wait().unwrap().is_none() {
                    child.kill().unwrap();
                    child.wait().unwrap();
                    kills += 1;
                    mid_batch += usize::from(sent() > before);
                    killed_today += 1;
                    clear_stale_locks(&w.root().join(".git"));
                    continue;
                }
            }
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            resending += err.lines().filter(|l| l.starts_with("resending ")).count();
            recovered += err.lines().filter(|l| l.starts_with("recorded ")).count();
            common::assert_exit(
                &out,
                0,
                &format!("a run on {day} after {kills} kill(s), seed {seed}: "),
            );
            w.assert_checkout_clean(&format!(
                "a run on {day} after {kills} kill(s) left the checkout dirty, seed {seed}"
            ));
            span = span.max(t.elapsed());
            if killed_today >= KILLS_PER_DAY {
                break;
            }
            killed_today += 1;
        }
    }
    let last = w.run(MILESTONE_DAYS[KILL_DAYS - 1], &["notify"]);
    last.assert_code(0);
    last.assert_stderr_has("nothing to send");

    let hooks_planned: BTreeSet<String> = plan
        .iter()
        .filter(|(c, _)| c == CHANNEL)
        .map(|(_, id)| id.clone())
        .collect();
    let mails_planned = plan.iter().filter(|(c, _)| c == "mail").count();
    // Each day: the world's 2 consumers of line 1 by mail, 8 more by mail and by webhook.
    assert_eq!(hooks_planned.len(), KILL_DAYS * HOOKED, "{plan:#?}");
    assert_eq!(mails_planned, KILL_DAYS * (2 + HOOKED), "{plan:#?}");

    let hooks = hook.deliveries();
    let mails = notify_support::deliveries(&smtp);
    let got: BTreeSet<String> = hooks.keys().cloned().collect();
    // Every webhook delivered, each under the id planned for it: a resend carries the same one.
    assert_eq!(got, hooks_planned, "seed {seed}");
    assert_eq!(mails.len(), mails_planned, "a mail was lost, seed {seed}");
    let resent: usize = hooks.values().chain(mails.values()).map(|n| n - 1).sum();
    eprintln!(
        "webhook crash test: {kills} kills ({mid_batch} after a delivery), {} webhooks and \
         {mails_planned} mails planned, {} webhook requests, {} mails, {resent} resent \
         ({resending} stale claims resent, {recovered} recovered from a journal), seed {seed}",
        hooks_planned.len(),
        hooks.values().sum::<usize>(),
        smtp.mails().len()
    );
    let again: Vec<_> = hooks
        .iter()
        .chain(mails.iter())
        .filter(|(_, n)| **n > 1)
        .collect();
    assert!(
        resent <= kills,
        "{resent} resent for {kills} kills: {again:?} (seed {seed})"
    );

    let ledger = recorded(&w.git(&["show", "HEAD:notifications/roads.toml"]));
    let twice: Vec<_> = ledger.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "recorded twice: {twice:?} (seed {seed})");
    let on_hooks = ledger.keys().filter(|(_, _, c)| c == CHANNEL).count();
    assert_eq!(on_hooks, hooks_planned.len(), "seed {seed}");
    assert_eq!(ledger.len(), plan.len(), "seed {seed}");
    assert!(ledger_findings(&w).is_empty(), "{:#?}", ledger_findings(&w));
    w.git(&["fsck", "--no-progress"]);
}

/// Each webhook of `plan` received once and each mail delivered once.
fn assert_once(hook: &Receiver, smtp: &SmtpServer, plan: &[(String, String)]) {
    let hooks = hook.deliveries();
    let twice: Vec<_> = hooks.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "webhooks received more than once: {twice:?}"
    );
    let want: BTreeSet<String> = plan
        .iter()
        .filter(|(c, _)| c == CHANNEL)
        .map(|(_, id)| id.clone())
        .collect();
    assert_eq!(hooks.keys().cloned().collect::<BTreeSet<_>>(), want);
    let mails = notify_support::deliveries(smtp);
    let twice: Vec<_> = mails.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "mails delivered more than once: {twice:?}"
    );
    assert_eq!(
        mails.len(),
        plan.iter().filter(|(c, _)| c == "mail").count()
    );
}

fn wait_ok(children: Vec<std::process::Child>, day: &str) {
    for child in children {
        let out = child.wait_with_output().unwrap();
        common::assert_exit(&out, 0, &format!("a concurrent run failed on {day}: "));
    }
}

const CONCURRENT_DAYS: usize = 3;

#[test]
fn two_runs_at_once_on_one_store_receive_and_record_each_webhook_once() {
    let smtp = SmtpServer::start();
    let hook = Receiver::slow(Duration::ZERO);
    let w = hooked_world(&smtp);
    let mut plan = Vec::new();
    for day in &MILESTONE_DAYS[..CONCURRENT_DAYS] {
        plan.extend(planned(&w, &hook, day));
        let children = (0..2)
            .map(|_| notify(w.root(), &w, &hook, day).spawn().unwrap())
            .collect();
        wait_ok(children, day);
    }
    assert_eq!(
        plan.iter().filter(|(c, _)| c == CHANNEL).count(),
        CONCURRENT_DAYS * HOOKED
    );
    assert_once(&hook, &smtp, &plan);
    let ledger = recorded(&w.read("notifications/roads.toml").unwrap());
    assert!(ledger.values().all(|n| *n == 1), "{ledger:?}");
    assert_eq!(ledger.len(), plan.len(), "{ledger:?}");
    assert!(ledger_findings(&w).is_empty(), "{:#?}", ledger_findings(&w));
}

#[test]
fn two_checkouts_of_one_remote_receive_and_record_each_webhook_once() {
    let smtp = SmtpServer::start();
    let hook = Receiver::slow(Duration::ZERO);
    let w = hooked_world(&smtp);
    let hosts = notify_support::TwoHosts::new(&w);
    let host_b = &hosts.host_b;
    let mut plan = Vec::new();
    for day in &MILESTONE_DAYS[..CONCURRENT_DAYS] {
        plan.extend(planned(&w, &hook, day));
        let children = vec![
            notify(w.root(), &w, &hook, day).spawn().unwrap(),
            notify(host_b, &w, &hook, day).spawn().unwrap(),
        ];
        wait_ok(children, day);
    }
    assert_eq!(
        plan.iter().filter(|(c, _)| c == CHANNEL).count(),
        CONCURRENT_DAYS * HOOKED
    );
    assert_once(&hook, &smtp, &plan);
    // The remote holds the whole ledger, each delivery recorded once whichever host sent it.
    let text = hosts.remote_ledger();
    let ledger = recorded(&text);
    assert!(ledger.values().all(|n| *n == 1), "{ledger:?}");
    assert_eq!(ledger.len(), plan.len(), "{ledger:?}");
}
