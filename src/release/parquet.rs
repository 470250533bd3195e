//! GeoParquet: the `geo` file metadata (or Parquet's own GEOMETRY/GEOGRAPHY logical type)
//! names the geometry columns, their encoding and CRS; row groups are profiled in parallel,
//! each reading only the chosen geometry column and the attribute columns whose null count
//! the row group's statistics do not already state (a statistic that cannot be true, more
//! nulls than rows, is ignored and the column decoded).
//!
//! **Encodings.** WKB (GeoParquet 1.0's only encoding and 1.1's default; always for the
//! logical types), and GeoParquet 1.1's native GeoArrow encodings `point`, `linestring`,
//! `polygon`, `multipoint`, `multilinestring`, `multipolygon`, with separated (`struct<x, y
//! [, z][, m]>`) or interleaved (`fixed_size_list<double>[2..4]`) coordinates. A native
//! geometry is written out as WKB and goes through the same geometry path as every other
//! reader ([`super::geom`]), so one rule decides types, dimensions and validity everywhere.
//!
//! **Geometry columns.** The primary column by default; `--geometry-column NAME` chooses
//! another. Every geometry column and covering (bbox) column is excluded from the attributes.
//!
//! **CRS.** `geo` metadata: a CRS key that is absent means `OGC:CRS84` (GeoParquet spec),
//! an explicit `null` means unknown, a PROJJSON is identified by its `id` or against the EPSG
//! registry ([`super::crs_identify`]). Logical types: absent means `OGC:CRS84`; `srid:N` is `EPSG:N`;
//! `projjson:KEY` names a file metadata key holding PROJJSON; anything else is read as an
//! identifier, PROJJSON or WKT.
//!
//! **Spherical edges** (`edges = "spherical"`, or a GEOGRAPHY column): the envelope is the
//! minimum and maximum of the vertices' longitudes and latitudes. An edge is then a great-
//! circle arc, which can reach beyond its vertices' latitudes (towards a pole), so the
//! envelope can be smaller than the area the geometries cover; a warning says so.
//!
//! **Hostile files.** The footer is checked by [`super::parquet_footer`] before the parquet
//! crate decodes it (offsets, sizes, counts, schema tree); the whole read runs under
//! `catch_unwind` as a last line, so a panic the checks did not foresee inside the parquet or
//! arrow crates is a "damaged file" error, never a crash.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use arrow_array::{Array, BinaryArray, BinaryViewArray, LargeBinaryArray};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::basic::LogicalType;
use rayon::prelude::*;

use super::geoarrow::{Native, NativeColumn};
use super::parquet_footer;
use super::parquet_geo::{self, Declared, Rows, Seen};
use super::parquet_source::{LocalFile, Source};
use super::profile::{AttrAcc, AttrType};
use super::remote_read::{self, RemoteFile};
use super::{
    corrupt, crs_identify, unsupported, Accumulator, Format, Progress, ReadNotes, ReadOptions,
    ReadWarning, ReleaseError, Warned,
};

const F: Format = Format::GeoParquet;

/// An Arrow type as an attribute type. Nested types (lists, structs, maps) have no contract
/// name; they are reported as `string`, as GDAL reports them (JSON text).
fn attr_type(t: &DataType) -> AttrType {
    use DataType as D;
    match t {
        D::Boolean => AttrType::Bool,
        D::Int8 | D::Int16 | D::Int32 | D::UInt8 | D::UInt16 => AttrType::Int32,
        D::Int64 | D::UInt32 | D::UInt64 => AttrType::Int64,
        D::Float16
        | D::Float32
        | D::Float64
        | D::Decimal32(..)
        | D::Decimal64(..)
        | D::Decimal128(..)
        | D::Decimal256(..) => AttrType::Float64,
        D::Utf8 | D::LargeUtf8 | D::Utf8View => AttrType::String,
        D::Date32 | D::Date64 => AttrType::Date,
        D::Timestamp(..) => AttrType::Datetime,
        D::Binary | D::LargeBinary | D::BinaryView | D::FixedSizeBinary(_) => AttrType::Binary,
        D::Dictionary(_, v) => attr_type(v),
        _ => AttrType::String,
    }
}

