//! Who writes a commit: author and committer from the environment or git config.

use gix::bstr::ByteSlice;

use super::{GitError, Repo};

/// Who writes a commit: author and committer, each with its time.
#[derive(Debug, Clone)]
pub struct Identity {
    pub author: gix::actor::Signature,
    pub committer: gix::actor::Signature,
}

impl Identity {
    /// The author as `Name <email>`: who granted or revoked a waiver.
    pub fn author_mailbox(&self) -> String {
        format!("{} <{}>", self.author.name, self.author.email)
    }
}

impl Repo {
    /// Author and committer for a new commit: `GIT_AUTHOR_NAME`/`GIT_AUTHOR_EMAIL`/
    /// `GIT_AUTHOR_DATE` (and the `GIT_COMMITTER_*` trio) from the environment, else
    /// `author.*`/`committer.*`, else `user.name`/`user.email` from git config; the time is now
    /// unless a `*_DATE` variable says otherwise.
    pub fn identity(&self) -> Result<Identity, GitError> {
        self.identity_with_env(&|var| std::env::var(var).ok())
    }

    pub(super) fn identity_with_env(
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
