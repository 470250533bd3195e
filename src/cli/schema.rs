//! `contracts schema`: write the JSON Schemas of the store's files (the schemas themselves are
//! in `src/render/schema/`).

use std::path::PathBuf;

use crate::render::schema::schemas;

use super::{CommandError, Context, Outcome};

/// Write the JSON Schemas of the store's files
///
/// The JSON Schemas of contract files, `contracts.toml`, `consumers.toml`, release manifests
/// (`release.toml`) and waivers files, for editors, and of the body of a `generic` webhook, the
/// report of `review --format json` and the `attributes` of `consumers --attributes`, for the
/// programs that read them: with --out DIR, one
/// file each (the repository keeps them under `schema/`); without, one JSON object of all eight
/// on stdout, by file name.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write `contract.schema.json`, `contracts-toml.schema.json`, `consumers.schema.json`,
    /// `release-manifest.schema.json`, `waivers.schema.json`, `webhook-generic.schema.json`,
    /// `review-report.schema.json` and `attribute-uses.schema.json` into this directory
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let all = schemas();
    match &args.out {
        None => {
            let map: serde_json::Map<String, serde_json::Value> = all
                .into_iter()
                .map(|(name, v)| (name.to_string(), v))
                .collect();
            super::output::print_json(ctx, &map);
        }
        Some(dir) => {
            let fail =
                |e: std::io::Error| CommandError::environment(format!("{}: {e}", dir.display()));
            std::fs::create_dir_all(dir).map_err(fail)?;
            let n = all.len();
            for (name, v) in all {
                let text = serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
                std::fs::write(dir.join(name), text).map_err(fail)?;
            }
            talkln!(ctx, "wrote {n} schemas to {}", dir.display());
        }
    }
    Ok(Outcome::Clean)
}
