//! The consumption logs a store configures, scanned for the commands that read them: the
//! newest reads in the lookback, or the reads day by day. Nothing is printed: what the user
//! should see on stderr (malformed lines, the first 20 one by one; skipped files; principals
//! several consumers claim; the scan's counts) comes back as notes, in the order it arose,
//! and the day is an argument.

use std::collections::{BTreeSet, HashMap};

use chrono::NaiveDate;

use super::daily::{daily_reads_of, DailyReads};
use super::registry::LoadError;
use super::source_health::{Blindness, SourceCounts};
use super::{log_files, scan, LogError, LogFile, Registry, Scan, ScanRequest};
use crate::store::{Store, StoreError};

/// How many malformed lines are noted one by one; the rest are only counted, so a log gone
/// wrong does not bury the report.
const SHOWN_MALFORMED: u64 = 20;

/// Why a store's logs could not be scanned: the store or a log could not be read. The audit
/// of the store fails for the same two reasons (and one of its own).
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Log(#[from] LogError),
}

/// Scan the store's configured logs for reads of `datasets` in the lookback up to `today`,
/// naming principals as `registry`'s identities claim them. The caller has read the registry
/// (with [`super::registry::load`]): a registry of ten thousand consumers takes as long to
/// parse as two million reads to scan, so it is parsed once per command. Warnings and the
/// scan's counts are pushed onto `notes`, one line each, even when the scan fails.
pub fn scan_logs(
    store: &Store,
    datasets: BTreeSet<String>,
    registry: &Registry,
    today: NaiveDate,
    notes: &mut Vec<String>,
) -> Result<(Scan, ScanRequest), ScanError> {
    let scanned = scan_unclaimed(store, datasets, today, notes)?;
    Ok(claimed(store, scanned, registry, notes))
}

/// What [`scan_logs`] gives.
pub type Scanned = Result<(Scan, ScanRequest), ScanError>;

/// The registry committed in the store (`None` without `consumers.toml`) and [`scan_logs`]
/// with it, the registry parsed on a thread of its own while the logs are scanned: with ten
/// thousand consumers its parse is half of what a scan costs besides its reads, and nothing
/// the scan does needs it before the principals are claimed. A registry that does not load
/// is the error, as when it was read first: the scan's notes are then dropped.
pub fn registry_and_scan(
    store: &Store,
    datasets: BTreeSet<String>,
    today: NaiveDate,
    notes: &mut Vec<String>,
) -> Result<(Option<Registry>, Scanned), LoadError> {
    use crate::store::layout::CONSUMERS;
    let text = store.read(CONSUMERS)?;
    let mut scan_notes = Vec::new();
    let (registry, scanned) = std::thread::scope(|s| {
        let parse = s.spawn(|| {
            text.as_deref()
                .map(|t| super::registry::parse_registry(CONSUMERS, t))
                .transpose()
        });
        let scanned = scan_unclaimed(store, datasets, today, &mut scan_notes);
        let registry = parse
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (registry, scanned)
    });
    let registry = registry?;
    notes.append(&mut scan_notes);
    let scanned = scanned.map(|s| {
        let none = Registry::default();
        claimed(store, s, registry.as_ref().unwrap_or(&none), notes)
    });
    Ok((registry, scanned))
}

/// [`scan_logs`] before its principals are claimed: the scan, its skipped files noted.
fn scan_unclaimed(
    store: &Store,
    datasets: BTreeSet<String>,
    today: NaiveDate,
    notes: &mut Vec<String>,
) -> Result<(Scan, ScanRequest), ScanError> {
    let consumption = &store.config().consumption;
    let sources = consumption.all_sources();
    let files = log_files(store.root(), &sources)?;
    if files.is_empty() && !sources.iter().any(|s| s.is_remote()) {
        let paths: Vec<&str> = sources.iter().map(|s| s.path.as_str()).collect();
        notes.push(format!(
            "warning: no consumption log matches the consumption sources {paths:?}: every consumer is silent"
        ));
    }
    let mut req = ScanRequest::lookback(datasets, today, consumption.lookback_days);
    // So that a read of a version the store does not have keeps the consumer's known line.
    for d in &req.datasets.clone() {
        req.known.insert(d.clone(), store.versions(d)?);
    }
    req.valid_from = valid_from_of(store, &sources, &req.datasets)?;
    let mut shown = 0u64;
    let result = scan(&sources, &files, &req, &mut |m| {
        if shown < SHOWN_MALFORMED {
            notes.push(malformed_warning(
                store,
                m,
                &crate::model::location::short(&m.reason),
            ));
        }
        shown += 1;
    })?;
    let mut result = result;
    judge_sources(store, &sources, &files, &mut result, &req)?;
    for skipped in &result.skipped {
        let file = skipped
            .file
            .strip_prefix(store.root())
            .unwrap_or(&skipped.file);
        notes.push(format!(
            "warning: {}: {}; the file is skipped",
            file.display(),
            skipped.reason
        ));
    }
    Ok((result, req))
}

