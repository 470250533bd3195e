//! GeoPackage: one feature table read through bundled SQLite, in rowid ranges on all cores.
//!
//! The integer primary key (usually `fid`) is the feature id, not an attribute, and the
//! geometry column is the geometry; every other column is an attribute typed by its declared
//! GeoPackage type. The CRS comes from `gpkg_spatial_ref_sys` (organisation and code).

use std::path::Path;

use rayon::prelude::*;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::geom::add_gpkg;
use super::profile::{AttrAcc, AttrType};
use super::{
    corrupt, crs_identify, io_err, unsupported, Accumulator, Format, Progress, ReadOptions,
    ReleaseError,
};

const F: Format = Format::Gpkg;

/// The largest value (a geometry blob, a text) SQLite hands over: a damaged record that
/// declares a larger one is refused by SQLite itself rather than allocated.
const MAX_VALUE_BYTES: i32 = 256 << 20;

fn open(path: &Path) -> Result<Connection, ReleaseError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| corrupt(path, F, e.to_string()))?;
    let bad = |e: rusqlite::Error| corrupt(path, F, e.to_string());
    conn.set_limit(
        rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
        MAX_VALUE_BYTES,
    )
    .map_err(bad)?;
    // Check every b-tree cell against its page as it is read, and keep SQLite's page cache
    // small (2 MiB per connection): a damaged file is an error, never a crash or a large
    // allocation. (`PRAGMA mmap_size` was measured and left off: on a 1 GB file it saved
    // about a tenth of SQLite's CPU time, the kernel's copies, but the mapped pages count
    // as the process's memory, about the file's size; see bench/RESULTS.md.)
    conn.execute_batch("PRAGMA cell_size_check = ON; PRAGMA cache_size = -2048;")
        .map_err(bad)?;
    // Not a database at all: SQLite only notices at the first read.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
        .map_err(bad)?;
    Ok(conn)
}

fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// A declared column type as an attribute type (GeoPackage names first, then SQLite's
/// affinity rules for anything else).
fn attr_type(declared: &str) -> AttrType {
    let d = declared.to_ascii_uppercase();
    let base = d.split('(').next().unwrap_or("").trim();
    match base {
        "BOOLEAN" => AttrType::Bool,
        "TINYINT" | "SMALLINT" | "MEDIUMINT" => AttrType::Int32,
        "INT" | "INTEGER" => AttrType::Int64,
        "FLOAT" | "DOUBLE" | "REAL" => AttrType::Float64,
        "TEXT" => AttrType::String,
        "BLOB" => AttrType::Binary,
        "DATE" => AttrType::Date,
        "DATETIME" | "TIMESTAMP" => AttrType::Datetime,
        _ if base.contains("INT") => AttrType::Int64,
        _ if base.contains("CHAR") || base.contains("CLOB") || base.contains("TEXT") => {
            AttrType::String
        }
        _ if base.contains("BLOB") || base.is_empty() => AttrType::Binary,
        _ => AttrType::Float64,
    }
}

struct Layer {
    table: String,
    geom: String,
    crs: Option<String>,
    attrs: Vec<(String, AttrType)>,
    /// What `WHERE key BETWEEN` ranges over: the integer primary key (SQLite's rowid under
    /// its own name), else whichever of `rowid`, `_rowid_`, `oid` no user column shadows.
    /// `None`: no way to name the row id, so the table is read in one part.
    key: Option<String>,
}

/// GDAL's placeholder table in a GeoPackage it created without layers: never a layer.
const PLACEHOLDER: &str = "ogr_empty_table";

/// Why there is no feature table, as the `gpkg_contents` table tells it.
fn no_feature_table(path: &Path, conn: &Connection) -> ReleaseError {
    let contents: Result<Vec<(String, String)>, _> = conn
        .prepare("SELECT table_name, data_type FROM gpkg_contents ORDER BY table_name")
        .and_then(|mut st| {
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<Vec<_>, _>>()
        });
    let Ok(contents) = contents else {
        return corrupt(
            path,
            F,
            "not a GeoPackage: it has no readable gpkg_contents table",
        );
    };
    let of = |kinds: &[&str]| -> Vec<String> {
        contents
            .iter()
            .filter(|(t, k)| t != PLACEHOLDER && kinds.contains(&k.as_str()))
            .map(|(t, _)| excerpt(t))
            .collect()
    };
    let tiles = of(&["tiles", "2d-gridded-coverage"]);
    let attributes = of(&["attributes", "aspatial"]);
    if !tiles.is_empty() {
        unsupported(
            path,
            F,
            format!(
                "raster tiles only ({}); this build reads feature tables",
                tiles.join(", ")
            ),
        )
    } else if !attributes.is_empty() {
        unsupported(
            path,
            F,
            format!(
                "no feature table: its tables hold attributes only ({})",
                attributes.join(", ")
            ),
        )
    } else {
        unsupported(path, F, "no feature table: the GeoPackage holds no table")
    }
}

