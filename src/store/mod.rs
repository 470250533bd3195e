//! The store: contracts, change history, ledgers and config in a git repository
//! (docs/src/reference/store-files.md).
//!
//! Every read is at one commit, HEAD as it was when the store was opened, through gix: what a
//! command judges is what is committed, never a half-edited working tree. Every write is one
//! commit on top of that same HEAD, with a compare-and-swap on the branch, so two writers
//! cannot both build on the same state. This module is the only place that knows the layout.

pub mod git;
mod lines;
pub mod proofs;
mod revisions;
mod transact;
pub mod worktree;

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use chrono::NaiveDate;

use semver::Version;

pub use git::{CommitChanges, GitError, ObjectId, Remote, Repo, TreeEntry};
pub use proofs::{log_entries, LogEntry};
pub use proofs::{CommitInfo, HistoryProof, Prover, RecordOrigins, Violation, RECORD_HEADERS};
pub use revisions::DEFAULT_BRANCHES;
pub use transact::{Edit, Notices, Step, Sync, Tidy, Transacted, WriterNote, ATTEMPTS};

use crate::model::history::{parse_history, History};
use crate::model::{
    is_dataset_name, parse_config, parse_contract, Config, Contract, Line, Strictness, TomlErrors,
};

/// Where things live in a store.
pub mod layout {
    pub const CONFIG: &str = "contracts.toml";
    pub const CONSUMERS: &str = "consumers.toml";
    pub const CONTRACTS: &str = "contracts";
    pub const HISTORY: &str = "history";
    pub const NOTIFICATIONS: &str = "notifications";
    pub const TEMPLATES: &str = "templates";

