use std::path::{Path, PathBuf};

use super::context::{print_ci, read_input, required_profile, shown_path};
use super::output::{cell, key, print_json, print_table, whole, Cell, Toned as _};
use super::{CommandError, Context, Format, Outcome};
use crate::release::record::{record_of, releases_header, render_record};
use crate::release::validate::{
    apply_waivers, parse_manifest, validate, ClauseResult, Report, Status,
};
use crate::store::{layout, Edit, Step};

/// Validate a release against every live contract
///
/// Validate a release against every contract of DATASET live on `--today`: profile the
/// FILEs, then check each clause of each live contract, printing clause × contract →
/// pass / FAIL / advisory-fail / not-evaluated with the measured value and the limit.
///
/// During a deprecation window two contracts are live and the release must satisfy both;
/// with `--line N` it is checked against line N's live contract only.
/// Advisory clauses report failures as warnings and never fail the release; a clause this
/// build cannot evaluate is `not-evaluated` and never fails it either. A failing clause key
/// covered by a live waiver (`contracts waive`) is `waived (until DATE, by WHO: reason)` and
/// does not fail the release; a recorded release names the waivers it was recorded under.
///
/// FILEs are read as `contracts profile` reads them: directories and globs of partitions,
/// objects, prefixes and globs in object storage (`s3://`, `gs://`, `az://`, `https://`), and
/// PostGIS tables and views (`postgresql://host/db?table=schema.name`). `--merge` adds saved profiles (one per partition, or one merged on a cluster); they may be
/// the whole release.
///
/// Exit 0 when every enforced clause of every live contract passes, 1 otherwise, 2 for an
/// unreadable or corrupt file or a bad manifest, 3 when object storage cannot be reached or
/// refuses access.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset whose live contracts the release must satisfy
    dataset: String,
    /// Data files, directories, globs or URLs of the release (.geojson, .fgb, .gpkg, .parquet, .shp)
    #[arg(required_unless_present = "merge")]
    files: Vec<PathBuf>,
    /// Saved profiles (`profile --format json`, e.g. one per partition or one merged on a
    /// cluster) that are the release, or part of it
    #[arg(long, value_name = "P.json", num_args = 1..)]
    merge: Vec<PathBuf>,
    /// The release manifest: `version`, `date`, `metrics = { name = value }`
    #[arg(long, value_name = "release.toml")]
    manifest: Option<PathBuf>,
    /// Append the outcome to history/<dataset>.releases.toml, for `contracts advisory`
    #[arg(long)]
    record: bool,
    #[command(flatten)]
    part: super::PartArgs,

    /// Check against the live contract of this line only (a producer that publishes one
    /// release per line during a window) [default: every live line]
    #[arg(long, value_name = "N")]
    line: Option<u64>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store_for(&args.dataset)?;
    let live_at = |store: &crate::store::Store| -> Result<_, CommandError> {
        let mut live = store.live_contracts(&args.dataset, ctx.today)?;
        if let Some(n) = args.line {
            if !live.iter().any(|c| c.version.major == n) {
                let have: Vec<String> = live.iter().map(|c| c.version.major.to_string()).collect();
                return Err(CommandError::input(format!(
                    "line {n} of `{}` is not live on {} (live lines: {})",
                    args.dataset,
                    ctx.today,
                    if have.is_empty() {
                        "none".to_string()
                    } else {
                        have.join(", ")
                    }
                ))
                .with_hint("`contracts status` lists the live lines"));
            }
            live.retain(|c| c.version.major == n);
        }
        if live.is_empty() {
            return Err(CommandError::input(format!(
                "dataset `{}` has no live contract on {}",
                args.dataset, ctx.today
            ))
            .with_hint("check --today, or the contracts' valid_from and sunset"));
        }
        Ok(live)
    };
    let live = live_at(&store)?;
    let manifest = match &args.manifest {
        None => None,
        Some(p) => {
            let text = read_input(p)?;
            Some(parse_manifest(&p.display().to_string(), &text)?)
        }
    };
    let (profile, warnings) = required_profile(ctx, &args.files, &args.part, &args.merge)?;
    if !args.record {
        let mut report = validate(&args.dataset, &profile, manifest.as_ref(), &live);
        apply_waivers(&mut report, &store.waivers(&args.dataset)?, ctx.today);
        report.warnings = warnings;
        return finish(ctx, args, &store, report, None);
    }
    drop(store);
    // Only a recording run writes: it alone queues for the writers' lock, repairs the checkout
    // and syncs with the remote. The live contracts are those of the HEAD the record lands on:
    // when the store moved since, the release is judged again there (the files were profiled
    // once).
    let store = ctx.writer_store()?;
    let done = store.transact(|store| -> Result<_, CommandError> {
        let live = live_at(store)?;
        let mut report = validate(&args.dataset, &profile, manifest.as_ref(), &live);
        apply_waivers(&mut report, &store.waivers(&args.dataset)?, ctx.today);
        report.warnings.clone_from(&warnings);
        let mut record = record_of(&report, ctx.today);
        // The history is shared and append-only: a path as typed (`/home/ada/…`) would publish
        // the producer's machine layout for good.
        let cwd = std::env::current_dir()?;
        record.files = record
            .files
            .iter()
            .map(|f| recorded_path(f, store.root(), &cwd))
            .collect();
        let text = render_record(&record).map_err(|e| {
            CommandError::environment(format!("could not render the release record: {e}"))
        })?;
        let path = layout::releases(&args.dataset);
        let content =
            store.appended(&path, &releases_header(&args.dataset), &format!("\n{text}"))?;
        // Named as the record names it: the files as typed may be absolute paths, and the
        // commit message is as shared and as permanent as the history.
        let what = record
            .version
            .clone()
            .unwrap_or_else(|| record.files.join(", "));
        let message = format!(
            "validate {}: record release {what} ({})",
            args.dataset,
            if report.passed { "passed" } else { "failed" }
        );
        Ok(Step::Commit(Edit::one(path, content, message), report))
    })?;
    // `transact` consumed the writer's store; the contracts it judged are immutable, so any
    // fresh read serves the CI formats.
    finish(ctx, args, &ctx.store()?, done.value, done.commit)
}

