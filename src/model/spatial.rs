//! The spatial vocabulary every layer speaks: geometry types, coordinate dimensions,
//! attribute types and envelopes. The readers report in these terms, the profile stores them,
//! validation compares them and the clause shapes check names against them, so a name means
//! the same thing everywhere. (CRS identifiers and their equivalence live apart.)

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// OGC simple-feature geometry types (ISO 19125 and its SQL/MM curve types), by their OGC
/// names. The discriminant is the type's bit in a reader's set of types. Ordered by name, so
/// a sorted list of types reads alphabetically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GeometryType {
    Point = 0,
    LineString,
    Polygon,
    MultiPoint,
    MultiLineString,
    MultiPolygon,
    GeometryCollection,
    CircularString,
    CompoundCurve,
    CurvePolygon,
    MultiCurve,
    MultiSurface,
    PolyhedralSurface,
    Tin,
    Triangle,
}

impl GeometryType {
    pub const ALL: [GeometryType; 15] = [
        GeometryType::Point,
        GeometryType::LineString,
        GeometryType::Polygon,
        GeometryType::MultiPoint,
        GeometryType::MultiLineString,
        GeometryType::MultiPolygon,
        GeometryType::GeometryCollection,
        GeometryType::CircularString,
        GeometryType::CompoundCurve,
        GeometryType::CurvePolygon,
        GeometryType::MultiCurve,
        GeometryType::MultiSurface,
        GeometryType::PolyhedralSurface,
        GeometryType::Tin,
        GeometryType::Triangle,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GeometryType::Point => "Point",
            GeometryType::LineString => "LineString",
            GeometryType::Polygon => "Polygon",
            GeometryType::MultiPoint => "MultiPoint",
            GeometryType::MultiLineString => "MultiLineString",
            GeometryType::MultiPolygon => "MultiPolygon",
            GeometryType::GeometryCollection => "GeometryCollection",
            GeometryType::CircularString => "CircularString",
            GeometryType::CompoundCurve => "CompoundCurve",
            GeometryType::CurvePolygon => "CurvePolygon",
            GeometryType::MultiCurve => "MultiCurve",
            GeometryType::MultiSurface => "MultiSurface",
            GeometryType::PolyhedralSurface => "PolyhedralSurface",
            GeometryType::Tin => "Tin",
            GeometryType::Triangle => "Triangle",
        }
    }

    pub fn from_name(name: &str) -> Option<GeometryType> {
        GeometryType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The type for an ISO WKB / FlatGeobuf type code (the two number their types alike).
    pub fn from_code(code: u32) -> Option<GeometryType> {
        Some(match code {
            1 => GeometryType::Point,
            2 => GeometryType::LineString,
            3 => GeometryType::Polygon,
            4 => GeometryType::MultiPoint,
            5 => GeometryType::MultiLineString,
            6 => GeometryType::MultiPolygon,
            7 => GeometryType::GeometryCollection,
            8 => GeometryType::CircularString,
            9 => GeometryType::CompoundCurve,
            10 => GeometryType::CurvePolygon,
            11 => GeometryType::MultiCurve,
            12 => GeometryType::MultiSurface,
            15 => GeometryType::PolyhedralSurface,
            16 => GeometryType::Tin,
            17 => GeometryType::Triangle,
            _ => return None,
        })
    }

    /// This type's bit in a set kept as a `u32`.
    pub fn bit(self) -> u32 {
        1 << (self as u32)
    }

    /// The types whose bits are set in `bits`.
    pub fn from_bits(bits: u32) -> impl Iterator<Item = GeometryType> {
        GeometryType::ALL
            .into_iter()
            .filter(move |t| bits & t.bit() != 0)
    }
}

impl PartialOrd for GeometryType {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for GeometryType {
    fn cmp(&self, other: &Self) -> Ordering {
        self.name().cmp(other.name())
    }
}

super::display_as!(name: GeometryType);

/// The coordinate dimensions of a geometry, as GDAL names them: `XY`, `XYZ` (with heights),
/// `XYM` (with measures), `XYZM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Dimension {
    #[serde(rename = "XY")]
    Xy,
    #[serde(rename = "XYZ")]
    Xyz,
    #[serde(rename = "XYM")]
    Xym,
    #[serde(rename = "XYZM")]
    Xyzm,
}

impl Dimension {
    pub const ALL: [Dimension; 4] = [
        Dimension::Xy,
        Dimension::Xyz,
        Dimension::Xym,
        Dimension::Xyzm,
    ];

