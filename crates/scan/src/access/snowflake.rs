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

use chrono::{DateTime, FixedOffset};
use serde::Deserialize;

use super::warehouse::{self, CsvRows, Fed};
use super::{Columns, Parsed, Request};
use crate::reads::json_walk::Walk;

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
    base_objects_accessed: Option<Objects<'a>>,
}

/// `base_objects_accessed` as a JSON row holds it: an array, read as the row is parsed (not
/// kept as text and parsed again), or a string holding one.
enum Objects<'a> {
    List(Vec<Object<'a>>),
    Text(String),
}

impl<'de: 'a, 'a> Deserialize<'de> for Objects<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Objects<'a>, D::Error> {
        struct Either<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Either<'a> {
            type Value = Objects<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of the objects read, or a string holding one")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Objects<'a>, A::Error> {
                let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(1));
                while let Some(o) = seq.next_element()? {
                    list.push(o);
                }
                Ok(Objects::List(list))
            }
            fn visit_str<E>(self, text: &str) -> Result<Objects<'a>, E> {
                Ok(Objects::Text(text.to_string()))
            }
            fn visit_unit<E>(self) -> Result<Objects<'a>, E> {
                Ok(Objects::List(Vec::new()))
            }
        }
        d.deserialize_any(Either(std::marker::PhantomData))
    }
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
                match walked(line) {
                    Some(requests) => Ok(requests),
                    None => parsed(line),
                }
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

/// A JSON row as serde reads it: the reading that defines the answer, and gives the reason
/// of a row that is none. [`walked`] reads most rows faster, to the same requests.
fn parsed(line: &[u8]) -> Result<Parsed<'_>, String> {
    let row: Row = serde_json::from_slice(line)
        .map_err(|e| format!("not a JSON row of ACCESS_HISTORY: {e}"))?;
    match row.base_objects_accessed {
        Some(Objects::List(list)) => {
            let at = instant_of(row.query_start_time)?;
            Ok(Parsed::Requests(each_object(at, row.user_name, list)))
        }
        Some(Objects::Text(text)) => requests(row.query_start_time, row.user_name, Some(&text)),
        None => requests(row.query_start_time, row.user_name, None),
    }
}

/// Which column of the view a row's key is (in either case, as [`Row`] takes them).
fn row_key(key: &[u8]) -> Option<u8> {
    match key {
        b"query_start_time" | b"QUERY_START_TIME" => Some(0),
        b"user_name" | b"USER_NAME" => Some(1),
        b"base_objects_accessed" | b"BASE_OBJECTS_ACCESSED" => Some(2),
        _ => None,
    }
}

/// A JSON row read by the shared walk, without serde: its requests, each made as the walk
/// meets its object, and nothing else built (the other columns, `DIRECT_OBJECTS_ACCESSED`
/// as large as the base objects, are skipped unread). `None` for a row the walk does not
/// take plainly, which [`parsed`] then reads: a string it takes with an escape, a key it
/// takes twice (serde refuses a duplicate field), `base_objects_accessed` as a string, a
/// value of another type than [`Row`]'s, a row with no instant or one that is no time, or
/// anything that is not JSON.
fn walked(line: &[u8]) -> Option<Parsed<'_>> {
    let (text, mut w) = warehouse::json_row(line)?;
    let (mut at, mut user) = (None, None);
    // Most rows read one object: its request is handed on alone, with no list allocated.
    let mut out: Requests<'_> = smallvec::SmallVec::new();
    warehouse::fields(&mut w, 1, row_key, |w, field| {
        match field {
            0 => at = warehouse::text_or_null(w, text)?,
            1 => user = warehouse::text_or_null(w, text)?,
            _ if w.null() => {}
            _ => w.elements(|w| walked_object(w, text, &mut out))?,
        }
        Some(())
    })?;
    if !w.at_end() {
        return None;
    }
    // The instant and the principal may follow the objects: each request gets them now.
    let at = warehouse::instant(at?)?;
    let user = user.filter(|u| !u.is_empty());
    for r in &mut out {
        r.at = at;
        r.principal = user.map(Cow::Borrowed);
    }
    Some(match out.len() {
        1 => Parsed::Request(out.pop()?),
        _ => Parsed::Requests(out.into_vec()),
    })
}

/// The requests of a row being walked, one on the stack.
type Requests<'a> = smallvec::SmallVec<[Request<'a>; 1]>;

/// One element of `base_objects_accessed`, read by the walk into its request (its instant
/// and principal still to come).
fn walked_object<'a>(w: &mut Walk<'a>, text: &'a str, out: &mut Requests<'a>) -> Option<()> {
    let object_key = |key: &[u8]| match key {
        b"objectName" => Some(0),
        b"objectDomain" => Some(1),
        b"columns" => Some(2),
        _ => None,
    };
    let column_key = |key: &[u8]| (key == b"columnName").then_some(0);
    let (mut name, mut domain, mut columns) = (None, None, None);
    warehouse::fields(w, 3, object_key, |w, field| {
        match field {
            0 => name = warehouse::text_or_null(w, text)?,
            1 => domain = warehouse::text_or_null(w, text)?,
            _ if w.null() => {}
            _ => {
                let mut names = warehouse::Names::folding(fold);
                w.elements(|w| {
                    warehouse::fields(w, 5, column_key, |w, _| {
                        if let Some(n) = warehouse::text_or_null(w, text)? {
                            names.add(Cow::Borrowed(n));
                        }
                        Some(())
                    })
                })?;
                columns = Some(names.columns());
            }
        }
        Some(())
    })?;
    let at = DateTime::UNIX_EPOCH.fixed_offset();
    let attributes = columns.unwrap_or(Columns::Unknown);
    out.push(object_request(
        at,
        None,
        name.unwrap_or(""),
        domain,
        attributes,
    ));
    Some(())
}

