//! `snowflake-access-history`: rows of Snowflake's `SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY`
//! view, exported as JSON Lines (one row an object, keys in lower case or, as `COPY INTO`
//! from `SELECT *` writes them, upper case) or as CSV with a header (the array columns then
//! hold JSON text). A row is one query:
//!
//! ```text
//! {"QUERY_START_TIME":"2026-11-27 10:00:00.120 +0000","USER_NAME":"JSMITH","BASE_OBJECTS_ACCESSED":[{"columns":[{"columnId":68610,"columnName":"NAME"}],"objectDomain":"Table","objectId":66564,"objectName":"GIS.PUBLIC.ROADS_V1"}]}
//! ```
//!
//! Of its columns this reader needs `query_start_time`, `user_name` (the principal) and
//! `base_objects_accessed`: the tables the query read in the end (through views too), each
//! with `objectName` (`DB.SCHEMA.TABLE`), `objectDomain` and the `columns` it read. Each
//! table-like object of a row is a request of its own (a join reads two datasets), matched by
//! the source's templates written with dots (`gis.public.{dataset}_v{line}`), its first two
//! dots read as `/`. Snowflake stores an unquoted identifier in upper case: a name part or
//! column with no lower-case letter is lowered, so that templates and contracts are written
//! as the attributes are (`pop_est`, not `POP_EST`). An object listed without columns (a
//! stage, `COUNT(*)`) says nothing about them: `Unknown`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::warehouse::{self, CsvRows, Fed};
use super::{Columns, Parsed};

/// The columns of the view this reader needs, in the order [`CsvRows::get`] is asked.
const COLUMNS: [&str; 3] = ["query_start_time", "user_name", "base_objects_accessed"];

/// The reader of one file of a source.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snowflake {
    /// `None` until the first line says: JSON Lines (`{`) or CSV (a header).
    csv: Option<Option<CsvRows>>,
}

/// A row as JSON Lines hold it; other columns are skipped unread.
#[derive(Deserialize)]
struct Row<'a> {
    #[serde(borrow, alias = "QUERY_START_TIME")]
    query_start_time: Option<Cow<'a, str>>,
    #[serde(borrow, alias = "USER_NAME")]
    user_name: Option<Cow<'a, str>>,
    #[serde(borrow, alias = "BASE_OBJECTS_ACCESSED")]
    base_objects_accessed: Option<&'a RawValue>,
}

/// One element of `base_objects_accessed`.
#[derive(Deserialize)]
struct Object<'a> {
    #[serde(borrow, rename = "objectName")]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "objectDomain")]
    domain: Option<Cow<'a, str>>,
    #[serde(borrow)]
    columns: Option<Vec<Column<'a>>>,
}

#[derive(Deserialize)]
struct Column<'a> {
    #[serde(borrow, rename = "columnName")]
    name: Option<Cow<'a, str>>,
}

impl Snowflake {
    pub fn new() -> Snowflake {
        Snowflake::default()
    }

    /// Whether the file is CSV (`Some(true)`) or JSON Lines, once its first line said so and,
    /// for CSV, its header was read whole; `None` before.
    pub(crate) fn is_csv(&self) -> Option<bool> {
        match &self.csv {
            None => None,
            Some(None) => Some(false),
            Some(Some(rows)) => rows.header_read().then_some(true),
        }
    }

    /// Whether a CSV record is open at the end of the last line read.
    pub(crate) fn open_record(&self) -> bool {
        matches!(&self.csv, Some(Some(rows)) if rows.open())
    }

    /// Read one line: a row's requests, one per object it read.
    pub(crate) fn parse<'a>(&'a mut self, line: &'a [u8]) -> Result<Parsed<'a>, String> {
        if self.csv.is_none() {
            if warehouse::blank(line) {
                return Ok(Parsed::Skip);
            }
            let csv = (line.first() != Some(&b'{')).then(|| CsvRows::new(&COLUMNS));
            self.csv = Some(csv);
        }
        match self.csv.as_mut().and_then(Option::as_mut) {
            None => {
                if warehouse::blank(line) {
                    return Ok(Parsed::Skip);
                }
                let row: Row = serde_json::from_slice(line)
                    .map_err(|e| format!("not a JSON row of ACCESS_HISTORY: {e}"))?;
                let objects = row.base_objects_accessed.map(RawValue::get);
                requests(row.query_start_time, row.user_name, objects)
            }
            Some(csv) => match csv.feed(line, COLUMNS.len())? {
                Fed::Pending | Fed::Blank | Fed::Header => Ok(Parsed::Skip),
                Fed::Record => {
                    let csv: &'a CsvRows = csv;
                    requests(csv.get(0), csv.get(1), csv.get(2).as_deref())
                }
            },
        }
    }
}

