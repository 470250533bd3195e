//! The objects above the geometry: a Feature (its geometry, properties and id), the
//! `features` array of a FeatureCollection, and a whole GeoJSON text, which may be either of
//! them or a bare geometry.

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess};
use serde_json::Value;

use super::super::geom::GeomScan;
use super::super::Accumulator;
use super::columns::{value_type, State};
use super::geometry::{GeometryParts, GeometrySeed};
use super::pieces::{excerpt, Members, Text};

/// A Feature's `geometry`: null, or a geometry, added to the accumulator.
struct FeatureGeometry<'a>(&'a mut Accumulator, bool);

seed! {
    FeatureGeometry<'_> => (), deserialize_option, "a GeoJSON geometry or null";
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.0.null_geometries += 1;
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.visit_none()
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let mut scan = GeomScan::default();
        let t = GeometrySeed {
            scan: &mut scan,
            depth: 0,
            raw: self.1,
        }
        .deserialize(d)?;
        scan.commit(self.0, t);
        Ok(())
    }
}

/// A Feature's `properties`: null, or an object whose members go to the columns one by one.
struct Properties<'a>(&'a mut State);

seed! {
    Properties<'_> => (), deserialize_option, "an object of properties or null";
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(k) = map.next_key_seed(Text)? {
            let v: Value = map.next_value()?;
            self.0.property(&k, value_type(&v));
        }
        Ok(())
    }
}

/// Which members of a Feature have been read.
#[derive(Default)]
struct FeatureParts {
    geometry: bool,
}

impl FeatureParts {
    /// Take one member of a Feature (the feature is already counted); `false` when the key
    /// is not a Feature's.
    fn member<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        seen: &mut Members,
        st: &mut State,
    ) -> Result<bool, A::Error> {
        match key {
            "geometry" => {
                seen.first("geometry")?;
                self.geometry = true;
                map.next_value_seed(FeatureGeometry(&mut st.acc, st.raw))?;
            }
            "properties" => {
                seen.first("properties")?;
                map.next_value_seed(Properties(st))?;
            }
            "id" => {
                seen.first("id")?;
                // GDAL: an integer id is the feature id; a string id is a column `id`.
                let v: Value = map.next_value()?;
                if v.is_string() {
                    st.property("id", value_type(&v));
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn finish(self, st: &mut State) {
        if !self.geometry {
            // RFC 7946 requires the member; a feature without one has no geometry.
            st.acc.null_geometries += 1;
        }
    }
}

struct FeatureSeed<'a>(&'a mut State);

seed! {
    FeatureSeed<'_> => (), deserialize_map, "a GeoJSON Feature object";
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.0;
        st.acc.features += 1;
        let mut parts = FeatureParts::default();
        let mut seen = Members::default();
        while let Some(key) = map.next_key_seed(Text)? {
            if parts.member(&key, &mut map, &mut seen, st)? {
                continue;
            }
            if key == "type" {
                seen.first("type")?;
                let t = map.next_value_seed(Text)?;
                if t != "Feature" {
                    return Err(de::Error::custom(format!(
                        "a member of `features` has type {}, not `Feature`",
                        excerpt(&t)
                    )));
                }
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        parts.finish(st);
        Ok(())
    }
}

pub(super) struct Features<'a>(pub(super) &'a mut State);

seed! {
    Features<'_> => (), deserialize_seq, "an array of Features";
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(FeatureSeed(self.0))?.is_some() {}
        Ok(())
    }
}

/// A legacy `crs` member's name, e.g. `urn:ogc:def:crs:EPSG::2263`.
pub(super) fn legacy_crs(v: &Value) -> Option<String> {
    let name = v.pointer("/properties/name")?.as_str()?;
    let upper = name.to_ascii_uppercase();
    if upper.ends_with("CRS84") {
        return Some("EPSG:4326".to_string());
    }
    let parts: Vec<&str> = upper.split(':').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [.., auth, code] if code.chars().all(|c| c.is_ascii_digit()) && !auth.is_empty() => {
            let auth = if auth.chars().all(|c| c.is_ascii_digit() || c == '.') {
                // `urn:ogc:def:crs:EPSG:6.6:4326` carries a version between the two.
                parts.iter().rev().nth(2)?
            } else {
                auth
            };
            Some(format!("{auth}:{code}"))
        }
        _ => None,
    }
}

