//! The Apache/nginx combined log format, and custom formats given by a `pattern`.
//!
//! The combined format is nginx's predefined `log_format combined` (and Apache's
//! `LogFormat "%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-agent}i\"" combined`,
//! which writes the same line):
//!
//! ```text
//! $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"
//! ```
//!
//! A `pattern` is written the way nginx's `log_format` is: `$name` (or `${name}`) is a
//! field, everything else is text the line must contain, and `$$` is a `$`. A field ends
//! where the text after it in the pattern begins; a field between quotes (`"$request"`)
//! ends at the first quote not escaped by a backslash, and the last field, when the pattern
//! ends in one, at the first space. Whatever follows the pattern on a line is ignored, so
//! the combined pattern reads lines with more fields appended; to read an appended field,
//! name it in the pattern. Quoted values have their escapes undone (`\"`, `\\` from Apache,
//! `\xHH` from nginx); `-` is an absent value. Two fields with no text between them are
//! refused: no line could tell where one ends.
//!
//! A pattern needs a time (`$time_local`, `$time_iso8601` or `$msec`), a request
//! (`$request`, or `$request_method` with `$request_uri` or `$uri`) and `$status`.

use std::borrow::Cow;

use chrono::{DateTime, FixedOffset};

pub use super::config_error::PatternError;
use super::text;
use super::{
    AccessConfigError, Asked, Encoding, Fields, Parsed, PrincipalAt, PrincipalSpec, Request,
};

/// The nginx `log_format combined`.
pub const COMBINED: &str = "$remote_addr - $remote_user [$time_local] \"$request\" $status \
                            $body_bytes_sent \"$http_referer\" \"$http_user_agent\"";

#[derive(Debug, Clone, PartialEq, Eq)]
enum Element {
    Text(Vec<u8>),
    Field(String),
}

/// A compiled `pattern`: text and fields in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    elements: Vec<Element>,
    names: Vec<String>,
}

impl Pattern {
    /// The combined format.
    pub fn combined() -> Pattern {
        Pattern::parse(COMBINED).unwrap_or_else(|_| unreachable!("the combined pattern reads"))
    }

