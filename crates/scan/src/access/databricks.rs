//! `databricks-column-lineage`: Databricks' `system.access.column_lineage` system table
//! exported as CSV with a header (a `SELECT` downloaded from a notebook or Databricks SQL,
//! or `df.write.csv(path, header=True)`), or as Parquet (`df.write.parquet(path)`: a file
//! that starts with Parquet's magic is read whole, [`Databricks::parquet`]). A row is one
//! column read for one target:
//!
//! ```text
//! source_table_full_name,source_column_name,source_type,target_table_full_name,target_column_name,created_by,event_time
//! main.gis.roads_v1,name,TABLE,,,analyst@example.org,2026-11-27T10:00:00.000Z
//! ```
//!
//! so one query that reads three columns is three rows (more, when it writes them to several
//! targets). Each row with a source table is a request for that table
//! (`source_table_full_name`, `catalog.schema.table`, matched by the source's templates
//! written with dots, its first two dots read as `/`) by `created_by` at `event_time`,
//! carrying its `source_column_name`; the bursts (`same_read_seconds`) fold the rows of one
//! query into one read whose attributes are their union. A row whose source is a path
//! (`source_type` `PATH`, no table) reads no dataset: counted as no read. A row without a
//! column name cannot tell which columns: `Unknown`.

use std::borrow::Cow;

use super::warehouse::{self, CsvRows, Fed};
use super::{Columns, Parsed};

/// The columns of the table this reader needs, in the order [`CsvRows::get`] is asked; the
/// first four are required.
const COLUMNS: [&str; 5] = [
    "event_time",
    "created_by",
    "source_table_full_name",
    "source_column_name",
    "source_type",
];

/// The reader of one file of a source.
#[derive(Debug, Clone, PartialEq)]
pub struct Databricks {
    csv: CsvRows,
    /// The object of the row being handed out, as a path.
    path: String,
}

impl Default for Databricks {
    fn default() -> Databricks {
        Databricks {
            csv: CsvRows::new(&COLUMNS),
            path: String::new(),
        }
    }
}

impl Databricks {
    pub fn new() -> Databricks {
        Databricks::default()
    }

    /// Whether the file's header has been read whole.
    pub(crate) fn header_read(&self) -> bool {
        self.csv.header_read()
    }

    /// Whether a record is open at the end of the last line read.
    pub(crate) fn open_record(&self) -> bool {
        self.csv.open()
    }

    /// Read one line of the CSV file.
    pub(crate) fn parse<'a>(&'a mut self, line: &[u8]) -> Result<Parsed<'a>, String> {
        match self.csv.feed(line, 4)? {
            Fed::Pending | Fed::Blank | Fed::Header => return Ok(Parsed::Skip),
            Fed::Record => {}
        }
        let csv = &self.csv;
        let row = Row {
            at: csv.get(0),
            who: csv.get(1),
            table: csv.get(2),
            column: csv.get(3),
            kind: csv.get(4),
        };
        request_of(&mut self.path, row)
    }

    /// Read a Parquet file of the table, whole: each row, with its 1-based number, to
    /// `on_row`. `Err`: the file is no Parquet file, or lacks a column a read needs.
    pub(crate) fn parquet(
        &mut self,
        file: Vec<u8>,
        mut on_row: impl for<'r> FnMut(u64, Result<Parsed<'r>, String>),
    ) -> Result<(), String> {
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(file))
            .map_err(|e| format!("not a Parquet file: {e}"))?;
        let reader = builder
            .build()
            .map_err(|e| format!("not a Parquet file: {e}"))?;
        let mut number = 0u64;
        for batch in reader {
            let batch = batch.map_err(|e| format!("row {}: {e}", number + 1))?;
            let column = |name: &str| {
                let schema = batch.schema();
                let i = schema
                    .fields()
                    .iter()
                    .position(|f| f.name().eq_ignore_ascii_case(name))?;
                Some(batch.column(i).clone())
            };
            let columns: Vec<_> = COLUMNS.iter().map(|c| column(c)).collect();
            let missing: Vec<&str> = COLUMNS[..4]
                .iter()
                .zip(&columns)
                .filter(|(_, c)| c.is_none())
                .map(|(n, _)| *n)
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "the Parquet file has no column {}",
                    missing.join(", ")
                ));
            }
            for r in 0..batch.num_rows() {
                number += 1;
                let text = |i: usize| columns[i].as_ref().and_then(|c| parquet_text(c, r));
                let row = Row {
                    at: text(0),
                    who: text(1),
                    table: text(2),
                    column: text(3),
                    kind: text(4),
                };
                on_row(number, request_of(&mut self.path, row));
            }
        }
        Ok(())
    }
}

