//! The schema of `contracts review --format json`.

use schemars::{json_schema, Schema};

/// The report `review` prints as JSON (`src/render/review.rs`), for the scripts and bots that
/// read it. Written by hand, like the webhook body's: a test (tests/test_review.rs) validates
/// the reports the binary prints against it, and every object is closed, so a field added on
/// one side only fails it.
pub(super) fn report() -> Schema {
    let date = json_schema!({ "type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" });
    let date_or_null = json_schema!({ "anyOf": [{ "$ref": "#/$defs/Date" }, { "type": "null" }] });
    let commit = json_schema!({ "type": "string", "pattern": "^[0-9a-f]{40,64}$" });
    let bump = json_schema!({ "type": "string", "enum": ["none", "patch", "minor", "major"] });
    let version = json_schema!({ "type": "string", "minLength": 5 });
    let strings = json_schema!({ "type": "array", "items": { "type": "string" } });
    let change = json_schema!({
        "type": "object",
        "additionalProperties": false,
        "required": ["clause", "kind", "old", "new", "direction", "verdict"],
        "properties": {
            "clause": { "type": "string", "minLength": 1 },
            "kind": { "type": "string" },
            "old": { "description": "The old value (any JSON; null when the clause is added)" },
            "new": { "description": "The new value (any JSON; null when the clause is removed)" },
            "direction": { "type": "string" },
            "verdict": { "type": "string", "enum": ["compatible", "breaking"] }
        }
    });
    let backtest = json_schema!({
        "type": "object",
        "additionalProperties": false,
        "required": ["since", "releases", "without_profile", "clauses"],
        "properties": {
            "since": { "$ref": "#/$defs/Date" },
            "releases": { "type": "integer", "minimum": 0 },
            "without_profile": { "type": "integer", "minimum": 0 },
            "clauses": { "type": "array", "items": {
                "type": "object",
                "additionalProperties": false,
                "required": ["clause", "evaluated", "would_fail", "releases"],
                "properties": {
                    "clause": { "type": "string" },
                    "evaluated": { "type": "integer", "minimum": 0 },
                    "would_fail": { "type": "integer", "minimum": 0 },
                    "releases": { "$ref": "#/$defs/Strings" }
                }
            } }
        }
    });
    let proposal = json_schema!({
        "type": "object",
        "additionalProperties": false,
        "required": ["source", "version", "previous", "required_bump", "requires", "declared_bump",
                     "sufficient", "changes", "refusals", "backtest"],
        "properties": {
            "source": { "type": "string", "description": "The draft's path, or the published contract's" },
            "version": { "$ref": "#/$defs/Version" },
            "previous": { "anyOf": [{ "$ref": "#/$defs/Version" }, { "type": "null" }] },
            "required_bump": { "$ref": "#/$defs/Bump" },
            "requires": { "anyOf": [{ "$ref": "#/$defs/Version" }, { "type": "null" }],
                          "description": "The smallest version that bumps enough; null for a first version" },
            "declared_bump": { "$ref": "#/$defs/Bump" },
            "sufficient": { "type": "boolean" },
            "changes": { "type": "array", "items": { "$ref": "#/$defs/Change" } },
            "refusals": { "$ref": "#/$defs/Strings" },
            "backtest": { "$ref": "#/$defs/Backtest" }
        }
    });
    let touch = json_schema!({
        "type": "object",
        "required": ["kind"],
        "oneOf": [
            { "additionalProperties": false, "required": ["path"],
              "properties": { "kind": { "const": "draft" }, "path": { "type": "string" } } },
            { "additionalProperties": false, "required": ["version"],
              "properties": { "kind": { "const": "published" }, "version": { "$ref": "#/$defs/Version" } } },
            { "additionalProperties": false, "required": ["line", "from", "to"],
              "properties": { "kind": { "const": "sunset-moved" }, "line": { "type": "integer", "minimum": 0 },
                              "from": { "$ref": "#/$defs/DateOrNull" }, "to": { "$ref": "#/$defs/DateOrNull" } } },
            { "additionalProperties": false, "required": ["consumers"],
              "properties": { "kind": { "const": "consumers-edited" }, "consumers": { "$ref": "#/$defs/Strings" } } },
            { "additionalProperties": false, "required": ["granted", "revoked"],
              "properties": { "kind": { "const": "waivers-edited" }, "granted": { "$ref": "#/$defs/Strings" },
                              "revoked": { "$ref": "#/$defs/Strings" } } }
        ]
    });
    let consumer = json_schema!({
        "type": "object",
        "additionalProperties": false,
        "required": ["consumer", "verdict", "breaking_changes", "uses_everything", "status", "last_read", "version"],
        "properties": {
            "consumer": { "type": "string" },
            "verdict": { "enum": ["breaks", "unaffected", null],
                         "description": "null when no version is proposed (only consumers or waivers edited)" },
            "breaking_changes": { "$ref": "#/$defs/Strings" },
            "uses_everything": { "type": "boolean" },
            "status": { "type": "string" },
            "last_read": { "type": ["string", "null"], "format": "date-time" },
            "version": { "anyOf": [{ "$ref": "#/$defs/Version" }, { "type": "null" }] }
        }
    });
    let window = json_schema!({
        "type": "object",
        "additionalProperties": false,
        "required": ["lines", "windows", "waivers_ending"],
        "properties": {
            "lines": { "type": "array", "items": {
                "type": "object", "additionalProperties": false,
                "required": ["line", "state", "opens", "sunset", "newest"],
                "properties": {
                    "line": { "type": "integer", "minimum": 0 },
                    "state": { "enum": ["upcoming", "live", "retired"] },
                    "opens": { "$ref": "#/$defs/Date" },
                    "sunset": { "$ref": "#/$defs/DateOrNull" },
                    "newest": { "$ref": "#/$defs/Version" }
                }
            } },
            "windows": { "type": "array", "items": {
                "type": "object", "additionalProperties": false,
                "required": ["old_line", "new_line", "opens", "sunset"],
                "properties": {
                    "old_line": { "type": "integer", "minimum": 0 },
                    "new_line": { "type": "integer", "minimum": 0 },
                    "opens": { "$ref": "#/$defs/Date" },
                    "sunset": { "$ref": "#/$defs/Date" }
                }
            } },
            "waivers_ending": { "type": "array", "items": {
                "type": "object", "additionalProperties": false,
                "required": ["id", "clause", "line", "until"],
                "properties": {
                    "id": { "type": "string" },
                    "clause": { "type": "string" },
                    "line": { "type": ["integer", "null"], "minimum": 0 },
                    "until": { "$ref": "#/$defs/Date" }
                }
            } }
        }
    });
    json_schema!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "contracts review report",
        "type": "object",
        "additionalProperties": false,
        "required": ["base", "base_commit", "compared_with", "head_commit", "today", "refused", "datasets"],
        "properties": {
            "base": { "type": "string", "description": "--base as given, or the default branch found" },
            "base_commit": { "$ref": "#/$defs/Commit" },
            "compared_with": { "$ref": "#/$defs/Commit", "description": "The commit compared with HEAD" },
            "head_commit": { "$ref": "#/$defs/Commit" },
            "today": { "$ref": "#/$defs/Date" },
            "refused": { "type": "boolean", "description": "Something would be refused (exit 1)" },
            "datasets": { "type": "array", "items": {
                "type": "object",
                "additionalProperties": false,
                "required": ["dataset", "touched", "proposals", "consumers", "window", "links"],
                "properties": {
                    "dataset": { "type": "string", "pattern": r"^[a-z0-9][a-z0-9_-]{0,63}$" },
                    "touched": { "type": "array", "minItems": 1, "items": { "$ref": "#/$defs/Touch" } },
                    "proposals": { "type": "array", "items": { "$ref": "#/$defs/Proposal" } },
                    "consumers": { "type": "array", "items": { "$ref": "#/$defs/Consumer" } },
                    "window": { "$ref": "#/$defs/WindowView" },
                    "links": { "anyOf": [{ "type": "null" }, {
                        "type": "object", "additionalProperties": false, "required": ["page", "timeline"],
                        "properties": { "page": { "type": "string" }, "timeline": { "type": "string" } }
                    }] }
                }
            } }
        },
        "$defs": {
            "Date": date, "DateOrNull": date_or_null, "Commit": commit, "Bump": bump,
            "Version": version, "Strings": strings, "Change": change, "Backtest": backtest,
            "Proposal": proposal, "Touch": touch, "Consumer": consumer, "WindowView": window
        }
    })
}
