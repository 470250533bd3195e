//! An ODCS v3 document as a draft (`contracts import odcs`): the parts a clause can say become
//! clauses, and the whole document is kept verbatim in the draft's `[odcs] document`, so that
//! `export odcs` can write back what no clause holds. Each mapping is one function here, used
//! both ways: the export keeps a part of the kept document exactly while reading it here still
//! gives the contract's clause, and writes the clause's own form otherwise.
//!
//! A document this tool cannot hold is refused with every reason at once, never imported in
//! part: several tables (a contract is one layer), a column type with no attribute type, a
//! clause whose kind the store lacks.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::yaml_read::{read, OdcsErrors, Problem, Read};
use crate::model::history::toml_string;
use crate::model::{is_dataset_name, KindTable, Shape};

/// What an import needs besides the document.
pub struct Options<'a> {
    /// The dataset name, when the document's `name` is not one.
    pub dataset: Option<&'a str>,
    /// `valid_from` when the document has no `contractCreatedTs`.
    pub today: chrono::NaiveDate,
    /// The store's clause kinds: a clause is only drafted when the store has its kind.
    pub kinds: &'a KindTable,
}

/// An attribute as one schema property says it.
#[derive(Debug, Clone, PartialEq)]
pub struct Attr {
    pub ty: String,
    pub required: bool,
    /// The null bound as a fraction, and the index of the quality check that says it.
    pub null: Option<(f64, usize)>,
}

/// The attribute type a property's `physicalType` names when it is one of ours (what our
/// export writes), else its `logicalType`'s.
pub fn attr_type(p: &Map<String, Value>) -> Result<String, String> {
    const OURS: [&str; 8] = [
        "bool", "int32", "int64", "float64", "string", "date", "datetime", "binary",
    ];
    let physical = p.get("physicalType").and_then(Value::as_str);
    if let Some(t) = physical.filter(|t| OURS.contains(t)) {
        return Ok(t.to_string());
    }
    match p.get("logicalType").and_then(Value::as_str) {
        Some("string") => Ok("string".into()),
        Some("integer") => Ok("int64".into()),
        Some("number") => Ok("float64".into()),
        Some("boolean") => Ok("bool".into()),
        Some("date") => Ok("date".into()),
        Some("timestamp") => Ok("datetime".into()),
        Some(other) => Err(format!(
            "logicalType `{other}` has no attribute type (bool, int32, int64, float64, string, \
             date, datetime, binary)"
        )),
        None => Err(match physical {
            Some(t) => format!("no logicalType, and physicalType `{t}` is not an attribute type"),
            None => "neither logicalType nor physicalType: no attribute type".into(),
        }),
    }
}

/// A `nullValues` check's bound as a fraction, where it is one: `mustBe: 0`, or
/// `mustBeLessOrEqualTo` in percent (a count of rows is no fraction, unless it is 0).
pub fn null_bound(check: &Value) -> Option<f64> {
    if check.get("metric").and_then(Value::as_str) != Some("nullValues") {
        return None;
    }
    let zero = |v: Option<&Value>| v.and_then(Value::as_f64) == Some(0.0);
    if zero(check.get("mustBe")) {
        return Some(0.0);
    }
    let limit = check.get("mustBeLessOrEqualTo").and_then(Value::as_f64)?;
    match check.get("unit").and_then(Value::as_str) {
        Some("percent") if (0.0..=100.0).contains(&limit) => Some(limit / 100.0),
        _ if limit == 0.0 => Some(0.0),
        _ => None,
    }
}

/// A `rowCount` check's floor, where it is one (`mustBeGreaterThan n` on a count is `n + 1`).
pub fn row_floor(check: &Value) -> Option<f64> {
    if check.get("metric").and_then(Value::as_str) != Some("rowCount") {
        return None;
    }
    if let Some(n) = check.get("mustBeGreaterOrEqualTo").and_then(Value::as_f64) {
        return Some(n);
    }
    let n = check.get("mustBeGreaterThan").and_then(Value::as_f64)?;
    (n.fract() == 0.0).then_some(n + 1.0)
}

