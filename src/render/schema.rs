//! JSON Schemas of the store's hand-edited files, generated with `schemars` from the types
//! below, so that editors (Taplo / Even Better TOML) complete and check them as they are typed.
//! It lives with the renderers, not in `model`, because it covers `consumers.toml` too, whose
//! kinds are the consumers room's types, and `model` imports nothing of the project. Pure:
//! `contracts schema` (`src/cli/schema.rs`) writes what [`schemas`] returns.
//!
//! The parsers read TOML through serde into span-carrying raw types (`Spanned`, TOML dates,
//! raw `toml::Value`s checked by hand) that have no JSON Schema of their own, and deriving one
//! from them would describe the spans, not the file. So the tables are restated here, key for
//! key, with the same `deny_unknown_fields`; every list of names (geometry and attribute types,
//! dimensions, shapes, kinds, log formats, TLS modes, ...) comes from the model's own enums and
//! their lists, never a second copy. Tests in `tests/test_schema.rs` keep the rest honest: the
//! committed `schema/` files equal what this build generates; every table's keys are exactly
//! the keys its parser takes (read from the parser's own refusal of an unknown key); every
//! real file validates; and every file a parser refuses on a static bound, the schema refuses.

use std::collections::BTreeMap;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use crate::consumers::{ConsumerKind, WebhookKind};
use crate::model::config::{NewClauses, Tls};
use crate::model::kind::Kind;
use crate::model::{kind, source, spatial};

/// A TOML local date (`2027-01-01`); a TOML-to-JSON editor sees it as a string.
struct Date;

impl JsonSchema for Date {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Date".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "format": "date",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
            "description": "A TOML local date, e.g. 2027-01-01"
        })
    }
}

/// A semantic version, e.g. `2.0.0`.
struct SemVer;

impl JsonSchema for SemVer {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SemVer".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$",
            "description": "A semantic version, e.g. 2.0.0"
        })
    }
}

/// A string that is one of `names`: the names a model enum lists for itself, which its parser
/// matches against.
fn one_of(names: impl IntoIterator<Item = &'static str>, description: &str) -> Schema {
    let names: Vec<&str> = names.into_iter().collect();
    json_schema!({ "type": "string", "enum": names, "description": description })
}

/// A JSON Schema for the names in a model enum's own list.
macro_rules! names_of {
    ($marker:ident, $title:literal, $names:expr, $description:literal) => {
        struct $marker;

        impl JsonSchema for $marker {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $title.into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                one_of($names, $description)
            }
        }
    };
}

names_of!(
    GeometryType,
    "GeometryType",
    spatial::GeometryType::ALL.map(spatial::GeometryType::name),
    "An OGC simple-feature geometry type"
);
names_of!(
    AttrType,
    "AttrType",
    spatial::AttrType::ALL.map(spatial::AttrType::as_str),
    "An attribute type"
);
names_of!(
    Dimension,
    "Dimension",
    spatial::Dimension::ALL.map(spatial::Dimension::as_str),
    "The coordinate dimensions"
);
names_of!(
    ShapeName,
    "Shape",
    kind::Shape::CUSTOM.map(kind::Shape::as_str),
    "A shape a custom clause may have"
);
names_of!(
    LogFormat,
    "LogFormat",
    source::LogFormat::ALL.map(source::LogFormat::as_str),
    "What a log is written as"
);
names_of!(
    AtUnit,
    "AtUnit",
    source::AtUnit::ALL.map(source::AtUnit::name),
    "How `at` is written: RFC 3339 text, or epoch seconds (s) or milliseconds (ms) as a number"
);

/// A dataset name, as `is_dataset_name` checks it.
const DATASET_NAME: &str = r"^[a-z0-9][a-z0-9_-]{0,63}$";

/// A consumer or webhook name, as `is_consumer_name` checks it.
const CONSUMER_NAME: &str = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$";

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
struct ContractFile {
    /// Equals the folder name.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_-]{0,63}$"))]
    dataset: String,
    /// Equals the file stem.
    version: SemVer,
    /// The newest version before this one; absent only on the first version.
    supersedes: Option<SemVer>,
    /// The day this version becomes live.
    valid_from: Date,
    /// Major bumps only: the day the previous line stops being published.
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
}

