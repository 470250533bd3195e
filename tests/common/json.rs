//! Reading the rows of the binary's `--format json` output: the array a test requires, and
//! the string fields it compares whole.

use serde_json::Value;

/// `.rows()` on a JSON value: the elements of the array it must be (the test fails if it is
/// not), in place of the `.as_array().unwrap().iter()` every reader of a report repeated.
pub trait Rows {
    fn rows(&self) -> std::slice::Iter<'_, Value>;
}

impl Rows for Value {
    fn rows(&self) -> std::slice::Iter<'_, Value> {
        self.as_array()
            .unwrap_or_else(|| panic!("not a JSON array: {self}"))
            .iter()
    }
}

/// The string fields `a` and `b` of each row of `v`, in order (a row lacking one fails the
/// test): (consumer, status) and the like, compared as a whole list.
pub fn string_pairs(v: &Value, a: &str, b: &str) -> Vec<(String, String)> {
    v.rows().map(|r| (string(r, a), string(r, b))).collect()
}

/// [`string_pairs`] with three fields.
pub fn string_triples(v: &Value, a: &str, b: &str, c: &str) -> Vec<(String, String, String)> {
    v.rows()
        .map(|r| (string(r, a), string(r, b), string(r, c)))
        .collect()
}

/// The string field `key` of `row`; the test fails when it is absent or not a string.
fn string(row: &Value, key: &str) -> String {
    row[key]
        .as_str()
        .unwrap_or_else(|| panic!("no string `{key}` in {row}"))
        .to_string()
}

/// A validator for the JSON Schema at `rel` in `tests/data` (a standard's own schema: SARIF,
/// ODCS), which must compile.
pub fn schema_validator(rel: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(crate::common::data(rel)).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("the schema {rel} compiles: {e}"))
}
