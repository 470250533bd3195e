#!/usr/bin/env python3
"""Write a `git fast-import` stream for a benchmark store to stdout.

DATASETS datasets x VERSIONS versions, one commit per proposal, as `contracts propose` would
make them: each commit adds `contracts/<ds>/<version>.toml` (valid per
docs/src/reference/contract.md, built-in clauses only) and appends its `[[change]]` records
(docs/src/reference/store-files.md, rendered byte for byte like `ChangeRecord::to_toml`) to
`history/<ds>.toml`. Proposals are interleaved across datasets
(every dataset's version k before any dataset's version k+1), like a busy platform.

The evolution of each dataset, for VERSIONS = 20:
  1.0.0            first version: one whole-contract `added` record
  1.1.0 .. 1.9.0   the envelope grows (widening, compatible): minor bumps
  2.0.0            `required_attributes` gains `surface` (fixed, breaking): a major bump with
                   a 180-day window
  2.1.0 .. 2.9.0   the envelope grows again
Larger VERSIONS repeat the pattern with further majors (each sunsetting the line before).

Usage: gen_store.py DATASETS VERSIONS [rounds] | git fast-import

With `rounds`, each round of proposals (every dataset's version k) is one commit instead of
one commit per proposal: the same files at HEAD in VERSIONS + 1 commits. It exists for the
store sizes whose one-commit-per-proposal history cannot be built in reasonable time (10,000 x
20: fast-import rewrites the 10,000-entry trees at each of 200,001 commits), for commands that
read HEAD and not the log (`status`); `check` and `log` walk the log and need the real shape.
"""

import datetime as dt
import sys

BASE_TS = 1_700_000_000  # commit n is at BASE_TS + 60 n
BASE_DAY = dt.date(2021, 1, 1)  # version k becomes valid BASE_DAY + 30 k
WINDOW_DAYS = 180
PER_LINE = 10

AUTHOR = "Bench Proposer <bench@example.org>"

CONFIG = """\
[policy]
min_window_days = 90
max_window_days = 365
new_clauses     = "advisory"
"""

CONSUMERS = """\
[consumers.flood-model]
team     = "Hydrology"
contacts = ["hydro-oncall@example.org"]
"""


def toml_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def version_of(k):
    return f"{k // PER_LINE + 1}.{k % PER_LINE}.0"


def required_attributes(line):
    attrs = [("id", "int64"), ("class", "string")]
    # Each major after the first adds one required attribute: a fixed clause changed.
    attrs += [(f"surface{n}" if n > 1 else "surface", "string") for n in range(1, line)]
    return "{ " + ", ".join(f"{k} = {toml_string(v)}" for k, v in attrs) + " }"


