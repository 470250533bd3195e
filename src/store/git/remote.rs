//! A store shared through a remote: fetch the branch before a write, push it after.
//!
//! gix 0.90 fetches only with its network features and cannot push at all (gitoxide's "client
//! push to remote" is still open upstream), so these two steps run the `git` executable; every
//! other step (reading, committing, moving refs, the checkout) stays in gix. A missing `git` is
//! an environment error (exit 3) that says so.

use std::path::Path;
use std::process::Command;

use gix::ObjectId;

use super::{GitError, Repo};

/// Where a writer fetches the remote's head, one ref per process: `refs/contracts-sync/<pid>`.
pub(super) const SYNC_REFS: &str = "refs/contracts-sync";

/// The remote a store syncs with, and the branch on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    pub name: String,
    pub branch: String,
}

/// How a push ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// This push moved the remote branch to the commit.
    Done,
    /// The remote branch was at the commit already: someone pushed the very same commit.
    AlreadyThere,
    /// The remote branch moved on: fetch, re-apply, push again.
    Rejected,
}

fn git(dir: &Path, args: &[&str]) -> Result<std::process::Output, GitError> {
    Command::new("git")
        .current_dir(dir)
        .args(args)
        // Never stop to ask for a password: a cron job has nobody to answer.
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|source| GitError::NoGit {
            command: format!("git {}", args.join(" ")),
            source,
        })
}

fn failed(args: &[&str], out: &std::process::Output) -> GitError {
    GitError::Sync {
        command: format!("git {}", args.join(" ")),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    }
}

impl Repo {
    /// The short name of the branch HEAD points at (`main`), if any.
    pub fn branch(&self) -> Result<Option<String>, GitError> {
        let name = self
            .repo
            .head_name()
            .map_err(GitError::git("could not read HEAD"))?;
        Ok(name.map(|n| n.shorten().to_string()))
    }

