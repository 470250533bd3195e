"""Generate a GDAL-written GeoJSON road network for bench/geojson.sh.

    python3 bench/gen_roads.py N_FEATURES OUT.geojson

N random-walk LineStrings of 3 to 13 vertices over Europe with five attributes as a road
layer has them (an id, a name with nulls, a class, a speed limit with nulls, a one-way
flag), written by GDAL's GeoJSON driver through pyogrio: its layout (one feature per line,
15 significant digits) is what a user's export looks like. 1 M features make about 500 MB.
"""
import sys
import time

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely


def main():
    n = int(sys.argv[1])
    out = sys.argv[2]
    rng = np.random.default_rng(14)
    t0 = time.time()
    counts = rng.integers(3, 14, n)
    total = int(counts.sum())
    starts = np.repeat(np.column_stack([rng.uniform(-10, 30, n), rng.uniform(36, 70, n)]), counts, axis=0)
    steps = rng.normal(0, 0.001, (total, 2))
    offsets = np.cumsum(counts) - counts
    # A walk per feature: cumulative steps, restarted at each feature's first vertex.
    walk = np.cumsum(steps, axis=0)
    walk -= np.repeat(walk[offsets] - steps[offsets], counts, axis=0)
    coords = starts + walk
    geoms = shapely.from_ragged_array(
        shapely.GeometryType.LINESTRING, coords, (np.concatenate([[0], np.cumsum(counts)]),)
    )
    classes = np.array(["motorway", "primary", "secondary", "tertiary", "residential", "service"])
    name = pd.Series(np.char.add("Road ", np.arange(n).astype(str)))
    df = gpd.GeoDataFrame(
        {
            "osm_id": np.arange(1, n + 1, dtype=np.int64) * 7,
            "name": name.mask(rng.random(n) < 0.3),
            "highway": classes[rng.integers(0, len(classes), n)],
            "maxspeed": pd.Series(rng.choice([30, 50, 70, 90, 130], n)).mask(rng.random(n) < 0.6),
            "oneway": rng.random(n) < 0.2,
        },
        geometry=geoms,
        crs="EPSG:4326",
    )
    print(f"generated {n} roads in {time.time() - t0:.1f}s", file=sys.stderr)
    t0 = time.time()
    df.to_file(out, driver="GeoJSON", engine="pyogrio")
    print(f"wrote {out} in {time.time() - t0:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
