#!/usr/bin/env python3
"""Write the CSV and Parquet twins of a JSON Lines consumption log, for bench/consumption.sh.

Usage: convert_consumption.py LOG.jsonl   (writes LOG.csv and LOG.parquet beside it)

The same reads in each: the CSV with a header and no quotes (none of the fields needs any),
the Parquet as a platform exports it: `at` a timestamp in UTC (seconds), the names as
dictionary-encoded strings, zstd pages, row groups of one million rows.
"""
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

src = sys.argv[1]
stem = src[: -len(".jsonl")]
table = pajson.read_json(
    src,
    parse_options=pajson.ParseOptions(
        explicit_schema=pa.schema(
            [("at", pa.string()), ("consumer", pa.string()), ("dataset", pa.string()), ("contract", pa.string())]
        )
    ),
)
pacsv.write_csv(table, stem + ".csv", pacsv.WriteOptions(quoting_style="none"))
at = pc.strptime(table.column("at"), format="%Y-%m-%dT%H:%M:%SZ", unit="s").cast(pa.timestamp("s", tz="UTC"))
out = pa.table(
    {
        "at": at,
        "consumer": pc.dictionary_encode(table.column("consumer")),
        "dataset": pc.dictionary_encode(table.column("dataset")),
        "contract": pc.dictionary_encode(table.column("contract")),
    }
)
pq.write_table(out, stem + ".parquet", row_group_size=1_000_000, compression="zstd")
