use std::collections::{BTreeMap, BTreeSet};

use super::context::{registry, scan_logs};
use super::output::{key, notice_status, print_json, print_table, text};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::attributes::Evidence;
use crate::consumers::reads::SeenColumns;
use crate::consumers::Registry;
use crate::model::config::Config;
use crate::model::Strictness;
use crate::notify::channels::{Channels, OpenError};
use crate::notify::deprecation_notices::{KeyEvidence, LineDeprecation};
use crate::notify::message::{BODY, SUBJECT};
use crate::notify::plan::Notice;
use crate::notify::preview::{self, preview};
use crate::notify::run::{self, DatasetFacts, Event, Facts, Inputs, Ran, Row, Settings, Todo};
use crate::notify::send::check_config;
use crate::store::{layout, Store};

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
/// Also told, through the same ledger: a window's opening ([notify] announce), a waiver to the
/// consumers that use its clause, and a deprecation (a current version's [deprecated] entry)
/// to the consumers that use its key, once when published, then at the same milestones
/// counted to the day after its remove_after.
///
/// Prints one line per sent notice and a summary on stderr, the notices on stdout.
/// Exit 0, 2 for bad config, registry or templates, 3 if any notice could not be sent or
/// recorded, 4 if a consumption source is blind (the notices the other sources decide are
/// sent; the blind source is named). The first connection failure, timeout or refused login ends the batch.
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
    let located = |key: &'static str, mut err: CommandError| {
        err.message = config.error_at(key, &err.message);
        err
    };
    let from = check_config(&config).map_err(|e| match e.key() {
        Some(key) => located(key, e.into()),
        None => CommandError::from(e),
    })?;
    // The clock is read here, at the edge: claims are dated, and aged, by it.
    let (now, run_id) = run::start(ctx.now());
    let registry = registry(ctx, &store)?;
    // The blind sources of the scan: the run goes on with what the others say, and ends with
    // exit 4 naming them, since a consumer they hide was not told.
    let (facts, blind) = gather(ctx, &store, &registry, &config)?;
    let inputs = Inputs {
        registry: &registry,
        config: &config,
        from: &from,
        settings: Settings {
            today: ctx.today,
            now,
            stale_minutes: config.notify.claim_stale_minutes,
            run: &run_id,
        },
        dry_run: args.dry_run,
    };
    let mut sink = |e: Event<'_>| talk(ctx, e);
    let (todo, messages) = run::prepare(&facts, &inputs, &mut sink)?;
    let ran = match run::ready(&store, &todo, args.dry_run)? {
        false => Ran::Planned(todo),
        true => {
            // The transports, once something is to be sent (see `Channels::open`); the clock
            // goes with them, the edge that stamps each delivery.
            let clock = || ctx.now();
            let (root, env) = (store.root(), |var: &str| std::env::var(var).ok());
            let mut transport = Channels::open(
                &config, root, &registry, env, &clock, &todo, messages,
            )
            .map_err(|e| match e {
                OpenError::Mail(e) => CommandError::from(e),
                OpenError::CaFile(e) => {
                    located("notify.ca_file", CommandError::input(e.to_string()))
                }
            })?;
            let settings = &inputs.settings;
            Ran::Delivered(run::deliver(
                store,
                todo,
                settings,
                &mut transport,
                &mut sink,
            )?)
        }
    };
    match ran {
        Ran::Planned(todo) if args.show => {
            print_previews(ctx, &todo, &inputs, config.notify.registry_url.as_deref());
        }
        Ran::Planned(todo) => {
            print_rows(
                ctx,
                &registry,
                &todo.iter().map(Todo::planned).collect::<Vec<_>>(),
            );
            talkln!(ctx, "{}", run::planned_summary(todo.len(), args.dry_run));
        }
        Ran::Delivered(report) => {
            print_rows(ctx, &registry, &report.rows);
            talkln!(ctx, "{}", report.summary());
            if let Some(e) = report.failure() {
                return Err(e.into());
            }
        }
    }
    if !blind.is_empty() {
        let names: Vec<String> = blind.iter().map(|b| format!("`{b}`")).collect();
        talkln!(
            ctx,
            "error: the consumption source(s) {} cannot be believed (see the warnings above): \
             the notices above are what the other sources decide, and a consumer only a blind \
             source sees was not told",
            names.join(", ")
        );
        return Ok(Outcome::CannotTell);
    }
    Ok(Outcome::Clean)
}

