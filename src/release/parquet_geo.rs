//! GeoParquet's `geo` metadata against the data it describes. Readers trust the metadata (a
//! query engine skips a file whose `bbox` misses its window, a row whose covering box misses
//! it), so a file whose metadata contradicts its data loses features silently downstream. The
//! reader profiles the data and, where the metadata says otherwise, warns with both values; the
//! profile always reports the data, and no clause result or exit code changes.
//!
//! The rules (docs/src/reference/release-formats.md, GeoParquet):
//! - `bbox` must contain the data's envelope. A larger box is allowed: it costs a reader a
//!   wasted read, never a lost feature, and a partition split from a bigger file keeps its
//!   parent's box;
//! - a non-empty `geometry_types` must list every type found, with ` Z` for a geometry with
//!   heights, as the GeoParquet spec spells them (an empty list means any type);
//! - a longitude/latitude CRS (`OGC:CRS84`, the default when `crs` is absent, or
//!   `EPSG:4326`) must hold the data's envelope within [-180, -90, 180, 90]: coordinates
//!   beyond it are projected ones under the wrong CRS, the usual slip being a `crs` left out;
//! - each row's `covering.bbox` box must contain its geometry's box.
//!
//! Comparisons allow a relative difference of 1e-9, so a box written from the same doubles
//! through another library's rounding is not a disagreement.

use std::path::Path;

use arrow_array::{Array, Float32Array, Float64Array, StructArray};

use super::geom::{add_wkb, scan_wkb, GeomScan};
use super::profile::Accumulator;
use super::read_warning::{ReadWarning, Warned};
use crate::model::spatial::{Envelope, GeometryType};

/// What a geometry column's `geo` metadata declares about its data.
#[derive(Debug, Clone, Default)]
pub(super) struct Declared {
    bbox: Option<[f64; 4]>,
    /// Empty: any type.
    types: Vec<String>,
    pub covering: Option<Covering>,
    /// Parts of the metadata that cannot be read as the spec writes them (so not checked).
    unread: Vec<&'static str>,
}

/// A GeoParquet 1.1 `covering.bbox`: a struct column and its xmin, ymin, xmax, ymax fields.
#[derive(Debug, Clone)]
pub(super) struct Covering {
    pub column: String,
    fields: [String; 4],
}

const SIDES: [&str; 4] = ["xmin", "ymin", "xmax", "ymax"];

impl Declared {
    /// The declarations of one column's `geo` metadata.
    pub fn of(meta: &serde_json::Value) -> Declared {
        let mut d = Declared::default();
        if let Some(b) = meta.get("bbox") {
            let n: Option<Vec<f64>> = b
                .as_array()
                .and_then(|a| a.iter().map(|v| v.as_f64()).collect());
            // Four numbers, or six with the heights (RFC 7946's order: the minima, then the maxima).
            d.bbox = match n.as_deref() {
                Some(&[a, b, c, e]) => Some([a, b, c, e]),
                Some(&[a, b, _, c, e, _]) => Some([a, b, c, e]),
                _ => None,
            };
            if d.bbox.is_none() {
                d.unread.push("`bbox` (not 4 or 6 numbers)");
            }
        }
        if let Some(t) = meta.get("geometry_types") {
            match t
                .as_array()
                .and_then(|a| a.iter().map(|v| v.as_str().map(str::trim)).collect())
            {
                Some(types) => d.types = types_owned(types),
                None => d.unread.push("`geometry_types` (not a list of names)"),
            }
        }
        if let Some(c) = meta.pointer("/covering/bbox") {
            d.covering = covering(c);
            if d.covering.is_none() {
                d.unread
                    .push("`covering.bbox` (not four [column, field] paths into one column)");
            }
        }
        d
    }

    /// Whether each geometry must be looked at on its own (its type with Z, its box).
    pub fn per_row(&self) -> bool {
        !self.types.is_empty() || self.covering.is_some()
    }
}

fn types_owned(types: Vec<&str>) -> Vec<String> {
    types.into_iter().map(str::to_string).collect()
}