#[derive(JsonSchema, Default)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StoreSection {
    /// The commit the immutability proofs start from.
    since: Option<String>,
    /// The git remote writers fetch from before and push to after each commit (`origin`).
    remote: Option<String>,
}

#[derive(JsonSchema, Default)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Policy {
    /// A major bump's window (sunset - valid_from) is at least this long [90].
    #[schemars(range(min = 0))]
    min_window_days: Option<i64>,
    /// ... and at most this long [365].
    #[schemars(range(min = 0))]
    max_window_days: Option<i64>,
    /// Whether a newly added clause must be advisory in the version that adds it [advisory].
    new_clauses: Option<NewClauses>,
    /// The longest a waiver may run, from its grant to its `until` [90].
    #[schemars(range(min = 0))]
    max_waiver_days: Option<i64>,
}

#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct CustomKind {
    kind: Kind,
    shape: ShapeName,
    /// The profile figure or manifest metric `validate` checks the clause against.
    metric: Option<String>,
}

/// `[kinds]`: a clause name (`[a-z][a-z0-9_]*`) that no built-in clause has → its kind.
fn custom_kinds(generator: &mut SchemaGenerator) -> Schema {
    let row = generator.subschema_for::<CustomKind>();
    let builtin: Vec<&str> = kind::BUILTIN.iter().map(|b| b.name).collect();
    json_schema!({
        "type": "object",
        "propertyNames": {
            "pattern": "^[a-z][a-z0-9_]*$",
            "not": { "enum": builtin }
        },
        "additionalProperties": row
    })
}

#[derive(JsonSchema, Default)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Notify {
    /// Milestones, in days before a sunset [60, 30, 14, 7, 1].
    #[schemars(extend("items" = { "type": "integer", "minimum": 0 }))]
    days_before: Option<Vec<u32>>,
    /// After a sunset, a reminder this often while a consumer still reads the old line [7].
    #[schemars(range(min = 1))]
    overdue_every_days: Option<i64>,
    /// The sender mailbox.
    from: Option<String>,
    /// Where `contracts site` is published; notices link to `<registry_url>/<dataset>.html`.
    #[schemars(regex(pattern = r"^(https?|file)://\S+$"))]
    registry_url: Option<String>,
    /// Minutes a claimed notice with no confirmation is taken for a run still sending; after
    /// that, for a run that died, and sent again [60].
    #[schemars(range(min = 0))]
    claim_stale_minutes: Option<i64>,
    /// Seconds one webhook request may take before it is retried as a timeout [10].
    #[schemars(range(min = 1, max = 300))]
    webhook_timeout_seconds: Option<u64>,
    /// Announce each window when it opens (the `published` notice) [true].
    announce: Option<bool>,
    /// A PEM file of root certificates webhook deliveries trust beside the system's, relative
    /// to the store root.
    ca_file: Option<String>,
}

#[derive(JsonSchema, Default)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Smtp {
    host: Option<String>,
    port: Option<u16>,
    /// `none` only to a loopback host.
    tls: Option<Tls>,
    /// The name of the environment variable holding the user name (never the secret).
    username_env: Option<String>,
    /// The name of the environment variable holding the password (never the secret).
    password_env: Option<String>,
    timeout_seconds: Option<u64>,
    /// The former name of `timeout_seconds`, still read.
    #[schemars(extend("deprecated" = true))]
    timeout_secs: Option<u64>,
    /// A PEM file of root certificates the relay's TLS trusts beside the system's, relative
    /// to the store root.
    ca_file: Option<String>,
}

#[derive(JsonSchema, Default)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Consumption {
    /// Globs relative to the store root, read with the default mapping: JSON Lines (.jsonl,
    /// .ndjson), CSV (.csv), each optionally .gz, or Parquet (.parquet). Default
    /// `["consumption/*.jsonl"]` when no `[[consumption.source]]` table is given.
    sources: Option<Vec<String>>,
    /// Consumption sources with their format and field mapping.
    source: Option<Vec<SourceTable>>,
    #[schemars(range(min = 1))]
    lookback_days: Option<i64>,
    /// A consumer with no read in this many days is `stale` (at most lookback_days;
    /// default 30, or lookback_days when shorter).
    #[schemars(range(min = 1))]
    stale_after_days: Option<i64>,
    /// A consumer with fewer reads of a line in the lookback is incidental on it: it does not
    /// hold the line back from retiring [1].
    #[schemars(range(min = 1))]
    min_reads: Option<u64>,
    /// A consumer whose reads of a line fall on fewer distinct days is incidental on it (at
    /// most lookback_days) [1].
    #[schemars(range(min = 1))]
    min_days: Option<u64>,
    /// Access logs: a principal's requests for one object within this many seconds of its
    /// previous one are one read (default 60).
    #[schemars(range(min = 0))]
    same_read_seconds: Option<i64>,
}

