//! FlatGeobuf: the header (verified), the spatial index skipped, then features read as
//! size-prefixed FlatBuffers in batches of a few megabytes, each batch verified and profiled
//! on all cores. The feature loop is ours rather than the crate's iterator so that a corrupt
//! size prefix is refused against the file's length instead of becoming a huge allocation.
//!
//! A property absent from a feature's property buffer is null (that is how FlatGeobuf writes
//! a null). Column types map as GDAL maps them: `Bool` is bool; `Byte`, `UByte`, `Short`,
//! `UShort`, `Int` int32; `UInt`, `Long` int64; `ULong` float64 (GDAL's Real: 2^64 - 1 is
//! 1.8446744073709552e19); `Float`, `Double` float64; `String`, `Json` string; `DateTime`
//! datetime; `Binary` binary. A trailing byte too short to hold a column index is padding. GDAL's FlatGeobuf writer drops features whose geometry is null, so a FlatGeobuf
//! converted by GDAL can hold fewer features than its source.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use flatgeobuf::{ColumnType, Geometry, GeometryType as FgbType};
use rayon::prelude::*;

use super::geom::GeomScan;
use super::profile::{AttrAcc, AttrType};
use super::{corrupt, crs_identify, io_err, Accumulator, Format, Progress, ReleaseError};
use crate::model::spatial::GeometryType;

const F: Format = Format::FlatGeobuf;
/// Features are profiled in batches of about this many bytes: large enough to share out
/// across cores, small enough that memory stays flat.
const BATCH_BYTES: usize = 8 << 20;

fn attr_type(t: ColumnType) -> Result<AttrType, String> {
    Ok(match t {
        ColumnType::Bool => AttrType::Bool,
        ColumnType::Byte
        | ColumnType::UByte
        | ColumnType::Short
        | ColumnType::UShort
        | ColumnType::Int => AttrType::Int32,
        ColumnType::UInt | ColumnType::Long => AttrType::Int64,
        // GDAL maps ULong to Real: a value beyond 2^63 fits no int64 (2^64 - 1 reads as
        // 1.8446744073709552e19, and beyond 2^53 a value is rounded).
        ColumnType::ULong | ColumnType::Float | ColumnType::Double => AttrType::Float64,
        ColumnType::String | ColumnType::Json => AttrType::String,
        ColumnType::DateTime => AttrType::Datetime,
        ColumnType::Binary => AttrType::Binary,
        other => return Err(format!("unknown column type {}", other.0)),
    })
}

/// Bytes a property value of this type takes after its column index, or `None` for the
/// length-prefixed types.
fn fixed_size(t: ColumnType) -> Option<usize> {
    match t {
        ColumnType::Byte | ColumnType::UByte | ColumnType::Bool => Some(1),
        ColumnType::Short | ColumnType::UShort => Some(2),
        ColumnType::Int | ColumnType::UInt | ColumnType::Float => Some(4),
        ColumnType::Long | ColumnType::ULong | ColumnType::Double => Some(8),
        _ => None,
    }
}

/// The packed R-tree's size in bytes (the FlatGeobuf spec's formula), checked: an absurd
/// feature count overflows to `None` rather than to a small wrong size.
fn index_size(features: u64, node_size: u16) -> Option<u64> {
    if features == 0 || node_size == 0 {
        return Some(0);
    }
    if node_size < 2 {
        return None;
    }
    let mut n = features;
    let mut nodes = n;
    loop {
        n = n.div_ceil(u64::from(node_size));
        nodes = nodes.checked_add(n)?;
        if n == 1 {
            break;
        }
    }
    nodes.checked_mul(40)
}

/// The geometry's xy values as raw little-endian bytes, 16 per point.
fn xy_bytes<'a>(g: &Geometry<'a>) -> Result<&'a [u8], String> {
    let Some(xy) = g.xy() else {
        return Ok(&[]);
    };
    let b = xy.bytes();
    if b.len() % 16 != 0 {
        return Err("odd number of xy values".to_string());
    }
    Ok(b)
}

#[inline]
fn pt(b: &[u8], i: usize) -> (f64, f64) {
    let at = i * 16;
    let mut x = [0u8; 8];
    let mut y = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    y.copy_from_slice(&b[at + 8..at + 16]);
    (f64::from_le_bytes(x), f64::from_le_bytes(y))
}

/// Every point to the envelope and validity scan; returns the point count.
#[inline]
fn scan_points(b: &[u8], scan: &mut GeomScan) -> usize {
    let n = b.len() / 16;
    for i in 0..n {
        let (x, y) = pt(b, i);
        scan.coord(x, y);
    }
    n
}

/// Call `f(start, end)` for each part of `n` points as split by `ends` (absent: one part);
/// returns the number of parts.
fn for_parts(g: &Geometry<'_>, n: usize, mut f: impl FnMut(usize, usize)) -> Result<usize, String> {
    let Some(ends) = g.ends() else {
        if n > 0 {
            f(0, n);
            return Ok(1);
        }
        return Ok(0);
    };
    let mut start = 0usize;
    for e in ends.iter() {
        let e = e as usize;
        if e < start || e > n {
            return Err(format!("part end {e} outside 0..={n}"));
        }
        f(start, e);
        start = e;
    }
    Ok(ends.len())
}

