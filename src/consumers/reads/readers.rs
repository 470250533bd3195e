//! The one walk over the inputs of the consumption record ([`walk`]): each local file and
//! each fetched object, opened once, handed to the reader of its format (read summaries in
//! JSON Lines or Parquet, the access logs' burst scans, the logs of reads by the scanner
//! crate's block readers into the sink's fold (`fold_log.rs`)), whose reads, rows,
//! malformed lines and unreadable inputs go to a [`Sink`]. The newest-read scan
//! (`driver.rs`) and the record walk (`records.rs`) are the two sinks. Also here: what the
//! walk reads ([`Inputs`]) and how an input is opened ([`open_input`], [`open_parquet`]).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;

use contracts_scan::reads::fields::Mapping;

use super::mapping::mapping_of;
use super::object_logs;
use super::parquet_rows::{self, ParquetInput};
use super::terms::{LogError, LogFile, Skipped};
use crate::consumers::access::{AccessLog, AccessScans, AccessStats, Read as AccessRead};
use crate::consumers::summary::{self, ParsedRow};
use crate::model::source::{LogFormat, Source};

/// A log of reads (JSON Lines, CSV or Parquet), handed to [`Sink::reads_log`]: a text log
/// opened, a Parquet log (never remote) by its path.
pub(crate) enum ReadsLog {
    Jsonl(Box<dyn std::io::Read + Send>),
    Csv(Box<dyn std::io::Read + Send>),
    Parquet,
}

/// How an input is laid out, for a sink that treats a failure of each differently: a text
/// input (a line stream) or a Parquet one.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    Text,
    Parquet,
}

/// What a walk does with what the readers yield. Generic, not `dyn`: each sink's calls are
/// compiled into the walk.
pub(crate) trait Sink {
    /// Whether a read of `dataset` can be wanted: a source of one dataset that is not is
    /// passed over (its objects are not even fetched).
    fn wants(&self, dataset: &str) -> bool;
    /// How many objects the remote sources' listings returned, and how many are fetched.
    fn listed(&mut self, _listed: u64, _fetching: u64) {}
    /// A listed object that is not read, and why.
    fn skipped(&mut self, skipped: Skipped);
    /// An input whose name is no format of its source; `wanted`: whether its source can
    /// hold a wanted read. `Err` stops the walk.
    fn unknown_format(&mut self, path: &Path, wanted: bool) -> Result<(), LogError>;
    /// An input of source number `source` is taken up, and is done with.
    fn begin(&mut self, _source: usize) {}
    fn end(&mut self, _source: usize) {}
    /// An input opened to be read.
    fn opened(&mut self) {}
    /// An input that cannot be opened, and why; `Err` stops the walk.
    fn unopened(&mut self, path: &Path, reason: String, layout: Layout) -> Result<(), LogError>;
    /// An input whose reading failed part way (what was read before counts); `Err` stops
    /// the walk.
    fn cut_short(&mut self, path: &Path, e: LogError, layout: Layout) -> Result<(), LogError>;
    /// A line of a read summary in JSON Lines, or a row of one in Parquet, blank or not.
    fn summary_line(&mut self) {}
    /// One checked row of a read summary; `Err` makes it malformed.
    fn summary_row(&mut self, row: ParsedRow) -> Result<(), String>;
    /// One read of an access log of source number `source`.
    fn access_read(&mut self, source: usize, read: AccessRead);
    /// The same, of a read another sink of the same walk takes ([`super::both::Both`]).
    fn access_read_ref(&mut self, source: usize, read: &AccessRead) {
        self.access_read(source, read.clone());
    }
    /// A line (a row) that cannot be used: 1-based, and why.
    fn malformed(&mut self, path: &Path, line: u64, reason: String);
    /// A log of reads, read by the scanner crate's readers into the sink's fold
    /// (`fold_log.rs`, which sits above this file), on all cores.
    fn reads_log(&mut self, path: &Path, log: ReadsLog, mapping: &Mapping) -> Result<(), LogError>;
    /// The access logs' counts, by source, once their last bursts are closed.
    fn access_closed(&mut self, _stats: Vec<(usize, AccessStats)>) {}
}

/// Walk every input of `sources` ([`Inputs`]: `files`, then the objects that can hold a read
/// of `from..=to`), each by the reader of its format, into `sink`. An access log's reads are
/// its bursts of requests, one burst scan per source across all of its files (a burst of
/// ranged GETs may span two delivered objects), the bursts still open handed out at the end;
/// `logs` is the compiled access log each source is read with ([`access_logs`], or another
/// compilation of the same keys).
pub(crate) fn walk<S: Sink>(
    sources: &[Source],
    files: &[LogFile],
    (from, to): (NaiveDate, NaiveDate),
    logs: Vec<Option<&AccessLog>>,
    sink: &mut S,
) -> Result<(), LogError> {
    let mappings: Vec<Mapping> = sources.iter().map(mapping_of).collect();
    let mut access = AccessScans::new(logs);
    let wanted = |m: &Mapping, sink: &S| m.constant_dataset().is_none_or(|d| sink.wants(d));
    let mut inputs = Inputs::of(sources, files, from, to, &|i| wanted(&mappings[i], sink))?;
    sink.listed(inputs.listed, inputs.fetching);
    for s in std::mem::take(&mut inputs.skipped) {
        sink.skipped(s);
    }
    for (LogFile { path, source }, fetched) in inputs.by_one() {
        let (Some(src), Some(mapping)) = (sources.get(source), mappings.get(source)) else {
            continue;
        };
        sink.begin(source);
        let read = read_one(src, mapping, &path, source, fetched, &mut access, sink);
        sink.end(source);
        read?;
    }
    let stats = access.finish(|source, read| sink.access_read(source, read));
    sink.access_closed(stats);
    Ok(())
}