/// A field name: dotted (`client.id` reaches into nested objects) or an array of keys, each
/// taken whole (`["client.id"]` is one key with a dot).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum FieldName {
    /// No key is empty: not `a..b`, `.a` or `a.`.
    Dotted(#[schemars(regex(pattern = r"^[^.]+(\.[^.]+)*$"))] String),
    #[schemars(extend("items" = { "type": "string", "minLength": 1 }))]
    Keys(#[schemars(length(min = 1))] Vec<String>),
}

/// `at`: a field name, or a field name with its unit.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum AtField {
    Name(FieldName),
    WithUnit {
        name: FieldName,
        unit: Option<AtUnit>,
    },
}

/// Where the parts of a read are in a record (JSON Lines, CSV, Parquet).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct SourceFields {
    at: Option<AtField>,
    consumer: Option<FieldName>,
    dataset: Option<FieldName>,
    contract: Option<FieldName>,
}

/// One or several `match` templates.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Templates {
    One(String),
    Several(#[schemars(length(min = 1))] Vec<String>),
}

/// A source's `path`: not blank, and a URL only of the schemes the readers fetch.
fn source_path(_: &mut SchemaGenerator) -> Schema {
    let schemes = source::URL_SCHEMES.join("|");
    json_schema!({
        "type": "string",
        "pattern": r"\S",
        "anyOf": [
            { "not": { "pattern": "://" } },
            { "pattern": format!(r"^\s*({schemes})://") }
        ]
    })
}

/// What a `[[consumption.source]]` table must hold together: the keys of access logs only
/// with an access-log format (which a source then names, with its `match`), `pattern` only
/// with `combined`, no `fields` on a read summary, and a `format` on an object URL whose name
/// implies none.
fn source_rules() -> serde_json::Value {
    use source::{LogFormat as Format, URL_SCHEMES};
    let access: Vec<&str> = Format::ALL
        .into_iter()
        .filter(|f| f.is_access_log())
        .map(Format::as_str)
        .collect();
    serde_json::json!([
        {
            "if": { "required": ["format"], "properties": { "format": { "enum": access } } },
            "then": { "required": ["match"] },
            "else": {
                "not": { "anyOf": [
                    { "required": ["principal"] },
                    { "required": ["same_read_seconds"] },
                    { "required": ["match"] }
                ] }
            }
        },
        {
            "if": { "required": ["pattern"] },
            "then": { "required": ["format"], "properties": { "format": { "const": Format::Combined.as_str() } } }
        },
        {
            "if": { "required": ["format"], "properties": { "format": { "const": Format::Summary.as_str() } } },
            "then": { "not": { "required": ["fields"] } }
        },
        {
            "if": {
                "properties": { "path": {
                    "pattern": format!(r"^\s*({})://", URL_SCHEMES.join("|")),
                    "not": { "pattern": r"\.((jsonl|ndjson|csv)(\.gz)?|parquet)\s*$" }
                } }
            },
            "then": { "required": ["format"] }
        }
    ])
}

/// `[[consumption.source]]`: one consumption source.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("allOf" = source_rules()))]
#[allow(dead_code)]
struct SourceTable {
    /// A glob relative to the store root, or an s3://, gs://, az:// or https:// URL.
    #[schemars(schema_with = "source_path")]
    path: String,
    /// Default: from the file name's extension.
    format: Option<LogFormat>,
    fields: Option<SourceFields>,
    /// Every record is a read of this dataset.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_-]{0,63}$"))]
    dataset: Option<String>,
    /// Every record is a read of this contract version.
    contract: Option<SemVer>,
    /// Access logs: the field naming who made the request.
    #[schemars(regex(pattern = r"\S"))]
    principal: Option<String>,
    /// Access logs: templates mapping a requested key or path to `{dataset}` and
    /// `{contract}`; the first that matches wins.
    #[serde(rename = "match")]
    templates: Option<Templates>,
    /// Access logs: overrides `[consumption] same_read_seconds`.
    #[schemars(range(min = 0))]
    same_read_seconds: Option<i64>,
    /// `combined`: the fields of a custom log format.
    #[schemars(regex(pattern = r"\S"))]
    pattern: Option<String>,
}

