//! A GeoJSON geometry object: its `type`, its `coordinates` (see [`super::coords`]) and a
//! GeometryCollection's `geometries`, taken in whatever order they come; the type is checked
//! against the nesting of the coordinates once the object is read.

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess};

use super::super::geom::GeomScan;
use super::coords::{raw_coords, CoordSeed, Node, Shape};
use super::pieces::{excerpt, Members, Text, MAX_DEPTH};
use crate::model::spatial::GeometryType;

/// A GeoJSON geometry object: its type, coordinates and members, streamed.
pub(super) struct GeometrySeed<'a> {
    pub(super) scan: &'a mut GeomScan,
    pub(super) depth: usize,
    /// Coordinates are taken as raw text and scanned by [`raw_coords`] (the parallel
    /// reader, whose input is a slice in memory), not streamed value by value.
    pub(super) raw: bool,
}

/// The parts of a geometry object gathered so far, whatever order its members come in.
#[derive(Default)]
pub(super) struct GeometryParts {
    pub(super) kind: Option<String>,
    /// The `coordinates` member: what its top-level array was, and its shape.
    pub(super) coords: Option<(Node, Shape)>,
    /// The types of the `geometries` members, in order.
    pub(super) members: Option<Vec<GeometryType>>,
}

impl GeometryParts {
    /// Take one member of a geometry object; `false` when the key is not a geometry's.
    pub(super) fn member<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        seen: &mut Members,
        scan: &mut GeomScan,
        depth: usize,
        raw: bool,
    ) -> Result<bool, A::Error> {
        match key {
            "type" => {
                seen.first("type")?;
                self.kind = Some(map.next_value_seed(Text)?.into_owned());
            }
            "coordinates" => {
                seen.first("coordinates")?;
                let mut shape = Shape::default();
                let node = if raw {
                    // The text of the member, borrowed from the batch, and scanned by hand.
                    let text = map.next_value::<&'de serde_json::value::RawValue>()?;
                    raw_coords(text.get(), scan, &mut shape)
                        .ok_or_else(|| de::Error::custom("coordinates the fast scan refuses"))?
                } else {
                    map.next_value_seed(CoordSeed {
                        scan,
                        shape: &mut shape,
                        level: 1,
                    })?
                };
                self.coords = Some((node, shape));
            }
            "geometries" => {
                seen.first("geometries")?;
                if depth >= MAX_DEPTH {
                    return Err(de::Error::custom("geometry collections nested too deep"));
                }
                self.members = Some(map.next_value_seed(Geometries { scan, depth, raw })?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The geometry's type, once its members are all read; validity goes to `scan`.
    pub(super) fn finish(self, scan: &mut GeomScan) -> Result<GeometryType, String> {
        let kind = self.kind.ok_or("a geometry has no `type`")?;
        finish(&kind, self.coords, self.members.is_some(), scan)
    }
}

/// A geometry of type `kind` with these coordinates and, when `members`, a
/// `geometries` member: its type, once its members are all read; validity goes to `scan`.
pub(super) fn finish(
    kind: &str,
    coords: Option<(Node, Shape)>,
    members: bool,
    scan: &mut GeomScan,
) -> Result<GeometryType, String> {
    let t = match kind {
        "Point" => GeometryType::Point,
        "LineString" => GeometryType::LineString,
        "Polygon" => GeometryType::Polygon,
        "MultiPoint" => GeometryType::MultiPoint,
        "MultiLineString" => GeometryType::MultiLineString,
        "MultiPolygon" => GeometryType::MultiPolygon,
        "GeometryCollection" => {
            if !members {
                return Err("a GeometryCollection has no `geometries`".to_string());
            }
            return Ok(GeometryType::GeometryCollection);
        }
        other => return Err(format!("unknown geometry type {}", excerpt(other))),
    };
    let Some((top, shape)) = coords else {
        return Err(format!("a {kind} has no `coordinates`"));
    };
    // The level of the arrays that list positions, for each type.
    let lists_at = match t {
        GeometryType::Point => {
            return match top {
                Node::Position(x, y) => {
                    scan.point(x, y);
                    Ok(t)
                }
                // An empty position is the empty point.
                Node::List if shape.list_level.is_none() && shape.empty_levels == 2 => Ok(t),
                _ => Err("a Point's coordinates are not one position".to_string()),
            };
        }
        GeometryType::LineString | GeometryType::MultiPoint => 1,
        GeometryType::Polygon | GeometryType::MultiLineString => 2,
        _ => 3,
    };
    if matches!(top, Node::Position(..))
        || shape.list_level.is_some_and(|l| l != lists_at)
        || shape.empty_levels >> (lists_at + 1) != 0
    {
        return Err(format!("coordinates nested wrongly for a {kind}"));
    }
    match t {
        GeometryType::LineString | GeometryType::MultiLineString => {
            scan.invalid |= shape.line_bad;
        }
        GeometryType::Polygon | GeometryType::MultiPolygon => {
            // An empty array where a ring belongs is a ring of no points.
            scan.invalid |= shape.ring_bad || shape.empty_levels & (1 << lists_at) != 0;
        }
        _ => {}
    }
    Ok(t)
}

seed! {
    GeometrySeed<'_> => GeometryType, deserialize_map, "a GeoJSON geometry object";
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<GeometryType, A::Error> {
        let mut parts = GeometryParts::default();
        let mut seen = Members::default();
        while let Some(key) = map.next_key_seed(Text)? {
            if !parts.member(&key, &mut map, &mut seen, self.scan, self.depth, self.raw)? {
                map.next_value::<IgnoredAny>()?;
            }
        }
        parts.finish(self.scan).map_err(de::Error::custom)
    }
}

/// The `geometries` array of a GeometryCollection.
struct Geometries<'a> {
    scan: &'a mut GeomScan,
    depth: usize,
    raw: bool,
}

seed! {
    Geometries<'_> => Vec<GeometryType>, deserialize_seq, "an array of geometries";
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(t) = seq.next_element_seed(GeometrySeed {
            scan: &mut *self.scan,
            depth: self.depth + 1,
            raw: self.raw,
        })? {
            out.push(t);
        }
        Ok(out)
    }
}
