use std::path::PathBuf;

use super::{CommandError, Context, Outcome};
use crate::cli::context::read_input;
use crate::render::odcs::{import, Options};

/// FILE, an Open Data Contract Standard v3 document in YAML, as a draft: its properties as
/// required and optional attributes (types from physicalType, else logicalType), nullValues
/// checks as max_null_fraction, a rowCount floor as the store's feature-count clause, the
/// geometry column's type, CRS, bbox and dimensions as spatial clauses, version, and
/// contractCreatedTs as valid_from (else --today). The whole document is kept verbatim in the
/// draft's [odcs] table, and `export odcs` writes it back. A document the store cannot hold
/// (several schema objects, a column type with no attribute type, a clause whose kind
/// contracts.toml lacks) is refused with every reason, and nothing is written.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The ODCS YAML file
    file: PathBuf,
    /// The dataset name, when the document's `name` is not one ([a-z0-9][a-z0-9_-]{0,63})
    #[arg(long)]
    dataset: Option<String>,
    /// Write the draft to this file instead of stdout
    #[arg(long, value_name = "DRAFT.toml")]
    out: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    if let Some(d) = args.dataset.as_deref() {
        if !crate::model::is_dataset_name(d) {
            return Err(CommandError::input(format!(
                "`{d}` is not a valid dataset name ([a-z0-9][a-z0-9_-]{{0,63}})"
            )));
        }
    }
    let text = read_input(&args.file)?;
    let config = ctx.config()?;
    let options = Options {
        dataset: args.dataset.as_deref(),
        today: ctx.today,
        kinds: &config.kinds,
    };
    let imported = import(&args.file.display().to_string(), &text, &options)
        .map_err(|e| CommandError::input(e.to_string()))?;
    for note in &imported.notes {
        talkln!(ctx, "note: {note}");
    }
    let draft = imported.draft;
    match &args.out {
        Some(path) => {
            std::fs::write(path, &draft).map_err(|e| {
                CommandError::environment(format!("cannot write {}: {e}", path.display()))
            })?;
            talkln!(ctx, "wrote {}", path.display());
        }
        None => out!(ctx, "{draft}"),
    }
    Ok(Outcome::Clean)
}
