//! Day by day: how many consumers were still on an old line on each day of a window, for the
//! timeline picture (docs/src/commands/timeline.md).
//!
//! `scan` keeps only the newest read per consumer in one lookback, which answers "who is
//! still on line N today". The picture needs that answer for every day of a window, so this
//! module streams the log once for one dataset and keeps each consumer's newest read per UTC
//! day — a few hundred entries per consumer, however long the log — and then replays the
//! lookback rule day after day. It reads files but takes every day as an argument.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use semver::Version;
use serde::Serialize;

use super::reads::{later, LogError, LogFile, Malformed, NameMap};
use super::records::{each_read, each_read_beside_scan, Record, Wanted};
use super::registry::{ConsumerKind, Registry};
use super::standing::{LineUse, Thresholds};
use crate::model::source::Source;

/// One consumer's newest read per UTC day: day → (instant, version).
type Days = BTreeMap<NaiveDate, (DateTime<FixedOffset>, Version)>;

/// One consumer's reads per UTC day and line: (day, line) → reads.
type Counts = BTreeMap<(NaiveDate, u64), u64>;

/// One consumer's reads of one dataset, day by day.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConsumerDays {
    /// The newest read of each UTC day.
    days: Days,
    /// How many reads of each line on each UTC day: (day, line) → reads, for the usage
    /// thresholds of retirement.
    counts: Counts,
    /// The day of the last read folded in, kept beside the name until a read of another day
    /// comes (or [`DailyReads::settle`]). A consumer's reads come in time order, so nearly
    /// every read is of the day of the one before it; the two trees each read went into were
    /// two cache misses per read, half the fold's time on a log of thousands of readers.
    open: Option<OpenDay>,
}

/// The reads of one consumer on one day, not yet put with the other days.
#[derive(Debug, Clone, PartialEq)]
struct OpenDay {
    day: NaiveDate,
    newest: (DateTime<FixedOffset>, Version),
    /// Reads per line: (line, reads). One line, or two in a window, nearly always.
    lines: smallvec::SmallVec<[(u64, u64); 2]>,
}

impl ConsumerDays {
    /// The newest read of each UTC day.
    pub fn days(&self) -> &Days {
        debug_assert!(self.open.is_none(), "a day still open: settle first");
        &self.days
    }

    /// How many reads of each line on each UTC day: (day, line) → reads.
    pub fn counts(&self) -> &Counts {
        debug_assert!(self.open.is_none(), "a day still open: settle first");
        &self.counts
    }

    /// One read (or a summary row of `reads`) of `version` at `at`, on UTC day `day`.
    fn add(&mut self, day: NaiveDate, at: DateTime<FixedOffset>, version: &Version, reads: u64) {
        match &mut self.open {
            Some(open) if open.day == day => {
                match open.lines.iter_mut().find(|(l, _)| *l == version.major) {
                    // Saturating: a summary row may hold any count, and two of them could
                    // pass the largest.
                    Some((_, n)) => *n = n.saturating_add(reads),
                    None => open.lines.push((version.major, reads)),
                }
                newer(&mut open.newest, (at, version));
            }
            _ => {
                self.close();
                self.open = Some(OpenDay {
                    day,
                    newest: (at, version.clone()),
                    lines: smallvec::smallvec![(version.major, reads)],
                });
            }
        }
    }

    /// Put the open day with the others.
    fn close(&mut self) {
        let Some(open) = self.open.take() else { return };
        for (line, n) in open.lines {
            let count = self.counts.entry((open.day, line)).or_insert(0);
            *count = count.saturating_add(n);
        }
        newest_of_day(&mut self.days, open.day, open.newest);
    }

    /// Fold in another's days and counts (the same consumer under another principal).
    fn absorb(&mut self, other: ConsumerDays) {
        for (k, n) in other.counts {
            let count = self.counts.entry(k).or_insert(0);
            *count = count.saturating_add(n);
        }
        for (day, read) in other.days {
            newest_of_day(&mut self.days, day, read);
        }
    }
}

/// Keep `read` as `day`'s newest if it is newer than the one kept.
fn newest_of_day(days: &mut Days, day: NaiveDate, read: (DateTime<FixedOffset>, Version)) {
    match days.get_mut(&day) {
        Some(slot) => newer(slot, (read.0, &read.1)),
        None => {
            days.insert(day, read);
        }
    }
}

