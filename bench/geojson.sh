#!/usr/bin/env bash
# Benchmark of GeoJSON profiling: before (the sequential reader, still reachable with
# the hidden flag --geojson-sequential) and after (the parallel reader), against pyogrio and `cat`,
# in one run, on a road network written by GDAL.
#
#   bench/geojson.sh [FEATURES] [RUNS]        default 1000000 LineStrings (~510 MB), 3 runs
#
# Generates the roads with bench/gen_roads.py (geopandas, pyogrio; cached in $BENCH_DIR,
# default /tmp/contracts-geojson-FEATURES), builds the release binary, reads the file once
# into the page cache, then runs bench/geojson.py. Needs: cargo, python3 with geopandas,
# pyogrio, pyarrow and shapely; GNU time (/usr/bin/time).
set -euo pipefail
N=${1:-1000000}
RUNS=${2:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${BENCH_DIR:-/tmp/contracts-geojson-$N}
FILE=$DIR/roads.geojson
mkdir -p "$DIR"
python3 -c "import geopandas, pyogrio, pyarrow, shapely" 2>/dev/null \
  || pip install geopandas pyogrio pyarrow shapely
[[ -f $FILE ]] || python3 "$HERE/gen_roads.py" "$N" "$FILE"
(cd "$HERE/.." && cargo build --release --quiet --bin contracts)
cat "$FILE" > /dev/null
python3 "$HERE/geojson.py" "$FILE" "$RUNS"
