use chrono::Timelike;

use super::consumption::{registry, scan_logs};
use super::output::{key, print_json, table, text};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::Registry;
use crate::notify::ledger::MAIL;
use crate::notify::run::{self, Event, Row, RunError, Settings};
use crate::notify::send::{check_settings, sender, MailError, MailTransport, Mailer};
use crate::notify::webhook::{self, Channels, WebhookTransport};

/// Send the sunset notices due today (run it daily)
///
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
    /// With --dry-run: print every notice in full on stdout, each mail's headers and body and
    /// each webhook delivery's payload (never a webhook's URL or secret)
    #[arg(long, requires = "dry_run")]
    show: bool,
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
    let located = |key: &'static str, e: MailError| {
        let mut err = CommandError::from(e);
        err.message = config.error_at(key, &err.message);
        err
    };
    let from = sender(&config.notify.from).map_err(|e| located("notify.from", e))?;
    check_settings(&config.smtp).map_err(|e| match e {
        MailError::PlainToRemote(_) => located("smtp.host", e),
        other => CommandError::from(other),
    })?;
    // The clock is read here, at the edge: claims are dated, and aged, by it. In whole
    // seconds, as the ledger records it, so this run's own claim reads back as made `now`.
    let now = ctx
        .now()
        .with_nanosecond(0)
        .expect("zero nanoseconds is a valid time");
    let (run_id, stale_minutes) = (run::run_id(now), config.notify.claim_stale_minutes);
    let s = Settings {
        today: ctx.today,
        now,
        stale_minutes,
        run: &run_id,
    };
    let sink = &mut |e: Event<'_>| talk(ctx, e);

    let registry = registry(ctx, &store)?;
    let scan = |datasets| scan_logs(ctx, &store, datasets, &registry).map(|(scan, _)| scan);
    let (todo, messages) = run::prepare(&store, &registry, &from, &s, scan, sink)?;

    if args.show {
        print_previews(
            ctx,
            &todo,
            &from,
            &registry,
            config.notify.registry_url.as_deref(),
        );
        talkln!(
            ctx,
            "notify: dry run, {} notice(s) planned and rendered, none sent",
            todo.len()
        );
        return Ok(Outcome::Clean);
    }
    if args.dry_run || todo.is_empty() {
        print_rows(
            ctx,
            &todo.iter().map(run::Todo::planned).collect::<Vec<_>>(),
        );
        match args.dry_run {
            true => talkln!(
                ctx,
                "notify: dry run, {} notice(s) planned and rendered, none sent",
                todo.len()
            ),
            false => talkln!(ctx, "notify: nothing to send"),
        }
        return Ok(Outcome::Clean);
    }
    // The identity before the credentials, as the run checks it first: nothing is sent
    // unless it can be recorded.
    store.identity().map_err(RunError::Identity)?;
    // The relay is connected (and its credentials read) only when a mail is due: a run that
    // has only webhook deliveries to make does not depend on it.
    let mut mail = match todo.iter().any(|t| t.notice.channel == MAIL) {
        true => MailTransport::new(
            Mailer::new(&config.smtp, store.root(), |var| std::env::var(var).ok())
                .map_err(CommandError::from)?,
            messages,
        ),
        false => MailTransport::idle(),
    };
    // Read before anything is claimed: a missing or empty file is a config error.
    let roots = match &config.notify.ca_file {
        Some(file) => webhook::ca_roots(store.root(), file).map_err(|e| {
            let mut err = CommandError::input(e.to_string());
            err.message = config.error_at("notify.ca_file", &err.message);
            err
        })?,
        None => Vec::new(),
    };
    let clock = || ctx.now();
    let hooks = WebhookTransport::new(
        registry.clone(),
        |var| std::env::var(var).ok(),
        &clock,
        config.notify.registry_url.clone(),
    )
    .with_timeout(std::time::Duration::from_secs(
        config.notify.webhook_timeout_seconds,
    ))
    .with_roots(roots);
    let mut channels = Channels {
        mail: &mut mail,
        hooks,
    };
    let r = run::deliver(store, todo, &s, &clock, &mut channels, sink)?;
    let requests = channels.hooks.requests;
    print_rows(ctx, &r.rows);
    let recovered = (r.recovered > 0).then(|| format!(", {} recovered", r.recovered));
    talkln!(
        ctx,
        "notify: {} sent, {} failed, {} unsent{}, over {} SMTP connection(s){}",
        r.sent,
        r.failed,
        r.unsent,
        recovered.unwrap_or_default(),
        mail.connections(),
        match requests {
            0 => String::new(),
            n => format!(" and {n} webhook request(s)"),
        }
    );
    match r.failure() {
        Some(e) => Err(e.into()),
        None => Ok(Outcome::Clean),
    }
}

