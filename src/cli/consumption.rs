//! What the commands that read the consumption log share: reading the registry, scanning the
//! log (newest reads, or day by day) with malformed lines reported on stderr, and classifying
//! the log's errors.

use std::collections::BTreeSet;

use super::{CommandError, Context};
use crate::consumers::daily::{daily_reads_of, DailyReads};
use crate::consumers::{log_files, parse_registry, scan, Registry, Scan, ScanRequest};
use crate::store::{layout, Store};

/// How many malformed lines are printed one by one; the rest are only counted, so a log
/// gone wrong does not bury the report.
const SHOWN_MALFORMED: u64 = 20;

/// The registry; a store without `consumers.toml` has no registered consumer (everyone who
/// reads is then `unknown`), which is said on stderr.
pub fn registry(ctx: &Context, store: &Store) -> Result<Registry, CommandError> {
    match store.read(layout::CONSUMERS)? {
        Some(text) => Ok(parse_registry(layout::CONSUMERS, &text)?),
        None => {
            talkln!(
                ctx,
                "warning: the store has no consumers.toml: no consumer is registered"
            );
            Ok(Registry::default())
        }
    }
}

/// Scan the configured logs for reads of `datasets` in the lookback up to `--today`, naming
/// principals as `registry`'s identities claim them. The caller has read the registry (with
/// [`registry`]): a registry of ten thousand consumers takes as long to parse as two million
/// reads to scan, so it is parsed once per command.
pub fn scan_logs(
    ctx: &Context,
    store: &Store,
    datasets: BTreeSet<String>,
    registry: &Registry,
) -> Result<(Scan, ScanRequest), CommandError> {
    let consumption = &store.config().consumption;
    let sources = consumption.all_sources();
    let files = log_files(store.root(), &sources)?;
    if files.is_empty() && !sources.iter().any(|s| s.is_remote()) {
        let paths: Vec<&str> = sources.iter().map(|s| s.path.as_str()).collect();
        talkln!(ctx,
            "warning: no consumption log matches the consumption sources {paths:?}: every consumer is silent"
        );
    }
    let mut req = ScanRequest::lookback(datasets, ctx.today, consumption.lookback_days);
    // So that a read of a version the store does not have keeps the consumer's known line.
    for d in &req.datasets.clone() {
        req.known.insert(d.clone(), store.versions(d)?);
    }
    let mut shown = 0u64;
    let mut result = scan(&sources, &files, &req, &mut |m| {
        if shown < SHOWN_MALFORMED {
            let file = m.file.strip_prefix(store.root()).unwrap_or(&m.file);
            talkln!(
                ctx,
                "warning: {}:{}: {}",
                file.display(),
                m.line,
                crate::model::location::short(&m.reason)
            );
        }
        shown += 1;
    })?;
    for skipped in &result.skipped {
        let file = skipped
            .file
            .strip_prefix(store.root())
            .unwrap_or(&skipped.file);
        talkln!(
            ctx,
            "warning: {}: {}; the file is skipped",
            file.display(),
            skipped.reason
        );
    }
    // Principals become consumers through the registry's identities.
    {
        for (principal, claimants) in result.claim(registry) {
            talkln!(
                ctx,
                "warning: principal {principal:?} matches the identities of several consumers \
                 ({}); its reads are counted as unknown (run `contracts check`)",
                claimants.join(", ")
            );
        }
    }
    let s = &result.stats;
    if s.malformed > SHOWN_MALFORMED {
        talkln!(
            ctx,
            "warning: {} malformed lines in all; the first {SHOWN_MALFORMED} are shown above",
            s.malformed
        );
    }
    talkln!(ctx,
        "scanned {} file(s), {} line(s): {} read(s) from {} to {}; {} malformed, {} after --today ignored",
        s.files, s.lines, s.reads, req.from, req.to, s.malformed, s.after_today
    );
    if sources.iter().any(|s| s.is_remote()) {
        talkln!(ctx,
            "object storage: {} object(s) listed, {} read (the others cannot hold a read from {} to {})",
            s.objects_listed, s.objects_read, req.from, req.to
        );
    }
    Ok((result, req))
}

/// Scan the consumption log once for the daily reads of `datasets`, with malformed lines
/// reported on stderr (the first 20 one by one) and principals claimed by `registry`. `from`: the first day whose reads matter
/// (the lookback's, for the thresholds), so a remote source fetches no older object; `None`
/// for every day.
pub fn scan_daily(
    ctx: &Context,
    store: &Store,
    datasets: &std::collections::BTreeSet<String>,
    from: Option<chrono::NaiveDate>,
    registry: &Registry,
) -> Result<std::collections::HashMap<String, DailyReads>, CommandError> {
    let consumption = &store.config().consumption;
    let sources = consumption.all_sources();
    let files = log_files(store.root(), &sources)?;
    let mut shown = 0u64;
    let mut all = daily_reads_of(
        &sources,
        &files,
        datasets,
        from.unwrap_or(chrono::NaiveDate::MIN),
        ctx.today,
        &mut |m| {
            if shown < 20 {
                let file = m.file.strip_prefix(store.root()).unwrap_or(&m.file);
                talkln!(ctx, "warning: {}:{}: {}", file.display(), m.line, m.reason);
            }
            shown += 1;
        },
    )?;
    if shown > 20 {
        talkln!(
            ctx,
            "warning: {shown} malformed lines in all; the first 20 are shown above"
        );
    }
    // Principals are named as the registry's identities claim them.
    for daily in all.values_mut() {
        daily.claim(registry);
    }
    Ok(all)
}