/// A name from the file, as an error quotes it: at most 80 characters.
fn excerpt(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(80).collect::<String>())
    }
}

fn layer(path: &Path, conn: &Connection, want: Option<&str>) -> Result<Layer, ReleaseError> {
    let bad = |e: rusqlite::Error| corrupt(path, F, e.to_string());
    // GDAL's rule: a feature table is registered in both gpkg_geometry_columns and
    // gpkg_contents (as `features`), and is not GDAL's placeholder.
    let mut stmt = conn
        .prepare(
            "SELECT g.table_name, g.column_name, s.organization, s.organization_coordsys_id
             FROM gpkg_geometry_columns g
             JOIN gpkg_contents c ON c.table_name = g.table_name
             LEFT JOIN gpkg_spatial_ref_sys s ON s.srs_id = g.srs_id
             WHERE c.data_type = 'features' AND g.table_name <> ?1
             ORDER BY g.table_name",
        )
        .map_err(|e| {
            if e.to_string().contains("no such table") {
                no_feature_table(path, conn)
            } else {
                bad(e)
            }
        })?;
    let mut layers = stmt
        .query_map([PLACEHOLDER], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<i64>>(3)?,
            ))
        })
        .map_err(bad)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    let names = || layers.iter().map(|l| excerpt(&l.0)).collect::<Vec<_>>();
    let pick = match (layers.len(), want) {
        (0, _) => return Err(no_feature_table(path, conn)),
        (_, Some(w)) => match layers.iter().position(|l| l.0 == w) {
            Some(i) => i,
            None => {
                return Err(ReleaseError::Choose {
                    path: path.to_path_buf(),
                    problem: format!("no feature table `{}`", excerpt(w)),
                    flag: "--layer",
                    names: names(),
                })
            }
        },
        (1, None) => 0,
        (n, None) => {
            return Err(ReleaseError::Choose {
                path: path.to_path_buf(),
                problem: format!("{n} feature tables"),
                flag: "--layer",
                names: names(),
            })
        }
    };
    let (table, geom, org, code) = layers.swap_remove(pick);
    let crs = match (org, code) {
        (Some(org), Some(code)) => crs_identify::from_org_code(&org, code),
        _ => None,
    };
    let mut stmt = conn
        .prepare(&format!("PRAGMA table_info({})", quote(&table)))
        .map_err(bad)?;
    let cols = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                r.get::<_, i64>(5)?,
            ))
        })
        .map_err(bad)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    if cols.is_empty() {
        return Err(corrupt(
            path,
            F,
            format!("feature table `{}` does not exist", excerpt(&table)),
        ));
    }
    // The feature id is the integer primary key: an identity, not data. Only a single-column
    // INTEGER PRIMARY KEY is SQLite's rowid under another name.
    let pks: Vec<&(String, String, i64)> = cols.iter().filter(|c| c.2 > 0).collect();
    let fid = match pks.as_slice() {
        [c] if c.1.eq_ignore_ascii_case("INTEGER") => Some(c.0.clone()),
        _ => None,
    };
    let key = fid.clone().map(|f| quote(&f)).or_else(|| {
        ["rowid", "_rowid_", "oid"]
            .into_iter()
            .find(|k| !cols.iter().any(|c| c.0.eq_ignore_ascii_case(k)))
            .map(str::to_string)
    });
    let attrs = cols
        .into_iter()
        .filter(|(name, _, _)| Some(name) != fid.as_ref() && !name.eq_ignore_ascii_case(&geom))
        .map(|(name, ty, _)| {
            let t = attr_type(&ty);
            (name, t)
        })
        .collect();
    Ok(Layer {
        table,
        geom,
        crs,
        attrs,
        key,
    })
}

/// Attributes per null mask: bits 0 to 61 of a positive `i64`.
const MASK_BITS: usize = 62;

/// The select list of the null masks: `("a" IS NULL) + 2 * ("b" IS NULL) + …`, one
/// expression per [`MASK_BITS`] attributes (a sum of constants' multiples is a little
/// cheaper for SQLite than shifts and ors).
fn null_masks(attrs: &[(String, AttrType)]) -> Vec<String> {
    attrs
        .chunks(MASK_BITS)
        .map(|chunk| {
            chunk
                .iter()
                .enumerate()
                .map(|(i, (n, _))| format!("{} * ({} IS NULL)", 1i64 << i, quote(n)))
                .collect::<Vec<_>>()
                .join(" + ")
        })
        .collect()
}

