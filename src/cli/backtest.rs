use std::path::PathBuf;

use chrono::NaiveDate;
use serde::Serialize;

use super::context::{read_input, talk_backtest};
use super::output::{print_backtest, print_json};
use super::{CommandError, Context, Format, Outcome};
use crate::model::{parse_contract, Strictness};
use crate::release::record::{backtest, parse_records, Replay};
use crate::store::layout;

/// Replay a draft on the releases recorded before it
///
/// Replay a draft's changed and added clauses on the recorded release profiles of its dataset
/// (`validate --record` keeps each release's profile), and report per clause how many
/// releases it would have failed, and which. Writes nothing.
///
/// A narrowing clause that would have failed recorded releases is a warning naming them.
/// Exit 0, or 2 for an unreadable draft or store.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The draft contract file
    draft: PathBuf,
    /// Replay on the releases validated on or after this day [default: 365 days before
    /// --today]
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = super::parse_day)]
    since: Option<NaiveDate>,
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: &'a str,
    version: String,
    today: NaiveDate,
    since: NaiveDate,
    releases: usize,
    without_profile: usize,
    backtest: &'a [Replay],
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store_unwarned()?;
    let name = args.draft.display().to_string();
    let text = read_input(&args.draft)?;
    let draft = parse_contract(&name, &text, &store.config().kinds, Strictness::Draft)?;
    super::context::warn_uncommitted(ctx, &store, Some(&draft.dataset));
    let prev = if store.versions(&draft.dataset)?.is_empty() {
        None
    } else {
        store.contracts(&draft.dataset, Strictness::Reading)?.pop()
    };
    let path = layout::releases(&draft.dataset);
    let records = parse_records(&path, &store.read(&path)?.unwrap_or_default())?;
    let bt = backtest(&records, ctx.today, args.since, prev.as_ref(), &draft);
    talk_backtest(ctx, &draft.dataset, &bt);
    match ctx.format {
        Format::Json => print_json(
            ctx,
            &Report {
                dataset: &draft.dataset,
                version: draft.version.to_string(),
                today: ctx.today,
                since: bt.since,
                releases: bt.releases,
                without_profile: bt.without_profile,
                backtest: &bt.clauses,
            },
        ),
        _ => print_backtest(ctx, &bt, &draft.dataset),
    }
    Ok(Outcome::Clean)
}
