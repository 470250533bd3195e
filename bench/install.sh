#!/usr/bin/env bash
# The install paths, measured from a clean cache: a cold `cargo install` (empty CARGO_HOME and
# target folder, so it downloads and compiles every crate), the wheel's release build with
# maturin (crates already downloaded, empty target folder), and the wheel's install into a
# fresh venv. Prints wall time and CPU time (user+sys) of each, the binary's and the wheel's
# size, and keeps cargo's --timings report of the cold install (the slowest crates).
#
#   bench/install.sh [WORKDIR]        # default /tmp/contracts-install-bench
#
# Needs: cargo, python3 with venv, network to crates.io and PyPI. CPU time is the figure to
# compare across machines and runs: it does not grow when another job shares the cores, where
# wall time does.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/contracts-install-bench}
rm -rf "$WORK" && mkdir -p "$WORK"
# The committed tree, cloned: what a user would install, untouched by edits in the checkout.
git clone -q . "$WORK/src"
cd "$WORK/src"
MATURIN=${MATURIN:-maturin==1.16.0}

measure() { # label, command...
  local label=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$WORK/$label.cpu" "$@" > "$WORK/$label.log" 2>&1
  t1=$(date +%s.%N)
  read -r user sys < "$WORK/$label.cpu"
  printf '%-22s wall %7.1f s   cpu %7.1f s\n' "$label" "$(echo "$t1 - $t0" | bc)" "$(echo "$user + $sys" | bc)"
}

python3 -m venv "$WORK/tools" && "$WORK/tools/bin/pip" install -q "$MATURIN"

# 1. cold cargo install: nothing downloaded, nothing built.
measure cargo-install-cold env CARGO_HOME="$WORK/cargo-home" CARGO_TARGET_DIR="$WORK/target-install" \
  cargo install --locked --path . --root "$WORK/root" --timings
cp "$WORK"/target-install/cargo-timings/cargo-timing.html "$WORK/" 2>/dev/null || true

# 2. the wheel, release profile, from an empty target folder (crates already downloaded).
measure wheel-build-release env CARGO_HOME="$WORK/cargo-home" CARGO_TARGET_DIR="$WORK/target-wheel" \
  "$WORK/tools/bin/maturin" build --release --locked --out "$WORK/wheels"

# 3. the wheel's install into a fresh venv, from the local file (no index).
python3 -m venv "$WORK/venv"
measure wheel-install "$WORK/venv/bin/pip" install --no-index "$WORK"/wheels/*.whl

"$WORK/venv/bin/contracts" --version
printf 'binary (cargo install)  %s bytes\n' "$(stat -c %s "$WORK/root/bin/contracts")"
printf 'wheel                   %s bytes\n' "$(stat -c %s "$WORK"/wheels/*.whl)"
echo "timings report: $WORK/target-install/cargo-timings/"
