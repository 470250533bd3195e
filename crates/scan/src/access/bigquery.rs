//! `bigquery-audit`: BigQuery's Data Access audit log, Cloud Logging `LogEntry` objects
//! exported as JSON Lines (a log sink to Cloud Storage, `gcloud logging read --format=json`
//! flattened to a line each). An entry of the newer `BigQueryAuditMetadata` whose
//! `protoPayload.metadata` holds a `tableDataRead` is one read of one table:
//!
//! ```text
//! {"protoPayload":{"@type":"type.googleapis.com/google.cloud.audit.AuditLog","authenticationInfo":{"principalEmail":"analyst@example.org"},"resourceName":"projects/geo-prod/datasets/gis/tables/roads_v1","metadata":{"@type":"type.googleapis.com/google.cloud.audit.BigQueryAuditMetadata","tableDataRead":{"fields":["name","geom"],"reason":"JOB","jobName":"projects/geo-prod/jobs/bquxjob_1"}}},"timestamp":"2026-11-27T10:00:00.123456Z","logName":"projects/geo-prod/logs/cloudaudit.googleapis.com%2Fdata_access"}
//! ```
//!
//! The instant is `timestamp`, the principal `protoPayload.authenticationInfo.principalEmail`,
//! the object `protoPayload.resourceName` (`projects/P/datasets/D/tables/T`, matched by the
//! source's templates as a path), the columns `tableDataRead.fields`. A nested field
//! (`address.city`) is a read of its top-level column. No `fields`, or `fieldsTruncated`
//! (BigQuery empties a list that would make the entry too large), means the entry cannot tell:
//! `Unknown`. Every other entry (a job inserted, a dataset listed) is a request of another
//! method, counted as no read. A `metadataJson` string (how the BigQuery export of logs
//! writes the metadata) is read as `metadata` is.

use std::borrow::Cow;

use chrono::{DateTime, FixedOffset};
use serde::Deserialize;

use super::warehouse;
use super::{Columns, Parsed, Request};
use crate::reads::json_walk::Walk;

/// The reader of one file of a source: it keeps nothing between lines.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BigQuery;

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "protoPayload")]
    proto: Option<Proto<'a>>,
}

#[derive(Deserialize)]
struct Proto<'a> {
    #[serde(borrow, rename = "authenticationInfo")]
    auth: Option<Auth<'a>>,
    #[serde(borrow, rename = "resourceName")]
    resource: Option<Cow<'a, str>>,
    #[serde(borrow)]
    metadata: Option<Metadata<'a>>,
    #[serde(borrow, rename = "metadataJson")]
    metadata_json: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Auth<'a> {
    #[serde(borrow, rename = "principalEmail")]
    email: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Metadata<'a> {
    #[serde(borrow, rename = "tableDataRead")]
    read: Option<TableDataRead<'a>>,
}

#[derive(Deserialize)]
struct TableDataRead<'a> {
    #[serde(borrow)]
    fields: Option<Vec<Cow<'a, str>>>,
    #[serde(rename = "fieldsTruncated", default)]
    truncated: bool,
}

impl TableDataRead<'_> {
    fn columns(self) -> Columns {
        let fields = self.fields.map(|fields| {
            let mut names = warehouse::Names::default();
            for f in fields {
                names.add(column(f));
            }
            names
        });
        read_columns(fields, self.truncated)
    }
}

/// The column a field read: a nested field (`address.city`) is a read of its top-level
/// column.
fn column(field: Cow<'_, str>) -> Cow<'_, str> {
    match field.split_once('.') {
        Some((top, _)) => Cow::Owned(top.to_string()),
        None => field,
    }
}

/// What a `tableDataRead` tells of the columns: its `fields`, unless there are none or
/// BigQuery truncated them.
fn read_columns(fields: Option<warehouse::Names>, truncated: bool) -> Columns {
    match fields {
        Some(names) if !truncated => names.columns(),
        _ => Columns::Unknown,
    }
}

/// What an entry's `protoPayload` says, however the entry was read.
struct Payload<'a> {
    principal: Option<Cow<'a, str>>,
    resource: Cow<'a, str>,
    /// The columns of its `tableDataRead`; `None` when it has none.
    read: Option<Columns>,
}

