//! The record walk's fold of a log of reads ([`RecordFold`]): the scanner crate's block
//! readers, the newest-read scan's, hand it each read's fields ([`Fold`]), on every core; it
//! keeps, per (dataset, consumer, contract, UTC day), how many reads and the first and last
//! instant. That is all the record walk's callers keep of raw reads (the day-by-day counts
//! sum the reads and keep each day's newest; a read summary keeps reads, first and last per
//! the same key), so each key is handed on as one `Record` of `reads` reads.
//!
//! A read is judged here, on the worker, as the record walk judged it one at a time: the
//! consumer and the contract UTF-8, the instant readable, the consumer not empty, the
//! contract a semantic version. The block reader reports a line refused here with its
//! number, in file order.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use chrono::{DateTime, FixedOffset, Utc};
use semver::Version;

use contracts_scan::reads::blocks::{Accumulator, Fold};
use contracts_scan::reads::hash::NameHasher;
use contracts_scan::reads::timestamps::At;

/// Which datasets the record walk wants: these (`Some`), or every one (`None`, for a
/// summary of the whole record).
pub(crate) struct RecordRequest {
    pub(crate) datasets: Option<Vec<String>>,
}

/// The reads of one key: how many, the first and the last instant (ordered with their
/// offsets, as a read summary orders them: `summary::order`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tally {
    pub(crate) reads: u64,
    pub(crate) first: DateTime<FixedOffset>,
    pub(crate) last: DateTime<FixedOffset>,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        let order = |t: &DateTime<FixedOffset>| (*t, t.offset().local_minus_utc());
        self.reads = self.reads.saturating_add(other.reads);
        if order(&other.first) < order(&self.first) {
            self.first = other.first;
        }
        if order(&other.last) > order(&self.last) {
            self.last = other.last;
        }
    }
}

/// The datasets a worker has met, by index: the requested ones, or (every dataset wanted)
/// each name as it is first seen. Behind a `RefCell` because [`Fold::dataset_index`] takes
/// `&self`; a worker's fold is its own.
#[derive(Default)]
struct Names {
    list: Vec<Box<[u8]>>,
    index: HashMap<Box<[u8]>, usize>,
    every: bool,
}

/// What a worker (and, merged, the file) keeps of the reads: see the module's comment.
pub(crate) struct RecordFold {
    names: RefCell<Names>,
    /// Key: the day (days since the Common Era, 4 bytes), then the dataset, the consumer
    /// (each after its length, 4 bytes) and the contract: one buffer, so a read of a key met
    /// before allocates nothing. Hashed as the scan hashes names (no SipHash per read).
    tallies: HashMap<Box<[u8]>, Tally, BuildHasherDefault<NameHasher>>,
    key: Vec<u8>,
    /// Lines refused (here or by the reader).
    pub(crate) malformed: u64,
}

impl RecordFold {
    /// Count a line this fold alone refused (the scan beside it took it): it is not
    /// reported again, the scan's walk reports each line once.
    pub(crate) fn refused(&mut self) {
        self.malformed += 1;
    }

    /// Each key's reads: (dataset, consumer, contract, reads), in no order.
    pub(crate) fn records(&self) -> impl Iterator<Item = (&str, &str, &str, &Tally)> {
        self.tallies.iter().filter_map(|(key, tally)| {
            let (dataset, rest) = field(&key[4..])?;
            let (consumer, contract) = field(rest)?;
            let text = |b| std::str::from_utf8(b).ok();
            Some((text(dataset)?, text(consumer)?, text(contract)?, tally))
        })
    }
}

/// A field after its length (4 bytes), and what follows it.
fn field(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let len = u32::from_le_bytes(b.get(..4)?.try_into().ok()?) as usize;
    let rest = &b[4..];
    Some((rest.get(..len)?, rest.get(len..)?))
}

fn text(b: &[u8], name: &str) -> Result<(), String> {
    match std::str::from_utf8(b) {
        Ok(_) => Ok(()),
        Err(_) => Err(format!("`{name}` is not UTF-8")),
    }
}

impl Accumulator for RecordFold {
    type Request = RecordRequest;

