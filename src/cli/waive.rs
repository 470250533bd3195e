use chrono::NaiveDate;
use serde::Serialize;

use super::output::print_json;
use super::{CommandError, Context, Format, Outcome};
use crate::model::waiver::{check_until, refuse_key, waivers_header, Waiver};
use crate::model::Use;
use crate::store::{layout, Edit, Step, Store};

/// Waive one clause key of DATASET until a day: a release that fails only waived keys
/// passes `validate`, reported as `waived (until DATE, by WHO: reason)`. Appended to
/// history/<dataset>.waivers.toml in one commit, with the author from git.
///
/// A waiver covers validation only: it never lets a breaking change pass as minor, never
/// shortens a window and never lifts the two-live-lines cap. `--until` is at most `[policy]
/// max_waiver_days` (90) away; past it the clause fails again with no action needed. Without
/// --line it covers every live line. Refusals exit 2 and write nothing.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset
    dataset: String,
    /// The clause key: a clause (`max_null_fraction`) or one key of it
    /// (`max_null_fraction.pop_est`, `metric_tolerances.positional_rmse_m`)
    clause: String,
    /// The last day the waiver covers
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = super::parse_day)]
    until: NaiveDate,
    /// Why: recorded with the waiver and told to the consumers it touches
    #[arg(long)]
    reason: String,
    /// Cover this line only [default: every live line]
    #[arg(long, value_name = "N")]
    line: Option<u64>,
    /// The release the waiver is granted for (its version in the release records)
    #[arg(long, value_name = "VERSION")]
    release: Option<String>,
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: &'a str,
    waiver: &'a Waiver,
    commit: Option<String>,
}

/// The clause key must be one the live contracts of the covered lines have.
fn check_key(ctx: &Context, args: &Args, store: &Store) -> Result<(), CommandError> {
    let live = store.live_contracts(&args.dataset, ctx.today)?;
    let covered: Vec<_> = live
        .iter()
        .filter(|c| args.line.is_none_or(|n| c.version.major == n))
        .collect();
    if covered.is_empty() {
        let have: Vec<String> = live.iter().map(|c| c.version.major.to_string()).collect();
        return Err(CommandError::input(format!(
            "`{}` has no live line{} on {} (live lines: {})",
            args.dataset,
            args.line.map_or(String::new(), |n| format!(" {n}")),
            ctx.today,
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        )));
    }
    let u = Use::parse(&args.clause).map_err(CommandError::input)?;
    let mut why = None;
    for c in &covered {
        match crate::model::impact::unknown_use(&u, &[c]) {
            None => return Ok(()),
            Some(w) => why = Some(w),
        }
    }
    Err(CommandError::input(why.unwrap_or_default()))
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let reason = args.reason.trim().to_string();
    if reason.is_empty() {
        return Err(CommandError::input(
            "--reason is empty: say why the release must ship anyway",
        ));
    }
    if let Some(why) = refuse_key(&args.clause) {
        return Err(CommandError::input(why));
    }
    let store = ctx.writer_store()?;
    super::context::warn_uncommitted(ctx, &store, Some(&args.dataset));
    let max = store.config().policy.max_waiver_days;
    check_until(ctx.today, args.until, max).map_err(CommandError::input)?;
    let by = store.identity()?.author_mailbox();
    let now = ctx.now().with_timezone(&chrono::Utc);
    let done = store.transact(|store| -> Result<_, CommandError> {
        check_key(ctx, args, store)?;
        let waivers = store.waivers(&args.dataset)?;
        let waiver = Waiver {
            id: waivers.next_id(&args.dataset, args.line, &args.clause, ctx.today),
            line: args.line,
            clause: args.clause.clone(),
            granted: ctx.today,
            until: args.until,
            at: now,
            by: by.clone(),
            reason: reason.clone(),
            release: args.release.clone(),
        };
        let path = layout::waivers(&args.dataset);
        let content = store.appended(&path, &waivers_header(&args.dataset), &waiver.to_toml())?;
        let message = format!(
            "waive {} {}{} until {}\n\n{}\n",
            args.dataset,
            args.clause,
            args.line.map_or(String::new(), |n| format!(" (line {n})")),
            args.until,
            reason
        );
        Ok(Step::Commit(Edit::one(path, content, message), waiver))
    })?;
    let commit = done.commit.map(|id| id.to_string());
    let w = &done.value;
    match ctx.format {
        Format::Json => print_json(
            ctx,
            &Report {
                dataset: &args.dataset,
                waiver: w,
                commit: commit.clone(),
            },
        ),
        _ => outln!(
            ctx,
            "{}: waived {} on {} until {} ({} day(s)): {}",
            w.id,
            w.clause,
            w.line
                .map_or("every live line".to_string(), |n| format!("line {n}")),
            w.until,
            w.days_left(ctx.today),
            w.reason
        ),
    }
    if let Some(id) = commit {
        talkln!(
            ctx,
            "recorded in {} (commit {})",
            layout::waivers(&args.dataset),
            &id[..12]
        );
    }
    Ok(Outcome::Clean)
}
