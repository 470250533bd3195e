//! An ODCS document read from YAML into the JSON data model the export builds, with the line
//! and column of every node, so each problem of an import names its place in the file.
//!
//! YAML 1.2's core schema decides what a plain scalar is (`2022-10-03` and `09:00` stay
//! strings, `1.0` is a float): the same reading the round trip's normalisation uses. A
//! document's mapping keys must be strings, aliases are expanded, duplicate keys refused.

use std::collections::HashMap;

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use serde_json::{Map, Value};

/// One problem of an ODCS document, at a place in its file (line 1-based, column 1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Problem {
    /// The problem as one line: `file:line:column: message`.
    pub fn at(&self, file: &str) -> String {
        format!("{file}:{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Every problem of one document, in line order: an import reports them all at once.
#[derive(Debug, thiserror::Error)]
#[error("{}", render(.file, .problems))]
pub struct OdcsErrors {
    pub file: String,
    pub problems: Vec<Problem>,
}

fn render(file: &str, problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| p.at(file))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A document and where each of its nodes is: keyed by JSON Pointer (`/schema/0/name`).
pub struct Read {
    pub doc: Value,
    places: HashMap<String, (usize, usize)>,
}

impl Read {
    /// The place of the node at `pointer`, else of its nearest present parent.
    pub fn place(&self, pointer: &str) -> (usize, usize) {
        let mut p = pointer;
        loop {
            if let Some(at) = self.places.get(p) {
                return *at;
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return (1, 1),
            }
        }
    }

    pub fn problem(&self, pointer: &str, message: impl Into<String>) -> Problem {
        let (line, column) = self.place(pointer);
        Problem {
            line,
            column,
            message: message.into(),
        }
    }
}

/// Read the one YAML document of `text`.
pub fn read(text: &str) -> Result<Read, Vec<Problem>> {
    let docs = MarkedYaml::load_from_str(text).map_err(|e| {
        vec![Problem {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: format!("not YAML: {}", e.info()),
        }]
    })?;
    let mut docs = docs.into_iter();
    let (Some(first), None) = (docs.next(), docs.next()) else {
        return Err(vec![Problem {
            line: 1,
            column: 1,
            message: "an ODCS file holds exactly one YAML document".into(),
        }]);
    };
    let mut places = HashMap::new();
    let mut problems = Vec::new();
    let doc = convert(&first, String::new(), &mut places, &mut problems);
    if problems.is_empty() {
        Ok(Read { doc, places })
    } else {
        Err(problems)
    }
}

/// `~` and `/` escaped as JSON Pointer needs.
pub fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn convert(
    node: &MarkedYaml,
    pointer: String,
    places: &mut HashMap<String, (usize, usize)>,
    problems: &mut Vec<Problem>,
) -> Value {
    let at = (node.span.start.line(), node.span.start.col() + 1);
    places.insert(pointer.clone(), at);
    let mut bad = |message: String| {
        problems.push(Problem {
            line: at.0,
            column: at.1,
            message,
        });
        Value::Null
    };
    match &node.data {
        YamlData::Value(s) => match s {
            Scalar::Null => Value::Null,
            Scalar::Boolean(b) => Value::Bool(*b),
            Scalar::Integer(i) => Value::from(*i),
            Scalar::FloatingPoint(f) => match serde_json::Number::from_f64(f.into_inner()) {
                Some(n) => Value::Number(n),
                None => bad(format!("{} is not a finite number", f.into_inner())),
            },
            Scalar::String(s) => Value::String(s.to_string()),
        },
        YamlData::Sequence(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, n)| convert(n, format!("{pointer}/{i}"), places, problems))
                .collect(),
        ),
        YamlData::Mapping(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let key = match &k.data {
                    YamlData::Value(Scalar::String(s)) => s.to_string(),
                    _ => {
                        problems.push(Problem {
                            line: k.span.start.line(),
                            column: k.span.start.col() + 1,
                            message: "a mapping key that is not a string".into(),
                        });
                        continue;
                    }
                };
                let value = convert(v, format!("{pointer}/{}", token(&key)), places, problems);
                out.insert(key, value);
            }
            Value::Object(out)
        }
        YamlData::Tagged(_, inner) => convert(inner, pointer, places, problems),
        YamlData::Alias(_) => bad("an alias that names no anchor".into()),
        YamlData::BadValue | YamlData::Representation(..) => {
            bad("a value that does not read under its tag".into())
        }
    }
}
