"""Write tests/data/consumption/reads.parquet, the Parquet consumption log of the
consumers_cli tests, with pyarrow (26.0.1 when committed):

    python3 tests/data/consumption/make_reads_parquet.py

Nine reads in row groups of four rows: `at` a millisecond timestamp in UTC, `consumer`
dictionary-encoded with one null (row 5), `contract` with one bad version (row 8), and two
columns the reader must not need (`bytes`, `client`).
"""
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def t(s):
    return datetime.fromisoformat(s).replace(tzinfo=timezone.utc)


rows = [
    ("2026-11-28T03:00:00", "flood-model", "roads", "1.1.0"),
    ("2026-11-20T03:00:00", "router", "roads", "1.1.0"),
    ("2026-11-25T03:00:00.250", "router", "roads", "2.0.0"),
    ("2026-11-26T03:00:00", "archive", "rivers", "1.0.0"),
    ("2026-11-27T03:00:00", None, "roads", "1.1.0"),
    ("2026-11-27T03:00:00", "atlas", "roads", "1.1.0"),
    ("2027-03-01T03:00:00", "atlas", "roads", "2.0.0"),
    ("2026-11-26T03:00:00", "ghost", "roads", "one"),
    ("2026-11-26T03:00:00", "ghost", "roads", "1.0.0"),
]
table = pa.table(
    {
        "client": pa.array([f"10.0.0.{i}" for i in range(len(rows))]),
        "at": pa.array([t(r[0]) for r in rows], pa.timestamp("ms", tz="UTC")),
        "consumer": pa.array([r[1] for r in rows]).dictionary_encode(),
        "dataset": pa.array([r[2] for r in rows]),
        "bytes": pa.array([1000 * i for i in range(len(rows))], pa.int64()),
        "contract": pa.array([r[3] for r in rows]),
    }
)
pq.write_table(table, Path(__file__).with_name("reads.parquet"), row_group_size=4)