impl BigQuery {
    pub fn new() -> BigQuery {
        BigQuery
    }

    /// Read one line: a `LogEntry`.
    pub(crate) fn parse<'a>(&mut self, line: &'a [u8]) -> Result<Parsed<'a>, String> {
        if warehouse::blank(line) {
            return Ok(Parsed::Skip);
        }
        if let Some(request) = walked(line) {
            return Ok(Parsed::Request(request));
        }
        parsed(line)
    }
}

/// A `LogEntry` as serde reads it: the reading that defines the answer, and gives the reason
/// of an entry that is none. [`walked`] reads most entries faster, to the same request.
fn parsed(line: &[u8]) -> Result<Parsed<'_>, String> {
    let entry: Entry =
        serde_json::from_slice(line).map_err(|e| format!("not a JSON LogEntry: {e}"))?;
    let at_text = entry.timestamp.ok_or("no `timestamp`")?;
    let at = warehouse::instant(&at_text)
        .ok_or_else(|| warehouse::bad_instant("timestamp", &at_text))?;
    let payload = match entry.proto {
        None => None,
        Some(proto) => {
            let read = match (proto.metadata, proto.metadata_json) {
                (Some(m), _) => m.read.map(TableDataRead::columns),
                (None, Some(text)) => serde_json::from_str::<Metadata>(&text)
                    .map_err(|e| format!("`protoPayload.metadataJson` is not JSON: {e}"))?
                    .read
                    .map(TableDataRead::columns),
                (None, None) => None,
            };
            Some(Payload {
                principal: proto.auth.and_then(|a| a.email),
                resource: proto.resource.unwrap_or_default(),
                read,
            })
        }
    };
    request(at, payload).map(Parsed::Request)
}

/// The request of an entry: a read of the table its `tableDataRead` names, or a request of
/// another method, counted as no read.
fn request(at: DateTime<FixedOffset>, payload: Option<Payload<'_>>) -> Result<Request<'_>, String> {
    let Some(p) = payload else {
        // A text or JSON payload: some other service's entry, no read.
        return Ok(warehouse::request(
            at,
            None,
            Cow::Borrowed(""),
            false,
            Columns::Unknown,
        ));
    };
    Ok(match p.read {
        Some(columns) if !p.resource.is_empty() => {
            warehouse::request(at, p.principal, p.resource, true, columns)
        }
        Some(_) => return Err("a tableDataRead without `protoPayload.resourceName`".into()),
        None => warehouse::request(at, p.principal, p.resource, false, Columns::Unknown),
    })
}

/// A `LogEntry` read by the shared walk, without serde: the fields [`Entry`] takes, every
/// other value skipped unread. `None` for an entry the walk does not take plainly, which
/// [`parsed`] then reads: a string it takes with an escape, a key it takes twice (serde
/// refuses a duplicate field), a value of another type than serde's, a `metadataJson` to be
/// read (no `metadata`), an entry that is no read of a table or has no instant, or anything
/// that is not JSON.
fn walked(line: &[u8]) -> Option<Request<'_>> {
    let (text, mut w) = warehouse::json_row(line)?;
    let entry_key = |key: &[u8]| match key {
        b"timestamp" => Some(0),
        b"protoPayload" => Some(1),
        _ => None,
    };
    let (mut at, mut payload) = (None, None);
    warehouse::fields(&mut w, 1, entry_key, |w, field| {
        match field {
            0 => at = warehouse::text_or_null(w, text)?,
            _ if w.null() => {}
            _ => payload = Some(walked_payload(w, text)?),
        }
        Some(())
    })?;
    if !w.at_end() {
        return None;
    }
    request(warehouse::instant(at?)?, payload).ok()
}