/// Same rule as the scan: the newest instant wins, the higher version on a tie.
fn newer(
    slot: &mut (DateTime<FixedOffset>, Version),
    (at, version): (DateTime<FixedOffset>, &Version),
) {
    if later(&at, version) > later(&slot.0, &slot.1) {
        *slot = (at, version.clone());
    }
}

/// Each consumer's reads of one dataset per UTC day: the newest read of each day and the
/// count of reads of each line.
#[derive(Debug, Clone, Default)]
pub struct DailyReads {
    by_consumer: NameMap<ConsumerDays>,
    pub malformed: u64,
    /// The last contract text folded and its version: a dataset's reads name a few versions
    /// again and again, and parsing the text anew for each read was a tenth of the fold.
    last_version: Option<(String, Version)>,
}

impl DailyReads {
    /// Each consumer (or principal, before [`DailyReads::claim`]) with its reads.
    pub fn consumers(&self) -> impl Iterator<Item = (&String, &ConsumerDays)> {
        self.by_consumer.iter()
    }

    /// One consumer's reads, if it read.
    pub fn of(&self, consumer: &str) -> Option<&ConsumerDays> {
        self.by_consumer.get(consumer)
    }

    /// Put every consumer's open day with its others: the end of a walk.
    fn settle(&mut self) {
        for c in self.by_consumer.values_mut() {
            c.close();
        }
    }

    /// Put each reader under the consumer the registry's identities say it is (as
    /// [`super::Scan::claim`] does); a principal several consumers claim keeps its name.
    /// The counts of the thresholds go with the reads: a consumer's reads under its
    /// principals are its reads.
    pub fn claim(&mut self, registry: &Registry) {
        if !registry.has_identities() {
            return;
        }
        self.settle();
        let old = std::mem::take(&mut self.by_consumer);
        for (principal, reads) in old {
            let name = match registry.claim(&principal) {
                super::Claim::Consumer(c) => c.to_string(),
                _ => principal,
            };
            self.by_consumer.entry(name).or_default().absorb(reads);
        }
    }

    /// Fold in one read, or one summary row of reads on one day.
    fn fold(&mut self, r: &Record<'_>, until: NaiveDate) -> Result<(), String> {
        if r.consumer.is_empty() {
            return Err("`consumer` is empty".to_string());
        }
        let version = match &self.last_version {
            Some((text, version)) if text == r.contract => version,
            _ => {
                let version = Version::parse(r.contract).map_err(|_| {
                    format!("`contract` {:?} is not a semantic version", r.contract)
                })?;
                &self
                    .last_version
                    .insert((r.contract.to_string(), version))
                    .1
            }
        };
        let at = r.last;
        let day = at.with_timezone(&Utc).date_naive();
        // Reads after the day the picture is drawn on are ignored, as everywhere else.
        if day > until {
            return Ok(());
        }
        // The consumer's name is copied only the first time it is met, not made and dropped
        // for every read.
        let reads = match self.by_consumer.get_mut(r.consumer) {
            Some(reads) => reads,
            None => self.by_consumer.entry(r.consumer.to_string()).or_default(),
        };
        reads.add(day, at, version, r.reads);
        Ok(())
    }

    /// `consumer`'s reads of line `major` on the days `from..=to`.
    pub fn usage(&self, consumer: &str, major: u64, from: NaiveDate, to: NaiveDate) -> LineUse {
        let mut u = LineUse::default();
        let Some(reads) = self.by_consumer.get(consumer) else {
            return u;
        };
        for ((_, line), n) in reads.counts().range((from, 0)..=(to, u64::MAX)) {
            if *line == major {
                u.reads = u.reads.saturating_add(*n);
                u.days += 1;
            }
        }
        u
    }
}

/// `files`, each of the first (here: the only) source scanned.
pub fn files_of_first_source(files: &[PathBuf]) -> Vec<LogFile> {
    files
        .iter()
        .map(|p| LogFile {
            path: p.clone(),
            source: 0,
        })
        .collect()
}

