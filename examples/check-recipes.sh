#!/usr/bin/env bash
# Proves the daily-run recipes work as written (run by .ci/run, as root, after the binary is
# installed where the recipes say: `cargo install --locked --path . --root /usr/local`):
#  1. `systemd-analyze verify` accepts examples/systemd/contracts-notify.{service,timer} with no
#     message at all (it exits 0 on some errors, so any output fails), and the service has no
#     Restart= (a restart loop would retry a down relay every few seconds);
#  2. the command of examples/cron/contracts-notify.crontab runs under `env -i` with cron's
#     environment (PATH=/usr/bin:/bin, /bin/sh) against this repository's example store, with
#     --dry-run added, the env file and the log moved to a temporary directory, and exits 0.
# RECIPE_BIN=path substitutes the binary's path, for a developer without /usr/local/bin rights.
set -euo pipefail
cd "$(dirname "$0")/.."
store=$PWD
bin=/usr/local/bin/contracts
use_bin=${RECIPE_BIN:-$bin}
fail() { echo "check-recipes: $*" >&2; exit 1; }

[ -x "$use_bin" ] || fail "$use_bin is not installed (cargo install --locked --path . --root /usr/local)"
command -v systemd-analyze >/dev/null || fail "systemd-analyze is missing (apt-get install systemd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. The units.
cp examples/systemd/contracts-notify.service examples/systemd/contracts-notify.timer "$tmp/"
sed -i "s|$bin|$use_bin|g" "$tmp/contracts-notify.service"
grep -q "^ExecStart=$use_bin " "$tmp/contracts-notify.service" || fail "ExecStart does not name $bin"
if grep -q '^Restart=' "$tmp/contracts-notify.service"; then fail "the service restarts"; fi
out=$(systemd-analyze verify --man=no "$tmp/contracts-notify.service" "$tmp/contracts-notify.timer" 2>&1) \
  || fail "systemd-analyze verify failed: $out"
[ -z "$out" ] || fail "systemd-analyze verify says: $out"
echo "check-recipes: systemd units verified"

# 2. The crontab line, as cron runs it.
line=$(grep -v '^#' examples/cron/contracts-notify.crontab | grep -v '^[[:space:]]*$')
[ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] || fail "expected one crontab line"
cmd=$(printf '%s\n' "$line" | cut -d' ' -f6-)
case "$cmd" in *"$bin "*) ;; *) fail "the crontab command does not name $bin";; esac
cp examples/systemd/notify.env "$tmp/notify.env"
cmd=${cmd//\/etc\/contracts\/notify.env/$tmp\/notify.env}
cmd=${cmd//\/var\/log\/contracts\/notify.log/$tmp\/notify.log}
cmd=${cmd//\/srv\/contracts-store/$store}
cmd=${cmd//$bin/$use_bin}
cmd=${cmd// notify >>/ notify --dry-run >>}
case "$cmd" in *"--dry-run"*) ;; *) fail "could not add --dry-run to: $cmd";; esac
mkdir "$tmp/home"
if ! env -i PATH=/usr/bin:/bin SHELL=/bin/sh HOME="$tmp/home" LOGNAME=contracts /bin/sh -c "$cmd"; then
  cat "$tmp/notify.log" >&2 || true
  fail "the crontab command failed: $cmd"
fi
grep -q "notify: dry run" "$tmp/notify.log" || { cat "$tmp/notify.log" >&2; fail "no dry-run summary in the log"; }
echo "check-recipes: crontab command ran under cron's environment:"
sed 's/^/  /' "$tmp/notify.log"
