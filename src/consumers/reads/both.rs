//! Two sinks fed by one walk ([`Both`]): what a command that needs the newest reads and the
//! day-by-day counts of the same datasets asks of the consumption record, so that each
//! access log and read summary is read, parsed and matched once, not once per sink.
//!
//! A log of reads (JSON Lines, CSV, Parquet) is read once too, by the scanner crate's
//! readers, into a fold over both sinks' accumulators (`pair.rs`: the scan's and the record
//! walk's), so a fetched object is read by both as well as a local file.

use std::path::Path;

use super::newest::Newest;
use super::readers::{Layout, ReadsLog, Sink};
use super::record_fold::{RecordFold, RecordRequest};
use super::terms::{LogError, Skipped};
use crate::consumers::access::{AccessStats, Read as AccessRead};
use crate::consumers::summary::ParsedRow;
use contracts_scan::reads::fields::Mapping;

/// A sink that folds a log of reads into a [`RecordFold`] (the record walk): what it asks
/// for, and the fold of one log handed back to it.
pub(crate) trait Folds {
    fn fold_request(&self) -> RecordRequest;
    fn folded(&mut self, fold: RecordFold);
}

/// Which sink alone refused the last read or row ([`Sink::read`], [`Sink::summary_row`]):
/// the line is malformed to that one only, as it was when each sink walked on its own.
#[derive(Clone, Copy)]
enum Refused {
    First,
    Second,
}

/// Every call of the walk made on both sinks, the newest-read scan first. Both must want the
/// same datasets: the walk asks [`Sink::wants`] once for the two.
pub(crate) struct Both<'b, 'a, 'm, B> {
    pub(crate) first: Newest<'a, 'm>,
    pub(crate) second: &'b mut B,
    refused: Option<Refused>,
}

impl<'b, 'a, 'm, B: Sink + Folds> Both<'b, 'a, 'm, B> {
    pub(crate) fn new(first: Newest<'a, 'm>, second: &'b mut B) -> Self {
        Both {
            first,
            second,
            refused: None,
        }
    }

    /// The results of the two sinks' takes of one read: `Err` when either refused it, and
    /// which one alone did, for [`Sink::malformed`] that follows.
    fn judged(&mut self, a: Result<(), String>, b: Result<(), String>) -> Result<(), String> {
        match (a, b) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(reason), Ok(())) => {
                self.refused = Some(Refused::First);
                Err(reason)
            }
            (Ok(()), Err(reason)) => {
                self.refused = Some(Refused::Second);
                Err(reason)
            }
            (Err(reason), Err(_)) => Err(reason),
        }
    }
}

/// A copy of `e` for the first sink, whose reason reads the same ([`LogError::reason`]).
fn copy(path: &Path, e: &LogError) -> LogError {
    LogError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.reason()),
    }
}

impl<B: Sink + Folds> Sink for Both<'_, '_, '_, B> {
    fn wants(&self, dataset: &str) -> bool {
        self.first.wants(dataset)
    }

    fn listed(&mut self, listed: u64, fetching: u64) {
        self.first.listed(listed, fetching);
        self.second.listed(listed, fetching);
    }

    fn skipped(&mut self, skipped: Skipped) {
        self.first.skipped(skipped.clone());
        self.second.skipped(skipped);
    }

    fn unknown_format(&mut self, path: &Path, wanted: bool) -> Result<(), LogError> {
        let a = self.first.unknown_format(path, wanted);
        a.and(self.second.unknown_format(path, wanted))
    }

    fn begin(&mut self, source: usize) {
        self.first.begin(source);
        self.second.begin(source);
    }

    fn end(&mut self, source: usize) {
        self.first.end(source);
        self.second.end(source);
    }

    fn opened(&mut self) {
        self.first.opened();
        self.second.opened();
    }

    fn unopened(&mut self, path: &Path, reason: String, layout: Layout) -> Result<(), LogError> {
        let a = self.first.unopened(path, reason.clone(), layout);
        a.and(self.second.unopened(path, reason, layout))
    }

    fn cut_short(&mut self, path: &Path, e: LogError, layout: Layout) -> Result<(), LogError> {
        let a = self.first.cut_short(path, copy(path, &e), layout);
        a.and(self.second.cut_short(path, e, layout))
    }

    fn summary_line(&mut self) {
        self.first.summary_line();
        self.second.summary_line();
    }

    fn summary_row(&mut self, row: ParsedRow) -> Result<(), String> {
        let b = self.second.summary_row(row.clone());
        let a = self.first.summary_row(row);
        self.judged(a, b)
    }

    fn access_read(&mut self, source: usize, read: AccessRead) {
        self.second.access_read_ref(source, &read);
        self.first.access_read(source, read);
    }

    fn malformed(&mut self, path: &Path, line: u64, reason: String) {
        match self.refused.take() {
            Some(Refused::First) => self.first.malformed(path, line, reason),
            Some(Refused::Second) => self.second.malformed(path, line, reason),
            None => {
                self.first.malformed(path, line, reason.clone());
                self.second.malformed(path, line, reason);
            }
        }
    }

    /// Read once for both: each read folded into the scan and into the record walk's fold
    /// beside it, each malformed line reported once, through the scan (`pair.rs`).
    fn reads_log(&mut self, path: &Path, log: ReadsLog, mapping: &Mapping) -> Result<(), LogError> {
        let layout = match log {
            ReadsLog::Parquet => Layout::Parquet,
            _ => Layout::Text,
        };
        let req = self.second.fold_request();
        match self.first.fold_beside(path, log, mapping, &req) {
            Ok((fold, read)) => {
                self.second.folded(fold);
                match read {
                    Ok(()) => Ok(()),
                    Err(e) => self.cut_short(path, e, layout),
                }
            }
            // The scan has skipped it.
            Err(reason) => self.second.unopened(path, reason, layout),
        }
    }

    fn access_closed(&mut self, stats: Vec<(usize, AccessStats)>) {
        self.second.access_closed(stats.clone());
        self.first.access_closed(stats);
    }
}
