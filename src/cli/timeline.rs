use std::path::PathBuf;

use semver::Version;

use super::consumption::{registry, scan_daily};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::daily::{still_on_by_day, DailyReads};
use crate::model::{window::windows, Strictness};
use crate::release::record::parse_records;
use crate::release::validate::Status;
use crate::render::timeline::{
    svg, ContractResult, LineSpan, ReleaseMark, StillOn, SunsetMark, Timeline, Told, VersionMark,
    WaiverSpan,
};
use crate::store::{layout, Store};

/// Draw the windows of a dataset's lines
///
/// The window picture of DATASET as SVG: each contract line from its `valid_from` to its
/// sunset, the deprecation windows, sunset moves, every recorded release (`validate --record`)
/// as a mark on each contract it was validated against, each waiver as a band from its grant
/// to its last day on the line it covers, today, and underneath the number of
/// registered consumers still reading the old line, day by day from the consumption log.
///
/// The SVG goes to stdout, or to FILE with --out; --format json prints the facts it shows.
/// Exit 0, or 2 for an unknown dataset or unreadable records.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset
    dataset: String,
    /// Write the SVG to this file instead of stdout
    #[arg(long, value_name = "FILE.svg")]
    out: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store()?;
    let t = gather(ctx, &store, &args.dataset)?;
    if ctx.format == Format::Json {
        super::output::print_json(ctx, &t);
        return Ok(Outcome::Clean);
    }
    let picture = svg(&t);
    match &args.out {
        Some(path) => {
            std::fs::write(path, picture).map_err(|e| {
                CommandError::environment(format!("cannot write {}: {e}", path.display()))
            })?;
            talkln!(ctx, "wrote {}", path.display());
        }
        None => outln!(ctx, "{}", picture.trim_end()),
    }
    Ok(Outcome::Clean)
}

/// Everything the picture of one dataset shows, read from the store and the consumption log.
pub fn gather(ctx: &Context, store: &Store, dataset: &str) -> Result<Timeline, CommandError> {
    gather_with(ctx, store, dataset, None)
}

/// [`gather`], with the dataset's daily reads already scanned (`None`: scan the log for it
/// when it has a window).
pub fn gather_with(
    ctx: &Context,
    store: &Store,
    dataset: &str,
    scanned: Option<&DailyReads>,
) -> Result<Timeline, CommandError> {
    let lines = store.lines(dataset)?;
    let contracts = store.contracts(dataset, Strictness::Reading)?;
    let history = store.history(dataset)?;
    let path = layout::releases(dataset);
    let records = match store.read(&path)? {
        Some(text) => parse_records(&path, &text)?,
        None => Vec::new(),
    };
    let spans = lines
        .iter()
        .map(|l| LineSpan {
            major: l.major,
            opens: l.opens,
            sunset: l.sunset,
            versions: contracts
                .iter()
                .filter(|c| c.version.major == l.major)
                .map(|c| VersionMark {
                    version: c.version.to_string(),
                    valid_from: c.valid_from,
                })
                .collect(),
        })
        .collect();
    let sunset_moves = history
        .sunset
        .iter()
        .map(|s| SunsetMark {
            line: s.line,
            recorded: s.at.date_naive(),
            from: s.from,
            to: s.to,
            forced: s.forced,
        })
        .collect();
    let releases = records
        .iter()
        .map(|r| ReleaseMark {
            day: r.date.unwrap_or(r.validated),
            version: r.version.clone(),
            results: r
                .contract
                .iter()
                .filter_map(|c| {
                    let v = Version::parse(&c.version).ok()?;
                    Some(ContractResult {
                        line: v.major,
                        contract: c.version.clone(),
                        passed: !c.results.values().any(|s| *s == Status::Fail),
                    })
                })
                .collect(),
        })
        .collect();
    let recorded = store.waivers(dataset)?;
    let waivers = recorded
        .waiver
        .iter()
        .map(|w| WaiverSpan {
            id: w.id.clone(),
            line: w.line,
            clause: w.clause.clone(),
            granted: w.granted,
            until: w.until,
            revoked_on: recorded.revocation(&w.id).map(|r| r.on),
        })
        .collect();
    let windows = windows(&lines);
    let consumption = &store.config().consumption;
    let mut still_on = Vec::new();
    if !windows.is_empty() {
        // Only the consumers subscribed to the dataset hold its lines.
        let all = registry(ctx, store)?;
        let registry = crate::consumers::Registry {
            consumers: all
                .subscribers(dataset)
                .map(|c| (c.name.clone(), c.clone()))
                .collect(),
        };
        let own;
        let reads = match scanned {
            Some(r) => r,
            None => {
                let names = [dataset.to_string()].into_iter().collect();
                own = scan_daily(ctx, store, &names, None, &all)?
                    .remove(dataset)
                    .unwrap_or_default();
                &own
            }
        };
        for w in &windows {
            let counts = if w.opens <= ctx.today {
                still_on_by_day(
                    reads,
                    &registry,
                    w.old_line,
                    w.opens,
                    ctx.today,
                    consumption.lookback_days,
                )
            } else {
                Vec::new()
            };
            still_on.push(StillOn {
                line: w.old_line,
                counts,
            });
        }
    }
    Ok(Timeline {
        dataset: dataset.to_string(),
        today: ctx.today,
        lookback_days: consumption.lookback_days,
        lines: spans,
        windows,
        sunset_moves,
        releases,
        still_on,
        told: told(store, dataset)?,
        waivers,
    })
}

/// Every notice delivered about `dataset`, from its ledger (notifications/<dataset>.toml).
pub fn told(store: &Store, dataset: &str) -> Result<Vec<Told>, CommandError> {
    let path = layout::notifications(dataset);
    let Some(text) = store.read(&path)? else {
        return Ok(Vec::new());
    };
    let ledger = crate::notify::ledger::parse_ledger(&path, &text)?;
    Ok(ledger
        .notices
        .iter()
        .map(|e| Told {
            line: e.line,
            consumer: e.consumer.clone(),
            milestone: e.milestone.clone(),
            channel: e.channel.clone(),
            day: e.for_date,
            at: e.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        })
        .collect())
}
