//! CRS identification: each format's own metadata turned into `AUTHORITY:CODE`.
//!
//! Most formats carry a code (GeoPackage, FlatGeobuf, GeoParquet's PROJJSON `id`). A
//! shapefile's `.prj` is ESRI WKT, which names a system but carries no code, and a WKT or
//! PROJJSON may come without an `id` too. Those are identified against the EPSG registry
//! (the geographic and projected CRS of the EPSG dataset, as the `crs-definitions` crate
//! ships them in OGC WKT1) the way GDAL does it:
//!
//! 1. **Parameters.** A registry entry is a candidate when it is of the same kind
//!    (geographic or projected) with the same ellipsoid, prime meridian and unit, the same
//!    projection method (ESRI, OGC WKT1 and EPSG/WKT2 method names are mapped to one family
//!    each: `Lambert_Conformal_Conic` is the 1SP or 2SP form its parameters describe,
//!    `Double_Stereographic` is `Oblique_Stereographic`, `Mercator_Auxiliary_Sphere` is the
//!    Pseudo-Mercator, `Stereographic_North_Pole` is the polar stereographic, …) and the same
//!    projection parameters (to a relative 1e-8: ESRI writes 15 significant digits).
//! 2. **Names.** Among the candidates, the one whose CRS name shares the most words with the
//!    file's wins; on a tie, the one whose datum name agrees best, then the one with the fewest
//!    words left over (`NAD_1983_HARN_StatePlane_Massachusetts_Mainland_FIPS_2001` and
//!    `NAD83(HARN) / Massachusetts Mainland`; years compare by their last two digits and an
//!    abbreviation matches the words it abbreviates, so `HARN` matches *High Accuracy
//!    Reference Network* and `ETRS` *European Terrestrial Reference System*).
//!
//! Deprecated EPSG entries and the `(N,E)` axis-order variants are not candidates for a WKT
//! that states no axes. When no entry has the parameters, or two entries match equally well, the CRS is unknown
//! (`null`) and the reason is returned for a warning: a wrong code would pass or fail a
//! contract for the wrong reason. An `AUTHORITY`/`ID` in the text wins over all of this.

use std::sync::OnceLock;

use crate::model::crs::Crs;
use names::{name_match, name_score, norm, words};
use wkt::{num, parse, Wkt};

mod names;
mod wkt;

/// A CRS reduced to what identifies it, whatever dialect it was written in.
#[derive(Debug, Clone)]
struct Def {
    projected: bool,
    name: Vec<String>,
    datum: Vec<String>,
    /// Semi-major axis (metres) and inverse flattening (0 for a sphere).
    a: f64,
    rf: f64,
    /// Prime meridian, degrees east of Greenwich.
    pm: f64,
    /// Metres per linear unit (projected) or radians per angular unit (geographic).
    unit: f64,
    /// The projection family and its parameters in canonical names, sorted by name.
    method: String,
    /// A projected CRS whose first axis points north or south (EPSG's `(N,E)` variants);
    /// ESRI WKT and WKT1 without `AXIS` are east first.
    north_first: bool,
    params: Vec<(String, f64)>,
}

/// A datum's name in words, its ellipsoid (semi-major axis in metres, inverse flattening)
/// and its prime meridian (degrees east), as WKT and PROJJSON both give them.
type Geodetic = (Vec<String>, f64, f64, f64);

impl Def {
    /// A geographic CRS: `unit` radians per angular unit.
    fn geographic(name: Vec<String>, (datum, a, rf, pm): Geodetic, unit: f64) -> Def {
        Def {
            projected: false,
            name,
            datum,
            a,
            rf,
            pm,
            unit,
            method: String::new(),
            north_first: false,
            params: Vec::new(),
        }
    }

    /// A projected CRS: `unit` metres per linear unit, the method and its parameters as
    /// [`canonical`] gives them.
    fn projected(
        name: Vec<String>,
        (datum, a, rf, pm): Geodetic,
        unit: f64,
        (method, params): (String, Vec<(String, f64)>),
        north_first: bool,
    ) -> Def {
        Def {
            projected: true,
            name,
            datum,
            a,
            rf,
            pm,
            unit,
            method,
            north_first,
            params,
        }
    }
}

const DEGREE: f64 = 0.017_453_292_519_943_3;

