//! The schema of a `generic` webhook's body.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use super::SemVer;

/// The body of a `generic` webhook (`src/notify/webhook/payload.rs`), for the receivers people write
/// against it. Written by hand rather than derived: the body is built as JSON there, and a
/// test (tests/test_webhook_payloads.rs) validates the bodies the binary posts against this
/// schema, so a field added on one side and not the other fails it. Strict on purpose: every
/// field is present (null when it does not apply) and no other field is allowed, so a
/// receiver may rely on both.
pub(super) fn body() -> Schema {
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
    let deprecation = serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["key", "attribute", "reason", "replacement", "remove_after", "version", "evidence", "key_last_read"],
        "properties": {
            "key": { "type": "string", "minLength": 1, "description": "The deprecated clause key: clause or clause.member" },
            "attribute": { "type": ["string", "null"], "description": "The attribute the key names, or null for a key that is no attribute" },
            "reason": { "type": "string", "minLength": 1 },
            "replacement": { "type": ["string", "null"] },
            "remove_after": { "$ref": "#/$defs/Date", "description": "The last day the key is promised (inclusive)" },
            "version": { "$ref": "#/$defs/SemVer", "description": "The version whose contract carries the deprecation" },
            "evidence": {
                "enum": ["declared", "observed", "unknown"],
                "description": "How the consumer was found to use the key: its `uses` names it, a read was seen reading it, or it declared no `uses` and its reads cannot tell"
            },
            "key_last_read": { "type": ["string", "null"], "format": "date-time", "description": "Its newest read seen reading the key, or null" }
        }
    });
    let conditions = serde_json::json!([
        {
            "if": { "properties": { "milestones": { "contains": { "const": "published" } } } },
            "then": { "properties": { "window_opens": { "$ref": "#/$defs/Date" }, "waiver": { "type": "null" } } },
            "else": { "properties": { "window_opens": { "type": "null" } } }
        },
        {
            "if": { "properties": { "milestone": { "pattern": "^waiver:" } } },
            "then": { "properties": { "waiver": { "type": "object" } } },
            "else": { "properties": { "waiver": { "type": "null" } } }
        },
        {
            "if": { "properties": { "milestone": { "pattern": "^deprecated:" } } },
            "then": { "properties": { "deprecation": { "type": "object" } } },
            "else": { "properties": { "deprecation": { "type": "null" } } }
        }
    ]);
    let mut s = json_schema!({
        "title": "contracts generic webhook body",
        "description": "The JSON body of a `generic` webhook: one notice to one consumer, signed per Standard Webhooks (webhook-id is `id`).",
        "type": "object",
        "additionalProperties": false,
        "required": [
            "type", "id", "dataset", "line", "milestone", "milestones", "sunset", "days_left", "consumer",
            "team", "reads_version", "new_line", "new_version", "verdict",
            "breaking_changes", "registry_url", "window_opens", "waiver", "deprecation"
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
                "pattern": "^(before-[0-9]+|overdue-[1-9][0-9]*|published|waiver:.+|deprecated:.+:(published|before-[0-9]+|overdue-[1-9][0-9]*))$",
                "description": "before-<days> (countdown), overdue-<n>, published (the new line's window opened), waiver:<id>, or deprecated:<key>:<step> (a deprecation of a key the consumer uses: published, or a countdown to the day after remove_after)"
            },
            "milestones": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": true,
                "items": {
                    "type": "string",
                    "pattern": "^(before-[0-9]+|overdue-[1-9][0-9]*|published|waiver:.+|deprecated:.+:(published|before-[0-9]+|overdue-[1-9][0-9]*))$"
                },
                "description": "Every milestone this one notice serves, `milestone` among them: [\"published\", \"before-<days>\"] when the window's opening and a countdown milestone fell due on the same run, else [milestone]"
            },
            "sunset": {
                "$ref": "#/$defs/Date",
                "description": "The first day the old line is no longer live (exclusive): its last day is the day before"
            },
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
            "window_opens": { "description": "When milestones holds published: the day the new line's window opened; null otherwise" },
            "waiver": {
                "description": "waiver:<id>: what was waived; null otherwise",
                "anyOf": [
                    { "type": "null" },
                    waiver
                ]
            },
            "deprecation": {
                "description": "deprecated:<key>:<step>: the deprecated key, why, what replaces it and how the consumer was found to use it; null otherwise",
                "anyOf": [
                    { "type": "null" },
                    deprecation
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
