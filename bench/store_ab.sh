#!/usr/bin/env bash
# Time two builds of `contracts` on one store, interleaved, beside `git log -p` (the store
# benchmark's "before/after" runs; see bench/RESULTS.md, "The store at scale").
#
#   BEFORE=path/to/old/contracts AFTER=path/to/new/contracts bench/store_ab.sh STORE [RUNS]
#
# Each round runs: check (before, after), git log -p, status (before, after, before, after).
# Prints the median and minimum wall time and the peak RSS of each (GNU time), and the load.
set -euo pipefail
STORE="$1"
RUNS="${2:-5}"
BEFORE="${BEFORE:?the old binary}"
AFTER="${AFTER:?the new binary}"
BENCH_HOME="$(mktemp -d)"
T="$(mktemp -d)"
trap 'rm -rf "$BENCH_HOME" "$T"' EXIT
export HOME="$BENCH_HOME" GIT_CONFIG_NOSYSTEM=1 XDG_CONFIG_HOME="$BENCH_HOME"
one() {
    local name="$1"
    shift
    /usr/bin/time -f "%e %M" -o "$T/t" "$@" >/dev/null 2>&1
    echo "$name $(cat "$T/t")" >>"$T/all"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < RUNS; i++)); do
    one check-before "$BEFORE" --repo "$STORE" check
    one check-after "$AFTER" --repo "$STORE" check
    one git-log-p git -C "$STORE" log -p
    for _ in 1 2; do
        one status-before "$BEFORE" --repo "$STORE" --today 2027-06-01 status
        one status-after "$AFTER" --repo "$STORE" --today 2027-06-01 status
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$T/all" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for name in ["check-before", "check-after", "git-log-p", "status-before", "status-after"]:
    t = [float(r[1]) for r in rows if r[0] == name]
    rss = max(int(r[2]) for r in rows if r[0] == name)
    runs = " ".join(f"{x:.2f}" for x in t)
    print(f"{name:14} median {statistics.median(t):6.3f} s  min {min(t):6.3f} s  "
          f"peak RSS {rss / 1024:.0f} MB  runs: {runs}")
PY
