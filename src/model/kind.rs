//! Clause kinds and shapes, and the table that assigns them.
//!
//! The table is data, not code: every built-in clause is one row of [`BUILTIN`], and a store adds
//! rows for its own clauses in `contracts.toml` `[kinds]`. Nothing else in the crate names a
//! clause, so adding a clause is adding a row (with its [`Check`]), its fixture pair in
//! `tests/fixtures/rules` and its validation fixture in `tests/fixtures/validate`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A clause's change rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// May grow; shrinking breaks a consumer (envelope, permitted geometry, ...).
    Widening,
    /// May tighten; loosening breaks a consumer (tolerances, null fractions, ...).
    Narrowing,
    /// May not change at all without a major version (crs, units, ...).
    Fixed,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Widening => "widening",
            Kind::Narrowing => "narrowing",
            Kind::Fixed => "fixed",
        }
    }
}

super::display_as!(as_str: Kind);

/// What a clause's value looks like, and so how "contains" is decided for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// `[minx, miny, maxx, maxy]`; geometric containment, antimeridian-aware.
    Bbox,
    /// A list of distinct names; containment is superset.
    Set,
    /// Name -> type or text; containment is superset of entries, an entry may not change.
    Map,
    /// One number, an upper limit; a larger limit contains a smaller one.
    UpperBound,
    /// One number, a lower limit; a smaller limit contains a larger one.
    LowerBound,
    /// A number (one limit for every key) or a map of per-key upper limits.
    UpperBounds,
    /// Any value; only equality is defined.
    Value,
    /// Name -> meaning, where every key is its own fixed clause (`attribute_semantics`).
    /// Built-in only: a custom clause cannot ask for it.
    Meanings,
}

impl Shape {
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Bbox => "bbox",
            Shape::Set => "set",
            Shape::Map => "map",
            Shape::UpperBound => "upper_bound",
            Shape::LowerBound => "lower_bound",
            Shape::UpperBounds => "upper_bounds",
            Shape::Value => "value",
            Shape::Meanings => "meanings",
        }
    }

    /// The shapes a store may give a custom clause.
    pub const CUSTOM: [Shape; 7] = [
        Shape::Bbox,
        Shape::Set,
        Shape::Map,
        Shape::UpperBound,
        Shape::LowerBound,
        Shape::UpperBounds,
        Shape::Value,
    ];

    pub fn from_name(name: &str) -> Option<Shape> {
        Shape::CUSTOM.into_iter().find(|s| s.as_str() == name)
    }
}

super::display_as!(as_str: Shape);

/// What the values inside a clause must be, beyond its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Domain {
    /// No further constraint.
    Any,
    /// Numbers are fractions in `0..=1`.
    Fraction,
    /// Set members are OGC simple-feature geometry type names.
    GeometryTypes,
    /// Map values are attribute type names.
    AttributeTypes,
    /// Set members are coordinate dimensions (`XY`, `XYZ`, `XYM`, `XYZM`).
    Dimensions,
    /// Map values are metric limits; keys ending in `_fraction` are fractions.
    Metrics,
    /// Numbers are non-negative (counts, metres).
    NonNegative,
}

/// How `validate` decides a clause against a release: the row's behaviour as data, so
/// validation dispatches on it and never on a clause's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Check {
    /// The release's CRS is the clause's (`value`).
    CrsEquals,
    /// The release's CRS is one of the clause's (`set`).
    CrsListed,
    /// The release's envelope lies inside the clause's (`bbox`).
    EnvelopeInside,
    /// Every geometry type of the release is listed (`set`).
    TypesSubset,
    /// The release's geometry types are exactly the listed ones (`set`).
    TypesEqual,
    /// The release's coordinate dimensions are exactly the listed ones (`set`).
    DimensionsEqual,
    /// Each listed attribute is present with exactly its type (`map`).
    AttributesPresent,
    /// Each listed attribute, if present, has its type (`map`).
    AttributesTyped,
    /// Each attribute's null fraction is at most its limit (`upper_bounds`).
    NullFractions,
    /// Each named metric, measured or from the manifest, is at most its limit, one result per
    /// metric (`upper_bounds`).
    MetricLimits,
    /// The release's format is listed (`set`).
    FormatListed,
    /// The row's `metric` against the clause's bound (`upper_bound` / `lower_bound`); the
    /// check of every custom clause.
    MetricBound,
    /// Never evaluated, for the reason given.
    NotEvaluated(&'static str),
}

