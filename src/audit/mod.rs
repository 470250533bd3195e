//! The store audit behind `contracts check`: every finding about the store and its history,
//! each with its severity, file, place and the commit that caused it. Nothing here prints or
//! reads the clock: `check_store` is given the day, and the command renders what it returns.
//!
//! The proofs over the commits (immutability, who added what) are the store's
//! (`store::audit`); `files` judges the files at HEAD that are not contracts (registry,
//! ledgers, release records, waivers, log sources). The audit is a room of its own, above
//! `store`, `consumers`, `release` and `notify`, because it reads every one of their files:
//! inside `store` it would point the store up at the rooms that use it.

mod files;

use std::collections::HashMap;

use chrono::NaiveDate;
use serde::Serialize;

use crate::consumers::scan_report::ScanError;
use crate::model::consistency::audit_dataset;
use crate::model::history::{parse_history, History};
use crate::model::{Contract, Strictness, TomlErrors};
use crate::store::{layout, CommitInfo, GitError, HistoryProof, ObjectId, Store, StoreError};

/// Days before a live waiver's last day from which the audit warns that it ends.
pub const WAIVER_WARNING_DAYS: i64 = 14;

/// Why the audit could not run to the end (a finding is not an error: it is in the report):
/// the store or its consumption logs could not be read, as for any scan of them, or the
/// configured start of the history walk is unusable.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error(transparent)]
    Read(#[from] ScanError),
    /// `[store] since` in contracts.toml names a revision the walk cannot start from;
    /// `message` points at the value in the file.
    #[error("{message}")]
    ConfiguredSince {
        message: String,
        #[source]
        source: StoreError,
    },
}

impl From<StoreError> for AuditError {
    fn from(e: StoreError) -> Self {
        AuditError::Read(e.into())
    }
}

/// How much a finding matters: an error fails the gate, a warning only says something.
#[derive(Serialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One thing the audit found, in a file of the store (a path relative to its root).
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    pub file: String,
    /// 1-based line and column in the file at HEAD, where the finding has a place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// The commit (full id) and its author that caused the finding, when git names one.
    pub commit: Option<String>,
    pub author: Option<String>,
    pub message: String,
}

impl Finding {
    /// An error in `file`, with no place in it.
    pub fn error(file: impl Into<String>, by: Option<&CommitInfo>, message: String) -> Finding {
        Finding {
            severity: Severity::Error,
            file: file.into(),
            line: None,
            column: None,
            commit: by.map(|o| o.id.clone()),
            author: by.map(|o| o.author.clone()),
            message,
        }
    }

    /// The same finding placed at a 1-based line and column (a line of 0 is no place).
    pub fn at(self, line: usize, column: usize) -> Finding {
        Finding {
            line: (line > 0).then_some(line),
            column: (line > 0).then_some(column),
            ..self
        }
    }

    /// One finding per located mistake, each with its line and column.
    fn located(file: &str, by: Option<&CommitInfo>, errors: &TomlErrors) -> Vec<Finding> {
        errors
            .0
            .iter()
            .map(|e| Finding::error(file, by, e.to_string()).at(e.line, e.column))
            .collect()
    }
}

/// What the audit found, and how much it looked at.
#[derive(Serialize, Debug)]
pub struct Report {
    pub datasets: usize,
    pub contracts: usize,
    pub commits: usize,
    /// How many findings are errors and how many warnings.
    pub errors: usize,
    pub warnings: usize,
    pub findings: Vec<Finding>,
}

/// The report on a store whose `contracts.toml` does not read (bad TOML, a bad value, not
/// UTF-8), from the error that kept the store from opening: its mistakes are the findings.
/// Nothing else is judged, because every other rule reads that file: the clause kinds the
/// contracts are parsed with, the policy, `[store] since` and the consumption sources.
/// `None` for any other reason a store does not open.
pub fn unreadable_config(e: &StoreError) -> Option<Report> {
    let findings = match e {
        StoreError::Toml(errors) if errors.0.iter().all(|l| l.file == layout::CONFIG) => {
            Finding::located(layout::CONFIG, None, errors)
        }
        StoreError::NotText { path, .. } if path == layout::CONFIG => {
            vec![Finding::error(layout::CONFIG, None, e.to_string())]
        }
        _ => return None,
    };
    Some(Report {
        datasets: 0,
        contracts: 0,
        commits: 0,
        errors: findings.len(),
        warnings: 0,
        findings,
    })
}

