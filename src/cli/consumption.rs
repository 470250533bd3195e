//! `contracts consumption summarize`: fold the consumption record into a read summary
//! (docs/src/commands/consumption-summarize.md). `consumption` is a group of subcommands so
//! that what works on the record itself has one place; `summarize` is its first.

use std::path::PathBuf;

use super::{CommandError, Context, Outcome};
use crate::consumers::records::{each_read, Wanted};
use crate::consumers::summary::Summary;
use crate::consumers::{log_files, scan_report, store_scan, LogFile};
use crate::model::source::{LogFormat, Source};

/// Work on the consumption record itself
#[derive(Debug, clap::Args)]
pub struct GroupArgs {
    #[command(subcommand)]
    pub command: Group,
}

#[derive(Debug, clap::Subcommand)]
pub enum Group {
    Summarize(Args),
}

/// The formats a given file may be read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    Jsonl,
    Csv,
    Parquet,
    Summary,
}

/// Fold the consumption record into a read summary
///
/// One row per UTC day, consumer, dataset and contract version: how many reads, the first
/// and the last instant (RFC 3339, with the offset each was written with) and whether
/// consumers.toml knows the consumer. A principal the registry's identities claim is written
/// as its consumer; any other keeps its name, with `registered: false`. Every command that
/// reads the record reads a summary as it reads the log (a source with `format = "summary"`),
/// and the summary of summaries is the summary of the whole log, so summaries of days or of
/// parts can be summarized again.
///
/// Without SOURCE, the configured consumption sources are summarized; with SOURCE, those
/// files, each read in the format its name says (`.jsonl`, `.ndjson`, `.csv`, each
/// optionally `.gz`, `.parquet`) or as --input-format says, with the default field names.
/// The summary is written to --out as Parquet when its name ends in `.parquet`, as JSON
/// Lines otherwise (`-`: JSON Lines on stdout), through a file beside it renamed into place.
/// Malformed lines are reported on stderr and left out. Exit 0, 2 for a bad source or
/// config, 3 when a file cannot be read or the summary cannot be written.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Log files to summarize instead of the configured sources
    #[arg(value_name = "SOURCE")]
    sources: Vec<PathBuf>,
    /// Where to write the summary: Parquet when the name ends in `.parquet`, JSON Lines
    /// otherwise; `-` for JSON Lines on stdout
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Read every SOURCE as this format, whatever its name
    #[arg(long, value_enum, value_name = "FORMAT", requires = "sources")]
    input_format: Option<InputFormat>,
}

pub fn run_group(ctx: &Context, args: &GroupArgs) -> Result<Outcome, CommandError> {
    match &args.command {
        Group::Summarize(a) => run(ctx, a),
    }
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store()?;
    let (sources, files) = if args.sources.is_empty() {
        let sources = store.config().consumption.all_sources();
        if let Some(remote) = sources.iter().find(|s| s.is_remote()) {
            return Err(CommandError::input(format!(
                "{} is in object storage: summarize it where it is (docs/src/guides/object-storage-and-dask.md) or pass its files",
                remote.describe()
            )));
        }
        let files = log_files(store.root(), &sources)?;
        (sources, files)
    } else {
        let mut source = Source::glob("");
        source.format = args.input_format.map(|f| match f {
            InputFormat::Jsonl => LogFormat::Jsonl,
            InputFormat::Csv => LogFormat::Csv,
            InputFormat::Parquet => LogFormat::Parquet,
            InputFormat::Summary => LogFormat::Summary,
        });
        let files = args
            .sources
            .iter()
            .map(|p| LogFile {
                path: p.clone(),
                source: 0,
            })
            .collect();
        (vec![source], files)
    };
    // A source that names lines (a view per line) reads as the version valid on each day.
    let datasets = store.datasets()?.into_iter().collect();
    let valid_from = store_scan::valid_from_of(&store, &sources, &datasets)?;
    let mut summary = Summary::default();
    let mut reads = 0u64;
    let (mut shown, mut notes) = (0u64, Vec::new());
    // Every day: a summary is of whatever the logs hold (no remote source gets this far).
    let malformed = each_read(
        &sources,
        &files,
        (chrono::NaiveDate::MIN, chrono::NaiveDate::MAX),
        &Wanted::All,
        &valid_from,
        &mut |r| {
            summary.add(r.dataset, r.consumer, r.contract, r.first, r.last, r.reads)?;
            reads = reads.saturating_add(r.reads);
            Ok(())
        },
        &mut |m| {
            scan_report::note_malformed(&store, &mut shown, m, || m.reason.clone(), &mut notes)
        },
    )?;
    scan_report::note_malformed_total(malformed, &mut notes);
    super::context::talk_scan_notes(ctx, &notes);
    summary.claim(&super::context::registry(ctx, &store)?);
    if args.out.as_os_str() == "-" {
        let mut text = Vec::new();
        summary
            .write_jsonl(&mut text)
            .map_err(|e| CommandError::environment(format!("cannot render the summary: {e}")))?;
        out!(ctx, "{}", String::from_utf8_lossy(&text));
    } else {
        summary.write_file(&args.out)?;
    }
    talkln!(
        ctx,
        "summarized {} file(s): {reads} read(s) into {} row(s); {malformed} malformed",
        files.len(),
        summary.rows.len()
    );
    Ok(Outcome::Clean)
}
