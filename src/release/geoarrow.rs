//! GeoArrow's native geometry encodings (GeoParquet 1.1): `point`, `linestring`, `polygon`,
//! `multipoint`, `multilinestring` and `multipolygon` as nested Arrow lists over separated
//! (`struct<x, y [, z][, m]>`) or interleaved (`fixed_size_list<double>[2..4]`) coordinates.
//! Each geometry is written out as ISO WKB, so a native column goes through the same geometry
//! path as every other reader ([`super::geom`]) and one rule decides types and validity.

use arrow_array::{
    Array, FixedSizeListArray, Float64Array, LargeListArray, ListArray, StructArray,
};
use arrow_schema::DataType;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Native {
    Point,
    LineString,
    Polygon,
    MultiPoint,
    MultiLineString,
    MultiPolygon,
}

impl Native {
    pub(super) fn from_name(s: &str) -> Option<Native> {
        Some(match s.to_ascii_lowercase().as_str() {
            "point" => Native::Point,
            "linestring" => Native::LineString,
            "polygon" => Native::Polygon,
            "multipoint" => Native::MultiPoint,
            "multilinestring" => Native::MultiLineString,
            "multipolygon" => Native::MultiPolygon,
            _ => return None,
        })
    }

    /// Lists between the geometry and its coordinates.
    pub(super) fn depth(self) -> usize {
        match self {
            Native::Point => 0,
            Native::LineString | Native::MultiPoint => 1,
            Native::Polygon | Native::MultiLineString => 2,
            Native::MultiPolygon => 3,
        }
    }
}

/// Coordinates of a native column: separated (`struct<x, y, ...>`) or interleaved.
enum Coords<'a> {
    Separated(Vec<&'a Float64Array>),
    Interleaved(&'a Float64Array, usize),
}

/// ISO WKB dimension offset (0, 1000 Z, 2000 M, 3000 ZM) and doubles per coordinate.
fn dims_of(names: &[String]) -> (u32, usize) {
    let z = names.iter().any(|n| n == "z");
    let m = names.iter().any(|n| n == "m");
    (
        u32::from(z) * 1000 + u32::from(m) * 2000,
        2 + usize::from(z) + usize::from(m),
    )
}

impl<'a> Coords<'a> {
    fn of(a: &'a dyn Array) -> Result<(Coords<'a>, u32), String> {
        let f64s = |a: &'a dyn Array| {
            a.as_any()
                .downcast_ref::<Float64Array>()
                .ok_or_else(|| format!("coordinates are {}, not double", a.data_type()))
        };
        if let Some(s) = a.as_any().downcast_ref::<StructArray>() {
            let names: Vec<String> = s
                .column_names()
                .iter()
                .map(|n| n.to_ascii_lowercase())
                .collect();
            let (code, n) = dims_of(&names);
            if n != names.len() || !names.starts_with(&["x".to_string(), "y".to_string()]) {
                return Err(format!(
                    "coordinate fields {names:?} are not x, y[, z][, m]"
                ));
            }
            let cols = s
                .columns()
                .iter()
                .map(|c| f64s(c.as_ref()))
                .collect::<Result<_, _>>()?;
            return Ok((Coords::Separated(cols), code));
        }
        if let Some(l) = a.as_any().downcast_ref::<FixedSizeListArray>() {
            let size = usize::try_from(l.value_length()).map_err(|_| "a negative list size")?;
            let name = match l.data_type() {
                DataType::FixedSizeList(f, _) => f.name().to_ascii_lowercase(),
                _ => String::new(),
            };
            let names: Vec<String> = name.chars().map(|c| c.to_string()).collect();
            let (code, n) = if name.len() == size && name.starts_with("xy") {
                dims_of(&names)
            } else {
                // Unnamed: 3 doubles are XYZ, 4 XYZM.
                match size {
                    2 => (0, 2),
                    3 => (1000, 3),
                    4 => (3000, 4),
                    _ => (0, 0),
                }
            };
            if n != size || !(2..=4).contains(&size) {
                return Err(format!("interleaved coordinates of {size} doubles"));
            }
            return Ok((Coords::Interleaved(f64s(l.values().as_ref())?, size), code));
        }
        Err(format!(
            "coordinates are {}, not a struct or a fixed-size list",
            a.data_type()
        ))
    }

    fn write(&self, i: usize, out: &mut Vec<u8>) -> Result<(), String> {
        const OUT: &str = "a coordinate index lies outside the column";
        match self {
            Coords::Separated(cols) => {
                for c in cols {
                    if i >= c.len() {
                        return Err(OUT.into());
                    }
                    out.extend(c.value(i).to_le_bytes());
                }
            }
            Coords::Interleaved(v, n) => {
                let vals = v.values();
                let s = vals.get(i * n..(i + 1) * n).ok_or(OUT)?;
                for x in s {
                    out.extend(x.to_le_bytes());
                }
            }
        }
        Ok(())
    }
}

