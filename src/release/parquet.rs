//! GeoParquet: the `geo` file metadata names the geometry column, its encoding and its CRS;
//! row groups are profiled in parallel, each reading only the geometry column and the
//! attribute columns whose null count the row group's statistics do not already state.
//!
//! Only the WKB encoding is read (GeoParquet 1.0's only encoding and 1.1's default); the
//! native GeoArrow encodings are refused by name. A CRS key that is absent means
//! `OGC:CRS84` (GeoParquet spec); an explicit `null` means unknown.

use std::fs::File;
use std::path::Path;

use arrow_array::{Array, BinaryArray, BinaryViewArray, LargeBinaryArray};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use rayon::prelude::*;

use super::geom::add_wkb;
use super::profile::{AttrAcc, AttrType};
use super::{corrupt, crs, io_err, Accumulator, Format, Progress, ReadNotes, ReleaseError};

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

struct Geo {
    column: String,
    crs: Option<String>,
    /// Geometry and covering (bbox) columns: none of them is an attribute.
    excluded: Vec<String>,
}

fn geo_metadata(path: &Path, text: &str, notes: &mut ReadNotes) -> Result<Geo, ReleaseError> {
    let bad = |m: String| corrupt(path, F, m);
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(format!("`geo` metadata is not JSON: {e}")))?;
    let column = v
        .get("primary_column")
        .and_then(|c| c.as_str())
        .ok_or_else(|| bad("`geo` metadata has no primary_column".into()))?
        .to_string();
    let columns = v
        .get("columns")
        .and_then(|c| c.as_object())
        .ok_or_else(|| bad("`geo` metadata has no columns".into()))?;
    let meta = columns.get(&column).ok_or_else(|| {
        bad(format!(
            "`geo` metadata does not describe column `{column}`"
        ))
    })?;
    let encoding = meta.get("encoding").and_then(|e| e.as_str()).unwrap_or("");
    if !encoding.eq_ignore_ascii_case("wkb") {
        return Err(ReleaseError::Unsupported {
            path: path.to_path_buf(),
            format: F,
            reason: format!("geometry encoding `{encoding}` (only WKB is read)"),
        });
    }
    let crs = match meta.get("crs") {
        None => Some("OGC:CRS84".to_string()),
        Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) if s.contains(':') => Some(s.to_ascii_uppercase()),
        Some(v) => {
            let c = crs::from_projjson(v);
            if c.is_none() {
                notes.warnings.push(format!(
                    "{}: the PROJJSON CRS has no `id`; reporting the CRS as unknown",
                    path.display()
                ));
            }
            c
        }
    };
    let mut excluded: Vec<String> = columns.keys().cloned().collect();
    for m in columns.values() {
        if let Some(bbox) = m.pointer("/covering/bbox").and_then(|b| b.as_object()) {
            for part in bbox.values() {
                if let Some(name) = part.get(0).and_then(|n| n.as_str()) {
                    excluded.push(name.to_string());
                }
            }
        }
    }
    Ok(Geo {
        column,
        crs,
        excluded,
    })
}

fn add_geometries(acc: &mut Accumulator, col: &dyn Array) -> Result<(), String> {
    let any = col.as_any();
    macro_rules! each {
        ($arr:expr) => {{
            let a = $arr;
            for i in 0..a.len() {
                if a.is_null(i) {
                    acc.null_geometries += 1;
                } else {
                    add_wkb(acc, a.value(i))?;
                }
            }
        }};
    }
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
    Ok(())
}

pub fn read(
    path: &Path,
    _opts: &super::ReadOptions,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    let file = File::open(path).map_err(io_err(path))?;
    let bad = |m: String| corrupt(path, F, m);
    let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
        .map_err(|e| bad(e.to_string()))?;
    let pq = meta.metadata().clone();
    let geo_text = pq
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == "geo"))
        .and_then(|k| k.value.clone())
        .ok_or_else(|| {
            bad("no `geo` metadata: a Parquet file, but not a GeoParquet file".into())
        })?;
    let geo = geo_metadata(path, &geo_text, notes)?;
    let schema = meta.schema().clone();
    let geom_idx = schema
        .index_of(&geo.column)
        .map_err(|_| bad(format!("geometry column `{}` is missing", geo.column)))?;
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
    let descr = pq.file_metadata().schema_descr();
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
    progress.start(path, pq.file_metadata().num_rows().max(0) as u64);
    let groups: Vec<usize> = (0..pq.num_row_groups()).collect();
    let parts: Vec<Accumulator> = groups
        .par_iter()
        .map(|&g| -> Result<Accumulator, ReleaseError> {
            let rg = pq.row_group(g);
            let mut acc = proto.empty_like();
            let mut decode = vec![geom_idx];
            let mut decoded_attrs = Vec::new();
            for (k, &root) in attr_idx.iter().enumerate() {
                let stated = leaf_of[k]
                    .and_then(|l| rg.column(l).statistics())
                    .and_then(|s| s.null_count_opt());
                match stated {
                    Some(n) => acc.attributes[k].nulls += n,
                    None => {
                        decode.push(root);
                        decoded_attrs.push((k, schema.field(root).name().clone()));
                    }
                }
            }
            // A file of its own: a cloned handle shares its seek offset with the others, and
            // row groups read at the same time would read each other's bytes.
            let f = File::open(path).map_err(io_err(path))?;
            let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(f, meta.clone())
                .with_row_groups(vec![g])
                .with_projection(ProjectionMask::roots(descr, decode))
                .with_batch_size(16 * 1024)
                .build()
                .map_err(|e| bad(e.to_string()))?;
            for batch in reader {
                let batch = batch.map_err(|e| bad(format!("row group {g}: {e}")))?;
                acc.features += batch.num_rows() as u64;
                let gcol = batch
                    .column_by_name(&geo.column)
                    .ok_or_else(|| bad("geometry column missing from a row group".into()))?;
                add_geometries(&mut acc, gcol.as_ref())
                    .map_err(|e| bad(format!("row group {g}: {e}")))?;
                for (k, name) in &decoded_attrs {
                    if let Some(c) = batch.column_by_name(name) {
                        acc.attributes[*k].nulls += c.logical_null_count() as u64;
                    }
                }
                progress.advance(batch.num_rows() as u64);
            }
            if acc.features != rg.num_rows().max(0) as u64 {
                return Err(bad(format!(
                    "row group {g} holds {} rows, its metadata says {}",
                    acc.features,
                    rg.num_rows()
                )));
            }
            Ok(acc)
        })
        .collect::<Result<_, _>>()?;
    let mut acc = proto.empty_like();
    for p in &parts {
        acc.absorb(p);
    }
    Ok((geo.crs, acc))
}
