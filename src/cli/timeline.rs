use std::path::PathBuf;

use super::context::{registry, scan_daily};
use super::{CommandError, Context, Format, Outcome};
use crate::model::window::windows;
use crate::render::timeline::{svg, Timeline};
use crate::store::Store;

/// Draw the windows of a dataset's lines
///
/// The window picture of DATASET as SVG: each contract line from its `valid_from` to its
/// sunset, the deprecation windows, sunset moves, every recorded release (`validate --record`)
/// as a mark on each contract it was validated against, each waiver as a band from its grant
/// to its last day (or to the day it was revoked) on the line it covers, today, and underneath
/// the number of
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

/// Everything the picture of one dataset shows, read from the store and, when the dataset
/// has a window, from the consumption log (its notes on stderr).
pub fn gather(ctx: &Context, store: &Store, dataset: &str) -> Result<Timeline, CommandError> {
    if windows(&store.lines(dataset)?).is_empty() {
        return Ok(crate::gather::gather(store, dataset, ctx.today, None)?);
    }
    let registry = registry(ctx, store)?;
    let names = [dataset.to_string()].into_iter().collect();
    let reads = scan_daily(ctx, store, &names, None, &registry)?
        .remove(dataset)
        .unwrap_or_default();
    Ok(crate::gather::gather(
        store,
        dataset,
        ctx.today,
        Some((&registry, &reads)),
    )?)
}
