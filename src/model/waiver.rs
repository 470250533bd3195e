//! Waivers: `history/<dataset>.waivers.toml`.
//!
//! A waiver lets a release that fails one clause key for a known, temporary reason pass
//! `validate` until a day, instead of loosening the contract (a breaking change made under
//! pressure). It covers validation only: the clause kinds, verdicts, bumps, windows and the
//! two-live-lines cap never look at this file. The file is append-only like a change
//! history: a grant is a `[[waiver]]`, a revocation an `[[unwaive]]`, and records are
//! rendered as text and appended, never re-serialised.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use toml::value::Datetime;

use super::contract::toml_date;
use super::history::{instant_text, toml_instant, toml_string};
use super::impact::Use;
use super::location::{from_toml, Located, TomlErrors};

/// Names that are not clause keys but rules of the contract's history: a waiver never
/// touches them.
pub const NOT_WAIVABLE: [&str; 9] = [
    "bump",
    "version",
    "window",
    "sunset",
    "valid_from",
    "supersedes",
    "lines",
    "verdict",
    "kind",
];

/// One granted waiver.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Waiver {
    /// `<dataset>:<line or all>:<clause key>:<granted>`, with `:<n>` for the n-th waiver of
    /// the same key and line granted on the same day (n ≥ 2).
    pub id: String,
    /// The line it covers; `None`: every live line.
    pub line: Option<u64>,
    /// The clause key, `clause` or `clause.key`.
    pub clause: String,
    /// The day it was granted (`--today`).
    pub granted: NaiveDate,
    /// The last day it covers.
    pub until: NaiveDate,
    pub at: DateTime<Utc>,
    /// `Name <email>` of the git author who granted it.
    pub by: String,
    pub reason: String,
    /// The release it was granted for, if named.
    pub release: Option<String>,
}

/// One revocation of a waiver.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Revocation {
    /// The waiver revoked.
    pub id: String,
    /// The day it was revoked (`--today`): from this day on the waiver covers nothing.
    pub on: NaiveDate,
    pub at: DateTime<Utc>,
    pub by: String,
    pub reason: String,
}

/// A parsed waivers file.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Waivers {
    pub waiver: Vec<Waiver>,
    pub unwaive: Vec<Revocation>,
}

/// Where a waiver stands on a day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaiverState {
    /// Granted for a later day (only when replaying an earlier `--today`).
    Upcoming,
    Live,
    Expired,
    Revoked,
}

impl WaiverState {
    pub fn as_str(self) -> &'static str {
        match self {
            WaiverState::Upcoming => "upcoming",
            WaiverState::Live => "live",
            WaiverState::Expired => "expired",
            WaiverState::Revoked => "revoked",
        }
    }
}

impl Waiver {
    /// Whether it covers a failure of `clause` (a result label: a clause name or
    /// `metric_tolerances.<metric>`) or of one key of it, on `line`.
    pub fn covers(&self, line: u64, clause: &str, key: Option<&str>) -> bool {
        if self.line.is_some_and(|l| l != line) {
            return false;
        }
        match key {
            None => self.clause == clause,
            Some(k) => self.clause == clause || self.clause == format!("{clause}.{k}"),
        }
    }

    /// Days from `today` to its last day (0 on the last day).
    pub fn days_left(&self, today: NaiveDate) -> i64 {
        (self.until - today).num_days()
    }
}

impl Waivers {
    pub fn revocation(&self, id: &str) -> Option<&Revocation> {
        self.unwaive.iter().find(|r| r.id == id)
    }

    pub fn state(&self, w: &Waiver, today: NaiveDate) -> WaiverState {
        match self.revocation(&w.id) {
            Some(r) if r.on <= today => WaiverState::Revoked,
            _ if today < w.granted => WaiverState::Upcoming,
            _ if today > w.until => WaiverState::Expired,
            _ => WaiverState::Live,
        }
    }

    pub fn live(&self, today: NaiveDate) -> impl Iterator<Item = &Waiver> {
        self.waiver
            .iter()
            .filter(move |w| self.state(w, today) == WaiverState::Live)
    }

    /// The live waiver covering a failure of `clause` (or of its `key`) on `line`.
    pub fn covering(
        &self,
        today: NaiveDate,
        line: u64,
        clause: &str,
        key: Option<&str>,
    ) -> Option<&Waiver> {
        self.live(today).find(|w| w.covers(line, clause, key))
    }