/// The requests of one row: one per object of `objects` (JSON text: an array, or a string
/// holding one).
fn requests<'a>(
    at: Option<Cow<'_, str>>,
    user: Option<Cow<'a, str>>,
    objects: Option<&str>,
) -> Result<Parsed<'a>, String> {
    let at = instant_of(at)?;
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
    Ok(Parsed::Requests(each_object(at, user, objects)))
}

/// A row's instant, which it must have.
fn instant_of(at: Option<Cow<'_, str>>) -> Result<DateTime<FixedOffset>, String> {
    let text = at.ok_or("no `query_start_time`")?;
    warehouse::instant(&text).ok_or_else(|| warehouse::bad_instant("query_start_time", &text))
}

/// A request for each object a row read.
fn each_object<'a>(
    at: DateTime<FixedOffset>,
    user: Option<Cow<'a, str>>,
    objects: Vec<Object<'_>>,
) -> Vec<Request<'a>> {
    let mut out = Vec::with_capacity(objects.len());
    for o in objects {
        let attributes = match o.columns {
            Some(columns) => {
                warehouse::named(columns.into_iter().filter_map(|c| c.name).map(folded))
            }
            None => Columns::Unknown,
        };
        let name = o.name.unwrap_or_default();
        let domain = o.domain.as_deref();
        out.push(object_request(at, user.clone(), &name, domain, attributes));
    }
    out
}

/// The request for one object a row read, whichever way the row was read: a `GET` of a
/// table-like object, its path the name's parts folded ([`fold`]), the first two dots read
/// as `/`.
fn object_request<'a>(
    at: DateTime<FixedOffset>,
    user: Option<Cow<'a, str>>,
    name: &str,
    domain: Option<&str>,
    attributes: Columns,
) -> Request<'a> {
    let domain = domain.unwrap_or("Table").as_bytes();
    let has = |word: &str| {
        domain
            .windows(word.len())
            .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
    };
    // Tables, views, materialized, external, dynamic and Iceberg tables, streams: their
    // rows are read. A stage or a function is no dataset.
    let table =
        !name.is_empty() && (has("table") || has("view") || domain.eq_ignore_ascii_case(b"stream"));
    // The parts folded straight into the path, with no string of their own.
    let mut path = String::with_capacity(name.len());
    let mut rest = name;
    for _ in 0..2 {
        let Some(dot) = rest.bytes().position(|c| c == b'.') else {
            break;
        };
        push_folded(&mut path, &rest[..dot]);
        path.push('/');
        rest = &rest[dot + 1..];
    }
    push_folded(&mut path, rest);
    warehouse::request(at, user, Cow::Owned(path), table, attributes)
}

/// A column's name folded ([`fold`]), kept as it came when it needs no lowering.
fn folded(name: Cow<'_, str>) -> Cow<'_, str> {
    match fold(&name) {
        Cow::Borrowed(_) => name,
        Cow::Owned(lower) => Cow::Owned(lower),
    }
}

/// A Snowflake identifier as it was written unquoted: one with no lower-case letter is
/// lowered (Snowflake stores `pop_est` as `POP_EST`); a quoted mixed-case one stays.
fn fold(name: &str) -> Cow<'_, str> {
    match lowering(name) {
        None => Cow::Borrowed(name),
        Some(Lowering::Ascii) => Cow::Owned(name.to_ascii_lowercase()),
        Some(Lowering::Unicode) => Cow::Owned(name.to_lowercase()),
    }
}

/// [`fold`] onto the end of `out`.
fn push_folded(out: &mut String, name: &str) {
    match lowering(name) {
        None => out.push_str(name),
        Some(Lowering::Ascii) => {
            let start = out.len();
            out.push_str(name);
            out[start..].make_ascii_lowercase();
        }
        Some(Lowering::Unicode) => out.push_str(&name.to_lowercase()),
    }
}

/// How [`fold`] lowers a name.
enum Lowering {
    Ascii,
    Unicode,
}

/// Whether a name is lowered ([`fold`]), and how: `None` when it stays as written.
fn lowering(name: &str) -> Option<Lowering> {
    // The common case in one pass over the bytes, without a char iterator or a Unicode
    // table.
    let (mut lower, mut upper, mut high) = (false, false, false);
    for &c in name.as_bytes() {
        lower |= c.is_ascii_lowercase();
        upper |= c.is_ascii_uppercase();
        high |= !c.is_ascii();
    }
    if !high {
        (upper && !lower).then_some(Lowering::Ascii)
    } else if name.chars().any(char::is_lowercase) {
        None
    } else {
        Some(Lowering::Unicode)
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
        let named = |c: &[&str]| Columns::named(c.iter().map(|c| c.to_string()));
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

#[cfg(test)]
#[path = "snowflake_walk_tests.rs"]
mod walk_tests;
