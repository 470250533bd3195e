//! The values a scan of the consumption logs deals in, below every file that reads or folds:
//! a log file, a line that could not be used, the newest read of a consumer, what a scan is
//! asked for, and why a log could not be read.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use chrono::{DateTime, FixedOffset, NaiveDate};
use semver::Version;
use serde::Serialize;

use contracts_scan::reads::blocks::ReadError;
use contracts_scan::reads::hash::KeyMap;

use crate::consumers::access::Columns;

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("[consumption] sources: `{pattern}` is not a valid glob: {source}")]
    Pattern {
        pattern: String,
        #[source]
        source: glob::PatternError,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{}: a consumption log must end in .jsonl, .ndjson or .csv (each optionally .gz), or .parquet, or its source must name its `format`",
        path.display()
    )]
    UnknownFormat { path: PathBuf },
    /// A remote source could not be listed (its objects' own failures skip only them).
    #[error("{0}")]
    Remote(#[from] crate::objects::RemoteError),
}

/// A text log the block reader could not read to its end is an I/O error of that file.
impl From<ReadError> for LogError {
    fn from(e: ReadError) -> LogError {
        LogError::Io {
            path: e.path,
            source: e.source,
        }
    }
}

impl LogError {
    /// What went wrong reading one file, without the file's path: the warning that skips
    /// the file names it already.
    pub(crate) fn reason(&self) -> String {
        match self {
            LogError::Io { source, .. } => source.to_string(),
            other => other.to_string(),
        }
    }
}

/// One log file and the source (an index into the sources scanned) it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFile {
    pub path: PathBuf,
    pub source: usize,
}

pub use contracts_scan::reads::blocks::Malformed;

/// A file the scan could not read (or not to its end), and why; the scan went on without it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub file: PathBuf,
    pub reason: String,
}

/// The newest read of each consumer of one dataset.
pub type ConsumerMap = KeyMap<NewestRead>;

/// The newest read of one consumer of one dataset within the scanned days.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewestRead {
    pub at: DateTime<FixedOffset>,
    pub version: Version,
    /// The oldest line read in the scanned days, to tell a consumer who moved from one who
    /// was always on the newest line (of versions the store has; `u64::MAX` when none).
    pub oldest_line: u64,
    pub reads: u64,
    /// The newest read of a version the store has ([`ScanRequest::known`]): the line a
    /// consumer is known to be on when its newest read names a version that does not exist.
    pub known: Option<KnownRead>,
}

/// A read of a version the store has.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct KnownRead {
    pub at: DateTime<FixedOffset>,
    pub version: Version,
}

/// What to look for: reads of these datasets on days `from..=to`.
#[derive(Debug, Clone)]
pub struct ScanRequest {
    pub datasets: BTreeSet<String>,
    /// The first day of the lookback.
    pub from: NaiveDate,
    /// The last day counted (`--today`): later events are ignored, so a past day replays.
    pub to: NaiveDate,
    /// Whether the reads should say which attributes they touched, where their source can
    /// tell ([`SeenColumns`]): asked only by the commands that judge one attribute, since a
    /// pgaudit statement is then parsed, which costs more than the rest of its line.
    pub attributes: bool,
    /// The versions the store has, per dataset; a dataset not listed has every version.
    pub known: HashMap<String, Vec<Version>>,
    /// What a read of a line (a `{line}` template) is a read of on its day. Filled only
    /// where a source reads lines.
    pub valid_from: ValidFrom,
}

/// Per dataset, each version with its `valid_from`: the newest of a line valid on a day is
/// what a read of that line (a view per line, a `{line}` template) reads.
pub type ValidFrom = HashMap<String, Vec<(Version, NaiveDate)>>;

/// The newest version of line `line` of `dataset` valid on `day`, by `valid_from`.
pub fn version_of_line<'v>(
    valid_from: &'v ValidFrom,
    dataset: &str,
    line: u64,
    day: NaiveDate,
) -> Option<&'v Version> {
    valid_from
        .get(dataset)?
        .iter()
        .filter(|(v, from)| v.major == line && *from <= day)
        .map(|(v, _)| v)
        .max()
}

