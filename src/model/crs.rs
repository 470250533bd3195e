//! A coordinate reference system as the contracts and profiles name it: `AUTHORITY:CODE`.
//!
//! **The one equivalence rule.** `OGC:CRS84` and `EPSG:4326` are the same system for the data
//! this tool reads: they differ only in the axis order each *declares* (longitude first for
//! CRS84, latitude first for EPSG:4326), and every format read here (GeoJSON, GeoPackage,
//! FlatGeobuf, GeoParquet, Shapefile) stores longitude first under either name. The same holds
//! for `OGC:CRS83` ≡ `EPSG:4269` (NAD83) and `OGC:CRS27` ≡ `EPSG:4267` (NAD27). Every
//! comparison of two CRS — `validate`'s `crs` and `permitted_crs`, `profile --merge`, `diff` —
//! goes through [`Crs::equivalent`], and a profile prints the [`Crs::canonical`] name, the
//! EPSG code, so one dataset gives one `crs` in every format.
//!
//! **Geographic.** A CRS is geographic (longitude/latitude, so an envelope may cross the
//! antimeridian) when it is one of the OGC CRS84/83/27 or an EPSG code whose definition in the
//! EPSG registry (the `crs-definitions` data this build carries) is a geographic CRS.

use std::fmt;

/// `AUTHORITY:CODE`, the authority upper-cased.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Crs {
    authority: String,
    code: String,
}

/// The OGC longitude-first systems and the EPSG code of the same datum.
const OGC_LONLAT: &[(&str, u32)] = &[("CRS84", 4326), ("CRS83", 4269), ("CRS27", 4267)];

impl Crs {
    /// From an authority and a code as the formats store them.
    pub fn new(authority: &str, code: &str) -> Option<Crs> {
        let authority = authority.trim().to_ascii_uppercase();
        let code = code.trim().to_ascii_uppercase();
        if authority.is_empty()
            || code.is_empty()
            || !authority
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            || !code.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
        {
            return None;
        }
        // A numeric code in its shortest form, so `EPSG:04326` is `EPSG:4326`.
        let code = match code.parse::<u64>() {
            Ok(n) => n.to_string(),
            Err(_) => code,
        };
        Some(Crs { authority, code })
    }

    pub fn epsg(code: u32) -> Crs {
        Crs {
            authority: "EPSG".into(),
            code: code.to_string(),
        }
    }

    /// `EPSG:27700`, `epsg:27700`, `urn:ogc:def:crs:EPSG::27700`, `urn:ogc:def:crs:OGC:1.3:CRS84`,
    /// `http://www.opengis.net/def/crs/EPSG/0/27700`.
    pub fn parse(text: &str) -> Option<Crs> {
        let t = text.trim();
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("urn:ogc:def:crs:") {
            // urn:ogc:def:crs:AUTH:VERSION:CODE (the version may be empty).
            let parts: Vec<&str> = t.split(':').collect();
            return match parts.as_slice() {
                [_, _, _, _, auth, _version, code] => Crs::new(auth, code),
                _ => None,
            };
        }
        if let Some(i) = lower.find("/def/crs/") {
            let parts: Vec<&str> = t[i + "/def/crs/".len()..].split('/').collect();
            return match parts.as_slice() {
                [auth, _version, code] => Crs::new(auth, code),
                _ => None,
            };
        }
        let (auth, code) = t.split_once(':')?;
        Crs::new(auth, code)
    }

    pub fn authority(&self) -> &str {
        &self.authority
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    /// The EPSG code, when this is an EPSG CRS with a numeric code.
    pub fn epsg_code(&self) -> Option<u32> {
        (self.authority == "EPSG")
            .then(|| self.code.parse().ok())
            .flatten()
    }

    /// The name a profile prints: the EPSG code for the OGC longitude-first systems, the
    /// identifier itself otherwise.
    pub fn canonical(&self) -> Crs {
        if self.authority == "OGC" {
            if let Some((_, epsg)) = OGC_LONLAT.iter().find(|(n, _)| *n == self.code) {
                return Crs::epsg(*epsg);
            }
        }
        self.clone()
    }

    /// The one equivalence rule (see the module documentation).
    pub fn equivalent(&self, other: &Crs) -> bool {
        self.canonical() == other.canonical()
    }

    /// Whether this names a geographic (longitude/latitude) system.
    pub fn is_geographic(&self) -> bool {
        let c = self.canonical();
        match c.epsg_code().and_then(|n| u16::try_from(n).ok()) {
            Some(n) => crs_definitions::from_code(n).is_some_and(|d| {
                let w = d.wkt.trim_start();
                w.starts_with("GEOGCS[") || w.starts_with("GEOGCRS[")
            }),
            None => false,
        }
    }
}

impl fmt::Display for Crs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.authority, self.code)
    }
}

/// Two CRS identifiers as text name the same system. Text that is not `AUTHORITY:CODE` is
/// compared as it is, ignoring case.
pub fn same_crs(a: &str, b: &str) -> bool {
    match (Crs::parse(a), Crs::parse(b)) {
        (Some(a), Some(b)) => a.equivalent(&b),
        _ => a.trim().eq_ignore_ascii_case(b.trim()),
    }
}

/// The canonical text of a CRS identifier; text that is not `AUTHORITY:CODE` is kept.
pub fn canonical_text(s: &str) -> String {
    Crs::parse(s).map_or_else(|| s.to_string(), |c| c.canonical().to_string())
}

/// Whether a CRS identifier names a geographic (longitude/latitude) system.
pub fn is_geographic_crs(crs: &str) -> bool {
    Crs::parse(crs).is_some_and(|c| c.is_geographic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crs84_and_4326_are_one_system_and_print_as_4326() {
        let c = Crs::parse("OGC:CRS84").unwrap();
        assert!(c.equivalent(&Crs::epsg(4326)));
        assert_eq!(c.canonical().to_string(), "EPSG:4326");
        assert!(same_crs("urn:ogc:def:crs:OGC:1.3:CRS84", "epsg:4326"));
        assert!(same_crs("OGC:CRS83", "EPSG:4269"));
        assert!(!same_crs("EPSG:4326", "EPSG:4258"));
        assert!(!same_crs("OGC:CRS84", "EPSG:3857"));
        assert!(same_crs(
            "http://www.opengis.net/def/crs/EPSG/0/27700",
            "EPSG:27700"
        ));
        assert_eq!(canonical_text("EPSG:04326"), "EPSG:4326");
    }

    #[test]
    fn geographic_comes_from_the_registry() {
        for g in [
            "EPSG:4326",
            "OGC:CRS84",
            "EPSG:4258",
            "EPSG:4619",
            "EPSG:7844",
            "EPSG:4124",
        ] {
            assert!(is_geographic_crs(g), "{g}");
        }
        for p in [
            "EPSG:3857",
            "EPSG:27700",
            "EPSG:26986",
            "ESRI:102100",
            "nonsense",
        ] {
            assert!(!is_geographic_crs(p), "{p}");
        }
    }
}
