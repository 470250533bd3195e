//! The columns of a GeoJSON file and the counts so far: a property's type is inferred from
//! its values as they come (see the module above for the rules), and the state of one part
//! of a file absorbs the next part's, so the parallel reader's batches add up to what the
//! sequential reader counts.

use std::collections::HashMap;

use serde_json::Value;

use super::super::profile::{AttrAcc, AttrType};
use super::super::Accumulator;

pub(super) struct Column {
    ty: Option<AttrType>,
    present: u64,
    /// The feature (1-based) this column was last seen in, so a key repeated inside one
    /// feature's properties counts once.
    seen_in: u64,
    pub(super) name: String,
}

pub(super) struct State {
    pub(super) acc: Accumulator,
    pub(super) columns: Vec<Column>,
    index: HashMap<String, usize>,
    /// The column after the one a property last went to: features usually list their
    /// properties in one order, so the next key is most often this column's, found
    /// without hashing.
    hint: usize,
    pub(super) crs: Option<String>,
    /// A text had a `crs` member (then `crs` is what it named): a later part's overrides
    /// an earlier one's, as a later text's does in the sequential reader.
    pub(super) crs_seen: bool,
    /// Read coordinates with [`raw_coords`] (see [`GeometrySeed`]).
    pub(super) raw: bool,
    /// Features found in a `features` member of a Feature, a foreign member: not counted
    /// (as GDAL ignores foreign members), only reported.
    pub(super) foreign_features: u64,
}

pub(super) fn is_date(s: &[u8]) -> bool {
    s.len() == 10
        && s.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        })
}

pub(super) fn is_datetime(s: &[u8]) -> bool {
    s.len() >= 19
        && is_date(&s[..10])
        && matches!(s[10], b'T' | b' ')
        && s[11..19].iter().enumerate().all(|(i, b)| match i {
            2 | 5 => *b == b':',
            _ => b.is_ascii_digit(),
        })
        && s[19..]
            .iter()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'Z' | b'+' | b'-' | b':'))
}

pub(super) fn value_type(v: &Value) -> Option<AttrType> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(_) => AttrType::Bool,
        Value::Number(n) if n.is_i64() => AttrType::Int64,
        Value::Number(_) => AttrType::Float64,
        Value::String(s) if is_date(s.as_bytes()) => AttrType::Date,
        Value::String(s) if is_datetime(s.as_bytes()) => AttrType::Datetime,
        _ => AttrType::String,
    })
}

impl State {
    /// The state a whole file starts from: RFC 7946's CRS unless a text names another.
    pub(super) fn whole() -> State {
        State {
            crs: Some("EPSG:4326".to_string()),
            ..State::part()
        }
    }

    /// The state a part of a file starts from.
    pub(super) fn part() -> State {
        State {
            acc: Accumulator::default(),
            columns: Vec::new(),
            index: HashMap::new(),
            hint: 0,
            crs: None,
            crs_seen: false,
            raw: false,
            foreign_features: 0,
        }
    }

    /// Add the counts of the next part of the file. The same as reading the part into this
    /// state: counts add, envelopes and type sets unite, and column types join as the
    /// sequential reader joins them value by value (`AttrType::join`, else `string`), which
    /// gives one answer whatever the grouping.
    pub(super) fn absorb(&mut self, part: State) {
        self.acc.absorb(&part.acc);
        self.foreign_features += part.foreign_features;
        for c in part.columns {
            match self.index.get(&c.name) {
                Some(&i) => {
                    let m = &mut self.columns[i];
                    m.present += c.present;
                    m.ty = match (m.ty, c.ty) {
                        (None, t) | (t, None) => t,
                        (Some(a), Some(b)) => {
                            Some(AttrType::join(a, b).unwrap_or(AttrType::String))
                        }
                    };
                }
                None => {
                    self.index.insert(c.name.clone(), self.columns.len());
                    self.columns.push(Column { seen_in: 0, ..c });
                }
            }
        }
        if part.crs_seen {
            self.crs = part.crs;
            self.crs_seen = true;
        }
    }

    /// The CRS and the counts, with each column's nulls.
    pub(super) fn finish(self) -> (Option<String>, Accumulator) {
        let mut acc = self.acc;
        let features = acc.features;
        acc.attributes = self
            .columns
            .into_iter()
            .map(|c| AttrAcc {
                name: c.name,
                ty: c.ty.unwrap_or(AttrType::String),
                nulls: features - c.present,
            })
            .collect();
        (self.crs, acc)
    }

    /// One property of the current feature (number `self.acc.features`), of type `t`
    /// (`None`: null; see [`value_type`]).
    pub(super) fn property(&mut self, key: &str, t: Option<AttrType>) {
        let hint = if self.hint < self.columns.len() {
            self.hint
        } else {
            0
        };
        let i = match self.columns.get(hint) {
            Some(c) if c.name == key => hint,
            _ => match self.index.get(key) {
                Some(&i) => i,
                None => {
                    self.columns.push(Column {
                        name: key.to_string(),
                        ty: None,
                        present: 0,
                        seen_in: 0,
                    });
                    self.index.insert(key.to_string(), self.columns.len() - 1);
                    self.columns.len() - 1
                }
            },
        };
        self.hint = i + 1;
        let Some(t) = t else { return };
        let c = &mut self.columns[i];
        let feature = self.acc.features;
        if c.seen_in != feature {
            c.seen_in = feature;
            c.present += 1;
        }
        c.ty = Some(match c.ty {
            None => t,
            Some(old) => AttrType::join(old, t).unwrap_or(AttrType::String),
        });
    }
}
