//! The warehouses' access records as consumption sources, end to end: Snowflake's
//! `ACCESS_HISTORY`, BigQuery's Data Access audit log and Databricks' column lineage, each
//! exported as its vendor documents it, read through `[[consumption.source]]`, their users
//! mapped to consumers by `identities`; and their keys refused by `check` where they stand.
//!
//! The lines are written from the vendors' field references: Snowflake's "ACCESS_HISTORY
//! view" (Account Usage: `query_start_time` as `2022-01-25 16:17:47.388 +0000`, `user_name`,
//! `base_objects_accessed` with `objectName`, `objectDomain`, `columns[].columnName`); Google
//! Cloud's `LogEntry`, `AuditLog` and `BigQueryAuditMetadata.TableDataRead` (`timestamp`,
//! `protoPayload.authenticationInfo.principalEmail`, `resourceName`, `metadata.tableDataRead.
//! fields`); Databricks' "Lineage system tables reference" (`system.access.column_lineage`:
//! `source_table_full_name`, `source_column_name`, `source_type`, `created_by`, `event_time`).

use crate::common::world;
use crate::common::Rows;

use world::World;

/// A store whose only consumption source is `table`, its log `file` at `log` with `text`,
/// and a consumer `warehouse-analyst` whose identity is `who`.
fn world_with(table: &str, log: &str, text: &str, who: &str) -> World {
    let w = World::new(25);
    w.read_only_sources(table);
    w.append(
        "consumers.toml",
        &format!(
            "\n[consumers.warehouse-analyst]\ncontacts = [\"analyst@example.org\"]\n\
             identities = [\"{who}\"]\n"
        ),
    );
    w.write(log, text);
    w
}

/// The analyst's standing: (status, version, last read, reads).
fn analyst(w: &World) -> (String, Option<String>, Option<String>, u64) {
    let run = w.consumers_json("2026-11-29");
    let json = run.json();
    let c = json["consumers"]
        .rows()
        .find(|c| c["consumer"] == "warehouse-analyst")
        .unwrap_or_else(|| panic!("no warehouse-analyst in {json}"));
    (
        c["status"].as_str().unwrap().to_string(),
        world::text(c, "version"),
        world::text(c, "last_read"),
        c["reads"].as_u64().unwrap(),
    )
}

fn standing(
    status: &str,
    version: &str,
    at: &str,
    reads: u64,
) -> (String, Option<String>, Option<String>, u64) {
    (
        status.to_string(),
        Some(version.to_string()),
        Some(at.to_string()),
        reads,
    )
}

#[test]
fn snowflake_access_history_as_json_lines_reports_the_newest_read() {
    // COPY INTO a stage as JSON from `SELECT * FROM SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY`:
    // upper-case keys, the arrays as JSON. A join reads roads 1.1.0 and a stage; the next day
    // the analyst reads 2.0.0; another user reads 1.0.0.
    let rows = [
        r#"{"QUERY_ID":"a0fda135-d678-4184-942b-c3411ae8d1ce","QUERY_START_TIME":"2026-11-26 16:17:47.388 +0000","USER_NAME":"JSMITH","BASE_OBJECTS_ACCESSED":[{"columns":[{"columnId":68610,"columnName":"NAME"}],"objectDomain":"Table","objectId":66564,"objectName":"GIS.PUBLIC.ROADS_V1.1.0"},{"objectDomain":"Stage","objectId":1,"objectName":"GIS.PUBLIC.UPLOADS"}]}"#,
        r#"{"QUERY_ID":"b1","QUERY_START_TIME":"2026-11-27 09:30:00.000 +0000","USER_NAME":"JSMITH","BASE_OBJECTS_ACCESSED":[{"columns":[{"columnId":68611,"columnName":"GEOM"}],"objectDomain":"Table","objectId":66570,"objectName":"GIS.PUBLIC.ROADS_V2.0.0"}]}"#,
        r#"{"QUERY_ID":"c2","QUERY_START_TIME":"2026-11-27 10:00:00.000 +0000","USER_NAME":"OTHER_USER","BASE_OBJECTS_ACCESSED":[{"objectDomain":"Table","objectId":66500,"objectName":"GIS.PUBLIC.ROADS_V1.0.0"}]}"#,
        r#"{"QUERY_ID":"d3","QUERY_START_TIME":"not a time","USER_NAME":"JSMITH","BASE_OBJECTS_ACCESSED":[]}"#,
    ];
    let w = world_with(
        "[[consumption.source]]\npath = \"consumption/snowflake/*.json\"\n\
         format = \"snowflake-access-history\"\nmatch = \"gis.public.{dataset}_v{contract}\"\n",
        "consumption/snowflake/access_history_0_0_0.json",
        &(rows.join("\n") + "\n"),
        "JSMITH",
    );
    assert_eq!(
        analyst(&w),
        standing("migrated", "2.0.0", "2026-11-27T09:30:00Z", 2)
    );
    let run = w.consumers_json("2026-11-29");
    run.assert_stderr_has("access_history_0_0_0.json:4:");
}

