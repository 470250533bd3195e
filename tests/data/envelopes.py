#!/usr/bin/env python3
"""The envelopes `tests/test_release_profile.rs` expects, as GDAL reads the files.

For each file below, GDAL's `ogrinfo` (Debian's `gdal-bin`) computes the extent of the
layer's geometries with SQL in its SQLite dialect (SpatiaLite's `ST_MinX` ... `ST_MaxY`,
null geometries skipped: geopandas' `total_bounds`, without geopandas). The four numbers
come back as two WKB points in hex (`ST_AsBinary(MakePoint(...))`), the exact doubles: the
text ogrinfo prints for a number is rounded to 15 digits, and GDAL's GeoJSON writer drops
the last digits of values such as 83.64513000000001.

Prints one line per file, `PATH XMIN YMIN XMAX YMAX`, each number as Python's `repr` (the
shortest text that reads back as the same double). Run from any directory:

    python3 tests/data/envelopes.py

GDAL 3.6 has no Parquet driver, so the `.parquet` files are not listed; the test asserts that
they give the envelope of the other formats.
"""

import os
import re
import struct
import subprocess
import sys

FILES = [
    *(f"naturalearth/countries.{ext}" for ext in ("shp", "gpkg", "geojson", "fgb")),
    *(f"naturalearth/cities.{ext}" for ext in ("shp", "gpkg", "geojson", "fgb")),
    "nc/nc.gpkg",
    "nybb/nybb.shp",
    "edge/null_geom.geojson",
    "made/null_geom.gpkg",
    "made/null_geom.shp",
    "made/null_geom.fgb",
]


def ogrinfo(*args):
    out = subprocess.run(["ogrinfo", "-ro", *args], check=True, capture_output=True, text=True)
    return out.stdout


def point(hex_wkb):
    """The x and y of a 2D WKB point."""
    wkb = bytes.fromhex(hex_wkb)
    order = "<" if wkb[0] == 1 else ">"
    (kind,) = struct.unpack(order + "I", wkb[1:5])
    assert kind == 1, f"not a 2D point: {hex_wkb}"
    return struct.unpack(order + "dd", wkb[5:21])


def envelope(path):
    summary = ogrinfo("-so", "-al", path)
    layer = re.search(r"^Layer name: (.+)$", summary, re.M).group(1)
    column = re.search(r"^Geometry Column = (.+)$", summary, re.M)
    # A format without a named geometry column shows it to SQLite as GEOMETRY.
    g = f'"{column.group(1)}"' if column else "GEOMETRY"
    corner = "hex(ST_AsBinary(MakePoint({0}(ST_{1}X({2})), {0}(ST_{1}Y({2})))))"
    sql = (
        f"SELECT {corner.format('MIN', 'Min', g)} AS lo, "
        f"{corner.format('MAX', 'Max', g)} AS hi FROM \"{layer}\""
    )
    text = ogrinfo("-q", path, "-dialect", "sqlite", "-sql", sql)
    lo = re.search(r"lo \(String\) = ([0-9A-F]+)", text).group(1)
    hi = re.search(r"hi \(String\) = ([0-9A-F]+)", text).group(1)
    return (*point(lo), *point(hi))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for rel in FILES:
        bounds = envelope(os.path.join(here, rel))
        print(rel, *(repr(v) for v in bounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