/// Print the report and its warnings, and say where it was recorded.
fn finish(
    ctx: &Context,
    args: &Args,
    store: &crate::store::Store,
    report: Report,
    commit: Option<crate::store::git::ObjectId>,
) -> Result<Outcome, CommandError> {
    match ctx.format {
        Format::Json => print_json(ctx, &report),
        Format::Junit => out!(ctx, "{}", crate::render::junit::junit(&report)),
        Format::Github | Format::Sarif => print_ci(ctx, &ci_findings(store, &report)?),
        // Refused before the command runs (`Command::formats`).
        Format::Text | Format::Markdown => print_text(ctx, &report),
    }
    for c in &report.contracts {
        for r in c
            .results
            .iter()
            .filter(|r| r.status == Status::AdvisoryFail)
        {
            talkln!(
                ctx,
                "warning: advisory clause `{}` of {}@{} fails: {}",
                r.clause,
                c.dataset,
                c.version,
                r.reason.as_deref().unwrap_or("")
            );
        }
    }
    if let Some(id) = commit {
        talkln!(
            ctx,
            "recorded in {} (commit {})",
            layout::releases(&args.dataset),
            &id.to_string()[..12]
        );
    }
    Ok(Outcome::findings_if(!report.passed))
}

/// A result's cell: `FAIL` in capitals so a failure stands out without colour too.
fn status_cell(s: Status) -> Cell {
    match s {
        Status::Fail => Cell::toned("FAIL", s.tone()),
        other => Cell::of(other),
    }
}

/// The failing keys of a map-valued result as (key, measured, limit) cells.
fn failing_keys(x: &ClauseResult) -> Option<Vec<(String, String, String)>> {
    crate::release::validate::failing_keys(x).map(|keys| {
        keys.into_iter()
            .map(|(k, got, want)| {
                let got = match got {
                    serde_json::Value::Null => "missing".to_string(),
                    v => cell(Some(&v)),
                };
                (k, got, cell(Some(&want)))
            })
            .collect()
    })
}

