//! PostgreSQL's `log_line_prefix`, read back: the server writes each `stderr` log line as the
//! prefix with its `%` escapes filled in, then `SEVERITY:  message`. A source of format
//! `pgaudit` gives the prefix as the server has it (`prefix = "%m [%p] %q%u@%d "`), and each
//! line is matched against it to find the instant, the role, the application and the
//! session of an entry.
//!
//! A value ends where the literal text after its escape begins, so two value escapes need
//! text between them (`%u%d` cannot be split, and is refused). A timestamp holds spaces
//! (`2026-11-27 10:00:00.123 UTC`): it is read by its own shape, not up to the next space.
//! `%q` writes nothing and ends the prefix for processes that are no session (the
//! checkpointer, autovacuum): a line whose prefix stops there is no entry of a session.

use chrono::{DateTime, FixedOffset, NaiveDateTime, TimeZone};

/// What one `%` escape is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// `%u`: the role.
    User,
    /// `%d`: the database.
    Database,
    /// `%a`: the application name.
    Application,
    /// `%p`: the process id.
    Pid,
    /// `%c`: the session id.
    Session,
    /// `%t` (seconds), `%m` (milliseconds): the instant with its zone.
    Time,
    /// `%n`: the instant as epoch seconds with milliseconds.
    Epoch,
    /// `%q`: nothing; the end of the prefix for a process that is no session.
    SessionOnly,
    /// Any other value (`%h`, `%r`, `%l`, `%x`, ...): read and ignored.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(Vec<u8>),
    Value(Escape),
}

/// A compiled `log_line_prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    text: String,
    parts: Vec<Part>,
}

/// What a line's prefix held.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Head<'a> {
    pub at: Option<DateTime<FixedOffset>>,
    pub user: Option<&'a str>,
    pub application: Option<&'a str>,
    /// The session (`%c`), else the process (`%p`): whose statement numbers these are.
    pub session: Option<&'a str>,
}

/// How a line met the prefix.
#[derive(Debug, PartialEq, Eq)]
pub enum Matched<'a> {
    /// A session's line: its head and the rest of the line (`LOG:  AUDIT: ...`).
    Session(Head<'a>, &'a [u8]),
    /// A line whose prefix stopped at `%q`: a process that is no session.
    NotSession,
}

impl Prefix {
    /// Read a `log_line_prefix`; `Err` names the escape that cannot be read back.
    pub fn parse(text: &str) -> Result<Prefix, String> {
        let mut parts: Vec<Part> = Vec::new();
        let mut chars = text.chars().peekable();
        let mut literal = String::new();
        while let Some(c) = chars.next() {
            if c != '%' {
                literal.push(c);
                continue;
            }
            // A padding width (`%-10u`, `%5p`) changes the spaces, not the value.
            while chars
                .peek()
                .is_some_and(|c| *c == '-' || c.is_ascii_digit())
            {
                chars.next();
            }
            let escape = match chars.next() {
                Some('%') => {
                    literal.push('%');
                    continue;
                }
                Some('u') => Escape::User,
                Some('d') => Escape::Database,
                Some('a') => Escape::Application,
                Some('p') => Escape::Pid,
                Some('c') => Escape::Session,
                Some('t' | 'm') => Escape::Time,
                Some('n') => Escape::Epoch,
                Some('q') => Escape::SessionOnly,
                Some('r' | 'h' | 'b' | 'P' | 'i' | 'e' | 'l' | 's' | 'v' | 'x' | 'Q') => {
                    Escape::Other
                }
                Some(other) => return Err(format!("`%{other}` is no log_line_prefix escape")),
                None => return Err("it ends with a lone `%`".into()),
            };
            if !literal.is_empty() {
                parts.push(Part::Text(std::mem::take(&mut literal).into_bytes()));
            }
            let after_value =
                matches!(parts.last(), Some(Part::Value(e)) if *e != Escape::SessionOnly);
            if after_value && escape != Escape::SessionOnly {
                return Err(format!(
                    "two values with nothing between them before `{}` cannot be told apart",
                    escape_text(escape)
                ));
            }
            parts.push(Part::Value(escape));
        }
        if !literal.is_empty() {
            parts.push(Part::Text(literal.into_bytes()));
        }
        Ok(Prefix {
            text: text.to_string(),
            parts,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Match `line` against the prefix; `None` when it does not match.
    pub fn matches<'a>(&self, line: &'a [u8]) -> Option<Matched<'a>> {
        match_parts(&self.parts, line)
    }
}

/// [`Prefix::matches`] for `parts`, a whole prefix or the part of one after `%q`.
fn match_parts<'a>(parts: &[Part], line: &'a [u8]) -> Option<Matched<'a>> {
    let mut head = Head::default();
    let mut pid = None;
    let mut rest = line;
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Text(t) => rest = rest.strip_prefix(t.as_slice())?,
            Part::Value(Escape::SessionOnly) => {
                // The rest of the prefix is only written for a session: a line without
                // it goes straight on to its severity.
                let tail = match_parts(&parts[i + 1..], rest);
                if matches!(tail, Some(Matched::Session(_, r)) if severity(r).is_some()) {
                    continue;
                }
                return severity(rest).map(|_| Matched::NotSession);
            }
            Part::Value(e) => {
                let next = parts[i + 1..].iter().find_map(|p| match p {
                    Part::Text(t) => Some(t.as_slice()),
                    Part::Value(_) => None,
                });
                let (value, after) = match e {
                    Escape::Time => time_value(rest)?,
                    _ => split_value(rest, next)?,
                };
                let text = std::str::from_utf8(value).ok();
                match e {
                    Escape::User => head.user = text.filter(|t| !t.is_empty()),
                    Escape::Application => head.application = text.filter(|t| !t.is_empty()),
                    Escape::Pid => pid = text,
                    Escape::Session => head.session = text,
                    Escape::Time => head.at = Some(pg_time(value)?),
                    Escape::Epoch => head.at = Some(epoch(value)?),
                    _ => {}
                }
                rest = after;
            }
        }
    }
    head.session = head.session.or(pid);
    Some(Matched::Session(head, rest))
}

