use std::collections::HashMap;

use serde::Serialize;

use super::output::{print_json, table};
use super::{CommandError, Context, Format, Outcome};
use crate::model::audit::{appended_only, audit_dataset};
use crate::model::history::parse_history;
use crate::model::{Contract, Strictness};
use crate::store::{layout, CommitChanges, Store, StoreError};

/// The CI gate over the whole store and its git history: every file parses, every clause has
/// a kind, every recorded direction and verdict equals the one re-derived from the contract
/// files, bumps suffice, windows keep the policy, never three lines live, no published
/// contract was ever edited or deleted, and history and ledger files only grew at their end.
///
/// Each finding names the file, the commit and its author. Exit 1 on any finding.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prove immutability from the commit after REV [default: `[store] since`, or the root]
    #[arg(long, value_name = "REV")]
    since: Option<String>,
}

#[derive(Serialize, Clone)]
struct Finding {
    file: String,
    commit: Option<String>,
    author: Option<String>,
    message: String,
}

#[derive(Serialize)]
struct Report {
    datasets: usize,
    contracts: usize,
    commits: usize,
    findings: Vec<Finding>,
}

/// Who added a file, from the walk.
struct Origin {
    commit: String,
    author: String,
}

fn author(c: &CommitChanges) -> String {
    format!("{} <{}>", c.author.name, c.author.email)
}

fn text_of(store: &Store, id: gix::ObjectId, path: &str) -> Result<String, StoreError> {
    String::from_utf8(store.repo().blob(id)?).map_err(|_| StoreError::NotText {
        path: path.to_string(),
    })
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    ctx.refuse_junit("check")?;
    let store = ctx.store()?;
    let mut findings = Vec::new();

    // The history first: it proves immutability and says who added each file.
    let since = match args
        .since
        .as_deref()
        .or(store.config().store.since.as_deref())
    {
        Some(rev) => Some(store.repo().resolve(rev).map_err(StoreError::from)?),
        None => None,
    };
    let walk = store
        .repo()
        .history(
            since,
            &[
                &format!("{}/", layout::CONTRACTS),
                &format!("{}/", layout::HISTORY),
                &format!("{}/", layout::NOTIFICATIONS),
            ],
        )
        .map_err(StoreError::from)?;
    let mut origin: HashMap<String, Origin> = HashMap::new();
    for commit in &walk {
        for change in &commit.changes {
            let path = &change.path;
            if path.ends_with("/.gitkeep") {
                continue;
            }
            let here = |message: String| Finding {
                file: path.clone(),
                commit: Some(commit.id.to_string()),
                author: Some(author(commit)),
                message,
            };
            let is_contract = path.starts_with(&format!("{}/", layout::CONTRACTS));
            match (change.old, change.new) {
                (None, Some(_)) => {
                    origin.insert(
                        path.clone(),
                        Origin {
                            commit: commit.id.to_string(),
                            author: author(commit),
                        },
                    );
                }
                (Some(_), None) if is_contract => {
                    findings.push(here("a published contract was deleted".into()));
                }
                (Some(_), None) => {
                    findings.push(here("an append-only file was deleted".into()));
                }
                (Some(_), Some(_)) if is_contract => {
                    findings.push(here("a published contract was edited".into()));
                }
                (Some(old), Some(new)) => {
                    let old = text_of(&store, old, path)?;
                    let new = text_of(&store, new, path)?;
                    if let Err(what) = appended_only(&old, &new) {
                        findings.push(here(format!(
                            "an append-only file was rewritten, not appended to: {what}"
                        )));
                    }
                }
                (None, None) => {}
            }
        }
    }

    // Then the state at HEAD, re-derived from the files.
    let datasets = store.datasets()?;
    let mut contracts_seen = 0;
    for dataset in &datasets {
        let mut contracts: Vec<Contract> = Vec::new();
        for v in store.versions(dataset)? {
            let path = layout::contract(dataset, &v.to_string());
            contracts_seen += 1;
            let found_at = |message: String| {
                let o = origin.get(&path);
                Finding {
                    file: path.clone(),
                    commit: o.map(|o| o.commit.clone()),
                    author: o.map(|o| o.author.clone()),
                    message,
                }
            };
            match store.contract(dataset, &v.to_string(), Strictness::Writing) {
                Ok(c) => contracts.push(c),
                Err(StoreError::Toml(e)) => findings.push(found_at(e.to_string())),
                Err(e @ StoreError::Misnamed { .. }) => findings.push(found_at(e.to_string())),
                Err(e) => return Err(e.into()),
            }
        }
        let history_path = layout::history(dataset);
        let history = match store.read(&history_path)? {
            None => Default::default(),
            Some(text) => match parse_history(&history_path, &text) {
                Ok(h) => h,
                Err(e) => {
                    findings.push(Finding {
                        file: history_path.clone(),
                        commit: None,
                        author: None,
                        message: e.to_string(),
                    });
                    continue;
                }
            },
        };
        for p in audit_dataset(&contracts, &history, &store.config().policy) {
            let (file, o) = match &p.version {
                Some(v) => {
                    let path = layout::contract(dataset, v);
                    let o = origin.get(&path);
                    (path, o)
                }
                None => (history_path.clone(), None),
            };
            findings.push(Finding {
                file,
                commit: o.map(|o| o.commit.clone()),
                author: o.map(|o| o.author.clone()),
                message: p.message,
            });
        }
    }
    // Contract files outside a dataset folder, or not named after a version, are not ours.
    for (name, is_dir) in store
        .repo()
        .entries_at(store.head(), layout::CONTRACTS)
        .map_err(StoreError::from)?
    {
        if name == ".gitkeep" {
            continue;
        }
        if !is_dir || !crate::model::is_dataset_name(&name) {
            findings.push(Finding {
                file: format!("{}/{name}", layout::CONTRACTS),
                commit: None,
                author: None,
                message: "not a dataset folder (names match [a-z0-9][a-z0-9_-]{0,63})".into(),
            });
        }
    }
    for dataset in &datasets {
        let dir = format!("{}/{dataset}", layout::CONTRACTS);
        for f in store
            .repo()
            .list_at(store.head(), &dir)
            .map_err(StoreError::from)?
        {
            let stem = f.strip_suffix(".toml");
            if stem.is_none_or(|s| semver::Version::parse(s).is_err()) {
                findings.push(Finding {
                    file: format!("{dir}/{f}"),
                    commit: None,
                    author: None,
                    message: "not a contract file (names are <version>.toml)".into(),
                });
            }
        }
    }
    if let Some(text) = store.read(layout::CONSUMERS)? {
        if let Err(e) = crate::consumers::parse_registry(layout::CONSUMERS, &text) {
            findings.push(Finding {
                file: layout::CONSUMERS.to_string(),
                commit: None,
                author: None,
                message: e.to_string(),
            });
        }
    }
    // Ledgers and release records must at least parse; their shape is their writers' concern.
    for dir in [layout::HISTORY, layout::NOTIFICATIONS] {
        for f in store
            .repo()
            .list_at(store.head(), dir)
            .map_err(StoreError::from)?
        {
            if !f.ends_with(".toml") {
                continue;
            }
            let path = format!("{dir}/{f}");
            if let Some(text) = store.read(&path)? {
                if dir == layout::NOTIFICATIONS {
                    findings.extend(ledger_findings(&path, &text));
                    continue;
                }
                if let Err(e) = text.parse::<toml::Table>() {
                    findings.push(Finding {
                        file: path,
                        commit: None,
                        author: None,
                        message: format!("does not parse: {}", e.message().trim_end()),
                    });
                }
            }
        }
    }

    let report = Report {
        datasets: datasets.len(),
        contracts: contracts_seen,
        commits: walk.len(),
        findings,
    };
    match ctx.format {
        Format::Json => print_json(&report),
        _ => print_text(&report),
    }
    Ok(Outcome::findings_if(!report.findings.is_empty()))
}

