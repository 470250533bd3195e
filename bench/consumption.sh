#!/usr/bin/env bash
# Benchmark of the consumption scan and of the notifier, on data generated here.
#
#   bench/consumption.sh                       # 10 million lines (~1 GB), 10,000 consumers
#   LINES=100000 CONSUMERS=500 bench/consumption.sh   # a quick small run
#
# Knobs (environment): LINES, CONSUMERS, ROADS_SHARE (fraction of lines reading `roads`,
# default 0.1; 1.0 is the worst case where no line can be skipped), RUNS (timed runs, median
# reported, default 3), BENCH_DIR (where the store goes; default a fresh temp dir, removed;
# a kept BENCH_DIR reuses a log generated with the same parameters).
#
# 1. scan: `contracts consumers roads` on the generated log against `wc -l` on the same file,
#    both with the file in the page cache, medians of RUNS runs taken in turn (wc, scan, wc,
#    ...: the speed of a shared machine drifts), and their ratio; and the same command on an
#    empty log, the part of the time that does not grow with the log.
#    FORMATS (default "jsonl"; e.g. "jsonl csv parquet") also times the same reads as CSV and
#    as Parquet (bench/convert_consumption.py, pyarrow), against `wc -l` of the CSV and of
#    the JSON Lines file respectively (a Parquet file has no lines to count).
# 2. notify: `contracts notify` for CONSUMERS consumers all still on line 1, to a real SMTP
#    server on loopback (bench/smtp_sink.rs, mailin-embedded), in notices per second;
#    NOTIFY=0 skips it.
#
# 3. shapes: SHAPES="a b c d" times the same reads written as exporters write them
#    (bench/gen_consumption.py: a json.dumps defaults, other key order, epoch ms, extra fields;
#    b nested object, offsets; c CSV of 7 columns in another order; d the project's layout),
#    each read through a `[[consumption.source]]` mapping, against `wc -l` of shape a's file
#    and DuckDB (bench/duckdb_consumers.py: read_json / read_csv, GROUP BY consumer, arg_max),
#    medians of RUNS runs of the three in turn; and the scan's peak RSS. SHAPES_ONLY=1 skips
#    sections 1 and 2.
#
# The worst case of the scan (issue 14), every format:
#   ROADS_SHARE=1.0 FORMATS="jsonl csv parquet" NOTIFY=0 bench/consumption.sh
# The shapes (issue 19), 10 M reads of roads, 10,000 consumers:
#   ROADS_SHARE=1.0 SHAPES="a b c d" SHAPES_ONLY=1 RUNS=5 bench/consumption.sh
#
# CONTRACTS_BIN=path uses that binary instead of building the release one (a quick check of
# the script only: the figures of a debug build mean nothing).
set -euo pipefail

LINES=${LINES:-10000000}
CONSUMERS=${CONSUMERS:-10000}
ROADS_SHARE=${ROADS_SHARE:-0.1}
RUNS=${RUNS:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/lib.sh"
work_dir

release_bin --example smtp_sink
sink=$here/target/release/examples/smtp_sink

store=$work/store
mkdir -p "$store/contracts/roads" "$store/consumption" "$store/history"
write_config() {
    local list=""
    [[ -n $2 ]] && list="\"$2\""
    { mail_config "$1" $'days_before = [60, 30, 14, 7, 1]\noverdue_every_days = 7\n'; cat <<TOML; } > "$store/contracts.toml"

[consumption]
sources = [$list]
lookback_days = 30
${3:-}
TOML
}
roads_contracts "$store" 2027-01-15 "Move to British National Grid to match the other layers."
python3 - "$store/consumers.toml" "$CONSUMERS" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        f.write('[consumers.consumer-%05d]\nteam = "Team %d"\ncontacts = ["consumer-%05d@example.org"]\n\n' % (i, i % 97, i))
PY

# The store is read at HEAD: commit it (the consumption logs stay uncommitted, as on a
# platform), once; each notify run below starts again from this commit.
if [[ ! -d $store/.git ]]; then
    git -C "$store" init -q
    git -C "$store" add contracts history consumers.toml
fi
write_config 25 "consumption/log.jsonl"
git -C "$store" add contracts.toml
git -C "$store" -c user.name=bench -c user.email=bench@example.org commit -q --allow-empty -m "bench store"

log=$store/consumption/log.jsonl
params="$LINES $CONSUMERS $ROADS_SHARE"
if [[ ${SHAPES_ONLY:-0} == 1 ]]; then
    : > "$log"   # section 1 is skipped: no log of its own
elif [[ -f $log && "$(cat "$log.params" 2>/dev/null)" == "$params" ]]; then
    echo "reusing $log" >&2   # same parameters, same seed: the same file
else
    echo "generating $LINES lines ($ROADS_SHARE of them roads) for $CONSUMERS consumers..." >&2
    python3 "$here/bench/gen_consumption.py" "$log" "$LINES" "$CONSUMERS" "$ROADS_SHARE"
    echo "$params" > "$log.params"
fi
# Both contenders read the file from the page cache, and how fast that is depends on how
# the file was written: the generator's small writes leave it in small pages of cache that
# read a third slower (wc -l 0.17 s against 0.12 s for a copy of the same 950 MB), which
# would flatter the ratio. A copy, written in large pieces as a log shipper writes, is read.
settle() { cp -p "$1" "$1.copy" && mv "$1.copy" "$1"; cat "$1" > /dev/null; }
settle "$log"
size=$(stat -c %s "$log")

# Median wall time in seconds of RUNS runs of a command.
median() {
    local times=()
    for _ in $(seq "$RUNS"); do
        local t0 t1
        t0=$(date +%s%N)
        "$@" > /dev/null 2>&1
        t1=$(date +%s%N)
        times+=("$(( (t1 - t0) / 1000000 ))")
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]/1000}'
}

