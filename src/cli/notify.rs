use std::collections::{BTreeMap, BTreeSet, HashSet};

use chrono::{DateTime, FixedOffset, Timelike};
use serde::Serialize;

use super::consumption::{registry, scan_logs};
use super::output::{print_json, table};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::{classify, Status};
use crate::model::{Config, Line};
use crate::notify::dataset_input;
use crate::notify::journal::{self, Journal};
use crate::notify::ledger::{
    claim_text, commit_ledger, entry_text, ledger_header, parse_ledger, release_text, sent_keys,
    Claim, ClaimState, Key, Ledger, LedgerEntry, Release,
};
use crate::notify::plan::{milestone_due, plan, DatasetInput, Notice, SentKey};
use crate::notify::render::{ChangeValues, Templates, BODY, SUBJECT};
use crate::notify::send::{check_settings, message, sender, MailError, Mailer};
use crate::store::{layout, Edit, Step, Store, StoreError};

/// The cron job: email each registered consumer still on a line whose sunset is near.
///
/// For every dataset, each line with a sunset is checked against [notify] days_before (the
/// most recent milestone reached: a run after missed days sends one notice, not a burst) and,
/// after the sunset, every overdue_every_days while the consumer still reads it. Each notice is
/// sent once: every notice is rendered, the relay is connected and logged in to, and the
/// batch is claimed in notifications/<dataset>.toml (one commit) before the first mail goes
/// out; each delivered notice is then confirmed in one more commit. A notice claimed by
/// another run is left to it; one claimed by a run that died more than [notify]
/// claim_stale_minutes ago is sent again, with the same Message-ID.
///
/// Prints one line per sent notice and a summary on stderr, the notices on stdout.
/// Exit 0, 2 for bad config, registry or templates, 3 if any notice could not be sent or
/// recorded. The first connection failure, timeout or refused login ends the batch.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Plan and render every notice (who, which milestone, to whom) and send nothing
    #[arg(long)]
    dry_run: bool,
}

#[derive(Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    notice: &'a Notice,
    /// `planned` in a dry run, else `sent`, `failed`, `unsent` (the batch stopped first), or
    /// `recovered` (delivered by a run that died before recording it, as its journal says:
    /// recorded now, not sent again).
    status: &'static str,
    /// Whether this notice was claimed by a run that never confirmed it, so it may have
    /// been delivered already: it is sent again with the same Message-ID.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    resent: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

fn key_of(n: &Notice) -> Key {
    (n.consumer.clone(), n.line, n.milestone.to_string())
}

/// This run's name in the ledger's claims: host, process and start instant, unique enough
/// that two runs never share one.
fn run_id(now: DateTime<FixedOffset>) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
        .collect();
    let host = if host.is_empty() { "host".into() } else { host };
    format!(
        "{host}.{}.{}",
        std::process::id(),
        now.timestamp_nanos_opt().unwrap_or_default()
    )
}

/// The ledgers of `datasets` at the store's HEAD.
fn read_ledgers<'a>(
    store: &Store,
    datasets: impl IntoIterator<Item = &'a str>,
) -> Result<BTreeMap<String, Ledger>, CommandError> {
    let mut out = BTreeMap::new();
    for d in datasets {
        if out.contains_key(d) {
            continue;
        }
        let path = layout::notifications(d);
        let ledger = match store.read(&path)? {
            Some(text) => parse_ledger(&path, &text)?,
            None => Ledger::default(),
        };
        out.insert(d.to_string(), ledger);
    }
    Ok(out)
}

/// A notice this run may send, with the stale claim it takes over, if any.
struct Todo {
    notice: Notice,
    /// The newest stale claim, by run and time.
    stale: Option<(String, DateTime<FixedOffset>)>,
    /// Every run with an open (stale) claim on the notice.
    earlier: Vec<String>,
}

