use std::path::PathBuf;

use chrono::NaiveDate;
use serde::Serialize;

use super::context::read_input;
use super::output::{key, print_json, table};
use super::{CommandError, Context, Format, Outcome};
use crate::model::{derive_changes, parse_contract, Contract, Direction, Kind, Strictness};
use crate::release::record::{parse_records, replay, Replay};
use crate::store::{layout, Store};

/// How far back the replay looks by default: a year of releases.
pub const DEFAULT_DAYS: i64 = 365;

/// Replay a draft on the releases recorded before it
///
/// Replay a draft's changed and added clauses on the recorded release profiles of its dataset
/// (`validate --record` keeps each release's profile), and report per clause how many
/// releases it would have failed, and which. Writes nothing.
///
/// A narrowing clause that would have failed recorded releases is a warning naming them.
/// Exit 0, or 2 for an unreadable draft or store.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The draft contract file
    draft: PathBuf,
    /// Replay on the releases validated on or after this day [default: 365 days before
    /// --today]
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = super::parse_day)]
    since: Option<NaiveDate>,
}

/// The replay of one draft.
#[derive(Debug, Clone, Serialize)]
pub struct Backtest {
    /// The first day of the releases replayed on (validated from it to --today).
    pub since: NaiveDate,
    /// Recorded releases validated in that span.
    pub releases: usize,
    /// Of those, how many were recorded before profiles were kept and could not be replayed.
    pub without_profile: usize,
    pub clauses: Vec<Replay>,
    /// The kind of each clause replayed, for the narrowing warning.
    #[serde(skip)]
    kinds: Vec<Kind>,
}

impl Backtest {
    /// No replay at all: for a proposal refused before any rule ran.
    pub fn none(since: NaiveDate) -> Backtest {
        Backtest {
            since,
            releases: 0,
            without_profile: 0,
            clauses: Vec::new(),
            kinds: Vec::new(),
        }
    }
}

/// The clauses of `draft` a replay is about: those changed or added since `prev` (all of
/// them for a first version); a removed clause has nothing to replay.
fn replayed_clauses(prev: Option<&Contract>, draft: &Contract) -> Vec<String> {
    let mut out: Vec<String> = match prev {
        None => draft.clauses.keys().cloned().collect(),
        Some(prev) => derive_changes(prev, draft)
            .changes
            .iter()
            .filter(|c| c.direction != Direction::Removed)
            .map(|c| c.clause.split('.').next().unwrap_or(&c.clause).to_string())
            .filter(|c| draft.clauses.contains_key(c))
            .collect(),
    };
    out.dedup();
    out
}

/// Replay `draft` (whose newest committed predecessor is `prev`) on the recorded releases of
/// its dataset validated from `since` (default: [`DEFAULT_DAYS`] before `today`) to `today`.
pub fn backtest(
    store: &Store,
    today: NaiveDate,
    since: Option<NaiveDate>,
    prev: Option<&Contract>,
    draft: &Contract,
) -> Result<Backtest, CommandError> {
    let since = since.unwrap_or(today - chrono::Duration::days(DEFAULT_DAYS));
    let path = layout::releases(&draft.dataset);
    let text = store.read(&path)?.unwrap_or_default();
    let records = parse_records(&path, &text)?;
    let span: Vec<_> = records
        .iter()
        .filter(|r| r.validated >= since && r.validated <= today)
        .collect();
    let clauses = replayed_clauses(prev, draft);
    let kinds = clauses.iter().map(|c| draft.clauses[c].spec.kind).collect();
    Ok(Backtest {
        since,
        releases: span.len(),
        without_profile: span.iter().filter(|r| r.profile.is_none()).count(),
        clauses: replay(&span, draft, &clauses),
        kinds,
    })
}

impl Backtest {
    /// The warnings on stderr: a narrowing that would have failed recorded releases, and the
    /// releases that could not be replayed.
    pub fn warn(&self, ctx: &Context, dataset: &str) {
        for (r, kind) in self.clauses.iter().zip(&self.kinds) {
            if *kind == Kind::Narrowing && r.would_fail > 0 {
                talkln!(
                    ctx,
                    "warning: {dataset}: narrowing `{}` would have failed {} of {} recorded \
                     release(s) since {}: {}",
                    r.clause,
                    r.would_fail,
                    r.evaluated,
                    self.since,
                    r.releases.join(", ")
                );
            }
        }
        if self.without_profile > 0 {
            talkln!(
                ctx,
                "note: {dataset}: {} recorded release(s) since {} have no profile (recorded \
                 before profiles were kept) and were not replayed",
                self.without_profile,
                self.since
            );
        }
    }

    /// The replay as a table, printed after the consumers' verdicts.
    pub fn print_text(&self, ctx: &Context, dataset: &str) {
        if self.clauses.is_empty() {
            outln!(ctx, "backtest: no changed or added clause to replay");
            return;
        }
        outln!(
            ctx,
            "backtest on {} recorded release(s) of {dataset} validated since {}:",
            self.releases - self.without_profile,
            self.since
        );
        let rows = self.clauses.iter().map(|r| {
            vec![
                r.clause.clone(),
                r.evaluated.to_string(),
                r.would_fail.to_string(),
                if r.releases.is_empty() {
                    "-".to_string()
                } else {
                    r.releases.join(", ")
                },
            ]
        });
        outln!(
            ctx,
            "{}",
            table(
                ctx,
                &[
                    key("clause"),
                    key("evaluated"),
                    key("would fail"),
                    key("releases")
                ],
                rows
            )
        );
    }
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: &'a str,
    version: String,
    today: NaiveDate,
    since: NaiveDate,
    releases: usize,
    without_profile: usize,
    backtest: &'a [Replay],
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store_unwarned()?;
    let name = args.draft.display().to_string();
    let text = read_input(&args.draft)?;
    let draft = parse_contract(&name, &text, &store.config().kinds, Strictness::Reading)?;
    super::context::warn_uncommitted(ctx, &store, Some(&draft.dataset));
    let prev = if store.versions(&draft.dataset)?.is_empty() {
        None
    } else {
        store.contracts(&draft.dataset, Strictness::Reading)?.pop()
    };
    let bt = backtest(&store, ctx.today, args.since, prev.as_ref(), &draft)?;
    bt.warn(ctx, &draft.dataset);
    match ctx.format {
        Format::Json => print_json(
            ctx,
            &Report {
                dataset: &draft.dataset,
                version: draft.version.to_string(),
                today: ctx.today,
                since: bt.since,
                releases: bt.releases,
                without_profile: bt.without_profile,
                backtest: &bt.clauses,
            },
        ),
        _ => bt.print_text(ctx, &draft.dataset),
    }
    Ok(Outcome::Clean)
}
