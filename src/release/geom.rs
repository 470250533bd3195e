//! Geometry rules shared by every reader, so that one dataset in five formats gives one
//! profile.
//!
//! **Types as stored.** A geometry's type is its OGC simple-feature name as the file stores it,
//! with Z and M dropped (`LineString ZM` is `LineString`; the dimensions are reported apart):
//! a `MultiPolygon` with one member is a `MultiPolygon`, because that is what a consumer
//! reading the file receives. Shapefile alone has no such distinction in the format, so its
//! reader applies GDAL's rule (what GDAL, pyogrio and Fiona hand every consumer): a polygon
//! record with one outer ring (clockwise, per the shapefile spec) is a `Polygon`, with several
//! a `MultiPolygon`; a polyline record with one part is a `LineString`, with several a
//! `MultiLineString`; a multipoint record is a `MultiPoint`. Curved types (`CircularString`,
//! `CompoundCurve`, `CurvePolygon`, `MultiCurve`, `MultiSurface`) and `PolyhedralSurface`,
//! `Tin` and `Triangle` are reported under their own names, never linearised; their envelope
//! is taken over their control points.
//!
//! **Invalid geometry** is decided cheaply, per geometry, without topology: it is invalid when
//! a coordinate is not finite (NaN or infinite x or y; the all-NaN point that WKB uses for
//! `POINT EMPTY` is an empty point, not an invalid one), a `LineString` has exactly one
//! point, or a linear ring has fewer than 4 points or does not end where it starts. Empty
//! geometries are neither null nor invalid. Self-intersections are not looked for: that
//! needs a topology engine and would cost more than reading the file.

use super::profile::Accumulator;
use crate::model::spatial::{Dimension, Envelope, GeometryType};

/// The figures of one geometry while it is read; committed to an [`Accumulator`] at its end.
#[derive(Debug, Clone, Copy)]
pub struct GeomScan {
    pub envelope: Envelope,
    pub invalid: bool,
    /// The geometry has Z (heights) or M (measures) coordinates.
    pub z: bool,
    pub m: bool,
}

impl Default for GeomScan {
    fn default() -> Self {
        GeomScan {
            envelope: Envelope::EMPTY,
            invalid: false,
            z: false,
            m: false,
        }
    }
}

impl GeomScan {
    #[inline]
    pub fn coord(&mut self, x: f64, y: f64) {
        if x.is_finite() && y.is_finite() {
            self.envelope.add(x, y);
        } else {
            self.invalid = true;
        }
    }

    /// A point geometry: both coordinates NaN is the empty point.
    #[inline]
    pub fn point(&mut self, x: f64, y: f64) {
        if !(x.is_nan() && y.is_nan()) {
            self.coord(x, y);
        }
    }

    /// A linestring of `n` points (its coordinates go through [`GeomScan::coord`]).
    #[inline]
    pub fn line(&mut self, n: usize) {
        if n == 1 {
            self.invalid = true;
        }
    }

    /// A linear ring of `n` points from `first` to `last`.
    #[inline]
    pub fn ring(&mut self, n: usize, first: (f64, f64), last: (f64, f64)) {
        if n < 4 || first != last {
            self.invalid = true;
        }
    }

    /// Add this geometry, of type `t` (as stored), to `acc`.
    #[inline]
    pub fn commit(self, acc: &mut Accumulator, t: GeometryType) {
        acc.add_type(t);
        acc.dims |= Dimension::of(self.z, self.m).bit();
        if self.invalid {
            acc.invalid_geometries += 1;
        }
        acc.envelope = acc.envelope.union(&self.envelope);
    }
}

/// Nested geometry deeper than this is refused: real data nests two or three levels, and a
/// crafted file must not exhaust the stack.
const MAX_DEPTH: usize = 32;

struct Wkb<'a> {
    b: &'a [u8],
    pos: usize,
}

/// An (x, y) pair.
type Xy = (f64, f64);

const TRUNCATED: &str = "truncated WKB geometry";

