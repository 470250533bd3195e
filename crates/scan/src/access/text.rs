//! The small pieces of text handling the three formats share: percent-decoding, the
//! backslash escapes of quoted fields, the bracketed `[06/Feb/2019:00:00:38 +0000]` time,
//! splitting a request line and finding a query parameter. All work on bytes: a log line
//! need not be UTF-8 (a user agent can hold anything), only the values a read keeps must be.

use std::borrow::Cow;

use chrono::{DateTime, FixedOffset, NaiveDate};

/// The value of a hexadecimal digit.
/// The byte that the two hexadecimal digits at `b[i]` and `b[i + 1]` spell, if they do.
fn hex_pair(b: &[u8], i: usize) -> Option<u8> {
    let h = b.get(i).copied().and_then(hex)?;
    let l = b.get(i + 1).copied().and_then(hex)?;
    Some(h * 16 + l)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Bytes as text, replacing what is not UTF-8 (a name must be text; a stray byte must not
/// cost the whole read).
pub(crate) fn lossy(b: &[u8]) -> Cow<'_, str> {
    // `from_utf8` first: it checks ASCII a word at a time, where the lossy reading goes byte
    // by byte (a tenth of a Databricks scan); the lossy one only for text that is not UTF-8.
    match std::str::from_utf8(b) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(b),
    }
}

/// `%XX` escapes decoded, once: a `%2520` becomes `%20`, not a space, because a platform
/// that writes it encoded a value that was already encoded. With `plus`, `+` is a space, as
/// in a query string's form encoding. A `%` not followed by two hexadecimal digits stays.
pub(crate) fn percent_decode(b: &[u8], plus: bool) -> Cow<'_, str> {
    if !b.iter().any(|&c| c == b'%' || (plus && c == b'+')) {
        return lossy(b);
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%' {
            if let Some(byte) = hex_pair(b, i + 1) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(if plus && c == b'+' { b' ' } else { c });
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// A logged path or key, decoded; empty where the log writes `-` for none.
pub(crate) fn path_or_dash(b: &[u8]) -> Cow<'_, str> {
    match b {
        b"-" => Cow::Borrowed(""),
        path => percent_decode(path, false),
    }
}

/// The text of a quoted field with its backslash escapes undone: `\"` and `\\` (Apache),
/// `\xHH` (nginx and Apache, for a quote, a backslash or a byte outside printable ASCII).
pub(crate) fn unescape(b: &[u8]) -> Cow<'_, str> {
    if !b.contains(&b'\\') {
        return lossy(b);
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            match b[i + 1] {
                b'x' => {
                    if let Some(byte) = hex_pair(b, i + 2) {
                        out.push(byte);
                        i += 4;
                        continue;
                    }
                }
                b'"' | b'\\' => {
                    out.push(b[i + 1]);
                    i += 2;
                    continue;
                }
                b'n' => {
                    out.push(b'\n');
                    i += 2;
                    continue;
                }
                b't' => {
                    out.push(b'\t');
                    i += 2;
                    continue;
                }
                _ => {}
            }
        }
        out.push(b[i]);
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// The end of a quoted field's text: the index of the closing `"` in `b` (which starts
/// after the opening one), skipping a backslash and the byte it escapes; `None` when the
/// quote is never closed (a line cut short).
pub(crate) fn closing_quote(b: &[u8]) -> Option<usize> {
    let mut from = 0;
    loop {
        let at = from + memchr::memchr2(b'"', b'\\', &b[from..])?;
        if b[at] == b'"' {
            return Some(at);
        }
        from = at + 2;
        if from > b.len() {
            return None;
        }
    }
}

fn digits<const N: usize>(b: &[u8]) -> Option<u32> {
    if b.len() != N {
        return None;
    }
    b.iter().try_fold(0u32, |n, &c| {
        c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
    })
}

fn month(b: &[u8]) -> Option<u32> {
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    MONTHS
        .iter()
        .position(|m| m.eq_ignore_ascii_case(b))
        .and_then(|i| u32::try_from(i + 1).ok())
}

/// The `strftime` `%d/%b/%Y:%H:%M:%S %z` time of S3 and of Apache/nginx (`$time_local`),
/// without its brackets: `06/Feb/2019:00:00:38 +0000`. The offset is kept as written.
pub(crate) fn clf_time(b: &[u8]) -> Option<DateTime<FixedOffset>> {
    if b.len() != 26 || b[2] != b'/' || b[6] != b'/' || b[11] != b':' || b[20] != b' ' {
        return None;
    }
    let day = digits::<2>(&b[0..2])?;
    let month = month(&b[3..6])?;
    let year = digits::<4>(&b[7..11])?;
    let time = hms(&b[12..20])?;
    let offset = offset_hhmm(&b[21..26])?;
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    date.and_time(time).and_local_timezone(offset).single()
}

/// `HH:MM:SS`.
pub(crate) fn hms(b: &[u8]) -> Option<chrono::NaiveTime> {
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    chrono::NaiveTime::from_hms_opt(
        digits::<2>(&b[0..2])?,
        digits::<2>(&b[3..5])?,
        digits::<2>(&b[6..8])?,
    )
}

/// `YYYY-MM-DD`.
pub(crate) fn ymd(b: &[u8]) -> Option<NaiveDate> {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    NaiveDate::from_ymd_opt(
        i32::try_from(digits::<4>(&b[0..4])?).ok()?,
        digits::<2>(&b[5..7])?,
        digits::<2>(&b[8..10])?,
    )
}

