//! Shapefile: the `.shp` records and the `.dbf` rows read in lockstep, the `.prj` identified
//! by [`super::crs_identify::from_wkt`]. Both files are parsed here, with every length checked against
//! the file, because both formats are simple and a corrupt length must be an error, not an
//! allocation.
//!
//! Nulls follow shapelib (and so GDAL): a numeric field that is blank or `*`-filled, a date
//! that is blank or `00000000`, a logical that is `?` or blank, and a text field that is
//! blank are null.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::geom::GeomScan;
use super::profile::{AttrAcc, AttrType};
use super::{
    corrupt, crs_identify, io_err, Accumulator, Format, Progress, ReadNotes, ReadWarning,
    ReleaseError, Warned,
};
use crate::model::spatial::GeometryType;

const F: Format = Format::Shapefile;

/// The sibling file with extension `ext`, in lower or upper case.
fn sibling(path: &Path, ext: &str) -> Option<PathBuf> {
    [ext.to_string(), ext.to_ascii_uppercase()]
        .into_iter()
        .map(|e| path.with_extension(e))
        .find(|p| p.is_file())
}

struct Field {
    kind: u8,
    offset: usize,
    len: usize,
}

fn field_type(kind: u8, len: usize, decimals: u8) -> AttrType {
    match kind {
        // GDAL's widths: up to 9 digits fit an int32, up to 18 an int64.
        b'N' if decimals == 0 && len < 10 => AttrType::Int32,
        b'N' if decimals == 0 && len < 19 => AttrType::Int64,
        b'N' | b'F' | b'O' | b'Y' => AttrType::Float64,
        b'I' | b'+' => AttrType::Int32,
        b'L' => AttrType::Bool,
        b'D' => AttrType::Date,
        b'T' | b'@' => AttrType::Datetime,
        _ => AttrType::String,
    }
}

fn is_null(kind: u8, v: &[u8]) -> bool {
    let t = v.trim_ascii();
    let t = match t.iter().position(|&b| b == 0) {
        Some(i) => &t[..i],
        None => t,
    };
    match kind {
        b'N' | b'F' => t.is_empty() || t[0] == b'*',
        b'D' => t.is_empty() || t == b"00000000",
        b'L' => t.is_empty() || t[0] == b'?',
        // Binary numbers have no null representation.
        b'I' | b'+' | b'O' | b'@' | b'T' | b'Y' => false,
        _ => t.is_empty(),
    }
}

struct Dbf {
    r: BufReader<File>,
    records: u64,
    fields: Vec<Field>,
    row: Vec<u8>,
}

/// Open `path` for reading and read its fixed header of `N` bytes; `short` says what a file
/// shorter than that is. Returns the reader after the header, the file's size and the header.
fn open_with_header<const N: usize>(
    path: &Path,
    short: &str,
) -> Result<(BufReader<File>, u64, [u8; N]), ReleaseError> {
    let file = File::open(path).map_err(io_err(path))?;
    let size = file.metadata().map_err(io_err(path))?.len();
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut h = [0u8; N];
    r.read_exact(&mut h)
        .map_err(|_| corrupt(path, F, short.to_string()))?;
    Ok((r, size, h))
}

