use std::path::PathBuf;

use serde::Serialize;

use super::context::{print_ci, read_input, talk_backtest};
use super::output::{changes_table, print_backtest, print_json, print_verdicts};
use super::{CommandError, Context, Format, Outcome};
use crate::model::consistency::moves_of;
use crate::model::contract::crossings;
use crate::model::history::{history_header, ChangeRecord};
use crate::model::proposal::Step as RuleStep;
use crate::model::proposal::{early_removals, judge, records, Refusal};
use crate::model::{parse_contract, Bump, Change, ChangeSet, Contract, Strictness};
use crate::release::record::{backtest, parse_records, Backtest};
use crate::render::ci_findings::{change_findings, refusal_findings};
use crate::store::{layout, Edit, Step};

/// What the rules said at the HEAD the last attempt read.
struct Decided {
    draft: Contract,
    prev: Option<Contract>,
    step: RuleStep,
    refusals: Vec<Refusal>,
    recs: Vec<ChangeRecord>,
    /// The committed consumer registry, for the per-consumer verdicts.
    registry: crate::consumers::Registry,
    backtest: Backtest,
}

/// Propose a new contract version and record it
///
/// Propose a new contract version: check the draft against the dataset's newest version
/// (verdicts, bump, window, the two-live cap, kinds, the new-clause policy), then write the
/// contract and one change record per changed clause in one commit.
///
/// A refused proposal exits 1 naming every reason and writes nothing; an unreadable or
/// invalid draft exits 2.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The draft contract file
    draft: PathBuf,
    /// Why the change is wanted: recorded with every change record
    #[arg(long)]
    rationale: String,
    /// Check and print what would be recorded, write nothing
    #[arg(long)]
    dry_run: bool,
    /// Backtest the changed and added clauses on the releases validated on or after this day
    /// [default: 365 days before --today]
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = super::parse_day)]
    since: Option<chrono::NaiveDate>,
    /// Publish even though the description still says TODO (it can never be edited later)
    #[arg(long)]
    allow_placeholder: bool,
    /// Remove a deprecated key before its remove_after (the rationale says why)
    #[arg(long)]
    force: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: &'a str,
    version: String,
    supersedes: Option<String>,
    accepted: bool,
    refusals: Vec<String>,
    bump: Option<Bump>,
    changes: &'a [Change],
    records: &'a [ChangeRecord],
    commit: Option<String>,
    dry_run: bool,
    /// Each consumer subscribed to the dataset, with its verdict on these changes.
    consumers: Vec<crate::model::Impact>,
    /// The changed and added clauses replayed on the recorded releases.
    backtest: &'a [crate::release::record::Replay],
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    refuse_unless_dry_run(ctx, args.dry_run)?;
    if args.rationale.trim().is_empty() {
        return Err(CommandError::input(
            "--rationale is empty: say why the change is wanted; it is unrecoverable later",
        ));
    }
    // A dry run writes nothing, so it neither repairs the checkout nor syncs with the remote.
    let store = if args.dry_run {
        ctx.store_unwarned()?
    } else {
        ctx.writer_store()?
    };
    let draft_name = args.draft.display().to_string();
    let text = read_input(&args.draft)?;
    let draft_text = text.clone();
    let now = ctx.now().with_timezone(&chrono::Utc);
    let rationale = args.rationale.trim();
    // Said once, before the rules run (they may run again on a moved HEAD): the draft's
    // crossing envelopes, and uncommitted changes to the files this proposal reads.
    if let Ok(draft) = parse_contract(&draft_name, &text, &store.config().kinds, Strictness::Draft)
    {
        for x in crossings(&draft) {
            talkln!(ctx, "note: {}@{}: {x}", draft.dataset, draft.version);
        }
        super::context::warn_uncommitted(ctx, &store, Some(&draft.dataset));
    }
    // The rules are checked at whatever HEAD the commit lands on: when another writer moves
    // the store first, they are checked again on its new HEAD (a new newest version, a second
    // live line) before the change is rebuilt there.
    let done = store.transact(|store| -> Result<_, CommandError> {
        // Read leniently so a clause with no kind is one refusal among the others (exit 1),
        // not a parse error; every other mistake in the draft is bad input (exit 2).
        let draft = parse_contract(&draft_name, &text, &store.config().kinds, Strictness::Draft)?;
        let dataset = draft.dataset.clone();
        let existing: Vec<Contract> = if store.versions(&dataset)?.is_empty() {
            Vec::new()
        } else {
            store.contracts(&dataset, Strictness::Writing)?
        };
        let history = store.history(&dataset)?;
        if existing.iter().any(|c| c.version == draft.version) {
            let refusal = already_published(store, &history, &draft)?;
            let step = RuleStep {
                changes: ChangeSet {
                    changes: Vec::new(),
                    required: Bump::None,
                },
                bump: Bump::None,
                refusals: Vec::new(),
            };
            let backtest = Backtest::none(ctx.today);
            return Ok(Step::Nothing(Decided {
                draft,
                prev: None,
                step,
                refusals: vec![refusal],
                recs: Vec::new(),
                registry: crate::consumers::registry::load(store)?.unwrap_or_default(),
                backtest,
            }));
        }
        let prev = existing.last().cloned();
        let (step, mut refusals) = judge(
            &existing,
            &moves_of(&history),
            &draft,
            store.config(),
            args.allow_placeholder,
        );
        // Not a rule of the step (`check` replays those): a forced removal stays legal later.
        let early = prev
            .as_ref()
            .map_or_else(Vec::new, |p| early_removals(p, &draft));
        if !args.force {
            refusals.extend(early.iter().map(|e| Refusal::RemovedBeforeDeadline {
                version: draft.version.clone(),
                key: e.key.clone(),
                remove_after: e.remove_after,
                valid_from: e.valid_from,
            }));
        }
        let accepted = refusals.is_empty();
        let recs = if accepted {
            records(
                prev.as_ref(),
                &draft,
                &step.changes,
                step.bump,
                now,
                rationale,
            )
        } else {
            Vec::new()
        };
        let registry = crate::consumers::registry::load(store)?.unwrap_or_default();
        let path = layout::releases(&draft.dataset);
        let releases = parse_records(&path, &store.read(&path)?.unwrap_or_default())?;
        let backtest = backtest(&releases, ctx.today, args.since, prev.as_ref(), &draft);
        let decided = Decided {
            draft,
            prev,
            step,
            refusals,
            recs,
            registry,
            backtest,
        };
        if !accepted || args.dry_run {
            return Ok(Step::Nothing(decided));
        }
        let Decided {
            draft,
            prev,
            step,
            recs,
            ..
        } = &decided;
        let history_path = layout::history(&dataset);
        let appended: String = recs.iter().map(ChangeRecord::to_toml).collect();
        let files = vec![
            (
                layout::contract(&dataset, &draft.version.to_string()),
                text.clone().into_bytes(),
            ),
            (
                history_path.clone(),
                store.appended(&history_path, &history_header(&dataset), &appended)?,
            ),
        ];
        let what = match prev {
            Some(_) => format!("{} bump", step.bump),
            None => "first version".to_string(),
        };
        let message = format!(
            "propose {dataset} {}: {what}, {} change record(s)\n\n{rationale}\n",
            draft.version,
            recs.len(),
        );
        Ok(Step::Commit(Edit { files, message }, decided))
    })?;
    let d = done.value;
    let (draft, step, refusals, recs, backtest) =
        (&d.draft, &d.step, &d.refusals, &d.recs, &d.backtest);
    let dataset = draft.dataset.clone();
    let prev = d.prev.as_ref();
    let accepted = refusals.is_empty();
    let commit = done.commit.map(|id| id.to_string());
    let consumers = d.registry.impacts(&dataset, &step.changes.changes);

    let report = Report {
        dataset: &dataset,
        version: draft.version.to_string(),
        supersedes: draft.supersedes.as_ref().map(|v| v.to_string()),
        accepted,
        refusals: refusals.iter().map(refusal_text).collect(),
        bump: prev.map(|_| step.bump),
        changes: &step.changes.changes,
        records: recs,
        commit: commit.clone(),
        dry_run: args.dry_run,
        consumers,
        backtest: &backtest.clauses,
    };
    talk_backtest(ctx, &dataset, backtest);
    match ctx.format {
        Format::Json => print_json(ctx, &report),
        Format::Github | Format::Sarif => {
            let file = draft_name.replace('\\', "/");
            let findings = if accepted {
                change_findings(&step.changes.changes, true, &file, Some(&draft_text))
            } else {
                refusal_findings(refusals, &file, &draft_text)
            };
            print_ci(ctx, &findings);
        }
        _ => {
            print_text(ctx, &report);
            outln!(ctx);
            print_backtest(ctx, backtest, &dataset);
        }
    }
    if !accepted {
        errln!(
            ctx,
            "error: proposal of {dataset} {} refused ({} reason(s)); nothing was written:",
            draft.version,
            refusals.len()
        );
        for r in refusals {
            errln!(ctx, "  - {}", refusal_text(r));
        }
        return Ok(Outcome::Findings);
    }
    if args.force {
        for e in prev.map_or_else(Vec::new, |p| early_removals(p, draft)) {
            talkln!(
                ctx,
                "forced: {} removes `{}` from {}, before its remove_after {}",
                draft.version,
                e.key,
                e.valid_from,
                e.remove_after
            );
        }
    }
    match (&commit, args.dry_run) {
        (Some(id), _) => talkln!(
            ctx,
            "recorded {dataset} {} with {} change record(s) in commit {}",
            draft.version,
            recs.len(),
            &id[..12]
        ),
        (None, true) => talkln!(
            ctx,
            "dry run: {dataset} {} would be accepted; nothing was written",
            draft.version
        ),
        (None, false) => {}
    }
    Ok(Outcome::Clean)
}

