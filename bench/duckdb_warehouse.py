#!/usr/bin/env python3
"""The peer of `contracts can-remove roads optional_attributes.pop_est` on a warehouse export
in bench/warehouse.sh: DuckDB (the Python `duckdb` package) reading the same file and
computing, per user, the reads of a roads view, the newest read and its line (arg_max), and the
newest read that named `pop_est`: what the scan finds, without its bursts (so DuckDB does less
work than the tool on the Databricks rows, which the tool folds into one read per query).

Usage: duckdb_warehouse.py FORMAT FILE     FORMAT: snowflake, bigquery or databricks.
Prints the number of users found and of those that read pop_est.
"""
import sys

import duckdb

QUERIES = {
    "snowflake": """
        WITH o AS (
            SELECT USER_NAME AS who,
                   strptime(QUERY_START_TIME, '%Y-%m-%d %H:%M:%S.%g %z') AS t,
                   unnest(BASE_OBJECTS_ACCESSED) AS obj
            FROM read_json('{path}', format = 'newline_delimited', columns = {{
                'USER_NAME': 'VARCHAR', 'QUERY_START_TIME': 'VARCHAR',
                'BASE_OBJECTS_ACCESSED':
                  'STRUCT(objectName VARCHAR, columns STRUCT(columnName VARCHAR)[])[]'}})
        ), r AS (
            SELECT who, t, CAST(regexp_extract(obj.objectName, '^GIS\\.PUBLIC\\.ROADS_V([0-9]+)$', 1) AS INTEGER) AS line,
                   list_contains([c.columnName FOR c IN obj.columns], 'POP_EST') AS pop
            FROM o WHERE regexp_matches(obj.objectName, '^GIS\\.PUBLIC\\.ROADS_V[0-9]+$')
        )""",
    "bigquery": """
        WITH r AS (
            SELECT protoPayload.authenticationInfo.principalEmail AS who,
                   CAST(timestamp AS TIMESTAMPTZ) AS t,
                   CAST(regexp_extract(protoPayload.resourceName, '/tables/roads_v([0-9]+)$', 1) AS INTEGER) AS line,
                   list_contains(protoPayload.metadata.tableDataRead.fields, 'pop_est') AS pop
            FROM read_json('{path}', format = 'newline_delimited', columns = {{
                'timestamp': 'VARCHAR',
                'protoPayload': 'STRUCT(authenticationInfo STRUCT(principalEmail VARCHAR), resourceName VARCHAR, metadata STRUCT(tableDataRead STRUCT(fields VARCHAR[])))'}})
            WHERE protoPayload.metadata.tableDataRead IS NOT NULL
              AND regexp_matches(protoPayload.resourceName, '/tables/roads_v[0-9]+$')
        )""",
    "databricks": """
        WITH r AS (
            SELECT created_by AS who, CAST(event_time AS TIMESTAMPTZ) AS t,
                   CAST(regexp_extract(source_table_full_name, '^main\\.gis\\.roads_v([0-9]+)$', 1) AS INTEGER) AS line,
                   source_column_name = 'pop_est' AS pop
            FROM read_csv('{path}', header = true, all_varchar = true)
            WHERE regexp_matches(source_table_full_name, '^main\\.gis\\.roads_v[0-9]+$')
        )""",
}


def main():
    fmt, path = sys.argv[1], sys.argv[2]
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    rows = con.execute(QUERIES[fmt].format(path=path) + """
        SELECT count(*), count(pop_read) FROM (
            SELECT who, count(*) AS reads, max(t) AS last_read, arg_max(line, t) AS line,
                   max(t) FILTER (WHERE pop) AS pop_read
            FROM r GROUP BY who
        )""").fetchall()
    print(rows[0][0], rows[0][1])


if __name__ == "__main__":
    main()