fn open_dbf(path: &Path) -> Result<(Dbf, Vec<AttrAcc>), ReleaseError> {
    let bad = |m: String| corrupt(path, F, m);
    let (mut r, size, h) = open_with_header::<32>(path, "truncated .dbf header")?;
    let records = u64::from(u32::from_le_bytes([h[4], h[5], h[6], h[7]]));
    let header_len = u16::from_le_bytes([h[8], h[9]]) as usize;
    let record_len = u16::from_le_bytes([h[10], h[11]]) as usize;
    if header_len < 33 || record_len < 1 {
        return Err(bad(format!(
            ".dbf header length {header_len} or record length {record_len} is invalid"
        )));
    }
    if (header_len as u64).saturating_add(records.saturating_mul(record_len as u64)) > size {
        return Err(bad(format!(
            ".dbf promises {records} rows of {record_len} bytes, more than the file holds (truncated?)"
        )));
    }
    let mut rest = vec![0u8; header_len - 32];
    r.read_exact(&mut rest)
        .map_err(|_| bad("truncated .dbf header".into()))?;
    let mut fields = Vec::new();
    let mut attrs = Vec::new();
    let mut offset = 1; // the deletion flag
    for d in rest.chunks_exact(32) {
        if d[0] == 0x0D {
            break;
        }
        let name_end = d[..11].iter().position(|&b| b == 0).unwrap_or(11);
        let name = String::from_utf8_lossy(&d[..name_end]).trim().to_string();
        let (kind, len, decimals) = (d[11], d[16] as usize, d[17]);
        if offset + len > record_len {
            return Err(bad(format!(".dbf field `{name}` lies outside the record")));
        }
        fields.push(Field { kind, offset, len });
        attrs.push(AttrAcc {
            name,
            ty: field_type(kind, len, decimals),
            nulls: 0,
        });
        offset += len;
    }
    Ok((
        Dbf {
            r,
            records,
            fields,
            row: vec![0u8; record_len],
        },
        attrs,
    ))
}

fn i32_le(b: &[u8], at: usize) -> Result<i32, String> {
    b.get(at..at + 4)
        .map(|s| i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| "record shorter than its shape".to_string())
}

fn f64_le(b: &[u8], at: usize) -> Result<f64, String> {
    let s = b
        .get(at..at + 8)
        .ok_or_else(|| "record shorter than its shape".to_string())?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Ok(f64::from_le_bytes(a))
}

/// Whether a Z record carries measures, as shapelib and GDAL decide: the M part of a Z record
/// is optional (the record must be long enough to hold it), and a record whose every M value
/// is "no data" (below -1e38, the shapefile spec's marker) has none.
fn has_measures(st: i32, c: &[u8]) -> bool {
    // Where the M values start and how many there are.
    let (start, n) = match st {
        11 => (28usize, 1usize),
        18 => {
            let Some(n) = i32_le(c, 36).ok().and_then(|n| usize::try_from(n).ok()) else {
                return false;
            };
            match n.checked_mul(24).and_then(|b| b.checked_add(40 + 32)) {
                Some(start) => (start, n),
                None => return false,
            }
        }
        13 | 15 => {
            let (Ok(parts), Ok(pts)) = (i32_le(c, 36), i32_le(c, 40)) else {
                return false;
            };
            let (Ok(parts), Ok(n)) = (usize::try_from(parts), usize::try_from(pts)) else {
                return false;
            };
            let start = parts
                .checked_mul(4)
                .and_then(|p| n.checked_mul(24).and_then(|b| b.checked_add(p)))
                .and_then(|b| b.checked_add(44 + 32));
            match start {
                Some(start) => (start, n),
                None => return false,
            }
        }
        _ => return false,
    };
    let Some(end) = n.checked_mul(8).and_then(|b| b.checked_add(start)) else {
        return false;
    };
    match c.get(start..end) {
        None => false,
        Some(ms) => ms
            .chunks_exact(8)
            .any(|m| f64_le(m, 0).is_ok_and(|v| v > -1e38)),
    }
}

