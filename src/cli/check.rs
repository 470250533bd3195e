use serde::Serialize;

use super::context::{print_ci, shown_path};
use super::output::{key, print_json, table, text, whole};
use super::{CommandError, Context, Format, Outcome};
use crate::model::consistency::audit_dataset;
use crate::model::history::parse_history;
use crate::model::{Contract, Strictness, TomlErrors};
use crate::store::{layout, GitError, Store, StoreError};

/// The CI gate: the whole store and its history are consistent
///
/// The CI gate over the whole store and its git history: every file parses, every clause has
/// a kind, every recorded direction and verdict equals the one re-derived from the contract
/// files, bumps suffice, windows keep the policy, never three lines live, no published
/// contract was ever edited or deleted, and history, waiver and ledger files only grew at
/// their end.
///
/// Each finding names the file, the commit and its author, and has a severity. An error
/// fails the gate; a warning (a live waiver that ends within 14 days of --today) is said on
/// stderr, or as a warning-level entry in --format json, github and sarif, and never changes
/// the exit code. Exit 1 on any error.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prove immutability from the commit after REV [default: `[store] since`, or the root]
    #[arg(long, value_name = "REV")]
    since: Option<String>,
}

/// How much a finding matters: an error fails the gate, a warning only says something.
#[derive(Serialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
enum Severity {
    Error,
    Warning,
}

/// Days before a live waiver's last day from which `check` warns that it ends.
const WAIVER_WARNING_DAYS: i64 = 14;

#[derive(Serialize, Clone)]
struct Finding {
    severity: Severity,
    file: String,
    /// 1-based line and column in the file at HEAD, where the finding has a place.
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<usize>,
    commit: Option<String>,
    author: Option<String>,
    message: String,
}

impl Finding {
    fn new(
        file: String,
        commit: Option<String>,
        author: Option<String>,
        message: String,
    ) -> Finding {
        Finding {
            severity: Severity::Error,
            file,
            line: None,
            column: None,
            commit,
            author,
            message,
        }
    }

    /// One finding per located mistake, each with its line and column.
    fn located(file: &str, errors: &TomlErrors) -> Vec<Finding> {
        errors
            .0
            .iter()
            .map(|e| Finding {
                severity: Severity::Error,
                file: file.to_string(),
                line: (e.line > 0).then_some(e.line),
                column: (e.line > 0).then_some(e.column),
                commit: None,
                author: None,
                message: e.to_string(),
            })
            .collect()
    }
}

#[derive(Serialize)]
struct Report {
    datasets: usize,
    contracts: usize,
    commits: usize,
    /// How many findings are errors and how many warnings.
    errors: usize,
    warnings: usize,
    findings: Vec<Finding>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store()?;
    let mut findings = Vec::new();