    fn for_request(req: &RecordRequest) -> RecordFold {
        let names = match &req.datasets {
            Some(list) => Names {
                list: list.iter().map(|d| d.as_bytes().into()).collect(),
                ..Names::default()
            },
            None => Names {
                every: true,
                ..Names::default()
            },
        };
        RecordFold {
            names: RefCell::new(names),
            tallies: HashMap::default(),
            key: Vec::new(),
            malformed: 0,
        }
    }

    fn flush(&mut self) {}

    fn absorb(&mut self, part: RecordFold) {
        self.malformed += part.malformed;
        for (key, tally) in part.tallies {
            match self.tallies.get_mut(&key) {
                Some(have) => have.add(&tally),
                None => {
                    self.tallies.insert(key, tally);
                }
            }
        }
    }

    fn count_lines(&mut self, _n: u64) {}

    fn count_malformed(&mut self) {
        self.malformed += 1;
    }
}

impl Fold for RecordFold {
    fn only_dataset(req: &RecordRequest) -> Option<&str> {
        match req.datasets.as_deref() {
            Some([one]) => Some(one),
            _ => None,
        }
    }

    fn is_requested(req: &RecordRequest, dataset: &str) -> bool {
        req.datasets
            .as_ref()
            .is_none_or(|list| list.iter().any(|d| d == dataset))
    }

    /// A dataset that is not UTF-8 is no wanted one, as before: its reads are passed over.
    fn dataset_index(&self, dataset: &[u8]) -> Option<usize> {
        let mut names = self.names.borrow_mut();
        if !names.every {
            return names.list.iter().position(|d| **d == *dataset);
        }
        if let Some(&i) = names.index.get(dataset) {
            return Some(i);
        }
        std::str::from_utf8(dataset).ok()?;
        let i = names.list.len();
        names.list.push(dataset.into());
        names.index.insert(dataset.into(), i);
        Some(i)
    }

