//! A contract line as a STAC Collection with the version extension v1.2.0 (`contracts export
//! stac`).
//!
//! Spatial data is found through STAC catalogues, and the version extension is where a
//! catalogue learns that a collection is deprecated and what replaces it. A line's window is
//! exactly that fact, so each line becomes one Collection, `<dataset>-v<line>.json`, linked to
//! its neighbours by relative hrefs (the files sit side by side in one directory).
//!
//! The publisher owns the Collection; the tool owns only the version facts. On a file that
//! already exists, `version`, `deprecated`, the version extension's entry in `stac_extensions`
//! and the links whose `rel` is one of [`OWNED_RELS`] are set; every other field is kept as it
//! was. The fields STAC requires (`description`, `license`, `extent`, ...) are written only
//! where the file has none, so a Collection written once and edited by hand keeps its edits.

use chrono::NaiveDate;
use serde_json::{json, Map, Value};

use crate::model::{ClauseValue, Contract, Line, LineState};

/// The STAC version a new Collection declares.
pub const STAC_VERSION: &str = "1.0.0";

/// The version extension's schema URL, as `stac_extensions` names it.
pub const VERSION_EXTENSION: &str = "https://stac-extensions.github.io/version/v1.2.0/schema.json";

/// Every version of the extension's schema URL starts so; an older entry is replaced.
const VERSION_EXTENSION_PREFIX: &str = "https://stac-extensions.github.io/version/";

/// The link relations this tool writes and replaces; links with any other `rel` are kept.
pub const OWNED_RELS: [&str; 4] = [
    "latest-version",
    "predecessor-version",
    "successor-version",
    "version-history",
];

/// The box of the whole world, the spatial extent when the contract gives none in longitude
/// and latitude.
const WORLD: [f64; 4] = [-180.0, -90.0, 180.0, 90.0];

/// The file (and Collection id, without `.json`) of line `major` of `dataset`.
pub fn file_name(dataset: &str, major: u64) -> String {
    format!("{}.json", collection_id(dataset, major))
}

fn collection_id(dataset: &str, major: u64) -> String {
    format!("{dataset}-v{major}")
}

/// What one Collection is built from.
pub struct Facts<'a> {
    /// Every line of the dataset, oldest first.
    pub lines: &'a [Line],
    /// The line this Collection describes (an index into `lines`).
    pub at: usize,
    /// The newest version of that line: description and envelope.
    pub newest: &'a Contract,
    pub today: NaiveDate,
    /// The dataset's registry page, when `[notify] registry_url` is set.
    pub history: Option<String>,
}

/// The Collection for `facts`: `existing` (a Collection already written, any fields) with the
/// version facts set, or a new Collection when there is none.
pub fn collection(facts: &Facts, existing: Option<Map<String, Value>>) -> Map<String, Value> {
    let line = &facts.lines[facts.at];
    let dataset = &facts.newest.dataset;
    let mut doc = existing.unwrap_or_default();
    let defaults = [
        ("type", json!("Collection")),
        ("stac_version", json!(STAC_VERSION)),
        ("id", json!(collection_id(dataset, line.major))),
        ("description", json!(description(facts.newest))),
        // A contract says nothing of licensing: the publisher names it.
        ("license", json!("proprietary")),
        ("extent", extent(line, facts.newest)),
    ];
    for (key, value) in defaults {
        doc.entry(key).or_insert(value);
    }
    doc.insert("version".into(), json!(line.newest().to_string()));
    doc.insert("deprecated".into(), json!(deprecated(facts)));

    let mut extensions: Vec<Value> = match doc.remove("stac_extensions") {
        Some(Value::Array(list)) => list
            .into_iter()
            .filter(|e| {
                e.as_str()
                    .is_none_or(|s| !s.starts_with(VERSION_EXTENSION_PREFIX))
            })
            .collect(),
        _ => Vec::new(),
    };
    extensions.push(json!(VERSION_EXTENSION));
    doc.insert("stac_extensions".into(), Value::Array(extensions));

    let mut links: Vec<Value> = match doc.remove("links") {
        Some(Value::Array(list)) => list
            .into_iter()
            .filter(|l| !l["rel"].as_str().is_some_and(|r| OWNED_RELS.contains(&r)))
            .collect(),
        _ => Vec::new(),
    };
    links.extend(version_links(facts));
    doc.insert("links".into(), Value::Array(links));
    doc
}