/// How a geometry column is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Wkb,
    /// A native GeoArrow encoding: the WKB type code and the list depth above the
    /// coordinates.
    Native(Native),
}

/// One geometry column as the file describes it.
#[derive(Debug, Clone)]
struct GeoColumn {
    name: String,
    encoding: Result<Encoding, String>,
    crs: Option<String>,
    /// Why the CRS is unknown, for a warning.
    crs_note: Option<String>,
    spherical: bool,
    /// What the `geo` metadata says of the data, checked against it once read.
    declared: Declared,
}

struct Geo {
    columns: Vec<GeoColumn>,
    primary: Option<String>,
    /// Geometry and covering (bbox) columns: none of them is an attribute.
    excluded: Vec<String>,
}

/// The CRS of a `geo` metadata column.
fn geo_crs(meta: &serde_json::Value) -> (Option<String>, Option<String>) {
    match meta.get("crs") {
        None => (Some("OGC:CRS84".to_string()), None),
        Some(serde_json::Value::Null) => (None, Some("its `crs` is null (unknown)".into())),
        Some(serde_json::Value::String(s)) => text_crs(s, &[]),
        Some(v) => match crs_identify::identify_projjson(v) {
            Ok(c) => (Some(c.to_string()), None),
            Err(why) => (
                None,
                Some(format!("its PROJJSON CRS is not identified ({why})")),
            ),
        },
    }
}

/// A CRS given as text: an identifier, `srid:N`, `projjson:KEY`, PROJJSON or WKT.
fn text_crs(s: &str, kv: &[(String, String)]) -> (Option<String>, Option<String>) {
    let t = s.trim();
    if t.is_empty() {
        return (Some("OGC:CRS84".into()), None);
    }
    if let Some(n) = t.strip_prefix("srid:") {
        return match n.trim().parse::<u32>() {
            Ok(0) | Err(_) => (None, Some(format!("`{}` is not an SRID", excerpt(t)))),
            Ok(n) => (Some(format!("EPSG:{n}")), None),
        };
    }
    if let Some(key) = t.strip_prefix("projjson:") {
        return match kv.iter().find(|(k, _)| k == key) {
            Some((_, v)) => text_crs(v, &[]),
            None => (
                None,
                Some(format!(
                    "its CRS names metadata key `{}`, which is absent",
                    excerpt(key)
                )),
            ),
        };
    }
    if t.starts_with('{') {
        return match serde_json::from_str::<serde_json::Value>(t) {
            Ok(v) => match crs_identify::identify_projjson(&v) {
                Ok(c) => (Some(c.to_string()), None),
                Err(why) => (
                    None,
                    Some(format!("its PROJJSON CRS is not identified ({why})")),
                ),
            },
            Err(_) => (
                None,
                Some("its CRS is neither PROJJSON nor an identifier".into()),
            ),
        };
    }
    if t.contains('[') {
        return match crs_identify::identify_wkt(t) {
            Ok(c) => (Some(c.to_string()), None),
            Err(why) => (None, Some(format!("its WKT CRS is not identified ({why})"))),
        };
    }
    match crate::model::crs::Crs::parse(t) {
        Some(c) => (Some(c.to_string()), None),
        None => (
            None,
            Some(format!("its CRS `{}` is not AUTHORITY:CODE", excerpt(t))),
        ),
    }
}

/// At most 80 characters of a text from the file, for an error.
fn excerpt(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(80).collect::<String>())
    }
}

