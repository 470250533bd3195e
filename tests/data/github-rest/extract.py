#!/usr/bin/env python3
"""Extract the operations the PR-comment script calls from GitHub's OpenAPI description.

The full description (github/rest-api-description,
descriptions/api.github.com/api.github.com.2022-11-28.json) is about 13 MB; the tests need three
of its operations. This keeps `openapi`, `info` and `servers`, the name of the file it read
(`x-extracted-from`, which carries the API version), and under `paths` only the operations named
below, each copied as it is (its `$ref`s are left as they are: see README.md).

Usage: python3 extract.py api.github.com.2022-11-28.json > issue-comments.json
"""
import json
import os
import sys

OPERATIONS = ["issues/list-comments", "issues/create-comment", "issues/update-comment"]
METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]


def extract(description, source):
    paths = {}
    found = set()
    for path, item in description["paths"].items():
        for method in METHODS:
            op = item.get(method)
            if op and op.get("operationId") in OPERATIONS:
                paths.setdefault(path, {})[method] = op
                found.add(op["operationId"])
    missing = [o for o in OPERATIONS if o not in found]
    if missing:
        sys.exit(f"extract.py: operations not in the description: {', '.join(missing)}")
    return {
        "x-extracted-from": source,
        "openapi": description["openapi"],
        "info": description["info"],
        "servers": description["servers"],
        "paths": paths,
    }


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        description = json.load(f)
    json.dump(extract(description, os.path.basename(sys.argv[1])), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