/// The version an access log's read is of: its contract, or, where a `{line}` template named
/// the line, the newest version of that line valid on the read's day ([`version_of_line`]).
/// Both sinks of the walk ask it of every read. The day's answers are kept: reads come in
/// time order, so one day's reads ask the same few questions (a question per dataset and
/// line read that day) again and again, and each version is made text once, not once per
/// read. Keeping only the last answer missed whenever reads of two lines alternated, as the
/// readers of an old line and a new one do all through a window.
#[derive(Debug, Default)]
pub struct LineVersions {
    kept: Vec<(String, u64, NaiveDate, String)>,
}

/// The most answers [`LineVersions`] keeps: a day with reads of more datasets and lines than
/// this starts over, which costs a version made text again, never a wrong one.
const KEPT_ANSWERS: usize = 16;

impl LineVersions {
    /// `Err`: the dataset has no version of that line on that day.
    pub fn contract<'s>(
        &'s mut self,
        valid_from: &ValidFrom,
        read: &'s crate::consumers::access::Read,
    ) -> Result<&'s str, String> {
        let contract = &read.reader.contract;
        let Some(line) = crate::consumers::access::line_mark(contract.as_bytes()) else {
            return Ok(contract);
        };
        let day = read.at().with_timezone(&chrono::Utc).date_naive();
        let dataset = &read.reader.dataset;
        let kept = |(d, l, t, _): &(String, u64, NaiveDate, String)| {
            *l == line && *t == day && d == dataset
        };
        let at = match self.kept.iter().position(kept) {
            Some(at) => at,
            None => {
                let version = version_of_line(valid_from, dataset, line, day)
                    .ok_or_else(|| format!("{dataset} has no version of line {line} on {day}"))?;
                // Another day's answers are dropped: the reads have moved on from it.
                self.kept.retain(|(_, _, t, _)| *t == day);
                if self.kept.len() >= KEPT_ANSWERS {
                    self.kept.clear();
                }
                self.kept
                    .push((dataset.clone(), line, day, version.to_string()));
                self.kept.len() - 1
            }
        };
        Ok(self.kept[at].3.as_str())
    }
}

impl ScanRequest {
    /// The last `lookback_days` days up to and including `today`.
    pub fn lookback(datasets: BTreeSet<String>, today: NaiveDate, lookback_days: i64) -> Self {
        let from = today
            .checked_sub_days(chrono::Days::new(
                u64::try_from(lookback_days.max(1) - 1).unwrap_or(0),
            ))
            .unwrap_or(NaiveDate::MIN);
        ScanRequest {
            datasets,
            from,
            to: today,
            attributes: false,
            known: HashMap::new(),
            valid_from: HashMap::new(),
        }
    }

    /// The newest version of line `line` of `dataset` valid on `day` ([`Self::valid_from`]).
    pub fn version_of_line(&self, dataset: &str, line: u64, day: NaiveDate) -> Option<&Version> {
        version_of_line(&self.valid_from, dataset, line, day)
    }

    /// Whether `dataset` has `version` (every version of an unlisted dataset counts).
    pub(super) fn is_known(&self, dataset: &str, version: &Version) -> bool {
        if self.known.is_empty() {
            return true;
        }
        self.known
            .get(dataset)
            .is_none_or(|versions| versions.contains(version))
    }
}

impl NewestRead {
    /// Combine two summaries of one consumer's reads. Order-independent: for two reads at the
    /// same instant the higher version wins, so the answer does not depend on file order.
    pub(super) fn absorb(&mut self, other: NewestRead) {
        self.reads = self.reads.saturating_add(other.reads);
        self.oldest_line = self.oldest_line.min(other.oldest_line);
        let newer_known = match (&other.known, &self.known) {
            (Some(o), Some(s)) => later(&o.at, &o.version) > later(&s.at, &s.version),
            (o, s) => o.is_some() && s.is_none(),
        };
        if newer_known {
            self.known = other.known.clone();
        }
        if later(&other.at, &other.version) > later(&self.at, &self.version) {
            self.at = other.at;
            self.version = other.version;
        }
    }
}