impl Wkb<'_> {
    #[inline]
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.pos.checked_add(n).ok_or(TRUNCATED)?;
        let s = self.b.get(self.pos..end).ok_or(TRUNCATED)?;
        self.pos = end;
        Ok(s)
    }

    #[inline]
    fn u32(&mut self, le: bool) -> Result<u32, String> {
        let s: [u8; 4] = self.take(4)?.try_into().map_err(|_| TRUNCATED)?;
        Ok(if le {
            u32::from_le_bytes(s)
        } else {
            u32::from_be_bytes(s)
        })
    }

    /// Read `n` coordinates of `dims` doubles; x and y go to `scan`. Returns the first and
    /// last (x, y), for the ring rule.
    #[inline]
    fn coords(
        &mut self,
        n: usize,
        dims: usize,
        le: bool,
        scan: &mut GeomScan,
    ) -> Result<(Xy, Xy), String> {
        let bytes = n
            .checked_mul(dims * 8)
            .ok_or_else(|| TRUNCATED.to_string())?;
        let s = self.take(bytes)?;
        let f = |c: &[u8]| {
            let a: [u8; 8] = [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]];
            if le {
                f64::from_le_bytes(a)
            } else {
                f64::from_be_bytes(a)
            }
        };
        let mut first = (f64::NAN, f64::NAN);
        let mut last = first;
        for (i, c) in s.chunks_exact(dims * 8).enumerate() {
            let (x, y) = (f(&c[0..8]), f(&c[8..16]));
            scan.coord(x, y);
            if i == 0 {
                first = (x, y);
            }
            last = (x, y);
        }
        Ok((first, last))
    }

    /// One geometry with its header; returns its type.
    fn geometry(&mut self, scan: &mut GeomScan, depth: usize) -> Result<GeometryType, String> {
        if depth > MAX_DEPTH {
            return Err(format!("geometry nested deeper than {MAX_DEPTH} levels"));
        }
        let le = match self.take(1)?[0] {
            0 => false,
            1 => true,
            b => return Err(format!("bad WKB byte order {b}")),
        };
        let raw = self.u32(le)?;
        let code = raw & 0x0FFF_FFFF;
        let (mut z, mut m) = match code / 1000 {
            0 => (false, false),
            1 => (true, false),
            2 => (false, true),
            3 => (true, true),
            _ => return Err(format!("unknown WKB geometry type {raw}")),
        };
        z |= raw & 0x8000_0000 != 0;
        m |= raw & 0x4000_0000 != 0;
        if raw & 0x2000_0000 != 0 {
            // EWKB carries an SRID here; the file's metadata, not the blob, names the CRS.
            self.u32(le)?;
        }
        let dims = 2 + usize::from(z) + usize::from(m);
        scan.z |= z;
        scan.m |= m;
        let t = GeometryType::from_code(code % 1000)
            .ok_or_else(|| format!("unknown WKB geometry type {raw}"))?;
        match t {
            GeometryType::Point => {
                let s = self.take(dims * 8)?;
                let x = f64_at(s, 0, le);
                let y = f64_at(s, 8, le);
                scan.point(x, y);
            }
            GeometryType::LineString | GeometryType::CircularString => {
                let n = self.u32(le)? as usize;
                self.coords(n, dims, le, scan)?;
                if t == GeometryType::LineString {
                    scan.line(n);
                }
            }
            GeometryType::Polygon | GeometryType::Triangle => {
                let rings = self.u32(le)? as usize;
                for _ in 0..rings {
                    let n = self.u32(le)? as usize;
                    let (first, last) = self.coords(n, dims, le, scan)?;
                    scan.ring(n, first, last);
                }
            }
            _ => {
                let n = self.u32(le)? as usize;
                if n.saturating_mul(5) > self.b.len() - self.pos {
                    return Err(TRUNCATED.to_string());
                }
                for _ in 0..n {
                    self.geometry(scan, depth + 1)?;
                }
            }
        }
        Ok(t)
    }
}

#[inline]
fn f64_at(s: &[u8], at: usize, le: bool) -> f64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&s[at..at + 8]);
    if le {
        f64::from_le_bytes(a)
    } else {
        f64::from_be_bytes(a)
    }
}

/// Add one (ISO or extended) WKB geometry to `acc`.
pub fn add_wkb(acc: &mut Accumulator, bytes: &[u8]) -> Result<(), String> {
    let (t, scan) = scan_wkb(bytes)?;
    scan.commit(acc, t);
    Ok(())
}

/// One WKB geometry's type (as stored) and figures, not yet added anywhere: for a reader that
/// also looks at each geometry on its own (a GeoParquet covering box, its declared types).
pub fn scan_wkb(bytes: &[u8]) -> Result<(GeometryType, GeomScan), String> {
    let mut scan = GeomScan::default();
    let mut r = Wkb { b: bytes, pos: 0 };
    let t = r.geometry(&mut scan, 0)?;
    Ok((t, scan))
}

