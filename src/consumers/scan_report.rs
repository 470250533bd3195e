//! A finished walk over the consumption logs made into what a command is told: each source
//! judged (a blind one cannot be believed), the principals named as the registry's
//! identities claim them ([`Walked::claimed`]), and what the user
//! should see on stderr as typed [`ScanNote`]s (malformed lines, the first 20 one by one;
//! skipped files; principals several consumers claim; the counts; blind sources), which the
//! CLI's printer words. The walk itself is `store_scan.rs`'s; this is the step after it.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use chrono::NaiveDate;

use super::access::{NotRead, NotReadReason};
use super::daily::DailyReads;
use super::source_health::{Blindness, SourceCounts};
use super::{scan, LogError, LogFile, Registry, Scan, ScanRequest};
use crate::store::{Store, StoreError};

/// What a walk over the logs found, its principals not yet named as consumers: the newest
/// reads, the request they answer, and the reads day by day where they were counted in the
/// same walk (`None`: not asked for).
pub struct Walked {
    pub scan: Scan,
    pub req: ScanRequest,
    pub daily: Option<HashMap<String, DailyReads>>,
    /// The files the walk read, for a second look at a source that read none of the
    /// datasets asked for ([`judge_sources`]).
    pub files: Vec<LogFile>,
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

/// [`Walked`] with its principals claimed: the scan, its request, the reads day by day.
pub type Claimed = (Scan, ScanRequest, Option<HashMap<String, DailyReads>>);

/// Principals named as consumers in reads counted day by day, by `registry`'s identities.
pub fn claim_daily(all: &mut HashMap<String, DailyReads>, registry: &Registry) {
    for d in all.values_mut() {
        d.claim(registry);
    }
}

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

impl Walked {
    /// Each source judged ([`judge_sources`]); principals made consumers through
    /// `registry`'s identities, in the scan and in the day-by-day counts; the principals
    /// several consumers claim, the scan's counts, each access log's summary and each blind
    /// source noted, in that order.
    pub fn claimed(
        self,
        store: &Store,
        registry: &Registry,
        notes: &mut Vec<ScanNote>,
    ) -> Result<Claimed, ScanError> {
        let Walked {
            scan: mut result,
            req,
            daily,
            files,
        } = self;
        let sources = store.config().consumption.all_sources();
        judge_sources(store, &sources, &files, &mut result, &req)?;
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
        let daily = daily.map(|mut all| {
            claim_daily(&mut all, registry);
            all
        });
        Ok((result, req, daily))
    }
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
