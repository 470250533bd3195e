//! The walk of a `LogEntry` ([`walked`]) gives what serde gives ([`parsed`]): the same
//! request, field for field, or it leaves the entry to serde. Every entry below that the walk
//! must take itself is marked so, so that a walk that gave up on everything would fail too.

use proptest::prelude::*;

use super::super::warehouse::testing::{against_serde, whole, Whole};
use super::super::Parsed;
use super::{parsed, walked, BigQuery};
use crate::reads::json_fields::tests::other_value;

/// What the reader answers for `entry` (walk, or serde where the walk gives up), what serde
/// alone answers, and whether the walk took the entry.
fn both(entry: &str) -> (Whole, Whole, bool) {
    let got = whole(BigQuery::new().parse(entry.as_bytes()));
    let taken = walked(entry.as_bytes()).map(|r| whole(Ok(Parsed::Request(r))));
    against_serde(entry, got, || whole(parsed(entry.as_bytes())), taken)
}

// Written from Google's references: Cloud Logging's `LogEntry` (`insertId`, `logName`,
// `timestamp`, `receiveTimestamp`, `resource`, `severity`, `protoPayload`), Cloud Audit
// Logs' `AuditLog` (`authenticationInfo.principalEmail`, `requestMetadata.callerIp`,
// `methodName`, `resourceName`, `serviceName`, `status`, `metadata`), and BigQuery's
// `BigQueryAuditMetadata` (`tableDataRead`: `fields`, `fieldsTruncated`, `reason` `JOB`,
// `jobName`; `jobInsertion`); `metadataJson` as the BigQuery export of logs writes the
// metadata. Then the same entries bent: keys in another order, escapes, nulls, empty lists,
// keys twice, cut short.
const FULL: &str = r#"{"insertId":"1a2b3c","logName":"projects/geo-prod/logs/cloudaudit.googleapis.com%2Fdata_access","protoPayload":{"@type":"type.googleapis.com/google.cloud.audit.AuditLog","authenticationInfo":{"principalEmail":"analyst@example.org"},"methodName":"google.cloud.bigquery.v2.JobService.InsertJob","requestMetadata":{"callerIp":"10.0.0.1","callerSuppliedUserAgent":"bq/2.0 \"x\""},"resourceName":"projects/geo-prod/datasets/gis/tables/roads_v1","serviceName":"bigquery.googleapis.com","status":{},"metadata":{"@type":"type.googleapis.com/google.cloud.audit.BigQueryAuditMetadata","tableDataRead":{"fields":["name","geom","address.city"],"reason":"JOB","jobName":"projects/geo-prod/jobs/bquxjob_1"}}},"receiveTimestamp":"2026-11-27T10:00:01.2Z","resource":{"type":"bigquery_dataset","labels":{"dataset_id":"gis","project_id":"geo-prod"}},"severity":"INFO","timestamp":"2026-11-27T10:00:00.123456Z"}"#;

