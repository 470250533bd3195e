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

use super::reads::{later, LogError, LogFile, Malformed};
use super::records::{each_read, each_read_beside_scan, Record, Wanted};
use super::registry::{ConsumerKind, Registry};
use super::standing::{LineUse, Thresholds};
use crate::model::source::Source;

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
                _ => principal.clone(),
            };
            // The counts of the thresholds go with the reads: a consumer's reads under its
            // principals are its reads.
            if name != principal {
                if let Some(counts) = self.line_reads.remove(&principal) {
                    let into = self.line_reads.entry(name.clone()).or_default();
                    for (k, n) in counts {
                        let count = into.entry(k).or_insert(0);
                        *count = count.saturating_add(n);
                    }
                }
            }
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

    /// Fold in one read, or one summary row of reads on one day.
    fn fold(&mut self, r: &Record<'_>, until: NaiveDate) -> Result<(), String> {
        if r.consumer.is_empty() {
            return Err("`consumer` is empty".to_string());
        }
        let version = Version::parse(r.contract)
            .map_err(|_| format!("`contract` {:?} is not a semantic version", r.contract))?;
        let at = r.last;
        let day = at.with_timezone(&Utc).date_naive();
        // Reads after the day the picture is drawn on are ignored, as everywhere else.
        if day > until {
            return Ok(());
        }
        // The consumer's name is copied only the first time it is met, not made and dropped
        // twice for every read.
        let counts = match self.line_reads.get_mut(r.consumer) {
            Some(counts) => counts,
            None => self.line_reads.entry(r.consumer.to_string()).or_default(),
        };
        let count = counts.entry((day, version.major)).or_insert(0);
        // Saturating: a summary row may hold any count, and two of them could pass the
        // largest.
        *count = count.saturating_add(r.reads);
        let days = match self.by_consumer.get_mut(r.consumer) {
            Some(days) => days,
            None => self.by_consumer.entry(r.consumer.to_string()).or_default(),
        };
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
        .by_consumer
        .iter()
        .filter(|(name, _)| registry.get(name).is_some())
        .map(|(_, days)| days)
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
        .by_consumer
        .iter()
        .filter(|(name, _)| {
            registry
                .get(name)
                .is_some_and(|c| c.kind != ConsumerKind::Automation)
        })
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
        let versions: Vec<(String, String)> = daily.by_consumer["etl"]
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
        let lines: Vec<u64> = daily.line_reads["etl"].keys().map(|(_, l)| *l).collect();
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
        let days = |ds: &str, c: &str| all[ds].by_consumer.get(c).map(|m| m.len());
        assert_eq!((days("roads", "a"), days("roads", "b")), (Some(1), None));
        assert_eq!(
            (days("roadsides", "a"), days("roadsides", "b")),
            (Some(1), Some(1))
        );
        assert!(!all.contains_key("rivers"));
    }
}
