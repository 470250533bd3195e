use chrono::NaiveDate;
use serde::Serialize;

use super::output::print_json;
use super::{CommandError, Context, Format, Outcome};
use crate::model::history::{history_header, SunsetRecord};
use crate::model::sunset::check_move;
use crate::store::{layout, Edit, Step, Store};

/// Set or move a line's sunset
///
/// Set or move a line's sunset, recorded as a `[[sunset]]` event in one commit.
///
/// A sunset may move later, never earlier: consumers planned their migration on it. Moving it
/// earlier, into the past, or outside the policy's window needs `--force`, and the record says
/// it was forced. Refusals exit 1 and write nothing.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset
    dataset: String,
    /// The line (major version number)
    line: u64,
    /// The new sunset: the first day the line is no longer live
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = super::parse_day)]
    on: NaiveDate,
    /// Why: recorded with the event
    #[arg(long)]
    rationale: String,
    /// Allow moving the sunset earlier, into the past, or outside the policy window
    #[arg(long)]
    force: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: &'a str,
    line: u64,
    from: Option<NaiveDate>,
    to: NaiveDate,
    accepted: bool,
    refusals: &'a [String],
    forced: bool,
    commit: Option<String>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    if args.rationale.trim().is_empty() {
        return Err(CommandError::input(
            "--rationale is empty: say why the sunset moves",
        ));
    }
    let store = ctx.writer_store()?;
    super::context::warn_uncommitted(ctx, &store, Some(&args.dataset));
    let now = ctx.now().with_timezone(&chrono::Utc);
    let rationale = args.rationale.trim().to_string();
    // The rules are checked at whatever HEAD the record lands on: when another writer moves
    // the store first (another sunset of this line, a new line), they are checked again there.
    let done = store.transact(|store| -> Result<_, CommandError> {
        let decided = decide(ctx, args, store)?;
        if decided.already || !decided.refusals.is_empty() {
            return Ok(Step::Nothing(decided));
        }
        let record = SunsetRecord {
            at: now,
            line: args.line,
            from: decided.current,
            to: args.on,
            rationale: rationale.clone(),
            forced: decided.forced,
        };
        let path = layout::history(&args.dataset);
        let content = store.appended(&path, &history_header(&args.dataset), &record.to_toml())?;
        let message = format!(
            "sunset {} line {}: {} -> {}{}\n\n{}\n",
            args.dataset,
            args.line,
            decided
                .current
                .map_or("none".to_string(), |d| d.to_string()),
            args.on,
            if decided.forced { " (forced)" } else { "" },
            record.rationale
        );
        Ok(Step::Commit(Edit::one(path, content, message), decided))
    })?;
    let Decided {
        current,
        refusals,
        forced,
        already,
    } = done.value;
    if already {
        talkln!(
            ctx,
            "line {} of {} already sunsets on {}; nothing to record",
            args.line,
            args.dataset,
            args.on
        );
        return Ok(Outcome::Clean);
    }
    let accepted = refusals.is_empty();
    let commit = done.commit.map(|id| id.to_string());
    let report = Report {
        dataset: &args.dataset,
        line: args.line,
        from: current,
        to: args.on,
        accepted,
        refusals: &refusals,
        forced,
        commit: commit.clone(),
    };
    match ctx.format {
        Format::Json => print_json(ctx, &report),
        _ => outln!(
            ctx,
            "{} line {}: sunset {} -> {}{}",
            args.dataset,
            args.line,
            current.map_or("none".to_string(), |d| d.to_string()),
            args.on,
            if accepted { "" } else { "  REFUSED" }
        ),
    }
    if !accepted {
        errln!(ctx, "error: sunset refused; nothing was written:");
        for r in &refusals {
            errln!(ctx, "  - {r}");
        }
        return Ok(Outcome::Findings);
    }
    if let Some(id) = commit {
        talkln!(ctx, "recorded in commit {}", &id[..12]);
    }
    Ok(Outcome::Clean)
}

/// What the rules said at the HEAD the last attempt read.
struct Decided {
    current: Option<NaiveDate>,
    refusals: Vec<String>,
    forced: bool,
    /// The line already sunsets on the day asked for: nothing to record.
    already: bool,
}

/// Check the sunset move against the store at one HEAD. The rules live in the domain
/// (`model::sunset`), shared with `check`, which replays every recorded move.
fn decide(ctx: &Context, args: &Args, store: &Store) -> Result<Decided, CommandError> {
    let lines = store.lines(&args.dataset)?;
    let Some(line) = lines.iter().find(|l| l.major == args.line) else {
        return Err(CommandError::input(format!(
            "dataset `{}` has no line {} (lines: {})",
            args.dataset,
            args.line,
            lines
                .iter()
                .map(|l| l.major.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    let current = line.sunset;
    if current == Some(args.on) {
        return Ok(Decided {
            current,
            refusals: Vec::new(),
            forced: false,
            already: true,
        });
    }
    let check = check_move(
        &lines,
        args.line,
        args.on,
        Some(ctx.today),
        &store.config().policy,
    );
    let mut refusals: Vec<String> = check.refusals.iter().map(|r| r.to_string()).collect();
    if !args.force {
        refusals.extend(
            check
                .needs_force
                .iter()
                .map(|r| format!("{r} (use --force to override)")),
        );
    }
    // Never append to a history that does not parse.
    store.history(&args.dataset)?;
    Ok(Decided {
        current,
        refusals,
        forced: args.force && !check.needs_force.is_empty(),
        already: false,
    })
}