    /// The dimension of coordinates with or without Z and M.
    pub fn of(z: bool, m: bool) -> Dimension {
        match (z, m) {
            (false, false) => Dimension::Xy,
            (true, false) => Dimension::Xyz,
            (false, true) => Dimension::Xym,
            (true, true) => Dimension::Xyzm,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Xy => "XY",
            Dimension::Xyz => "XYZ",
            Dimension::Xym => "XYM",
            Dimension::Xyzm => "XYZM",
        }
    }

    pub fn from_name(name: &str) -> Option<Dimension> {
        Dimension::ALL.into_iter().find(|d| d.as_str() == name)
    }

    /// This dimension's bit in a set kept as a `u8`.
    pub fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

super::display_as!(as_str: Dimension);

/// An attribute's type, in the contract's names (docs/src/reference/contract.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AttrType {
    Bool,
    Int32,
    Int64,
    Float64,
    String,
    Date,
    Datetime,
    Binary,
}

impl AttrType {
    pub const ALL: [AttrType; 8] = [
        AttrType::Bool,
        AttrType::Int32,
        AttrType::Int64,
        AttrType::Float64,
        AttrType::String,
        AttrType::Date,
        AttrType::Datetime,
        AttrType::Binary,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AttrType::Bool => "bool",
            AttrType::Int32 => "int32",
            AttrType::Int64 => "int64",
            AttrType::Float64 => "float64",
            AttrType::String => "string",
            AttrType::Date => "date",
            AttrType::Datetime => "datetime",
            AttrType::Binary => "binary",
        }
    }

    pub fn from_name(name: &str) -> Option<AttrType> {
        AttrType::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// The narrowest type that holds values of both, if there is one: integers widen to
    /// int64 and to float64, a date to a datetime. Anything else has no common type.
    pub fn join(a: AttrType, b: AttrType) -> Option<AttrType> {
        use AttrType as T;
        match (a, b) {
            _ if a == b => Some(a),
            (T::Int32, T::Int64) | (T::Int64, T::Int32) => Some(T::Int64),
            (T::Int32 | T::Int64, T::Float64) | (T::Float64, T::Int32 | T::Int64) => {
                Some(T::Float64)
            }
            (T::Date, T::Datetime) | (T::Datetime, T::Date) => Some(T::Datetime),
            _ => None,
        }
    }
}

super::display_as!(as_str: AttrType);

/// An envelope `[minx, miny, maxx, maxy]`. In a clause, `minx > maxx` means the box crosses
/// the antimeridian (RFC 7946 §5.2): it covers `minx..=180` and `-180..=maxx`. A measured
/// envelope (a profile's) is a plain min/max box and never crosses; [`Envelope::EMPTY`] is the
/// box of no coordinate, which every [`Envelope::union`] starts from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(into = "[f64; 4]", from = "[f64; 4]")]
pub struct Envelope {
    pub minx: f64,
    pub miny: f64,
    pub maxx: f64,
    pub maxy: f64,
}

impl From<Envelope> for [f64; 4] {
    fn from(e: Envelope) -> Self {
        [e.minx, e.miny, e.maxx, e.maxy]
    }
}

impl From<[f64; 4]> for Envelope {
    fn from(a: [f64; 4]) -> Self {
        Envelope {
            minx: a[0],
            miny: a[1],
            maxx: a[2],
            maxy: a[3],
        }
    }
}

impl Envelope {
    /// The box of no coordinate: the identity of [`Envelope::union`].
    pub const EMPTY: Envelope = Envelope {
        minx: f64::INFINITY,
        miny: f64::INFINITY,
        maxx: f64::NEG_INFINITY,
        maxy: f64::NEG_INFINITY,
    };

    /// Whether no coordinate has been added (the measured sense: no box at all).
    pub fn is_empty(&self) -> bool {
        !(self.minx <= self.maxx && self.miny <= self.maxy)
    }

    /// The plain min/max box holding both: the one union of measured envelopes, used per
    /// coordinate, per geometry, per reader part and per merged profile.
    #[inline]
    pub fn union(&self, other: &Envelope) -> Envelope {
        Envelope {
            minx: self.minx.min(other.minx),
            miny: self.miny.min(other.miny),
            maxx: self.maxx.max(other.maxx),
            maxy: self.maxy.max(other.maxy),
        }
    }

