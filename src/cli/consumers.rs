use serde::Serialize;

use super::context::{line_of, registry_scan_daily};
use super::output::{
    key, last_read, print_attribute_uses, print_json, print_table, text, Cell, Tone,
};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::attribute_uses::{
    dataset_attributes, of_consumers, ConsumerAttributes, Lookback,
};
use crate::consumers::source_health::blind_sources;
use crate::consumers::{classify, exempt, mark_stale, ScanStats, Standing, Status, Thresholds};
use crate::model::{Line, Strictness};

/// Who reads a dataset, and on which line
///
/// Who reads a dataset, from the consumption log: for each registered consumer the line and
/// version of its newest read within `[consumption] lookback_days` up to --today, and whether
/// it is still on an old line, migrated, current or silent; readers missing from
/// consumers.toml are listed as unknown, registered readers not subscribed to the dataset as
/// unsubscribed. Liveness: a consumer with no read in `[consumption] stale_after_days` is
/// stale. Readers that do not hold their line back from retiring have their own status:
/// `automation` (`kind = "automation"` in consumers.toml) and `incidental` (fewer reads of the
/// line than `[consumption] min_reads`, or on fewer days than `min_days`).
///
/// With --attributes, also each subscribed consumer's use of each attribute of the dataset's
/// lines: `declared` (its `uses` names it), `observed` (a read in the lookback was seen reading
/// it, where its source tells the attributes a read touched: pgaudit's statements, the
/// warehouses' access records), `both`, or
/// `unknown` (neither, but some of its reads cannot tell). Two gaps are named: "declared, not
/// seen since DAY" (only when every read of the consumer told its attributes) and "reads `X`,
/// not in `uses`".
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
    /// Also say, per consumer and attribute, whether its use is declared, observed or both
    #[arg(long)]
    attributes: bool,
}

#[derive(Serialize)]
struct LineSummary {
    line: u64,
    sunset: Option<chrono::NaiveDate>,
    newest_version: String,
    /// Consumers still on the line, those whose newest read names an unknown version but
    /// whose last known read is on this line included.
    still_on: usize,
    /// Of `still_on`, those whose newest read names a version the store does not have.
    unknown_version: usize,
    /// Of the consumers whose newest read is on the line, those that do not hold it back
    /// from retiring: automations and incidental readers (`still_on` counts them: they are
    /// still told).
    ignored: usize,
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: &'a str,
    today: chrono::NaiveDate,
    lookback_from: chrono::NaiveDate,
    /// A consumer with no read in this many days is `stale`.
    stale_after_days: i64,
    /// Below these a reader is `incidental` on its line.
    thresholds: Thresholds,
    lines: Vec<LineSummary>,
    /// Registered consumers whose newest read names a version the store does not have.
    unknown_version: usize,
    consumers: Vec<Standing>,
    /// With --attributes: each consumer's use of each attribute, declared against observed.
    #[serde(skip_serializing_if = "Option::is_none")]
    attributes: Option<Vec<ConsumerAttributes>>,
    scan: &'a ScanStats,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store_for(&args.dataset)?;
    let lines: Vec<Line> = store.lines(&args.dataset)?;
    if let Some(n) = args.line {
        line_of(&args.dataset, &lines, n)?;
    }
    let thresholds = store.config().consumption.thresholds;
    let names = [args.dataset.clone()].into();
    let want = (args.attributes, thresholds.bite());
    let (registry, scan, req, mut daily) = registry_scan_daily(ctx, &store, names, want)?;
    let mut standings = classify(&args.dataset, &lines, &registry, &scan.of(&args.dataset));
    let stale_after_days = store.config().consumption.stale_after();
    mark_stale(&mut standings, ctx.today, stale_after_days);
    let newest = lines.iter().map(|l| l.major).max();
    let mut summaries: Vec<LineSummary> = lines
        .iter()
        .map(|l| LineSummary {
            line: l.major,
            sunset: l.sunset,
            newest_version: l.newest().to_string(),
            still_on: standings
                .iter()
                .filter(|s| s.line == Some(l.major) && s.line != newest)
                .filter(|s| matches!(s.status, Status::StillOn | Status::UnknownVersion))
                .count(),
            unknown_version: standings
                .iter()
                .filter(|s| s.line == Some(l.major) && s.line != newest)
                .filter(|s| s.status == Status::UnknownVersion)
                .count(),
            ignored: 0,
        })
        .collect();
    if thresholds.bite() {
        let reads = daily.remove(&args.dataset).unwrap_or_default();
        let usage = |c: &str, l: u64| reads.usage(c, l, req.from, ctx.today);
        exempt(&mut standings, &registry, thresholds, Some(&usage));
    } else {
        exempt(&mut standings, &registry, thresholds, None);
    }
    for summary in &mut summaries {
        summary.ignored = standings
            .iter()
            .filter(|s| s.line == Some(summary.line))
            .filter(|s| matches!(s.status, Status::Automation | Status::Incidental))
            .count();
    }
    super::context::warn_unknown_versions(ctx, &args.dataset, &standings);
    let unknown_version = standings
        .iter()
        .filter(|s| s.status == Status::UnknownVersion)
        .count();
    if let Some(n) = args.line {
        standings.retain(|s| s.line == Some(n) || s.status == Status::Silent);
    }
    let attributes = if args.attributes {
        let contracts = store.contracts(&args.dataset, Strictness::Reading)?;
        // What the lines promise today: the newest version of each.
        let newest = lines
            .iter()
            .filter_map(|l| contracts.iter().rev().find(|c| c.version.major == l.major));
        Some(of_consumers(
            &standings,
            &dataset_attributes(newest),
            |c| registry.get(c).and_then(|c| c.uses(&args.dataset)),
            &scan.seen_of(&args.dataset),
            Lookback {
                since: req.from,
                blind: !blind_sources(&scan.stats.sources).is_empty(),
            },
        ))
    } else {
        None
    };
    let report = Report {
        dataset: &args.dataset,
        today: ctx.today,
        lookback_from: req.from,
        stale_after_days,
        thresholds,
        lines: summaries,
        unknown_version,
        consumers: standings,
        attributes,
        scan: &scan.stats,
    };
    match ctx.format {
        Format::Json => print_json(ctx, &report),
        _ => print_text(ctx, &report),
    }
    Ok(Outcome::Clean)
}

