use super::context::{print_ci, shown_path};
use super::output::{key, print_json, print_table, text, whole};
use super::{CommandError, Context, Format, Outcome};
use crate::audit::{check_store, Report, Severity};
use crate::store::Store;

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
pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store()?;
    let report = check_store(&store, args.since.as_deref(), ctx.today)?;
    match ctx.format {
        Format::Json => print_json(ctx, &report),
        Format::Github | Format::Sarif => print_ci(ctx, &ci_findings(&store, &report)),
        _ => print_text(ctx, &report),
    }
    Ok(Outcome::findings_if(report.errors > 0))
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
    print_table(
        ctx,
        &[key("file"), key("commit"), text("author"), whole("finding")],
        rows,
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
