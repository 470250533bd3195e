use std::path::PathBuf;

use serde::Serialize;

use super::output::print_json;
use super::{CommandError, Context, Format, Outcome};
use crate::store::{layout, Repo, StoreError};

const DEFAULT_CONFIG: &str = include_str!("../../templates/contracts.toml");
const DEFAULT_CONSUMERS: &str = include_str!("../../templates/consumers.toml");

/// Create a store
///
/// Create a store: `contracts.toml` with the default policy, `consumers.toml`, the folders of
/// the layout, a git repository and a first commit.
///
/// In a directory that is already a git repository the store is adopted: the layout is
/// committed on top, and `[store] since` names the commit before it, so `check` proves
/// immutability from there on and leaves the earlier history alone.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to create the store [default: --repo, or the current directory]
    dir: Option<PathBuf>,
}

#[derive(Serialize)]
struct Report {
    root: PathBuf,
    commit: String,
    adopted_since: Option<String>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let dir = args
        .dir
        .clone()
        .or_else(|| ctx.repo.clone())
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir)
        .map_err(|e| CommandError::environment(format!("cannot create {}: {e}", dir.display())))?;
    if dir.join(layout::CONFIG).exists() {
        return Err(StoreError::AlreadyAStore { path: dir }.into());
    }
    // Only a repository rooted exactly here is adopted; a parent repository is not ours.
    let repo = if dir.join(".git").exists() {
        Repo::open(&dir).map_err(StoreError::from)?
    } else {
        Repo::init(&dir).map_err(StoreError::from)?
    };
    let parent = repo.head().map_err(StoreError::from)?;
    let config = match parent {
        Some(since) => format!(
            "[store]\nsince = \"{since}\"   # proofs start after this commit\n\n{DEFAULT_CONFIG}"
        ),
        None => DEFAULT_CONFIG.to_string(),
    };
    let keep = |d: &str| (format!("{d}/.gitkeep"), Vec::new());
    let files = vec![
        (layout::CONFIG.to_string(), config.into_bytes()),
        (
            layout::CONSUMERS.to_string(),
            DEFAULT_CONSUMERS.as_bytes().to_vec(),
        ),
        keep(layout::CONTRACTS),
        keep(layout::HISTORY),
        keep(layout::NOTIFICATIONS),
    ];
    let commit = repo
        .commit_files(parent, &files, "contracts init: create the store")
        .map_err(StoreError::from)?;
    let report = Report {
        root: repo.work_dir().to_path_buf(),
        commit: commit.to_string(),
        adopted_since: parent.map(|p| p.to_string()),
    };
    match ctx.format {
        Format::Json => print_json(ctx, &report),
        _ => {
            outln!(ctx, "{}", report.root.display());
            talkln!(
                ctx,
                "initialised a contracts store in {} (commit {})",
                report.root.display(),
                &report.commit[..12]
            );
            if let Some(since) = &report.adopted_since {
                talkln!(
                    ctx,
                    "adopted an existing repository: proofs start after {}",
                    &since[..12]
                );
            }
        }
    }
    Ok(Outcome::Clean)
}