fn geo_metadata(path: &Path, text: &str) -> Result<Geo, ReleaseError> {
    let bad = |m: String| corrupt(path, F, m);
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(format!("`geo` metadata is not JSON: {e}")))?;
    let primary = v
        .get("primary_column")
        .and_then(|c| c.as_str())
        .ok_or_else(|| bad("`geo` metadata has no primary_column".into()))?
        .to_string();
    let columns = v
        .get("columns")
        .and_then(|c| c.as_object())
        .ok_or_else(|| bad("`geo` metadata has no columns".into()))?;
    if !columns.contains_key(&primary) {
        return Err(bad(format!(
            "`geo` metadata does not describe its primary column `{}`",
            excerpt(&primary)
        )));
    }
    let mut out = Vec::new();
    let mut excluded: Vec<String> = columns.keys().cloned().collect();
    for (name, meta) in columns {
        let enc = meta.get("encoding").and_then(|e| e.as_str()).unwrap_or("");
        let encoding = if enc.eq_ignore_ascii_case("wkb") {
            Ok(Encoding::Wkb)
        } else {
            Native::from_name(enc)
                .map(Encoding::Native)
                .ok_or_else(|| format!("geometry encoding `{}`", excerpt(enc)))
        };
        let (crs, crs_note) = geo_crs(meta);
        let spherical = meta.get("edges").and_then(|e| e.as_str()) == Some("spherical");
        out.push(GeoColumn {
            name: name.clone(),
            encoding,
            crs,
            crs_note,
            spherical,
            declared: Declared::of(meta),
        });
        if let Some(bbox) = meta.pointer("/covering/bbox").and_then(|b| b.as_object()) {
            for part in bbox.values() {
                if let Some(name) = part.get(0).and_then(|n| n.as_str()) {
                    excluded.push(name.to_string());
                }
            }
        }
    }
    Ok(Geo {
        columns: out,
        primary: Some(primary),
        excluded,
    })
}

/// Add a batch's geometries to `acc`, and each one to `rows` when its metadata is checked row
/// by row.
fn add_geometries(
    acc: &mut Accumulator,
    col: &dyn Array,
    enc: Encoding,
    mut rows: Option<Rows>,
) -> Result<(), String> {
    let any = col.as_any();
    macro_rules! each {
        ($arr:expr) => {{
            let a = $arr;
            for i in 0..a.len() {
                if a.is_null(i) {
                    acc.null_geometries += 1;
                } else {
                    parquet_geo::add(acc, a.value(i), i, rows.as_mut())?;
                }
            }
        }};
    }
    match enc {
        Encoding::Wkb => {
            if let Some(a) = any.downcast_ref::<BinaryArray>() {
                each!(a)
            } else if let Some(a) = any.downcast_ref::<LargeBinaryArray>() {
                each!(a)
            } else if let Some(a) = any.downcast_ref::<BinaryViewArray>() {
                each!(a)
            } else {
                return Err(format!(
                    "the geometry column is {}, not WKB binary",
                    col.data_type()
                ));
            }
        }
        Encoding::Native(kind) => {
            let n = NativeColumn::of(kind, col)?;
            let mut buf = Vec::with_capacity(256);
            for i in 0..col.len() {
                if col.is_null(i) {
                    acc.null_geometries += 1;
                } else {
                    n.wkb(i, &mut buf)?;
                    parquet_geo::add(acc, &buf, i, rows.as_mut())?;
                }
            }
        }
    }
    Ok(())
}

/// Read and check the footer, so the decoder is handed only a footer whose every offset,
/// size and count fits the file.
fn check_footer(path: &Path, src: &impl Source) -> Result<(), ReleaseError> {
    let bad = |m: String| corrupt(path, F, m);
    let len = src.len()?;
    if len < 12 {
        return Err(bad(format!("{len} bytes is too short for a Parquet file")));
    }
    let head = src.read_at(0, 4)?;
    let tail = src.read_at(len - 8, 8)?;
    if &tail[4..] == b"PARE" {
        return Err(unsupported(path, F, "an encrypted Parquet footer"));
    }
    if &head[..] != b"PAR1" || &tail[4..] != b"PAR1" {
        return Err(bad(format!(
            "no Parquet magic (the file starts {:?} and ends {:?})",
            String::from_utf8_lossy(&head),
            String::from_utf8_lossy(&tail[4..])
        )));
    }
    let flen = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if flen + 12 > len {
        return Err(bad(format!(
            "the footer declares {flen} bytes in a file of {len}"
        )));
    }
    if flen > parquet_footer::MAX_FOOTER_BYTES {
        return Err(unsupported(
            path,
            F,
            format!(
                "a footer of {flen} bytes, over this build's limit of {}",
                parquet_footer::MAX_FOOTER_BYTES
            ),
        ));
    }
    let footer = src.read_at(len - 8 - flen, flen as usize)?;
    parquet_footer::check(&footer, len - 8 - flen).map_err(|m| bad(format!("footer: {m}")))
}