    /// Read a pattern; the error names the column.
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let err = |byte: usize, reason: String| PatternError {
            pattern: text.to_string(),
            column: text[..byte].chars().count() + 1,
            reason,
        };
        let mut elements: Vec<Element> = Vec::new();
        let mut literal = Vec::new();
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'$' {
                literal.push(bytes[i]);
                i += 1;
                continue;
            }
            if bytes.get(i + 1) == Some(&b'$') {
                literal.push(b'$');
                i += 2;
                continue;
            }
            let braced = bytes.get(i + 1) == Some(&b'{');
            let start = i + 1 + usize::from(braced);
            let len = bytes[start..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count();
            let name = &text[start..start + len];
            if name.is_empty() {
                return Err(err(i, "`$` names no field (write `$$` for a `$`)".into()));
            }
            let mut end = start + len;
            if braced {
                if bytes.get(end) != Some(&b'}') {
                    return Err(err(i, format!("`${{{name}` is not closed by `}}`")));
                }
                end += 1;
            }
            if !literal.is_empty() {
                elements.push(Element::Text(std::mem::take(&mut literal)));
            } else if let Some(Element::Field(prev)) = elements.last() {
                return Err(err(
                    i,
                    format!(
                        "`${prev}` and `${name}` have no text between them: a line cannot tell \
                         where one ends"
                    ),
                ));
            }
            elements.push(Element::Field(name.to_string()));
            i = end;
        }
        if !literal.is_empty() {
            elements.push(Element::Text(literal));
        }
        let names = elements
            .iter()
            .filter_map(|e| match e {
                Element::Field(n) => Some(n.clone()),
                Element::Text(_) => None,
            })
            .collect::<Vec<_>>();
        if names.is_empty() {
            return Err(err(0, "the pattern names no field".into()));
        }
        Ok(Pattern {
            text: text.to_string(),
            elements,
            names,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The field names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Time {
    Local(usize),
    Iso8601(usize),
    Msec(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// `$request`: `METHOD TARGET PROTOCOL`.
    Request(usize),
    /// `$request_method` and `$request_uri` (with the query) or `$uri` (without).
    Parts { method: usize, uri: usize },
}

/// The reader of one file: the pattern, the roles of its fields and the line's spans.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Combined {
    pattern: Pattern,
    time: Time,
    target: Target,
    /// `$args` or `$query_string`, for a `$uri` without its query.
    args: Option<usize>,
    status: usize,
    client: Option<usize>,
    principal: PrincipalAt,
    spans: Vec<(u32, u32)>,
}

impl Combined {
    pub(crate) fn new(
        pattern: Pattern,
        principal: Option<&PrincipalSpec>,
    ) -> Result<Combined, AccessConfigError> {
        let perr = |reason: String| {
            AccessConfigError::Pattern(PatternError {
                pattern: pattern.text.clone(),
                column: 1,
                reason,
            })
        };
        let ix = |n: &str| pattern.index(n);
        let time = match (ix("time_local"), ix("time_iso8601"), ix("msec")) {
            (Some(i), _, _) => Time::Local(i),
            (None, Some(i), _) => Time::Iso8601(i),
            (None, None, Some(i)) => Time::Msec(i),
            _ => {
                return Err(perr(
                    "no time: name `$time_local`, `$time_iso8601` or `$msec`".into(),
                ))
            }
        };
        let target = match (
            ix("request"),
            ix("request_method"),
            ix("request_uri").or(ix("uri")),
        ) {
            (Some(i), _, _) => Target::Request(i),
            (None, Some(method), Some(uri)) => Target::Parts { method, uri },
            _ => {
                return Err(perr(
                    "no request: name `$request`, or `$request_method` and `$request_uri`".into(),
                ))
            }
        };
        let status = ix("status").ok_or_else(|| perr("no `$status`".into()))?;
        let fields_list = || {
            pattern
                .names
                .iter()
                .map(|n| format!("${n}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let unknown = |p: String, reason: String| AccessConfigError::Principal {
            principal: p,
            reason,
        };
        let principal = match principal {
            None => PrincipalAt::Field(ix("remote_user").ok_or_else(|| {
                unknown(
                    String::new(),
                    format!(
                        "the pattern has no `$remote_user`, the default principal; name one of {}",
                        fields_list()
                    ),
                )
            })?),
            Some(PrincipalSpec::Query(q)) => PrincipalAt::Query(q.clone()),
            Some(PrincipalSpec::Field(f)) => {
                let name = f.strip_prefix('$').unwrap_or(f);
                PrincipalAt::Field(ix(name).ok_or_else(|| {
                    unknown(
                        f.clone(),
                        format!("the pattern has no `${name}`; it has {}", fields_list()),
                    )
                })?)
            }
            Some(PrincipalSpec::Header(h)) => {
                let name = format!("http_{}", h.to_ascii_lowercase().replace('-', "_"));
                PrincipalAt::Field(ix(&name).ok_or_else(|| {
                    unknown(
                        format!("header:{h}"),
                        format!("the pattern logs no `${name}`; it has {}", fields_list()),
                    )
                })?)
            }
        };
        Ok(Combined {
            time,
            target,
            args: ix("args").or(ix("query_string")),
            status,
            client: ix("remote_addr"),
            principal,
            spans: Vec::with_capacity(pattern.names.len()),
            pattern,
        })
    }

    /// Match the pattern against a line: the spans of its fields, or where it fails.
    fn split(&mut self, line: &[u8]) -> Result<(), String> {
        self.spans.clear();
        let elements = &self.pattern.elements;
        let mut pos = 0usize;
        let cut = |what: String| format!("{what} (cut short, or not the pattern's format)");
        for (k, e) in elements.iter().enumerate() {
            match e {
                Element::Text(t) => {
                    if !line[pos..].starts_with(t) {
                        return Err(cut(format!(
                            "column {}: expected {:?}",
                            pos + 1,
                            String::from_utf8_lossy(t)
                        )));
                    }
                    pos += t.len();
                }
                Element::Field(name) => {
                    let rest = &line[pos..];
                    let quoted =
                        k > 0 && matches!(&elements[k - 1], Element::Text(t) if t.ends_with(b"\""));
                    let end = match elements.get(k + 1) {
                        None => memchr::memchr(b' ', rest).unwrap_or(rest.len()),
                        Some(Element::Text(t)) if quoted && t.starts_with(b"\"") => {
                            text::closing_quote(rest).ok_or_else(|| {
                                cut(format!("`${name}` opens a quote it never closes"))
                            })?
                        }
                        Some(Element::Text(t)) => {
                            memchr::memmem::find(rest, t).ok_or_else(|| {
                                cut(format!(
                                    "no {:?} after `${name}`",
                                    String::from_utf8_lossy(t)
                                ))
                            })?
                        }
                        Some(Element::Field(_)) => unreachable!("refused by Pattern::parse"),
                    };
                    let (Ok(s), Ok(e)) = (u32::try_from(pos), u32::try_from(pos + end)) else {
                        return Err("the line is too long".into());
                    };
                    self.spans.push((s, e));
                    pos += end;
                }
            }
        }
        Ok(())
    }

    pub(crate) fn parse<'a>(&'a mut self, line: &'a [u8]) -> Result<Parsed<'a>, String> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(Parsed::Skip);
        }
        self.split(line)?;
        let fields = Fields {
            line,
            spans: &self.spans,
            names: &self.pattern.names,
            encoding: Encoding::Backslash,
        };
        let raw = |i: usize| fields.raw(i).unwrap_or_default();
        let at = match self.time {
            Time::Local(i) => text::clf_time(raw(i)),
            Time::Iso8601(i) => std::str::from_utf8(raw(i))
                .ok()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok()),
            Time::Msec(i) => msec(raw(i)),
        }
        .ok_or_else(|| {
            let i = match self.time {
                Time::Local(i) | Time::Iso8601(i) | Time::Msec(i) => i,
            };
            format!(
                "`${}` {:?} is not a time",
                self.pattern.names[i],
                text::lossy(raw(i))
            )
        })?;
        let status = text::status_or_dash("`$status`", raw(self.status))?;
        let (method, target): (&[u8], Cow<'a, [u8]>) = match self.target {
            Target::Request(i) => {
                let r = unescaped(raw(i));
                match &r {
                    Cow::Borrowed(b) => match text::request_line(b) {
                        Some((m, t)) => (m, Cow::Borrowed(t)),
                        None => (&[][..], Cow::Borrowed(&[][..])),
                    },
                    Cow::Owned(b) => match text::request_line(b) {
                        // The method is ASCII capitals, the same in the raw text.
                        Some((m, t)) => (&raw(i)[..m.len()], Cow::Owned(t.to_vec())),
                        None => (&[][..], Cow::Borrowed(&[][..])),
                    },
                }
            }
            Target::Parts { method, uri } => (raw(method), unescaped(raw(uri))),
        };
        let method = std::str::from_utf8(method).unwrap_or_default();
        let (path, query): (Cow<'a, str>, Option<&'a [u8]>) = match target {
            Cow::Borrowed(t) => {
                let (p, q) = text::split_query(origin_form(t));
                (text::percent_decode(p, false), q)
            }
            Cow::Owned(t) => {
                let (p, _) = text::split_query(origin_form(&t));
                let raw_query = self.raw_query(&fields);
                (
                    Cow::Owned(text::percent_decode(p, false).into_owned()),
                    raw_query,
                )
            }
        };
        let query = query.or_else(|| {
            self.args
                .and_then(|i| fields.raw(i))
                .filter(|a| *a != b"-" && !a.is_empty())
        });
        let asked = Asked {
            method,
            object: true,
            path,
            query,
        };
        let client = self.client.and_then(|i| fields.raw(i));
        let request = Request::of(at, status, asked, &self.principal, client, fields);
        Ok(Parsed::Request(request))
    }

    /// The query of a request target that had escapes, from the raw text: escapes are
    /// rare in a target (a quote or a byte beyond ASCII), and a query parameter is decoded
    /// where it is read.
    fn raw_query<'a>(&self, fields: &Fields<'a>) -> Option<&'a [u8]> {
        let i = match self.target {
            Target::Request(i) => i,
            Target::Parts { uri, .. } => uri,
        };
        let raw = fields.raw(i)?;
        text::split_query(raw).1.map(|q| {
            // Drop the protocol of a `$request`.
            match memchr::memrchr(b' ', q) {
                Some(sp) if q[sp + 1..].starts_with(b"HTTP/") => &q[..sp],
                _ => q,
            }
        })
    }
}

