//! The spatial vocabulary every layer speaks: geometry types, coordinate dimensions,
//! attribute types and envelopes. The readers report in these terms, the profile stores them,
//! validation compares them and the clause shapes check names against them, so a name means
//! the same thing everywhere. (CRS identifiers and their equivalence live in `crs`.)

use std::fmt;

use serde::{Deserialize, Serialize};

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

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
}