/// The values of one row a read needs, as text.
struct Row<'v> {
    at: Option<Cow<'v, str>>,
    who: Option<Cow<'v, str>>,
    table: Option<Cow<'v, str>>,
    column: Option<Cow<'v, str>>,
    kind: Option<Cow<'v, str>>,
}

/// The request of one row, its object written into `path`.
fn request_of<'a>(path: &'a mut String, row: Row<'a>) -> Result<Parsed<'a>, String> {
    let at_text = row.at.ok_or("no `event_time`")?;
    let at = warehouse::instant(&at_text)
        .ok_or_else(|| warehouse::bad_instant("event_time", &at_text))?;
    let table = row.table.unwrap_or_default();
    let by_path = row.kind.is_some_and(|t| t.eq_ignore_ascii_case("PATH"));
    // The first two dots become slashes: found as bytes, where a split on a `char` pattern
    // compared each candidate with a call of its own.
    path.clear();
    let mut rest: &str = &table;
    for _ in 0..2 {
        let Some(dot) = memchr::memchr(b'.', rest.as_bytes()) else {
            break;
        };
        path.push_str(&rest[..dot]);
        path.push('/');
        rest = &rest[dot + 1..];
    }
    path.push_str(rest);
    let attributes = match row.column {
        Some(column) => warehouse::named_one(column),
        None => Columns::Unknown,
    };
    let principal = row.who;
    let object = !path.is_empty() && !by_path;
    Ok(Parsed::Request(warehouse::request(
        at,
        principal,
        Cow::Borrowed(path.as_str()),
        object,
        attributes,
    )))
}

