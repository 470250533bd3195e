//! Reading the store at a commit: HEAD, revisions, files, directory listings, blobs, and the
//! first-parent history.

use gix::bstr::ByteSlice;
use gix::ObjectId;

use super::{check_path, walk, CommitChanges, GitError, Repo, TreeEntry};

impl Repo {
    /// The commit HEAD points at, or `None` on an unborn branch (a store with no commit yet).
    pub fn head(&self) -> Result<Option<ObjectId>, GitError> {
        let head = self
            .repo
            .head()
            .map_err(GitError::git("could not read HEAD"))?;
        let id = head
            .try_into_peeled_id()
            .map_err(GitError::git("could not resolve HEAD to a commit"))?;
        Ok(id.map(|id| id.detach()))
    }

    /// Resolve a revision (a commit id or prefix, a branch, `HEAD~2`, …) to a commit id.
    pub fn resolve(&self, rev: &str) -> Result<ObjectId, GitError> {
        let bad = |source| GitError::BadRev {
            rev: rev.to_string(),
            source,
        };
        let id = self.repo.rev_parse_single(rev).map_err(bad)?;
        let commit = id.object().map_err(bad)?.peel_to_commit().map_err(bad)?;
        Ok(commit.id)
    }

    /// The best common ancestor of commits `a` and `b`, if they share one.
    pub fn merge_base(&self, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>, GitError> {
        let base = self.repo.merge_base(a, b).map_err(GitError::git(format!(
            "could not find the merge base of {a} and {b}"
        )))?;
        Ok(base.map(|id| id.detach()))
    }

    /// Every file below directory `dir` at `commit`, at any depth, as (path from the root,
    /// blob id), in git's order; empty if there is no such directory.
    pub fn files_below(
        &self,
        commit: ObjectId,
        dir: &str,
    ) -> Result<Vec<(String, ObjectId)>, GitError> {
        let dir = dir.trim_end_matches('/');
        let mut out = Vec::new();
        let mut todo = vec![(dir.to_string(), self.tree_entries_at(commit, dir)?)];
        while let Some((at, entries)) = todo.pop() {
            for e in entries {
                let path = if at.is_empty() {
                    e.name.clone()
                } else {
                    format!("{at}/{}", e.name)
                };
                if e.is_dir {
                    todo.push((path, self.tree_entries(e.id)?));
                } else if e.is_blob {
                    out.push((path, e.id));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// The root tree of `commit`.
    pub(super) fn tree_of(&self, commit: ObjectId) -> Result<gix::Tree<'_>, GitError> {
        let context = || format!("could not read the tree of commit {commit}");
        let commit = self
            .repo
            .find_commit(commit)
            .map_err(GitError::git(context()))?;
        commit.tree().map_err(GitError::git(context()))
    }

    /// A file's bytes at `commit`, or `None` if no file is at `path` there.
    pub fn read_at(&self, commit: ObjectId, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        check_path(path)?;
        let tree = self.tree_of(commit)?;
        let entry = tree
            .lookup_entry_by_path(path)
            .map_err(GitError::git(format!(
                "could not look up {path} at {commit}"
            )))?;
        match entry {
            Some(entry) if entry.mode().is_blob() => {
                let blob = entry
                    .object()
                    .map_err(GitError::git(format!("could not read {path} at {commit}")))?;
                Ok(Some(blob.detach().data))
            }
            _ => Ok(None),
        }
    }

    /// The names (not paths) of the entries of directory `dir` at `commit`, files and
    /// subdirectories alike, in git's order; empty if there is no such directory. `""` lists the
    /// root.
    pub fn list_at(&self, commit: ObjectId, dir: &str) -> Result<Vec<String>, GitError> {
        Ok(self
            .entries_at(commit, dir)?
            .into_iter()
            .map(|(name, _)| name)
            .collect())
    }

    /// Like [`Repo::list_at`], with whether each entry is a directory.
    pub fn entries_at(&self, commit: ObjectId, dir: &str) -> Result<Vec<(String, bool)>, GitError> {
        let entries = self.tree_entries_at(commit, dir)?;
        Ok(entries.into_iter().map(|e| (e.name, e.is_dir)).collect())
    }

    /// The entries of directory `dir` at `commit` with their object ids; empty if there is no
    /// such directory. For readers that visit many files of one directory: looking each up by
    /// path would decode the directory's tree again for every file.
    pub fn tree_entries_at(&self, commit: ObjectId, dir: &str) -> Result<Vec<TreeEntry>, GitError> {
        let dir = dir.trim_end_matches('/');
        let root = self.tree_of(commit)?;
        if dir.is_empty() {
            return self.tree_entries(root.id);
        }
        match subdir(&root, dir, commit)? {
            Some(entry) => self.tree_entries(entry.object_id()),
            None => Ok(Vec::new()),
        }
    }

    /// The entries of tree `id`.
    pub fn tree_entries(&self, id: ObjectId) -> Result<Vec<TreeEntry>, GitError> {
        let tree = self
            .repo
            .find_tree(id)
            .map_err(GitError::git(format!("could not read tree {id}")))?;
        let decoded = tree
            .decode()
            .map_err(GitError::git(format!("could not decode tree {id}")))?;
        Ok(decoded
            .entries
            .iter()
            .map(|e| TreeEntry {
                name: e.filename.to_str_lossy().into_owned(),
                id: e.oid.to_owned(),
                is_dir: e.mode.is_tree(),
                is_link: e.mode.is_link(),
                is_blob: e.mode.is_blob(),
            })
            .collect())
    }

    /// The bytes of blob `id`.
    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>, GitError> {
        let blob = self
            .repo
            .find_blob(id)
            .map_err(GitError::git(format!("could not read blob {id}")))?;
        Ok(blob.detach().data)
    }

    /// How many deltas stand between blob `id` and a whole object in its pack (0 for a loose or
    /// whole object, or when the header cannot be read). Readers of many versions of one file
    /// start from the shallow end, so each version read is the delta base of the next.
    pub fn delta_depth(&self, id: ObjectId) -> u32 {
        use gix::odb::Header;
        self.repo
            .objects
            .try_header(&id)
            .ok()
            .flatten()
            .and_then(|h| h.num_deltas())
            .unwrap_or(0)
    }

    /// First-parent history from HEAD back to, not including, `since` (or the root commit),
    /// oldest first, each commit with the blobs it changed under `prefixes` (all paths if
    /// `prefixes` is empty).
    pub fn history(
        &self,
        since: Option<ObjectId>,
        prefixes: &[&str],
    ) -> Result<Vec<CommitChanges>, GitError> {
        match self.head()? {
            None => Ok(Vec::new()),
            Some(head) => walk::walk(&self.repo, head, since, prefixes),
        }
    }
}

/// The entry of directory `dir` (checked first) in `root`, the tree of `commit`; `None` when
/// nothing is at `dir` there or what is there is not a directory.
fn subdir<'repo>(
    root: &gix::Tree<'repo>,
    dir: &str,
    commit: ObjectId,
) -> Result<Option<gix::object::tree::Entry<'repo>>, GitError> {
    check_path(dir)?;
    let entry = root
        .lookup_entry_by_path(dir)
        .map_err(GitError::git(format!(
            "could not look up {dir} at {commit}"
        )))?;
    Ok(entry.filter(|e| e.mode().is_tree()))
}
