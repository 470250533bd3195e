//! The ledger of sent notices, `notifications/<dataset>.toml`: one `[[notice]]` per notice
//! delivered, appended and never edited. It is what makes `notify` idempotent: a notice whose
//! (consumer, line, milestone) is in the ledger is never sent again.

use std::collections::HashSet;

use chrono::{DateTime, FixedOffset, NaiveDate};
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::plan::SentKey;
use crate::model::contract::toml_date;
use crate::model::history::toml_instant;
use crate::model::{Located, TomlErrors};
use crate::store::{Store, StoreError};

/// One delivered notice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LedgerEntry {
    pub consumer: String,
    pub line: u64,
    pub milestone: String,
    pub recipients: Vec<String>,
    pub message_id: String,
    /// When the SMTP server accepted it.
    pub at: DateTime<FixedOffset>,
    /// The day the run was for (`--today`), which may differ from `at` in a replay.
    pub for_date: NaiveDate,
    /// The sunset the notice announced.
    pub sunset: NaiveDate,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    consumer: String,
    line: u64,
    milestone: String,
    recipients: Vec<String>,
    message_id: String,
    at: Spanned<toml::value::Datetime>,
    for_date: Spanned<toml::value::Datetime>,
    sunset: Spanned<toml::value::Datetime>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawLedger {
    notice: Vec<RawEntry>,
}

/// The path of a dataset's ledger in the store.
pub fn ledger_path(dataset: &str) -> String {
    format!("notifications/{dataset}.toml")
}

/// Parse a ledger. `file` names it in errors.
pub fn parse_ledger(file: &str, text: &str) -> Result<Vec<LedgerEntry>, TomlErrors> {
    let raw: RawLedger = crate::model::location::from_toml(file, text)?;
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for e in raw.notice {
        let at = toml_instant(e.at.get_ref()).map(|t| t.fixed_offset());
        let for_date = toml_date(e.for_date.get_ref());
        let sunset = toml_date(e.sunset.get_ref());
        match (at, for_date, sunset) {
            (Ok(at), Ok(for_date), Ok(sunset)) => out.push(LedgerEntry {
                consumer: e.consumer,
                line: e.line,
                milestone: e.milestone,
                recipients: e.recipients,
                message_id: e.message_id,
                at,
                for_date,
                sunset,
            }),
            (at, for_date, sunset) => {
                for (span, m) in [
                    (e.at.span(), at.err()),
                    (e.for_date.span(), for_date.err()),
                    (e.sunset.span(), sunset.err()),
                ] {
                    if let Some(m) = m {
                        errors.push(Located::at(file, text, Some(span), m));
                    }
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(TomlErrors(errors));
    }
    Ok(out)
}

/// The keys of a dataset's ledger, for the planner.
pub fn sent_keys(dataset: &str, entries: &[LedgerEntry]) -> HashSet<SentKey> {
    entries
        .iter()
        .map(|e| {
            (
                dataset.to_string(),
                e.consumer.clone(),
                e.line,
                e.milestone.clone(),
            )
        })
        .collect()
}

/// A TOML basic string, escaped.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The text appended to the ledger for one entry.
pub fn entry_text(e: &LedgerEntry) -> String {
    let recipients: Vec<String> = e.recipients.iter().map(|r| quoted(r)).collect();
    format!(
        "\n[[notice]]\nconsumer   = {}\nline       = {}\nmilestone  = {}\nrecipients = [{}]\n\
         message_id = {}\nat         = {}\nfor_date   = {}\nsunset     = {}\n",
        quoted(&e.consumer),
        e.line,
        quoted(&e.milestone),
        recipients.join(", "),
        quoted(&e.message_id),
        e.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        e.for_date,
        e.sunset,
    )
}

/// The header a new ledger starts with.
pub fn ledger_header() -> &'static str {
    "# Notices sent by `contracts notify`, one [[notice]] per delivered message.\n\
     # Append-only: `contracts check` fails if an earlier entry is ever edited or removed.\n"
}

/// Append `text` to each ledger `path` of `changes`, in one commit with `message`.
///
/// The notices are already delivered when this runs, and mail cannot be unsent: if another
/// writer moved the store meanwhile, the store is read again and the same entries appended on
/// top of the new HEAD (ledger entries do not depend on each other), a few times, before
/// giving up. Only then would the next run send them again.
pub fn commit_ledger(
    store: &Store,
    changes: Vec<(String, String)>,
    message: &str,
) -> Result<(), StoreError> {
    const ATTEMPTS: usize = 5;
    let mut reopened;
    let mut current = store;
    for attempt in 1..=ATTEMPTS {
        let files = changes
            .iter()
            .map(|(path, appended)| {
                Ok((
                    path.clone(),
                    current.appended(path, ledger_header(), appended)?,
                ))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        match current.commit(&files, message) {
            Err(StoreError::Git(crate::store::GitError::Moved { .. })) if attempt < ATTEMPTS => {
                reopened = Store::open(store.root())?;
                current = &reopened;
            }
            other => return other.map(|_| ()),
        }
    }
    unreachable!("the last attempt returns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_appended_entry_parses_back() {
        let e = LedgerEntry {
            consumer: "flood-model".into(),
            line: 1,
            milestone: "before-14".into(),
            recipients: vec![
                "Hydro \"Lead\" <lead@example.org>".into(),
                "a@example.org".into(),
            ],
            message_id: "<contracts.roads.1.flood-model.before-14@example.org>".into(),
            at: "2026-11-29T06:15:00Z".parse().unwrap(),
            for_date: "2026-11-29".parse().unwrap(),
            sunset: "2026-12-10".parse().unwrap(),
        };
        let text = format!("{}{}", entry_text(&e), entry_text(&e));
        let back = parse_ledger("notifications/roads.toml", &text).unwrap();
        assert_eq!(back, vec![e.clone(), e]);
        let keys = sent_keys("roads", &back);
        assert!(keys.contains(&("roads".into(), "flood-model".into(), 1, "before-14".into())));
    }

    #[test]
    fn a_ledger_with_an_unknown_field_is_refused_with_its_line() {
        let text = "[[notice]]\nconsumer = \"a\"\nline = 1\nmilestone = \"before-1\"\n\
                    recipients = []\nmessage_id = \"<x@y>\"\nat = 2026-11-29T06:15:00Z\n\
                    for_date = 2026-11-29\nsunset = 2026-11-30\nextra = 1\n";
        let e = parse_ledger("notifications/roads.toml", text).unwrap_err();
        assert!(e.to_string().contains("notifications/roads.toml:"), "{e}");
    }
}
