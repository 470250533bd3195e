"""Split the Natural Earth countries into partitions, one per continent, the way a data
platform lays out a release too large for one file.

    python3 make.py        # pyarrow 26; GDAL's ogr2ogr 3.6 for the FlatGeobuf partitions

- countries_hive/continent=NAME/part-0.parquet: Hive-style folders. Unlike a Hive writer, each
  file keeps the `continent` column, so the merged profile is comparable column for column
  with the profile of ../naturalearth/countries.parquet.
- countries_hive/_SUCCESS: the empty marker Spark writes beside a finished dataset.
- countries_fgb/NAME.fgb: ogr2ogr -where "continent = 'NAME'" of ../naturalearth/countries.fgb.
"""
import os
import subprocess

import pyarrow.compute as pc
import pyarrow.parquet as pq

here = os.path.dirname(os.path.abspath(__file__))
src = os.path.join(here, "..", "naturalearth")
table = pq.read_table(os.path.join(src, "countries.parquet"))
continents = sorted(set(table.column("continent").to_pylist()))
for c in continents:
    part = table.filter(pc.equal(table.column("continent"), c))
    d = os.path.join(here, "countries_hive", f"continent={c.replace(' ', '_')}")
    os.makedirs(d, exist_ok=True)
    pq.write_table(part, os.path.join(d, "part-0.parquet"))
open(os.path.join(here, "countries_hive", "_SUCCESS"), "w").close()

os.makedirs(os.path.join(here, "countries_fgb"), exist_ok=True)
for c in continents:
    out = os.path.join(here, "countries_fgb", c.replace(" ", "_") + ".fgb")
    if os.path.exists(out):
        os.remove(out)
    subprocess.run(
        ["ogr2ogr", "-f", "FlatGeobuf", "-where", f"continent = '{c}'", out,
         os.path.join(src, "countries.fgb")],
        check=True,
    )