fn covering(c: &serde_json::Value) -> Option<Covering> {
    let mut column = None;
    let mut fields = Vec::new();
    for side in SIDES {
        let path: Vec<&str> = c
            .get(side)?
            .as_array()?
            .iter()
            .map(|p| p.as_str())
            .collect::<Option<_>>()?;
        let [root, field] = path.as_slice() else {
            return None;
        };
        if column.get_or_insert(*root) != root {
            return None;
        }
        fields.push(field.to_string());
    }
    Some(Covering {
        column: column?.to_string(),
        fields: fields.try_into().ok()?,
    })
}

/// What the rows showed, mergeable across row groups.
#[derive(Debug, Clone, Default)]
pub(super) struct Seen {
    /// Bit `2 * type + z` for each type found with or without heights.
    types: u64,
    /// Rows with a geometry whose covering box does not hold it.
    misses: u64,
    /// The first such row: its index in the file, its covering box, its geometry's box.
    first: Option<(u64, Option<[f64; 4]>, Envelope)>,
    /// Why the covering column could not be read.
    problem: Option<String>,
}

impl Seen {
    pub fn absorb(&mut self, other: &Seen) {
        self.types |= other.types;
        self.misses += other.misses;
        self.first = match (self.first, other.first) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        };
        if self.problem.is_none() {
            self.problem.clone_from(&other.problem);
        }
    }
}

/// One batch of rows being read: the covering boxes of its rows, where its first row is in
/// the file, and what was seen so far.
pub(super) struct Rows<'a> {
    seen: &'a mut Seen,
    boxes: Option<[Vec<Option<f64>>; 4]>,
    first_row: u64,
}

impl<'a> Rows<'a> {
    /// The batch starting at row `first_row` of the file, with its covering column (when the
    /// metadata declares one).
    pub fn new(
        seen: &'a mut Seen,
        covering: Option<(&Covering, Option<&dyn Array>)>,
        first_row: u64,
    ) -> Rows<'a> {
        let boxes = match covering {
            None => None,
            Some((c, col)) => match boxes(c, col) {
                Ok(b) => Some(b),
                Err(why) => {
                    seen.problem.get_or_insert(why);
                    None
                }
            },
        };
        Rows {
            seen,
            boxes,
            first_row,
        }
    }

    /// Row `i` of the batch holds a geometry of type `t` with the figures `scan`.
    pub fn row(&mut self, i: usize, t: GeometryType, scan: &GeomScan) {
        self.seen.types |= 1 << (2 * t as u32 + u32::from(scan.z));
        let Some(sides) = &self.boxes else { return };
        if scan.envelope.is_empty() {
            return;
        }
        // A null box for a geometry is a miss: a reader filtering on the boxes skips the row.
        let side = |k: usize| sides[k].get(i).copied().flatten();
        let cover = match (side(0), side(1), side(2), side(3)) {
            (Some(a), Some(b), Some(c), Some(d)) => Some([a, b, c, d]),
            _ => None,
        };
        if cover.is_some_and(|c| holds(c, &scan.envelope)) {
            return;
        }
        self.seen.misses += 1;
        let at = self.first_row + i as u64;
        if self.seen.first.is_none_or(|(r, ..)| at < r) {
            self.seen.first = Some((at, cover, scan.envelope));
        }
    }
}

/// Add one WKB geometry, row `i` of its batch, to `acc`, and to `rows` when checked row by row.
pub(super) fn add(
    acc: &mut Accumulator,
    wkb: &[u8],
    i: usize,
    rows: Option<&mut Rows>,
) -> Result<(), String> {
    match rows {
        None => add_wkb(acc, wkb),
        Some(r) => {
            let (t, scan) = scan_wkb(wkb)?;
            r.row(i, t, &scan);
            scan.commit(acc, t);
            Ok(())
        }
    }
}

