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
use super::{corrupt, crs, io_err, Accumulator, Format, Progress, ReleaseError};

const F: Format = Format::Gpkg;

fn open(path: &Path) -> Result<Connection, ReleaseError> {
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| corrupt(path, F, e.to_string()))
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
}

fn layer(path: &Path, conn: &Connection) -> Result<Layer, ReleaseError> {
    let bad = |e: rusqlite::Error| corrupt(path, F, e.to_string());
    let mut stmt = conn
        .prepare(
            "SELECT g.table_name, g.column_name, s.organization, s.organization_coordsys_id
             FROM gpkg_geometry_columns g
             LEFT JOIN gpkg_spatial_ref_sys s ON s.srs_id = g.srs_id
             ORDER BY g.table_name",
        )
        .map_err(bad)?;
    let mut layers = stmt
        .query_map([], |r| {
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
    let (table, geom, org, code) = match layers.len() {
        0 => {
            return Err(corrupt(
                path,
                F,
                "no feature table (gpkg_geometry_columns is empty)",
            ))
        }
        1 => layers.remove(0),
        _ => {
            let names: Vec<&str> = layers.iter().map(|l| l.0.as_str()).collect();
            return Err(ReleaseError::Unsupported {
                path: path.to_path_buf(),
                format: F,
                reason: format!(
                    "{} feature tables ({}); a release is one layer, so give one table per file",
                    layers.len(),
                    names.join(", ")
                ),
            });
        }
    };
    let crs = match (org, code) {
        (Some(org), Some(code)) => crs::from_org_code(&org, code),
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
            format!("feature table `{table}` does not exist"),
        ));
    }
    let attrs = cols
        .into_iter()
        .filter(|(name, ty, pk)| {
            // The feature id is the integer primary key: an identity, not data.
            let fid = *pk > 0 && ty.eq_ignore_ascii_case("INTEGER");
            !fid && !name.eq_ignore_ascii_case(&geom)
        })
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
    })
}

/// Profile one rowid range `lo..=hi` on its own connection.
fn part(
    path: &Path,
    layer: &Layer,
    lo: i64,
    hi: i64,
    proto: &Accumulator,
) -> Result<Accumulator, ReleaseError> {
    let conn = open(path)?;
    let bad = |e: rusqlite::Error| corrupt(path, F, e.to_string());
    let mut cols = vec![quote(&layer.geom)];
    cols.extend(layer.attrs.iter().map(|(n, _)| quote(n)));
    let sql = format!(
        "SELECT {} FROM {} WHERE rowid BETWEEN ?1 AND ?2",
        cols.join(", "),
        quote(&layer.table)
    );
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
        for (i, a) in acc.attributes.iter_mut().enumerate() {
            if let ValueRef::Null = row.get_ref(i + 1).map_err(bad)? {
                a.nulls += 1;
            }
        }
    }
    Ok(acc)
}

pub fn read(
    path: &Path,
    progress: &dyn Progress,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    std::fs::metadata(path).map_err(io_err(path))?;
    let conn = open(path)?;
    let layer = layer(path, &conn)?;
    let (lo, hi): (Option<i64>, Option<i64>) = conn
        .query_row(
            &format!("SELECT min(rowid), max(rowid) FROM {}", quote(&layer.table)),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| corrupt(path, F, e.to_string()))?;
    drop(conn);
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
    if let (Some(lo), Some(hi)) = (lo, hi) {
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
                let r = part(path, &layer, a, b, &proto);
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
