//! CRS identification: each format's own metadata turned into `AUTHORITY:CODE`.
//!
//! Most formats carry a code (GeoPackage, FlatGeobuf, GeoParquet's PROJJSON `id`). A
//! shapefile's `.prj` is ESRI WKT, which names a system but carries no code; it is identified
//! by its name, datum and (for UTM) its parameters, from a short table of the systems met in
//! practice. What is not identified is reported as unknown (`null`) with a warning rather
//! than guessed: a wrong code would pass or fail a contract for the wrong reason.

/// A WKT node: `KEYWORD[arg, arg, ...]`.
#[derive(Debug, Clone, PartialEq)]
enum Wkt {
    Str(String),
    Num(f64),
    Node(String, Vec<Wkt>),
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<Wkt> {
        if depth > 16 {
            return None;
        }
        self.ws();
        let c = *self.s.get(self.pos)?;
        if c == b'"' {
            let start = self.pos + 1;
            let end = start + self.s[start..].iter().position(|&b| b == b'"')?;
            self.pos = end + 1;
            return Some(Wkt::Str(
                String::from_utf8_lossy(&self.s[start..end]).into_owned(),
            ));
        }
        let start = self.pos;
        while self.pos < self.s.len() && !b"[](),\"".contains(&self.s[self.pos]) {
            self.pos += 1;
        }
        let word = std::str::from_utf8(&self.s[start..self.pos]).ok()?.trim();
        self.ws();
        match self.s.get(self.pos) {
            Some(b'[') | Some(b'(') => {
                self.pos += 1;
                let mut args = Vec::new();
                loop {
                    self.ws();
                    match self.s.get(self.pos)? {
                        b']' | b')' => {
                            self.pos += 1;
                            break;
                        }
                        b',' => self.pos += 1,
                        _ => args.push(self.value(depth + 1)?),
                    }
                }
                Some(Wkt::Node(word.to_ascii_uppercase(), args))
            }
            _ => word
                .parse::<f64>()
                .ok()
                .map(Wkt::Num)
                .or_else(|| Some(Wkt::Str(word.to_string()))),
        }
    }
}

impl Wkt {
    fn keyword(&self) -> &str {
        match self {
            Wkt::Node(k, _) => k,
            _ => "",
        }
    }

    fn args(&self) -> &[Wkt] {
        match self {
            Wkt::Node(_, a) => a,
            _ => &[],
        }
    }

    fn name(&self) -> Option<&str> {
        match self.args().first()? {
            Wkt::Str(s) => Some(s),
            _ => None,
        }
    }

    fn child(&self, keyword: &str) -> Option<&Wkt> {
        self.args().iter().find(|a| a.keyword() == keyword)
    }

    fn param(&self, name: &str) -> Option<f64> {
        self.args().iter().find_map(|a| {
            if a.keyword() == "PARAMETER" && a.name().map(norm).as_deref() == Some(name) {
                match a.args().get(1)? {
                    Wkt::Num(n) => Some(*n),
                    _ => None,
                }
            } else {
                None
            }
        })
    }

    /// `AUTHORITY["EPSG","27700"]` (WKT1) or `ID["EPSG",27700]` (WKT2) directly on this node.
    fn authority(&self) -> Option<String> {
        let a = self.child("AUTHORITY").or_else(|| self.child("ID"))?;
        let org = a.name()?;
        let code = match a.args().get(1)? {
            Wkt::Str(s) => s.clone(),
            Wkt::Num(n) => format!("{n}"),
            _ => return None,
        };
        Some(format!("{}:{}", org.to_ascii_uppercase(), code))
    }
}

/// Lower case, every run of other characters one `_`, so `NAD83 / UTM zone 18N` and
/// `NAD_1983_UTM_Zone_18N` compare by their words.
fn norm(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// The datum family of a geographic system, by its datum name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Datum {
    Wgs84,
    Nad83,
    Nad27,
    Etrs89,
    Osgb36,
    Gda94,
}

fn datum(geogcs: &Wkt) -> Option<Datum> {
    let d = geogcs.child("DATUM").and_then(Wkt::name).map(norm)?;
    let d = d.strip_prefix("d_").unwrap_or(&d);
    Some(match d {
        "wgs_1984" | "wgs84" | "world_geodetic_system_1984" => Datum::Wgs84,
        "north_american_1983" | "north_american_datum_1983" | "nad83" => Datum::Nad83,
        "north_american_1927" | "north_american_datum_1927" | "nad27" => Datum::Nad27,
        "etrs_1989" | "etrs89" | "european_terrestrial_reference_system_1989" => Datum::Etrs89,
        "osgb_1936" | "ordnance_survey_of_great_britain_1936" => Datum::Osgb36,
        "gda_1994" | "gda94" | "geocentric_datum_of_australia_1994" => Datum::Gda94,
        _ => return None,
    })
}