/// The offsets of one list level.
enum Offsets<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl Offsets<'_> {
    fn range(&self, i: usize) -> Result<std::ops::Range<usize>, String> {
        let bad = || "a list offset lies outside the column".to_string();
        let (a, b) = match self {
            Offsets::I32(o) => (
                usize::try_from(*o.get(i).ok_or_else(bad)?).map_err(|_| bad())?,
                usize::try_from(*o.get(i + 1).ok_or_else(bad)?).map_err(|_| bad())?,
            ),
            Offsets::I64(o) => (
                usize::try_from(*o.get(i).ok_or_else(bad)?).map_err(|_| bad())?,
                usize::try_from(*o.get(i + 1).ok_or_else(bad)?).map_err(|_| bad())?,
            ),
        };
        if a > b {
            return Err(bad());
        }
        Ok(a..b)
    }
}

/// A native column unpacked: its list levels (outermost first) and its coordinates.
pub(super) struct NativeColumn<'a> {
    kind: Native,
    levels: Vec<Offsets<'a>>,
    coords: Coords<'a>,
    dim_code: u32,
}

impl<'a> NativeColumn<'a> {
    pub(super) fn of(kind: Native, col: &'a dyn Array) -> Result<NativeColumn<'a>, String> {
        let mut levels = Vec::new();
        let mut a: &'a dyn Array = col;
        for _ in 0..kind.depth() {
            if let Some(l) = a.as_any().downcast_ref::<ListArray>() {
                levels.push(Offsets::I32(l.value_offsets()));
                a = l.values().as_ref();
            } else if let Some(l) = a.as_any().downcast_ref::<LargeListArray>() {
                levels.push(Offsets::I64(l.value_offsets()));
                a = l.values().as_ref();
            } else {
                return Err(format!(
                    "a {kind:?} column is {}, not nested lists of coordinates",
                    col.data_type()
                ));
            }
        }
        let (coords, dim_code) = Coords::of(a)?;
        Ok(NativeColumn {
            kind,
            levels,
            coords,
            dim_code,
        })
    }

    fn header(&self, out: &mut Vec<u8>, code: u32) {
        out.push(1);
        out.extend((code + self.dim_code).to_le_bytes());
    }

    fn count(out: &mut Vec<u8>, n: usize) -> Result<(), String> {
        let n = u32::try_from(n).map_err(|_| "a geometry of more than 2^32 parts")?;
        out.extend(n.to_le_bytes());
        Ok(())
    }

    /// The points of level `l`'s list `i`, as a WKB point sequence (count, coordinates).
    fn points(&self, l: usize, i: usize, out: &mut Vec<u8>) -> Result<(), String> {
        let r = self.levels[l].range(i)?;
        Self::count(out, r.len())?;
        for j in r {
            self.coords.write(j, out)?;
        }
        Ok(())
    }

    /// Polygon `i` at level `l` (its rings are level `l + 1`).
    fn polygon(&self, l: usize, i: usize, out: &mut Vec<u8>) -> Result<(), String> {
        let r = self.levels[l].range(i)?;
        Self::count(out, r.len())?;
        for ring in r {
            self.points(l + 1, ring, out)?;
        }
        Ok(())
    }

    /// Row `i` as WKB.
    pub(super) fn wkb(&self, i: usize, out: &mut Vec<u8>) -> Result<(), String> {
        out.clear();
        match self.kind {
            Native::Point => {
                self.header(out, 1);
                self.coords.write(i, out)?;
            }
            Native::LineString => {
                self.header(out, 2);
                self.points(0, i, out)?;
            }
            Native::Polygon => {
                self.header(out, 3);
                self.polygon(0, i, out)?;
            }
            Native::MultiPoint => self.multi(4, 1, i, out, |g, j, out| g.coords.write(j, out))?,
            Native::MultiLineString => self.multi(5, 2, i, out, |g, j, out| g.points(1, j, out))?,
            Native::MultiPolygon => self.multi(6, 3, i, out, |g, j, out| g.polygon(1, j, out))?,
        }
        Ok(())
    }

    /// Row `i` as a WKB multi-geometry of type `code`: its count of parts, then each part, a
    /// geometry of type `part` whose body `body` writes.
    fn multi(
        &self,
        code: u32,
        part: u32,
        i: usize,
        out: &mut Vec<u8>,
        body: impl Fn(&Self, usize, &mut Vec<u8>) -> Result<(), String>,
    ) -> Result<(), String> {
        self.header(out, code);
        let r = self.levels[0].range(i)?;
        Self::count(out, r.len())?;
        for j in r {
            self.header(out, part);
            body(self, j, out)?;
        }
        Ok(())
    }
}