# Medians in seconds of RUNS alternating runs of two commands, A then B then A...: on a
# shared machine the speed drifts from minute to minute, and alternating gives both the
# same conditions. Usage: paired A... -- B...; sets med_a and med_b.
paired() {
    local a=() b=() ta=() tb=() in_b=0
    for arg in "$@"; do
        if [[ $in_b == 0 && $arg == -- ]]; then in_b=1; continue; fi
        if [[ $in_b == 0 ]]; then a+=("$arg"); else b+=("$arg"); fi
    done
    for _ in $(seq "$RUNS"); do
        local t0 t1
        t0=$(date +%s%N); "${a[@]}" > /dev/null 2>&1; t1=$(date +%s%N)
        ta+=("$(( (t1 - t0) / 1000000 ))")
        t0=$(date +%s%N); "${b[@]}" > /dev/null 2>&1; t1=$(date +%s%N)
        tb+=("$(( (t1 - t0) / 1000000 ))")
    done
    med_a=$(printf '%s\n' "${ta[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]/1000}')
    med_b=$(printf '%s\n' "${tb[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]/1000}')
}

# The store is read at HEAD: commit it (the consumption log stays in the work tree, as in
# production), with a fixed identity so no git config is needed.
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.org
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.org
commit_store() {
    [[ -d $store/.git ]] || git -C "$store" init -q
    git -C "$store" add contracts.toml consumers.toml contracts history
    git -C "$store" commit -q --allow-empty -m "$1"
}
# Section 3: the shapes, each through its source mapping.
shape_table() {
    case $1 in
        a) printf '[[consumption.source]]\npath = "consumption/shape-a.jsonl"\nfields = { at = { name = "at", unit = "ms" } }\n' ;;
        b) printf '[[consumption.source]]\npath = "consumption/shape-b.jsonl"\nfields = { consumer = "client.id" }\n' ;;
        c) printf '[[consumption.source]]\npath = "consumption/shape-c.csv"\nfields = { at = { name = "ts_ms", unit = "ms" }, consumer = "client_id" }\n' ;;
        d) printf '[[consumption.source]]\npath = "consumption/shape-d.jsonl"\n' ;;
    esac
}
shape_file() { [[ $1 == c ]] && echo "$store/consumption/shape-c.csv" || echo "$store/consumption/shape-$1.jsonl"; }
if [[ -n "${SHAPES:-}" ]]; then
    for sh in a $SHAPES; do
        f=$(shape_file "$sh")
        if [[ ! -f $f || "$(cat "$f.params" 2>/dev/null)" != "$params" ]]; then
            echo "generating shape $sh..." >&2
            python3 "$here/bench/gen_consumption.py" "$f" "$LINES" "$CONSUMERS" "$ROADS_SHARE" 42 "$sh"
            echo "$params" > "$f.params"
        fi
        settle "$f"
    done
    wc_file=$(shape_file a)
    # The part of a run that does not grow with the log (opening the store, reading the
    # registry of CONSUMERS consumers, the report): the same command on an empty log.
    : > "$store/consumption/empty.jsonl"
    write_config 25 "consumption/empty.jsonl"
    commit_store "bench store (empty log)"
    shapes_fixed=$(median "$bin" --repo "$store" --today 2026-11-29 --format json consumers roads)
    printf 'shapes: %d reads, roads share %s, %d consumers; medians of %d interleaved runs; load %s\n' \
        "$LINES" "$ROADS_SHARE" "$CONSUMERS" "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)"
    printf '  fixed part (the same command on an empty log): %s s\n' "$shapes_fixed"
    printf '  %-5s %8s %9s %9s %9s %8s %8s %9s  %s\n' shape MB "wc -l a" contracts duckdb "x wc -l" "x duckdb" "peak RSS" "x duckdb per run"
    for sh in $SHAPES; do
        f=$(shape_file "$sh")
        write_config 25 "" "$(shape_table "$sh")"
        commit_store "bench store (shape $sh)"
        tw=() tc=() td=()
        for _ in $(seq "$RUNS"); do
            t0=$(date +%s%N); wc -l "$wc_file" > /dev/null; t1=$(date +%s%N); tw+=("$(( (t1 - t0) / 1000000 ))")
            t0=$(date +%s%N); "$bin" --repo "$store" --today 2026-11-29 --format json consumers roads > /dev/null 2>&1; t1=$(date +%s%N); tc+=("$(( (t1 - t0) / 1000000 ))")
            t0=$(date +%s%N); python3 "$here/bench/duckdb_consumers.py" "$sh" "$f" > /dev/null; t1=$(date +%s%N); td+=("$(( (t1 - t0) / 1000000 ))")
        done
        med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]/1000}'; }
        w=$(med "${tw[@]}") c=$(med "${tc[@]}") d=$(med "${td[@]}")
        /usr/bin/time -f %M -o "$work/rss" "$bin" --repo "$store" --today 2026-11-29 --format json consumers roads > /dev/null 2>&1
        rss=$(tail -1 "$work/rss")
        # The same answer: as many consumers as DuckDB finds.
        ours=$("$bin" --repo "$store" --today 2026-11-29 --format json consumers roads 2>/dev/null \
            | python3 -c 'import json,sys; print(sum(1 for c in json.load(sys.stdin)["consumers"] if c["reads"] > 0))')
        theirs=$(python3 "$here/bench/duckdb_consumers.py" "$sh" "$f")
        [[ $ours == "$theirs" ]] || echo "  shape $sh: $ours consumers read, DuckDB finds $theirs" >&2
        # Each run's DuckDB time over ours in the same round (the runs are interleaved).
        per_run=$(for i in "${!tc[@]}"; do awk -v d="${td[$i]}" -v c="${tc[$i]}" 'BEGIN {printf "%.2f ", d/c}'; done)
        awk -v s="$sh" -v size="$(stat -c %s "$f")" -v w="$w" -v c="$c" -v d="$d" -v rss="$rss" -v pr="$per_run" 'BEGIN {
            printf "  %-5s %8.0f %9.3f %9.3f %9.3f %8.2f %8.2f %6.0f MB  %s\n", s, size/1e6, w, c, d, c/w, d/c, rss/1024, pr }'
    done
    printf '  load at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
    [[ ${SHAPES_ONLY:-0} == 1 ]] && exit 0
