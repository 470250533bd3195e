//! Instants and versions as JSON strings, written without `core::fmt`.
//!
//! A `consumers` report of ten thousand consumers writes ten thousand instants and versions;
//! through chrono's and semver's `Display` (which serde's derive calls) they were half the
//! time of rendering the report, and the report is written after the scan, when nothing else
//! runs. The text here is exactly theirs: RFC 3339 with a fraction of 0, 3, 6 or 9 digits as
//! the nanoseconds need and `Z` for UTC, and `MAJOR.MINOR.PATCH`. Anything less common (a
//! leap second, an offset with seconds, a year outside 0–9999, a pre-release or build
//! suffix) is handed to their own formatting, so nothing changes for it either.

use chrono::{DateTime, Datelike, FixedOffset, Timelike};
use semver::Version;
use serde::Serializer;

/// `#[serde(serialize_with)]` for an optional instant: the same string as chrono's.
pub fn instant<S: Serializer>(t: &Option<DateTime<FixedOffset>>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        None => s.serialize_none(),
        Some(t) => match rfc3339(t)
            .as_ref()
            .and_then(|(buf, len)| ascii(&buf[..*len]))
        {
            Some(text) => s.serialize_str(text),
            None => serde::Serialize::serialize(t, s),
        },
    }
}

/// `#[serde(serialize_with)]` for an optional version: the same string as semver's.
pub fn version<S: Serializer>(v: &Option<Version>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        None => s.serialize_none(),
        Some(v) if v.pre.is_empty() && v.build.is_empty() => {
            let mut buf = [0u8; 62];
            let mut n = 0;
            let mut digits = itoa::Buffer::new();
            for (k, part) in [v.major, v.minor, v.patch].into_iter().enumerate() {
                if k > 0 {
                    buf[n] = b'.';
                    n += 1;
                }
                let text = digits.format(part).as_bytes();
                buf[n..n + text.len()].copy_from_slice(text);
                n += text.len();
            }
            match ascii(&buf[..n]) {
                Some(text) => s.serialize_str(text),
                None => serde::Serialize::serialize(v, s),
            }
        }
        Some(v) => serde::Serialize::serialize(v, s),
    }
}

/// The text of bytes written here, which are ASCII digits and punctuation only (were they
/// ever not, the caller falls back to chrono's or semver's own text rather than write less).
fn ascii(b: &[u8]) -> Option<&str> {
    std::str::from_utf8(b).ok()
}

/// `value` as `width` digits, zero-padded, at `out[at..]`; past them.
fn padded(out: &mut [u8], at: usize, value: u32, width: usize) -> usize {
    let mut v = value;
    for k in (0..width).rev() {
        out[at + k] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    at + width
}

/// `t` as chrono writes it in JSON (`to_rfc3339_opts(SecondsFormat::AutoSi, true)`), in a
/// buffer with its length; `None` for what this leaves to chrono.
fn rfc3339(t: &DateTime<FixedOffset>) -> Option<([u8; 40], usize)> {
    let local = t.naive_local();
    let offset = t.offset().local_minus_utc();
    let nanos = local.nanosecond();
    let year = local.year();
    if nanos >= 1_000_000_000 || offset % 60 != 0 || !(0..=9999).contains(&year) {
        return None;
    }
    let mut out = [0u8; 40];
    let mut i = padded(&mut out, 0, year as u32, 4);
    for (sep, value) in [
        (b'-', local.month()),
        (b'-', local.day()),
        (b'T', local.hour()),
        (b':', local.minute()),
        (b':', local.second()),
    ] {
        out[i] = sep;
        i = padded(&mut out, i + 1, value, 2);
    }
    if nanos != 0 {
        out[i] = b'.';
        i = if nanos.is_multiple_of(1_000_000) {
            padded(&mut out, i + 1, nanos / 1_000_000, 3)
        } else if nanos.is_multiple_of(1_000) {
            padded(&mut out, i + 1, nanos / 1_000, 6)
        } else {
            padded(&mut out, i + 1, nanos, 9)
        };
    }
    if offset == 0 {
        out[i] = b'Z';
        i += 1;
    } else {
        let minutes = offset.unsigned_abs() / 60;
        out[i] = if offset < 0 { b'-' } else { b'+' };
        i = padded(&mut out, i + 1, minutes / 60, 2);
        out[i] = b':';
        i = padded(&mut out, i + 1, minutes % 60, 2);
    }
    Some((out, i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;
    use proptest::strategy::Strategy;

    #[derive(serde::Serialize)]
    struct Ours {
        #[serde(serialize_with = "instant")]
        t: Option<DateTime<FixedOffset>>,
        #[serde(serialize_with = "version")]
        v: Option<Version>,
    }

    #[derive(serde::Serialize)]
    struct Theirs {
        t: Option<DateTime<FixedOffset>>,
        v: Option<Version>,
    }

    fn both(t: Option<DateTime<FixedOffset>>, v: Option<Version>) -> (String, String) {
        let ours = serde_json::to_string(&Ours { t, v: v.clone() }).unwrap();
        let theirs = serde_json::to_string(&Theirs { t, v }).unwrap();
        (ours, theirs)
    }

    proptest::proptest! {
        /// Any instant (any fraction, any offset, leap seconds and offsets with seconds
        /// included) and any version is written as chrono and semver write it.
        #[test]
        fn the_text_is_chronos_and_semvers(
            days in -800_000i64..3_000_000,
            secs in 0u32..86_400,
            nanos in proptest::prop_oneof![
                proptest::strategy::Just(0u32),
                (0u32..1000).prop_map(|n| n * 1_000_000),
                (0u32..1_000_000).prop_map(|n| n * 1_000),
                0u32..2_000_000_000,
            ],
            offset in proptest::prop_oneof![
                proptest::strategy::Just(0i32),
                (-1439i32..1440).prop_map(|m| m * 60),
                -86_399i32..86_400,
            ],
            parts in (0u64..u64::MAX, 0u64..1000, 0u64..100),
            suffix in proptest::sample::select(vec!["", "-rc.1", "+build.7", "-alpha+001"]),
        ) {
            let date = NaiveDate::from_num_days_from_ce_opt(i32::try_from(days).unwrap());
            let Some(date) = date else { return Ok(()) };
            // A nanosecond count of a second or more is a leap second, valid only at :59.
            let secs = if nanos >= 1_000_000_000 { secs / 60 * 60 + 59 } else { secs };
            let time = chrono::NaiveTime::from_num_seconds_from_midnight_opt(secs, nanos);
            let (Some(time), Some(offset)) = (time, FixedOffset::east_opt(offset)) else {
                return Ok(());
            };
            let Some(t) = date.and_time(time).and_local_timezone(offset).single() else {
                return Ok(());
            };
            let v = Version::parse(&format!("{}.{}.{}{suffix}", parts.0, parts.1, parts.2)).unwrap();
            let (ours, theirs) = both(Some(t), Some(v));
            proptest::prop_assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn none_is_null() {
        let (ours, theirs) = both(None, None);
        assert_eq!(ours, r#"{"t":null,"v":null}"#);
        assert_eq!(ours, theirs);
    }

    #[test]
    fn the_common_forms_take_the_fast_path() {
        let t = DateTime::parse_from_rfc3339("2026-11-29T21:17:00.678+02:00").unwrap();
        let (buf, len) = rfc3339(&t).unwrap();
        assert_eq!(&buf[..len], b"2026-11-29T21:17:00.678+02:00");
        let leap = DateTime::parse_from_rfc3339("2016-12-31T23:59:60Z").unwrap();
        assert!(rfc3339(&leap).is_none());
    }
}
