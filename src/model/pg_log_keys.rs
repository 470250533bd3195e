//! The keys of a `[[consumption.source]]` of format `pgaudit`: how the server writes its log
//! (`log_destination`), its `log_line_prefix` (`prefix`, for `stderr`), and whether a read
//! is the role's (`principal = "user_name"`, the default) or the application's. Checked here
//! so that a mistake is located in `contracts.toml` when the configuration is read, by every
//! command and by `check`.

use std::ops::Range;

use toml::Spanned;

pub use contracts_scan::access::pgaudit::{Destination as PgDestination, PgKeys};

/// The pgaudit keys of a table as written.
pub(crate) struct Raw<'a> {
    pub log_destination: Option<&'a Spanned<String>>,
    pub prefix: Option<&'a Spanned<String>>,
    pub principal: Option<&'a Spanned<String>>,
}

/// Check the keys of a table of format `format_name` (`pgaudit` when `pgaudit`); every
/// mistake goes to `err` with its span.
pub(crate) fn check(
    pgaudit: bool,
    format_name: &str,
    raw: Raw<'_>,
    err: &mut impl FnMut(Range<usize>, String),
) -> PgKeys {
    let mut keys = PgKeys::default();
    for (key, value) in [
        ("log_destination", raw.log_destination),
        ("prefix", raw.prefix),
    ] {
        if let (Some(v), false) = (value, pgaudit) {
            err(
                v.span(),
                format!(
                    "[[consumption.source]] {key} applies to pgaudit logs, not to {format_name}"
                ),
            );
        }
    }
    if !pgaudit {
        return keys;
    }
    if let Some(d) = raw.log_destination {
        match PgDestination::ALL.iter().find(|(n, _)| n == d.get_ref()) {
            Some(&(_, dest)) => keys.destination = Some(dest),
            None => err(
                d.span(),
                format!(
                    "[[consumption.source]] log_destination {:?} is not one of stderr, csvlog, \
                     jsonlog",
                    d.get_ref()
                ),
            ),
        }
    }
    if let Some(p) = raw.prefix {
        if matches!(
            keys.destination,
            Some(PgDestination::Csvlog | PgDestination::Jsonlog)
        ) {
            err(
                p.span(),
                "[[consumption.source]] prefix is only for log_destination = \"stderr\": csvlog \
                 and jsonlog name their fields"
                    .into(),
            );
        } else {
            match contracts_scan::pg_prefix::Prefix::parse(p.get_ref()) {
                Ok(prefix) => keys.prefix = Some(prefix),
                Err(why) => err(
                    p.span(),
                    format!("[[consumption.source]] prefix {:?}: {why}", p.get_ref()),
                ),
            }
        }
    } else if keys.destination == Some(PgDestination::Stderr) {
        if let Some(d) = raw.log_destination {
            err(
                d.span(),
                "[[consumption.source]] a stderr log needs `prefix`, the server's \
                 log_line_prefix (SHOW log_line_prefix)"
                    .into(),
            );
        }
    }
    if let Some(p) = raw.principal {
        match p.get_ref().as_str() {
            "user_name" => {}
            "application_name" => keys.by_application = true,
            other => err(
                p.span(),
                format!(
                    "[[consumption.source]] principal {other:?}: a pgaudit source names its \
                     reader by \"user_name\" (the role, the default) or \"application_name\""
                ),
            ),
        }
    }
    keys
}