/// `say(n)`, or nothing when `n` is zero.
fn if_any(n: usize, say: impl FnOnce(usize) -> String) -> String {
    if n > 0 {
        say(n)
    } else {
        String::new()
    }
}

fn print_text(ctx: &Context, r: &Report) {
    for l in &r.lines {
        match l.sunset {
            Some(s) => outln!(
                ctx,
                "line {} (newest {}): sunset {s}, {} consumer(s) still on it{}{}",
                l.line,
                l.newest_version,
                l.still_on,
                if_any(l.unknown_version, |n| format!(
                    " ({n} whose newest read names a version the store does not have)"
                )),
                if_any(l.ignored, |n| format!(
                    "; {n} of them automation or incidental, not holding it back"
                )),
            ),
            None => outln!(ctx, "line {} (newest {})", l.line, l.newest_version),
        }
    }
    outln!(ctx);
    if r.consumers.is_empty() {
        outln!(ctx, "no consumer");
        return;
    }
    let rows = r.consumers.iter().map(|s| {
        vec![
            s.consumer.clone().into(),
            Cell::of(s.status),
            s.line.map_or("-".to_string(), |l| l.to_string()).into(),
            match (&s.unknown_version, &s.version) {
                (Some(u), Some(v)) => format!("{u} (unknown; last known {v})"),
                (Some(u), None) => format!("{u} (unknown)"),
                (None, v) => v.as_ref().map_or("-".to_string(), |v| v.to_string()),
            }
            .into(),
            last_read(s.last_read).into(),
            s.reads.to_string().into(),
            if s.stale {
                Cell::toned("stale", Some(Tone::Warn))
            } else {
                Cell::toned("live", Some(Tone::Good))
            },
            s.team.clone().unwrap_or_else(|| "-".to_string()).into(),
        ]
    });
    print_table(
        ctx,
        &[
            key("consumer"),
            key("status"),
            key("line"),
            key("version"),
            key("last seen"),
            key("reads"),
            key("liveness"),
            text("team"),
        ],
        rows,
    );
    if let Some(attributes) = &r.attributes {
        outln!(ctx);
        outln!(
            ctx,
            "attributes of {} since {}:",
            r.dataset,
            r.lookback_from
        );
        print_attribute_uses(ctx, attributes);
    }
}
