//! The newest-read scan as a sink of the one walk over the consumption record
//! (`readers::walk`): it keeps the newest read per (dataset, consumer) and the counts. The
//! logs of reads (JSON Lines, CSV, Parquet) are read by the scanner crate's readers
//! (`fold_log.rs`), which fold bytes straight into the hot tables on all cores; a file
//! that cannot be read is skipped and said so. `driver.rs` starts the walk with it.

use std::path::Path;

use semver::Version;

use super::fold_log::fold_log;
use super::pair::Pair;
use super::readers::{Layout, ReadsLog, Sink};
use super::record_fold::{RecordFold, RecordRequest};
use super::{
    fold, ConsumerMap, KnownRead, LineVersions, LogError, Malformed, NewestRead, Scan, ScanRequest,
    Skipped, ANONYMOUS,
};
use crate::consumers::access::{AccessStats, Read as AccessRead};
use crate::consumers::source_health::SourceCounts;
use crate::consumers::summary::ParsedRow;
use crate::model::source::Source;
use contracts_scan::reads::fields::Mapping;
use contracts_scan::reads::hash::Key;
use contracts_scan::reads::timestamps::{At, Day};

/// The newest-read scan as a [`Sink`]: what the walk yields goes into `scan`, the access
/// logs' reads into `access_part`, each unusable line to `on_malformed`.
pub(super) struct Newest<'a, 'm> {
    req: &'a ScanRequest,
    scan: Scan,
    access_part: Scan,
    on_malformed: &'a mut (dyn FnMut(&Malformed) + 'm),
    /// The counts when the current input was taken up ([`tally`]), and its source (`None`
    /// between inputs: the bursts closed after the last input).
    before: (u64, u64, u64, u64),
    current: Option<usize>,
    lines: LineVersions,
}

impl Sink for Newest<'_, '_> {
    fn wants(&self, dataset: &str) -> bool {
        self.req.datasets.contains(dataset)
    }

    fn listed(&mut self, listed: u64, fetching: u64) {
        self.scan.stats.objects_listed = listed;
        self.scan.stats.objects_read = fetching;
    }

    fn skipped(&mut self, skipped: Skipped) {
        self.scan.skipped.push(skipped);
    }

    fn unknown_format(&mut self, path: &Path, _wanted: bool) -> Result<(), LogError> {
        let e = LogError::UnknownFormat {
            path: path.to_path_buf(),
        };
        self.skip(path, e.to_string());
        Ok(())
    }

    fn begin(&mut self, source: usize) {
        self.before = tally(&self.scan, &self.access_part);
        self.current = Some(source);
    }

    /// What the input added to the counts is its source's.
    fn end(&mut self, source: usize) {
        self.current = None;
        let (files, lines, reads, malformed) = tally(&self.scan, &self.access_part);
        let before = self.before;
        if let Some(counts) = self.scan.stats.sources.get_mut(source) {
            counts.files += files - before.0;
            counts.lines += lines - before.1;
            counts.reads += reads - before.2;
            counts.malformed += malformed - before.3;
        }
    }

    fn opened(&mut self) {
        self.scan.stats.files += 1;
    }

    fn unopened(&mut self, path: &Path, reason: String, _: Layout) -> Result<(), LogError> {
        self.skip(path, reason);
        Ok(())
    }

    fn cut_short(&mut self, path: &Path, e: LogError, _: Layout) -> Result<(), LogError> {
        cut_short(&mut self.scan, path, e);
        Ok(())
    }

    fn summary_line(&mut self) {
        self.scan.stats.lines += 1;
    }

    fn summary_row(&mut self, row: ParsedRow) -> Result<(), String> {
        fold_summary_row(row, self.req, &mut self.scan)
    }

