//! The instant of a read: the `at` a reader found ([`At`]), the fast parser of its common
//! `...Z` form ([`utc_seconds`]) with RFC 3339 behind it, and where a read's UTC day falls
//! relative to the requested days ([`Day::of`]). The remembered dates of a scan are in
//! the `contracts` crate's `memo`.

use chrono::{DateTime, FixedOffset, NaiveDate};

/// `at` as an instant: the common `...Z` form without the general parser, else RFC 3339.
pub fn parse_instant(at: &str) -> Result<DateTime<FixedOffset>, String> {
    match utc_seconds(at.as_bytes()) {
        Some(t) => Ok(t),
        None => DateTime::parse_from_rfc3339(at)
            .map_err(|e| format!("`at` {at:?} is not an RFC 3339 datetime: {e}")),
    }
}

/// The common form `YYYY-MM-DDTHH:MM:SSZ`, parsed without the general RFC 3339 machinery
/// (it is on the scan's hot path); `None` for any other form, which the general parser takes.
#[inline]
pub fn utc_seconds(b: &[u8]) -> Option<DateTime<FixedOffset>> {
    if b.len() != 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'Z'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let date = NaiveDate::from_ymd_opt(i32::try_from(num(0..4)?).ok()?, num(5..7)?, num(8..10)?)?;
    let time = chrono::NaiveTime::from_hms_opt(num(11..13)?, num(14..16)?, num(17..19)?)?;
    Some(date.and_time(time).and_utc().fixed_offset())
}

/// Where a read's UTC day falls relative to the requested days (UTC days, as `--today` is).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Day {
    Before,
    Inside,
    After,
}

impl Day {
    /// Where the UTC day `day` falls relative to the requested days `from..=to`, the days
    /// given as dates or as days since the epoch: the one placement of a read, whichever
    /// way its instant was parsed.
    #[inline]
    pub fn of<T: PartialOrd>(day: T, from: T, to: T) -> Day {
        if day > to {
            Day::After
        } else if day < from {
            Day::Before
        } else {
            Day::Inside
        }
    }
}

/// A read's `at`: as written, or already an instant (a Parquet timestamp column).
#[derive(Clone, Copy, Debug)]
pub enum At<'a> {
    Text(&'a [u8]),
    /// Nanoseconds since the epoch, in UTC.
    UtcNanos(i64),
    Instant(DateTime<FixedOffset>),
}

impl<'a> At<'a> {
    pub fn text(text: &'a str) -> At<'a> {
        At::Text(text.as_bytes())
    }

    /// The instant; `Err` says why the text is none.
    pub fn instant(&self) -> Result<DateTime<FixedOffset>, String> {
        match self {
            At::Text(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => parse_instant(text),
                Err(_) => Err(format!(
                    "`at` {:?} is not an RFC 3339 datetime",
                    String::from_utf8_lossy(bytes)
                )),
            },
            At::UtcNanos(ns) => Ok(DateTime::from_timestamp_nanos(*ns).fixed_offset()),
            At::Instant(t) => Ok(*t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_date_path_agrees_with_rfc3339() {
        for s in [
            "2026-11-28T03:04:05Z",
            "2024-02-29T23:59:59Z",
            "2026-01-01T00:00:00Z",
        ] {
            assert_eq!(
                utc_seconds(s.as_bytes()),
                DateTime::parse_from_rfc3339(s).ok(),
                "{s}"
            );
        }
        for s in [
            "2026-02-30T00:00:00Z",
            "2026-11-28T03:04:05+01:00",
            "2026-11-28 03:04:05Z",
            "2026-1x-28T03:04:05Z",
        ] {
            assert_eq!(utc_seconds(s.as_bytes()), None, "{s}");
        }
    }

    #[test]
    fn a_day_is_placed_alike_as_a_date_and_as_a_day_number() {
        let date = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        let (from, to) = (date("2026-11-27"), date("2026-11-29"));
        let epoch = date("1970-01-01");
        let number = |d: NaiveDate| d.signed_duration_since(epoch).num_days();
        for (d, want) in [
            ("2026-11-26", Day::Before),
            ("2026-11-27", Day::Inside),
            ("2026-11-29", Day::Inside),
            ("2026-11-30", Day::After),
        ] {
            assert_eq!(Day::of(date(d), from, to), want, "{d}");
            assert_eq!(
                Day::of(number(date(d)), number(from), number(to)),
                want,
                "{d}"
            );
        }
    }
}
