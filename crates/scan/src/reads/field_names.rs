//! Where a log of reads keeps each part of a read: the field names of a source's `fields`
//! table ([`FieldName`], [`Fields`]) and how `at` is written ([`AtUnit`]). The `contracts`
//! crate parses them from `contracts.toml`; [`super::fields::Mapping`] compiles them for the
//! readers.

use std::fmt;

/// A field of a record: the keys from the top-level object down (`client.id` is
/// `["client", "id"]`; `["client.id"]` is one key with a dot in it). For CSV and Parquet,
/// which have no nesting, a column name (the keys joined with dots).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldName(pub Vec<String>);

impl FieldName {
    pub fn plain(name: &str) -> FieldName {
        FieldName(vec![name.to_string()])
    }

    /// The column name in a flat format.
    pub fn column(&self) -> String {
        self.0.join(".")
    }
}

impl fmt::Display for FieldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.iter().any(|k| k.contains('.')) {
            write!(f, "{:?}", self.0)
        } else {
            f.write_str(&self.0.join("."))
        }
    }
}

/// How `at` is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AtUnit {
    /// RFC 3339 text with any fraction of a second and any offset (or, in Parquet, a
    /// timestamp column).
    #[default]
    Rfc3339,
    /// Seconds since the epoch, a number.
    Seconds,
    /// Milliseconds since the epoch, a number.
    Millis,
}

impl AtUnit {
    pub const ALL: [AtUnit; 3] = [AtUnit::Rfc3339, AtUnit::Seconds, AtUnit::Millis];

    /// How `unit` names it in `fields.at`.
    pub fn name(self) -> &'static str {
        match self {
            AtUnit::Rfc3339 => "rfc3339",
            AtUnit::Seconds => "s",
            AtUnit::Millis => "ms",
        }
    }
}

/// Where each part of a read is found in a record.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fields {
    pub at: FieldName,
    pub at_unit: AtUnit,
    pub consumer: FieldName,
    pub dataset: FieldName,
    pub contract: FieldName,
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            at: FieldName::plain("at"),
            at_unit: AtUnit::Rfc3339,
            consumer: FieldName::plain("consumer"),
            dataset: FieldName::plain("dataset"),
            contract: FieldName::plain("contract"),
        }
    }
}
