"""Generate a synthetic release of about SIZE_MB per format for bench/profile.sh.

    python3 bench/generate.py SIZE_MB OUTDIR

Writes OUTDIR/release.{fgb,parquet,gpkg,geojson,shp}: the same features in each, small random
polygons over the globe (5-point rings) with six attributes, some of them with nulls. No
geometry is null: SedonaDB 0.5 fails on the empty WKB that pyogrio hands it for a null
geometry ("failed to fill whole buffer"), and the benchmark compares speed, not edge cases
(those are in tests/). The FlatGeobuf has its spatial index (GDAL's default); the
GeoParquet has row groups of 100k rows, as large files usually have, so readers can work
on them in parallel.
"""
import sys
import time
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

# FlatGeobuf bytes per feature of this schema, measured; the size is a target, not exact.
BYTES_PER_FEATURE = 230


def main():
    size_mb = float(sys.argv[1])
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    n = max(1000, int(size_mb * 1e6 / BYTES_PER_FEATURE))
    rng = np.random.default_rng(42)
    t0 = time.time()
    cx = rng.uniform(-179.0, 179.0, n)
    cy = rng.uniform(-85.0, 85.0, n)
    r = rng.uniform(0.001, 0.1, n)
    ang = np.sort(rng.uniform(0, 2 * np.pi, (n, 4)), axis=1)[:, ::-1]  # clockwise
    xs = cx[:, None] + r[:, None] * np.cos(ang)
    ys = cy[:, None] + r[:, None] * np.sin(ang)
    ring = np.stack([xs, ys], axis=2)
    ring = np.concatenate([ring, ring[:, :1, :]], axis=1)  # close the ring
    geoms = shapely.polygons(ring)

    def with_nulls(values, frac):
        s = pd.Series(values)
        return s.mask(rng.random(n) < frac)

    cats = np.array(["road", "rail", "river", "lake", "park", "farm", "wood", "town"])
    df = gpd.GeoDataFrame(
        {
            "id": np.arange(n, dtype=np.int64),
            "name": with_nulls(np.char.add("feature-", np.arange(n).astype(str)), 0.05),
            "value": with_nulls(rng.normal(100, 15, n), 0.10),
            "category": with_nulls(cats[rng.integers(0, len(cats), n)], 0.02),
            "count": pd.array(rng.integers(0, 1000, n), dtype="Int32"),
            "flag": rng.random(n) < 0.5,
        },
        geometry=geoms,
        crs="EPSG:4326",
    )
    print(f"generated {n} features in {time.time() - t0:.1f}s", file=sys.stderr)
    t0 = time.time()
    df.to_parquet(out / "release.parquet", row_group_size=100_000)
    df.to_file(out / "release.fgb", driver="FlatGeobuf", engine="pyogrio", use_arrow=True)
    df.to_file(out / "release.gpkg", driver="GPKG", layer="release", engine="pyogrio", use_arrow=True)
    df.to_file(out / "release.geojson", driver="GeoJSON", engine="pyogrio", use_arrow=True)
    df.to_file(out / "release.shp", driver="ESRI Shapefile", engine="pyogrio", use_arrow=True)
    print(f"wrote five formats in {time.time() - t0:.1f}s", file=sys.stderr)
    (out / "features.txt").write_text(f"{n}\n")


if __name__ == "__main__":
    main()
