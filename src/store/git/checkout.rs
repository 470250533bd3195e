//! The work tree and the index, brought in line with HEAD after a commit, repaired when a
//! writer left them behind HEAD, and rid of the temporary files of writers that died.

use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;
use gix::ObjectId;

use super::{guard, io_err, GitError, Repo};

/// The suffix of the temporary files the checkout writes, followed by the writer's process id.
pub const TEMP_SUFFIX: &str = ".contracts-tmp-";

/// The top-level entries of the work tree the store writes and repairs.
const STORE_PATHS: [&str; 6] = [
    "contracts.toml",
    "consumers.toml",
    "contracts",
    "history",
    "notifications",
    "templates",
];

/// Whether the process with id `pid` is alive. Where that cannot be known, it is assumed alive.
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        proc.join(pid.to_string()).exists()
    } else {
        true
    }
}

impl Repo {
    /// Bring `paths` in the work tree and the whole index in line with the current HEAD.
    ///
    /// This runs under the index lock and reads HEAD afresh rather than using the commit just
    /// made: when writers race, the last one to hold the lock then writes what the final HEAD
    /// says, so the checkout converges on HEAD whatever the order.
    pub(super) fn checkout_paths<'a>(
        &self,
        paths: impl Iterator<Item = &'a str>,
    ) -> Result<(), GitError> {
        let index_path = self.repo.index_path();
        let index_lock = self.index_lock();
        // A lock already older than the wait will not go away: say so at once.
        self.wait_for_locks(std::slice::from_ref(&index_lock))?;
        let lock = gix::lock::File::acquire_to_update_resource(
            &index_path,
            gix::lock::acquire::Fail::AfterDurationWithBackoff(guard::lock_wait()),
            None,
            0,
        )
        .map_err(|source| {
            match self.wait_for_locks(std::slice::from_ref(&index_lock)) {
                Err(stale) => stale,
                Ok(()) => GitError::git("could not lock the index")(source),
            }
        })?;

        let head = self.head()?.ok_or_else(|| GitError::Git {
            context: "HEAD vanished after the commit".into(),
            source: gix::Error::from_error(std::io::Error::other("unborn HEAD")),
        })?;
        let tree = self.tree_of(head)?;

        let paths: Vec<&str> = paths.collect();
        // Checked again under the lock: a link may have appeared since the commit was built.
        self.refuse_symlinks(Some(head), &paths)?;
        let mut written = std::collections::HashMap::new();
        for path in paths {
            let target = self.work_dir.join(path);
            let entry = tree
                .lookup_entry_by_path(path)
                .map_err(GitError::git(format!("could not look up {path} at {head}")))?;
            match entry {
                Some(entry) if entry.mode().is_blob() => {
                    let data = self.blob(entry.object_id())?;
                    write_file(&target, &data)?;
                    let meta = gix::index::fs::Metadata::from_path_no_follow(&target)
                        .map_err(io_err(&target))?;
                    if let Ok(stat) = gix::index::entry::Stat::from_fs(&meta) {
                        written.insert(path.to_string(), stat);
                    }
                }
                _ => match std::fs::remove_file(&target) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io_err(&target)(e)),
                },
            }
        }

        let mut index = self.index_of(head, &tree)?;
        // Keep the stat data of entries that did not change, so git need not re-hash the whole
        // work tree; entries we just wrote get fresh stat data; anything else is left for git
        // to verify by content.
        let old = self.index_on_disk(&index_path)?;
        for (entry, path) in index.entries_mut_with_paths() {
            if let Some(stat) = written.get(path.to_str_lossy().as_ref()) {
                entry.stat = *stat;
            } else if let Some(prev) = old.as_ref().and_then(|o| o.entry_by_path(path)) {
                if prev.id == entry.id && prev.mode == entry.mode {
                    entry.stat = prev.stat;
                }
            }
        }
        // Buffered: every write to a lock file is a system call and a round trip through
        // gix's tempfile registry, and the index is written in many small pieces.
        let mut out = std::io::BufWriter::with_capacity(1 << 16, lock);
        index
            .write_to(&mut out, Default::default())
            .map_err(GitError::git("could not write the index"))?;
        let lock = out.into_inner().map_err(|e| GitError::Io {
            path: index_path.clone(),
            source: e.into_error(),
        })?;
        lock.commit().map_err(|e| GitError::Io {
            path: index_path.clone(),
            source: e.error,
        })?;
        Ok(())
    }

    /// The index of `tree`, HEAD's (`head`, for the message).
    fn index_of(
        &self,
        head: impl std::fmt::Display,
        tree: &gix::Tree<'_>,
    ) -> Result<gix::index::File, GitError> {
        self.repo
            .index_from_tree(&tree.id)
            .map_err(GitError::git(format!(
                "could not build the index for {head}"
            )))
    }

    /// The index file at `index_path` as it is, if there is one.
    fn index_on_disk(
        &self,
        index_path: &std::path::Path,
    ) -> Result<Option<gix::index::File>, GitError> {
        if !index_path.exists() {
            return Ok(None);
        }
        gix::index::File::at(
            index_path,
            self.repo.object_hash(),
            false,
            Default::default(),
        )
        .map(Some)
        .map_err(GitError::git("could not read the index"))
    }

    /// Bring the store's files in the work tree and the index up to HEAD where a writer left
    /// them behind (a commit that landed but whose checkout failed or was killed). Only files
    /// the user has not edited are rewritten: a work-tree file is repaired when it is missing,
    /// already holds HEAD's content, or still holds what the index says and that content was
    /// committed at an ancestor of HEAD. Files are never deleted. Returns the repaired paths.
    pub fn repair_checkout(&self) -> Result<Vec<String>, GitError> {
        let Some(head) = self.head()? else {
            return Ok(Vec::new());
        };
        let tree = self.tree_of(head)?;
        let at_head = self.index_of(head, &tree)?;
        let index_path = self.repo.index_path();
        let on_disk = self.index_on_disk(&index_path)?;
        let ours = |p: &str| {
            STORE_PATHS
                .iter()
                .any(|s| p == *s || p.strip_prefix(s).is_some_and(|r| r.starts_with('/')))
        };
        let mut stale = Vec::new();
        for entry in at_head.entries() {
            let path = entry.path(&at_head).to_str_lossy().into_owned();
            let new = entry.id;
            let old = on_disk
                .as_ref()
                .and_then(|i| i.entry_by_path(path.as_str().into()))
                .map(|e| e.id);
            if old == Some(new) || !ours(&path) {
                continue;
            }
            let target = self.work_dir.join(&path);
            let repair = match std::fs::symlink_metadata(&target) {
                // Missing: a file a landed commit added, or one the user deleted; HEAD has it.
                Err(_) => true,
                Ok(m) if !m.is_file() => false,
                Ok(_) => {
                    let data = std::fs::read(&target).map_err(io_err(&target))?;
                    let id = gix::objs::compute_hash(
                        self.repo.object_hash(),
                        gix::objs::Kind::Blob,
                        &data,
                    )
                    .map_err(GitError::git(format!("could not hash {path}")))?;
                    // Already HEAD's content (only the index lags), or still an earlier
                    // commit's content as the index says: left behind. Anything else, or a
                    // staged version no commit ever had, is the user's edit and stays.
                    id == new || (Some(id) == old && self.was_committed(head, &path, id, 100)?)
                }
            };
            if repair {
                stale.push(path);
            }
        }
        if !stale.is_empty() {
            let paths: Vec<&str> = stale.iter().map(String::as_str).collect();
            self.refuse_symlinks(Some(head), &paths)?;
            self.checkout_paths(stale.iter().map(String::as_str))?;
        }
        Ok(stale)
    }

    /// Whether `path` held blob `id` in one of the `depth` first-parent ancestors of `head`.
    fn was_committed(
        &self,
        head: ObjectId,
        path: &str,
        id: ObjectId,
        depth: usize,
    ) -> Result<bool, GitError> {
        let mut commit = head;
        for _ in 0..depth {
            let parent = self
                .repo
                .find_commit(commit)
                .map_err(GitError::git(format!("could not read commit {commit}")))?
                .parent_ids()
                .next()
                .map(|p| p.detach());
            let Some(parent) = parent else {
                return Ok(false);
            };
            let entry = self
                .tree_of(parent)?
                .lookup_entry_by_path(path)
                .map_err(GitError::git(format!(
                    "could not look up {path} at {parent}"
                )))?;
            if entry.is_some_and(|e| e.object_id() == id) {
                return Ok(true);
            }
            commit = parent;
        }
        Ok(false)
    }

    /// Remove the temporary files (`<file>.contracts-tmp-<pid>`) that writers which are no
    /// longer running left among the store's files, and the refs such writers fetched a
    /// remote's head into (`refs/contracts-sync/<pid>`). Returns the removed paths.
    pub fn remove_stale_temps(&self) -> Result<Vec<String>, GitError> {
        let mut removed = Vec::new();
        let mut dirs = vec![self.work_dir.clone()];
        while let Some(dir) = dirs.pop() {
            let Ok(read) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in read.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let rel = entry
                    .path()
                    .strip_prefix(&self.work_dir)
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if kind.is_dir() {
                    let top = rel.split('/').next().unwrap_or_default();
                    if STORE_PATHS.contains(&top) {
                        dirs.push(entry.path());
                    }
                    continue;
                }
                let Some((_, pid)) = name.rsplit_once(TEMP_SUFFIX) else {
                    continue;
                };
                let Ok(pid) = pid.parse::<u32>() else {
                    continue;
                };
                if kind.is_file() && !process_alive(pid) {
                    std::fs::remove_file(entry.path()).map_err(io_err(&entry.path()))?;
                    removed.push(rel);
                }
            }
        }
        // The refs a killed writer fetched a remote's head into (see `Repo::fetch`).
        let sync_refs = self.repo.git_dir().join(super::remote::SYNC_REFS);
        if let Ok(read) = std::fs::read_dir(&sync_refs) {
            for entry in read.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.parse::<u32>().is_ok_and(|pid| !process_alive(pid)) {
                    std::fs::remove_file(entry.path()).map_err(io_err(&entry.path()))?;
                    removed.push(format!("{}/{name}", super::remote::SYNC_REFS));
                }
            }
        }
        removed.sort();
        Ok(removed)
    }
}

/// Write `data` to `path` through a temporary file and a rename, so a reader never sees half a
/// file.
fn write_file(path: &Path, data: &[u8]) -> Result<(), GitError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!("{TEMP_SUFFIX}{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, data).map_err(io_err(&tmp))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_err(path)(e)
    })
}
