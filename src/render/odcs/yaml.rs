//! The YAML text of an ODCS document: block style, ODCS's own key order, strings always
//! double-quoted with escapes, numbers as YAML 1.1 readers take them. Hand-written because the
//! export needs only this subset and must control every byte a strict reader sees.

use serde_json::Value;

/// A JSON value as a YAML document: block style, keys in the value's order, every string
/// double-quoted with JSON escapes (valid YAML, and never read as a date, number or `no`).
pub fn yaml(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, 0, false);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The place of a key in its mapping: the ODCS fields a reader looks for first.
fn rank(key: &str) -> usize {
    const FIRST: [&str; 17] = [
        "apiVersion",
        "kind",
        "id",
        "name",
        "property",
        "version",
        "status",
        "value",
        "description",
        "logicalType",
        "physicalType",
        "required",
        "type",
        "metric",
        "unit",
        "schema",
        "properties",
    ];
    FIRST.iter().position(|k| *k == key).unwrap_or(FIRST.len())
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "{}".to_string(),
        Value::Array(a) if a.is_empty() => "[]".to_string(),
        Value::String(s) => quoted(s),
        Value::Number(n) => match n.as_f64() {
            // Rust writes an f64 as its shortest round-trip decimal, never with an exponent
            // (YAML 1.1 reads `1e-05` as a string); `.0` keeps a whole float a float.
            Some(f) if n.is_f64() => {
                let text = format!("{f}");
                if text.contains('.') {
                    text
                } else {
                    format!("{text}.0")
                }
            }
            _ => n.to_string(),
        },
        v => serde_json::to_string(v).unwrap_or_default(),
    }
}

/// `s` as a YAML double-quoted scalar. A YAML 1.1 reader (PyYAML, and the tools built on it)
/// refuses C0 and C1 controls, DEL and the non-characters U+FFFE/U+FFFF written raw, and folds
/// a raw line break (NEL, U+2028, U+2029) into a space; each of those travels as a `\uXXXX`
/// escape (a newline and a tab as `\n` and `\t`), so any text reads back unchanged.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{feff}'
            | '\u{fffe}'
            | '\u{ffff}' => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_block(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

/// Write `v` at `indent`; `inline` means the first line continues a `- ` already written.
fn write_value(out: &mut String, v: &Value, indent: usize, inline: bool) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            // ODCS documents read top-down: identity first, then content; others by name.
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by_key(|(k, _)| (rank(k), (*k).clone()));
            for (i, (k, val)) in entries.into_iter().enumerate() {
                if !(inline && i == 0) {
                    out.push_str(&pad);
                }
                let key = if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    k.clone()
                } else {
                    quoted(k)
                };
                if is_block(val) {
                    out.push_str(&format!("{key}:\n"));
                    write_value(out, val, indent + 2, false);
                } else {
                    out.push_str(&format!("{key}: {}\n", scalar(val)));
                }
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for item in a {
                out.push_str(&pad);
                out.push_str("- ");
                if is_block(item) {
                    match item {
                        Value::Object(_) => write_value(out, item, indent + 2, true),
                        _ => {
                            out.pop();
                            out.push('\n');
                            write_value(out, item, indent + 2, false);
                        }
                    }
                } else {
                    out.push_str(&format!("{}\n", scalar(item)));
                }
            }
        }
        v => {
            if !inline {
                out.push_str(&pad);
            }
            out.push_str(&format!("{}\n", scalar(v)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_is_block_style_with_quoted_strings() {
        let v = json!({
            "a": "2027-01-01",
            "b": [1, {"c": "no", "d": []}],
            "e": {"f": true},
            "g": [[1, 2]],
        });
        assert_eq!(
            yaml(&v),
            "a: \"2027-01-01\"\nb:\n  - 1\n  - c: \"no\"\n    d: []\ne:\n  f: true\ng:\n  -\n    - 1\n    - 2\n"
        );
        assert_eq!(quoted("a\u{86}\"\n\u{2028}é"), r#""a\u0086\"\n\u2028é""#);
        assert_eq!(
            yaml(&json!({"a": 0.00001, "b": 170.0, "c": 3})),
            "a: 0.00001\nb: 170.0\nc: 3\n"
        );
    }
}
