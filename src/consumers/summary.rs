//! Read summaries: the consumption record folded to one row per UTC day, consumer, dataset
//! and contract version — how many reads, the first and the last instant (each with the
//! offset it was written with), and whether the registry knows the consumer. A platform
//! writes its logs by the terabyte; its own engine (DuckDB, Dask, Spark) folds them to a
//! summary, and the store reads kilobytes. Every command that reads the record reads a
//! summary as it reads a log (docs/src/reference/consumption-log.md).
//!
//! Summaries merge: rows with the same key add their reads, keep the earlier first instant
//! and the later last one, so the summary of summaries of the parts of a log is the summary
//! of the whole. What the commands need of a day survives the fold: the newest read (the
//! last instant; on a tie the higher version, then the larger offset, as `reads::later`
//! orders reads) and the count of reads of each line.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset, NaiveDate, SecondsFormat, Utc};
use semver::Version;

use super::registry::{Claim, Registry};

/// What a row is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowKey {
    /// The UTC day of the reads.
    pub day: NaiveDate,
    pub dataset: String,
    pub consumer: String,
    pub contract: Version,
}

/// What a row says of its reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowReads {
    pub reads: u64,
    pub first_at: DateTime<FixedOffset>,
    pub last_at: DateTime<FixedOffset>,
    pub registered: bool,
}

/// One row as written, one JSON object per line (or a Parquet row): the scanner crate's, whose
/// Parquet reader yields it.
pub use contracts_scan::reads::parquet_summary::SummaryRow as Row;

/// A row read back and checked.
#[derive(Debug, Clone)]
pub struct ParsedRow {
    pub day: NaiveDate,
    pub consumer: String,
    pub dataset: String,
    pub contract: String,
    pub reads: u64,
    pub first_at: DateTime<FixedOffset>,
    pub last_at: DateTime<FixedOffset>,
    pub registered: bool,
}

/// The order of instants that keeps the offset: an instant written `03:00Z` and the same one
/// written `05:00+02:00` are two, the larger offset the later (as `reads::later` breaks ties).
fn order(t: &DateTime<FixedOffset>) -> (DateTime<FixedOffset>, i32) {
    (*t, t.offset().local_minus_utc())
}

/// An instant as RFC 3339 text with its offset (`Z` for UTC) and as many digits of the
/// second as it has.
pub fn instant_text(t: &DateTime<FixedOffset>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// Parse one line of a summary; `Err` says why it is none.
pub fn parse_row(line: &[u8]) -> Result<ParsedRow, String> {
    let row: Row = serde_json::from_slice(line).map_err(|e| format!("not a summary row: {e}"))?;
    check_row(row)
}

/// Check a row read from either format (a JSON line, a Parquet row): both instants RFC 3339
/// and on `day` in UTC, `first_at` not after `last_at`, at least one read, a consumer.
pub fn check_row(row: Row) -> Result<ParsedRow, String> {
    let at = |name: &str, text: &str| {
        DateTime::parse_from_rfc3339(text)
            .map_err(|e| format!("`{name}` {text:?} is not an RFC 3339 datetime: {e}"))
    };
    let first_at = at("first_at", &row.first_at)?;
    let last_at = at("last_at", &row.last_at)?;
    if row.consumer.is_empty() {
        return Err("`consumer` is empty".to_string());
    }
    if row.reads == 0 {
        return Err("`reads` is 0: a row counts at least one read".to_string());
    }
    for (name, t) in [("first_at", &first_at), ("last_at", &last_at)] {
        if t.with_timezone(&Utc).date_naive() != row.day {
            return Err(format!(
                "`{name}` {} is not on the UTC day {}",
                instant_text(t),
                row.day
            ));
        }
    }
    if order(&first_at) > order(&last_at) {
        return Err("`first_at` is after `last_at`".to_string());
    }
    Ok(ParsedRow {
        day: row.day,
        consumer: row.consumer,
        dataset: row.dataset,
        contract: row.contract,
        reads: row.reads,
        first_at,
        last_at,
        registered: row.registered,
    })
}

/// Whether a summary file is Parquet: its name ends in `.parquet` (JSON Lines otherwise).
pub fn is_parquet(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".parquet"))
}

/// The columns of a Parquet summary, in the order written (a reader finds them by name): the
/// scanner crate's list, which its reader looks for.
pub const PARQUET_COLUMNS: [&str; 8] = contracts_scan::reads::parquet_summary::COLUMNS;

/// Rows per record batch handed to the Parquet writer.
const BATCH_ROWS: usize = 64 * 1024;