/// The escape as written, for messages.
fn escape_text(e: Escape) -> &'static str {
    match e {
        Escape::User => "%u",
        Escape::Database => "%d",
        Escape::Application => "%a",
        Escape::Pid => "%p",
        Escape::Session => "%c",
        Escape::Time => "%t",
        Escape::Epoch => "%n",
        Escape::SessionOnly => "%q",
        Escape::Other => "an escape",
    }
}

/// A value up to `next` (the literal text after it), or to the next space when the prefix
/// ends with the value.
fn split_value<'a>(rest: &'a [u8], next: Option<&[u8]>) -> Option<(&'a [u8], &'a [u8])> {
    let end = match next {
        Some([c]) => memchr::memchr(*c, rest)?,
        // The literal between two escapes is a few bytes and the value before it short: a
        // plain search beats building a `memmem` finder for every line (bench/RESULTS.md).
        Some(t) if !t.is_empty() => rest.windows(t.len()).position(|w| w == t)?,
        _ => memchr::memchr(b' ', rest).unwrap_or(rest.len()),
    };
    Some((&rest[..end], &rest[end..]))
}

/// `%t`/`%m`: `YYYY-MM-DD HH:MM:SS[.fff] ZONE`, three words.
fn time_value(rest: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut spaces = 0;
    let end = rest
        .iter()
        .position(|&c| {
            spaces += usize::from(c == b' ');
            spaces == 3
        })
        .unwrap_or(rest.len());
    Some((&rest[..end], &rest[end..]))
}

/// The severity of what follows a prefix (`LOG:  ...`): an upper-case word, a colon and two
/// spaces. `None` when the text does not start so.
pub fn severity(rest: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = memchr::memchr(b':', rest)?;
    let word = &rest[..colon];
    let message = rest[colon + 1..].strip_prefix(b"  ")?;
    (!word.is_empty()
        && word
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()))
    .then_some((word, message))
}

/// A time as PostgreSQL writes it in its logs: `2026-11-27 10:00:00[.123] UTC`; the zone an
/// abbreviation of a fixed offset, or a numeric offset (`+02`, `-0530`, `+05:30`).
pub fn pg_time(text: &[u8]) -> Option<DateTime<FixedOffset>> {
    let text = std::str::from_utf8(text).ok()?.trim();
    let (local, zone) = text.rsplit_once(' ')?;
    let local = match fixed_layout(local.as_bytes()) {
        Some(t) => t,
        None => NaiveDateTime::parse_from_str(local, "%Y-%m-%d %H:%M:%S%.f").ok()?,
    };
    let offset = FixedOffset::east_opt(zone_seconds(zone)?)?;
    offset.from_local_datetime(&local).single()
}

/// `YYYY-MM-DD HH:MM:SS[.f…]`, the one layout PostgreSQL writes, read without chrono's
/// format-string parser (an eighth of a pgaudit scan went there); anything else is `None`
/// and goes to that parser, so both read the same texts the same way.
fn fixed_layout(b: &[u8]) -> Option<NaiveDateTime> {
    if b.len() < 19 || [b[4], b[7], b[10], b[13], b[16]] != *b"-- ::" {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    let nanos = match &b[19..] {
        [] => 0,
        [b'.', digits @ ..] if (1..=9).contains(&digits.len()) => {
            let n = num(20..b.len())?;
            n * 10u32.pow(9 - digits.len() as u32)
        }
        _ => return None,
    };
    chrono::NaiveDate::from_ymd_opt(num(0..4)? as i32, num(5..7)?, num(8..10)?)?.and_hms_nano_opt(
        num(11..13)?,
        num(14..16)?,
        num(17..19)?,
        nanos,
    )
}

/// The offset of a zone as PostgreSQL prints it. Abbreviations that name more than one
/// offset (`IST`) are not guessed: the line is malformed, and the docs say to log in UTC.
fn zone_seconds(zone: &str) -> Option<i32> {
    const HOUR: i32 = 3600;
    let fixed = [
        ("UTC", 0),
        ("GMT", 0),
        ("Z", 0),
        ("WET", 0),
        ("WEST", 1),
        ("BST", 1),
        ("CET", 1),
        ("CEST", 2),
        ("EET", 2),
        ("EEST", 3),
        ("MSK", 3),
        ("JST", 9),
        ("KST", 9),
        ("AEST", 10),
        ("AEDT", 11),
        ("NZST", 12),
        ("NZDT", 13),
        ("EST", -5),
        ("EDT", -4),
        ("CST", -6),
        ("CDT", -5),
        ("MST", -7),
        ("MDT", -6),
        ("PST", -8),
        ("PDT", -7),
    ];
    if let Some(&(_, h)) = fixed.iter().find(|(name, _)| *name == zone) {
        return Some(h * HOUR);
    }
    let (sign, digits) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => return None,
    };
    let digits: String = digits.chars().filter(|c| *c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m) = match digits.len() {
        1 | 2 => (digits.parse::<i32>().ok()?, 0),
        4 => (digits[..2].parse().ok()?, digits[2..].parse::<i32>().ok()?),
        _ => return None,
    };
    Some(sign * (h * HOUR + m * 60))
}

