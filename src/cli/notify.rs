use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::Serialize;

use super::consumption::{registry, scan_logs};
use super::output::{print_json, table};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::{classify, Status};
use crate::model::Line;
use crate::notify::dataset_input;
use crate::notify::ledger::{
    commit_ledger, entry_text, ledger_path, parse_ledger, sent_keys, LedgerEntry,
};
use crate::notify::plan::{milestone_due, plan, DatasetInput, Notice, SentKey};
use crate::notify::render::{ChangeValues, Templates, BODY, SUBJECT};
use crate::notify::send::{check_settings, message, sender, MailError, Mailer};

/// The cron job: email each registered consumer still on a line whose sunset is near.
///
/// For every dataset, each line with a sunset is checked against [notify] days_before (the
/// most recent milestone reached: a run after missed days sends one notice, not a burst) and,
/// after the sunset, every overdue_every_days while the consumer still reads it. A notice
/// already in notifications/<dataset>.toml is never sent again, so a second run the same day
/// sends nothing. Each sent notice is recorded; one that fails is not, and is retried by the
/// next run.
///
/// Prints one line per sent notice and a summary on stderr, the notices on stdout.
/// Exit 0, 2 for bad config, registry or templates, 3 if any notice could not be sent.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the plan (who, which milestone, to whom) and send nothing
    #[arg(long)]
    dry_run: bool,
}

#[derive(Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    notice: &'a Notice,
    /// `planned` in a dry run, else `sent` or `failed`.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

fn mail_error(e: MailError) -> CommandError {
    if e.is_input() {
        CommandError::input(e.to_string())
    } else {
        CommandError::environment(e.to_string())
    }
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    ctx.refuse_junit("notify")?;
    let store = ctx.store()?;
    let config = store.config().clone();
    // Errors about a value of contracts.toml point at it (file, line, column).
    let located = |key: &'static str| {
        let config = &config;
        move |e: MailError| {
            let mut err = mail_error(e);
            err.message = config.error_at(key, &err.message);
            err
        }
    };
    let from = sender(&config.notify.from).map_err(located("notify.from"))?;
    check_settings(&config.smtp).map_err(|e| match e {
        MailError::PlainToRemote(_) => located("smtp.host")(e),
        other => mail_error(other),
    })?;
    let domain = from.email.domain().to_string();
    let registry = registry(&store)?;

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
        let (scan, _) = scan_logs(ctx, &store, due.keys().cloned().collect::<BTreeSet<_>>())?;
        for (dataset, lines) in &due {
            let standings = classify(lines, &registry, &scan.of(dataset));
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
            if unknown > 0 {
                eprintln!(
                    "warning: {dataset}: {unknown} reader(s) still on a retiring line are not in \
                     consumers.toml and cannot be told (see `contracts consumers {dataset}`)"
                );
            }
            inputs.push(dataset_input(dataset, lines, &standings, &registry));
            let path = ledger_path(dataset);
            if let Some(text) = store.read(&path)? {
                sent.extend(sent_keys(dataset, &parse_ledger(&path, &text)?));
            }
        }
    }
    let notices = plan(ctx.today, &config.notify, &domain, &inputs, &sent);

    if args.dry_run {
        let rows: Vec<Row> = notices
            .iter()
            .map(|n| Row {
                notice: n,
                status: "planned",
                error: None,
            })
            .collect();
        print_rows(ctx, &rows);
        eprintln!(
            "notify: dry run, {} notice(s) planned, none sent",
            notices.len()
        );
        return Ok(Outcome::Clean);
    }
    if notices.is_empty() {
        print_rows(ctx, &[]);
        eprintln!("notify: nothing to send");
        return Ok(Outcome::Clean);
    }

    // Render everything before sending anything: a broken template stops the run whole.
    let templates = Templates::new(
        store.read(&format!("templates/{SUBJECT}"))?,
        store.read(&format!("templates/{BODY}"))?,
    )
    .map_err(|e| CommandError::input(e.to_string()))?
    .with_registry_url(config.notify.registry_url.clone());
    let mut messages = Vec::with_capacity(notices.len());
    let mut histories: BTreeMap<&str, crate::model::history::History> = BTreeMap::new();
    for n in &notices {
        if !histories.contains_key(n.dataset.as_str()) {
            let h = store.history(&n.dataset)?;
            histories.insert(&n.dataset, h);
        }
        let history = &histories[n.dataset.as_str()];
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
            .map_err(|e| CommandError::input(e.to_string()))?;
        messages.push(message(&from, n, &rendered).map_err(mail_error)?);
    }

    let mut mailer =
        Mailer::new(&config.smtp, |var| std::env::var(var).ok()).map_err(mail_error)?;
    let mut rows = Vec::with_capacity(notices.len());
    let mut appended: BTreeMap<String, String> = BTreeMap::new();
    let mut failed = 0usize;
    for (n, m) in notices.iter().zip(&messages) {
        match mailer.send(m) {
            Ok(()) => {
                eprintln!(
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
                    // The clock is read here, at the edge: the instant the server accepted it.
                    at: chrono::Utc::now().fixed_offset(),
                    for_date: ctx.today,
                    sunset: n.sunset,
                };
                appended
                    .entry(ledger_path(&n.dataset))
                    .or_default()
                    .push_str(&entry_text(&entry));
                rows.push(Row {
                    notice: n,
                    status: "sent",
                    error: None,
                });
            }
            Err(e) => {
                failed += 1;
                eprintln!(
                    "failed {} line {} {} to {}: {e}",
                    n.dataset, n.line, n.milestone, n.consumer
                );
                rows.push(Row {
                    notice: n,
                    status: "failed",
                    error: Some(e.to_string()),
                });
            }
        }
    }
    let connections = mailer.connections;
    mailer.close();
    let sent_count = notices.len() - failed;
    if sent_count > 0 {
        let message = format!("notify: {sent_count} notice(s) sent for {}", ctx.today);
        commit_ledger(&store, appended.into_iter().collect(), &message).map_err(|e| {
            CommandError::environment(format!(
                "{sent_count} notice(s) were sent but could not be recorded, so the next run \
                 will send them again: {e}"
            ))
        })?;
    }
    print_rows(ctx, &rows);
    eprintln!("notify: {sent_count} sent, {failed} failed, over {connections} SMTP connection(s)");
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
        println!("no notice");
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
    println!(
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