/// Row `r` of a Parquet column as text: a string column as written, a timestamp as RFC 3339
/// (a zone-less one is UTC, as Spark writes Databricks' `event_time`); `None` for a null.
fn parquet_text(column: &arrow_array::ArrayRef, r: usize) -> Option<Cow<'_, str>> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{
        TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
        TimestampSecondType,
    };
    use arrow_array::Array;
    use arrow_schema::{DataType, TimeUnit};
    if column.is_null(r) {
        return None;
    }
    let nanos = |n: i64| chrono::DateTime::from_timestamp_nanos(n);
    let at = match column.data_type() {
        DataType::Utf8 => return Some(Cow::Borrowed(column.as_string::<i32>().value(r))),
        DataType::LargeUtf8 => return Some(Cow::Borrowed(column.as_string::<i64>().value(r))),
        DataType::Utf8View => return Some(Cow::Borrowed(column.as_string_view().value(r))),
        DataType::Timestamp(TimeUnit::Second, _) => chrono::DateTime::from_timestamp(
            column.as_primitive::<TimestampSecondType>().value(r),
            0,
        )?,
        DataType::Timestamp(TimeUnit::Millisecond, _) => chrono::DateTime::from_timestamp_millis(
            column.as_primitive::<TimestampMillisecondType>().value(r),
        )?,
        DataType::Timestamp(TimeUnit::Microsecond, _) => chrono::DateTime::from_timestamp_micros(
            column.as_primitive::<TimestampMicrosecondType>().value(r),
        )?,
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            nanos(column.as_primitive::<TimestampNanosecondType>().value(r))
        }
        // A type this reader does not know reads as absent, and the row says which column.
        _ => return None,
    };
    Some(Cow::Owned(at.to_rfc3339()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table's name is its path with its first two dots read as `/`: a name of more parts
    /// keeps its later dots, one of fewer has fewer slashes.
    #[test]
    fn the_first_two_dots_of_a_table_name_are_its_path_s_slashes() {
        let path_of = |table: &str| {
            let mut path = String::new();
            let row = Row {
                at: Some("2026-11-27T10:00:00Z".into()),
                who: None,
                table: Some(table.into()),
                column: None,
                kind: None,
            };
            match request_of(&mut path, row) {
                Ok(Parsed::Request(r)) => r.path.into_owned(),
                _ => panic!("no request for {table:?}"),
            }
        };
        assert_eq!(path_of("main.gis.roads_v1"), "main/gis/roads_v1");
        assert_eq!(path_of("main.gis.roads.v1"), "main/gis/roads.v1");
        assert_eq!(path_of("gis.roads"), "gis/roads");
        assert_eq!(path_of("roads"), "roads");
        assert_eq!(path_of(".."), "//");
        assert_eq!(path_of("é.ü.ñ.x"), "é/ü/ñ.x");
    }

    #[test]
    fn each_row_is_one_column_read_of_its_source_table() {
        // The columns of Databricks' "Lineage system tables reference" for
        // `system.access.column_lineage`, in its order (account_id ... event_date,
        // record_id, event_id, statement_id, entity_metadata trimmed), with its example
        // values (`catalog.schema.table`, source_type `TABLE` or `PATH`, the three-part name
        // split in `source_table_catalog`, `_schema`, `_name`), as a CSV download writes them:
        // empty for null, a quoted field where it holds a comma.
        let log = "\
account_id,metastore_id,workspace_id,entity_type,entity_id,entity_run_id,source_table_full_name,source_table_catalog,source_table_schema,source_table_name,source_path,source_type,source_column_name,target_table_full_name,target_table_catalog,target_table_schema,target_table_name,target_path,target_type,target_column_name,created_by,event_time,event_date
7af234db-66d7-4db3-bbf0-956098224879,5a31ba44-bbf4-4174-bf33-e1fa078e6765,123456789012345,NOTEBOOK,23098402394234,,main.gis.roads_v1,main,gis,roads_v1,s3://mybucket/table1,TABLE,name,main.out.report,main,out,report,,TABLE,road,analyst@example.org,2026-11-27T10:00:00.000Z,2026-11-27
7af234db-66d7-4db3-bbf0-956098224879,5a31ba44-bbf4-4174-bf33-e1fa078e6765,123456789012345,NOTEBOOK,23098402394234,,main.gis.roads_v1,main,gis,roads_v1,s3://mybucket/table1,TABLE,geom,,,,,,,,analyst@example.org,2026-11-27T10:00:01.000Z,2026-11-27
7af234db-66d7-4db3-bbf0-956098224879,5a31ba44-bbf4-4174-bf33-e1fa078e6765,123456789012345,JOB,1234,5678,,,,,s3://mybucket/raw/roads.csv,PATH,\"id,raw\",main.gis.roads_v1,main,gis,roads_v1,,TABLE,id,etl@example.org,2026-11-27 09:00:00,2026-11-27
7af234db-66d7-4db3-bbf0-956098224879,5a31ba44-bbf4-4174-bf33-e1fa078e6765,123456789012345,,,,main.gis.towns,main,gis,towns,,TABLE,,,,,,,,,analyst@example.org,2026-11-27T10:02:00Z,2026-11-27

7af234db-66d7-4db3-bbf0-956098224879,5a31ba44-bbf4-4174-bf33-e1fa078e6765,123456789012345,,,,main.gis.towns,main,gis,towns,,TABLE,pop,,,,,,,,analyst@example.org,,2026-11-27
";
        let mut d = Databricks::new();
        let got: Vec<String> = log
            .lines()
            .flat_map(|l| warehouse::testing::described(d.parse(l.as_bytes())))
            .collect();
        assert_eq!(
            got,
            vec![
                "skip",
                "2026-11-27T10:00:00+00:00 Some(\"analyst@example.org\") GET main/gis/roads_v1 Named({\"name\"})",
                "2026-11-27T10:00:01+00:00 Some(\"analyst@example.org\") GET main/gis/roads_v1 Named({\"geom\"})",
                "2026-11-27T09:00:00+00:00 Some(\"etl@example.org\") OTHER  Named({\"id,raw\"})",
                "2026-11-27T10:02:00+00:00 Some(\"analyst@example.org\") GET main/gis/towns Unknown",
                "skip",
                "error: no `event_time`",
            ]
        );
        let mut other = Databricks::new();
        let header =
            warehouse::testing::described(other.parse(b"source_table_full_name,created_by"));
        assert_eq!(
            header,
            [
                "error: the CSV header (the file's first line) has no column event_time, \
              source_column_name"
            ]
        );
    }

    #[test]
    fn the_rows_of_one_query_are_one_read_of_their_columns_together() {
        let row = |table: &str, column: &str, who: &str, at: &str| {
            format!("{table},{column},TABLE,{who},2026-11-27T{at}Z\n")
        };
        let mut file =
            "source_table_full_name,source_column_name,source_type,created_by,event_time\n"
                .to_string();
        // One query reading three columns of 2.0.0, a second one ten minutes later, a row of
        // another table no template matches, a row whose time is no time.
        for (column, at) in [
            ("name", "10:00:00"),
            ("geom", "10:00:00"),
            ("pop_est", "10:00:01"),
        ] {
            file += &row("main.gis.roads_v2.0.0", column, "analyst@example.org", at);
        }
        file += &row(
            "main.gis.roads_v2.0.0",
            "name",
            "analyst@example.org",
            "10:10:00",
        );
        file += &row("main.raw.roads", "name", "analyst@example.org", "10:00:00");
        file += "main.gis.roads_v2.0.0,name,TABLE,analyst@example.org,soon\n";
        let (got, stats, outcome, bad) = warehouse::testing::reads_of(
            crate::LogFormat::DatabricksColumnLineage,
            "main.gis.{dataset}_v{contract}",
            file.as_bytes(),
        );
        outcome.unwrap();
        let named = |c: &[&str]| Columns::named(c.iter().map(|c| c.to_string()));
        let read = |at: &str, c: Columns| {
            let who = Some("analyst@example.org".to_string());
            (
                who,
                "roads".to_string(),
                "2.0.0".to_string(),
                at.to_string(),
                c,
            )
        };
        assert_eq!(
            got,
            vec![
                read(
                    "2026-11-27T10:00:01+00:00",
                    named(&["geom", "name", "pop_est"])
                ),
                read("2026-11-27T10:10:00+00:00", named(&["name"])),
            ]
        );
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].line, 7, "{bad:?}");
        assert_eq!((stats.requests, stats.not_read.unmatched), (4, 1));
    }

    #[test]
    fn a_parquet_export_is_read_as_the_csv_one() {
        use crate::access::AccessError;
        use arrow_array::{ArrayRef, RecordBatch, StringArray, TimestampMicrosecondArray};
        use std::sync::Arc;
        // The table's types: strings, and `event_time` a timestamp (microseconds, UTC).
        let at = |s: &str| warehouse::instant(s).unwrap().timestamp_micros();
        let columns: Vec<(&str, ArrayRef)> = vec![
            (
                "source_table_full_name",
                Arc::new(StringArray::from(vec![
                    Some("main.gis.roads_v2.0.0"),
                    Some("main.gis.roads_v2.0.0"),
                    None,
                ])),
            ),
            (
                "source_column_name",
                Arc::new(StringArray::from(vec![
                    Some("name"),
                    Some("geom"),
                    Some("id"),
                ])),
            ),
            (
                "created_by",
                Arc::new(StringArray::from(vec![Some("analyst@example.org"); 3])),
            ),
            (
                "event_time",
                Arc::new(
                    TimestampMicrosecondArray::from(vec![
                        at("2026-11-27T10:00:00Z"),
                        at("2026-11-27T10:00:01.5Z"),
                        at("2026-11-27T10:00:02Z"),
                    ])
                    .with_timezone("UTC"),
                ),
            ),
        ];
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let mut file = Vec::new();
        let mut writer =
            parquet::arrow::ArrowWriter::try_new(&mut file, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let read = |file: &[u8]| {
            warehouse::testing::reads_of(
                crate::LogFormat::DatabricksColumnLineage,
                "main.gis.{dataset}_v{contract}",
                file,
            )
        };
        let (got, stats, outcome, bad) = read(&file);
        outcome.unwrap();
        assert!(bad.is_empty(), "{bad:?}");
        let columns = Columns::named(["geom", "name"].map(String::from));
        assert_eq!(
            got,
            vec![(
                Some("analyst@example.org".to_string()),
                "roads".to_string(),
                "2.0.0".to_string(),
                "2026-11-27T10:00:01.500+00:00".to_string(),
                columns
            )]
        );
        assert_eq!(
            (stats.lines, stats.requests, stats.not_read.method),
            (3, 2, 1)
        );
        // A file that starts as Parquet and is none says so, and reads nothing.
        let (_, _, outcome, _) = read(b"PAR1 and then text");
        assert!(
            matches!(&outcome, Err(AccessError::Parquet(e)) if e.starts_with("not a Parquet file")),
            "{outcome:?}"
        );
    }
}
