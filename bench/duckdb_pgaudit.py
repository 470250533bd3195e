#!/usr/bin/env python3
"""The peer of `contracts consumers roads` on a pgaudit csvlog in bench/pgaudit.sh: DuckDB (the
Python `duckdb` package) reading the same file with read_csv (quoted fields across lines) and
computing, per role, the reads of a roads view (`public.roads_v<line>`) in the entries, the
newest read and its line (arg_max): the answer `consumers` gives, without its bursts and
SESSION/OBJECT pairing (so DuckDB does less work than the tool).

Usage: duckdb_pgaudit.py FILE     Prints the number of roles found.
"""
import sys

import duckdb


def main():
    path = sys.argv[1]
    cols = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(26))
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    rows = con.execute(f"""
        WITH l AS (
            SELECT c1 AS who, CAST(replace(c0, ' UTC', '+00') AS TIMESTAMPTZ) AS t, c13 AS message
            FROM read_csv('{path}', header = false, quote = '"', escape = '"',
                          columns = {{{cols}}}, strict_mode = false)
            WHERE c13 LIKE 'AUDIT: %,READ,%'
        ), r AS (
            SELECT who, t, CAST(regexp_extract(message, ',public\\.roads_v([0-9]+),', 1) AS INTEGER) AS line
            FROM l WHERE regexp_matches(message, ',public\\.roads_v[0-9]+,')
        )
        SELECT count(*) FROM (
            SELECT who, count(*) AS reads, max(t) AS last_read, arg_max(line, t) AS line
            FROM r GROUP BY who
        )
    """).fetchall()
    print(rows[0][0])


if __name__ == "__main__":
    main()