    // The history first: it proves immutability and says who added each file.
    let proof = match (&args.since, &store.config().store.since) {
        (Some(rev), _) => store.prove_history(Some(rev))?,
        // From the file: an error about the revision points at the value.
        (None, Some(rev)) => store.prove_history(Some(rev)).map_err(|e| {
            let about_since = matches!(
                e,
                StoreError::Git(GitError::BadRev { .. } | GitError::SinceNotInHistory { .. })
            );
            if !about_since {
                return CommandError::from(e);
            }
            let message = store
                .config()
                .error_at("store.since", &format!("[store] since: {e}"));
            if e.is_input() {
                CommandError::input(message)
            } else {
                CommandError::environment(message)
            }
        })?,
        (None, None) => store.prove_history(None)?,
    };
    for v in &proof.violations {
        findings.push(Finding::new(
            v.path.clone(),
            Some(v.commit.id.clone()),
            Some(v.commit.author.clone()),
            v.message.clone(),
        ));
    }
    let origin = &proof.origins;

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
                Finding::new(
                    path.clone(),
                    o.map(|o| o.id.clone()),
                    o.map(|o| o.author.clone()),
                    message,
                )
            };
            // A published contract edited later is one finding (above); the rest of the
            // history is judged by the content it was published with, so the edit does not
            // also surface as wrong verdicts or a missing file blamed on the original commit.
            let read = match proof.published.get(&path) {
                Some(blob) => {
                    store.contract_in_blob(dataset, &v.to_string(), *blob, Strictness::Writing)
                }
                None => store.contract(dataset, &v.to_string(), Strictness::Writing),
            };
            match read {
                Ok(c) => contracts.push(c),
                Err(StoreError::Toml(e)) => {
                    for mut f in Finding::located(&path, &e) {
                        let o = origin.get(&path);
                        f.commit = o.map(|o| o.id.clone());
                        f.author = o.map(|o| o.author.clone());
                        findings.push(f);
                    }
                }
                Err(e @ (StoreError::Misnamed { .. } | StoreError::NotText { .. })) => {
                    findings.push(found_at(e.to_string()))
                }
                Err(e) => return Err(e.into()),
            }
        }
        let history_path = layout::history(dataset);
        let history_text = match store.read(&history_path) {
            Err(e @ StoreError::NotText { .. }) => {
                findings.push(Finding::new(
                    history_path.clone(),
                    None,
                    None,
                    e.to_string(),
                ));
                continue;
            }
            other => other?,
        };
        let history = match history_text {
            None => Default::default(),
            Some(text) => match parse_history(&history_path, &text) {
                Ok(h) => h,
                Err(e) => {
                    findings.extend(Finding::located(&history_path, &e));
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
            findings.push(Finding::new(
                file,
                o.map(|o| o.id.clone()),
                o.map(|o| o.author.clone()),
                p.message,
            ));
        }
    }
    // Contract files outside a dataset folder, or not named after a version, are not ours.
    for (path, why) in store.stray_contract_files()? {
        findings.push(Finding::new(path, None, None, why.into()));
    }
    // A link in the tree would lead a writer, or a reviewer's checkout, out of the store.
    for link in store.symlinks()? {
        findings.push(Finding::new(
            link,
            None,
            None,
            "a symbolic link (git mode 120000): writers refuse to write through it; \
             replace it with a real file or directory"
                .into(),
        ));
    }
    if let Some(text) = store.read(layout::CONSUMERS)? {
        match crate::consumers::parse_registry(layout::CONSUMERS, &text) {
            Err(e) => findings.extend(Finding::located(layout::CONSUMERS, &e)),
            Ok(registry) => {
                findings.extend(uses_findings(&store, &datasets, &registry)?);
                for (place, message) in registry.identity_conflicts() {
                    findings.push(Finding {
                        line: (place.line > 0).then_some(place.line),
                        column: (place.line > 0).then_some(place.column),
                        ..Finding::new(layout::CONSUMERS.to_string(), None, None, message)
                    });
                }
            }
        }
    }
    findings.extend(source_findings(&store)?);
    // Ledgers and release records are parsed with the same strict parsers as their readers
    // (`notify`, `advisory`), so a file that passes here is one they accept. A dataset's
    // change history was parsed above when the dataset has contracts.
    for dir in [layout::HISTORY, layout::NOTIFICATIONS] {
        for path in store.toml_files(dir)? {
            let f = path[dir.len() + 1..].to_string();
            let text = match store.read(&path) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(e @ StoreError::NotText { .. }) => {
                    findings.push(Finding::new(path.clone(), None, None, e.to_string()));
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let result = if dir == layout::NOTIFICATIONS {
                crate::notify::ledger::parse_ledger(&path, &text)
                    .map(|ledger| findings.extend(duplicate_findings(&path, &ledger)))
            } else if f.ends_with(".releases.toml") {
                crate::release::record::parse_records(&path, &text).map(|_| ())
            } else if let Some(dataset) = f.strip_suffix(".waivers.toml") {
                crate::model::waiver::parse_waivers(
                    &path,
                    dataset,
                    &text,
                    store.config().policy.max_waiver_days,
                )
                .map(|w| findings.extend(ending_waivers(ctx.today, &path, dataset, &text, &w)))
            } else {
                let dataset = f.trim_end_matches(".toml");
                if datasets.iter().any(|d| d == dataset) {
                    continue;
                }
                parse_history(&path, &text).map(|_| ())
            };
            if let Err(e) = result {
                findings.extend(Finding::located(&path, &e));
            }
        }
    }

    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let report = Report {
        datasets: datasets.len(),
        contracts: contracts_seen,
        commits: proof.commits,
        errors,
        warnings: findings.len() - errors,
        findings,
    };
    match ctx.format {
        Format::Json => print_json(ctx, &report),
        Format::Github | Format::Sarif => print_ci(ctx, &ci_findings(&store, &report)),
        _ => print_text(ctx, &report),
    }
    Ok(Outcome::findings_if(report.errors > 0))
}

/// A warning per live waiver whose last day is at most 14 days after `today`: someone must
/// fix the release before then, or the clause it covers fails again. Each is placed on the
/// line of the waiver's `id` in the file.
fn ending_waivers(
    today: chrono::NaiveDate,
    path: &str,
    dataset: &str,
    text: &str,
    waivers: &crate::model::waiver::Waivers,
) -> Vec<Finding> {
    waivers
        .live(today)
        .filter(|w| w.days_left(today) <= WAIVER_WARNING_DAYS)
        .map(|w| {
            let id_line = crate::model::history::toml_string(&w.id);
            let line = text
                .lines()
                .position(|l| {
                    l.trim_start()
                        .strip_prefix("id")
                        .and_then(|r| r.trim_start().strip_prefix('='))
                        .is_some_and(|r| r.trim() == id_line)
                })
                .map(|i| i + 1);
            let lines = w
                .line
                .map_or("every line".to_string(), |l| format!("line {l}"));
            let when = match w.days_left(today) {
                0 => "today".to_string(),
                1 => "in 1 day".to_string(),
                d => format!("in {d} days"),
            };
            Finding {
                severity: Severity::Warning,
                line,
                column: line.map(|_| 1),
                ..Finding::new(
                    path.to_string(),
                    None,
                    None,
                    format!(
                        "waiver {} on {dataset} {lines}, {}, ends on {} ({when}): after it the \
                         clause fails again",
                        w.id, w.clause, w.until
                    ),
                )
            }
        })
        .collect()
}

/// A log file two consumption sources match would be read by the first only, with its
/// mapping: the configuration is ambiguous.
fn source_findings(store: &Store) -> Result<Vec<Finding>, CommandError> {
    let sources = store.config().consumption.all_sources();
    let overlaps = crate::consumers::overlapping_files(store.root(), &sources)?;
    Ok(overlaps
        .into_iter()
        .map(|(file, by)| {
            let file = file.strip_prefix(store.root()).unwrap_or(&file);
            let names: Vec<String> = by.iter().map(|&i| sources[i].describe()).collect();
            let place = by.iter().find_map(|&i| sources[i].place.clone());
            Finding {
                line: place.as_ref().map(|p| p.line).filter(|l| *l > 0),
                column: place.as_ref().filter(|p| p.line > 0).map(|p| p.column),
                ..Finding::new(
                    layout::CONFIG.to_string(),
                    None,
                    None,
                    format!(
                        "consumption log {} is matched by {}: it is read once, by the first",
                        file.display(),
                        names.join(" and ")
                    ),
                )
            }
        })
        .collect())
}

/// A ledger records each notice (consumer, line, milestone, channel) once: a second record
/// means the notice went out twice on that channel.
fn duplicate_findings(path: &str, ledger: &crate::notify::ledger::Ledger) -> Vec<Finding> {
    ledger
        .duplicates()
        .into_iter()
        .map(|((consumer, line, milestone, channel), n)| {
            let by = match channel.as_str() {
                crate::notify::ledger::MAIL => String::new(),
                c => format!(" by {c}"),
            };
            Finding::new(
                path.to_string(),
                None,
                None,
                format!(
                    "the notice to `{consumer}`{by} for line {line} at {milestone} is recorded \
                     {n} times: it was sent more than once"
                ),
            )
        })
        .collect()
}

fn print_text(ctx: &Context, r: &Report) {
    // Warnings are talk: they never make the gate's table.
    for f in r
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
    {
        let place = f.line.map(|l| format!(":{l}")).unwrap_or_default();
        talkln!(ctx, "warning: {}{place}: {}", f.file, f.message);
    }
    let errors = r.findings.iter().filter(|f| f.severity == Severity::Error);
    if r.errors == 0 {
        let warned = match r.warnings {
            0 => String::new(),
            n => format!(", {n} warning(s)"),
        };
        outln!(
            ctx,
            "ok: {} dataset(s), {} contract(s), {} commit(s) checked; no findings{warned}",
            r.datasets,
            r.contracts,
            r.commits
        );
        return;
    }
    let rows = errors.map(|f| {
        vec![
            f.file.clone(),
            f.commit
                .as_deref()
                .map_or("-".to_string(), |c| c[..12].to_string()),
            f.author.clone().unwrap_or_else(|| "-".into()),
            f.message.clone(),
        ]
    });
    // A finding is never cut, whatever the terminal's width: on a terminal it wraps.
    outln!(
        ctx,
        "{}",
        table(
            ctx,
            &[key("file"), key("commit"), text("author"), whole("finding")],
            rows
        )
    );
    outln!(
        ctx,
        "{} finding(s) in {} dataset(s), {} contract(s), {} commit(s)",
        r.errors,
        r.datasets,
        r.contracts,
        r.commits
    );
}

/// The findings as CI annotations, each on the line its message names when it names one.
fn ci_findings(store: &Store, r: &Report) -> Vec<crate::render::ci::Finding> {
    r.findings
        .iter()
        .map(|f| crate::render::ci::Finding {
            rule: match f.severity {
                Severity::Error => "check",
                Severity::Warning => "waiver-ending",
            },
            level: match f.severity {
                Severity::Error => crate::render::ci::Level::Error,
                Severity::Warning => crate::render::ci::Level::Warning,
            },
            title: format!("contracts check: {}", f.file),
            message: match (&f.commit, &f.author) {
                (Some(c), Some(a)) => format!("{} (commit {}, {a})", f.message, &c[..12]),
                _ => f.message.clone(),
            },
            file: Some(f.file.clone()),
            line: f
                .line
                .and_then(|l| u32::try_from(l).ok())
                .or_else(|| crate::render::ci::line_in_message(&f.file, &f.message)),
        })
        .map(|mut f| {
            // Paths in findings are relative to the store's root.
            if let Some(file) = &f.file {
                f.file = Some(shown_path(store.root(), file));
            }
            f
        })
        .collect()
}

/// A consumer's `datasets` entry naming a dataset the store does not have, and a `uses` entry
/// naming no clause (or key) of its dataset's newest contract: the registry would otherwise
/// make a consumer silently unaffected by the change it relies on.
fn uses_findings(
    store: &crate::store::Store,
    datasets: &[String],
    registry: &crate::consumers::Registry,
) -> Result<Vec<Finding>, CommandError> {
    let mut out = Vec::new();
    let mut versions: std::collections::HashMap<String, Vec<Contract>> =
        std::collections::HashMap::new();
    for c in registry.consumers.values() {
        let Some(subs) = &c.datasets else { continue };
        for (dataset, sub) in subs {
            if !datasets.iter().any(|d| d == dataset) {
                out.push(Finding::new(
                    layout::CONSUMERS.to_string(),
                    None,
                    None,
                    format!(
                        "consumer `{}` reads dataset `{dataset}`, which the store does not have{}",
                        c.name,
                        crate::model::suggest::hint(
                            dataset,
                            datasets.iter().map(String::as_str),
                            "datasets"
                        )
                        .map(|h| format!("; {h}"))
                        .unwrap_or_default()
                    ),
                ));
                continue;
            }
            let Some(uses) = &sub.uses else { continue };
            if !versions.contains_key(dataset) {
                let all = store
                    .contracts(dataset, Strictness::Reading)
                    .unwrap_or_default();
                versions.insert(dataset.clone(), all);
            }
            let all: Vec<&Contract> = versions[dataset].iter().collect();
            for (u, place) in uses.iter().zip(&sub.places) {
                if let Some(why) = crate::model::impact::unknown_use(u, &all) {
                    out.push(Finding {
                        severity: Severity::Error,
                        file: layout::CONSUMERS.to_string(),
                        line: (place.line > 0).then_some(place.line),
                        column: (place.line > 0).then_some(place.column),
                        commit: None,
                        author: None,
                        message: format!("consumer `{}`, dataset `{dataset}`: {why}", c.name),
                    });
                }
            }
        }
    }
    Ok(out)
}
