//! The file read on several threads gives what one line at a time gives: the same hits in the
//! same order, the same malformed lines with the same numbers, the same counts and examples.
//! Blocks and chunks are made a few bytes long, so that a file of a few lines crosses every
//! kind of boundary: inside a CSV record's quoted line ends, at a blank line, before and
//! after the header.

use proptest::prelude::*;

use super::super::{AccessKeys, AccessLog, AccessStats, LineError};
use super::Split;
use crate::LogFormat;

/// What a read of `file` hands out: each hit as text, each malformed line, the counts and
/// the outcome.
type Heard = (Vec<String>, Vec<(u64, String)>, AccessStats, String);

fn heard(log: &AccessLog, file: &[u8], split: Option<Split>) -> Heard {
    let mut hits = Vec::new();
    let mut bad = Vec::new();
    let mut stats = AccessStats::default();
    let on_hit = |h: &super::Hit<'_>| hits.push(format!("{h:?}"));
    let on_bad = |e: LineError| bad.push((e.line, e.reason));
    let outcome = match split {
        Some(split) => log.hits_split(file, split, &mut stats, on_hit, on_bad),
        None => log.hits_one_by_one(file, &mut stats, on_hit, on_bad),
    };
    let outcome = outcome.map_err(|e| e.to_string());
    (hits, bad, stats, format!("{outcome:?}"))
}

fn log(format: LogFormat, template: &str) -> AccessLog {
    let keys = AccessKeys {
        templates: vec![template],
        same_read_seconds: 60,
        ..AccessKeys::default()
    };
    AccessLog::compile(format, &keys).expect("the test's source compiles")
}

/// A file of `format`: its first line (a CSV header, or nothing) and then the pool's lines
/// picked by `picks`; each line a template whose `{u}` and `{s}` are a user and a second.
fn file(head: &str, pool: &[&str], picks: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut out = String::from(head);
    for &(i, u, s) in picks {
        let line = pool[i % pool.len()]
            .replace("{u}", &(u % 4).to_string())
            .replace("{s}", &format!("{:02}", s % 60));
        out.push_str(&line);
        out.push('\n');
    }
    out.into_bytes()
}

// Lines of each format, written as in each format's own tests (from the vendors' field
// references), with junk among them.
const S3: &[&str] = &[
    "79a59df9 open-data [06/Feb/2019:00:00:{s} +0000] 203.0.113.8 user{u} 7B4A0FAB REST.GET.OBJECT datasets/roads/v2.0.0/roads.parquet \"GET /datasets/roads/v2.0.0/roads.parquet HTTP/1.1\" 206 - 16384 104857600 25 20 \"-\" \"GDAL/3.8.4\" - hostid SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader open-data.s3.eu-west-1.amazonaws.com TLSv1.3 - -",
    "79a59df9 open-data [06/Feb/2019:00:01:{s} +0000] 203.0.113.8 user{u} 7B4A0FAB REST.GET.BUCKET - \"GET /?list-type=2 HTTP/1.1\" 200 - 512 - 25 20 \"-\" \"aws-cli\" - hostid SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader open-data.s3.eu-west-1.amazonaws.com TLSv1.3 - -",
    "79a59df9 open-data [06/Feb/2019:00:02:{s} +0000] 203.0.113.8 user{u} 7B4A0FAB REST.GET.OBJECT other/x.csv \"GET /other/x.csv HTTP/1.1\" 200 - 5 5 25 20 \"-\" \"curl\" - hostid SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader open-data.s3.eu-west-1.amazonaws.com TLSv1.3 - -",
    "not a line of S3",
    "",
];

const COMBINED: &[&str] = &[
    "192.0.2.9 - user{u} [10/Oct/2000:13:55:{s} +0000] \"GET /datasets/roads/v2.0.0/roads.parquet HTTP/1.1\" 200 5 \"-\" \"curl/8.5.0\"",
    "192.0.2.{u} - - [10/Oct/2000:13:56:{s} +0000] \"HEAD /datasets/roads/v1.0.0/roads.parquet HTTP/1.1\" 404 0 \"-\" \"-\"",
    "198.51.100.4 - - [10/Oct/2000:13:57:{s} +0000] \"\\x16\\x03\" 400 157 \"-\" \"-\"",
    "not a combined line",
    "   ",
];

