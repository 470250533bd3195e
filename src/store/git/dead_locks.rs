//! Git lock files a writer that died left behind (`HEAD.lock`, the branch's
//! `refs/heads/<name>.lock`, `index.lock`): a `kill -9`, an OOM kill or a reboot in the
//! milliseconds a commit holds them. Left alone, every later writer waits for them and stops
//! with "a lock left by a process that died", and a daily `notify` fails every day until a
//! person removes them.
//!
//! A writer removes such a lock when it opens the store (holding the writers' lock, so no
//! other writer of this checkout is in its turn) or when it meets one while waiting to
//! commit, and only when nothing on this host can still be holding it:
//!
//! - the lock file is at least [`GRACE`] old (git and gix hold a ref or index lock for
//!   milliseconds), and
//! - no other process on this host has the lock file open, and no other `git` or `contracts`
//!   process works in this store (its working directory, or a file it has open, is in it).
//!
//! Anything else is left alone and waited for, as before: a person's `git` (an editor open on
//! a commit message holds `index.lock`), another `contracts`, or a lock on a network file
//! system that another host may hold. Who may hold a lock is read from this host's processes
//! (`/proc`) when it matters, not from a pid file: such a file would itself change on every
//! run, refused ones included, and a recorded pid may belong to another process by then.
//! Without `/proc` nothing is removed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{GitError, Repo};

// `Repo::wait_for_locks` (guard.rs) removes a dead writer's lock with [`Repo::dead_lock`]
// when it meets one; `remove_dead_locks` does it for every lock when a writer opens.

/// How old a lock must be before a writer may call it abandoned.
pub(crate) const GRACE: Duration = Duration::from_secs(2);

impl Repo {
    /// Remove the git lock files a dead writer left (see the module); returns each removed
    /// lock. Call it holding the writers' lock.
    pub fn remove_dead_locks(&self) -> Result<Vec<String>, GitError> {
        let mut locks = self.ref_locks();
        locks.push(self.index_lock());
        let mut removed = Vec::new();
        loop {
            let held: Vec<(&PathBuf, Duration)> = locks
                .iter()
                .filter_map(|p| super::guard::age_of(p).map(|age| (p, age)))
                .collect();
            match self.dead_lock(&held) {
                Some(lock) => removed.push(lock.display().to_string()),
                None => return Ok(removed),
            }
        }
    }
}

impl Repo {
    /// Of `held` (lock files with their ages), one that a dead writer left, removed; `None`
    /// when each may still be held.
    pub(crate) fn dead_lock(&self, held: &[(&PathBuf, Duration)]) -> Option<PathBuf> {
        held.iter()
            .filter(|(_, age)| *age >= GRACE)
            .find(|(lock, _)| !held_on_this_host(lock, self.work_dir(), self.repo.git_dir()))
            .and_then(|(lock, _)| std::fs::remove_file(lock).ok().map(|()| (*lock).clone()))
    }
}

/// Whether a process of this host other than this one may hold `lock`: it has the file open,
/// or it is `git` or `contracts` working in the store (`work_dir` or `git_dir`). A process
/// whose details cannot be read counts as holding it, so nothing is removed on a guess.
fn held_on_this_host(lock: &Path, work_dir: &Path, git_dir: &Path) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        // No /proc (not Linux): nothing can be proved dead, so nothing is removed.
        return true;
    };
    let me = std::process::id().to_string();
    let roots = [canonical(work_dir), canonical(git_dir)];
    let lock = canonical(lock);
    for entry in procs.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str() else { continue };
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == me {
            continue;
        }
        let dir = entry.path();
        if let Ok(fds) = std::fs::read_dir(dir.join("fd")) {
            if fds
                .flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == lock))
            {
                return true;
            }
        }
        let Ok(exe) = std::fs::read_link(dir.join("exe")) else {
            continue;
        };
        let in_store = |target: &Path| roots.iter().any(|r| target.starts_with(r));
        let program = exe
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !(program == "git" || program.starts_with("git-") || program == "contracts") {
            continue;
        }
        match std::fs::read_link(dir.join("cwd")) {
            Ok(cwd) if in_store(&cwd) => return true,
            Ok(_) => {}
            // A git or contracts process whose directory cannot be read may be ours.
            Err(_) => return true,
        }
        // A writer run with `--repo` from elsewhere holds the writers' lock, an open file
        // on the git directory.
        if let Ok(fds) = std::fs::read_dir(dir.join("fd")) {
            if fds
                .flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| in_store(&t)))
            {
                return true;
            }
        }
    }
    false
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}
