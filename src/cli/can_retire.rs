use chrono::NaiveDate;
use serde::Serialize;

use super::consumption::{registry, scan_logs};
use super::output::{print_json, table};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::daily::{clear_since, still_on_by_day};
use crate::consumers::{classify, Registry, Standing, Status};
use crate::model::Line;

/// Whether a line can stop being published: nobody still reads it
///
/// A gate for CI and cron: can the producer stop publishing LINE of DATASET? Exit 0 when no
/// subscribed consumer's newest read within `[consumption] lookback_days` is on the line (and
/// say since when), 1 when some still are (listing who, with their last read), 2 for an
/// unknown dataset or line.
///
/// The sunset rule does not change: this answers the producer's question, not the
/// consumers'. Readers missing from consumers.toml, or not subscribed to the dataset, do not
/// hold a line (they are named on stderr).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset
    dataset: String,
    /// The line (major version number)
    line: u64,
}

/// The gate's answer for one line.
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    pub can_retire: bool,
    /// The subscribed consumers whose newest read is on the line.
    pub holders: Vec<Standing>,
}

/// The subscribed consumers whose newest read is on `line`: those that hold it.
pub fn gate(line: u64, standings: &[Standing]) -> Gate {
    let holders: Vec<Standing> = standings
        .iter()
        .filter(|s| {
            matches!(
                s.status,
                Status::StillOn | Status::Migrated | Status::Current | Status::UnknownVersion
            ) && s.line == Some(line)
        })
        .cloned()
        .collect();
    Gate {
        can_retire: holders.is_empty(),
        holders,
    }
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: &'a str,
    line: u64,
    today: NaiveDate,
    lookback_from: NaiveDate,
    can_retire: bool,
    /// The first day since which no subscribed consumer's newest read has been on the line
    /// (replayed day by day); `null` when it cannot retire.
    since: Option<NaiveDate>,
    holders: &'a [Standing],
    /// Readers of the line that do not hold it: not subscribed to the dataset, or unknown.
    not_holding: Vec<&'a Standing>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store_for(&args.dataset)?;
    if store.versions(&args.dataset)?.is_empty() {
        return Err(store.unknown_dataset(&args.dataset).into());
    }
    let lines: Vec<Line> = store.lines(&args.dataset)?;
    let Some(line) = lines.iter().find(|l| l.major == args.line) else {
        let have: Vec<String> = lines.iter().map(|l| l.major.to_string()).collect();
        return Err(CommandError::input(format!(
            "dataset `{}` has no line {} (its lines: {})",
            args.dataset,
            args.line,
            have.join(", ")
        )));
    };
    let registry = registry(&store)?;
    let (scan, req) = scan_logs(ctx, &store, [args.dataset.clone()].into())?;
    let standings = classify(&args.dataset, &lines, &registry, &scan.of(&args.dataset));
    let g = gate(args.line, &standings);
    let not_holding: Vec<&Standing> = standings
        .iter()
        .filter(|s| matches!(s.status, Status::Unsubscribed | Status::Unknown))
        .filter(|s| s.line == Some(args.line))
        .collect();
    for s in &not_holding {
        eprintln!(
            "note: `{}` reads line {} of {} but is {}; it does not hold the line",
            s.consumer,
            args.line,
            args.dataset,
            if s.status == Status::Unknown {
                "not in consumers.toml"
            } else {
                "not subscribed to the dataset in consumers.toml"
            }
        );
    }
    let since = if g.can_retire {
        let subscribed = Registry {
            consumers: registry
                .subscribers(&args.dataset)
                .map(|c| (c.name.clone(), c.clone()))
                .collect(),
        };
        let names = [args.dataset.clone()].into_iter().collect();
        let reads = super::timeline::scan_daily(ctx, &store, &names)?
            .remove(&args.dataset)
            .unwrap_or_default();
        let from = line.opens.min(ctx.today);
        let counts = still_on_by_day(
            &reads,
            &subscribed,
            args.line,
            from,
            ctx.today,
            store.config().consumption.lookback_days,
        );
        clear_since(&counts)
    } else {
        None
    };
    let report = Report {
        dataset: &args.dataset,
        line: args.line,
        today: ctx.today,
        lookback_from: req.from,
        can_retire: g.can_retire,
        since,
        holders: &g.holders,
        not_holding,
    };
    match ctx.format {
        Format::Json => print_json(&report),
        _ => print_text(&report),
    }
    Ok(Outcome::findings_if(!g.can_retire))
}

fn print_text(r: &Report) {
    if r.can_retire {
        outln!(
            "{} line {} can retire: no subscribed consumer's newest read since {} is on it{}",
            r.dataset,
            r.line,
            r.lookback_from,
            r.since
                .map_or(String::new(), |d| format!(" (none since {d})"))
        );
        return;
    }
    outln!(
        "{} line {} cannot retire: {} subscribed consumer(s) still read it",
        r.dataset,
        r.line,
        r.holders.len()
    );
    let rows = r.holders.iter().map(|s| {
        vec![
            s.consumer.clone(),
            s.version
                .as_ref()
                .map_or("-".to_string(), |v| v.to_string()),
            s.last_read.map_or("-".to_string(), |t| {
                t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            }),
            s.team.clone().unwrap_or_else(|| "-".to_string()),
        ]
    });
    outln!(
        "{}",
        table(&["consumer", "version", "last read", "team"], rows)
    );
}
