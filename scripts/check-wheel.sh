#!/usr/bin/env bash
# The wheel, built and installed as a user without Rust would install it, then run. This is the
# tested twin of .github/workflows/release.yml, which builds the published wheels on GitHub's
# runners and cannot run here. Called by test.sh after `cargo install --debug`, whose build it
# reuses: the wheel carries a debug build of the binary (the release workflow builds with
# --release; bench/install.sh measures that build).
#
#   scripts/check-wheel.sh TOOLS_VENV
#
# TOOLS_VENV holds maturin and auditwheel (test.sh installs them, pinned). Fails, naming the
# step, when the wheel does not build, carries a tag PyPI would refuse, does not install, or
# its `contracts` answers differently from the binary the tests ran.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS=${1:?usage: scripts/check-wheel.sh TOOLS_VENV}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo "wheel: building with $("$TOOLS/bin/maturin" --version)"
"$TOOLS/bin/maturin" build --profile dev --locked --out "$OUT/wheels" --target-dir target
wheel=$(ls "$OUT"/wheels/*.whl)
echo "wheel: built $(basename "$wheel") ($(stat -c %s "$wheel") bytes)"

# The platform tag: auditwheel reads the glibc symbol versions the binary needs. A plain
# `linux_x86_64` tag would mean a wheel PyPI refuses; a manylinux tag names the oldest glibc
# the wheel runs on, and must be the tag maturin wrote into the file name.
show=$("$TOOLS/bin/auditwheel" show "$wheel")
echo "$show"
tag=$(echo "$show" | tr -d '\n' | sed -n 's/.*platform tag: "\(manylinux_[0-9]*_[0-9]*_[a-z0-9_]*\)".*/\1/p')
if [ -z "$tag" ]; then
  echo "wheel: auditwheel found no manylinux tag for $(basename "$wheel")" >&2
  exit 1
fi
case "$(basename "$wheel")" in
  *"-$tag.whl") echo "wheel: platform tag $tag" ;;
  *) echo "wheel: file name does not carry auditwheel's tag $tag" >&2; exit 1 ;;
esac

# A fresh venv, the wheel from the file alone (no index), and the command on the PATH it gives.
python3 -m venv "$OUT/venv"
"$OUT/venv/bin/pip" install -q --no-index "$wheel"
installed="$OUT/venv/bin/contracts"
[ -x "$installed" ] || { echo "wheel: installing put no contracts in $OUT/venv/bin" >&2; exit 1; }

expect=$(target/debug/contracts --version)
got=$("$installed" --version)
if [ "$got" != "$expect" ]; then
  echo "wheel: contracts --version says '$got', the tested binary '$expect'" >&2
  exit 1
fi
echo "wheel: $got"

# The README's first command (`cargo run -- status`), through the installed wheel: the same
# output as the binary the suite tested, on the example store.
diff <(target/debug/contracts status 2>&1) <("$installed" status 2>&1) \
  || { echo "wheel: \`contracts status\` differs from the tested binary's" >&2; exit 1; }
echo "wheel: \`contracts status\` on the example store matches the tested binary"