/// Sort planned notices by their ledger state: free or stale ones to send, the rest (already
/// sent, or claimed by a run that may still be sending) said on stderr and left alone.
fn sift(
    notices: Vec<Notice>,
    ledgers: &BTreeMap<String, Ledger>,
    now: DateTime<FixedOffset>,
    stale_minutes: i64,
    quiet: bool,
) -> Vec<Todo> {
    let mut out = Vec::new();
    for n in notices {
        let Some(ledger) = ledgers.get(&n.dataset) else {
            out.push(Todo {
                notice: n,
                stale: None,
                earlier: Vec::new(),
            });
            continue;
        };
        let k = key_of(&n);
        if ledger.sent().contains(&k) {
            continue;
        }
        match ledger.state(&k, now, stale_minutes) {
            ClaimState::Free => out.push(Todo {
                notice: n,
                stale: None,
                earlier: Vec::new(),
            }),
            ClaimState::InFlight { run, minutes } => {
                if !quiet {
                    talkln!(
                        "skipped {} line {} {} to {}: claimed {minutes} min ago by run {run}, \
                         which may still be sending it (a claim is stale after {stale_minutes} min)",
                        n.dataset, n.line, n.milestone, n.consumer
                    );
                }
            }
            ClaimState::Stale { run, at, runs } => out.push(Todo {
                notice: n,
                stale: Some((run, at)),
                earlier: runs,
            }),
        }
    }
    out
}

/// Today's notices not yet sent, by the ledgers at the store's HEAD.
fn plan_today(
    ctx: &Context,
    store: &Store,
    config: &Config,
    domain: &str,
) -> Result<Vec<Notice>, CommandError> {
    let registry = registry(store)?;
    // Only datasets with a milestone due today are worth a pass over the consumption log.
    let mut due: BTreeMap<String, Vec<Line>> = BTreeMap::new();
    for dataset in store.datasets()? {
        let lines = store.lines(&dataset)?;
        let newest = lines.iter().map(|l| l.major).max();
        let any_due = lines.iter().any(|l| {
            Some(l.major) != newest
                && l.sunset.is_some_and(|s| {
                    milestone_due(
                        ctx.today,
                        s,
                        &config.notify.days_before,
                        config.notify.overdue_every_days,
                    )
                    .is_some()
                })
        });
        if any_due {
            due.insert(dataset, lines);
        }
    }

    let mut inputs: Vec<DatasetInput> = Vec::new();
    let mut sent: HashSet<SentKey> = HashSet::new();
    if !due.is_empty() {
        let (scan, _) = scan_logs(ctx, store, due.keys().cloned().collect::<BTreeSet<_>>())?;
        for (dataset, lines) in &due {
            let standings = classify(dataset, lines, &registry, &scan.of(dataset));
            super::consumers::warn_unknown_versions(dataset, &standings);
            let windowed: Vec<u64> = lines
                .iter()
                .filter(|l| l.sunset.is_some())
                .map(|l| l.major)
                .collect();
            let unknown = standings
                .iter()
                .filter(|s| {
                    s.status == Status::Unknown && s.line.is_some_and(|l| windowed.contains(&l))
                })
                .count();
            let unsubscribed = standings
                .iter()
                .filter(|s| {
                    s.status == Status::Unsubscribed
                        && s.line.is_some_and(|l| windowed.contains(&l))
                })
                .count();
            if unsubscribed > 0 {
                eprintln!(
                    "warning: {dataset}: {unsubscribed} registered reader(s) still on a retiring line \
                     are not subscribed to {dataset} in consumers.toml and are not told (add \
                     datasets.{dataset} to their entry)"
                );
            }
            if unknown > 0 {
                talkln!(
                    "warning: {dataset}: {unknown} reader(s) still on a retiring line are not in \
                     consumers.toml and cannot be told (see `contracts consumers {dataset}`)"
                );
            }
            inputs.push(dataset_input(dataset, lines, &standings, &registry));
        }
        for (dataset, ledger) in read_ledgers(store, due.keys().map(String::as_str))? {
            sent.extend(sent_keys(&dataset, &ledger));
        }
    }
    Ok(plan(ctx.today, &config.notify, domain, &inputs, &sent))
}

/// Group `(dataset, text)` appends by ledger file.
fn by_ledger(items: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut m: BTreeMap<String, String> = BTreeMap::new();
    for (dataset, text) in items {
        m.entry(layout::notifications(&dataset))
            .or_default()
            .push_str(&text);
    }
    m.into_iter().collect()
}

