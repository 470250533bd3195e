//! The git layer of the store: open or create the repository, read files at a commit, write one
//! commit with a compare-and-swap on the branch ref, and walk the first-parent history with the
//! paths each commit changed.
//!
//! Everything goes through `gix`; no `git` executable is needed. The write path follows one rule
//! (SPEC §2): objects first, then the branch ref is moved with a compare-and-swap on the parent
//! the caller read, and only then are the work tree and index touched. A writer that crashes, or
//! that loses the race, therefore leaves the store exactly as it was apart from unreachable
//! objects, which `git gc` removes and nothing ever reads.

mod guard;
mod history;
mod remote;

use std::path::{Path, PathBuf};

use gix::bstr::{BStr, ByteSlice};
use gix::objs::tree::EntryKind;
use gix::refs::transaction::{PreviousValue, RefEdit};
use gix::refs::Target;

pub use gix::ObjectId;
pub(crate) use guard::jitter as jitter_ms;
pub use guard::{DEFAULT_LOCK_WAIT, LOCK_WAIT_ENV, TEMP_SUFFIX};
pub use history::{CommitChanges, PathChange, Person};
pub use remote::{Pushed, Remote};

/// Memory for delta bases decoded from packs, per repository handle.
const PACK_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// The environment variable that injects a failure into [`Repo::commit_files`], for tests.
pub const FAULT_ENV: &str = "CONTRACTS_FAULT";