/// The requests of one row: one per object of `objects` (JSON text: an array, or a string
/// holding one).
fn requests<'a>(
    at: Option<Cow<'_, str>>,
    user: Option<Cow<'a, str>>,
    objects: Option<&str>,
) -> Result<Parsed<'a>, String> {
    let at_text = at.ok_or("no `query_start_time`")?;
    let at = warehouse::instant(&at_text)
        .ok_or_else(|| warehouse::bad_instant("query_start_time", &at_text))?;
    let text = objects.map(str::trim).unwrap_or("null");
    let unquoted: String;
    let text = if text.starts_with('"') {
        unquoted = serde_json::from_str(text)
            .map_err(|e| format!("`base_objects_accessed` is not a JSON string: {e}"))?;
        unquoted.as_str()
    } else {
        text
    };
    if text.is_empty() || text == "null" {
        return Ok(Parsed::Requests(Vec::new()));
    }
    let objects: Vec<Object> = serde_json::from_str(text)
        .map_err(|e| format!("`base_objects_accessed` is not an array of objects: {e}"))?;
    let mut out = Vec::with_capacity(objects.len());
    for o in objects {
        let name = o.name.unwrap_or_default();
        let domain = o.domain.as_deref().unwrap_or("Table").as_bytes();
        let has = |word: &str| {
            domain
                .windows(word.len())
                .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
        };
        // Tables, views, materialized, external, dynamic and Iceberg tables, streams: their
        // rows are read. A stage or a function is no dataset.
        let table = !name.is_empty()
            && (has("table") || has("view") || domain.eq_ignore_ascii_case(b"stream"));
        let mut path = String::with_capacity(name.len());
        for (i, part) in name.splitn(3, '.').enumerate() {
            if i > 0 {
                path.push('/');
            }
            path.push_str(&fold(part));
        }
        let attributes =
            match o.columns {
                Some(columns) => warehouse::named(columns.into_iter().filter_map(|c| c.name).map(
                    |n| match fold(&n) {
                        Cow::Borrowed(_) => n,
                        Cow::Owned(lower) => Cow::Owned(lower),
                    },
                )),
                None => Columns::Unknown,
            };
        out.push(warehouse::request(
            at,
            user.clone(),
            Cow::Owned(path),
            table,
            attributes,
        ));
    }
    Ok(Parsed::Requests(out))
}

