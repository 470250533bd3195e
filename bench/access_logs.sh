#!/usr/bin/env bash
# Benchmark of S3 server access logs read as they are delivered, on data generated here.
#
#   bench/access_logs.sh                          # a month, 10 million requests
#   REQUESTS=300000 bench/access_logs.sh          # a quick small run
#
# The month is written by bench/gen_access_logs.py: the requests remote readers of GeoParquet
# and FlatGeobuf make (a HEAD and ranged GETs per open, second opens, polls), a tenth of no
# reads at all (PUTs, listings, 403s, 404s), principals as assumed-role sessions, IAM users and
# anonymous clients on IPv4 and IPv6, in objects named by their delivery time as S3 names them
# and gzipped (--gzip). A `[[consumption.source]]` of format `s3-access` reads it, with the
# consumers' `identities` the generator writes.
#
# 1. local: `contracts consumers roads` on the directory of objects (lookback 30 days: every
#    object is read) against `zcat <objects> | wc -l` on the same files, medians of RUNS runs
#    taken in turn, with the files in the page cache; and the same command on an empty
#    directory (the part of the time that does not grow with the log).
# 2. moto (MOTO=1, the default): the objects uploaded to a moto bucket on loopback (PyPI
#    `moto[server]`), read with a 7-day lookback on the month's last day: the objects the
#    listing returned and the objects read, against the month's, and the time of the command.
#    MOTO_REQUESTS (default REQUESTS/10) sizes that month: uploading into moto is slow.
#
# Knobs: REQUESTS, CONSUMERS (default 2000), RUNS (default 3), MOTO, MOTO_REQUESTS, BENCH_DIR
# (kept, and a month generated with the same parameters reused). CONTRACTS_BIN=path uses that
# binary instead of building the release one (the figures of a debug build mean nothing).
set -euo pipefail

REQUESTS=${REQUESTS:-10000000}
CONSUMERS=${CONSUMERS:-2000}
RUNS=${RUNS:-3}
MOTO=${MOTO:-1}
MOTO_REQUESTS=${MOTO_REQUESTS:-$((REQUESTS / 10))}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/lib.sh"
work_dir '[[ -n "${moto_pid:-}" ]] && kill "$moto_pid" 2>/dev/null || true'
release_bin

# A month of objects (reused when BENCH_DIR holds one of the same size).
month() { # DIR REQUESTS
    if [[ ! -f $1/done-$2 ]]; then
        rm -rf "$1"; mkdir -p "$1"
        echo "generating a month of $2 requests..." >&2
        python3 "$here/bench/gen_access_logs.py" "$1/out" --requests "$2" --consumers "$CONSUMERS" \
            --month 2026-11 --gzip --consumers-toml "$1/consumers.toml" --truth "$1/truth.json"
        touch "$1/done-$2"
    fi
}

# A store with roads 1.0.0, 1.1.0 and 2.0.0 (the versions the generator's requests name).
make_store() { # DIR SOURCE_PATH LOOKBACK REGISTRY
    local s=$1
    rm -rf "$s"
    roads_contracts "$s" 2027-03-01 "British National Grid."
    { mail_config 25; cat <<TOML; } > "$s/contracts.toml"

[consumption]
lookback_days = $3

[[consumption.source]]
path = "$2"
format = "s3-access"
match = "/datasets/{dataset}/v{contract}/**"
TOML
    cp "$4" "$s/consumers.toml"
    (cd "$s" && git init -q && git add -A \
        && git -c user.name=bench -c user.email=bench@example.org commit -qm "bench store")
}

median() { python3 -c 'import statistics,sys; print("%.3f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }

# 1. local
m=$work/month-$REQUESTS
month "$m" "$REQUESTS"
logs=$m/out/logs/access
objects=$(find "$logs" -type f | wc -l)
bytes=$(du -sb "$logs" | cut -f1)
make_store "$work/store" "$logs/*" 30 "$m/consumers.toml"
mkdir -p "$work/empty"
make_store "$work/store-empty" "$work/empty/*" 30 "$m/consumers.toml"
scan() { "$bin" --repo "$1" --today 2026-11-30 consumers roads --format json; }
zcount() { find "$logs" -type f -print0 | xargs -0 cat | zcat | wc -l; }
scan "$work/store" > /dev/null 2>&1   # warm the page cache
zcount > /dev/null
t_scan=(); t_wc=(); t_fixed=()
for ((i = 0; i < RUNS; i++)); do
    t_wc+=("$(seconds zcount)")
    t_scan+=("$(seconds scan "$work/store")")
    t_fixed+=("$(seconds scan "$work/store-empty")")
done
reads=$(scan "$work/store" 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["scan"]["reads"], d["scan"]["lines"])')
ms=$(median "${t_scan[@]}"); mw=$(median "${t_wc[@]}"); mf=$(median "${t_fixed[@]}")
echo "local: $REQUESTS requests in $objects gzipped objects ($((bytes / 1000000)) MB); reads, lines: $reads"
echo "  zcat | wc -l  ${mw} s   contracts consumers ${ms} s   ratio $(echo "$ms / $mw" | bc -l | cut -c1-5)   fixed part ${mf} s   (medians of $RUNS)"

# 2. moto
if [[ $MOTO == 1 ]]; then
    mm=$work/month-$MOTO_REQUESTS
    month "$mm" "$MOTO_REQUESTS"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    python3 -m moto.server -H 127.0.0.1 -p "$port" > /dev/null 2>&1 &
    moto_pid=$!
    for _ in $(seq 100); do curl -s -o /dev/null -X PUT "http://127.0.0.1:$port/logs" && break; sleep 0.2; done
    export AWS_ACCESS_KEY_ID=bench-key-0001 AWS_SECRET_ACCESS_KEY=bench-secret-0001 AWS_DEFAULT_REGION=us-east-1 \
        AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ALLOW_HTTP=true
    echo "uploading $(find "$mm/out/logs/access" -type f | wc -l) objects to moto..." >&2
    python3 - "$mm/out/logs/access" <<'PY'
import boto3, concurrent.futures, os, sys
d = sys.argv[1]
s3 = boto3.client("s3")
names = sorted(os.listdir(d))
def put(n):
    with open(os.path.join(d, n), "rb") as f:
        s3.put_object(Bucket="logs", Key="access/" + n, Body=f.read())
with concurrent.futures.ThreadPoolExecutor(16) as ex:
    list(ex.map(put, names))
PY
    total=$(find "$mm/out/logs/access" -type f | wc -l)
    make_store "$work/store-moto" "s3://logs/access/" 7 "$mm/consumers.toml"
    t0=$(date +%s.%N)
    "$bin" --repo "$work/store-moto" --today 2026-11-30 consumers roads --format json > "$work/moto.json" 2> "$work/moto.err"
    t1=$(date +%s.%N)
    python3 - "$work/moto.json" "$total" "$(echo "$t1 - $t0" | bc -l)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["scan"]
total, secs = int(sys.argv[2]), float(sys.argv[3])
print(f"moto: {total} objects in the month; lookback 7 days: {d['objects_listed']} listed "
      f"({100 * d['objects_listed'] / total:.1f} %), {d['objects_read']} read "
      f"({100 * d['objects_read'] / total:.1f} %), {d['reads']} reads, {secs:.2f} s")
PY
fi
