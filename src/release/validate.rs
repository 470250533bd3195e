//! Validation of a release against every live contract of its dataset
//! (docs/src/commands/validate.md).
//!
//! Pure: a profile, an optional manifest and the live contracts go in, a report comes out.
//! No file, no clock: the caller passes everything, so a validation can be replayed exactly.
//!
//! Each clause of each contract gets one result: `pass`, `fail`, `advisory-fail` (the clause
//! is listed in the contract's `advisory`: reported and recorded, never failing the release)
//! or `not-evaluated` (this build cannot measure it, or the figure it needs is missing;
//! a clause that cannot be evaluated never fails a release).

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toml::Spanned;

use crate::model::contract::toml_date;
use crate::model::location::from_toml;
use crate::model::{
    Check as Rule, Clause, ClauseValue, Contract, Envelope, Located, Shape, TomlErrors,
};

use super::Profile;

/// A release manifest (`release.toml`): what the data cannot say about itself.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Manifest {
    pub version: Option<String>,
    pub date: Option<NaiveDate>,
    /// Figures measured outside the data (`positional_rmse_m`, `imputed_fraction`, ...).
    pub metrics: BTreeMap<String, f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    version: Option<String>,
    date: Option<Spanned<toml::value::Datetime>>,
    #[serde(default)]
    metrics: BTreeMap<String, Spanned<toml::Value>>,
}

/// Parse `release.toml` strictly: unknown keys, a date that is not a date and a metric that
/// is not a finite number are errors with their line and column.
pub fn parse_manifest(file: &str, text: &str) -> Result<Manifest, TomlErrors> {
    let raw: RawManifest = from_toml(file, text)?;
    let mut errors = Vec::new();
    let date = match &raw.date {
        None => None,
        Some(d) => match toml_date(d.get_ref()) {
            Ok(d) => Some(d),
            Err(e) => {
                errors.push(Located::at(
                    file,
                    text,
                    Some(d.span()),
                    format!("date: {e}"),
                ));
                None
            }
        },
    };
    let mut metrics = BTreeMap::new();
    for (k, v) in &raw.metrics {
        let n = match v.get_ref() {
            toml::Value::Float(f) if f.is_finite() => Some(*f),
            toml::Value::Integer(i) => Some(*i as f64),
            _ => None,
        };
        match n {
            Some(n) => {
                metrics.insert(k.clone(), n);
            }
            None => errors.push(Located::at(
                file,
                text,
                Some(v.span()),
                format!("metric `{k}` must be a finite number"),
            )),
        }
    }
    if !errors.is_empty() {
        return Err(TomlErrors::in_line_order(errors));
    }
    Ok(Manifest {
        version: raw.version,
        date,
        metrics,
    })
}

/// One clause's verdict on a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Pass,
    Fail,
    AdvisoryFail,
    NotEvaluated,
    /// An enforced clause failed, and every failing key is covered by a live waiver: it does
    /// not fail the release.
    Waived,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::AdvisoryFail => "advisory-fail",
            Status::NotEvaluated => "not-evaluated",
            Status::Waived => "waived",
        }
    }

    /// Whether the release fell short of the clause, enforced or not.
    pub fn is_failure(self) -> bool {
        matches!(self, Status::Fail | Status::AdvisoryFail | Status::Waived)
    }
}

crate::model::display_as!(as_str: Status);

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClauseResult {
    /// The clause name; `metric_tolerances.<metric>` for one tolerance.
    pub clause: String,
    pub status: Status,
    pub advisory: bool,
    pub measured: Option<Value>,
    pub limit: Option<Value>,
    /// Why a clause failed or was not evaluated, in words.
    pub reason: Option<String>,
    /// The waivers that excuse a failure, for a `waived` result.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waivers: Vec<WaiverNote>,
}

/// A waiver as a waived result names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaiverNote {
    pub id: String,
    /// The key it covers (`clause` or `clause.key`).
    pub clause: String,
    pub until: NaiveDate,
    pub by: String,
    pub reason: String,
}

impl WaiverNote {
    /// `waived (until DATE, by WHO: reason)`.
    pub fn describe(&self) -> String {
        format!(
            "waived (until {}, by {}: {})",
            self.until, self.by, self.reason
        )
    }
}