    /// The URL of `remote`, from git config (a clear error when there is no such remote).
    fn remote_url(&self, remote: &Remote) -> Result<String, GitError> {
        let args = ["remote", "get-url", remote.name.as_str()];
        let out = git(&self.work_dir, &args)?;
        if !out.status.success() {
            return Err(failed(&args, &out));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Fetch `remote`'s branch and return the commit it points at (`None` when the remote has
    /// no such branch yet).
    ///
    /// The fetched head lands in a ref of this process's own (`refs/contracts-sync/<pid>`),
    /// read and then deleted, and the URL is fetched rather than the remote's name, so
    /// concurrent writers in one checkout never contend for a remote-tracking ref.
    pub fn fetch(&self, remote: &Remote) -> Result<Option<ObjectId>, GitError> {
        let url = self.remote_url(remote)?;
        let tracking = format!("{SYNC_REFS}/{}", std::process::id());
        let spec = format!("+refs/heads/{}:{tracking}", remote.branch);
        let args = [
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            url.as_str(),
            spec.as_str(),
        ];
        let mut attempt = 0;
        let mut pauses = crate::retry::Pauses::jittered(
            std::time::Duration::from_millis(20),
            std::time::Duration::from_millis(200),
        );
        let out = loop {
            let out = git(&self.work_dir, &args)?;
            let stderr = String::from_utf8_lossy(&out.stderr);
            // Another process of this checkout writing an object pack or a ref at that instant.
            if !out.status.success() && stderr.contains(".lock") && attempt < 10 {
                attempt += 1;
                pauses.sleep();
                continue;
            }
            break out;
        };
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            if stderr.contains("couldn't find remote ref") {
                return Ok(None);
            }
            return Err(failed(&args, &out));
        }
        // A fresh handle: the ref was just written by another process.
        let fresh = gix::open(self.repo.git_dir()).map_err(|source| GitError::Open {
            path: self.work_dir.clone(),
            source,
        })?;
        let reference = fresh
            .find_reference(tracking.as_str())
            .map_err(GitError::git(format!("could not read {tracking}")))?;
        let id = reference
            .clone()
            .into_fully_peeled_id()
            .map_err(GitError::git(format!("could not resolve {tracking}")))?
            .detach();
        // The objects are what matters; the ref was only the way to learn the id.
        let _ = reference.delete();
        Ok(Some(id))
    }

    /// Push `commit` to `remote`'s branch with a compare-and-swap there: only if the branch
    /// is still at `expected` (`None`: only if it does not exist yet), through git's
    /// `--force-with-lease`. So a writer whose commit happens to be byte-identical to one
    /// another writer pushed first (same parent, content, author and second) is rejected too,
    /// as a local commit would be, rather than taking the other's push for its own.
    pub fn push(
        &self,
        remote: &Remote,
        commit: ObjectId,
        expected: Option<ObjectId>,
    ) -> Result<Pushed, GitError> {
        let url = self.remote_url(remote)?;
        let spec = format!("{commit}:refs/heads/{}", remote.branch);
        let lease = format!(
            "--force-with-lease=refs/heads/{}:{}",
            remote.branch,
            expected.map(|e| e.to_string()).unwrap_or_default()
        );
        let args = [
            "push",
            "--porcelain",
            lease.as_str(),
            url.as_str(),
            spec.as_str(),
        ];
        let out = git(&self.work_dir, &args)?;
        // `--porcelain`: one line per ref, flagged `=` when it was up to date already, `!` when
        // it was not updated, with the reason.
        let stdout = String::from_utf8_lossy(&out.stdout);
        let dst = format!("refs/heads/{}", remote.branch);
        if out.status.success() {
            let up_to_date = stdout
                .lines()
                .any(|l| l.starts_with('=') && l.contains(&dst));
            return Ok(if up_to_date {
                Pushed::AlreadyThere
            } else {
                Pushed::Done
            });
        }
        let refused = stdout
            .lines()
            .find(|l| l.starts_with('!') && l.contains(&format!("refs/heads/{}", remote.branch)));
        match refused {
            // The branch moved on (non-fast-forward), or another push held its lock.
            Some(line)
                if line.contains("[rejected]")
                    || line.contains("stale info")
                    || line.contains("fetch first")
                    || line.contains("non-fast-forward")
                    || line.contains("failed to update ref")
                    || line.contains("failed to lock")
                    || line.contains("cannot lock") =>
            {
                Ok(Pushed::Rejected)
            }
            _ => Err(failed(&args, &out)),
        }
    }

    /// Fast-forward the local branch to `target` if it is behind it (an ancestor), waiting for
    /// a live writer's lock and re-reading when another local writer moved it meanwhile; then
    /// bring the checkout up to HEAD. Leaves a branch that is not behind `target` alone. A
    /// checkout that fails is returned, not raised: the ref moved.
    pub fn advance_branch(
        &self,
        target: ObjectId,
        why: &str,
    ) -> Result<Option<GitError>, GitError> {
        let identity = self.identity()?;
        loop {
            let Some(local) = self.head()? else {
                break;
            };
            if local == target || !self.is_ancestor(local, target)? {
                break;
            }
            match self.move_head_waiting(Some(local), target, why, &identity) {
                // Another local writer moved it meanwhile: look again.
                Err(GitError::Moved { .. }) => continue,
                other => other?,
            }
            break;
        }
        Ok(self.repair_checkout().err())
    }

    /// Whether `ancestor` is reachable from `commit` (or is it).
    pub fn is_ancestor(&self, ancestor: ObjectId, commit: ObjectId) -> Result<bool, GitError> {
        if ancestor == commit {
            return Ok(true);
        }
        let walk = self
            .repo
            .rev_walk([commit])
            .all()
            .map_err(GitError::git(format!("could not walk from {commit}")))?;
        for info in walk {
            let info = info.map_err(GitError::git(format!("could not walk from {commit}")))?;
            if info.id == ancestor {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