const SNOWFLAKE_JSON: &[&str] = &[
    r#"{"QUERY_START_TIME":"2026-11-27 10:00:{s}.000 +0000","USER_NAME":"USER_{u}","BASE_OBJECTS_ACCESSED":[{"columns":[{"columnId":1,"columnName":"NAME"},{"columnId":2,"columnName":"POP_EST"}],"objectDomain":"View","objectId":7,"objectName":"GIS.PUBLIC.ROADS_V1"}]}"#,
    r#"{"QUERY_START_TIME":"2026-11-27 10:01:{s}.000 +0000","USER_NAME":"USER_{u}","BASE_OBJECTS_ACCESSED":[{"objectDomain":"Table","objectName":"GIS.PUBLIC.ROADS_V2"},{"objectDomain":"Table","objectName":"GIS.PUBLIC.TOWNS_V1","columns":[{"columnName":"GEOM"}]}]}"#,
    r#"{"QUERY_START_TIME":"not a time","USER_NAME":"USER_{u}"}"#,
    r#"{"QUERY_START_TIME":"2026-11-27 10:02:{s}.000 +0000","USER_NAME":"USER_{u}","BASE_OBJECTS_ACCESSED":[]}"#,
    "{ cut short",
    "",
];

const SNOWFLAKE_CSV_HEAD: &str = "QUERY_ID,QUERY_START_TIME,USER_NAME,BASE_OBJECTS_ACCESSED\n";
const SNOWFLAKE_CSV: &[&str] = &[
    "q1,2026-11-27 10:00:{s}.000 +0000,USER_{u},\"[{\"\"objectDomain\"\":\"\"Table\"\",\"\"objectName\"\":\"\"GIS.PUBLIC.ROADS_V2\"\",\"\"columns\"\":[{\"\"columnName\"\":\"\"NAME\"\"}]}]\"",
    // One cell spread over lines: the record's line ends are inside quotes.
    "q2,2026-11-27 10:01:{s}.000 +0000,USER_{u},\"[\n  {\"\"objectDomain\"\": \"\"Table\"\",\n   \"\"objectName\"\": \"\"GIS.PUBLIC.ROADS_V1\"\"}\n]\"",
    // A quote inside an unquoted field is a character, not the start of a quoted field.
    "q\"3,2026-11-27 10:02:{s}.000 +0000,USER_{u},",
    "q4,not a time,USER_{u},",
    "",
];

const BIGQUERY: &[&str] = &[
    r#"{"protoPayload":{"authenticationInfo":{"principalEmail":"user{u}@example.org"},"resourceName":"projects/geo-prod/datasets/gis/tables/roads_v1","metadata":{"tableDataRead":{"fields":["name","geom"],"reason":"JOB"}}},"timestamp":"2026-11-27T10:00:{s}.123456Z"}"#,
    r#"{"protoPayload":{"authenticationInfo":{"principalEmail":"user{u}@example.org"},"resourceName":"projects/geo-prod/jobs/j1","metadata":{"jobChange":{}}},"timestamp":"2026-11-27T10:01:{s}Z"}"#,
    r#"{"protoPayload":{"resourceName":"projects/geo-prod/datasets/gis/tables/roads_v2","metadata":{"tableDataRead":{"fieldsTruncated":true}}},"timestamp":"2026-11-27T10:02:{s}Z"}"#,
    "[1, 2",
    "",
];