/// The order of reads, newest last: by instant, then version, then the offset the instant
/// was written with (`DateTime` order ignores it: without it, the same instant written as
/// `03:00Z` and `05:00+02:00` would be reported as whichever came first, and blocks scanned
/// in parallel come in any order).
pub(crate) fn later<'a>(
    at: &DateTime<FixedOffset>,
    version: &'a Version,
) -> (DateTime<FixedOffset>, &'a Version, i32) {
    (*at, version, at.offset().local_minus_utc())
}

/// The consumer value of reads that carried no principal (S3's `-`): one unknown reader.
pub const ANONYMOUS: &str = "anonymous";

/// What one consumer's reads of one dataset in the lookback showed of the attributes they
/// read: only reads whose source could tell are counted here, so the reads that could not
/// are the consumer's [`NewestRead::reads`] less [`SeenColumns::told`]. Never "none" for a
/// read that could not tell.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SeenColumns {
    /// Reads whose source said which attributes they read.
    pub told: u64,
    /// The newest read of every attribute (`SELECT *`, a whole row).
    pub all: Option<DateTime<FixedOffset>>,
    /// The newest read of each attribute named, as its source wrote the name.
    pub named: BTreeMap<String, DateTime<FixedOffset>>,
}

impl SeenColumns {
    /// Count one read at `at` that read `columns`; a read that cannot tell is not counted.
    pub fn add(&mut self, at: DateTime<FixedOffset>, columns: &Columns) {
        match columns {
            Columns::Unknown => return,
            Columns::All => self.all = self.all.max(Some(at)),
            Columns::Named(names) => {
                for name in names.iter() {
                    match self.named.get_mut(name) {
                        Some(last) => *last = (*last).max(at),
                        None => {
                            self.named.insert(name.clone(), at);
                        }
                    }
                }
            }
        }
        self.told += 1;
    }

    /// Both counts together (of two parts of a scan, or two principals of one consumer).
    pub fn absorb(&mut self, other: SeenColumns) {
        self.told += other.told;
        self.all = self.all.max(other.all);
        for (name, at) in other.named {
            let last = self.named.entry(name).or_insert(at);
            *last = (*last).max(at);
        }
    }

    /// The newest read seen reading `attribute`, by name or as every attribute. Names are
    /// matched without regard to ASCII case: warehouses fold unquoted names to upper case
    /// (Snowflake) or lower case (PostgreSQL), and a contract's attribute is one name.
    pub fn last_read_of(&self, attribute: &str) -> Option<DateTime<FixedOffset>> {
        let named = self
            .named
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case(attribute))
            .map(|(_, at)| *at)
            .max();
        named.max(self.all)
    }
}

