use serde::Serialize;

use super::output::print_json;
use super::{CommandError, Context, Format, Outcome};
use crate::model::waiver::{waivers_header, Revocation};
use crate::store::{layout, Edit, Step};

/// Revoke the live waivers of one clause key of DATASET (of every line, or of --line N):
/// from --today on they cover nothing. Appended to history/<dataset>.waivers.toml in one
/// commit, with the author from git. Exit 1 when no live waiver matches (nothing written).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset
    dataset: String,
    /// The clause key, as waived (`max_null_fraction.pop_est`)
    clause: String,
    /// Why: recorded with the revocation
    #[arg(long)]
    reason: String,
    /// Only the waivers of this line (a waiver of every live line is revoked by naming no
    /// line)
    #[arg(long, value_name = "N")]
    line: Option<u64>,
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: &'a str,
    revoked: &'a [Revocation],
    commit: Option<String>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let reason = args.reason.trim().to_string();
    if reason.is_empty() {
        return Err(CommandError::input("--reason is empty: say why"));
    }
    let store = ctx.writer_store()?;
    super::context::warn_uncommitted(ctx, &store, Some(&args.dataset));
    store.require_dataset(&args.dataset)?;
    let by = store.identity()?.author_mailbox();
    let now = ctx.now().with_timezone(&chrono::Utc);
    let done = store.transact(|store| -> Result<_, CommandError> {
        let waivers = store.waivers(&args.dataset)?;
        let revoked: Vec<Revocation> = waivers
            .live(ctx.today)
            .filter(|w| w.clause == args.clause && (args.line.is_none() || w.line == args.line))
            .map(|w| Revocation {
                id: w.id.clone(),
                on: ctx.today,
                at: now,
                by: by.clone(),
                reason: reason.clone(),
            })
            .collect();
        if revoked.is_empty() {
            return Ok(Step::Nothing(revoked));
        }
        let text: String = revoked.iter().map(Revocation::to_toml).collect();
        let path = layout::waivers(&args.dataset);
        let content = store.appended(&path, &waivers_header(&args.dataset), &text)?;
        let ids: Vec<&str> = revoked.iter().map(|r| r.id.as_str()).collect();
        let message = format!(
            "unwaive {} {}: {}\n\n{}\n",
            args.dataset,
            args.clause,
            ids.join(", "),
            reason
        );
        Ok(Step::Commit(Edit::one(path, content, message), revoked))
    })?;
    let commit = done.commit.map(|id| id.to_string());
    let revoked = &done.value;
    match ctx.format {
        Format::Json => print_json(
            ctx,
            &Report {
                dataset: &args.dataset,
                revoked,
                commit: commit.clone(),
            },
        ),
        _ => {
            for r in revoked {
                outln!(ctx, "{}: revoked from {}: {}", r.id, r.on, r.reason);
            }
        }
    }
    if revoked.is_empty() {
        talkln!(
            ctx,
            "no live waiver of `{}` on {}{}; nothing was written",
            args.clause,
            args.dataset,
            args.line.map_or(String::new(), |n| format!(" line {n}"))
        );
        return Ok(Outcome::Findings);
    }
    if let Some(id) = commit {
        talkln!(ctx, "recorded in commit {}", &id[..12]);
    }
    Ok(Outcome::Clean)
}