/// A notice ledger must parse, and record each notice (consumer, line, milestone) once: a
/// second record means the notice went out twice.
fn ledger_findings(path: &str, text: &str) -> Vec<Finding> {
    let finding = |message: String| Finding {
        file: path.to_string(),
        commit: None,
        author: None,
        message,
    };
    match crate::notify::ledger::parse_ledger(path, text) {
        Err(e) => vec![finding(e.to_string())],
        Ok(ledger) => ledger
            .duplicates()
            .into_iter()
            .map(|((consumer, line, milestone), n)| {
                finding(format!(
                    "the notice to `{consumer}` for line {line} at {milestone} is recorded {n} \
                     times: it was sent more than once"
                ))
            })
            .collect(),
    }
}

fn print_text(r: &Report) {
    if r.findings.is_empty() {
        outln!(
            "ok: {} dataset(s), {} contract(s), {} commit(s) checked; no findings",
            r.datasets,
            r.contracts,
            r.commits
        );
        return;
    }
    let rows = r.findings.iter().map(|f| {
        vec![
            f.file.clone(),
            f.commit
                .as_deref()
                .map_or("-".to_string(), |c| c[..12].to_string()),
            f.author.clone().unwrap_or_else(|| "-".into()),
            f.message.clone(),
        ]
    });
    outln!("{}", table(&["file", "commit", "author", "finding"], rows));
    outln!(
        "{} finding(s) in {} dataset(s), {} contract(s), {} commit(s)",
        r.findings.len(),
        r.datasets,
        r.contracts,
        r.commits
    );
}
