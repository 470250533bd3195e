#!/usr/bin/env python3
"""Makes doctored copies of ../naturalearth/cities.parquet (243 points, EPSG:4326) whose `geo`
metadata contradicts the data, for the metadata checks of the GeoParquet reader, with pyarrow
(26) and shapely (2):

    python3 doctor.py

Only the `geo` metadata changes (and, for the covering files, one added `bbox` column); the
geometries and attributes are the real file's.

cities_bad_bbox.parquet: `bbox` [-10, -10, 10, 10], smaller than the data's envelope.
cities_bad_types.parquet: `geometry_types` ["Polygon", "Point Z"]; the data holds 2D points.
cities_bad_crs.parquet: `crs` a PROJJSON with neither an `id` nor a known definition.
cities_covering.parquet: a GeoParquet 1.1 `covering.bbox` column `bbox` (xmin, ymin, xmax,
    ymax as doubles) that holds each point: the clean case.
cities_bad_covering.parquet: the same, with rows 7 and 100 moved 5 degrees east, so that
    their boxes miss their points.
nybb_no_crs.parquet: ../nybb/nybb.shp (EPSG:2263, US feet) simplified to 200 feet, as
    GeoParquet, with its `crs` removed (absent means OGC:CRS84): envelope
    [913188.776184082, 120128.36999511719, 1067379.5294189453, 272844.2936401367].
"""
import json

import pyarrow as pa
import pyarrow.parquet as pq
import shapely

real = pq.read_table("../naturalearth/cities.parquet")
geo = json.loads(real.schema.metadata[b"geo"])


def write(table, meta, name):
    pq.write_table(table.replace_schema_metadata({"geo": json.dumps(meta)}), name)


def doctored(**column):
    meta = json.loads(json.dumps(geo))
    meta["columns"]["geometry"].update(column)
    return meta


write(real, doctored(bbox=[-10.0, -10.0, 10.0, 10.0]), "cities_bad_bbox.parquet")
write(real, doctored(geometry_types=["Polygon", "Point Z"]), "cities_bad_types.parquet")
write(real, doctored(crs={"type": "GeographicCRS", "name": "made up"}), "cities_bad_crs.parquet")

bounds = shapely.bounds(shapely.from_wkb(real.column("geometry").to_pylist()))
covering = doctored(covering={"bbox": {k: ["bbox", k] for k in ("xmin", "ymin", "xmax", "ymax")}})


def with_bbox(rows):
    fields = {k: pa.array(rows[:, i], pa.float64()) for i, k in enumerate(("xmin", "ymin", "xmax", "ymax"))}
    return real.append_column("bbox", pa.StructArray.from_arrays(list(fields.values()), list(fields)))


write(with_bbox(bounds), covering, "cities_covering.parquet")
moved = bounds.copy()
for row in (7, 100):
    moved[row, 0] += 5
    moved[row, 2] += 5
write(with_bbox(moved), covering, "cities_bad_covering.parquet")

# nybb_no_crs.parquet: ../nybb/nybb.shp (the five New York boroughs, EPSG:2263, US feet)
# simplified to 200 feet to stay small, written as GeoParquet by geopandas, then its `crs`
# key removed: absent means OGC:CRS84, which the feet coordinates contradict.
import geopandas

nybb = geopandas.read_file("../nybb/nybb.shp")
nybb["geometry"] = nybb.geometry.simplify(200)
nybb.to_parquet("nybb_no_crs.parquet")
t = pq.read_table("nybb_no_crs.parquet")
meta = json.loads(t.schema.metadata[b"geo"])
del meta["columns"]["geometry"]["crs"]
write(t, meta, "nybb_no_crs.parquet")
