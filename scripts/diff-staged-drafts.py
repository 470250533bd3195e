#!/usr/bin/env python3
"""The pre-commit hook `contracts-diff-drafts`: `contracts diff` of each staged draft against the
newest published version of its dataset.

pre-commit passes the staged files that match the hook's `files` pattern (drafts/**/*.toml by
default) and has stashed every unstaged change, so each file on disk is the staged draft. For
each one this runs `contracts diff DATASET@NEWEST DRAFT` in the store (the newest version comes
from `contracts --format json show DATASET`, which reads the store at HEAD) and exits with the
worst exit code: 0 when every draft bumps enough, 1 when one bumps less than its changes require
(diff names each such clause), 2 for a draft it cannot read. A draft of a dataset with no
published version yet has nothing to compare with: it is noted and passes.

It needs `contracts` on PATH and Python 3.9+ (no packages).
"""
import json
import re
import subprocess
import sys

try:
    import tomllib  # Python 3.11+
except ImportError:  # pragma: no cover - older Pythons read the one key by pattern
    tomllib = None

# A draft's `dataset` is a top-level key; used only where tomllib is missing.
DATASET_LINE = re.compile(r'^\s*dataset\s*=\s*"([^"]*)"', re.MULTILINE)


def dataset_of(path):
    with open(path, "rb") as f:
        raw = f.read()
    if tomllib is not None:
        try:
            value = tomllib.loads(raw.decode("utf-8")).get("dataset")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: not a TOML file: {e}") from None
        if not isinstance(value, str):
            raise ValueError(f"{path}: no `dataset = \"...\"` key: is it a draft?")
        return value
    match = DATASET_LINE.search(raw.decode("utf-8", "replace"))
    if not match:
        raise ValueError(f"{path}: no `dataset = \"...\"` key: is it a draft?")
    return match.group(1)


def published(dataset):
    """Whether HEAD has any published version of `dataset` (contracts/<dataset>/*.toml)."""
    out = subprocess.run(
        ["git", "ls-tree", "--name-only", "HEAD", f"contracts/{dataset}/"],
        capture_output=True,
        text=True,
    )
    return out.returncode == 0 and any(l.endswith(".toml") for l in out.stdout.splitlines())


def newest_version(dataset):
    out = subprocess.run(
        ["contracts", "--format", "json", "show", dataset], capture_output=True, text=True
    )
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        return None, out.returncode
    return json.loads(out.stdout)["version"], 0


def main(paths):
    worst = 0
    for path in paths:
        try:
            dataset = dataset_of(path)
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            worst = max(worst, 2)
            continue
        if not published(dataset):
            print(f"{path}: `{dataset}` has no published version yet: nothing to diff against")
            continue
        version, code = newest_version(dataset)
        if version is None:
            worst = max(worst, code)
            continue
        print(f"$ contracts diff {dataset}@{version} {path}", flush=True)
        code = subprocess.run(["contracts", "diff", f"{dataset}@{version}", path]).returncode
        worst = max(worst, code)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