    /// Folded into the access logs' part. What a read of a burst closed after the last
    /// input adds is its source's at once: it is no input's.
    fn access_read(&mut self, source: usize, read: AccessRead) {
        let part = &mut self.access_part;
        if self.current.is_some() {
            return fold_access(part, self.req, &mut self.lines, read);
        }
        let before = (part.stats.reads, part.stats.malformed);
        fold_access(part, self.req, &mut self.lines, read);
        if let Some(counts) = self.scan.stats.sources.get_mut(source) {
            counts.reads += part.stats.reads - before.0;
            counts.malformed += part.stats.malformed - before.1;
        }
    }

    fn malformed(&mut self, path: &Path, line: u64, reason: String) {
        self.scan.stats.malformed += 1;
        (self.on_malformed)(&Malformed {
            file: path.to_path_buf(),
            line,
            reason,
        });
    }

    /// The scanner crate's readers: JSON Lines and CSV in blocks on all cores, Parquet by
    /// row group.
    fn reads_log(&mut self, path: &Path, log: ReadsLog, mapping: &Mapping) -> Result<(), LogError> {
        if matches!(log, ReadsLog::Parquet) && open_log(path, &mut self.scan).is_none() {
            return Ok(());
        }
        let (req, scan) = (self.req, &mut self.scan);
        if let Err(e) = fold_log(path, log, mapping, req, scan, &mut *self.on_malformed) {
            cut_short(scan, path, e);
        }
        Ok(())
    }

    /// The access logs' lines are counted when their scans finish.
    fn access_closed(&mut self, stats: Vec<(usize, AccessStats)>) {
        for (source, stats) in stats {
            self.scan.stats.lines += stats.lines;
            self.scan.access.add(&stats);
            if let Some(counts) = self.scan.stats.sources.get_mut(source) {
                counts.add_access(&stats);
            }
        }
    }
}

impl<'a, 'm> Newest<'a, 'm> {
    pub(super) fn new(
        sources: &[Source],
        req: &'a ScanRequest,
        on_malformed: &'a mut (dyn FnMut(&Malformed) + 'm),
    ) -> Newest<'a, 'm> {
        let mut scan = Scan::default();
        for d in &req.datasets {
            scan.newest.insert(d.clone(), ConsumerMap::default());
        }
        scan.stats.sources = sources.iter().map(SourceCounts::of).collect();
        Newest {
            req,
            scan,
            // The access logs' reads (and the reads of `read`) are folded apart, as a block
            // of JSON Lines is, then absorbed.
            access_part: Scan::for_request(req),
            on_malformed,
            before: (0, 0, 0, 0),
            current: None,
            lines: LineVersions::default(),
        }
    }

    pub(super) fn finish(self) -> Scan {
        let mut scan = self.scan;
        scan.absorb(self.access_part);
        scan
    }

    /// A log of reads read once into the scan and a record walk's fold beside it ([`Pair`]):
    /// the fold, and how the reading ended (`Err`: cut short, not yet said to the scan).
    /// `Err` before: a Parquet log that cannot be opened, skipped by the scan.
    pub(super) fn fold_beside(
        &mut self,
        path: &Path,
        log: ReadsLog,
        mapping: &Mapping,
        records: &RecordRequest,
    ) -> Result<(RecordFold, Result<(), LogError>), String> {
        if matches!(log, ReadsLog::Parquet) {
            if let Err(e) = std::fs::File::open(path) {
                open_log(path, &mut self.scan);
                return Err(format!("cannot be opened: {e}"));
            }
            self.scan.stats.files += 1;
        }
        // One dataset index for both folds.
        debug_assert!(records
            .datasets
            .as_ref()
            .is_some_and(|d| d.iter().eq(self.req.datasets.iter())));
        let req = (self.req, records);
        let mut pair = Pair::new(std::mem::take(&mut self.scan), records);
        let read = fold_log(path, log, mapping, &req, &mut pair, &mut *self.on_malformed);
        let (scan, fold) = pair.into_parts();
        self.scan = scan;
        Ok((fold, read))
    }

    /// An input not read, and why.
    fn skip(&mut self, path: &Path, reason: String) {
        self.scan.skipped.push(Skipped {
            file: path.to_path_buf(),
            reason,
        });
    }
}

