//! Everything that can go wrong in the git layer, each variant classified as the user's input or
//! the environment, with a hint where there is something to do.

use std::path::{Path, PathBuf};

use gix::ObjectId;

/// The environment variable that injects a failure into `Repo::commit_files`, for tests.
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
    /// No repository in `path` or any folder above it: the user ran the tool in the wrong
    /// place, which is input, not a fault of git.
    #[error("{}: not inside a git repository, so not inside a store", path.display())]
    NoRepository { path: PathBuf },
    #[error("{}: could not open the git repository", path.display())]
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
    /// A lock file older than the wait that something of this host may still hold (a `git`
    /// or `contracts` process works in the store), or that this host cannot tell about (no
    /// `/proc`). A lock nothing holds is removed instead ([`super::dead_locks`]). Nothing was
    /// written.
    #[error(
        "{} is {age_secs} s old and may still be held: a git or contracts process of this host \
         works in this store, or this host cannot tell (waited {waited_ms} ms for it to go); \
         nothing was written",
        path.display()
    )]
    StaleLock {
        path: PathBuf,
        age_secs: u64,
        waited_ms: u64,
    },
    /// Other writers of this checkout held the writers' lock (on the git directory) for the
    /// whole wait.
    #[error(
        "other contracts writers of {} kept the store for {waited_secs} s; nothing was written",
        path.display()
    )]
    Busy { path: PathBuf, waited_secs: u64 },
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
    /// `review` without `--base`: none of the branches that name a default branch exists.
    #[error("no default branch to review against: none of {} names a commit", tried.join(", "))]
    NoDefaultBranch { tried: Vec<String> },
    /// `review`: HEAD and the base share no commit (unrelated histories).
    #[error("HEAD and `{base}` have no common ancestor")]
    NoMergeBase { base: String },
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
                "find the git or contracts command still running on this store (ps -ef | grep \
                 -e git -e contracts); if it is stuck, end it and run again: the next writer \
                 removes a lock nothing holds. Only if no such process exists (a lock of \
                 another host on a shared file system): rm '{}'",
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
            GitError::NoDefaultBranch { .. } | GitError::NoMergeBase { .. } => {
                Some("name the commit to compare with: --base REF".to_string())
            }
            GitError::Busy { .. } => Some(
                "another contracts command is writing to this store (a hung one keeps the lock \
                 until it exits); run again when it is done"
                    .to_string(),
            ),
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
    /// [`GitError::InjectedFault`]. Every variant is named, so that a new one is decided here.
    pub fn is_input(&self) -> bool {
        use GitError as E;
        match self {
            E::BadRev { .. } | E::BadPath { .. } | E::NoIdentity { .. } | E::BadDate { .. } => true,
            E::NoDefaultBranch { .. } | E::NoMergeBase { .. } => true,
            E::AlreadyExists { .. } | E::NoRepository { .. } | E::Symlink { .. } => true,
            E::Init { .. } | E::Open { .. } | E::Bare { .. } | E::NoGit { .. } => false,
            E::Moved { .. } | E::StaleLock { .. } | E::Busy { .. } | E::Locked { .. } => false,
            E::Sync { .. } | E::Diverged { .. } | E::SinceNotInHistory { .. } => false,
            E::InjectedFault | E::Checkout { .. } | E::Git { .. } | E::Io { .. } => false,
        }
    }

    pub(super) fn git(context: impl Into<String>) -> impl FnOnce(gix::Error) -> GitError {
        let context = context.into();
        move |source| GitError::Git { context, source }
    }
}

pub(super) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> GitError + '_ {
    move |source| GitError::Io {
        path: path.to_path_buf(),
        source,
    }
}
