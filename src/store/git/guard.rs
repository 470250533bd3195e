//! What keeps a write inside the store and writers out of each other's way: no symbolic link
//! on the way to a file the store writes, and bounded waiting for another writer's lock (with a
//! clear report of a lock nobody will release).

use crate::retry::Pauses;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use gix::bstr::ByteSlice;
use gix::ObjectId;

use super::{GitError, Repo};

/// The environment variable that sets how long a writer waits for another writer's lock, in
/// milliseconds (default [`DEFAULT_LOCK_WAIT`]). A lock at least this old is called stale.
pub const LOCK_WAIT_ENV: &str = "CONTRACTS_LOCK_WAIT_MS";

/// A live writer holds git's locks for milliseconds; ten seconds is far beyond that, and short
/// enough for a cron job to fail clearly rather than hang.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(10);

pub(crate) fn lock_wait() -> Duration {
    std::env::var(LOCK_WAIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_LOCK_WAIT)
}

/// How old a file is, by its modification time; `None` if it is gone.
pub(super) fn age_of(path: &Path) -> Option<Duration> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let modified = meta.modified().ok()?;
    Some(
        SystemTime::now()
            .duration_since(modified)
            .unwrap_or_default(),
    )
}

/// How long a writer queues behind other writers of the same checkout before giving up.
fn writers_wait() -> Duration {
    6 * lock_wait()
}

