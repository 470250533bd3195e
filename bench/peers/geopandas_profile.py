"""The profile a user would compute with plain geopandas: read, bounds, nulls, types."""
import sys

import geopandas as gpd

path = sys.argv[1]
df = gpd.read_parquet(path) if path.endswith(".parquet") else gpd.read_file(path)
print(len(df), list(df.total_bounds), df.isna().sum().to_dict(), df.geom_type.unique().tolist())
