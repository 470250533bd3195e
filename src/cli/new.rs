use std::path::PathBuf;

use super::context::profile_and_merge;
use super::{CommandError, Context, Outcome};
use crate::model::is_dataset_name;
use crate::release::draft::draft;

/// Draft a first contract from a release file
///
/// Print a draft first contract for DATASET on stdout. With `--from`, the draft is filled from
/// a profile of real data: crs, envelope, geometry types, attributes with their types, null
/// fractions and the invalid-geometry fraction, as this release has them.
///
/// A draft is a starting point: a profile says what one release contains, not what you
/// promise. Review every clause, then `propose` it.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset name ([a-z0-9][a-z0-9_-]{0,63})
    dataset: String,
    /// Data files of a representative release to draft the clauses from
    #[arg(long, value_name = "FILE", num_args = 1..)]
    from: Vec<PathBuf>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    if !is_dataset_name(&args.dataset) {
        return Err(CommandError::input(format!(
            "`{}` is not a valid dataset name ([a-z0-9][a-z0-9_-]{{0,63}})",
            args.dataset
        )));
    }
    // No file, no profile: the draft is then left for the producer to fill.
    let profile = profile_and_merge(
        ctx,
        &args.from,
        &crate::release::ReadOptions::default(),
        false,
        &[],
    )?;
    out!(ctx, "{}", draft(&args.dataset, ctx.today, profile.as_ref()));
    Ok(Outcome::Clean)
}
