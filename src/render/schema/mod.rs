//! JSON Schemas of the store's hand-edited files, generated with `schemars` from the types
//! of the files here (one per file format), so that editors (Taplo / Even Better TOML) complete and check them as they are typed.
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

mod attribute_report;
mod config_file;
mod consumers_file;
mod contract_file;
mod ledgers;
mod review_report;
mod webhook_body;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use crate::model::{kind, source, spatial};

/// A marker type whose JSON Schema is `$schema`, under the name `$title`: a value the parsers
/// read through a type with no schema of its own (a TOML date, a version, an instant), or a
/// string from one of a model enum's own lists of names.
macro_rules! named_schema {
    ($(#[$attr:meta])* $marker:ident, $title:literal, $schema:expr) => {
        $(#[$attr])*
        struct $marker;

        impl JsonSchema for $marker {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $title.into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                $schema
            }
        }
    };
}

named_schema!(
    /// A TOML local date (`2027-01-01`); a TOML-to-JSON editor sees it as a string.
    Date,
    "Date",
    json_schema!({
        "type": "string",
        "format": "date",
        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        "description": "A TOML local date, e.g. 2027-01-01"
    })
);

named_schema!(
    /// A semantic version, e.g. `2.0.0`.
    SemVer,
    "SemVer",
    json_schema!({
        "type": "string",
        "pattern": r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$",
        "description": "A semantic version, e.g. 2.0.0"
    })
);

named_schema!(
    /// A instant, RFC 3339 in UTC (`2026-11-29T09:00:00Z`).
    Instant,
    "Instant",
    json_schema!({
        "type": "string",
        "format": "date-time",
        "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$",
        "description": "A TOML offset date-time in UTC, e.g. 2026-11-29T09:00:00Z"
    })
);

/// A string that is one of `names`: the names a model enum lists for itself, which its parser
/// matches against.
fn one_of(names: impl IntoIterator<Item = &'static str>, description: &str) -> Schema {
    let names: Vec<&str> = names.into_iter().collect();
    json_schema!({ "type": "string", "enum": names, "description": description })
}

/// JSON Schemas for the names in model enums' own lists, one a line: the marker type, the
/// schema's title, the names and the description.
macro_rules! names_of {
    ($($marker:ident, $title:literal, $names:expr, $description:literal;)*) => {
        $(named_schema!($marker, $title, one_of($names, $description));)*
    };
}

#[rustfmt::skip]
names_of! {
    GeometryType, "GeometryType", spatial::GeometryType::ALL.map(spatial::GeometryType::name), "An OGC simple-feature geometry type";
    AttrType, "AttrType", spatial::AttrType::ALL.map(spatial::AttrType::as_str), "An attribute type";
    Dimension, "Dimension", spatial::Dimension::ALL.map(spatial::Dimension::as_str), "The coordinate dimensions";
    ShapeName, "Shape", kind::Shape::CUSTOM.map(kind::Shape::as_str), "A shape a custom clause may have";
    LogFormat, "LogFormat", source::LogFormat::ALL.map(source::LogFormat::as_str), "What a log is written as";
    AtUnit, "AtUnit", source::AtUnit::ALL.map(source::AtUnit::name), "How `at` is written: RFC 3339 text, or epoch seconds (s) or milliseconds (ms) as a number";
}

/// A dataset name, as `is_dataset_name` checks it.
const DATASET_NAME: &str = r"^[a-z0-9][a-z0-9_-]{0,63}$";

/// A consumer or webhook name, as `is_consumer_name` checks it.
const CONSUMER_NAME: &str = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$";

/// The schemas, by file name under `schema/`.
pub fn schemas() -> Vec<(&'static str, serde_json::Value)> {
    let with_id = |name: &'static str, mut s: Schema| {
        s.insert(
            "$id".to_string(),
            format!("https://contracts.invalid/schema/{name}").into(),
        );
        (name, s.to_value())
    };
    use schemars::schema_for;
    let files = [
        (
            "contract.schema.json",
            schema_for!(contract_file::ContractFile),
        ),
        (
            "contracts-toml.schema.json",
            schema_for!(config_file::ConfigFile),
        ),
        (
            "consumers.schema.json",
            schema_for!(consumers_file::ConsumersFile),
        ),
        (
            "release-manifest.schema.json",
            schema_for!(contract_file::ManifestFile),
        ),
        ("waivers.schema.json", schema_for!(ledgers::WaiversFile)),
        ("webhook-generic.schema.json", webhook_body::body()),
        ("review-report.schema.json", review_report::report()),
        ("attribute-uses.schema.json", attribute_report::attributes()),
    ];
    files.into_iter().map(|(n, s)| with_id(n, s)).collect()
}
