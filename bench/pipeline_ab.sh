#!/usr/bin/env bash
# Two builds of `contracts` on the same consumption logs, interleaved in one run: the check
# that a refactoring of the consumption pipeline left its speed alone (issue 40's rule: each
# median within 3 % of before).
#
#   BEFORE=path/to/old/contracts AFTER=path/to/new/contracts bench/pipeline_ab.sh
#   LINES=1000000 REQUESTS=1000000 ENTRIES=1000000 RUNS=3 BEFORE=... AFTER=... bench/pipeline_ab.sh
#
# Cases, each `contracts consumers roads` on a store of its own:
# - shapes a b c d of bench/gen_consumption.py (LINES reads of roads by CONSUMERS consumers,
#   each through its `[[consumption.source]]` mapping, as bench/consumption.sh reads them);
# - s3: a month of REQUESTS S3 server access-log requests in gzipped objects
#   (bench/gen_access_logs.py), as bench/access_logs.sh reads them;
# - pgaudit: ENTRIES pgaudit entries as csvlog (bench/gen_pgaudit.py), as bench/pgaudit.sh.
# Each round runs every case with both builds, the order of the two alternating by round (the
# speed of a shared machine drifts); prints each build's median wall time, after/before, and
# the load. Both builds must give the same report: the JSON of each case is compared once.
#
# Knobs: LINES (default 10,000,000), CONSUMERS (10,000), REQUESTS (10,000,000), ENTRIES
# (10,000,000), RUNS (5), CASES (default "a b c d s3 pgaudit"), BENCH_DIR (kept; generated
# logs reused).
set -euo pipefail
BEFORE=${BEFORE:?the old binary}
AFTER=${AFTER:?the new binary}
LINES=${LINES:-10000000}
CONSUMERS=${CONSUMERS:-10000}
REQUESTS=${REQUESTS:-10000000}
ENTRIES=${ENTRIES:-10000000}
RUNS=${RUNS:-5}
CASES=${CASES:-a b c d s3 pgaudit}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/lib.sh"
work_dir

# The logs stay uncommitted in the store's logs/, as on a platform.
commit() { (cd "$1" && rm -rf .git && git init -q && git add contracts.toml contracts history \
    && { [[ ! -f consumers.toml ]] || git add consumers.toml; } \
    && git -c user.name=bench -c user.email=bench@example.org commit -qm "bench store"); }

# The store of one case: roads, the registry and the source table (its logs in logs/).
store_for() { # CASE SOURCE_TABLE REGISTRY
    local s=$work/store-$1
    mkdir -p "$s/logs"
    roads_contracts "$s" 2027-01-15 "British National Grid."
    printf '[consumption]\nlookback_days = 60\n\n%s' "$2" > "$s/contracts.toml"
    if [[ -n $3 ]]; then cp "$3" "$s/consumers.toml"; fi
}

registry=$work/consumers.toml
[[ -f $registry ]] || python3 - "$registry" "$CONSUMERS" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        f.write('[consumers.consumer-%05d]\nteam = "Team %d"\ncontacts = ["consumer-%05d@example.org"]\n\n' % (i, i % 97, i))
PY

declare -A STORE TODAY
for c in $CASES; do
    case $c in
    a|b|c|d)
        ext=jsonl; [[ $c == c ]] && ext=csv
        f=$work/store-$c/logs/shape-$c.$ext
        if [[ ! -f $f.done-$LINES ]]; then
            mkdir -p "$work/store-$c/logs"; echo "generating shape $c..." >&2
            python3 "$here/bench/gen_consumption.py" "$f" "$LINES" "$CONSUMERS" 1.0 42 "$c"
            touch "$f.done-$LINES"
        fi
        case $c in
        a) t='fields = { at = { name = "at", unit = "ms" } }' ;;
        b) t='fields = { consumer = "client.id" }' ;;
        c) t='fields = { at = { name = "ts_ms", unit = "ms" }, consumer = "client_id" }' ;;
        d) t='' ;;
        esac
        store_for "$c" "$(printf '[[consumption.source]]\npath = "logs/shape-%s.%s"\n%s\n' "$c" "$ext" "$t")" "$registry"
        TODAY[$c]=2026-11-29 ;;
    s3)
        m=$work/store-s3/logs/month-$REQUESTS
        if [[ ! -f $m/done ]]; then
            rm -rf "$work/store-s3/logs"; mkdir -p "$m"; echo "generating a month of $REQUESTS requests..." >&2
            python3 "$here/bench/gen_access_logs.py" "$m/out" --requests "$REQUESTS" --consumers 2000 \
                --month 2026-11 --gzip --consumers-toml "$m/consumers.toml" --truth "$m/truth.json"
            touch "$m/done"
        fi
        store_for s3 "$(printf '[[consumption.source]]\npath = "logs/month-%s/out/logs/access/*"\nformat = "s3-access"\nmatch = "/datasets/{dataset}/v{contract}/**"\n' "$REQUESTS")" "$m/consumers.toml"
        TODAY[$c]=2026-11-30 ;;
    pgaudit)
        p=$work/store-pgaudit/logs/pg-$ENTRIES
        if [[ ! -f $p/done ]]; then
            rm -rf "$work/store-pgaudit/logs"; mkdir -p "$p"; echo "generating $ENTRIES pgaudit entries..." >&2
            python3 "$here/bench/gen_pgaudit.py" "$p" --entries "$ENTRIES" --roles 2000 > "$p/truth.json"
            touch "$p/done"
        fi
        store_for pgaudit "$(printf '[[consumption.source]]\npath = "logs/pg-%s/*.csv"\nformat = "pgaudit"\nlog_destination = "csvlog"\nmatch = "public.{dataset}_v{line}"\nignore_principals = ["publisher"]\n' "$ENTRIES")" ""
        TODAY[$c]=2026-11-29 ;;
    *) echo "unknown case $c" >&2; exit 2 ;;
    esac
    commit "$work/store-$c"
    STORE[$c]=$work/store-$c
done

run() { "$1" --repo "${STORE[$2]}" --today "${TODAY[$2]}" --format json consumers roads; }
ms() { local t0 t1; t0=$(date +%s%N); run "$@" > /dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }

# The same answer from both builds (and the page cache warm).
for c in $CASES; do
    if ! diff <(run "$BEFORE" "$c" 2>/dev/null) <(run "$AFTER" "$c" 2>/dev/null) > /dev/null; then
        echo "case $c: the two builds report differently" >&2; exit 1
    fi
done

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A T
for ((i = 0; i < RUNS; i++)); do
    for c in $CASES; do
        if (( i % 2 == 0 )); then first=BEFORE second=AFTER; else first=AFTER second=BEFORE; fi
        T[$c-$first]+="$(ms "${!first}" "$c") "
        T[$c-$second]+="$(ms "${!second}" "$c") "
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
med() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {printf "%.3f", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)/1000}'; }
printf '%-8s %10s %10s %12s   %s\n' case before after after/before "runs (ms): before | after"
for c in $CASES; do
    b=$(med "${T[$c-BEFORE]}") a=$(med "${T[$c-AFTER]}")
    printf '%-8s %10s %10s %12s   %s| %s\n' "$c" "$b" "$a" "$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a/b}')" "${T[$c-BEFORE]}" "${T[$c-AFTER]}"
done
