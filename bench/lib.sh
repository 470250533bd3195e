# Shared by the bench scripts: sourced, never run. The store they build for `roads`.

# Lines 1.0.0 (2026-01-01) and 1.1.0 (2026-03-01), then 2.0.0 (2026-11-01, BNG) with the
# window of its breaking change recorded in history/roads.toml: the versions the bench logs
# read. DIR is the store; SUNSET the sunset of line 1; RATIONALE the change's.
roads_contracts() { # DIR SUNSET RATIONALE
    local s=$1
    mkdir -p "$s/contracts/roads" "$s/history"
    printf 'dataset = "roads"\nversion = "1.0.0"\nvalid_from = 2026-01-01\n[clauses]\ncrs = "EPSG:4326"\n' \
        > "$s/contracts/roads/1.0.0.toml"
    printf 'dataset = "roads"\nversion = "1.1.0"\nsupersedes = "1.0.0"\nvalid_from = 2026-03-01\n[clauses]\ncrs = "EPSG:4326"\n' \
        > "$s/contracts/roads/1.1.0.toml"
    printf 'dataset = "roads"\nversion = "2.0.0"\nsupersedes = "1.1.0"\nvalid_from = 2026-11-01\nsunset = %s\n[clauses]\ncrs = "EPSG:27700"\n' \
        "$2" > "$s/contracts/roads/2.0.0.toml"
    cat > "$s/history/roads.toml" <<TOML
[[change]]
at        = 2026-10-01T17:00:00Z
from      = "1.1.0"
to        = "2.0.0"
clause    = "crs"
kind      = "fixed"
direction = "changed"
verdict   = "breaking"
window    = { opens = 2026-11-01, sunset = $2 }
rationale = "$3"
TOML
}

# The [notify] and [smtp] tables of a store's contracts.toml, for mail to a sink on loopback
# port PORT; NOTIFY_KEYS (lines, each ending in a newline) go before [notify]'s `from`.
mail_config() { # PORT [NOTIFY_KEYS]
    printf '[notify]\n%sfrom = "Data Platform <data-platform@example.org>"\n\n[smtp]\nhost = "127.0.0.1"\nport = %s\ntls = "none"\n' \
        "${2:-}" "$1"
}

# Sets `bin`: CONTRACTS_BIN, else the release build of the repository at `here`, built now
# (with ARGS added to the cargo build, e.g. `--example smtp_sink`).
release_bin() { # [ARGS...]
    if [[ -n "${CONTRACTS_BIN:-}" ]]; then
        bin=$CONTRACTS_BIN
    else
        echo "building (release)..." >&2
        (cd "$here" && cargo build --release --quiet --bin contracts "$@")
        bin=$here/target/release/contracts
    fi
}

# Sets `work`: BENCH_DIR (made if missing, and kept), else a new temporary directory that is
# removed on exit, after CLEANUP (more commands for the EXIT trap, if given).
work_dir() { # [CLEANUP]
    if [[ -n "${BENCH_DIR:-}" ]]; then
        work=$BENCH_DIR; mkdir -p "$work"
    else
        work=$(mktemp -d); trap "rm -rf \"\$work\"${1:+; $1}" EXIT
    fi
}