/// Everything that can go wrong in the git layer. Each variant says whether it is the user's input
/// ([`GitError::is_input`]) or the environment (git, the file system, a concurrent writer).
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `init` found a repository already in place.
    #[error("{}: there is already a git repository here", path.display())]
    AlreadyExists { path: PathBuf },
    #[error("{}: could not create a git repository", path.display())]
    Init {
        path: PathBuf,
        #[source]
        source: gix::Error,
    },
    #[error("{}: not inside a git repository", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: gix::Error,
    },
    /// A store needs a work tree: its files are read and reviewed there.
    #[error("{}: the repository has no work tree (a bare repository cannot be a store)", path.display())]
    Bare { path: PathBuf },
    /// The compare-and-swap on the branch ref failed: another writer committed first, or held
    /// the ref's lock at that instant. Nothing was changed; reading again and retrying is safe.
    #[error("the store moved; run again")]
    Moved {
        #[source]
        source: gix::Error,
    },
    /// A lock file another writer should have removed long ago: it died holding it. Nothing
    /// was written.
    #[error(
        "{} is {age_secs} s old: a lock left by a git or contracts process that died (waited \
         {waited_ms} ms for it to go); nothing was written",
        path.display()
    )]
    StaleLock {
        path: PathBuf,
        age_secs: u64,
        waited_ms: u64,
    },
    /// A component of a path the store writes is a symbolic link: writing would follow it out
    /// of the store. Nothing was written.
    #[error(
        "`{link}` is a symbolic link ({}) on the way to {path}; the store never writes through \
         a link, and nothing was written",
        if *committed { "committed, git mode 120000" } else { "in the work tree" }
    )]
    Symlink {
        link: String,
        path: String,
        committed: bool,
    },
    /// The `git` executable, needed only to fetch from and push to a remote, is not there.
    #[error("`{command}` could not run: {source}; syncing with a remote needs the git executable")]
    NoGit {
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// Fetching or pushing failed for another reason than a moved remote branch.
    #[error("`{command}` failed: {stderr}")]
    Sync { command: String, stderr: String },
    /// The local branch has commits the remote lacks and the remote has commits the local
    /// branch lacks.
    #[error("the local branch ({local}) and {remote} have diverged; nothing was written")]
    Diverged { local: ObjectId, remote: String },
    /// The branch's lock was held at the instant of the compare-and-swap; waited for and
    /// retried inside the commit, so callers see it only as [`GitError::StaleLock`].
    #[error("the branch is locked by another writer")]
    Locked {
        #[source]
        source: gix::Error,
    },
    /// A revision the user named does not resolve to a commit.
    #[error("`{rev}` does not name a commit in this repository")]
    BadRev {
        rev: String,
        #[source]
        source: gix::Error,
    },
    /// A path that would leave the store, or that git cannot hold.
    #[error("`{path}` is not a valid path inside the store")]
    BadPath { path: String },
    /// Neither the environment nor git config says who is committing.
    #[error(
        "no git identity: the {missing} is not set; set GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, \
         GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL, or `git config user.name` and `user.email`"
    )]
    NoIdentity { missing: &'static str },
    #[error("{var}={value:?} is not a date git understands")]
    BadDate {
        var: &'static str,
        value: String,
        #[source]
        source: gix::Error,
    },
    /// `CONTRACTS_FAULT=after-objects`: the commit's objects were written, the ref was not moved.
    #[error(
        "injected fault ({FAULT_ENV}=after-objects): objects written, the branch was not moved"
    )]
    InjectedFault,
    /// `since` is not an ancestor of HEAD along first parents.
    #[error("commit {since} is not in the first-parent history of HEAD")]
    SinceNotInHistory { since: ObjectId },
    /// The commit landed (the ref moved) but writing the work tree or the index failed.
    #[error(
        "committed {commit}, but updating the work tree and index failed; \
         the commit is safe, the checkout lags behind it"
    )]
    Checkout {
        commit: ObjectId,
        #[source]
        source: Box<GitError>,
    },
    /// Reading or writing objects or refs failed: a broken repository, a missing object, I/O.
    #[error("git: {context}")]
    Git {
        context: String,
        #[source]
        source: gix::Error,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl GitError {
    /// What the user can do about it, where there is something to say.
    pub fn hint(&self) -> Option<String> {
        match self {
            GitError::StaleLock { path, .. } => Some(format!(
                "make sure no git or contracts command is still running on this store (a live \
                 one holds a lock for milliseconds), then remove the lock: rm '{}'",
                path.display()
            )),
            GitError::Symlink {
                link, committed, ..
            } => {
                Some(if *committed {
                    format!("replace the link with a real directory or file: git rm '{link}' and commit")
                } else {
                    format!("remove the link from the work tree (rm '{link}') and run `git checkout -- .`")
                })
            }
            GitError::NoGit { .. } => Some(
                "install git, or run with --no-sync to write to this checkout only".to_string(),
            ),
            GitError::Diverged { .. } => Some(
                "reconcile by hand (git pull --rebase, then git push), then run again".to_string(),
            ),
            GitError::Moved { .. } => {
                Some("another writer committed first; nothing was written".to_string())
            }
            _ => None,
        }
    }

    /// True for errors caused by what the user typed or configured (exit 2 in the CLI); every
    /// other variant is an environment failure (exit 3), including [`GitError::Moved`] and
    /// [`GitError::InjectedFault`].
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            GitError::BadRev { .. }
                | GitError::BadPath { .. }
                | GitError::NoIdentity { .. }
                | GitError::BadDate { .. }
                | GitError::AlreadyExists { .. }
                | GitError::Symlink { .. }
        )
    }

    fn git(context: impl Into<String>) -> impl FnOnce(gix::Error) -> GitError {
        let context = context.into();
        move |source| GitError::Git { context, source }
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> GitError + '_ {
    move |source| GitError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Who writes a commit: author and committer, each with its time.
#[derive(Debug, Clone)]
pub struct Identity {
    pub author: gix::actor::Signature,
    pub committer: gix::actor::Signature,
}

/// A failure to inject into [`Repo::commit_files`], so tests can prove crash safety.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Fail after every object of the commit is written, before the branch moves.
    AfterObjects,
}

impl Fault {
    /// The fault named by `CONTRACTS_FAULT`; unset or unknown values inject nothing.
    pub fn from_env() -> Option<Fault> {
        Fault::parse(std::env::var(FAULT_ENV).ok().as_deref())
    }

    fn parse(value: Option<&str>) -> Option<Fault> {
        match value {
            Some("after-objects") => Some(Fault::AfterObjects),
            _ => None,
        }
    }
}

/// One entry of a tree: a file or a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub name: String,
    pub id: ObjectId,
    pub is_dir: bool,
    /// A symbolic link (git mode 120000): readers treat it as absent, writers refuse it.
    pub is_link: bool,
}

