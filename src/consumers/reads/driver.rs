//! The scan driver: every file and object of the consumption sources, each handed to the
//! reader of its format (JSON Lines, CSV, Parquet, read summaries, access logs), a file that
//! cannot be read skipped and said so ([`scan`]), and the inputs both walks of the
//! consumption record share ([`Inputs`], [`open_input`]).

use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use semver::Version;

use super::csv_rows::scan_csv;
use super::fields::Mapping;
use super::hash::{ConsumerMap, Key};
use super::json_lines::{scan_json_lines, BLOCK};
use super::parquet_rows::ParquetInput;
use super::timestamps::{At, Day};
use super::{
    fold, object_logs, parquet_rows, FileScan, KnownRead, LogError, LogFile, Malformed, NewestRead,
    Scan, ScanRequest, Skipped, ANONYMOUS,
};
use crate::consumers::access::{AccessScans, Read as AccessRead};
use crate::consumers::source_health::SourceCounts;
use crate::consumers::summary::ParsedRow;
use crate::model::source::{LogFormat, Source};

/// Scan every file of `sources` ([`log_files`]), and the objects of the remote sources that can
/// hold a read of the lookback ([`object_logs::list`]), for reads matching `req`.
/// `on_malformed` hears of each unusable line. A remote source that cannot be listed fails
/// the scan before anything is read; an object that cannot be read is skipped, as a file is.
pub fn scan(
    sources: &[Source],
    files: &[LogFile],
    req: &ScanRequest,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<Scan, LogError> {
    // Access-log sources: one compiled log each, and one burst scan each across all of
    // its files (a burst of ranged GETs may span two delivered objects).
    let (mappings, mut access_scans) = readers_of(sources);
    // Where the attributes are asked for, each access log is read with its columns.
    let with_columns: Vec<Option<crate::consumers::access::AccessLog>> = match req.attributes {
        true => sources
            .iter()
            .map(|s| s.access.clone().map(|l| l.with_columns(true)))
            .collect(),
        false => Vec::new(),
    };
    if req.attributes {
        access_scans = AccessScans::new(with_columns.iter().map(Option::as_ref).collect());
    }
    let mut scan = Scan::default();
    for d in &req.datasets {
        scan.newest.insert(d.clone(), ConsumerMap::default());
    }
    scan.stats.sources = sources.iter().map(SourceCounts::of).collect();
    // The access logs' reads are folded apart, as a block of JSON Lines is, then absorbed.
    let mut access_part = Scan::for_request(req);
    let mut inputs = Inputs::of(sources, files, req.from, req.to, &|i| {
        mappings[i]
            .constant_dataset()
            .is_none_or(|d| req.datasets.contains(d))
    })?;
    scan.stats.objects_listed = inputs.listed;
    scan.stats.objects_read = inputs.fetching;
    scan.skipped.append(&mut inputs.skipped);
    for (LogFile { path, source }, mut fetched) in inputs.by_one() {
        let before = tally(&scan, &access_part);
        'file: {
            let path = &path;
            let Some(src) = sources.get(source) else {
                break 'file;
            };
            let mapping = &mappings[source];
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let gzipped = name.ends_with(".gz");
            let Some(format) = src.format_of(&name) else {
                let e = LogError::UnknownFormat { path: path.clone() };
                scan.skipped.push(Skipped {
                    file: path.clone(),
                    reason: e.to_string(),
                });
                break 'file;
            };
            // A source of one dataset that is not asked for has no read to give.
            if mapping
                .constant_dataset()
                .is_some_and(|d| !req.datasets.contains(d))
            {
                break 'file;
            }
            match format {
                LogFormat::Jsonl | LogFormat::Csv | LogFormat::Parquet => {}
                LogFormat::Summary if crate::consumers::summary::is_parquet(path) => {
                    let result = match open_parquet(path, fetched.take()) {
                        Ok(input) => {
                            scan.stats.files += 1;
                            scan_parquet_summary(path, input, req, &mut scan, on_malformed)
                        }
                        Err(reason) => {
                            scan.skipped.push(Skipped {
                                file: path.clone(),
                                reason,
                            });
                            break 'file;
                        }
                    };
                    if let Err(e) = result {
                        cut_short(&mut scan, path, e);
                    }
                    break 'file;
                }
                LogFormat::Summary => {
                    let Some(input) = open_text(path, fetched.take(), gzipped, &mut scan) else {
                        break 'file;
                    };
                    if let Err(e) = scan_summary(path, input, req, &mut scan, on_malformed) {
                        scan.skipped.push(Skipped {
                            file: path.clone(),
                            reason: format!("cannot be read to its end: {e}"),
                        });
                    }
                    break 'file;
                }
                // Wired by the access module: each access-log format is parsed there and its
                // requests, mapped by the source's `match` templates and de-duplicated over
                // `same_read_seconds`, are folded in with `fold`.
                // Every other format is an access log (`LogFormat::is_access_log`).
                _ => {
                    if !access_scans.reads(source) {
                        break 'file;
                    }
                    let Some(input) = open_text(path, fetched.take(), gzipped, &mut scan) else {
                        break 'file;
                    };
                    let input = std::io::BufReader::with_capacity(1 << 16, input);
                    let mut bad = Vec::new();
                    let on_read = |read| fold_access(&mut access_part, req, read);
                    let outcome = access_scans.feed(source, input, on_read, |e| bad.push(e));
                    for e in bad {
                        access_part.stats.malformed += 1;
                        on_malformed(&Malformed {
                            file: path.clone(),
                            line: e.line,
                            reason: e.reason,
                        });
                    }
                    if let Err(e) = outcome {
                        scan.skipped.push(Skipped {
                            file: path.clone(),
                            reason: format!("cannot be read to its end: {e}"),
                        });
                    }
                    break 'file;
                }
            }
            let result = if format == LogFormat::Parquet {
                if open_log(path, &mut scan).is_none() {
                    break 'file;
                }
                parquet_rows::scan_parquet(path, req, &mut scan, on_malformed, mapping)
            } else {
                let Some(input) = open_text(path, fetched.take(), gzipped, &mut scan) else {
                    break 'file;
                };
                let into = FileScan {
                    path,
                    req,
                    scan: &mut scan,
                    on_malformed: &mut *on_malformed,
                    block_size: BLOCK,
                };
                match format {
                    LogFormat::Jsonl => scan_json_lines(input, into, mapping),
                    _ => scan_csv(input, into, mapping),
                }
            };
            if let Err(e) = result {
                cut_short(&mut scan, path, e);
            }
        }
        let (files, lines, reads, malformed) = tally(&scan, &access_part);
        if let Some(counts) = scan.stats.sources.get_mut(source) {
            counts.files += files - before.0;
            counts.lines += lines - before.1;
            counts.reads += reads - before.2;
            counts.malformed += malformed - before.3;
        }
    }
    // The bursts still open are reads of their source too.
    let mut closing = vec![(0u64, 0u64); sources.len()];
    let finished = access_scans.finish(|source, read| {
        let before = (access_part.stats.reads, access_part.stats.malformed);
        fold_access(&mut access_part, req, read);
        if let Some(c) = closing.get_mut(source) {
            c.0 += access_part.stats.reads - before.0;
            c.1 += access_part.stats.malformed - before.1;
        }
    });
    for (source, stats) in finished {
        scan.stats.lines += stats.lines;
        scan.access.add(&stats);
        if let Some(counts) = scan.stats.sources.get_mut(source) {
            counts.add_access(&stats);
        }
    }
    for (counts, (reads, malformed)) in scan.stats.sources.iter_mut().zip(closing) {
        counts.reads += reads;
        counts.malformed += malformed;
    }
    scan.absorb(access_part);
    Ok(scan)
}

