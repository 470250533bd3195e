//! The change history of a dataset, `history/<dataset>.toml` (SPEC §6): one `[[change]]` per
//! changed clause, appended by `propose`, and `[[sunset]]` records of sunsets set or moved by
//! `contracts sunset`. Parsed strictly (a typo in an audit record must not pass silently) into
//! typed records; every error is located in the file.

use chrono::{DateTime, FixedOffset, NaiveDate};
use semver::Version;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::change::{Direction, Verdict};
use super::contract::toml_date;
use super::kind::Kind;
use super::location::{from_toml, Located, TomlErrors};
use super::window::SunsetMove;

/// The window a major bump opens, as recorded with its change records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RecordedWindow {
    pub opens: NaiveDate,
    pub sunset: NaiveDate,
}

/// One `[[change]]`: how one clause moved between two versions, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangeRecord {
    pub at: DateTime<FixedOffset>,
    pub from: Version,
    pub to: Version,
    pub clause: String,
    pub kind: Kind,
    pub direction: Direction,
    pub verdict: Verdict,
    pub window: Option<RecordedWindow>,
    pub rationale: String,
}

/// One `[[sunset]]`: a line's sunset set or moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SunsetRecord {
    pub at: DateTime<FixedOffset>,
    pub line: u64,
    /// The sunset before the move; absent when the sunset is set for the first time.
    pub from: Option<NaiveDate>,
    pub to: NaiveDate,
    pub rationale: String,
    /// Moved earlier with `--force`.
    pub forced: bool,
}

/// Every record of one dataset, in file order.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct History {
    pub changes: Vec<ChangeRecord>,
    pub sunsets: Vec<SunsetRecord>,
}

impl History {
    /// The sunset moves in record order, for [`super::window::lines`].
    pub fn sunset_moves(&self) -> Vec<SunsetMove> {
        self.sunsets
            .iter()
            .map(|s| SunsetMove {
                line: s.line,
                to: s.to,
            })
            .collect()
    }