/// A projection method's family, from an ESRI, OGC WKT1 or EPSG method name.
fn family(method: &str) -> String {
    let m = norm(method);
    let f = match m.as_str() {
        "transverse_mercator" | "gauss_kruger" | "transverse_mercator_3d" => "tmerc",
        "transverse_mercator_south_orientated" | "transverse_mercator_south_oriented" => {
            "tmerc_south"
        }
        "lambert_conformal_conic"
        | "lambert_conformal_conic_1sp"
        | "lambert_conformal_conic_2sp"
        | "lambert_conic_conformal_1sp"
        | "lambert_conic_conformal_2sp" => "lcc",
        "albers" | "albers_conic_equal_area" | "albers_equal_area" => "aea",
        "mercator" | "mercator_1sp" | "mercator_2sp" | "mercator_variant_a"
        | "mercator_variant_b" => "merc",
        "mercator_auxiliary_sphere" | "popular_visualisation_pseudo_mercator" => "webmerc",
        "double_stereographic" | "oblique_stereographic" => "sterea",
        "polar_stereographic"
        | "stereographic_north_pole"
        | "stereographic_south_pole"
        | "polar_stereographic_variant_a"
        | "polar_stereographic_variant_b" => "stere_polar",
        "hotine_oblique_mercator"
        | "hotine_oblique_mercator_azimuth_natural_origin"
        | "hotine_oblique_mercator_variant_a"
        | "rectified_skew_orthomorphic_natural_origin" => "omerc_a",
        "hotine_oblique_mercator_azimuth_center"
        | "hotine_oblique_mercator_variant_b"
        | "rectified_skew_orthomorphic_center" => "omerc_b",
        "lambert_azimuthal_equal_area" => "laea",
        "cassini" | "cassini_soldner" => "cass",
        "polyconic" | "american_polyconic" => "poly",
        "equirectangular" | "equidistant_cylindrical" | "plate_carree" => "eqc",
        "cylindrical_equal_area" | "behrmann" | "lambert_cylindrical_equal_area" => "cea",
        _ => return m,
    };
    f.to_string()
}

/// A parameter's canonical name, from its ESRI, OGC WKT1 or EPSG name.
fn param_name(name: &str) -> String {
    let n = norm(name);
    let c = match n.as_str() {
        "latitude_of_origin"
        | "latitude_of_center"
        | "latitude_of_natural_origin"
        | "latitude_of_false_origin"
        | "latitude_of_projection_centre" => "lat0",
        "central_meridian"
        | "longitude_of_center"
        | "longitude_of_origin"
        | "longitude_of_natural_origin"
        | "longitude_of_false_origin"
        | "longitude_of_projection_centre" => "lon0",
        "scale_factor"
        | "scale_factor_at_natural_origin"
        | "scale_factor_on_initial_line"
        | "scale_factor_at_projection_centre"
        | "scale_factor_on_pseudo_standard_parallel" => "k",
        "false_easting" | "easting_at_false_origin" | "easting_at_projection_centre" => "x0",
        "false_northing" | "northing_at_false_origin" | "northing_at_projection_centre" => "y0",
        "standard_parallel_1"
        | "latitude_of_1st_standard_parallel"
        | "latitude_of_standard_parallel"
        | "pseudo_standard_parallel_1"
        | "latitude_of_pseudo_standard_parallel" => "lat1",
        "standard_parallel_2" | "latitude_of_2nd_standard_parallel" => "lat2",
        "azimuth"
        | "azimuth_of_initial_line"
        | "azimuth_at_projection_centre"
        | "co_latitude_of_cone_axis" => "alpha",
        "rectified_grid_angle" | "angle_from_rectified_to_skew_grid" | "xy_plane_rotation" => {
            "gamma"
        }
        _ => return n,
    };
    c.to_string()
}

