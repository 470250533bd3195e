"""Time GeoJSON profiling for bench/geojson.sh: the sequential reader (`before`), the
parallel reader on one thread and on all cores (`after`), pyogrio, and `cat` of the same
cached file, in one run.

    python3 bench/geojson.py FILE RUNS

Runs are interleaved (run 1 of every tool, then run 2, ...), so a change in the machine's
load falls on every tool alike. Prints the median wall time, MB/s, the peak RSS (max over the
runs, GNU time), the median CPU time (user + system: what the work costs whatever else
the machine runs) and each tool's median wall time over the parallel reader's.
CONTRACTS_BIN (default target/release/contracts) names the build to time;
CONTRACTS_BIN_BEFORE=PATH adds an earlier build's parallel reader, which must agree too.
"""
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = os.environ.get("CONTRACTS_BIN", str(HERE.parent / "target/release/contracts"))


def measure(cmd, env):
    r = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M %U %S"] + cmd,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    if r.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {r.stderr[-500:]}")
    last = r.stderr.strip().splitlines()[-1].split()
    return float(last[0]), int(last[1]) / 1024.0, float(last[2]) + float(last[3]), r.stdout


def main():
    path, runs = sys.argv[1], int(sys.argv[2])
    profile = [BIN, "profile", "--format", "json", path]
    tools = {
        "contracts after (all cores)": (profile, {}),
        "contracts after (1 thread)": (profile, {"RAYON_NUM_THREADS": "1"}),
        "contracts before (sequential)": (profile + ["--geojson-sequential"], {}),
        **(
            {"earlier build (all cores)": ([os.environ["CONTRACTS_BIN_BEFORE"]] + profile[1:], {})}
            if os.environ.get("CONTRACTS_BIN_BEFORE")
            else {}
        ),
        "pyogrio read_arrow": ([sys.executable, str(HERE / "peers/pyogrio_profile.py"), path], {}),
        "cat": (["cat", path], {}),
    }
    times = {t: [] for t in tools}
    peaks = {t: [] for t in tools}
    cpus = {t: [] for t in tools}
    outputs = {}
    for _ in range(runs):
        for name, (cmd, env) in tools.items():
            t, m, c, out = measure(cmd, env)
            times[name].append(t)
            peaks[name].append(m)
            cpus[name].append(c)
            outputs[name] = out
    # The readers must agree, or the timing means nothing.
    after = outputs["contracts after (all cores)"]
    for name in ["contracts after (1 thread)", "contracts before (sequential)", "earlier build (all cores)"]:
        if name in outputs and outputs[name] != after:
            sys.exit(f"{name} gives another profile than the parallel reader")
    mb = os.path.getsize(path) / 1e6
    base = statistics.median(times["contracts after (all cores)"])
    print(f"{path}: {mb:.0f} MB; {os.cpu_count()} cores; median of {runs} runs")
    print(f"{'tool':<32}{'median s':>9}{'MB/s':>8}{'CPU s':>8}{'peak MB':>9}{'x after':>9}")
    for name in tools:
        med = statistics.median(times[name])
        cpu = statistics.median(cpus[name])
        print(
            f"{name:<32}{med:>9.2f}{mb / med:>8.0f}{cpu:>8.2f}{max(peaks[name]):>9.0f}{med / base:>9.2f}"
        )


if __name__ == "__main__":
    main()
