//! The contract file (docs/src/reference/contract.md): parsed strictly, then validated into a typed
//! value before any rule looks at it.

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDate;
use semver::Version;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::kind::{Check, ClauseSpec, KindTable};
use super::location::{from_toml_all, Located, TomlErrors};
use super::value::{is_geographic_crs, parse_value, ClauseValue};

/// How a contract holds a clause: a release is held to it, only warned about it, or it is
/// never checked (its kind has no check, or this build does not know the clause).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClauseStatus {
    Enforced,
    Advisory,
    NotEvaluated,
    /// Set aside by the reading side: a newer build's clause.
    Unknown,
}

impl ClauseStatus {
    /// In words, as `show` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            ClauseStatus::Enforced => "enforced",
            ClauseStatus::Advisory => "advisory",
            ClauseStatus::NotEvaluated => "not evaluated",
            ClauseStatus::Unknown => "not evaluated (unknown to this build)",
        }
    }
}

/// How to treat a clause the kind table does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// Writing side (`diff`, `propose`, `check`): a clause with no kind is an error, because its
    /// change rule would otherwise be decided under pressure.
    Writing,
    /// Reading side (`validate`, `show`): kept aside and reported as not evaluated, so an older
    /// build keeps working against a newer contract. A top-level key this build does not know
    /// (a newer build's, such as `[deprecated]` was once) is set aside alike.
    Reading,
    /// A draft (`propose`, `backtest`): a clause with no kind is kept aside, to be one refusal
    /// among the proposal's others, but an unknown top-level key is an error: in a draft it is
    /// a typo, not a newer build's key.
    Draft,
}

/// One clause with its row of the kind table.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub spec: ClauseSpec,
    pub value: ClauseValue,
}

/// A validated contract version.
#[derive(Debug, Clone, PartialEq)]
pub struct Contract {
    pub dataset: String,
    pub version: Version,
    pub supersedes: Option<Version>,
    pub valid_from: NaiveDate,
    pub sunset: Option<NaiveDate>,
    pub description: Option<String>,
    pub advisory: BTreeSet<String>,
    /// Envelope clauses that cross the antimeridian wider than 180° on purpose
    /// (`wide_antimeridian = ["envelope"]`); any other such box is refused by `propose`.
    pub wide_antimeridian: BTreeSet<String>,
    pub clauses: BTreeMap<String, Clause>,
    /// Clauses this build has no kind for (only with [`Strictness::Reading`]).
    pub unknown: BTreeMap<String, toml::Value>,
    /// `[deprecated]`: clause keys announced to go away, by key.
    pub deprecated: BTreeMap<String, super::deprecation::Deprecation>,
    /// Top-level keys this build does not know (only with [`Strictness::Reading`]): a newer
    /// build's, set aside so that this one keeps reading the contract.
    pub unknown_keys: BTreeMap<String, toml::Value>,
    /// The ODCS document the contract was imported from (`[odcs] document`), verbatim:
    /// `export odcs` writes back what no clause holds.
    pub odcs: Option<String>,
}

impl Contract {
    /// The line (major number) this version belongs to.
    pub fn line(&self) -> u64 {
        self.version.major
    }

    pub fn is_advisory(&self, clause: &str) -> bool {
        self.advisory.contains(clause)
    }

    /// How this contract holds clause `name`, for `show` and `site` alike. A name it does not
    /// hold as a clause is one the reading side set aside ([`Contract::unknown`]).
    pub fn clause_status(&self, name: &str) -> ClauseStatus {
        match self.clauses.get(name) {
            None => ClauseStatus::Unknown,
            Some(_) if self.is_advisory(name) => ClauseStatus::Advisory,
            Some(c) if matches!(c.spec.check, Check::NotEvaluated(_)) => ClauseStatus::NotEvaluated,
            Some(_) => ClauseStatus::Enforced,
        }
    }

