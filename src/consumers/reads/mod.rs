//! The consumption log (docs/src/reference/consumption-log.md): JSON Lines, CSV and Parquet
//! files, matched by the globs of `[consumption] sources`, recording each read as `at`,
//! `consumer`, `dataset`, `contract`.
//!
//! Logs run to hundreds of millions of lines, so they are streamed: text logs in blocks cut
//! where a line (a CSV record) ends and scanned on all cores ([`scan_blocks`]), Parquet logs by
//! row group; fields are borrowed from the block (no allocation for a line that needs no
//! unescaping), lines of other datasets are skipped before any date is parsed, and only the
//! newest read per (dataset, consumer) is kept. One file per purpose: here the public types
//! and the file lists; [`readers`] (the one walk over every input: each opened, read by the
//! reader of its format, what it yields handed to a sink), [`driver`] (the newest-read scan),
//! [`fold_log`] (the one reader of each log of reads, into any fold), [`record_fold`] (the
//! record walk's fold of a log of reads), [`pair`] (the scan's and the record walk's folds
//! at once), [`blocks`] (text logs in blocks
//! on all cores), [`json_lines`] (and its fast path), [`csv_rows`], [`parquet_rows`],
//! [`fields`] (a source's field mapping), [`json_fields`] (the mapped fields of a JSON line),
//! [`memo`] (the dates and versions a scan remembers), [`fold`] (one read into the scan).
//! Below them, in the scanner crate (`contracts_scan::reads`): a read's instant and the place
//! of its day, the table a scan updates per read, the map keys and their hasher, the wide
//! byte tests of the JSON walk. A malformed line is handed to the caller,
//! counted, and skipped: one bad line must not hide every good one. Likewise a file that cannot be read
//! (missing, unreadable, a corrupt gzip stream, a name that is no known format) is handed
//! back in [`Scan::skipped`] and the scan goes on with the next file. A log named `*.gz`
//! (`.jsonl.gz`, `.ndjson.gz`, `.csv.gz`) is decompressed as it streams.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::model::source::Source;

mod both;
mod driver;
mod fold;
mod fold_log;
mod json_lines;
mod mapping;
mod memo;
mod newest;
pub(crate) mod object_logs;
mod pair;
mod parquet_rows;
mod readers;
mod record_fold;
mod scan;
mod seen_ids;
mod terms;

pub(crate) use both::Folds;
use contracts_scan::reads::blocks::fold;
use contracts_scan::reads::blocks::FileScan;
pub(crate) use contracts_scan::reads::fields::Mapping;
pub use contracts_scan::reads::hash::{Key, NameHasher, NameMap};
pub use driver::scan;
pub(crate) use driver::scan_beside;
pub(crate) use fold_log::fold_log;
#[doc(hidden)]
pub use json_lines::bench_json_block;
pub(crate) use readers::{access_logs, open_input, walk, Layout, ReadsLog, Sink};
pub(crate) use record_fold::{RecordFold, RecordRequest};
pub use scan::{Scan, ScanStats};
pub(crate) use terms::later;
pub use terms::{
    version_of_line, ConsumerMap, KnownRead, LineVersions, LogError, LogFile, Malformed,
    NewestRead, ScanRequest, SeenColumns, Skipped, ValidFrom, ANONYMOUS,
};
#[cfg(test)]
pub(crate) use {parquet_rows::read_summary, readers::open_parquet};

/// The files each local source's glob (relative to `root`) matches, sorted; the remote
/// sources match none here.
pub fn source_files(root: &Path, sources: &[Source]) -> Result<Vec<Vec<PathBuf>>, LogError> {
    sources
        .iter()
        .map(|source| {
            if source.is_remote() {
                return Ok(Vec::new());
            }
            let pattern = &source.path;
            let full = root.join(pattern);
            let paths =
                glob::glob(&full.to_string_lossy()).map_err(|source| LogError::Pattern {
                    pattern: pattern.clone(),
                    source,
                })?;
            let mut files = BTreeSet::new();
            for p in paths {
                let p = p.map_err(|e| LogError::Io {
                    path: e.path().to_path_buf(),
                    source: std::io::Error::new(e.error().kind(), e.error().to_string()),
                })?;
                if p.is_file() {
                    files.insert(p);
                }
            }
            Ok(files.into_iter().collect())
        })
        .collect()
}

