#!/usr/bin/env bash
# `contracts notify --dry-run` for one consumer with many addresses in `contacts` (issue 25,
# item 3): a large distribution list must cost linear time. For each N in CONTACTS (default
# "2500 10000") it builds a store with one consumer still on line 1 whose `contacts` holds N
# addresses, and reports the median wall time of RUNS (default 3) dry runs, which plan and
# render the one notice (the message with its N recipients) and send nothing.
#
#   BIN=path/to/contracts bench/notify_contacts.sh     # a binary of your choice
#   bench/notify_contacts.sh                           # builds target/release/contracts
set -euo pipefail

CONTACTS=${CONTACTS:-"2500 10000"}
RUNS=${RUNS:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/lib.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
if [[ -z "${BIN:-}" ]]; then
    echo "building (release)..." >&2
    (cd "$here" && cargo build --release --quiet --bin contracts)
    BIN=${CARGO_TARGET_DIR:-$here/target}/release/contracts
fi

for n in $CONTACTS; do
    store=$work/store-$n
    mkdir -p "$store/contracts/roads" "$store/consumption"
    { mail_config 25; cat <<'TOML'; } > "$store/contracts.toml"

[consumption]
sources = ["consumption/log.jsonl"]
lookback_days = 30
TOML
    printf 'dataset = "roads"\nversion = "1.0.0"\nvalid_from = 2026-01-01\n[clauses]\ncrs = "EPSG:4326"\n' \
        > "$store/contracts/roads/1.0.0.toml"
    printf 'dataset = "roads"\nversion = "2.0.0"\nsupersedes = "1.0.0"\nvalid_from = 2026-11-01\nsunset = 2027-01-15\n[clauses]\ncrs = "EPSG:4326"\n' \
        > "$store/contracts/roads/2.0.0.toml"
    python3 - "$store/consumers.toml" "$n" <<'PY'
import sys
n = int(sys.argv[2])
with open(sys.argv[1], "w") as f:
    f.write('[consumers.atlas]\nteam = "Atlas"\ncontacts = [\n')
    for i in range(n):
        f.write('  "Reader %d <reader-%05d@example.org>",\n' % (i, i))
    f.write(']\n')
PY
    echo '{"at":"2026-11-28T03:00:00Z","consumer":"atlas","dataset":"roads","contract":"1.0.0"}' \
        > "$store/consumption/log.jsonl"
    git -C "$store" init -q
    git -C "$store" add contracts contracts.toml consumers.toml
    git -C "$store" -c user.name=bench -c user.email=bench@example.org commit -qm "bench store"
    times=()
    for _ in $(seq "$RUNS"); do
        t0=$(date +%s%N)
        "$BIN" --repo "$store" --today 2026-11-29 --format json notify --dry-run > "$work/out.json" 2> "$work/err"
        t1=$(date +%s%N)
        times+=("$(( (t1 - t0) / 1000000 ))")
    done
    got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r[0]["recipients"]) if r else 0)' "$work/out.json")
    [[ $got == "$n" ]] || { echo "expected one notice to $n recipients, got $got" >&2; cat "$work/err" >&2; exit 1; }
    med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]/1000}')
    printf '%6d contacts  %8s s  (median of %d)\n' "$n" "$med" "$RUNS"
done
