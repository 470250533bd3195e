//! `contracts export stac`: each line of a dataset as a STAC Collection file, updated in place.
//! The Collections are computed by `render::stac` from the store and the files already there;
//! this file reads and writes those files, and writes only the ones whose content changes.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::cli::{CommandError, Context, Outcome};
use crate::model::Strictness;
use crate::render::html::dataset_page;
use crate::render::stac::{collection, file_name, Facts};

/// DATASET's contract lines as STAC Collections with the version extension v1.2.0: one file
/// DIR/<dataset>-v<line>.json per line, with `version` (the line's newest version),
/// `deprecated` (true once a later line is live, and after the sunset), and
/// `latest-version`, `predecessor-version`, `successor-version` links between the files and a
/// `version-history` link to the registry page when [notify] registry_url is set. A file
/// already there is updated in place: only those fields and links change, every other field
/// is kept, and a file whose content would not change is not written.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset
    dataset: String,
    /// The directory of the Collection files (created if missing)
    #[arg(long, value_name = "DIR")]
    out_dir: PathBuf,
}

pub fn run(ctx: &Context, a: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store()?;
    store.require_dataset(&a.dataset)?;
    let dataset = &a.dataset;
    let lines = store.lines(dataset)?;
    let registry = ctx.config()?.notify.registry_url;
    let history =
        registry.map(|u| format!("{}/{}", u.trim_end_matches('/'), dataset_page(dataset)));
    std::fs::create_dir_all(&a.out_dir).map_err(|e| {
        CommandError::environment(format!("cannot create {}: {e}", a.out_dir.display()))
    })?;
    for (at, line) in lines.iter().enumerate() {
        let newest = store.contract(dataset, &line.newest().to_string(), Strictness::Reading)?;
        let path = a.out_dir.join(file_name(dataset, line.major));
        let existing = read_collection(&path)?;
        let facts = Facts {
            lines: &lines,
            at,
            newest: &newest,
            today: ctx.today,
            history: history.clone(),
        };
        let doc = collection(&facts, existing.clone());
        if existing.as_ref() == Some(&doc) {
            talkln!(ctx, "unchanged {}", path.display());
            continue;
        }
        let mut text = serde_json::to_string_pretty(&Value::Object(doc))
            .expect("a JSON value always serializes");
        text.push('\n');
        std::fs::write(&path, text).map_err(|e| {
            CommandError::environment(format!("cannot write {}: {e}", path.display()))
        })?;
        talkln!(ctx, "wrote {}", path.display());
    }
    Ok(Outcome::Clean)
}

/// The Collection already at `path`, if any; a file that is not a JSON object is refused
/// rather than overwritten.
fn read_collection(path: &Path) -> Result<Option<Map<String, Value>>, CommandError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(CommandError::environment(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    match serde_json::from_str(&text) {
        Ok(Value::Object(doc)) => Ok(Some(doc)),
        Ok(_) => Err(CommandError::input(format!(
            "{} is not a STAC Collection (not a JSON object); it is left as it is",
            path.display()
        ))),
        Err(e) => Err(CommandError::input(format!(
            "{} is not JSON ({e}); it is left as it is",
            path.display()
        ))),
    }
}
