//! Day by day: how many consumers were still on an old line on each day of a window, for the
//! timeline picture (docs/src/commands/timeline.md).
//!
//! `scan` keeps only the newest read per consumer in one lookback, which answers "who is
//! still on line N today". The picture needs that answer for every day of a window, so this
//! module streams the log once for one dataset and keeps each consumer's newest read per UTC
//! day — a few hundred entries per consumer, however long the log — and then replays the
//! lookback rule day after day. It reads files but takes every day as an argument.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use semver::Version;
use serde::Serialize;

use super::log::{later, At, LogError, LogFile, Malformed, Mapping, ParquetLog};
use super::registry::{ConsumerKind, Registry};
use super::standing::{LineUse, Thresholds};
use crate::model::source::{LogFormat, Source};

/// One consumer's newest read per UTC day: day → (instant, version).
type Days = BTreeMap<NaiveDate, (DateTime<FixedOffset>, Version)>;

/// Each consumer's newest read of one dataset per UTC day: consumer → day → (instant, version).
#[derive(Debug, Clone, Default)]
pub struct DailyReads {
    pub by_consumer: HashMap<String, BTreeMap<NaiveDate, (DateTime<FixedOffset>, Version)>>,
    /// How many reads each consumer made of each line on each UTC day: consumer → (day,
    /// line) → reads, for the usage thresholds of retirement.
    pub line_reads: HashMap<String, BTreeMap<(NaiveDate, u64), u64>>,
    pub malformed: u64,
}

impl DailyReads {
    /// Put each reader under the consumer the registry's identities say it is (as
    /// [`super::Scan::claim`] does); a principal several consumers claim keeps its name.
    pub fn claim(&mut self, registry: &Registry) {
        if !registry.has_identities() {
            return;
        }
        let old = std::mem::take(&mut self.by_consumer);
        for (principal, days) in old {
            let name = match registry.claim(&principal) {
                super::Claim::Consumer(c) => c.to_string(),
                _ => principal,
            };
            let into = self.by_consumer.entry(name).or_default();
            for (day, read) in days {
                match into.get_mut(&day) {
                    Some(slot) => {
                        if later(&read.0, &read.1) > later(&slot.0, &slot.1) {
                            *slot = read;
                        }
                    }
                    None => {
                        into.insert(day, read);
                    }
                }
            }
        }
    }

    fn fold(
        &mut self,
        at: At<'_>,
        consumer: &str,
        contract: &str,
        until: NaiveDate,
    ) -> Result<(), String> {
        if consumer.is_empty() {
            return Err("`consumer` is empty".to_string());
        }
        let at = at.instant()?;
        let version = Version::parse(contract)
            .map_err(|_| format!("`contract` {contract:?} is not a semantic version"))?;
        let day = at.with_timezone(&Utc).date_naive();
        // Reads after the day the picture is drawn on are ignored, as everywhere else.
        if day > until {
            return Ok(());
        }
        *self
            .line_reads
            .entry(consumer.to_string())
            .or_default()
            .entry((day, version.major))
            .or_insert(0) += 1;
        let days = self.by_consumer.entry(consumer.to_string()).or_default();
        match days.get_mut(&day) {
            // Same rule as the scan: the newest instant wins, the higher version on a tie.
            Some(slot) => {
                if later(&at, &version) > later(&slot.0, &slot.1) {
                    *slot = (at, version);
                }
            }
            None => {
                days.insert(day, (at, version));
            }
        }
        Ok(())
    }

    /// `consumer`'s reads of line `major` on the days `from..=to`.
    pub fn usage(&self, consumer: &str, major: u64, from: NaiveDate, to: NaiveDate) -> LineUse {
        let mut u = LineUse::default();
        let Some(counts) = self.line_reads.get(consumer) else {
            return u;
        };
        for ((_, line), n) in counts.range((from, 0)..=(to, u64::MAX)) {
            if *line == major {
                u.reads += n;
                u.days += 1;
            }
        }
        u
    }
}

