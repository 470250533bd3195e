#!/usr/bin/env python3
"""Write expected.toml: what GDAL reads from every corpus file.

Run from this directory with GDAL's command-line tools on the PATH (Debian bookworm
`gdal-bin`, GDAL 3.6.2):

    python3 make_expected.py > expected.toml

For each file it runs `ogrinfo -ro -al -so FILE` (feature count, extent, field types) and
`ogrinfo -ro -al FILE` (each feature's geometry as WKT: its type and dimension words, or no
geometry line for a null geometry). Nothing here reads `contracts`' output.
"""
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

FILES = sorted(
    str(p) for p in Path(".").rglob("*") if p.suffix in (".fgb", ".geojson", ".shp")
)
FIELD = re.compile(
    r"^(\S[^:]*): (Integer64|Integer|Real|String|Date|DateTime|Time|Binary)(\(\w+\))? \("
)
TYPES = (
    "POINT|LINESTRING|POLYGON|MULTIPOINT|MULTILINESTRING|MULTIPOLYGON|GEOMETRYCOLLECTION|"
    "CIRCULARSTRING|COMPOUNDCURVE|CURVEPOLYGON|MULTICURVE|MULTISURFACE|POLYHEDRALSURFACE|"
    "TIN|TRIANGLE"
)
WKT = re.compile(r"^  (" + TYPES + r")( ZM| Z| M)?( EMPTY$| \()")


def ogrinfo(*args):
    out = subprocess.run(
        ["ogrinfo", "-ro", "-al", *args], capture_output=True, text=True, check=True
    )
    return out.stdout


def toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


print("# What GDAL reads from each corpus file; written by `python3 make_expected.py`")
print("# (ogrinfo -ro -al -so / ogrinfo -ro -al, GDAL 3.6.2). Do not edit by hand.")
for f in FILES:
    summary = ogrinfo("-so", f)
    count = int(re.search(r"^Feature Count: (\d+)", summary, re.M).group(1))
    extent = re.search(
        r"^Extent: \(([-\d.e+]+), ([-\d.e+]+)\) - \(([-\d.e+]+), ([-\d.e+]+)\)", summary, re.M
    )
    fields = []
    for line in summary.splitlines():
        m = FIELD.match(line)
        if m:
            fields.append((m.group(1), m.group(2) + (m.group(3) or "")))
    full = ogrinfo(f)
    geoms = Counter()
    nulls = 0
    for block in re.split(r"^OGRFeature\([^)]*\):\d+\n", full, flags=re.M)[1:]:
        found = None
        for line in block.splitlines():
            m = WKT.match(line)
            if m:
                dim = {" Z": "XYZ", " M": "XYM", " ZM": "XYZM"}.get(m.group(2) or "", "XY")
                found = f"{m.group(1)} {dim}"
                break
        if found is None:
            nulls += 1
        else:
            geoms[found] += 1
    print()
    print("[[file]]")
    print(f"path = {toml_str(f)}")
    print(f"feature_count = {count}")
    print(f"null_geometries = {nulls}")
    if extent:
        print("extent = [" + ", ".join(extent.groups()) + "]")
    print("geometries = { " + ", ".join(f"{toml_str(k)} = {v}" for k, v in sorted(geoms.items())) + " }")
    print("fields = { " + ", ".join(f"{toml_str(k)} = {toml_str(v)}" for k, v in fields) + " }")
