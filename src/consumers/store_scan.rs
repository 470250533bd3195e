//! The consumption logs a store configures, scanned for the commands that read them: the
//! newest reads in the lookback, or the reads day by day. Nothing is printed: what the user
//! should see on stderr (malformed lines, the first 20 one by one; skipped files; principals
//! several consumers claim; the scan's counts) comes back as typed [`ScanNote`]s, in the order
//! it arose, which the CLI's printer words; and the day is an argument.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use chrono::NaiveDate;

use super::access::{NotRead, NotReadReason};
use super::daily::{daily_reads_and_scan, daily_reads_of, DailyReads};
use super::reads::one_walk_serves;
use super::registry::LoadError;
use super::source_health::{Blindness, SourceCounts};
use super::{log_files, scan, LogError, LogFile, Registry, Scan, ScanRequest};
use crate::store::{Store, StoreError};

/// How many malformed lines are noted one by one; the rest are only counted, so a log gone
/// wrong does not bury the report.
const SHOWN_MALFORMED: u64 = 20;

/// What a scan tells the user, as facts: the CLI's printer words each one, so that what
/// happened is decided here and how it reads in one place there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanNote {
    /// No log file matches the consumption sources (`paths`), and none is remote: every
    /// consumer is silent.
    NoLogs { paths: Vec<String> },
    /// A line that is no read, its file named from the store's root; line 0 is the whole
    /// file (one that is skipped).
    Malformed {
        file: PathBuf,
        line: u64,
        reason: String,
    },
    /// More malformed lines (`total`) than were noted one by one (`shown`).
    MalformedTotal { total: u64, shown: u64 },
    /// A file the scan could not read and went on without, named from the store's root.
    Skipped { file: PathBuf, reason: String },
    /// A principal the identities of several consumers claim: its reads count as unknown.
    SharedPrincipal {
        principal: String,
        claimants: Vec<String>,
    },
    /// The scan's counts, over the days `from` to `to`.
    Scanned {
        files: u64,
        lines: u64,
        reads: u64,
        from: NaiveDate,
        to: NaiveDate,
        malformed: u64,
        after_today: u64,
    },
    /// An access-log source's request lines and what became of them.
    Access {
        source: String,
        files: u64,
        request_lines: u64,
        reads: u64,
        same_read: u64,
        not_read: NotRead,
    },
    /// A source that cannot be believed ([`Blindness`]).
    Blind(BlindNote),
    /// What a scan of object storage listed and read, of the days `from` to `to`.
    ObjectStorage {
        listed: u64,
        read: u64,
        from: NaiveDate,
        to: NaiveDate,
    },
}

/// The facts of a blind source's warning: what it read, why it cannot be believed, and a
/// line it could not use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlindNote {
    /// The source as its configuration names it ([`crate::model::source::Source::describe`]).
    pub what: String,
    pub why: BlindWhy,
    /// Why its requests were no read, the most frequent first.
    pub reasons: Vec<(NotReadReason, u64)>,
    /// A line of the most frequent reason.
    pub example: Option<String>,
    /// Whether the source is a `[[consumption.source]]` table, where `expect_reads` can be
    /// set; a `sources` glob has no table to set it on.
    pub table: bool,
}

/// Which fact makes a source blind, as its warning tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlindWhy {
    /// Most of its `requests` matched no `match` template.
    Unmatched { unmatched: u64, requests: u64 },
    /// It read `requests` request lines, none of them a read.
    NoneARead { requests: u64 },
    /// It gave no read of any dataset from `from` to `to`.
    NoRead {
        from: NaiveDate,
        to: NaiveDate,
        files: u64,
        lines: u64,
        malformed: u64,
    },
}

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
/// `attributes`: the reads should say which attributes they touched where their source can
/// tell ([`ScanRequest::attributes`]).
pub fn scan_logs(
    store: &Store,
    datasets: BTreeSet<String>,
    registry: &Registry,
    today: NaiveDate,
    attributes: bool,
    notes: &mut Vec<ScanNote>,
) -> Result<(Scan, ScanRequest), ScanError> {
    let (scan, req, _) = scan_unclaimed(store, datasets, today, (attributes, false), notes)?;
    Ok(claimed(store, (scan, req), registry, notes))
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
    attributes: bool,
    notes: &mut Vec<ScanNote>,
) -> Result<(Option<Registry>, Scanned), LoadError> {
    let (registry, scanned) =
        registry_scan_and_daily(store, datasets, today, (attributes, false), notes)?;
    Ok((registry, scanned.map(|(scan, req, _)| (scan, req))))
}

/// What [`registry_scan_and_daily`] gives: the scan, its request, and the reads day by day
/// of its datasets over its lookback, when they were asked for and one walk could count
/// them (`None`: the caller walks again, [`scan_daily`]).
pub type ScannedDaily = Result<(Scan, ScanRequest, Option<HashMap<String, DailyReads>>), ScanError>;

/// [`registry_and_scan`], and where `(attributes, daily)` asks for it, the reads of the same
/// datasets day by day over the lookback, counted in the same walk over the logs
/// ([`daily_reads_and_scan`]) and claimed by the same registry.
pub fn registry_scan_and_daily(
    store: &Store,
    datasets: BTreeSet<String>,
    today: NaiveDate,
    want: (bool, bool),
    notes: &mut Vec<ScanNote>,
) -> Result<(Option<Registry>, ScannedDaily), LoadError> {
    use crate::store::layout::CONSUMERS;
    let text = store.read(CONSUMERS)?;
    let mut scan_notes = Vec::new();
    let (registry, scanned) = std::thread::scope(|s| {
        let parse = s.spawn(|| {
            text.as_deref()
                .map(|t| super::registry::parse_registry(CONSUMERS, t))
                .transpose()
        });
        let scanned = scan_unclaimed(store, datasets, today, want, &mut scan_notes);
        let registry = parse
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (registry, scanned)
    });
    let registry = registry?;
    notes.append(&mut scan_notes);
    let scanned = scanned.map(|(scan, req, daily)| {
        let none = Registry::default();
        let registry = registry.as_ref().unwrap_or(&none);
        let (scan, req) = claimed(store, (scan, req), registry, notes);
        let daily = daily.map(|mut all| {
            for d in all.values_mut() {
                d.claim(registry);
            }
            all
        });
        (scan, req, daily)
    });
    Ok((registry, scanned))
}

