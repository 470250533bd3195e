//! Shapefile: the `.shp` records and the `.dbf` rows read in lockstep, the `.prj` identified
//! by [`super::crs::from_wkt`]. Both files are parsed here, with every length checked against
//! the file, because both formats are simple and a corrupt length must be an error, not an
//! allocation.
//!
//! Nulls follow shapelib (and so GDAL): a numeric field that is blank or `*`-filled, a date
//! that is blank or `00000000`, a logical that is `?` or blank, and a text field that is
//! blank are null.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::geom::{GeomScan, GeomType};
use super::profile::{AttrAcc, AttrType};
use super::{corrupt, crs, io_err, Accumulator, Format, Progress, ReadNotes, ReleaseError};

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
    record_len: usize,
    fields: Vec<Field>,
    row: Vec<u8>,
}

fn open_dbf(path: &Path) -> Result<(Dbf, Vec<AttrAcc>), ReleaseError> {
    let bad = |m: String| corrupt(path, F, m);
    let file = File::open(path).map_err(io_err(path))?;
    let size = file.metadata().map_err(io_err(path))?.len();
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut h = [0u8; 32];
    r.read_exact(&mut h)
        .map_err(|_| bad("truncated .dbf header".into()))?;
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
            record_len,
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

/// One `.shp` record's content (after the 8-byte record header).
fn shape(acc: &mut Accumulator, c: &[u8]) -> Result<(), String> {
    let st = i32_le(c, 0)?;
    let mut scan = GeomScan::default();
    let t = match st {
        0 => {
            acc.null_geometries += 1;
            return Ok(());
        }
        1 | 11 | 21 => {
            scan.point(f64_le(c, 4)?, f64_le(c, 12)?);
            GeomType::Point
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
            GeomType::MultiPoint.normalised(n)
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
            if polygon {
                // No clockwise ring at all is a mis-oriented single polygon, not zero polygons.
                GeomType::MultiPolygon.normalised(outer.max(1))
            } else {
                GeomType::MultiLineString.normalised(nparts)
            }
        }
        31 => return Err("MultiPatch records are not supported".to_string()),
        other => return Err(format!("unknown shape type {other}")),
    };
    scan.commit(acc, t);
    Ok(())
}

pub fn read(
    path: &Path,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    let bad = |m: String| corrupt(path, F, m);
    let file = File::open(path).map_err(io_err(path))?;
    let size = file.metadata().map_err(io_err(path))?.len();
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut h = [0u8; 100];
    r.read_exact(&mut h)
        .map_err(|_| bad("shorter than the 100-byte .shp header".into()))?;
    if i32::from_be_bytes([h[0], h[1], h[2], h[3]]) != 9994 {
        return Err(bad("no shapefile file code (9994)".into()));
    }
    let declared = u64::from(u32::from_be_bytes([h[24], h[25], h[26], h[27]])) * 2;
    if declared > size {
        return Err(bad(format!(
            "the header says {declared} bytes but the file has {size} (truncated?)"
        )));
    }
    let dbf_path = sibling(path, "dbf")
        .ok_or_else(|| bad("its .dbf (the attribute table) is missing".into()))?;
    let (mut dbf, attrs) = open_dbf(&dbf_path)?;
    let crs = match sibling(path, "prj") {
        Some(prj) => {
            let text = std::fs::read(&prj).map_err(io_err(&prj))?;
            match crs::identify_wkt(&String::from_utf8_lossy(&text)) {
                Ok(c) => Some(c.to_string()),
                Err(why) => {
                    notes.warnings.push(format!(
                        "{}: the CRS in its .prj is not identified ({why}); reporting it as unknown",
                        path.display()
                    ));
                    None
                }
            }
        }
        None => {
            notes.warnings.push(format!(
                "{}: no .prj file; reporting the CRS as unknown",
                path.display()
            ));
            None
        }
    };
    progress.start(path, declared);
    let mut acc = Accumulator::new(attrs);
    let mut pos = 100u64;
    let mut content = Vec::new();
    let mut done = 0u64;
    while pos < declared {
        let mut rh = [0u8; 8];
        r.read_exact(&mut rh)
            .map_err(|_| bad(format!("truncated after {} records", acc.features)))?;
        let len = u64::from(u32::from_be_bytes([rh[4], rh[5], rh[6], rh[7]])) * 2;
        if pos + 8 + len > declared {
            return Err(bad(format!(
                "record {} claims {len} bytes, more than the file has left",
                acc.features + 1
            )));
        }
        content.resize(len as usize, 0);
        r.read_exact(&mut content).map_err(io_err(path))?;
        pos += 8 + len;
        acc.features += 1;
        shape(&mut acc, &content).map_err(|e| bad(format!("record {}: {e}", acc.features)))?;
        if acc.features > dbf.records {
            return Err(bad(format!(
                "more shapes than the .dbf's {} rows",
                dbf.records
            )));
        }
        dbf.r
            .read_exact(&mut dbf.row)
            .map_err(|_| corrupt(&dbf_path, F, format!("truncated at row {}", acc.features)))?;
        for (f, a) in dbf.fields.iter().zip(acc.attributes.iter_mut()) {
            if is_null(f.kind, &dbf.row[f.offset..f.offset + f.len]) {
                a.nulls += 1;
            }
        }
        if pos - done >= 1 << 20 {
            progress.advance(pos - done);
            done = pos;
        }
    }
    debug_assert!(dbf.record_len == dbf.row.len());
    if acc.features != dbf.records {
        return Err(bad(format!(
            "{} shapes but {} rows in the .dbf",
            acc.features, dbf.records
        )));
    }
    Ok((crs, acc))
}
