//! The consumption logs a store configures, walked for the commands that read them: the
//! newest reads in the lookback, or the reads day by day. This file gathers what a walk
//! needs from the store (the sources' files, the request, the versions) and starts it; what
//! the walk found is made into consumers and notes by the next step, `scan_report.rs`.
//! Nothing is printed: what arises during the walk (malformed lines, skipped files) is
//! pushed as typed [`ScanNote`]s, and the day is an argument.

use std::collections::{BTreeSet, HashMap};

use chrono::NaiveDate;

use super::daily::{daily_reads_and_scan, daily_reads_of, DailyReads};
use super::registry::LoadError;
use super::scan_report::{note_malformed, note_malformed_total, ScanError, ScanNote, Walked};
use super::{log_files, scan, Registry, ScanRequest};
use crate::store::{Store, StoreError};

/// The registry committed in the store (`None` without `consumers.toml`) and [`walk_logs`],
/// the registry parsed on a thread of its own during the walk: with ten thousand consumers
/// its parse is half of what a scan costs besides its reads, and nothing the walk does needs
/// it. A registry that does not load is the error, as when it was read first: the walk's
/// notes are then dropped.
pub fn registry_and_walk(
    store: &Store,
    datasets: BTreeSet<String>,
    today: NaiveDate,
    want: (bool, bool),
    notes: &mut Vec<ScanNote>,
) -> Result<(Option<Registry>, Result<Walked, ScanError>), LoadError> {
    use crate::store::layout::CONSUMERS;
    let text = store.read(CONSUMERS)?;
    let mut walk_notes = Vec::new();
    let (registry, walked) = std::thread::scope(|s| {
        let parse = s.spawn(|| {
            text.as_deref()
                .map(|t| super::registry::parse_registry(CONSUMERS, t))
                .transpose()
        });
        let walked = walk_logs(store, datasets, today, want, &mut walk_notes);
        let registry = parse
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (registry, walked)
    });
    let registry = registry?;
    notes.append(&mut walk_notes);
    Ok((registry, walked))
}

/// Walk the store's configured logs for reads of `datasets` in the lookback up to `today`:
/// the scan, its skipped files noted. `(attributes, daily)`: the reads say which attributes
/// they touched where their source can tell ([`ScanRequest::attributes`]); the reads of the
/// same datasets are counted day by day in the same walk where `daily` asks (else `daily` is
/// `None`). The principals are not yet consumers: that is the next step's
/// ([`Walked::claimed`], with the registry). Warnings are pushed onto `notes`, one each, even
/// when the walk fails.
pub fn walk_logs(
    store: &Store,
    datasets: BTreeSet<String>,
    today: NaiveDate,
    (attributes, daily): (bool, bool),
    notes: &mut Vec<ScanNote>,
) -> Result<Walked, ScanError> {
    let consumption = &store.config().consumption;
    let sources = consumption.all_sources();
    let files = log_files(store.root(), &sources)?;
    if files.is_empty() && !sources.iter().any(|s| s.is_remote()) {
        let paths = sources.iter().map(|s| s.path.clone()).collect();
        notes.push(ScanNote::NoLogs { paths });
    }
    let mut req = ScanRequest::lookback(datasets, today, consumption.lookback_days);
    req.attributes = attributes;
    // So that a read of a version the store does not have keeps the consumer's known line.
    for d in &req.datasets.clone() {
        req.known.insert(d.clone(), store.versions(d)?);
    }
    req.valid_from = valid_from_of(store, &sources, &req.datasets)?;
    let mut shown = 0u64;
    let mut on_malformed = |m: &super::Malformed| {
        let reason = || crate::model::location::short(&m.reason);
        note_malformed(store, &mut shown, m, reason, notes);
    };
    let (result, daily) = if daily {
        let (scan, daily) = daily_reads_and_scan(&sources, &files, &req, &mut on_malformed)?;
        (scan, Some(daily))
    } else {
        (scan(&sources, &files, &req, &mut on_malformed)?, None)
    };
    for skipped in &result.skipped {
        let file = skipped
            .file
            .strip_prefix(store.root())
            .unwrap_or(&skipped.file);
        notes.push(ScanNote::Skipped {
            file: file.to_path_buf(),
            reason: skipped.reason.clone(),
        });
    }
    Ok(Walked {
        scan: result,
        req,
        daily,
        files,
    })
}

/// Scan the store's configured logs once for the daily reads of `datasets` up to `today`,
/// their principals not yet claimed ([`super::scan_report::claim_daily`]). `from`: the first day whose reads matter (the
/// lookback's, for the thresholds), so a remote source fetches no older object; `None` for
/// every day. Malformed lines are pushed onto `notes` (the first 20 one by one).
pub fn scan_daily(
    store: &Store,
    datasets: &BTreeSet<String>,
    from: Option<NaiveDate>,
    today: NaiveDate,
    notes: &mut Vec<ScanNote>,
) -> Result<HashMap<String, DailyReads>, ScanError> {
    let consumption = &store.config().consumption;
    let sources = consumption.all_sources();
    let files = log_files(store.root(), &sources)?;
    let mut shown = 0u64;
    let valid_from = valid_from_of(store, &sources, datasets)?;
    let all = daily_reads_of(
        &sources,
        &files,
        datasets,
        (from.unwrap_or(NaiveDate::MIN), today),
        &valid_from,
        &mut |m| note_malformed(store, &mut shown, m, || m.reason.clone(), notes),
    )?;
    note_malformed_total(shown, notes);
    Ok(all)
}

/// Each version of `datasets` with its first day, where a source reads lines (a `{line}`
/// template, a view per line); empty otherwise, so no contract is read for nothing.
pub fn valid_from_of(
    store: &Store,
    sources: &[crate::model::source::Source],
    datasets: &BTreeSet<String>,
) -> Result<super::reads::ValidFrom, StoreError> {
    let mut out = super::reads::ValidFrom::new();
    if !sources
        .iter()
        .filter_map(|s| s.access.as_ref())
        .any(|a| a.templates().iter().any(|t| t.captures_line()))
    {
        return Ok(out);
    }
    for d in datasets {
        let mut dated = Vec::new();
        for v in store.versions(d)? {
            let contract = store.contract(d, &v.to_string(), crate::model::Strictness::Reading)?;
            dated.push((v, contract.valid_from));
        }
        out.insert(d.clone(), dated);
    }
    Ok(out)
}