/// The log files of `sources`, sorted, each read once: a file two sources match belongs to
/// the first (`check` reports it).
pub fn log_files(root: &Path, sources: &[Source]) -> Result<Vec<LogFile>, LogError> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, files) in source_files(root, sources)?.into_iter().enumerate() {
        for path in files {
            if seen.insert(path.clone()) {
                out.push(LogFile { path, source: i });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The files two or more sources match, each with the indexes of those sources.
pub fn overlapping_files(
    root: &Path,
    sources: &[Source],
) -> Result<Vec<(PathBuf, Vec<usize>)>, LogError> {
    let mut by_file: std::collections::BTreeMap<PathBuf, Vec<usize>> = Default::default();
    for (i, files) in source_files(root, sources)?.into_iter().enumerate() {
        for f in files {
            by_file.entry(f).or_default().push(i);
        }
    }
    Ok(by_file.into_iter().filter(|(_, s)| s.len() > 1).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
    use contracts_scan::reads::csv_rows;
    use contracts_scan::reads::fields::Mapping;
    use contracts_scan::reads::json_lines::scan_json_lines;
    use contracts_scan::reads::plain_lines;
    use contracts_scan::reads::timestamps::At;
    use semver::Version;
    use std::borrow::Cow;
    use std::collections::BTreeMap;
    use std::collections::HashMap;

    /// The four fields of a read as `serde_json` reads the default mapping: the model.
    #[derive(serde::Deserialize)]
    struct RawRead<'a> {
        #[serde(borrow)]
        at: Cow<'a, str>,
        #[serde(borrow)]
        consumer: Cow<'a, str>,
        #[serde(borrow)]
        dataset: Cow<'a, str>,
        #[serde(borrow)]
        contract: Cow<'a, str>,
    }

    /// The fields the mapped-field scanner finds in a line with the default mapping (`at`
    /// as text), `None` when it refuses the line.
    fn flat_fields(line: &[u8]) -> Option<[String; 4]> {
        let m = Mapping::default();
        let r = m.json(line).ok()?;
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
        let at = match r.at {
            At::Text(b) => text(b),
            At::Instant(t) => t.to_rfc3339(),
            At::UtcNanos(_) => unreachable!(),
        };
        Some([at, text(&r.consumer), text(&r.dataset), text(&r.contract)])
    }

    /// Scan files of the default mapping.
    fn scan_paths(
        paths: &[PathBuf],
        req: &ScanRequest,
        on_malformed: &mut dyn FnMut(&Malformed),
    ) -> Result<Scan, LogError> {
        let sources = [Source::glob("")];
        let files: Vec<LogFile> = paths
            .iter()
            .map(|p| LogFile {
                path: p.clone(),
                source: 0,
            })
            .collect();
        super::scan(&sources, &files, req, on_malformed)
    }

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn keeps_the_newest_read_within_the_days() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = write(
            dir.path(),
            "a.jsonl",
            concat!(
                r#"{"at":"2026-11-20T03:00:00Z","consumer":"flood","dataset":"roads","contract":"1.1.0"}"#,
                "\n",
                r#"{"at":"2026-11-25T03:00:00Z","consumer":"flood","dataset":"roads","contract":"2.0.0"}"#,
                "\n",
                r#"{"at":"2026-12-25T03:00:00Z","consumer":"flood","dataset":"roads","contract":"1.0.0"}"#,
                "\n",
                r#"{"at":"2026-11-26T03:00:00Z","consumer":"flood","dataset":"rivers","contract":"1.0.0"}"#,
                "\n",
                "this is not json but mentions roads\n",
                "\n",
                r#"{"at":"2020-01-01T00:00:00Z","consumer":"old","dataset":"roads","contract":"1.0.0"}"#,
                "\n",
            ),
        );
        let csv = write(
            dir.path(),
            "b.csv",
            "at,consumer,dataset,contract\n\
             2026-11-27T03:00:00+00:00,atlas,roads,1.1.0\n\
             2026-11-27T03:00:00+00:00,atlas,roads\n\
             yesterday,atlas,roads,1.1.0\n",
        );
        let req = ScanRequest::lookback(["roads".to_string()].into(), day("2026-11-29"), 30);
        let mut bad = Vec::new();
        let scan = scan_paths(&[jsonl, csv], &req, &mut |m| bad.push(m.clone())).unwrap();
        let roads = scan.of("roads");
        assert_eq!(roads["flood"].version, Version::new(2, 0, 0));
        assert_eq!(roads["flood"].oldest_line, 1);
        assert_eq!(roads["atlas"].version, Version::new(1, 1, 0));
        assert!(!roads.contains_key("old"));
        assert_eq!(scan.stats.after_today, 1);
        assert_eq!(scan.stats.before_lookback, 1);
        assert_eq!(scan.stats.malformed, 3, "{bad:?}");
        assert_eq!(bad[0].line, 5);
        assert_eq!(bad[1].line, 3);
        assert_eq!(bad[2].line, 4);
    }

    #[test]
    fn the_fast_path_agrees_with_the_full_parser() {
        let lines: &[&[u8]] = &[
            br#"{"at":"2026-11-28T03:00:00Z","consumer":"a","dataset":"roads","contract":"1.0.0"}"#,
            br#" { "contract" : "1.0.0", "dataset":"roads" ,"consumer":"a","at":"t", "x":"y" } "#,
            br#"{"at":"t","consumer":"a\u0062","dataset":"roads","contract":"1.0.0"}"#,
            br#"{"at":"t","consumer":"a","dataset":"roads","contract":"1.0.0","n":1}"#,
            br#"{"at":"t","consumer":"a","dataset":"roads"}"#,
            br#"{"at":"t","consumer":"a","dataset":"roads","contract":"1.0.0"} junk"#,
            br#"{"at":"t","at":"u","consumer":"a","dataset":"roads","contract":"1.0.0"}"#,
            b"not json",
        ];
        for line in lines {
            let full = serde_json::from_slice::<RawRead>(line).ok().map(|r| {
                [
                    r.at.into_owned(),
                    r.consumer.into_owned(),
                    r.dataset.into_owned(),
                    r.contract.into_owned(),
                ]
            });
            if let Some(fast) = flat_fields(line) {
                assert_eq!(Some(fast), full, "{}", String::from_utf8_lossy(line));
            }
        }
        assert!(flat_fields(lines[0]).is_some());
        assert!(flat_fields(lines[1]).is_some());
        // An escape is unescaped, as the parser does.
        assert_eq!(flat_fields(lines[2]).unwrap()[1], "ab");
        assert!(flat_fields(lines[3]).is_some());
        assert!(flat_fields(lines[6]).is_none());
    }

    proptest::proptest! {
        /// Lines in the default key order with awkward values (escapes, quotes, control
        /// characters, bytes that are not UTF-8, spaces, a missing or extra key, junk after
        /// the object): whenever the quick walk takes a line, it gives the fields `serde_json`
        /// does, and it takes the plain line.
        #[test]
        fn the_quick_walk_agrees_with_the_full_parser(
            values in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec![
                        &b"a"[..], b"roads", b"\\\"", b"\\u0062", b"\\n", b"\\", b"\"", b"\t",
                        b"\xc3\xa9", b"\xff", b" ", b"}", b",", b":",
                    ]),
                    0..5,
                ),
                4,
            ),
            keys in proptest::prop_oneof![
                2 => proptest::strategy::Just(vec!["at", "consumer", "dataset", "contract"]),
                1 => proptest::collection::vec(
                    proptest::sample::select(vec![
                        "at", "consumer", "dataset", "contract", "x", "at ", "",
                    ]),
                    4,
                ),
            ],
            tail in proptest::sample::select(vec![&b"}"[..], b"} ", b",\"n\":1}", b"}x", b""]),
        ) {
            let mut line: Vec<u8> = b"{".to_vec();
            for (i, (k, v)) in keys.iter().zip(&values).enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.extend_from_slice(format!("\"{k}\":\"").as_bytes());
                line.extend(v.iter().flat_map(|p| p.iter().copied()));
                line.push(b'"');
            }
            line.extend_from_slice(tail);
            let full = serde_json::from_slice::<RawRead>(&line).ok().map(|r| {
                [
                    r.at.into_owned(),
                    r.consumer.into_owned(),
                    r.dataset.into_owned(),
                    r.contract.into_owned(),
                ]
            });
            let mapping = Mapping::default();
            let quick = plain_lines::Lines::default().read(&line, 0, &mapping).map(|(r, _)| {
                let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                let plain_lines::PlainRead { at, consumer, dataset, contract } = r;
                let At::Text(at) = at else { panic!("`at` in RFC 3339 is text") };
                [text(at), text(consumer), text(dataset), text(contract)]
            });
            if let Some(fast) = quick.clone() {
                proptest::prop_assert_eq!(Some(fast), full.clone());
            }
            if let Some(fast) = flat_fields(&line) {
                proptest::prop_assert_eq!(Some(fast), full.clone());
            }
            let plain = keys == ["at", "consumer", "dataset", "contract"]
                && [&b"}"[..], b"} ", b",\"n\":1}"].contains(&tail)
                && values.iter().all(|v| {
                    v.iter().all(|p| {
                        [&b"a"[..], b"roads", b"\xc3\xa9", b" ", b"}", b",", b":"].contains(p)
                    })
                });
            proptest::prop_assert_eq!(quick.is_some(), plain);
        }
    }

    /// A JSON Lines file scanned in blocks of `block` bytes: the newest reads as (dataset,
    /// consumer, read) in that order, the counts, and the line numbers reported malformed.
    fn scan_jsonl(
        path: &Path,
        req: &ScanRequest,
        block: usize,
    ) -> (Vec<(String, String, NewestRead)>, ScanStats, Vec<u64>) {
        let mut scan = Scan::default();
        for d in &req.datasets {
            scan.newest.insert(d.clone(), ConsumerMap::default());
        }
        let mut bad = Vec::new();
        let file = std::fs::File::open(path).unwrap();
        let into = FileScan {
            path,
            req,
            scan: &mut scan,
            on_malformed: &mut |m| bad.push(m.line),
            block_size: block,
        };
        scan_json_lines(file, into, &Mapping::default()).unwrap();
        let mut newest: Vec<_> = scan
            .newest
            .into_iter()
            .flat_map(|(d, per)| per.into_iter().map(move |(c, r)| (d.clone(), c.name(), r)))
            .collect();
        newest.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        (newest, scan.stats, bad)
    }

    /// The newest reads of a JSON Lines log as the spec defines them, line by line with the
    /// general parser: the model the fast paths and the hot table are checked against.
    fn model_scan(text: &str, req: &ScanRequest) -> (Vec<(String, String, NewestRead)>, u64, u64) {
        let only = (req.datasets.len() == 1).then(|| req.datasets.iter().next().unwrap());
        let mut newest: BTreeMap<(String, String), NewestRead> = BTreeMap::new();
        let (mut reads, mut malformed) = (0, 0);
        for line in text.split('\n') {
            let line = line.trim_ascii();
            // With one dataset requested, a line that cannot be one of its reads is not
            // looked at (neither its name nor an escape is in it).
            if line.is_empty()
                || only.is_some_and(|d| !line.contains(d.as_str()) && !line.contains('\\'))
            {
                continue;
            }
            let Ok(r) = serde_json::from_str::<RawRead>(line) else {
                malformed += 1;
                continue;
            };
            if !req.datasets.contains(r.dataset.as_ref()) {
                continue;
            }
            let at = match DateTime::parse_from_rfc3339(&r.at) {
                Ok(at) if !r.consumer.is_empty() => at,
                _ => {
                    malformed += 1;
                    continue;
                }
            };
            let day = at.with_timezone(&Utc).date_naive();
            if day < req.from || day > req.to {
                continue;
            }
            let Ok(version) = Version::parse(&r.contract) else {
                malformed += 1;
                continue;
            };
            reads += 1;
            let read = NewestRead {
                at,
                oldest_line: version.major,
                reads: 1,
                known: Some(KnownRead {
                    at,
                    version: version.clone(),
                }),
                version,
            };
            match newest.entry((r.dataset.to_string(), r.consumer.to_string())) {
                std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().absorb(read),
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(read);
                }
            }
        }
        let newest = newest.into_iter().map(|((d, c), r)| (d, c, r)).collect();
        (newest, reads, malformed)
    }

    proptest::proptest! {
        /// Any mix of lines (the plain form, other datasets, escapes, spaces, CRLF, other
        /// instants and offsets, long and non-ASCII names, broken lines), cut into blocks of
        /// any size, scans to the model's answer: the same newest read of each consumer,
        /// with its offset, and the same counts.
        #[test]
        fn the_scan_gives_the_model_answer(
            picks in proptest::collection::vec((0usize..8, 0usize..6, 0usize..4, 0usize..9, 0usize..5, 0usize..6), 1..120),
            block in 1usize..600,
            both in proptest::bool::ANY,
        ) {
            let consumers = ["a", "flood-model", "c\u{e9}", "a-consumer-name-longer-than-the-table", "b", "a\\u0062", "", "z"];
            let datasets = ["roads", "rivers", "roadsx", "r\\u006fads"];
            let ats = [
                "2026-11-20T03:00:00Z", "2026-11-20T03:00:00Z", "2026-11-28T23:59:59Z",
                "2026-11-20T05:00:00+02:00", "2026-11-20T03:00:00.5Z", "2026-12-25T03:00:00Z",
                "2020-01-01T00:00:00Z", "2026-11-20T23:59:60Z", "yesterday",
            ];
            let versions = ["1.0.0", "2.0.0", "1.1.0", "two", "2.0.0-rc.1"];
            let mut text = String::new();
            for &(c, d, form, a, v, end) in &picks {
                let d = [0, 0, 1, 2, 3, 0][d];
                let (c, d, a, v) = (consumers[c], datasets[d], ats[a], versions[v]);
                match form {
                    0 | 1 => text.push_str(&format!(r#"{{"at":"{a}","consumer":"{c}","dataset":"{d}","contract":"{v}"}}"#)),
                    2 => text.push_str(&format!(r#" {{ "contract": "{v}", "dataset": "{d}", "consumer": "{c}", "at": "{a}" }}"#)),
                    _ => text.push_str(&format!("{d} is not json {c}")),
                }
                text.push_str(["\n", "\n", "\r\n", "\n\n", "\n  \n", "\n"][end]);
            }
            let requested: &[&str] = if both { &["roads", "rivers"] } else { &["roads"] };
            let req = ScanRequest::lookback(requested.iter().map(|d| d.to_string()).collect(), day("2026-11-29"), 30);
            let dir = tempfile::tempdir().unwrap();
            let path = write(dir.path(), "log.jsonl", &text);
            let (got, stats, bad) = scan_jsonl(&path, &req, block);
            let bad = bad.len() as u64;
            let (want, reads, malformed) = model_scan(&text, &req);
            proptest::prop_assert_eq!(&got, &want);
            // `DateTime` equality ignores the offset: the offsets must agree too.
            for (g, w) in got.iter().zip(&want) {
                proptest::prop_assert_eq!(g.2.at.offset(), w.2.at.offset());
            }
            proptest::prop_assert_eq!(stats.reads, reads);
            proptest::prop_assert_eq!(stats.malformed, malformed);
            proptest::prop_assert_eq!(bad, malformed);
        }
    }

    #[test]
    fn blocks_of_any_size_give_the_sequential_answer() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        for i in 0..300 {
            let (ds, v) = match i % 3 {
                0 => ("roads", "1.1.0"),
                1 => ("rivers", "1.0.0"),
                _ => ("roads", "2.0.0"),
            };
            if i % 37 == 0 {
                text.push_str("roads: broken line\n");
            }
            if i % 50 == 0 {
                // A line much longer than the smallest blocks, with extra fields.
                text.push_str(&format!(
                    "{{\"pad\":\"{}\",\"at\":\"2026-11-{:02}T01:00:00Z\",\"consumer\":\"c{}\",\"dataset\":\"{ds}\",\"contract\":\"{v}\"}}\n",
                    "x".repeat(200),
                    1 + i % 28,
                    i % 11
                ));
            }
            text.push_str(&format!(
                "{{\"at\":\"2026-11-{:02}T0{}:00:00Z\",\"consumer\":\"c{}\",\"dataset\":\"{ds}\",\"contract\":\"{v}\"}}\n",
                1 + i % 28,
                i % 10,
                i % 11
            ));
        }
        text.push_str("{\"at\":\"2026-11-28T09:00:00Z\",\"consumer\":\"last\",\"dataset\":\"roads\",\"contract\":\"1.0.0\"}");
        let path = write(dir.path(), "log.jsonl", &text);
        let run = |datasets: &[&str], block: usize| {
            let req = ScanRequest::lookback(
                datasets.iter().map(|d| d.to_string()).collect(),
                day("2026-11-29"),
                30,
            );
            scan_jsonl(&path, &req, block)
        };
        let lines = text.lines().count() as u64;
        let broken: Vec<u64> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.starts_with("roads:"))
            .map(|(i, _)| i as u64 + 1)
            .collect();
        for datasets in [&["roads"][..], &["roads", "rivers"][..]] {
            let whole = run(datasets, 1 << 20);
            assert_eq!(whole.1.lines, lines);
            assert_eq!(whole.2, broken, "{datasets:?}");
            assert!(whole.0.iter().any(|(_, c, _)| c == "last"));
            for block in [1, 7, 64, 150, 4096] {
                assert_eq!(run(datasets, block), whole, "block {block}, {datasets:?}");
            }
        }
    }

    #[test]
    fn csv_blocks_of_any_size_give_the_whole_file_answer() {
        // Quoted fields with line breaks, commas, doubled quotes and CRLF; a quote inside an
        // unquoted field is a literal. Each record's first line number is noted as it is
        // written, so the malformed lines' numbers are known without running the scan.
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("\u{feff}note,at,consumer,dataset,contract\r\n");
        let mut line = 2u64;
        let mut broken = Vec::new();
        let mut reads = 0u64;
        for i in 0..200 {
            let (ds, v) = if i % 3 == 1 {
                ("rivers", "1.0.0")
            } else {
                ("roads", "1.1.0")
            };
            let note = match i % 5 {
                0 => "plain".to_string(),
                1 => "\"two\nlines, \"\"quoted\"\"\"".to_string(),
                2 => "\"three\r\nlines\n\"".to_string(),
                3 => "a\"b".to_string(),
                _ => "\"\"".to_string(),
            };
            let day = 1 + i % 28;
            if i % 23 == 0 {
                // A bad version: malformed at the record's first line.
                text.push_str(&format!(
                    "{note},2026-11-{day:02}T01:00:00Z,c{},roads,one\n",
                    i % 7
                ));
                broken.push(line);
            } else {
                text.push_str(&format!(
                    "{note},2026-11-{day:02}T01:00:00Z,\"c{}\",{ds},{v}\n",
                    i % 7
                ));
                reads += u64::from(ds == "roads");
            }
            line += 1 + note.matches('\n').count() as u64;
        }
        let path = write(dir.path(), "log.csv", &text);
        let run = |block: usize| {
            let req = ScanRequest::lookback(
                ["roads".to_string()].into_iter().collect(),
                day("2026-11-29"),
                30,
            );
            let mut scan = Scan::for_request(&req);
            let mut bad = Vec::new();
            let file = std::fs::File::open(&path).unwrap();
            let into = FileScan {
                path: &path,
                req: &req,
                scan: &mut scan,
                on_malformed: &mut |m| bad.push(m.line),
                block_size: block,
            };
            csv_rows::scan_csv(file, into, &Mapping::default()).unwrap();
            let mut newest: Vec<_> = scan.of("roads").into_iter().collect();
            newest.sort_by(|a, b| a.0.cmp(&b.0));
            (newest, scan.stats, bad)
        };
        let whole = run(1 << 20);
        assert_eq!(whole.2, broken);
        assert_eq!(whole.1.reads, reads);
        assert_eq!(whole.1.lines, 201);
        assert_eq!(whole.0.len(), 7);
        for block in [1, 2, 5, 17, 64, 300, 4096] {
            assert_eq!(run(block), whole, "block {block}");
        }
    }

    proptest::proptest! {
        /// Blocks of awkward lines (empty fields, spaces, too few and too many fields, bytes
        /// that are not UTF-8, a quote or a `\r` somewhere, no final break): wherever the
        /// fast split applies, it gives the records and fields the `csv` reader does.
        #[test]
        fn plain_blocks_split_as_the_csv_reader_does(
            lines in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec![
                        &b"a"[..], b",", b",", b" ", b"roads", b"\xff", b"2026-11-28T03:00:00Z",
                        b"", b"\t", b"-", b"\xac", b",,,,,,,,,",
                    ]),
                    0..6,
                ),
                1..20,
            ),
            final_break in proptest::bool::ANY,
            // Now and then a quote or a `\r` somewhere: the block is then left to the reader.
            spoil in proptest::option::weighted(
                0.2,
                (0usize..200, proptest::sample::select(vec![b'"', b'\r'])),
            ),
        ) {
            let mut block: Vec<u8> = Vec::new();
            for (i, l) in lines.iter().enumerate() {
                if i > 0 {
                    block.push(b'\n');
                }
                block.extend(l.iter().flat_map(|p| p.iter().copied()));
            }
            if final_break {
                block.push(b'\n');
            }
            if let Some((at, byte)) = spoil {
                block.insert(at.min(block.len()), byte);
                proptest::prop_assert!(!csv_rows::plain(&block));
            }
            if csv_rows::plain(&block) {
                let mut reader = csv::ReaderBuilder::new()
                    .has_headers(false)
                    .flexible(true)
                    .from_reader(&block[..]);
                let want: Vec<Vec<Vec<u8>>> = reader
                    .byte_records()
                    .map(|r| r.unwrap().iter().map(<[u8]>::to_vec).collect())
                    .collect();
                // Line by line as the scan splits them, from each line's start in the block.
                let mut got = Vec::new();
                let mut pos = 0;
                while pos < block.len() {
                    let mut fields = [&b""[..]; 32];
                    let (n, end, ascii) = csv_rows::split_line(&block, pos, &mut fields);
                    proptest::prop_assert_eq!(ascii, block[pos..end].is_ascii());
                    proptest::prop_assert!(!block[pos..end].contains(&b'\n'));
                    // An empty line is no record, to the reader as to the scan. A line of
                    // more fields than the split keeps is split at its commas by the scan
                    // (`Rows::scan_plain`), and so here.
                    if end > pos && n <= 32 {
                        got.push(fields[..n].iter().map(|f| f.to_vec()).collect::<Vec<_>>());
                    } else if end > pos {
                        let line = &block[pos..end];
                        proptest::prop_assert_eq!(line.split(|&c| c == b',').count(), n);
                        got.push(line.split(|&c| c == b',').map(<[u8]>::to_vec).collect());
                    }
                    pos = end + 1;
                }
                proptest::prop_assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn plain_and_quoted_blocks_scan_alike() {
        // The same reads with every field quoted (the `csv` reader) and bare (the fast split),
        // with a bad version and a short record among them.
        let dir = tempfile::tempdir().unwrap();
        let mut bare = String::from("at,consumer,dataset,contract\n");
        let mut quoted = String::from("at,consumer,dataset,contract\n");
        for i in 0..120 {
            let v = match i % 17 {
                0 => "one",
                k if k % 2 == 0 => "1.1.0",
                _ => "2.0.0",
            };
            let ds = if i % 5 == 0 { "rivers" } else { "roads" };
            let at = format!("2026-11-{:02}T0{}:00:00Z", 1 + i % 30, i % 10);
            let c = format!("c{}", i % 9);
            if i % 29 == 0 {
                bare.push_str(&format!("{at},{c}\n"));
                quoted.push_str(&format!("\"{at}\",\"{c}\"\n"));
            } else if i % 23 == 0 {
                // Empty lines, which both skip: the line numbers after them still agree.
                bare.push_str("\n\n");
                quoted.push_str("\n\n");
            } else {
                bare.push_str(&format!("{at},{c},{ds},{v}\n"));
                quoted.push_str(&format!("\"{at}\",\"{c}\",\"{ds}\",\"{v}\"\n"));
            }
        }
        assert!(csv_rows::plain(bare.as_bytes()) && !csv_rows::plain(quoted.as_bytes()));
        let run = |name: &str, text: &str| {
            let path = write(dir.path(), name, text);
            let req = ScanRequest::lookback(["roads".to_string()].into(), day("2026-11-29"), 30);
            let mut bad = Vec::new();
            let scan =
                scan_paths(&[path], &req, &mut |m| bad.push((m.line, m.reason.clone()))).unwrap();
            let mut newest: Vec<_> = scan.of("roads").into_iter().collect();
            newest.sort_by(|a, b| a.0.cmp(&b.0));
            (newest, scan.stats, bad)
        };
        let (b, q) = (run("bare.csv", &bare), run("quoted.csv", &quoted));
        assert_eq!(b.2.len(), 10, "{:?}", b.2);
        assert_eq!(b, q);
    }

    #[test]
    fn a_record_ends_only_outside_quotes() {
        assert_eq!(csv_rows::record_end(b"a,b\nc,d\n"), Some(7));
        assert_eq!(csv_rows::record_end(b"a,\"b\nc\",d"), None);
        assert_eq!(csv_rows::record_end(b"a,\"b\nc\"\"\n\",d\ne"), Some(12));
        // A quote inside an unquoted field is a literal: the break after it ends the record.
        assert_eq!(csv_rows::record_end(b"a\"b,c\nd"), Some(5));
        assert_eq!(csv_rows::record_end(b"\"\"\r\nx"), Some(3));
    }

    #[test]
    fn parquet_timestamps_of_every_unit_scan_as_their_rfc3339_text() {
        use arrow_array::types::{
            TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
            TimestampSecondType,
        };
        use arrow_array::{ArrayRef, PrimitiveArray, RecordBatch, StringArray};
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        // Inside the days (with sub-second parts), at the edges of the lookback, before the
        // epoch, and (in seconds) past the nanosecond range.
        let instants = [
            "2026-11-20T03:00:00.123456789Z",
            "2026-11-29T23:59:59.999999999Z",
            "2026-10-31T00:00:00Z",
            "2026-10-30T23:59:59.5Z",
            "2026-11-30T00:00:00Z",
            "1969-12-31T23:59:59.25Z",
            "2300-01-01T00:00:00Z",
        ];
        let req = ScanRequest::lookback(["roads".to_string()].into(), day("2026-11-29"), 30);
        let strings = |v: Vec<String>| Arc::new(StringArray::from_iter_values(v)) as ArrayRef;
        let scan_of = |path: &PathBuf| {
            let scan = scan_paths(std::slice::from_ref(path), &req, &mut |_| {}).unwrap();
            assert!(scan.skipped.is_empty(), "{:?}", scan.skipped);
            let mut newest: Vec<_> = scan.of("roads").into_iter().collect();
            newest.sort_by(|a, b| a.0.cmp(&b.0));
            (newest, scan.stats)
        };
        for (unit, per) in [
            ("s", 1_000_000_000i64),
            ("ms", 1_000_000),
            ("us", 1_000),
            ("ns", 1),
        ] {
            // The instants truncated to the unit, as integers and as text.
            let mut ticks = Vec::new();
            let mut jsonl = String::new();
            for (i, text) in instants.iter().enumerate() {
                let t = DateTime::parse_from_rfc3339(text).unwrap();
                if per == 1 && t.timestamp_nanos_opt().is_none() {
                    continue;
                }
                let (secs, nanos) = (t.timestamp(), i64::from(t.timestamp_subsec_nanos()));
                let tick = secs * (1_000_000_000 / per) + nanos / per;
                let back = DateTime::from_timestamp(secs, (nanos / per * per) as u32).unwrap();
                ticks.push((i, tick));
                jsonl.push_str(&format!(
                    "{{\"at\":\"{}\",\"consumer\":\"c{i}\",\"dataset\":\"roads\",\"contract\":\"1.0.0\"}}\n",
                    back.to_rfc3339()
                ));
            }
            let values: Vec<i64> = ticks.iter().map(|t| t.1).collect();
            let at: ArrayRef = match unit {
                "s" => Arc::new(
                    PrimitiveArray::<TimestampSecondType>::from(values).with_timezone("UTC"),
                ),
                "ms" => Arc::new(
                    PrimitiveArray::<TimestampMillisecondType>::from(values).with_timezone("UTC"),
                ),
                "us" => Arc::new(PrimitiveArray::<TimestampMicrosecondType>::from(values)),
                _ => Arc::new(
                    PrimitiveArray::<TimestampNanosecondType>::from(values).with_timezone("+00:00"),
                ),
            };
            let batch = RecordBatch::try_from_iter([
                ("at", at),
                (
                    "consumer",
                    strings(ticks.iter().map(|t| format!("c{}", t.0)).collect()),
                ),
                (
                    "dataset",
                    strings(ticks.iter().map(|_| "roads".to_string()).collect()),
                ),
                (
                    "contract",
                    strings(ticks.iter().map(|_| "1.0.0".to_string()).collect()),
                ),
            ])
            .unwrap();
            let pq_path = dir.path().join(format!("log-{unit}.parquet"));
            let mut w = parquet::arrow::ArrowWriter::try_new(
                std::fs::File::create(&pq_path).unwrap(),
                batch.schema(),
                None,
            )
            .unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            let json_path = write(dir.path(), &format!("log-{unit}.jsonl"), &jsonl);
            let (pq, json) = (scan_of(&pq_path), scan_of(&json_path));
            assert_eq!(json.1.reads, 3, "{unit}: {jsonl}");
            assert_eq!(pq, json, "{unit}");
        }
    }

    #[test]
    fn a_parquet_log_written_by_the_parquet_crate_scans_as_its_json_lines_twin() {
        use arrow_array::{ArrayRef, RecordBatch, StringArray, StringViewArray};
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let mut rows: Vec<[String; 4]> = Vec::new();
        for i in 0..100u32 {
            let contract = match i % 13 {
                0 => "not-a-version".to_string(),
                k => format!("{}.{}.0", 1 + k % 2, k % 3),
            };
            rows.push([
                format!(
                    "2026-{:02}-{:02}T{:02}:00:00Z",
                    10 + i % 3,
                    1 + i % 28,
                    i % 24
                ),
                format!("c{}", i % 9),
                if i % 4 == 0 { "rivers" } else { "roads" }.to_string(),
                contract,
            ]);
        }
        let jsonl: String = rows
            .iter()
            .map(|[a, c, d, v]| {
                format!("{{\"at\":\"{a}\",\"consumer\":\"{c}\",\"dataset\":\"{d}\",\"contract\":\"{v}\"}}\n")
            })
            .collect();
        let json_path = write(dir.path(), "log.jsonl", &jsonl);
        let pq_path = dir.path().join("log.parquet");
        let col = |k: usize| -> ArrayRef {
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r[k].clone()),
            ))
        };
        // `consumer` as a view array, the others plain; an extra column the scan never reads.
        let batch = RecordBatch::try_from_iter([
            (
                "extra",
                Arc::new(StringArray::from_iter_values(rows.iter().map(|_| "x"))) as ArrayRef,
            ),
            ("contract", col(3)),
            ("dataset", col(2)),
            (
                "consumer",
                Arc::new(StringViewArray::from_iter_values(
                    rows.iter().map(|r| r[1].clone()),
                )),
            ),
            ("at", col(0)),
        ])
        .unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(7))
            .build();
        let mut w = parquet::arrow::ArrowWriter::try_new(
            std::fs::File::create(&pq_path).unwrap(),
            batch.schema(),
            Some(props),
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let run = |path: &PathBuf| {
            let req = ScanRequest::lookback(
                ["roads".to_string(), "rivers".to_string()]
                    .into_iter()
                    .collect(),
                day("2026-11-29"),
                45,
            );
            let mut bad = Vec::new();
            let scan = scan_paths(std::slice::from_ref(path), &req, &mut |m| {
                bad.push((m.line, m.reason.clone()))
            })
            .unwrap();
            assert!(scan.skipped.is_empty(), "{:?}", scan.skipped);
            let mut newest: Vec<_> = ["roads", "rivers"]
                .iter()
                .flat_map(|d| {
                    scan.of(d)
                        .into_iter()
                        .map(move |(c, r)| (d.to_string(), c, r))
                })
                .collect();
            newest.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
            (newest, scan.stats, bad)
        };
        let (json, parquet) = (run(&json_path), run(&pq_path));
        assert!(
            json.1.reads > 10 && json.1.before_lookback > 10,
            "{:?}",
            json.1
        );
        // Bad versions are rows i % 13 == 0; only those inside the 45 days up to 2026-11-29
        // (from 2026-10-16) are judged: i = 13 (11-14), 52 (11-25), 78 (10-23), 91 (11-08).
        let lines: Vec<u64> = json.2.iter().map(|b| b.0).collect();
        assert_eq!(lines, [14, 53, 79, 92]);
        assert_eq!(parquet, json);
    }

    #[test]
    fn remembered_days_and_versions_give_the_plain_answer() {
        // Runs of reads on the same day, days on both sides of the lookback, instants the
        // fast form refuses (hour 25, a leap second, an offset) and versions repeated: each
        // line's place is worked out here with chrono's RFC 3339 parser alone.
        let req = ScanRequest::lookback(
            ["roads".to_string()].into_iter().collect(),
            day("2026-11-29"),
            3,
        );
        let ats = [
            "2026-11-26T23:59:59Z",
            "2026-11-27T00:00:00Z",
            "2026-11-27T12:30:00Z",
            "2026-11-27T25:00:00Z",
            "2026-11-28T23:59:60Z",
            "2026-11-29T23:59:59Z",
            "2026-11-30T00:00:00Z",
            "2026-11-29T22:00:00-03:00",
            "2026-11-27T12:30:01Z",
        ];
        let versions = ["1.0.0", "1.1.0", "2.0.0", "1.1.0"];
        let mut text = String::new();
        let (mut reads, mut before, mut after, mut bad) = (0u64, 0u64, 0u64, 0u64);
        let mut newest: HashMap<String, (DateTime<FixedOffset>, Version)> = HashMap::new();
        for round in 0..3 {
            for (i, at) in ats.iter().enumerate() {
                let v = versions[(i + round) % versions.len()];
                let consumer = format!("c{}", (i + round) % 4);
                text.push_str(&format!(
                    "{{\"at\":\"{at}\",\"consumer\":\"{consumer}\",\"dataset\":\"roads\",\"contract\":\"{v}\"}}\n"
                ));
                match DateTime::parse_from_rfc3339(at) {
                    Err(_) => bad += 1,
                    Ok(t) => {
                        let d = t.with_timezone(&Utc).date_naive();
                        if d > req.to {
                            after += 1;
                        } else if d < req.from {
                            before += 1;
                        } else {
                            reads += 1;
                            let v = Version::parse(v).unwrap();
                            let e = newest.entry(consumer).or_insert((t, v.clone()));
                            if (t, &v) > (e.0, &e.1) {
                                *e = (t, v);
                            }
                        }
                    }
                }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "log.jsonl", &text);
        let scan = scan_paths(&[path], &req, &mut |_| {}).unwrap();
        assert_eq!(
            (
                scan.stats.reads,
                scan.stats.before_lookback,
                scan.stats.after_today,
                scan.stats.malformed
            ),
            (reads, before, after, bad)
        );
        assert!(reads > 0 && before > 0 && after > 0 && bad > 0);
        let got: HashMap<String, (DateTime<FixedOffset>, Version)> = scan
            .of("roads")
            .into_iter()
            .map(|(c, r)| (c, (r.at, r.version)))
            .collect();
        assert_eq!(got, newest);
    }

    #[test]
    fn lookback_counts_today() {
        let r = ScanRequest::lookback(BTreeSet::new(), day("2026-11-29"), 1);
        assert_eq!(r.from, day("2026-11-29"));
        let r = ScanRequest::lookback(BTreeSet::new(), day("2026-11-29"), 30);
        assert_eq!(r.from, day("2026-10-31"));
    }
}
