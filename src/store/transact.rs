//! The one way the store is written: [`Store::transact`] reads HEAD, lets the caller check its
//! rules there and build its change, commits it with a compare-and-swap, and when another
//! writer got there first does it all again on the new HEAD, a bounded number of times. With a
//! remote, it fetches and fast-forwards before and pushes after, and a rejected push is handled
//! the same way as a moved branch. Every writer (propose, sunset, validate --record, the
//! notification ledger) goes through here, so the retry behaviour lives in one place.

use std::path::Path;
use std::time::Duration;

use gix::ObjectId;

use super::git::{Pushed, Remote, Repo};
use super::{GitError, Store, StoreError};
use crate::retry::Pauses;

/// How many times a writer builds and commits its change before it gives up with "the store
/// moved".
pub const ATTEMPTS: usize = 10;

/// A change to commit: files (path → full new content) and the commit message.
#[derive(Debug, Clone)]
pub struct Edit {
    pub files: Vec<(String, Vec<u8>)>,
    pub message: String,
}

impl Edit {
    /// A change to one file: the append of a ledger or a history, most often.
    pub fn one(path: String, content: Vec<u8>, message: String) -> Edit {
        Edit {
            files: vec![(path, content)],
            message,
        }
    }
}

/// What the caller's step decided at one HEAD.
pub enum Step<T> {
    /// Commit this change; `T` is what the caller reports.
    Commit(Edit, T),
    /// Nothing to write (a refusal, nothing to do): stop here.
    Nothing(T),
}

/// The outcome of [`Store::transact`]: the caller's value from the attempt that ended it, the
/// commit (if one was made), and the store at the HEAD that attempt read.
pub struct Transacted<T> {
    pub value: T,
    pub commit: Option<ObjectId>,
    pub store: Store,
}

/// Whether a writer syncs with a remote.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Sync {
    /// As `[store] remote` says (no remote when it is unset).
    #[default]
    Config,
    /// Never (`--no-sync`): write to this checkout only.
    Off,
    /// With this remote, whatever the config says (`--remote NAME`).
    Remote(String),
}

/// Where a writer says what it did on its own (retries, repairs, a lagging checkout, a push
/// of earlier commits): the library never prints, the CLI hands a sink that words each
/// [`WriterNote`] and talks on stderr (silenced by `--quiet`), as
/// [`ReadNotes`](crate::release::ReadNotes) carries a reader's warnings out.
pub type Notices = std::sync::Arc<dyn Fn(&WriterNote) + Send + std::marker::Sync>;

/// What a writer did on its own, or could not do, on the way to its commit.
#[derive(Debug)]
pub enum WriterNote {
    /// A repair of what a dead writer left behind, and the files it touched.
    Tidied { what: Tidy, paths: Vec<String> },
    /// A repair that failed; the commit does not depend on it.
    TidyFailed { what: Tidy, error: GitError },
    /// The commit is made, but the work tree and index could not follow it.
    Lagging { commit: ObjectId, error: GitError },
    /// This checkout's earlier commits were pushed to the remote (`name/branch`) first.
    PushedEarlier { remote: String },
    /// Another writer moved the store: attempt `attempt` of `attempts` starts again.
    Moved { attempt: usize, attempts: usize },
}

/// The repairs a writer makes before it builds on a checkout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tidy {
    /// Git lock files a writer that died left.
    DeadLocks,
    /// Files of the checkout behind HEAD.
    Checkout,
    /// Temporary files a writer that died left.
    StaleTemps,
}

/// Say `note` through `notices`, if there are any.
fn say(notices: Option<&Notices>, note: &WriterNote) {
    if let Some(n) = notices {
        n(note);
    }
}

impl Store {
    /// Open the store for writing: repair a checkout a killed writer left behind HEAD, remove
    /// its temporary files, and with a remote (per `sync`) fetch and fast-forward, so the writer
    /// builds on the newest shared HEAD. A failed repair is a warning, not an error: the commit
    /// itself does not depend on the work tree.
    pub fn open_writer(dir: &Path, sync: &Sync, notices: Notices) -> Result<Store, StoreError> {
        let repo = Repo::open(dir)?;
        // Writers of one checkout queue here, so they never race each other; what is left to
        // race is other programs (git itself) and, with a remote, other hosts.
        let lock = repo.lock_writers()?;
        tidy(&repo, &notices);
        let mut store = Store::from_repo(repo, None)?;
        store.writers_lock = Some(lock);
        store.notices = Some(notices);
        store.synced_per(sync)
    }

