#!/usr/bin/env bash
# Benchmark of a PostGIS table as a release (issue 39): `contracts profile postgresql://…` on a
# road table of ROWS LineStrings (3 to 13 vertices, five attributes with nulls, an integer
# primary key, as `ogr2ogr` loads a road layer), against
#   - what a user does without it: `ogr2ogr` export of the table to a GeoPackage, then
#     `contracts profile` of the export (the two timed together);
#   - the floor: the same aggregate statement the profile runs, hand-written, through `psql`.
# Medians of RUNS runs taken in turn; the client's peak RSS from GNU time. The table is made
# on the server with SQL (setseed, so every run makes the same rows) in a throw-away cluster
# started here, as the tests start theirs (initdb as the `postgres` user when run as root).
#
#   bench/postgis.sh                      # 3.6 million rows, 3 runs
#   ROWS=200000 RUNS=3 bench/postgis.sh   # a quick small run
#
# Knobs: ROWS, RUNS, BENCH_DIR (kept: the cluster and its table are reused), CONTRACTS_BIN.
# Needs PostgreSQL with PostGIS (Debian's postgresql-15-postgis-3), gdal-bin, GNU time.
set -euo pipefail

ROWS=${ROWS:-3600000}
RUNS=${RUNS:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/lib.sh"
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
work_dir
release_bin

as_owner() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg=$work/pg
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if [[ ! -d $pg/data ]]; then
    mkdir -p "$pg/sock"
    [[ $(id -u) == 0 ]] && chown -R postgres:postgres "$pg"
    as_owner "$pgbin/initdb" -D "$pg/data" -U postgres --auth-local=trust -E UTF8 --no-locale >/dev/null 2>&1
fi
[[ $(id -u) == 0 ]] && chown -R postgres:postgres "$pg"
as_owner "$pgbin/pg_ctl" -D "$pg/data" -l "$pg/server.log" -w \
    -o "-p $port -k $pg/sock -c listen_addresses='' -c shared_buffers=512MB -c fsync=off" start >/dev/null
# The server stops with the script, whatever ends it (a kept BENCH_DIR keeps its data only).
stop_server() { as_owner "$pgbin/pg_ctl" -D "$pg/data" -m fast stop >/dev/null 2>&1 || true; [[ -z ${BENCH_DIR:-} ]] && rm -rf "$work"; }
trap stop_server EXIT
psql_cmd=("$pgbin/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$pg/sock" -p "$port" -U postgres -d postgres)
psql_() { "${psql_cmd[@]}" "$@"; }

if [[ $(psql_ -c "SELECT count(*) FROM pg_class WHERE relname = 'roads_$ROWS'") == 0 ]]; then
    echo "making roads_$ROWS..." >&2
    psql_ -c "CREATE EXTENSION IF NOT EXISTS postgis" -c "SELECT setseed(0.14)" -c "
    CREATE TABLE roads_$ROWS AS
    WITH f AS (
        SELECT i, 3 + floor(random() * 11)::int AS n,
               random() * 40 - 10 AS x0, 36 + random() * 34 AS y0,
               random() AS r1, random() AS r2, random() AS r3, random() AS r4
        FROM generate_series(1, $ROWS) AS i)
    SELECT i AS id,
           CASE WHEN r1 < 0.1 THEN NULL ELSE 'Road ' || i END AS name,
           (ARRAY['motorway','primary','secondary','tertiary','residential'])[1 + floor(r2 * 5)::int] AS class,
           CASE WHEN r3 < 0.3 THEN NULL ELSE 20 + 10 * floor(r3 * 11)::int END AS maxspeed,
           r4 < 0.2 AS oneway,
           (SELECT ST_SetSRID(ST_MakeLine(ST_MakePoint(x0 + k * 0.001 + (random() - 0.5) * 0.0005,
                                                       y0 + k * 0.0007 + (random() - 0.5) * 0.0005)
                                          ORDER BY k), 4326)
            FROM generate_series(1, n) AS k) AS geom
    FROM f" -c "ALTER TABLE roads_$ROWS ADD PRIMARY KEY (id)" -c "VACUUM ANALYZE roads_$ROWS"
fi
table=roads_$ROWS
url="postgresql://postgres@${pg//\//%2F}%2Fsock:$port/postgres?table=$table"
g='"geom"'
# The floor: the aggregates the profile reports, as one would write them by hand (the profile's
# own statement, grouped by type, Z/M flag and SRID, with its planner setting), in the same
# kind of transaction.
floor_sql="BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;
SET LOCAL enable_sort = off;
SELECT ST_GeometryType($g), ST_Zmflag($g), ST_SRID($g), count(*),
  min(ST_XMin($g)), min(ST_YMin($g)), max(ST_XMax($g)), max(ST_YMax($g)),
  count(\"name\"), count(\"class\"), count(\"maxspeed\"), count(\"oneway\")
FROM $table GROUP BY 1, 2, 3;
COMMIT;"
pgconn="PG:host=$pg/sock port=$port user=postgres dbname=postgres"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# Wall seconds and peak RSS (MB) of a command, "S MB".
timed() { /usr/bin/time -f '%e %M' -o "$work/time" "$@" > /dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
          awk '{printf "%s %.0f\n", $1, $2 / 1024}' "$work/time"; }
export_then_profile() {
    rm -f "$work/export.gpkg"
    ogr2ogr -f GPKG "$work/export.gpkg" "$pgconn" "$table" -nln release
    "$bin" --quiet profile "$work/export.gpkg"
}

echo "machine: $(nproc) cores, $(uname -sr); PostgreSQL $(psql_ -c 'SHOW server_version'), PostGIS $(psql_ -c 'SELECT postgis_lib_version()')"
echo "table $table: $(psql_ -c "SELECT count(*) FROM $table") rows, $(psql_ -c "SELECT pg_size_pretty(pg_total_relation_size('$table'))"); $RUNS runs each, in turn"
"$bin" --quiet profile --format json "$url" > "$work/profile.json"
us=(); ex=(); fl=(); rss=0
for _ in $(seq "$RUNS"); do
    read -r t m < <(timed "$bin" --quiet profile "$url"); us+=("$t"); (( m > rss )) && rss=$m
    read -r t _ < <(timed bash -c "$(declare -f export_then_profile); work='$work' pgconn='$pgconn' table='$table' bin='$bin' export_then_profile"); ex+=("$t")
    read -r t _ < <(timed "${psql_cmd[@]}" -c "$floor_sql"); fl+=("$t")
done
u=$(printf '%s\n' "${us[@]}" | median); e=$(printf '%s\n' "${ex[@]}" | median); f=$(printf '%s\n' "${fl[@]}" | median)
ratio() { printf %.2f "$(echo "$1 / $2" | bc -l)"; }
echo "contracts profile postgresql://: median $u s, peak RSS $rss MB (runs: ${us[*]})"
echo "ogr2ogr to GeoPackage + profile:  median $e s = $(ratio "$e" "$u")x contracts (runs: ${ex[*]})"
echo "hand-written SQL through psql:    median $f s; contracts = $(ratio "$u" "$f")x the floor (runs: ${fl[*]})"
echo "profile: $(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(p["feature_count"], "features,", p["geometry_types"], p["crs"])' "$work/profile.json")"
