//! What the git history proves about the store, for `check` and `log`: which commit added each
//! file and each record, and every commit that edited a published contract or rewrote an
//! append-only file instead of appending to it. The rules of what may change are the model's
//! (`model::consistency::appended_only`); walking the commits is the store's.

use std::collections::HashMap;

use gix::ObjectId;

use serde::Serialize;

use crate::model::consistency::appended_only;
use crate::model::history::{ChangeRecord, SunsetRecord};
use crate::store::{layout, utf8, CommitChanges, Repo, Store, StoreError};

/// The commit that added a file or a record.
#[derive(Debug, Serialize, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: String,
    /// `Name <email>` of the author.
    pub author: String,
    /// The author time, RFC 3339.
    pub date: String,
}

/// A commit that broke the store's immutability rules.
#[derive(Debug, Clone)]
pub struct Violation {
    pub path: String,
    pub commit: CommitInfo,
    pub message: String,
}

/// The first-parent history of the store's files from `since` (exclusive) to HEAD.
#[derive(Debug, Default)]
pub struct HistoryProof {
    /// How many commits were walked.
    pub commits: usize,
    /// The commit that added each file still or once present.
    pub origins: HashMap<String, CommitInfo>,
    /// Each deletion, edit of a published contract and rewrite of an append-only file.
    pub violations: Vec<Violation>,
    /// The blob each contract file was first added with, for the files a later commit edited:
    /// the rest of the history is judged by what was published, so one edit is one finding.
    pub published: HashMap<String, ObjectId>,
}

/// The two kinds of record a history file holds, by their TOML array header.
pub const RECORD_HEADERS: [&str; 2] = ["[[change]]", "[[sunset]]"];

