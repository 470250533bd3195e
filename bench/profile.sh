#!/usr/bin/env bash
# Benchmark `contracts profile` against the tools a user would pick instead.
#
#   bench/profile.sh [SIZE_MB] [RUNS]        e.g. bench/profile.sh 50   (default 1000 MB, 3 runs)
#
# Generates a synthetic release of about SIZE_MB in FlatGeobuf, GeoParquet and GeoPackage
# (bench/generate.py; cached in $BENCH_DIR, default /tmp/contracts-bench-SIZE), builds the
# release binary, then times in the same run: `contracts profile`, plain geopandas
# (read_file/read_parquet, total_bounds, isna().sum()), GDAL `ogrinfo` with a SQL aggregate
# (SQLite dialect) and SedonaDB. Needs: cargo, python3 with geopandas, pyogrio, pyarrow,
# sedonadb and geoarrow-pyarrow (pinned in bench/requirements.txt: a venv first on PATH);
# gdal-bin; /usr/bin/time (GNU time). CONTRACTS_BIN=PATH times that binary and builds nothing.
#
# Before/after in one run: BEFORE=REV builds REV's release binary too (from a temporary git
# worktree, in a copy of target/release so only the crate is rebuilt: sharing target/ itself
# would let the two trees overwrite each other's artifacts) and times it beside this one, e.g.
#   BEFORE=main BENCH_FORMATS="geojson fgb shp" BENCH_PEERS=0 bench/profile.sh 100 3
set -euo pipefail
SIZE=${1:-1000}
RUNS=${2:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${BENCH_DIR:-/tmp/contracts-bench-$SIZE}
if [[ ! -f "$DIR/features.txt" || ! -f "$DIR/release.shp" ]]; then
  python3 "$HERE/generate.py" "$SIZE" "$DIR"
fi
ROOT=$(cd "$HERE/.." && pwd)
if [[ -n "${BEFORE:-}" ]]; then
  WT=$(mktemp -d)
  TD=$(mktemp -d)
  git -C "$ROOT" worktree add --detach -q "$WT" "$BEFORE"
  if [[ -d "$ROOT/target/release" ]]; then cp -a "$ROOT/target/release" "$TD/release"; fi
  (cd "$WT" && CARGO_TARGET_DIR="$TD" cargo build --release --quiet)
  cp "$TD/release/contracts" "$DIR/contracts-before"
  git -C "$ROOT" worktree remove --force "$WT"
  rm -rf "$TD"
  export CONTRACTS_BIN_BEFORE="$DIR/contracts-before"
fi
[[ -n "${CONTRACTS_BIN:-}" ]] || (cd "$ROOT" && cargo build --release --quiet)
echo "machine: $(nproc) cores, $(uname -sr); data: $DIR"
python3 "$HERE/run.py" "$DIR" "$RUNS"
