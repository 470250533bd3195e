#!/usr/bin/env python3
"""Makes the GeoParquet edge cases in this folder with pyarrow (26) and shapely (2):

    python3 make.py

two_geoms.parquet: three rows, geometry columns `a` (points, primary, planar) and `b`
(linestrings, spherical edges, CRS null), and an attribute `n` (one null).
    a: POINT (1 2), POINT (3 4), null       -> envelope [1, 2, 3, 4], 1 null
    b: LINESTRING (10 20, 30 40) three times -> envelope [10, 20, 30, 40], 0 null
"""
import json

import pyarrow as pa
import pyarrow.parquet as pq
import shapely

a = [shapely.to_wkb(shapely.Point(1, 2)), shapely.to_wkb(shapely.Point(3, 4)), None]
line = shapely.to_wkb(shapely.LineString([(10, 20), (30, 40)]))
t = pa.table({"n": pa.array([1, None, 3], pa.int64()), "a": pa.array(a, pa.binary()), "b": pa.array([line] * 3, pa.binary())})
geo = {
    "version": "1.1.0",
    "primary_column": "a",
    "columns": {
        "a": {"encoding": "WKB", "geometry_types": ["Point"]},
        "b": {"encoding": "WKB", "geometry_types": ["LineString"], "edges": "spherical", "crs": None},
    },
}
t = t.replace_schema_metadata({"geo": json.dumps(geo)})
pq.write_table(t, "two_geoms.parquet")

# native_xyz_interleaved.parquet: GeoArrow `linestring` with interleaved XYZ coordinates
# (fixed_size_list<double>[3], child field "xyz"), two rows and a null:
#   LINESTRING Z (0 0 5, 2 1 6), LINESTRING Z (-1 3 7, 4 -2 8, 5 5 9), null
#   -> 3 features, 1 null geometry, envelope [-1, -2, 5, 5] (z is not in the envelope)
coord = pa.list_(pa.field("xyz", pa.float64()), 3)
rows = [[[0, 0, 5], [2, 1, 6]], [[-1, 3, 7], [4, -2, 8], [5, 5, 9]], None]
col = pa.array(rows, pa.list_(pa.field("vertices", coord)))
t = pa.table({"geometry": col, "k": pa.array(["a", "b", None])})
geo = {
    "version": "1.1.0",
    "primary_column": "geometry",
    "columns": {"geometry": {"encoding": "linestring", "geometry_types": ["LineString Z"]}},
}
pq.write_table(t.replace_schema_metadata({"geo": json.dumps(geo)}), "native_xyz_interleaved.parquet")
