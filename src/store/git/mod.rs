//! The git layer of the store: open or create the repository, read files at a commit, write one
//! commit with a compare-and-swap on the branch ref, and walk the first-parent history with the
//! paths each commit changed.
//!
//! By purpose: `read` (HEAD, files, listings at a commit), `write` (one commit and the ref's
//! compare-and-swap), `checkout` (work tree and index, their repair, temporary files), `guard`
//! (symbolic links, locks), `identity` (author and committer), `error`, `walk` (the
//! first-parent walk) and `remote` (fetch and push).
//!
//! Everything goes through `gix`, except fetching from and pushing to a remote (`remote`), which
//! gix 0.90 cannot do and which run the `git` executable. The write path follows one rule
//! (docs/src/reference/store-files.md): objects first, then the branch ref is moved with a
//! compare-and-swap on the parent the caller read, and only then are the work tree and index
//! touched. A writer that crashes, or that loses the race, therefore leaves the store exactly as it
//! was apart from unreachable objects, which `git gc` removes and nothing ever reads.

mod checkout;
mod dead_locks;
mod error;
mod guard;
mod identity;
mod read;
mod remote;
mod walk;
mod write;

use std::path::{Path, PathBuf};

pub use checkout::TEMP_SUFFIX;
use error::io_err;
pub use error::GitError;
pub use gix::ObjectId;
pub use guard::{DEFAULT_LOCK_WAIT, LOCK_WAIT_ENV};
pub use identity::Identity;
pub use remote::{Pushed, Remote};
pub use walk::{CommitChanges, PathChange, Person};

/// Memory for delta bases decoded from packs, per repository handle.
const PACK_CACHE_BYTES: usize = 64 * 1024 * 1024;
/// Decoded objects kept by id. Every read at a commit looks its path up from the root tree, so
/// without it the root and `contracts/` trees (one entry per dataset) are inflated again for
/// each file: `status` over 1,000 datasets spent most of its time there.
const OBJECT_CACHE_BYTES: usize = 16 * 1024 * 1024;

/// The environment variable that injects a failure into [`Repo::commit_files`], for tests
/// (with the errors, which name it).
pub use error::FAULT_ENV;

/// A failure to inject into [`Repo::commit_files`], so tests can prove crash safety.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Fail after every object of the commit is written, before the branch moves.
    AfterObjects,
    /// Pause this many milliseconds after the objects are written, before the branch moves:
    /// the moment another writer can move the branch under this one (`pause-before-ref=MS`).
    PauseBeforeRef(u64),
}

impl Fault {
    /// The fault named by `CONTRACTS_FAULT`; unset or unknown values inject nothing.
    pub fn from_env() -> Option<Fault> {
        Fault::parse(std::env::var(FAULT_ENV).ok().as_deref())
    }

    fn parse(value: Option<&str>) -> Option<Fault> {
        match value {
            Some("after-objects") => Some(Fault::AfterObjects),
            Some(v) => v
                .strip_prefix("pause-before-ref=")
                .and_then(|ms| ms.parse().ok())
                .map(Fault::PauseBeforeRef),
            None => None,
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
    /// A file (git mode 100644 or 100755): what a read by path finds.
    pub is_blob: bool,
}

/// A git repository with a work tree: the store.
pub struct Repo {
    repo: gix::Repository,
    work_dir: PathBuf,
    fault: Option<Fault>,
    /// Git lock files a writer that died left, removed while waiting for them
    /// ([`dead_locks`]): the writer says so once its commit is done.
    removed_locks: std::cell::RefCell<Vec<PathBuf>>,
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
        // gix's error is opaque, so "no repository up to the root" is told apart here: that is
        // the user's being in the wrong folder (input), not a fault of git. A `.git` entry (a
        // folder, or a file for worktrees) in the folder or an ancestor is what git looks for.
        let start = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let is_git_dir = |d: &Path| d.join("HEAD").is_file() && d.join("objects").is_dir();
        if std::env::var_os("GIT_DIR").is_none()
            && !start
                .ancestors()
                .any(|d| d.join(".git").exists() || is_git_dir(d))
        {
            return Err(GitError::NoRepository {
                path: dir.to_path_buf(),
            });
        }
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
        repo.object_cache_size_if_unset(OBJECT_CACHE_BYTES);
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
            removed_locks: Default::default(),
        })
    }

    /// Replace the fault read from `CONTRACTS_FAULT` when the repository was opened. For tests,
    /// which share one process environment and so cannot set the variable per test.
    #[doc(hidden)]
    pub fn inject_fault(&mut self, fault: Option<Fault>) {
        self.fault = fault;
    }

    /// The git lock files removed while waiting for them since the last call
    /// ([`dead_locks`]).
    pub fn take_removed_locks(&self) -> Vec<PathBuf> {
        std::mem::take(&mut self.removed_locks.borrow_mut())
    }

    /// The root of the work tree.
    pub fn work_dir(&self) -> &Path {
        &self.work_dir
    }

    /// The underlying gix repository, for readers that need more than this layer offers.
    pub fn gix(&self) -> &gix::Repository {
        &self.repo
    }
}

/// A repository handle that may move to another thread, to be opened there: a second reader
/// of the same repository, with smaller caches of its own (see
/// `SECOND_READER_PACK_CACHE_BYTES`).
pub struct SendRepo {
    repo: gix::ThreadSafeRepository,
    work_dir: PathBuf,
}

/// Memory for delta bases of a second reader ([`SendRepo`]): one that reads each object once,
/// in the order its pack's deltas run, needs the last few bases only, and keeps no decoded
/// objects by id, so running beside the store's own reader adds little memory.
const SECOND_READER_PACK_CACHE_BYTES: usize = 16 * 1024 * 1024;

impl SendRepo {
    /// The repository, on the thread this is called on.
    pub fn open(self) -> Result<Repo, GitError> {
        let mut repo = Repo::from_gix(self.repo.to_thread_local(), &self.work_dir)?;
        repo.repo.objects.set_pack_cache(|| {
            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                SECOND_READER_PACK_CACHE_BYTES,
            ))
        });
        repo.repo.object_cache_size(0);
        Ok(repo)
    }
}

impl Repo {
    /// A handle on this repository for another thread ([`SendRepo::open`]).
    pub fn for_another_thread(&self) -> SendRepo {
        SendRepo {
            repo: self.repo.clone().into_sync(),
            work_dir: self.work_dir.clone(),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::identity::resolve_identity;
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
        assert_eq!(
            Fault::parse(Some("pause-before-ref=250")),
            Some(Fault::PauseBeforeRef(250))
        );
        assert_eq!(Fault::parse(Some("pause-before-ref=soon")), None);
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
