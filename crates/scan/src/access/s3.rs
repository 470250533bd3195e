//! Amazon S3 server access logs: one request per line, space-separated fields in the order
//! AWS defines them ("Amazon S3 server access log format"), the time in brackets
//! (`[06/Feb/2019:00:00:38 +0000]`), the Request-URI, Referer and User-Agent in quotes (they
//! hold spaces), `-` for an absent value, the key URL-encoded.
//!
//! AWS appends fields over the years (the signature version, the TLS version, the access
//! point ARN, ...), so a line may have more fields than [`FIELDS`] names (ignored) or fewer
//! (the later ones are absent). A line must reach at least the User-Agent, which every
//! version of the format has: one that stops earlier, or inside quotes or brackets, was cut
//! short.

use super::text;
use super::{
    AccessConfigError, Asked, Encoding, Fields, Parsed, PrincipalAt, PrincipalSpec, Request,
};

/// The field names, in the order of AWS's definition; a `principal` names one of these.
pub const FIELDS: [&str; 27] = [
    "bucket_owner",
    "bucket",
    "time",
    "remote_ip",
    "requester",
    "request_id",
    "operation",
    "key",
    "request_uri",
    "http_status",
    "error_code",
    "bytes_sent",
    "object_size",
    "total_time",
    "turn_around_time",
    "referer",
    "user_agent",
    "version_id",
    "host_id",
    "signature_version",
    "cipher_suite",
    "authentication_type",
    "host_header",
    "tls_version",
    "access_point_arn",
    "acl_required",
    "source_region",
];

const TIME: usize = 2;
const REMOTE_IP: usize = 3;
const REQUESTER: usize = 4;
const OPERATION: usize = 6;
const KEY: usize = 7;
const REQUEST_URI: usize = 8;
const STATUS: usize = 9;
/// The fields every line has: through the User-Agent.
const LEAST: usize = 17;

/// The S3 reader of one file: the principal's place and the spans of the current line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct S3 {
    principal: PrincipalAt,
    names: Vec<String>,
    spans: Vec<(u32, u32)>,
}

impl S3 {
    pub(crate) fn new(principal: Option<&PrincipalSpec>) -> Result<S3, AccessConfigError> {
        let bad = |p: &str, reason: String| AccessConfigError::Principal {
            principal: p.to_string(),
            reason,
        };
        let index = |name: &str| FIELDS.iter().position(|f| *f == name);
        let principal = match principal {
            None => PrincipalAt::Field(REQUESTER),
            Some(PrincipalSpec::Query(name)) => PrincipalAt::Query(name.clone()),
            Some(PrincipalSpec::Field(name)) => {
                PrincipalAt::Field(index(name).ok_or_else(|| {
                    bad(
                        name,
                        format!(
                            "an S3 access log has no such field; it has {}",
                            FIELDS.join(", ")
                        ),
                    )
                })?)
            }
            Some(PrincipalSpec::Header(name)) => {
                let field = match name.to_ascii_lowercase().as_str() {
                    "user-agent" => "user_agent",
                    "referer" => "referer",
                    "host" => "host_header",
                    _ => return Err(bad(
                        &format!("header:{name}"),
                        "an S3 access log records only the User-Agent, Referer and Host headers"
                            .to_string(),
                    )),
                };
                PrincipalAt::Field(index(field).unwrap_or(REQUESTER))
            }
        };
        Ok(S3 {
            principal,
            names: FIELDS.iter().map(|s| s.to_string()).collect(),
            spans: Vec::with_capacity(FIELDS.len() + 4),
        })
    }

    /// Split a line into its fields; `Err` for a quote or bracket never closed.
    fn split(&mut self, line: &[u8]) -> Result<(), String> {
        self.spans.clear();
        let len = line.len();
        let mut i = 0;
        while i < len {
            let n = self.spans.len() + 1;
            let (start, end, next) = match line[i] {
                b'"' => {
                    let close = memchr::memchr(b'"', &line[i + 1..]).ok_or_else(|| {
                        format!("field {n} opens a quote it never closes (cut short?)")
                    })?;
                    (i + 1, i + 1 + close, i + close + 2)
                }
                b'[' => {
                    let close = memchr::memchr(b']', &line[i + 1..]).ok_or_else(|| {
                        format!("field {n} opens a bracket it never closes (cut short?)")
                    })?;
                    (i + 1, i + 1 + close, i + close + 2)
                }
                _ => {
                    let end = memchr::memchr(b' ', &line[i..]).map_or(len, |e| i + e);
                    (i, end, end)
                }
            };
            if next < len && line[next] != b' ' {
                return Err(format!("field {n} is not followed by a space"));
            }
            let span = |x: usize| u32::try_from(x).map_err(|_| "the line is too long".to_string());
            self.spans.push((span(start)?, span(end)?));
            i = next + 1;
        }
        Ok(())
    }