/// A git repository with a work tree: the store.
pub struct Repo {
    repo: gix::Repository,
    work_dir: PathBuf,
    fault: Option<Fault>,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo")
            .field("work_dir", &self.work_dir)
            .finish()
    }
}

impl Repo {
    /// Create a repository at `dir` (like `git init`; no commit yet). The directory may hold
    /// files already; a repository already in it is an error.
    pub fn init(dir: &Path) -> Result<Repo, GitError> {
        if dir.join(".git").exists() {
            return Err(GitError::AlreadyExists {
                path: dir.to_path_buf(),
            });
        }
        let options = gix::create::Options {
            destination_must_be_empty: Some(false),
            ..Default::default()
        };
        let open_options = gix::open::Options::default();
        let repo = gix::ThreadSafeRepository::init_opts(
            dir,
            gix::create::Kind::WithWorktree,
            options,
            open_options,
        )
        .map_err(|source| GitError::Init {
            path: dir.to_path_buf(),
            source,
        })?;
        Repo::from_gix(repo.to_thread_local(), dir)
    }

    /// Open the repository whose work tree contains `dir` (searching upward from `dir`).
    pub fn open(dir: &Path) -> Result<Repo, GitError> {
        let repo = gix::discover(dir).map_err(|source| GitError::Open {
            path: dir.to_path_buf(),
            source,
        })?;
        Repo::from_gix(repo, dir)
    }

