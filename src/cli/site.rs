use std::path::{Path, PathBuf};

use super::context::registry_and_scan;
use super::output::last_read;
use super::{CommandError, Context, Outcome};
use crate::consumers::daily::DailyReads;
use crate::consumers::{classify, Registry, Standing, Status as StandingStatus};
use crate::model::{Line, Strictness, BUILTIN};
use crate::release::record::parse_records;
use crate::release::validate::Status;
use crate::render::escape;
use crate::render::html::{dataset_page, page, table, Cell};
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
    let (registry, scan, _) = registry_and_scan(ctx, &store, datasets.iter().cloned().collect())?;
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
        let body = dataset_body(
            ctx,
            &store,
            d,
            &lines,
            &standings,
            &log,
            (&registry, daily.get(d).unwrap_or(&no_reads)),
        )?;
        let newest = store.contracts(d, Strictness::Reading)?;
        let description = newest
            .last()
            .and_then(|c| c.description.clone())
            .unwrap_or_default();
        pages.push((
            dataset_page(d),
            page(
                &format!("{d} — data contract"),
                Some("index.html"),
                &body,
                &footer(ctx),
            ),
        ));
        let live: Vec<&Line> = lines.iter().filter(|l| l.is_live(ctx.today)).collect();
        let next_sunset = live.iter().filter_map(|l| l.sunset).min();
        // Summed over the lines `status` counts; `-` for a dataset with none in a window.
        let counted: Vec<usize> = lines
            .iter()
            .filter_map(|l| still_on(&standings, l, ctx.today))
            .collect();
        let still_on = match counted.is_empty() {
            true => "-".to_string(),
            false => counted.iter().sum::<usize>().to_string(),
        };
        index_rows.push(vec![
            Cell::link(d.clone(), dataset_page(d)),
            Cell::text(description),
            Cell::text(
                live.iter()
                    .map(|l| format!("line {} ({})", l.major, l.newest()))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            Cell::text(next_sunset.map_or("-".to_string(), |s| s.to_string())),
            match next_sunset {
                Some(s) => Cell::class((s - ctx.today).num_days().to_string(), "num"),
                None => Cell::class("-", "num"),
            },
            Cell::class(still_on, "num"),
        ]);
    }
    let index = format!(
        "<h1>Data contracts</h1>\n<p class=\"lead\">{} dataset{}, as of {}. Each dataset's page \
         has its timeline, every contract version, the change log, the release validations \
         and its consumers.</p>\n{}",
        datasets.len(),
        if datasets.len() == 1 { "" } else { "s" },
        ctx.today,
        table(
            &[
                "dataset",
                "description",
                "live lines (newest version)",
                "next sunset",
                "days to sunset",
                "consumers still on an old line"
            ],
            &index_rows,
            "This store has no dataset yet.",
        )
    );
    pages.push((
        "index.html".to_string(),
        page("Data contracts registry", None, &index, &footer(ctx)),
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

fn footer(ctx: &Context) -> String {
    format!(
        "Written by contracts site {} for {}. Static pages: no script, nothing fetched.",
        env!("CARGO_PKG_VERSION"),
        ctx.today
    )
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

fn dataset_body(
    ctx: &Context,
    store: &Store,
    dataset: &str,
    lines: &[Line],
    standings: &[Standing],
    log: &[LogEntry],
    reads: (&Registry, &DailyReads),
) -> Result<String, CommandError> {
    let contracts = store.contracts(dataset, Strictness::Reading)?;
    let mut s = String::new();
    s += &format!("<h1>{}</h1>\n", escape(dataset));
    if let Some(d) = contracts.last().and_then(|c| c.description.as_ref()) {
        s += &format!("<p class=\"lead\">{}</p>\n", escape(d));
    }

    // Lines.
    let versions = store.versions(dataset)?;
    let mut rows = Vec::new();
    for l in lines {
        let state = l.state(ctx.today).as_str();
        let current = store
            .current(dataset, &versions, l.major, ctx.today)?
            .map_or_else(|| l.versions[0].to_string(), |c| c.version.to_string());
        let still_on = still_on(standings, l, ctx.today).map_or("-".to_string(), |n| n.to_string());
        rows.push(vec![
            Cell::text(format!("line {}", l.major)),
            Cell::class(state, state),
            Cell::text(current),
            Cell::text(l.opens.to_string()),
            Cell::text(l.sunset.map_or("-".to_string(), |d| d.to_string())),
            Cell::class(
                l.sunset
                    .map_or("-".to_string(), |d| (d - ctx.today).num_days().to_string()),
                "num",
            ),
            Cell::class(still_on, "num"),
        ]);
    }
    s += "<h2 id=\"lines\">Lines</h2>\n";
    s += &table(
        &[
            "line",
            "state",
            "current version",
            "opens",
            "sunset",
            "days to sunset",
            "consumers still on it",
        ],
        &rows,
        "No line.",
    );

    // The live waivers: which clause keys releases may fail, until when, and why.
    let rows: Vec<Vec<Cell>> = store
        .waivers(dataset)?
        .live(ctx.today)
        .map(|w| {
            vec![
                Cell::class(w.id.clone(), "value"),
                Cell::text(
                    w.line
                        .map_or("every line".to_string(), |l| format!("line {l}")),
                ),
                Cell::text(w.clause.clone()),
                Cell::text(w.until.to_string()),
                Cell::class(w.days_left(ctx.today).to_string(), "num"),
                Cell::text(w.by.clone()),
                Cell::text(w.reason.clone()),
            ]
        })
        .collect();
    // Only a dataset with live waivers gets the section: most never have one.
    if !rows.is_empty() {
        s += "<h2 id=\"waivers\">Live waivers</h2>\n";
        s += &table(
            &[
                "waiver",
                "line",
                "clause key",
                "until",
                "days left",
                "by",
                "reason",
            ],
            &rows,
            "No live waiver.",
        );
    }

    // The timeline, inline.
    let t = crate::gather::gather(store, dataset, ctx.today, Some(reads))?;
    s += "<h2 id=\"timeline\">Timeline</h2>\n<figure>\n";
    s += svg(&t).trim_end();
    s += "\n</figure>\n";

    // Every contract version, newest first.
    s += "<h2 id=\"contracts\">Contract versions</h2>\n";
    for c in contracts.iter().rev() {
        s += &format!(
            "<h3 id=\"v{0}\">{1} {0}</h3>\n<p class=\"lead\">valid from {2}{3}{4}</p>\n",
            escape(&c.version.to_string()),
            escape(dataset),
            c.valid_from,
            c.supersedes
                .as_ref()
                .map_or(String::new(), |v| format!("; supersedes {v}")),
            c.sunset.map_or(String::new(), |d| format!(
                "; declared sunset of line {}: {d}",
                c.version.major.saturating_sub(1)
            )),
        );
        let mut rows: Vec<Vec<Cell>> = c
            .clauses
            .iter()
            .map(|(name, clause)| {
                let evaluated = !BUILTIN
                    .iter()
                    .any(|b| b.name == name && b.checks.starts_with("not evaluated"));
                let status = if c.is_advisory(name) {
                    "advisory"
                } else if evaluated {
                    "enforced"
                } else {
                    "not evaluated"
                };
                vec![
                    Cell::text(name.clone()),
                    Cell::text(clause.spec.kind.to_string()),
                    Cell::class(value_text(&clause.value.to_json()), "value"),
                    Cell::class(status, status.replace(' ', "-")),
                ]
            })
            .collect();
        rows.extend(c.unknown.iter().map(|(name, v)| {
            vec![
                Cell::text(name.clone()),
                Cell::text("-"),
                Cell::class(v.to_string(), "value"),
                Cell::class("not evaluated (unknown to this build)", "not-evaluated"),
            ]
        }));
        s += &table(&["clause", "kind", "value", "status"], &rows, "No clause.");
        if !c.deprecated.is_empty() {
            let rows: Vec<Vec<Cell>> = c
                .deprecated
                .values()
                .map(|d| {
                    vec![
                        Cell::text(d.key.clone()),
                        Cell::text(d.remove_after.to_string()),
                        Cell::text(d.replacement.clone().unwrap_or_else(|| "-".into())),
                        Cell::text(d.reason.clone()),
                    ]
                })
                .collect();
            s += "<p>Deprecated, each promised through its last day:</p>\n";
            s += &table(
                &["deprecated", "promised through", "replacement", "reason"],
                &rows,
                "",
            );
        }
    }

    // The change log.
    let rows: Vec<Vec<Cell>> = log
        .iter()
        .filter_map(|e| match e {
            LogEntry::Change { record: r, .. } if e.dataset() == dataset => Some(
                vec![
                    Cell::text(r.at.format("%Y-%m-%d").to_string()),
                    Cell::text(format!("{} → {}", r.from.as_deref().unwrap_or("-"), r.to)),
                    Cell::text(r.clause.clone()),
                    Cell::text(r.kind.map_or("-".to_string(), |k| k.to_string())),
                    Cell::text(r.direction.to_string()),
                    Cell::class(r.verdict.to_string(), r.verdict.to_string()),
                    Cell::text(r.rationale.clone()),
                ]
                .into_iter()
                .chain(commit_cells(e.commit()))
                .collect(),
            ),
            LogEntry::Sunset { record: r, .. } if e.dataset() == dataset => Some(
                vec![
                    Cell::text(r.at.format("%Y-%m-%d").to_string()),
                    Cell::text(format!("line {}", r.line)),
                    Cell::text("(sunset)"),
                    Cell::text("-"),
                    Cell::text(format!(
                        "{} → {}{}",
                        r.from.map_or("none".to_string(), |d| d.to_string()),
                        r.to,
                        if r.forced { " (forced)" } else { "" }
                    )),
                    Cell::text("-"),
                    Cell::text(r.rationale.clone()),
                ]
                .into_iter()
                .chain(commit_cells(e.commit()))
                .collect(),
            ),
            _ => None,
        })
        .collect();
    s += "<h2 id=\"changes\">Change log</h2>\n";
    s += &table(
        &[
            "date",
            "versions",
            "clause",
            "kind",
            "direction",
            "verdict",
            "rationale",
            "commit",
            "author",
        ],
        &rows,
        "No change record.",
    );

    // Recorded release validations, newest first.
    let path = layout::releases(dataset);
    let records = match store.read(&path)? {
        Some(text) => parse_records(&path, &text)?,
        None => Vec::new(),
    };
    let rows: Vec<Vec<Cell>> = records
        .iter()
        .rev()
        .map(|r| {
            let per: Vec<String> = r
                .contract
                .iter()
                .map(|c| {
                    let with = |status: Status| -> Vec<&str> {
                        c.results
                            .iter()
                            .filter(|(_, s)| **s == status)
                            .map(|(k, _)| k.as_str())
                            .collect()
                    };
                    let (failed, warned) = (with(Status::Fail), with(Status::AdvisoryFail));
                    let mut t = if failed.is_empty() {
                        format!("{}: passed", c.version)
                    } else {
                        format!("{}: failed {}", c.version, failed.join(", "))
                    };
                    if !warned.is_empty() {
                        t += &format!(" (advisory: {})", warned.join(", "));
                    }
                    t
                })
                .collect();
            let verdict = if r.passed { "pass" } else { "fail" };
            vec![
                Cell::text(r.date.unwrap_or(r.validated).to_string()),
                Cell::text(r.version.clone().unwrap_or_else(|| "-".to_string())),
                Cell::text(r.validated.to_string()),
                Cell::class(if r.passed { "passed" } else { "failed" }, verdict),
                Cell::class(per.join("\n"), "value"),
                Cell::class(r.files.join("\n"), "value"),
            ]
        })
        .collect();
    s += "<h2 id=\"releases\">Release validations</h2>\n";
    s += &table(
        &[
            "release date",
            "release",
            "validated",
            "result",
            "per contract",
            "files",
        ],
        &rows,
        "No release validation is recorded (contracts validate --record).",
    );

    // Consumers.
    let rows: Vec<Vec<Cell>> = standings
        .iter()
        .map(|c| {
            vec![
                Cell::text(c.consumer.clone()),
                Cell::text(c.team.clone().unwrap_or_else(|| "-".to_string())),
                Cell::class(c.status.to_string(), c.status.to_string()),
                Cell::text(c.line.map_or("-".to_string(), |l| l.to_string())),
                Cell::text(
                    c.version
                        .as_ref()
                        .map_or("-".to_string(), |v| v.to_string()),
                ),
                Cell::text(last_read(c.last_read)),
                Cell::class(c.reads.to_string(), "num"),
            ]
        })
        .collect();
    s += &format!(
        "<h2 id=\"consumers\">Consumers</h2>\n<p class=\"lead\">From the consumption log, the \
         last {} days up to {}: still-on means the newest read is of an older line than the \
         newest.</p>\n",
        store.config().consumption.lookback_days,
        ctx.today
    );
    s += &table(
        &[
            "consumer",
            "team",
            "status",
            "line",
            "version",
            "last read",
            "reads",
        ],
        &rows,
        "No consumer is registered or seen reading this dataset.",
    );
    s += &told_section(&t.told);
    Ok(s)
}

/// Who was told what, from the dataset's ledger: per consumer, each milestone delivered about
/// a line, the day it was sent for and its channels. Nothing for a dataset never notified.
fn told_section(told: &[crate::render::timeline::Told]) -> String {
    if told.is_empty() {
        return String::new();
    }
    let mut by: std::collections::BTreeMap<(&str, u64, chrono::NaiveDate, &str), Vec<&str>> =
        Default::default();
    for k in told {
        by.entry((k.consumer.as_str(), k.line, k.day, k.milestone.as_str()))
            .or_default()
            .push(k.channel.as_str());
    }
    let rows: Vec<Vec<Cell>> = by
        .into_iter()
        .map(|((consumer, line, day, milestone), channels)| {
            vec![
                Cell::text(consumer),
                Cell::text(format!("line {line}")),
                Cell::text(milestone),
                Cell::text(day.to_string()),
                Cell::text(channels.join(", ")),
            ]
        })
        .collect();
    let mut s = "<h2 id=\"told\">Told</h2>\n<p class=\"lead\">The notices delivered to each \
                 consumer, from the ledger (notifications/): the milestone, the day it was sent \
                 for and the channels it went by.</p>\n"
        .to_string();
    s += &table(
        &["consumer", "line", "milestone", "told on", "by"],
        &rows,
        "",
    );
    s
}

/// The commit and author cells of a change-log row: `-` for a record whose commit is unknown.
fn commit_cells(commit: Option<&crate::store::CommitInfo>) -> [Cell; 2] {
    match commit {
        Some(c) => [
            Cell::class(c.id.chars().take(12).collect::<String>(), "value"),
            Cell::text(c.author.clone()),
        ],
        None => [Cell::class("-", "value"), Cell::text("-")],
    }
}
