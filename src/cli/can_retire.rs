use chrono::NaiveDate;
use serde::Serialize;

use super::context::{counted_standings, line_of, Counted};
use super::output::{key, last_read, print_json, print_table, text, Cell};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::daily::{clear_since, held_by_day, DaySpan};
use crate::consumers::source_health::{blind_sources, BlindSource};
use crate::consumers::{retire_gate, Registry, Standing, Status, Successor, Thresholds};
use crate::model::Line;

/// Whether a line can stop being published: nobody still reads it
///
/// A gate for CI and cron: can the producer stop publishing LINE of DATASET? Exit 0 when a
/// live line succeeds it and no subscribed consumer's newest read within `[consumption]
/// lookback_days` is on the line (and say since when); 1 when the successor has not opened or
/// there is none, or when some consumers still hold the line (listing who, with their last
/// read); 2 for an unknown dataset or line; 4 when nobody holds the line but a consumption
/// source is blind (it gave no read of any dataset in the lookback, or more than half of its
/// requests matched no `match` template), so "nobody" cannot be told from "cannot see", or the
/// store has no consumers.toml, so nobody is subscribed to hold the line at all.
///
/// Automations (`kind = "automation"` in consumers.toml) and incidental readers (fewer reads
/// of the line in the lookback than `[consumption] min_reads`, or on fewer days than
/// `min_days`) do not hold a line; they are listed as ignored, with their counts.
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
    /// The dataset is discontinued: the line may retire without a live line after it
    #[arg(long)]
    no_successor: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: &'a str,
    line: u64,
    today: NaiveDate,
    lookback_from: NaiveDate,
    can_retire: bool,
    /// Nobody that counts holds the line, but a consumption source is blind
    /// (`blind_sources`), so that is no proof: `can_retire` is false and the exit code 4.
    cannot_tell: bool,
    /// The store has no consumers.toml: nobody is subscribed, so nobody can be shown to
    /// hold the line, and no yes is given (`cannot_tell`).
    unregistered: bool,
    /// The sources that cannot be believed, and why.
    blind_sources: Vec<BlindSource>,
    /// The first day since which no subscribed consumer's newest read has been on the line
    /// (replayed day by day); `null` when it cannot retire.
    since: Option<NaiveDate>,
    /// The line after it that is not retired (`null`: none).
    successor: Option<Successor>,
    /// `--no-successor` was given.
    no_successor: bool,
    /// Why the successor rule says no; `null` when it says yes.
    blocked_by_successor: Option<&'a str>,
    holders: &'a [Standing],
    /// Readers of the line that do not hold it: automations and incidental readers.
    ignored: &'a [Standing],
    thresholds: Thresholds,
    /// Readers of the line that do not hold it: not subscribed to the dataset, or unknown.
    not_holding: Vec<&'a Standing>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store_for(&args.dataset)?;
    store.require_dataset(&args.dataset)?;
    let lines: Vec<Line> = store.lines(&args.dataset)?;
    let line = line_of(&args.dataset, &lines, args.line)?;
    let Counted {
        registry,
        registered,
        scan,
        req,
        standings,
        reads,
    } = counted_standings(ctx, &store, &args.dataset, &lines, false)?;
    let consumption = &store.config().consumption;
    let thresholds = consumption.thresholds;
    let g = retire_gate(
        &lines,
        args.line,
        ctx.today,
        &standings,
        thresholds,
        args.no_successor,
    );
    // A yes needs every source to be believed: a blind one may hide the readers.
    let blind_sources = blind_sources(&scan.stats.sources);
    // And a registry: without one nobody is subscribed to hold the line, whoever reads it.
    let cannot_tell = g.can_retire && (!blind_sources.is_empty() || !registered);
    let can_retire = g.can_retire && !cannot_tell;
    let not_holding: Vec<&Standing> = standings
        .iter()
        .filter(|s| matches!(s.status, Status::Unsubscribed | Status::Unknown))
        .filter(|s| s.line == Some(args.line))
        .collect();
    for s in &not_holding {
        talkln!(
            ctx,
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
    if g.successor.is_none() && !args.no_successor {
        talkln!(
            ctx,
            "hint: to stop publishing {} altogether, say so with `--no-successor`",
            args.dataset
        );
    }
    let since = if can_retire {
        let subscribed = Registry::new(
            registry
                .subscribers(&args.dataset)
                .map(|c| (c.name.clone(), c.clone()))
                .collect(),
        );
        let from = line.opens.min(ctx.today);
        let days = DaySpan {
            from,
            to: ctx.today,
            lookback_days: consumption.lookback_days,
        };
        let counts = held_by_day(&reads, &subscribed, args.line, days, thresholds);
        clear_since(&counts)
    } else {
        None
    };
    let report = Report {
        dataset: &args.dataset,
        line: args.line,
        today: ctx.today,
        lookback_from: req.from,
        can_retire,
        cannot_tell,
        unregistered: !registered,
        blind_sources,
        since,
        successor: g.successor,
        no_successor: g.no_successor,
        blocked_by_successor: g.blocked_by_successor.as_deref(),
        holders: &g.holders,
        ignored: &g.ignored,
        thresholds,
        not_holding,
    };
    match ctx.format {
        Format::Json => print_json(ctx, &report),
        _ => print_text(ctx, &report),
    }
    Ok(if cannot_tell {
        Outcome::CannotTell
    } else {
        Outcome::findings_if(!can_retire)
    })
}

fn print_text(ctx: &Context, r: &Report) {
    if r.cannot_tell && r.unregistered {
        outln!(
            ctx,
            "{} line {}: cannot tell whether it can retire: the store has no consumers.toml, so \
             no consumer is subscribed to hold it, whoever reads it (register the consumers)",
            r.dataset,
            r.line
        );
    } else if r.cannot_tell {
        let names: Vec<String> = r
            .blind_sources
            .iter()
            .map(|b| format!("`{}`", b.source))
            .collect();
        outln!(
            ctx,
            "{} line {}: cannot tell whether it can retire: no subscribed consumer's newest read \
             since {} is on it, but the consumption source(s) {} cannot be believed (see the \
             warnings on stderr)",
            r.dataset,
            r.line,
            r.lookback_from,
            names.join(", ")
        );
    } else if r.can_retire {
        outln!(
            ctx,
            "{} line {} can retire: no subscribed consumer's newest read since {} is on it{}",
            r.dataset,
            r.line,
            r.lookback_from,
            r.since
                .map_or(String::new(), |d| format!(" (none since {d})"))
        );
    } else {
        let mut why: Vec<String> = Vec::new();
        if let Some(b) = r.blocked_by_successor {
            why.push(b.to_string());
        }
        if !r.holders.is_empty() {
            why.push(format!(
                "{} subscribed consumer(s) still read it",
                r.holders.len()
            ));
        }
        outln!(
            ctx,
            "{} line {} cannot retire: {}",
            r.dataset,
            r.line,
            why.join("; ")
        );
    }
    if !r.holders.is_empty() {
        let rows = r.holders.iter().map(|s| {
            vec![
                s.consumer.clone(),
                s.version
                    .as_ref()
                    .map_or("-".to_string(), |v| v.to_string()),
                last_read(s.last_read),
                s.team.clone().unwrap_or_else(|| "-".to_string()),
            ]
        });
        print_table(
            ctx,
            &[
                key("consumer"),
                key("version"),
                key("last read"),
                text("team"),
            ],
            rows,
        );
    }
    if !r.ignored.is_empty() {
        outln!(
            ctx,
            "ignored (automations, and readers under min_reads = {} or min_days = {}):",
            r.thresholds.min_reads,
            r.thresholds.min_days
        );
        let rows = r.ignored.iter().map(|s| {
            let u = s.usage.unwrap_or_default();
            vec![
                s.consumer.clone().into(),
                Cell::of(s.status),
                u.reads.to_string().into(),
                u.days.to_string().into(),
                last_read(s.last_read).into(),
            ]
        });
        print_table(
            ctx,
            &[
                key("consumer"),
                key("status"),
                key("reads"),
                key("days"),
                key("last read"),
            ],
            rows,
        );
    }
}