    /// The id a new waiver of `clause` on `line` granted on `granted` gets.
    pub fn next_id(
        &self,
        dataset: &str,
        line: Option<u64>,
        clause: &str,
        granted: NaiveDate,
    ) -> String {
        let base = format!(
            "{dataset}:{}:{clause}:{granted}",
            line.map_or("all".to_string(), |l| l.to_string())
        );
        let taken = |id: &str| self.waiver.iter().any(|w| w.id == id);
        if !taken(&base) {
            return base;
        }
        (2..)
            .map(|n| format!("{base}:{n}"))
            .find(|id| !taken(id))
            .expect("an unbounded counter finds a free id")
    }
}

/// Why `clause` cannot be waived, when it names a rule of the history rather than a clause
/// key; `None` when it reads as a clause key (whether the contract has it is the caller's
/// question).
pub fn refuse_key(clause: &str) -> Option<String> {
    let head = clause.split('.').next().unwrap_or(clause);
    if NOT_WAIVABLE.contains(&head) || head.ends_with("_window_days") {
        return Some(format!(
            "`{clause}` is not a clause key: a waiver covers validation only; it never lets a \
             breaking change pass as minor, never shortens a window and never lifts the \
             two-live-lines cap"
        ));
    }
    Use::parse(clause).err()
}