    fn from_gix(mut repo: gix::Repository, dir: &Path) -> Result<Repo, GitError> {
        // Without a cache of delta bases, every object read from a pack re-applies its whole
        // delta chain; history walks read thousands of trees that are deltas of each other.
        repo.objects.set_pack_cache(|| {
            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                PACK_CACHE_BYTES,
            ))
        });
        let work_dir = repo
            .workdir()
            .ok_or_else(|| GitError::Bare {
                path: dir.to_path_buf(),
            })?
            .to_path_buf();
        // gix hands out the work tree as it found it; an absolute path keeps later joins
        // independent of the process's current directory.
        let work_dir = if work_dir.is_absolute() {
            work_dir
        } else {
            std::path::absolute(&work_dir).map_err(io_err(&work_dir))?
        };
        Ok(Repo {
            repo,
            work_dir,
            fault: Fault::from_env(),
        })
    }

    /// Replace the fault read from `CONTRACTS_FAULT` when the repository was opened. For tests,
    /// which share one process environment and so cannot set the variable per test.
    #[doc(hidden)]
    pub fn inject_fault(&mut self, fault: Option<Fault>) {
        self.fault = fault;
    }

    /// The root of the work tree.
    pub fn work_dir(&self) -> &Path {
        &self.work_dir
    }

    /// The underlying gix repository, for readers that need more than this layer offers.
    pub fn gix(&self) -> &gix::Repository {
        &self.repo
    }

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

    /// The root tree of `commit`.
    fn tree_of(&self, commit: ObjectId) -> Result<gix::Tree<'_>, GitError> {
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
        let dir = dir.trim_end_matches('/');
        let tree = self.tree_of(commit)?;
        let tree = if dir.is_empty() {
            tree
        } else {
            check_path(dir)?;
            let entry = tree
                .lookup_entry_by_path(dir)
                .map_err(GitError::git(format!(
                    "could not look up {dir} at {commit}"
                )))?;
            match entry {
                Some(entry) if entry.mode().is_tree() => entry
                    .object()
                    .map_err(GitError::git(format!("could not read {dir} at {commit}")))?
                    .into_tree(),
                _ => return Ok(Vec::new()),
            }
        };
        let decoded = tree
            .decode()
            .map_err(GitError::git(format!("could not decode {dir} at {commit}")))?;
        Ok(decoded
            .entries
            .iter()
            .map(|e| (e.filename.to_str_lossy().into_owned(), e.mode.is_tree()))
            .collect())
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
        check_path(dir)?;
        let entry = root
            .lookup_entry_by_path(dir)
            .map_err(GitError::git(format!(
                "could not look up {dir} at {commit}"
            )))?;
        match entry {
            Some(entry) if entry.mode().is_tree() => self.tree_entries(entry.object_id()),
            _ => Ok(Vec::new()),
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

    /// Author and committer for a new commit: `GIT_AUTHOR_NAME`/`GIT_AUTHOR_EMAIL`/
    /// `GIT_AUTHOR_DATE` (and the `GIT_COMMITTER_*` trio) from the environment, else
    /// `author.*`/`committer.*`, else `user.name`/`user.email` from git config; the time is now
    /// unless a `*_DATE` variable says otherwise.
    pub fn identity(&self) -> Result<Identity, GitError> {
        self.identity_with_env(&|var| std::env::var(var).ok())
    }

    fn identity_with_env(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Identity, GitError> {
        resolve_identity(env, &|key| {
            self.repo
                .config_snapshot()
                .string(key)
                .map(|v| v.to_str_lossy().into_owned())
        })
    }

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
        let (commit, identity) = self.write_commit_with(parent, files, message)?;

        let locks = self.ref_locks();
        loop {
            self.wait_for_locks(&locks)?;
            match self.move_head(parent, commit, message, &identity) {
                Err(GitError::Locked { .. }) => continue,
                other => other?,
            }
            break;
        }

        let lag = self.checkout_paths(paths.into_iter()).err();
        Ok((commit, lag))
    }

    /// Write the objects of ONE commit that sets `files` on top of `parent`, and return its
    /// id; no ref moves, nothing in the work tree changes. For a store shared through a remote,
    /// where the push is the compare-and-swap and the local branch follows it. Checks paths and
    /// symbolic links first, like [`Repo::commit_files`].
    pub fn write_commit(
        &self,
        parent: Option<ObjectId>,
        files: &[(String, Vec<u8>)],
        message: &str,
    ) -> Result<ObjectId, GitError> {
        Ok(self.write_commit_with(parent, files, message)?.0)
    }

    fn write_commit_with(
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
        if self.fault == Some(Fault::AfterObjects) {
            return Err(GitError::InjectedFault);
        }
        Ok((commit, identity))
    }

    /// Blobs, trees and the commit object; no ref is touched.
    fn write_commit_objects(
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
    fn move_head(
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

    /// Bring `paths` in the work tree and the whole index in line with the current HEAD.
    ///
    /// This runs under the index lock and reads HEAD afresh rather than using the commit just
    /// made: when writers race, the last one to hold the lock then writes what the final HEAD
    /// says, so the checkout converges on HEAD whatever the order.
    fn checkout_paths<'a>(&self, paths: impl Iterator<Item = &'a str>) -> Result<(), GitError> {
        let index_path = self.repo.index_path();
        let mut index_lock = index_path.as_os_str().to_owned();
        index_lock.push(".lock");
        let index_lock = PathBuf::from(index_lock);
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

        let mut index = self
            .repo
            .index_from_tree(&tree.id)
            .map_err(GitError::git(format!(
                "could not build the index for {head}"
            )))?;
        // Keep the stat data of entries that did not change, so git need not re-hash the whole
        // work tree; entries we just wrote get fresh stat data; anything else is left for git
        // to verify by content.
        let old = if index_path.exists() {
            Some(
                gix::index::File::at(
                    &index_path,
                    self.repo.object_hash(),
                    false,
                    Default::default(),
                )
                .map_err(GitError::git("could not read the index"))?,
            )
        } else {
            None
        };
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
            Some(head) => history::walk(&self.repo, head, since, prefixes),
        }
    }
}

/// Write `data` to `path` through a temporary file and a rename, so a reader never sees half a
/// file.
fn write_file(path: &Path, data: &[u8]) -> Result<(), GitError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".contracts-tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, data).map_err(io_err(&tmp))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_err(path)(e)
    })
}

/// A path git can hold and that stays inside the work tree: relative, '/'-separated, no empty,
/// `.` or `..` component, nothing under `.git`.
fn check_path(path: &str) -> Result<(), GitError> {
    let bad = || GitError::BadPath {
        path: path.to_string(),
    };
    if path.is_empty() || path.contains('\\') || path.contains('\0') {
        return Err(bad());
    }
    for component in path.split('/') {
        if component.is_empty()
            || component == "."
            || component == ".."
            || component.eq_ignore_ascii_case(".git")
        {
            return Err(bad());
        }
    }
    Ok(())
}