/// The counts a file adds to its source: files, lines, reads and malformed lines, of the scan
/// and of the access logs' part of it (whose lines are counted when their scan finishes).
fn tally(scan: &Scan, access: &Scan) -> (u64, u64, u64, u64) {
    (
        scan.stats.files,
        scan.stats.lines,
        scan.stats.reads + access.stats.reads,
        scan.stats.malformed + access.stats.malformed,
    )
}

/// What a walk over the consumption record reads, in order: the local files, then the objects
/// of the remote sources that can hold a read of `from..=to` ([`object_logs::list`]), fetched
/// ahead of the walk. Both walks (the newest-read [`scan`] and `records::each_read`) take
/// their inputs from here, so a remote source reads alike in both.
pub(crate) struct Inputs {
    list: Vec<(LogFile, bool)>,
    prefetch: Option<object_logs::Prefetch>,
    /// Objects the listings returned, and how many of them are fetched.
    pub listed: u64,
    pub fetching: u64,
    /// Listed objects that are not read, and why (no known format; Parquet).
    pub skipped: Vec<Skipped>,
}

impl Inputs {
    /// `wanted(i)`: whether the `i`th source can hold a read the walk wants (a source of one
    /// dataset that is not asked for has none: its objects are not fetched).
    pub(crate) fn of(
        sources: &[Source],
        files: &[LogFile],
        from: NaiveDate,
        to: NaiveDate,
        wanted: &dyn Fn(usize) -> bool,
    ) -> Result<Inputs, LogError> {
        let mut inputs = Inputs {
            list: files.iter().map(|f| (f.clone(), false)).collect(),
            prefetch: None,
            listed: 0,
            fetching: 0,
            skipped: Vec::new(),
        };
        let mut fetch = Vec::new();
        for (i, src) in sources.iter().enumerate() {
            if !src.is_remote() {
                continue;
            }
            let listing = object_logs::list(src, from, to)?;
            inputs.listed += listing.listed;
            for object in listing.objects {
                let path = PathBuf::from(&object.url);
                match src.format_of(object.file_name()) {
                    None => inputs.skipped.push(Skipped {
                        reason: LogError::UnknownFormat { path: path.clone() }.to_string(),
                        file: path,
                    }),
                    Some(LogFormat::Parquet) => inputs.skipped.push(Skipped {
                        file: path,
                        reason: "a Parquet log in object storage is not read by this build: \
                                 write the log as JSON Lines or CSV, or summarize it where it is"
                            .to_string(),
                    }),
                    Some(_) if !wanted(i) => {}
                    Some(_) => {
                        inputs.list.push((LogFile { path, source: i }, true));
                        fetch.push(object);
                    }
                }
            }
        }
        inputs.fetching = fetch.len() as u64;
        if !fetch.is_empty() {
            inputs.prefetch = Some(object_logs::Prefetch::start(fetch)?);
        }
        Ok(inputs)
    }

