//! The audit of the files at HEAD beside the contracts: stray files and links, the consumer
//! registry, the consumption sources, and the ledgers, release records, waivers and change
//! histories, each parsed with the strict parser its reader uses.

use chrono::NaiveDate;

use super::{Finding, Severity, WAIVER_WARNING_DAYS};
use crate::consumers::reads::LogError;
use crate::consumers::scan_report::ScanError;
use crate::consumers::Registry;
use crate::model::history::parse_history;
use crate::model::waiver::Waivers;
use crate::model::{Contract, Strictness};
use crate::notify::ledger::Ledger;
use crate::store::{layout, Store, StoreError};

/// Every finding about the tree at HEAD outside the datasets' contracts and histories, in
/// the order `check` has always given them.
pub(super) fn tree_findings(
    store: &Store,
    datasets: &[String],
    today: NaiveDate,
    findings: &mut Vec<Finding>,
) -> Result<(), ScanError> {
    // Contract files outside a dataset folder, or not named after a version, are not ours.
    for (path, why) in store.stray_contract_files()? {
        findings.push(Finding::error(path, None, why.into()));
    }
    // A link in the tree would lead a writer, or a reviewer's checkout, out of the store.
    for link in store.symlinks()? {
        findings.push(Finding::error(
            link,
            None,
            "a symbolic link (git mode 120000): writers refuse to write through it; \
             replace it with a real file or directory"
                .into(),
        ));
    }
    let registry = match store.read(layout::CONSUMERS) {
        Err(e @ StoreError::NotText { .. }) => {
            findings.push(Finding::error(layout::CONSUMERS, None, e.to_string()));
            None
        }
        other => other?,
    };
    if let Some(text) = registry {
        match crate::consumers::parse_registry(layout::CONSUMERS, &text) {
            Err(e) => findings.extend(Finding::located(layout::CONSUMERS, None, &e)),
            Ok(registry) => {
                findings.extend(uses_findings(store, datasets, &registry));
                for (place, message) in registry.identity_conflicts() {
                    findings.push(
                        Finding::error(layout::CONSUMERS, None, message)
                            .at(place.line, place.column),
                    );
                }
            }
        }
    }
    match source_findings(store).and_then(|mut f| {
        f.extend(template_findings(store)?);
        Ok(f)
    }) {
        Ok(found) => findings.extend(found),
        // A glob that is not one is a mistake in contracts.toml, not a failure to read.
        Err(ScanError::Log(LogError::Pattern { pattern, source })) => {
            let place = store
                .config()
                .consumption
                .all_sources()
                .into_iter()
                .find(|s| s.path == pattern)
                .and_then(|s| s.place);
            let e = LogError::Pattern { pattern, source };
            let f = Finding::error(layout::CONFIG, None, e.to_string());
            findings.push(match place {
                Some(p) => f.at(p.line, p.column),
                None => f,
            });
        }
        Err(e) => return Err(e),
    }
    // Ledgers and release records are parsed with the same strict parsers as their readers
    // (`notify`, `advisory`), so a file that passes here is one they accept. A dataset's
    // change history was parsed with its contracts.
    let known: std::collections::HashSet<&str> = datasets.iter().map(String::as_str).collect();
    for dir in [layout::HISTORY, layout::NOTIFICATIONS] {
        for path in store.toml_files(dir)? {
            let f = path[dir.len() + 1..].to_string();
            let text = match store.read_listed(&path) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(e @ StoreError::NotText { .. }) => {
                    findings.push(Finding::error(path.clone(), None, e.to_string()));
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
                let max_days = store.config().policy.max_waiver_days;
                crate::model::waiver::parse_waivers(&path, dataset, &text, max_days)
                    .map(|w| findings.extend(ending_waivers(today, &path, dataset, &text, &w)))
            } else {
                let dataset = f.trim_end_matches(".toml");
                if known.contains(dataset) {
                    continue;
                }
                parse_history(&path, &text).map(|_| ())
            };
            if let Err(e) = result {
                findings.extend(Finding::located(&path, None, &e));
            }
        }
    }
    Ok(())
}

