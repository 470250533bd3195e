#!/usr/bin/env bash
# Makes the GeoPackage edge cases in this folder with GDAL (Debian gdal-bin 3.6.2 and
# python3-gdal), from the Natural Earth cities in ../naturalearth. Run from this folder:
#   bash make.sh
# The expected figures in ../corpus/expected-gpkg-parquet.toml come from
#   ogrinfo -ro -al -so FILE
set -euo pipefail
rm -f two_layers.gpkg attributes_only.gpkg rowid_column.gpkg tiles_only.gpkg placeholder.gpkg view.gpkg
NE=../naturalearth/cities.gpkg
# Two feature tables: all 243 cities, and the 9 with fid < 10.
ogr2ogr -f GPKG two_layers.gpkg "$NE" -nln cities
ogr2ogr -f GPKG -update two_layers.gpkg "$NE" -nln capitals -where "fid < 10"
# An attributes table only (GDAL registers it as data_type 'attributes').
printf 'id,name\n1,a\n2,b\n3,c\n' > /tmp/attrs.csv
ogr2ogr -f GPKG attributes_only.gpkg /tmp/attrs.csv -nln table1
# A user column named `rowid`, null in every other feature (SQLite then resolves `rowid` to
# the column, not to the row id).
ogr2ogr -f GPKG rowid_column.gpkg "$NE" -nln cities
ogrinfo -q rowid_column.gpkg -sql "ALTER TABLE cities ADD COLUMN rowid INTEGER"
ogrinfo -q rowid_column.gpkg -sql "UPDATE cities SET rowid = CASE WHEN fid % 2 = 0 THEN fid * 1000 END"
# Raster tiles only.
gdal_create -of GTiff -outsize 64 64 -bands 3 -burn 100 -ot Byte -a_srs EPSG:3857 \
  -a_ullr 0 6400 6400 0 /tmp/tiles.tif
gdal_translate -q -of GPKG /tmp/tiles.tif tiles_only.gpkg
# GDAL's placeholder `ogr_empty_table`, registered the way GDAL itself registers it in a
# GeoPackage created without layers (in gpkg_contents and gpkg_geometry_columns), beside the
# cities: GDAL lists only `cities`.
ogr2ogr -f GPKG placeholder.gpkg "$NE" -nln cities
ogr2ogr -f GPKG -update placeholder.gpkg "$NE" -nln ogr_empty_table -where "1 = 0"
# A view registered as a feature table (GDAL reads such views; a view has no row id).
ogr2ogr -f GPKG view.gpkg "$NE" -nln cities
ogrinfo -q view.gpkg -sql "CREATE VIEW cities_view AS SELECT fid AS OGC_FID, geom, name FROM cities"
ogrinfo -q view.gpkg -sql "INSERT INTO gpkg_contents (table_name, identifier, data_type, srs_id) VALUES ('cities_view', 'cities_view', 'features', 4326)"
ogrinfo -q view.gpkg -sql "INSERT INTO gpkg_geometry_columns (table_name, column_name, geometry_type_name, srs_id, z, m) VALUES ('cities_view', 'geom', 'POINT', 4326, 0, 0)"