    /// Grow to hold the point.
    #[inline]
    pub fn add(&mut self, x: f64, y: f64) {
        *self = self.union(&Envelope {
            minx: x,
            miny: y,
            maxx: x,
            maxy: y,
        });
    }

    /// `None` for the empty box.
    pub fn non_empty(self) -> Option<Envelope> {
        (!self.is_empty()).then_some(self)
    }

    pub fn crosses_antimeridian(&self) -> bool {
        self.minx > self.maxx
    }

    /// The width in x: for a crossing box, `minx..=180` plus `-180..=maxx`.
    pub fn width(&self) -> f64 {
        if self.crosses_antimeridian() {
            360.0 - (self.minx - self.maxx)
        } else {
            self.maxx - self.minx
        }
    }

    /// A crossing box wider than half the globe: most often minx and maxx swapped by
    /// mistake (`[170, .., -170, ..]` meant as 20° wide reads as 340°), so `propose` and
    /// `check` refuse one unless the contract lists the clause in `wide_antimeridian`.
    pub fn is_wide_crossing(&self) -> bool {
        self.crosses_antimeridian() && self.width() > 180.0
    }

    /// Whether the point lies inside (edges included).
    pub fn covers_point(&self, x: f64, y: f64) -> bool {
        let in_y = self.miny <= y && y <= self.maxy;
        let in_x = if self.crosses_antimeridian() {
            x >= self.minx || x <= self.maxx
        } else {
            self.minx <= x && x <= self.maxx
        };
        in_x && in_y
    }

    /// Whether every point of `other` lies inside `self`.
    pub fn contains(&self, other: &Envelope) -> bool {
        if !(self.miny <= other.miny && other.maxy <= self.maxy) {
            return false;
        }
        match (self.crosses_antimeridian(), other.crosses_antimeridian()) {
            (false, false) => self.minx <= other.minx && other.maxx <= self.maxx,
            // `self` is two pieces, `minx..` and `..maxx`; a plain interval must fit in one.
            (true, false) => other.minx >= self.minx || other.maxx <= self.maxx,
            (true, true) => other.minx >= self.minx && other.maxx <= self.maxx,
            // A crossing box reaches both ends of the axis, so only a box spanning the whole
            // axis holds it.
            (false, true) => self.minx <= -180.0 && self.maxx >= 180.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimensions_have_gdal_names_both_ways() {
        for d in Dimension::ALL {
            assert_eq!(Dimension::from_name(d.as_str()), Some(d));
        }
        assert_eq!(Dimension::of(true, true).as_str(), "XYZM");
        assert_eq!(Dimension::of(false, true).as_str(), "XYM");
        assert_eq!(Dimension::from_name("XYZM "), None);
    }

    #[test]
    fn geometry_types_parse_display_and_sort_by_name() {
        for t in GeometryType::ALL {
            assert_eq!(GeometryType::from_name(&t.to_string()), Some(t));
            assert_eq!(GeometryType::from_bits(t.bit()).collect::<Vec<_>>(), [t]);
        }
        assert_eq!(GeometryType::from_name("MULTIPOLYGON"), None);
        let mut v = vec![GeometryType::Polygon, GeometryType::MultiPolygon];
        v.sort();
        assert_eq!(v, [GeometryType::MultiPolygon, GeometryType::Polygon]);
        assert_eq!(GeometryType::from_code(6), Some(GeometryType::MultiPolygon));
        assert_eq!(GeometryType::from_code(13), None);
    }

    #[test]
    fn attribute_types_parse_and_join() {
        for t in AttrType::ALL {
            assert_eq!(AttrType::from_name(t.as_str()), Some(t));
        }
        assert_eq!(
            AttrType::join(AttrType::Int32, AttrType::Float64),
            Some(AttrType::Float64)
        );
        assert_eq!(AttrType::join(AttrType::Bool, AttrType::String), None);
    }

    #[test]
    fn the_empty_envelope_is_the_identity_of_union() {
        let e = Envelope::from([1.0, 2.0, 3.0, 4.0]);
        assert_eq!(Envelope::EMPTY.union(&e), e);
        assert!(Envelope::EMPTY.is_empty() && Envelope::EMPTY.non_empty().is_none());
        let mut g = Envelope::EMPTY;
        g.add(5.0, -1.0);
        g.add(0.0, 0.0);
        assert_eq!(<[f64; 4]>::from(g), [0.0, -1.0, 5.0, 0.0]);
        assert_eq!(<[f64; 4]>::from(e.union(&g)), [0.0, -1.0, 5.0, 4.0]);
    }
}