/// A warning per live waiver whose last day is at most 14 days after `today`: someone must
/// fix the release before then, or the clause it covers fails again. Each is placed on the
/// line of the waiver's `id` in the file.
fn ending_waivers(
    today: NaiveDate,
    path: &str,
    dataset: &str,
    text: &str,
    waivers: &Waivers,
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
            let lines = w.line.map_or(format!("every line of {dataset}"), |l| {
                format!("{dataset} line {l}")
            });
            let when = match w.days_left(today) {
                0 => "today".to_string(),
                1 => "in 1 day".to_string(),
                d => format!("in {d} days"),
            };
            let message = format!(
                "waiver {} on {lines}, {}, ends on {} ({when}): after it the clause \
                 fails again",
                w.id, w.clause, w.until
            );
            Finding {
                severity: Severity::Warning,
                line,
                column: line.map(|_| 1),
                ..Finding::error(path, None, message)
            }
        })
        .collect()
}

/// A log file two consumption sources match would be read by the first only, with its
/// mapping: the configuration is ambiguous.
fn source_findings(store: &Store) -> Result<Vec<Finding>, ScanError> {
    let sources = store.config().consumption.all_sources();
    let overlaps = crate::consumers::overlapping_files(store.root(), &sources)?;
    Ok(overlaps
        .into_iter()
        .map(|(file, by)| {
            let file = file.strip_prefix(store.root()).unwrap_or(&file);
            let names: Vec<String> = by.iter().map(|&i| sources[i].describe()).collect();
            let message = format!(
                "consumption log {} is matched by {}: it is read once, by the first",
                file.display(),
                names.join(" and ")
            );
            let f = Finding::error(layout::CONFIG, None, message);
            match by.iter().find_map(|&i| sources[i].place.clone()) {
                Some(place) => f.at(place.line, place.column),
                None => f,
            }
        })
        .collect())
}

/// How many of a source's newest requests `check` tries its templates on.
const SAMPLED_REQUESTS: usize = 1000;

/// Each `match` template of a local access-log source that matches none of the newest
/// requests of its newest file (by modification time) that would be reads but for their
/// path ([`crate::consumers::access::sample`]). A source whose templates all match nothing
/// is blind: every read it holds is counted as an unmatched request. Sources in object
/// storage are left to the scan's own warning, which every command prints.
fn template_findings(store: &Store) -> Result<Vec<Finding>, ScanError> {
    let sources = store.config().consumption.all_sources();
    let files = crate::consumers::log_files(store.root(), &sources)?;
    let mut findings = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        let Some(log) = &source.access else { continue };
        let newest = files.iter().filter(|f| f.source == i).max_by_key(|f| {
            (
                std::fs::metadata(&f.path).and_then(|m| m.modified()).ok(),
                &f.path,
            )
        });
        let Some(newest) = newest else { continue };
        let gz = newest.path.extension().is_some_and(|e| e == "gz");
        let sample =
            crate::consumers::reads::open_input(&newest.path, None, gz).and_then(|input| {
                let input = std::io::BufReader::with_capacity(1 << 16, input);
                log.sample_templates(input, SAMPLED_REQUESTS)
                    .map_err(|e| e.to_string())
            });
        let file = newest
            .path
            .strip_prefix(store.root())
            .unwrap_or(&newest.path);
        let source = &sources[i];
        let place = |f: Finding| match &source.place {
            Some(p) => f.at(p.line, p.column),
            None => f,
        };
        let sample = match sample {
            Ok(s) => s,
            Err(why) => {
                let message = format!(
                    "{}: its newest log {} cannot be sampled: {why}",
                    source.describe(),
                    file.display()
                );
                findings.push(place(Finding::error(layout::CONFIG, None, message)));
                continue;
            }
        };
        if sample.requests == 0 {
            continue;
        }
        let none = sample.matched.iter().all(|(_, n)| *n == 0);
        for (template, _) in sample.matched.iter().filter(|(_, n)| *n == 0) {
            let tail = match (&sample.unmatched_example, none) {
                (Some(path), true) => format!(
                    "; no template matches either, so every read of this source is counted \
                     as an unmatched request (for example `{path}`)"
                ),
                _ => String::new(),
            };
            let message = format!(
                "{}: `match` template {template:?} matches none of the {} newest successful \
                 GET or HEAD request(s) of {}{tail}",
                source.describe(),
                sample.requests,
                file.display()
            );
            findings.push(place(Finding::error(layout::CONFIG, None, message)));
        }
    }
    Ok(findings)
}