/// Which commit appended each record: (history file, header, index in the file) → commit.
pub type RecordOrigins = HashMap<(String, &'static str, usize), CommitInfo>;

fn info(c: &CommitChanges) -> CommitInfo {
    CommitInfo {
        id: c.id.to_string(),
        author: format!("{} <{}>", c.author.name, c.author.email),
        date: c.time.to_rfc3339(),
    }
}

fn count(text: &str, header: &str) -> usize {
    text.lines().filter(|l| l.trim_end() == header).count()
}

/// The repository of a store, to prove its history on another thread while the store's own
/// thread reads the files at HEAD ([`Store::prover`]).
pub struct Prover(crate::store::git::SendRepo);

impl Prover {
    /// [`Store::prove_history`], on the thread this is called on.
    pub fn prove_history(self, since: Option<&str>) -> Result<HistoryProof, StoreError> {
        prove_history(&self.0.open()?, since)
    }
}

/// One rewrite of an append-only file: its place in the walk (commit, change), the old blob
/// and the new.
type Rewrite = ((usize, usize), ObjectId, ObjectId);

/// [`Store::prove_history`] over `repo`.
fn prove_history(repo: &Repo, since: Option<&str>) -> Result<HistoryProof, StoreError> {
    let since = match since {
        Some(rev) => Some(repo.resolve(rev)?),
        None => None,
    };
    let walk = repo.history(
        since,
        &[
            &format!("{}/", layout::CONTRACTS),
            &format!("{}/", layout::HISTORY),
            &format!("{}/", layout::NOTIFICATIONS),
        ],
    )?;
    let mut proof = HistoryProof {
        commits: walk.len(),
        ..HistoryProof::default()
    };
    // Violations with their place in the walk (commit, change): the append-only proofs
    // are read out of walk order below, and the report keeps the walk's order.
    let mut violations: Vec<((usize, usize), Violation)> = Vec::new();
    // Each append-only file's rewrites, by path in order of first appearance: (place,
    // old blob, new blob), oldest first.
    let mut appends: Vec<(&str, Vec<Rewrite>)> = Vec::new();
    let mut append_of: HashMap<&str, usize> = HashMap::new();
    let mut first_blob: HashMap<String, ObjectId> = HashMap::new();
    for (ci, commit) in walk.iter().enumerate() {
        for (chi, change) in commit.changes.iter().enumerate() {
            let path = &change.path;
            if path.ends_with("/.gitkeep") {
                continue;
            }
            let mut violation = |message: &str| {
                violations.push((
                    (ci, chi),
                    Violation {
                        path: path.clone(),
                        commit: info(commit),
                        message: message.to_string(),
                    },
                ))
            };
            let is_contract = path.starts_with(&format!("{}/", layout::CONTRACTS));
            match (change.old, change.new) {
                (None, Some(new)) => {
                    proof.origins.insert(path.clone(), info(commit));
                    if is_contract {
                        first_blob.entry(path.clone()).or_insert(new);
                    }
                }
                (Some(_), None) if is_contract => {
                    violation("a published contract was deleted");
                }
                (Some(_), None) => violation("an append-only file was deleted"),
                (Some(_), Some(_)) if is_contract => {
                    violation("a published contract was edited");
                    if let Some(first) = first_blob.get(path) {
                        proof.published.insert(path.clone(), *first);
                    }
                }
                (Some(old), Some(new)) => {
                    let i = *append_of.entry(path.as_str()).or_insert_with(|| {
                        appends.push((path.as_str(), Vec::new()));
                        appends.len() - 1
                    });
                    appends[i].1.push(((ci, chi), old, new));
                }
                (None, None) => {}
            }
        }
    }
    // Every rewrite of an append-only file is a pair of its versions, and the new side of
    // one is the old side of the next. Reading one file's versions in a row, from the end
    // of its delta chain that is stored whole (the newest in a clone or after `git gc`),
    // reads each version once, as one delta of a version just read; in commit order the
    // oldest versions would replay the whole chain every time.
    let mut failed: Option<((usize, usize), StoreError)> = None;
    for (path, pairs) in &appends {
        let newest_first = match (pairs.first(), pairs.last()) {
            (Some(first), Some(last)) => repo.delta_depth(last.2) <= repo.delta_depth(first.1),
            _ => true,
        };
        let mut kept: Vec<(ObjectId, std::rc::Rc<str>)> = Vec::with_capacity(2);
        let mut read = |id: ObjectId| -> Result<std::rc::Rc<str>, StoreError> {
            if let Some((_, text)) = kept.iter().find(|(k, _)| *k == id) {
                return Ok(text.clone());
            }
            let text: std::rc::Rc<str> = utf8(repo.blob(id)?, path)?.into();
            if kept.len() == 2 {
                kept.remove(0);
            }
            kept.push((id, text.clone()));
            Ok(text)
        };
        let mut prove = |&(at, old, new): &Rewrite| {
            // The shallower side first, so the other is one delta away.
            let (new_text, old_text) = if newest_first {
                let n = read(new);
                (n, read(old))
            } else {
                let o = read(old);
                (read(new), o)
            };
            // A version that cannot be read fails the walk as it would in commit order:
            // the first such place, the old side before the new.
            let texts = old_text.and_then(|o| new_text.map(|n| (o, n)));
            match texts {
                Err(e) => {
                    if failed.as_ref().is_none_or(|(first, _)| at < *first) {
                        failed = Some((at, e));
                    }
                }
                Ok((old, new)) => {
                    if let Err(what) = appended_only(&old, &new) {
                        let commit = &walk[at.0];
                        violations.push((
                            at,
                            Violation {
                                path: path.to_string(),
                                commit: info(commit),
                                message: format!(
                                    "an append-only file was rewritten, not appended to: \
                                     {what}"
                                ),
                            },
                        ));
                    }
                }
            }
        };
        if newest_first {
            pairs.iter().rev().for_each(&mut prove);
        } else {
            pairs.iter().for_each(&mut prove);
        }
    }
    if let Some((_, e)) = failed {
        return Err(e);
    }
    violations.sort_by_key(|(at, _)| *at);
    proof.violations = violations.into_iter().map(|(_, v)| v).collect();
    Ok(proof)
}

impl Store {
    /// Walk the history of contracts, change histories and ledgers from `since` (a revision;
    /// `None` for the root) and prove that published contracts were only ever added and that
    /// append-only files only grew at their end.
    pub fn prove_history(&self, since: Option<&str>) -> Result<HistoryProof, StoreError> {
        prove_history(&self.repo, since)
    }

    /// A handle on this store's repository with which another thread may prove the history
    /// ([`Prover::prove_history`]).
    pub fn prover(&self) -> Prover {
        Prover(self.repo.for_another_thread())
    }

    /// Which commit appended each change and sunset record of the history files (of `only`,
    /// or of every dataset).
    pub fn record_origins(&self, only: Option<&str>) -> Result<RecordOrigins, StoreError> {
        let prefix = match only {
            Some(d) => layout::history(d),
            None => format!("{}/", layout::HISTORY),
        };
        let mut out = RecordOrigins::new();
        for commit in &self.repo.history(None, &[prefix.as_str()])? {
            for change in &commit.changes {
                let Some(new) = change.new else { continue };
                let text = |id| -> Result<String, StoreError> {
                    Ok(String::from_utf8_lossy(&self.repo.blob(id)?).into_owned())
                };
                let new_text = text(new)?;
                let old_text = match change.old {
                    Some(old) => text(old)?,
                    None => String::new(),
                };
                for header in RECORD_HEADERS {
                    for i in count(&old_text, header)..count(&new_text, header) {
                        out.insert((change.path.clone(), header, i), info(commit));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Files under `contracts/` that are not ours: entries that are not dataset folders, and
    /// files in a dataset folder not named `<version>.toml`; each with why.
    pub fn stray_contract_files(&self) -> Result<Vec<(String, &'static str)>, StoreError> {
        let mut out = Vec::new();
        let mut datasets = Vec::new();
        for (name, is_dir) in self.repo.entries_at(self.head, layout::CONTRACTS)? {
            if name == ".gitkeep" {
                continue;
            }
            if is_dir && crate::model::is_dataset_name(&name) {
                datasets.push(name);
            } else {
                out.push((
                    format!("{}/{name}", layout::CONTRACTS),
                    "not a dataset folder (names match [a-z0-9][a-z0-9_-]{0,63})",
                ));
            }
        }
        for dataset in datasets {
            let dir = format!("{}/{dataset}", layout::CONTRACTS);
            // The folder as read once for the command, not looked up again from the root.
            for f in self.dataset_files(&dataset)?.iter().map(|e| &e.name) {
                let stem = f.strip_suffix(".toml");
                if stem.is_none_or(|s| semver::Version::parse(s).is_err()) {
                    out.push((
                        format!("{dir}/{f}"),
                        "not a contract file (names are <version>.toml)",
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Every symbolic link in the tree at HEAD.
    pub fn symlinks(&self) -> Result<Vec<String>, StoreError> {
        Ok(self.repo.symlinks_at(self.head)?)
    }

    /// The `.toml` files of a store directory (`history`, `notifications`) at HEAD, as paths.
    pub fn toml_files(&self, dir: &str) -> Result<Vec<String>, StoreError> {
        Ok(self
            .repo
            .list_at(self.head, dir)?
            .into_iter()
            .filter(|f| f.ends_with(".toml"))
            .map(|f| format!("{dir}/{f}"))
            .collect())
    }
}

/// One line of `contracts log`: a change record or a sunset event, with the commit that
/// appended it.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum LogEntry {
    Change {
        dataset: String,
        #[serde(flatten)]
        record: ChangeRecord,
        commit: Option<CommitInfo>,
    },
    Sunset {
        dataset: String,
        #[serde(flatten)]
        record: SunsetRecord,
        commit: Option<CommitInfo>,
    },
}

impl LogEntry {
    /// The dataset whose history holds the entry.
    pub fn dataset(&self) -> &str {
        match self {
            LogEntry::Change { dataset, .. } | LogEntry::Sunset { dataset, .. } => dataset,
        }
    }

    /// The commit that appended the entry, when the walk found it.
    pub fn commit(&self) -> Option<&CommitInfo> {
        match self {
            LogEntry::Change { commit, .. } | LogEntry::Sunset { commit, .. } => commit.as_ref(),
        }
    }
}

/// The change records and sunset events of `datasets`, each with the commit that appended it,
/// newest first. `only` narrows the git walk to one dataset's history file.
pub fn log_entries(
    store: &Store,
    datasets: &[String],
    only: Option<&str>,
) -> Result<Vec<LogEntry>, StoreError> {
    let by_record = store.record_origins(only)?;
    let mut entries = Vec::new();
    for d in datasets {
        let path = layout::history(d);
        let h = store.history(d)?;
        for (i, r) in h.change.into_iter().enumerate() {
            entries.push(LogEntry::Change {
                dataset: d.clone(),
                commit: by_record.get(&(path.clone(), "[[change]]", i)).cloned(),
                record: r,
            });
        }
        for (i, r) in h.sunset.into_iter().enumerate() {
            entries.push(LogEntry::Sunset {
                dataset: d.clone(),
                commit: by_record.get(&(path.clone(), "[[sunset]]", i)).cloned(),
                record: r,
            });
        }
    }
    let at = |e: &LogEntry| match e {
        LogEntry::Change { record, .. } => record.at,
        LogEntry::Sunset { record, .. } => record.at,
    };
    // Newest first, so records of one proposal appear in reverse file order.
    entries.reverse();
    entries.sort_by_key(|e| std::cmp::Reverse(at(e)));
    Ok(entries)
}
