//! CloudFront standard logs ("standard logging (access logs)"): tab-separated fields, one
//! request per line, under `#Version:` and `#Fields:` header lines. The fields are read by
//! the names the `#Fields` line gives, so a log with fields chosen or reordered (standard
//! logging v2 lets a user pick them) reads as well as the legacy 33; a file may repeat the
//! header further down (files are concatenated), and each header holds for the lines under
//! it. A file without one is read in the documented order ([`FIELDS`]).
//!
//! `date` and `time` are UTC. Values are URL-encoded where they would hold a space or
//! another special character (`Mozilla/5.0%20(X11;%20Linux)`): every value is decoded once.
//! A line with fewer fields than its header names was cut short.

use chrono::{FixedOffset, TimeZone};

use super::text;
use super::{AccessError, Asked, Encoding, Fields, Parsed, PrincipalAt, PrincipalSpec, Request};

/// The fields of a legacy standard log, in the documented order: used until a `#Fields`
/// header says otherwise.
pub const FIELDS: [&str; 33] = [
    "date",
    "time",
    "x-edge-location",
    "sc-bytes",
    "c-ip",
    "cs-method",
    "cs(Host)",
    "cs-uri-stem",
    "sc-status",
    "cs(Referer)",
    "cs(User-Agent)",
    "cs-uri-query",
    "cs(Cookie)",
    "x-edge-result-type",
    "x-edge-request-id",
    "x-host-header",
    "cs-protocol",
    "cs-bytes",
    "time-taken",
    "x-forwarded-for",
    "ssl-protocol",
    "ssl-cipher",
    "x-edge-response-result-type",
    "cs-protocol-version",
    "fle-status",
    "fle-encrypted-fields",
    "c-port",
    "time-to-first-byte",
    "x-edge-detailed-result-type",
    "sc-content-type",
    "sc-content-len",
    "sc-range-start",
    "sc-range-end",
];

/// Where the fields a read needs are under the current header.
#[derive(Debug, Clone, PartialEq)]
struct Layout {
    names: Vec<String>,
    date: usize,
    time: usize,
    method: usize,
    stem: usize,
    status: usize,
    query: Option<usize>,
    client: Option<usize>,
    principal: PrincipalAt,
}

impl Layout {
    /// The layout of `names`; `Err` names a field the source needs that is not there.
    fn of(names: Vec<String>, principal: Option<&PrincipalSpec>) -> Result<Layout, String> {
        let find = |n: &str| names.iter().position(|f| f.eq_ignore_ascii_case(n));
        let need = |n: &str| find(n).ok_or_else(|| n.to_string());
        let principal = match principal {
            None => PrincipalAt::Field(need("c-ip")?),
            Some(PrincipalSpec::Field(n)) => PrincipalAt::Field(need(n)?),
            Some(PrincipalSpec::Header(h)) => PrincipalAt::Field(need(&format!("cs({h})"))?),
            Some(PrincipalSpec::Query(q)) => PrincipalAt::Query(q.clone()),
        };
        Ok(Layout {
            date: need("date")?,
            time: need("time")?,
            method: need("cs-method")?,
            stem: need("cs-uri-stem")?,
            status: need("sc-status")?,
            query: find("cs-uri-query"),
            client: find("c-ip"),
            principal,
            names,
        })
    }
}

/// The CloudFront reader of one file: the header in force and the current line's spans.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CloudFront {
    principal: Option<PrincipalSpec>,
    /// `Err`: the default layout lacks the principal field; reported at the first line
    /// that would need it, unless a header comes first.
    layout: Result<Layout, String>,
    spans: Vec<(u32, u32)>,
}

impl CloudFront {
    pub(crate) fn new(principal: Option<&PrincipalSpec>) -> CloudFront {
        let names = FIELDS.iter().map(|s| s.to_string()).collect();
        CloudFront {
            principal: principal.cloned(),
            layout: Layout::of(names, principal),
            spans: Vec::with_capacity(FIELDS.len() + 4),
        }
    }

