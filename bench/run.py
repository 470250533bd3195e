"""Time `contracts profile` and its peers on the files bench/generate.py made.

    python3 bench/run.py DATADIR RUNS

For each format and tool: the median wall time of RUNS runs, MB/s and features/s from it,
and the peak resident memory (max over the runs) from `/usr/bin/time -f %M`. Ratios are
the peer's median time over `contracts`'. Every tool computes the same figures: feature
count, envelope, null counts per attribute (and geometry types where it can).

Environment: BENCH_FORMATS (default "fgb parquet gpkg"; also "geojson", "shp"),
BENCH_PEERS=0 to time `contracts` alone, CONTRACTS_BIN_BEFORE=PATH to time an earlier
build of `contracts` too (row `contracts-before`), in the same run, BENCH_GPKG_FLOOR=PATH to
time the GeoPackage floor built from bench/gpkg_floor (row `sqlite-floor`), BENCH_TOOLS to
keep only the tools named (comma-separated).
"""
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = os.environ.get("CONTRACTS_BIN", str(HERE.parent / "target/release/contracts"))
# The tools to run (comma-separated names; all by default).
ONLY = [t for t in os.environ.get("BENCH_TOOLS", "").split(",") if t]


def ogrinfo_cmd(path):
    geom = "GEOMETRY"
    info = subprocess.run(["ogrinfo", "-ro", "-so", path, "release"], capture_output=True, text=True).stdout
    for line in info.splitlines():
        if line.startswith("Geometry Column = "):
            geom = line.split("= ", 1)[1].strip()
    nulls = ", ".join(f"SUM({c} IS NULL)" for c in ["name", "value", "category", "count", "flag"])
    sql = (
        f"SELECT count(*), SUM({geom} IS NULL), MIN(ST_MinX({geom})), MIN(ST_MinY({geom})), "
        f"MAX(ST_MaxX({geom})), MAX(ST_MaxY({geom})), {nulls} FROM release"
    )
    return ["ogrinfo", "-ro", "-q", path, "-dialect", "sqlite", "-sql", sql]


def tools(path):
    py = sys.executable
    out = {"contracts": [BIN, "profile", "--format", "json", path]}
    before = os.environ.get("CONTRACTS_BIN_BEFORE")
    if before:
        out["contracts-before"] = [before, "profile", "--format", "json", path]
    # The bare-SELECT floor under the GeoPackage reader (bench/gpkg_floor): SQLite alone
    # reading the same rows' geometry blobs in the same ranges on the same cores.
    floor = os.environ.get("BENCH_GPKG_FLOOR")
    if floor and path.endswith(".gpkg"):
        out["sqlite-floor"] = [floor, path]
    if os.environ.get("BENCH_PEERS", "1") == "0":
        return out
    out["geopandas"] = [py, str(HERE / "peers/geopandas_profile.py"), path]
    out["sedonadb"] = [py, str(HERE / "peers/sedonadb_profile.py"), path]
    # Debian's GDAL 3.6 has no Parquet driver.
    if path.endswith((".fgb", ".gpkg")):
        out["ogrinfo-sql"] = ogrinfo_cmd(path)
    if ONLY:
        out = {k: v for k, v in out.items() if k in ONLY}
    return out


def measure(cmd):
    r = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M"] + cmd, capture_output=True, text=True
    )
    if r.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {r.stderr[-500:]}")
    last = r.stderr.strip().splitlines()[-1].split()
    return float(last[0]), int(last[1]) / 1024.0


def main():
    data = Path(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    features = int((data / "features.txt").read_text())
    print(f"{features} features; median of {runs} runs; peak RSS is the max over the runs")
    print(
        f"{'format':<11}{'tool':<17}{'MB':>8}{'median s':>10}{'MB/s':>9}{'Mfeat/s':>9}{'peak MB':>9}"
        f"{'x contracts':>13}{'runs: min-max x':>17}"
    )
    for fmt in os.environ.get("BENCH_FORMATS", "fgb parquet gpkg").split():
        path = str(data / f"release.{fmt}")
        mb = os.path.getsize(path) / 1e6
        base = None
        # Runs are interleaved (run 1 of every tool, then run 2, ...) so that a change in the
        # machine's load during the benchmark falls on every tool alike.
        cmds = tools(path)
        times = {name: [] for name in cmds}
        peaks = {name: [] for name in cmds}
        failed = {}
        for _ in range(runs):
            for name, cmd in cmds.items():
                if name in failed:
                    continue
                try:
                    t, m = measure(cmd)
                except RuntimeError as e:
                    failed[name] = e
                    continue
                times[name].append(t)
                peaks[name].append(m)
        for name in cmds:
            if name in failed:
                print(f"{fmt:<11}{name:<13}{mb:>8.0f}  failed: {failed[name]}")
                continue
            med = statistics.median(times[name])
            base = base if base is not None else med
            ratio = med / base if base else float("nan")
            # Each run's ratio to the first tool's run of the same round: the runs are
            # interleaved, so a round shares the machine's load.
            first = times[next(iter(cmds))]
            per_run = [t / f for t, f in zip(times[name], first) if f]
            spread = f"{min(per_run):.1f}-{max(per_run):.1f}" if per_run else "-"
            print(
                f"{fmt:<11}{name:<17}{mb:>8.0f}{med:>10.2f}{mb / med:>9.0f}"
                f"{features / med / 1e6:>9.2f}{max(peaks[name]):>9.0f}{ratio:>13.1f}{spread:>17}"
            )


if __name__ == "__main__":
    main()