/// The attribute a property says, or `None` for the geometry column.
pub fn property_attr(p: &Map<String, Value>) -> Result<Option<Attr>, String> {
    if super::geometry_column::is_geometry(p) {
        return Ok(None);
    }
    let ty = attr_type(p)?;
    let required = p.get("required").and_then(Value::as_bool) == Some(true);
    let null = p.get("quality").and_then(Value::as_array).and_then(|q| {
        q.iter()
            .enumerate()
            .find_map(|(i, c)| null_bound(c).map(|b| (b, i)))
    });
    Ok(Some(Attr { ty, required, null }))
}

/// The name of the store's clause that a `rowCount` floor becomes: any lower bound on the
/// feature count.
pub fn feature_count_clause(kinds: &KindTable) -> Option<String> {
    kinds
        .iter()
        .find(|s| s.shape == Shape::LowerBound && s.metric.as_deref() == Some("feature_count"))
        .map(|s| s.name.to_string())
}

/// The one schema object, or why there is none to import.
pub fn the_object(doc: &Value) -> Result<&Map<String, Value>, String> {
    match doc
        .get("schema")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([Value::Object(o)]) => Ok(o),
        Some([_]) => Err("the schema object is not a mapping".into()),
        None | Some([]) => Err("no schema object: a contract describes one layer".into()),
        Some(many) => Err(format!(
            "{} schema objects: a contract describes one layer (split the document)",
            many.len()
        )),
    }
}

/// The draft of the ODCS document `text` read from `file`.
pub fn import(file: &str, text: &str, o: &Options) -> Result<Imported, OdcsErrors> {
    let errors = |problems| OdcsErrors {
        file: file.to_string(),
        problems,
    };
    let r = read(text).map_err(errors)?;
    let mut f = Found::default();
    let d = draft(&r, file, text, o, &mut f);
    f.problems.sort_by_key(|p| (p.line, p.column));
    f.notes.sort_by_key(|p| (p.line, p.column));
    match d {
        Some(draft) if f.problems.is_empty() => Ok(Imported {
            draft,
            notes: f.notes.iter().map(|n| n.at(file)).collect(),
        }),
        _ => Err(errors(f.problems)),
    }
}

/// A draft, and what of the document it read as no clause though it looked like one.
pub struct Imported {
    pub draft: String,
    pub notes: Vec<String>,
}

#[derive(Default)]
struct Found {
    problems: Vec<Problem>,
    notes: Vec<Problem>,
}