    /// Each input with its fetched bytes (`None` for a local file). A fetched object is taken
    /// as its input comes up, whatever the walk then does with it, so the next object is the
    /// next input's.
    pub(crate) fn by_one(
        &mut self,
    ) -> impl Iterator<Item = (LogFile, Option<object_logs::Opened>)> + '_ {
        let list = std::mem::take(&mut self.list);
        let prefetch = &mut self.prefetch;
        list.into_iter().map(move |(file, remote)| {
            let fetched = match (remote, prefetch.as_mut()) {
                (true, Some(p)) => p.next(),
                _ => None,
            };
            (file, fetched)
        })
    }
}

/// Open a text log, a local file or a fetched object (`fetched`), count it, and undo its gzip:
/// a name ending in `.gz`, or the gzip magic bytes at its start (platforms gzip log objects
/// without saying so in the name). An input that cannot be opened is skipped, and said so.
pub(crate) fn open_text(
    path: &Path,
    fetched: Option<object_logs::Opened>,
    gzipped: bool,
    scan: &mut Scan,
) -> Option<Box<dyn std::io::Read + Send>> {
    counted(scan, path, open_input(path, fetched, gzipped))
}

/// A log input as it was opened: counted, or skipped with the reason it could not be.
fn counted<T>(scan: &mut Scan, path: &Path, opened: Result<T, String>) -> Option<T> {
    match opened {
        Ok(input) => {
            scan.stats.files += 1;
            Some(input)
        }
        Err(reason) => {
            scan.skipped.push(Skipped {
                file: path.to_path_buf(),
                reason,
            });
            None
        }
    }
}

/// Note a file whose reading failed part way: its reads before the failure count.
fn cut_short(scan: &mut Scan, path: &Path, e: LogError) {
    scan.skipped.push(Skipped {
        file: path.to_path_buf(),
        reason: format!("cannot be read to its end: {}", e.reason()),
    });
}