    fn fold_into(
        &mut self,
        _req: &RecordRequest,
        d: usize,
        at: At<'_>,
        consumer: &[u8],
        contract: &[u8],
    ) -> Result<(), String> {
        // The checks in the order the record walk made them: the fields' text, the instant,
        // then what its callers refused (an empty consumer, a contract that is no version).
        let t = match at.instant() {
            Ok(t) => t,
            Err(reason) => {
                text(consumer, "consumer")?;
                text(contract, "contract")?;
                return Err(reason);
            }
        };
        let day = t.with_timezone(&Utc).date_naive();
        let names = self.names.get_mut();
        let Some(dataset) = names.list.get(d) else {
            return Ok(());
        };
        let key = &mut self.key;
        key.clear();
        key.extend_from_slice(&chrono::Datelike::num_days_from_ce(&day).to_le_bytes());
        for f in [&dataset[..], consumer] {
            key.extend_from_slice(&(f.len() as u32).to_le_bytes());
            key.extend_from_slice(f);
        }
        key.extend_from_slice(contract);
        let read = Tally {
            reads: 1,
            first: t,
            last: t,
        };
        if let Some(have) = self.tallies.get_mut(&key[..]) {
            have.add(&read);
            return Ok(());
        }
        // A key met for the first time: its fields are judged once.
        text(consumer, "consumer")?;
        text(contract, "contract")?;
        if consumer.is_empty() {
            return Err("`consumer` is empty".to_string());
        }
        let contract = String::from_utf8_lossy(contract);
        if Version::parse(&contract).is_err() {
            return Err(format!("`contract` {contract:?} is not a semantic version"));
        }
        self.tallies.insert(key[..].into(), read);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    use super::super::{later, scan, LogFile, Malformed, ScanRequest};
    use crate::consumers::records::{each_read, each_read_beside_scan, Record, Wanted};
    use crate::model::source::Source;

    /// Per consumer of roads inside the days: reads, and the newest (instant, version) as
    /// RFC 3339 text and version text.
    type Newest = BTreeMap<String, (u64, String, String)>;

    /// The reads of roads inside `req`'s days folded per consumer, and the malformed lines'
    /// numbers, of what the record walk hands on.
    fn fold(records: &mut Newest, r: &Record<'_>, req: &ScanRequest) -> Result<(), String> {
        let day = r.last.with_timezone(&chrono::Utc).date_naive();
        if r.dataset != "roads" || day < req.from || day > req.to {
            return Ok(());
        }
        let version = semver::Version::parse(r.contract).map_err(|e| e.to_string())?;
        let slot = records.entry(r.consumer.to_string()).or_default();
        slot.0 += r.reads;
        let newer = slot.1.is_empty() || {
            let have = chrono::DateTime::parse_from_rfc3339(&slot.1).unwrap();
            let have_version = semver::Version::parse(&slot.2).unwrap();
            later(&r.last, &version) > later(&have, &have_version)
        };
        if newer {
            *slot = (slot.0, r.last.to_rfc3339(), version.to_string());
        }
        Ok(())
    }

    /// The scan's newest reads of roads in the same form.
    fn scanned(s: &super::super::Scan) -> Newest {
        s.of("roads")
            .into_iter()
            .map(|(c, n)| (c, (n.reads, n.at.to_rfc3339(), n.version.to_string())))
            .collect()
    }

    /// The scan, the record walk alone and the record walk beside the scan (one reading for
    /// both) read one log of reads through the one reader of its format: the same reads,
    /// and the same malformed lines on the same line numbers, each reported once.
    #[test]
    fn the_record_walk_and_the_scan_find_the_same_reads_and_malformed_lines() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = [
            r#"{"at":"2026-11-20T03:00:00Z","consumer":"flood","dataset":"roads","contract":"1.1.0"}"#,
            r#"{"at":"2026-11-25T03:00:00+02:00","consumer":"flood","dataset":"roads","contract":"2.0.0"}"#,
            r#"{"at":"2026-11-25T01:00:00Z","consumer":"flood","dataset":"roads","contract":"2.0.0"}"#,
            r#" { "contract": "1.0.0", "dataset": "roads", "consumer": "c\u00e9", "at": "2026-11-21T00:00:00Z" }"#,
            r#"{"at":"2026-11-22T03:00:00Z","consumer":"rain","dataset":"rivers","contract":"1.0.0"}"#,
            r#"{"at":"2026-11-22T03:00:00Z","consumer":"rain","dataset":"r\u006fads","contract":"1.0.0"}"#,
            r#"{"at":"yesterday","consumer":"rain","dataset":"roads","contract":"1.0.0"}"#,
            r#"{"at":"2026-11-23T03:00:00Z","consumer":"rain","dataset":"roads","contract":"two"}"#,
            r#"{"at":"2026-11-23T03:00:00Z","consumer":"","dataset":"roads","contract":"1.0.0"}"#,
            "roads is not json",
            "",
            r#"{"at":"2026-12-25T03:00:00Z","consumer":"late","dataset":"roads","contract":"1.0.0"}"#,
            r#"{"at":"2026-11-24T03:00:00Z","dataset":"roads","contract":"1.0.0"}"#,
        ]
        .join("\n")
        .into();
        let csv = [
            "at,consumer,dataset,contract",
            "2026-11-20T03:00:00Z,flood,roads,1.1.0",
            "2026-11-26T03:00:00Z,\"flood\",roads,2.0.0",
            "2026-11-26T01:00:00-02:00,flood,roads,2.0.0",
            "2026-11-22T03:00:00Z,rain,rivers,1.0.0",
            "2026-11-22T03:00:00Z,rain,roads",
            "yesterday,rain,roads,1.0.0",
            "2026-11-23T03:00:00Z,rain,roads,two",
            "\"2026-11-24T03:00:00Z\",\"multi\nline\",roads,1.0.0",
        ]
        .join("\n")
        .into();
        let day = |s: &str| s.parse().unwrap();
        let parquet = dir.path().join("log.parquet");
        write_parquet(&parquet);
        for (name, text) in [
            ("log.jsonl", jsonl),
            ("log.csv", csv),
            ("log.parquet", None),
        ] {
            let path = dir.path().join(name);
            if let Some(text) = text {
                std::fs::write(&path, text).unwrap();
            }
            for datasets in [&["roads"][..], &["roads", "rivers"]] {
                let datasets: BTreeSet<String> = datasets.iter().map(|d| d.to_string()).collect();
                let req = ScanRequest::lookback(datasets.clone(), day("2026-11-29"), 30);
                let (s, scan_lines) = by_scan(&path, &req);
                let (alone, lines, bad) = by_records(&path, &req);
                let (beside, beside_lines, beside_bad, again) = by_both(&path, &req);
                let case = format!("{name}, {datasets:?}");
                assert_eq!(alone, scanned(&s), "{case}");
                assert_eq!(lines, scan_lines, "{case}");
                assert_eq!(bad, s.stats.malformed, "{case}");
                assert_eq!((beside, beside_lines), (alone, lines), "{case}");
                assert_eq!((beside_bad, scanned(&again)), (bad, scanned(&s)), "{case}");
                assert!(s.stats.reads >= 3 && bad >= 2, "{case}: {:?}", s.stats);
            }
        }
    }

