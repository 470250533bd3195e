//! The keys of an access-log source this layer reads ([`AccessSpec`]), and why a set of them
//! does not make sense ([`AccessConfigError`]).

use super::combined::PatternError;
use super::template::TemplateError;
use super::AccessFormat;

/// What an access-log source says about its lines: the keys of its `[[consumption.source]]`
/// table that this layer reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessSpec {
    pub format: AccessFormat,
    /// `principal = "FIELD"`: a field name of the format, `query:NAME` (a query parameter
    /// of the request) or `header:NAME` (a request header the format logs). `None`: the
    /// format's default ([`AccessFormat::default_principal`]).
    pub principal: Option<String>,
    /// `match`: the templates, first match wins. Empty: every object matches, and the
    /// source must name both `dataset` and `contract`.
    pub templates: Vec<String>,
    /// `pattern`: the fields of a custom `combined` format (only with `combined`).
    pub pattern: Option<String>,
    /// `dataset = "..."`: the dataset of every request, where the template captures none.
    pub dataset: Option<String>,
    /// `contract = "..."`: the version of every request, where the template captures none.
    pub contract: Option<String>,
    /// `same_read_seconds`: a request within this many seconds of the same principal's
    /// previous request for the same object continues the same read.
    pub same_read_seconds: u64,
    /// `pgaudit`: how the server writes its log (`None`: each file's first line says).
    pub log_destination: Option<crate::model::pg_log_keys::PgDestination>,
    /// `pgaudit`, `stderr`: the server's `log_line_prefix`.
    pub prefix: Option<crate::model::pg_prefix::Prefix>,
    /// `ignore_principals`: principals (globs) whose requests are no reads.
    pub ignore_principals: Vec<String>,
}

impl AccessSpec {
    /// A source of `format` with the defaults: the default principal, no templates, 60 s.
    pub fn new(format: AccessFormat) -> AccessSpec {
        AccessSpec {
            format,
            principal: None,
            templates: Vec::new(),
            pattern: None,
            dataset: None,
            contract: None,
            same_read_seconds: 60,
            log_destination: None,
            prefix: None,
            ignore_principals: Vec::new(),
        }
    }
}

/// An access-log source whose keys do not make sense; each names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessConfigError {
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error(transparent)]
    Pattern(#[from] PatternError),
    #[error("`pattern` is only for `format = \"combined\"`, not {format:?}")]
    PatternNotCombined { format: &'static str },
    #[error("`principal = {principal:?}`: {reason}")]
    Principal { principal: String, reason: String },
    #[error(
        "`match` template {template:?} captures no {what}, and the source names no `{what} = ...`"
    )]
    Missing {
        template: String,
        what: &'static str,
    },
    #[error("a source without `match` must name both `dataset` and `contract`")]
    NoMatch,
    #[error("{0}")]
    Pgaudit(String),
    #[error("`ignore_principals`: {0:?} is not a valid glob")]
    Ignore(String),
}