/// The parameters of one family in one form: defaults filled in, alternative spellings of
/// the same projection (LCC 1SP as a 2SP with equal parallels, Mercator by its standard
/// parallel, polar stereographic by its latitude of true scale) made equal.
fn canonical(method: &str, raw: Vec<(String, f64)>) -> (String, Vec<(String, f64)>) {
    let mut method = method.to_string();
    let mut p: std::collections::BTreeMap<String, f64> = raw.into_iter().collect();
    let get = |p: &std::collections::BTreeMap<String, f64>, k: &str| p.get(k).copied();
    if method == "stereographic" && get(&p, "lat0").is_some_and(|l| l.abs() == 90.0) {
        method = "stere_polar".into();
    }
    match method.as_str() {
        "lcc" => {
            let lat0 = get(&p, "lat0").unwrap_or(0.0);
            let lat1 = get(&p, "lat1").unwrap_or(lat0);
            let lat2 = get(&p, "lat2").unwrap_or(lat1);
            p.insert("lat0".into(), lat0);
            // The two standard parallels may be given in either order.
            p.insert("lat1".into(), lat1.max(lat2));
            p.insert("lat2".into(), lat1.min(lat2));
            p.entry("k".into()).or_insert(1.0);
        }
        "aea" => {
            if let (Some(a), Some(b)) = (get(&p, "lat1"), get(&p, "lat2")) {
                p.insert("lat1".into(), a.max(b));
                p.insert("lat2".into(), a.min(b));
            }
        }
        "merc" => {
            if get(&p, "lat0") == Some(0.0) {
                p.remove("lat0");
            }
            match get(&p, "lat1") {
                Some(0.0) => {
                    p.remove("lat1");
                    p.entry("k".into()).or_insert(1.0);
                }
                Some(_) => {}
                None => {
                    p.entry("k".into()).or_insert(1.0);
                }
            }
        }
        "webmerc" => p.retain(|k, _| k == "lon0" || k == "x0" || k == "y0"),
        "stere_polar" => {
            let ts = get(&p, "lat1").or(get(&p, "lat0")).unwrap_or(90.0);
            p.remove("lat0");
            p.remove("lat1");
            p.insert("lat_ts".into(), ts);
            if ts.abs() != 90.0 && get(&p, "k") == Some(1.0) {
                p.remove("k");
            }
        }
        "omerc_a" | "omerc_b" => {
            if let Some(a) = get(&p, "alpha") {
                p.entry("gamma".into()).or_insert(a);
            }
        }
        "tmerc" | "tmerc_south" | "sterea" => {
            p.entry("k".into()).or_insert(1.0);
            p.entry("lat0".into()).or_insert(0.0);
        }
        "cea" => {
            p.entry("lat1".into()).or_insert(0.0);
        }
        _ => {}
    }
    p.entry("x0".into()).or_insert(0.0);
    p.entry("y0".into()).or_insert(0.0);
    p.remove("auxiliary_sphere_type");
    (method, p.into_iter().collect())
}

/// Datum, ellipsoid and prime meridian of a geographic WKT node (WKT1 `GEOGCS`, WKT2
/// `GEOGCRS`/`BASEGEOGCRS`/`GEODCRS`).
fn geodetic(g: &Wkt) -> Option<Geodetic> {
    let datum = g.child_any(&["DATUM", "GEODETICDATUM", "TRF", "ENSEMBLE"])?;
    let ell = datum.child_any(&["SPHEROID", "ELLIPSOID"])?;
    let a = num(ell.args().get(1))?;
    let rf = num(ell.args().get(2))?;
    // WKT2 may give the axis in another length unit.
    let a = a * ell.unit(&["LENGTHUNIT", "UNIT"]).unwrap_or(1.0);
    let pm = match g.child("PRIMEM") {
        Some(p) => {
            let v = num(p.args().get(1)).unwrap_or(0.0);
            match p.unit(&["ANGLEUNIT", "UNIT"]) {
                Some(f) => v * f / DEGREE,
                None => v,
            }
        }
        None => 0.0,
    };
    Some((words(datum.name().unwrap_or("")), a, rf, pm))
}

/// The first unit factor found on `node`, its `CS` axes or its children, for `keywords`.
fn cs_unit(node: &Wkt, keywords: &[&str]) -> Option<f64> {
    node.unit(keywords).or_else(|| {
        node.args()
            .iter()
            .filter(|a| a.keyword() == "AXIS")
            .find_map(|a| a.unit(keywords))
    })
}

