"""Make the small edge-case files in tests/data/made/ from the copied real data.

Run from tests/data: `python3 made/make.py` (geopandas 1.x with pyogrio, pyarrow).
The outputs are committed; this script says exactly how they were made.
"""
import warnings

import geopandas as gpd

warnings.filterwarnings("ignore")

# One line feature and one feature with a null geometry, in every format
# (written without a spatial index: GDAL refuses null geometries in an indexed FlatGeobuf).
nulls = gpd.read_file("edge/null_geom.geojson")
nulls.to_file("made/null_geom.gpkg", driver="GPKG")
nulls.to_file("made/null_geom.shp")
nulls.to_file("made/null_geom.fgb", driver="FlatGeobuf", SPATIAL_INDEX="NO")
nulls.to_parquet("made/null_geom.parquet")

# Empty layers: the cities schema with no feature.
cities = gpd.read_file("naturalearth/cities.gpkg")
empty = cities.iloc[0:0]
empty.to_file("made/empty.gpkg", driver="GPKG")
empty.to_file("made/empty.shp")
empty.to_file("made/empty.fgb", driver="FlatGeobuf")
empty.to_file("made/empty.geojson", driver="GeoJSON")
empty.to_parquet("made/empty.parquet")

# One null in every attribute type, four features, in the formats that can type them all.
import datetime

import pandas as pd
from shapely.geometry import Point

typed = gpd.GeoDataFrame(
    {
        "b": pd.array([True, None, False, True], dtype="boolean"),
        "i32": pd.array([1, 2, None, 4], dtype="Int32"),
        "i64": pd.array([1, 2, 3, None], dtype="Int64"),
        "f64": pd.array([None, 1.5, 2.5, 3.5], dtype="Float64"),
        "s": pd.array(["a", None, "c", "d"], dtype="string"),
        "d": [datetime.date(2024, 1, 1), None, datetime.date(2024, 1, 3), datetime.date(2024, 1, 4)],
        "dt": pd.to_datetime(["2024-01-01T10:00:00", None, "2024-01-03T10:00:00", "2024-01-04T10:00:00"]),
    },
    geometry=[Point(0, 0), Point(1, 1), None, Point(3, 3)],
    crs="EPSG:4326",
)
typed.to_file("made/typed_nulls.gpkg", driver="GPKG")
typed.to_file("made/typed_nulls.fgb", driver="FlatGeobuf", SPATIAL_INDEX="NO")
typed.to_file("made/typed_nulls.geojson", driver="GeoJSON")
typed.to_parquet("made/typed_nulls.parquet")

# The cities in several row groups (50 rows each), so GeoParquet row groups are read in
# parallel in the tests too (the copied files have a single row group).
import pyarrow.parquet as pq

pq.write_table(pq.read_table("naturalearth/cities.parquet"), "made/cities_rowgroups.parquet", row_group_size=50)