/// `contracts.toml`: the store's configuration.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ConfigFile {
    #[serde(default)]
    store: StoreSection,
    #[serde(default)]
    policy: Policy,
    /// Custom clause kinds: clause name → kind, shape and metric.
    #[serde(default)]
    #[schemars(schema_with = "custom_kinds")]
    kinds: Option<BTreeMap<String, CustomKind>>,
    #[serde(default)]
    notify: Notify,
    #[serde(default)]
    smtp: Smtp,
    #[serde(default)]
    consumption: Consumption,
}

#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Consumer {
    team: Option<String>,
    /// `automation` for CI robots and monitors: their reads never hold a line back from
    /// retiring (they are still told) [consumer].
    kind: Option<ConsumerKind>,
    /// Mailboxes, e.g. `Atlas Team <atlas@example.org>`: one each, so one `@` and no line
    /// break.
    #[schemars(length(min = 1))]
    #[schemars(extend("items" = { "type": "string", "pattern": r"^[^@\x00-\x1f\x7f-\x9f]*@[^@\x00-\x1f\x7f-\x9f]*$" }))]
    contacts: Vec<String>,
    /// The datasets it reads (dataset name → what it relies on). Absent: it may read any
    /// dataset and relies on everything.
    #[schemars(extend("propertyNames" = { "pattern": DATASET_NAME }))]
    datasets: Option<BTreeMap<String, Subscription>>,
    /// The principals it reads as, exact strings or globs (`*`, `?`, `[…]`): an IAM ARN, an
    /// API key, a user name. A source's consumer value is looked up here first, then as a
    /// consumer name.
    #[schemars(extend("uniqueItems" = true, "items" = { "type": "string", "pattern": r"\S" }))]
    identities: Option<Vec<String>>,
    /// Webhooks told too, each once per notice (docs/src/guides/webhooks.md).
    webhooks: Option<Vec<Webhook>>,
}

/// A generic webhook signs, so it names its secret; no other kind has one.
fn webhook_rules() -> serde_json::Value {
    serde_json::json!([{
        "if": { "properties": { "kind": { "const": "generic" } } },
        "then": { "required": ["secret_env"] },
        "else": { "not": { "required": ["secret_env"] } }
    }])
}

/// One webhook of a consumer. The URL and secret stay in the environment.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("allOf" = webhook_rules()))]
#[allow(dead_code)]
struct Webhook {
    kind: WebhookKind,
    /// The environment variable holding the URL (a credential, never written here).
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    url_env: String,
    /// generic only (and required there): the variable holding the `whsec_<base64>` secret.
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    secret_env: Option<String>,
    /// Unique within the consumer; defaults to the kind. Its ledger channel is
    /// `webhook:<name>`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"))]
    name: Option<String>,
}

/// One dataset a consumer reads.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Subscription {
    /// Clause names and clause keys it relies on (`crs`, `required_attributes.class`).
    /// Absent: everything.
    #[schemars(extend("uniqueItems" = true, "items" = { "type": "string", "pattern": r"^[a-z][a-z0-9_]*(\.[^\x00-\x1f\x7f-\x9f]+)?$" }))]
    uses: Option<Vec<String>>,
}

/// `consumers.toml`: who reads the store's datasets.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ConsumersFile {
    /// Consumer name ([A-Za-z0-9_-]) → team and contacts.
    #[schemars(extend("propertyNames" = { "pattern": CONSUMER_NAME }))]
    consumers: Option<BTreeMap<String, Consumer>>,
}