/// One GeoJSON text: a FeatureCollection, a Feature or a geometry. Its members may come in
/// any order, so every kind's members are taken as they come and the `type` decides at the
/// end (a member of another kind is a foreign member and ignored, as RFC 7946 allows).
pub(super) struct Document<'a>(pub(super) &'a mut State);

seed! {
    Document<'_> => (), deserialize_map, "a GeoJSON object (FeatureCollection, Feature or geometry)";
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.0;
        let mut seen = Members::default();
        // A Feature's properties, kept until the `type` says this text is one (a single
        // feature's properties are small).
        let mut props: Vec<(String, Value)> = Vec::new();
        let mut kind: Option<String> = None;
        let mut feature = FeatureParts::default();
        let mut collection = false;
        let mut features: Option<State> = None;
        let mut geometry = GeometryParts::default();
        let mut scan = GeomScan::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "type" => {
                    seen.first("type")?;
                    let t = map.next_value::<String>()?;
                    geometry.kind = Some(t.clone());
                    kind = Some(t);
                }
                "features" => {
                    seen.first("features")?;
                    collection = true;
                    // Read apart: only once `type` says FeatureCollection do they count. In
                    // a Feature, `features` is a foreign member (GDAL ignores it too).
                    let mut part = State::part();
                    part.raw = st.raw;
                    map.next_value_seed(Features(&mut part))?;
                    features = Some(part);
                }
                "crs" => {
                    seen.first("crs")?;
                    let v = map.next_value::<Value>()?;
                    st.crs = legacy_crs(&v);
                    st.crs_seen = true;
                }
                "properties" => {
                    seen.first("properties")?;
                    if let Some(m) = map.next_value::<Option<serde_json::Map<String, Value>>>()? {
                        props.extend(m);
                    }
                }
                "id" => {
                    seen.first("id")?;
                    let v: Value = map.next_value()?;
                    if v.is_string() {
                        props.push(("id".to_string(), v));
                    }
                }
                k if feature.member(k, &mut map, &mut seen, st)? => {}
                k if geometry.member(k, &mut map, &mut seen, &mut scan, 0, st.raw)? => {}
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let Some(kind) = kind else {
            return Err(de::Error::custom(
                "the document has no `type` (expected a FeatureCollection, a Feature or a geometry)",
            ));
        };
        match kind.as_str() {
            "FeatureCollection" => {
                if !collection {
                    return Err(de::Error::custom("a FeatureCollection has no `features`"));
                }
                if feature.geometry {
                    return Err(de::Error::custom(
                        "a FeatureCollection has a `geometry` member",
                    ));
                }
                if let Some(part) = features {
                    st.absorb(part);
                }
            }
            "Feature" => {
                if let Some(part) = features {
                    st.foreign_features += part.acc.features.max(1);
                }
                st.acc.features += 1;
                for (k, v) in props {
                    st.property(&k, value_type(&v));
                }
                feature.finish(st);
            }
            _ => {
                if feature.geometry || collection {
                    return Err(de::Error::custom(format!(
                        "a document of type {} has `geometry` or `features` members",
                        excerpt(&kind)
                    )));
                }
                let t = geometry.finish(&mut scan).map_err(|e| {
                    if e.starts_with("unknown geometry type") {
                        de::Error::custom(format!(
                            "the document's type is {}, not a FeatureCollection, a Feature or a geometry",
                            excerpt(&kind)
                        ))
                    } else {
                        de::Error::custom(e)
                    }
                })?;
                st.acc.features += 1;
                scan.commit(&mut st.acc, t);
            }
        }
        Ok(())
    }
}