/// One `.shp` record's content (after the 8-byte record header).
fn shape(acc: &mut Accumulator, c: &[u8]) -> Result<(), String> {
    let st = i32_le(c, 0)?;
    let mut scan = GeomScan::default();
    // Z types (11, 13, 15, 18) carry heights and, when the record holds them and one is not
    // "no data", measures; M types (21, 23, 25, 28) measures: shapelib's reading, so GDAL's.
    scan.z = matches!(st, 11 | 13 | 15 | 18);
    scan.m = matches!(st, 21 | 23 | 25 | 28) || (scan.z && has_measures(st, c));
    let t = match st {
        0 => {
            acc.null_geometries += 1;
            return Ok(());
        }
        1 | 11 | 21 => {
            scan.point(f64_le(c, 4)?, f64_le(c, 12)?);
            GeometryType::Point
        }
        8 | 18 | 28 => {
            let n = usize::try_from(i32_le(c, 36)?).map_err(|_| "negative point count")?;
            let pts = c
                .get(
                    40..n
                        .checked_mul(16)
                        .and_then(|b| b.checked_add(40))
                        .ok_or("point count overflows")?,
                )
                .ok_or("record shorter than its points")?;
            for p in pts.chunks_exact(16) {
                scan.coord(f64_le(p, 0)?, f64_le(p, 8)?);
            }
            // GDAL: a multipoint record is a MultiPoint, whatever its count.
            GeometryType::MultiPoint
        }
        3 | 13 | 23 | 5 | 15 | 25 => {
            let nparts = usize::try_from(i32_le(c, 36)?).map_err(|_| "negative part count")?;
            let npts = usize::try_from(i32_le(c, 40)?).map_err(|_| "negative point count")?;
            let pstart = 44usize
                .checked_add(nparts.checked_mul(4).ok_or("part count overflows")?)
                .ok_or("part count overflows")?;
            let pend = npts
                .checked_mul(16)
                .and_then(|b| b.checked_add(pstart))
                .ok_or("point count overflows")?;
            if c.len() < pend {
                return Err("record shorter than its points".to_string());
            }
            let xy = |i: usize| -> (f64, f64) {
                let at = pstart + i * 16;
                let mut x = [0u8; 8];
                let mut y = [0u8; 8];
                x.copy_from_slice(&c[at..at + 8]);
                y.copy_from_slice(&c[at + 8..at + 16]);
                (f64::from_le_bytes(x), f64::from_le_bytes(y))
            };
            for i in 0..npts {
                let (x, y) = xy(i);
                scan.coord(x, y);
            }
            let polygon = matches!(st, 5 | 15 | 25);
            let mut outer = 0usize;
            for k in 0..nparts {
                let a =
                    usize::try_from(i32_le(c, 44 + 4 * k)?).map_err(|_| "negative part start")?;
                let b = if k + 1 < nparts {
                    usize::try_from(i32_le(c, 48 + 4 * k)?).map_err(|_| "negative part start")?
                } else {
                    npts
                };
                if a > b || b > npts {
                    return Err(format!("part {k} spans {a}..{b} of {npts} points"));
                }
                if polygon {
                    if b > a {
                        scan.ring(b - a, xy(a), xy(b - 1));
                    } else {
                        scan.ring(0, (0.0, 0.0), (0.0, 0.0));
                    }
                    // The shapefile spec makes outer rings clockwise: negative shoelace sum.
                    let mut area2 = 0.0;
                    for i in a..b.saturating_sub(1) {
                        let (x0, y0) = xy(i);
                        let (x1, y1) = xy(i + 1);
                        area2 += x0 * y1 - x1 * y0;
                    }
                    if area2 < 0.0 {
                        outer += 1;
                    }
                } else {
                    scan.line(b - a);
                }
            }
            // GDAL's rule (shape2ogr): one outer ring is a Polygon, several a MultiPolygon (no
            // clockwise ring at all is a mis-oriented single polygon, not zero polygons); one
            // part is a LineString, several a MultiLineString.
            match (polygon, if polygon { outer.max(1) } else { nparts }) {
                (true, 1) => GeometryType::Polygon,
                (true, _) => GeometryType::MultiPolygon,
                (false, 1) => GeometryType::LineString,
                (false, _) => GeometryType::MultiLineString,
            }
        }
        MULTIPATCH => return Err("MultiPatch records are not read by this build".to_string()),
        other => return Err(format!("unknown shape type {other}")),
    };
    scan.commit(acc, t);
    Ok(())
}

