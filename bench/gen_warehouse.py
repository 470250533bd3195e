#!/usr/bin/env python3
"""The warehouses' access records, generated in the shapes their exports have, for
bench/warehouse.sh: each of `snowflake.jsonl` (Snowflake ACCOUNT_USAGE.ACCESS_HISTORY unloaded
as JSON Lines: upper-case keys, BASE_OBJECTS_ACCESSED with columns, DIRECT_OBJECTS_ACCESSED
alike), `bigquery.jsonl` (Cloud Logging's Data Access entries of BigQuery as exported to JSON
Lines: a LogEntry with protoPayload.metadata.tableDataRead.fields, and job entries that are no
read) and `databricks.csv` (system.access.column_lineage downloaded as CSV: one row per column
read, the rows of one query within a second).

A month (November 2026) of ENTRIES records per format, by USERS users, each reading the view of
roads line 1 or 2 (GIS.PUBLIC.ROADS_V1 / roads_v1 / main.gis.roads_v1) or other tables;
four users in five name `pop_est` in a quarter of their reads. The records are in time order, as the exports are.

Usage: gen_warehouse.py OUT_DIR [--entries N] [--users N] [--seed S] [--formats F,...]
Prints, per format, the number of users seen reading roads and of those reading pop_est (the
answer a scan must find), as JSON.
"""
import argparse
import json
import os
import random
import uuid
from datetime import datetime, timedelta, timezone