/// Resolve author and committer from `env` (an environment lookup) and `config` (a git config
/// lookup by key). Split from [`Repo::identity`] so tests can pass a fixed environment.
pub(crate) fn resolve_identity(
    env: &dyn Fn(&str) -> Option<String>,
    config: &dyn Fn(&str) -> Option<String>,
) -> Result<Identity, GitError> {
    let nonempty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    let pick = |var: &str, key: &str, fallback: &str, missing: &'static str| {
        nonempty(env(var))
            .or_else(|| nonempty(config(key)))
            .or_else(|| nonempty(config(fallback)))
            .ok_or(GitError::NoIdentity { missing })
    };
    let time = |var: &'static str| -> Result<gix::date::Time, GitError> {
        match nonempty(env(var)) {
            None => Ok(gix::date::Time::now_local_or_utc()),
            Some(value) => gix::date::parse(&value, None).map_err(|source| GitError::BadDate {
                var,
                value,
                source,
            }),
        }
    };
    let author = gix::actor::Signature {
        name: pick("GIT_AUTHOR_NAME", "author.name", "user.name", "author name")?.into(),
        email: pick(
            "GIT_AUTHOR_EMAIL",
            "author.email",
            "user.email",
            "author email",
        )?
        .into(),
        time: time("GIT_AUTHOR_DATE")?,
    };
    let committer = gix::actor::Signature {
        name: pick(
            "GIT_COMMITTER_NAME",
            "committer.name",
            "user.name",
            "committer name",
        )?
        .into(),
        email: pick(
            "GIT_COMMITTER_EMAIL",
            "committer.email",
            "user.email",
            "committer email",
        )?
        .into(),
        time: time("GIT_COMMITTER_DATE")?,
    };
    Ok(Identity { author, committer })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn identity_from_env_wins_over_config() {
        let env = lookup(&[
            ("GIT_AUTHOR_NAME", "Ada"),
            ("GIT_AUTHOR_EMAIL", "ada@example.org"),
            ("GIT_AUTHOR_DATE", "1700000000 +0100"),
            ("GIT_COMMITTER_NAME", "Bot"),
            ("GIT_COMMITTER_EMAIL", "bot@example.org"),
            ("GIT_COMMITTER_DATE", "2026-11-29T17:00:00Z"),
        ]);
        let config = lookup(&[("user.name", "Config"), ("user.email", "c@example.org")]);
        let id = resolve_identity(&env, &config).unwrap();
        assert_eq!(id.author.name, "Ada");
        assert_eq!(id.author.email, "ada@example.org");
        assert_eq!(id.author.time.seconds, 1_700_000_000);
        assert_eq!(id.author.time.offset, 3600);
        assert_eq!(id.committer.name, "Bot");
        assert_eq!(id.committer.email, "bot@example.org");
        assert_eq!(id.committer.time.seconds, 1_795_971_600);
    }

    #[test]
    fn identity_falls_back_to_config() {
        let env = lookup(&[]);
        let config = lookup(&[
            ("user.name", "Config"),
            ("user.email", "c@example.org"),
            ("committer.name", "Committer"),
        ]);
        let id = resolve_identity(&env, &config).unwrap();
        assert_eq!(id.author.name, "Config");
        assert_eq!(id.author.email, "c@example.org");
        assert_eq!(id.committer.name, "Committer");
        assert_eq!(id.committer.email, "c@example.org");
    }

    #[test]
    fn no_identity_names_what_is_missing() {
        let err = resolve_identity(&lookup(&[]), &lookup(&[])).unwrap_err();
        assert!(
            matches!(
                err,
                GitError::NoIdentity {
                    missing: "author name"
                }
            ),
            "{err}"
        );
        let err = resolve_identity(
            &lookup(&[("GIT_AUTHOR_NAME", "Ada")]),
            &lookup(&[("user.name", "Ada")]),
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                GitError::NoIdentity {
                    missing: "author email"
                }
            ),
            "{err}"
        );
        assert!(err.is_input());
        assert!(err.to_string().contains("GIT_AUTHOR_NAME"));
    }

    #[test]
    fn a_bad_date_is_refused() {
        let env = lookup(&[
            ("GIT_AUTHOR_NAME", "Ada"),
            ("GIT_AUTHOR_EMAIL", "ada@example.org"),
            ("GIT_AUTHOR_DATE", "the day after tomorrow-ish"),
        ]);
        let err = resolve_identity(&env, &lookup(&[])).unwrap_err();
        assert!(
            matches!(
                err,
                GitError::BadDate {
                    var: "GIT_AUTHOR_DATE",
                    ..
                }
            ),
            "{err}"
        );
    }

    /// Two writers race: W1 moves the ref first but reaches the index lock last. Its checkout
    /// must then write what HEAD (W2's commit) says, not its own older commit.
    #[test]
    fn a_late_checkout_converges_on_head() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repo::init(dir.path()).unwrap();
        let env = lookup(&[
            ("GIT_AUTHOR_NAME", "Ada"),
            ("GIT_AUTHOR_EMAIL", "ada@example.org"),
            ("GIT_COMMITTER_NAME", "Ada"),
            ("GIT_COMMITTER_EMAIL", "ada@example.org"),
        ]);
        let who = resolve_identity(&env, &lookup(&[])).unwrap();
        let file = |p: &str, c: &str| vec![(p.to_string(), c.as_bytes().to_vec())];

        let c0 = repo
            .write_commit_objects(None, &file("h.toml", "0\n"), "c0", &who)
            .unwrap();
        repo.move_head(None, c0, "c0", &who).unwrap();
        repo.checkout_paths(["h.toml"].into_iter()).unwrap();

        // W1 commits and moves the ref, then stalls before its checkout.
        let c1 = repo
            .write_commit_objects(Some(c0), &file("h.toml", "0\n1\n"), "c1", &who)
            .unwrap();
        repo.move_head(Some(c0), c1, "c1", &who).unwrap();
        // W2 commits on top and checks out.
        let c2 = repo
            .write_commit_objects(Some(c1), &file("h.toml", "0\n1\n2\n"), "c2", &who)
            .unwrap();
        repo.move_head(Some(c1), c2, "c2", &who).unwrap();
        repo.checkout_paths(["h.toml"].into_iter()).unwrap();
        // W1 resumes.
        repo.checkout_paths(["h.toml"].into_iter()).unwrap();

        let path = dir.path().join("h.toml");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "0\n1\n2\n");
        let index = repo.repo.open_index().unwrap();
        let entry = index.entry_by_path("h.toml".into()).unwrap();
        assert_eq!(
            entry.id,
            repo.tree_of(c2)
                .unwrap()
                .lookup_entry_by_path("h.toml")
                .unwrap()
                .unwrap()
                .object_id()
        );
    }

    #[test]
    fn identity_from_the_repository_config() {
        let dir = tempfile::tempdir().unwrap();
        Repo::init(dir.path()).unwrap();
        let config = dir.path().join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str("[user]\n\tname = Repo User\n\temail = repo@example.org\n");
        std::fs::write(&config, text).unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        let id = repo.identity_with_env(&|_| None).unwrap();
        assert_eq!(id.author.name, "Repo User");
        assert_eq!(id.committer.email, "repo@example.org");
    }

    #[test]
    fn fault_names() {
        assert_eq!(
            Fault::parse(Some("after-objects")),
            Some(Fault::AfterObjects)
        );
        assert_eq!(Fault::parse(Some("")), None);
        assert_eq!(Fault::parse(None), None);
    }

    #[test]
    fn paths_that_leave_the_store_are_refused() {
        for bad in [
            "",
            "/etc/passwd",
            "a/../b",
            "../x",
            "a//b",
            "./a",
            "a/",
            ".git/config",
            "a/.GIT/x",
            "a\\b",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?} accepted");
        }
        for good in [
            "contracts.toml",
            "contracts/roads/2.0.0.toml",
            "history/roads.toml",
        ] {
            assert!(check_path(good).is_ok(), "{good:?} refused");
        }
    }
}