/// Audit the whole store at HEAD and its history: every file parses, every recorded verdict
/// equals the one re-derived from the contracts, no published contract was edited, and
/// append-only files only grew. `since` is the revision the immutability proof starts after
/// (`None`: `[store] since`, or the root); `today` dates the waiver-ending warnings.
pub fn check_store(
    store: &Store,
    since: Option<&str>,
    today: NaiveDate,
) -> Result<Report, AuditError> {
    let config = store.config();
    let datasets = match store.datasets() {
        Ok(datasets) => datasets,
        Err(e) => {
            // The history is proved first: its failure is the one to tell.
            prove_from(|rev| store.prove_history(rev), config, since)?;
            return Err(e.into());
        }
    };
    // The history proves immutability and says who added each file; it is walked on a thread
    // of its own while this one reads the files at HEAD and the others parse and judge them.
    let prover = store.prover();
    let (proof, at_head) = std::thread::scope(|scope| {
        let proving =
            scope.spawn(move || prove_from(|rev| prover.prove_history(rev), config, since));
        let at_head = all_dataset_findings(store, None, &datasets);
        match proving.join() {
            Ok(proof) => (proof, at_head),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });
    let proof = proof?;
    let judged = match at_head {
        Ok(judged) if proof.published.is_empty() => judged,
        // A contract edited after it was published is judged by what was published, and a
        // file that did not read fails the audit where a single pass reading the published
        // contents would: both are read again, now that the history says what was published.
        _ => all_dataset_findings(store, Some(&proof.published), &datasets)?,
    };
    let mut findings: Vec<Finding> = proof
        .violations
        .iter()
        .map(|v| Finding::error(v.path.clone(), Some(&v.commit), v.message.clone()))
        .collect();

    // Then the state at HEAD, re-derived from the files, each finding about a contract blamed
    // on the commit that added it.
    let mut contracts_seen = 0;
    for (found, contracts) in judged {
        for (mut finding, added) in found {
            if let Some(by) = added.and_then(|path| proof.origins.get(&path)) {
                finding.commit = Some(by.id.clone());
                finding.author = Some(by.author.clone());
            }
            findings.push(finding);
        }
        contracts_seen += contracts;
    }
    files::tree_findings(store, &datasets, today, &mut findings)?;

    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    Ok(Report {
        datasets: datasets.len(),
        contracts: contracts_seen,
        commits: proof.commits,
        errors,
        warnings: findings.len() - errors,
        findings,
    })
}

/// The immutability proof from `since`, else from `[store] since`, else from the root. An
/// unusable revision from the file is reported at its place in the file.
fn prove_from(
    prove: impl FnOnce(Option<&str>) -> Result<HistoryProof, StoreError>,
    config: &crate::model::Config,
    since: Option<&str>,
) -> Result<HistoryProof, AuditError> {
    let configured = config.store.since.as_deref();
    match (since, configured) {
        (Some(rev), _) => Ok(prove(Some(rev))?),
        (None, Some(rev)) => prove(Some(rev)).map_err(|e| {
            let about_since = matches!(
                e,
                StoreError::Git(GitError::BadRev { .. } | GitError::SinceNotInHistory { .. })
            );
            if !about_since {
                return e.into();
            }
            AuditError::ConfiguredSince {
                message: config.error_at("store.since", &format!("[store] since: {e}")),
                source: e,
            }
        }),
        (None, None) => Ok(prove(None)?),
    }
}

/// How many datasets are read before their files are handed to the parsers.
const DATASETS_PER_BATCH: usize = 128;

/// A dataset's findings, each with the contract file whose adding commit it is blamed on
/// (filled in from the history's origins), and how many contracts the dataset has.
type Judged = (Vec<(Finding, Option<String>)>, usize);

/// The findings of every dataset's contracts and change history, in the order of `datasets`,
/// with the contents at HEAD, or, for the contracts in `published`, the blob each was
/// published with. One thread reads the files (the store is not shared between threads) while
/// the others parse and judge the batch read before; a dataset's findings depend on its files
/// alone, so they are the same as one thread's.
fn all_dataset_findings(
    store: &Store,
    published: Option<&HashMap<String, ObjectId>>,
    datasets: &[String],
) -> Result<Vec<Judged>, StoreError> {
    let config = store.config();
    crate::store::read_and_judge(
        datasets,
        DATASETS_PER_BATCH,
        |batch| read_datasets(store, published, batch),
        |files| judge_dataset(config, files),
    )
}

/// One dataset's contract and history files as read at HEAD (or, for a contract edited
/// after it was published, as published), for [`judge_dataset`].
struct DatasetFiles {
    dataset: String,
    /// Each version, oldest first, with its text or why it is not text.
    contracts: Vec<(String, Result<String, StoreError>)>,
    /// The history file: absent, its text, or why it is not text.
    history: Result<Option<String>, StoreError>,
}

/// Read what [`judge_dataset`] judges of each dataset of a batch, the contracts of them all
/// in one go (see [`Store::read_texts`]). A file that is not UTF-8 is kept as a finding to
/// make; any other failure to read ends the audit, at the first file in the order a single
/// pass would read them (each dataset's contracts, oldest first, then its history).
fn read_datasets(
    store: &Store,
    published: Option<&HashMap<String, ObjectId>>,
    datasets: &[String],
) -> Result<Vec<DatasetFiles>, StoreError> {
    type Plan = (Vec<String>, Vec<Result<ObjectId, StoreError>>);
    let plans: Vec<Result<Plan, StoreError>> = datasets
        .iter()
        .map(|dataset| {
            let versions: Vec<String> = store
                .versions(dataset)?
                .iter()
                .map(ToString::to_string)
                .collect();
            // A contract edited after it was published is judged by the content it was
            // published with (the edit is one violation of its own).
            let blobs = versions
                .iter()
                .map(
                    |v| match published.and_then(|p| p.get(&layout::contract(dataset, v))) {
                        Some(blob) => Ok(*blob),
                        None => store.contract_blob(dataset, v),
                    },
                )
                .collect();
            Ok((versions, blobs))
        })
        .collect();
    let wanted: Vec<(ObjectId, String)> = datasets
        .iter()
        .zip(&plans)
        .filter_map(|(d, plan)| plan.as_ref().ok().map(|p| (d, p)))
        .flat_map(|(d, (versions, blobs))| {
            versions
                .iter()
                .zip(blobs)
                .filter_map(move |(v, id)| Some((*id.as_ref().ok()?, layout::contract(d, v))))
        })
        .collect();
    let mut texts = store.read_texts(&wanted).into_iter();
    let mut out = Vec::with_capacity(datasets.len());
    for (dataset, plan) in datasets.iter().zip(plans) {
        let (versions, blobs) = plan?;
        let mut contracts = Vec::with_capacity(versions.len());
        for (version, blob) in versions.into_iter().zip(blobs) {
            blob?;
            match texts.next().expect("a text for every blob") {
                Ok(text) => contracts.push((version, Ok(text))),
                Err(e @ StoreError::NotText { .. }) => contracts.push((version, Err(e))),
                Err(e) => return Err(e),
            }
        }
        let history = match store.read_listed(&layout::history(dataset)) {
            Err(e @ StoreError::NotText { .. }) => Err(e),
            other => Ok(other?),
        };
        out.push(DatasetFiles {
            dataset: dataset.to_string(),
            contracts,
            history,
        });
    }
    Ok(out)
}

/// The findings of one dataset's contracts and change history, and how many contracts it
/// has.
fn judge_dataset(config: &crate::model::Config, files: DatasetFiles) -> Judged {
    let dataset = files.dataset.as_str();
    let count = files.contracts.len();
    let mut findings: Vec<(Finding, Option<String>)> = Vec::new();
    let mut contracts: Vec<Contract> = Vec::new();
    for (v, text) in &files.contracts {
        let path = layout::contract(dataset, v);
        let blamed = |f: Finding| (f, Some(path.clone()));
        let read = text.as_ref().map_err(ToString::to_string).map(|text| {
            crate::store::parse_contract_text(config, dataset, v, text, Strictness::Writing)
        });
        match read {
            Ok(Ok(c)) => contracts.push(c),
            Ok(Err(StoreError::Toml(e))) => {
                findings.extend(Finding::located(&path, None, &e).into_iter().map(blamed))
            }
            Ok(Err(e)) => findings.push(blamed(Finding::error(path.clone(), None, e.to_string()))),
            Err(not_text) => findings.push(blamed(Finding::error(path.clone(), None, not_text))),
        }
    }
    let history_path = layout::history(dataset);
    let history: History = match files.history {
        Err(e) => {
            findings.push((Finding::error(history_path, None, e.to_string()), None));
            return (findings, count);
        }
        Ok(None) => Default::default(),
        Ok(Some(text)) => match parse_history(&history_path, &text) {
            Ok(h) => h,
            Err(e) => {
                let located = Finding::located(&history_path, None, &e);
                findings.extend(located.into_iter().map(|f| (f, None)));
                return (findings, count);
            }
        },
    };
    for p in audit_dataset(&contracts, &history, &config.policy) {
        findings.push(match &p.version {
            Some(v) => {
                let path = layout::contract(dataset, v);
                (Finding::error(path.clone(), None, p.message), Some(path))
            }
            None => (Finding::error(history_path.clone(), None, p.message), None),
        });
    }
    (findings, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_at_line_zero_has_no_place() {
        let f = Finding::error("a.toml", None, "m".into()).at(0, 4);
        assert_eq!((f.line, f.column), (None, None));
        let f = Finding::error("a.toml", None, "m".into()).at(3, 4);
        assert_eq!((f.line, f.column), (Some(3), Some(4)));
    }

    #[test]
    fn a_finding_names_the_commit_and_author_that_caused_it() {
        let by = CommitInfo {
            id: "c0ffee".into(),
            author: "A <a@example.org>".into(),
            date: "2026-01-01T00:00:00+00:00".into(),
        };
        let f = Finding::error("a.toml", Some(&by), "m".into());
        assert_eq!(f.commit.as_deref(), Some("c0ffee"));
        assert_eq!(f.author.as_deref(), Some("A <a@example.org>"));
        assert_eq!(f.severity, Severity::Error);
    }

    /// A store committed with the git CLI: the default config and one waivers file whose
    /// only waiver covers 2026-12-01..=2026-12-10.
    fn store_with_a_waiver() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(["-c", "user.name=Ada", "-c", "user.email=ada@example.org"])
                .args(args)
                .current_dir(dir.path())
                .output()
                .expect("git runs");
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        git(&["init", "-q", "-b", "main"]);
        let config = include_str!("../../templates/contracts.toml");
        std::fs::write(dir.path().join(layout::CONFIG), config).unwrap();
        std::fs::create_dir(dir.path().join(layout::HISTORY)).unwrap();
        let waiver = "[[waiver]]\nid = \"places:all:max_null_fraction.pop_est:2026-12-01\"\n\
            clause = \"max_null_fraction.pop_est\"\ngranted = 2026-12-01\nuntil = 2026-12-10\n\
            at = 2026-12-01T09:00:00Z\nby = \"Ada <ada@example.org>\"\nreason = \"outage\"\n";
        let waivers = format!("{}/places.waivers.toml", layout::HISTORY);
        std::fs::write(dir.path().join(&waivers), waiver).unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "a store with a waiver"]);
        dir
    }

    #[test]
    fn the_day_the_waiver_warning_depends_on_is_an_argument() {
        let dir = store_with_a_waiver();
        let store = Store::open(dir.path()).unwrap();
        let warnings = |today: &str| {
            let report = check_store(&store, None, today.parse().unwrap()).unwrap();
            assert_eq!(report.errors, 0, "{:?}", report.findings);
            assert_eq!(report.warnings, report.findings.len());
            report.findings
        };
        let near_the_end = warnings("2026-12-05");
        assert_eq!(near_the_end.len(), 1, "{near_the_end:?}");
        assert_eq!(near_the_end[0].severity, Severity::Warning);
        assert_eq!(near_the_end[0].file, "history/places.waivers.toml");
        assert!(
            near_the_end[0].message.contains("in 5 days"),
            "{near_the_end:?}"
        );
        // After its last day the waiver is over, and nothing is said of it.
        assert_eq!(warnings("2026-12-11"), Vec::new());
    }
}
