use std::path::PathBuf;

use super::{CommandError, Context, Outcome};
use crate::model::{version_state, Strictness};
use crate::render::odcs::{document, kept_document, status_word, yaml};

// `export stac`: one Collection file per line, updated in place.
mod stac;

/// Export a contract in another format (ODCS, STAC)
///
/// Export a contract to another standard's format.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    to: To,
}

#[derive(Debug, clap::Subcommand)]
enum To {
    Odcs(OdcsArgs),
    Stac(stac::Args),
}

/// DATASET[@VERSION] (the newest version by default) as an Open Data Contract Standard v3.1.0
/// document in YAML: attributes and the geometry column as properties (the geometry's type,
/// dimensions and SRID as its physical type), their meanings as descriptions, null bounds, a
/// feature-count floor and the required attributes as quality checks, and every clause ODCS has
/// no place for kept whole as a custom property. The status is the version's on --today: proposed, active,
/// deprecated (an old line in its window, or superseded within its line) or retired.
#[derive(Debug, clap::Args)]
struct OdcsArgs {
    /// DATASET or DATASET@VERSION
    target: String,
    /// Write the document to this file instead of stdout
    #[arg(long, value_name = "FILE.yaml")]
    out: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let a = match &args.to {
        To::Odcs(a) => a,
        To::Stac(a) => return stac::run(ctx, a),
    };
    let store = ctx.store()?;
    let (dataset, version) = store.resolve_target(&a.target)?;
    let c = store.contract(&dataset, &version, Strictness::Reading)?;
    let versions = store.versions(&dataset)?;
    let lines = store.lines(&dataset)?;
    let current = store.current_version(&dataset, &versions, c.version.major, ctx.today)?;
    let state = version_state(
        &c.version,
        c.valid_from,
        &lines,
        current.as_ref(),
        ctx.today,
    );
    let line = lines.iter().find(|l| l.major == c.version.major);
    let sunset = line.and_then(|l| l.sunset);
    // An imported contract writes its kept document back, with its clauses in place.
    let doc = match &c.odcs {
        Some(kept) => kept_document(&c, kept, status_word(state), sunset)
            .map_err(|e| CommandError::input(format!("{dataset}@{}: {e}", c.version)))?,
        None => document(&c, status_word(state), sunset),
    };
    let text = yaml(&doc);
    match &a.out {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| {
                CommandError::environment(format!("cannot write {}: {e}", path.display()))
            })?;
            talkln!(ctx, "wrote {}", path.display());
        }
        None => outln!(ctx, "{}", text.trim_end()),
    }
    Ok(Outcome::Clean)
}
