//! Two sinks fed by one walk ([`Both`]): what a command that needs the newest reads and the
//! day-by-day counts of the same datasets asks of the consumption record, so that each
//! access log and read summary is read, parsed and matched once, not once per sink.
//!
//! A log of reads (JSON Lines, CSV, Parquet) is still read by each sink's own reader: the
//! newest-read scan folds its blocks into hot tables on every core and yields no read one at
//! a time. Such a log must be a local file, which the second sink opens again; the caller
//! walks twice when a remote source holds logs of reads ([`one_walk_serves`]).

use std::path::Path;

use super::readers::{open_input, Layout, ReadsLog, Sink};
use super::terms::{LogError, Skipped};
use crate::consumers::access::{AccessStats, Read as AccessRead};
use crate::consumers::summary::ParsedRow;
use crate::model::source::Source;
use contracts_scan::reads::fields::{Mapping, Read as MappedRead};

/// Whether one walk can feed both sinks for `sources`: not when a remote source may hold a
/// log of reads, whose fetched stream only one reader can take.
pub(crate) fn one_walk_serves(sources: &[Source]) -> bool {
    !sources.iter().any(|s| s.is_remote() && s.access.is_none())
}

/// Which sink alone refused the last read or row ([`Sink::read`], [`Sink::summary_row`]):
/// the line is malformed to that one only, as it was when each sink walked on its own.
#[derive(Clone, Copy)]
enum Refused {
    First,
    Second,
}

/// Every call of the walk made on both sinks, the first first. Both must want the same
/// datasets: the walk asks [`Sink::wants`] once for the two.
pub(crate) struct Both<'b, A, B> {
    pub(crate) first: A,
    pub(crate) second: &'b mut B,
    refused: Option<Refused>,
}

impl<'b, A: Sink, B: Sink> Both<'b, A, B> {
    pub(crate) fn new(first: A, second: &'b mut B) -> Both<'b, A, B> {
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

impl<A: Sink, B: Sink> Sink for Both<'_, A, B> {
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

    fn read(&mut self, read: MappedRead<'_>) -> Result<(), String> {
        let b = self.second.read(read.clone());
        let a = self.first.read(read);
        self.judged(a, b)
    }

    fn only_dataset(&self) -> Option<&str> {
        let only = self.first.only_dataset()?;
        (self.second.only_dataset() == Some(only)).then_some(only)
    }

    /// Each sink by its own reader: the first takes the opened input, the second opens the
    /// local file again.
    fn reads_log(&mut self, path: &Path, log: ReadsLog, mapping: &Mapping) -> Result<(), LogError> {
        let again = match &log {
            ReadsLog::Parquet => None,
            ReadsLog::Jsonl(_) => Some(true),
            ReadsLog::Csv(_) => Some(false),
        };
        self.first.reads_log(path, log, mapping)?;
        let log = match again {
            None => ReadsLog::Parquet,
            Some(jsonl) => {
                let gzipped = path.extension().is_some_and(|e| e == "gz");
                match open_input(path, None, gzipped) {
                    Ok(input) if jsonl => ReadsLog::Jsonl(input),
                    Ok(input) => ReadsLog::Csv(input),
                    Err(reason) => return self.second.unopened(path, reason, Layout::Text),
                }
            }
        };
        self.second.reads_log(path, log, mapping)
    }

    fn access_closed(&mut self, stats: Vec<(usize, AccessStats)>) {
        self.second.access_closed(stats.clone());
        self.first.access_closed(stats);
    }
}
