//! JSON Schemas of the store's hand-edited files, generated with `schemars` from the types
//! below, so that editors (Taplo / Even Better TOML) complete and check them as they are typed.
//!
//! The parsers read TOML through serde into span-carrying raw types (`Spanned`, TOML dates)
//! that have no JSON Schema of their own, so the file formats are restated here as plain
//! types, field for field, with the same `deny_unknown_fields`. Two tests keep them honest:
//! the committed `schema/` files must equal what this build generates, and every contract,
//! config, registry and manifest in `tests/` and the example store must validate against them
//! (a field the parser learns and a fixture uses fails the second test until it is added here).

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use super::{CommandError, Context, Outcome};

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

#[derive(JsonSchema)]
#[allow(dead_code, non_camel_case_types)]
enum GeometryType {
    Point,
    LineString,
    Polygon,
    MultiPoint,
    MultiLineString,
    MultiPolygon,
    GeometryCollection,
}

#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum AttrType {
    Bool,
    Int32,
    Int64,
    Float64,
    String,
    Date,
    Datetime,
    Binary,
}

#[derive(JsonSchema)]
#[allow(dead_code, clippy::upper_case_acronyms)]
enum Dimension {
    XY,
    XYZ,
    XYM,
    XYZM,
}

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
    advisory: Option<Vec<String>>,
    #[serde(default)]
    clauses: Clauses,
}

#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum NewClauses {
    Advisory,
    Enforced,
}

#[derive(JsonSchema, Default)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StoreSection {
    /// The commit the immutability proofs start from.
    since: Option<String>,
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
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum KindName {
    Widening,
    Narrowing,
    Fixed,
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum ShapeName {
    Bbox,
    Set,
    Map,
    UpperBound,
    LowerBound,
    UpperBounds,
    Value,
}

#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct CustomKind {
    kind: KindName,
    shape: ShapeName,
    /// The profile figure or manifest metric `validate` checks the clause against.
    metric: Option<String>,
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

#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code, clippy::enum_variant_names)]
enum Tls {
    Starttls,
    Tls,
    None,
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

/// What a log is written as.
#[derive(JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
enum LogFormat {
    Jsonl,
    Csv,
    Parquet,
    Summary,
    S3Access,
    Cloudfront,
    Combined,
}

/// A field name: dotted (`client.id` reaches into nested objects) or an array of keys, each
/// taken whole (`["client.id"]` is one key with a dot).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum FieldName {
    Dotted(#[schemars(length(min = 1))] String),
    Keys(#[schemars(length(min = 1))] Vec<String>),
}

/// How `at` is written: RFC 3339 text, or epoch seconds or milliseconds as a number.
#[derive(JsonSchema)]
#[allow(dead_code)]
enum AtUnit {
    #[serde(rename = "rfc3339")]
    Rfc3339,
    #[serde(rename = "s")]
    Seconds,
    #[serde(rename = "ms")]
    Millis,
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

/// `[[consumption.source]]`: one consumption source.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct SourceTable {
    /// A glob relative to the store root, or an s3://, gs://, az:// or https:// URL.
    #[schemars(length(min = 1))]
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
    principal: Option<String>,
    /// Access logs: templates mapping a requested key or path to `{dataset}` and
    /// `{contract}`; the first that matches wins.
    #[serde(rename = "match")]
    templates: Option<Templates>,
    /// Access logs: overrides `[consumption] same_read_seconds`.
    #[schemars(range(min = 0))]
    same_read_seconds: Option<i64>,
    /// `combined`: the fields of a custom log format.
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
    /// Mailboxes, e.g. `Atlas Team <atlas@example.org>`.
    #[schemars(length(min = 1))]
    contacts: Vec<String>,
    /// The datasets it reads (dataset name → what it relies on). Absent: it may read any
    /// dataset and relies on everything.
    datasets: Option<BTreeMap<String, Subscription>>,
    /// The principals it reads as, exact strings or globs (`*`, `?`, `[…]`): an IAM ARN, an
    /// API key, a user name. A source's consumer value is looked up here first, then as a
    /// consumer name.
    #[schemars(extend("uniqueItems" = true, "items" = { "type": "string", "minLength": 1 }))]
    identities: Option<Vec<String>>,
    /// Webhooks told too, each once per notice (docs/src/guides/webhooks.md).
    webhooks: Option<Vec<Webhook>>,
}

/// One webhook of a consumer. The URL and secret stay in the environment.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
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

#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum ConsumerKind {
    Consumer,
    Automation,
}

#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum WebhookKind {
    /// Signed JSON (Standard Webhooks).
    Generic,
    /// A Slack incoming webhook.
    Slack,
    /// A Teams Workflows webhook (Adaptive Card).
    Teams,
}

/// One dataset a consumer reads.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Subscription {
    /// Clause names and clause keys it relies on (`crs`, `required_attributes.class`).
    /// Absent: everything.
    #[schemars(extend("uniqueItems" = true, "items" = { "type": "string", "pattern": r"^[a-z][a-z0-9_]*(\..+)?$" }))]
    uses: Option<Vec<String>>,
}

/// `consumers.toml`: who reads the store's datasets.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ConsumersFile {
    /// Consumer name ([A-Za-z0-9_-]) → team and contacts.
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
    id: String,
    /// The line covered; absent: every live line.
    line: Option<u64>,
    /// `clause` or `clause.key`.
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
/// test (tests/webhook_payloads.rs) validates the bodies the binary posts against this
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

/// Write the JSON Schemas of the store's files
///
/// The JSON Schemas of contract files, `contracts.toml`, `consumers.toml`, release manifests
/// (`release.toml`) and waivers files, for editors, and of the body of a `generic` webhook,
/// for receivers: with --out DIR, one file each (the repository keeps them under `schema/`);
/// without, one JSON object of all six on stdout, by file name.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write `contract.schema.json`, `contracts-toml.schema.json`, `consumers.schema.json`,
    /// `release-manifest.schema.json`, `waivers.schema.json` and `webhook-generic.schema.json`
    /// into this directory
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let all = schemas();
    match &args.out {
        None => {
            let map: serde_json::Map<String, serde_json::Value> = all
                .into_iter()
                .map(|(name, v)| (name.to_string(), v))
                .collect();
            super::output::print_json(ctx, &map);
        }
        Some(dir) => {
            let fail =
                |e: std::io::Error| CommandError::environment(format!("{}: {e}", dir.display()));
            std::fs::create_dir_all(dir).map_err(fail)?;
            let n = all.len();
            for (name, v) in all {
                let text = serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
                std::fs::write(dir.join(name), text).map_err(fail)?;
            }
            talkln!(ctx, "wrote {n} schemas to {}", dir.display());
        }
    }
    Ok(Outcome::Clean)
}