/// `+hhmm` or `-hhmm`.
fn offset_hhmm(b: &[u8]) -> Option<FixedOffset> {
    let sign = match b.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let h = i32::try_from(digits::<2>(&b[1..3])?).ok()?;
    let m = i32::try_from(digits::<2>(b.get(3..5)?)?).ok()?;
    FixedOffset::east_opt(sign * (h * 3600 + m * 60))
}

/// A status code: three digits.
pub(crate) fn status(b: &[u8]) -> Option<u16> {
    digits::<3>(b).and_then(|n| u16::try_from(n).ok())
}

/// A status code field, or the refusal that names the field as the log's format calls it
/// (`sc-status`, `` `$status` ``, `HTTP status`).
pub(crate) fn status_field(field: &str, b: &[u8]) -> Result<u16, String> {
    status(b).ok_or_else(|| format!("{field} {:?} is not a number", lossy(b)))
}

/// A status code field that may be absent: `-` (nginx and Apache write it when no status
/// was sent, and logstash's patterns accept it) is `None`, a request that is no read by its
/// status; anything else is read as [`status_field`] reads it.
pub(crate) fn status_or_dash(field: &str, b: &[u8]) -> Result<Option<u16>, String> {
    if b == b"-" {
        return Ok(None);
    }
    status_field(field, b).map(Some)
}

/// A request line `METHOD TARGET PROTOCOL` split into method and target (`None` for what
/// is no request: `-`, a TLS handshake sent to a plain port, an empty line). The protocol
/// is optional, as in HTTP/0.9.
pub(crate) fn request_line(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let sp = memchr::memchr(b' ', b)?;
    let method = &b[..sp];
    if method.is_empty() || !method.iter().all(u8::is_ascii_uppercase) {
        return None;
    }
    let rest = &b[sp + 1..];
    let target = match memchr::memrchr(b' ', rest) {
        Some(end) if rest[end + 1..].starts_with(b"HTTP/") => &rest[..end],
        _ => rest,
    };
    (!target.is_empty()).then_some((method, target))
}

/// A request target split at `?` into path and query.
pub(crate) fn split_query(target: &[u8]) -> (&[u8], Option<&[u8]>) {
    match memchr::memchr(b'?', target) {
        Some(q) => (&target[..q], Some(&target[q + 1..])),
        None => (target, None),
    }
}

/// The value of parameter `name` in a query string, decoded; the first when it repeats.
/// A parameter without `=` has the empty value.
pub(crate) fn query_param<'a>(query: &'a [u8], name: &str) -> Option<Cow<'a, str>> {
    query.split(|&c| c == b'&').find_map(|pair| {
        let (k, v) = match memchr::memchr(b'=', pair) {
            Some(eq) => (&pair[..eq], &pair[eq + 1..]),
            None => (pair, &pair[pair.len()..]),
        };
        (percent_decode(k, true) == name).then(|| percent_decode(v, true))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_escapes_decode_once() {
        assert_eq!(percent_decode(b"a%20b", false), "a b");
        assert_eq!(percent_decode(b"a%2520b", false), "a%20b");
        assert_eq!(percent_decode(b"a+b", false), "a+b");
        assert_eq!(percent_decode(b"a+b", true), "a b");
        assert_eq!(percent_decode(b"100%", false), "100%");
        assert_eq!(percent_decode(b"%zz%4", false), "%zz%4");
        assert_eq!(percent_decode(b"caf%C3%A9", false), "café");
    }

    #[test]
    fn quoted_text_unescapes() {
        assert_eq!(unescape(br#"say \"hi\""#), r#"say "hi""#);
        assert_eq!(unescape(br"a\x22b\\c"), r#"a"b\c"#);
        assert_eq!(unescape(br"\x16\x03\x01"), "\u{16}\u{3}\u{1}");
        assert_eq!(closing_quote(br#"a \"b\" c" d"#), Some(9));
        assert_eq!(closing_quote(br#"a b"#), None);
        assert_eq!(closing_quote(br"a b\"), None);
    }

    #[test]
    fn the_bracketed_time_keeps_its_offset() {
        let t = clf_time(b"06/Feb/2019:00:00:38 +0000").unwrap();
        assert_eq!(t.to_rfc3339(), "2019-02-06T00:00:38+00:00");
        let t = clf_time(b"10/Oct/2000:13:55:36 -0700").unwrap();
        assert_eq!(t.to_rfc3339(), "2000-10-10T13:55:36-07:00");
        assert_eq!(t.timestamp(), 971211336);
        assert!(clf_time(b"31/Feb/2019:00:00:38 +0000").is_none());
        assert!(clf_time(b"06/Feb/2019:00:00:38").is_none());
        assert!(clf_time(b"06/Fex/2019:00:00:38 +0000").is_none());
    }

    #[test]
    fn request_lines_split() {
        assert_eq!(
            request_line(b"GET /a%20b?x=1 HTTP/1.1"),
            Some((&b"GET"[..], &b"/a%20b?x=1"[..]))
        );
        assert_eq!(request_line(b"GET /a"), Some((&b"GET"[..], &b"/a"[..])));
        assert_eq!(request_line(b"-"), None);
        assert_eq!(request_line(b"\x16\x03\x01\x02"), None);
        assert_eq!(split_query(b"/a?b=c"), (&b"/a"[..], Some(&b"b=c"[..])));
    }

    #[test]
    fn query_parameters_are_found_decoded() {
        let q = b"x=1&api_key=7f3a%2Bz&flag&api_key=second";
        assert_eq!(query_param(q, "api_key").as_deref(), Some("7f3a+z"));
        assert_eq!(query_param(q, "flag").as_deref(), Some(""));
        assert_eq!(query_param(q, "y"), None);
    }
}