fn print_text(ctx: &Context, r: &Report) {
    let rows = r.contracts.iter().flat_map(|c| {
        c.results.iter().flat_map(move |x| {
            let contract = format!("{}@{}", c.dataset, c.version);
            match failing_keys(x) {
                // A failed map-valued clause: one row per key that fails, not two whole maps.
                Some(keys) => keys
                    .into_iter()
                    .map(|(key, measured, limit)| {
                        vec![
                            contract.clone().into(),
                            format!("{}.{key}", x.clause).into(),
                            status_cell(x.status),
                            measured.into(),
                            limit.into(),
                        ]
                    })
                    .collect::<Vec<_>>(),
                None => vec![vec![
                    contract.into(),
                    x.clause.clone().into(),
                    status_cell(x.status),
                    cell(x.measured.as_ref()).into(),
                    cell(x.limit.as_ref()).into(),
                ]],
            }
        })
    });
    print_table(
        ctx,
        &[
            key("contract"),
            key("clause"),
            key("result"),
            whole("measured"),
            whole("limit"),
        ],
        rows,
    );
    outln!(ctx);
    for c in &r.contracts {
        let failed: Vec<_> = c
            .results
            .iter()
            .filter(|x| x.status == Status::Fail)
            .collect();
        let waived: Vec<_> = c
            .results
            .iter()
            .filter(|x| x.status == Status::Waived)
            .collect();
        if failed.is_empty() {
            outln!(
                ctx,
                "{}@{}: pass{}",
                c.dataset,
                c.version,
                if waived.is_empty() {
                    String::new()
                } else {
                    format!(" ({} failing clause(s) waived)", waived.len())
                }
            );
        } else {
            outln!(
                ctx,
                "{}@{}: FAIL ({} enforced clause{} failed)",
                c.dataset,
                c.version,
                failed.len(),
                if failed.len() == 1 { "" } else { "s" }
            );
            for x in failed {
                outln!(ctx, "  {}: {}", x.clause, x.reason.as_deref().unwrap_or(""));
            }
        }
        for x in waived {
            for n in &x.waivers {
                outln!(ctx, "  {}: {} [{}]", n.clause, n.describe(), n.id);
            }
        }
    }
}

/// Failed clauses as CI annotations on the clause's line of the contract it fails; advisory
/// failures and the readers' warnings as warnings.
fn ci_findings(
    store: &crate::store::Store,
    r: &Report,
) -> Result<Vec<crate::render::ci::Finding>, CommandError> {
    use crate::render::ci::{toml_line, Finding, Level};
    let mut out = Vec::new();
    for c in &r.contracts {
        let path = layout::contract(&c.dataset, &c.version);
        let text = store.read(&path)?;
        for x in &c.results {
            let (rule, level) = match x.status {
                Status::Fail => ("clause-failed", Level::Error),
                Status::AdvisoryFail => ("advisory-failed", Level::Warning),
                Status::Waived => ("clause-waived", Level::Warning),
                _ => continue,
            };
            out.push(Finding {
                rule,
                level,
                title: format!("{} fails {}@{}", x.clause, c.dataset, c.version),
                message: format!(
                    "{}{} (measured {}, limit {}) in {}",
                    x.reason.as_deref().unwrap_or("failed"),
                    x.waivers
                        .iter()
                        .map(|n| format!("; {}", n.describe()))
                        .collect::<String>(),
                    cell(x.measured.as_ref()),
                    cell(x.limit.as_ref()),
                    r.profile.files.join(", ")
                ),
                file: Some(shown_path(store.root(), &path)),
                line: text.as_deref().and_then(|t| toml_line(t, &x.clause)),
            });
        }
    }
    // A reader's warning is about a data file, which may lie outside the repository: no
    // annotation place, the message names the file.
    out.extend(r.warnings.iter().map(|w| Finding {
        rule: "read-warning",
        level: Level::Warning,
        title: "a release file warns".to_string(),
        message: w.clone(),
        file: None,
        line: None,
    }));
    Ok(out)
}

/// How a release file is named in its record: an object URL as given; a local file relative
/// to the store when it lies inside it, else relative to the current directory when inside
/// that, else by its file name alone. Never an absolute path, and never a climb (`../..`) that
/// would spell out the producer's home directory in a shared, append-only history.
fn recorded_path(file: &str, root: &Path, cwd: &Path) -> String {
    if file.contains("://") {
        return file.to_string();
    }
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let abs = canonical(&cwd.join(file));
    let rel = abs
        .strip_prefix(canonical(root))
        .or_else(|_| abs.strip_prefix(canonical(cwd)))
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| abs.file_name().map(PathBuf::from).unwrap_or_default());
    rel.to_string_lossy().replace('\\', "/")
}