fi

# The part of a run that does not grow with the log (opening the store, reading the
# registry of CONSUMERS consumers, the report): the same command on an empty log.
: > "$store/consumption/empty.jsonl"
write_config 25 "consumption/empty.jsonl"
commit_store "bench store (empty log)"
fixed_s=$(median "$bin" --repo "$store" --today 2026-11-29 --format json consumers roads)
write_config 25 "consumption/log.jsonl"
commit_store "bench store"
paired wc -l "$log" -- "$bin" --repo "$store" --today 2026-11-29 --format json consumers roads
wc_s=$med_a scan_s=$med_b
"$bin" --repo "$store" --today 2026-11-29 consumers roads 2>&1 >/dev/null | tail -1 >&2
extra=""
for fmt in ${FORMATS:-jsonl}; do
    [[ $fmt == jsonl ]] && continue
    twin=$store/consumption/log.$fmt
    if [[ ! -f $twin || $twin -ot $log ]]; then
        echo "writing the $fmt twin of the log..." >&2
        python3 "$here/bench/convert_consumption.py" "$log"
    fi
    settle "$twin"
    write_config 25 "consumption/log.$fmt"
    commit_store "bench store ($fmt)"
    # wc -l of the CSV itself; a Parquet file has no lines, so that of the JSON Lines log.
    counted=$log
    [[ $fmt == csv ]] && counted=$twin
    paired wc -l "$counted" -- "$bin" --repo "$store" --today 2026-11-29 --format json consumers roads
    twin_wc=$med_a twin_s=$med_b
    extra+=$(awk -v f="$fmt" -v size="$(stat -c %s "$twin")" -v wc="$twin_wc" -v scan="$twin_s" -v lines="$LINES" 'BEGIN {
        printf "  %-7s %5.0f MB: wc -l %7.3f s, contracts consumers roads %7.3f s (%5.1f M lines/s), ratio %5.2f x\n", f, size/1e6, wc, scan, lines/1e6/scan, scan/wc }')
    extra+=$'\n'
