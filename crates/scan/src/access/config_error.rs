//! Why the keys of an access-log source do not make sense, each error naming its key: the
//! formats raise them when they are compiled ([`super::keys`]), below which they sit.

use super::template::TemplateError;

/// A key of an access-log source that does not make sense; [`AccessConfigError::key`] names
/// it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessConfigError {
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error(transparent)]
    Pattern(#[from] PatternError),
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
    #[error("`ignore_principals`: {0:?} is not a valid glob")]
    Ignore(String),
    #[error("`{0}` is a log of reads, not an access log: it has no access-log keys")]
    NotAccessLog(&'static str),
}

impl AccessConfigError {
    /// The key of the table the error is about.
    pub fn key(&self) -> &'static str {
        match self {
            AccessConfigError::Template(_) | AccessConfigError::Missing { .. } => "match",
            AccessConfigError::NoMatch => "path",
            AccessConfigError::Pattern(_) => "pattern",
            AccessConfigError::Principal { .. } => "principal",
            AccessConfigError::Ignore(_) => "ignore_principals",
            AccessConfigError::NotAccessLog(_) => "format",
        }
    }
}

/// A pattern that cannot be read, with the 1-based column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`pattern` {pattern:?}, column {column}: {reason}")]
pub struct PatternError {
    pub pattern: String,
    pub column: usize,
    pub reason: String,
}