fn scan_geometry(
    g: &Geometry<'_>,
    t: FgbType,
    scan: &mut GeomScan,
    depth: usize,
) -> Result<GeometryType, String> {
    if depth > 32 {
        return Err("geometry nested too deep".to_string());
    }
    let t = if t == FgbType::Unknown { g.type_() } else { t };
    let gt = GeometryType::from_code(u32::from(t.0))
        .ok_or_else(|| format!("unsupported geometry type {}", t.0))?;
    match gt {
        GeometryType::Point => {
            let b = xy_bytes(g)?;
            if !b.is_empty() {
                let (x, y) = pt(b, 0);
                scan.point(x, y);
            }
        }
        GeometryType::MultiPoint => {
            scan_points(xy_bytes(g)?, scan);
        }
        GeometryType::LineString | GeometryType::CircularString => {
            let n = scan_points(xy_bytes(g)?, scan);
            if gt == GeometryType::LineString {
                scan.line(n);
            }
        }
        GeometryType::MultiLineString => {
            let n = scan_points(xy_bytes(g)?, scan);
            for_parts(g, n, |a, b| scan.line(b - a))?;
        }
        GeometryType::Polygon | GeometryType::Triangle => {
            let b = xy_bytes(g)?;
            let n = scan_points(b, scan);
            for_parts(g, n, |s, e| {
                if e > s {
                    scan.ring(e - s, pt(b, s), pt(b, e - 1));
                } else {
                    scan.ring(0, (0.0, 0.0), (0.0, 0.0));
                }
            })?;
        }
        _ => {
            // Collections and curves are made of parts, each a geometry of its own.
            let child = match gt {
                GeometryType::MultiPolygon | GeometryType::PolyhedralSurface => FgbType::Polygon,
                GeometryType::Tin => FgbType::Triangle,
                _ => FgbType::Unknown,
            };
            for p in g.parts().iter().flatten() {
                scan_geometry(&p, child, scan, depth + 1)?;
            }
        }
    }
    Ok(gt)
}

/// Profile a batch of features (each a size-prefixed FlatBuffer in `buf`).
fn batch(
    buf: &[u8],
    spans: &[(usize, usize)],
    header_type: FgbType,
    (has_z, has_m): (bool, bool),
    columns: &[ColumnType],
    proto: &Accumulator,
) -> Result<Accumulator, String> {
    let mut acc = proto.empty_like();
    let mut present = vec![0u64; columns.len()];
    let mut seen = vec![u64::MAX; columns.len()];
    for (i, &(a, b)) in spans.iter().enumerate() {
        let f = flatgeobuf::size_prefixed_root_as_feature(&buf[a..b])
            .map_err(|e| format!("feature is not a valid FlatBuffer: {e}"))?;
        acc.features += 1;
        match f.geometry() {
            None => acc.null_geometries += 1,
            Some(g) => {
                // The header's flags say which coordinates every geometry carries (GDAL
                // reads them so too).
                let mut scan = GeomScan {
                    z: has_z,
                    m: has_m,
                    ..GeomScan::default()
                };
                let t = scan_geometry(&g, header_type, &mut scan, 0)?;
                scan.commit(&mut acc, t);
            }
        }
        if let Some(props) = f.properties() {
            let p = props.bytes();
            let mut at = 0usize;
            // Fewer bytes left than a column index are padding (GDAL writes one after the
            // last value, and reads the buffer so: `while offset + 1 < size`).
            while at + 1 < p.len() {
                let col = p
                    .get(at..at + 2)
                    .map(|s| u16::from_le_bytes([s[0], s[1]]) as usize)
                    .ok_or("truncated property buffer")?;
                at += 2;
                let t = *columns
                    .get(col)
                    .ok_or_else(|| format!("property for column {col}, which the header lacks"))?;
                let len = match fixed_size(t) {
                    Some(n) => n,
                    None => {
                        let s = p.get(at..at + 4).ok_or("truncated property buffer")?;
                        at += 4;
                        u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize
                    }
                };
                at = at
                    .checked_add(len)
                    .filter(|&e| e <= p.len())
                    .ok_or("truncated property buffer")?;
                if seen[col] != i as u64 {
                    seen[col] = i as u64;
                    present[col] += 1;
                }
            }
        }
    }
    for (a, p) in acc.attributes.iter_mut().zip(present) {
        a.nulls = acc.features - p;
    }
    Ok(acc)
}

pub fn read(
    path: &Path,
    progress: &dyn Progress,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    let file = File::open(path).map_err(io_err(path))?;
    let len = file.metadata().map_err(io_err(path))?.len();
    read_from(path, BufReader::with_capacity(1 << 20, file), len, progress)
}

