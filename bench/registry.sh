#!/usr/bin/env bash
# Benchmark of a large consumers.toml: a store whose registry has N consumers, each with three
# identities (an upper-case user name and two e-mail addresses, as the warehouses log them),
# and a log of reads in which each consumer reads roads once under its first identity. Timed:
# `check` (reads the registry, places every entry, looks for identities claimed twice) and
# `consumers roads` (the scan, each principal claimed by its consumer). Medians of RUNS runs
# taken in turn; with BEFORE_BIN, an older build timed in turn with this one.
#
#   bench/registry.sh                       # 2,000 and 20,000 consumers
#   SIZES="2000" RUNS=3 bench/registry.sh
#
# Knobs: SIZES (default "2000 20000"), RUNS (default 3), BENCH_DIR (kept), CONTRACTS_BIN (a
# binary instead of the release build), BEFORE_BIN.
set -euo pipefail

SIZES=${SIZES:-2000 20000}
RUNS=${RUNS:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/lib.sh"
work_dir
release_bin

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }

for n in $SIZES; do
    store=$work/store-$n
    rm -rf "$store"; mkdir -p "$store/consumption"
    roads_contracts "$store" 2027-01-15 "Move to British National Grid."
    printf '[consumption]\nsources = ["consumption/reads.jsonl"]\nlookback_days = 30\n' > "$store/contracts.toml"
    python3 - "$store" "$n" <<'PY'
import sys
store, n = sys.argv[1], int(sys.argv[2])
with open(f"{store}/consumers.toml", "w") as f, open(f"{store}/consumption/reads.jsonl", "w") as r:
    for i in range(n):
        u = "user_%05d" % i
        f.write('[consumers.%s]\nteam = "Team %d"\ncontacts = ["%s@example.org"]\n'
                'identities = ["%s", "%s@geo-prod.example.org", "%s@example.org"]\n'
                'datasets.roads = {}\n\n' % (u.replace("_", "-"), i % 97, u, u.upper(), u, u))
        r.write('{"at":"2026-11-2%dT10:00:00Z","consumer":"%s","dataset":"roads","contract":"1.1.0"}\n'
                % (i % 9, u.upper()))
PY
    (cd "$store" && git init -q && git add contracts.toml consumers.toml contracts history \
        && git -c user.name=bench -c user.email=bench@example.org commit -qm store)
    # Every consumer is found, claimed under its identity: the scan's answer is checked
    # before it is timed.
    found=$("$bin" --repo "$store" --today 2026-11-29 --format json consumers roads \
        | python3 -c 'import json,sys; print(sum(1 for c in json.load(sys.stdin)["consumers"] if c["last_read"]))')
    [[ $found == "$n" ]] || { echo "consumers roads found $found of $n readers" >&2; exit 1; }
    for cmd in check "consumers roads"; do
        us=(); old=()
        for _ in $(seq "$RUNS"); do
            # shellcheck disable=SC2086
            us+=("$(secs "$bin" --repo "$store" --today 2026-11-29 $cmd)")
            if [[ -n "${BEFORE_BIN:-}" ]]; then
                # shellcheck disable=SC2086
                old+=("$(secs "$BEFORE_BIN" --repo "$store" --today 2026-11-29 $cmd)")
            fi
        done
        u=$(printf '%s\n' "${us[@]}" | median)
        line="$n consumers, $cmd: $(printf %.3f "$u") s"
        if [[ -n "${BEFORE_BIN:-}" ]]; then
            o=$(printf '%s\n' "${old[@]}" | median)
            line="$line (the build before: $(printf %.3f "$o") s)"
        fi
        echo "$line"
    done
done
