use std::path::{Path, PathBuf};

use super::context::registry_and_scan;
use super::output::last_read;
use super::{CommandError, Context, Outcome};
use crate::consumers::daily::DailyReads;
use crate::consumers::{classify, Registry, Standing, Status as StandingStatus};
use crate::model::{Contract, Line, Strictness};
use crate::release::record::parse_records;
use crate::release::validate::Status;
use crate::render::html::{self, dataset_page};
use crate::render::timeline::svg;
use crate::store::{layout, log_entries, LogEntry, Store};

/// Write a static site of the store
///
/// Write a static HTML registry of the store into OUT_DIR: `index.html` lists every dataset
/// with its live lines and days to sunset; `<dataset>.html` shows its timeline, every contract
/// version with each clause's kind and value, the change log with rationale, commit and
/// author, the recorded release validations, and the consumers and where each stands.
///
/// Pages are self-contained (inline style, no script, nothing fetched), so OUT_DIR works
/// from any file server or as a CI artefact. Publish it where `[notify] registry_url` points
/// and every notice links to its dataset's page. Existing files of the same names are
/// replaced; nothing else in OUT_DIR is touched. Exit 0, 2 for a bad store, 3 when OUT_DIR
/// cannot be written.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to write the pages (created if missing)
    out_dir: PathBuf,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store()?;
    let datasets = store.datasets()?;
    let (registry, scan, _) =
        registry_and_scan(ctx, &store, datasets.iter().cloned().collect(), false)?;
    let log = log_entries(&store, &datasets, None)?;
    // One pass over the log for every dataset's timeline, not one per dataset.
    let daily = super::context::scan_daily(
        ctx,
        &store,
        &datasets.iter().cloned().collect(),
        None,
        &registry,
    )?;
    let no_reads = DailyReads::default();
    let mut pages: Vec<(String, String)> = Vec::new();
    let mut index_rows = Vec::new();
    for d in &datasets {
        let lines = store.lines(d)?;
        let standings = classify(d, &lines, &registry, &scan.of(d));
        let view = dataset_view(
            ctx,
            &store,
            d,
            &lines,
            &standings,
            &log,
            (&registry, daily.get(d).unwrap_or(&no_reads)),
        )?;
        pages.push((dataset_page(d), html::dataset(&view).map_err(template_bug)?));
        let live: Vec<&Line> = lines.iter().filter(|l| l.is_live(ctx.today)).collect();
        let next_sunset = live.iter().filter_map(|l| l.sunset).min();
        // Summed over the lines `status` counts; none for a dataset with none in a window.
        let counted: Vec<usize> = lines
            .iter()
            .filter_map(|l| still_on(&standings, l, ctx.today))
            .collect();
        index_rows.push(html::IndexRow {
            dataset: d.clone(),
            page: dataset_page(d),
            description: view.description.unwrap_or_default(),
            live: live
                .iter()
                .map(|l| (l.major, l.newest().to_string()))
                .collect(),
            next_sunset,
            days_to_sunset: next_sunset.map(|s| (s - ctx.today).num_days()),
            still_on: (!counted.is_empty()).then(|| counted.iter().sum()),
        });
    }
    let index = html::Index {
        today: ctx.today,
        datasets: index_rows,
    };
    pages.push((
        "index.html".to_string(),
        html::index(&index).map_err(template_bug)?,
    ));
    write_pages(&args.out_dir, &pages)?;
    talkln!(
        ctx,
        "wrote {} page(s) to {}",
        pages.len(),
        args.out_dir.display()
    );
    Ok(Outcome::Clean)
}

/// Registered consumers still on line `l`, as `status` counts them: only for a live line with a
/// sunset (the old side of a window), a consumer whose newest read names an unknown version
/// counted on the line of its last known read. `None` where `status` shows `-`: a count of 0
/// for a line nobody is asked to leave would read as "everyone moved".
fn still_on(standings: &[Standing], l: &Line, today: chrono::NaiveDate) -> Option<usize> {
    (l.is_live(today) && l.sunset.is_some()).then(|| {
        standings
            .iter()
            .filter(|s| {
                matches!(
                    s.status,
                    StandingStatus::StillOn | StandingStatus::UnknownVersion
                ) && s.line == Some(l.major)
            })
            .count()
    })
}