/// The keys of a failed map-valued result that fail, as (key, measured, limit): a type that
/// differs or is missing (measured `null`), or a number over its bound. `None` when the
/// result passed, is not a map on both sides, or no single key can be blamed.
pub fn failing_keys(x: &ClauseResult) -> Option<Vec<(String, Value, Value)>> {
    if !x.status.is_failure() {
        return None;
    }
    let (Some(Value::Object(measured)), Some(Value::Object(limit))) = (&x.measured, &x.limit)
    else {
        return None;
    };
    let keys: Vec<(String, Value, Value)> = limit
        .iter()
        .filter_map(|(k, want)| {
            let got = measured.get(k).unwrap_or(&Value::Null);
            let fails = match (got, want) {
                (Value::Number(g), Value::Number(w)) => {
                    g.as_f64().zip(w.as_f64()).is_some_and(|(g, w)| g > w)
                }
                // Present in the limit, absent from the release: a missing attribute.
                (Value::Null, _) => measured.contains_key(k),
                (g, w) => g != w,
            };
            fails.then(|| (k.clone(), got.clone(), want.clone()))
        })
        .collect();
    (!keys.is_empty()).then_some(keys)
}

/// Apply the live waivers of `today`: an enforced failure whose clause, or each of whose
/// failing keys, is covered on the contract's line becomes `waived`, and the release passes
/// when nothing else fails. Past a waiver's `until` (or once revoked) it covers nothing, so
/// the same release fails again with no action needed.
pub fn apply_waivers(
    report: &mut Report,
    waivers: &crate::model::waiver::Waivers,
    today: NaiveDate,
) {
    for c in &mut report.contracts {
        for x in c.results.iter_mut().filter(|x| x.status == Status::Fail) {
            let note = |w: &crate::model::waiver::Waiver| WaiverNote {
                id: w.id.clone(),
                clause: w.clause.clone(),
                until: w.until,
                by: w.by.clone(),
                reason: w.reason.clone(),
            };
            let notes: Option<Vec<WaiverNote>> =
                match waivers.covering(today, c.line, &x.clause, None) {
                    Some(w) => Some(vec![note(w)]),
                    None => failing_keys(x).and_then(|keys| {
                        let mut notes: Vec<WaiverNote> = Vec::new();
                        for (k, _, _) in keys {
                            let w = waivers.covering(today, c.line, &x.clause, Some(&k))?;
                            if !notes.iter().any(|n| n.id == w.id) {
                                notes.push(note(w));
                            }
                        }
                        Some(notes)
                    }),
                };
            if let Some(notes) = notes {
                x.status = Status::Waived;
                x.waivers = notes;
            }
        }
        c.passed = c.results.iter().all(|r| r.status != Status::Fail);
    }
    report.passed = report.contracts.iter().all(|c| c.passed);
}