/// A summary that could not be written; the file is named, and nothing is left at it.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write the summary {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the summary {} as Parquet", path.display())]
    Parquet {
        path: PathBuf,
        #[source]
        source: parquet::errors::ParquetError,
    },
}

/// A summary being built: rows by key, merged as they come.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub rows: BTreeMap<RowKey, RowReads>,
}

impl Summary {
    /// Fold in `reads` reads of `contract` (a semantic version, else `Err`) from `first` to
    /// `last`, all on the UTC day of `last`.
    pub fn add(
        &mut self,
        dataset: &str,
        consumer: &str,
        contract: &str,
        first: DateTime<FixedOffset>,
        last: DateTime<FixedOffset>,
        reads: u64,
    ) -> Result<(), String> {
        if consumer.is_empty() {
            return Err("`consumer` is empty".to_string());
        }
        let contract = Version::parse(contract)
            .map_err(|_| format!("`contract` {contract:?} is not a semantic version"))?;
        let key = RowKey {
            day: last.with_timezone(&Utc).date_naive(),
            dataset: dataset.to_string(),
            consumer: consumer.to_string(),
            contract,
        };
        self.merge_row(
            key,
            RowReads {
                reads,
                first_at: first,
                last_at: last,
                registered: false,
            },
        );
        Ok(())
    }

    fn merge_row(&mut self, key: RowKey, row: RowReads) {
        match self.rows.get_mut(&key) {
            Some(have) => {
                have.reads = have.reads.saturating_add(row.reads);
                have.registered |= row.registered;
                if order(&row.first_at) < order(&have.first_at) {
                    have.first_at = row.first_at;
                }
                if order(&row.last_at) > order(&have.last_at) {
                    have.last_at = row.last_at;
                }
            }
            None => {
                self.rows.insert(key, row);
            }
        }
    }

    /// Add the rows of another summary.
    pub fn merge(&mut self, other: Summary) {
        for (k, r) in other.rows {
            self.merge_row(k, r);
        }
    }

    /// Put each reader under the consumer the registry's identities say it is (several
    /// principals of one consumer merge into its rows) and mark whether the registry knows
    /// it. A principal no consumer claims, or several do, keeps its name, unregistered.
    pub fn claim(&mut self, registry: &Registry) {
        let old = std::mem::take(&mut self.rows);
        for (mut key, mut row) in old {
            if let Claim::Consumer(name) = registry.claim(&key.consumer) {
                key.consumer = name.to_string();
            }
            row.registered = registry.get(&key.consumer).is_some();
            self.merge_row(key, row);
        }
    }

