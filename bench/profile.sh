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
# sedonadb and geoarrow-pyarrow; gdal-bin; /usr/bin/time (GNU time).
#
# Environment: CONTRACTS_BASE_BIN=PATH also times another contracts build in the same run
# (row `contracts-base`: a "before" beside the "after"); BENCH_TOOLS=contracts,contracts-base
# runs only those tools; BENCH_FORMATS=parquet,gpkg only those formats.
set -euo pipefail
SIZE=${1:-1000}
RUNS=${2:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${BENCH_DIR:-/tmp/contracts-bench-$SIZE}
if [[ ! -f "$DIR/features.txt" ]]; then
  python3 "$HERE/generate.py" "$SIZE" "$DIR"
fi
(cd "$HERE/.." && cargo build --release --quiet)
echo "machine: $(nproc) cores, $(uname -sr); data: $DIR"
python3 "$HERE/run.py" "$DIR" "$RUNS"