/// `protoPayload`, read by the walk.
fn walked_payload<'a>(w: &mut Walk<'a>, text: &'a str) -> Option<Payload<'a>> {
    let proto_key = |key: &[u8]| match key {
        b"authenticationInfo" => Some(0),
        b"resourceName" => Some(1),
        b"metadata" => Some(2),
        b"metadataJson" => Some(3),
        _ => None,
    };
    let (mut principal, mut resource, mut read, mut metadata_json) = (None, None, None, None);
    warehouse::fields(w, 2, proto_key, |w, field| {
        match field {
            1 => resource = warehouse::text_or_null(w, text)?,
            3 => metadata_json = warehouse::text_or_null(w, text)?,
            _ if w.null() => {}
            0 => {
                let auth_key = |key: &[u8]| (key == b"principalEmail").then_some(0);
                warehouse::fields(w, 3, auth_key, |w, _| {
                    principal = warehouse::text_or_null(w, text)?;
                    Some(())
                })?;
            }
            _ => {
                // `metadata`: `Some(None)` when it holds no `tableDataRead`.
                let metadata_key = |key: &[u8]| (key == b"tableDataRead").then_some(0);
                let mut table_data_read = None;
                warehouse::fields(w, 3, metadata_key, |w, _| {
                    if !w.null() {
                        table_data_read = Some(walked_read(w, text)?);
                    }
                    Some(())
                })?;
                read = Some(table_data_read);
            }
        }
        Some(())
    })?;
    if read.is_none() && metadata_json.is_some() {
        return None;
    }
    Some(Payload {
        principal: principal.map(Cow::Borrowed),
        resource: Cow::Borrowed(resource.unwrap_or("")),
        read: read.flatten(),
    })
}

