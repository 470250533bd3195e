use std::path::Path;

use super::context::{print_ci, shown_path};
use super::output::{key, print_json, print_table, text, whole};
use super::{CommandError, Context, Format, Outcome};
use crate::audit::{check_store, unreadable_config, Finding, Report, Severity};
use crate::store::layout;

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

/// The whole audit is the library's (`audit::check_store`); this renders its report.
/// A store file that does not read is a finding like any other (exit 1), `contracts.toml`
/// included: `check` is there to say what is wrong with the store. Only that file stops the
/// audit, since every other rule reads it.
pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = match ctx.try_store()? {
        Ok(store) => store,
        Err(e) => {
            let Some(report) = unreadable_config(&e) else {
                return Err(e.into());
            };
            talkln!(
                ctx,
                "note: nothing else in the store is checked until {} reads: every other rule \
                 reads it",
                layout::CONFIG
            );
            return Ok(print(ctx, &report, &ctx.repo_dir()?));
        }
    };
    let report = check_store(&store, args.since.as_deref(), ctx.today)?;
    Ok(print(ctx, &report, store.root()))
}

/// Render `report` in the run's format; CI annotations name their files from the current
/// directory, and `root` is the store's.
fn print(ctx: &Context, report: &Report, root: &Path) -> Outcome {
    match ctx.format {
        Format::Json => print_json(ctx, report),
        Format::Github | Format::Sarif => print_ci(ctx, &ci_findings(root, report)),
        _ => print_text(ctx, report),
    }
    Outcome::findings_if(report.errors > 0)
}

/// Where a finding is: its file, with `:line:column` when it has a place in it.
fn place(f: &Finding) -> String {
    match (f.line, f.column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", f.file),
        (Some(l), None) => format!("{}:{l}", f.file),
        _ => f.file.clone(),
    }
}

/// A finding's message as its first line, without the place the table shows beside it.
fn headline(f: &Finding) -> &str {
    let first = f.message.lines().next().unwrap_or_default();
    first
        .strip_prefix(place(f).as_str())
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(first)
}

fn print_text(ctx: &Context, r: &Report) {
    // Warnings are talk: they never make the gate's table.
    for f in r
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
    {
        talkln!(ctx, "warning: {}: {}", place(f), headline(f));
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
    let errors: Vec<&Finding> = errors.collect();
    let rows = errors.iter().map(|f| {
        vec![
            place(f),
            f.commit
                .as_deref()
                .map_or("-".to_string(), |c| c[..12].to_string()),
            f.author.clone().unwrap_or_else(|| "-".into()),
            headline(f).to_string(),
        ]
    });
    // A finding is never cut, whatever the terminal's width: on a terminal it wraps.
    print_table(
        ctx,
        &[key("file"), key("commit"), text("author"), whole("finding")],
        rows,
    );
    // A message of several lines (a quoted line of the file and a caret under the mistake)
    // is not run together in a cell: the table has its first line, and here it is whole,
    // each under its place, as a compiler prints it.
    for f in errors.iter().filter(|f| f.message.contains('\n')) {
        outln!(ctx, "");
        let rest = f.message.split_once('\n').map_or("", |(_, rest)| rest);
        outln!(ctx, "{}: {}\n{rest}", place(f), headline(f));
    }
    if errors.iter().any(|f| f.message.contains('\n')) {
        outln!(ctx, "");
    }
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
fn ci_findings(root: &Path, r: &Report) -> Vec<crate::render::ci::Finding> {
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
                f.file = Some(shown_path(root, file));
            }
            f
        })
        .collect()
}