    /// One line: a header changes the layout; a data line is a request, or `Err` why not.
    /// A header without a field the source needs stops the file (`AccessError::Fields`).
    pub(crate) fn parse<'a>(
        &'a mut self,
        line: &'a [u8],
        number: u64,
    ) -> Result<Result<Parsed<'a>, String>, AccessError> {
        if let Some(comment) = line.strip_prefix(b"#") {
            if let Some(fields) = comment.strip_prefix(b"Fields:") {
                let names = text::lossy(fields)
                    .split_ascii_whitespace()
                    .map(str::to_string)
                    .collect();
                self.layout = Layout::of(names, self.principal.as_ref());
                if let Err(field) = &self.layout {
                    return Err(AccessError::Fields {
                        line: number,
                        field: field.clone(),
                    });
                }
            }
            return Ok(Ok(Parsed::Skip));
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(Ok(Parsed::Skip));
        }
        let layout = match &self.layout {
            Ok(l) => l,
            Err(field) => {
                return Err(AccessError::Fields {
                    line: number,
                    field: field.clone(),
                })
            }
        };
        self.spans.clear();
        let mut start = 0usize;
        for tab in memchr::memchr_iter(b'\t', line).chain(std::iter::once(line.len())) {
            let (Ok(s), Ok(e)) = (u32::try_from(start), u32::try_from(tab)) else {
                return Ok(Err("the line is too long".to_string()));
            };
            self.spans.push((s, e));
            start = tab + 1;
        }
        if self.spans.len() < layout.names.len() {
            return Ok(Err(format!(
                "{} fields where the #Fields header names {} (cut short?)",
                self.spans.len(),
                layout.names.len()
            )));
        }
        let fields = Fields {
            line,
            spans: &self.spans,
            names: &layout.names,
            encoding: Encoding::Percent,
        };
        Ok(request(layout, fields).map(Parsed::Request))
    }
}