fn draft(r: &Read, file: &str, text: &str, o: &Options, f: &mut Found) -> Option<String> {
    let doc = &r.doc;
    let s = |k: &str| doc.get(k).and_then(Value::as_str);
    match s("apiVersion") {
        Some(v) if v.starts_with("v3.") => {}
        Some(v) => f.problems.push(r.problem(
            "/apiVersion",
            format!("apiVersion `{v}`: only ODCS v3 documents are read"),
        )),
        None => f
            .problems
            .push(r.problem("", "no apiVersion: not an ODCS v3 document")),
    }
    match s("status") {
        None | Some("active") => {}
        Some(w @ ("proposed" | "deprecated" | "retired")) => f.notes.push(r.problem(
            "/status",
            format!(
                "status `{w}` is no clause: the store gives a version's state, and exports \
                 a live version as `active`"
            ),
        )),
        Some(w) => f.notes.push(r.problem(
            "/status",
            format!(
                "status `{w}` is no clause: the store gives a version's state (the export \
                 writes `{w}` back while the version is live)"
            ),
        )),
    }
    if s("kind") != Some("DataContract") {
        f.problems
            .push(r.problem("/kind", "kind is not `DataContract`"));
    }
    let dataset = match (o.dataset, s("name")) {
        (Some(d), _) => Some(d.to_string()),
        (None, Some(n)) if is_dataset_name(n) => Some(n.to_string()),
        (None, Some(n)) => {
            f.problems.push(r.problem(
                "/name",
                format!(
                    "name `{n}` is not a dataset name ([a-z0-9][a-z0-9_-]{{0,63}}): give --dataset"
                ),
            ));
            None
        }
        (None, None) => {
            f.problems.push(r.problem(
                "",
                "no `name` to take the dataset name from: give --dataset",
            ));
            None
        }
    };
    let version = match doc.get("version") {
        Some(Value::String(v)) => match semver::Version::parse(v) {
            Ok(v) => Some(v),
            Err(e) => {
                f.problems
                    .push(r.problem("/version", format!("version `{v}`: {e}")));
                None
            }
        },
        Some(v) => {
            f.problems
                .push(r.problem("/version", format!("version {v} is not a semantic version")));
            None
        }
        None => {
            f.problems.push(r.problem("", "no version"));
            None
        }
    };
    let valid_from = match s("contractCreatedTs") {
        Some(ts) => match ts
            .get(..10)
            .and_then(|d| d.parse::<chrono::NaiveDate>().ok())
        {
            Some(d) => d,
            None => {
                f.problems.push(r.problem(
                    "/contractCreatedTs",
                    format!("contractCreatedTs `{ts}` does not start with a date"),
                ));
                o.today
            }
        },
        None => o.today,
    };
    let description = doc
        .pointer("/description/purpose")
        .and_then(Value::as_str)
        .or_else(|| doc.pointer("/schema/0/description").and_then(Value::as_str));

    let object = match the_object(doc) {
        Ok(obj) => obj,
        Err(e) => {
            f.problems.push(r.problem("/schema", e));
            return None;
        }
    };
    let clauses = object_clauses(r, object, o.kinds, f);
    let (dataset, version) = (dataset?, version?);

    let mut t = String::new();
    let _ = writeln!(
        t,
        "# Imported from {file} by `contracts import odcs`: review every clause."
    );
    let _ = writeln!(t, "dataset     = {}", toml_string(&dataset));
    let _ = writeln!(t, "version     = {}", toml_string(&version.to_string()));
    let _ = writeln!(t, "valid_from  = {valid_from}");
    if let Some(d) = description {
        let _ = writeln!(t, "description = {}", toml_string(d));
    }
    let _ = writeln!(t, "\n[clauses]");
    for (name, value) in &clauses {
        let _ = writeln!(
            t,
            "{} = {}",
            crate::release::draft::key(name),
            inline(value)
        );
    }
    let _ = writeln!(
        t,
        "\n# The imported document, verbatim: `contracts export odcs` writes it back, with what\n\
         # the clauses above say in place of the parts they were read from.\n[odcs]\ndocument = {}",
        multiline(text)
    );
    Some(t)
}

/// The clauses of the schema object, in the JSON form `ClauseValue::to_json` gives.
fn object_clauses(
    r: &Read,
    object: &Map<String, Value>,
    kinds: &KindTable,
    f: &mut Found,
) -> BTreeMap<String, Value> {
    let at = "/schema/0";
    let mut clauses = BTreeMap::new();
    let mut required = Map::new();
    let mut optional = Map::new();
    let mut nulls = Map::new();
    let mut geometry = None;
    let props = object.get("properties").and_then(Value::as_array);
    for (i, p) in props.into_iter().flatten().enumerate() {
        let here = format!("{at}/properties/{i}");
        let Some(p) = p.as_object() else {
            f.problems
                .push(r.problem(&here, "a property that is not a mapping"));
            continue;
        };
        let Some(name) = p.get("name").and_then(Value::as_str) else {
            f.problems.push(r.problem(&here, "a property with no name"));
            continue;
        };
        if required.contains_key(name) || optional.contains_key(name) {
            f.problems
                .push(r.problem(&here, format!("property `{name}` appears twice")));
        }
        let checks = p.get("quality").and_then(Value::as_array);
        for (j, c) in checks.into_iter().flatten().enumerate() {
            let metric = c.get("metric").and_then(Value::as_str);
            if metric == Some("nullValues") && null_bound(c).is_none() {
                f.notes.push(r.problem(
                    &format!("{here}/quality/{j}"),
                    format!(
                        "property `{name}`: this nullValues check is no fraction of the \
                         features (max_null_fraction reads `mustBe: 0` or \
                         `mustBeLessOrEqualTo` in percent): kept in the document only"
                    ),
                ));
            }
        }
        match property_attr(p) {
            Ok(Some(a)) => {
                if let Some((b, _)) = a.null {
                    nulls.insert(name.to_string(), json!(b));
                }
                let side = if a.required {
                    &mut required
                } else {
                    &mut optional
                };
                side.insert(name.to_string(), json!(a.ty));
            }
            Ok(None) if geometry.is_some() => f.problems.push(r.problem(
                &here,
                format!("property `{name}` is a second geometry column: a contract has one"),
            )),
            Ok(None) => match super::geometry_column::clauses(p) {
                Ok(g) => geometry = Some(g),
                Err(e) => f
                    .problems
                    .push(r.problem(&here, format!("property `{name}`: {e}"))),
            },
            Err(e) => f
                .problems
                .push(r.problem(&here, format!("property `{name}`: {e}"))),
        }
    }
    for (name, m) in [
        ("required_attributes", required),
        ("optional_attributes", optional),
    ] {
        if !m.is_empty() {
            clauses.insert(name.to_string(), Value::Object(m));
        }
    }
    if !nulls.is_empty() {
        clauses.insert("max_null_fraction".into(), Value::Object(nulls));
    }
    clauses.extend(geometry.unwrap_or_default());
    let checks = object.get("quality").and_then(Value::as_array);
    for (i, c) in checks.into_iter().flatten().enumerate() {
        let Some(n) = row_floor(c) else {
            if c.get("metric").and_then(Value::as_str) == Some("rowCount") {
                f.notes.push(r.problem(
                    &format!("{at}/quality/{i}"),
                    "this rowCount check is no floor (a feature-count clause reads \
                     `mustBeGreaterOrEqualTo`, or `mustBeGreaterThan` an integer): kept in the \
                     document only",
                ));
            }
            continue;
        };
        match feature_count_clause(kinds) {
            Some(name) => {
                clauses.insert(name, json!(n));
            }
            None => f.problems.push(r.problem(
                &format!("{at}/quality/{i}"),
                "a rowCount floor needs a feature-count clause, and the store has no kind for \
                 one: add to contracts.toml [kinds]: min_feature_count = { kind = \"narrowing\", \
                 shape = \"lower_bound\", metric = \"feature_count\" }",
            )),
        }
    }
    clauses
}