    pub(crate) fn parse<'a>(&'a mut self, line: &'a [u8]) -> Result<Parsed<'a>, String> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(Parsed::Skip);
        }
        self.split(line)?;
        if self.spans.len() < LEAST {
            return Err(format!(
                "{} fields where an S3 access log line has at least {LEAST} (cut short?)",
                self.spans.len()
            ));
        }
        let fields = Fields {
            line,
            spans: &self.spans,
            names: &self.names,
            encoding: Encoding::Plain,
        };
        let raw = |i: usize| fields.raw(i).unwrap_or_default();
        let at = text::clf_time(raw(TIME)).ok_or_else(|| {
            format!(
                "time [{}] is not dd/Mon/yyyy:HH:MM:SS +hhmm",
                text::lossy(raw(TIME))
            )
        })?;
        let status = match raw(STATUS) {
            b"-" => 0,
            s => text::status_field("HTTP status", s)?,
        };
        // `REST.GET.OBJECT`: the API, the HTTP method, the resource type.
        let mut operation = raw(OPERATION).split(|&c| c == b'.');
        let api = operation.next().unwrap_or_default();
        let method = operation.next().unwrap_or_default();
        let resource = operation.next().unwrap_or_default();
        let method = std::str::from_utf8(method).unwrap_or_default();
        let object = matches!(api, b"REST" | b"WEBSITE") && resource == b"OBJECT";
        let path = text::path_or_dash(raw(KEY));
        let query = text::request_line(raw(REQUEST_URI))
            .and_then(|(_, target)| text::split_query(target).1);
        let asked = Asked {
            method,
            object,
            path,
            query,
        };
        let client = fields.raw(REMOTE_IP);
        let request = Request::of(at, Some(status), asked, &self.principal, client, fields);
        Ok(Parsed::Request(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_with(principal: Option<PrincipalSpec>, line: &str) -> Result<String, String> {
        let mut s3 = S3::new(principal.as_ref()).unwrap();
        match s3.parse(line.as_bytes())? {
            Parsed::Skip | Parsed::Requests(_) => Ok("skip".into()),
            Parsed::Request(r) => Ok(format!(
                "{} {} object={} path={:?} query={:?} status={} principal={:?} client={:?}",
                r.at.to_rfc3339(),
                r.method,
                r.object,
                r.path,
                r.query.map(text::lossy),
                r.status.map_or_else(|| "-".to_string(), |s| s.to_string()),
                r.principal,
                r.client.map(text::lossy),
            )),
        }
    }

    fn parse(line: &str) -> Result<String, String> {
        parse_with(None, line)
    }

    // Lines written to the field list of AWS's "Amazon S3 server access log format"
    // (docs.aws.amazon.com/AmazonS3/latest/userguide/LogFormat.html): bucket owner, bucket,
    // [time], remote IP, requester, request ID, operation, key, "Request-URI", status, error
    // code, bytes sent, object size, total time, turn-around time, "referer", "user-agent",
    // version ID, host ID, signature version, cipher suite, authentication type, host
    // header, TLS version, access point ARN, ACL required.
    const OWNER: &str = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be";

    fn line(requester: &str, op: &str, key: &str, uri: &str, status: &str, tail: &str) -> String {
        format!(
            "{OWNER} open-data [06/Feb/2019:00:00:38 +0000] 192.0.2.3 {requester} 3E57427F3EXAMPLE \
             {op} {key} \"{uri}\" {status} - 4096 1048576 12 10 \"-\" \"GDAL/3.8.4 (Linux x86_64)\"{tail}"
        )
    }

    /// An anonymous GET of the object `k`, answered 200, with `tail` after the user agent.
    fn get_k(tail: &str) -> String {
        line("-", "REST.GET.OBJECT", "k", "GET /k HTTP/1.1", "200", tail)
    }

    #[test]
    fn a_ranged_get_by_an_assumed_role() {
        let role = "arn:aws:sts::123456789012:assumed-role/flood-model/i-0abc";
        let l = line(
            role,
            "REST.GET.OBJECT",
            "datasets/roads/v2.0.0/roads%20east.parquet",
            "GET /datasets/roads/v2.0.0/roads%20east.parquet?x-id=GetObject HTTP/1.1",
            "206",
            " - s9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6UkFVdtjf5mKR3/eTPFvsiP/XV/VLi31234= \
             SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader open-data.s3.us-west-1.amazonaws.com \
             TLSv1.2 - -",
        );
        assert_eq!(
            parse(&l).unwrap(),
            format!(
                "2019-02-06T00:00:38+00:00 GET object=true path=\"datasets/roads/v2.0.0/roads east.parquet\" \
                 query=Some(\"x-id=GetObject\") status=206 principal=Some(\"{role}\") client=Some(\"192.0.2.3\")"
            )
        );
    }

    #[test]
    fn an_anonymous_head_from_ipv6_with_only_the_oldest_fields() {
        // The 2014 form of the format: it stops after the version ID.
        let l = line(
            "-",
            "REST.HEAD.OBJECT",
            "a/b.fgb",
            "HEAD /open-data/a/b.fgb HTTP/1.1",
            "200",
            " -",
        )
        .replace("192.0.2.3", "2001:db8:85a3::8a2e:370:7334");
        let got = parse(&l).unwrap();
        assert!(got.contains("HEAD object=true"), "{got}");
        assert!(got.contains("principal=None"), "{got}");
        assert!(
            got.contains("client=Some(\"2001:db8:85a3::8a2e:370:7334\")"),
            "{got}"
        );
    }

    #[test]
    fn fields_appended_after_the_known_ones_are_ignored() {
        let l = get_k(
            " - hostid SigV4 cipher AuthHeader host TLSv1.3 - Yes us-east-1 a-field-of-2031 \"and one more\"",
        );
        assert!(parse(&l).unwrap().contains("status=200"));
    }

    #[test]
    fn bucket_operations_are_no_object_reads() {
        let l = line(
            OWNER,
            "REST.GET.BUCKET",
            "-",
            "GET /open-data?list-type=2&prefix=datasets%2F HTTP/1.1",
            "200",
            "",
        );
        let got = parse(&l).unwrap();
        assert!(got.contains("GET object=false path=\"\""), "{got}");
        assert!(
            got.contains("query=Some(\"list-type=2&prefix=datasets%2F\")"),
            "{got}"
        );
        let l = line(
            OWNER,
            "REST.GET.OBJECT_TAGGING",
            "k",
            "GET /k?tagging HTTP/1.1",
            "200",
            "",
        );
        assert!(parse(&l).unwrap().contains("object=false"));
    }

    #[test]
    fn a_line_cut_short_is_malformed() {
        let l = get_k(" - hostid");
        // Cut inside the quoted User-Agent, then before it.
        let inside = &l[..l.find("GDAL/3.8.4").unwrap() + 4];
        let err = parse(inside).unwrap_err();
        assert!(err.contains("never closes"), "{err}");
        let before = &l[..l.find(" \"-\" ").unwrap()];
        let err = parse(before).unwrap_err();
        assert!(err.contains("15 fields"), "{err}");
        let err = parse(&l[..l.find("[06/Feb").unwrap() + 5]).unwrap_err();
        assert!(err.contains("bracket"), "{err}");
        assert!(parse("  ").is_ok_and(|s| s == "skip"));
    }

    #[test]
    fn a_bad_time_or_status_is_malformed() {
        let l = line("-", "REST.GET.OBJECT", "k", "GET /k HTTP/1.1", "2x0", "");
        assert!(parse(&l).unwrap_err().contains("status"));
        let l = get_k("").replace("06/Feb", "36/Feb");
        assert!(parse(&l).unwrap_err().contains("time"));
    }

    #[test]
    fn another_field_or_a_query_parameter_is_the_principal() {
        let l = line(
            "-",
            "REST.GET.OBJECT",
            "k",
            "GET /k?api_key=key%3A7f3a&x=1 HTTP/1.1",
            "200",
            "",
        );
        let got = parse_with(Some(PrincipalSpec::Query("api_key".into())), &l).unwrap();
        assert!(got.contains("principal=Some(\"key:7f3a\")"), "{got}");
        let got = parse_with(Some(PrincipalSpec::Header("User-Agent".into())), &l).unwrap();
        assert!(
            got.contains("principal=Some(\"GDAL/3.8.4 (Linux x86_64)\")"),
            "{got}"
        );
        let got = parse_with(Some(PrincipalSpec::Field("remote_ip".into())), &l).unwrap();
        assert!(got.contains("principal=Some(\"192.0.2.3\")"), "{got}");
        // A field the line does not reach (the oldest form) is no principal.
        let got = parse_with(Some(PrincipalSpec::Field("tls_version".into())), &l).unwrap();
        assert!(got.contains("principal=None"), "{got}");
        assert!(S3::new(Some(&PrincipalSpec::Field("requestor".into()))).is_err());
        assert!(S3::new(Some(&PrincipalSpec::Header("X-Api-Key".into()))).is_err());
    }
}