/// `release.toml`: what a release says about itself (`validate --manifest`).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ManifestFile {
    /// The release's own version.
    version: Option<String>,
    /// The release's date.
    date: Option<Date>,
    /// Metrics that cannot be computed from the data, e.g. positional_rmse_m.
    metrics: Option<BTreeMap<String, f64>>,
}

/// A instant, RFC 3339 in UTC (`2026-11-29T09:00:00Z`).
struct Instant;

impl JsonSchema for Instant {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Instant".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "format": "date-time",
            "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$",
            "description": "A TOML offset date-time in UTC, e.g. 2026-11-29T09:00:00Z"
        })
    }
}

/// One `[[waiver]]`: a clause key of a line excused from failing `validate` until a day.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct WaiverRecord {
    /// `<dataset>:<line or all>:<clause key>:<granted>`, `:<n>` for a second waiver of the
    /// same key on the same day.
    #[schemars(regex(
        pattern = r"^[a-z0-9][a-z0-9_-]{0,63}:([0-9]+|all):[a-z][a-z0-9_]*(\..+)?:[0-9]{4}-[0-9]{2}-[0-9]{2}(:[0-9]+)?$"
    ))]
    id: String,
    /// The line covered; absent: every live line.
    line: Option<u64>,
    /// `clause` or `clause.key`: a clause key, never a rule of the history.
    #[schemars(schema_with = "waived_key")]
    clause: String,
    granted: Date,
    /// The last day covered; at most `[policy] max_waiver_days` after `granted`.
    until: Date,
    at: Instant,
    /// The git author who granted it.
    by: String,
    reason: String,
    /// The release it was granted for.
    release: Option<String>,
}

/// A waiver's `clause`: a clause name and an optional key with no control character, and not
/// one of the history's rules (a bump, a window, the line count).
fn waived_key(_: &mut SchemaGenerator) -> Schema {
    let rules = crate::model::waiver::NOT_WAIVABLE.join("|");
    json_schema!({
        "type": "string",
        "pattern": r"^[a-z][a-z0-9_]*(\.[^\x00-\x1f\x7f-\x9f]+)?$",
        "not": { "pattern": format!(r"^(({rules})|[a-z0-9_]*_window_days)(\.|$)") }
    })
}

/// One `[[unwaive]]`: the revocation of a waiver from a day on.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct RevocationRecord {
    /// The waiver revoked.
    id: String,
    on: Date,
    at: Instant,
    by: String,
    reason: String,
}

/// `history/<dataset>.waivers.toml`: appended by `contracts waive` and `unwaive`, never
/// edited.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct WaiversFile {
    waiver: Option<Vec<WaiverRecord>>,
    unwaive: Option<Vec<RevocationRecord>>,
}