impl Repo {
    /// Queue for the writers' lock and hold it until the returned handle is dropped: an OS
    /// lock (`flock`) on the git directory itself, so writers in one checkout queue instead of
    /// racing, no file is created for it, and the kernel releases it when its holder dies (a
    /// `kill -9` can never leave it held). Bounded: after six times the lock wait (60 s by
    /// default) the result is [`GitError::Busy`].
    pub fn lock_writers(&self) -> Result<std::fs::File, GitError> {
        let path = self.repo.git_dir().to_path_buf();
        let file = std::fs::File::open(&path).map_err(super::io_err(&path))?;
        let start = Instant::now();
        let mut pauses = Pauses::jittered(Duration::from_millis(2), Duration::from_millis(50));
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < writers_wait() => {
                    pauses.sleep();
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(GitError::Busy {
                        path,
                        waited_secs: start.elapsed().as_secs(),
                    })
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(super::io_err(&path)(e)),
            }
        }
    }

    /// The lock file a write of the index takes: `index.lock`.
    pub(crate) fn index_lock(&self) -> PathBuf {
        let mut lock = self.repo.index_path().into_os_string();
        lock.push(".lock");
        PathBuf::from(lock)
    }

    /// The lock files a commit takes: `HEAD.lock` and the branch's `refs/heads/<name>.lock`.
    pub(crate) fn ref_locks(&self) -> Vec<PathBuf> {
        let git_dir = self.repo.git_dir().to_path_buf();
        let mut out = vec![git_dir.join("HEAD.lock")];
        if let Ok(Some(name)) = self.repo.head_name() {
            let mut lock = git_dir.join(name.as_bstr().to_str_lossy().as_ref());
            lock.as_mut_os_string().push(".lock");
            out.push(lock);
        }
        out
    }

    /// Move the branch from `parent` to `commit` (see `move_head`), waiting while another writer
    /// holds the ref's locks. Bounded: each wait ends at [`lock_wait`] with a stale lock, and
    /// the whole at three times that (a lock that every attempt finds freshly taken again).
    pub(crate) fn move_head_waiting(
        &self,
        parent: Option<ObjectId>,
        commit: ObjectId,
        message: &str,
        identity: &super::Identity,
    ) -> Result<(), GitError> {
        let locks = self.ref_locks();
        let deadline = Instant::now() + 3 * lock_wait();
        let mut pauses = Pauses::jittered(Duration::from_millis(1), Duration::from_millis(10));
        loop {
            self.wait_for_locks(&locks)?;
            match self.move_head(parent, commit, message, identity) {
                Err(GitError::Locked { source }) if Instant::now() >= deadline => {
                    return Err(GitError::Git {
                        context: format!(
                            "the branch stayed locked by other writers for {} s",
                            (3 * lock_wait()).as_secs()
                        ),
                        source,
                    })
                }
                Err(GitError::Locked { .. }) => {
                    pauses.sleep();
                }
                other => return other,
            }
        }
    }

    /// Wait, with bounded backoff, until none of `locks` exists. A lock older than the wait was
    /// left by a writer that died: [`GitError::StaleLock`]. Locks that are there for the whole
    /// wait but always young (other writers' turns) end the wait without an error.
    pub(crate) fn wait_for_locks(&self, locks: &[PathBuf]) -> Result<(), GitError> {
        let wait = lock_wait();
        let start = Instant::now();
        let mut pauses = Pauses::jittered(Duration::from_millis(5), Duration::from_millis(200));
        loop {
            let held: Vec<(&PathBuf, Duration)> = locks
                .iter()
                .filter_map(|p| age_of(p).map(|age| (p, age)))
                .collect();
            let Some(&(path, age)) = held.iter().max_by_key(|(_, age)| *age) else {
                return Ok(());
            };
            // A lock nothing on this host can hold any more is a dead writer's: gone, and the
            // wait goes on for the others.
            if let Some(dead) = self.dead_lock(&held) {
                self.removed_locks.borrow_mut().push(dead);
                continue;
            }
            if age >= wait {
                return Err(GitError::StaleLock {
                    path: path.clone(),
                    age_secs: age.as_secs(),
                    waited_ms: start.elapsed().as_millis() as u64,
                });
            }
            // Held for the whole wait, but each lock seen is younger than the wait: live
            // writers taking it in turn, not a dead one. Not stale; the caller tries, and its
            // own deadline says "busy" if the turns never end.
            if start.elapsed() >= wait {
                return Ok(());
            }
            pauses.sleep();
        }
    }

    /// Refuse to write `paths` if any component of any of them is a symbolic link, committed
    /// at `head` (git mode 120000) or present only in the work tree: writing there would follow
    /// the link out of the store. Nothing is written before this check passes.
    pub(crate) fn refuse_symlinks(
        &self,
        head: Option<ObjectId>,
        paths: &[&str],
    ) -> Result<(), GitError> {
        let tree = match head {
            Some(h) => Some(self.tree_of(h)?),
            None => None,
        };
        let mut seen = HashSet::new();
        for path in paths {
            let mut prefix = String::new();
            for component in path.split('/') {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(component);
                if !seen.insert(prefix.clone()) {
                    continue;
                }
                if let Some(tree) = &tree {
                    let entry = tree
                        .lookup_entry_by_path(prefix.as_str())
                        .map_err(GitError::git(format!("could not look up {prefix}")))?;
                    if entry.is_some_and(|e| e.mode().is_link()) {
                        return Err(GitError::Symlink {
                            link: prefix,
                            path: path.to_string(),
                            committed: true,
                        });
                    }
                }
                let on_disk = self.work_dir.join(&prefix);
                if std::fs::symlink_metadata(&on_disk).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(GitError::Symlink {
                        link: prefix,
                        path: path.to_string(),
                        committed: false,
                    });
                }
            }
        }
        Ok(())
    }

    /// Every path of the tree at `commit` whose entry is a symbolic link (git mode 120000).
    pub fn symlinks_at(&self, commit: ObjectId) -> Result<Vec<String>, GitError> {
        let mut out = Vec::new();
        let mut stack = vec![(String::new(), self.tree_of(commit)?.id)];
        while let Some((prefix, id)) = stack.pop() {
            for e in self.tree_entries(id)? {
                let path = format!("{prefix}{}", e.name);
                if e.is_link {
                    out.push(path);
                } else if e.is_dir {
                    stack.push((format!("{path}/"), e.id));
                }
            }
        }
        out.sort();
        Ok(out)
    }
}