/// Stream every log file (of the default mapping) for reads of `dataset` up to `until`.
pub fn daily_reads(
    files: &[PathBuf],
    dataset: &str,
    until: NaiveDate,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<DailyReads, LogError> {
    let datasets = [dataset.to_string()].into_iter().collect();
    let sources = [Source::glob("", 0)];
    let files: Vec<LogFile> = files
        .iter()
        .map(|p| LogFile {
            path: p.clone(),
            source: 0,
        })
        .collect();
    let mut all = daily_reads_of(&sources, &files, &datasets, until, on_malformed)?;
    Ok(all.remove(dataset).unwrap_or_default())
}

/// [`daily_reads`] for several datasets in one pass over the log (the site draws every
/// dataset's timeline: one scan, not one per dataset). A malformed line is counted once, under
/// the first dataset.
pub fn daily_reads_of(
    sources: &[Source],
    files: &[LogFile],
    datasets: &std::collections::BTreeSet<String>,
    until: NaiveDate,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<HashMap<String, DailyReads>, LogError> {
    // The day-by-day counts are not fetched from object storage yet: refusing is better than
    // counting a remote source's consumers as never reading (it would make them incidental,
    // and let `can-retire` say yes).
    if let Some(remote) = sources.iter().find(|s| s.is_remote()) {
        return Err(LogError::NotWired {
            source_name: remote.describe(),
            what: "the day-by-day counts of a log in object storage".to_string(),
        });
    }
    let mut all: HashMap<String, DailyReads> = datasets
        .iter()
        .map(|d| (d.clone(), DailyReads::default()))
        .collect();
    let mut malformed = 0u64;
    // With one dataset, a line that does not contain its name cannot be a read of it.
    let finder = match datasets.iter().collect::<Vec<_>>()[..] {
        [one] => Some(memchr::memmem::Finder::new(one.as_bytes()).into_owned()),
        _ => None,
    };
    let mappings: Vec<Mapping> = sources.iter().map(Mapping::of).collect();
    for LogFile { path, source } in files {
        let (Some(src), Some(mapping)) = (sources.get(*source), mappings.get(*source)) else {
            continue;
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let io = |source| LogError::Io {
            path: path.clone(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut bad = |line: u64, reason: String, malformed: &mut u64| {
            *malformed += 1;
            on_malformed(&Malformed {
                file: path.clone(),
                line,
                reason,
            });
        };
        // A source of one dataset (a constant) has no name in its lines to look for.
        let finder = finder
            .as_ref()
            .filter(|_| mapping.constant_dataset().is_none());
        match src.format_of(&name) {
            Some(LogFormat::Jsonl) => {
                let mut reader = BufReader::with_capacity(1 << 20, file);
                let mut buf = Vec::new();
                let mut number = 0u64;
                loop {
                    buf.clear();
                    if reader.read_until(b'\n', &mut buf).map_err(io)? == 0 {
                        break;
                    }
                    number += 1;
                    let line = buf.trim_ascii();
                    if line.is_empty()
                        || finder.is_some_and(|f| {
                            f.find(line).is_none() && memchr::memchr(b'\\', line).is_none()
                        })
                    {
                        continue;
                    }
                    let result = mapping
                        .json(line)
                        .and_then(|r| fold_read(&mut all, r, until));
                    if let Err(reason) = result {
                        bad(number, reason, &mut malformed);
                    }
                }
            }
            Some(LogFormat::Csv) => {
                let mut reader = csv::ReaderBuilder::new()
                    .has_headers(true)
                    .flexible(true)
                    .from_reader(BufReader::with_capacity(1 << 20, file));
                let headers = reader
                    .byte_headers()
                    .map_err(|e| io(std::io::Error::other(e.to_string())))?
                    .clone();
                let mut cols = [None; 4];
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
                                continue;
                            }
                        }
                    }
                }
                if cols
                    .iter()
                    .zip(mapping.columns())
                    .any(|(c, n)| n.is_some() && c.is_none())
                {
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
                                return Err(LogError::Io {
                                    path: path.clone(),
                                    source: std::io::Error::other(e.to_string()),
                                });
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
                    if let Err(reason) = mapping
                        .flat(fields)
                        .and_then(|r| fold_read(&mut all, r, until))
                    {
                        bad(number, reason, &mut malformed);
                    }
                }
            }
            Some(LogFormat::Parquet) => {
                let log = ParquetLog::open(path, mapping)?;
                for g in 0..log.row_groups() {
                    let mut failed = Vec::new();
                    log.read_group(path, g, &mut |number, row| {
                        let result = row.and_then(|r| match all.get_mut(r.dataset) {
                            Some(out) => out.fold(r.at, r.consumer, r.contract, until),
                            None => Ok(()),
                        });
                        if let Err(reason) = result {
                            failed.push((number, reason));
                        }
                    })?;
                    for (number, reason) in failed {
                        bad(number, reason, &mut malformed);
                    }
                }
            }
            // Wired by the access module, as in `log::scan`.
            Some(format) if format.is_access_log() || format == LogFormat::Summary => {
                return Err(LogError::NotWired {
                    source_name: src.describe(),
                    what: format!("the {format} format"),
                })
            }
            _ => return Err(LogError::UnknownFormat { path: path.clone() }),
        }
    }
    if let Some(first) = datasets.iter().next().and_then(|d| all.get_mut(d)) {
        first.malformed = malformed;
    }
    Ok(all)
}

/// Fold one mapped read into the daily reads of its dataset (other datasets' reads are
/// skipped).
fn fold_read(
    all: &mut HashMap<String, DailyReads>,
    r: super::log::MappedRead<'_>,
    until: NaiveDate,
) -> Result<(), String> {
    let text = |b: &[u8]| std::str::from_utf8(b).map(str::to_string);
    let Ok(dataset) = std::str::from_utf8(&r.dataset) else {
        return Ok(());
    };
    match all.get_mut(dataset) {
        Some(out) => {
            let consumer = text(&r.consumer).map_err(|_| "`consumer` is not UTF-8".to_string())?;
            let contract = text(&r.contract).map_err(|_| "`contract` is not UTF-8".to_string())?;
            out.fold(r.at, &consumer, &contract, until)
        }
        None => Ok(()),
    }
}

/// One day's count of registered consumers still on a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DayCount {
    pub day: NaiveDate,
    pub consumers: u32,
}