/// The body of a `generic` webhook (`src/notify/webhook.rs`), for the receivers people write
/// against it. Written by hand rather than derived: the body is built as JSON there, and a
/// test (tests/test_webhook_payloads.rs) validates the bodies the binary posts against this
/// schema, so a field added on one side and not the other fails it. Strict on purpose: every
/// field is present (null when it does not apply) and no other field is allowed, so a
/// receiver may rely on both.
fn webhook_body() -> Schema {
    let date = json_schema!({
        "type": "string",
        "format": "date",
        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    });
    let semver = SemVer::json_schema(&mut SchemaGenerator::default());
    let change = serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["clause", "old", "new", "rationale"],
        "properties": {
            "clause": { "type": "string", "minLength": 1 },
            "old": { "description": "The clause's value on the old line (any JSON; null when it had none)" },
            "new": { "description": "The clause's value on the new line (any JSON; null when it has none)" },
            "rationale": { "type": "string" }
        }
    });
    let waiver = serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["id", "clause", "bound", "release", "measured", "granted", "until", "by", "reason"],
        "properties": {
            "id": { "type": "string", "minLength": 1 },
            "clause": { "type": "string", "description": "clause or clause.key" },
            "bound": { "description": "The contract's bound for that key, or null" },
            "release": { "type": ["string", "null"] },
            "measured": { "description": "The release's measured value, or null" },
            "granted": { "$ref": "#/$defs/Date" },
            "until": { "$ref": "#/$defs/Date", "description": "The last day covered" },
            "by": { "type": "string" },
            "reason": { "type": "string" }
        }
    });
    let conditions = serde_json::json!([
        {
            "if": { "properties": { "milestone": { "const": "published" } } },
            "then": { "properties": { "window_opens": { "$ref": "#/$defs/Date" }, "waiver": { "type": "null" } } },
            "else": { "properties": { "window_opens": { "type": "null" } } }
        },
        {
            "if": { "properties": { "milestone": { "pattern": "^waiver:" } } },
            "then": { "properties": { "waiver": { "type": "object" } } },
            "else": { "properties": { "waiver": { "type": "null" } } }
        }
    ]);
    let mut s = json_schema!({
        "title": "contracts generic webhook body",
        "description": "The JSON body of a `generic` webhook: one notice to one consumer, signed per Standard Webhooks (webhook-id is `id`).",
        "type": "object",
        "additionalProperties": false,
        "required": [
            "type", "id", "dataset", "line", "milestone", "sunset", "days_left", "consumer",
            "team", "reads_version", "new_line", "new_version", "verdict",
            "breaking_changes", "registry_url", "window_opens", "waiver"
        ],
        "properties": {
            "type": { "const": "contracts.sunset_notice", "description": "What the body is; the one kind so far" },
            "id": {
                "type": "string",
                "pattern": "^<contracts\\.[^<>@]+@[^<>@]+>$",
                "description": "The notice's stable id, the Message-ID of its mail and the webhook-id header: the same on every resend"
            },
            "dataset": { "type": "string", "minLength": 1 },
            "line": { "type": "integer", "minimum": 1, "description": "The major line that retires" },
            "milestone": {
                "type": "string",
                "pattern": "^(before-[0-9]+|overdue-[1-9][0-9]*|published|waiver:.+)$",
                "description": "before-<days> (countdown), overdue-<n>, published (the new line's window opened) or waiver:<id>"
            },
            "sunset": { "$ref": "#/$defs/Date", "description": "The last day of the old line" },
            "days_left": { "type": "integer", "description": "Days until the sunset; 0 or negative once overdue" },
            "consumer": { "type": "string", "pattern": "^[A-Za-z0-9_-]+$" },
            "team": { "type": ["string", "null"] },
            "reads_version": { "$ref": "#/$defs/SemVer", "description": "The version the consumer last read" },
            "new_line": { "type": "integer", "minimum": 1 },
            "new_version": { "$ref": "#/$defs/SemVer", "description": "The version to move to" },
            "verdict": {
                "enum": ["breaks", "unaffected"],
                "description": "breaks: a breaking change touches what the consumer uses (or it declared nothing)"
            },
            "breaking_changes": {
                "type": "array",
                "description": "The breaking changes the notice tells, with the contract's old and new values",
                "items": change
            },
            "registry_url": {
                "type": ["string", "null"],
                "format": "uri",
                "description": "The dataset's page on the registry site ([notify] registry_url), or null"
            },
            "window_opens": { "description": "published: the day the new line's window opened; null otherwise" },
            "waiver": {
                "description": "waiver:<id>: what was waived; null otherwise",
                "anyOf": [
                    { "type": "null" },
                    waiver
                ]
            }
        },
        "allOf": conditions
    });
    s.insert(
        "$schema".into(),
        "https://json-schema.org/draft/2020-12/schema".into(),
    );
    s.insert(
        "$defs".into(),
        serde_json::json!({ "Date": date, "SemVer": semver }),
    );
    s
}

/// The schemas, by file name under `schema/`.
pub fn schemas() -> Vec<(&'static str, serde_json::Value)> {
    let with_id = |name: &'static str, mut s: Schema| {
        s.insert(
            "$id".to_string(),
            format!("https://contracts.invalid/schema/{name}").into(),
        );
        (name, s.to_value())
    };
    vec![
        with_id("contract.schema.json", schemars::schema_for!(ContractFile)),
        with_id(
            "contracts-toml.schema.json",
            schemars::schema_for!(ConfigFile),
        ),
        with_id(
            "consumers.schema.json",
            schemars::schema_for!(ConsumersFile),
        ),
        with_id(
            "release-manifest.schema.json",
            schemars::schema_for!(ManifestFile),
        ),
        with_id("waivers.schema.json", schemars::schema_for!(WaiversFile)),
        with_id("webhook-generic.schema.json", webhook_body()),
    ]
}