#[test]
fn snowflake_access_history_as_csv_with_json_text_reports_the_newest_read() {
    // The same view unloaded as CSV with a header: the ARRAY column is JSON text in quotes.
    let csv = "QUERY_ID,QUERY_START_TIME,USER_NAME,BASE_OBJECTS_ACCESSED\n\
               q1,2026-11-26 16:17:47.388 +0000,JSMITH,\"[{\"\"objectDomain\"\":\"\"Table\"\",\"\"objectName\"\":\"\"GIS.PUBLIC.ROADS_V2.0.0\"\",\"\"columns\"\":[{\"\"columnName\"\":\"\"NAME\"\"}]}]\"\n\
               q2,2026-11-20 08:00:00.000 +0000,JSMITH,\"[{\"\"objectDomain\"\":\"\"Table\"\",\"\"objectName\"\":\"\"GIS.PUBLIC.ROADS_V1.1.0\"\"}]\"\n";
    let w = world_with(
        "[[consumption.source]]\npath = \"consumption/snowflake/*.csv\"\n\
         format = \"snowflake-access-history\"\nmatch = \"gis.public.{dataset}_v{contract}\"\n",
        "consumption/snowflake/access_history.csv",
        csv,
        "JSMITH",
    );
    assert_eq!(
        analyst(&w),
        standing("migrated", "2.0.0", "2026-11-26T16:17:47.388Z", 2)
    );
}

#[test]
fn bigquery_table_data_reads_report_the_newest_read_and_other_entries_are_none() {
    // A Cloud Logging sink's JSON Lines: two tableDataRead entries of the line-1 and line-2
    // tables (`roads_v1`, `roads_v2`: a `{line}` template), and the job's own entry, which
    // is no read of a table.
    let entry = |at: &str, who: &str, resource: &str, metadata: &str| {
        format!(
            r#"{{"insertId":"x","logName":"projects/geo-prod/logs/cloudaudit.googleapis.com%2Fdata_access","protoPayload":{{"@type":"type.googleapis.com/google.cloud.audit.AuditLog","authenticationInfo":{{"principalEmail":"{who}"}},"methodName":"google.cloud.bigquery.v2.JobService.InsertJob","resourceName":"{resource}","serviceName":"bigquery.googleapis.com","metadata":{{"@type":"type.googleapis.com/google.cloud.audit.BigQueryAuditMetadata",{metadata}}}}},"severity":"INFO","timestamp":"{at}"}}"#
        ) + "\n"
    };
    let table = |n: u32| format!("projects/geo-prod/datasets/gis/tables/roads_v{n}");
    let read = r#""tableDataRead":{"fields":["name","geom"],"reason":"JOB","jobName":"projects/geo-prod/jobs/j1"}"#;
    let log = entry(
        "2026-11-20T08:00:00.123456Z",
        "analyst@example.org",
        &table(1),
        read,
    ) + &entry(
        "2026-11-27T10:00:00.5Z",
        "analyst@example.org",
        &table(2),
        read,
    ) + &entry(
        "2026-11-28T10:00:00Z",
        "analyst@example.org",
        "projects/geo-prod/jobs/j2",
        r#""jobInsertion":{"reason":"JOB_INSERT_REQUEST"}"#,
    );
    let w = world_with(
        "[[consumption.source]]\npath = \"consumption/bq/*.json\"\nformat = \"bigquery-audit\"\n\
         match = \"projects/geo-prod/datasets/gis/tables/{dataset}_v{line}\"\n",
        "consumption/bq/cloudaudit.googleapis.com_data_access_20261127.json",
        &log,
        "analyst@example.org",
    );
    assert_eq!(
        analyst(&w),
        standing("migrated", "2.0.0", "2026-11-27T10:00:00.500Z", 2)
    );
}