COLUMNS = ["name", "geom", "pop_est", "iso_a3", "continent", "gdp_md_est", "admin", "type"]
OTHER = ["orders", "customers", "rivers", "lakes", "parcels"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, default=10_000_000)
    ap.add_argument("--users", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--formats", default="snowflake,bigquery,databricks",
                    help="which files to write, comma-separated (each is gigabytes at 10 M)")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    users = [f"user_{i:04d}" for i in range(a.users)]
    line_of = {u: (1 if rnd.random() < 0.4 else 2) for u in users}
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    step = 28 * 86400 / a.entries
    truth = {}

    def reads(i):
        """The i-th record: (instant, user, table or None for another one, line, columns)."""
        t = start + timedelta(seconds=i * step)
        u = users[rnd.randrange(len(users))]
        if rnd.random() < 0.3:
            return t, u, rnd.choice(OTHER), None, rnd.sample(COLUMNS, 2)
        cols = rnd.sample([c for c in COLUMNS if c != "pop_est"], rnd.randint(1, 4))
        # A fifth of the users never read pop_est; the others in a quarter of their reads.
        if int(u[5:]) % 5 and rnd.random() < 0.25:
            cols.append("pop_est")
        return t, u, "roads", line_of[u], cols

    def seen(fmt, u, cols):
        r = truth.setdefault(fmt, {}).setdefault(u, False)
        truth[fmt][u] = r or "pop_est" in cols

    formats = a.formats.split(",")
    with open(os.path.join(a.out, "snowflake.jsonl") if "snowflake" in formats else os.devnull, "w") as f:
        for i in range(a.entries if "snowflake" in formats else 0):
            t, u, table, line, cols = reads(i)
            name = f"GIS.PUBLIC.ROADS_V{line}" if line else f"GIS.PUBLIC.{table.upper()}"
            if line:
                seen("snowflake", u.upper(), cols)
            objs = [{
                "columns": [{"columnId": 1000 + COLUMNS.index(c), "columnName": c.upper()} for c in cols],
                "objectDomain": "View" if line else "Table",
                "objectId": 66560 + (line or 9),
                "objectName": name,
            }]
            f.write(json.dumps({
                "QUERY_ID": str(uuid.UUID(int=rnd.getrandbits(128))),
                "QUERY_START_TIME": t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " +0000",
                "USER_NAME": u.upper(),
                "DIRECT_OBJECTS_ACCESSED": objs,
                "BASE_OBJECTS_ACCESSED": objs,
                "OBJECTS_MODIFIED": [],
                "OBJECT_MODIFIED_BY_DDL": None,
                "POLICIES_REFERENCED": [],
                "PARENT_QUERY_ID": None,
                "ROOT_QUERY_ID": None,
            }, separators=(",", ":")) + "\n")

    with open(os.path.join(a.out, "bigquery.jsonl") if "bigquery" in formats else os.devnull, "w") as f:
        for i in range(a.entries if "bigquery" in formats else 0):
            t, u, table, line, cols = reads(i)
            email = f"{u}@geo-prod.example.org"
            stamp = t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            job = f"projects/geo-prod/jobs/bquxjob_{rnd.getrandbits(48):x}"
            if rnd.random() < 0.2:
                # A job entry: no read of table data.
                meta = {"@type": "type.googleapis.com/google.cloud.audit.BigQueryAuditMetadata",
                        "jobChange": {"after": "DONE", "job": {"jobName": job}}}
                resource = job
            else:
                tname = f"roads_v{line}" if line else table
                if line:
                    seen("bigquery", email, cols)
                meta = {"@type": "type.googleapis.com/google.cloud.audit.BigQueryAuditMetadata",
                        "tableDataRead": {"fields": cols, "reason": "JOB", "jobName": job}}
                resource = f"projects/geo-prod/datasets/gis/tables/{tname}"
            f.write(json.dumps({
                "insertId": f"{rnd.getrandbits(40):x}",
                "logName": "projects/geo-prod/logs/cloudaudit.googleapis.com%2Fdata_access",
                "protoPayload": {
                    "@type": "type.googleapis.com/google.cloud.audit.AuditLog",
                    "authenticationInfo": {"principalEmail": email},
                    "methodName": "google.cloud.bigquery.v2.JobService.InsertJob",
                    "requestMetadata": {"callerIp": "10.0.0.1", "callerSuppliedUserAgent": "bq/2.0"},
                    "resourceName": resource,
                    "serviceName": "bigquery.googleapis.com",
                    "status": {},
                    "metadata": meta,
                },
                "receiveTimestamp": stamp,
                "resource": {"labels": {"dataset_id": "gis", "project_id": "geo-prod"},
                             "type": "bigquery_dataset"},
                "severity": "INFO",
                "timestamp": stamp,
            }, separators=(",", ":")) + "\n")

    # Databricks writes a row per column read: ENTRIES rows in all.
    with open(os.path.join(a.out, "databricks.csv") if "databricks" in formats else os.devnull, "w") as f:
        f.write("account_id,metastore_id,workspace_id,entity_type,entity_id,entity_run_id,"
                "source_table_full_name,source_table_catalog,source_table_schema,"
                "source_table_name,source_path,source_type,source_column_name,"
                "target_table_full_name,target_table_catalog,target_table_schema,"
                "target_table_name,target_path,target_type,target_column_name,created_by,"
                "event_time,event_date,record_id\n")
        i = 0
        while i < (a.entries if "databricks" in formats else 0):
            t, u, table, line, cols = reads(i)
            email = f"{u}@example.org"
            tname = f"roads_v{line}" if line else table
            if line:
                seen("databricks", email, cols)
            run = rnd.getrandbits(48)
            for c in cols:
                if i >= a.entries:
                    break
                at = (t + timedelta(milliseconds=rnd.randrange(900))).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
                f.write(f"7af234db-66d7-4db3-bbf0-956098224879,5a31ba44-bbf4-4174-bf33-e1fa078e6765,"
                        f"123456789012345,NOTEBOOK,{run},{run + 1},main.gis.{tname},main,gis,{tname},,"
                        f"TABLE,{c},,,,,,,,{email},{at},{t.date()},{uuid.UUID(int=rnd.getrandbits(128))}\n")
                i += 1

    print(json.dumps({fmt: {"users": len(v), "pop_est": sum(v.values())} for fmt, v in sorted(truth.items())}))


if __name__ == "__main__":
    main()