#[cfg(test)]
impl SeenColumns {
    /// One read at `at` that read `names` (`*`: every attribute).
    pub fn reading(at: DateTime<FixedOffset>, names: &[&str]) -> SeenColumns {
        let columns = match names {
            ["*"] => Columns::All,
            _ => Columns::named(names.iter().map(|n| n.to_string())),
        };
        let mut seen = SeenColumns::default();
        seen.add(at, &columns);
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consumers::access::{burst::Reader, burst::Span, Read, LINE_MARK};

    fn read(dataset: &str, contract: &str, at: &str) -> Read {
        let at = DateTime::parse_from_rfc3339(at).unwrap();
        Read {
            burst: Span {
                first: at,
                last: at,
                requests: 1,
            },
            reader: std::sync::Arc::new(Reader {
                principal: Some("p".into()),
                dataset: dataset.into(),
                contract: contract.into(),
                object: "o".into(),
            }),
            attributes: Columns::Unknown,
        }
    }

    #[test]
    fn a_line_resolves_to_the_version_valid_on_each_reads_day_however_it_is_kept() {
        let day = |s: &str| s.parse::<NaiveDate>().unwrap();
        let v = |s: &str| Version::parse(s).unwrap();
        let valid_from: ValidFrom = [
            (
                "roads".to_string(),
                vec![
                    (v("1.0.0"), day("2026-01-01")),
                    (v("1.1.0"), day("2026-03-01")),
                ],
            ),
            ("towns".to_string(), vec![(v("1.4.0"), day("2026-01-01"))]),
        ]
        .into();
        let line_1 = format!("{LINE_MARK}1");
        let mut lines = LineVersions::default();
        let mut ask = |d: &str, c: &str, at: &str| {
            lines
                .contract(&valid_from, &read(d, c, at))
                .map(str::to_string)
        };
        // The same day twice, the next day under a newer version, another dataset, a named
        // version, and a day before the line had a version.
        assert_eq!(
            ask("roads", &line_1, "2026-02-28T10:00:00Z"),
            Ok("1.0.0".into())
        );
        assert_eq!(
            ask("roads", &line_1, "2026-02-28T23:00:00Z"),
            Ok("1.0.0".into())
        );
        assert_eq!(
            ask("roads", &line_1, "2026-03-01T00:00:00Z"),
            Ok("1.1.0".into())
        );
        assert_eq!(
            ask("towns", &line_1, "2026-03-01T00:00:00Z"),
            Ok("1.4.0".into())
        );
        assert_eq!(
            ask("roads", "1.0.0", "2026-03-01T00:00:00Z"),
            Ok("1.0.0".into())
        );
        assert!(ask("roads", &line_1, "2025-12-31T00:00:00Z").is_err());
        assert_eq!(
            ask("roads", &line_1, "2026-03-01T00:00:00Z"),
            Ok("1.1.0".into())
        );
    }

    #[test]
    fn answers_kept_for_two_lines_and_many_datasets_are_each_their_own() {
        let day = |s: &str| s.parse::<NaiveDate>().unwrap();
        let v = |s: &str| Version::parse(s).unwrap();
        // Twenty datasets, more than are kept: dataset k has version 1.k.0 of line 1 and
        // 2.k.0 of line 2, both valid from 2026-02-01; roads also has 1.0.0 from January.
        let mut valid_from: ValidFrom = (0..20)
            .map(|k| {
                let from = day("2026-02-01");
                (
                    format!("d{k}"),
                    vec![
                        (v(&format!("1.{k}.0")), from),
                        (v(&format!("2.{k}.0")), from),
                    ],
                )
            })
            .collect();
        valid_from.insert(
            "roads".into(),
            vec![
                (v("1.0.0"), day("2026-01-01")),
                (v("2.0.0"), day("2026-02-01")),
            ],
        );
        let (line_1, line_2) = (format!("{LINE_MARK}1"), format!("{LINE_MARK}2"));
        let mut lines = LineVersions::default();
        let mut ask = |d: &str, c: &str, at: &str| {
            lines
                .contract(&valid_from, &read(d, c, at))
                .map(str::to_string)
        };
        // Readers of both lines, interleaved, as through a window.
        for _ in 0..2 {
            assert_eq!(
                ask("roads", &line_1, "2026-03-01T00:00:00Z"),
                Ok("1.0.0".into())
            );
            assert_eq!(
                ask("roads", &line_2, "2026-03-01T00:00:00Z"),
                Ok("2.0.0".into())
            );
        }
        // A read of a day before, then the later day again.
        assert_eq!(ask("roads", &line_2, "2026-01-15T00:00:00Z").ok(), None);
        assert_eq!(
            ask("roads", &line_1, "2026-01-15T00:00:00Z"),
            Ok("1.0.0".into())
        );
        assert_eq!(
            ask("roads", &line_2, "2026-03-01T00:00:00Z"),
            Ok("2.0.0".into())
        );
        // More questions in a day than answers kept, twice round.
        for _ in 0..2 {
            for k in 0..20 {
                let d = format!("d{k}");
                assert_eq!(
                    ask(&d, &line_1, "2026-03-02T00:00:00Z"),
                    Ok(format!("1.{k}.0"))
                );
                assert_eq!(
                    ask(&d, &line_2, "2026-03-02T00:00:00Z"),
                    Ok(format!("2.{k}.0"))
                );
            }
        }
    }
}
