use super::output::{key, print_json, print_table};
use super::{CommandError, Context, Format, Outcome};
use crate::release::record::{advisory_counts, parse_records};
use crate::store::layout;

/// How often each advisory clause would have failed the recorded releases
///
/// For each advisory clause of DATASET's live contracts, how many recorded releases
/// (`validate --record`) it would have failed. A clause that would fail many releases is
/// mis-specified: fix its value before a minor version enforces it.
///
/// Exit 0, or 2 when the store or the records cannot be read.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset
    dataset: String,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store()?;
    let live = store.live_contracts(&args.dataset, ctx.today)?;
    let path = layout::releases(&args.dataset);
    let text = store.read(&path)?.unwrap_or_default();
    let records = parse_records(&path, &text)?;
    let counts = advisory_counts(&records, &live);
    match ctx.format {
        Format::Json => print_json(ctx, &counts),
        _ => {
            if counts.is_empty() {
                outln!(
                    ctx,
                    "no advisory clause in the live contracts of {} ({} recorded releases)",
                    args.dataset,
                    records.len()
                );
            } else {
                let rows = counts.iter().map(|c| {
                    vec![
                        format!("{}@{}", args.dataset, c.contract),
                        c.clause.clone(),
                        c.failed.to_string(),
                        c.evaluated.to_string(),
                        format!("{:.0}%", c.fail_fraction * 100.0),
                    ]
                });
                print_table(
                    ctx,
                    &[
                        key("contract"),
                        key("advisory clause"),
                        key("would fail"),
                        key("of releases"),
                        key("fraction"),
                    ],
                    rows,
                );
            }
        }
    }
    Ok(Outcome::Clean)
}
