//! Two states of one store, for `review`: the store as it was at another commit, the commit a
//! pull request branched from (the merge base with the default branch), and the files below a
//! folder at a commit, by blob, so that what changed between two commits is a comparison of ids.

use super::{GitError, ObjectId, Repo, Store, StoreError};

/// The names tried, in order, for the default branch when `review` is given no base: the
/// remote's HEAD (what `git clone` sets), then the two usual names. No network is asked.
pub const DEFAULT_BRANCHES: [&str; 3] = ["origin/HEAD", "main", "master"];

impl Store {
    /// The store as committed at `commit`; `None` when `contracts.toml` was not committed
    /// there yet (a base from before the store existed, against which everything is new).
    pub fn at(&self, commit: ObjectId) -> Result<Option<Store>, StoreError> {
        match Store::from_repo(Repo::open(self.root())?, Some(commit)) {
            Ok(s) => Ok(Some(s)),
            Err(StoreError::NotAStore { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The commit `rev` names (a branch, a tag, a commit id, `HEAD~2`, …).
    pub fn resolve(&self, rev: &str) -> Result<ObjectId, StoreError> {
        Ok(self.repo.resolve(rev)?)
    }

    /// The default branch and its commit: the first of [`DEFAULT_BRANCHES`] that names one.
    pub fn default_branch(&self) -> Result<(String, ObjectId), StoreError> {
        for name in DEFAULT_BRANCHES {
            if let Ok(id) = self.repo.resolve(name) {
                return Ok((name.to_string(), id));
            }
        }
        Err(GitError::NoDefaultBranch {
            tried: DEFAULT_BRANCHES.iter().map(|n| format!("`{n}`")).collect(),
        }
        .into())
    }

    /// The best common ancestor of HEAD and `other` (named `name` in the error).
    pub fn merge_base_with(&self, other: ObjectId, name: &str) -> Result<ObjectId, StoreError> {
        self.repo.merge_base(self.head, other)?.ok_or_else(|| {
            GitError::NoMergeBase {
                base: name.to_string(),
            }
            .into()
        })
    }

    /// Every file below `dir` at `commit`, as (path, blob id), sorted by path.
    pub fn files_below(
        &self,
        commit: ObjectId,
        dir: &str,
    ) -> Result<Vec<(String, ObjectId)>, StoreError> {
        Ok(self.repo.files_below(commit, dir)?)
    }
}