/// Check a grant against the policy: `until` no earlier than `today` and at most
/// `max_days` away.
pub fn check_until(today: NaiveDate, until: NaiveDate, max_days: i64) -> Result<(), String> {
    if until < today {
        return Err(format!("--until {until} is before --today {today}"));
    }
    let days = (until - today).num_days();
    if days > max_days {
        return Err(format!(
            "--until {until} is {days} days away; [policy] max_waiver_days allows {max_days}: \
             fix the release, or change the contract through `propose`"
        ));
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWaiver {
    id: String,
    line: Option<u64>,
    clause: String,
    granted: Datetime,
    until: Datetime,
    at: Datetime,
    by: String,
    reason: String,
    release: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRevocation {
    id: String,
    on: Datetime,
    at: Datetime,
    by: String,
    reason: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawWaivers {
    waiver: Vec<toml::Spanned<RawWaiver>>,
    unwaive: Vec<toml::Spanned<RawRevocation>>,
}

/// Parse a waivers file strictly. Besides the shape, each id is unique and is the id its
/// fields derive, `until` is no earlier than `granted` and at most `max_days` after it, and
/// each revocation names a waiver recorded before it: a file edited by hand to stretch or
/// invent a waiver fails here, with its line.
pub fn parse_waivers(
    file: &str,
    dataset: &str,
    text: &str,
    max_days: i64,
) -> Result<Waivers, TomlErrors> {
    let raw: RawWaivers = from_toml(file, text)?;
    let mut errors = Vec::new();
    let mut out = Waivers::default();
    for w in raw.waiver {
        let span = w.span();
        let w = w.into_inner();
        let at = |m: String| Located::at(file, text, Some(span.clone()), m);
        let parsed = toml_date(&w.granted)
            .and_then(|granted| Ok((granted, toml_date(&w.until)?, toml_instant(&w.at)?)));
        let (granted, until, when) = match parsed {
            Ok(p) => p,
            Err(e) => {
                errors.push(at(e));
                continue;
            }
        };
        if let Some(why) = refuse_key(&w.clause) {
            errors.push(at(format!("waiver `{}`: {why}", w.id)));
            continue;
        }
        let want = out.next_id(dataset, w.line, &w.clause, granted);
        if w.id != want {
            errors.push(at(format!(
                "waiver `{}`: its fields give the id `{want}`; ids are never edited",
                w.id
            )));
            continue;
        }
        if until < granted || (until - granted).num_days() > max_days {
            errors.push(at(format!(
                "waiver `{}`: until {until} is not within {max_days} days of its grant on \
                 {granted} ([policy] max_waiver_days)",
                w.id
            )));
            continue;
        }
        out.waiver.push(Waiver {
            id: w.id,
            line: w.line,
            clause: w.clause,
            granted,
            until,
            at: when,
            by: w.by,
            reason: w.reason,
            release: w.release,
        });
    }
    for r in raw.unwaive {
        let span = r.span();
        let r = r.into_inner();
        let at = |m: String| Located::at(file, text, Some(span.clone()), m);
        match toml_date(&r.on).and_then(|on| Ok((on, toml_instant(&r.at)?))) {
            Ok((on, when)) => {
                if !out.waiver.iter().any(|w| w.id == r.id) {
                    errors.push(at(format!("unwaive names no waiver `{}`", r.id)));
                    continue;
                }
                out.unwaive.push(Revocation {
                    id: r.id,
                    on,
                    at: when,
                    by: r.by,
                    reason: r.reason,
                });
            }
            Err(e) => errors.push(at(e)),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(TomlErrors::in_line_order(errors))
    }
}

impl Waiver {
    /// The waiver as a `[[waiver]]` table, ready to append.
    pub fn to_toml(&self) -> String {
        let mut s = String::from("\n[[waiver]]\n");
        s += &format!("id      = {}\n", toml_string(&self.id));
        if let Some(l) = self.line {
            s += &format!("line    = {l}\n");
        }
        s += &format!("clause  = {}\n", toml_string(&self.clause));
        s += &format!("granted = {}\n", self.granted);
        s += &format!("until   = {}\n", self.until);
        s += &format!("at      = {}\n", instant_text(&self.at));
        s += &format!("by      = {}\n", toml_string(&self.by));
        s += &format!("reason  = {}\n", toml_string(&self.reason));
        if let Some(r) = &self.release {
            s += &format!("release = {}\n", toml_string(r));
        }
        s
    }
}

impl Revocation {
    /// The revocation as an `[[unwaive]]` table, ready to append.
    pub fn to_toml(&self) -> String {
        let mut s = String::from("\n[[unwaive]]\n");
        s += &format!("id     = {}\n", toml_string(&self.id));
        s += &format!("on     = {}\n", self.on);
        s += &format!("at     = {}\n", instant_text(&self.at));
        s += &format!("by     = {}\n", toml_string(&self.by));
        s += &format!("reason = {}\n", toml_string(&self.reason));
        s
    }
}

/// The header a new waivers file starts with.
pub fn waivers_header(dataset: &str) -> String {
    format!(
        "# Waivers of `{dataset}`: appended by `contracts waive` and `contracts unwaive`.\n\
         # Append-only: `contracts check` fails if an earlier record is ever edited or removed.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn waiver(w: &Waivers, line: Option<u64>, clause: &str, granted: &str, until: &str) -> Waiver {
        Waiver {
            id: w.next_id("roads", line, clause, d(granted)),
            line,
            clause: clause.into(),
            granted: d(granted),
            until: d(until),
            at: "2026-11-29T09:00:00Z".parse().unwrap(),
            by: "A <a@x.org>".into(),
            reason: "upstream outage".into(),
            release: None,
        }
    }

    #[test]
    fn a_rendered_file_parses_back_with_stable_ids_and_states() {
        let mut w = Waivers::default();
        let a = waiver(
            &w,
            Some(1),
            "max_null_fraction.pop",
            "2026-11-29",
            "2026-12-31",
        );
        w.waiver.push(a.clone());
        let b = waiver(
            &w,
            Some(1),
            "max_null_fraction.pop",
            "2026-11-29",
            "2026-12-15",
        );
        assert_eq!(a.id, "roads:1:max_null_fraction.pop:2026-11-29");
        assert_eq!(b.id, "roads:1:max_null_fraction.pop:2026-11-29:2");
        w.waiver.push(b.clone());
        let r = Revocation {
            id: b.id.clone(),
            on: d("2026-12-01"),
            at: "2026-12-01T09:00:00Z".parse().unwrap(),
            by: "A <a@x.org>".into(),
            reason: "fixed".into(),
        };
        w.unwaive.push(r.clone());
        let text = format!(
            "{}{}{}{}",
            waivers_header("roads"),
            a.to_toml(),
            b.to_toml(),
            r.to_toml()
        );
        let back = parse_waivers("w.toml", "roads", &text, 90).unwrap();
        assert_eq!(back, w);
        assert_eq!(back.state(&a, d("2026-12-31")), WaiverState::Live);
        assert_eq!(back.state(&a, d("2027-01-01")), WaiverState::Expired);
        assert_eq!(back.state(&b, d("2026-11-30")), WaiverState::Live);
        assert_eq!(back.state(&b, d("2026-12-01")), WaiverState::Revoked);
        assert!(a.covers(1, "max_null_fraction", Some("pop")));
        assert!(!a.covers(1, "max_null_fraction", Some("other")));
        assert!(!a.covers(2, "max_null_fraction", Some("pop")));
        // A stretched until, or an edited id, is refused with its line.
        let long = text.replace("until   = 2026-12-31", "until   = 2027-06-30");
        let e = parse_waivers("w.toml", "roads", &long, 90).unwrap_err();
        assert!(e.to_string().contains("max_waiver_days"), "{e}");
        assert_eq!(e.0[0].line, 4);
    }

    #[test]
    fn rules_of_the_history_are_not_clause_keys() {
        for k in ["bump", "window", "sunset", "min_window_days", "lines"] {
            assert!(refuse_key(k).is_some(), "{k}");
        }
        assert!(refuse_key("max_null_fraction.pop").is_none());
        assert!(check_until(d("2026-11-29"), d("2027-02-27"), 90).is_ok());
        assert!(check_until(d("2026-11-29"), d("2027-02-28"), 90).is_err());
        assert!(check_until(d("2026-11-29"), d("2026-11-28"), 90).is_err());
    }
}