/// Stream every log file (of the default mapping) for reads of `dataset` up to `until`.
pub fn daily_reads(
    files: &[PathBuf],
    dataset: &str,
    until: NaiveDate,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<DailyReads, LogError> {
    let datasets = [dataset.to_string()].into_iter().collect();
    let sources = [Source::glob("")];
    let mut all = daily_reads_of(
        &sources,
        &files_of_first_source(files),
        &datasets,
        (NaiveDate::MIN, until),
        &Default::default(),
        on_malformed,
    )?;
    Ok(all.remove(dataset).unwrap_or_default())
}

/// [`daily_reads`] for several datasets in one pass over the record (the site draws every
/// dataset's timeline: one scan, not one per dataset). A malformed line is counted once, under
/// the first dataset. Logs of reads and read summaries alike ([`super::records`]).
///
/// `from` bounds only what is fetched of a remote source (its objects that can hold a read of
/// `from..=until`); local files are read whole. The thresholds need the lookback, the
/// timeline every day since a window opened (`NaiveDate::MIN`).
pub fn daily_reads_of(
    sources: &[Source],
    files: &[LogFile],
    datasets: &std::collections::BTreeSet<String>,
    (from, until): (NaiveDate, NaiveDate),
    valid_from: &super::reads::ValidFrom,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<HashMap<String, DailyReads>, LogError> {
    daily_with(datasets, until, |wanted, on_read| {
        each_read(
            sources,
            files,
            (from, until),
            wanted,
            valid_from,
            on_read,
            on_malformed,
        )
    })
}

/// [`daily_reads_of`] the datasets of `req` over its days, and its newest-read scan, in one
/// walk ([`each_read_beside_scan`]): for a command that needs both. Malformed lines go to
/// `on_malformed` once.
pub fn daily_reads_and_scan(
    sources: &[Source],
    files: &[LogFile],
    req: &super::reads::ScanRequest,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<(super::Scan, HashMap<String, DailyReads>), LogError> {
    let mut scan = None;
    let daily = daily_with(&req.datasets, req.to, |wanted, on_read| {
        let valid_from = &req.valid_from;
        let (s, malformed) = each_read_beside_scan(
            sources,
            files,
            req,
            wanted,
            valid_from,
            on_read,
            on_malformed,
        )?;
        scan = Some(s);
        Ok(malformed)
    })?;
    Ok((scan.unwrap_or_default(), daily))
}

/// The day-by-day reads of `datasets` up to `until`, from the records `walk` hands to the
/// fold it is given; the count of malformed lines it returns is kept under the first
/// dataset.
fn daily_with(
    datasets: &std::collections::BTreeSet<String>,
    until: NaiveDate,
    walk: impl FnOnce(
        &Wanted<'_>,
        &mut dyn FnMut(Record<'_>) -> Result<(), String>,
    ) -> Result<u64, LogError>,
) -> Result<HashMap<String, DailyReads>, LogError> {
    let mut all: HashMap<String, DailyReads> = datasets
        .iter()
        .map(|d| (d.clone(), DailyReads::default()))
        .collect();
    let malformed = walk(
        &Wanted::These(datasets),
        &mut |r| match all.get_mut(r.dataset) {
            Some(out) => out.fold(&r, until),
            None => Ok(()),
        },
    )?;
    for reads in all.values_mut() {
        reads.settle();
    }
    if let Some(first) = datasets.iter().next().and_then(|d| all.get_mut(d)) {
        first.malformed = malformed;
    }
    Ok(all)
}

/// One day's count of registered consumers still on a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DayCount {
    pub day: NaiveDate,
    pub consumers: u32,
}

/// The days a count is made for, `from..=to`, each with the lookback of `lookback_days`
/// ending on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DaySpan {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub lookback_days: i64,
}

/// For each day of `days`, how many registered consumers' newest read within the
/// lookback ending that day was of line `major` — the rule of `consumers` and `notify`,
/// replayed day by day. Readers missing from the registry are not counted: nobody can be told
/// (callers pass the consumers subscribed to the dataset).
pub fn still_on_by_day(
    reads: &DailyReads,
    registry: &Registry,
    major: u64,
    days: DaySpan,
) -> Vec<DayCount> {
    let consumers: Vec<&Days> = reads
        .consumers()
        .filter(|(name, _)| registry.get(name).is_some())
        .map(|(_, reads)| reads.days())
        .collect();
    count_by_day(days, |first, day| {
        consumers
            .iter()
            .filter(|days| newest_is_of(days, first, day, major))
            .count()
    })
}

/// Whether the newest read in `first..=day` is of line `major`.
fn newest_is_of(days: &Days, first: NaiveDate, day: NaiveDate, major: u64) -> bool {
    days.range(first..=day)
        .next_back()
        .is_some_and(|(_, (_, v))| v.major == major)
}

/// For each day of `days`, what `count` says of the lookback ending that day (it is given
/// the first day of that lookback and the day).
fn count_by_day(
    days: DaySpan,
    mut count: impl FnMut(NaiveDate, NaiveDate) -> usize,
) -> Vec<DayCount> {
    let lookback = days.lookback_days.max(1) - 1;
    let mut out = Vec::new();
    let mut day = days.from;
    while day <= days.to {
        let first = day - chrono::Duration::days(lookback);
        out.push(DayCount {
            day,
            consumers: u32::try_from(count(first, day)).unwrap_or(u32::MAX),
        });
        match day.succ_opt() {
            Some(d) => day = d,
            None => break,
        }
    }
    out
}

/// For each day of `days`, how many registered consumers held line `major` back from
/// retiring, by the rule of `can-retire` replayed day by day: the newest read within the
/// lookback ending that day is of the line, the consumer is no automation, and its
/// reads of the line in that lookback meet the thresholds. Callers pass the consumers
/// subscribed to the dataset.
pub fn held_by_day(
    reads: &DailyReads,
    registry: &Registry,
    major: u64,
    days: DaySpan,
    thresholds: Thresholds,
) -> Vec<DayCount> {
    let consumers: Vec<(&String, &Days)> = reads
        .consumers()
        .filter(|(name, _)| {
            registry
                .get(name)
                .is_some_and(|c| c.kind != ConsumerKind::Automation)
        })
        .map(|(name, reads)| (name, reads.days()))
        .collect();
    count_by_day(days, |first, day| {
        consumers
            .iter()
            .filter(|(name, days)| {
                newest_is_of(days, first, day, major)
                    && !thresholds.incidental(reads.usage(name, major, first, day))
            })
            .count()
    })
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
        let sources = [Source::glob("")];
        let files = files_of_first_source(paths);
        daily_reads_of(
            &sources,
            &files,
            datasets,
            (NaiveDate::MIN, until),
            &Default::default(),
            on_malformed,
        )
    }

    /// Each day keeps the version its read named, whatever version the read before named,
    /// and a text that is no version is refused between reads of versions.
    #[test]
    fn each_read_is_counted_under_the_version_it_names() {
        let mut daily = DailyReads::default();
        let until = NaiveDate::from_ymd_opt(2026, 12, 31).expect("a day");
        let mut fold = |contract: &str, at: &str| {
            let at = DateTime::parse_from_rfc3339(at).expect("an instant");
            let record = Record {
                dataset: "roads",
                consumer: "etl",
                contract,
                first: at,
                last: at,
                reads: 1,
            };
            daily.fold(&record, until)
        };
        assert!(fold("1.2.0", "2026-11-01T10:00:00Z").is_ok());
        assert!(fold("2.0.0", "2026-11-02T10:00:00Z").is_ok());
        assert!(fold("2.0", "2026-11-03T10:00:00Z").is_err());
        assert!(fold("1.2.0", "2026-11-03T11:00:00Z").is_ok());
        assert!(fold("1.2.0", "2026-11-04T10:00:00Z").is_ok());
        daily.settle();
        let versions: Vec<(String, String)> = daily.by_consumer["etl"]
            .days()
            .iter()
            .map(|(day, (_, v))| (day.to_string(), v.to_string()))
            .collect();
        let want = [
            ("2026-11-01", "1.2.0"),
            ("2026-11-02", "2.0.0"),
            ("2026-11-03", "1.2.0"),
            ("2026-11-04", "1.2.0"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(d, v)| (d.to_string(), v.to_string()))
            .collect();
        assert_eq!(versions, want);
        let lines: Vec<u64> = daily.by_consumer["etl"]
            .counts()
            .keys()
            .map(|(_, l)| *l)
            .collect();
        assert_eq!(lines, [1, 2, 1, 1]);
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

    fn span(from: &str, to: &str, lookback_days: i64) -> DaySpan {
        DaySpan {
            from: d(from),
            to: d(to),
            lookback_days,
        }
    }

    /// `text` written as the log `name`, in a directory of its own that lasts as long as the
    /// returned guard.
    fn log_of(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_parquet_log_gives_the_daily_reads_of_its_json_lines_twin() {
        // tests/data/consumption/reads.parquet (pyarrow) and the same nine rows as JSON Lines,
        // written from the rows listed in its make_reads_parquet.py.
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
        let (_dir, json) = log_of("r.jsonl", &text);
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
        // a: line 1 on the 1st, moves to line 2 on the 3rd. b: line 1 on the 2nd only, so with
        // a 2-day lookback it counts on the 2nd and 3rd and is silent from the 4th.
        // ghost is not registered; the other dataset is ignored; the 9th is after `until`.
        let (_dir, log) = log_of(
            "r.jsonl",
            r#"{"at":"2027-01-01T08:00:00Z","consumer":"a","dataset":"roads","contract":"1.0.0"}
{"at":"2027-01-02T08:00:00Z","consumer":"b","dataset":"roads","contract":"1.1.0"}
{"at":"2027-01-03T08:00:00Z","consumer":"a","dataset":"roads","contract":"1.0.0"}
{"at":"2027-01-03T09:00:00Z","consumer":"a","dataset":"roads","contract":"2.0.0"}
{"at":"2027-01-02T08:00:00Z","consumer":"ghost","dataset":"roads","contract":"1.0.0"}
{"at":"2027-01-02T08:00:00Z","consumer":"a","dataset":"roadsides","contract":"1.0.0"}
{"at":"2027-01-09T08:00:00Z","consumer":"b","dataset":"roads","contract":"1.0.0"}
not json roads
"#,
        );
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
            still_on_by_day(&reads, &registry, 1, span("2027-01-01", "2027-01-05", 2))
                .iter()
                .map(|c| c.consumers)
                .collect();
        // 1st: a. 2nd: a and b. 3rd: b only (a moved to line 2 later that day). 4th: the
        // lookback is the 3rd and 4th, with no read of b in it: 0.
        assert_eq!(counts, vec![1, 2, 1, 0, 0]);
    }

    #[test]
    fn one_pass_serves_several_datasets() {
        let (_dir, log) = log_of(
            "r.csv",
            "at,consumer,dataset,contract\n\
             2027-01-01T08:00:00Z,a,roads,1.0.0\n\
             2027-01-01T08:00:00Z,a,roadsides,2.0.0\n\
             2027-01-02T08:00:00Z,b,roadsides,1.0.0\n\
             2027-01-02T08:00:00Z,b,rivers,1.0.0\n\
             2027-01-02T08:00:00Z,b,roads,not-a-version\n",
        );
        let sets = ["roads".to_string(), "roadsides".to_string()]
            .into_iter()
            .collect();
        let mut bad = Vec::new();
        let all = paths_daily(&[log], &sets, d("2027-01-05"), &mut |m| bad.push(m.line)).unwrap();
        assert_eq!(bad, vec![6], "the bad version, on line 6 of the file");
        let days = |ds: &str, c: &str| all[ds].of(c).map(|m| m.days().len());
        assert_eq!((days("roads", "a"), days("roads", "b")), (Some(1), None));
        assert_eq!(
            (days("roadsides", "a"), days("roadsides", "b")),
            (Some(1), Some(1))
        );
        assert!(!all.contains_key("rivers"));
    }

    /// Reads of two consumers, days going back and forth, summary rows and ties: what the
    /// open day and the trees hold together is what folding every read straight into the
    /// trees gives.
    #[test]
    fn a_day_kept_open_beside_the_name_adds_up_as_every_read_folded_at_once() {
        let until = NaiveDate::from_ymd_opt(2026, 12, 31).expect("a day");
        let mut daily = DailyReads::default();
        let mut want: BTreeMap<&str, (Days, Counts)> = BTreeMap::new();
        // A fixed sequence (a linear congruential walk from a constant seed).
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..400 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let consumer = ["etl", "maps"][(x >> 20) as usize % 2];
            let day = 1 + (x >> 24) % 4;
            let hour = (x >> 30) % 3;
            let contract = ["1.2.0", "2.0.0", "1.3.0"][(x >> 34) as usize % 3];
            let reads = 1 + (x >> 40) % 3;
            let at = format!("2026-11-{day:02}T{hour:02}:00:00Z");
            let at = DateTime::parse_from_rfc3339(&at).expect("an instant");
            let record = Record {
                dataset: "roads",
                consumer,
                contract,
                first: at,
                last: at,
                reads,
            };
            daily.fold(&record, until).expect("a read");
            let version = Version::parse(contract).expect("a version");
            let (days, counts) = want.entry(consumer).or_default();
            let d = at.date_naive();
            *counts.entry((d, version.major)).or_insert(0) += reads;
            let slot = days.entry(d).or_insert((at, version.clone()));
            if later(&at, &version) > later(&slot.0, &slot.1) {
                *slot = (at, version);
            }
        }
        daily.settle();
        for (consumer, (days, counts)) in &want {
            let got = daily.of(consumer).expect("the consumer read");
            assert_eq!(got.days(), days, "{consumer}'s newest read per day");
            assert_eq!(got.counts(), counts, "{consumer}'s reads per day and line");
        }
        assert_eq!(daily.consumers().count(), want.len());
    }
}