/// The CLI's talk for each event of a run, on stderr.
fn talk(ctx: &Context, e: Event) {
    match e {
        Event::Standings { dataset, standings } => {
            super::consumers::warn_unknown_versions(ctx, dataset, standings)
        }
        e => talkln!(ctx, "{e}"),
    }
}

fn print_rows(ctx: &Context, rows: &[Row]) {
    if ctx.format == Format::Json {
        return print_json(ctx, &rows);
    }
    if rows.is_empty() {
        return outln!(ctx, "no notice");
    }
    let cells = rows.iter().map(|r| {
        let n = &r.notice;
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
    let head = [
        key("dataset"),
        key("consumer"),
        key("line"),
        key("milestone"),
        key("sunset"),
        key("days left"),
        text("recipients"),
        key("status"),
    ];
    outln!(ctx, "{}", table(ctx, &head, cells));
}

/// What `--show` prints of one notice: the mail as its recipients would read it, or the
/// webhook delivery as its receiver would get it. Built from the rendered notice and the
/// registry only: no environment variable is read, so a URL or a secret cannot show.
fn preview(
    t: &run::Todo,
    from: &lettre::message::Mailbox,
    registry: &Registry,
    registry_url: Option<&str>,
) -> serde_json::Value {
    let n = &t.notice;
    if n.channel == MAIL {
        let (subject, body) = t
            .rendered
            .as_ref()
            .map(|r| (r.subject.as_str(), r.body.as_str()))
            .unwrap_or_default();
        return serde_json::json!({
            "from": from.to_string(),
            "to": n.recipients,
            "subject": subject,
            "message_id": n.message_id,
            "body": body,
        });
    }
    let (kind, payload) = match webhook::preview(registry, registry_url, n) {
        Some((kind, payload)) => (Some(kind.to_string()), payload),
        None => (None, serde_json::Value::Null),
    };
    serde_json::json!({
        "channel": n.channel,
        "kind": kind,
        "webhook_id": n.message_id,
        "payload": payload,
    })
}

/// `--dry-run --show`: every notice in full. In JSON, each row of the plan gains `preview`.
fn print_previews(
    ctx: &Context,
    todo: &[run::Todo],
    from: &lettre::message::Mailbox,
    registry: &Registry,
    registry_url: Option<&str>,
) {
    let shown = todo
        .iter()
        .map(|t| (t, preview(t, from, registry, registry_url)));
    if ctx.format == Format::Json {
        let rows: Vec<serde_json::Value> = shown
            .map(|(t, p)| {
                let mut row = serde_json::to_value(t.planned()).expect("a row serializes");
                row["preview"] = p;
                row
            })
            .collect();
        return print_json(ctx, &rows);
    }
    if todo.is_empty() {
        return outln!(ctx, "no notice");
    }
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    for (i, (t, p)) in shown.enumerate() {
        let n = &t.notice;
        if i > 0 {
            outln!(ctx);
        }
        let about = format!(
            "{} line {} {} to {}",
            n.dataset, n.line, n.milestone, n.consumer
        );
        if n.channel == MAIL {
            outln!(ctx, "=== mail: {about}");
            outln!(ctx, "From: {}", text(&p["from"]));
            outln!(ctx, "To: {}", n.recipients.join(", "));
            outln!(ctx, "Subject: {}", text(&p["subject"]));
            outln!(ctx, "Message-ID: {}", n.message_id);
            outln!(ctx);
            outln!(ctx, "{}", text(&p["body"]).trim_end());
        } else {
            let kind = p["kind"].as_str().unwrap_or("unknown");
            outln!(ctx, "=== {} ({kind}): {about}", n.channel);
            outln!(ctx, "webhook-id: {}", n.message_id);
            outln!(ctx);
            outln!(
                ctx,
                "{}",
                serde_json::to_string_pretty(&p["payload"]).expect("JSON prints")
            );
        }
    }
}
