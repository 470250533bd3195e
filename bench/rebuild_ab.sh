#!/usr/bin/env bash
# The edit-compile loop of a developer, in two checkouts, interleaved: touch a file and rebuild
# the debug binary, RUNS times each, and print each checkout's median wall and CPU time.
#
#   bench/rebuild_ab.sh BEFORE_DIR AFTER_DIR [FILE] [RUNS]
#
# FILE defaults to src/cli/status.rs (an edit to a command); each checkout keeps its own
# warm target/ (built once first, not timed). Also prints which crates each rebuild compiled:
# a crate absent from the list was not recompiled.
set -euo pipefail
BEFORE=$1
AFTER=$2
FILE=${3:-src/cli/status.rs}
RUNS=${4:-3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for d in "$BEFORE" "$AFTER"; do (cd "$d" && cargo build --quiet --bin contracts); done
one() { # NAME DIR
    touch "$2/$FILE"
    (cd "$2" && /usr/bin/time -f "%e %U %S" -o "$T/t" cargo build --bin contracts 2> "$T/log")
    echo "$1 $(cat "$T/t")" >> "$T/all"
    grep -o 'Compiling [^ ]*' "$T/log" | sort -u | tr '\n' ' ' > "$T/crates-$1"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < RUNS; i++)); do
    if (( i % 2 == 0 )); then one before "$BEFORE"; one after "$AFTER"
    else one after "$AFTER"; one before "$BEFORE"; fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$T/all" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for name in ["before", "after"]:
    wall = [float(r[1]) for r in rows if r[0] == name]
    cpu = [float(r[2]) + float(r[3]) for r in rows if r[0] == name]
    print(f"{name:7} wall median {statistics.median(wall):7.1f} s   CPU median {statistics.median(cpu):7.1f} s   runs {len(wall)}")
PY
for n in before after; do echo "$n compiled: $(cat "$T/crates-$n")"; done
