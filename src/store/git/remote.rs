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

/// The remote a store syncs with, and the branch on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    pub name: String,
    pub branch: String,
}

/// How a push ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    Done,
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

    /// Fetch `remote`'s branch and return the commit it points at (`None` when the remote has
    /// no such branch yet).
    pub fn fetch(&self, remote: &Remote) -> Result<Option<ObjectId>, GitError> {
        let tracking = format!("refs/contracts-sync/{}/{}", remote.name, remote.branch);
        let spec = format!("+refs/heads/{}:{tracking}", remote.branch);
        let args = [
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            remote.name.as_str(),
            spec.as_str(),
        ];
        let out = git(&self.work_dir, &args)?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            if stderr.contains("couldn't find remote ref") {
                return Ok(None);
            }
            return Err(failed(&args, &out));
        }
        // A fresh handle: the refs just written by another process.
        let fresh = gix::open(self.repo.git_dir()).map_err(|source| GitError::Open {
            path: self.work_dir.clone(),
            source,
        })?;
        let id = fresh
            .find_reference(tracking.as_str())
            .map_err(GitError::git(format!("could not read {tracking}")))?
            .into_fully_peeled_id()
            .map_err(GitError::git(format!("could not resolve {tracking}")))?;
        Ok(Some(id.detach()))
    }

    /// Push `commit` to `remote`'s branch, refusing anything but a fast-forward there.
    pub fn push(&self, remote: &Remote, commit: ObjectId) -> Result<Pushed, GitError> {
        let spec = format!("{commit}:refs/heads/{}", remote.branch);
        let args = [
            "push",
            "--quiet",
            "--porcelain",
            remote.name.as_str(),
            spec.as_str(),
        ];
        let out = git(&self.work_dir, &args)?;
        if out.status.success() {
            return Ok(Pushed::Done);
        }
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if text.contains("[rejected]")
            || text.contains("non-fast-forward")
            || text.contains("fetch first")
            || text.contains("cannot lock ref")
            || text.contains("failed to update ref")
        {
            return Ok(Pushed::Rejected);
        }
        Err(failed(&args, &out))
    }

    /// Move the branch from `from` to `to` (compare-and-swap on `from`, waiting for a live
    /// writer's lock), then bring the checkout up to it. Used to fast-forward to a fetched
    /// remote head, and to drop a local commit whose push was rejected so that it can be
    /// re-applied on the remote's new head. A checkout that fails is returned, not raised:
    /// the ref moved.
    pub fn move_branch(
        &self,
        from: ObjectId,
        to: ObjectId,
        why: &str,
    ) -> Result<Option<GitError>, GitError> {
        let identity = self.identity()?;
        let locks = self.ref_locks();
        loop {
            self.wait_for_locks(&locks)?;
            match self.move_head(Some(from), to, why, &identity) {
                Err(GitError::Locked { .. }) => continue,
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
