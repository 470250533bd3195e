use serde::Serialize;

use super::consumption::{registry, scan_logs};
use super::output::{print_json, table};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::{classify, ScanStats, Standing, Status};
use crate::model::Line;

/// Who reads a dataset, from the consumption log: for each registered consumer the line and
/// version of its newest read within `[consumption] lookback_days` up to --today, and whether
/// it is still on an old line, migrated, current or silent; readers missing from
/// consumers.toml are listed as unknown.
///
/// Malformed log lines are reported on stderr (file:line: reason) and counted; the scan goes
/// on. Exit 0, or 2 for a bad dataset, registry or config.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset
    dataset: String,
    /// Only the consumers whose newest read is on this line (silent ones are always listed)
    #[arg(long, value_name = "N")]
    line: Option<u64>,
}

#[derive(Serialize)]
struct LineSummary {
    line: u64,
    sunset: Option<chrono::NaiveDate>,
    newest_version: String,
    still_on: usize,
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: &'a str,
    today: chrono::NaiveDate,
    lookback_from: chrono::NaiveDate,
    lines: Vec<LineSummary>,
    consumers: Vec<Standing>,
    scan: &'a ScanStats,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    ctx.refuse_junit("consumers")?;
    let store = ctx.store()?;
    let lines: Vec<Line> = store.lines(&args.dataset)?;
    if let Some(n) = args.line {
        if !lines.iter().any(|l| l.major == n) {
            let have: Vec<String> = lines.iter().map(|l| l.major.to_string()).collect();
            return Err(CommandError::input(format!(
                "dataset `{}` has no line {n} (its lines: {})",
                args.dataset,
                have.join(", ")
            )));
        }
    }
    let registry = registry(&store)?;
    let (scan, req) = scan_logs(ctx, &store, [args.dataset.clone()].into())?;
    let mut standings = classify(&lines, &registry, &scan.of(&args.dataset));
    let summaries = lines
        .iter()
        .map(|l| LineSummary {
            line: l.major,
            sunset: l.sunset,
            newest_version: l.newest().to_string(),
            still_on: standings
                .iter()
                .filter(|s| s.status == Status::StillOn && s.line == Some(l.major))
                .count(),
        })
        .collect();
    if let Some(n) = args.line {
        standings.retain(|s| s.line == Some(n) || s.status == Status::Silent);
    }
    let report = Report {
        dataset: &args.dataset,
        today: ctx.today,
        lookback_from: req.from,
        lines: summaries,
        consumers: standings,
        scan: &scan.stats,
    };
    match ctx.format {
        Format::Json => print_json(&report),
        _ => print_text(&report),
    }
    Ok(Outcome::Clean)
}

fn print_text(r: &Report) {
    for l in &r.lines {
        match l.sunset {
            Some(s) => println!(
                "line {} (newest {}): sunset {s}, {} consumer(s) still on it",
                l.line, l.newest_version, l.still_on
            ),
            None => println!("line {} (newest {})", l.line, l.newest_version),
        }
    }
    println!();
    if r.consumers.is_empty() {
        println!("no consumer");
        return;
    }
    let rows = r.consumers.iter().map(|s| {
        vec![
            s.consumer.clone(),
            s.status.to_string(),
            s.line.map_or("-".to_string(), |l| l.to_string()),
            s.version
                .as_ref()
                .map_or("-".to_string(), |v| v.to_string()),
            s.last_read.map_or("-".to_string(), |t| {
                t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            }),
            s.reads.to_string(),
            s.team.clone().unwrap_or_else(|| "-".to_string()),
        ]
    });
    println!(
        "{}",
        table(
            &[
                "consumer",
                "status",
                "line",
                "version",
                "last read",
                "reads",
                "team"
            ],
            rows
        )
    );
}
