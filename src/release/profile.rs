//! The profile of a release: what it actually contains, in the terms a contract speaks
//! (docs/src/commands/profile.md), and the merge that lets the partitions of one release be
//! profiled apart.
//!
//! A profile keeps counts, not fractions: fractions are derived from the counts whenever a
//! profile is built or merged, so `merge(profile(A), profile(B))` is exactly `profile(A ∪ B)`
//! and no rounding accumulates however many partitions are merged.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

pub use crate::model::spatial::AttrType;
use crate::model::spatial::{Dimension, Envelope, GeometryType};

/// One attribute of a release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttributeProfile {
    #[serde(rename = "type")]
    pub ty: AttrType,
    pub nulls: u64,
    /// `nulls / feature_count`, 0 for an empty release. Derived; recomputed on load.
    #[serde(default)]
    pub null_fraction: f64,
}

/// What a release contains (`profile --format json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub files: Vec<String>,
    pub format: String,
    /// `AUTHORITY:CODE`, or null when the file's metadata names no CRS this build identifies.
    pub crs: Option<String>,
    pub feature_count: u64,
    pub null_geometries: u64,
    /// Geometries that break the cheap validity rules of [`super::geom`].
    pub invalid_geometries: u64,
    /// `[minx, miny, maxx, maxy]` over every finite coordinate; null when there is none.
    pub envelope: Option<Envelope>,
    /// Types as stored (see [`super::geom`]), sorted by name.
    pub geometry_types: BTreeSet<GeometryType>,
    /// The coordinate dimensions that occur (`XY`, `XYZ`, `XYM`, `XYZM`), over non-null
    /// geometries. Absent in a profile written before it existed: none.
    #[serde(default)]
    pub dimensions: BTreeSet<Dimension>,
    pub attributes: BTreeMap<String, AttributeProfile>,
    /// Figures `validate` checks clauses against by name. Derived; recomputed on load.
    #[serde(default)]
    pub metrics: BTreeMap<String, f64>,
    /// Where in a database's history the release was read (a PostGIS table); none for files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Snapshot>,
}

/// The server's own names for the snapshot a database release was profiled in, so that a
/// recorded release says which state of a table it judged: a table, unlike a file, has no
/// bytes to keep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// The write-ahead log position the snapshot saw (`pg_current_wal_lsn`, or on a standby
    /// `pg_last_wal_replay_lsn`), e.g. `0/1A2B3C8`.
    pub lsn: String,
    /// The transaction snapshot (`pg_current_snapshot`: `xmin:xmax:xip,...`).
    pub xids: String,
    /// The transaction's start on the server's clock, UTC (RFC 3339).
    pub at: String,
}

/// Why two profiles cannot be one release.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    #[error("the formats differ ({0} and {1}); a release is delivered in one format")]
    Format(String, String),
    #[error("the CRS differ ({0} and {1}); the coordinates cannot be compared")]
    Crs(String, String),
    #[error(
        "attribute `{name}` is {a} in one part and {b} in the other, and they have no common type"
    )]
    AttrType {
        name: String,
        a: AttrType,
        b: AttrType,
    },
    #[error("attribute `{name}` has {nulls} nulls in a part of {features} features")]
    Counts {
        name: String,
        nulls: u64,
        features: u64,
    },
}

fn fraction(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 / of as f64
    }
}

fn crs_text(c: &Option<String>) -> String {
    c.clone().unwrap_or_else(|| "an unknown CRS".to_string())
}

impl Profile {
    /// Recompute every derived figure from the counts.
    pub fn finish(&mut self) {
        let n = self.feature_count;
        for a in self.attributes.values_mut() {
            a.null_fraction = fraction(a.nulls, n);
        }
        self.metrics = BTreeMap::from([
            ("feature_count".to_string(), n as f64),
            (
                "null_geometry_fraction".to_string(),
                fraction(self.null_geometries, n),
            ),
            (
                "invalid_geometry_fraction".to_string(),
                fraction(self.invalid_geometries, n),
            ),
        ]);
    }

    /// Check a profile read from JSON: counts must add up, then derived figures are
    /// recomputed so a hand-edited fraction cannot disagree with its counts.
    pub fn checked(mut self) -> Result<Profile, MergeError> {
        for (name, a) in &self.attributes {
            if a.nulls > self.feature_count {
                return Err(MergeError::Counts {
                    name: name.clone(),
                    nulls: a.nulls,
                    features: self.feature_count,
                });
            }
        }
        if self.null_geometries > self.feature_count {
            return Err(MergeError::Counts {
                name: "(geometry)".into(),
                nulls: self.null_geometries,
                features: self.feature_count,
            });
        }
        self.finish();
        Ok(self)
    }