/// Principals made consumers through `registry`'s identities, and the scan's counts noted.
fn claimed(
    store: &Store,
    (mut result, req): (Scan, ScanRequest),
    registry: &Registry,
    notes: &mut Vec<String>,
) -> (Scan, ScanRequest) {
    let remote = store
        .config()
        .consumption
        .all_sources()
        .iter()
        .any(|s| s.is_remote());
    // Principals become consumers through the registry's identities.
    for (principal, claimants) in result.claim(registry) {
        notes.push(format!(
            "warning: principal {principal:?} matches the identities of several consumers \
             ({}); its reads are counted as unknown (run `contracts check`)",
            claimants.join(", ")
        ));
    }
    let s = &result.stats;
    if s.malformed > SHOWN_MALFORMED {
        notes.push(format!(
            "warning: {} malformed lines in all; the first {SHOWN_MALFORMED} are shown above",
            s.malformed
        ));
    }
    notes.push(format!(
        "scanned {} file(s), {} line(s): {} read(s) from {} to {}; {} malformed, {} after --today ignored",
        s.files, s.lines, s.reads, req.from, req.to, s.malformed, s.after_today
    ));
    let sources = store.config().consumption.all_sources();
    for (counts, source) in s.sources.iter().zip(&sources) {
        if let Some(line) = access_summary(counts) {
            notes.push(line);
        }
        if let Some(warning) = blind_warning(counts, source, &req) {
            notes.push(warning);
        }
    }
    if remote {
        notes.push(format!(
            "object storage: {} object(s) listed, {} read (the others cannot hold a read from {} to {})",
            s.objects_listed, s.objects_read, req.from, req.to
        ));
    }
    (result, req)
}

/// Scan the store's configured logs once for the daily reads of `datasets` up to `today`,
/// with principals claimed by `registry`. `from`: the first day whose reads matter (the
/// lookback's, for the thresholds), so a remote source fetches no older object; `None` for
/// every day. Malformed lines are pushed onto `notes` (the first 20 one by one).
pub fn scan_daily(
    store: &Store,
    datasets: &BTreeSet<String>,
    from: Option<NaiveDate>,
    today: NaiveDate,
    registry: &Registry,
    notes: &mut Vec<String>,
) -> Result<HashMap<String, DailyReads>, ScanError> {
    let consumption = &store.config().consumption;
    let sources = consumption.all_sources();
    let files = log_files(store.root(), &sources)?;
    let mut shown = 0u64;
    let valid_from = valid_from_of(store, &sources, datasets)?;
    let mut all = daily_reads_of(
        &sources,
        &files,
        datasets,
        (from.unwrap_or(NaiveDate::MIN), today),
        &valid_from,
        &mut |m| {
            if shown < SHOWN_MALFORMED {
                notes.push(malformed_warning(store, m, &m.reason));
            }
            shown += 1;
        },
    )?;
    if shown > SHOWN_MALFORMED {
        notes.push(format!(
            "warning: {shown} malformed lines in all; the first 20 are shown above"
        ));
    }
    // Principals are named as the registry's identities claim them.
    for daily in all.values_mut() {
        daily.claim(registry);
    }
    Ok(all)
}

