//! The logs of reads (JSON Lines, CSV, Parquet) read one read at a time, each handed to a
//! [`Sink`] as it is read ([`Sink::read`]): the reader of a sink that keeps no hot tables,
//! the record walk's. The newest-read scan replaces it with its fast paths (`json_lines.rs`,
//! `csv_rows.rs`, `parquet_rows::scan_parquet`), which read the same fields through the same
//! [`Mapping`] but fold them straight into its tables on all cores.

use std::borrow::Cow;
use std::io::BufReader;
use std::path::Path;

use super::readers::{each_line, Layout, ReadsLog, Sink};
use super::terms::LogError;
use contracts_scan::reads::fields::{Mapping, Read};
use contracts_scan::reads::parquet_rows::ParquetLog;

/// Hand every read of one log of reads to `sink`, and each line (row) that cannot be read to
/// [`Sink::malformed`]. A text log that fails part way is [`Sink::cut_short`]; so is a
/// Parquet log that cannot be read (no such column, a column of another type, a damaged
/// file), as the scan skips it, so that both sinks read the same rows.
pub(crate) fn read_log<S: Sink + ?Sized>(
    sink: &mut S,
    path: &Path,
    log: ReadsLog,
    mapping: &Mapping,
) -> Result<(), LogError> {
    let io = |source| LogError::Io {
        path: path.to_path_buf(),
        source,
    };
    match log {
        ReadsLog::Jsonl(input) => {
            // With one dataset wanted, a line without its name (and no escape that could
            // spell it) is no read of it. A source of one dataset (a constant) has no name
            // in its lines to look for.
            let only = sink
                .only_dataset()
                .filter(|_| mapping.constant_dataset().is_none())
                .map(|d| memchr::memmem::Finder::new(d.as_bytes()).into_owned());
            let read = each_line(input, |number, line| {
                if line.is_empty() {
                    return;
                }
                if only.as_ref().is_some_and(|f| {
                    f.find(line).is_none() && memchr::memchr(b'\\', line).is_none()
                }) {
                    return;
                }
                if let Err(reason) = mapping.json(line).and_then(|r| sink.read(r)) {
                    sink.malformed(path, number, reason);
                }
            });
            match read {
                Ok(()) => Ok(()),
                Err(e) => sink.cut_short(path, io(e), Layout::Text),
            }
        }
        ReadsLog::Csv(input) => match csv(sink, path, input, mapping) {
            Ok(()) => Ok(()),
            Err(e) => sink.cut_short(path, io(std::io::Error::other(e)), Layout::Text),
        },
        ReadsLog::Parquet => {
            let log = match ParquetLog::open(path, mapping) {
                Ok(log) => log,
                Err(e) => return sink.cut_short(path, e.into(), Layout::Parquet),
            };
            for g in 0..log.row_groups() {
                let mut failed = Vec::new();
                let read = log.read_group(path, g, &mut |number, row| {
                    let result = row.and_then(|r| {
                        sink.read(Read {
                            at: r.at,
                            consumer: Cow::Borrowed(r.consumer.as_bytes()),
                            dataset: Cow::Borrowed(r.dataset.as_bytes()),
                            contract: Cow::Borrowed(r.contract.as_bytes()),
                        })
                    });
                    if let Err(reason) = result {
                        failed.push((number, reason));
                    }
                });
                for (number, reason) in failed {
                    sink.malformed(path, number, reason);
                }
                if let Err(e) = read {
                    return sink.cut_short(path, e.into(), Layout::Parquet);
                }
            }
            Ok(())
        }
    }
}

/// The reads of a CSV log, a record at a time; `Err` says why it could not be read to its
/// end. A header without a column the mapping names skips the file (said at line 1, once
/// per missing column).
fn csv<S: Sink + ?Sized>(
    sink: &mut S,
    path: &Path,
    input: Box<dyn std::io::Read + Send>,
    mapping: &Mapping,
) -> Result<(), String> {
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(BufReader::with_capacity(1 << 20, input));
    let headers = reader.byte_headers().map_err(|e| e.to_string())?.clone();
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
                    let reason = format!("the header has no column {name}; the file is skipped");
                    sink.malformed(path, 1, reason);
                    missing = true;
                }
            }
        }
    }
    if missing {
        return Ok(());
    }
    let mut record = ::csv::ByteRecord::new();
    let mut number = 1u64;
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => {
                if let ::csv::ErrorKind::Io(_) = e.kind() {
                    return Err(e.to_string());
                }
                number += 1;
                sink.malformed(path, number, e.to_string());
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
            let reason = format!("expected {} fields, found {}", headers.len(), record.len());
            sink.malformed(path, number, reason);
            continue;
        }
        if fields
            .iter()
            .flatten()
            .any(|f| std::str::from_utf8(f).is_err())
        {
            sink.malformed(path, number, "a field is not UTF-8".to_string());
            continue;
        }
        if let Err(reason) = mapping.flat(fields).and_then(|r| sink.read(r)) {
            sink.malformed(path, number, reason);
        }
    }
}