/// Projected systems known by name (normalised with [`norm`]).
const PROJECTED: &[(&str, &str)] = &[
    ("british_national_grid", "EPSG:27700"),
    ("osgb_1936_british_national_grid", "EPSG:27700"),
    ("osgb36_british_national_grid", "EPSG:27700"),
    ("wgs_1984_web_mercator_auxiliary_sphere", "EPSG:3857"),
    ("wgs_1984_web_mercator", "EPSG:3857"),
    ("wgs_84_pseudo_mercator", "EPSG:3857"),
    ("popular_visualisation_pseudo_mercator", "EPSG:3857"),
    (
        "nad_1983_stateplane_new_york_long_island_fips_3104_feet",
        "EPSG:2263",
    ),
    (
        "nad_1983_stateplane_new_york_long_island_fips_3104_ft_us",
        "EPSG:2263",
    ),
    ("nad83_new_york_long_island_ftus", "EPSG:2263"),
    ("etrs_1989_laea", "EPSG:3035"),
    ("etrs89_laea_europe", "EPSG:3035"),
    ("etrs89_extended_laea_europe", "EPSG:3035"),
    ("etrs_1989_lcc", "EPSG:3034"),
    ("etrs89_lcc_europe", "EPSG:3034"),
    ("rgf_1993_lambert_93", "EPSG:2154"),
    ("rgf93_lambert_93", "EPSG:2154"),
    ("nad_1983_contiguous_usa_albers", "EPSG:5070"),
    ("nad83_conus_albers", "EPSG:5070"),
];

/// A UTM zone's code for a datum family.
fn utm(datum: Datum, zone: u32, south: bool) -> Option<String> {
    if !(1..=60).contains(&zone) {
        return None;
    }
    let code = match (datum, south) {
        (Datum::Wgs84, false) => 32600 + zone,
        (Datum::Wgs84, true) => 32700 + zone,
        (Datum::Nad83, false) if zone <= 23 => 26900 + zone,
        (Datum::Nad27, false) if zone <= 22 => 26700 + zone,
        (Datum::Etrs89, false) if (28..=38).contains(&zone) => 25800 + zone,
        (Datum::Gda94, true) if (46..=59).contains(&zone) => 28300 + zone,
        _ => return None,
    };
    Some(format!("EPSG:{code}"))
}