fn claim_of(n: &Notice, run: &str, now: DateTime<FixedOffset>, today: chrono::NaiveDate) -> Claim {
    Claim {
        consumer: n.consumer.clone(),
        line: n.line,
        milestone: n.milestone.to_string(),
        recipients: n.recipients.clone(),
        message_id: n.message_id.clone(),
        run: run.to_string(),
        at: now,
        for_date: today,
        sunset: n.sunset,
    }
}

fn release_of(
    n: &Notice,
    run: &str,
    at: DateTime<FixedOffset>,
    reason: String,
) -> (String, String) {
    (
        n.dataset.clone(),
        release_text(&Release {
            consumer: n.consumer.clone(),
            line: n.line,
            milestone: n.milestone.to_string(),
            run: run.to_string(),
            at,
            reason,
        }),
    )
}

/// Commit the claims of `todo` through [`Store::transact`]: at each HEAD it lands on, the
/// ledgers are read again and whatever was claimed or sent meanwhile is dropped before the
/// rest is claimed. Returns the store at the newest HEAD (the claims read back: of two claims
/// of one notice, the first in the ledger sends) and what is left to send (empty when others
/// took it all).
fn claim(
    store: Store,
    todo: Vec<Todo>,
    run: &str,
    now: DateTime<FixedOffset>,
    ctx: &Context,
    stale_minutes: i64,
) -> Result<(Store, Vec<Todo>), CommandError> {
    let datasets: BTreeSet<String> = todo.iter().map(|t| t.notice.dataset.clone()).collect();
    let notices: Vec<Notice> = todo.into_iter().map(|t| t.notice).collect();
    let done = store
        .transact(|current| -> Result<_, CommandError> {
            let ledgers = read_ledgers(current, datasets.iter().map(String::as_str))?;
            let todo = sift(notices.clone(), &ledgers, now, stale_minutes, false);
            if todo.is_empty() {
                return Ok(Step::Nothing(todo));
            }
            let appends = by_ledger(todo.iter().map(|t| {
                (
                    t.notice.dataset.clone(),
                    claim_text(&claim_of(&t.notice, run, now, ctx.today)),
                )
            }));
            let files = appends
                .iter()
                .map(|(path, text)| {
                    Ok((path.clone(), current.appended(path, ledger_header(), text)?))
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let message = format!("notify: claim {} notice(s) for {}", todo.len(), ctx.today);
            Ok(Step::Commit(Edit { files, message }, todo))
        })
        .map_err(|e| {
            CommandError::environment(format!(
                "could not claim the notices in the ledger, so none was sent: {}",
                e.message
            ))
        })?;
    let after = done.store.refreshed()?;
    Ok((after, done.value))
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    // A dry run writes nothing, so it does not sync; a real run fetches first and pushes its
    // claim before the first mail and its confirmation after the last.
    let store = if args.dry_run {
        ctx.store()?
    } else {
        ctx.synced_store()?
    };
    let config = store.config().clone();
    // Errors about a value of contracts.toml point at it (file, line, column).
    let located = |key: &'static str| {
        let config = &config;
        move |e: MailError| {
            let mut err = CommandError::from(e);
            err.message = config.error_at(key, &err.message);
            err
        }
    };
    let from = sender(&config.notify.from).map_err(located("notify.from"))?;
    check_settings(&config.smtp).map_err(|e| match e {
        MailError::PlainToRemote(_) => located("smtp.host")(e),
        other => CommandError::from(other),
    })?;
    let domain = from.email.domain().to_string();
    let stale_minutes = config.notify.claim_stale_minutes;

    let notices = plan_today(ctx, &store, &config, &domain)?;
    // The clock is read here, at the edge: claims are dated, and aged, by it. In whole
    // seconds, as the ledger records it, so this run's own claim reads back as made `now`.
    let now = ctx.now();
    let now = now
        .with_nanosecond(0)
        .expect("zero nanoseconds is a valid time");
    let ledgers = read_ledgers(&store, notices.iter().map(|n| n.dataset.as_str()))?;
    let todo = sift(notices, &ledgers, now, stale_minutes, false);

    // Render everything before anything else, in a dry run too: a broken template is found
    // the day it is written, not the day it would have mattered.
    let templates = Templates::new(
        store.read(&layout::template(SUBJECT))?,
        store.read(&layout::template(BODY))?,
    )
    .map_err(|e| CommandError::input(e.to_string()))?
    .with_registry_url(config.notify.registry_url.clone());
    let mut messages = BTreeMap::new();
    let mut histories: BTreeMap<String, crate::model::history::History> = BTreeMap::new();
    let mut todo = todo;
    for t in &mut todo {
        let n = &t.notice;
        if !histories.contains_key(&n.dataset) {
            histories.insert(n.dataset.clone(), store.history(&n.dataset)?);
        }
        let history = &histories[&n.dataset];
        let changes: Vec<_> = history
            .breaking_between(n.line, n.new_line)
            .map(|c| (c, change_values(&store, &n.dataset, c)))
            .collect();
        let rendered = templates
            .render_with_values(
                n,
                &changes,
                &from.to_string(),
                config.consumption.lookback_days,
            )
            .map_err(|e| {
                CommandError::input(format!(
                    "notice {} line {} {} to {}: {e}",
                    n.dataset, n.line, n.milestone, n.consumer
                ))
            })?;
        messages.insert(
            n.message_id.clone(),
            message(&from, n, &rendered).map_err(CommandError::from)?,
        );
        // What the notice told, for the report: the same selection the template received.
        let told: Vec<String> = crate::notify::render::told(n, &changes)
            .iter()
            .map(|(c, _)| c.clause.clone())
            .collect();
        t.notice.verdict = Some(if told.is_empty() {
            crate::model::ConsumerVerdict::Unaffected
        } else {
            crate::model::ConsumerVerdict::Breaks
        });
        t.notice.breaking_changes = told;
    }

    if args.dry_run {
        let rows: Vec<Row> = todo
            .iter()
            .map(|t| Row {
                notice: &t.notice,
                status: "planned",
                resent: t.stale.is_some(),
                error: None,
            })
            .collect();
        print_rows(ctx, &rows);
        talkln!(
            "notify: dry run, {} notice(s) planned and rendered, none sent",
            todo.len()
        );
        return Ok(Outcome::Clean);
    }
    if todo.is_empty() {
        print_rows(ctx, &[]);
        talkln!("notify: nothing to send");
        return Ok(Outcome::Clean);
    }

    // Everything needed to record and to send, before the first mail: a git identity for the
    // commits, the credentials, and a relay that greets and accepts the login.
    store.identity().map_err(|e| {
        CommandError::from(e)
            .with_hint("nothing was sent: a notice is sent only once it can be recorded")
    })?;
    let mut mailer = Mailer::new(&config.smtp, store.root(), |var| std::env::var(var).ok())
        .map_err(CommandError::from)?;
    mailer.open().map_err(|e| {
        CommandError::from(e).with_hint(format!(
            "nothing was sent or recorded; the next run tries the {} notice(s) again",
            todo.len()
        ))
    })?;
    let run = run_id(now);
    let journal_dir = store.notify_journal_dir();
    let mut journal = Journal::create(&journal_dir, &run).map_err(|e| {
        CommandError::environment(format!(
            "cannot write the journal of this run in {}, so nothing was sent: {e}",
            journal_dir.display()
        ))
    })?;

    let (after, todo) = match claim(store, todo, &run, now, ctx, stale_minutes) {
        Ok(x) => x,
        Err(e) => {
            journal.remove();
            return Err(e);
        }
    };
    let after_ledgers = read_ledgers(&after, todo.iter().map(|t| t.notice.dataset.as_str()))?;
    let mut mine = Vec::new();
    let mut releases = Vec::new();
    for t in todo {
        let held = after_ledgers
            .get(&t.notice.dataset)
            .is_some_and(|l| l.holds(&key_of(&t.notice), &run, now, stale_minutes));
        if held {
            mine.push(t);
        } else {
            talkln!(
                "skipped {} line {} {} to {}: another run claimed it first",
                t.notice.dataset,
                t.notice.line,
                t.notice.milestone,
                t.notice.consumer
            );
            releases.push(release_of(
                &t.notice,
                &run,
                ctx.now(),
                "another run claimed it first".into(),
            ));
        }
    }

    // A stale claim's run may have delivered the notice before it died: its journal says.
    let mut journals: BTreeMap<String, std::collections::HashMap<journal::Delivered, _>> =
        BTreeMap::new();
    for t in &mine {
        for old in &t.earlier {
            if !journals.contains_key(old) {
                journals.insert(old.clone(), journal::read(&journal_dir, old));
            }
        }
    }
    let delivered_by = |t: &Todo| {
        let d = (t.notice.dataset.clone(), key_of(&t.notice));
        t.earlier
            .iter()
            .find_map(|old| Some((old.clone(), *journals[old].get(&d)?)))
    };

    let mut rows = Vec::with_capacity(mine.len());
    let mut confirmations = Vec::new();
    let mut confirmed: HashSet<journal::Delivered> = HashSet::new();
    let mut failed = 0usize;
    let mut recovered = 0usize;
    let mut stopped: Option<String> = None;
    for t in &mine {
        let n = &t.notice;
        if let Some((old, at)) = delivered_by(t) {
            talkln!(
                "recorded {} line {} {} to {}: run {old} delivered it at {} and died before \
                 recording it (its journal says so); not sent again",
                n.dataset,
                n.line,
                n.milestone,
                n.consumer,
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            );
            let entry = LedgerEntry {
                consumer: n.consumer.clone(),
                line: n.line,
                milestone: n.milestone.to_string(),
                recipients: n.recipients.clone(),
                message_id: n.message_id.clone(),
                at,
                for_date: ctx.today,
                sunset: n.sunset,
                run: Some(old),
            };
            confirmations.push((n.dataset.clone(), entry_text(&entry)));
            confirmed.insert((n.dataset.clone(), key_of(n)));
            recovered += 1;
            rows.push(Row {
                notice: n,
                status: "recovered",
                resent: false,
                error: None,
            });
            continue;
        }
        if let Some(why) = &stopped {
            releases.push(release_of(
                n,
                &run,
                ctx.now(),
                format!("not sent: the batch stopped ({why})"),
            ));
            rows.push(Row {
                notice: n,
                status: "unsent",
                resent: t.stale.is_some(),
                error: None,
            });
            continue;
        }
        if let Some((old, at)) = &t.stale {
            talkln!(
                "resending {} line {} {} to {} with the same Message-ID: run {old} claimed it at \
                 {} and never confirmed it (stale after {stale_minutes} min)",
                n.dataset,
                n.line,
                n.milestone,
                n.consumer,
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            );
        }
        match mailer.send(&messages[&n.message_id]) {
            Ok(()) => {
                // The instant the server accepted it, on disk before the next send.
                let at = ctx.now();
                if let Err(e) = journal.record(&n.dataset, &key_of(n), at) {
                    stopped = Some(format!(
                        "cannot write the journal {}: {e}",
                        journal.path().display()
                    ));
                }
                talkln!(
                    "sent {} line {} {} to {} ({})",
                    n.dataset,
                    n.line,
                    n.milestone,
                    n.consumer,
                    n.recipients.join(", ")
                );
                let entry = LedgerEntry {
                    consumer: n.consumer.clone(),
                    line: n.line,
                    milestone: n.milestone.to_string(),
                    recipients: n.recipients.clone(),
                    message_id: n.message_id.clone(),
                    at,
                    for_date: ctx.today,
                    sunset: n.sunset,
                    run: Some(run.clone()),
                };
                confirmations.push((n.dataset.clone(), entry_text(&entry)));
                confirmed.insert((n.dataset.clone(), key_of(n)));
                rows.push(Row {
                    notice: n,
                    status: "sent",
                    resent: t.stale.is_some(),
                    error: None,
                });
            }
            Err(e) => {
                failed += 1;
                talkln!(
                    "failed {} line {} {} to {}: {e}",
                    n.dataset,
                    n.line,
                    n.milestone,
                    n.consumer
                );
                if e.ends_batch() {
                    stopped = Some(e.to_string());
                }
                releases.push(release_of(n, &run, ctx.now(), format!("not sent: {e}")));
                rows.push(Row {
                    notice: n,
                    status: "failed",
                    resent: t.stale.is_some(),
                    error: Some(e.to_string()),
                });
            }
        }
    }
    let connections = mailer.connections;
    mailer.close();
    let sent_count = confirmations.len() - recovered;
    let unsent = rows.iter().filter(|r| r.status == "unsent").count();
    if !confirmations.is_empty() || !releases.is_empty() {
        let mut message = format!("notify: {sent_count} notice(s) sent for {}", ctx.today);
        if recovered > 0 {
            message.push_str(&format!(
                ", {recovered} recovered from a dead run's journal"
            ));
        }
        let changes = by_ledger(confirmations.into_iter().chain(releases));
        commit_ledger(after, changes, &message).map_err(|e| {
            CommandError::environment(format!(
                "{sent_count} notice(s) were sent but could not be confirmed in the ledger: {e}"
            ))
            .with_hint(format!(
                "their claims stay open and this run's journal ({}) says they went out: a run \
                 on this machine more than {stale_minutes} min from now records them without \
                 sending them again",
                journal.path().display()
            ))
        })?;
    }
    // Confirmed: this run's journal, and those of dead runs now wholly recorded, are done.
    journal.remove();
    for (old, entries) in &journals {
        let done = entries.keys().all(|d| {
            confirmed.contains(d)
                || after_ledgers
                    .get(&d.0)
                    .is_some_and(|l| l.sent().contains(&d.1))
        });
        if done {
            journal::remove_run(&journal_dir, old);
        }
    }
    print_rows(ctx, &rows);
    let recovered_note = if recovered > 0 {
        format!(", {recovered} recovered")
    } else {
        String::new()
    };
    talkln!(
        "notify: {sent_count} sent, {failed} failed, {unsent} unsent{recovered_note}, over \
         {connections} SMTP connection(s)"
    );
    if let Some(why) = stopped {
        return Err(CommandError::environment(format!(
            "the batch stopped at the first connection failure: {why}; {unsent} notice(s) \
             after it were not sent and not recorded"
        ))
        .with_hint("the next run sends them"));
    }
    if failed > 0 {
        return Err(CommandError::environment(format!(
            "{failed} notice(s) could not be sent and were not recorded"
        ))
        .with_hint("the next run retries them"));
    }
    Ok(Outcome::Clean)
}

fn print_rows(ctx: &Context, rows: &[Row]) {
    if ctx.format == Format::Json {
        print_json(&rows);
        return;
    }
    if rows.is_empty() {
        outln!("no notice");
        return;
    }
    let table_rows = rows.iter().map(|r| {
        let n = r.notice;
        vec![
            n.dataset.clone(),
            n.consumer.clone(),
            n.line.to_string(),
            n.milestone.to_string(),
            n.sunset.to_string(),
            n.days_left.to_string(),
            n.recipients.join(", "),
            r.status.to_string(),
        ]
    });
    outln!(
        "{}",
        table(
            &[
                "dataset",
                "consumer",
                "line",
                "milestone",
                "sunset",
                "days left",
                "recipients",
                "status"
            ],
            table_rows
        )
    );
}

/// The old and new value behind a change record, re-derived from the two contracts it
/// compares (the record names the clause, not the values). A record whose contracts cannot be
/// read gets no values rather than stopping the run: `check` is where records are proved.
fn change_values(
    store: &crate::store::Store,
    dataset: &str,
    record: &crate::model::history::ChangeRecord,
) -> ChangeValues {
    let Some(from) = &record.from else {
        return ChangeValues::default();
    };
    let read = |v: &str| store.contract(dataset, v, crate::model::Strictness::Reading);
    let (Ok(old), Ok(new)) = (read(from), read(&record.to)) else {
        return ChangeValues::default();
    };
    crate::model::derive_changes(&old, &new)
        .changes
        .into_iter()
        .find(|c| c.clause == record.clause)
        .map(|c| ChangeValues {
            old: c.old,
            new: c.new,
        })
        .unwrap_or_default()
}