/// For each day of `from..=to`, how many registered consumers' newest read within the
/// `lookback_days` ending that day was of line `major` — the rule of `consumers` and `notify`,
/// replayed day by day. Readers missing from the registry are not counted: nobody can be told
/// (callers pass the consumers subscribed to the dataset).
pub fn still_on_by_day(
    reads: &DailyReads,
    registry: &Registry,
    major: u64,
    from: NaiveDate,
    to: NaiveDate,
    lookback_days: i64,
) -> Vec<DayCount> {
    let lookback = lookback_days.max(1) - 1;
    let mut out = Vec::new();
    let consumers: Vec<&BTreeMap<NaiveDate, (DateTime<FixedOffset>, Version)>> = reads
        .by_consumer
        .iter()
        .filter(|(name, _)| registry.get(name).is_some())
        .map(|(_, days)| days)
        .collect();
    let mut day = from;
    while day <= to {
        let first = day - chrono::Duration::days(lookback);
        let consumers_on = consumers
            .iter()
            .filter(|days| {
                days.range(first..=day)
                    .next_back()
                    .is_some_and(|(_, (_, v))| v.major == major)
            })
            .count();
        out.push(DayCount {
            day,
            consumers: u32::try_from(consumers_on).unwrap_or(u32::MAX),
        });
        match day.succ_opt() {
            Some(d) => day = d,
            None => break,
        }
    }
    out
}

/// For each day of `from..=to`, how many registered consumers held line `major` back from
/// retiring, by the rule of `can-retire` replayed day by day: the newest read within the
/// `lookback_days` ending that day is of the line, the consumer is no automation, and its
/// reads of the line in that lookback meet the thresholds. Callers pass the consumers
/// subscribed to the dataset.
pub fn held_by_day(
    reads: &DailyReads,
    registry: &Registry,
    major: u64,
    from: NaiveDate,
    to: NaiveDate,
    lookback_days: i64,
    thresholds: Thresholds,
) -> Vec<DayCount> {
    let lookback = lookback_days.max(1) - 1;
    let consumers: Vec<(&String, &Days)> = reads
        .by_consumer
        .iter()
        .filter(|(name, _)| {
            registry
                .get(name)
                .is_some_and(|c| c.kind != ConsumerKind::Automation)
        })
        .collect();
    let mut out = Vec::new();
    let mut day = from;
    while day <= to {
        let first = day - chrono::Duration::days(lookback);
        let holding = consumers
            .iter()
            .filter(|(name, days)| {
                days.range(first..=day)
                    .next_back()
                    .is_some_and(|(_, (_, v))| v.major == major)
                    && !thresholds.incidental(reads.usage(name, major, first, day))
            })
            .count();
        out.push(DayCount {
            day,
            consumers: u32::try_from(holding).unwrap_or(u32::MAX),
        });
        match day.succ_opt() {
            Some(d) => day = d,
            None => break,
        }
    }
    out
}