    /// Whether it still promises a clause key (`crs`, `optional_attributes.pop_est`): a
    /// kinded clause or member, or a clause the reading side set aside.
    pub fn promises(&self, key: &str) -> bool {
        let value_of = |name: &str| self.clauses.get(name).map(|c| &c.value);
        super::deprecation::resolve(&value_of, key).is_ok()
            || self
                .unknown
                .contains_key(super::deprecation::clause_of(key))
    }
}

/// The file's keys, as one struct twice: strict (every unknown key an error) for the writing
/// side, and lenient for the reading side, which sets aside a top-level key it does not know
/// as it sets aside a clause with no kind. The field list is written once so the two never
/// drift apart.
macro_rules! raw_contract {
    ($( $(#[$meta:meta])* $field:ident: $ty:ty, )*) => {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RawContract { $( $(#[$meta])* $field: $ty, )* }
        #[derive(Deserialize)]
        struct LenientContract { $( $(#[$meta])* $field: $ty, )* }
        impl From<LenientContract> for RawContract {
            fn from(l: LenientContract) -> RawContract {
                RawContract { $( $field: l.$field, )* }
            }
        }
        /// Every top-level key a contract may have.
        const TOP_LEVEL_KEYS: &[&str] = &[$( stringify!($field), )*];
    };
}

raw_contract! {
    // The required keys are checked with the others, so a missing one is one error among
    // all the file's, not the only one reported.
    dataset: Option<Spanned<String>>,
    version: Option<Spanned<String>>,
    supersedes: Option<Spanned<String>>,
    valid_from: Option<Spanned<toml::Value>>,
    sunset: Option<Spanned<toml::Value>>,
    description: Option<String>,
    advisory: Option<Vec<Spanned<String>>>,
    /// Bbox clauses that cross the antimeridian wider than 180° on purpose.
    wide_antimeridian: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    clauses: BTreeMap<String, Spanned<toml::Value>>,
    /// Clause keys announced to go away: `"optional_attributes.pop_est" = { reason = … }`.
    #[serde(default)]
    deprecated: BTreeMap<String, Spanned<toml::Value>>,
    /// The ODCS document the contract was imported from (`[odcs] document`).
    odcs: Option<RawOdcs>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOdcs {
    document: String,
}

/// The top-level keys of `text` this build does not know, with their values: set aside on the
/// reading side. Empty when the text is no TOML table (the strict parse reports that).
fn unknown_top_level(text: &str) -> BTreeMap<String, toml::Value> {
    let Ok(table) = text.parse::<toml::Table>() else {
        return BTreeMap::new();
    };
    table
        .into_iter()
        .filter(|(k, _)| !TOP_LEVEL_KEYS.contains(&k.as_str()))
        .collect()
}

/// Whether `name` is a valid dataset name (`[a-z0-9][a-z0-9_-]{0,63}`). Checked before any
/// path is built from it, so a name can never lead outside the store.
pub fn is_dataset_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && matches!(bytes[0], b'a'..=b'z' | b'0'..=b'9')
        && bytes[1..]
            .iter()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

pub use super::day::toml_date;

/// Parse and validate a contract. `file` names it in errors; every error carries the line and
/// column of the offending value.
pub fn parse_contract(
    file: &str,
    text: &str,
    kinds: &KindTable,
    strictness: Strictness,
) -> Result<Contract, TomlErrors> {
    // Every unknown key is reported, and the rest of the file is still checked without them.
    // The reading side sets aside a top-level key it does not know instead.
    let unknown_keys = match strictness {
        Strictness::Reading => unknown_top_level(text),
        Strictness::Writing | Strictness::Draft => BTreeMap::new(),
    };
    let (raw, mut errors) = if unknown_keys.is_empty() {
        from_toml_all::<RawContract>(file, text)
    } else {
        let (raw, errors) = from_toml_all::<LenientContract>(file, text);
        (raw.map(RawContract::from), errors)
    };
    let Some(raw) = raw else {
        return Err(TomlErrors::in_line_order(errors));
    };
    for (key, present) in [
        ("dataset", raw.dataset.is_some()),
        ("version", raw.version.is_some()),
        ("valid_from", raw.valid_from.is_some()),
    ] {
        if !present {
            errors.push(Located::at(
                file,
                text,
                None,
                format!("the file has no `{key}`"),
            ));
        }
    }
    let mut fail = |span: std::ops::Range<usize>, msg: String| {
        errors.push(Located::at(file, text, Some(span), msg));
    };

    let dataset = raw.dataset.as_ref().map(|d| d.get_ref().clone());
    if let (Some(name), Some(d)) = (&dataset, &raw.dataset) {
        if !is_dataset_name(name) {
            fail(
                d.span(),
                format!("dataset name `{name}` must match [a-z0-9][a-z0-9_-]{{0,63}}"),
            );
        }
    }
    let mut version_of = |s: &Spanned<String>, what: &str| match Version::parse(s.get_ref()) {
        Ok(v) => Some(v),
        Err(e) => {
            fail(
                s.span(),
                format!("{what} `{}` is not a semantic version: {e}", s.get_ref()),
            );
            None
        }
    };
    let version = raw.version.as_ref().and_then(|v| version_of(v, "version"));
    let supersedes = raw
        .supersedes
        .as_ref()
        .and_then(|s| version_of(s, "supersedes"));
    if let (Some(v), Some(s), Some(span)) = (&version, &supersedes, raw.supersedes.as_ref()) {
        if s >= v {
            fail(
                span.span(),
                format!("supersedes `{s}` is not older than version `{v}`"),
            );
        }
    }
    let mut date_of = |d: &Spanned<toml::Value>, what: &str| match super::day::toml_day(d.get_ref())
    {
        Ok(date) => Some(date),
        Err(e) => {
            fail(d.span(), format!("{what}: {e}"));
            None
        }
    };
    let valid_from = raw
        .valid_from
        .as_ref()
        .and_then(|d| date_of(d, "valid_from"));
    let sunset = raw.sunset.as_ref().and_then(|d| date_of(d, "sunset"));
    if let (Some(from), Some(sun), Some(span)) = (valid_from, sunset, raw.sunset.as_ref()) {
        if sun <= from {
            fail(
                span.span(),
                format!("sunset {sun} is not after valid_from {from}"),
            );
        }
    }

    let geographic = raw
        .clauses
        .get("crs")
        .and_then(|c| c.get_ref().as_str())
        .is_some_and(is_geographic_crs)
        || raw
            .clauses
            .get("units")
            .and_then(|c| c.get_ref().as_str())
            .is_some_and(|u| u.starts_with("degree"));
    let mut clauses = BTreeMap::new();
    let mut unknown = BTreeMap::new();
    let mut unkinded = Vec::new();
    for (name, value) in &raw.clauses {
        let Some(spec) = kinds.get(name) else {
            match strictness {
                Strictness::Writing => fail(
                    value.span(),
                    format!(
                        "clause `{name}` has no kind: declare it in contracts.toml [kinds] \
                         (widening, narrowing or fixed) before using it"
                    ),
                ),
                Strictness::Reading | Strictness::Draft => {
                    unknown.insert(name.clone(), value.get_ref().clone());
                    unkinded.push((name, value.span()));
                }
            }
            continue;
        };
        match parse_value(value.get_ref(), spec.shape, spec.domain, geographic) {
            Ok(v) => {
                clauses.insert(
                    name.clone(),
                    Clause {
                        spec: spec.clone(),
                        value: v,
                    },
                );
            }
            Err(e) => fail(value.span(), format!("clause `{name}`: {e}")),
        }
    }

    let mut advisory = BTreeSet::new();
    for a in raw.advisory.iter().flatten() {
        let name = a.get_ref();
        if !raw.clauses.contains_key(name) {
            fail(
                a.span(),
                format!("advisory names `{name}`, which is not a clause of this contract"),
            );
        } else if !advisory.insert(name.clone()) {
            fail(a.span(), format!("`{name}` is listed twice in advisory"));
        }
    }

    // A crossing box wider than 180° is a swapped minx/maxx more often than a promise;
    // `propose` and `check` refuse one (`check_step`) unless the contract lists it here.
    let mut meant = BTreeSet::new();
    for w in raw.wide_antimeridian.iter().flatten() {
        let name = w.get_ref();
        match clauses.get(name).map(|c| &c.value) {
            Some(ClauseValue::Bbox(e)) if e.is_wide_crossing() => {
                meant.insert(name.clone());
            }
            Some(ClauseValue::Bbox(e)) => fail(
                w.span(),
                format!(
                    "wide_antimeridian names `{name}`, which is {:.1}° wide{}: remove it",
                    e.width(),
                    if e.crosses_antimeridian() {
                        ""
                    } else {
                        " and does not cross the antimeridian"
                    }
                ),
            ),
            _ => fail(
                w.span(),
                format!("wide_antimeridian names `{name}`, which is not an envelope clause of this contract"),
            ),
        }
    }
    let deprecated = super::deprecation::parse_entries(
        &raw.deprecated,
        &|n: &str| clauses.get(n).map(|c| &c.value),
        &raw.clauses,
        &mut fail,
    );
    if !errors.is_empty() {
        // A file refused anyway names its clauses with no kind too, read leniently or not:
        // a draft's misspelt clause is then fixed in the same round as its other mistakes.
        for (name, span) in unkinded {
            let near = super::suggest::nearest(name, kinds.iter().map(|k| k.name.as_str()))
                .map_or(String::new(), |k| format!(" (did you mean `{k}`?)"));
            errors.push(Located::at(
                file,
                text,
                Some(span),
                format!("clause `{name}` has no kind{near}"),
            ));
        }
        return Err(TomlErrors::in_line_order(errors));
    }
    match (dataset, version, valid_from) {
        (Some(dataset), Some(version), Some(valid_from)) => Ok(Contract {
            dataset,
            version,
            supersedes,
            valid_from,
            sunset,
            description: raw.description,
            advisory,
            wide_antimeridian: meant,
            clauses,
            unknown,
            deprecated,
            unknown_keys,
            odcs: raw.odcs.map(|o| o.document),
        }),
        // Each failure was pushed to `errors` above.
        _ => unreachable!("a missing or bad name, version or date always records an error"),
    }
}

/// An envelope clause that crosses the antimeridian: a crossing box is never silent (`diff`,
/// `propose` and `show` name each one with its width).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Crossing {
    pub clause: String,
    pub minx: f64,
    pub maxx: f64,
    pub width_degrees: f64,
    /// Listed in `wide_antimeridian`: wider than 180° on purpose.
    pub meant_wide: bool,
}

impl std::fmt::Display for Crossing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` crosses the antimeridian (minx {} > maxx {}) and is {:.1}° wide",
            self.clause, self.minx, self.maxx, self.width_degrees
        )?;
        if self.width_degrees > 180.0 {
            f.write_str(if self.meant_wide {
                " (wide_antimeridian: on purpose)"
            } else {
                " — more than half the globe: were minx and maxx swapped?"
            })?;
        }
        Ok(())
    }
}

/// The envelope clauses of `c` that cross the antimeridian.
pub fn crossings(c: &Contract) -> Vec<Crossing> {
    c.clauses
        .iter()
        .filter_map(|(name, clause)| match &clause.value {
            ClauseValue::Bbox(e) if e.crosses_antimeridian() => Some(Crossing {
                clause: name.clone(),
                minx: e.minx,
                maxx: e.maxx,
                width_degrees: e.width(),
                meant_wide: c.wide_antimeridian.contains(name),
            }),
            _ => None,
        })
        .collect()
}
