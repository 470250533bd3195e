#!/usr/bin/env python3
"""Fold a consumption log too large for one machine into a read summary on a Dask cluster.

The log is JSON Lines files (optionally gzipped, `.gz`), one read per line with `at` (RFC 3339
text), `consumer`, `dataset` and `contract`, as a platform partitions it
(`log/day=2026-11-27/part-0.jsonl.gz`). Each file is folded where a worker runs, the folds are
merged on the workers by key, and the summary is written as JSON Lines: the rows
`contracts` reads from a source with `format = "summary"`
(docs/src/reference/consumption-log.md). Summaries merge, so the result is the same however
the files are spread over the workers.

    # a local cluster of 3 worker processes, for a test or a big workstation
    python3 summarize_reads.py --local-workers 3 --out summary.jsonl 'log/*/*.jsonl.gz'
    # a real cluster: the scheduler's address, the files reachable from the workers
    python3 summarize_reads.py --scheduler tcp://scheduler:8786 --out summary.jsonl \
        's3://bucket/log/*/*.jsonl.gz'

`at` is kept as written: a summary keeps each instant with its offset, because of two reads
at one instant the one written with the larger offset is the later (the store's tie rule).
`registered` is false throughout: the store claims principals through its consumers.toml
when it reads the summary. Lines that are not reads (not JSON, a field missing or empty, a
bad date) are left out and counted on stderr; `contracts consumption summarize` on a sample
says why each is.

Requires `dask` and `distributed` (pinned in the repository's .ci/run).
"""
import argparse
import datetime
import json
import sys

FIELDS = ("at", "consumer", "dataset", "contract")


def parse(line):
    """(key, (reads, first, last)) of one line, or None when it is no read. An instant is
    (UTC datetime, offset seconds, text): the order of reads, then the text to write."""
    line = line.strip()
    if not line:
        return None
    try:
        r = json.loads(line)
        if not all(isinstance(r.get(f), str) and r.get(f) for f in FIELDS):
            return None
        at = datetime.datetime.fromisoformat(r["at"])
        if at.tzinfo is None:
            return None
    except ValueError:
        return None
    utc = at.astimezone(datetime.timezone.utc)
    instant = (utc, int(at.utcoffset().total_seconds()), r["at"])
    key = (utc.date().isoformat(), r["dataset"], r["consumer"], r["contract"])
    return key, (1, instant, instant)


def merge(a, b):
    """Two folds of one key: reads add, the earlier first and the later last are kept
    (`None` is the fold of nothing)."""
    if a is None or b is None:
        return b if a is None else a
    return (a[0] + b[0], min(a[1], b[1]), max(a[2], b[2]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="log files or globs (local or fsspec URLs)")
    ap.add_argument("--out", required=True, help="where to write the summary (JSON Lines)")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", help="the address of a running Dask scheduler")
    where.add_argument("--local-workers", type=int, help="start a LocalCluster of N processes")
    args = ap.parse_args()

    import dask.bag as db
    from distributed import Client, LocalCluster

    if args.local_workers:
        cluster = LocalCluster(n_workers=args.local_workers, threads_per_worker=1,
                               processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        cluster = None
        client = Client(args.scheduler)
    try:
        lines = db.read_text(args.paths, compression="infer", files_per_partition=1)
        parsed = lines.map(parse)
        bad = parsed.filter(lambda x: x is None).count()
        folded = parsed.filter(lambda x: x is not None).foldby(
            lambda kv: kv[0],
            lambda acc, kv: merge(acc, kv[1]),
            None,
            merge,
            None,
        )
        rows, bad = db.compute(folded, bad)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    with open(args.out, "w", encoding="utf-8") as out:
        for (day, dataset, consumer, contract), (reads, first, last) in sorted(rows):
            out.write(json.dumps({
                "day": day, "consumer": consumer, "dataset": dataset, "contract": contract,
                "reads": reads, "first_at": first[2], "last_at": last[2], "registered": False,
            }) + "\n")
    print(f"summarized {sum(r[1][0] for r in rows)} read(s) into {len(rows)} row(s); "
          f"{bad} line(s) left out", file=sys.stderr)


if __name__ == "__main__":
    main()