/// (entry, whether the walk must take it itself).
const ENTRIES: &[(&str, bool)] = &[
    (FULL, true),
    // Another order, whitespace around every token.
    (
        r#" { "timestamp" : "2026-11-27T10:05:00Z" , "protoPayload" : { "metadata" : { "tableDataRead" : { "reason" : "TABLEDATA_LIST_REQUEST" , "fieldsTruncated" : false , "fields" : [ "a.b" , "c" , "" ] } } , "resourceName" : "projects/p/datasets/d/tables/t" , "authenticationInfo" : { "principalEmail" : "etl@p.iam.gserviceaccount.com" } } } "#,
        true,
    ),
    // Truncated, empty, absent and null fields; null members.
    (
        r#"{"protoPayload":{"authenticationInfo":{"principalEmail":"wide@example.org"},"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{"fields":["a"],"fieldsTruncated":true,"reason":"JOB"}}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        true,
    ),
    (
        r#"{"protoPayload":{"authenticationInfo":null,"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{"fields":[]}}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        true,
    ),
    (
        r#"{"protoPayload":{"authenticationInfo":{"principalEmail":null},"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{"fields":null}}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        true,
    ),
    (
        r#"{"protoPayload":{"authenticationInfo":{},"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":null}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        true,
    ),
    (
        r#"{"protoPayload":{"authenticationInfo":{"principalEmail":""},"resourceName":null,"metadata":null},"timestamp":"2026-11-27T10:06:00Z"}"#,
        true,
    ),
    (
        r#"{"protoPayload":null,"timestamp":"2026-11-27T10:06:00Z"}"#,
        true,
    ),
    (
        r#"{"timestamp":"2026-11-27T10:07:00Z","textPayload":"another service"}"#,
        true,
    ),
    // A job inserted: a request of another method.
    (
        r#"{"protoPayload":{"authenticationInfo":{"principalEmail":"analyst@example.org"},"methodName":"google.cloud.bigquery.v2.JobService.InsertJob","resourceName":"projects/geo-prod/jobs/bquxjob_1","metadata":{"jobInsertion":{"reason":"JOB_INSERT_REQUEST","job":{"jobConfig":{"queryConfig":{"query":"SELECT \"a\" FROM t"}}}}}},"timestamp":"2026-11-27T10:00:00Z"}"#,
        true,
    ),
    // `metadataJson` beside `metadata` (which wins), or alone (read by serde).
    (
        r#"{"protoPayload":{"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{"fields":["a"]}},"metadataJson":"{}"},"timestamp":"2026-11-27T10:06:00Z"}"#,
        true,
    ),
    (
        r#"{"protoPayload":{"resourceName":"projects/p/datasets/d/tables/t","metadataJson":"{\"tableDataRead\":{\"fields\":[\"pop\"]}}"},"timestamp":"2026-11-27T10:07:00Z"}"#,
        false,
    ),
    (
        r#"{"protoPayload":{"resourceName":"projects/p/datasets/d/tables/t","metadataJson":"{}"},"timestamp":"2026-11-27T10:07:00Z"}"#,
        false,
    ),
    // Escapes in a field taken.
    (
        r#"{"protoPayload":{"authenticationInfo":{"principalEmail":"a\u0040b.org"},"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{"fields":["a"]}}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        false,
    ),
    (
        r#"{"protoPayload":{"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{"fields":["a\"b"]}}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        false,
    ),
    // Not ASCII.
    (
        r#"{"protoPayload":{"authenticationInfo":{"principalEmail":"jörg@example.org"},"resourceName":"projects/p/datasets/d/tables/straße","metadata":{"tableDataRead":{"fields":["größe.x","é"]}}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        true,
    ),
    // Keys twice: serde refuses a duplicate field, and ignores one it does not read.
    (
        r#"{"timestamp":"2026-11-27T10:06:00Z","timestamp":"2026-11-27T10:06:00Z"}"#,
        false,
    ),
    (
        r#"{"protoPayload":{"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{"fields":["a"],"fields":["b"]}}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        false,
    ),
    (
        r#"{"protoPayload":{"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":null,"tableDataRead":{}}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        false,
    ),
    (
        r#"{"protoPayload":{"authenticationInfo":{"principalEmail":"a","principalEmail":"b"}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        false,
    ),
    (
        r#"{"severity":"INFO","severity":"DEBUG","protoPayload":{"status":{},"status":{}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        true,
    ),
    // Values of another type, no instant, no resource for a read.
    (
        r#"{"protoPayload":{"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{"fieldsTruncated":null}}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        false,
    ),
    (
        r#"{"protoPayload":{"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{"fields":[null]}}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        false,
    ),
    (
        r#"{"protoPayload":{"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{"fields":"a"}}},"timestamp":"2026-11-27T10:06:00Z"}"#,
        false,
    ),
    (
        r#"{"protoPayload":["a"],"timestamp":"2026-11-27T10:06:00Z"}"#,
        false,
    ),
    (
        r#"{"protoPayload":{"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{}}}}"#,
        false,
    ),
    (
        r#"{"timestamp":"2026-11-27T10:07:00Z","protoPayload":{"metadata":{"tableDataRead":{}}}}"#,
        false,
    ),
    (r#"{"timestamp":1764237600}"#, false),
    (r#"{"timestamp":"now"}"#, false),
    (r#"[1, 2]"#, false),
    (r#"{"timestamp":"2026-11-27T10:07:00Z"} x"#, false),
    (r#"{"timestamp":"2026-11-27T10:07:00Z","x":tru}"#, false),
];

#[test]
fn the_walk_and_serde_read_these_entries_alike() {
    for (entry, must_take) in ENTRIES {
        let (got, want, taken) = both(entry);
        assert_eq!(got, want, "{entry}");
        assert_eq!(taken, *must_take, "taken by the walk: {entry}");
    }
    // The full entry cut short at every byte: never a request, never a panic.
    for cut in 1..FULL.len() {
        let (got, want, taken) = both(&FULL[..cut]);
        assert_eq!(got, want, "{}", &FULL[..cut]);
        assert!(!taken && got.is_err(), "{}", &FULL[..cut]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Entries made of pieces (any order, any whitespace, nulls and absent members, nested
    /// fields, truncated lists, escapes, values of every kind where nothing is read, a key
    /// twice, cut short): the reader gives serde's answer, and the walk takes every entry
    /// without a piece it leaves to serde.
    #[test]
    fn entries_of_any_pieces_read_as_serde_reads_them(
        at in prop::sample::select(vec![
            "\"2026-11-27T10:00:00.123456Z\"",
            "\"2026-11-27 10:00:00+01:00\"",
            "\"2026-11-27T10:00:00.123456Z\"",
            "\"2026-11-27T10:00:00\\u005a\"",
            "null",
        ]),
        email in prop::sample::select(vec![
            "\"analyst@example.org\"", "\"\"", "null", "\"j\\u00f6rg@example.org\"", "\"jörg@x\"",
        ]),
        resource in prop::sample::select(vec![
            "\"projects/geo-prod/datasets/gis/tables/roads_v1\"", "\"\"", "null",
            "\"projects/geo-prod/jobs/bquxjob_1\"", "\"projects/geo-prod/datasets/gis/tables/towns_v2\"",
        ]),
        fields in prop::option::of(prop::collection::vec(
            prop::sample::select(vec!["\"name\"", "\"geom\"", "\"address.city\"", "\"\"", "\"a\\\"b\""]),
            0..4,
        )),
        truncated in prop::sample::select(vec!["", "true", "false"]),
        shape in prop_oneof![3 => Just(0usize), 1 => Just(2), 1 => Just(3), 1 => Just(4)],
        extra in prop::collection::vec(other_value(true), 0..3),
        order in Just((0..7).collect::<Vec<usize>>()).prop_shuffle(),
        twice in prop::option::weighted(0.2, 0usize..4),
        space in prop::sample::select(vec!["", " ", "\n\t"]),
        cut in prop::option::weighted(0.15, 0usize..700),
    ) {
        let j = |parts: Vec<String>| format!("{{{space}{}{space}}}", parts.join(&format!("{space},{space}")));
        let mut read = vec![];
        if let Some(f) = &fields {
            read.push(format!("\"fields\":{space}[{}]", f.join(",")));
        }
        if !truncated.is_empty() {
            read.push(format!("\"fieldsTruncated\":{truncated}"));
        }
        read.push("\"reason\":\"JOB\"".to_string());
        // The metadata: a tableDataRead, another kind, null, absent, or as `metadataJson`.
        let metadata = match shape {
            0 | 1 => Some(format!("\"metadata\":{}", j(vec![
                "\"@type\":\"type.googleapis.com/google.cloud.audit.BigQueryAuditMetadata\"".into(),
                format!("\"tableDataRead\":{}", j(read)),
            ]))),
            2 => Some("\"metadata\":{\"jobInsertion\":{\"reason\":\"JOB_INSERT_REQUEST\"}}".to_string()),
            3 => None,
            _ => Some(format!("\"metadataJson\":{}", serde_json::to_string(&j(vec![format!("\"tableDataRead\":{}", j(read))])).unwrap())),
        };
        let mut proto = vec![
            format!("\"authenticationInfo\":{}", j(vec![format!("\"principalEmail\":{email}")])),
            format!("\"resourceName\":{resource}"),
            "\"requestMetadata\":{\"callerIp\":\"10.0.0.1\"}".to_string(),
        ];
        proto.extend(metadata);
        for (i, x) in extra.iter().enumerate() {
            proto.push(format!("\"x{i}\":{x}"));
        }
        let members = [
            format!("\"timestamp\":{space}{at}"),
            format!("\"protoPayload\":{space}{}", j(proto.clone())),
            "\"insertId\":\"1a2b3c\"".to_string(),
            "\"resource\":{\"type\":\"bigquery_dataset\",\"labels\":{\"dataset_id\":\"gis\"}}".to_string(),
            format!("\"severity\":{}", extra.first().map_or("\"INFO\"", String::as_str)),
        ];
        let mut ordered: Vec<String> = order.iter().filter_map(|i| members.get(*i).cloned()).collect();
        // A key twice: the instant, the payload, or one of the payload's own.
        match twice {
            Some(0) => ordered.push(members[0].clone()),
            Some(1) => ordered.push(members[1].clone()),
            Some(2) => {
                let mut p = proto.clone();
                p.push(proto[1].clone());
                ordered.push(format!("\"protoPayload\":{}", j(p)));
                ordered.retain(|m| m != &members[1]);
            }
            _ => {}
        }
        let mut entry = j(ordered);
        if let Some(mut c) = cut.filter(|c| *c < entry.len()) {
            while !entry.is_char_boundary(c) {
                c -= 1;
            }
            entry.truncate(c);
        }
        let (got, want, taken) = both(&entry);
        prop_assert_eq!(&got, &want, "{}", entry);
        let read_doubt = shape < 2 && fields.as_ref().is_some_and(|f| f.iter().any(|x| x.contains('\\')));
        let doubt = at.contains('\\')
            || at == "null"
            || email.contains('\\')
            || read_doubt
            || shape == 4
            || matches!(twice, Some(0..=2))
            || cut.is_some();
        // A read without a resource is an error, which serde words.
        let refused = shape < 2 && matches!(resource, "\"\"" | "null");
        if !doubt && !refused {
            prop_assert!(taken, "the walk gave up on {}: {:?}", entry, want);
        }
    }
}