impl Check {
    /// Whether this check can decide a clause of `shape`: the guard test holds every built-in
    /// row to it.
    pub fn fits(self, shape: Shape) -> bool {
        use Check as C;
        match self {
            C::CrsEquals => shape == Shape::Value,
            C::CrsListed
            | C::TypesSubset
            | C::TypesEqual
            | C::DimensionsEqual
            | C::FormatListed => shape == Shape::Set,
            C::EnvelopeInside => shape == Shape::Bbox,
            C::AttributesPresent | C::AttributesTyped => shape == Shape::Map,
            C::NullFractions | C::MetricLimits => shape == Shape::UpperBounds,
            C::MetricBound => matches!(shape, Shape::UpperBound | Shape::LowerBound),
            C::NotEvaluated(_) => true,
        }
    }
}

/// One row of the clause table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClauseSpec {
    pub name: String,
    pub kind: Kind,
    pub shape: Shape,
    pub domain: Domain,
    /// The profile figure or manifest metric `validate` checks the clause against.
    pub metric: Option<String>,
    /// How `validate` decides it.
    pub check: Check,
    pub builtin: bool,
}

/// A built-in row, as `const` data.
pub struct Builtin {
    pub name: &'static str,
    pub kind: Kind,
    pub shape: Shape,
    pub domain: Domain,
    pub metric: Option<&'static str>,
    pub check: Check,
    /// How `validate` decides the clause against a release, for the manual and `show`.
    pub checks: &'static str,
}

/// The built-in clause table (docs/src/reference/contract.md).
pub const BUILTIN: &[Builtin] = &[
    Builtin {
        name: "envelope",
        kind: Kind::Widening,
        shape: Shape::Bbox,
        domain: Domain::Any,
        metric: None,
        check: Check::EnvelopeInside,
        checks: "the release's envelope lies inside it",
    },
    Builtin {
        name: "permitted_geometry",
        kind: Kind::Widening,
        shape: Shape::Set,
        domain: Domain::GeometryTypes,
        metric: None,
        check: Check::TypesSubset,
        checks: "every geometry type in the release is listed",
    },
    Builtin {
        name: "optional_attributes",
        kind: Kind::Widening,
        shape: Shape::Map,
        domain: Domain::AttributeTypes,
        metric: None,
        check: Check::AttributesTyped,
        checks: "each listed attribute, if present, has the listed type",
    },
    Builtin {
        name: "supported_output_formats",
        kind: Kind::Widening,
        shape: Shape::Set,
        domain: Domain::Any,
        metric: None,
        check: Check::FormatListed,
        checks: "the release's format is listed",
    },
    Builtin {
        name: "max_null_fraction",
        kind: Kind::Narrowing,
        shape: Shape::UpperBounds,
        domain: Domain::Fraction,
        metric: None,
        check: Check::NullFractions,
        checks: "each attribute's null fraction is at most its limit",
    },
    Builtin {
        name: "metric_tolerances",
        kind: Kind::Narrowing,
        shape: Shape::UpperBounds,
        domain: Domain::Metrics,
        metric: None,
        check: Check::MetricLimits,
        checks: "each named metric (profile or manifest) is at most its limit",
    },
    Builtin {
        name: "permitted_crs",
        kind: Kind::Narrowing,
        shape: Shape::Set,
        domain: Domain::Any,
        metric: None,
        check: Check::CrsListed,
        checks: "the release's CRS is listed",
    },
    Builtin {
        name: "max_imputed_fraction",
        kind: Kind::Narrowing,
        shape: Shape::UpperBound,
        domain: Domain::Fraction,
        metric: Some("imputed_fraction"),
        check: Check::MetricBound,
        checks: "the manifest's imputed_fraction is at most the limit",
    },
    Builtin {
        name: "crs",
        kind: Kind::Fixed,
        shape: Shape::Value,
        domain: Domain::Any,
        metric: None,
        check: Check::CrsEquals,
        checks: "the release's CRS equals it",
    },
    Builtin {
        name: "units",
        kind: Kind::Fixed,
        shape: Shape::Value,
        domain: Domain::Any,
        metric: None,
        check: Check::NotEvaluated("no format states its units reliably"),
        checks: "not evaluated (no format states units reliably)",
    },
    Builtin {
        name: "emitted_geometry",
        kind: Kind::Fixed,
        shape: Shape::Set,
        domain: Domain::GeometryTypes,
        metric: None,
        check: Check::TypesEqual,
        checks: "the release's geometry types are exactly these",
    },
    Builtin {
        name: "dimensions",
        kind: Kind::Fixed,
        shape: Shape::Set,
        domain: Domain::Dimensions,
        metric: None,
        check: Check::DimensionsEqual,
        checks: "the release's coordinate dimensions are exactly these",
    },
    Builtin {
        name: "required_attributes",
        kind: Kind::Fixed,
        shape: Shape::Map,
        domain: Domain::AttributeTypes,
        metric: None,
        check: Check::AttributesPresent,
        checks: "each attribute is present with exactly this type",
    },
    Builtin {
        name: "attribute_semantics",
        kind: Kind::Fixed,
        shape: Shape::Meanings,
        domain: Domain::Any,
        metric: None,
        check: Check::NotEvaluated("a meaning is a promise, not a measurement"),
        checks: "not evaluated (a meaning is a promise, not a measurement)",
    },
];