fn request<'a>(layout: &'a Layout, fields: Fields<'a>) -> Result<Request<'a>, String> {
    let raw = |i: usize| fields.raw(i).unwrap_or_default();
    let (date, time) = (raw(layout.date), raw(layout.time));
    let at = text::ymd(date)
        .zip(text::hms(time))
        .and_then(|(d, t)| {
            FixedOffset::east_opt(0)?
                .from_local_datetime(&d.and_time(t))
                .single()
        })
        .ok_or_else(|| {
            format!(
                "date {:?} and time {:?} are not YYYY-MM-DD and HH:MM:SS",
                text::lossy(date),
                text::lossy(time)
            )
        })?;
    let status = text::status_field("sc-status", raw(layout.status))?;
    let method = std::str::from_utf8(raw(layout.method)).unwrap_or_default();
    let path = text::path_or_dash(raw(layout.stem));
    let query = layout
        .query
        .map(raw)
        .filter(|q| *q != b"-" && !q.is_empty());
    let asked = Asked {
        method,
        object: true,
        path,
        query,
    };
    let client = layout.client.map(raw);
    Ok(Request::of(
        at,
        Some(status),
        asked,
        &layout.principal,
        client,
        fields,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines written to the field list of AWS's CloudFront "standard logging (access
    // logs)" reference, log file fields 1-33 (docs.aws.amazon.com/AmazonCloudFront/latest/
    // DeveloperGuide/standard-logs-reference.html), tab-separated under `#Version: 1.0` and
    // `#Fields:`.
    const HEADER: &str = "#Version: 1.0\n#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type cs-protocol-version fle-status fle-encrypted-fields c-port time-to-first-byte x-edge-detailed-result-type sc-content-type sc-content-len sc-range-start sc-range-end";

    fn data(ip: &str, method: &str, stem: &str, status: &str, ua: &str, query: &str) -> String {
        [
            "2019-12-04",
            "21:02:31",
            "LAX1-C3",
            "392",
            ip,
            method,
            "d111111abcdef8.cloudfront.net",
            stem,
            status,
            "-",
            ua,
            query,
            "-",
            "Hit",
            "SOX4xwn4XV6Q4rgb7XiVGOHms_BGlTAC4KyHmureZmBNrjGdRLiNIQ==",
            "data.example.org",
            "https",
            "23",
            "0.001",
            "-",
            "TLSv1.2",
            "ECDHE-RSA-AES128-GCM-SHA256",
            "Hit",
            "HTTP/2.0",
            "-",
            "-",
            "11040",
            "0.001",
            "Hit",
            "application/vnd.apache.parquet",
            "16384",
            "0",
            "16383",
        ]
        .join("\t")
    }

    fn requests(principal: Option<PrincipalSpec>, file: &str) -> Vec<Result<String, String>> {
        let mut cf = CloudFront::new(principal.as_ref());
        let mut out = Vec::new();
        for (n, line) in file.lines().enumerate() {
            match cf.parse(line.as_bytes(), n as u64 + 1) {
                Err(e) => {
                    out.push(Err(format!("stop: {e}")));
                    break;
                }
                Ok(Ok(Parsed::Skip | Parsed::Requests(_))) => {}
                Ok(Ok(Parsed::Request(r))) => out.push(Ok(format!(
                    "{} ua={:?}",
                    r.described(),
                    r.field("cs(User-Agent)"),
                ))),
                Ok(Err(e)) => out.push(Err(e)),
            }
        }
        out
    }

    #[test]
    fn fields_are_read_by_the_header_and_decoded() {
        let file = format!(
            "{HEADER}\n{}\n",
            data(
                "2001:db8::1",
                "GET",
                "/datasets/roads/v2.0.0/roads%20east.parquet",
                "206",
                "DuckDB/1.1.3%20(linux_amd64)",
                "api_key=k%2D1"
            )
        );
        assert_eq!(
            requests(None, &file),
            vec![Ok(
                "2019-12-04T21:02:31+00:00 GET \"/datasets/roads/v2.0.0/roads east.parquet\" \
                     q=Some(\"api_key=k%2D1\") 206 principal=Some(\"2001:db8::1\") \
                     ua=Some(\"DuckDB/1.1.3 (linux_amd64)\")"
                    .to_string()
            )]
        );
        let got = requests(Some(PrincipalSpec::Query("api_key".into())), &file);
        assert!(
            got[0].as_ref().unwrap().contains("principal=Some(\"k-1\")"),
            "{got:?}"
        );
        let got = requests(Some(PrincipalSpec::Header("User-Agent".into())), &file);
        assert!(
            got[0]
                .as_ref()
                .unwrap()
                .contains("principal=Some(\"DuckDB/1.1.3 (linux_amd64)\")"),
            "{got:?}"
        );
    }

    #[test]
    fn a_header_mid_file_changes_the_fields() {
        // A v2 log with fields picked and reordered, appended to a legacy one.
        let file = format!(
            "{HEADER}\n{}\n#Version: 1.0\n#Fields: c-ip date time sc-status cs-method cs-uri-stem\n\
             198.51.100.7\t2019-12-05\t00:00:01\t304\tHEAD\t/a%2Fb\n",
            data("192.0.2.1", "GET", "/x", "200", "-", "-")
        );
        let got = requests(None, &file);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0]
            .as_ref()
            .unwrap()
            .contains("q=None 200 principal=Some(\"192.0.2.1\") ua=None"));
        assert_eq!(
            got[1],
            Ok("2019-12-05T00:00:01+00:00 HEAD \"/a/b\" q=None 304 principal=Some(\"198.51.100.7\") ua=None"
                .to_string())
        );
    }

    #[test]
    fn a_header_without_the_principal_stops_the_file() {
        let file = "#Fields: date time sc-status cs-method cs-uri-stem\n2019-12-05\t00:00:01\t200\tGET\t/a\n";
        let got = requests(None, file);
        assert_eq!(
            got,
            vec![Err(
                "stop: line 1: the `#Fields` header has no `c-ip`".to_string()
            )]
        );
    }

    #[test]
    fn without_a_header_the_documented_order_holds() {
        let file = data("192.0.2.1", "GET", "/x", "200", "-", "-");
        // Every field where AWS's documented order puts it: the instant, the method, the
        // path, the status and the client address as the principal.
        assert_eq!(
            requests(None, &file),
            vec![Ok(
                "2019-12-04T21:02:31+00:00 GET \"/x\" q=None 200 principal=Some(\"192.0.2.1\") \
                 ua=None"
                    .to_string()
            )]
        );
    }

    #[test]
    fn a_line_cut_short_or_a_bad_time_is_malformed() {
        let line = data("192.0.2.1", "GET", "/x", "200", "curl/8.5.0", "-");
        let cut = &line[..line.find("curl").unwrap() + 2];
        let file = format!("{HEADER}\n{cut}\n{}\n", line.replace("21:02:31", "21:02"));
        let got = requests(None, &file);
        assert!(
            got[0]
                .as_ref()
                .unwrap_err()
                .contains("11 fields where the #Fields header names 33"),
            "{got:?}"
        );
        assert!(got[1].as_ref().unwrap_err().contains("time"), "{got:?}");
    }
}
