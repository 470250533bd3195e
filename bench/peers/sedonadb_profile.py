"""The same profile in SedonaDB (DataFusion + GeoArrow): count, envelope, nulls, types."""
import sys

import sedonadb

path = sys.argv[1]
sd = sedonadb.connect()
df = sd.read_parquet(path) if path.endswith(".parquet") else sd.read_pyogrio(path)
df.to_view("t", overwrite=True)
cols = [c for c in df.schema.names if c not in ("geometry", "wkb_geometry", "geom")]
geom = next(c for c in df.schema.names if c in ("geometry", "wkb_geometry", "geom"))
nulls = ", ".join(f'count(*) - count("{c}") AS "{c}_nulls"' for c in cols)
sql = (
    f"SELECT count(*) AS n, count(*) - count({geom}) AS null_geoms, "
    f"min(ST_XMin({geom})) AS minx, min(ST_YMin({geom})) AS miny, "
    f"max(ST_XMax({geom})) AS maxx, max(ST_YMax({geom})) AS maxy, {nulls} FROM t"
)
print(sd.sql(sql).to_pandas().to_dict("records"))
print(sd.sql(f"SELECT DISTINCT ST_GeometryType({geom}) FROM t").to_pandas().iloc[:, 0].tolist())
