//! `databricks-column-lineage`: Databricks' `system.access.column_lineage` system table
//! exported as CSV with a header (a `SELECT` downloaded from a notebook or Databricks SQL,
//! or `df.write.csv(path, header=True)`). A row is one column read for one target:
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

    /// Read one line of the CSV file.
    pub(crate) fn parse<'a>(&'a mut self, line: &[u8]) -> Result<Parsed<'a>, String> {
        match self.csv.feed(line, 4)? {
            Fed::Pending | Fed::Blank | Fed::Header => return Ok(Parsed::Skip),
            Fed::Record => {}
        }
        let csv = &self.csv;
        let at_text = csv.get(0).ok_or("no `event_time`")?;
        let at = warehouse::instant(&at_text)
            .ok_or_else(|| warehouse::bad_instant("event_time", &at_text))?;
        let table = csv.get(2).unwrap_or_default();
        let by_path = csv.get(4).is_some_and(|t| t.eq_ignore_ascii_case("PATH"));
        self.path.clear();
        for (i, part) in table.splitn(3, '.').enumerate() {
            if i > 0 {
                self.path.push('/');
            }
            self.path.push_str(part);
        }
        let attributes = match csv.get(3) {
            Some(column) => warehouse::named([column]),
            None => Columns::Unknown,
        };
        let principal = csv.get(1).map(|p| Cow::Owned(p.into_owned()));
        let object = !self.path.is_empty() && !by_path;
        Ok(Parsed::Request(warehouse::request(
            at,
            principal,
            Cow::Borrowed(self.path.as_str()),
            object,
            attributes,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            .flat_map(|l| warehouse::described(d.parse(l.as_bytes())))
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
        let header = warehouse::described(other.parse(b"source_table_full_name,created_by"));
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
        use crate::access::{read_access_log, AccessKeys, AccessLog};
        let keys = AccessKeys {
            templates: vec!["main.gis.{dataset}_v{contract}"],
            same_read_seconds: 60,
            ..AccessKeys::default()
        };
        let log = AccessLog::compile(crate::LogFormat::DatabricksColumnLineage, &keys).unwrap();
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
        let mut reads = Vec::new();
        let mut bad = Vec::new();
        let (stats, outcome) =
            read_access_log(&log, file.as_bytes(), |r| reads.push(r), |e| bad.push(e));
        outcome.unwrap();
        reads.sort_by_key(|r| r.burst.first);
        let got: Vec<_> = reads
            .iter()
            .map(|r| {
                (
                    r.at_text(),
                    r.reader.dataset.as_str(),
                    r.reader.contract.as_str(),
                    r.attributes.clone(),
                )
            })
            .collect();
        let named = |c: &[&str]| Columns::Named(c.iter().map(|c| c.to_string()).collect());
        assert_eq!(
            got,
            vec![
                (
                    "2026-11-27T10:00:01+00:00".to_string(),
                    "roads",
                    "2.0.0",
                    named(&["geom", "name", "pop_est"])
                ),
                (
                    "2026-11-27T10:10:00+00:00".to_string(),
                    "roads",
                    "2.0.0",
                    named(&["name"])
                ),
            ]
        );
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].line, 7, "{bad:?}");
        assert_eq!((stats.requests, stats.not_read.unmatched), (4, 1));
    }
}