    /// A Parquet log of reads in row groups of three: good reads, ties of one instant in two
    /// offsets, an instant and a version that are none, an empty consumer.
    fn write_parquet(path: &Path) {
        use arrow_array::{ArrayRef, RecordBatch, StringArray};
        let rows = [
            ["2026-11-20T03:00:00Z", "flood", "roads", "1.1.0"],
            ["2026-11-25T03:00:00+02:00", "flood", "roads", "2.0.0"],
            ["2026-11-25T01:00:00Z", "flood", "roads", "2.0.0"],
            ["2026-11-22T03:00:00Z", "rain", "rivers", "1.0.0"],
            ["yesterday", "rain", "roads", "1.0.0"],
            ["2026-11-23T03:00:00Z", "rain", "roads", "two"],
            ["2026-11-23T04:00:00Z", "", "roads", "1.0.0"],
            ["2026-11-24T03:00:00Z", "rain", "roads", "1.0.0"],
            ["2026-12-25T03:00:00Z", "late", "roads", "1.0.0"],
        ];
        let col = |k: usize| -> ArrayRef {
            std::sync::Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r[k])))
        };
        let batch = RecordBatch::try_from_iter(
            ["at", "consumer", "dataset", "contract"]
                .into_iter()
                .enumerate()
                .map(|(k, name)| (name, col(k))),
        )
        .unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(3))
            .build();
        let file = std::fs::File::create(path).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props));
        let w = w.as_mut().unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
    }

    fn one_file(path: &Path) -> ([Source; 1], [LogFile; 1]) {
        let file = LogFile {
            path: path.to_path_buf(),
            source: 0,
        };
        ([Source::glob("")], [file])
    }

    fn by_scan(path: &Path, req: &ScanRequest) -> (super::super::Scan, Vec<u64>) {
        let (sources, files) = one_file(path);
        let mut lines = Vec::new();
        let s = scan(&sources, &files, req, &mut |m: &Malformed| {
            lines.push(m.line)
        })
        .unwrap();
        (s, lines)
    }

    fn by_records(path: &Path, req: &ScanRequest) -> (Newest, Vec<u64>, u64) {
        let (sources, files) = one_file(path);
        let (mut records, mut lines) = (Newest::new(), Vec::new());
        let bad = each_read(
            &sources,
            &files,
            (req.from, req.to),
            &Wanted::These(&req.datasets),
            &Default::default(),
            &mut |r| fold(&mut records, &r, req),
            &mut |m| lines.push(m.line),
        )
        .unwrap();
        (records, lines, bad)
    }

    fn by_both(path: &Path, req: &ScanRequest) -> (Newest, Vec<u64>, u64, super::super::Scan) {
        let (sources, files) = one_file(path);
        let (mut records, mut lines) = (Newest::new(), Vec::new());
        let (s, bad) = each_read_beside_scan(
            &sources,
            &files,
            req,
            &Wanted::These(&req.datasets),
            &Default::default(),
            &mut |r| fold(&mut records, &r, req),
            &mut |m| lines.push(m.line),
        )
        .unwrap();
        (records, lines, bad, s)
    }
}
