//! The schema of the `attributes` array that `consumers --attributes` and `diff --attributes`
//! print in JSON (`src/consumers/attribute_uses.rs`): declared against observed, per consumer
//! and attribute. Written by hand, like the review report's, with every object closed, so a
//! field added on one side only fails the test that validates the binary's output against it
//! (tests/test_attribute_evidence.rs); the evidence words come from the enum's own list.

use schemars::{json_schema, Schema};

use crate::consumers::attribute_uses::AttributeEvidence;

pub(super) fn attributes() -> Schema {
    let evidence: Vec<&str> = AttributeEvidence::ALL.map(AttributeEvidence::as_str).into();
    let date = json_schema!({ "type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" });
    let gap = json_schema!({ "anyOf": [
        { "type": "null" },
        { "type": "object", "additionalProperties": false, "required": ["kind", "since"],
          "description": "Declared, and not seen read since `since` (the lookback's first day), though every read of the consumer told its attributes",
          "properties": { "kind": { "const": "declared-not-seen" }, "since": { "$ref": "#/$defs/Date" } } },
        { "type": "object", "additionalProperties": false, "required": ["kind"],
          "description": "Seen read, and the consumer's `uses` does not name it",
          "properties": { "kind": { "const": "not-in-uses" } } }
    ] });
    let attribute = json_schema!({
        "type": "object",
        "additionalProperties": false,
        "required": ["attribute", "evidence", "last_read", "gap"],
        "properties": {
            "attribute": { "type": "string", "minLength": 1 },
            "evidence": { "type": "string", "enum": evidence,
                          "description": "declared in `uses`, observed in a read, both, or unknown: neither, while some read cannot tell" },
            "last_read": { "type": ["string", "null"], "description": "The newest read seen reading it (RFC 3339)" },
            "gap": { "$ref": "#/$defs/Gap" }
        }
    });
    json_schema!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "contracts attribute uses (consumers --attributes, diff --attributes)",
        "type": "array",
        "items": {
            "type": "object",
            "additionalProperties": false,
            "required": ["consumer", "team", "declares", "reads", "unknown_reads", "attributes"],
            "properties": {
                "consumer": { "type": "string", "minLength": 1 },
                "team": { "type": ["string", "null"] },
                "declares": { "type": "boolean", "description": "It has `uses` for the dataset" },
                "reads": { "type": "integer", "minimum": 0, "description": "Its reads of the dataset in the lookback" },
                "unknown_reads": { "type": "integer", "minimum": 0, "description": "Of those, the reads whose source cannot tell which attributes they read" },
                "attributes": { "type": "array", "items": { "$ref": "#/$defs/AttributeUse" } }
            }
        },
        "$defs": { "Date": date, "Gap": gap, "AttributeUse": attribute }
    })
}