done
if [[ ${NOTIFY:-1} == 0 ]]; then
    awk -v lines="$LINES" -v size="$size" -v wc="$wc_s" -v scan="$scan_s" -v share="$ROADS_SHARE" -v runs="$RUNS" -v fixed="$fixed_s" -v consumers="$CONSUMERS" 'BEGIN {
        printf "consumption log: %d lines, %.0f MB, roads share %s (median of %d runs)\n", lines, size/1e6, share, runs
        printf "  wc -l                     %7.3f s  %6.0f MB/s\n", wc, size/1e6/wc
        printf "  contracts consumers roads %7.3f s  %6.0f MB/s  %5.1f M lines/s\n", scan, size/1e6/scan, lines/1e6/scan
        printf "  ratio scan / wc -l        %7.2f x\n", scan/wc
        printf "  of which fixed (an empty log, %d consumers) %.3f s\n", consumers, fixed
    }'
    printf '%s' "$extra"
    exit 0
fi

# Notices: every consumer still on line 1 (one read each of 1.1.0), sunset 47 days ahead.
python3 - "$store/consumption/notify.jsonl" "$CONSUMERS" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        f.write('{"at":"2026-11-28T03:00:00Z","consumer":"consumer-%05d","dataset":"roads","contract":"1.1.0"}\n' % i)
PY
"$sink" > "$work/sink.port" &
sink_pid=$!
for _ in $(seq 50); do [[ -s $work/sink.port ]] && break; sleep 0.1; done
write_config "$(cat "$work/sink.port")" "consumption/notify.jsonl"
commit_store "bench notify config"
base=$(git -C "$store" rev-parse HEAD)
notify_times=()
for _ in $(seq "$RUNS"); do
    # Each run starts without a ledger: back to the commit before the first notices.
    git -C "$store" reset -q --hard "$base"
    rm -rf "$store/notifications" "$store/.git/contracts-notify"
    t0=$(date +%s%N)
    GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.org GIT_COMMITTER_NAME=bench \
        GIT_COMMITTER_EMAIL=bench@example.org \
        "$bin" --repo "$store" --today 2026-11-29 notify > /dev/null 2> "$work/notify.err"
    t1=$(date +%s%N)
    notify_times+=("$(( (t1 - t0) / 1000000 ))")
done
kill "$sink_pid"
tail -1 "$work/notify.err" >&2
sent=$(grep -c '^\[\[notice\]\]' "$store/notifications/roads.toml")
notify_s=$(printf '%s\n' "${notify_times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]/1000}')

awk -v lines="$LINES" -v size="$size" -v wc="$wc_s" -v scan="$scan_s" -v sent="$sent" \
    -v notify="$notify_s" -v share="$ROADS_SHARE" -v runs="$RUNS" 'BEGIN {
    printf "consumption log: %d lines, %.0f MB, roads share %s (median of %d runs)\n", lines, size/1e6, share, runs
    printf "  wc -l                     %7.3f s  %6.0f MB/s\n", wc, size/1e6/wc
    printf "  contracts consumers roads %7.3f s  %6.0f MB/s  %5.1f M lines/s\n", scan, size/1e6/scan, lines/1e6/scan
    printf "  ratio scan / wc -l        %7.2f x\n", scan/wc
    printf "notify: %d notices to a loopback SMTP server in %.3f s: %.0f notices/s\n", sent, notify, sent/notify
}'
printf '%s' "$extra"
