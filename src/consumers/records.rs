//! Every read of the consumption record, one at a time: the plain walk over the files of the
//! configured sources (JSON Lines and CSV, each optionally gzipped, Parquet, and read
//! summaries) that the day-by-day counts and `consumption summarize` are built on. The
//! newest-read scan (`reads::scan`) has its own, faster walk; this one hands each read to the
//! caller.
//!
//! A raw read is one read at one instant; a row of a summary ([`super::summary`]) is a
//! consumer's reads of one version on one UTC day, from its first instant to its last. Both
//! come out as a [`Record`], so whoever folds them need not know which file held them.

use std::borrow::Cow;
use std::io::{BufRead, BufReader};
use std::path::Path;

use chrono::{DateTime, FixedOffset};

use super::access::Read as AccessRead;
use super::reads::{
    open_input, open_parquet, read_summary, readers_of, Inputs, LogError, LogFile, Malformed,
    MappedRead, ParquetLog, ANONYMOUS,
};
use super::summary;
use crate::model::source::{LogFormat, Source};

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

/// An input's bytes, through the newest-read scan's one opener (a local file or a fetched
/// object, gunzipped by its name or its first bytes); one that cannot be read stops the walk.
fn open(
    path: &Path,
    fetched: &mut Option<super::reads::object_logs::Opened>,
    gzipped: bool,
) -> Result<Box<dyn std::io::Read + Send>, LogError> {
    open_input(path, fetched.take(), gzipped).map_err(|reason| LogError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(reason),
    })
}