    /// Open the store for a writer that commits more than once in one run (`notify`: its
    /// claim, then its confirmation) and may take minutes between them (the mail): synced with
    /// the remote like [`Store::open_writer`], so each commit is pushed, but without the
    /// writers' lock, which would make every other writer of this checkout wait for the whole
    /// batch. Such a writer handles a moved store itself, re-reading with [`Store::refreshed`].
    /// Like every writer it first repairs a checkout a killed run left behind HEAD, under the
    /// lock for that moment only, so its own commits start from a clean checkout.
    pub fn open_synced(dir: &Path, sync: &Sync, notices: Notices) -> Result<Store, StoreError> {
        {
            let repo = Repo::open(dir)?;
            let _lock = repo.lock_writers()?;
            tidy(&repo, &notices);
        }
        let mut store = Store::open(dir)?;
        store.notices = Some(notices);
        store.synced_per(sync)
    }

    /// This store synced with the remote `sync` names (the flag, else `[store] remote`), or
    /// as it is when there is none.
    fn synced_per(self, sync: &Sync) -> Result<Store, StoreError> {
        let name = match sync {
            Sync::Off => None,
            Sync::Remote(name) => Some(name.clone()),
            Sync::Config => self.config.store.remote.clone(),
        };
        let Some(name) = name else {
            return Ok(self);
        };
        let branch = self.repo.branch()?.ok_or_else(|| GitError::Sync {
            command: format!("sync with {name}"),
            stderr: "HEAD is detached; a store shared through a remote writes to a branch".into(),
        })?;
        self.synced(Remote { name, branch })
    }

    /// This store read again at its newest HEAD: with a remote, fetched and fast-forwarded
    /// first (so another host's claims are seen), and still pushing; without one, the local
    /// branch's HEAD. The writers' lock, if this store holds it, stays with `self`.
    pub fn refreshed(&self) -> Result<Store, StoreError> {
        match &self.remote {
            None => Store::open(self.root()),
            Some(remote) => {
                let mut store = Store::from_repo(Repo::open(self.root())?, None)?;
                store.notices = self.notices.clone();
                store.synced(remote.clone())
            }
        }
    }

    /// This store read again at the remote's head: fetch; fast-forward the local branch when
    /// it is behind; push it first when it is ahead (commits made with `--no-sync`), so the
    /// change is built on exactly what the remote holds.
    fn synced(self, remote: Remote) -> Result<Store, StoreError> {
        let repo = self.repo;
        let lock = self.writers_lock;
        let notices = self.notices;
        for _ in 0..ATTEMPTS {
            let ours = repo.head()?.ok_or_else(|| StoreError::NotAStore {
                path: repo.work_dir().to_path_buf(),
            })?;
            let base = match repo.fetch(&remote)? {
                // A remote without the branch yet: this checkout's history starts it.
                None => match repo.push(&remote, ours, None)? {
                    Pushed::Done | Pushed::AlreadyThere => ours,
                    Pushed::Rejected => continue,
                },
                Some(theirs) if theirs == ours => ours,
                Some(theirs) if repo.is_ancestor(ours, theirs)? => {
                    let lag = repo.advance_branch(
                        theirs,
                        &format!(
                            "contracts: fast-forward to {}/{}",
                            remote.name, remote.branch
                        ),
                    )?;
                    warn_lag(notices.as_ref(), theirs, lag);
                    theirs
                }
                Some(theirs) if repo.is_ancestor(theirs, ours)? => {
                    match repo.push(&remote, ours, Some(theirs))? {
                        Pushed::AlreadyThere => ours,
                        Pushed::Done => {
                            say(
                                notices.as_ref(),
                                &WriterNote::PushedEarlier {
                                    remote: format!("{}/{}", remote.name, remote.branch),
                                },
                            );
                            ours
                        }
                        Pushed::Rejected => continue,
                    }
                }
                Some(_) => {
                    return Err(GitError::Diverged {
                        local: ours,
                        remote: format!("{}/{}", remote.name, remote.branch),
                    }
                    .into())
                }
            };
            let mut store = Store::from_repo(repo, Some(base))?;
            store.remote = Some(remote);
            store.writers_lock = lock;
            store.notices = notices;
            return Ok(store);
        }
        Err(moved(&remote).into())
    }

    /// The remote this store pushes to, if it was opened with one.
    pub fn remote(&self) -> Option<&Remote> {
        self.remote.as_ref()
    }

    /// The same store read again at the current HEAD, keeping its remote.
    fn reopen(mut self) -> Result<Store, StoreError> {
        match self.remote.clone() {
            None => {
                let mut store = Store::open(self.root())?;
                store.writers_lock = self.writers_lock.take();
                store.notices = self.notices.take();
                Ok(store)
            }
            Some(remote) => self.synced(remote),
        }
    }