/// Backslash escapes undone, as bytes.
fn unescaped(b: &[u8]) -> Cow<'_, [u8]> {
    match text::unescape(b) {
        Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
        Cow::Owned(s) => Cow::Owned(s.into_bytes()),
    }
}

/// The path of a request target in absolute form (`http://host/path`, sent to proxies).
fn origin_form(t: &[u8]) -> &[u8] {
    for scheme in [&b"http://"[..], b"https://"] {
        if t.len() > scheme.len() && t[..scheme.len()].eq_ignore_ascii_case(scheme) {
            let rest = &t[scheme.len()..];
            return memchr::memchr(b'/', rest).map_or(&b"/"[..], |i| &rest[i..]);
        }
    }
    t
}

/// nginx's `$msec`: seconds since the epoch with milliseconds, `1549411238.123`.
fn msec(b: &[u8]) -> Option<DateTime<FixedOffset>> {
    let s = std::str::from_utf8(b).ok()?;
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    let secs: i64 = secs.parse().ok()?;
    let millis: u32 = if frac.is_empty() {
        0
    } else if frac.len() <= 3 && frac.bytes().all(|c| c.is_ascii_digit()) {
        format!("{frac:0<3}").parse().ok()?
    } else {
        return None;
    };
    Some(DateTime::from_timestamp(secs, millis * 1_000_000)?.fixed_offset())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(pattern: &str, principal: Option<PrincipalSpec>) -> Combined {
        Combined::new(Pattern::parse(pattern).unwrap(), principal.as_ref()).unwrap()
    }

    fn show(c: &mut Combined, line: &str) -> Result<String, String> {
        match c.parse(line.as_bytes())? {
            Parsed::Skip | Parsed::Requests(_) => Ok("skip".into()),
            Parsed::Request(r) => Ok(format!(
                "{} client={:?} ua={:?}",
                r.described(),
                r.client.map(text::lossy),
                r.field("http_user_agent"),
            )),
        }
    }

    // Lines written to nginx's predefined `log_format combined` (nginx.org/en/docs/http/
    // ngx_http_log_module.html#log_format); `$time_local` is the Common Log Format time,
    // and nginx escapes `"`, `\` and bytes outside printable ASCII as `\xXX`.
    #[test]
    fn a_combined_line_with_ipv6_and_a_user() {
        let mut c = reader(COMBINED, None);
        let line = r#"2001:db8::7 - alice [10/Oct/2000:13:55:36 -0700] "GET /datasets/roads/v2.0.0/roads%20east.parquet?api_key=k1 HTTP/1.1" 206 16384 "-" "GDAL/3.8.4 (Linux; \"x86_64\")""#;
        assert_eq!(
            show(&mut c, line).unwrap(),
            "2000-10-10T13:55:36-07:00 GET \"/datasets/roads/v2.0.0/roads east.parquet\" \
             q=Some(\"api_key=k1\") 206 principal=Some(\"alice\") client=Some(\"2001:db8::7\") \
             ua=Some(\"GDAL/3.8.4 (Linux; \\\"x86_64\\\")\")"
        );
    }

    #[test]
    fn an_absent_user_and_appended_fields() {
        let mut c = reader(COMBINED, None);
        let line = r#"192.0.2.9 - - [10/Oct/2000:13:55:36 +0000] "HEAD /a HTTP/1.1" 200 0 "https://example.org/page one" "curl/8.5.0" "key-7f3a" rt=0.002"#;
        let got = show(&mut c, line).unwrap();
        assert!(
            got.contains("HEAD \"/a\" q=None 200 principal=None"),
            "{got}"
        );
        // The same line, with the appended field named by a pattern.
        let mut c = reader(
            &format!("{COMBINED} \"$http_x_api_key\""),
            Some(PrincipalSpec::Header("X-Api-Key".into())),
        );
        let got = show(&mut c, line).unwrap();
        assert!(got.contains("principal=Some(\"key-7f3a\")"), "{got}");
    }

    #[test]
    fn a_request_that_is_no_request_line_has_no_method() {
        let mut c = reader(COMBINED, None);
        let line = r#"198.51.100.4 - - [10/Oct/2000:13:55:36 +0000] "\x16\x03\x01\x00\xA5\x01" 400 157 "-" "-""#;
        let got = show(&mut c, line).unwrap();
        assert!(got.contains("+00:00  \"\" q=None 400"), "{got}");
    }

    #[test]
    fn a_line_cut_short_is_malformed() {
        let mut c = reader(COMBINED, None);
        let full = r#"192.0.2.9 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200 5 "-" "curl/8.5.0""#;
        for cut in [
            full.len() - 1,
            full.find("curl").unwrap(),
            full.find("GET").unwrap() + 2,
            20,
        ] {
            let err = show(&mut c, &full[..cut]).unwrap_err();
            assert!(err.contains("cut short"), "{cut}: {err}");
        }
        assert!(show(&mut c, full).is_ok());
    }

    #[test]
    fn a_custom_pattern_with_method_uri_and_iso_time() {
        let mut c = reader(
            "$time_iso8601 $remote_addr $request_method $request_uri $status key=$arg_key",
            Some(PrincipalSpec::Query("key".into())),
        );
        let got = show(&mut c, "2024-03-01T10:00:00+01:00 ::1 GET /d/roads/1.0.0/x.fgb?key=ab%20c 200 key=ab%20c extra").unwrap();
        assert_eq!(
            got,
            "2024-03-01T10:00:00+01:00 GET \"/d/roads/1.0.0/x.fgb\" q=Some(\"key=ab%20c\") 200 \
             principal=Some(\"ab c\") client=Some(\"::1\") ua=None"
        );
        let mut c = reader(
            "$msec $request_method $uri?$args $status $remote_user",
            None,
        );
        let got = show(&mut c, "1549411238.5 GET /a%2Fb?x=1 200 bob").unwrap();
        assert_eq!(
            got,
            "2019-02-06T00:00:38.500+00:00 GET \"/a/b\" q=Some(\"x=1\") 200 principal=Some(\"bob\") client=None ua=None"
        );
    }

    #[test]
    fn patterns_that_cannot_work_are_refused() {
        let e = Pattern::parse("$remote_addr$remote_user").unwrap_err();
        assert_eq!(e.column, 13, "{e}");
        assert!(Pattern::parse("a $ b").is_err());
        assert!(Pattern::parse("${a b").is_err());
        assert!(Pattern::parse("no fields").is_err());
        assert_eq!(Pattern::parse("$$ ${a}x $b").unwrap().names(), ["a", "b"]);
        let no_time = Pattern::parse("$request $status").unwrap();
        assert!(Combined::new(no_time, None).is_err());
        let p = Pattern::combined();
        assert!(Combined::new(
            p.clone(),
            Some(&PrincipalSpec::Field("http_x_api_key".into()))
        )
        .is_err());
        assert!(Combined::new(
            p.clone(),
            Some(&PrincipalSpec::Field("$remote_addr".into()))
        )
        .is_ok());
        assert!(Combined::new(p, Some(&PrincipalSpec::Header("X-Api-Key".into()))).is_err());
    }

    #[test]
    fn an_absolute_target_is_read_as_its_path() {
        let mut c = reader(COMBINED, None);
        let line = r#"192.0.2.9 - - [10/Oct/2000:13:55:36 +0000] "GET http://data.example.org/d/x?k=1 HTTP/1.1" 200 5 "-" "-""#;
        assert!(show(&mut c, line)
            .unwrap()
            .contains("GET \"/d/x\" q=Some(\"k=1\")"));
    }
}
