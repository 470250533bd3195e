//! The schema of `contracts.toml`: the store, its policy, custom kinds, the notifier, the
//! relay and the consumption sources.

use std::collections::BTreeMap;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use super::{AtUnit, LogFormat, SemVer, ShapeName};
use crate::model::config::{NewClauses, Tls};
use crate::model::kind::{self, Kind};
use crate::model::source;

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
                    { "required": ["match"] },
                    { "required": ["ignore_principals"] }
                ] }
            }
        },
        {
            "if": { "anyOf": [{ "required": ["log_destination"] }, { "required": ["prefix"] }] },
            "then": { "required": ["format"], "properties": { "format": { "const": Format::Pgaudit.as_str() } } }
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

/// `log_destination` of a `pgaudit` source.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum PgDestination {
    Stderr,
    Csvlog,
    Jsonlog,
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
    /// Access logs: templates mapping a requested key or path (a relation or table name
    /// written with dots for `pgaudit` and the warehouses) to `{dataset}` and `{contract}`
    /// or `{line}`; the first that matches wins.
    #[serde(rename = "match")]
    templates: Option<Templates>,
    /// Access logs: overrides `[consumption] same_read_seconds`.
    #[schemars(range(min = 0))]
    same_read_seconds: Option<i64>,
    /// `combined`: the fields of a custom log format.
    #[schemars(regex(pattern = r"\S"))]
    pattern: Option<String>,
    /// `pgaudit`: how the server writes its log (default: each file's first line says).
    log_destination: Option<PgDestination>,
    /// `pgaudit` written to `stderr`: the server's `log_line_prefix`.
    #[schemars(regex(pattern = r"\S"))]
    prefix: Option<String>,
    /// Access logs: principals (globs) whose requests are not reads (the publisher's own
    /// roles, maintenance).
    ignore_principals: Option<Vec<String>>,
    /// `false`: the source is known to be quiet, so a source with no read in the lookback
    /// does not make the gates say "cannot tell". Default `true`.
    expect_reads: Option<bool>,
}

#[derive(JsonSchema, Default)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Review {
    /// Globs relative to the store root (`**` crosses folders, `*` does not): a committed file
    /// that matches one and changed since the base is a draft `contracts review` reviews.
    /// Default `["drafts/**/*.toml"]`.
    drafts: Option<Vec<String>>,
}

/// `contracts.toml`: the store's configuration.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(super) struct ConfigFile {
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
    #[serde(default)]
    review: Review,
}
