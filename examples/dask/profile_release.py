#!/usr/bin/env python3
"""Profile a release too large for one machine on a Dask cluster.

Each partition is profiled where a worker runs (`contracts profile --format json PART`, a
subprocess on the worker), and the partition profiles are merged on the workers in a tree
(`contracts profile --format json --merge P1.json P2.json ...`, FAN_IN at a time), so no machine
holds more than FAN_IN profiles. The merged profile is printed on stdout: the same JSON that
`contracts profile` of the whole release prints on one machine (the merge law makes it so).

    # a local cluster of 4 worker processes, for a test or a big workstation
    python3 profile_release.py --local-workers 4 data/roads/
    # a real cluster: the scheduler's address; the binary and the data reachable from workers
    python3 profile_release.py --scheduler tcp://scheduler:8786 \
        --contracts /usr/local/bin/contracts s3://bucket/roads/year=2026/

PARTITION arguments are partition files, or directories whose data files (every file of a known
format below it, names starting with `_` or `.` excepted, as `contracts profile` reads a
directory) are the partitions, or URLs (`s3://...`), each profiled by one worker as given (a
URL prefix is then one task: list it yourself to spread it over workers). Extra arguments for
`contracts profile` (`--layer`, `--geometry-column`) follow `--`.

Requires `dask` and `distributed` (pinned in the repository's .ci/run).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

EXTENSIONS = (".geojson", ".json", ".geojsonl", ".geojsons", ".ndjson", ".fgb", ".gpkg",
              ".parquet", ".geoparquet", ".shp")


def walk(d, out):
    """Data files below `d` in the order `contracts profile d` takes them: each folder's
    entries sorted by name, a subfolder's files where its name sorts."""
    for name in sorted(os.listdir(d)):
        if name.startswith(("_", ".")):
            continue
        p = os.path.join(d, name)
        if os.path.isdir(p):
            walk(p, out)
        elif name.lower().endswith(EXTENSIONS):
            out.append(p)


def partitions(args):
    """The partitions named: directories expanded the way `contracts profile` expands them."""
    out = []
    for a in args:
        if "://" not in a and os.path.isdir(a):
            walk(a, out)
        else:
            out.append(a)
    return out


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def profile_partition(contracts, part, extra):
    """On a worker: the profile of one partition, as JSON text."""
    return run([contracts, "profile", "--format", "json", *extra, part])


def merge_profiles(contracts, *profiles):
    """On a worker: the merge of several profiles, as JSON text."""
    with tempfile.TemporaryDirectory(prefix="contracts-merge-") as d:
        paths = []
        for i, text in enumerate(profiles):
            p = os.path.join(d, f"{i:04}.json")
            with open(p, "w") as f:
                f.write(text)
            paths.append(p)
        return run([contracts, "profile", "--format", "json", "--merge", *paths])


def profile_release(client, contracts, parts, extra, fan_in):
    level = client.map(profile_partition, [contracts] * len(parts), parts, extra=extra,
                       pure=False)
    # Merge neighbours only, so the merged `files` list keeps the partitions' order.
    while len(level) > 1:
        level = [client.submit(merge_profiles, contracts, *level[i:i + fan_in], pure=False)
                 for i in range(0, len(level), fan_in)]
    return level[0].result()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="a running scheduler, e.g. tcp://scheduler:8786")
    where.add_argument("--local-workers", type=int, metavar="N",
                       help="start a LocalCluster of N worker processes")
    ap.add_argument("--contracts", default="contracts",
                    help="the contracts binary as the workers find it (default: on their PATH)")
    ap.add_argument("--fan-in", type=int, default=8, help="profiles per merge task (default 8)")
    ap.add_argument("partitions", nargs="+", metavar="PARTITION")
    ap.add_argument("extra", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    a = ap.parse_args()
    extra = [x for x in a.extra if x != "--"]
    if a.fan_in < 2:
        ap.error("--fan-in must be at least 2")
    parts = partitions(a.partitions)
    if not parts:
        print("profile_release.py: no partition found", file=sys.stderr)
        return 2

    from dask.distributed import Client, LocalCluster

    if a.local_workers:
        cluster = LocalCluster(n_workers=a.local_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        cluster = None
        client = Client(a.scheduler)
    try:
        merged = profile_release(client, a.contracts, parts, extra, a.fan_in)
    except RuntimeError as e:
        print(f"profile_release.py: {e}", file=sys.stderr)
        return 1
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    # Validate it is one profile before printing it.
    json.loads(merged)
    sys.stdout.write(merged)
    return 0


if __name__ == "__main__":
    sys.exit(main())