/// `..._utm_zone_33n` → (33, south = false).
fn utm_zone_in_name(name: &str) -> Option<(u32, bool)> {
    let rest = &name[name.find("utm_zone_")? + "utm_zone_".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let zone = digits.parse().ok()?;
    let south = match rest[digits.len()..].chars().next() {
        Some('s') => true,
        Some('n') | None => false,
        _ => return None,
    };
    Some((zone, south))
}

/// Identify the CRS of an ESRI or OGC WKT1 text (a shapefile's `.prj`).
pub fn from_wkt(text: &str) -> Option<String> {
    let root = Parser {
        s: text.trim().trim_start_matches('\u{feff}').as_bytes(),
        pos: 0,
    }
    .value(0)?;
    if let Some(code) = root.authority() {
        return Some(code);
    }
    match root.keyword() {
        "GEOGCS" | "GEOGCRS" => Some(
            match datum(&root)? {
                Datum::Wgs84 => "EPSG:4326",
                Datum::Nad83 => "EPSG:4269",
                Datum::Nad27 => "EPSG:4267",
                Datum::Etrs89 => "EPSG:4258",
                Datum::Osgb36 => "EPSG:4277",
                Datum::Gda94 => "EPSG:4283",
            }
            .to_string(),
        ),
        "PROJCS" | "PROJCRS" => {
            let name = norm(root.name()?);
            if let Some((_, code)) = PROJECTED.iter().find(|(n, _)| *n == name) {
                return Some((*code).to_string());
            }
            let geog = root.child("GEOGCS")?;
            let d = datum(geog)?;
            if let Some((zone, south)) = utm_zone_in_name(&name) {
                return utm(d, zone, south);
            }
            // An unnamed UTM zone, recognised by its parameters.
            let method = root.child("PROJECTION").and_then(Wkt::name).map(norm)?;
            let k = root.param("scale_factor")?;
            let fe = root.param("false_easting")?;
            let fn_ = root.param("false_northing").unwrap_or(0.0);
            let lat0 = root.param("latitude_of_origin").unwrap_or(0.0);
            let cm = root.param("central_meridian")?;
            let zone = (cm + 183.0) / 6.0;
            if method == "transverse_mercator"
                && k == 0.9996
                && fe == 500000.0
                && lat0 == 0.0
                && zone.fract() == 0.0
                && (fn_ == 0.0 || fn_ == 10_000_000.0)
            {
                return utm(d, zone as u32, fn_ != 0.0);
            }
            None
        }
        _ => None,
    }
}

/// `AUTHORITY:CODE` from a PROJJSON object's `id` (or first of `ids`).
pub fn from_projjson(v: &serde_json::Value) -> Option<String> {
    let id = v
        .get("id")
        .or_else(|| v.get("ids").and_then(|ids| ids.get(0)))?;
    let auth = id.get("authority")?.as_str()?;
    let code = match id.get("code")? {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => n.to_string(),
        _ => return None,
    };
    Some(format!("{}:{}", auth.to_ascii_uppercase(), code))
}

/// `AUTHORITY:CODE` from an organisation name and a code, as GeoPackage and FlatGeobuf
/// store them; an organisation of `NONE` or a code ≤ 0 means undefined.
pub fn from_org_code(org: &str, code: i64) -> Option<String> {
    let org = org.trim();
    if code <= 0 || org.is_empty() || org.eq_ignore_ascii_case("none") {
        return None;
    }
    Some(format!("{}:{code}", org.to_ascii_uppercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_prj_files_are_identified() {
        let cases = [
            (
                r#"GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]"#,
                Some("EPSG:4326"),
            ),
            (
                r#"GEOGCS["GCS_North_American_1927",DATUM["D_North_American_1927",SPHEROID["Clarke_1866",6378206.4,294.9786982]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]"#,
                Some("EPSG:4267"),
            ),
            (
                r#"GEOGCS["GCS_ETRS_1989",DATUM["D_ETRS_1989",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]"#,
                Some("EPSG:4258"),
            ),
            (
                r#"PROJCS["British_National_Grid",GEOGCS["GCS_OSGB_1936",DATUM["D_OSGB_1936",SPHEROID["Airy_1830",6377563.396,299.3249646]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",400000.0],PARAMETER["False_Northing",-100000.0],PARAMETER["Central_Meridian",-2.0],PARAMETER["Scale_Factor",0.9996012717],PARAMETER["Latitude_Of_Origin",49.0],UNIT["Meter",1.0]]"#,
                Some("EPSG:27700"),
            ),
            (
                r#"PROJCS["WGS_1984_UTM_Zone_33N",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",500000.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",15.0],PARAMETER["Scale_Factor",0.9996],PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]"#,
                Some("EPSG:32633"),
            ),
            (
                r#"PROJCS["unnamed",GEOGCS["GCS_North_American_1983",DATUM["D_North_American_1983",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",500000.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",-75.0],PARAMETER["Scale_Factor",0.9996],PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]"#,
                Some("EPSG:26918"),
            ),
            (
                r#"PROJCS["WGS_1984_Web_Mercator_Auxiliary_Sphere",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Mercator_Auxiliary_Sphere"],PARAMETER["False_Easting",0.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",0.0],PARAMETER["Standard_Parallel_1",0.0],PARAMETER["Auxiliary_Sphere_Type",0.0],UNIT["Meter",1.0]]"#,
                Some("EPSG:3857"),
            ),
            (
                r#"PROJCS["ETRS89 / UTM zone 32N",GEOGCS["ETRS89",DATUM["European_Terrestrial_Reference_System_1989",SPHEROID["GRS 1980",6378137,298.257222101]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],UNIT["metre",1],AUTHORITY["EPSG","25832"]]"#,
                Some("EPSG:25832"),
            ),
            (
                r#"PROJCS["Some_Local_Grid",GEOGCS["GCS_Unknown",DATUM["D_Unknown",SPHEROID["S",1.0,1.0]]],PROJECTION["Foo"]]"#,
                None,
            ),
            ("not wkt at all [[[", None),
            ("", None),
        ];
        for (wkt, want) in cases {
            assert_eq!(from_wkt(wkt).as_deref(), want, "{wkt}");
        }
    }

    #[test]
    fn projjson_id_and_org_code() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"type":"GeographicCRS","id":{"authority":"EPSG","code":4326}}"#,
        )
        .unwrap();
        assert_eq!(from_projjson(&v).as_deref(), Some("EPSG:4326"));
        assert_eq!(from_org_code("epsg", 27700).as_deref(), Some("EPSG:27700"));
        assert_eq!(from_org_code("NONE", 0), None);
    }
}