/// Profile one row-id range `lo..=hi` (or, without a key, the whole table) on its own
/// connection.
fn part(
    path: &Path,
    layer: &Layer,
    range: Option<(i64, i64)>,
    proto: &Accumulator,
) -> Result<Accumulator, ReleaseError> {
    let conn = open(path)?;
    let bad = |e: rusqlite::Error| corrupt(path, F, e.to_string());
    // Only whether each attribute is null matters: SQLite computes that into one integer
    // per 62 attributes (bit i: attribute i is null), so no value is handed over and the
    // API is called once per row for all of them, not once per attribute.
    let mut cols = vec![quote(&layer.geom)];
    cols.extend(null_masks(&layer.attrs));
    let mut sql = format!("SELECT {} FROM {}", cols.join(", "), quote(&layer.table));
    let (lo, hi) = match (range, &layer.key) {
        (Some(r), Some(key)) => {
            sql.push_str(&format!(" WHERE {key} BETWEEN ?1 AND ?2"));
            r
        }
        // Without a key the bounds are a tautology, so the statement takes the same two
        // parameters.
        _ => {
            sql.push_str(" WHERE ?1 <= ?2");
            (0, 0)
        }
    };
    let mut stmt = conn.prepare(&sql).map_err(bad)?;
    let mut rows = stmt.query([lo, hi]).map_err(bad)?;
    let mut acc = proto.empty_like();
    while let Some(row) = rows.next().map_err(bad)? {
        acc.features += 1;
        match row.get_ref(0).map_err(bad)? {
            ValueRef::Null => acc.null_geometries += 1,
            ValueRef::Blob(b) => add_gpkg(&mut acc, b).map_err(|e| {
                corrupt(
                    path,
                    F,
                    format!("geometry of feature {}: {e}", acc.features),
                )
            })?,
            other => {
                return Err(corrupt(
                    path,
                    F,
                    format!("geometry stored as {:?}, not a blob", other.data_type()),
                ))
            }
        }
        for (m, chunk) in acc.attributes.chunks_mut(MASK_BITS).enumerate() {
            let mask = row.get::<_, i64>(m + 1).map_err(bad)?;
            if mask != 0 {
                for (i, a) in chunk.iter_mut().enumerate() {
                    a.nulls += ((mask >> i) & 1) as u64;
                }
            }
        }
    }
    Ok(acc)
}

pub fn read(
    path: &Path,
    opts: &ReadOptions,
    progress: &dyn Progress,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    std::fs::metadata(path).map_err(io_err(path))?;
    let conn = open(path)?;
    let layer = layer(path, &conn, opts.layer.as_deref())?;
    let mut layer = layer;
    let bounds: (Option<i64>, Option<i64>) = match &layer.key {
        // Two statements: SQLite finds a lone `min` or `max` of the key at one end of the
        // b-tree, but computes `min(key), max(key)` together by reading the whole table.
        Some(key) => match ["min", "max"]
            .map(|f| {
                conn.query_row(
                    &format!("SELECT {f}({key}) FROM {}", quote(&layer.table)),
                    [],
                    |r| r.get::<_, Option<i64>>(0),
                )
            })
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(b) => (b[0], b[1]),
            // A view (GDAL registers views as feature tables) has no row id, and a key
            // that is not an integer cannot be ranged over: one sequential pass.
            Err(_) if !key.starts_with('"') => {
                layer.key = None;
                (None, None)
            }
            Err(e) => return Err(corrupt(path, F, e.to_string())),
        },
        None => (None, None),
    };
    let whole_table = layer.key.is_none();
    drop(conn);
    let (lo, hi) = bounds;
    let proto = Accumulator::new(
        layer
            .attrs
            .iter()
            .map(|(n, t)| AttrAcc {
                name: n.clone(),
                ty: *t,
                nulls: 0,
            })
            .collect(),
    );
    let mut acc = proto.empty_like();
    if whole_table {
        progress.start(path, 1);
        acc.absorb(&part(path, &layer, None, &proto)?);
        progress.advance(1);
    } else if let (Some(lo), Some(hi)) = (lo, hi) {
        // Saturating: rowids are user data and may span the whole i64 range.
        let span = hi.saturating_sub(lo).saturating_add(1).max(1);
        progress.start(path, span as u64);
        // Enough ranges to keep every core busy when rowids are unevenly dense.
        let n = if span < 20_000 {
            1
        } else {
            (rayon::current_num_threads() * 4) as i64
        };
        let step = (span / n).max(1);
        let ranges: Vec<(i64, i64)> = (0..n)
            .map(|i| {
                let a = lo.saturating_add(i.saturating_mul(step));
                let b = if i == n - 1 {
                    hi
                } else {
                    a.saturating_add(step - 1)
                };
                (a, b)
            })
            .collect();
        let parts: Vec<Accumulator> = ranges
            .par_iter()
            .map(|&(a, b)| {
                let r = part(path, &layer, Some((a, b)), &proto);
                progress.advance(b.saturating_sub(a).saturating_add(1) as u64);
                r
            })
            .collect::<Result<_, _>>()?;
        for p in &parts {
            acc.absorb(p);
        }
    }
    Ok((layer.crs, acc))
}