const DATABRICKS_HEAD: &str = "source_table_full_name,source_column_name,source_type,target_table_full_name,target_column_name,created_by,event_time\n";
const DATABRICKS: &[&str] = &[
    "main.gis.roads_v1,name,TABLE,,,user{u}@example.org,2026-11-27T10:00:{s}.000Z",
    "main.gis.roads_v1,\"pop\nest\",TABLE,,,user{u}@example.org,2026-11-27T10:01:{s}.000Z",
    ",\"id,raw\",PATH,main.gis.roads_v1,id,etl@example.org,2026-11-27 09:00:{s}",
    "main.gis.towns,,TABLE,,,user{u}@example.org,",
    "main.gis.ro\"ads_v2,geom,TABLE,,,user{u}@example.org,2026-11-27T10:02:{s}Z",
    "",
];

/// Each format with its template, its file's first line, and its pool of lines.
fn cases() -> Vec<(
    LogFormat,
    &'static str,
    &'static str,
    &'static [&'static str],
)> {
    use LogFormat::*;
    vec![
        (S3Access, "datasets/{dataset}/v{contract}/**", "", S3),
        (Combined, "/datasets/{dataset}/v{contract}/**", "", COMBINED),
        (
            SnowflakeAccessHistory,
            "gis.public.{dataset}_v{line}",
            "",
            SNOWFLAKE_JSON,
        ),
        (
            SnowflakeAccessHistory,
            "gis.public.{dataset}_v{line}",
            SNOWFLAKE_CSV_HEAD,
            SNOWFLAKE_CSV,
        ),
        (
            BigqueryAudit,
            "projects/geo-prod/datasets/gis/tables/{dataset}_v{line}",
            "",
            BIGQUERY,
        ),
        (
            DatabricksColumnLineage,
            "main.gis.{dataset}_v{line}",
            DATABRICKS_HEAD,
            DATABRICKS,
        ),
    ]
}

fn tiny(block: usize, chunk: usize, workers: usize) -> Split {
    Split {
        block,
        chunk,
        workers,
        min_parallel: 0,
    }
}

#[test]
fn every_format_read_in_pieces_hears_what_one_line_at_a_time_hears() {
    let picks: Vec<(usize, u8, u8)> = (0..60)
        .map(|i| (i * 7 % 11, i as u8, (i * 13) as u8))
        .collect();
    for (format, template, head, pool) in cases() {
        let log = log(format, template);
        let file = file(head, pool, &picks);
        let alone = heard(&log, &file, None);
        assert!(
            alone.0.len() >= 5,
            "{format}: the file has hits: {:?}",
            alone.0
        );
        assert!(
            !alone.1.is_empty(),
            "{format}: the file has malformed lines"
        );
        for split in [
            tiny(64, 1, 3),
            tiny(300, 40, 2),
            tiny(4096, 700, 4),
            tiny(1 << 20, 1 << 16, 2),
        ] {
            assert_eq!(heard(&log, &file, Some(split)), alone, "{format} {split:?}");
        }
    }
}

#[test]
fn a_small_file_and_a_file_of_no_whole_line_are_read_one_line_at_a_time() {
    let log = log(
        LogFormat::DatabricksColumnLineage,
        "main.gis.{dataset}_v{line}",
    );
    let machine = Split::machine();
    for file in [
        &b""[..],
        b"\n\n",
        b"main.gis.roads_v1,name",
        DATABRICKS_HEAD.as_bytes(),
    ] {
        assert_eq!(heard(&log, file, Some(machine)), heard(&log, file, None));
        assert_eq!(
            heard(&log, file, Some(tiny(4, 2, 2))),
            heard(&log, file, None)
        );
    }
}

proptest! {
    #[test]
    fn any_file_of_any_format_in_any_pieces_hears_the_same(
        case in 0usize..6,
        picks in proptest::collection::vec((0usize..16, 0u8..8, 0u8..60), 0..40),
        block in 1usize..600,
        chunk in 1usize..200,
        workers in 1usize..4,
    ) {
        let (format, template, head, pool) = cases().swap_remove(case);
        let log = log(format, template);
        let file = file(head, pool, &picks);
        prop_assert_eq!(heard(&log, &file, Some(tiny(block, chunk, workers))), heard(&log, &file, None));
    }
}