/// What a `.shp` is read as: its records from byte 100 on, one after another, while they are
/// records. A record is its 8-byte header (number, content length) and a content that fits in
/// the file; its number is the next one, or its content starts with a shape type this file
/// may hold. The first bytes that are no record end the walk: padding or junk after the last
/// record is ignored with a warning (as GDAL and pyshp ignore it), a record that is cut short
/// by the end of the file is damage. The count is then checked against the `.dbf`'s rows, so
/// a walk that stopped early is an error, never a wrong count. The header's file length and
/// the `.shx` are an index to the same records: when they disagree with the records, they are
/// ignored with a warning.
pub fn read(
    path: &Path,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    let bad = |m: String| corrupt(path, F, m);
    let (mut r, size, h) = open_with_header::<100>(path, "shorter than the 100-byte .shp header")?;
    if i32::from_be_bytes([h[0], h[1], h[2], h[3]]) != 9994 {
        return Err(bad("no shapefile file code (9994)".into()));
    }
    let declared = u64::from(u32::from_be_bytes([h[24], h[25], h[26], h[27]])) * 2;
    let file_type = i32::from_le_bytes([h[32], h[33], h[34], h[35]]);
    if file_type == MULTIPATCH {
        return Err(multipatch(path));
    }
    // Without its .dbf a shapefile still has shapes (GDAL reads it with no attributes).
    let dbf_path = sibling(path, "dbf");
    let (mut dbf, attrs) = match &dbf_path {
        Some(p) => {
            let (d, a) = open_dbf(p)?;
            (Some(d), a)
        }
        None => {
            notes.warnings.push(ReadWarning::of(path, Warned::NoDbf));
            (None, Vec::new())
        }
    };
    let rows = dbf.as_ref().map(|d| d.records);
    let crs = match sibling(path, "prj") {
        Some(prj) => {
            let text = std::fs::read(&prj).map_err(io_err(&prj))?;
            match crs_identify::identify_wkt(&String::from_utf8_lossy(&text)) {
                Ok(c) => Some(c.to_string()),
                Err(why) => {
                    let why = why.to_string();
                    let warned = Warned::PrjUnidentified { why };
                    notes.warnings.push(ReadWarning::of(path, warned));
                    None
                }
            }
        }
        None => {
            notes.warnings.push(ReadWarning::of(path, Warned::NoPrj));
            None
        }
    };
    progress.start(path, size);
    let mut acc = Accumulator::new(attrs);
    let mut pos = 100u64;
    let mut content = Vec::new();
    let mut done = 0u64;
    let type_ok = |t: i32| t == 0 || t == file_type;
    while pos < size {
        let next = acc.features + 1;
        if size - pos < 8 {
            break;
        }
        let mut rh = [0u8; 8];
        r.read_exact(&mut rh).map_err(io_err(path))?;
        let number = u64::from(u32::from_be_bytes([rh[0], rh[1], rh[2], rh[3]]));
        let len = u64::from(u32::from_be_bytes([rh[4], rh[5], rh[6], rh[7]])) * 2;
        let fits = len <= size - pos - 8;
        if len < 4 || !fits {
            if number == next && len >= 4 && rows.is_none_or(|n| acc.features < n) {
                return Err(bad(format!(
                    "record {next} claims {len} bytes, more than the file has left (truncated?)"
                )));
            }
            break;
        }
        content.resize(len as usize, 0);
        r.read_exact(&mut content).map_err(io_err(path))?;
        let st = i32::from_le_bytes([content[0], content[1], content[2], content[3]]);
        if number != next && !type_ok(st) {
            break;
        }
        if st == MULTIPATCH {
            return Err(multipatch(path));
        }
        pos += 8 + len;
        acc.features += 1;
        shape(&mut acc, &content).map_err(|e| bad(format!("record {}: {e}", acc.features)))?;
        if let (Some(dbf), Some(dbf_path)) = (dbf.as_mut(), &dbf_path) {
            if acc.features > dbf.records {
                return Err(bad(format!(
                    "more shapes than the .dbf's {} rows",
                    dbf.records
                )));
            }
            dbf.r
                .read_exact(&mut dbf.row)
                .map_err(|_| corrupt(dbf_path, F, format!("truncated at row {}", acc.features)))?;
            for (f, a) in dbf.fields.iter().zip(acc.attributes.iter_mut()) {
                if is_null(f.kind, &dbf.row[f.offset..f.offset + f.len]) {
                    a.nulls += 1;
                }
            }
        }
        if pos - done >= 1 << 20 {
            progress.advance(pos - done);
            done = pos;
        }
    }
    if let Some(rows) = rows.filter(|&n| n != acc.features) {
        return Err(bad(format!(
            "{} shapes but {rows} rows in the .dbf{}",
            acc.features,
            if pos < size {
                format!(" (the records stop at byte {pos} of {size})")
            } else {
                String::new()
            }
        )));
    }
    let records = acc.features;
    if pos < size {
        let bytes = size - pos;
        let warned = Warned::TrailingBytes { bytes, records };
        notes.warnings.push(ReadWarning::of(path, warned));
    }
    if declared != pos {
        let end = pos;
        let warned = Warned::HeaderLength {
            declared,
            records,
            end,
        };
        notes.warnings.push(ReadWarning::of(path, warned));
    }
    if let Some(shx) = sibling(path, "shx") {
        let len = std::fs::metadata(&shx).map_err(io_err(&shx))?.len();
        let listed = len.saturating_sub(100) / 8;
        if listed != acc.features || len < 100 || (len - 100) % 8 != 0 {
            let warned = Warned::ShxMismatch { listed, records };
            notes.warnings.push(ReadWarning::of(path, warned));
        }
    }
    Ok((crs, acc))
}