/// [`open_text`] without the counting: the bytes of a text log, or why it cannot be read.
pub(crate) fn open_input(
    path: &Path,
    fetched: Option<object_logs::Opened>,
    gzipped: bool,
) -> Result<Box<dyn std::io::Read + Send>, String> {
    use std::io::{BufRead, Read, Seek};
    let raw: Box<dyn std::io::Read + Send> = match fetched {
        Some(Ok(reader)) => reader,
        Some(Err(e)) => return Err(format!("cannot be fetched: {}", e.message)),
        None => {
            // A local file is handed over as it is, not through a buffer: the scan reads it
            // in blocks far larger than any buffer, and a buffer in between copied part of
            // every block once more. Its first two bytes tell whether it is gzipped.
            let mut file =
                std::fs::File::open(path).map_err(|e| format!("cannot be opened: {e}"))?;
            let mut magic = [0u8; 2];
            let mut seen = 0;
            while seen < 2 {
                match file.read(&mut magic[seen..]) {
                    Ok(0) => break,
                    Ok(n) => seen += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(format!("cannot be read: {e}")),
                }
            }
            file.rewind().map_err(|e| format!("cannot be read: {e}"))?;
            return Ok(if gzipped || magic == [0x1f, 0x8b] {
                Box::new(flate2::read::MultiGzDecoder::new(std::io::BufReader::new(
                    file,
                )))
            } else {
                Box::new(file)
            });
        }
    };
    let mut buffered = std::io::BufReader::with_capacity(1 << 16, raw);
    let magic = buffered
        .fill_buf()
        .map_err(|e| format!("cannot be read: {e}"))?
        .starts_with(&[0x1f, 0x8b]);
    Ok(if gzipped || magic {
        Box::new(flate2::read::MultiGzDecoder::new(buffered))
    } else {
        Box::new(buffered)
    })
}

/// Fold the rows of one read summary in JSON Lines in ([`fold_summary_row`]).
fn scan_summary(
    path: &Path,
    input: impl std::io::Read,
    req: &ScanRequest,
    scan: &mut Scan,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> std::io::Result<()> {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, input);
    let mut buf = Vec::new();
    let mut number = 0u64;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        number += 1;
        scan.stats.lines += 1;
        let line = buf.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let result = crate::consumers::summary::parse_row(line)
            .and_then(|row| fold_summary_row(row, req, scan));
        if let Err(reason) = result {
            scan.stats.malformed += 1;
            on_malformed(&Malformed {
                file: path.to_path_buf(),
                line: number,
                reason,
            });
        }
    }
    Ok(())
}

/// Fold the rows of one read summary in Parquet in, as [`scan_summary`] folds a JSON Lines
/// one; a row's "line" is its 1-based row number.
fn scan_parquet_summary(
    path: &Path,
    input: ParquetInput,
    req: &ScanRequest,
    scan: &mut Scan,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<(), LogError> {
    let mut each = |number: u64, row: Result<ParsedRow, String>| {
        scan.stats.lines += 1;
        if let Err(reason) = row.and_then(|row| fold_summary_row(row, req, scan)) {
            scan.stats.malformed += 1;
            on_malformed(&Malformed {
                file: path.to_path_buf(),
                line: number,
                reason,
            });
        }
    };
    parquet_rows::read_summary(path, input, &mut each)
}

/// Open a Parquet input, a local file or a fetched object (`fetched`); `Err` says why it
/// cannot be read.
pub(crate) fn open_parquet(
    path: &Path,
    fetched: Option<object_logs::Opened>,
) -> Result<ParquetInput, String> {
    match fetched {
        None => std::fs::File::open(path)
            .map(ParquetInput::File)
            .map_err(|e| format!("cannot be opened: {e}")),
        Some(Err(e)) => Err(format!("cannot be fetched: {}", e.message)),
        Some(Ok(mut reader)) => {
            use std::io::Read as _;
            let mut all = Vec::new();
            reader
                .read_to_end(&mut all)
                .map_err(|e| format!("cannot be fetched: {e}"))?;
            Ok(ParquetInput::Bytes(bytes::Bytes::from(all)))
        }
    }
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
    let opened = std::fs::File::open(path).map_err(|e| format!("cannot be opened: {e}"));
    counted(scan, path, opened)
}

/// The field mapping of each of `sources`, and the access log compiled with each (`None` for
/// a log of reads): how each is read.
pub(crate) fn readers_of(sources: &[Source]) -> (Vec<Mapping>, AccessScans<'_>) {
    let mappings = sources.iter().map(Mapping::of).collect();
    let logs = sources.iter().map(|s| s.access.as_ref()).collect();
    (mappings, AccessScans::new(logs))
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
        scan.see(&read.reader.dataset, principal, read.at(), &read.attributes);
    }
}
