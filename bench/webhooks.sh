#!/usr/bin/env bash
# Benchmark of webhook deliveries: `contracts notify` for CONSUMERS consumers, each with one
# `generic` (signed) webhook, all still on line 1 of `roads`, to loopback sinks
# (bench/webhook_sinks.py: an HTTP receiver answering 204, an SMTP server for the mail each
# consumer also gets, since a consumer must have a contact).
#
#   bench/webhooks.sh                       # 10,000 consumers: 10,000 mails + 10,000 webhooks
#   CONSUMERS=500 RUNS=3 bench/webhooks.sh  # a quick small run
#
# Each timed run starts from the same commit without a ledger. The store is run twice in turn:
# with the webhooks, and with the same consumers without them (mail only), so the webhook
# figure is the difference: deliveries per second = CONSUMERS / (both - mail only), medians of
# RUNS runs (default 3). CONTRACTS_BIN=path uses that binary instead of building the release one.
set -euo pipefail

CONSUMERS=${CONSUMERS:-10000}
RUNS=${RUNS:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/lib.sh"
work=$(mktemp -d)
sinks_pid=
trap '[[ -n $sinks_pid ]] && kill "$sinks_pid" 2>/dev/null; rm -rf "$work"' EXIT

release_bin

python3 "$here/bench/webhook_sinks.py" > "$work/sinks.out" &
sinks_pid=$!
for _ in $(seq 50); do [[ -s $work/sinks.out ]] && break; sleep 0.1; done
read -r smtp_port http_port < "$work/sinks.out"

export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.org
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.org
export BENCH_HOOK_URL="http://127.0.0.1:$http_port/hook"
export BENCH_HOOK_SECRET="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

# One store per variant: `hooks` (a generic webhook each) and `mail` (none).
make_store() {
    local store=$work/$1 hooks=$2
    mkdir -p "$store/contracts/roads" "$store/consumption" "$store/history"
    cat > "$store/contracts.toml" <<TOML
[notify]
days_before = [60, 30, 14, 7, 1]
overdue_every_days = 7
from = "Data Platform <data-platform@example.org>"
announce = false
registry_url = "https://data.example.org/contracts/"

[smtp]
host = "127.0.0.1"
port = $smtp_port
tls = "none"

[consumption]
sources = ["consumption/notify.jsonl"]
lookback_days = 30
TOML
    roads_contracts "$store" 2027-01-15 "Move to British National Grid to match the other layers."
    python3 - "$store" "$CONSUMERS" "$hooks" <<'PY'
import sys
store, n, hooks = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
hook = ('webhooks = [{ kind = "generic", url_env = "BENCH_HOOK_URL", '
        'secret_env = "BENCH_HOOK_SECRET" }]\n')
with open(f"{store}/consumers.toml", "w") as f:
    for i in range(n):
        f.write('[consumers.consumer-%05d]\nteam = "Team %d"\ncontacts = ["consumer-%05d@example.org"]\n' % (i, i % 97, i))
        f.write((hook if hooks else "") + "\n")
with open(f"{store}/consumption/notify.jsonl", "w") as f:
    for i in range(n):
        f.write('{"at":"2026-11-28T03:00:00Z","consumer":"consumer-%05d","dataset":"roads","contract":"1.1.0"}\n' % i)
PY
    git -C "$store" init -q
    git -C "$store" add contracts.toml consumers.toml contracts history
    git -C "$store" commit -q -m "bench store"
}

# One timed `notify` from the store's first commit, without a ledger; prints milliseconds.
timed_notify() {
    local store=$work/$1
    git -C "$store" reset -q --hard "$(git -C "$store" rev-list --max-parents=0 HEAD)"
    rm -rf "$store/notifications" "$store/.git/contracts-notify"
    local t0 t1
    t0=$(date +%s%N)
    "$bin" --repo "$store" --today 2026-11-29 notify > /dev/null 2> "$work/$1.err" \
        || { echo "notify failed ($1):" >&2; tail -5 "$work/$1.err" >&2; exit 1; }
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000000 ))
}

echo "generating two stores of $CONSUMERS consumers..." >&2
make_store hooks 1
make_store mail 0
hooks_ms=() mail_ms=()
for i in $(seq "$RUNS"); do
    hooks_ms+=("$(timed_notify hooks)")
    mail_ms+=("$(timed_notify mail)")
    echo "run $i: with webhooks ${hooks_ms[-1]} ms, mail only ${mail_ms[-1]} ms" >&2
done
sent=$(python3 -c 'import sys, tomllib
ledger = tomllib.load(open(sys.argv[1], "rb"))
print(sum(n.get("channel") == "webhook:generic" for n in ledger.get("notice", [])))' \
    "$work/hooks/notifications/roads.toml")
kill -TERM "$sinks_pid"; wait "$sinks_pid" || true; sinks_pid=
read -r mails requests < <(tail -1 "$work/sinks.out")
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
h=$(median "${hooks_ms[@]}") m=$(median "${mail_ms[@]}")
awk -v n="$CONSUMERS" -v h="$h" -v m="$m" -v runs="$RUNS" -v sent="$sent" \
    -v mails="$mails" -v requests="$requests" 'BEGIN {
    printf "%d consumers, medians of %d runs (the sinks took %d mails and %d HTTP requests in all)\n", n, runs, mails, requests
    printf "  notify, mail + generic webhook  %7.3f s  (%d webhook notices recorded in the last run)\n", h/1000, sent
    printf "  notify, mail only               %7.3f s  %6.0f mails/s\n", m/1000, n/(m/1000)
    printf "  webhooks: %d deliveries in %.3f s more: %.0f deliveries/s\n", n, (h-m)/1000, n/((h-m)/1000)
    printf "  both channels together: %.0f notices/s\n", 2*n/(h/1000)
}'