/// A built-in template that fails to render is a bug of this build, not of the store.
fn template_bug(e: minijinja::Error) -> CommandError {
    CommandError::environment(format!("a built-in site template failed: {e:#}"))
}

fn write_pages(dir: &Path, pages: &[(String, String)]) -> Result<(), CommandError> {
    let fail =
        |p: &Path, e: std::io::Error| CommandError::environment(format!("{}: {e}", p.display()));
    std::fs::create_dir_all(dir).map_err(|e| fail(dir, e))?;
    for (name, html) in pages {
        let path = dir.join(name);
        std::fs::write(&path, html).map_err(|e| fail(&path, e))?;
    }
    Ok(())
}

/// A clause value in words: a map as `key = value` lines, a list comma-separated.
fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => {
            items.iter().map(value_text).collect::<Vec<_>>().join(", ")
        }
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k} = {}", value_text(v)))
            .collect::<Vec<_>>()
            .join("\n"),
        v => v.to_string(),
    }
}

/// The view model of a dataset's page: the facts, gathered from the store, with no markup.
fn dataset_view(
    ctx: &Context,
    store: &Store,
    dataset: &str,
    lines: &[Line],
    standings: &[Standing],
    log: &[LogEntry],
    reads: (&Registry, &DailyReads),
) -> Result<html::Dataset, CommandError> {
    let today = ctx.today;
    let contracts = store.contracts(dataset, Strictness::Reading)?;
    let versions = store.versions(dataset)?;
    let mut line_rows = Vec::new();
    for l in lines {
        let current = store
            .current(dataset, &versions, l.major, today)?
            .map_or_else(|| l.versions[0].to_string(), |c| c.version.to_string());
        line_rows.push(html::LineRow {
            major: l.major,
            state: l.state(today),
            current,
            opens: l.opens,
            sunset: l.sunset,
            days_to_sunset: l.sunset.map(|d| (d - today).num_days()),
            still_on: still_on(standings, l, today),
        });
    }
    // The live waivers: which clause keys releases may fail, until when, and why.
    let waivers = store
        .waivers(dataset)?
        .live(today)
        .map(|w| html::WaiverRow {
            id: w.id.clone(),
            line: w.line,
            clause: w.clause.clone(),
            until: w.until,
            days_left: w.days_left(today),
            by: w.by.clone(),
            reason: w.reason.clone(),
        })
        .collect();
    let t = crate::gather::gather(store, dataset, today, Some(reads))?;
    Ok(html::Dataset {
        today,
        dataset: dataset.to_string(),
        description: contracts.last().and_then(|c| c.description.clone()),
        lines: line_rows,
        waivers,
        timeline_svg: svg(&t).trim_end().to_string(),
        contracts: contracts.iter().rev().map(contract_view).collect(),
        log: log
            .iter()
            .filter(|e| e.dataset() == dataset)
            .map(log_row)
            .collect(),
        releases: release_rows(store, dataset)?,
        lookback_days: store.config().consumption.lookback_days,
        consumers: standings
            .iter()
            .map(|c| html::ConsumerRow {
                consumer: c.consumer.clone(),
                team: c.team.clone(),
                status: c.status.to_string(),
                line: c.line,
                version: c.version.as_ref().map(|v| v.to_string()),
                last_read: last_read(c.last_read),
                reads: c.reads,
            })
            .collect(),
        told: told_rows(&t.told),
    })
}