/// Hand every read of `files` (each of the source it names) to `on_read`, whose `Err` makes
/// the line malformed; unusable lines go to `on_malformed`. Returns how many lines were
/// malformed. An access log's reads are its bursts of requests ([`super::access`]), handed
/// out as each burst closes. The objects of a remote source are those that can hold a read of
/// the days `days` ([`Inputs`]); a listed object that is not read, and a Parquet summary that
/// cannot be read, is said to `on_malformed` with line 0 (not counted as a malformed line).
pub fn each_read(
    sources: &[Source],
    files: &[LogFile],
    days: (chrono::NaiveDate, chrono::NaiveDate),
    wanted: &Wanted<'_>,
    valid_from: &super::reads::ValidFrom,
    on_read: &mut dyn FnMut(Record<'_>) -> Result<(), String>,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<u64, LogError> {
    let mut malformed = 0u64;
    // With one dataset, a line that does not contain its name cannot be a read of it.
    let finder = match wanted {
        Wanted::These(set) if set.len() == 1 => set
            .iter()
            .next()
            .map(|one| memchr::memmem::Finder::new(one.as_bytes()).into_owned()),
        _ => None,
    };
    // An access log's requests become reads in bursts ([`super::access`]), one burst scan
    // per source across all of its files, as the newest-read scan does.
    let (mappings, mut access_scans) = readers_of(sources);
    // Reads of access logs whose version is none: counted, as the scan counts them.
    let mut unfit = 0u64;
    let mut inputs = Inputs::of(sources, files, days.0, days.1, &|i| {
        mappings[i]
            .constant_dataset()
            .is_none_or(|d| wanted.wants(d))
    })?;
    for s in std::mem::take(&mut inputs.skipped) {
        on_malformed(&Malformed {
            file: s.file,
            line: 0,
            reason: s.reason,
        });
    }
    for (LogFile { path, source }, mut fetched) in inputs.by_one() {
        let path = &path;
        let (Some(src), Some(mapping)) = (sources.get(source), mappings.get(source)) else {
            continue;
        };
        let gzipped = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(".gz"));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let io = |source| LogError::Io {
            path: path.clone(),
            source,
        };
        let mut bad = |line: u64, reason: String, malformed: &mut u64| {
            *malformed += 1;
            on_malformed(&Malformed {
                file: path.clone(),
                line,
                reason,
            });
        };
        if mapping.constant_dataset().is_some_and(|d| !wanted.wants(d)) {
            continue;
        }
        // A source of one dataset (a constant) has no name in its lines to look for.
        let finder = finder
            .as_ref()
            .filter(|_| mapping.constant_dataset().is_none());
        match src.format_of(&name) {
            Some(LogFormat::Jsonl) => {
                let input = open(path, &mut fetched, gzipped)?;
                each_line(input, |number, line| {
                    if finder.is_some_and(|f| {
                        f.find(line).is_none() && memchr::memchr(b'\\', line).is_none()
                    }) {
                        return;
                    }
                    if let Err(reason) = mapping.json(line).and_then(|r| take(r, wanted, on_read)) {
                        bad(number, reason, &mut malformed);
                    }
                })
                .map_err(io)?;
            }
            // A Parquet summary that cannot be read — no such column, a column of another
            // type, a damaged file — is skipped and said so (line 0), as the newest-read scan
            // skips it, so that both walks read the same rows.
            Some(LogFormat::Summary) if summary::is_parquet(path) => {
                let read = open_parquet(path, fetched.take()).and_then(|input| {
                    read_summary(path, input, &mut |number, row| {
                        let result = row.and_then(|row| summary_record(&row, wanted, on_read));
                        if let Err(reason) = result {
                            bad(number, reason, &mut malformed);
                        }
                    })
                    .map_err(|e| format!("cannot be read to its end: {}", e.reason()))
                });
                if let Err(reason) = read {
                    on_malformed(&Malformed {
                        file: path.clone(),
                        line: 0,
                        reason: format!("{reason}; the file is skipped"),
                    });
                }
            }
            Some(LogFormat::Summary) => {
                let input = open(path, &mut fetched, gzipped)?;
                each_line(input, |number, line| {
                    let result = summary::parse_row(line)
                        .and_then(|row| summary_record(&row, wanted, on_read));
                    if let Err(reason) = result {
                        bad(number, reason, &mut malformed);
                    }
                })
                .map_err(io)?;
            }
            Some(LogFormat::Csv) => {
                let mut reader = csv::ReaderBuilder::new()
                    .has_headers(true)
                    .flexible(true)
                    .from_reader(BufReader::with_capacity(
                        1 << 20,
                        open(path, &mut fetched, gzipped)?,
                    ));
                let headers = reader
                    .byte_headers()
                    .map_err(|e| io(std::io::Error::other(e.to_string())))?
                    .clone();
                let mut cols = [None; 4];
                let mut missing = false;
                for (c, name) in cols.iter_mut().zip(mapping.columns()) {
                    if let Some(name) = name {
                        match headers
                            .iter()
                            .position(|h| h.trim_ascii() == name.as_bytes())
                        {
                            Some(i) => *c = Some(i),
                            None => {
                                bad(
                                    1,
                                    format!("the header has no column {name}; the file is skipped"),
                                    &mut malformed,
                                );
                                missing = true;
                            }
                        }
                    }
                }
                if missing {
                    continue;
                }
                let mut record = csv::ByteRecord::new();
                let mut number = 1u64;
                loop {
                    match reader.read_byte_record(&mut record) {
                        Ok(false) => break,
                        Ok(true) => {}
                        Err(e) => {
                            if let csv::ErrorKind::Io(_) = e.kind() {
                                return Err(io(std::io::Error::other(e.to_string())));
                            }
                            number += 1;
                            bad(number, e.to_string(), &mut malformed);
                            continue;
                        }
                    }
                    number = record.position().map_or(number + 1, |p| p.line());
                    let fields = cols.map(|c| c.and_then(|i| record.get(i)));
                    if cols
                        .iter()
                        .zip(fields)
                        .any(|(c, f)| c.is_some() && f.is_none())
                    {
                        bad(
                            number,
                            format!("expected {} fields, found {}", headers.len(), record.len()),
                            &mut malformed,
                        );
                        continue;
                    }
                    if fields
                        .iter()
                        .flatten()
                        .any(|f| std::str::from_utf8(f).is_err())
                    {
                        bad(number, "a field is not UTF-8".to_string(), &mut malformed);
                        continue;
                    }
                    if let Err(reason) = mapping.flat(fields).and_then(|r| take(r, wanted, on_read))
                    {
                        bad(number, reason, &mut malformed);
                    }
                }
            }
            // A Parquet log that cannot be read — no such column, a column of another type, a
            // damaged file — is skipped and said so (line 0), as the newest-read scan skips it:
            // both walks then read the same rows, and neither stops the command.
            Some(LogFormat::Parquet) => {
                let skipped = |e: LogError| Malformed {
                    file: path.clone(),
                    line: 0,
                    reason: format!(
                        "cannot be read to its end: {}; the file is skipped",
                        e.reason()
                    ),
                };
                let log = match ParquetLog::open(path, mapping) {
                    Ok(log) => log,
                    Err(e) => {
                        on_malformed(&skipped(e));
                        continue;
                    }
                };
                for g in 0..log.row_groups() {
                    let mut failed = Vec::new();
                    let read = log.read_group(path, g, &mut |number, row| {
                        let result = row.and_then(|r| {
                            take(
                                MappedRead {
                                    at: r.at,
                                    consumer: Cow::Borrowed(r.consumer.as_bytes()),
                                    dataset: Cow::Borrowed(r.dataset.as_bytes()),
                                    contract: Cow::Borrowed(r.contract.as_bytes()),
                                },
                                wanted,
                                on_read,
                            )
                        });
                        if let Err(reason) = result {
                            failed.push((number, reason));
                        }
                    });
                    for (number, reason) in failed {
                        bad(number, reason, &mut malformed);
                    }
                    if let Err(e) = read {
                        on_malformed(&skipped(e));
                        break;
                    }
                }
            }
            Some(format) if format.is_access_log() => {
                if !access_scans.reads(source) {
                    continue;
                }
                let input = BufReader::with_capacity(1 << 16, open(path, &mut fetched, gzipped)?);
                let mut errors = Vec::new();
                let on_read = |read: AccessRead| {
                    if access_read(&read, wanted, valid_from, on_read).is_err() {
                        unfit += 1;
                    }
                };
                let outcome = access_scans.feed(source, input, on_read, |e| errors.push(e));
                for e in errors {
                    bad(e.line, e.reason, &mut malformed);
                }
                outcome.map_err(|e| io(std::io::Error::other(e.to_string())))?;
            }
            _ => return Err(LogError::UnknownFormat { path: path.clone() }),
        }
    }
    access_scans.finish(|_, read| {
        if access_read(&read, wanted, valid_from, on_read).is_err() {
            unfit += 1;
        }
    });
    Ok(malformed + unfit)
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
/// by), its principal the consumer (`anonymous` without one).
fn access_read(
    read: &AccessRead,
    wanted: &Wanted<'_>,
    valid_from: &super::reads::ValidFrom,
    on_read: &mut dyn FnMut(Record<'_>) -> Result<(), String>,
) -> Result<(), String> {
    // A `{line}` template named the line: the read is of its version valid that day, as
    // the newest-read scan resolves it.
    let resolved;
    let contract = match super::access::line_mark(read.reader.contract.as_bytes()) {
        Some(line) => {
            let day = read.at().with_timezone(&chrono::Utc).date_naive();
            let dataset = &read.reader.dataset;
            resolved = super::reads::version_of_line(valid_from, dataset, line, day)
                .ok_or_else(|| format!("{dataset} has no version of line {line} on {day}"))?
                .to_string();
            resolved.as_str()
        }
        None => read.reader.contract.as_str(),
    };
    let record = Record {
        dataset: &read.reader.dataset,
        consumer: read.reader.principal.as_deref().unwrap_or(ANONYMOUS),
        contract,
        first: read.at(),
        last: read.at(),
        reads: 1,
    };
    wanted.hand_on(record, on_read)
}

/// Hand each non-blank line of a text log, trimmed, to `f` with its 1-based number.
fn each_line(input: impl std::io::Read, mut f: impl FnMut(u64, &[u8])) -> std::io::Result<()> {
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let mut buf = Vec::new();
    let mut number = 0u64;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            return Ok(());
        }
        number += 1;
        let line = buf.trim_ascii();
        if !line.is_empty() {
            f(number, line);
        }
    }
}

fn text(b: &[u8]) -> Option<String> {
    std::str::from_utf8(b).ok().map(str::to_string)
}

/// Hand one mapped read of a wanted dataset to `on_read` (others are skipped).
fn take(
    r: MappedRead<'_>,
    wanted: &Wanted<'_>,
    on_read: &mut dyn FnMut(Record<'_>) -> Result<(), String>,
) -> Result<(), String> {
    let Ok(dataset) = std::str::from_utf8(&r.dataset) else {
        return Ok(());
    };
    if !wanted.wants(dataset) {
        return Ok(());
    }
    let consumer = text(&r.consumer).ok_or("`consumer` is not UTF-8")?;
    let contract = text(&r.contract).ok_or("`contract` is not UTF-8")?;
    let at = r.at.instant()?;
    on_read(Record {
        dataset,
        consumer: &consumer,
        contract: &contract,
        first: at,
        last: at,
        reads: 1,
    })
}