/// The counts an input adds to its source: files, lines, reads and malformed lines, of the
/// scan and of the part folded apart (an access log's lines are counted when its scan
/// finishes).
fn tally(scan: &Scan, apart: &Scan) -> (u64, u64, u64, u64) {
    (
        scan.stats.files,
        scan.stats.lines,
        scan.stats.reads + apart.stats.reads,
        scan.stats.malformed + apart.stats.malformed,
    )
}

/// Note a file whose reading failed part way: its reads before the failure count.
fn cut_short(scan: &mut Scan, path: &Path, e: LogError) {
    scan.skipped.push(Skipped {
        file: path.to_path_buf(),
        reason: format!("cannot be read to its end: {}", e.reason()),
    });
}

/// Fold one checked summary row in: a row of a requested dataset is its consumer's `reads`
/// reads of one version on one UTC day, the newest at `last_at` — what the scan keeps of the
/// raw reads it stands for.
fn fold_summary_row(row: ParsedRow, req: &ScanRequest, scan: &mut Scan) -> Result<(), String> {
    if !req.datasets.contains(&row.dataset) {
        return Ok(());
    }
    let version = Version::parse(&row.contract)
        .map_err(|_| format!("`contract` {:?} is not a semantic version", row.contract))?;
    match Day::of(row.day, req.from, req.to) {
        Day::After => scan.stats.after_today += row.reads,
        Day::Before => scan.stats.before_lookback += row.reads,
        Day::Inside => {
            scan.stats.reads = scan.stats.reads.saturating_add(row.reads);
            let known = req.is_known(&row.dataset, &version);
            let read = NewestRead {
                at: row.last_at,
                oldest_line: if known { version.major } else { u64::MAX },
                reads: row.reads,
                known: known.then(|| KnownRead {
                    at: row.last_at,
                    version: version.clone(),
                }),
                version,
            };
            scan.record(
                &row.dataset,
                &Key::from_bytes(row.consumer.as_bytes()),
                read,
            );
        }
    }
    Ok(())
}

/// Open one log file and count it; a file that cannot be opened is skipped, and said so.
fn open_log(path: &Path, scan: &mut Scan) -> Option<std::fs::File> {
    match std::fs::File::open(path) {
        Ok(file) => {
            scan.stats.files += 1;
            Some(file)
        }
        Err(e) => {
            scan.skipped.push(Skipped {
                file: path.to_path_buf(),
                reason: format!("cannot be opened: {e}"),
            });
            None
        }
    }
}

/// Fold one read of an access log in: its principal is the consumer value (`anonymous`
/// when the request carried none), looked up in the registry's identities afterwards.
fn fold_access(scan: &mut Scan, req: &ScanRequest, lines: &mut LineVersions, read: AccessRead) {
    let principal = read.reader.principal.as_deref().unwrap_or(ANONYMOUS);
    let contract = match lines.contract(&req.valid_from, &read) {
        Ok(contract) => contract.as_bytes(),
        // No version of that line yet that day, or no such line: not a read of a version
        // the store has; counted as malformed, as an unknown version is.
        Err(_) => {
            scan.stats.malformed += 1;
            return;
        }
    };
    // A read the templates or constants made is well formed; a version that is not one is
    // counted as malformed by `fold` like any other line's.
    let counted = scan.stats.reads;
    if fold(
        scan,
        req,
        At::Instant(read.at()),
        principal.as_bytes(),
        read.reader.dataset.as_bytes(),
        contract,
    )
    .is_err()
    {
        scan.stats.malformed += 1;
    } else if req.attributes && scan.stats.reads > counted {
        // A read inside the days: what it showed of its attributes is kept beside it.
        scan.see(&read.reader, principal, read.at(), &read.attributes);
    }
}