/// The refusal of a draft whose version the store already holds, naming when and where it
/// was published (the commit that appended its first change record).
fn already_published(
    store: &crate::store::Store,
    history: &crate::model::history::History,
    draft: &Contract,
) -> Result<Refusal, CommandError> {
    let version = draft.version.to_string();
    let index = history.change.iter().position(|r| r.to == version);
    let on = index.map(|i| history.change[i].at.date_naive());
    let commit = match index {
        Some(i) => store
            .record_origins(Some(&draft.dataset))?
            .get(&(layout::history(&draft.dataset), "[[change]]", i))
            .map(|o| o.id.chars().take(12).collect()),
        None => None,
    };
    Ok(Refusal::AlreadyPublished {
        version: draft.version.clone(),
        on,
        commit,
    })
}

fn print_text(ctx: &Context, r: &Report) {
    match &r.supersedes {
        Some(s) => outln!(ctx, "{} {} -> {}", r.dataset, s, r.version),
        None => outln!(ctx, "{} {} (first version)", r.dataset, r.version),
    }
    if !r.changes.is_empty() {
        outln!(ctx, "{}", changes_table(ctx, r.changes));
    }
    if let Some(b) = r.bump {
        outln!(ctx, "bump: {b}");
    }
    if let Some(w) = r.records.first().and_then(|rec| rec.window) {
        outln!(
            ctx,
            "window: {} .. {} ({} days)",
            w.opens,
            w.sunset,
            (w.sunset - w.opens).num_days()
        );
    }
    outln!(ctx, "{}", if r.accepted { "accepted" } else { "REFUSED" });
    if r.supersedes.is_some() && r.bump.is_some() {
        outln!(ctx);
        print_verdicts(ctx, r.dataset, &r.consumers);
    }
}

/// A refusal in words; an insufficient bump names what breaks in each clause (the keys of a
/// map, the members of a set) instead of printing both whole values.
fn refusal_text(r: &Refusal) -> String {
    r.text_with(crate::render::delta::change_words)
}

/// Refuse a CI format for a command that writes (`propose` without `--dry-run`).
pub fn refuse_unless_dry_run(ctx: &Context, dry_run: bool) -> Result<(), CommandError> {
    if ctx.format.is_ci() && !dry_run {
        return Err(CommandError::input(
            "`propose` speaks --format github and sarif only with --dry-run",
        ));
    }
    Ok(())
}
