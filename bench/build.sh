#!/usr/bin/env bash
# The cold test build, measured: a clone of each REV given (default HEAD), built from an empty
# target folder with `cargo test --no-run --timings` (crates already downloaded). Prints wall
# and CPU time (user+sys) and the ten costliest units of each, so a change to the build (a
# profile setting, a dependency) is measured before and after in one run.
#
#   bench/build.sh [REV ...]            # e.g. bench/build.sh b215f5d HEAD
#
# CPU time is the figure to compare: it does not grow when another job shares the cores, where
# wall time and the per-unit seconds of cargo's report do.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${WORK:-/tmp/contracts-build-bench}
mkdir -p "$WORK"
for rev in "${@:-HEAD}"; do
  sha=$(git rev-parse --short "$rev")
  src="$WORK/src-$sha"
  rm -rf "$src" "$WORK/target-$sha"
  git clone -q . "$src" && git -C "$src" checkout -q "$sha"
  t0=$(date +%s.%N)
  (cd "$src" && /usr/bin/time -f "%U %S" -o "$WORK/$sha.cpu" \
     env CARGO_TARGET_DIR="$WORK/target-$sha" cargo test --no-run --timings -q >/dev/null 2>"$WORK/$sha.log")
  t1=$(date +%s.%N)
  read -r user sys < "$WORK/$sha.cpu"
  size=$(du -sb "$WORK/target-$sha" | cut -f1)
  printf '%s: wall %.0f s, cpu %.0f s, target folder %.1f GB\n' "$sha" "$(echo "$t1 - $t0" | bc)" \
    "$(echo "$user + $sys" | bc)" "$(echo "$size / 1000000000" | bc -l)"
  python3 - "$WORK/target-$sha/cargo-timings/cargo-timing.html" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
units = json.loads(re.search(r'const UNIT_DATA = (\[.*?\]);\n', text, re.S).group(1))
print(f"  {len(units)} units, {sum(u['duration'] for u in units):.0f} s summed")
for u in sorted(units, key=lambda u: -u['duration'])[:10]:
    print(f"  {u['duration']:7.1f} s  {u['name']} {u['target'].strip()}")
PY
  rm -rf "$WORK/target-$sha" "$src"
done