/// A WKT1 (ESRI or OGC) or WKT2 CRS as a [`Def`].
fn def_from_wkt(root: &Wkt) -> Option<Def> {
    match root.keyword() {
        "GEOGCS" | "GEOGCRS" | "GEODCRS" | "GEOGRAPHICCRS" => {
            let g = geodetic(root)?;
            Some(Def::geographic(
                words(root.name()?),
                g,
                cs_unit(root, &["UNIT", "ANGLEUNIT"]).unwrap_or(DEGREE),
            ))
        }
        "PROJCS" | "PROJCRS" | "PROJECTEDCRS" => {
            let base = root.child_any(&["GEOGCS", "BASEGEOGCRS", "BASEGEODCRS"])?;
            let g = geodetic(base)?;
            let unit = cs_unit(root, &["UNIT", "LENGTHUNIT"]).unwrap_or(1.0);
            let (method_name, holder) = match root.child("CONVERSION") {
                Some(conv) => (conv.child("METHOD")?.name()?, conv),
                None => (root.child("PROJECTION")?.name()?, root),
            };
            let mut raw = Vec::new();
            for p in holder.args().iter().filter(|a| a.keyword() == "PARAMETER") {
                let mut v = num(p.args().get(1))?;
                if let Some(f) = p.unit(&["LENGTHUNIT"]) {
                    v = v * f / unit;
                } else if let Some(f) = p.unit(&["ANGLEUNIT"]) {
                    v = v * f / DEGREE;
                }
                raw.push((param_name(p.name()?), v));
            }
            let method = canonical(&family(method_name), raw);
            let north_first = root
                .args()
                .iter()
                .chain(root.child("CS").map(|c| c.args()).unwrap_or(&[]))
                .find(|a| a.keyword() == "AXIS")
                .and_then(|a| a.args().get(1))
                .is_some_and(|d| match d {
                    Wkt::Str(s) => {
                        s.eq_ignore_ascii_case("north") || s.eq_ignore_ascii_case("south")
                    }
                    _ => false,
                });
            Some(Def::projected(
                words(root.name()?),
                g,
                unit,
                method,
                north_first,
            ))
        }
        _ => None,
    }
}

/// A number, or a PROJJSON `{"value": ..., "unit": ...}`, with its unit factor.
fn json_num(v: &serde_json::Value, default_factor: f64) -> Option<(f64, f64)> {
    match v {
        serde_json::Value::Number(n) => Some((n.as_f64()?, default_factor)),
        serde_json::Value::Object(o) => Some((
            o.get("value")?.as_f64()?,
            o.get("unit")
                .map_or(Some(default_factor), |u| json_unit(u, default_factor))?,
        )),
        _ => None,
    }
}

fn json_unit(u: &serde_json::Value, default_factor: f64) -> Option<f64> {
    match u {
        serde_json::Value::String(s) => Some(match s.as_str() {
            "metre" | "meter" => 1.0,
            "degree" => DEGREE,
            "US survey foot" => 0.304_800_609_601_219_2,
            "foot" => 0.3048,
            "unity" => 1.0,
            _ => default_factor,
        }),
        serde_json::Value::Object(o) => o.get("conversion_factor")?.as_f64(),
        _ => None,
    }
}

/// A PROJJSON geographic or projected CRS as a [`Def`].
fn def_from_projjson(v: &serde_json::Value) -> Option<Def> {
    let geodetic = |g: &serde_json::Value| -> Option<Geodetic> {
        let datum = g.get("datum").or_else(|| g.get("datum_ensemble"))?;
        let ell = datum.get("ellipsoid")?;
        let (a, fa) = json_num(
            ell.get("semi_major_axis").or_else(|| ell.get("radius"))?,
            1.0,
        )?;
        let rf = match ell.get("inverse_flattening") {
            Some(r) => json_num(r, 1.0)?.0,
            None => 0.0,
        };
        let pm = match g.pointer("/prime_meridian/longitude") {
            Some(l) => {
                let (v, f) = json_num(l, DEGREE)?;
                v * f / DEGREE
            }
            None => 0.0,
        };
        Some((
            words(datum.get("name")?.as_str().unwrap_or("")),
            a * fa,
            rf,
            pm,
        ))
    };
    let axis_unit = |c: &serde_json::Value, default: f64| {
        c.pointer("/coordinate_system/axis/0/unit")
            .and_then(|u| json_unit(u, default))
            .unwrap_or(default)
    };
    let name = words(v.get("name")?.as_str()?);
    match v.get("type")?.as_str()? {
        "GeographicCRS" | "GeodeticCRS" => {
            Some(Def::geographic(name, geodetic(v)?, axis_unit(v, DEGREE)))
        }
        "ProjectedCRS" => {
            let base = geodetic(v.get("base_crs")?)?;
            let unit = axis_unit(v, 1.0);
            let conv = v.get("conversion")?;
            let method = conv.pointer("/method/name")?.as_str()?;
            let mut raw = Vec::new();
            for p in conv.get("parameters")?.as_array()? {
                let value = p.get("value")?.as_f64()?;
                let factor = p.get("unit").and_then(|u| json_unit(u, 0.0));
                let value = match factor {
                    Some(f) if f > 0.0 && (f - DEGREE).abs() < 1e-12 => value,
                    Some(f) if f > 0.0 && f < 0.1 => value * f / DEGREE,
                    Some(f) if f > 0.0 => value * f / unit,
                    _ => value,
                };
                raw.push((param_name(p.get("name")?.as_str()?), value));
            }
            let method = canonical(&family(method), raw);
            let north_first = v
                .pointer("/coordinate_system/axis/0/direction")
                .and_then(|d| d.as_str())
                .is_some_and(|d| d == "north" || d == "south");
            Some(Def::projected(name, base, unit, method, north_first))
        }
        _ => None,
    }
}