/// Add one GeoPackage geometry blob (the `GP` header, an optional envelope, then WKB).
pub fn add_gpkg(acc: &mut Accumulator, b: &[u8]) -> Result<(), String> {
    if b.len() < 8 || &b[0..2] != b"GP" {
        return Err("not a GeoPackage geometry blob (no GP magic)".to_string());
    }
    let flags = b[3];
    if flags & 0x20 != 0 {
        return Err("extended GeoPackage geometry types are not supported".to_string());
    }
    let env = match (flags >> 1) & 0x07 {
        0 => 0,
        1 => 32,
        2 | 3 => 48,
        4 => 64,
        e => return Err(format!("bad GeoPackage envelope indicator {e}")),
    };
    let start = 8 + env;
    let wkb = b.get(start..).ok_or(TRUNCATED)?;
    add_wkb(acc, wkb)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wkb_point(x: f64, y: f64) -> Vec<u8> {
        let mut v = vec![1u8];
        v.extend(1u32.to_le_bytes());
        v.extend(x.to_le_bytes());
        v.extend(y.to_le_bytes());
        v
    }

    fn wkb_polygon(ring: &[(f64, f64)]) -> Vec<u8> {
        let mut v = vec![1u8];
        v.extend(3u32.to_le_bytes());
        v.extend(1u32.to_le_bytes());
        v.extend((ring.len() as u32).to_le_bytes());
        for (x, y) in ring {
            v.extend(x.to_le_bytes());
            v.extend(y.to_le_bytes());
        }
        v
    }

    fn multi(code: u32, parts: &[Vec<u8>]) -> Vec<u8> {
        let mut v = vec![1u8];
        v.extend(code.to_le_bytes());
        v.extend((parts.len() as u32).to_le_bytes());
        for p in parts {
            v.extend(p);
        }
        v
    }

    fn types(acc: &Accumulator) -> Vec<&'static str> {
        GeometryType::from_bits(acc.types)
            .map(|t| t.name())
            .collect()
    }

    #[test]
    fn a_multipolygon_of_one_is_a_multipolygon_as_stored() {
        let sq = wkb_polygon(&[(0., 0.), (1., 0.), (1., 1.), (0., 0.)]);
        let mut acc = Accumulator::default();
        add_wkb(&mut acc, &multi(6, std::slice::from_ref(&sq))).unwrap();
        assert_eq!(types(&acc), ["MultiPolygon"]);
        add_wkb(&mut acc, &sq).unwrap();
        add_wkb(&mut acc, &multi(6, &[sq.clone(), sq])).unwrap();
        assert_eq!(types(&acc), ["Polygon", "MultiPolygon"]);
        assert_eq!(acc.invalid_geometries, 0);
    }

    #[test]
    fn open_or_short_rings_and_non_finite_coordinates_are_invalid() {
        let mut acc = Accumulator::default();
        add_wkb(
            &mut acc,
            &wkb_polygon(&[(0., 0.), (1., 0.), (1., 1.), (0., 1.)]),
        )
        .unwrap();
        add_wkb(&mut acc, &wkb_polygon(&[(0., 0.), (1., 0.), (0., 0.)])).unwrap();
        add_wkb(&mut acc, &wkb_point(f64::INFINITY, 1.0)).unwrap();
        assert_eq!(acc.invalid_geometries, 3);
        // The empty point is not invalid and adds nothing to the envelope.
        let mut acc = Accumulator::default();
        add_wkb(&mut acc, &wkb_point(f64::NAN, f64::NAN)).unwrap();
        assert_eq!(acc.invalid_geometries, 0);
        assert!(acc.envelope.is_empty());
    }

    #[test]
    fn z_and_m_are_dropped_from_the_type_and_ignored_in_the_envelope() {
        // ISO LineString ZM (3002) with two points.
        let mut v = vec![1u8];
        v.extend(3002u32.to_le_bytes());
        v.extend(2u32.to_le_bytes());
        for c in [1.0f64, 2.0, 100.0, 7.0, 3.0, 4.0, -100.0, 8.0] {
            v.extend(c.to_le_bytes());
        }
        let mut acc = Accumulator::default();
        add_wkb(&mut acc, &v).unwrap();
        assert_eq!(types(&acc), ["LineString"]);
        assert_eq!(<[f64; 4]>::from(acc.envelope), [1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn truncated_and_garbage_wkb_is_an_error_not_a_panic() {
        let p = wkb_polygon(&[(0., 0.), (1., 0.), (1., 1.), (0., 0.)]);
        for cut in 0..p.len() {
            assert!(add_wkb(&mut Accumulator::default(), &p[..cut]).is_err());
        }
        let mut huge = vec![1u8];
        huge.extend(6u32.to_le_bytes());
        huge.extend(u32::MAX.to_le_bytes());
        assert!(add_wkb(&mut Accumulator::default(), &huge).is_err());
        assert!(add_wkb(&mut Accumulator::default(), &[7, 1, 0, 0, 0]).is_err());
        assert!(add_gpkg(&mut Accumulator::default(), b"XX\0\0\0\0\0\0").is_err());
    }
}
