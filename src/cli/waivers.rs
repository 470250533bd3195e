use chrono::NaiveDate;
use serde::Serialize;

use super::output::{key, print_json, print_table, text, Cell, Toned as _};
use super::{CommandError, Context, Format, Outcome};
use crate::model::waiver::{Waiver, WaiverState};
use crate::store::StoreError;

/// The waivers of DATASET (or of every dataset) on --today: each with its clause key, line,
/// state (live, expired, revoked, upcoming), until and days left, who granted it and why.
/// Expired and revoked ones are listed only with --all. Exit 0, or 2 for an unknown dataset
/// or a waivers file that does not parse.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this dataset
    dataset: Option<String>,
    /// Also list expired and revoked waivers
    #[arg(long)]
    all: bool,
}

#[derive(Serialize)]
struct Row<'a> {
    dataset: String,
    #[serde(flatten)]
    waiver: &'a Waiver,
    state: WaiverState,
    /// Days from --today to `until` (0 on the last day); negative once expired.
    days_left: i64,
    /// The day it was revoked, if it was.
    revoked_on: Option<NaiveDate>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = match &args.dataset {
        Some(d) => ctx.store_for(d)?,
        None => ctx.store()?,
    };
    let datasets = store.datasets_or_all(args.dataset.as_deref())?;
    let all: Vec<(String, crate::model::waiver::Waivers)> = datasets
        .iter()
        .map(|d| Ok((d.clone(), store.waivers(d)?)))
        .collect::<Result<_, StoreError>>()?;
    let mut rows = Vec::new();
    for (dataset, waivers) in &all {
        for w in &waivers.waiver {
            let state = waivers.state(w, ctx.today);
            if !args.all && matches!(state, WaiverState::Expired | WaiverState::Revoked) {
                continue;
            }
            rows.push(Row {
                dataset: dataset.clone(),
                waiver: w,
                state,
                days_left: w.days_left(ctx.today),
                revoked_on: waivers.revocation(&w.id).map(|r| r.on),
            });
        }
    }
    match ctx.format {
        Format::Json => print_json(ctx, &rows),
        _ if rows.is_empty() => outln!(ctx, "no waiver"),
        _ => {
            let cells = rows.iter().map(|r| {
                vec![
                    r.waiver.id.clone().into(),
                    r.waiver.clause.clone().into(),
                    r.waiver
                        .line
                        .map_or("all".to_string(), |l| l.to_string())
                        .into(),
                    Cell::toned(r.state.as_str(), r.state.tone()),
                    r.waiver.until.to_string().into(),
                    r.days_left.to_string().into(),
                    r.waiver.by.clone().into(),
                    r.waiver.reason.clone().into(),
                ]
            });
            print_table(
                ctx,
                &[
                    key("id"),
                    key("clause"),
                    key("line"),
                    key("state"),
                    key("until"),
                    key("days left"),
                    text("by"),
                    text("reason"),
                ],
                cells,
            );
        }
    }
    Ok(Outcome::Clean)
}