/// A Snowflake identifier as it was written unquoted: one with no lower-case letter is
/// lowered (Snowflake stores `pop_est` as `POP_EST`); a quoted mixed-case one stays.
fn fold(name: &str) -> Cow<'_, str> {
    if name.is_ascii() {
        // The common case, without a char iterator or a Unicode table.
        let lower = name.bytes().any(|c| c.is_ascii_lowercase());
        let upper = name.bytes().any(|c| c.is_ascii_uppercase());
        if lower || !upper {
            Cow::Borrowed(name)
        } else {
            Cow::Owned(name.to_ascii_lowercase())
        }
    } else if name.chars().any(char::is_lowercase) {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(name.to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<String> {
        let mut s = Snowflake::new();
        text.lines()
            .flat_map(|l| warehouse::testing::described(s.parse(l.as_bytes())))
            .filter(|l| l != "skip")
            .collect()
    }

    // The rows are written from Snowflake's reference of the ACCESS_HISTORY view (Account
    // Usage): its sample values (`query_start_time` `2022-01-25 16:17:47.388 +0000`,
    // `user_name` `JSMITH`, a `base_objects_accessed` of a FUNCTION and of the Table
    // `GOVERNANCE.TABLES.T1` with the column `CONTENT`) and its table of the JSON fields.
    const JSON: &str = r#"{"QUERY_ID":"a0fda135-d678-4184-942b-c3411ae8d1ce","QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","USER_NAME":"JSMITH","DIRECT_OBJECTS_ACCESSED":[],"BASE_OBJECTS_ACCESSED":[{"objectDomain":"FUNCTION","objectName":"GOVERNANCE.FUNCTIONS.RETURN_SUM","objectId":"2","argumentSignature":"(NUM1 NUMBER, NUM2 NUMBER)","dataType":"NUMBER(38,0)"},{"columns":[{"columnId":68610,"columnName":"CONTENT"},{"columnId":68611,"columnName":"\"camelCase\""}],"objectDomain":"Table","objectId":66564,"objectName":"GOVERNANCE.TABLES.T1"},{"objectDomain":"View","objectId":66565,"objectName":"GOVERNANCE.TABLES.V1"}],"OBJECTS_MODIFIED":[]}

{"query_start_time":"2022-01-25T16:20:00Z","user_name":"ETL_SVC","base_objects_accessed":"[{\"objectDomain\":\"Table\",\"objectName\":\"GIS.PUBLIC.ROADS_V1\",\"columns\":[{\"columnId\":1,\"columnName\":\"POP_EST\"}]}]"}
{"query_start_time":"2022-01-25T16:21:00Z","user_name":"ETL_SVC","base_objects_accessed":null}
{"query_start_time":"yesterday","user_name":"ETL_SVC","base_objects_accessed":[]}
{"user_name":"ETL_SVC"}
{"QUERY_START_TIME": 12
"#;

    #[test]
    fn json_rows_are_a_request_per_object_with_its_columns() {
        assert_eq!(
            read(JSON),
            vec![
                "2022-01-25T16:17:47.388+00:00 Some(\"JSMITH\") OTHER governance/functions/return_sum Unknown",
                "2022-01-25T16:17:47.388+00:00 Some(\"JSMITH\") GET governance/tables/t1 Named({\"\\\"camelCase\\\"\", \"content\"})",
                "2022-01-25T16:17:47.388+00:00 Some(\"JSMITH\") GET governance/tables/v1 Unknown",
                "2022-01-25T16:20:00+00:00 Some(\"ETL_SVC\") GET gis/public/roads_v1 Named({\"pop_est\"})",
                "error: `query_start_time` \"yesterday\" is not a time (RFC 3339, or `YYYY-MM-DD HH:MM:SS[.fff] [+HHMM]`)",
                "error: no `query_start_time`",
                "error: not a JSON row of ACCESS_HISTORY: invalid type: integer `12`, expected a string at line 1 column 23",
            ]
        );
    }

    #[test]
    fn csv_rows_hold_the_arrays_as_json_text() {
        // What `COPY INTO @stage FROM (SELECT ...) FILE_FORMAT = (TYPE = CSV)` with a header
        // writes: the ARRAY column as JSON text, quoted, its quotes doubled; one cell spread
        // over lines (pretty-printed JSON) is one record.
        let csv = "QUERY_ID,QUERY_START_TIME,USER_NAME,BASE_OBJECTS_ACCESSED\n\
                   q1,2022-01-25 16:17:47.388 +0000,JSMITH,\"[{\"\"objectDomain\"\":\"\"Table\"\",\"\"objectName\"\":\"\"GIS.PUBLIC.ROADS_V2\"\",\"\"columns\"\":[{\"\"columnName\"\":\"\"NAME\"\"},{\"\"columnName\"\":\"\"GEOM\"\"}]}]\"\n\
                   q2,2022-01-25 16:18:00.000 +0000,JSMITH,\"[\n  {\"\"objectDomain\"\": \"\"Table\"\",\n   \"\"objectName\"\": \"\"GIS.PUBLIC.TOWNS\"\"}\n]\"\n\
                   q3,2022-01-25 16:19:00.000 +0000,JSMITH,\n";
        assert_eq!(
            read(csv),
            vec![
                "2022-01-25T16:17:47.388+00:00 Some(\"JSMITH\") GET gis/public/roads_v2 Named({\"geom\", \"name\"})",
                "2022-01-25T16:18:00+00:00 Some(\"JSMITH\") GET gis/public/towns Unknown",
            ]
        );
        assert_eq!(
            read("QUERY_ID,USER_NAME\nq1,JSMITH\n"),
            vec![
                "error: the CSV header (the file's first line) has no column query_start_time, base_objects_accessed",
                "error: the CSV header (the file's first line) has no column query_start_time, base_objects_accessed",
            ]
        );
    }

    #[test]
    fn a_join_is_a_read_of_each_table_it_read() {
        let file = r#"{"QUERY_START_TIME":"2026-11-27 10:00:00.000 +0000","USER_NAME":"JSMITH","BASE_OBJECTS_ACCESSED":[{"objectDomain":"Table","objectName":"GIS.PUBLIC.ROADS_V2.0.0","columns":[{"columnName":"NAME"}]},{"objectDomain":"Table","objectName":"GIS.PUBLIC.TOWNS_V1.1.0","columns":[{"columnName":"POP_EST"},{"columnName":"GEOM"}]},{"objectDomain":"Stage","objectName":"GIS.PUBLIC.UPLOADS"}]}"#;
        let (got, stats, outcome, bad) = warehouse::testing::reads_of(
            crate::LogFormat::SnowflakeAccessHistory,
            "gis.public.{dataset}_v{contract}",
            file.as_bytes(),
        );
        outcome.unwrap();
        assert!(bad.is_empty(), "{bad:?}");
        let named = |c: &[&str]| Columns::Named(c.iter().map(|c| c.to_string()).collect());
        let read = |d: &str, v: &str, c: Columns| {
            let at = "2026-11-27T10:00:00+00:00".to_string();
            (
                Some("JSMITH".to_string()),
                d.to_string(),
                v.to_string(),
                at,
                c,
            )
        };
        assert_eq!(
            got,
            vec![
                read("roads", "2.0.0", named(&["name"])),
                read("towns", "1.1.0", named(&["geom", "pop_est"])),
            ]
        );
        assert_eq!(
            (stats.lines, stats.requests, stats.not_read.method),
            (1, 2, 1)
        );
    }
}