struct Entry {
    code: u16,
    def: Def,
}

/// The registry, parsed once: every EPSG geographic 2D and projected CRS the
/// `crs-definitions` data gives in WKT1.
fn registry() -> &'static [Entry] {
    static REGISTRY: OnceLock<Vec<Entry>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        (0..=u16::MAX)
            .filter_map(|code| {
                let d = crs_definitions::from_code(code)?;
                if !(d.wkt.starts_with("GEOGCS[") || d.wkt.starts_with("PROJCS["))
                    || d.wkt[..d.wkt.len().min(200)].contains("(deprecated)")
                {
                    return None;
                }
                let root = parse(d.wkt)?;
                let mut def = def_from_wkt(&root)?;
                // WKT1 has no axes for EPSG's north-first variants; their names say it.
                def.north_first |= root.name().is_some_and(|n| n.contains("(N,E)"));
                // GDAL writes the Pseudo-Mercator in WKT1 as Mercator_1SP with a PROJ
                // extension; its PROJ string tells it from the ellipsoidal Mercator.
                if def.method == "merc" && d.proj4.contains("+nadgrids=@null") {
                    let (m, p) = canonical("webmerc", def.params.clone());
                    def.method = m;
                    def.params = p;
                }
                Some(Entry { code, def })
            })
            .collect()
    })
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * 1f64.max(a.abs()).max(b.abs())
}

/// Whether a registry entry describes the same system as `d`, by numbers alone.
fn same_numbers(r: &Def, d: &Def) -> bool {
    r.projected == d.projected
        && (r.a - d.a).abs() <= 1e-3
        && (r.rf - d.rf).abs() <= 1e-6
        && (r.pm - d.pm).abs() <= 1e-7
        && close(r.unit, d.unit, 1e-9)
        && r.method == d.method
        && r.north_first == d.north_first
        && r.params.len() == d.params.len()
        && r.params
            .iter()
            .zip(&d.params)
            .all(|((n1, v1), (n2, v2))| n1 == n2 && close(*v1, *v2, 1e-8))
}

/// The registry entry for `d`, or why there is none.
fn identify(d: &Def) -> Result<Crs, String> {
    let mut best: Vec<((i64, i64, i64), u16)> = Vec::new();
    for e in registry() {
        if !same_numbers(&e.def, d) {
            continue;
        }
        // The words the CRS names share first, then how well the datum names agree, then
        // the fewest words left over in the CRS names.
        let (matched, left) = name_match(&d.name, &e.def.name);
        let score = (matched, name_score(&d.datum, &e.def.datum), -left);
        match best.first() {
            Some((s, _)) if *s > score => {}
            Some((s, _)) if *s == score => best.push((score, e.code)),
            _ => best = vec![(score, e.code)],
        }
    }
    match best.as_slice() {
        [] => Err(if d.projected {
            format!(
                "no EPSG projected CRS has this projection ({}), ellipsoid and parameters",
                d.method
            )
        } else {
            "no EPSG geographic CRS has this ellipsoid, prime meridian and unit".to_string()
        }),
        [(_, code)] => Ok(Crs::epsg(u32::from(*code))),
        several => {
            let codes: Vec<String> = several
                .iter()
                .take(5)
                .map(|(_, c)| format!("EPSG:{c}"))
                .collect();
            Err(format!(
                "it matches {} EPSG systems equally well ({}{})",
                several.len(),
                codes.join(", "),
                if several.len() > 5 { ", …" } else { "" }
            ))
        }
    }
}

