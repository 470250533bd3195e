use std::collections::BTreeSet;

use chrono::NaiveDate;
use serde::Serialize;

use super::context::committed_registry_scan_daily;
use super::output::{key, line_state, print_json, print_table, Cell};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::{classify, exempt, retire_gate, Status};
use crate::model::window::LineState;
use crate::store::Store;

/// Live lines per dataset, with their windows
///
/// Live lines per dataset on `--today`: the current version of each, the window dates and the
/// days left to a sunset. Lines that have not opened yet are shown as upcoming; retired lines
/// are left out unless --all is given.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this dataset
    dataset: Option<String>,
    /// Also list retired lines (state `retired`)
    #[arg(long)]
    all: bool,
}

#[derive(Serialize)]
pub struct LineStatus {
    pub dataset: String,
    pub line: u64,
    pub state: LineState,
    /// The version current on the day (the newest already valid); for an upcoming line, its
    /// first version.
    pub version: String,
    pub newest: String,
    pub opens: NaiveDate,
    pub sunset: Option<NaiveDate>,
    pub days_to_sunset: Option<i64>,
    /// Registered consumers whose newest read is still on this line; counted only for a live
    /// line with a sunset (the old side of a window).
    pub consumers_still_on: Option<usize>,
    /// The `can-retire` answer for the same line: a live line succeeds it and no subscribed
    /// consumer that counts (no automation, no incidental reader) holds it. Given where
    /// `consumers_still_on` is.
    pub can_retire: Option<bool>,
    /// Nobody that counts holds the line, but a consumption source is blind, or the store has
    /// no consumers.toml, so that is no proof: `can_retire` is false (as `can-retire` exits 4).
    pub cannot_tell: bool,
    /// Live waivers covering this line on the day (`contracts waivers` lists them).
    pub waivers: usize,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = match &args.dataset {
        Some(d) => ctx.store_for(d)?,
        None => ctx.store()?,
    };
    let datasets = match &args.dataset {
        Some(d) => vec![d.clone()],
        None => store.datasets()?,
    };
    // The lines and current versions of every dataset, parsed on every core; the loop below
    // then meets them in the store's caches, and any failure exactly where it always did.
    store.prefetch(&datasets, ctx.today, |line| {
        line.state(ctx.today) != LineState::Retired || args.all
    });
    let mut rows = Vec::new();
    for dataset in &datasets {
        let versions = store.versions(dataset)?;
        if versions.is_empty() {
            return Err(store.unknown_dataset(dataset).into());
        }
        let waivers = store.waivers(dataset)?;
        for line in store.lines(dataset)? {
            let state = line.state(ctx.today);
            if state == LineState::Retired && !args.all {
                continue;
            }
            let version = match store.current_version(dataset, &versions, line.major, ctx.today)? {
                Some(v) => v.to_string(),
                None => line.versions[0].to_string(),
            };
            rows.push(LineStatus {
                dataset: dataset.clone(),
                line: line.major,
                state,
                version,
                newest: line.newest().to_string(),
                opens: line.opens,
                sunset: line.sunset,
                days_to_sunset: line.sunset.map(|s| (s - ctx.today).num_days()),
                consumers_still_on: None,
                can_retire: None,
                cannot_tell: false,
                waivers: waivers
                    .live(ctx.today)
                    .filter(|w| w.line.is_none_or(|l| l == line.major))
                    .filter(|_| state == LineState::Live)
                    .count(),
            });
        }
    }
    count_still_on(ctx, &store, &mut rows)?;
    match ctx.format {
        Format::Json => print_json(ctx, &rows),
        _ => {
            // The column appears only when a waiver is in force, so a store without any
            // keeps its narrower table.
            let any_waiver = rows.iter().any(|r| r.waivers > 0);
            let text = rows.iter().map(|r| {
                let mut row: Vec<Cell> = vec![
                    r.dataset.clone().into(),
                    r.line.to_string().into(),
                    line_state(r.state),
                    r.version.clone().into(),
                    r.opens.to_string().into(),
                    r.sunset.map_or("-".to_string(), |d| d.to_string()).into(),
                    r.days_to_sunset
                        .map_or("-".to_string(), |d| d.to_string())
                        .into(),
                    r.consumers_still_on
                        .map_or("-".to_string(), |n| n.to_string())
                        .into(),
                    match r.can_retire {
                        _ if r.cannot_tell => "cannot tell",
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "-",
                    }
                    .into(),
                ];
                if any_waiver {
                    row.push(r.waivers.to_string().into());
                }
                row
            });
            let mut header = vec![
                key("dataset"),
                key("line"),
                key("state"),
                key("version"),
                key("opens"),
                key("sunset"),
                key("days left"),
                key("still on"),
                key("retire?"),
            ];
            if any_waiver {
                header.push(key("waivers"));
            }
            print_table(ctx, &header, text);
        }
    }
    Ok(Outcome::Clean)
}

/// Fill in who is still on each line that has a sunset. The consumption log is scanned once,
/// for just the datasets in a window, and not at all when none is: the log can be huge.
fn count_still_on(
    ctx: &Context,
    store: &Store,
    rows: &mut [LineStatus],
) -> Result<(), CommandError> {
    let windowed: BTreeSet<String> = rows
        .iter()
        .filter(|r| r.state == LineState::Live && r.sunset.is_some())
        .map(|r| r.dataset.clone())
        .collect();
    if windowed.is_empty() {
        return Ok(());
    }
    let thresholds = store.config().consumption.thresholds;
    // Each reader's days are counted only when a threshold can call someone incidental.
    let want = (false, thresholds.bite());
    let (committed, scan, req, daily) =
        committed_registry_scan_daily(ctx, store, windowed.clone(), want)?;
    // Without a registry nobody is subscribed to hold a line: as a blind source, no proof.
    let blind = scan.stats.sources.iter().any(|s| s.blind.is_some()) || committed.is_none();
    let registry = committed.unwrap_or_default();
    for dataset in &windowed {
        let lines = store.lines(dataset)?;
        let mut standings = classify(dataset, &lines, &registry, &scan.of(dataset));
        let still_on = |row: &LineStatus| {
            standings
                .iter()
                .filter(|s| {
                    matches!(s.status, Status::StillOn | Status::UnknownVersion)
                        && s.line == Some(row.line)
                })
                .count()
        };
        let counts: Vec<(u64, usize)> = rows
            .iter()
            .filter(|r| &r.dataset == dataset)
            .map(|r| (r.line, still_on(r)))
            .collect();
        match daily.get(dataset) {
            Some(reads) => {
                let usage = |c: &str, l: u64| reads.usage(c, l, req.from, ctx.today);
                exempt(&mut standings, &registry, thresholds, Some(&usage));
            }
            None => exempt(&mut standings, &registry, thresholds, None),
        }
        for row in rows
            .iter_mut()
            .filter(|r| &r.dataset == dataset && r.state == LineState::Live && r.sunset.is_some())
        {
            // Who is still on the line is everyone `notify` writes to, incidental or not.
            row.consumers_still_on = counts.iter().find(|(l, _)| *l == row.line).map(|(_, n)| *n);
            let yes =
                retire_gate(&lines, row.line, ctx.today, &standings, thresholds, false).can_retire;
            // A yes needs every source to be believed.
            row.cannot_tell = yes && blind;
            row.can_retire = Some(yes && !blind);
        }
    }
    Ok(())
}
