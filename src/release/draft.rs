//! A first contract drafted from a profile (`contracts new --from`): the clauses a release
//! shows, with measured limits rounded so the profiled data passes them. Pure text from a
//! profile and a day; the command prints it.

use std::fmt::Write as _;

use crate::model::history::toml_string;
use crate::model::value::is_geographic_crs;
use crate::release::Profile;

/// A TOML key: bare when it can be, quoted otherwise.
pub(crate) fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        k.to_string()
    } else {
        toml_string(k)
    }
}

/// A fraction rounded up to two decimals, so the drafted limit holds for the profiled data.
fn ceil2(x: f64) -> f64 {
    ((x * 100.0).ceil() / 100.0).min(1.0)
}

fn num(x: f64) -> String {
    toml::Value::Float(x).to_string()
}

fn list<'a>(items: impl IntoIterator<Item = &'a String>) -> String {
    let v: Vec<String> = items.into_iter().map(|i| toml_string(i)).collect();
    format!("[{}]", v.join(", "))
}

/// The draft's text for `dataset`, valid from `today`, filled from `p` when given.
pub fn draft(dataset: &str, today: chrono::NaiveDate, p: Option<&Profile>) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "# Draft first contract for `{dataset}`.");
    if let Some(p) = p {
        let _ = writeln!(t, "# Drafted from a profile of: {}", p.files.join(", "));
        let _ = writeln!(
            t,
            "# A profile says what this release contains, not what you promise: review every clause."
        );
    }
    let _ = writeln!(t, "dataset     = {}", toml_string(dataset));
    let _ = writeln!(t, "version     = \"1.0.0\"");
    let _ = writeln!(t, "valid_from  = {today}");
    let _ = writeln!(t, "description = \"TODO: what this dataset is\"");
    let Some(p) = p else {
        let _ = writeln!(t, "\n[clauses]\n# crs = \"EPSG:4326\"");
        return t;
    };
    let _ = writeln!(
        t,
        "# Advisory note: clauses listed in `advisory` are published but not enforced; a release\n\
         # that fails them gets a warning and, with `validate --record`, a record. Measured limits\n\
         # start advisory here; `contracts advisory {dataset}` shows how many releases they would\n\
         # have failed, and a later minor version may enforce them."
    );
    let advisory = if p.attributes.values().any(|a| a.nulls > 0) {
        "[\"max_null_fraction\", \"metric_tolerances\"]"
    } else {
        "[\"metric_tolerances\"]"
    };
    let _ = writeln!(t, "advisory    = {advisory}");
    let _ = writeln!(t, "\n[clauses]");
    match &p.crs {
        Some(crs) => {
            let _ = writeln!(t, "crs                      = {}", toml_string(crs));
        }
        None => {
            let _ = writeln!(
                t,
                "# crs = \"?\"   # the release's CRS could not be identified; fill it in"
            );
        }
    }
    if let Some(e) = p.envelope {
        let e: [f64; 4] = e.into();
        let e = if p.crs.as_deref().is_some_and(is_geographic_crs) {
            // A geographic envelope must lie within the globe; writers' float noise
            // (180.00000000000006) is tolerated by `validate`.
            [
                e[0].max(-180.0),
                e[1].max(-90.0),
                e[2].min(180.0),
                e[3].min(90.0),
            ]
        } else {
            e
        };
        let _ = writeln!(
            t,
            "envelope                 = [{}, {}, {}, {}]",
            num(e[0]),
            num(e[1]),
            num(e[2]),
            num(e[3])
        );
    }
    if !p.geometry_types.is_empty() {
        let types: Vec<String> = p.geometry_types.iter().map(|g| g.to_string()).collect();
        let _ = writeln!(t, "permitted_geometry       = {}", list(&types));
        let _ = writeln!(t, "emitted_geometry         = {}", list(&types));
    }
    if !p.dimensions.is_empty() {
        let dims: Vec<String> = p.dimensions.iter().map(|d| d.to_string()).collect();
        let _ = writeln!(t, "dimensions               = {}", list(&dims));
    }
    let attrs = |required: bool| {
        let v: Vec<String> = p
            .attributes
            .iter()
            .filter(|(_, a)| (a.nulls == 0) == required)
            .map(|(n, a)| format!("{} = {}", key(n), toml_string(a.ty.as_str())))
            .collect();
        (!v.is_empty()).then(|| format!("{{ {} }}", v.join(", ")))
    };
    if let Some(a) = attrs(true) {
        let _ = writeln!(
            t,
            "required_attributes      = {a}   # never null in this release"
        );
    }
    if let Some(a) = attrs(false) {
        let _ = writeln!(
            t,
            "optional_attributes      = {a}   # null somewhere in this release"
        );
    }
    let nulls: Vec<String> = p
        .attributes
        .iter()
        .filter(|(_, a)| a.nulls > 0)
        .map(|(n, a)| format!("{} = {}", key(n), num(ceil2(a.null_fraction))))
        .collect();
    if !nulls.is_empty() {
        let _ = writeln!(t, "max_null_fraction        = {{ {} }}", nulls.join(", "));
    }
    let m = |k: &str| ceil2(p.metrics.get(k).copied().unwrap_or(0.0));
    let _ = writeln!(
        t,
        "metric_tolerances        = {{ invalid_geometry_fraction = {}, null_geometry_fraction = {} }}",
        num(m("invalid_geometry_fraction")),
        num(m("null_geometry_fraction"))
    );
    let _ = writeln!(t, "supported_output_formats = [{}]", toml_string(&p.format));
    t
}
