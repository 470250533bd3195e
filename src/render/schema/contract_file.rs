//! The schemas of a contract file and of a release's manifest.

use std::collections::BTreeMap;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use super::{AttrType, Date, Dimension, GeometryType, SemVer};

/// A fraction (0..=1) for every attribute, or one per attribute: the bounds
/// `max_null_fraction` takes, as the parser checks them.
fn fraction_bounds(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "A fraction in 0..=1 for every attribute, or attribute name -> fraction",
        "anyOf": [
            { "type": "number", "minimum": 0.0, "maximum": 1.0 },
            { "type": "object",
              "additionalProperties": { "type": "number", "minimum": 0.0, "maximum": 1.0 } }
        ]
    })
}

/// Metric name -> upper bound: never negative, and a metric named `…_fraction` in 0..=1.
fn metric_bounds(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "additionalProperties": { "type": "number", "minimum": 0.0 },
        "patternProperties": {
            "_fraction$": { "type": "number", "minimum": 0.0, "maximum": 1.0 }
        }
    })
}

/// The built-in clauses. A custom clause may be any value; its kind is declared in
/// `contracts.toml` `[kinds]`.
#[derive(JsonSchema, Default)]
#[allow(dead_code)]
struct Clauses {
    /// fixed: the exact CRS, `AUTHORITY:CODE`
    crs: Option<String>,
    /// fixed: the unit of the coordinates
    units: Option<String>,
    /// widening: `[minx, miny, maxx, maxy]` in `crs`; minx > maxx crosses the antimeridian
    #[schemars(length(equal = 4))]
    envelope: Option<Vec<f64>>,
    /// widening: the geometry types a release may contain
    #[schemars(extend("uniqueItems" = true))]
    permitted_geometry: Option<Vec<GeometryType>>,
    /// fixed: the geometry types a release does contain
    #[schemars(extend("uniqueItems" = true))]
    emitted_geometry: Option<Vec<GeometryType>>,
    /// narrowing: the CRSs a release may be delivered in
    #[schemars(extend("uniqueItems" = true))]
    permitted_crs: Option<Vec<String>>,
    /// fixed: attribute name → type, always present
    required_attributes: Option<BTreeMap<String, AttrType>>,
    /// widening: attribute name → type, may be present
    optional_attributes: Option<BTreeMap<String, AttrType>>,
    /// fixed, key by key: attribute name → its meaning
    attribute_semantics: Option<BTreeMap<String, String>>,
    /// narrowing: the largest null fraction, overall or per attribute
    #[serde(default)]
    #[schemars(schema_with = "fraction_bounds")]
    max_null_fraction: Option<serde_json::Value>,
    /// narrowing: metric → upper bound
    #[serde(default)]
    #[schemars(schema_with = "metric_bounds")]
    metric_tolerances: Option<BTreeMap<String, f64>>,
    /// narrowing: the largest imputed fraction
    #[schemars(range(min = 0.0, max = 1.0))]
    max_imputed_fraction: Option<f64>,
    /// widening: the formats a release is published in
    #[schemars(extend("uniqueItems" = true))]
    supported_output_formats: Option<Vec<String>>,
    /// fixed: the coordinate dimensions
    #[schemars(extend("uniqueItems" = true))]
    dimensions: Option<Vec<Dimension>>,
    /// Custom clauses (declared in `contracts.toml` `[kinds]`).
    #[serde(flatten)]
    custom: BTreeMap<String, serde_json::Value>,
}

/// A contract file: `contracts/<dataset>/<version>.toml`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(super) struct ContractFile {
    /// Equals the folder name.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_-]{0,63}$"))]
    dataset: String,
    /// Equals the file stem.
    version: SemVer,
    /// The newest version before this one; absent only on the first version.
    supersedes: Option<SemVer>,
    /// The day this version becomes live.
    valid_from: Date,
    /// Major bumps only: the first day the previous line is no longer live (exclusive: its
    /// last day is the day before).
    sunset: Option<Date>,
    description: Option<String>,
    /// Clauses published but not yet enforced.
    #[schemars(extend("uniqueItems" = true))]
    advisory: Option<Vec<String>>,
    /// Envelope clauses that cross the antimeridian wider than 180° on purpose; any other
    /// such box is refused.
    #[schemars(extend("uniqueItems" = true))]
    wide_antimeridian: Option<Vec<String>>,
    #[serde(default)]
    clauses: Clauses,
    /// Clause keys announced to go away, by key: a clause (`crs`) or one member of it
    /// (`optional_attributes.pop_est`, `permitted_geometry.MultiPoint`).
    #[serde(default)]
    deprecated: BTreeMap<String, DeprecationEntry>,
    /// The ODCS document this contract was imported from (`contracts import odcs`).
    odcs: Option<OdcsKept>,
}

/// `[odcs]`: an imported ODCS document, kept for `export odcs`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct OdcsKept {
    /// The document's YAML text, verbatim.
    document: String,
}

/// One `[deprecated]` entry.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct DeprecationEntry {
    /// Why the key goes away.
    #[schemars(length(min = 1))]
    reason: String,
    /// What to use instead.
    replacement: Option<String>,
    /// The last day the key is promised (inclusive): the version that removes it may take
    /// effect the day after.
    remove_after: Date,
}

/// `release.toml`: what a release says about itself (`validate --manifest`).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(super) struct ManifestFile {
    /// The release's own version.
    version: Option<String>,
    /// The release's date.
    date: Option<Date>,
    /// Metrics that cannot be computed from the data, e.g. positional_rmse_m.
    metrics: Option<BTreeMap<String, f64>>,
}