/// A ledger records each notice (consumer, line, milestone, channel) once: a second record
/// means the notice went out twice on that channel.
fn duplicate_findings(path: &str, ledger: &Ledger) -> Vec<Finding> {
    ledger
        .duplicates()
        .into_iter()
        .map(|((consumer, line, milestone, channel), n)| {
            let by = match channel.as_str() {
                crate::notify::ledger::MAIL => String::new(),
                c => format!(" by {c}"),
            };
            Finding::error(
                path,
                None,
                format!(
                    "the notice to `{consumer}`{by} for line {line} at {milestone} is recorded \
                     {n} times: it was sent more than once"
                ),
            )
        })
        .collect()
}

/// A consumer's `datasets` entry naming a dataset the store does not have, and a `uses` entry
/// naming no clause (or key) of its dataset's newest contract: the registry would otherwise
/// make a consumer silently unaffected by the change it relies on.
fn uses_findings(store: &Store, datasets: &[String], registry: &Registry) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut versions: std::collections::HashMap<String, Vec<Contract>> =
        std::collections::HashMap::new();
    for c in registry.consumers.values() {
        let Some(subs) = &c.datasets else { continue };
        for (dataset, sub) in subs {
            if !datasets.iter().any(|d| d == dataset) {
                let hint = crate::model::suggest::hint(
                    dataset,
                    datasets.iter().map(String::as_str),
                    "datasets",
                )
                .map(|h| format!("; {h}"))
                .unwrap_or_default();
                out.push(Finding::error(
                    layout::CONSUMERS,
                    None,
                    format!(
                        "consumer `{}` reads dataset `{dataset}`, which the store does not \
                         have{hint}",
                        c.name
                    ),
                ));
                continue;
            }
            let Some(uses) = &sub.uses else { continue };
            let all = versions.entry(dataset.clone()).or_insert_with(|| {
                store
                    .contracts(dataset, Strictness::Reading)
                    .unwrap_or_default()
            });
            let all: Vec<&Contract> = all.iter().collect();
            for (u, place) in uses.iter().zip(&sub.places) {
                if let Some(why) = crate::model::impact::unknown_use(u, &all) {
                    out.push(
                        Finding::error(
                            layout::CONSUMERS,
                            None,
                            format!("consumer `{}`, dataset `{dataset}`: {why}", c.name),
                        )
                        .at(place.line, place.column),
                    );
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    /// Two waivers granted the same day: one ends in 9 days, one in 29. The second has its
    /// keys in another order, as a hand-edited file may.
    const WAIVERS: &str = "[[waiver]]
id = \"places:1:max_null_fraction.pop_est:2026-12-01\"
line = 1
clause = \"max_null_fraction.pop_est\"
granted = 2026-12-01
until = 2026-12-10
at = 2026-12-01T09:00:00Z
by = \"Notifier <notifier@example.org>\"
reason = \"outage\"

[[waiver]]
id = \"places:all:max_null_fraction.pop_est:2026-12-01\"
clause = \"max_null_fraction.pop_est\"
reason = \"the same outage\"
granted = 2026-12-01
until = 2026-12-30
by = \"Notifier <notifier@example.org>\"
at = 2026-12-01T09:00:00Z
";

    #[test]
    fn only_a_waiver_ending_within_the_warning_days_is_warned_of_on_its_id_line() {
        let file = "history/places.waivers.toml";
        let w = crate::model::waiver::parse_waivers(file, "places", WAIVERS, 60)
            .unwrap_or_else(|e| panic!("the waivers do not parse: {e}"));
        let out = ending_waivers(day("2026-12-01"), file, "places", WAIVERS, &w);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].severity, Severity::Warning);
        // The first waiver's `id` is on the line under its header.
        assert_eq!(out[0].line, Some(2));
        assert!(out[0].message.contains("places:1:"), "{}", out[0].message);
        assert!(out[0].message.contains("in 9 days"), "{}", out[0].message);
    }
}
