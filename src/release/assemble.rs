//! One release's profile as `profile`, `validate` and `new` take it: the data files (when
//! there are any) profiled as one release, then the saved profiles (`profile --format json`,
//! for example one per partition, made where the partition lies) merged into it in the order
//! named. Prints nothing: the readers' warnings and what was read of object storage land in
//! the [`ReadNotes`].

use std::path::{Path, PathBuf};

use super::{
    profile_files_with, MergeError, Profile, Progress, ReadNotes, ReadOptions, ReleaseError,
};

/// Why a release could not be profiled, or a saved profile read or merged.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    #[error(transparent)]
    Read(#[from] ReleaseError),
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not UTF-8 text (the first invalid byte is at byte offset {offset})", path.display())]
    NotText { path: PathBuf, offset: usize },
    #[error("{}: not a saved profile: {source}", path.display())]
    NotAProfile {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The saved profile's counts do not add up.
    #[error("{}: {source}", path.display())]
    Inconsistent {
        path: PathBuf,
        #[source]
        source: MergeError,
    },
    #[error("{}: cannot be merged: {source}", path.display())]
    CannotMerge {
        path: PathBuf,
        #[source]
        source: MergeError,
    },
}

/// Read a saved profile (`profile --format json`), its counts checked.
pub fn load_profile(path: &Path) -> Result<Profile, AssembleError> {
    let bytes = std::fs::read(path).map_err(|source| AssembleError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| AssembleError::NotText {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to(),
    })?;
    let p: Profile = serde_json::from_str(&text).map_err(|source| AssembleError::NotAProfile {
        path: path.to_path_buf(),
        source,
    })?;
    p.checked().map_err(|source| AssembleError::Inconsistent {
        path: path.to_path_buf(),
        source,
    })
}

/// The profile of `files` (when there are any) merged with the saved profiles `merge`, in
/// order; `None` when both are empty.
pub fn profile_and_merge(
    files: &[PathBuf],
    opts: &ReadOptions,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
    merge: &[PathBuf],
) -> Result<Option<Profile>, AssembleError> {
    let mut profile = if files.is_empty() {
        None
    } else {
        Some(profile_files_with(files, opts, progress, notes)?)
    };
    for m in merge {
        let p = load_profile(m)?;
        profile = Some(match profile {
            None => p,
            Some(acc) => acc.merge(&p).map_err(|source| AssembleError::CannotMerge {
                path: m.clone(),
                source,
            })?,
        });
    }
    Ok(profile)
}