/// The xmin, ymin, xmax, ymax of each row of a covering column.
fn boxes(c: &Covering, col: Option<&dyn Array>) -> Result<[Vec<Option<f64>>; 4], String> {
    let col = col.ok_or_else(|| format!("the file has no column `{}`", c.column))?;
    let s = col
        .as_any()
        .downcast_ref::<StructArray>()
        .ok_or_else(|| format!("`{}` is {}, not a struct", c.column, col.data_type()))?;
    let side = |name: &str| -> Result<Vec<Option<f64>>, String> {
        let f = s
            .column_by_name(name)
            .ok_or_else(|| format!("`{}` has no field `{name}`", c.column))?;
        let valid = |i: usize| s.is_valid(i) && f.is_valid(i);
        if let Some(a) = f.as_any().downcast_ref::<Float64Array>() {
            Ok((0..a.len()).map(|i| valid(i).then(|| a.value(i))).collect())
        } else if let Some(a) = f.as_any().downcast_ref::<Float32Array>() {
            Ok((0..a.len())
                .map(|i| valid(i).then(|| f64::from(a.value(i))))
                .collect())
        } else {
            Err(format!(
                "`{}.{name}` is {}, not a float",
                c.column,
                f.data_type()
            ))
        }
    };
    Ok([
        side(&c.fields[0])?,
        side(&c.fields[1])?,
        side(&c.fields[2])?,
        side(&c.fields[3])?,
    ])
}

/// The slack of a comparison: 1e-9 of the largest magnitude involved.
fn slack(values: &[f64]) -> f64 {
    1e-9 * values.iter().fold(1.0_f64, |m, v| m.max(v.abs()))
}

/// Whether the box `b` (xmin, ymin, xmax, ymax; xmin > xmax crosses the antimeridian) holds
/// `e`, within the slack.
fn holds(b: [f64; 4], e: &Envelope) -> bool {
    let s = slack(&[b[0], b[1], b[2], b[3], e.minx, e.miny, e.maxx, e.maxy]);
    let grown = Envelope::from([b[0] - s, b[1] - s, b[2] + s, b[3] + s]);
    grown.contains(e)
}

/// The types of `seen` as GeoParquet names them.
fn found_types(seen: &Seen) -> Vec<String> {
    GeometryType::ALL
        .into_iter()
        .flat_map(|t| [(t, false), (t, true)])
        .filter(|&(t, z)| seen.types & (1 << (2 * t as u32 + u32::from(z))) != 0)
        .map(|(t, z)| format!("{}{}", t.name(), if z { " Z" } else { "" }))
        .collect()
}

/// The CRSs whose coordinates are longitudes and latitudes in degrees.
const LON_LAT: [&str; 2] = ["OGC:CRS84", "EPSG:4326"];