#[test]
fn databricks_column_lineage_rows_of_one_query_are_one_read() {
    // A CSV download of `SELECT * FROM system.access.column_lineage`: three rows (three
    // columns) of one query of roads 2.0.0 within seconds, one read; a row of a path source.
    let head = "account_id,metastore_id,workspace_id,entity_type,entity_id,source_table_full_name,source_path,source_type,source_column_name,target_table_full_name,target_column_name,created_by,event_time,event_date\n";
    let row = |table: &str, kind: &str, column: &str, at: &str| {
        format!(
            "7af234db-66d7-4db3-bbf0-956098224879,5a31ba44-bbf4-4174-bf33-e1fa078e6765,123456789012345,NOTEBOOK,23098402394234,{table},s3://mybucket/table1,{kind},{column},,,analyst@example.org,{at},2026-11-27\n"
        )
    };
    let mut csv = head.to_string();
    csv += &row(
        "main.gis.roads_v1",
        "TABLE",
        "name",
        "2026-11-20T08:00:00.000Z",
    );
    for (column, at) in [("name", "00"), ("geom", "01"), ("pop_est", "02")] {
        csv += &row(
            "main.gis.roads_v2",
            "TABLE",
            column,
            &format!("2026-11-27T10:00:{at}.000Z"),
        );
    }
    csv += &row("", "PATH", "id", "2026-11-28T10:00:00.000Z");
    let w = world_with(
        "[[consumption.source]]\npath = \"consumption/dbx/*.csv\"\n\
         format = \"databricks-column-lineage\"\nmatch = \"main.gis.{dataset}_v{line}\"\n",
        "consumption/dbx/column_lineage.csv",
        &csv,
        "analyst@example.org",
    );
    assert_eq!(
        analyst(&w),
        standing("migrated", "2.0.0", "2026-11-27T10:00:02Z", 2)
    );
}

#[test]
fn keys_a_warehouse_source_cannot_read_are_refused_by_check_at_their_keys() {
    let w = World::new(25);
    let tables = "[[consumption.source]]\npath = \"sf/*.json\"\n\
                  format = \"snowflake-access-history\"\n\
                  match = \"gis.public.{dataset}_v{contract}\"\nprincipal = \"role_name\"\n\n\
                  [[consumption.source]]\npath = \"bq/*.json\"\nformat = \"bigquery-audit\"\n\
                  match = \"projects/p/datasets/gis/tables/{dataset}_v{lines}\"\n\n\
                  [[consumption.source]]\npath = \"dbx/*.csv\"\n\
                  format = \"databricks-column-lineage\"\nmatch = \"main.gis.{dataset}_v{line}\"\n\
                  pattern = '$remote_addr'\n";
    w.assert_sources_refused(tables, |config| {
        let at = |prefix: &str| format!("contracts.toml:{}:", world::line_of(config, prefix));
        vec![
            at("principal = ") + "13",
            "\"role_name\"".to_string(),
            "`user_name`".to_string(),
            at("match = \"projects/"),
            "`{lines}` is not a placeholder".to_string(),
            at("pattern = "),
            "pattern applies to the combined format, not to databricks-column-lineage".to_string(),
        ]
    });
}

#[test]
fn databricks_column_lineage_as_parquet_reports_the_newest_read() {
    use arrow_array::types::TimestampMicrosecondType;
    use arrow_array::{ArrayRef, PrimitiveArray, RecordBatch, StringArray};
    use std::sync::Arc;
    // The system table written as Parquet (`df.write.parquet`): its own types, `event_time` a
    // timestamp. Two columns of roads 1.1.0, then one of 2.0.0 the next day.
    let us = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .timestamp_micros()
    };
    let strings = |v: &[&str]| Arc::new(StringArray::from(v.to_vec())) as ArrayRef;
    let batch = RecordBatch::try_from_iter([
        ("account_id", strings(&["7af234db"; 3])),
        (
            "source_table_full_name",
            strings(&[
                "main.gis.roads_v1",
                "main.gis.roads_v1",
                "main.gis.roads_v2",
            ]),
        ),
        ("source_type", strings(&["TABLE"; 3])),
        ("source_column_name", strings(&["name", "geom", "name"])),
        ("created_by", strings(&["analyst@example.org"; 3])),
        (
            "event_time",
            Arc::new(
                PrimitiveArray::<TimestampMicrosecondType>::from(vec![
                    us("2026-11-26T08:00:00Z"),
                    us("2026-11-26T08:00:00.250Z"),
                    us("2026-11-27T09:15:00Z"),
                ])
                .with_timezone("UTC"),
            ) as ArrayRef,
        ),
    ])
    .unwrap();
    let mut file = Vec::new();
    let mut writer = parquet::arrow::ArrowWriter::try_new(&mut file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let w = world_with(
        "[[consumption.source]]\npath = \"consumption/dbx/*.parquet\"\n\
         format = \"databricks-column-lineage\"\nmatch = \"main.gis.{dataset}_v{line}\"\n",
        "consumption/dbx/.keep",
        "",
        "analyst@example.org",
    );
    std::fs::write(w.root().join("consumption/dbx/part-00000.parquet"), file).unwrap();
    assert_eq!(
        analyst(&w),
        standing("migrated", "2.0.0", "2026-11-27T09:15:00Z", 2)
    );
}