/// The clause table in force for one store: the built-ins plus the store's own rows.
#[derive(Debug, Clone, PartialEq)]
pub struct KindTable {
    rows: BTreeMap<String, ClauseSpec>,
}

impl Default for KindTable {
    fn default() -> Self {
        KindTable::builtin()
    }
}

/// Why a custom row was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KindError {
    #[error("`{0}` is a built-in clause; its kind cannot be redefined")]
    Builtin(String),
    #[error("unknown shape `{shape}` for clause `{clause}` (expected one of: bbox, set, map, upper_bound, lower_bound, upper_bounds, value)")]
    UnknownShape { clause: String, shape: String },
    #[error("clause name `{0}` must match [a-z][a-z0-9_]*")]
    BadName(String),
}

impl KindTable {
    pub fn builtin() -> KindTable {
        let rows = BUILTIN
            .iter()
            .map(|b| {
                (
                    b.name.to_string(),
                    ClauseSpec {
                        name: b.name.to_string(),
                        kind: b.kind,
                        shape: b.shape,
                        domain: b.domain,
                        metric: b.metric.map(str::to_string),
                        check: b.check,
                        builtin: true,
                    },
                )
            })
            .collect();
        KindTable { rows }
    }

    /// Add a store's own clause. Custom numbers carry no domain beyond their shape.
    pub fn add_custom(
        &mut self,
        name: &str,
        kind: Kind,
        shape: &str,
        metric: Option<&str>,
    ) -> Result<(), KindError> {
        if self.rows.get(name).is_some_and(|r| r.builtin) {
            return Err(KindError::Builtin(name.to_string()));
        }
        if !is_clause_name(name) {
            return Err(KindError::BadName(name.to_string()));
        }
        let shape = Shape::from_name(shape).ok_or_else(|| KindError::UnknownShape {
            clause: name.to_string(),
            shape: shape.to_string(),
        })?;
        self.rows.insert(
            name.to_string(),
            ClauseSpec {
                name: name.to_string(),
                kind,
                shape,
                domain: Domain::Any,
                metric: metric.map(str::to_string),
                check: Check::MetricBound,
                builtin: false,
            },
        );
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&ClauseSpec> {
        self.rows.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ClauseSpec> {
        self.rows.values()
    }
}

fn is_clause_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
