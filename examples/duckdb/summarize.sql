-- Fold a partitioned, gzipped JSON Lines consumption log into a read summary that
-- `contracts` reads as a source with `format = "summary"` (docs/src/reference/consumption-log.md).
--
-- The log: `log/day=YYYY-MM-DD/*.jsonl.gz`, one read per line with `at` (RFC 3339 text),
-- `consumer`, `dataset` and `contract`. Set the variables, then run:
--
--   duckdb -c "SET VARIABLE log = 'log/*/*.jsonl.gz'; SET VARIABLE out = 'summary.jsonl';" \
--          -c ".read examples/duckdb/summarize.sql"
--
-- An `out` whose name ends in `.parquet` (`SET VARIABLE out = 'summary.parquet'`) is written
-- as Parquet, which `contracts` reads as it reads JSON Lines: `day` is then a string column,
-- `reads` an INT64, `registered` a BOOLEAN, `first_at` and `last_at` strings.
--
-- `at` is kept as text: the summary keeps each instant with the offset it was written with,
-- and DuckDB's TIMESTAMPTZ would forget it. The UTC instant orders the reads; on one
-- instant written with two offsets the larger offset is the later, as the store orders them.
-- `registered` is false throughout: this side has no registry, and `contracts` claims
-- principals through consumers.toml when it reads the summary.
-- Lines that are not reads (not JSON, a bad date, an empty consumer) are left out here; run
-- `contracts consumption summarize` on a sample to see them reported.

-- Days are UTC days; an `at` always carries its offset, so the zone only names the day.
SET TimeZone = 'UTC';

CREATE OR REPLACE TEMP TABLE reads AS
SELECT
    "at",
    consumer,
    dataset,
    contract,
    CAST("at" AS TIMESTAMPTZ) AS instant,
    -- The offset in seconds east of UTC as written (`Z` is 0).
    CASE
        WHEN upper(right("at", 1)) = 'Z' THEN 0
        ELSE (CASE WHEN substr("at", -6, 1) = '-' THEN -1 ELSE 1 END)
             * (CAST(substr("at", -5, 2) AS INTEGER) * 3600 + CAST(substr("at", -2, 2) AS INTEGER) * 60)
    END AS offset_s
FROM read_json(
    getvariable('log'),
    format = 'newline_delimited',
    columns = {"at": 'VARCHAR', consumer: 'VARCHAR', dataset: 'VARCHAR', contract: 'VARCHAR'},
    compression = 'gzip',
    ignore_errors = true,
    hive_partitioning = false
)
WHERE consumer IS NOT NULL AND consumer <> '' AND dataset IS NOT NULL AND contract IS NOT NULL
  AND TRY_CAST("at" AS TIMESTAMPTZ) IS NOT NULL;

COPY (
    SELECT
        strftime(timezone('UTC', instant), '%Y-%m-%d') AS day,
        consumer,
        dataset,
        contract,
        count(*) AS reads,
        arg_min("at", (epoch_ns(instant), offset_s)) AS first_at,
        arg_max("at", (epoch_ns(instant), offset_s)) AS last_at,
        false AS registered
    FROM reads
    GROUP BY ALL
    ORDER BY day, dataset, consumer, contract
) TO (getvariable('out')) (
    FORMAT CASE WHEN getvariable('out') LIKE '%.parquet' THEN 'parquet' ELSE 'json' END
);