/// `%n`: epoch seconds with milliseconds (`1764237600.123`), in UTC.
fn epoch(text: &[u8]) -> Option<DateTime<FixedOffset>> {
    let text = std::str::from_utf8(text).ok()?;
    let (secs, frac) = text.split_once('.').unwrap_or((text, "0"));
    let secs: i64 = secs.parse().ok()?;
    let millis: u32 = format!("{frac:0<3}").get(..3)?.parse().ok()?;
    DateTime::from_timestamp(secs, millis * 1_000_000).map(|t| t.fixed_offset())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The fixed-layout reader and chrono's format parser agree on every text: PostgreSQL's
        /// own layout and texts near it.
        #[test]
        fn the_fixed_layout_reads_as_the_format_parser_reads(
            text in prop_oneof![
                "[0-9]{4}-[0-1][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9](\\.[0-9]{1,9})?",
                "[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}[.0-9a ]{0,12}",
                "[-0-9 :.]{0,24}",
            ],
        ) {
            let slow = NaiveDateTime::parse_from_str(&text, "%Y-%m-%d %H:%M:%S%.f").ok();
            if let Some(fast) = fixed_layout(text.as_bytes()) {
                prop_assert_eq!(Some(fast), slow, "{}", text);
            }
            let zoned = format!("{text} UTC");
            let expected = slow.map(|t| t.and_utc().fixed_offset());
            prop_assert_eq!(pg_time(zoned.as_bytes()), expected, "{}", text);
        }
    }

    fn at(text: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(text).unwrap()
    }

    #[test]
    fn the_default_prefix_of_debian_reads_time_pid_role_and_database() {
        let p = Prefix::parse("%m [%p] %q%u@%d ").unwrap();
        let line = b"2026-11-27 10:00:00.123 UTC [4242] alice@gis LOG:  AUDIT: SESSION,1";
        let Some(Matched::Session(head, rest)) = p.matches(line) else {
            panic!("no match");
        };
        assert_eq!(head.at, Some(at("2026-11-27T10:00:00.123Z")));
        assert_eq!(head.user, Some("alice"));
        assert_eq!(head.session, Some("4242"));
        assert_eq!(rest, b"LOG:  AUDIT: SESSION,1");
        // The checkpointer's line stops at %q.
        let line = b"2026-11-27 10:05:00.000 UTC [17] LOG:  checkpoint starting: time";
        assert_eq!(p.matches(line), Some(Matched::NotSession));
        // A line of another prefix matches nothing.
        assert_eq!(
            p.matches(b"Nov 27 10:00:00 db postgres[4242]: LOG: x"),
            None
        );
    }

    #[test]
    fn zones_and_paddings_and_applications() {
        let p = Prefix::parse("%t [%-5p]: user=%u,db=%d,app=%a,client=%h ").unwrap();
        let line = b"2026-11-27 11:00:00 CET [77   ]: user=bob,db=gis,app=QGIS 3.34,client=[local] LOG:  x";
        let Some(Matched::Session(head, _)) = p.matches(line) else {
            panic!("no match");
        };
        assert_eq!(head.at, Some(at("2026-11-27T10:00:00Z")));
        assert_eq!(head.application, Some("QGIS 3.34"));
        assert_eq!(head.session, Some("77   "));
        assert_eq!(
            pg_time(b"2026-11-27 10:00:00 +0530"),
            Some(at("2026-11-27T04:30:00Z"))
        );
        assert_eq!(pg_time(b"2026-11-27 10:00:00 IST"), None);
        assert_eq!(
            epoch(b"1795773600.125"),
            Some(at("2026-11-27T10:00:00.125Z"))
        );
    }

    #[test]
    fn prefixes_that_cannot_be_read_back_are_refused() {
        assert!(Prefix::parse("%u%d ")
            .unwrap_err()
            .contains("cannot be told apart"));
        assert!(Prefix::parse("%m %y ").unwrap_err().contains("%y"));
        assert!(Prefix::parse("%m %").is_err());
    }
}
