//! The schema of a dataset's waivers ledger, `history/<dataset>.waivers.toml`.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use super::{Date, Instant};

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
pub(super) struct WaiversFile {
    waiver: Option<Vec<WaiverRecord>>,
    unwaive: Option<Vec<RevocationRecord>>,
}
