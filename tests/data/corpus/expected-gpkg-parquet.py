#!/usr/bin/env python3
"""Writes expected-gpkg-parquet.toml: what GDAL and pyarrow say the GeoPackage and GeoParquet
files of tests/data contain. Run from this folder:

    python3 expected-gpkg-parquet.py > expected-gpkg-parquet.toml

GeoPackage: `ogrinfo -ro -al -so FILE` (GDAL 3.6.2) gives the feature count and the layer's
SRS (`ID["EPSG",N]`); the envelope is GDAL's `ogrinfo -ro -q -sql "SELECT MIN(ST_MinX(geom)),
MIN(ST_MinY(geom)), MAX(ST_MaxX(geom)), MAX(ST_MaxY(geom)) FROM layer"` (15 significant
digits); null counts per column come from SQLite itself (`SELECT count(*) - count(col)`),
null geometries likewise.
GeoParquet: pyarrow (26) reads the table and its `geo` metadata; shapely 2 (`from_wkb`,
`total_bounds`) the WKB; native GeoArrow coordinates are reduced with pyarrow.compute.
The CRS is the `geo` metadata's: absent means OGC:CRS84, written EPSG:4326 (the name a
profile prints for CRS84 data), else the PROJJSON `id`.
"""
import json
import re
import sqlite3
import subprocess

import pyarrow.compute as pc
import pyarrow.parquet as pq
import shapely

GPKG = [
    ("naturalearth/cities.gpkg", None),
    ("naturalearth/countries.gpkg", None),
    ("nc/nc.gpkg", None),
    ("corpus/gpkg/test_gpkg_nulls.gpkg", None),
    ("corpus/gpkg/line_zm.gpkg", None),
    ("gpkg/rowid_column.gpkg", None),
    ("gpkg/placeholder.gpkg", None),
    ("gpkg/two_layers.gpkg", "cities"),
    ("gpkg/two_layers.gpkg", "capitals"),
]
PARQUET = [
    "naturalearth/cities.parquet",
    "naturalearth/countries.parquet",
    "corpus/geoparquet/example.parquet",
] + [
    f"corpus/geoparquet/data-{k}-encoding_{e}.parquet"
    for k in ["point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon"]
    for e in ["wkb", "native"]
]


def toml_str(s):
    return json.dumps(s)


def emit(path, layer, count, null_geoms, envelope, crs, nulls, tool):
    print("[[file]]")
    print(f"path = {toml_str(path)}")
    if layer:
        print(f"layer = {toml_str(layer)}")
    print(f"tool = {toml_str(tool)}")
    print(f"feature_count = {count}")
    print(f"null_geometries = {null_geoms}")
    if envelope is not None:
        print("envelope = [" + ", ".join(repr(float(v)) for v in envelope) + "]")
    print(f"crs = {toml_str(crs) if crs else toml_str('')}")
    print("[file.nulls]")
    for k, v in nulls.items():
        print(f"{toml_str(k)} = {v}")
    print()


for path, layer in GPKG:
    args = ["ogrinfo", "-ro", "-al", "-so", "../" + path] if not layer else ["ogrinfo", "-ro", "-so", "../" + path, layer]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    name = re.search(r"Layer name: (.*)", out).group(1).strip()
    count = int(re.search(r"Feature Count: (\d+)", out).group(1))
    ext = re.search(r"Extent: \(([-\d.]+), ([-\d.]+)\) - \(([-\d.]+), ([-\d.]+)\)", out)
    envelope = [float(x) for x in ext.groups()] if ext else None
    ids = re.findall(r'ID\["(\w+)",(\d+)\]\]\s*$', out.split("Layer SRS WKT:")[1].split("\n\S")[0], re.M) if "Layer SRS WKT" in out else []
    crs = f"{ids[-1][0]}:{ids[-1][1]}" if ids else None
    db = sqlite3.connect("../" + path)
    geom = db.execute("SELECT column_name FROM gpkg_geometry_columns WHERE table_name = ?", (name,)).fetchone()[0]
    cols = [r[1] for r in db.execute(f'PRAGMA table_info("{name}")') if not (r[5] and r[2].upper() == "INTEGER") and r[1] != geom]
    nulls = {c: db.execute(f'SELECT count(*) - count("{c}") FROM "{name}"').fetchone()[0] for c in cols}
    null_geoms = db.execute(f'SELECT count(*) - count("{geom}") FROM "{name}"').fetchone()[0]
    # The extent GDAL computes from the geometries (the `Extent:` line may be the stale
    # bounds of gpkg_contents, printed to 6 decimals).
    sql = (f'SELECT MIN(ST_MinX("{geom}")) AS minx, MIN(ST_MinY("{geom}")) AS miny, '
           f'MAX(ST_MaxX("{geom}")) AS maxx, MAX(ST_MaxY("{geom}")) AS maxy FROM "{name}"')
    out = subprocess.run(["ogrinfo", "-ro", "-q", "-sql", sql, "../" + path], capture_output=True, text=True, check=True).stdout
    vals = re.findall(r"(minx|miny|maxx|maxy) \(Real\) = (\S+)", out)
    envelope = [float(v) for _, v in vals] if len(vals) == 4 else None
    emit(path, layer, count, null_geoms, envelope, crs, nulls, "ogrinfo -ro -al -so; ogrinfo -sql ST_MinX..; sqlite3 count(*) - count(col)")

for path in PARQUET:
    f = pq.ParquetFile("../" + path)
    geo = json.loads(f.metadata.metadata[b"geo"])
    col = geo["primary_column"]
    meta = geo["columns"][col]
    t = f.read()
    g = t.column(col)
    null_geoms = g.null_count
    if meta["encoding"].lower() == "wkb":
        geoms = shapely.from_wkb([v.as_py() for v in g if v.is_valid])
        b = shapely.total_bounds(geoms)
        envelope = None if any(map(lambda v: v != v, b)) else list(b)
    else:
        arr = g.combine_chunks()
        while hasattr(arr.type, "value_type") and not str(arr.type).startswith("struct"):
            arr = pc.list_flatten(arr)
        # pc.struct_field keeps the struct's own nulls (a null point's slots hold junk).
        xs = pc.drop_null(pc.struct_field(arr, "x"))
        ys = pc.drop_null(pc.struct_field(arr, "y"))
        xs = pc.filter(xs, pc.invert(pc.is_nan(xs)))
        ys = pc.filter(ys, pc.invert(pc.is_nan(ys)))
        envelope = [pc.min(xs).as_py(), pc.min(ys).as_py(), pc.max(xs).as_py(), pc.max(ys).as_py()]
        if envelope[0] is None:
            envelope = None
    if "crs" not in meta:
        crs = "EPSG:4326"
    elif meta["crs"] is None:
        crs = None
    else:
        i = meta["crs"].get("id") or {}
        crs = f"{i['authority']}:{i['code']}" if i else None
        if crs == "OGC:CRS84":
            crs = "EPSG:4326"
    excluded = set(geo["columns"])
    for m in geo["columns"].values():
        for part in (m.get("covering", {}).get("bbox", {}) or {}).values():
            excluded.add(part[0])
    nulls = {n: t.column(n).null_count for n in t.schema.names if n not in excluded}
    emit(path, None, t.num_rows, null_geoms, envelope, crs, nulls, "pyarrow read_table + shapely total_bounds / pyarrow.compute min/max")