    /// Check, build and commit a change, again on the new HEAD whenever the store moved.
    ///
    /// `step` is called with the store at HEAD; it checks the caller's rules there and returns
    /// the change to commit, or [`Step::Nothing`] (a refusal, nothing to do). When the commit's
    /// compare-and-swap finds that another writer moved the branch (or, with a remote, the push
    /// is rejected), the store is read again and `step` called again on the new HEAD, so a
    /// change that still applies lands, and one the new HEAD forbids is refused by the caller's
    /// own rules. After [`ATTEMPTS`] the error is [`GitError::Moved`].
    pub fn transact<T, E>(
        self,
        mut step: impl FnMut(&Store) -> Result<Step<T>, E>,
    ) -> Result<Transacted<T>, E>
    where
        E: From<StoreError>,
    {
        let mut store = self;
        let mut attempt = 1;
        // Bounded by ATTEMPTS, jittered so that writers that collided do not collide again.
        let mut pauses = Pauses::jittered(Duration::from_millis(20), Duration::from_millis(640));
        loop {
            let (change, value) = match step(&store)? {
                Step::Nothing(value) => {
                    return Ok(Transacted {
                        value,
                        commit: None,
                        store,
                    })
                }
                Step::Commit(change, value) => (change, value),
            };
            match store.commit_once(&change.files, &change.message) {
                Ok(id) => {
                    return Ok(Transacted {
                        value,
                        commit: Some(id),
                        store,
                    })
                }
                Err(StoreError::Git(GitError::Moved { .. })) if attempt < ATTEMPTS => {
                    say(
                        store.notices.as_ref(),
                        &WriterNote::Moved {
                            attempt,
                            attempts: ATTEMPTS,
                        },
                    );
                    pauses.sleep();
                    store = store.reopen()?;
                    attempt += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// One commit on top of the HEAD this store was opened at. With a remote, the push is the
    /// compare-and-swap: the commit is written, pushed, and only once the remote took it does
    /// the local branch follow, so a rejected attempt leaves nothing behind.
    pub(super) fn commit_once(
        &self,
        files: &[(String, Vec<u8>)],
        message: &str,
    ) -> Result<ObjectId, StoreError> {
        let Some(remote) = &self.remote else {
            let committed = self
                .repo
                .commit_files_lagging(Some(self.head), files, message);
            say_removed_locks(self.notices.as_ref(), &self.repo);
            let (id, lag) = committed?;
            warn_lag(self.notices.as_ref(), id, lag);
            return Ok(id);
        };
        let (id, _) = self.repo.write_commit(Some(self.head), files, message)?;
        match self.repo.push(remote, id, Some(self.head))? {
            Pushed::Done => {
                let summary = message.lines().next().unwrap_or_default();
                let lag = self.repo.advance_branch(id, summary);
                say_removed_locks(self.notices.as_ref(), &self.repo);
                let lag = lag?;
                warn_lag(self.notices.as_ref(), id, lag);
                Ok(id)
            }
            // AlreadyThere: another writer pushed a byte-identical commit (same parent, content,
            // author and second) first. Its change, not this one, moved the branch: like a lost
            // compare-and-swap, re-read and re-check (a proposal is then refused).
            Pushed::Rejected | Pushed::AlreadyThere => Err(moved(remote).into()),
        }
    }
}

/// The remote's branch moved on: the push was rejected.
fn moved(remote: &Remote) -> GitError {
    GitError::Moved {
        source: gix::Error::from_error(std::io::Error::other(format!(
            "{}/{} moved on; the push was rejected",
            remote.name, remote.branch
        ))),
    }
}

/// Repair the checkout and remove dead writers' temporary files, saying what was done.
fn tidy(repo: &Repo, notices: &Notices) {
    let tidied = |done: Result<Vec<String>, GitError>, what| match done {
        Ok(paths) if !paths.is_empty() => say(Some(notices), &WriterNote::Tidied { what, paths }),
        Ok(_) => {}
        Err(error) => say(Some(notices), &WriterNote::TidyFailed { what, error }),
    };
    // First the git locks a dead writer left, which would stop the repair and the commit.
    tidied(repo.remove_dead_locks(), Tidy::DeadLocks);
    tidied(repo.repair_checkout(), Tidy::Checkout);
    tidied(repo.remove_stale_temps(), Tidy::StaleTemps);
}

/// Say which git lock files a dead writer left were removed on the way to a commit.
fn say_removed_locks(notices: Option<&Notices>, repo: &Repo) {
    let removed = repo.take_removed_locks();
    if !removed.is_empty() {
        let paths = removed.iter().map(|p| p.display().to_string()).collect();
        say(
            notices,
            &WriterNote::Tidied {
                what: Tidy::DeadLocks,
                paths,
            },
        );
    }
}

fn warn_lag(notices: Option<&Notices>, commit: ObjectId, lag: Option<GitError>) {
    if let Some(error) = lag {
        say(notices, &WriterNote::Lagging { commit, error });
    }
}