#[test]
fn the_columns_of_a_snowflake_read_decide_who_uses_an_attribute() {
    // roads 1.1.0 promises pop_est. FLOOD_SVC's query read POP_EST (Snowflake's upper case),
    // ATLAS_SVC's only NAME; ARCHIVE_SVC's row names the view without columns, which cannot
    // tell. None of them has `uses`.
    let w = World::new(25);
    w.write(
        "contracts/roads/1.1.0.toml",
        "dataset = \"roads\"\nversion = \"1.1.0\"\nsupersedes = \"1.0.0\"\n\
         valid_from = 2026-03-01\n[clauses]\ncrs = \"EPSG:4326\"\n\
         optional_attributes = { pop_est = \"float64\", name = \"string\" }\n",
    );
    w.read_only_sources(
        "[[consumption.source]]\npath = \"consumption/snowflake/*.json\"\n\
         format = \"snowflake-access-history\"\nmatch = \"gis.public.{dataset}_v{line}\"\n",
    );
    let ids = |id: &str| Some(format!("identities = [\"{id}\"]"));
    let (flood, atlas, archive) = (ids("FLOOD_SVC"), ids("ATLAS_SVC"), ids("ARCHIVE_SVC"));
    w.write(
        "consumers.toml",
        &world::registry(
            world::FLOOD_ONCALL,
            [
                flood.as_deref(),
                atlas.as_deref(),
                Some(""),
                archive.as_deref(),
            ],
        ),
    );
    let row = |at: &str, user: &str, columns: &str| {
        format!(
            r#"{{"QUERY_ID":"q-{user}","QUERY_START_TIME":"{at} +0000","USER_NAME":"{user}","BASE_OBJECTS_ACCESSED":[{{{columns}"objectDomain":"View","objectId":66564,"objectName":"GIS.PUBLIC.ROADS_V1"}}]}}"#
        )
    };
    let rows = [
        row(
            "2026-11-26 16:17:47.388",
            "FLOOD_SVC",
            r#""columns":[{"columnId":1,"columnName":"NAME"},{"columnId":2,"columnName":"POP_EST"}],"#,
        ),
        row(
            "2026-11-27 09:30:00.000",
            "ATLAS_SVC",
            r#""columns":[{"columnId":1,"columnName":"NAME"}],"#,
        ),
        row("2026-11-27 10:00:00.000", "ARCHIVE_SVC", ""),
    ];
    w.write(
        "consumption/snowflake/access_history.json",
        &(rows.join("\n") + "\n"),
    );
    let run = w.run(
        "2026-11-29",
        &[
            "--format",
            "json",
            "can-remove",
            "roads",
            "optional_attributes.pop_est",
        ],
    );
    run.assert_code(1);
    let j = run.json();
    let mut uses: Vec<(String, String)> = j["consumers"]
        .rows()
        .map(|c| {
            (
                c["consumer"].as_str().unwrap().to_string(),
                c["use"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    uses.sort();
    assert_eq!(
        uses,
        world::sorted(world::pairs(&[
            ("flood-model", "observed"),
            ("atlas", "not-seen"),
            ("archive", "unknown"),
            ("router", "not-seen"),
        ])),
        "{j:#}"
    );
    assert_eq!(j["users"][0]["last_read"], "2026-11-26T16:17:47.388Z");
}
