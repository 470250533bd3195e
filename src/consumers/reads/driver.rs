//! The newest-read scan: the sink of the one walk over the consumption record
//! ([`readers::walk`]) that keeps the newest read per (dataset, consumer) and the counts. The
//! logs of reads (JSON Lines, CSV, Parquet) are read by its fast paths, which fold bytes
//! straight into the hot tables on all cores; a file that cannot be read is skipped and said
//! so ([`scan`]).

use std::path::Path;

use semver::Version;

use super::csv_rows::scan_csv;
use super::fields::Mapping;
use super::hash::{ConsumerMap, Key};
use super::json_lines::{scan_json_lines, BLOCK};
use super::readers::{self, Layout, ReadsLog, Sink};
use super::timestamps::{At, Day};
use super::{
    fold, parquet_rows, FileScan, KnownRead, LogError, LogFile, Malformed, MappedRead, NewestRead,
    Scan, ScanRequest, Skipped, ANONYMOUS,
};
use crate::consumers::access::{AccessStats, Read as AccessRead};
use crate::consumers::source_health::SourceCounts;
use crate::consumers::summary::ParsedRow;
use crate::model::source::Source;

/// Scan every file of `sources` ([`log_files`]), and the objects of the remote sources that can
/// hold a read of the lookback ([`object_logs::list`]), for reads matching `req`.
/// `on_malformed` hears of each unusable line. A remote source that cannot be listed fails
/// the scan before anything is read; an object that cannot be read is skipped, as a file is.
///
/// [`log_files`]: super::log_files
/// [`object_logs::list`]: super::object_logs::list
pub fn scan(
    sources: &[Source],
    files: &[LogFile],
    req: &ScanRequest,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<Scan, LogError> {
    let mut scan = Scan::default();
    for d in &req.datasets {
        scan.newest.insert(d.clone(), ConsumerMap::default());
    }
    scan.stats.sources = sources.iter().map(SourceCounts::of).collect();
    let mut sink = Newest {
        req,
        scan,
        // The access logs' reads are folded apart, as a block of JSON Lines is, then absorbed.
        access_part: Scan::for_request(req),
        on_malformed,
        before: (0, 0, 0, 0),
    };
    readers::walk(sources, files, (req.from, req.to), &mut sink)?;
    let Newest {
        mut scan,
        access_part,
        ..
    } = sink;
    scan.absorb(access_part);
    Ok(scan)
}

/// The newest-read scan as a [`Sink`]: what the walk yields goes into `scan`, the access
/// logs' reads into `access_part`, each unusable line to `on_malformed`.
struct Newest<'a, 'm> {
    req: &'a ScanRequest,
    scan: Scan,
    access_part: Scan,
    on_malformed: &'a mut (dyn FnMut(&Malformed) + 'm),
    /// The counts when the current input was taken up ([`tally`]).
    before: (u64, u64, u64, u64),
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

    fn begin(&mut self, _source: usize) {
        self.before = tally(&self.scan);
    }

    /// What the input added to the counts is its source's.
    fn end(&mut self, source: usize) {
        let (files, lines, reads, malformed) = tally(&self.scan);
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

    /// Folded into the access logs' part; what it adds is its source's at once (a read of
    /// a burst closed after the last input is no input's).
    fn access_read(&mut self, source: usize, read: AccessRead) {
        let part = &mut self.access_part;
        let before = (part.stats.reads, part.stats.malformed);
        fold_access(part, self.req, read);
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

    /// One read, as the fast paths fold each (they do not call this: see `reads_log`).
    fn read(&mut self, read: MappedRead<'_>) -> Result<(), String> {
        let (consumer, dataset) = (&read.consumer, &read.dataset);
        fold(
            &mut self.scan,
            self.req,
            read.at,
            consumer,
            dataset,
            &read.contract,
        )
    }

    /// The fast paths: JSON Lines and CSV in blocks on all cores, Parquet by row group.
    fn reads_log(&mut self, path: &Path, log: ReadsLog, mapping: &Mapping) -> Result<(), LogError> {
        let (req, scan) = (self.req, &mut self.scan);
        let on_malformed = &mut *self.on_malformed;
        let csv = matches!(log, ReadsLog::Csv(_));
        let result = match log {
            ReadsLog::Parquet => {
                if open_log(path, scan).is_none() {
                    return Ok(());
                }
                parquet_rows::scan_parquet(path, req, scan, on_malformed, mapping)
            }
            ReadsLog::Jsonl(input) | ReadsLog::Csv(input) => {
                let into = FileScan {
                    path,
                    req,
                    scan: &mut *scan,
                    on_malformed,
                    block_size: BLOCK,
                };
                if csv {
                    scan_csv(input, into, mapping)
                } else {
                    scan_json_lines(input, into, mapping)
                }
            }
        };
        if let Err(e) = result {
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

impl Newest<'_, '_> {
    /// An input not read, and why.
    fn skip(&mut self, path: &Path, reason: String) {
        self.scan.skipped.push(Skipped {
            file: path.to_path_buf(),
            reason,
        });
    }
}

/// The counts an input adds to its source: files, lines, reads and malformed lines (an
/// access log's reads are its source's as they are folded, its lines when its scan finishes).
fn tally(scan: &Scan) -> (u64, u64, u64, u64) {
    (
        scan.stats.files,
        scan.stats.lines,
        scan.stats.reads,
        scan.stats.malformed,
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
fn fold_access(scan: &mut Scan, req: &ScanRequest, read: AccessRead) {
    let principal = read.reader.principal.as_deref().unwrap_or(ANONYMOUS);
    // A `{line}` template named the line: the read is of its version valid that day.
    let resolved;
    let contract = match crate::consumers::access::line_mark(read.reader.contract.as_bytes()) {
        Some(line) => {
            let day = read.at().with_timezone(&chrono::Utc).date_naive();
            match req.version_of_line(&read.reader.dataset, line, day) {
                Some(v) => {
                    resolved = v.to_string();
                    resolved.as_bytes()
                }
                // No version of that line yet that day, or no such line: not a read of a
                // version the store has; counted as malformed, as an unknown version is.
                None => {
                    scan.stats.malformed += 1;
                    return;
                }
            }
        }
        None => read.reader.contract.as_bytes(),
    };
    // A read the templates or constants made is well formed; a version that is not one is
    // counted as malformed by `fold` like any other line's.
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
    }
}