/// A contract version with each clause's kind, value and whether releases are held to it.
fn contract_view(c: &Contract) -> html::ContractView {
    // The contract's clauses, then those this build set aside, as `show` lists them.
    let known = c.clauses.iter().map(|(name, clause)| {
        let kind = clause.spec.kind.to_string();
        (name, Some(kind), value_text(&clause.value.to_json()))
    });
    let unknown = c
        .unknown
        .iter()
        .map(|(name, v)| (name, None, v.to_string()));
    let clauses = known
        .chain(unknown)
        .map(|(name, kind, value)| {
            let status = c.clause_status(name);
            html::ClauseRow {
                name: name.clone(),
                kind,
                value,
                status,
                wording: status.as_str(),
            }
        })
        .collect();
    html::ContractView {
        version: c.version.to_string(),
        valid_from: c.valid_from,
        supersedes: c.supersedes.as_ref().map(|v| v.to_string()),
        declared_sunset: c.sunset.map(|d| (c.version.major.saturating_sub(1), d)),
        clauses,
        deprecated: c
            .deprecated
            .values()
            .map(|d| html::DeprecatedRow {
                key: d.key.clone(),
                remove_after: d.remove_after,
                replacement: d.replacement.clone(),
                reason: d.reason.clone(),
            })
            .collect(),
    }
}

/// A change-log row: a change record or a sunset move, with its commit.
fn log_row(e: &LogEntry) -> html::LogRow {
    let commit = e.commit().map(|c| html::CommitView {
        id: c.id.chars().take(12).collect(),
        author: c.author.clone(),
    });
    match e {
        LogEntry::Change { record: r, .. } => html::LogRow::Change {
            date: r.at.format("%Y-%m-%d").to_string(),
            from: r.from.clone(),
            to: r.to.clone(),
            clause: r.clause.clone(),
            kind: r.kind.map(|k| k.to_string()),
            direction: r.direction.to_string(),
            verdict: r.verdict.to_string(),
            rationale: r.rationale.clone(),
            commit,
        },
        LogEntry::Sunset { record: r, .. } => html::LogRow::Sunset {
            date: r.at.format("%Y-%m-%d").to_string(),
            line: r.line,
            from: r.from,
            to: r.to,
            forced: r.forced,
            rationale: r.rationale.clone(),
            commit,
        },
    }
}

/// The recorded release validations, newest first, with each contract's failed clause keys.
fn release_rows(store: &Store, dataset: &str) -> Result<Vec<html::ReleaseRow>, CommandError> {
    let path = layout::releases(dataset);
    let records = match store.read(&path)? {
        Some(text) => parse_records(&path, &text)?,
        None => Vec::new(),
    };
    Ok(records
        .iter()
        .rev()
        .map(|r| html::ReleaseRow {
            date: r.date.unwrap_or(r.validated),
            version: r.version.clone(),
            validated: r.validated,
            passed: r.passed,
            per_contract: r
                .contract
                .iter()
                .map(|c| {
                    let with = |status: Status| -> Vec<String> {
                        c.results
                            .iter()
                            .filter(|(_, s)| **s == status)
                            .map(|(k, _)| k.clone())
                            .collect()
                    };
                    html::ReleaseContract {
                        version: c.version.to_string(),
                        failed: with(Status::Fail),
                        advisory_failed: with(Status::AdvisoryFail),
                    }
                })
                .collect(),
            files: r.files.clone(),
        })
        .collect())
}

/// Who was told what, from the dataset's ledger: per consumer, each milestone delivered about
/// a line, the day it was sent for and its channels.
fn told_rows(told: &[crate::render::timeline::Told]) -> Vec<html::ToldRow> {
    let mut by: std::collections::BTreeMap<(&str, u64, chrono::NaiveDate, &str), Vec<String>> =
        Default::default();
    for k in told {
        by.entry((k.consumer.as_str(), k.line, k.day, k.milestone.as_str()))
            .or_default()
            .push(k.channel.clone());
    }
    by.into_iter()
        .map(
            |((consumer, line, day, milestone), channels)| html::ToldRow {
                consumer: consumer.to_string(),
                line,
                milestone: milestone.to_string(),
                day,
                channels,
            },
        )
        .collect()
}