/// [`read`] from any reader of `len` bytes: the file, or an object in object storage read in
/// large sequential ranges (the index is skipped with a seek, never fetched).
pub fn read_from(
    path: &Path,
    mut r: impl Read + Seek,
    len: u64,
    progress: &dyn Progress,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    let bad = |m: String| corrupt(path, F, m);
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic)
        .map_err(|_| bad("shorter than the FlatGeobuf magic bytes".into()))?;
    if &magic[0..3] != b"fgb" || &magic[4..7] != b"fgb" {
        return Err(bad("no FlatGeobuf magic bytes".into()));
    }
    let mut size = [0u8; 4];
    r.read_exact(&mut size)
        .map_err(|_| bad("truncated header".into()))?;
    let header_size = u32::from_le_bytes(size) as u64;
    if !(8..=len).contains(&header_size) {
        return Err(bad(format!(
            "header size {header_size} does not fit the file"
        )));
    }
    let mut hbuf = size.to_vec();
    hbuf.resize(4 + header_size as usize, 0);
    r.read_exact(&mut hbuf[4..])
        .map_err(|_| bad("truncated header".into()))?;
    let header = flatgeobuf::size_prefixed_root_as_header(&hbuf)
        .map_err(|e| bad(format!("header is not a valid FlatBuffer: {e}")))?;
    let mut columns = Vec::new();
    let mut attrs = Vec::new();
    for c in header.columns().iter().flatten() {
        columns.push(c.type_());
        attrs.push(AttrAcc {
            name: c.name().to_string(),
            ty: attr_type(c.type_()).map_err(&bad)?,
            nulls: 0,
        });
    }
    let crs = header.crs().and_then(|c| {
        let org = c.org().unwrap_or("EPSG");
        if c.code() != 0 {
            crs_identify::from_org_code(org, i64::from(c.code()))
        } else if let Some(s) = c.code_string().filter(|s| !s.is_empty()) {
            Some(format!("{}:{s}", org.to_ascii_uppercase()))
        } else {
            c.wkt().and_then(crs_identify::from_wkt)
        }
    });
    let header_type = header.geometry_type();
    let zm = (header.has_z(), header.has_m());
    let promised = header.features_count();
    let index = index_size(promised, header.index_node_size()).ok_or_else(|| {
        bad(format!(
            "the header's feature count {promised} and index node size {} give no valid index",
            header.index_node_size()
        ))
    })?;
    let mut pos = 12 + header_size;
    if index > len - pos.min(len) {
        return Err(bad(format!(
            "the header promises {promised} features with an index of {index} bytes, more than the file holds"
        )));
    }
    r.seek(SeekFrom::Current(index as i64))
        .map_err(io_err(path))?;
    pos += index;
    progress.start(path, len);

    let proto = Accumulator::new(attrs);
    let mut acc = proto.empty_like();
    let mut buf: Vec<u8> = Vec::with_capacity(BATCH_BYTES + (1 << 20));
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let flush = |buf: &mut Vec<u8>, spans: &mut Vec<(usize, usize)>, acc: &mut Accumulator| {
        let chunk = (spans.len() / (rayon::current_num_threads() * 4)).max(64);
        let parts: Vec<Accumulator> = spans
            .par_chunks(chunk)
            .map(|c| batch(buf, c, header_type, zm, &columns, &proto))
            .collect::<Result<_, _>>()?;
        for p in &parts {
            acc.absorb(p);
        }
        progress.advance(buf.len() as u64);
        buf.clear();
        spans.clear();
        Ok::<(), String>(())
    };
    loop {
        let mut size = [0u8; 4];
        match r.read(&mut size[..1]) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(io_err(path)(e)),
        }
        r.read_exact(&mut size[1..]).map_err(|_| {
            bad(format!(
                "truncated after {} features",
                acc.features + spans.len() as u64
            ))
        })?;
        let n = u32::from_le_bytes(size) as u64;
        if n > len - (pos + 4).min(len) {
            return Err(bad(format!(
                "feature {} claims {n} bytes, more than the file has left (truncated?)",
                acc.features + spans.len() as u64 + 1
            )));
        }
        let start = buf.len();
        buf.extend_from_slice(&size);
        buf.resize(start + 4 + n as usize, 0);
        r.read_exact(&mut buf[start + 4..]).map_err(io_err(path))?;
        spans.push((start, buf.len()));
        pos += 4 + n;
        if buf.len() >= BATCH_BYTES {
            flush(&mut buf, &mut spans, &mut acc).map_err(&bad)?;
        }
    }
    flush(&mut buf, &mut spans, &mut acc).map_err(&bad)?;
    if promised != 0 && acc.features != promised {
        return Err(bad(format!(
            "the header promises {promised} features but the file holds {} (truncated?)",
            acc.features
        )));
    }
    Ok((crs, acc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_size_is_the_specs_and_absurd_counts_overflow_to_none() {
        // One feature under a root: 2 nodes of 40 bytes. 100 features, node size 16:
        // 100 + 7 + 1 nodes.
        assert_eq!(index_size(1, 16), Some(80));
        assert_eq!(index_size(100, 16), Some(108 * 40));
        assert_eq!(index_size(0, 16), Some(0));
        assert_eq!(index_size(10, 1), None);
        assert_eq!(index_size(u64::MAX, 16), None);
    }
}