/// The MultiPatch shape type (3-D surfaces), which this build does not read.
const MULTIPATCH: i32 = 31;

fn multipatch(path: &Path) -> ReleaseError {
    ReleaseError::Unsupported {
        path: path.to_path_buf(),
        format: F,
        reason: "MultiPatch shapes (3-D surface patches) are not read by this build".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(acc: &Accumulator) -> Vec<&'static str> {
        GeometryType::from_bits(acc.types)
            .map(|t| t.name())
            .collect()
    }

    /// A polyline (3) or polygon (5) record of `parts`, each a list of points.
    fn record(st: i32, parts: &[&[(f64, f64)]]) -> Vec<u8> {
        let mut v = st.to_le_bytes().to_vec();
        v.extend([0u8; 32]);
        let n: usize = parts.iter().map(|p| p.len()).sum();
        v.extend((parts.len() as i32).to_le_bytes());
        v.extend((n as i32).to_le_bytes());
        let mut at = 0;
        for p in parts {
            v.extend((at as i32).to_le_bytes());
            at += p.len();
        }
        for p in parts {
            for (x, y) in *p {
                v.extend(x.to_le_bytes());
                v.extend(y.to_le_bytes());
            }
        }
        v
    }

    #[test]
    fn gdals_rule_for_shapefile_records() {
        let line: &[(f64, f64)] = &[(0., 0.), (1., 1.)];
        let mut acc = Accumulator::default();
        shape(&mut acc, &record(3, &[line])).unwrap();
        assert_eq!(types(&acc), ["LineString"]);
        shape(&mut acc, &record(3, &[line, line])).unwrap();
        assert_eq!(types(&acc), ["LineString", "MultiLineString"]);
        // Clockwise outer ring, then a counter-clockwise hole: one Polygon.
        let outer: &[(f64, f64)] = &[(0., 0.), (0., 4.), (4., 4.), (4., 0.), (0., 0.)];
        let hole: &[(f64, f64)] = &[(1., 1.), (2., 1.), (2., 2.), (1., 2.), (1., 1.)];
        let far: &[(f64, f64)] = &[(9., 9.), (9., 10.), (10., 10.), (10., 9.), (9., 9.)];
        let mut acc = Accumulator::default();
        shape(&mut acc, &record(5, &[outer, hole])).unwrap();
        assert_eq!(types(&acc), ["Polygon"]);
        shape(&mut acc, &record(5, &[outer, far])).unwrap();
        assert_eq!(types(&acc), ["Polygon", "MultiPolygon"]);
        // A multipoint of one point stays a MultiPoint.
        let mut mp = 8i32.to_le_bytes().to_vec();
        mp.extend([0u8; 32]);
        mp.extend(1i32.to_le_bytes());
        mp.extend(1f64.to_le_bytes());
        mp.extend(2f64.to_le_bytes());
        let mut acc = Accumulator::default();
        shape(&mut acc, &mp).unwrap();
        assert_eq!(types(&acc), ["MultiPoint"]);
    }
}
