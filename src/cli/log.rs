use super::output::{key, print_json, print_table, text, Cell};
use super::{CommandError, Context, Format, Outcome};
use crate::store::{log_entries, CommitInfo, LogEntry};

/// The change records and sunset events, newest first
///
/// The change records and sunset events, each with the commit that recorded it (id, author,
/// date), newest first.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this dataset
    dataset: Option<String>,
}

/// How many records of a kind a history text holds. The append-only proof (`check`) makes
/// counting table headers enough to tell which records a commit appended.
pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store()?;
    let datasets = store.datasets_or_all(args.dataset.as_deref())?;
    let entries = log_entries(&store, &datasets, args.dataset.as_deref())?;
    match ctx.format {
        Format::Json => print_json(ctx, &entries),
        _ => print_text(ctx, &entries),
    }
    Ok(Outcome::Clean)
}

fn print_text(ctx: &Context, entries: &[LogEntry]) {
    if entries.is_empty() {
        outln!(ctx, "no change records");
        return;
    }
    let short = |c: Option<&CommitInfo>| {
        c.map_or(("-".to_string(), "-".to_string()), |c| {
            (c.id[..12].to_string(), c.author.clone())
        })
    };
    let rows = entries.iter().map(|e| match e {
        LogEntry::Change { record: r, .. } => {
            let (id, author) = short(e.commit());
            vec![
                r.at.format("%Y-%m-%d").to_string().into(),
                e.dataset().into(),
                format!("{} -> {}", r.from.as_deref().unwrap_or("-"), r.to).into(),
                r.clause.clone().into(),
                r.kind.map_or("-".to_string(), |k| k.to_string()).into(),
                r.direction.to_string().into(),
                Cell::of(r.verdict),
                r.rationale.clone().into(),
                id.into(),
                author.into(),
            ]
        }
        LogEntry::Sunset { record: r, .. } => {
            let (id, author) = short(e.commit());
            vec![
                r.at.format("%Y-%m-%d").to_string(),
                e.dataset().to_string(),
                format!("line {}", r.line),
                "(sunset)".to_string(),
                "-".to_string(),
                format!(
                    "{} -> {}{}",
                    r.from.map_or("none".to_string(), |d| d.to_string()),
                    r.to,
                    if r.forced { " forced" } else { "" }
                ),
                "-".to_string(),
                r.rationale.clone(),
                id,
                author,
            ]
            .into_iter()
            .map(Cell::plain)
            .collect()
        }
    });
    print_table(
        ctx,
        &[
            key("date"),
            key("dataset"),
            key("versions"),
            key("clause"),
            key("kind"),
            key("direction"),
            key("verdict"),
            text("rationale"),
            key("commit"),
            text("author"),
        ],
        rows,
    );
}