    /// The profile of the union of both releases.
    ///
    /// Rules: the format and the CRS must be equal (coordinates in two CRS have no common
    /// envelope); an attribute missing from one side is null in every feature of that side
    /// (as when tables are concatenated); a type from a side where the attribute is entirely
    /// null carries no evidence and yields to the other side's; otherwise the types must have
    /// a common type ([`AttrType::join`]), or the merge fails.
    pub fn merge(&self, other: &Profile) -> Result<Profile, MergeError> {
        if self.format != other.format {
            return Err(MergeError::Format(
                self.format.clone(),
                other.format.clone(),
            ));
        }
        let same = match (&self.crs, &other.crs) {
            (Some(a), Some(b)) => crate::model::crs::same_crs(a, b),
            (a, b) => a == b,
        };
        if !same {
            return Err(MergeError::Crs(crs_text(&self.crs), crs_text(&other.crs)));
        }
        let mut attributes = BTreeMap::new();
        let names: BTreeSet<&String> = self
            .attributes
            .keys()
            .chain(other.attributes.keys())
            .collect();
        for name in names {
            let a = self.attributes.get(name);
            let b = other.attributes.get(name);
            let ty = match (a, b) {
                (Some(a), None) => a.ty,
                (None, Some(b)) => b.ty,
                (Some(a), Some(b)) => {
                    if a.ty == b.ty {
                        a.ty
                    } else if a.nulls == self.feature_count {
                        b.ty
                    } else if b.nulls == other.feature_count {
                        a.ty
                    } else {
                        AttrType::join(a.ty, b.ty).ok_or_else(|| MergeError::AttrType {
                            name: name.clone(),
                            a: a.ty,
                            b: b.ty,
                        })?
                    }
                }
                (None, None) => unreachable!("the name comes from one of the two maps"),
            };
            let nulls = a.map_or(self.feature_count, |a| a.nulls)
                + b.map_or(other.feature_count, |b| b.nulls);
            attributes.insert(
                name.clone(),
                AttributeProfile {
                    ty,
                    nulls,
                    null_fraction: 0.0,
                },
            );
        }
        let envelope = self
            .envelope
            .unwrap_or(Envelope::EMPTY)
            .union(&other.envelope.unwrap_or(Envelope::EMPTY))
            .non_empty();
        let mut out = Profile {
            files: self.files.iter().chain(&other.files).cloned().collect(),
            format: self.format.clone(),
            crs: self.crs.as_deref().map(crate::model::crs::canonical_text),
            feature_count: self.feature_count + other.feature_count,
            null_geometries: self.null_geometries + other.null_geometries,
            invalid_geometries: self.invalid_geometries + other.invalid_geometries,
            envelope,
            geometry_types: self
                .geometry_types
                .union(&other.geometry_types)
                .copied()
                .collect(),
            dimensions: self.dimensions.union(&other.dimensions).copied().collect(),
            attributes,
            metrics: BTreeMap::new(),
            // Parts of a merge are files: a table is never merged.
            snapshot: None,
        };
        out.finish();
        Ok(out)
    }
}

/// One attribute while a reader counts.
#[derive(Debug, Clone, PartialEq)]
pub struct AttrAcc {
    pub name: String,
    pub ty: AttrType,
    pub nulls: u64,
}

/// The running counts of one reader (or of one parallel part of it). Cheap to update per
/// coordinate: the envelope is four floats and the geometry types a bit set.
#[derive(Debug, Clone, PartialEq)]
pub struct Accumulator {
    pub features: u64,
    pub null_geometries: u64,
    pub invalid_geometries: u64,
    /// Over every finite coordinate so far ([`Envelope::EMPTY`] when none).
    pub envelope: Envelope,
    /// Bit [`GeometryType::bit`] is set when that type occurred.
    pub types: u32,
    /// Bit [`Dimension::bit`] is set when that dimension occurred.
    pub dims: u8,
    pub attributes: Vec<AttrAcc>,
}

impl Default for Accumulator {
    fn default() -> Self {
        Accumulator::new(Vec::new())
    }
}

impl Accumulator {
    pub fn new(attributes: Vec<AttrAcc>) -> Accumulator {
        Accumulator {
            features: 0,
            null_geometries: 0,
            invalid_geometries: 0,
            envelope: Envelope::EMPTY,
            types: 0,
            dims: 0,
            attributes,
        }
    }

    /// A fresh accumulator with the same attributes (names and types), counts at zero: the
    /// starting point of a parallel part.
    pub fn empty_like(&self) -> Accumulator {
        Accumulator::new(
            self.attributes
                .iter()
                .map(|a| AttrAcc {
                    name: a.name.clone(),
                    ty: a.ty,
                    nulls: 0,
                })
                .collect(),
        )
    }

    /// Add the counts of a part read with the same schema.
    pub fn absorb(&mut self, other: &Accumulator) {
        self.features += other.features;
        self.null_geometries += other.null_geometries;
        self.invalid_geometries += other.invalid_geometries;
        self.envelope = self.envelope.union(&other.envelope);
        self.types |= other.types;
        self.dims |= other.dims;
        for (a, b) in self.attributes.iter_mut().zip(&other.attributes) {
            a.nulls += b.nulls;
        }
    }

    pub fn add_type(&mut self, t: GeometryType) {
        self.types |= t.bit();
    }

    pub fn into_profile(self, files: Vec<String>, format: &str, crs: Option<String>) -> Profile {
        let envelope = self.envelope.non_empty();
        let geometry_types = GeometryType::from_bits(self.types).collect();
        let dimensions = Dimension::ALL
            .into_iter()
            .filter(|d| self.dims & d.bit() != 0)
            .collect();
        let attributes = self
            .attributes
            .into_iter()
            .map(|a| {
                (
                    a.name,
                    AttributeProfile {
                        ty: a.ty,
                        nulls: a.nulls,
                        null_fraction: 0.0,
                    },
                )
            })
            .collect();
        let mut p = Profile {
            files,
            format: format.to_string(),
            crs,
            feature_count: self.features,
            null_geometries: self.null_geometries,
            invalid_geometries: self.invalid_geometries,
            envelope,
            geometry_types,
            dimensions,
            attributes,
            metrics: BTreeMap::new(),
            snapshot: None,
        };
        p.finish();
        p
    }
}
