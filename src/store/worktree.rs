//! What the work tree holds that HEAD does not.
//!
//! Every command reads the store as committed at HEAD, so an edit not yet committed is not
//! used — which is right (a half-edited store is never judged) but must never be silent: an
//! uncommitted `consumers.toml` once made every consumer `unknown` without a word. This lists
//! the store files whose work-tree or staged content differs from HEAD, so the CLI can say so.
//! Consumption logs are not store files (they are the platform's, read from the work tree by
//! `[consumption] sources`) and are never listed.

use gix::bstr::BString;

use super::layout;

/// Why the work tree could not be compared with HEAD.
#[derive(Debug, thiserror::Error)]
#[error("could not compare the work tree with HEAD: {0}")]
pub struct StatusError(String);

fn err(e: impl std::fmt::Display) -> StatusError {
    StatusError(e.to_string())
}

/// Whether a path (relative to the store root, `/`-separated) is a store file a command reads.
pub fn is_store_file(path: &str) -> bool {
    path == layout::CONFIG
        || path == layout::CONSUMERS
        || [
            layout::CONTRACTS,
            layout::HISTORY,
            layout::NOTIFICATIONS,
            layout::TEMPLATES,
        ]
        .iter()
        .any(|dir| {
            path.strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
        })
}

/// The store files one dataset's commands read: the configuration, the registry, the
/// templates, and that dataset's contracts, history, release records, waivers and ledger.
pub fn files_of(dataset: &str) -> Vec<String> {
    vec![
        layout::CONFIG.to_string(),
        layout::CONSUMERS.to_string(),
        format!("{}/", layout::TEMPLATES),
        format!("{}/{dataset}/", layout::CONTRACTS),
        layout::history(dataset),
        layout::releases(dataset),
        layout::waivers(dataset),
        layout::notifications(dataset),
    ]
}

/// Every store file and folder: what a command about the whole store reads.
pub fn store_files() -> Vec<String> {
    vec![
        layout::CONFIG.to_string(),
        layout::CONSUMERS.to_string(),
        format!("{}/", layout::CONTRACTS),
        format!("{}/", layout::HISTORY),
        format!("{}/", layout::NOTIFICATIONS),
        format!("{}/", layout::TEMPLATES),
    ]
}

/// The store files that differ between HEAD and the index or the work tree (modified, added,
/// deleted, untracked), sorted, each once. `only` limits the comparison to those paths (files,
/// or folders ending in `/`): a command about one dataset need not stat every other one, and
/// none walks the folders of the work tree that are not the store's ([`store_files`]).
pub fn uncommitted(
    repo: &gix::Repository,
    only: Option<&[String]>,
) -> Result<Vec<String>, StatusError> {
    let all;
    let only = match only {
        Some(only) => only,
        None => {
            all = store_files();
            &all[..]
        }
    };
    let patterns: Vec<BString> = only
        .iter()
        .map(|p| BString::from(format!(":(literal){p}")))
        .collect();
    // A file whose modification time is in the second the index was written is "racily
    // clean" and gets its content hashed, unless the nanoseconds tell it was written before
    // the index, as git compares them: after a checkout of thousands of files, most are in
    // that second. The setting is for this handle only.
    let mut repo = repo.clone();
    {
        let mut config = repo.config_snapshot_mut();
        config
            .set_value(&gix::config::tree::gitoxide::Core::USE_NSEC, "true")
            .map_err(err)?;
        config.commit().map_err(err)?;
    }
    let iter = repo
        .status(gix::progress::Discard)
        .map_err(err)?
        .untracked_files(gix::status::UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        .index_worktree_submodules(None)
        .into_iter(patterns)
        .map_err(err)?;
    let mut out = std::collections::BTreeSet::new();
    for item in iter {
        let item = item.map_err(err)?;
        let path = item.location().to_string();
        let wanted = only
            .iter()
            .any(|p| path == *p || (p.ends_with('/') && path.starts_with(p.as_str())));
        if wanted && is_store_file(&path) && !path.ends_with("/.gitkeep") {
            out.insert(path);
        }
    }
    Ok(out.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::is_store_file;

    #[test]
    fn store_files_are_config_registry_and_the_four_folders() {
        for p in [
            "contracts.toml",
            "consumers.toml",
            "contracts/roads/1.0.0.toml",
            "history/roads.toml",
            "history/roads.releases.toml",
            "notifications/roads.toml",
            "templates/notice.txt",
        ] {
            assert!(is_store_file(p), "{p}");
        }
        for p in [
            "consumption/reads.jsonl",
            "README.md",
            "contractsX/a",
            "history",
        ] {
            assert!(!is_store_file(p), "{p}");
        }
    }
}