pub fn read(
    path: &Path,
    opts: &ReadOptions,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    guarded(path, || {
        read_checked(path, &LocalFile(path), opts, progress, notes)
    })
}

/// [`read`] of an object in object storage: the footer, then per row group only the column
/// chunks it decodes.
pub fn read_remote(
    object: &remote_read::Object,
    opts: &ReadOptions,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    let src = RemoteFile::new(object);
    let path = Path::new(object.url());
    guarded(path, || read_checked(path, &src, opts, progress, notes))
}

/// The last line of defence around a read: the checks of [`check_footer`] and the reader keep
/// every known panic of the parquet and arrow crates away, and one they did not foresee still
/// becomes a "damaged" error.
fn guarded<T>(
    path: &Path,
    read: impl FnOnce() -> Result<T, ReleaseError>,
) -> Result<T, ReleaseError> {
    match catch_unwind(AssertUnwindSafe(read)) {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(corrupt(
                path,
                F,
                format!("the Parquet decoder failed on it ({})", excerpt(what)),
            ))
        }
    }
}

fn read_checked(
    path: &Path,
    src: &impl Source,
    opts: &ReadOptions,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    check_footer(path, src)?;
    let file = src.footer()?;
    let bad = |m: String| corrupt(path, F, m);
    let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
        .map_err(|e| bad(excerpt(&e.to_string())))?;
    let pq = meta.metadata().clone();
    let kv: Vec<(String, String)> = pq
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .filter_map(|k| Some((k.key.clone(), k.value.clone()?)))
                .collect()
        })
        .unwrap_or_default();
    let descr = pq.file_metadata().schema_descr();
    // Geometry columns: the `geo` metadata's, then any top-level GEOMETRY/GEOGRAPHY column.
    let mut geo = match kv.iter().find(|(k, _)| k == "geo") {
        Some((_, text)) => geo_metadata(path, text)?,
        None => Geo {
            columns: Vec::new(),
            primary: None,
            excluded: Vec::new(),
        },
    };
    for l in 0..descr.num_columns() {
        let c = descr.column(l);
        if c.path().parts().len() != 1 || geo.excluded.iter().any(|e| e == c.name()) {
            continue;
        }
        let (crs_text, spherical) = match c.logical_type_ref() {
            Some(LogicalType::Geometry(g)) => (g.crs.clone(), false),
            Some(LogicalType::Geography(g)) => (g.crs.clone(), true),
            _ => continue,
        };
        let (crs, crs_note) = text_crs(crs_text.as_deref().unwrap_or(""), &kv);
        geo.excluded.push(c.name().to_string());
        geo.columns.push(GeoColumn {
            name: c.name().to_string(),
            encoding: Ok(Encoding::Wkb),
            crs,
            crs_note,
            spherical,
            declared: Declared::default(),
        });
    }
    if geo.columns.is_empty() {
        return Err(unsupported(
            path,
            F,
            "a Parquet file without `geo` metadata or a GEOMETRY/GEOGRAPHY column (a table, not GeoParquet)",
        ));
    }
    let names = || {
        geo.columns
            .iter()
            .map(|c| excerpt(&c.name))
            .collect::<Vec<_>>()
    };
    let chosen = match (&opts.geometry_column, &geo.primary) {
        (Some(want), _) => geo
            .columns
            .iter()
            .find(|c| &c.name == want)
            .ok_or_else(|| ReleaseError::Choose {
                path: path.to_path_buf(),
                problem: format!("no geometry column `{}`", excerpt(want)),
                flag: "--geometry-column",
                names: names(),
            })?,
        (None, Some(p)) => geo
            .columns
            .iter()
            .find(|c| &c.name == p)
            .ok_or_else(|| bad(format!("primary column `{}` is not described", excerpt(p))))?,
        (None, None) if geo.columns.len() == 1 => &geo.columns[0],
        (None, None) => {
            return Err(ReleaseError::Choose {
                path: path.to_path_buf(),
                problem: format!("{} geometry columns and no primary one", geo.columns.len()),
                flag: "--geometry-column",
                names: names(),
            })
        }
    };
    let column = chosen.name.clone();
    let encoding = chosen.encoding.clone().map_err(|e| {
        unsupported(
            path,
            F,
            format!("{e} (WKB and the GeoArrow encodings are read)"),
        )
    })?;
    if let Some(note) = &chosen.crs_note {
        let why = note.clone();
        let column = excerpt(&column);
        let warned = Warned::ColumnCrs { column, why };
        notes.warnings.push(ReadWarning::of(path, warned));
    }
    if chosen.spherical {
        let column = excerpt(&column);
        let warned = Warned::SphericalEdges { column };
        notes.warnings.push(ReadWarning::of(path, warned));
    }
    let crs = chosen.crs.clone();
    let declared = chosen.declared.clone();
    let schema = meta.schema().clone();
    let geom_idx = schema
        .index_of(&column)
        .map_err(|_| bad(format!("geometry column `{}` is missing", excerpt(&column))))?;
    let attr_idx: Vec<usize> = schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| !geo.excluded.contains(f.name()))
        .map(|(i, _)| i)
        .collect();
    let proto = Accumulator::new(
        attr_idx
            .iter()
            .map(|&i| AttrAcc {
                name: schema.field(i).name().clone(),
                ty: attr_type(schema.field(i).data_type()),
                nulls: 0,
            })
            .collect(),
    );
    // The leaf column of each flat attribute: its statistics can state its null count.
    let leaf_of: Vec<Option<usize>> = attr_idx
        .iter()
        .map(|&root| {
            let leaves: Vec<usize> = (0..descr.num_columns())
                .filter(|&l| descr.get_column_root_idx(l) == root)
                .collect();
            match leaves.as_slice() {
                [l] if descr.column(*l).max_rep_level() == 0
                    && descr.column(*l).path().parts().len() == 1 =>
                {
                    Some(*l)
                }
                _ => None,
            }
        })
        .collect();
    // A declared covering column is decoded with the geometries, to check each row's box.
    let cover_idx = declared
        .covering
        .as_ref()
        .and_then(|c| schema.index_of(&c.column).ok());
    // The index in the file of each row group's first row, for a warning naming a row.
    let starts: Vec<u64> = (0..pq.num_row_groups())
        .scan(0u64, |n, g| {
            let start = *n;
            *n += pq.row_group(g).num_rows().max(0) as u64;
            Some(start)
        })
        .collect();
    progress.start(path, pq.file_metadata().num_rows().max(0) as u64);
    let groups: Vec<usize> = (0..pq.num_row_groups()).collect();
    let parts: Vec<(Accumulator, Seen)> = groups
        .par_iter()
        .map(|&g| -> Result<(Accumulator, Seen), ReleaseError> {
            let rg = pq.row_group(g);
            let rows = rg.num_rows().max(0) as u64;
            let mut acc = proto.empty_like();
            let mut seen = Seen::default();
            let mut decode: Vec<usize> = std::iter::once(geom_idx).chain(cover_idx).collect();
            let mut decoded_attrs = Vec::new();
            for (k, &root) in attr_idx.iter().enumerate() {
                // A statistic that cannot be true (more nulls than rows) is ignored.
                let stated = leaf_of[k]
                    .and_then(|l| rg.column(l).statistics())
                    .and_then(|s| s.null_count_opt())
                    .filter(|&n| n <= rows);
                match stated {
                    Some(n) => acc.attributes[k].nulls += n,
                    None => {
                        decode.push(root);
                        decoded_attrs.push((k, schema.field(root).name().clone()));
                    }
                }
            }
            // The byte ranges of the column chunks decoded: all a remote read fetches.
            let ranges: Vec<Range<u64>> = (0..descr.num_columns())
                .filter(|&l| decode.contains(&descr.get_column_root_idx(l)))
                .map(|l| {
                    let (start, len) = rg.column(l).byte_range();
                    start..start.saturating_add(len)
                })
                .collect();
            let f = src.row_group(&ranges)?;
            let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(f, meta.clone())
                .with_row_groups(vec![g])
                .with_projection(ProjectionMask::roots(descr, decode))
                .with_batch_size(16 * 1024)
                .build()
                .map_err(|e| bad(excerpt(&e.to_string())))?;
            for batch in reader {
                let batch = batch
                    .map_err(|e| bad(format!("row group {g}: {}", excerpt(&e.to_string()))))?;
                acc.features += batch.num_rows() as u64;
                let gcol = batch
                    .column_by_name(&column)
                    .ok_or_else(|| bad("geometry column missing from a row group".into()))?;
                let first_row = starts[g] + acc.features - batch.num_rows() as u64;
                let checked = declared.per_row().then(|| {
                    let cover = declared
                        .covering
                        .as_ref()
                        .map(|c| (c, batch.column_by_name(&c.column).map(|a| a.as_ref())));
                    Rows::new(&mut seen, cover, first_row)
                });
                add_geometries(&mut acc, gcol.as_ref(), encoding, checked)
                    .map_err(|e| bad(format!("row group {g}: {e}")))?;
                for (k, name) in &decoded_attrs {
                    if let Some(c) = batch.column_by_name(name) {
                        acc.attributes[*k].nulls += c.logical_null_count() as u64;
                    }
                }
                progress.advance(batch.num_rows() as u64);
            }
            if acc.features != rows {
                return Err(bad(format!(
                    "row group {g} holds {} rows, its metadata says {}",
                    acc.features,
                    rg.num_rows()
                )));
            }
            Ok((acc, seen))
        })
        .collect::<Result<_, _>>()?;
    let mut acc = proto.empty_like();
    let mut seen = Seen::default();
    for (p, s) in &parts {
        acc.absorb(p);
        seen.absorb(s);
    }
    notes.warnings.extend(parquet_geo::warnings(
        path,
        &excerpt(&column),
        &declared,
        crs.as_deref(),
        &acc,
        &seen,
    ));
    Ok((crs, acc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    use crate::release::{NoProgress, ReleaseError};

    fn data(rel: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(rel)
    }

    /// `file` with the `index`-th footer value named `what` set to `value` (the footer
    /// re-framed with its new length).
    fn damage(file: &[u8], what: &str, index: usize, value: i64) -> Vec<u8> {
        let n = file.len();
        let flen = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as usize;
        let start = n - 8 - flen;
        let mut footer = file[start..n - 8].to_vec();
        let span = parquet_footer::spans(&footer, what)[index].clone();
        let mut v = Vec::new();
        parquet_footer::write::zigzag(&mut v, value);
        footer.splice(span, v);
        let mut out = file[..start].to_vec();
        out.extend(&footer);
        out.extend((footer.len() as u32).to_le_bytes());
        out.extend(b"PAR1");
        out
    }

    fn read_bytes(bytes: &[u8]) -> Result<(Option<String>, Accumulator), ReleaseError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.parquet");
        std::fs::write(&p, bytes).unwrap();
        read(
            &p,
            &ReadOptions::default(),
            &NoProgress,
            &mut ReadNotes::default(),
        )
    }

    #[test]
    fn a_negative_page_offset_is_damage_where_the_parquet_crate_panics() {
        let file = std::fs::read(data("naturalearth/cities.parquet")).unwrap();
        // The first column chunk starts at its dictionary page: put that before the file.
        let bad = damage(&file, "dictionary_page_offset", 0, -4096);
        // The parquet crate on its own: a panic (the failure this check exists for).
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.parquet");
        std::fs::write(&p, &bad).unwrap();
        let raw = catch_unwind(|| {
            let f = File::open(&p).unwrap();
            let m = ArrowReaderMetadata::load(&f, ArrowReaderOptions::new())?;
            let r = ParquetRecordBatchReaderBuilder::new_with_metadata(File::open(&p).unwrap(), m)
                .build()?;
            for b in r {
                b?;
            }
            Ok::<_, Box<dyn std::error::Error>>(())
        });
        assert!(
            raw.is_err(),
            "the crate alone does not panic: {:?}",
            raw.ok()
        );
        match read_bytes(&bad) {
            Err(ReleaseError::Corrupt { reason, .. }) => {
                assert!(
                    reason.contains("negative dictionary page offset"),
                    "{reason}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_schema_declaring_two_billion_children_is_damage_not_an_allocation() {
        let file = std::fs::read(data("naturalearth/cities.parquet")).unwrap();
        let bad = damage(&file, "num_children", 0, i64::from(i32::MAX));
        match read_bytes(&bad) {
            Err(ReleaseError::Corrupt { reason, .. }) => {
                assert!(reason.contains("2147483647 children"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_null_count_larger_than_the_row_count_is_ignored_and_the_column_decoded() {
        let file = std::fs::read(data("made/typed_nulls.parquet")).unwrap();
        let (_, good) = read_bytes(&file).unwrap();
        // `b`, the first column, really has 1 null in 4 rows; say 4.5e9.
        let bad = damage(&file, "null_count", 0, 4_500_000_000);
        let (_, acc) = read_bytes(&bad).unwrap();
        assert_eq!(acc.features, 4);
        assert_eq!(acc.attributes[0].name, "b");
        assert_eq!(acc.attributes[0].nulls, 1);
        assert_eq!(acc.attributes, good.attributes);
    }

    #[test]
    fn parquet_geometry_logical_type_is_read_as_wkb_with_its_crs() {
        use parquet::basic::{Repetition, Type as Physical};
        use parquet::data_type::{ByteArray, ByteArrayType};
        use parquet::file::writer::SerializedFileWriter;
        use parquet::schema::types::Type;
        use std::sync::Arc;
        let geom = Type::primitive_type_builder("geom", Physical::BYTE_ARRAY)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(Some(LogicalType::Geometry(parquet::basic::GeometryType {
                crs: Some("srid:32633".into()),
            })))
            .build()
            .unwrap();
        let schema = Type::group_type_builder("schema")
            .with_fields(vec![Arc::new(geom)])
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.parquet");
        let f = File::create(&p).unwrap();
        let mut w = SerializedFileWriter::new(f, Arc::new(schema), Default::default()).unwrap();
        let mut rg = w.next_row_group().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        // Two points by hand: (500000, 0) and (600000, 7000000); one null.
        let pt = |x: f64, y: f64| {
            let mut v = vec![1u8];
            v.extend(1u32.to_le_bytes());
            v.extend(x.to_le_bytes());
            v.extend(y.to_le_bytes());
            ByteArray::from(v)
        };
        col.typed::<ByteArrayType>()
            .write_batch(
                &[pt(500000.0, 0.0), pt(600000.0, 7e6)],
                Some(&[1, 0, 1]),
                None,
            )
            .unwrap();
        col.close().unwrap();
        rg.close().unwrap();
        w.close().unwrap();
        let (crs, acc) = read(
            &p,
            &ReadOptions::default(),
            &NoProgress,
            &mut ReadNotes::default(),
        )
        .unwrap();
        assert_eq!(crs.as_deref(), Some("EPSG:32633"));
        assert_eq!((acc.features, acc.null_geometries), (3, 1));
        assert_eq!(
            (
                acc.envelope.minx,
                acc.envelope.miny,
                acc.envelope.maxx,
                acc.envelope.maxy
            ),
            (500000.0, 0.0, 600000.0, 7e6)
        );
    }
}