/// The warning for one malformed line, its file named from the store's root; line 0 is the
/// whole file (one that is skipped).
fn malformed_warning(store: &Store, m: &super::Malformed, reason: &str) -> String {
    let file = m.file.strip_prefix(store.root()).unwrap_or(&m.file);
    match m.line {
        0 => format!("warning: {}: {reason}", file.display()),
        line => format!("warning: {}:{line}: {reason}", file.display()),
    }
}

/// Judge each source of a finished scan ([`SourceCounts::judge`]). A source with no read of
/// the datasets asked for may still read others: only then is it scanned again, alone, for
/// reads of every dataset of the store, so a healthy source of other datasets is not called
/// blind and the common case costs nothing.
fn judge_sources(
    store: &Store,
    sources: &[crate::model::source::Source],
    files: &[LogFile],
    result: &mut Scan,
    req: &ScanRequest,
) -> Result<(), ScanError> {
    let mut all: Option<BTreeSet<String>> = None;
    for (i, counts) in result.stats.sources.iter_mut().enumerate() {
        if counts.reads > 0 || !counts.expect_reads {
            counts.judge(counts.reads > 0);
            continue;
        }
        let datasets = match &all {
            Some(d) => d.clone(),
            None => all.insert(store.datasets()?.into_iter().collect()).clone(),
        };
        let others: BTreeSet<String> = datasets.difference(&req.datasets).cloned().collect();
        let read_any = !others.is_empty() && {
            let mine: Vec<LogFile> = files
                .iter()
                .filter(|f| f.source == i)
                .map(|f| LogFile {
                    path: f.path.clone(),
                    source: 0,
                })
                .collect();
            let probe = ScanRequest {
                datasets: others,
                ..req.clone()
            };
            scan(&sources[i..=i], &mine, &probe, &mut |_| {})?
                .stats
                .reads
                > 0
        };
        counts.judge(read_any);
    }
    Ok(())
}

/// The line of the scan summary for an access-log source: its requests, the reads they made,
/// and those that were no read, by reason (`None` for the other formats).
fn access_summary(c: &SourceCounts) -> Option<String> {
    let n = c.not_read?;
    Some(format!(
        "source `{}`: {} file(s), {} request line(s): {} read(s), {} request(s) continued a \
         read; not reads: {} method, {} status, {} unmatched",
        c.source,
        c.files,
        c.request_lines()?,
        c.reads,
        c.same_read.unwrap_or(0),
        n.method,
        n.status,
        n.unmatched
    ))
}

/// The warning for a blind source: what it read, why it cannot be believed, one line it
/// could not use, and what the gates do about it.
fn blind_warning(
    c: &SourceCounts,
    source: &crate::model::source::Source,
    req: &ScanRequest,
) -> Option<String> {
    let blind = c.blind?;
    let what = source.describe();
    let reasons = c
        .top_reasons()
        .iter()
        .map(|(reason, n)| format!("{n} {reason}"))
        .collect::<Vec<_>>()
        .join(", ");
    let example = c
        .example()
        .map_or(String::new(), |line| format!("; for example: {line}"));
    let head = match (blind, c.request_lines()) {
        (
            Blindness::MostlyUnmatched {
                unmatched,
                requests,
            },
            _,
        ) if c.requests != Some(0) => {
            format!(
                "warning: {what}: {unmatched} of {requests} request(s) matched no `match` \
                 template ({reasons}){example}"
            )
        }
        (_, Some(requests)) if requests > 0 => format!(
            "warning: {what} read {requests} request(s), none of them a read ({reasons}){example}"
        ),
        _ => format!(
            "warning: {what} gave no read of any dataset from {} to {} ({} file(s), {} \
             line(s), {} malformed)",
            req.from, req.to, c.files, c.lines, c.malformed
        ),
    };
    // A `sources` glob has no table to set the key on: it must become one.
    let quiet = if source.place.is_some() {
        "set `expect_reads = false` on it"
    } else {
        "declare it as a [[consumption.source]] table with `expect_reads = false`"
    };
    Some(format!(
        "{head}; while it is blind, `can-retire`, `status` and `notify` cannot tell who still \
         reads (fix the source, or {quiet} if it is meant to be quiet)"
    ))
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
