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
    #[error(
        "an access log needs `match` templates (they say which requests are reads of which \
         dataset and version), or else both `dataset` and `contract`"
    )]
    NoMatch,
    #[error("`ignore_principals`: {0:?} is not a valid glob")]
    Ignore(String),
    #[error("`{0}` is a log of reads, not an access log: it has no access-log keys")]
    NotAccessLog(&'static str),
}

/// The key of a `[[consumption.source]]` table that an [`AccessConfigError`] is about: an
/// enum, so that the configuration's reader must say where each one stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKey {
    Path,
    Format,
    Match,
    Pattern,
    Principal,
    IgnorePrincipals,
}

impl SourceKey {
    /// The key as `contracts.toml` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKey::Path => "path",
            SourceKey::Format => "format",
            SourceKey::Match => "match",
            SourceKey::Pattern => "pattern",
            SourceKey::Principal => "principal",
            SourceKey::IgnorePrincipals => "ignore_principals",
        }
    }
}

impl std::fmt::Display for SourceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl AccessConfigError {
    /// The key of the table the error is about.
    pub fn key(&self) -> SourceKey {
        match self {
            AccessConfigError::Template(_) | AccessConfigError::Missing { .. } => SourceKey::Match,
            AccessConfigError::NoMatch => SourceKey::Path,
            AccessConfigError::Pattern(_) => SourceKey::Pattern,
            AccessConfigError::Principal { .. } => SourceKey::Principal,
            AccessConfigError::Ignore(_) => SourceKey::IgnorePrincipals,
            AccessConfigError::NotAccessLog(_) => SourceKey::Format,
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