    pub fn contract(dataset: &str, version: &str) -> String {
        format!("{CONTRACTS}/{dataset}/{version}.toml")
    }
    pub fn history(dataset: &str) -> String {
        format!("{HISTORY}/{dataset}.toml")
    }
    pub fn releases(dataset: &str) -> String {
        format!("{HISTORY}/{dataset}.releases.toml")
    }
    pub fn waivers(dataset: &str) -> String {
        format!("{HISTORY}/{dataset}.waivers.toml")
    }
    pub fn notifications(dataset: &str) -> String {
        format!("{NOTIFICATIONS}/{dataset}.toml")
    }
    pub fn template(name: &str) -> String {
        format!("{TEMPLATES}/{name}")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Toml(#[from] TomlErrors),
    #[error("{}: not a contracts store (no contracts.toml committed at HEAD)", path.display())]
    NotAStore { path: PathBuf },
    #[error("{}: already a contracts store", path.display())]
    AlreadyAStore { path: PathBuf },
    #[error("`{0}` is not a valid dataset name ([a-z0-9][a-z0-9_-]{{0,63}})")]
    BadDataset(String),
    /// `hint` is empty, or a "did you mean" or the list of datasets, with its separator.
    #[error("dataset `{dataset}` has no contract in this store{hint}")]
    UnknownDataset { dataset: String, hint: String },
    #[error("dataset `{dataset}` has no version {version}")]
    UnknownVersion { dataset: String, version: String },
    #[error("{path}: the file says dataset `{dataset}` version {version}; its path must match")]
    Misnamed {
        path: String,
        dataset: String,
        version: String,
    },
    #[error("{path}: not UTF-8 text (the first invalid byte is at byte offset {offset})")]
    NotText { path: String, offset: usize },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    /// Whether the user's input or the store's content is at fault (exit 2), rather than the
    /// environment (exit 3).
    pub fn is_input(&self) -> bool {
        match self {
            StoreError::Git(g) => g.is_input(),
            StoreError::Io { .. } => false,
            _ => true,
        }
    }
}

/// A store file's bytes as text; bad UTF-8 is named by its byte offset (it has no line).
pub fn utf8(bytes: Vec<u8>, path: &str) -> Result<String, StoreError> {
    String::from_utf8(bytes).map_err(|e| StoreError::NotText {
        path: path.to_string(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// A contract version's text (from [`Store::contract_text`]) parsed with the store's
/// configuration and checked against its path. Needs no store, so parsing may be spread over
/// threads while one thread reads.
pub fn parse_contract_text(
    config: &Config,
    dataset: &str,
    version: &str,
    text: &str,
    strictness: Strictness,
) -> Result<Contract, StoreError> {
    let path = layout::contract(dataset, version);
    let c = parse_contract(&path, text, &config.kinds, strictness)?;
    if c.dataset != dataset || c.version.to_string() != version {
        return Err(StoreError::Misnamed {
            path,
            dataset: c.dataset,
            version: c.version.to_string(),
        });
    }
    Ok(c)
}

/// An open store, pinned to the HEAD it was opened at.
///
/// Directory listings are read once and kept, so a command visiting thousands of datasets
/// reads each tree once instead of once per file (a store is immutable at a commit, so nothing
/// cached can go stale).
pub struct Store {
    repo: Repo,
    head: ObjectId,
    config: Config,
    contracts_dir: OnceCell<HashMap<String, TreeEntry>>,
    history_dir: OnceCell<HashMap<String, TreeEntry>>,
    notifications_dir: OnceCell<HashMap<String, TreeEntry>>,
    dataset_files: RefCell<HashMap<String, Rc<Vec<TreeEntry>>>>,
    /// Each dataset's lines once worked out: `status` asks for them per row and again for the
    /// windows it counts. Lines are small; parsed contracts are not kept (`check` reads every
    /// version of every dataset, and holding them would grow with the store).
    lines: RefCell<HashMap<String, Vec<Line>>>,
    /// The version current on a day of the lines [`Store::prefetch`] looked at, where it is
    /// the line's newest: (dataset, major, day) → version.
    current: RefCell<HashMap<(String, u64, NaiveDate), Version>>,
    /// The remote every commit is pushed to, for a store opened with [`Store::open_writer`].
    remote: Option<Remote>,
    /// The writers' lock, held from [`Store::open_writer`] until the store is dropped.
    writers_lock: Option<std::fs::File>,
    /// Where a writer's notices go (retries, repairs, a lagging checkout); none are said
    /// for a store opened without one.
    notices: Option<transact::Notices>,
}

impl Store {
    /// Open the store whose repository contains `dir`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        Store::from_repo(Repo::open(dir)?, None)
    }

    /// The store in `repo` at `head`, or at HEAD.
    fn from_repo(repo: Repo, head: Option<ObjectId>) -> Result<Store, StoreError> {
        let not_a_store = || StoreError::NotAStore {
            path: repo.work_dir().to_path_buf(),
        };
        let head = match head {
            Some(h) => h,
            None => repo.head()?.ok_or_else(not_a_store)?,
        };
        let bytes = repo
            .read_at(head, layout::CONFIG)?
            .ok_or_else(not_a_store)?;
        let text = utf8(bytes, layout::CONFIG)?;
        let config = parse_config(layout::CONFIG, &text)?;
        Ok(Store {
            repo,
            head,
            config,
            contracts_dir: OnceCell::new(),
            history_dir: OnceCell::new(),
            notifications_dir: OnceCell::new(),
            dataset_files: RefCell::new(HashMap::new()),
            lines: RefCell::new(HashMap::new()),
            current: RefCell::new(HashMap::new()),
            remote: None,
            writers_lock: None,
            notices: None,
        })
    }

    pub fn root(&self) -> &Path {
        self.repo.work_dir()
    }

    pub fn head(&self) -> ObjectId {
        self.head
    }

    /// Who commits: the git identity writers record (environment, then git config).
    pub fn identity(&self) -> Result<git::Identity, StoreError> {
        Ok(self.repo.identity()?)
    }

    /// Where `notify` journals the notices of a run (`.git/contracts-notify/`): local to this
    /// checkout and never committed, so it survives a killed run without touching the store.
    pub fn notify_journal_dir(&self) -> PathBuf {
        self.repo.gix().git_dir().join("contracts-notify")
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The store files with changes not committed at HEAD, which no command reads; with
    /// `dataset`, only the files a command about that dataset reads.
    pub fn uncommitted(&self, dataset: Option<&str>) -> Result<Vec<String>, worktree::StatusError> {
        match dataset {
            None => worktree::uncommitted(self.repo.gix(), None),
            Some(d) => worktree::uncommitted(self.repo.gix(), Some(&worktree::files_of(d))),
        }
    }

    /// A text file at HEAD, if present.
    pub fn read(&self, path: &str) -> Result<Option<String>, StoreError> {
        self.read_at(self.head, path)
    }

    /// A text file at a commit, if present.
    pub fn read_at(&self, commit: ObjectId, path: &str) -> Result<Option<String>, StoreError> {
        match self.repo.read_at(commit, path)? {
            None => Ok(None),
            Some(bytes) => utf8(bytes, path).map(Some),
        }
    }

    /// A text file at HEAD, as [`Store::read`] finds it; a file directly in `history/` or
    /// `notifications/` is found through the folder's entries read once, not by a lookup from
    /// the root tree that scans the folder's thousands of entries again for every file.
    pub fn read_listed(&self, path: &str) -> Result<Option<String>, StoreError> {
        let listed = [
            (layout::HISTORY, &self.history_dir),
            (layout::NOTIFICATIONS, &self.notifications_dir),
        ];
        for (dir, cell) in listed {
            let Some(name) = path
                .strip_prefix(dir)
                .and_then(|rest| rest.strip_prefix('/'))
            else {
                continue;
            };
            if name.is_empty() || name.contains('/') || name == "." || name == ".." {
                break;
            }
            return match self.dir(cell, dir)?.get(name) {
                Some(e) if e.is_blob => Ok(Some(self.text(e.id, path)?)),
                _ => Ok(None),
            };
        }
        self.read(path)
    }

    /// A directory at HEAD, by entry name, read once.
    fn dir<'a>(
        &self,
        cell: &'a OnceCell<HashMap<String, TreeEntry>>,
        dir: &str,
    ) -> Result<&'a HashMap<String, TreeEntry>, StoreError> {
        if let Some(map) = cell.get() {
            return Ok(map);
        }
        let map = self
            .repo
            .tree_entries_at(self.head, dir)?
            .into_iter()
            .map(|e| (e.name.clone(), e))
            .collect();
        Ok(cell.get_or_init(|| map))
    }

    /// The files of one dataset's folder, read once.
    fn dataset_files(&self, dataset: &str) -> Result<Rc<Vec<TreeEntry>>, StoreError> {
        Self::check_dataset(dataset)?;
        if let Some(files) = self.dataset_files.borrow().get(dataset) {
            return Ok(files.clone());
        }
        let files = match self
            .dir(&self.contracts_dir, layout::CONTRACTS)?
            .get(dataset)
        {
            Some(e) if e.is_dir => self.repo.tree_entries(e.id)?,
            _ => Vec::new(),
        };
        let files = Rc::new(files);
        self.dataset_files
            .borrow_mut()
            .insert(dataset.to_string(), files.clone());
        Ok(files)
    }

    fn text(&self, id: ObjectId, path: &str) -> Result<String, StoreError> {
        utf8(self.repo.blob(id)?, path)
    }

    /// Every dataset with a contract folder, by name.
    pub fn datasets(&self) -> Result<Vec<String>, StoreError> {
        let mut out: Vec<String> = self
            .dir(&self.contracts_dir, layout::CONTRACTS)?
            .values()
            .filter(|e| e.is_dir && is_dataset_name(&e.name))
            .map(|e| e.name.clone())
            .collect();
        out.sort();
        Ok(out)
    }

    fn check_dataset(dataset: &str) -> Result<(), StoreError> {
        if is_dataset_name(dataset) {
            Ok(())
        } else {
            Err(StoreError::BadDataset(dataset.to_string()))
        }
    }

    /// The versions of a dataset, oldest first, from the file names alone.
    pub fn versions(&self, dataset: &str) -> Result<Vec<Version>, StoreError> {
        let mut out: Vec<Version> = self
            .dataset_files(dataset)?
            .iter()
            .filter_map(|f| f.name.strip_suffix(".toml"))
            .filter_map(|stem| Version::parse(stem).ok())
            .collect();
        out.sort();
        Ok(out)
    }

    /// Refuse `dataset` when this store has no contract of it ([`Store::unknown_dataset`]).
    pub fn require_dataset(&self, dataset: &str) -> Result<(), StoreError> {
        if self.versions(dataset)?.is_empty() {
            return Err(self.unknown_dataset(dataset));
        }
        Ok(())
    }

    /// The datasets a command covers: `dataset` alone when it names one (refused when the
    /// store has no contract of it), else every dataset.
    pub fn datasets_or_all(&self, dataset: Option<&str>) -> Result<Vec<String>, StoreError> {
        match dataset {
            Some(d) => {
                self.require_dataset(d)?;
                Ok(vec![d.to_string()])
            }
            None => self.datasets(),
        }
    }

    /// A command's target, `dataset@version` or `dataset` alone for its newest version, as
    /// (dataset, version). The version of `dataset@version` is not checked here.
    pub fn resolve_target(&self, target: &str) -> Result<(String, String), StoreError> {
        match target.split_once('@') {
            Some((d, v)) => Ok((d.to_string(), v.to_string())),
            None => {
                let versions = self.versions(target)?;
                let newest = versions
                    .last()
                    .ok_or_else(|| self.unknown_dataset(target))?;
                Ok((target.to_string(), newest.to_string()))
            }
        }
    }

    /// The error for a dataset this store has no contract of, with the nearest known name or,
    /// when there are few, the list of them.
    pub fn unknown_dataset(&self, dataset: &str) -> StoreError {
        let known = self.datasets().unwrap_or_default();
        let hint =
            crate::model::suggest::hint(dataset, known.iter().map(String::as_str), "datasets")
                .map(|h| format!("; {h}"))
                .unwrap_or_default();
        StoreError::UnknownDataset {
            dataset: dataset.to_string(),
            hint,
        }
    }

    /// One contract version, checked against its path.
    pub fn contract(
        &self,
        dataset: &str,
        version: &str,
        strictness: Strictness,
    ) -> Result<Contract, StoreError> {
        let id = self.contract_blob(dataset, version)?;
        self.contract_in_blob(dataset, version, id, strictness)
    }

    /// The blob of one contract version at HEAD.
    pub fn contract_blob(&self, dataset: &str, version: &str) -> Result<ObjectId, StoreError> {
        let file = format!("{version}.toml");
        self.dataset_files(dataset)?
            .iter()
            .find(|e| e.name == file && !e.is_dir && !e.is_link)
            .map(|e| e.id)
            .ok_or_else(|| StoreError::UnknownVersion {
                dataset: dataset.to_string(),
                version: version.to_string(),
            })
    }

    /// The texts of many blobs, each read as the path beside it, in the order given. They are
    /// read shallowest in their pack's delta chains first: git's packing chains a file with
    /// files of the same name (`1.0.0.toml` of one dataset with that of another, each version
    /// a delta of a neighbour), so read in that order each blob is one delta away from one
    /// just read, which gix's pack cache holds, instead of a chain replayed from its whole
    /// object for every read.
    pub fn read_texts(&self, blobs: &[(ObjectId, String)]) -> Vec<Result<String, StoreError>> {
        let mut order: Vec<(u32, usize)> = blobs
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (self.repo.delta_depth(*id), i))
            .collect();
        order.sort_unstable();
        let mut out: Vec<Option<Result<String, StoreError>>> =
            std::iter::repeat_with(|| None).take(blobs.len()).collect();
        for (_, i) in order {
            let (id, path) = &blobs[i];
            out[i] = Some(self.text(*id, path));
        }
        out.into_iter()
            .map(|text| text.expect("every blob is read"))
            .collect()
    }

    /// The text of a contract version in `blob`, to be judged by [`parse_contract_text`]
    /// (which may run on another thread). Together they are [`Store::contract_in_blob`].
    pub fn contract_text(
        &self,
        dataset: &str,
        version: &str,
        id: ObjectId,
    ) -> Result<String, StoreError> {
        self.text(id, &layout::contract(dataset, version))
    }

    /// One contract version as held by a blob: HEAD's, or the content it was published with
    /// when a later commit edited it (`check` judges the history by what was published).
    pub fn contract_in_blob(
        &self,
        dataset: &str,
        version: &str,
        id: ObjectId,
        strictness: Strictness,
    ) -> Result<Contract, StoreError> {
        let text = self.contract_text(dataset, version, id)?;
        parse_contract_text(&self.config, dataset, version, &text, strictness)
    }

    /// Every version of a dataset, oldest first.
    pub fn contracts(
        &self,
        dataset: &str,
        strictness: Strictness,
    ) -> Result<Vec<Contract>, StoreError> {
        let versions = self.versions(dataset)?;
        if versions.is_empty() {
            return Err(self.unknown_dataset(dataset));
        }
        versions
            .iter()
            .map(|v| self.contract(dataset, &v.to_string(), strictness))
            .collect()
    }

    /// The dataset's history file as text, if there is one.
    fn history_text(&self, dataset: &str) -> Result<Option<String>, StoreError> {
        self.in_history(dataset, &layout::history(dataset))
    }

    /// One of a dataset's files in `history/` (its history, waivers or release records), found
    /// through the folder's entries read once: a path lookup from the root tree would scan the
    /// folder's thousands of entries again for every dataset.
    fn in_history(&self, dataset: &str, path: &str) -> Result<Option<String>, StoreError> {
        Self::check_dataset(dataset)?;
        let name = path
            .strip_prefix(layout::HISTORY)
            .and_then(|rest| rest.strip_prefix('/'))
            .unwrap_or(path);
        match self.dir(&self.history_dir, layout::HISTORY)?.get(name) {
            Some(e) if !e.is_dir && !e.is_link => Ok(Some(self.text(e.id, path)?)),
            _ => Ok(None),
        }
    }

    /// The dataset's history file (empty when there is none yet).
    pub fn history(&self, dataset: &str) -> Result<History, StoreError> {
        match self.history_text(dataset)? {
            None => Ok(History::default()),
            Some(text) => Ok(parse_history(&layout::history(dataset), &text)?),
        }
    }

    /// The dataset's waivers (none when it has no waivers file).
    pub fn waivers(&self, dataset: &str) -> Result<crate::model::waiver::Waivers, StoreError> {
        let path = layout::waivers(dataset);
        match self.in_history(dataset, &path)? {
            None => Ok(Default::default()),
            Some(text) => Ok(crate::model::waiver::parse_waivers(
                &path,
                dataset,
                &text,
                self.config.policy.max_waiver_days,
            )?),
        }
    }

    /// `path`'s content at HEAD with `text` appended: the one way ledgers and histories grow.
    pub fn appended(&self, path: &str, header: &str, text: &str) -> Result<Vec<u8>, StoreError> {
        let mut content = self.read(path)?.unwrap_or_else(|| header.to_string());
        content.push_str(text);
        Ok(content.into_bytes())
    }

    /// Refuse `paths` as a commit of them on this HEAD would ([`GitError::Symlink`]), without
    /// writing anything: a dry run says what its real run would refuse.
    pub fn refuse_writing(&self, paths: &[&str]) -> Result<(), StoreError> {
        Ok(self.repo.refuse_symlinks(Some(self.head), paths)?)
    }

    /// Write `files` as one commit on top of the HEAD this store was opened at: one attempt of
    /// [`Store::transact`] (the retries are the caller's). A commit that landed is a success even
    /// when the checkout lags behind it (a warning on stderr; the next writer repairs it). For a
    /// store opened with a remote, the commit is pushed; a rejected push leaves the local branch
    /// at the remote's new head and is [`GitError::Moved`].
    pub fn commit(
        &self,
        files: &[(String, Vec<u8>)],
        message: &str,
    ) -> Result<ObjectId, StoreError> {
        self.commit_once(files, message)
    }
}

/// Read `items` on this thread, `per_batch` at a time (`read` returns one result per item),
/// while the batches read before are judged on every core: the store is not shared between threads, and parsing what it read
/// is most of the work. Returns the judgements in the order of `items`, or the first error
/// `read` returned (nothing after it is read).
pub fn read_and_judge<I, R, O, E>(
    items: &[I],
    per_batch: usize,
    mut read: impl FnMut(&[I]) -> Result<Vec<R>, E>,
    judge: impl Fn(R) -> O + std::marker::Sync,
) -> Result<Vec<O>, E>
where
    R: Send,
    O: Send,
{
    use rayon::prelude::*;
    if items.len() <= per_batch {
        // One batch: nothing to overlap, and no thread to start.
        return Ok(read(items)?.into_iter().map(judge).collect());
    }
    std::thread::scope(|scope| {
        let (batches, received) = std::sync::mpsc::sync_channel::<Vec<R>>(2);
        let judge = &judge;
        let judging = scope.spawn(move || {
            let mut out: Vec<O> = Vec::new();
            for batch in received {
                out.par_extend(batch.into_par_iter().map(judge));
            }
            out
        });
        let mut outcome = Ok(());
        for chunk in items.chunks(per_batch.max(1)) {
            match read(chunk) {
                Ok(batch) => {
                    if batches.send(batch).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        drop(batches);
        let out = match judging.join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        outcome.map(|()| out)
    })
}