/// `tableDataRead`, read by the walk into its columns.
fn walked_read<'a>(w: &mut Walk<'a>, text: &'a str) -> Option<Columns> {
    let read_key = |key: &[u8]| match key {
        b"fields" => Some(0),
        b"fieldsTruncated" => Some(1),
        _ => None,
    };
    let (mut fields, mut truncated) = (None, false);
    warehouse::fields(w, 5, read_key, |w, field| {
        if field == 1 {
            truncated = match w.peek()? {
                b't' => w.literal(b"true").map(|()| true)?,
                _ => w.literal(b"false").map(|()| false)?,
            };
        } else if !w.null() {
            let mut names = warehouse::Names::default();
            w.elements(|w| {
                let field = &text[w.plain_string()?];
                names.add(column(Cow::Borrowed(field)));
                Some(())
            })?;
            fields = Some(names);
        }
        Some(())
    })?;
    Some(read_columns(fields, truncated))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Written from Google's references: Cloud Logging's `LogEntry` (`timestamp`,
    // `protoPayload`, `logName`), Cloud Audit Logs' `AuditLog` (`authenticationInfo.
    // principalEmail`, `resourceName`, `metadata`), and BigQuery's `BigQueryAuditMetadata.
    // TableDataRead` (`fields`, "List of the accessed fields. Entire list is truncated if the
    // record size exceeds 100K"; `fieldsTruncated`; `reason` `JOB`; `jobName`
    // `projects/<project_id>/jobs/<job_id>`).
    const LOG: &str = r#"{"insertId":"1a2b3c","logName":"projects/geo-prod/logs/cloudaudit.googleapis.com%2Fdata_access","protoPayload":{"@type":"type.googleapis.com/google.cloud.audit.AuditLog","authenticationInfo":{"principalEmail":"analyst@example.org"},"methodName":"google.cloud.bigquery.v2.JobService.InsertJob","resourceName":"projects/geo-prod/datasets/gis/tables/roads_v1","serviceName":"bigquery.googleapis.com","metadata":{"@type":"type.googleapis.com/google.cloud.audit.BigQueryAuditMetadata","tableDataRead":{"fields":["name","geom","address.city"],"reason":"JOB","jobName":"projects/geo-prod/jobs/bquxjob_1"}}},"receiveTimestamp":"2026-11-27T10:00:01.2Z","resource":{"type":"bigquery_dataset","labels":{"dataset_id":"gis","project_id":"geo-prod"}},"severity":"INFO","timestamp":"2026-11-27T10:00:00.123456Z"}
{"logName":"projects/geo-prod/logs/cloudaudit.googleapis.com%2Fdata_access","protoPayload":{"authenticationInfo":{"principalEmail":"etl@geo-prod.iam.gserviceaccount.com"},"resourceName":"projects/geo-prod/datasets/gis/tables/roads_v1","metadata":{"tableDataRead":{"reason":"TABLEDATA_LIST_REQUEST"}}},"timestamp":"2026-11-27T10:05:00Z"}
{"protoPayload":{"authenticationInfo":{"principalEmail":"wide@example.org"},"resourceName":"projects/geo-prod/datasets/gis/tables/roads_v1","metadata":{"tableDataRead":{"fields":[],"fieldsTruncated":true,"reason":"JOB"}}},"timestamp":"2026-11-27T10:06:00Z"}
{"protoPayload":{"authenticationInfo":{"principalEmail":"analyst@example.org"},"methodName":"google.cloud.bigquery.v2.JobService.InsertJob","resourceName":"projects/geo-prod/jobs/bquxjob_1","metadata":{"jobInsertion":{"reason":"JOB_INSERT_REQUEST"}}},"timestamp":"2026-11-27T10:00:00Z"}
{"protoPayload":{"authenticationInfo":{"principalEmail":"old@example.org"},"resourceName":"projects/geo-prod/datasets/gis/tables/towns","metadataJson":"{\"tableDataRead\":{\"fields\":[\"pop\"],\"reason\":\"JOB\"}}"},"timestamp":"2026-11-27T10:07:00Z"}

{"protoPayload":{"resourceName":"projects/geo-prod/datasets/gis/tables/towns","metadata":{"tableDataRead":{}}}}
{"timestamp":"2026-11-27T10:07:00Z","protoPayload":{"metadata":{"tableDataRead":{}}}}
{"timestamp":"2026-11-27T10:07:00Z","textPayload":"another service"}
[1, 2]
"#;

    #[test]
    fn table_data_reads_are_reads_with_their_fields_and_the_rest_is_counted() {
        let mut b = BigQuery::new();
        let got: Vec<String> = LOG
            .lines()
            .flat_map(|l| warehouse::testing::described(b.parse(l.as_bytes())))
            .collect();
        assert_eq!(
            got,
            vec![
                "2026-11-27T10:00:00.123456+00:00 Some(\"analyst@example.org\") GET projects/geo-prod/datasets/gis/tables/roads_v1 Named({\"address\", \"geom\", \"name\"})",
                "2026-11-27T10:05:00+00:00 Some(\"etl@geo-prod.iam.gserviceaccount.com\") GET projects/geo-prod/datasets/gis/tables/roads_v1 Unknown",
                "2026-11-27T10:06:00+00:00 Some(\"wide@example.org\") GET projects/geo-prod/datasets/gis/tables/roads_v1 Unknown",
                "2026-11-27T10:00:00+00:00 Some(\"analyst@example.org\") OTHER projects/geo-prod/jobs/bquxjob_1 Unknown",
                "2026-11-27T10:07:00+00:00 Some(\"old@example.org\") GET projects/geo-prod/datasets/gis/tables/towns Named({\"pop\"})",
                "skip",
                "error: no `timestamp`",
                "error: a tableDataRead without `protoPayload.resourceName`",
                "2026-11-27T10:07:00+00:00 None OTHER  Unknown",
                "error: not a JSON LogEntry: invalid type: integer `1`, expected a string at line 1 column 2",
            ]
        );
    }
}

#[cfg(test)]
#[path = "bigquery_walk_tests.rs"]
mod walk_tests;
