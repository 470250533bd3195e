#!/usr/bin/env bash
# Benchmark of the warehouse formats that carry the attributes a read touched (issue 41):
# `contracts can-remove roads optional_attributes.pop_est` (a scan that folds each read's
# columns) on a month of generated access records per format (bench/gen_warehouse.py:
# Snowflake ACCESS_HISTORY as JSON Lines, BigQuery Data Access entries as JSON Lines,
# Databricks column lineage as CSV), against `wc -l` of the same file and against DuckDB
# computing the same answer from it (bench/duckdb_warehouse.py). Every generated user is a
# registered consumer, so the scan claims each principal and answers who uses pop_est. Medians of RUNS runs taken in
# turn, each file in the page cache. One format's file at a time is on disk (gigabytes each).
#
#   bench/warehouse.sh                              # 10 million records per format
#   ENTRIES=200000 RUNS=3 bench/warehouse.sh        # a quick small run
#
# Knobs: ENTRIES, USERS, RUNS (default 5), FORMATS (default all three), BENCH_DIR (kept, with
# the last file generated), CONTRACTS_BIN (a binary instead of the release build), DATA_DIR
# (each generated file kept there and reused by the next run with the same ENTRIES and USERS),
# BEFORE_BIN (an older build, timed in turn with the other, for the ratio of the two).
set -euo pipefail

ENTRIES=${ENTRIES:-10000000}
USERS=${USERS:-2000}
RUNS=${RUNS:-5}
FORMATS=${FORMATS:-snowflake bigquery databricks}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/lib.sh"
work_dir
release_bin

store=$work/store
rm -rf "$store"; mkdir -p "$store/logs"
roads_contracts "$store" 2027-01-15 "Move to British National Grid."
# Both lines promise pop_est, so that every read of roads is judged for it.
for v in 1.1.0 2.0.0; do
    printf 'optional_attributes = { name = "string", pop_est = "float64" }\n' >> "$store/contracts/roads/$v.toml"
done
# Every generated user is a registered consumer, under the principal each warehouse logs for
# it (Snowflake's upper-case user name, the two e-mail addresses): without consumers.toml the
# gates answer "cannot tell" about nobody, which is not the question users ask.
python3 - "$store/consumers.toml" "$USERS" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        u = "user_%04d" % i
        f.write('[consumers.%s]\nteam = "Team %d"\ncontacts = ["%s@example.org"]\n'
                'identities = ["%s", "%s@geo-prod.example.org", "%s@example.org"]\n\n'
                % (u.replace("_", "-"), i % 97, u, u.upper(), u, u))
PY
setup() { # FORMAT FILE MATCH
    printf '[consumption]\nlookback_days = 60\n\n[[consumption.source]]\npath = "logs/%s"\nformat = "%s"\nmatch = "%s"\n' \
        "$2" "$1" "$3" > "$store/contracts.toml"
    (cd "$store" && rm -rf .git && git init -q && git add contracts.toml consumers.toml contracts history \
        && git -c user.name=bench -c user.email=bench@example.org commit -qm store)
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }

echo "records: $ENTRIES per format, users: $USERS; $RUNS runs each, in turn"
for fmt in $FORMATS; do
    case $fmt in
        snowflake) file=snowflake.jsonl; name=snowflake-access-history; m='gis.public.{dataset}_v{line}' ;;
        bigquery) file=bigquery.jsonl; name=bigquery-audit; m='projects/geo-prod/datasets/gis/tables/{dataset}_v{line}' ;;
        databricks) file=databricks.csv; name=databricks-column-lineage; m='main.gis.{dataset}_v{line}' ;;
        *) echo "unknown format $fmt" >&2; exit 2 ;;
    esac
    rm -f "$store"/logs/*
    if [[ -n "${DATA_DIR:-}" ]]; then
        kept=$DATA_DIR/$fmt-$ENTRIES-$USERS
        if [[ ! -s "$kept/truth.json" ]]; then
            mkdir -p "$kept"
            python3 "$here/bench/gen_warehouse.py" "$kept" --entries "$ENTRIES" --users "$USERS" --formats "$fmt" > "$kept/truth.json.part"
            mv "$kept/truth.json.part" "$kept/truth.json"
        fi
        truth=$(cat "$kept/truth.json")
        ln "$kept/$file" "$store/logs/$file"
    else
        truth=$(python3 "$here/bench/gen_warehouse.py" "$store/logs" --entries "$ENTRIES" --users "$USERS" --formats "$fmt")
    fi
    setup "$name" "$file" "$m"
    path=$store/logs/$file
    cat "$path" > /dev/null
    wc_t=(); us=(); duck=(); old=()
    for _ in $(seq "$RUNS"); do
        wc_t+=("$(secs wc -l "$path")")
        us+=("$(secs "$bin" --repo "$store" --today 2026-11-29 --quiet can-remove roads optional_attributes.pop_est)")
        duck+=("$(secs python3 "$here/bench/duckdb_warehouse.py" "$fmt" "$path")")
        if [[ -n "${BEFORE_BIN:-}" ]]; then
            old+=("$(secs "$BEFORE_BIN" --repo "$store" --today 2026-11-29 --quiet can-remove roads optional_attributes.pop_est)")
        fi
    done
    w=$(printf '%s\n' "${wc_t[@]}" | median); u=$(printf '%s\n' "${us[@]}" | median)
    d=$(printf '%s\n' "${duck[@]}" | median)
    echo "$fmt ($(du -h "$path" | cut -f1), truth $truth): contracts $(printf %.3f "$u") s, wc -l $(printf %.3f "$w") s ($(printf %.2f "$(echo "$u / $w" | bc -l)")x wc -l), DuckDB $(printf %.3f "$d") s (DuckDB $(printf %.2f "$(echo "$d / $u" | bc -l)")x slower)"
    if [[ -n "${BEFORE_BIN:-}" ]]; then
        o=$(printf '%s\n' "${old[@]}" | median)
        echo "  the build before: $(printf %.3f "$o") s (this build takes $(printf %.2f "$(echo "$u / $o" | bc -l)") of its time)"
    fi
    echo "  DuckDB finds (users, of them reading pop_est): $(python3 "$here/bench/duckdb_warehouse.py" "$fmt" "$path")"
    /usr/bin/time -f "  peak RSS of the scan: %M KB" "$bin" --repo "$store" --today 2026-11-29 --quiet --format json can-remove roads optional_attributes.pop_est > "$work/$fmt.json" || true
    echo "  contracts finds (consumers judged, of them using pop_est): $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r["consumers"]), len(r["users"]))' "$work/$fmt.json")"
done
