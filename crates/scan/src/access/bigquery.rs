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

use serde::Deserialize;

use super::warehouse;
use super::{Columns, Parsed};

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
        match self.fields {
            Some(fields) if !self.truncated => {
                warehouse::named(fields.into_iter().map(|f| match f.split_once('.') {
                    Some((top, _)) => Cow::Owned(top.to_string()),
                    None => f,
                }))
            }
            _ => Columns::Unknown,
        }
    }
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
        let entry: Entry =
            serde_json::from_slice(line).map_err(|e| format!("not a JSON LogEntry: {e}"))?;
        let at_text = entry.timestamp.ok_or("no `timestamp`")?;
        let at = warehouse::instant(&at_text)
            .ok_or_else(|| warehouse::bad_instant("timestamp", &at_text))?;
        let Some(proto) = entry.proto else {
            // A text or JSON payload: some other service's entry, no read.
            return Ok(Parsed::Request(warehouse::request(
                at,
                None,
                Cow::Borrowed(""),
                false,
                Columns::Unknown,
            )));
        };
        let read = match (proto.metadata, proto.metadata_json) {
            (Some(m), _) => m.read.map(TableDataRead::columns),
            (None, Some(text)) => serde_json::from_str::<Metadata>(&text)
                .map_err(|e| format!("`protoPayload.metadataJson` is not JSON: {e}"))?
                .read
                .map(TableDataRead::columns),
            (None, None) => None,
        };
        let principal = proto.auth.and_then(|a| a.email);
        let resource = proto.resource.unwrap_or_default();
        Ok(Parsed::Request(match read {
            Some(columns) if !resource.is_empty() => {
                warehouse::request(at, principal, resource, true, columns)
            }
            Some(_) => return Err("a tableDataRead without `protoPayload.resourceName`".into()),
            None => warehouse::request(at, principal, resource, false, Columns::Unknown),
        }))
    }
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
