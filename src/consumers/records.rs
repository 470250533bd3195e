//! Every read of the consumption record, one at a time, that the day-by-day counts and
//! `consumption summarize` are built on: a sink (`Records`) of the one walk over the
//! configured sources (`reads::walk`, whose readers the newest-read scan shares), handing
//! each read of a wanted dataset to the caller. A log of reads is read by the scanner
//! crate's block readers on all cores into a fold (`reads::RecordFold`) that keeps the
//! reads per (dataset, consumer, contract, UTC day): each is handed on as one `Record` of
//! its reads, from the first instant to the last.
//!
//! A raw read is one read at one instant; a row of a summary ([`super::summary`]) is a
//! consumer's reads of one version on one UTC day, from its first instant to its last. Both
//! come out as a [`Record`], so whoever folds them need not know which file held them.

use std::path::Path;

use chrono::{DateTime, FixedOffset};

use super::access::Read as AccessRead;
use super::reads::{
    access_logs, fold_log, scan_beside, walk, Folds, Layout, LineVersions, LogError, LogFile,
    Malformed, ReadsLog, RecordFold, RecordRequest, Scan, ScanRequest, Sink, Skipped, ANONYMOUS,
};
use super::summary;
use crate::model::source::Source;

/// One read, or a summary row of several reads of one version by one consumer on one day.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    pub dataset: &'a str,
    pub consumer: &'a str,
    pub contract: &'a str,
    /// The first and the last instant, with the offset each was written with (one read:
    /// the same instant twice).
    pub first: DateTime<FixedOffset>,
    pub last: DateTime<FixedOffset>,
    pub reads: u64,
}

/// Which datasets the caller wants: a read of another is skipped before its date is parsed.
pub enum Wanted<'a> {
    All,
    These(&'a std::collections::BTreeSet<String>),
}

impl Wanted<'_> {
    fn wants(&self, dataset: &str) -> bool {
        match self {
            Wanted::All => true,
            Wanted::These(set) => set.contains(dataset),
        }
    }

    /// Hand `record` to `on_read` when its dataset is wanted (others are skipped).
    fn hand_on(
        &self,
        record: Record<'_>,
        on_read: &mut dyn FnMut(Record<'_>) -> Result<(), String>,
    ) -> Result<(), String> {
        if !self.wants(record.dataset) {
            return Ok(());
        }
        on_read(record)
    }
}

/// Hand every read of `files` (each of the source it names) to `on_read`, whose `Err` makes
/// the line malformed; unusable lines go to `on_malformed`. Returns how many lines were
/// malformed. The reads of a log of reads come as one record per (dataset, consumer,
/// contract, UTC day) of each file, judged as `on_read` judges a read (an empty consumer, a
/// contract that is no semantic version: malformed) where they are read; `on_read` must
/// refuse nothing else of them, nor depend on the order of the records. An access log's reads are its bursts of requests ([`super::access`]), handed
/// out as each burst closes. The objects of a remote source are those that can hold a read of
/// the days `days` ([`super::reads::walk`]); a listed object that is not read, and a Parquet
/// file that cannot be read, is said to `on_malformed` with line 0 (not counted as a
/// malformed line). A text input that cannot be read stops the walk.
pub fn each_read(
    sources: &[Source],
    files: &[LogFile],
    days: (chrono::NaiveDate, chrono::NaiveDate),
    wanted: &Wanted<'_>,
    valid_from: &super::reads::ValidFrom,
    on_read: &mut dyn FnMut(Record<'_>) -> Result<(), String>,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<u64, LogError> {
    let mut sink = Records {
        wanted,
        valid_from,
        on_read,
        on_malformed,
        malformed: 0,
        unfit: 0,
        lines: LineVersions::default(),
    };
    walk(sources, files, days, access_logs(sources), &mut sink)?;
    Ok(sink.malformed + sink.unfit)
}

/// [`each_read`] of `req`'s days, in the walk of its newest-read scan
/// ([`super::reads::scan_beside`]): one walk for both. Each malformed line goes to
/// `on_malformed` once, as the scan hears of it. Returns the scan, and how many lines were
/// malformed to the records.
pub fn each_read_beside_scan(
    sources: &[Source],
    files: &[LogFile],
    req: &ScanRequest,
    wanted: &Wanted<'_>,
    valid_from: &super::reads::ValidFrom,
    on_read: &mut dyn FnMut(Record<'_>) -> Result<(), String>,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<(Scan, u64), LogError> {
    let mut heard = |_: &Malformed| {};
    let mut sink = Records {
        wanted,
        valid_from,
        on_read,
        on_malformed: &mut heard,
        malformed: 0,
        unfit: 0,
        lines: LineVersions::default(),
    };
    let scan = scan_beside(sources, files, req, on_malformed, &mut sink)?;
    Ok((scan, sink.malformed + sink.unfit))
}

/// The record walk as a [`Sink`] of the one walk over the consumption record: each read of a
/// wanted dataset as a [`Record`] to `on_read`.
struct Records<'a, 'r, 'm> {
    wanted: &'a Wanted<'a>,
    valid_from: &'a super::reads::ValidFrom,
    on_read: &'a mut (dyn FnMut(Record<'_>) -> Result<(), String> + 'r),
    on_malformed: &'a mut (dyn FnMut(&Malformed) + 'm),
    /// Malformed lines, and reads of access logs whose version is none (counted, as the
    /// scan counts them).
    malformed: u64,
    unfit: u64,
    lines: LineVersions,
}