/// The disagreements of the declarations of column `column` of `path` (and its CRS `crs`)
/// with the data `acc` and the rows `seen`, one warning each.
pub(super) fn warnings(
    path: &Path,
    column: &str,
    declared: &Declared,
    crs: Option<&str>,
    acc: &Accumulator,
    seen: &Seen,
) -> Vec<ReadWarning> {
    let column = column.to_string();
    let mut out: Vec<Warned> = declared
        .unread
        .iter()
        .map(|what| Warned::GeoUnchecked {
            column: column.clone(),
            what: what.to_string(),
        })
        .collect();
    let data = acc.envelope;
    if let Some(b) = declared.bbox {
        if !data.is_empty() && !holds(b, &data) {
            out.push(Warned::BboxMisses {
                column: column.clone(),
                declared: b,
                data: data.into(),
            });
        }
    }
    if !declared.types.is_empty() {
        let found = found_types(seen);
        let missing: Vec<String> = found
            .iter()
            .filter(|t| !declared.types.contains(t))
            .cloned()
            .collect();
        if !missing.is_empty() {
            out.push(Warned::TypesUndeclared {
                column: column.clone(),
                declared: declared.types.clone(),
                found,
                missing,
            });
        }
    }
    if let Some(c) = crs.filter(|c| LON_LAT.contains(c)) {
        if !data.is_empty() && !holds([-180.0, -90.0, 180.0, 90.0], &data) {
            out.push(Warned::BeyondLonLat {
                column: column.clone(),
                crs: c.to_string(),
                data: data.into(),
            });
        }
    }
    if let Some(c) = &declared.covering {
        let covering = c.column.clone();
        if let Some(why) = &seen.problem {
            out.push(Warned::CoveringUnchecked {
                column: column.clone(),
                covering,
                why: why.clone(),
            });
        } else if let Some((row, cover, geom)) = seen.first {
            out.push(Warned::CoveringMisses {
                column: column.clone(),
                covering,
                misses: seen.misses,
                rows: acc.features,
                row,
                cover,
                geometry: geom.into(),
            });
        }
    }
    out.into_iter()
        .map(|what| ReadWarning::of(path, what))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc_with(env: [f64; 4]) -> Accumulator {
        Accumulator {
            envelope: Envelope::from(env),
            features: 1,
            ..Accumulator::default()
        }
    }

    fn warned(meta: serde_json::Value, crs: Option<&str>, env: [f64; 4]) -> Vec<Warned> {
        let declared = Declared::of(&meta);
        warnings(
            Path::new("f.parquet"),
            "g",
            &declared,
            crs,
            &acc_with(env),
            &Seen::default(),
        )
        .into_iter()
        .map(|w| w.what)
        .collect()
    }

    #[test]
    fn a_larger_bbox_is_allowed_and_a_smaller_one_is_not() {
        let data = [1.0, 2.0, 3.0, 4.0];
        let big = serde_json::json!({ "bbox": [0.0, 0.0, 10.0, 10.0] });
        assert_eq!(warned(big, None, data), Vec::<Warned>::new());
        // Six numbers (with heights): the minima, then the maxima.
        let six = serde_json::json!({ "bbox": [1.0, 2.0, -5.0, 3.0, 4.0, 5.0] });
        assert_eq!(warned(six, None, data), Vec::<Warned>::new());
        let small = serde_json::json!({ "bbox": [1.0, 2.0, 2.5, 4.0] });
        let w = warned(small, None, data);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            w[0],
            Warned::BboxMisses {
                column: "g".into(),
                declared: [1.0, 2.0, 2.5, 4.0],
                data,
            }
        );
    }

    #[test]
    fn a_bbox_across_the_antimeridian_holds_data_on_both_sides() {
        let meta = serde_json::json!({ "bbox": [170.0, -10.0, -170.0, 10.0] });
        assert_eq!(
            warned(meta.clone(), None, [175.0, 0.0, 179.0, 1.0]),
            Vec::<Warned>::new()
        );
        assert_eq!(warned(meta, None, [0.0, 0.0, 1.0, 1.0]).len(), 1);
    }

    #[test]
    fn projected_coordinates_under_a_lon_lat_crs_are_a_warning() {
        let meta = serde_json::json!({});
        let w = warned(
            meta.clone(),
            Some("OGC:CRS84"),
            [500000.0, 0.0, 600000.0, 1.0],
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            matches!(&w[0], Warned::BeyondLonLat { crs, .. } if crs == "OGC:CRS84"),
            "{w:?}"
        );
        // A rounding step past 180 is no disagreement; a projected CRS is not checked.
        assert!(warned(
            meta.clone(),
            Some("OGC:CRS84"),
            [-180.0, -90.0, 180.00000000000006, 83.0]
        )
        .is_empty());
        assert!(warned(meta, Some("EPSG:27700"), [500000.0, 0.0, 600000.0, 1.0]).is_empty());
    }

    #[test]
    fn metadata_that_cannot_be_read_is_said_not_checked() {
        let meta = serde_json::json!({ "bbox": "everywhere", "geometry_types": [1],
            "covering": { "bbox": { "xmin": ["a", "x"] } } });
        let w = warned(meta, None, [0.0, 0.0, 1.0, 1.0]);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w.iter().all(|m| matches!(m, Warned::GeoUnchecked { .. })),
            "{w:?}"
        );
    }
}