/// What a run plans from, read from the store once: the templates, and for each dataset with
/// something due today ([`run::is_due`]) its lines, waivers, ledger, history, the contracts a
/// notice may name and its release records, with its standings from one scan of the
/// consumption log (only when some dataset is due). Also the scan's blind sources.
fn gather(
    ctx: &Context,
    store: &Store,
    registry: &Registry,
    config: &Config,
) -> Result<(Facts, BTreeSet<String>), CommandError> {
    let today = ctx.today;
    let mut due = Vec::new();
    for dataset in store.datasets()? {
        let lines = store.lines(&dataset)?;
        let waivers = store.waivers(&dataset)?;
        // A contract that does not read announces nothing: `check` is where it is proved.
        let deprecations = run::current_deprecations(&lines, today, &mut |v| {
            let read = store.contract(&dataset, &v.to_string(), Strictness::Reading);
            read.ok()
        });
        if run::is_due(&lines, &waivers, &deprecations, today, &config.notify) {
            due.push((dataset, lines, waivers, deprecations));
        }
    }
    let mut facts = Facts::default();
    let mut blind = BTreeSet::new();
    if !due.is_empty() {
        let names = due.iter().map(|(d, ..)| d.clone()).collect();
        // The reads say which attributes they touched only where a deprecation asks.
        let attributes = due
            .iter()
            .any(|(.., deprecations)| !deprecations.is_empty());
        let (scan, _) = scan_logs(ctx, store, names, registry, attributes)?;
        let found = crate::consumers::source_health::blind_sources(&scan.stats.sources);
        blind.extend(found.into_iter().map(|b| b.source));
        let mut ledgers = run::read_ledgers(store, due.iter().map(|(d, ..)| d.as_str()))?;
        for (dataset, lines, waivers, deprecations) in due {
            let standings =
                crate::consumers::classify(&dataset, &lines, registry, &scan.of(&dataset));
            let history = store.history(&dataset)?;
            let mut contracts = std::collections::BTreeMap::new();
            for v in run::wanted_contracts(&lines, &waivers, &history, today) {
                // One that does not read is left out: the notice goes without its values.
                let read = store.contract(&dataset, &v, Strictness::Reading);
                if let Ok(c) = read {
                    contracts.insert(v, c);
                }
            }
            let records = match run::wants_records(&waivers, today) {
                true => release_records(store, &dataset),
                false => None,
            };
            let key_evidence = key_evidence(&deprecations, &standings, &scan.seen_of(&dataset));
            let f = DatasetFacts {
                ledger: ledgers.remove(&dataset).unwrap_or_default(),
                lines,
                waivers,
                standings,
                history,
                contracts,
                records,
                deprecations,
                key_evidence,
            };
            facts.datasets.insert(dataset, f);
        }
    }
    facts.templates = (
        store.read(&layout::template(SUBJECT))?,
        store.read(&layout::template(BODY))?,
    );
    Ok((facts, blind))
}

/// What each consumer's reads showed of each deprecated key: its reads in the lookback, of
/// which those whose source told their attributes ([`SeenColumns`]) show whether it read the
/// key; the others cannot tell.
fn key_evidence(
    deprecations: &[LineDeprecation],
    standings: &[crate::consumers::Standing],
    seen: &BTreeMap<String, SeenColumns>,
) -> KeyEvidence {
    deprecations
        .iter()
        .map(|ld| {
            let key = &ld.deprecation.key;
            let attribute = crate::model::deprecation::attribute_of(key);
            let per = standings
                .iter()
                .map(|s| {
                    let e = Evidence::of(s.reads, seen.get(&s.consumer), attribute);
                    (s.consumer.clone(), e)
                })
                .collect();
            (key.clone(), per)
        })
        .collect()
}

/// The release records of `dataset`, or `None` when there are none or they do not read (a
/// waiver notice then goes without the value its release measured).
fn release_records(
    store: &Store,
    dataset: &str,
) -> Option<Vec<crate::release::record::ReleaseRecord>> {
    let path = layout::releases(dataset);
    let text = store.read(&path).ok()??;
    crate::release::record::parse_records(&path, &text).ok()
}

/// The CLI's talk for each event of a run, on stderr.
fn talk(ctx: &Context, e: Event) {
    match e {
        Event::Standings { dataset, standings } => {
            super::context::warn_unknown_versions(ctx, dataset, standings)
        }
        e => talkln!(ctx, "{}", super::output::Said(&e)),
    }
}

fn print_rows(ctx: &Context, registry: &Registry, rows: &[Row]) {
    if ctx.format == Format::Json {
        return print_json(ctx, &rows);
    }
    if rows.is_empty() {
        return outln!(ctx, "no notice");
    }
    let cells = rows.iter().map(|r| {
        let n = &r.notice;
        vec![
            n.dataset.clone().into(),
            n.consumer.clone().into(),
            n.line.to_string().into(),
            n.milestone_text().into(),
            n.channel.clone().into(),
            n.sunset.to_string().into(),
            n.days_left.to_string().into(),
            reached(registry, n).into(),
            notice_status(r.status),
        ]
    });
    let head = [
        key("dataset"),
        key("consumer"),
        key("line"),
        key("milestone"),
        key("channel"),
        key("sunset"),
        key("days left"),
        text("recipients"),
        key("status"),
    ];
    print_table(ctx, &head, cells);
}

/// Whom a row's notice reaches: a mail notice its consumer's contacts; a webhook notice the
/// webhook, by its name and kind (its URL is a credential and never printed).
fn reached(registry: &Registry, n: &Notice) -> String {
    let Some(name) = n.channel.strip_prefix("webhook:") else {
        return n.recipients.join(", ");
    };
    let kind = registry
        .get(&n.consumer)
        .and_then(|c| c.webhooks.iter().find(|h| h.name == name))
        .map(|h| h.kind.to_string());
    match kind {
        Some(kind) => format!("{name} ({kind})"),
        None => name.to_string(),
    }
}

/// `--dry-run --show`: every notice in full. In JSON, each row of the plan gains `preview`.
fn print_previews(ctx: &Context, todo: &[Todo], inputs: &Inputs, registry_url: Option<&str>) {
    let shown = todo
        .iter()
        .map(|t| (t, preview(t, inputs.from, inputs.registry, registry_url)));
    if ctx.format == Format::Json {
        print_json(
            ctx,
            &shown.map(|(t, p)| preview::row(t, p)).collect::<Vec<_>>(),
        );
    } else if todo.is_empty() {
        outln!(ctx, "no notice");
    } else {
        for (i, (t, p)) in shown.enumerate() {
            if i > 0 {
                outln!(ctx);
            }
            outln!(ctx, "{}", preview::text(t, &p));
        }
    }
    talkln!(ctx, "{}", run::planned_summary(todo.len(), true));
}