impl Sink for Records<'_, '_, '_> {
    fn wants(&self, dataset: &str) -> bool {
        self.wanted.wants(dataset)
    }

    /// The record walk reads a log of reads by the scanner crate's readers, on all cores,
    /// into its fold; each malformed line is reported by the reader, in file order.
    fn reads_log(
        &mut self,
        path: &std::path::Path,
        log: ReadsLog,
        mapping: &super::reads::Mapping,
    ) -> Result<(), LogError> {
        let layout = match log {
            ReadsLog::Parquet => Layout::Parquet,
            _ => Layout::Text,
        };
        let req = self.fold_request();
        let mut fold =
            <RecordFold as contracts_scan::reads::blocks::Accumulator>::for_request(&req);
        let read = fold_log(path, log, mapping, &req, &mut fold, &mut *self.on_malformed);
        self.folded(fold);
        match read {
            Ok(()) => Ok(()),
            Err(e) => self.cut_short(path, e, layout),
        }
    }

    fn skipped(&mut self, s: Skipped) {
        (self.on_malformed)(&Malformed {
            file: s.file,
            line: 0,
            reason: s.reason,
        });
    }

    fn unknown_format(&mut self, path: &Path, wanted: bool) -> Result<(), LogError> {
        match wanted {
            true => Err(LogError::UnknownFormat {
                path: path.to_path_buf(),
            }),
            false => Ok(()),
        }
    }

    // A Parquet summary that cannot be read — no such column, a column of another type, a
    // damaged file — is skipped and said so (line 0), as the newest-read scan skips it, so
    // that both walks read the same rows.
    fn unopened(&mut self, path: &Path, reason: String, layout: Layout) -> Result<(), LogError> {
        match layout {
            Layout::Text => Err(LogError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other(reason),
            }),
            Layout::Parquet => {
                self.skip(path, reason);
                Ok(())
            }
        }
    }

    fn cut_short(&mut self, path: &Path, e: LogError, layout: Layout) -> Result<(), LogError> {
        match layout {
            Layout::Text => Err(e),
            Layout::Parquet => {
                self.skip(path, format!("cannot be read to its end: {}", e.reason()));
                Ok(())
            }
        }
    }

    fn summary_row(&mut self, row: summary::ParsedRow) -> Result<(), String> {
        summary_record(&row, self.wanted, self.on_read)
    }

    fn access_read(&mut self, source: usize, read: AccessRead) {
        self.access_read_ref(source, &read);
    }

    fn access_read_ref(&mut self, _source: usize, read: &AccessRead) {
        let versions = (self.valid_from, &mut self.lines);
        if access_read(read, self.wanted, versions, self.on_read).is_err() {
            self.unfit += 1;
        }
    }

    fn malformed(&mut self, path: &Path, line: u64, reason: String) {
        self.malformed += 1;
        (self.on_malformed)(&Malformed {
            file: path.to_path_buf(),
            line,
            reason,
        });
    }
}

impl Folds for Records<'_, '_, '_> {
    fn fold_request(&self) -> RecordRequest {
        RecordRequest {
            datasets: match self.wanted {
                Wanted::All => None,
                Wanted::These(set) => Some(set.iter().cloned().collect()),
            },
        }
    }

    /// Each (dataset, consumer, contract, day) of the log as one record of its reads. The
    /// fold has judged them as `on_read` does: an `Err` here would be a caller refusing
    /// more than that, and makes the reads of the record one malformed line.
    fn folded(&mut self, fold: RecordFold) {
        self.malformed += fold.malformed;
        for (dataset, consumer, contract, tally) in fold.records() {
            let record = Record {
                dataset,
                consumer,
                contract,
                first: tally.first,
                last: tally.last,
                reads: tally.reads,
            };
            if self.wanted.hand_on(record, self.on_read).is_err() {
                self.malformed += 1;
            }
        }
    }
}

impl Records<'_, '_, '_> {
    /// A file (an object) not read, or not to its end, and why: line 0, not a malformed line.
    fn skip(&mut self, path: &Path, reason: String) {
        (self.on_malformed)(&Malformed {
            file: path.to_path_buf(),
            line: 0,
            reason: format!("{reason}; the file is skipped"),
        });
    }
}

/// One checked row of a read summary (JSON Lines or Parquet), handed on when its dataset is
/// wanted.
fn summary_record(
    row: &summary::ParsedRow,
    wanted: &Wanted<'_>,
    on_read: &mut dyn FnMut(Record<'_>) -> Result<(), String>,
) -> Result<(), String> {
    let record = Record {
        dataset: &row.dataset,
        consumer: &row.consumer,
        contract: &row.contract,
        first: row.first_at,
        last: row.last_at,
        reads: row.reads,
    };
    wanted.hand_on(record, on_read)
}

/// One read of an access log: at its burst's last request (the instant the scan dates it
/// by), its principal the consumer (`anonymous` without one), of the version its `{line}`
/// resolves to as the newest-read scan resolves it.
fn access_read(
    read: &AccessRead,
    wanted: &Wanted<'_>,
    (valid_from, lines): (&super::reads::ValidFrom, &mut LineVersions),
    on_read: &mut dyn FnMut(Record<'_>) -> Result<(), String>,
) -> Result<(), String> {
    let record = Record {
        dataset: &read.reader.dataset,
        consumer: read.reader.principal.as_deref().unwrap_or(ANONYMOUS),
        contract: lines.contract(valid_from, read)?,
        first: read.at(),
        last: read.at(),
        reads: 1,
    };
    wanted.hand_on(record, on_read)
}
