//! Change records and sunset events: `history/<dataset>.toml` (docs/src/reference/store-files.md).
//!
//! The file is append-only. New records are rendered as text and appended to the end, never
//! re-serialised from a parsed value, so the bytes of every earlier record stay exactly as
//! they were committed and the append-only proof can compare prefixes.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use toml::value::Datetime;

use super::change::{Direction, Verdict};
use super::contract::toml_date;
use super::kind::Kind;
use super::location::{from_toml, Located, TomlErrors};

/// The clause name of a record that concerns the whole contract: the first version of a
/// dataset (`added`) or a patch that changed no clause (`unchanged`).
pub const WHOLE_CONTRACT: &str = "*";

/// A window as recorded on a major bump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowRecord {
    pub opens: NaiveDate,
    pub sunset: NaiveDate,
}

/// One `[[change]]` table: one changed clause of one proposal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangeRecord {
    pub at: DateTime<Utc>,
    /// Absent on a dataset's first version.
    pub from: Option<String>,
    pub to: String,
    pub clause: String,
    /// Absent on a whole-contract record.
    pub kind: Option<Kind>,
    pub direction: Direction,
    pub verdict: Verdict,
    pub window: Option<WindowRecord>,
    pub rationale: String,
}

/// One `[[sunset]]` table: a line's sunset set or moved by `contracts sunset`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SunsetRecord {
    pub at: DateTime<Utc>,
    pub line: u64,
    /// The sunset before the move (absent when there was none).
    pub from: Option<NaiveDate>,
    pub to: NaiveDate,
    pub rationale: String,
    /// Moved earlier with `--force`.
    pub forced: bool,
}

/// A parsed history file.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct History {
    pub change: Vec<ChangeRecord>,
    pub sunset: Vec<SunsetRecord>,
    /// Every record in file order, which is the order they were committed in (the file is
    /// append-only); `check` replays the sunset rules in this order. Times cannot order them:
    /// two commands in one second share a time.
    #[serde(skip)]
    pub order: Vec<Entry>,
}

/// A record of a [`History`], by kind and index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Change(usize),
    Sunset(usize),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChange {
    at: Datetime,
    from: Option<String>,
    to: String,
    clause: String,
    kind: Option<Kind>,
    direction: Direction,
    verdict: Verdict,
    window: Option<RawWindow>,
    rationale: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWindow {
    opens: Datetime,
    sunset: Datetime,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSunset {
    at: Datetime,
    line: u64,
    from: Option<Datetime>,
    to: Datetime,
    rationale: String,
    #[serde(default)]
    forced: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawHistory {
    change: Vec<toml::Spanned<RawChange>>,
    sunset: Vec<toml::Spanned<RawSunset>>,
}

impl History {
    /// The breaking change records of the versions after line `after` up to line `up_to`:
    /// what a consumer still on line `after` must adapt to before moving to line `up_to`.
    /// Breaking changes only come with a major bump, so they are the records whose `to` lies
    /// on those lines.
    pub fn breaking_between(&self, after: u64, up_to: u64) -> impl Iterator<Item = &ChangeRecord> {
        self.change.iter().filter(move |c| {
            c.verdict == Verdict::Breaking
                && semver::Version::parse(&c.to).is_ok_and(|v| v.major > after && v.major <= up_to)
        })
    }
}

/// A TOML offset date-time as UTC.
pub fn toml_instant(d: &Datetime) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(&d.to_string())
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("expected a UTC time like 2026-11-29T17:00:00Z, found {d}"))
}

/// An instant as the tool writes it in every file and message: RFC 3339 to the second, `Z`
/// for UTC.
pub fn instant_text<Tz: chrono::TimeZone>(t: &DateTime<Tz>) -> String
where
    Tz::Offset: std::fmt::Display,
{
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Parse a history file.
pub fn parse_history(file: &str, text: &str) -> Result<History, TomlErrors> {
    let raw: RawHistory = from_toml(file, text)?;
    let mut errors = Vec::new();
    let mut out = History::default();
    let mut order: Vec<(usize, Entry)> = Vec::new();
    for c in raw.change {
        let span = c.span();
        order.push((span.start, Entry::Change(out.change.len())));
        let c = c.into_inner();
        let window = match c.window {
            None => Ok(None),
            Some(w) => toml_date(&w.opens).and_then(|opens| {
                toml_date(&w.sunset).map(|sunset| Some(WindowRecord { opens, sunset }))
            }),
        };
        match (toml_instant(&c.at), window) {
            (Ok(at), Ok(window)) => out.change.push(ChangeRecord {
                at,
                from: c.from,
                to: c.to,
                clause: c.clause,
                kind: c.kind,
                direction: c.direction,
                verdict: c.verdict,
                window,
                rationale: c.rationale,
            }),
            (Err(e), _) | (_, Err(e)) => errors.push(Located::at(file, text, Some(span), e)),
        }
    }
    for s in raw.sunset {
        let span = s.span();
        order.push((span.start, Entry::Sunset(out.sunset.len())));
        let s = s.into_inner();
        let parsed = toml_instant(&s.at).and_then(|at| {
            let from = s.from.as_ref().map(toml_date).transpose()?;
            Ok((at, from, toml_date(&s.to)?))
        });
        match parsed {
            Ok((at, from, to)) => out.sunset.push(SunsetRecord {
                at,
                line: s.line,
                from,
                to,
                rationale: s.rationale,
                forced: s.forced,
            }),
            Err(e) => errors.push(Located::at(file, text, Some(span), e)),
        }
    }
    if errors.is_empty() {
        order.sort_by_key(|(start, _)| *start);
        out.order = order.into_iter().map(|(_, e)| e).collect();
        Ok(out)
    } else {
        Err(TomlErrors::in_line_order(errors))
    }
}

/// A TOML basic string, escaped.
pub fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

impl ChangeRecord {
    /// The record as a `[[change]]` table, ready to append.
    pub fn to_toml(&self) -> String {
        let mut s = String::from("\n[[change]]\n");
        s += &format!("at        = {}\n", instant_text(&self.at));
        if let Some(from) = &self.from {
            s += &format!("from      = {}\n", toml_string(from));
        }
        s += &format!("to        = {}\n", toml_string(&self.to));
        s += &format!("clause    = {}\n", toml_string(&self.clause));
        if let Some(kind) = self.kind {
            s += &format!("kind      = \"{kind}\"\n");
        }
        s += &format!("direction = \"{}\"\n", self.direction);
        s += &format!("verdict   = \"{}\"\n", self.verdict);
        if let Some(w) = &self.window {
            s += &format!(
                "window    = {{ opens = {}, sunset = {} }}\n",
                w.opens, w.sunset
            );
        }
        s += &format!("rationale = {}\n", toml_string(&self.rationale));
        s
    }
}

impl SunsetRecord {
    /// The record as a `[[sunset]]` table, ready to append.
    pub fn to_toml(&self) -> String {
        let mut s = String::from("\n[[sunset]]\n");
        s += &format!("at        = {}\n", instant_text(&self.at));
        s += &format!("line      = {}\n", self.line);
        if let Some(from) = self.from {
            s += &format!("from      = {from}\n");
        }
        s += &format!("to        = {}\n", self.to);
        s += &format!("rationale = {}\n", toml_string(&self.rationale));
        if self.forced {
            s += "forced    = true\n";
        }
        s
    }
}

/// The header a new history file starts with.
pub fn history_header(dataset: &str) -> String {
    format!(
        "# Change history of `{dataset}`: appended by `contracts propose` and `contracts sunset`.\n\
         # Append-only: `contracts check` fails if an earlier record is ever edited or removed.\n"
    )
}