    /// The breaking change records that opened line `major`: what a consumer of an older line
    /// must adapt to. Breaking changes only ever come with a major bump, so these are the
    /// records whose `to` is on the line.
    pub fn breaking_into(&self, major: u64) -> impl Iterator<Item = &ChangeRecord> {
        self.changes
            .iter()
            .filter(move |c| c.verdict == Verdict::Breaking && c.to.major == major)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWindow {
    opens: Spanned<toml::value::Datetime>,
    sunset: Spanned<toml::value::Datetime>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChange {
    at: Spanned<toml::value::Datetime>,
    from: Spanned<String>,
    to: Spanned<String>,
    clause: String,
    kind: Kind,
    direction: Direction,
    verdict: Verdict,
    window: Option<RawWindow>,
    rationale: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSunset {
    at: Spanned<toml::value::Datetime>,
    line: u64,
    from: Option<Spanned<toml::value::Datetime>>,
    to: Spanned<toml::value::Datetime>,
    rationale: String,
    forced: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawHistory {
    change: Vec<RawChange>,
    sunset: Vec<RawSunset>,
}

/// A TOML offset datetime (`2026-11-29T17:00:00Z`) as a chrono datetime. A local datetime
/// without an offset is refused: an audit record must say which instant it means.
pub fn toml_datetime(d: &toml::value::Datetime) -> Result<DateTime<FixedOffset>, String> {
    if d.date.is_none() || d.time.is_none() || d.offset.is_none() {
        return Err(format!(
            "expected a datetime with an offset like 2026-11-29T17:00:00Z, found {d}"
        ));
    }
    DateTime::parse_from_rfc3339(&d.to_string()).map_err(|e| format!("{d}: {e}"))
}

/// Collects every located mistake of one file, so a user sees them all at once.
struct Errors<'a> {
    file: &'a str,
    text: &'a str,
    list: Vec<Located>,
}

impl Errors<'_> {
    fn fail(&mut self, span: std::ops::Range<usize>, msg: String) {
        self.list
            .push(Located::at(self.file, self.text, Some(span), msg));
    }

    fn datetime(&mut self, d: &Spanned<toml::value::Datetime>) -> Option<DateTime<FixedOffset>> {
        toml_datetime(d.get_ref())
            .map_err(|m| self.fail(d.span(), format!("at: {m}")))
            .ok()
    }

    fn date(&mut self, d: &Spanned<toml::value::Datetime>, what: &str) -> Option<NaiveDate> {
        toml_date(d.get_ref())
            .map_err(|m| self.fail(d.span(), format!("{what}: {m}")))
            .ok()
    }

    fn version(&mut self, s: &Spanned<String>, what: &str) -> Option<Version> {
        Version::parse(s.get_ref())
            .map_err(|m| {
                self.fail(
                    s.span(),
                    format!("{what} `{}` is not a semantic version: {m}", s.get_ref()),
                )
            })
            .ok()
    }
}

/// Parse `history/<dataset>.toml`. `file` names it in errors.
pub fn parse_history(file: &str, text: &str) -> Result<History, TomlErrors> {
    let raw: RawHistory = from_toml(file, text)?;
    let mut e = Errors {
        file,
        text,
        list: Vec::new(),
    };
    let mut history = History::default();
    for c in raw.change {
        let at = e.datetime(&c.at);
        let from = e.version(&c.from, "from");
        let to = e.version(&c.to, "to");
        let window = match &c.window {
            None => None,
            Some(w) => match (
                e.date(&w.opens, "window.opens"),
                e.date(&w.sunset, "window.sunset"),
            ) {
                (Some(opens), Some(sunset)) => Some(Some(RecordedWindow { opens, sunset })),
                _ => None,
            },
        };
        // A record with any bad field was reported above; keep collecting the others.
        if let (Some(at), Some(from), Some(to)) = (at, from, to) {
            if c.window.is_some() && window.is_none() {
                continue;
            }
            history.changes.push(ChangeRecord {
                at,
                from,
                to,
                clause: c.clause,
                kind: c.kind,
                direction: c.direction,
                verdict: c.verdict,
                window: window.flatten(),
                rationale: c.rationale,
            });
        }
    }
    for s in raw.sunset {
        let at = e.datetime(&s.at);
        let from = match &s.from {
            None => Some(None),
            Some(d) => e.date(d, "from").map(Some),
        };
        let to = e.date(&s.to, "to");
        if let (Some(at), Some(from), Some(to)) = (at, from, to) {
            history.sunsets.push(SunsetRecord {
                at,
                line: s.line,
                from,
                to,
                rationale: s.rationale,
                forced: s.forced.unwrap_or(false),
            });
        }
    }
    if !e.list.is_empty() {
        return Err(TomlErrors(e.list));
    }
    Ok(history)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"
[[change]]
at        = 2026-11-29T17:00:00Z
from      = "1.3.0"
to        = "2.0.0"
clause    = "crs"
kind      = "fixed"
direction = "changed"
verdict   = "breaking"
window    = { opens = 2027-01-01, sunset = 2027-07-01 }
rationale = "Move to British National Grid."

[[change]]
at        = 2026-11-29T17:00:00Z
from      = "1.3.0"
to        = "2.0.0"
clause    = "envelope"
kind      = "widening"
direction = "grew"
verdict   = "compatible"
rationale = "Cover the islands."

[[sunset]]
at        = 2027-02-01T09:00:00+01:00
line      = 1
from      = 2027-07-01
to        = 2027-09-01
rationale = "Hydrology asked for two more months."
"#;

    #[test]
    fn parses_changes_and_sunsets() {
        let h = parse_history("history/roads.toml", TEXT).unwrap();
        assert_eq!(h.changes.len(), 2);
        assert_eq!(h.changes[0].clause, "crs");
        assert_eq!(
            h.changes[0].window.unwrap().sunset,
            NaiveDate::from_ymd_opt(2027, 7, 1).unwrap()
        );
        assert_eq!(h.breaking_into(2).count(), 1);
        assert_eq!(h.breaking_into(1).count(), 0);
        assert_eq!(h.sunsets[0].line, 1);
        assert!(!h.sunsets[0].forced);
        assert_eq!(
            h.sunset_moves()[0].to,
            NaiveDate::from_ymd_opt(2027, 9, 1).unwrap()
        );
    }

    #[test]
    fn unknown_field_is_located() {
        let text = "[[change]]\nat = 2026-11-29T17:00:00Z\nfrom = \"1.0.0\"\nto = \"2.0.0\"\n\
                    clause = \"crs\"\nkind = \"fixed\"\ndirection = \"changed\"\n\
                    verdict = \"breaking\"\nrationale = \"x\"\nrational = \"typo\"\n";
        let e = parse_history("history/roads.toml", text).unwrap_err();
        assert!(e.to_string().contains("history/roads.toml:"), "{e}");
        assert!(e.to_string().contains("rational"), "{e}");
    }

    #[test]
    fn local_datetime_and_bad_version_are_refused_with_lines() {
        let text = "[[change]]\nat = 2026-11-29T17:00:00\nfrom = \"1.0\"\nto = \"2.0.0\"\n\
                    clause = \"crs\"\nkind = \"fixed\"\ndirection = \"changed\"\n\
                    verdict = \"breaking\"\nrationale = \"x\"\n";
        let e = parse_history("h.toml", text).unwrap_err();
        assert_eq!(e.0.len(), 2, "{e}");
        assert_eq!(e.0[0].line, 2);
        assert_eq!(e.0[1].line, 3);
    }
}