/// An old line is deprecated once a later line is live (its window is open), and stays so
/// once retired.
fn deprecated(facts: &Facts) -> bool {
    let line = &facts.lines[facts.at];
    line.state(facts.today) == LineState::Retired || line.superseded(facts.lines, facts.today)
}

fn version_links(facts: &Facts) -> Vec<Value> {
    let dataset = &facts.newest.dataset;
    let link = |rel: &str, major: u64| {
        json!({
            "rel": rel,
            "href": format!("./{}", file_name(dataset, major)),
            "type": "application/json",
        })
    };
    let mut out = Vec::new();
    // The latest version is the newest line live today; the latest line itself has no link
    // to itself, and a dataset none of whose lines is live has no latest.
    let latest = facts
        .lines
        .iter()
        .rposition(|l| l.state(facts.today) == LineState::Live);
    if let Some(i) = latest.filter(|&i| i != facts.at) {
        out.push(link("latest-version", facts.lines[i].major));
    }
    if let Some(prev) = facts.at.checked_sub(1) {
        out.push(link("predecessor-version", facts.lines[prev].major));
    }
    if let Some(next) = facts.lines.get(facts.at + 1) {
        out.push(link("successor-version", next.major));
    }
    if let Some(page) = &facts.history {
        out.push(json!({"rel": "version-history", "href": page, "type": "text/html"}));
    }
    out
}

fn description(c: &Contract) -> String {
    match &c.description {
        Some(d) if !d.trim().is_empty() => d.clone(),
        _ => format!("{}, contract line {}", c.dataset, c.version.major),
    }
}

/// The spatial extent is the `envelope` clause when the contract's CRS is geographic (STAC
/// boxes are longitude and latitude), else the whole world; the temporal extent is the line's
/// life, from its opening day to its sunset (open-ended while it has none).
fn extent(line: &Line, c: &Contract) -> Value {
    let geographic = matches!(
        c.clauses.get("crs").map(|cl| &cl.value),
        Some(ClauseValue::Value(toml::Value::String(crs))) if crate::model::crs::is_geographic_crs(crs)
    );
    let bbox = match c.clauses.get("envelope").map(|cl| &cl.value) {
        Some(ClauseValue::Bbox(e)) if geographic => [e.minx, e.miny, e.maxx, e.maxy],
        _ => WORLD,
    };
    let instant = |d: NaiveDate| format!("{d}T00:00:00Z");
    json!({
        "spatial": {"bbox": [bbox]},
        "temporal": {"interval": [[instant(line.opens), line.sunset.map(instant)]]},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_version_extension_is_replaced_not_doubled() {
        let line = Line {
            major: 1,
            opens: NaiveDate::from_ymd_opt(2026, 1, 1).unwrap(),
            sunset: None,
            source: None,
            versions: vec![semver::Version::new(1, 0, 0)],
        };
        let c = crate::model::parse_contract(
            "1.0.0.toml",
            "dataset = \"roads\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n[clauses]\n",
            &crate::model::KindTable::builtin(),
            crate::model::Strictness::Reading,
        )
        .unwrap();
        let facts = Facts {
            lines: std::slice::from_ref(&line),
            at: 0,
            newest: &c,
            today: NaiveDate::from_ymd_opt(2026, 6, 1).unwrap(),
            history: None,
        };
        let old = json!({"stac_extensions": [
            "https://stac-extensions.github.io/version/v1.0.0/schema.json",
            "https://example.org/other.json",
        ]});
        let got = collection(&facts, old.as_object().cloned());
        assert_eq!(
            got["stac_extensions"],
            json!(["https://example.org/other.json", VERSION_EXTENSION])
        );
    }
}