/// Identify the CRS of an ESRI WKT (a shapefile's `.prj`), OGC WKT1 or WKT2 text: its own
/// `AUTHORITY`/`ID` when it has one, else the registry entry it describes. The error says
/// why it is unknown.
pub fn identify_wkt(text: &str) -> Result<Crs, String> {
    let root = parse(text).ok_or("the WKT text cannot be parsed")?;
    if let Some(id) = root.authority() {
        return Crs::parse(&id)
            .ok_or_else(|| format!("its identifier `{id}` is not AUTHORITY:CODE"));
    }
    let def = def_from_wkt(&root).ok_or_else(|| {
        format!(
            "a `{}` WKT without datum, ellipsoid or projection cannot be identified",
            root.keyword()
        )
    })?;
    identify(&def)
}

/// [`identify_wkt`] without the reason.
pub fn from_wkt(text: &str) -> Option<String> {
    identify_wkt(text).ok().map(|c| c.to_string())
}

/// Identify a PROJJSON CRS: its `id` (or first of `ids`), else the registry entry it
/// describes. The error says why it is unknown.
pub fn identify_projjson(v: &serde_json::Value) -> Result<Crs, String> {
    if let Some(id) = v
        .get("id")
        .or_else(|| v.get("ids").and_then(|ids| ids.get(0)))
    {
        let auth = id.get("authority").and_then(|a| a.as_str());
        let code = match id.get("code") {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        if let (Some(auth), Some(code)) = (auth, code) {
            return Crs::new(auth, &code)
                .ok_or_else(|| "its `id` is not an authority and a code".to_string());
        }
    }
    let def = def_from_projjson(v)
        .ok_or("the PROJJSON has no `id` and is not a geographic or projected CRS with a datum")?;
    identify(&def)
}

/// [`identify_projjson`] without the reason.
pub fn from_projjson(v: &serde_json::Value) -> Option<String> {
    identify_projjson(v).ok().map(|c| c.to_string())
}

/// `AUTHORITY:CODE` from an organisation name and a code, as GeoPackage and FlatGeobuf
/// store them. Undefined: an organisation of `NONE`, a code ≤ 0, and GDAL's own
/// "Undefined" rows (organisation `GDAL`, code 99999, which GDAL writes for a layer whose
/// CRS it could not name).
pub fn from_org_code(org: &str, code: i64) -> Option<String> {
    let org = org.trim();
    if code <= 0
        || org.is_empty()
        || org.eq_ignore_ascii_case("none")
        || (org.eq_ignore_ascii_case("gdal") && code == 99999)
    {
        return None;
    }
    Crs::new(org, &code.to_string()).map(|c| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `.prj` that GDAL wrote for an EPSG code is identified as GDAL identifies it
    /// (`tests/data/prj/expected.txt` holds GDAL's answers and the commands that gave them).
    #[test]
    fn every_gdal_written_prj_is_identified_as_gdal_identifies_it() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/prj");
        let expected = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
        let mut checked = 0;
        let mut wrong = Vec::new();
        for line in expected.lines().filter(|l| !l.starts_with('#')) {
            let (file, want) = line.split_once(' ').unwrap();
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            let got = identify_wkt(&text);
            if got.as_ref().map(|c| c.to_string()).as_deref() != Ok(want) {
                wrong.push(format!("{file}: GDAL says {want}, we say {got:?}"));
            }
            checked += 1;
        }
        assert!(checked >= 40, "only {checked} files");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn real_projects_prj_files() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        for (file, want) in [
            ("nybb/nybb.prj", "EPSG:2263"),
            ("naturalearth/countries.prj", "EPSG:4326"),
        ] {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            assert_eq!(from_wkt(&text).as_deref(), Some(want), "{file}");
        }
    }

    #[test]
    fn unknown_systems_are_null_with_a_reason() {
        let local = r#"PROJCS["Some_Local_Grid",GEOGCS["GCS_Unknown",DATUM["D_Unknown",SPHEROID["S",1.0,1.0]]],PROJECTION["Foo"]]"#;
        let why = identify_wkt(local).unwrap_err();
        assert!(why.contains("no EPSG projected CRS"), "{why}");
        assert!(identify_wkt("not wkt at all [[[").is_err());
        assert!(identify_wkt("").is_err());
        // A Transverse Mercator no registry entry has.
        let odd = r#"PROJCS["x",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",123.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",1.2345],PARAMETER["Scale_Factor",0.9],PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]"#;
        assert!(identify_wkt(odd).is_err());
    }

    #[test]
    fn an_unnamed_utm_zone_is_found_by_its_parameters_and_datum() {
        let wkt = r#"PROJCS["unnamed",GEOGCS["GCS_North_American_1983",DATUM["D_North_American_1983",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",500000.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",-75.0],PARAMETER["Scale_Factor",0.9996],PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]"#;
        assert_eq!(from_wkt(wkt).as_deref(), Some("EPSG:26918"));
        let with_id = r#"PROJCS["ETRS89 / UTM zone 32N",GEOGCS["ETRS89",DATUM["European_Terrestrial_Reference_System_1989",SPHEROID["GRS 1980",6378137,298.257222101]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],UNIT["metre",1],AUTHORITY["EPSG","25832"]]"#;
        assert_eq!(from_wkt(with_id).as_deref(), Some("EPSG:25832"));
    }

    #[test]
    fn projjson_with_and_without_id() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"type":"GeographicCRS","id":{"authority":"EPSG","code":4326}}"#,
        )
        .unwrap();
        assert_eq!(from_projjson(&v).as_deref(), Some("EPSG:4326"));
        // PROJ's PROJJSON for EPSG:26986 with its `id` removed (`projinfo -o PROJJSON EPSG:26986`).
        let v: serde_json::Value = serde_json::from_str(
            r#"{"type":"ProjectedCRS","name":"NAD83 / Massachusetts Mainland",
            "base_crs":{"name":"NAD83","datum":{"type":"GeodeticReferenceFrame","name":"North American Datum 1983",
              "ellipsoid":{"name":"GRS 1980","semi_major_axis":6378137,"inverse_flattening":298.257222101}},
              "coordinate_system":{"subtype":"ellipsoidal","axis":[{"name":"Geodetic latitude","abbreviation":"Lat","direction":"north","unit":"degree"},{"name":"Geodetic longitude","abbreviation":"Lon","direction":"east","unit":"degree"}]}},
            "conversion":{"name":"SPCS83 Massachusetts Mainland zone (meter)","method":{"name":"Lambert Conic Conformal (2SP)"},
              "parameters":[{"name":"Latitude of false origin","value":41,"unit":"degree"},
                {"name":"Longitude of false origin","value":-71.5,"unit":"degree"},
                {"name":"Latitude of 1st standard parallel","value":42.6833333333333,"unit":"degree"},
                {"name":"Latitude of 2nd standard parallel","value":41.7166666666667,"unit":"degree"},
                {"name":"Easting at false origin","value":200000,"unit":"metre"},
                {"name":"Northing at false origin","value":750000,"unit":"metre"}]},
            "coordinate_system":{"subtype":"Cartesian","axis":[{"name":"Easting","abbreviation":"X","direction":"east","unit":"metre"},{"name":"Northing","abbreviation":"Y","direction":"north","unit":"metre"}]}}"#,
        )
        .unwrap();
        assert_eq!(from_projjson(&v).as_deref(), Some("EPSG:26986"));
    }

    #[test]
    fn gpkg_undefined_rows_are_null() {
        assert_eq!(from_org_code("epsg", 27700).as_deref(), Some("EPSG:27700"));
        assert_eq!(from_org_code("NONE", 0), None);
        assert_eq!(from_org_code("NONE", -1), None);
        assert_eq!(from_org_code("GDAL", 99999), None);
        assert_eq!(from_org_code("gdal", 99999), None);
        assert_eq!(from_org_code("EPSG", 0), None);
    }

    #[test]
    fn names_match_by_words_and_abbreviations() {
        let s = |a: &str, b: &str| name_score(&words(a), &words(b));
        assert_eq!(
            words("ETRS_1989_UTM_Zone_33N"),
            words("ETRS89 / UTM zone 33N")
        );
        assert_eq!(words("RT90_25_gon_V"), words("RT90 2.5 gon V"));
        assert!(
            s(
                "D_North_American_1983_HARN",
                "NAD83_High_Accuracy_Reference_Network"
            ) > 0
        );
        assert!(s("CH1903+", "CH1903") < s("CH1903+", "CH1903+"));
    }
}