    /// The rows as written, in key order.
    pub fn lines(&self) -> impl Iterator<Item = Row> + '_ {
        self.rows.iter().map(|(k, r)| Row {
            day: k.day,
            consumer: k.consumer.clone(),
            dataset: k.dataset.clone(),
            contract: k.contract.to_string(),
            reads: r.reads,
            first_at: instant_text(&r.first_at),
            last_at: instant_text(&r.last_at),
            registered: r.registered,
        })
    }

    /// Write the summary as JSON Lines.
    pub fn write_jsonl(&self, out: &mut dyn Write) -> std::io::Result<()> {
        for row in self.lines() {
            serde_json::to_writer(&mut *out, &row)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Write the summary as Parquet, rows in key order as [`Summary::write_jsonl`] writes
    /// them: `day` a DATE, `reads` an INT64, `registered` a BOOLEAN, the others UTF8 strings
    /// (`first_at` and `last_at` RFC 3339 text, which keeps the offset a timestamp would lose).
    pub fn write_parquet(&self, out: impl Write + Send) -> parquet::errors::Result<()> {
        use std::sync::Arc;

        use arrow_array::builder::{BooleanBuilder, Date32Builder, Int64Builder, StringBuilder};
        use arrow_array::{ArrayRef, RecordBatch};
        use arrow_schema::{DataType, Field, Schema};
        use parquet::arrow::ArrowWriter;
        use parquet::basic::{Compression, ZstdLevel};
        use parquet::errors::ParquetError;
        use parquet::file::properties::WriterProperties;

        let types = [
            DataType::Date32,
            DataType::Utf8,
            DataType::Utf8,
            DataType::Utf8,
            DataType::Int64,
            DataType::Utf8,
            DataType::Utf8,
            DataType::Boolean,
        ];
        let schema = Arc::new(Schema::new(
            PARQUET_COLUMNS
                .iter()
                .zip(types)
                .map(|(name, t)| Field::new(*name, t, false))
                .collect::<Vec<_>>(),
        ));
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        let mut writer = ArrowWriter::try_new(out, schema.clone(), Some(props))?;
        let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
        let rows: Vec<Row> = self.lines().collect();
        for chunk in rows.chunks(BATCH_ROWS) {
            let mut day = Date32Builder::with_capacity(chunk.len());
            let mut text: [StringBuilder; 5] = Default::default();
            let mut reads = Int64Builder::with_capacity(chunk.len());
            let mut registered = BooleanBuilder::with_capacity(chunk.len());
            for row in chunk {
                let days = (row.day - epoch).num_days();
                day.append_value(i32::try_from(days).map_err(|_| {
                    ParquetError::General(format!("the day {} is out of DATE's range", row.day))
                })?);
                for (b, v) in text.iter_mut().zip([
                    &row.consumer,
                    &row.dataset,
                    &row.contract,
                    &row.first_at,
                    &row.last_at,
                ]) {
                    b.append_value(v);
                }
                reads.append_value(i64::try_from(row.reads).map_err(|_| {
                    ParquetError::General(format!("{} reads do not fit an INT64", row.reads))
                })?);
                registered.append_value(row.registered);
            }
            let [consumer, dataset, contract, first_at, last_at] = text.map(|mut b| b.finish());
            let columns: Vec<ArrayRef> = vec![
                Arc::new(day.finish()),
                Arc::new(consumer),
                Arc::new(dataset),
                Arc::new(contract),
                Arc::new(reads.finish()),
                Arc::new(first_at),
                Arc::new(last_at),
                Arc::new(registered.finish()),
            ];
            let batch = RecordBatch::try_new(schema.clone(), columns)?;
            writer.write(&batch)?;
        }
        writer.close()?;
        Ok(())
    }

    /// Write the summary to the file `path`, as Parquet when its name ends in `.parquet`
    /// ([`is_parquet`]), as JSON Lines otherwise: into a new file beside it, renamed over
    /// `path` once complete, so a failed write leaves `path` as it was and no part behind.
    pub fn write_file(&self, path: &Path) -> Result<(), WriteError> {
        let io = |source| WriteError::Io {
            path: path.to_path_buf(),
            source,
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "summary".to_string());
        let temp = path.with_file_name(format!(".{name}.{}.part", std::process::id()));
        let written = (|| {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)
                .map_err(io)?;
            let mut out = std::io::BufWriter::new(file);
            if is_parquet(path) {
                self.write_parquet(&mut out)
                    .map_err(|source| WriteError::Parquet {
                        path: path.to_path_buf(),
                        source,
                    })?;
            } else {
                self.write_jsonl(&mut out).map_err(io)?;
            }
            let file = out.into_inner().map_err(|e| io(e.into_error()))?;
            file.sync_all().map_err(io)?;
            std::fs::rename(&temp, path).map_err(io)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use proptest::prelude::*;

    use super::*;
    use crate::consumers::parse_registry;
    use crate::consumers::records::{each_read, Wanted};
    use crate::model::source::{LogFormat, Source};

    /// The summary text of `files`, each read as `format` (`None`: from its name).
    fn summarize(files: &[PathBuf], format: Option<LogFormat>, registry: &Registry) -> String {
        let mut source = Source::glob("");
        source.format = format;
        let files = crate::consumers::daily::files_of_first_source(files);
        let mut s = Summary::default();
        let bad = each_read(
            &[source],
            &files,
            (chrono::NaiveDate::MIN, chrono::NaiveDate::MAX),
            &Wanted::All,
            &Default::default(),
            &mut |r| s.add(r.dataset, r.consumer, r.contract, r.first, r.last, r.reads),
            &mut |m| panic!("malformed: {m:?}"),
        )
        .unwrap();
        assert_eq!(bad, 0);
        s.claim(registry);
        let mut out = Vec::new();
        s.write_jsonl(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn registry() -> Registry {
        parse_registry(
            "consumers.toml",
            "[consumers.a]\ncontacts=[\"a@x.org\"]\nidentities=[\"key:a-*\"]\n\
             [consumers.b]\ncontacts=[\"b@x.org\"]\n",
        )
        .unwrap()
    }

    /// One raw read: (seconds after 2027-01-01T00:00Z, offset in minutes, consumer,
    /// dataset, version). Few instants and few offsets, so that ties are common.
    type Raw = (i64, i32, &'static str, &'static str, &'static str);

    fn raw() -> impl Strategy<Value = Raw> {
        (
            prop::sample::select(vec![0i64, 1, 3_600, 86_399, 86_400, 90_000, 172_799]),
            prop::sample::select(vec![0i32, 120, -330, 14 * 60 - 1, -(12 * 60)]),
            prop::sample::select(vec!["a", "b", "key:a-1", "key:a-2", "ghost"]),
            prop::sample::select(vec!["roads", "rivers"]),
            prop::sample::select(vec!["1.0.0", "1.1.0", "2.0.0"]),
        )
    }

    fn line(r: &Raw) -> String {
        let utc = DateTime::parse_from_rfc3339("2027-01-01T00:00:00Z").unwrap()
            + chrono::Duration::seconds(r.0);
        let at = utc.with_timezone(&FixedOffset::east_opt(r.1 * 60).unwrap());
        format!(
            "{{\"at\":\"{}\",\"consumer\":\"{}\",\"dataset\":\"{}\",\"contract\":\"{}\"}}\n",
            at.to_rfc3339(),
            r.2,
            r.3,
            r.4
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn the_summary_of_summaries_is_the_summary_of_the_whole(
            reads in prop::collection::vec(raw(), 1..60),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let reg = registry();
            let text: Vec<String> = reads.iter().map(line).collect();
            let whole = write(dir.path(), "whole.jsonl", &text.concat());
            let expected = summarize(&[whole], None, &reg);
            let mut at: Vec<usize> = cuts.iter().map(|i| i.index(text.len() + 1)).collect();
            at.push(0);
            at.push(text.len());
            at.sort_unstable();
            let mut parts = Vec::new();
            for (n, w) in at.windows(2).enumerate() {
                let part = write(dir.path(), &format!("part{n}.jsonl"), &text[w[0]..w[1]].concat());
                let summary = summarize(&[part], None, &reg);
                parts.push(write(dir.path(), &format!("part{n}.summary"), &summary));
            }
            let merged = summarize(&parts, Some(LogFormat::Summary), &reg);
            prop_assert_eq!(merged, expected);
        }
    }

    #[test]
    fn a_tie_keeps_the_larger_offset_and_the_day_is_utc() {
        // 2027-01-01T23:30-01:00 is 2027-01-02T00:30Z: the second UTC day.
        let reg = registry();
        let dir = tempfile::tempdir().unwrap();
        let log = write(
            dir.path(),
            "r.jsonl",
            concat!(
                r#"{"at":"2027-01-02T00:30:00Z","consumer":"key:a-1","dataset":"roads","contract":"1.0.0"}"#,
                "\n",
                r#"{"at":"2027-01-01T23:30:00-01:00","consumer":"a","dataset":"roads","contract":"1.0.0"}"#,
                "\n",
                r#"{"at":"2027-01-02T02:30:00+02:00","consumer":"a","dataset":"roads","contract":"1.0.0"}"#,
                "\n",
                r#"{"at":"2027-01-01T08:00:00Z","consumer":"ghost","dataset":"roads","contract":"1.0.0"}"#,
                "\n",
            ),
        );
        let text = summarize(&[log], None, &reg);
        let rows: Vec<Row> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), 2, "{text}");
        assert_eq!(rows[0].consumer, "ghost");
        assert!(!rows[0].registered);
        let a = &rows[1];
        assert_eq!(
            (
                a.day.to_string().as_str(),
                a.consumer.as_str(),
                a.reads,
                a.registered
            ),
            ("2027-01-02", "a", 3, true)
        );
        // Three spellings of one instant: the first is the smallest offset, the last the
        // largest.
        assert_eq!(a.first_at, "2027-01-01T23:30:00-01:00");
        assert_eq!(a.last_at, "2027-01-02T02:30:00+02:00");
    }

    /// The rows of the Parquet summary at `path`, as [`Summary::lines`] gives them, read
    /// back through the reader every walk uses.
    fn read_parquet(path: &Path) -> Vec<Result<(u64, Row), (u64, String)>> {
        use crate::consumers::reads::{open_parquet, read_summary};
        let mut rows = Vec::new();
        let input = open_parquet(path, None).unwrap();
        read_summary(path, input, &mut |n, row| {
            rows.push(
                row.map(|r| {
                    (
                        n,
                        Row {
                            day: r.day,
                            consumer: r.consumer,
                            dataset: r.dataset,
                            contract: r.contract,
                            reads: r.reads,
                            first_at: instant_text(&r.first_at),
                            last_at: instant_text(&r.last_at),
                            registered: r.registered,
                        },
                    )
                })
                .map_err(|e| (n, e)),
            )
        })
        .unwrap();
        rows
    }

    #[test]
    fn a_parquet_summary_reads_back_as_written_offsets_and_all() {
        let at = |t: &str| DateTime::parse_from_rfc3339(t).unwrap();
        let mut s = Summary::default();
        for (dataset, consumer, version, first, last, reads) in [
            (
                "roads",
                "a",
                "1.0.0",
                "2027-01-01T23:30:00-01:00",
                "2027-01-02T02:30:00+02:00",
                3,
            ),
            (
                "roads",
                "ghost",
                "1.1.0",
                "2027-01-01T08:00:00.125Z",
                "2027-01-01T13:59:59.5+05:30",
                2,
            ),
            (
                "rivers",
                "b",
                "2.0.0-rc.1",
                "1969-12-31T23:00:00Z",
                "1969-12-31T23:00:00Z",
                1,
            ),
            (
                "rivers",
                "a",
                "2.0.0",
                "2027-01-01T00:00:00+14:00",
                "2027-01-01T00:00:00+14:00",
                7,
            ),
        ] {
            s.add(dataset, consumer, version, at(first), at(last), reads)
                .unwrap();
        }
        s.claim(&registry());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.parquet");
        s.write_file(&path).unwrap();
        assert!(std::fs::read(&path).unwrap().starts_with(b"PAR1"));
        let back = read_parquet(&path);
        let written: Vec<Result<(u64, Row), (u64, String)>> =
            s.lines().zip(1..).map(|(r, n)| Ok((n, r))).collect();
        assert_eq!(back, written);
        // The offsets as written, not only the instants.
        let rows: Vec<Row> = back.into_iter().map(|r| r.unwrap().1).collect();
        assert!(rows
            .iter()
            .any(|r| r.first_at == "2027-01-01T23:30:00-01:00"
                && r.last_at == "2027-01-02T02:30:00+02:00"
                && r.reads == 3
                && r.registered));
        assert!(rows
            .iter()
            .any(|r| r.last_at == "2027-01-01T13:59:59.500+05:30"));
        // Nothing but the summary is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["s.parquet"]);
        // The same summary as JSON Lines: the same rows.
        let jsonl = dir.path().join("s.jsonl");
        s.write_file(&jsonl).unwrap();
        let mut text = Vec::new();
        s.write_jsonl(&mut text).unwrap();
        assert_eq!(std::fs::read(&jsonl).unwrap(), text);
    }

    #[test]
    fn a_summary_that_cannot_be_written_leaves_the_file_as_it_was() {
        let at = DateTime::parse_from_rfc3339("2027-01-01T08:00:00Z").unwrap();
        let mut s = Summary::default();
        s.add("roads", "a", "1.0.0", at, at, 1).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let names = || {
            let mut n: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            n.sort();
            n
        };
        let path = dir.path().join("s.parquet");
        s.write_file(&path).unwrap();
        let before = std::fs::read(&path).unwrap();
        // A row more reads than an INT64 holds fails the writer after it has begun.
        s.add("rivers", "b", "1.0.0", at, at, u64::MAX).unwrap();
        let e = s.write_file(&path).unwrap_err();
        assert!(e.to_string().contains("s.parquet"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(names(), ["s.parquet"]);
        // A directory where the file should go: the rename fails, and nothing is left.
        let blocked = dir.path().join("d.parquet");
        std::fs::create_dir(&blocked).unwrap();
        let e = Summary::default().write_file(&blocked).unwrap_err();
        assert!(e.to_string().contains("d.parquet"), "{e}");
        assert_eq!(names(), ["d.parquet", "s.parquet"]);
    }

    #[test]
    fn a_row_whose_instants_are_off_its_day_is_malformed() {
        let ok = r#"{"day":"2027-01-02","consumer":"a","dataset":"roads","contract":"1.0.0","reads":2,"first_at":"2027-01-02T00:00:00Z","last_at":"2027-01-02T01:00:00+01:00","registered":true}"#;
        assert!(parse_row(ok.as_bytes()).is_ok());
        let off = ok.replace("01:00:00+01:00", "01:00:00+02:00");
        assert!(parse_row(off.as_bytes()).unwrap_err().contains("UTC day"));
        let zero = ok.replace("\"reads\":2", "\"reads\":0");
        assert!(parse_row(zero.as_bytes()).is_err());
        let extra = ok.replace("\"reads\":2", "\"reads\":2,\"bytes\":5");
        assert!(parse_row(extra.as_bytes()).is_err());
    }
}