def envelope(k):
    # Grows at every minor version; stays put across a major bump.
    grow = k - (k // PER_LINE)  # number of minor steps so far
    return [0.0, 0.0, 700000.0 + 1000.0 * grow, 1300000.0]


def contract(ds, k):
    v = version_of(k)
    line = k // PER_LINE + 1
    valid_from = BASE_DAY + dt.timedelta(days=30 * k)
    out = [
        f"dataset     = {toml_string(ds)}",
        f"version     = {toml_string(v)}",
    ]
    if k > 0:
        out.append(f"supersedes  = {toml_string(version_of(k - 1))}")
    out.append(f"valid_from  = {valid_from.isoformat()}")
    if k > 0 and k % PER_LINE == 0:
        out.append(f"sunset      = {(valid_from + dt.timedelta(days=WINDOW_DAYS)).isoformat()}")
    out += [
        f"description = {toml_string('Benchmark dataset ' + ds)}",
        'advisory    = ["max_imputed_fraction"]',
        "",
        "[clauses]",
        'crs                      = "EPSG:27700"',
        'units                    = "metre"',
        "envelope                 = [" + ", ".join(f"{x:.1f}" for x in envelope(k)) + "]",
        'permitted_geometry       = ["LineString", "MultiLineString"]',
        'emitted_geometry         = ["LineString"]',
        'permitted_crs            = ["EPSG:27700", "EPSG:4326"]',
        f"required_attributes      = {required_attributes(line)}",
        'optional_attributes      = { name = "string", ref = "string" }',
        'attribute_semantics      = { class = "road classification", name = "name as signed" }',
        "max_null_fraction        = { name = 0.10, ref = 0.60 }",
        "metric_tolerances        = { positional_rmse_m = 1.0, invalid_geometry_fraction = 0.0 }",
        "max_imputed_fraction     = 0.02",
        'supported_output_formats = ["GPKG", "FlatGeobuf", "GeoParquet"]',
    ]
    return "\n".join(out) + "\n"


def instant(ts):
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def records(ds, k, ts):
    """The [[change]] tables `propose` appends for version k of ds."""
    at = instant(ts)
    to = version_of(k)
    if k == 0:
        return (
            f"\n[[change]]\nat        = {at}\nto        = {toml_string(to)}\n"
            f'clause    = "*"\ndirection = "added"\nverdict   = "compatible"\n'
            f"rationale = {toml_string('First contract of ' + ds + '.')}\n"
        )
    frm = version_of(k - 1)
    if k % PER_LINE == 0:
        opens = BASE_DAY + dt.timedelta(days=30 * k)
        sunset = opens + dt.timedelta(days=WINDOW_DAYS)
        return (
            f"\n[[change]]\nat        = {at}\nfrom      = {toml_string(frm)}\n"
            f"to        = {toml_string(to)}\nclause    = \"required_attributes\"\n"
            f'kind      = "fixed"\ndirection = "changed"\nverdict   = "breaking"\n'
            f"window    = {{ opens = {opens.isoformat()}, sunset = {sunset.isoformat()} }}\n"
            f"rationale = {toml_string('Every feature now carries its surface type.')}\n"
        )
    return (
        f"\n[[change]]\nat        = {at}\nfrom      = {toml_string(frm)}\n"
        f"to        = {toml_string(to)}\nclause    = \"envelope\"\n"
        f'kind      = "widening"\ndirection = "grew"\nverdict   = "compatible"\n'
        f"rationale = {toml_string('The survey area grew east.')}\n"
    )


def history_header(ds):
    return (
        f"# Change history of `{ds}`: appended by `contracts propose` and `contracts sunset`.\n"
        "# Append-only: `contracts check` fails if an earlier record is ever edited or removed.\n"
    )


def main():
    datasets, versions = int(sys.argv[1]), int(sys.argv[2])
    rounds = len(sys.argv) > 3 and sys.argv[3] == "rounds"
    out = sys.stdout.buffer
    w = out.write

    def data(b):
        w(b"data %d\n" % len(b))
        w(b)
        w(b"\n")

    def commit(ts, message, files):
        w(b"commit refs/heads/main\n")
        w(f"author {AUTHOR} {ts} +0000\ncommitter {AUTHOR} {ts} +0000\n".encode())
        data(message.encode())
        for path, content in files:
            w(f"M 100644 inline {path}\n".encode())
            data(content.encode())

    commit(
        BASE_TS,
        "contracts init: create the store",
        [
            ("contracts.toml", CONFIG),
            ("consumers.toml", CONSUMERS),
            ("contracts/.gitkeep", ""),
            ("history/.gitkeep", ""),
            ("notifications/.gitkeep", ""),
        ],
    )
    history = {}
    n = 0
    for k in range(versions):
        round_files = []
        for d in range(datasets):
            n += 1
            ts = BASE_TS + 60 * n
            ds = f"ds{d:04d}"
            v = version_of(k)
            history[ds] = history.get(ds, history_header(ds)) + records(ds, k, ts)
            files = [
                (f"contracts/{ds}/{v}.toml", contract(ds, k)),
                (f"history/{ds}.toml", history[ds]),
            ]
            if rounds:
                round_files += files
            else:
                commit(ts, f"contracts propose: {ds} {v}", files)
        if rounds:
            commit(ts, f"bench: round {k + 1} of proposals ({datasets} datasets)", round_files)
    w(b"done\n")


if __name__ == "__main__":
    main()