/// A clause value as TOML inline text.
fn inline(v: &Value) -> String {
    match v {
        Value::String(s) => toml_string(s),
        Value::Number(n) => match n.as_f64() {
            Some(f) => toml::Value::Float(f).to_string(),
            None => n.to_string(),
        },
        Value::Bool(b) => b.to_string(),
        Value::Array(a) => format!("[{}]", a.iter().map(inline).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => format!(
            "{{ {} }}",
            m.iter()
                .map(|(k, v)| format!("{} = {}", crate::release::draft::key(k), inline(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Null => "\"\"".into(),
    }
}

/// `text` as a TOML multi-line basic string: read back, it is `text` byte for byte.
fn multiline(text: &str) -> String {
    let mut out = String::from("\"\"\"\n");
    let mut quotes = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        quotes = if c == '"' { quotes + 1 } else { 0 };
        match c {
            // Three quotes in a row would close the string, and so would a last quote joined
            // to the closing delimiter: those are escaped.
            '"' if quotes == 3 || chars.peek().is_none() => {
                out.push_str("\\\"");
                quotes = 0;
            }
            '\\' => out.push_str("\\\\"),
            '\n' | '\t' => out.push(c),
            '\u{0}'..='\u{1f}' | '\u{7f}' => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push_str("\"\"\"");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept document reads back from the draft byte for byte, whatever it holds: quotes
    /// in runs, a closing quote, backslashes, CRLF, controls.
    fn kept(text: &str) -> String {
        let t: toml::Value = toml::from_str(&format!("document = {}", multiline(text)))
            .unwrap_or_else(|e| panic!("{e}: {text:?}"));
        t["document"].as_str().unwrap().to_string()
    }

    #[test]
    fn awkward_documents_are_kept_exactly() {
        for text in [
            "",
            "\"",
            "a: \"\"\"\"\"\"\"",
            "\"\"\"",
            "x: '\\'\r\ny: \"\\u0041\"\r\n",
            "\n\nleading newlines",
            "tab\there\u{7f}\u{1}\u{85}\u{2028}",
        ] {
            assert_eq!(kept(text), text);
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_kept_exactly(text in "\\PC*|[\"\\\\\r\n\t\u{0}-\u{1f}a]*") {
            proptest::prop_assert_eq!(kept(&text), text);
        }
    }
}
