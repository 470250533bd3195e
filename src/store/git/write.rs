//! Writing ONE commit: objects first, then the branch moved with a compare-and-swap on the
//! parent the caller read, then the checkout.

use gix::bstr::BStr;
use gix::objs::tree::EntryKind;
use gix::refs::transaction::{PreviousValue, RefEdit};
use gix::refs::Target;
use gix::ObjectId;

use super::{check_path, Fault, GitError, Identity, Repo};

impl Repo {
    /// Write ONE commit that sets `files` (relative '/'-separated path → bytes) on top of
    /// `parent`, the HEAD the caller read (`None` only for the first commit), and return its id.
    ///
    /// Blobs, trees and the commit object are written first; then the branch HEAD points at
    /// is moved with a compare-and-swap on `parent`. If another writer got there first, or holds
    /// the ref's lock, the result is [`GitError::Moved`] and nothing visible changed. Only after
    /// the ref moved are the files written to the work tree and the index rebuilt, so that
    /// `git status` stays clean.
    pub fn commit_files(
        &self,
        parent: Option<ObjectId>,
        files: &[(String, Vec<u8>)],
        message: &str,
    ) -> Result<ObjectId, GitError> {
        let (commit, lag) = self.commit_files_lagging(parent, files, message)?;
        match lag {
            None => Ok(commit),
            Some(source) => Err(GitError::Checkout {
                commit,
                source: Box::new(source),
            }),
        }
    }

    /// Like [`Repo::commit_files`], but a commit that landed is a success even when the
    /// checkout that follows fails: the failure comes back beside the commit id, for the caller
    /// to warn about, and the next writer repairs the checkout ([`Repo::repair_checkout`]).
    ///
    /// Before anything is written, every path is checked for a symbolic link on the way
    /// ([`GitError::Symlink`]); a ref lock held by another writer is waited for with bounded
    /// backoff, and one left by a dead writer is reported as [`GitError::StaleLock`].
    pub fn commit_files_lagging(
        &self,
        parent: Option<ObjectId>,
        files: &[(String, Vec<u8>)],
        message: &str,
    ) -> Result<(ObjectId, Option<GitError>), GitError> {
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        let (commit, identity) = self.write_commit(parent, files, message)?;

        self.move_head_waiting(parent, commit, message, &identity)?;

        let lag = self.checkout_paths(paths.into_iter()).err();
        Ok((commit, lag))
    }

    /// Write the objects of ONE commit that sets `files` on top of `parent`, and return its
    /// id with the identity it was written as; no ref moves, nothing in the work tree changes.
    /// For a store shared through a remote, where the push is the compare-and-swap and the
    /// local branch follows it. Checks paths and symbolic links first, like
    /// [`Repo::commit_files`].
    pub fn write_commit(
        &self,
        parent: Option<ObjectId>,
        files: &[(String, Vec<u8>)],
        message: &str,
    ) -> Result<(ObjectId, Identity), GitError> {
        for (path, _) in files {
            check_path(path)?;
        }
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        self.refuse_symlinks(parent, &paths)?;
        let identity = self.identity()?;
        let commit = self.write_commit_objects(parent, files, message, &identity)?;
        match self.fault {
            Some(Fault::AfterObjects) => return Err(GitError::InjectedFault),
            Some(Fault::PauseBeforeRef(ms)) => {
                std::thread::sleep(std::time::Duration::from_millis(ms))
            }
            None => {}
        }
        Ok((commit, identity))
    }

    /// Blobs, trees and the commit object; no ref is touched.
    pub(super) fn write_commit_objects(
        &self,
        parent: Option<ObjectId>,
        files: &[(String, Vec<u8>)],
        message: &str,
        identity: &Identity,
    ) -> Result<ObjectId, GitError> {
        let base = match parent {
            Some(parent) => self.tree_of(parent)?.id,
            None => ObjectId::empty_tree(self.repo.object_hash()),
        };
        let mut editor = self
            .repo
            .edit_tree(base)
            .map_err(GitError::git("could not start editing the tree"))?;
        for (path, bytes) in files {
            let blob = self.repo.write_blob(bytes).map_err(GitError::git(format!(
                "could not write the blob for {path}"
            )))?;
            editor
                .upsert(path.as_str(), EntryKind::Blob, blob.detach())
                .map_err(GitError::git(format!("could not place {path} in the tree")))?;
        }
        let tree = editor
            .write()
            .map_err(GitError::git("could not write the tree"))?
            .detach();

        let mut message = message.to_string();
        if !message.ends_with('\n') {
            message.push('\n');
        }
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: identity.author.clone(),
            committer: identity.committer.clone(),
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        let id = self
            .repo
            .write_object(&commit)
            .map_err(GitError::git("could not write the commit object"))?;
        Ok(id.detach())
    }

    /// Move the branch HEAD points at (or HEAD itself when detached) from `parent` to `commit`.
    pub(super) fn move_head(
        &self,
        parent: Option<ObjectId>,
        commit: ObjectId,
        message: &str,
        identity: &Identity,
    ) -> Result<(), GitError> {
        let expected = match parent {
            Some(parent) => PreviousValue::MustExistAndMatch(Target::Object(parent)),
            None => PreviousValue::MustNotExist,
        };
        let summary = message.lines().next().unwrap_or_default();
        let reflog = gix::reference::log::message(
            if parent.is_some() {
                "commit"
            } else {
                "commit (initial)"
            },
            BStr::new(summary),
            usize::from(parent.is_some()),
        );
        let name = "HEAD".try_into().expect("HEAD is a valid reference name");
        let edit = RefEdit::update(name, commit, expected, reflog).with_deref(true);
        let mut time = gix::date::parse::TimeBuf::default();
        let committer = identity.committer.to_ref(&mut time);
        match self.repo.edit_references_as(Some(edit), Some(committer)) {
            Ok(_) => Ok(()),
            // A changed ref is a conflict: another writer committed first.
            Err(source) if source.is_conflict() => Err(GitError::Moved { source }),
            // A held lock: another writer is moving the store right now, or died doing it.
            Err(source) if source.is_retryable() => Err(GitError::Locked { source }),
            Err(source) => Err(GitError::Git {
                context: format!("could not move the branch to {commit}"),
                source,
            }),
        }
    }
}
