#!/usr/bin/env bash
# Benchmark of the pgaudit consumption source (issue 39): `contracts consumers roads` on a
# generated PostgreSQL server log with pgaudit entries (bench/gen_pgaudit.py: views per line,
# OBJECT and SESSION entries, the tables behind the views, other classes, multi-line
# statements, the server's own lines), as csvlog and as its stderr twin, against `wc -l` of
# the same file and against DuckDB (bench/duckdb_pgaudit.py: read_csv, GROUP BY role,
# arg_max) on the csvlog. Medians of RUNS runs taken in turn, each file in the page cache.
#
#   bench/pgaudit.sh                          # 10 million entries, 2,000 roles
#   ENTRIES=200000 RUNS=3 bench/pgaudit.sh     # a quick small run
#
# Knobs: ENTRIES, ROLES, RUNS (default 5), BENCH_DIR (kept, and a log generated with the same
# parameters reused), CONTRACTS_BIN (a binary instead of the release build).
set -euo pipefail

ENTRIES=${ENTRIES:-10000000}
ROLES=${ROLES:-2000}
RUNS=${RUNS:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/lib.sh"
work_dir
release_bin

store=$work/store
logs=$store/pg
stamp=$work/generated-$ENTRIES-$ROLES
if [[ ! -f $stamp ]]; then
    rm -rf "$store"; mkdir -p "$logs"
    python3 "$here/bench/gen_pgaudit.py" "$logs" --entries "$ENTRIES" --roles "$ROLES" > "$work/truth.json"
    touch "$stamp"
fi
mkdir -p "$store"
roads_contracts "$store" 2027-01-15 "Move to British National Grid."
setup() { # DESTINATION FILE-GLOB [PREFIX]
    { printf '[consumption]\nlookback_days = 60\n\n[[consumption.source]]\npath = "%s"\nformat = "pgaudit"\nlog_destination = "%s"\nmatch = "public.{dataset}_v{line}"\nignore_principals = ["publisher"]\n' "$2" "$1"
      [[ -n ${3:-} ]] && printf 'prefix = "%s"\n' "$3"; } > "$store/contracts.toml"
    (cd "$store" && rm -rf .git && git init -q && git add contracts.toml contracts history \
        && git -c user.name=bench -c user.email=bench@example.org commit -qm store)
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }

size() { du -h "$1" | cut -f1; }
echo "entries: $ENTRIES, roles: $ROLES; $(cat "$work/truth.json")"
echo "csvlog $(size "$logs/postgresql.csv"), stderr $(size "$logs/postgresql.log"); $RUNS runs each, in turn"
for dest in csvlog stderr; do
    if [[ $dest == csvlog ]]; then file=$logs/postgresql.csv; setup csvlog "pg/*.csv"
    else file=$logs/postgresql.log; setup stderr "pg/*.log" '%m [%p] %q%u@%d '; fi
    cat "$file" > /dev/null
    wc_t=(); us=(); duck=()
    for _ in $(seq "$RUNS"); do
        wc_t+=("$(secs wc -l "$file")")
        us+=("$(secs "$bin" --repo "$store" --today 2026-11-29 --quiet consumers roads)")
        [[ $dest == csvlog ]] && duck+=("$(secs python3 "$here/bench/duckdb_pgaudit.py" "$file")")
    done
    w=$(printf '%s\n' "${wc_t[@]}" | median); u=$(printf '%s\n' "${us[@]}" | median)
    line="$dest: contracts $(printf %.3f "$u") s, wc -l $(printf %.3f "$w") s ($(printf %.2f "$(echo "$u / $w" | bc -l)")x wc -l)"
    if [[ $dest == csvlog ]]; then
        d=$(printf '%s\n' "${duck[@]}" | median)
        line+=", DuckDB $(printf %.3f "$d") s (DuckDB $(printf %.2f "$(echo "$d / $u" | bc -l)")x slower)"
    fi
    echo "$line"
    /usr/bin/time -f "  peak RSS of the scan: %M KB" "$bin" --repo "$store" --today 2026-11-29 --quiet consumers roads > /dev/null
done
