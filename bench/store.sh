#!/usr/bin/env bash
# Store benchmark (issue 3): build a store of DATASETS x VERSIONS proposals (default
# 1,000 x 20 = 20,000 commits) with valid contracts and history records, then time reading its
# whole history: `git log -p` against the git layer (`bench/store_walk.rs`: history() plus
# every changed blob).
#
#   bench/store.sh [STORE_DIR]
#
# Environment: DATASETS, VERSIONS (store size), RUNS (timed runs per command, default 5),
# REBUILD=1 (regenerate an existing store), PACK=clone|fast-import (see build_store),
# COMMITS=rounds (one commit per round of proposals instead of one per proposal: the same HEAD
# in VERSIONS + 1 commits, for sizes whose full history takes hours to build; fit for `status`,
# which reads HEAD, not for `check` or `log`). The store is kept between runs.
#
# To time another command, add a line at the bottom ($BIN is the release `contracts` binary):
#   time_cmd "contracts check" "$BIN" --repo "$STORE" check
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
DATASETS="${DATASETS:-1000}"
VERSIONS="${VERSIONS:-20}"
RUNS="${RUNS:-5}"
PACK="${PACK:-clone}"
COMMITS="${COMMITS:-proposals}"
STORE="${1:-${TMPDIR:-/tmp}/contracts-bench-store-${DATASETS}x${VERSIONS}-${PACK}-${COMMITS}}"

# Hermetic git: no user or system config influences either side. Cargo and rustup keep their
# real homes.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
BENCH_HOME="$(mktemp -d)"
trap 'rm -rf "$BENCH_HOME"' EXIT
export HOME="$BENCH_HOME" GIT_CONFIG_NOSYSTEM=1 XDG_CONFIG_HOME="$BENCH_HOME"
export GIT_AUTHOR_NAME="Bench" GIT_AUTHOR_EMAIL="bench@example.org"
export GIT_COMMITTER_NAME="Bench" GIT_COMMITTER_EMAIL="bench@example.org"

build_store() {
    if [[ -d "$STORE/.git" && "${REBUILD:-0}" != 1 ]]; then
        echo "store: reusing $STORE ($(git -C "$STORE" rev-list --count HEAD) commits)" >&2
        return
    fi
    rm -rf "$STORE"
    mkdir -p "$STORE"
    local t0=$SECONDS
    git -C "$STORE" init -q -b main
    python3 "$HERE/gen_store.py" "$DATASETS" "$VERSIONS" "$COMMITS" | git -C "$STORE" fast-import --done --quiet
    # PACK=clone (default): repack from scratch, so objects are packed as a clone or a full
    # `git gc` delivers them (newest versions whole, older ones as deltas against them), which
    # is what `check` meets in CI. PACK=fast-import keeps fast-import's deltas, which run the
    # other way (each version a delta of the one before): the worst case for gix, whose pack
    # cache keeps only the objects asked for, not the bases in between.
    if [[ "$PACK" == clone ]]; then
        git -C "$STORE" repack -adf -q
    fi
    git -C "$STORE" gc --quiet
    git -C "$STORE" checkout -q -f main
    echo "store: built $STORE ($PACK pack) ($(git -C "$STORE" rev-list --count HEAD) commits) in $((SECONDS - t0))s" >&2
}

# Results as "name<TAB>median seconds", in the order timed.
RESULTS=()

# time_cmd NAME CMD...: run CMD RUNS times after one warm-up run (output discarded, except the
# warm-up's stderr); print every run and the median; remember the median under NAME. A failing
# CMD stops the script.
time_cmd() {
    local name="$1"
    shift
    "$@" >/dev/null
    local times=() t0 t1
    for ((i = 0; i < RUNS; i++)); do
        t0=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        t1=$(date +%s.%N)
        times+=("$(echo "$t1 - $t0" | bc -l)")
    done
    local median
    median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
    printf '%-28s median %7.3fs   runs: %s\n' "$name" "$median" "$(printf '%.3f ' "${times[@]}")" >&2
    RESULTS+=("$name	$median")
}

# median_of NAME: the median recorded for NAME.
median_of() {
    local r
    for r in "${RESULTS[@]}"; do
        [[ "${r%%	*}" == "$1" ]] && { echo "${r#*	}"; return; }
    done
    return 1
}

# ratio A B: median(A) / median(B).
ratio() {
    printf '%.2f' "$(echo "$(median_of "$1") / $(median_of "$2")" | bc -l)"
}

build_store
(cd "$ROOT" && cargo build --release --quiet --bins --example store_walk)
# Cargo builds wherever CARGO_TARGET_DIR says (a relative one is relative to the package).
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET" in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac
BIN="$TARGET/release/contracts"
WALK="$TARGET/release/examples/store_walk"

time_cmd "git log -p" git -C "$STORE" log -p
time_cmd "store_walk (history+blobs)" "$WALK" "$STORE"

echo >&2
echo "store_walk / git log -p = $(ratio "store_walk (history+blobs)" "git log -p") (target <= 2)" >&2

# The commands over the same store, in the same run.
time_cmd "contracts check" "$BIN" --repo "$STORE" check
time_cmd "contracts status" "$BIN" --repo "$STORE" --today 2027-06-01 status
time_cmd "contracts log" "$BIN" --repo "$STORE" log
time_cmd "contracts log <dataset>" "$BIN" --repo "$STORE" log ds0500

echo >&2
echo "contracts check / git log -p = $(ratio "contracts check" "git log -p") (target <= 2)" >&2
echo "contracts status: $(median_of "contracts status") s (target < 0.2 s)" >&2