/// The access log compiled with each of `sources` (`None` for a log of reads).
pub(crate) fn access_logs(sources: &[Source]) -> Vec<Option<&AccessLog>> {
    sources.iter().map(|s| s.access.as_ref()).collect()
}

/// Read one input of source number `source` by the reader of its format.
fn read_one<S: Sink>(
    src: &Source,
    mapping: &Mapping,
    path: &Path,
    source: usize,
    fetched: Option<object_logs::Opened>,
    access: &mut AccessScans<'_>,
    sink: &mut S,
) -> Result<(), LogError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let gzipped = name.ends_with(".gz");
    let wanted = mapping.constant_dataset().is_none_or(|d| sink.wants(d));
    let Some(format) = src.format_of(&name) else {
        return sink.unknown_format(path, wanted);
    };
    // A source of one dataset that is not wanted has no read to give.
    if !wanted {
        return Ok(());
    }
    let text = |sink: &mut S, fetched| match open_input(path, fetched, gzipped) {
        Ok(input) => {
            sink.opened();
            Ok(Some(input))
        }
        Err(reason) => sink.unopened(path, reason, Layout::Text).map(|()| None),
    };
    match format {
        LogFormat::Parquet => sink.reads_log(path, ReadsLog::Parquet, mapping),
        LogFormat::Jsonl | LogFormat::Csv => {
            let Some(input) = text(sink, fetched)? else {
                return Ok(());
            };
            let log = match format {
                LogFormat::Jsonl => ReadsLog::Jsonl(input),
                _ => ReadsLog::Csv(input),
            };
            sink.reads_log(path, log, mapping)
        }
        LogFormat::Summary if summary::is_parquet(path) => {
            let input = match open_parquet(path, fetched) {
                Ok(input) => input,
                Err(reason) => return sink.unopened(path, reason, Layout::Parquet),
            };
            sink.opened();
            let read = parquet_rows::read_summary(path, input, &mut |number, row| {
                sink.summary_line();
                if let Err(reason) = row.and_then(|row| sink.summary_row(row)) {
                    sink.malformed(path, number, reason);
                }
            });
            match read {
                Ok(()) => Ok(()),
                Err(e) => sink.cut_short(path, e, Layout::Parquet),
            }
        }
        LogFormat::Summary => {
            let Some(input) = text(sink, fetched)? else {
                return Ok(());
            };
            match summary_lines(path, input, sink) {
                Ok(()) => Ok(()),
                Err(source) => {
                    let e = LogError::Io {
                        path: path.to_path_buf(),
                        source,
                    };
                    sink.cut_short(path, e, Layout::Text)
                }
            }
        }
        // Every other format is an access log (`LogFormat::is_access_log`), parsed by the
        // scanner crate: its requests, mapped by the source's `match` templates and
        // de-duplicated over `same_read_seconds`, come out as reads.
        _ => {
            if !access.reads(source) {
                return Ok(());
            }
            let Some(input) = text(sink, fetched)? else {
                return Ok(());
            };
            let input = std::io::BufReader::with_capacity(1 << 16, input);
            let mut bad = Vec::new();
            let on_read = |read| sink.access_read(source, read);
            let outcome = access.feed(source, input, on_read, |e| bad.push(e));
            for e in bad {
                sink.malformed(path, e.line, e.reason);
            }
            match outcome {
                Ok(()) => Ok(()),
                Err(e) => {
                    let e = LogError::Io {
                        path: path.to_path_buf(),
                        source: std::io::Error::other(e.to_string()),
                    };
                    sink.cut_short(path, e, Layout::Text)
                }
            }
        }
    }
}

/// The rows of a read summary in JSON Lines: each line counted, each non-blank one checked
/// ([`summary::parse_row`]) and handed to the sink, or said to be malformed.
fn summary_lines<S: Sink>(
    path: &Path,
    input: impl std::io::Read,
    sink: &mut S,
) -> std::io::Result<()> {
    each_line(input, |number, line| {
        sink.summary_line();
        if line.is_empty() {
            return;
        }
        if let Err(reason) = summary::parse_row(line).and_then(|row| sink.summary_row(row)) {
            sink.malformed(path, number, reason);
        }
    })
}

/// Hand each line of a text log, trimmed (a blank one empty), to `f` with its 1-based
/// number.
pub(crate) fn each_line(
    input: impl std::io::Read,
    mut f: impl FnMut(u64, &[u8]),
) -> std::io::Result<()> {
    let mut reader = std::io::BufReader::with_capacity(1 << 20, input);
    let mut buf = Vec::new();
    let mut number = 0u64;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            return Ok(());
        }
        number += 1;
        f(number, buf.trim_ascii());
    }
}

/// What a walk over the consumption record reads, in order: the local files, then the objects
/// of the remote sources that can hold a read of `from..=to` ([`object_logs::list`]), fetched
/// ahead of the walk.
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

/// The bytes of a text log, a local file or a fetched object (`fetched`), its gzip undone: a
/// name ending in `.gz`, or the gzip magic bytes at its start (platforms gzip log objects
/// without saying so in the name); `Err` says why it cannot be read.
pub(crate) fn open_input(
    path: &Path,
    fetched: Option<object_logs::Opened>,
    gzipped: bool,
) -> Result<Box<dyn std::io::Read + Send>, String> {
    use std::io::{Read, Seek};
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
