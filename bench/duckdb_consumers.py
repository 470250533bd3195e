#!/usr/bin/env python3
"""The peer of `contracts consumers roads` in bench/consumption.sh: DuckDB (the Python
`duckdb` package) reading the same file with read_json / read_csv and computing, per consumer
of `roads` in the 30 days up to 2026-11-29 (UTC), the reads, the newest read and its version
(arg_max), the answer `consumers` gives.

Usage: duckdb_consumers.py SHAPE FILE   (SHAPE: a, b, c or d, as gen_consumption.py writes)
Prints the number of consumers found.
"""
import sys

import duckdb


def main():
    shape, path = sys.argv[1], sys.argv[2]
    ts = {
        # Epoch milliseconds, as a timestamp.
        "a": "make_timestamp(CAST(\"at\" AS BIGINT) * 1000)",
        "c": "make_timestamp(ts_ms * 1000)",
        # RFC 3339 text, offsets included, as an instant in UTC.
        "b": "CAST(CAST(\"at\" AS TIMESTAMPTZ) AT TIME ZONE 'UTC' AS TIMESTAMP)",
        "d": "CAST(CAST(\"at\" AS TIMESTAMPTZ) AT TIME ZONE 'UTC' AS TIMESTAMP)",
    }[shape]
    who = "client.id" if shape == "b" else ("client_id" if shape == "c" else "consumer")
    if shape == "c":
        source = f"read_csv('{path}', header = true)"
    else:
        cols = {
            "a": "{'consumer': 'VARCHAR', 'dataset': 'VARCHAR', 'at': 'BIGINT', 'contract': 'VARCHAR'}",
            "b": "{'contract': 'VARCHAR', 'client': 'STRUCT(id VARCHAR)', 'at': 'VARCHAR', 'dataset': 'VARCHAR'}",
            "d": "{'at': 'VARCHAR', 'consumer': 'VARCHAR', 'dataset': 'VARCHAR', 'contract': 'VARCHAR'}",
        }[shape]
        source = f"read_json('{path}', format = 'newline_delimited', columns = {cols})"
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    rows = con.execute(f"""
        WITH r AS (SELECT {who} AS consumer, contract, {ts} AS t FROM {source} WHERE dataset = 'roads')
        SELECT consumer, count(*) AS reads, max(t) AS last_read, arg_max(contract, t) AS version
        FROM r
        WHERE t >= TIMESTAMP '2026-10-31' AND t < TIMESTAMP '2026-11-30'
        GROUP BY consumer
    """).fetchall()
    print(len(rows))


if __name__ == "__main__":
    main()