/// [`scan_logs`] before its principals are claimed: the scan, its skipped files noted; and
/// where `(attributes, daily)` asks for them and one walk serves the sources, the reads day
/// by day from the same walk.
fn scan_unclaimed(
    store: &Store,
    datasets: BTreeSet<String>,
    today: NaiveDate,
    (attributes, daily): (bool, bool),
    notes: &mut Vec<ScanNote>,
) -> ScannedDaily {
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
    let (mut result, daily) = if daily && one_walk_serves(&sources) {
        let (scan, daily) = daily_reads_and_scan(&sources, &files, &req, &mut on_malformed)?;
        (scan, Some(daily))
    } else {
        (scan(&sources, &files, &req, &mut on_malformed)?, None)
    };
    judge_sources(store, &sources, &files, &mut result, &req)?;
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
    Ok((result, req, daily))
}

/// Principals made consumers through `registry`'s identities, and the scan's counts noted.
fn claimed(
    store: &Store,
    (mut result, req): (Scan, ScanRequest),
    registry: &Registry,
    notes: &mut Vec<ScanNote>,
) -> (Scan, ScanRequest) {
    let remote = store
        .config()
        .consumption
        .all_sources()
        .iter()
        .any(|s| s.is_remote());
    // Principals become consumers through the registry's identities.
    for (principal, claimants) in result.claim(registry) {
        notes.push(ScanNote::SharedPrincipal {
            principal,
            claimants,
        });
    }
    let s = &result.stats;
    note_malformed_total(s.malformed, notes);
    notes.push(ScanNote::Scanned {
        files: s.files,
        lines: s.lines,
        reads: s.reads,
        from: req.from,
        to: req.to,
        malformed: s.malformed,
        after_today: s.after_today,
    });
    let sources = store.config().consumption.all_sources();
    for (counts, source) in s.sources.iter().zip(&sources) {
        notes.extend(access_summary(counts));
        notes.extend(blind_note(counts, source, &req).map(ScanNote::Blind));
    }
    if remote {
        notes.push(ScanNote::ObjectStorage {
            listed: s.objects_listed,
            read: s.objects_read,
            from: req.from,
            to: req.to,
        });
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
    notes: &mut Vec<ScanNote>,
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
        &mut |m| note_malformed(store, &mut shown, m, || m.reason.clone(), notes),
    )?;
    note_malformed_total(shown, notes);
    // Principals are named as the registry's identities claim them.
    for daily in all.values_mut() {
        daily.claim(registry);
    }
    Ok(all)
}

/// Note one malformed line, its file named from the store's root, while fewer than
/// [`SHOWN_MALFORMED`] have been; `shown` counts them all. (`consumption summarize` notes
/// its malformed lines this way too.)
pub fn note_malformed(
    store: &Store,
    shown: &mut u64,
    m: &super::Malformed,
    reason: impl FnOnce() -> String,
    notes: &mut Vec<ScanNote>,
) {
    if *shown < SHOWN_MALFORMED {
        let file = m.file.strip_prefix(store.root()).unwrap_or(&m.file);
        notes.push(ScanNote::Malformed {
            file: file.to_path_buf(),
            line: m.line,
            reason: reason(),
        });
    }
    *shown += 1;
}

/// Note how many malformed lines there were in all, when more than were noted one by one.
pub fn note_malformed_total(total: u64, notes: &mut Vec<ScanNote>) {
    if total > SHOWN_MALFORMED {
        notes.push(ScanNote::MalformedTotal {
            total,
            shown: SHOWN_MALFORMED,
        });
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

/// The scan summary's note of an access-log source: its requests, the reads they made, and
/// those that were no read, by reason (`None` for the other formats).
fn access_summary(c: &SourceCounts) -> Option<ScanNote> {
    Some(ScanNote::Access {
        source: c.source.clone(),
        files: c.files,
        request_lines: c.request_lines()?,
        reads: c.reads,
        same_read: c.same_read.unwrap_or(0),
        not_read: c.not_read?,
    })
}

/// The note of a blind source (`None` for one that can be believed): what it read, why it
/// cannot be believed, and one line it could not use.
fn blind_note(
    c: &SourceCounts,
    source: &crate::model::source::Source,
    req: &ScanRequest,
) -> Option<BlindNote> {
    let why = match (c.blind?, c.request_lines()) {
        (
            Blindness::MostlyUnmatched {
                unmatched,
                requests,
            },
            _,
        ) if c.requests != Some(0) => BlindWhy::Unmatched {
            unmatched,
            requests,
        },
        (_, Some(requests)) if requests > 0 => BlindWhy::NoneARead { requests },
        _ => BlindWhy::NoRead {
            from: req.from,
            to: req.to,
            files: c.files,
            lines: c.lines,
            malformed: c.malformed,
        },
    };
    Some(BlindNote {
        what: source.describe(),
        why,
        reasons: c.top_reasons(),
        example: c.example().map(str::to_string),
        table: source.place.is_some(),
    })
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