/// The first day of the trailing run of days on which nobody was counted: since when a line
/// has been free of consumers, as of the last day of `counts`. `None` when the last day
/// still counts someone (or there is no day).
pub fn clear_since(counts: &[DayCount]) -> Option<NaiveDate> {
    let mut since = None;
    for c in counts.iter().rev() {
        if c.consumers > 0 {
            break;
        }
        since = Some(c.day);
    }
    since
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`daily_reads_of`] over files of the default mapping.
    fn paths_daily(
        paths: &[PathBuf],
        datasets: &std::collections::BTreeSet<String>,
        until: NaiveDate,
        on_malformed: &mut dyn FnMut(&Malformed),
    ) -> Result<HashMap<String, DailyReads>, LogError> {
        let sources = [Source::glob("", 0)];
        let files: Vec<LogFile> = paths
            .iter()
            .map(|p| LogFile {
                path: p.clone(),
                source: 0,
            })
            .collect();
        daily_reads_of(&sources, &files, datasets, until, on_malformed)
    }

    #[test]
    fn clear_since_is_the_start_of_the_last_empty_run() {
        let c = |d: &str, n| DayCount {
            day: d.parse().unwrap(),
            consumers: n,
        };
        let counts = [
            c("2027-01-01", 0),
            c("2027-01-02", 2),
            c("2027-01-03", 0),
            c("2027-01-04", 0),
        ];
        assert_eq!(clear_since(&counts), Some("2027-01-03".parse().unwrap()));
        assert_eq!(clear_since(&counts[..2]), None);
        assert_eq!(
            clear_since(&counts[..1]),
            Some("2027-01-01".parse().unwrap())
        );
        assert_eq!(clear_since(&[]), None);
    }
    use crate::consumers::parse_registry;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn a_parquet_log_gives_the_daily_reads_of_its_json_lines_twin() {
        // tests/data/consumption/reads.parquet (pyarrow) and the same nine rows as JSON Lines,
        // written from the rows listed in its make_reads_parquet.py.
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.jsonl");
        let rows = [
            ("2026-11-28T03:00:00Z", "flood-model", "roads", "1.1.0"),
            ("2026-11-20T03:00:00Z", "router", "roads", "1.1.0"),
            ("2026-11-25T03:00:00.250Z", "router", "roads", "2.0.0"),
            ("2026-11-26T03:00:00Z", "archive", "rivers", "1.0.0"),
            ("2026-11-27T03:00:00Z", "", "roads", "1.1.0"),
            ("2026-11-27T03:00:00Z", "atlas", "roads", "1.1.0"),
            ("2027-03-01T03:00:00Z", "atlas", "roads", "2.0.0"),
            ("2026-11-26T03:00:00Z", "ghost", "roads", "one"),
            ("2026-11-26T03:00:00Z", "ghost", "roads", "1.0.0"),
        ];
        let text: String = rows
            .iter()
            .map(|(a, c, d, v)| {
                format!("{{\"at\":\"{a}\",\"consumer\":\"{c}\",\"dataset\":\"{d}\",\"contract\":\"{v}\"}}\n")
            })
            .collect();
        std::fs::write(&json, text).unwrap();
        let parquet = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/consumption/reads.parquet");
        let datasets = ["roads".to_string()].into_iter().collect();
        let run = |f: &PathBuf| {
            let mut bad = Vec::new();
            let r = paths_daily(
                std::slice::from_ref(f),
                &datasets,
                d("2026-11-29"),
                &mut |m| bad.push(m.line),
            )
            .unwrap();
            (r["roads"].by_consumer.clone(), bad)
        };
        let (from_json, bad_json) = run(&json);
        let (from_parquet, bad_parquet) = run(&parquet);
        assert_eq!(from_parquet, from_json);
        assert_eq!(from_json.len(), 4, "{from_json:?}");
        // Row 5: an empty consumer in the twin, a null one in the Parquet file; row 8: `one`.
        assert_eq!(bad_json, [5, 8]);
        assert_eq!(bad_parquet, [5, 8]);
    }

    #[test]
    fn replays_the_lookback_day_by_day() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("r.jsonl");
        // a: line 1 on the 1st, moves to line 2 on the 3rd. b: line 1 on the 2nd only, so with
        // a 2-day lookback it counts on the 2nd and 3rd and is silent from the 4th.
        // ghost is not registered; the other dataset is ignored; the 9th is after `until`.
        std::fs::write(
            &log,
            concat!(
                r#"{"at":"2027-01-01T08:00:00Z","consumer":"a","dataset":"roads","contract":"1.0.0"}"#, "\n",
                r#"{"at":"2027-01-02T08:00:00Z","consumer":"b","dataset":"roads","contract":"1.1.0"}"#, "\n",
                r#"{"at":"2027-01-03T08:00:00Z","consumer":"a","dataset":"roads","contract":"1.0.0"}"#, "\n",
                r#"{"at":"2027-01-03T09:00:00Z","consumer":"a","dataset":"roads","contract":"2.0.0"}"#, "\n",
                r#"{"at":"2027-01-02T08:00:00Z","consumer":"ghost","dataset":"roads","contract":"1.0.0"}"#, "\n",
                r#"{"at":"2027-01-02T08:00:00Z","consumer":"a","dataset":"roadsides","contract":"1.0.0"}"#, "\n",
                r#"{"at":"2027-01-09T08:00:00Z","consumer":"b","dataset":"roads","contract":"1.0.0"}"#, "\n",
                "not json roads\n",
            ),
        )
        .unwrap();
        let mut bad = Vec::new();
        let reads =
            daily_reads(&[log], "roads", d("2027-01-05"), &mut |m| bad.push(m.line)).unwrap();
        assert_eq!(bad, vec![8]);
        let registry = parse_registry(
            "consumers.toml",
            "[consumers.a]\ncontacts=[\"a@x.org\"]\n[consumers.b]\ncontacts=[\"b@x.org\"]\n",
        )
        .unwrap();
        let counts: Vec<u32> =
            still_on_by_day(&reads, &registry, 1, d("2027-01-01"), d("2027-01-05"), 2)
                .iter()
                .map(|c| c.consumers)
                .collect();
        // 1st: a. 2nd: a and b. 3rd: b only (a moved to line 2 later that day). 4th: the
        // lookback is the 3rd and 4th, with no read of b in it: 0.
        assert_eq!(counts, vec![1, 2, 1, 0, 0]);
    }

    #[test]
    fn one_pass_serves_several_datasets() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("r.csv");
        std::fs::write(
            &log,
            "at,consumer,dataset,contract\n\
             2027-01-01T08:00:00Z,a,roads,1.0.0\n\
             2027-01-01T08:00:00Z,a,roadsides,2.0.0\n\
             2027-01-02T08:00:00Z,b,roadsides,1.0.0\n\
             2027-01-02T08:00:00Z,b,rivers,1.0.0\n\
             2027-01-02T08:00:00Z,b,roads,not-a-version\n",
        )
        .unwrap();
        let sets = ["roads".to_string(), "roadsides".to_string()]
            .into_iter()
            .collect();
        let mut bad = Vec::new();
        let all = paths_daily(&[log], &sets, d("2027-01-05"), &mut |m| bad.push(m.line)).unwrap();
        assert_eq!(bad, vec![6], "the bad version, on line 6 of the file");
        let days = |ds: &str, c: &str| all[ds].by_consumer.get(c).map(|m| m.len());
        assert_eq!((days("roads", "a"), days("roads", "b")), (Some(1), None));
        assert_eq!(
            (days("roadsides", "a"), days("roadsides", "b")),
            (Some(1), Some(1))
        );
        assert!(!all.contains_key("rivers"));
    }
}