impl Report {
    /// The ids of the waivers this report applied, each once, in order.
    pub fn waiver_ids(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for n in self
            .contracts
            .iter()
            .flat_map(|c| &c.results)
            .flat_map(|x| &x.waivers)
        {
            if !out.contains(&n.id) {
                out.push(n.id.clone());
            }
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContractReport {
    pub dataset: String,
    pub version: String,
    pub line: u64,
    pub passed: bool,
    pub results: Vec<ClauseResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub dataset: String,
    pub release: Manifest,
    /// True when every enforced clause of every live contract passed.
    pub passed: bool,
    pub contracts: Vec<ContractReport>,
    pub profile: Profile,
    /// What the readers warned of while profiling (e.g. GeoParquet metadata that contradicts
    /// its data): said, never a result. Absent when they warned of nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// What a single check found, before the advisory rule is applied.
enum Found {
    Pass,
    Fail(String),
    NotEvaluated(String),
}

struct Check {
    found: Found,
    measured: Option<Value>,
}

fn check(ok: bool, measured: Value, why: impl FnOnce() -> String) -> Check {
    Check {
        found: if ok { Found::Pass } else { Found::Fail(why()) },
        measured: Some(measured),
    }
}

fn not_evaluated(reason: impl Into<String>) -> Check {
    Check {
        found: Found::NotEvaluated(reason.into()),
        measured: None,
    }
}

/// CRS identifiers name the same system: the one equivalence rule of [`crate::model::crs`].
pub fn same_crs(a: &str, b: &str) -> bool {
    crate::model::crs::same_crs(a, b)
}

/// Format names as a contract may write them.
fn same_format(a: &str, b: &str) -> bool {
    let canon = |s: &str| match s.trim().to_ascii_lowercase().as_str() {
        "gpkg" | "geopackage" => "gpkg".to_string(),
        "geoparquet" | "parquet" => "geoparquet".to_string(),
        "flatgeobuf" | "fgb" => "flatgeobuf".to_string(),
        "shapefile" | "esri shapefile" | "shp" => "shapefile".to_string(),
        other => other.to_string(),
    };
    canon(a) == canon(b)
}

/// An envelope edge within this relative distance of its limit counts as on it: float noise
/// from a writer (180.00000000000006) is not a breach of `[-180, -90, 180, 90]`.
const EDGE_TOLERANCE: f64 = 1e-9;

fn snap(measured: Envelope, limit: &Envelope) -> Envelope {
    let s = |m: f64, l: f64| {
        if (m - l).abs() <= EDGE_TOLERANCE * l.abs().max(1.0) {
            l
        } else {
            m
        }
    };
    Envelope {
        minx: s(measured.minx, limit.minx),
        miny: s(measured.miny, limit.miny),
        maxx: s(measured.maxx, limit.maxx),
        maxy: s(measured.maxy, limit.maxy),
    }
}

/// A metric's value: measured from the data first (a manifest cannot overrule the data),
/// then declared in the manifest.
fn metric(name: &str, profile: &Profile, manifest: Option<&Manifest>) -> Option<f64> {
    profile
        .metrics
        .get(name)
        .or_else(|| manifest.and_then(|m| m.metrics.get(name)))
        .copied()
}

/// The release's geometry type names, for comparison with a clause's set.
fn type_names(p: &Profile) -> BTreeSet<String> {
    p.geometry_types.iter().map(|t| t.to_string()).collect()
}

fn names(set: &BTreeSet<String>) -> Value {
    json!(set)
}

/// Evaluate one clause by its row's [`Check`]; a per-metric check yields one result per metric.
fn evaluate(
    name: &str,
    clause: &Clause,
    p: &Profile,
    manifest: Option<&Manifest>,
) -> Vec<(String, Check, Option<Value>)> {
    let limit = Some(clause.value.to_json());
    let one = |c: Check| vec![(name.to_string(), c, limit.clone())];
    let v = &clause.value;
    match (clause.spec.check, v) {
        (Rule::CrsEquals, ClauseValue::Value(toml::Value::String(want))) => one(match &p.crs {
            Some(crs) => check(same_crs(crs, want), json!(crs), || {
                format!("the release is in {crs}, the contract says {want}")
            }),
            None => check(false, Value::Null, || {
                "the release's CRS is unknown, so it cannot be shown to be the contract's".into()
            }),
        }),
        (Rule::CrsListed, ClauseValue::Set(set)) => one(match &p.crs {
            Some(crs) => check(set.iter().any(|s| same_crs(s, crs)), json!(crs), || {
                format!("{crs} is not a permitted CRS")
            }),
            None => check(false, Value::Null, || "the release's CRS is unknown".into()),
        }),
        (Rule::EnvelopeInside, ClauseValue::Bbox(limit_env)) => one(match p.envelope {
            // No coordinate at all lies outside any envelope.
            None => check(true, Value::Null, String::new),
            Some(e) => check(limit_env.contains(&snap(e, limit_env)), json!(e), || {
                "the release's envelope reaches outside the contract's".into()
            }),
        }),
        (Rule::TypesSubset, ClauseValue::Set(set)) => {
            let have = type_names(p);
            let extra: Vec<&String> = have.difference(set).collect();
            one(check(extra.is_empty(), names(&have), || {
                format!("not permitted: {}", join(&extra))
            }))
        }
        (Rule::TypesEqual, ClauseValue::Set(set)) => {
            let have = type_names(p);
            one(check(&have == set, names(&have), || {
                not_exactly(
                    &have,
                    set,
                    "the release must emit exactly the contract's types",
                    "emitted",
                )
            }))
        }
        (Rule::DimensionsEqual, ClauseValue::Set(set)) => {
            let have: BTreeSet<String> = p.dimensions.iter().map(|d| d.to_string()).collect();
            one(check(&have == set, names(&have), || {
                not_exactly(
                    &have,
                    set,
                    "the release's coordinates must have exactly the contract's dimensions",
                    "present",
                )
            }))
        }
        (rule @ (Rule::AttributesPresent | Rule::AttributesTyped), ClauseValue::Map(map)) => {
            let required = rule == Rule::AttributesPresent;
            let mut measured = serde_json::Map::new();
            let mut wrong = Vec::new();
            for (attr, want) in map {
                match p.attributes.get(attr) {
                    Some(a) => {
                        measured.insert(attr.clone(), json!(a.ty.as_str()));
                        if a.ty.as_str() != want {
                            wrong.push(format!("`{attr}` is {}, not {want}", a.ty));
                        }
                    }
                    None if required => {
                        measured.insert(attr.clone(), Value::Null);
                        wrong.push(format!("`{attr}` is missing"));
                    }
                    None => {}
                }
            }
            one(check(wrong.is_empty(), Value::Object(measured), || {
                wrong.join("; ")
            }))
        }
        (Rule::NullFractions, ClauseValue::UpperBounds(bounds)) => {
            let mut measured = serde_json::Map::new();
            let mut over = Vec::new();
            for (attr, a) in &p.attributes {
                if let Some(max) = bounds.limit(attr) {
                    measured.insert(attr.clone(), json!(a.null_fraction));
                    if a.null_fraction > max {
                        over.push(format!("`{attr}` {:.4} > {max}", a.null_fraction));
                    }
                }
            }
            one(check(over.is_empty(), Value::Object(measured), || {
                over.join("; ")
            }))
        }
        (Rule::MetricLimits, ClauseValue::UpperBounds(bounds)) => {
            let mut out = Vec::new();
            if let Some(all) = bounds.all {
                out.push((
                    name.to_string(),
                    not_evaluated(format!(
                        "a single tolerance ({all}) names no metric; write {{ metric = limit }}"
                    )),
                    limit.clone(),
                ));
            }
            for (m, max) in &bounds.keys {
                let c = match metric(m, p, manifest) {
                    Some(v) => check(v <= *max, json!(v), || format!("{m} = {v} > {max}")),
                    None => not_evaluated(format!(
                        "metric `{m}` is neither measured from the data nor given in the manifest"
                    )),
                };
                out.push((format!("{name}.{m}"), c, Some(json!(max))));
            }
            out
        }
        (Rule::FormatListed, ClauseValue::Set(set)) => one(check(
            set.iter().any(|f| same_format(f, &p.format)),
            json!(p.format),
            || format!("{} is not a supported output format", p.format),
        )),
        (Rule::NotEvaluated(why), _) => one(not_evaluated(why)),
        _ => one(match (&clause.spec.metric, v) {
            (Some(m), ClauseValue::UpperBound(max)) => match metric(m, p, manifest) {
                Some(x) => check(x <= *max, json!(x), || format!("{m} = {x} > {max}")),
                None => not_evaluated(format!(
                    "metric `{m}` is not measured and not in the manifest"
                )),
            },
            (Some(m), ClauseValue::LowerBound(min)) => match metric(m, p, manifest) {
                Some(x) => check(x >= *min, json!(x), || format!("{m} = {x} < {min}")),
                None => not_evaluated(format!(
                    "metric `{m}` is not measured and not in the manifest"
                )),
            },
            (Some(m), _) => not_evaluated(format!(
                "a {} clause cannot be checked against metric `{m}`",
                shape_name(clause.spec.shape)
            )),
            (None, _) => not_evaluated("the clause names no metric to check it against"),
        }),
    }
}

fn shape_name(s: Shape) -> &'static str {
    s.as_str()
}

fn join(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Validate a profiled release against every live contract.
pub fn validate(
    dataset: &str,
    profile: &Profile,
    manifest: Option<&Manifest>,
    contracts: &[Contract],
) -> Report {
    let mut reports = Vec::new();
    for c in contracts {
        let mut results = Vec::new();
        for (name, clause) in &c.clauses {
            let advisory = c.is_advisory(name);
            for (label, ch, limit) in evaluate(name, clause, profile, manifest) {
                let (status, reason) = match ch.found {
                    Found::Pass => (Status::Pass, None),
                    Found::Fail(why) if advisory => (Status::AdvisoryFail, Some(why)),
                    Found::Fail(why) => (Status::Fail, Some(why)),
                    Found::NotEvaluated(why) => (Status::NotEvaluated, Some(why)),
                };
                results.push(ClauseResult {
                    clause: label,
                    status,
                    advisory,
                    measured: ch.measured,
                    limit,
                    reason,
                    waivers: Vec::new(),
                });
            }
        }
        for (name, value) in &c.unknown {
            results.push(ClauseResult {
                clause: name.clone(),
                status: Status::NotEvaluated,
                advisory: c.is_advisory(name),
                measured: None,
                limit: serde_json::to_value(value).ok(),
                reason: Some("this build has no kind for this clause".to_string()),
                waivers: Vec::new(),
            });
        }
        results.sort_by(|a, b| a.clause.cmp(&b.clause));
        let passed = results.iter().all(|r| r.status != Status::Fail);
        reports.push(ContractReport {
            dataset: c.dataset.clone(),
            version: c.version.to_string(),
            line: c.line(),
            passed,
            results,
        });
    }
    Report {
        dataset: dataset.to_string(),
        release: manifest.cloned().unwrap_or_default(),
        passed: reports.iter().all(|r| r.passed),
        contracts: reports,
        profile: profile.clone(),
        warnings: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crs84_and_4326_are_one_system_but_others_differ() {
        assert!(same_crs("OGC:CRS84", "EPSG:4326"));
        assert!(same_crs("epsg:27700", "EPSG:27700"));
        assert!(!same_crs("EPSG:4326", "EPSG:4258"));
    }

    #[test]
    fn the_manifest_is_strict_and_located() {
        let m = parse_manifest(
            "r.toml",
            "version = \"1\"\ndate = 2026-01-02\nmetrics = { imputed_fraction = 0.1, n = 3 }\n",
        )
        .unwrap();
        assert_eq!(m.metrics["n"], 3.0);
        assert_eq!(m.date, NaiveDate::from_ymd_opt(2026, 1, 2));
        let e = parse_manifest("r.toml", "version = \"1\"\nmetrics = { a = \"x\" }\n").unwrap_err();
        assert_eq!((e.0[0].line, e.0[0].column), (2, 17));
        let e = parse_manifest("r.toml", "date = 2026-01-02T10:00:00Z\n").unwrap_err();
        assert_eq!(e.0[0].line, 1);
        assert!(parse_manifest("r.toml", "verison = \"1\"\n").is_err());
    }

    #[test]
    fn an_envelope_edge_within_float_noise_is_on_the_limit() {
        let limit = Envelope {
            minx: -180.0,
            miny: -90.0,
            maxx: 180.0,
            maxy: 90.0,
        };
        let e = |a: [f64; 4]| snap(Envelope::from(a), &limit);
        assert!(limit.contains(&e([-180.0, -90.0, 180.00000000000006, 83.6])));
        assert!(!limit.contains(&e([-180.0, -90.0, 180.001, 83.6])));
    }
}

/// What differs between two sets, in words, naming only the sides that are not empty:
/// "Polygon is missing", "Point is not in the contract but is emitted", or both.
/// Why `have` is not exactly the contract's `set`: `rule`, then what is extra (`verb`) and
/// what is missing.
fn not_exactly(have: &BTreeSet<String>, set: &BTreeSet<String>, rule: &str, verb: &str) -> String {
    let extra: Vec<&String> = have.difference(set).collect();
    let missing: Vec<&String> = set.difference(have).collect();
    format!("{rule}: {}", set_difference(&extra, &missing, verb))
}

fn set_difference(extra: &[&String], missing: &[&String], verb: &str) -> String {
    let list = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!(
            "{} {} missing",
            list(missing),
            if missing.len() == 1 { "is" } else { "are" }
        ));
    }
    if !extra.is_empty() {
        parts.push(format!(
            "{} {} {verb} but not in the contract",
            list(extra),
            if extra.len() == 1 { "is" } else { "are" }
        ));
    }
    parts.join("; ")
}

#[cfg(test)]
mod wording_tests {
    use super::set_difference;

    #[test]
    fn only_the_sides_that_differ_are_named() {
        let polygon = "Polygon".to_string();
        let point = "Point".to_string();
        assert_eq!(
            set_difference(&[], &[&polygon], "emitted"),
            "Polygon is missing"
        );
        assert_eq!(
            set_difference(&[&point], &[&polygon], "emitted"),
            "Polygon is missing; Point is emitted but not in the contract"
        );
    }
}
