//! `pgaudit`: PostgreSQL server logs that carry pgaudit's `AUDIT:` entries, as the access log
//! of a database. pgaudit writes one entry per statement and relation:
//!
//! ```text
//! AUDIT: SESSION,12,1,READ,SELECT,TABLE,public.roads_v1,"SELECT name, geom FROM roads_v1",<not logged>
//! ```
//!
//! (audit type, statement id, sub-statement id, class, command, object type, object name,
//! statement, parameter), inside a server log line written one of three ways, the source's
//! `log_destination`:
//!
//! - `stderr`: the `log_line_prefix` ([`super::pg_prefix`]), `LOG:  `, the entry; a statement
//!   of several lines goes on in lines that start with a tab;
//! - `csvlog`: PostgreSQL's CSV columns (user 2nd, process 4th, session 6th, severity 12th,
//!   message 14th, application 23rd, the same since 9.0), a field with a newline quoted
//!   across lines;
//! - `jsonlog` (PostgreSQL 15+): one JSON object a line.
//!
//! An entry is handed to the shared judge ([`super::AccessLog::judge`]) as a request: a READ
//! of a relation (`SELECT`, `COPY … TO`) is a `GET` of the relation's name, anything else a
//! request of another method (its class), so the not-read counts say `method` for entries of
//! another class. The relation name `schema.name` is matched as the path `schema/name`
//! against templates written with dots (`public.{dataset}_v{line}`). A statement that pgaudit
//! logs both as `SESSION` and as `OBJECT` (session and object auditing together) is one read.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::sql_columns::{Columns, Statements};
use super::{Fields, Parsed, Request};
use crate::pg_prefix::{pg_time, severity, Matched, Prefix};

/// How a pgaudit source's log is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destination {
    Stderr,
    Csvlog,
    Jsonlog,
}

impl Destination {
    pub const ALL: [(&'static str, Destination); 3] = [
        ("stderr", Destination::Stderr),
        ("csvlog", Destination::Csvlog),
        ("jsonlog", Destination::Jsonlog),
    ];

    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, d)| *d == self)
            .map_or("stderr", |(n, _)| n)
    }
}

/// The checked pgaudit keys (all `None` for another format).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PgKeys {
    /// `None`: each file's first line says.
    pub destination: Option<Destination>,
    pub prefix: Option<crate::pg_prefix::Prefix>,
    /// `application_name` instead of the role (`user_name`).
    pub by_application: bool,
}

/// Who a read is: the role that ran the statement, or the application it named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgPrincipal {
    UserName,
    ApplicationName,
}

/// Relation kinds whose READ is a read of a dataset (pgaudit's OBJECT_TYPE).
const RELATIONS: [&str; 5] = [
    "TABLE",
    "VIEW",
    "MATERIALIZED VIEW",
    "FOREIGN TABLE",
    "PARTITIONED TABLE",
];

/// A session's statement last seen (statement and sub-statement ids), the relations it read
/// and when (epoch seconds), and its text parsed once for all of them.
#[derive(Debug, Clone, Default, PartialEq)]
struct Seen {
    statement: (u64, u64),
    relations: BTreeSet<String>,
    at: i64,
    /// `None` until an entry of the statement carried its text (not `<not logged>`).
    parsed: Option<Arc<Statements>>,
}

/// What pgaudit writes for a statement it logged in an earlier entry
/// (`pgaudit.log_statement_once`) or not at all.
const NOT_LOGGED: &str = "<not logged>";

/// pgaudit writes a statement's SESSION and OBJECT entries within the same millisecond, so a
/// session quiet for this long has no entry left to pair: it is forgotten, and a month of
/// short sessions (one per connection) does not grow the map without end.
const SEEN_SECONDS: i64 = 60;

/// How many statement texts [`PgAudit`] keeps parsed: applications send the same few
/// statements again and again, and a text seen before is not parsed again. Past this many
/// the cache starts afresh, which bounds its memory.
const PARSED_TEXTS: usize = 1024;

/// `seen` is not pruned below this many sessions.
const PRUNE_FLOOR: usize = 4096;

/// The reader of one source's pgaudit logs.
#[derive(Debug, Clone, PartialEq)]
pub struct PgAudit {
    /// `None` until a file's first line says (each file starts from the configured one).
    destination: Option<Destination>,
    prefix: Option<Prefix>,
    principal: PgPrincipal,
    /// csvlog: the lines of a record whose quoted field is still open.
    pending: Vec<u8>,
    /// Per session, the statement last seen and the relations it read: its second entry
    /// for a relation (SESSION and OBJECT auditing both on) is no second read.
    seen: HashMap<String, Seen>,
    /// The size of `seen` at which it is next pruned of sessions quiet for [`SEEN_SECONDS`].
    prune_at: usize,
    /// The relation of the entry being handed out, as a path.
    path: String,
    /// Statement texts parsed lately, shared by the sessions that run them.
    parsed: HashMap<String, Arc<Statements>>,
    /// Whether a read's statement is parsed for the columns it reads: only for a caller
    /// that asks ([`super::AccessLog::with_columns`]), since parsing costs more than the
    /// rest of the entry.
    pub(crate) columns: bool,
}

/// The parts of a server log line a read needs.
struct Line<'a> {
    /// The instant as written (csvlog, jsonlog), or as the prefix already read it (stderr).
    at: Option<Cow<'a, str>>,
    parsed_at: Option<chrono::DateTime<chrono::FixedOffset>>,
    user: Option<Cow<'a, str>>,
    application: Option<Cow<'a, str>>,
    session: Option<Cow<'a, str>>,
    message: Cow<'a, str>,
}

impl PgAudit {
    /// A reader for logs written to `destination` (`None`: each file's first line says), with
    /// the server's `prefix` for `stderr`.
    pub fn new(
        destination: Option<Destination>,
        prefix: Option<Prefix>,
        principal: PgPrincipal,
    ) -> PgAudit {
        // Whether a prefix goes with the destination is the configuration's to check, where
        // it can say which line of `contracts.toml` is wrong (`model::pg_log_keys`).
        PgAudit {
            destination,
            prefix,
            principal,
            pending: Vec::new(),
            seen: HashMap::new(),
            prune_at: PRUNE_FLOOR,
            path: String::new(),
            parsed: HashMap::new(),
            columns: false,
        }
    }

    /// Whether `line`'s entry may go on in lines that start with a tab: in a stderr log,
    /// where a statement's further lines are written so, and only where the statement is
    /// read for its columns (the first line alone says who read which relation).
    pub(crate) fn continues_with_tabs(&mut self, line: &[u8]) -> bool {
        self.columns
            && line.first() != Some(&b'\t')
            && *self.destination.get_or_insert_with(|| sniff(line)) == Destination::Stderr
    }

    /// Read one line of the log.
    pub(crate) fn parse<'a>(&'a mut self, line: &'a [u8]) -> Result<Parsed<'a>, String> {
        if line.iter().all(u8::is_ascii_whitespace) && self.pending.is_empty() {
            return Ok(Parsed::Skip);
        }
        let destination = *self.destination.get_or_insert_with(|| sniff(line));
        let parts = match destination {
            Destination::Stderr => {
                // A statement's further lines, indented by the server.
                if line.first() == Some(&b'\t') || line.iter().all(u8::is_ascii_whitespace) {
                    return Ok(Parsed::Skip);
                }
                let prefix = self.prefix.as_ref().ok_or(
                    "a stderr log line, and the source has no `prefix` (the server's \
                     log_line_prefix) to read it with",
                )?;
                let (head, rest) = match prefix.matches(line) {
                    Some(Matched::Session(head, rest)) => (head, rest),
                    Some(Matched::NotSession) => return Ok(Parsed::Skip),
                    None => {
                        return Err(format!(
                            "does not start with the prefix `{}` (is it the server's \
                             log_line_prefix?)",
                            prefix.as_str()
                        ))
                    }
                };
                let Some((_, message)) = severity(rest) else {
                    return Err("no `SEVERITY:  ` after the prefix".into());
                };
                Line {
                    at: None,
                    parsed_at: head.at,
                    user: head.user.map(Cow::Borrowed),
                    application: head.application.map(Cow::Borrowed),
                    session: head.session.map(Cow::Borrowed),
                    message: String::from_utf8_lossy(message),
                }
            }
            Destination::Csvlog => {
                self.pending.extend_from_slice(line);
                // A quoted field is open while the quotes seen are odd.
                if bytecount_quotes(&self.pending) % 2 == 1 {
                    self.pending.push(b'\n');
                    return Ok(Parsed::Skip);
                }
                if self.pending.iter().all(u8::is_ascii_whitespace) {
                    self.pending.clear();
                    return Ok(Parsed::Skip);
                }
                let record = &self.pending;
                let spans = csv_spans(record, 23);
                if spans.len() < 14 {
                    let n = spans.len();
                    self.pending.clear();
                    return Err(format!("{n} columns where a csvlog line has at least 23"));
                }
                // Only the columns a read needs are unquoted, each once.
                let f = |i: usize| {
                    spans
                        .get(i)
                        .filter(|(s, e, _)| e > s)
                        .map(|&(s, e, quoted)| Cow::Owned(unquote(&record[s..e], quoted)))
                };
                let parts = Line {
                    at: f(0),
                    parsed_at: None,
                    user: f(1),
                    session: f(5).or_else(|| f(3)),
                    application: f(22),
                    message: f(13).unwrap_or_default(),
                };
                self.pending.clear();
                parts
            }
            Destination::Jsonlog => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    return Ok(Parsed::Skip);
                }
                let j: JsonLine =
                    serde_json::from_slice(line).map_err(|e| format!("not a jsonlog line: {e}"))?;
                Line {
                    at: j.timestamp,
                    parsed_at: None,
                    user: j.user,
                    application: j.application_name,
                    session: j
                        .session_id
                        .or_else(|| j.pid.map(|p| Cow::Owned(p.to_string()))),
                    message: j.message.unwrap_or_default(),
                }
            }
        };
        self.entry(parts)
    }

    /// The request an `AUDIT:` entry is; another server message is skipped.
    fn entry<'a>(&'a mut self, line: Line<'_>) -> Result<Parsed<'a>, String> {
        let Some(audit) = line.message.strip_prefix("AUDIT: ") else {
            return Ok(Parsed::Skip);
        };
        // The statement (8th field) only matters for a read.
        let read_class = self.columns && audit.split(',').nth(3) == Some("READ");
        let (fields, whole) = csv_fields(audit, if read_class { 8 } else { 7 });
        if fields.len() < 7 {
            return Err(format!(
                "an AUDIT entry of {} field(s) where pgaudit writes at least 7 (cut short?)",
                fields.len()
            ));
        }
        let number = |i: usize| {
            fields[i]
                .parse::<u64>()
                .map_err(|_| format!("AUDIT statement id {:?} is not a number", fields[i]))
        };
        let statement = (number(1)?, number(2)?);
        let (class, kind, object) = (&fields[3], &fields[5], &fields[6]);
        let at = line
            .parsed_at
            .or_else(|| line.at.as_deref().and_then(|t| pg_time(t.as_bytes())))
            .ok_or_else(|| {
                format!(
                    "time {:?} is not `YYYY-MM-DD HH:MM:SS[.fff] ZONE` with a zone of one \
                     offset (log in UTC: log_timezone = 'UTC')",
                    line.at.as_deref().unwrap_or("")
                )
            })?;
        let relation = RELATIONS.contains(&kind.as_str()) && !object.is_empty();
        let read = class == "READ" && relation;
        let mut attributes = Columns::Unknown;
        if read {
            let now = at.timestamp();
            if self.seen.len() >= self.prune_at {
                self.seen.retain(|_, s| now - s.at <= SEEN_SECONDS);
                self.prune_at = (2 * self.seen.len()).max(PRUNE_FLOOR);
            }
            let session = line.session.as_deref().unwrap_or_default();
            let seen = match self.seen.get_mut(session) {
                Some(seen) => seen,
                None => self.seen.entry(session.to_string()).or_default(),
            };
            seen.at = now;
            if seen.statement != statement {
                seen.statement = statement;
                seen.relations.clear();
                seen.parsed = None;
            }
            if !seen.relations.insert(object.clone()) {
                return Ok(Parsed::Skip);
            }
            // Parsed once per statement, whichever of its entries first carries the text.
            // A statement whose quote does not close here went on in lines this reader
            // skips (stderr): its first line alone could parse and name too few columns.
            let text = match fields.get(7) {
                Some(text) if whole => text.as_str(),
                _ => NOT_LOGGED,
            };
            if self.columns && seen.parsed.is_none() && text != NOT_LOGGED {
                let parsed = match self.parsed.get(text) {
                    Some(p) => Arc::clone(p),
                    None => {
                        if self.parsed.len() >= PARSED_TEXTS {
                            self.parsed.clear();
                        }
                        let p = Arc::new(Statements::parse(text));
                        self.parsed.insert(text.to_string(), Arc::clone(&p));
                        p
                    }
                };
                seen.parsed = Some(parsed);
            }
            if let Some(parsed) = &seen.parsed {
                attributes = parsed.columns(object);
            }
        }
        self.path = object.replacen('.', "/", 1);
        let principal = match self.principal {
            PgPrincipal::UserName => line.user,
            PgPrincipal::ApplicationName => line.application,
        };
        Ok(Parsed::Request(Request {
            at,
            method: if read { "GET" } else { "AUDIT" },
            object: relation,
            path: Cow::Borrowed(self.path.as_str()),
            query: None,
            status: Some(if read { 200 } else { 0 }),
            principal: principal.map(|p| Cow::Owned(p.into_owned())),
            client: None,
            fields: Fields {
                line: &[],
                spans: &[],
                names: &[],
                encoding: super::Encoding::Plain,
            },
            attributes,
        }))
    }
}

/// The keys of a jsonlog line this reader needs.
#[derive(serde::Deserialize)]
struct JsonLine<'a> {
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    user: Option<Cow<'a, str>>,
    #[serde(borrow)]
    application_name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    session_id: Option<Cow<'a, str>>,
    pid: Option<u64>,
    #[serde(borrow)]
    message: Option<Cow<'a, str>>,
}

/// The destination a file's first line shows: a JSON object, a CSV record (a time, then a
/// comma), else a `stderr` line.
fn sniff(line: &[u8]) -> Destination {
    if line.first() == Some(&b'{') {
        return Destination::Jsonlog;
    }
    let third_space = line
        .iter()
        .enumerate()
        .filter(|(_, c)| **c == b' ')
        .nth(2)
        .map(|(i, _)| i);
    let first_comma = memchr::memchr(b',', line);
    match (first_comma, third_space) {
        (Some(c), Some(s)) if c < s => Destination::Csvlog,
        (Some(_), None) => Destination::Csvlog,
        _ => Destination::Stderr,
    }
}

fn bytecount_quotes(b: &[u8]) -> usize {
    memchr::memchr_iter(b'"', b).count()
}

/// The spans of the first `max` fields of one CSV record (start, end, quoted), a quoted
/// field's without its quotes; a field may hold commas, doubled quotes and newlines.
fn csv_spans(b: &[u8], max: usize) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::with_capacity(max);
    let mut i = 0;
    while out.len() < max {
        if b.get(i) == Some(&b'"') {
            let start = i + 1;
            let mut j = start;
            let end = loop {
                match memchr::memchr(b'"', &b[j..]) {
                    Some(k) if b.get(j + k + 1) == Some(&b'"') => j += k + 2,
                    Some(k) => break j + k,
                    None => break b.len(),
                }
            };
            out.push((start, end, true));
            match memchr::memchr(b',', &b[end.min(b.len())..]) {
                Some(k) => i = end + k + 1,
                None => break,
            }
        } else {
            match memchr::memchr(b',', &b[i..]) {
                Some(k) => {
                    out.push((i, i + k, false));
                    i += k + 1;
                }
                None => {
                    out.push((i, b.len(), false));
                    break;
                }
            }
        }
    }
    out
}

/// A field's text: a quoted one with its doubled quotes made single.
fn unquote(field: &[u8], quoted: bool) -> String {
    let text = String::from_utf8_lossy(field);
    if quoted && text.contains("\"\"") {
        text.replace("\"\"", "\"")
    } else {
        text.into_owned()
    }
}

/// The first `n` comma-separated fields of an AUDIT entry (a field may be quoted, with
/// doubled quotes inside), and whether each quoted one closed within `text`.
fn csv_fields(text: &str, n: usize) -> (Vec<String>, bool) {
    let mut whole = true;
    let mut out = Vec::with_capacity(n);
    let mut chars = text.chars().peekable();
    while out.len() < n {
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            let mut closed = false;
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        field.push('"');
                    } else {
                        closed = true;
                        break;
                    }
                } else {
                    field.push(c);
                }
            }
            whole &= closed;
            // Up to the comma after the closing quote.
            for c in chars.by_ref() {
                if c == ',' {
                    break;
                }
            }
            out.push(field);
            continue;
        }
        let mut ended = false;
        for c in chars.by_ref() {
            if c == ',' {
                ended = true;
                break;
            }
            field.push(c);
        }
        out.push(field);
        if !ended {
            break;
        }
    }
    (out, whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(audit: &mut PgAudit, text: &str) -> Vec<(String, Option<String>, String)> {
        let mut out = Vec::new();
        for line in text.lines() {
            if let Ok(Parsed::Request(r)) = audit.parse(line.as_bytes()) {
                if r.method == "GET" {
                    out.push((
                        r.at.to_rfc3339(),
                        r.principal.map(|p| p.into_owned()),
                        r.path.into_owned(),
                    ));
                }
            }
        }
        out
    }

    fn row(at: &str, who: &str, path: &str) -> (String, Option<String>, String) {
        (at.to_string(), Some(who.to_string()), path.to_string())
    }

    #[test]
    fn stderr_entries_with_a_statement_over_several_lines_a_literal_and_a_checkpoint() {
        let mut a = PgAudit::new(
            Some(Destination::Stderr),
            Some(Prefix::parse("%m [%p] %q%u@%d ").unwrap()),
            PgPrincipal::UserName,
        );
        a.columns = true;
        // Written from pgaudit's README (its examples of session and object entries) and
        // PostgreSQL's stderr layout: a statement's further lines are indented with a tab.
        let log = "\
2026-11-27 10:00:00.120 UTC [4242] atlas@gis LOG:  AUDIT: SESSION,1,1,READ,SELECT,TABLE,public.roads_v1,\"SELECT name,
\t       geom
\t  FROM roads_v1 WHERE name = 'public.roads_v2'\",<not logged>
2026-11-27 10:00:00.121 UTC [4242] atlas@gis LOG:  AUDIT: OBJECT,1,1,READ,SELECT,TABLE,public.roads_v1,\"SELECT name,\",<not logged>
2026-11-27 10:05:00.000 UTC [17] LOG:  checkpoint starting: time
2026-11-27 10:06:00.000 UTC [4243] router@gis LOG:  AUDIT: SESSION,7,1,READ,COPY,TABLE,public.roads_v2,\"COPY roads_v2 TO STDOUT\",<not logged>
2026-11-27 10:07:00.000 UTC [4243] router@gis LOG:  AUDIT: SESSION,8,1,WRITE,INSERT,TABLE,public.roads_v2,\"INSERT INTO roads_v2 VALUES (1)\",<not logged>
2026-11-27 10:08:00.000 UTC [4243] router@gis LOG:  AUDIT: SESSION,9,1,READ,SELECT,,,select 1,<not logged>
";
        assert_eq!(
            read(&mut a, log),
            vec![
                row("2026-11-27T10:00:00.120+00:00", "atlas", "public/roads_v1"),
                row("2026-11-27T10:06:00+00:00", "router", "public/roads_v2"),
            ]
        );
        // The statement's first line alone is no statement: its columns are unknown, though
        // `SELECT name` would parse.
        let mut b = a.clone();
        let first = "2026-11-27 10:10:00.000 UTC [4244] atlas@gis LOG:  AUDIT: SESSION,3,1,READ,SELECT,TABLE,public.roads_v1,\"SELECT name FROM roads_v1";
        let more = "\t  JOIN towns t ON ST_Intersects(t.geom, roads_v1.geom)\",<not logged>";
        let got = [first, more].map(|l| match b.parse(l.as_bytes()) {
            Ok(Parsed::Request(r)) => Some(r.attributes),
            _ => None,
        });
        assert_eq!(got, [Some(Columns::Unknown), None]);
        // A line cut short inside the entry's first fields is malformed, not a read.
        let cut = "2026-11-27 10:09:00.000 UTC [4243] router@gis LOG:  AUDIT: SESSION,10,1,READ";
        assert!(matches!(a.parse(cut.as_bytes()), Err(e) if e.contains("cut short")));
        // A line of another prefix names the prefix.
        let other = "Nov 27 10:00:00 db postgres[4242]: [1-1] LOG:  AUDIT: SESSION";
        assert!(matches!(a.parse(other.as_bytes()), Err(e) if e.contains("%m [%p] %q%u@%d ")));
    }

    #[test]
    fn csvlog_records_with_quoted_commas_and_newlines() {
        let mut a = PgAudit::new(
            Some(Destination::Csvlog),
            None,
            PgPrincipal::ApplicationName,
        );
        a.columns = true;
        // PostgreSQL 15's csvlog columns: log_time, user_name, database_name, process_id,
        // connection_from, session_id, session_line_num, command_tag, session_start_time,
        // virtual_transaction_id, transaction_id, error_severity, sql_state_code, message,
        // detail, hint, internal_query, internal_query_pos, context, query, query_pos,
        // location, application_name, backend_type, leader_pid, query_id.
        let log = "\
2026-11-27 10:00:00.120 UTC,\"atlas\",\"gis\",4242,\"[local]\",6564a1b0.1092,3,\"SELECT\",2026-11-27 09:59:58 UTC,3/12,0,LOG,00000,\"AUDIT: SESSION,1,1,READ,SELECT,TABLE,public.roads_v1,\"\"SELECT a, b
  FROM roads_v1\"\",<not logged>\",,,,,,,,,\"qgis-atlas\",\"client backend\",,0
2026-11-27 10:01:00.000 UTC,\"atlas\",\"gis\",4242,\"[local]\",6564a1b0.1092,4,\"idle\",2026-11-27 09:59:58 UTC,,0,LOG,00000,\"disconnection: session time: 0:00:02.000\",,,,,,,,,\"qgis-atlas\",\"client backend\",,0
";
        assert_eq!(
            read(&mut a, log),
            vec![row(
                "2026-11-27T10:00:00.120+00:00",
                "qgis-atlas",
                "public/roads_v1"
            )]
        );
    }

    #[test]
    fn jsonlog_lines() {
        let mut a = PgAudit::new(None, None, PgPrincipal::UserName);
        a.columns = true;
        // The keys of PostgreSQL 15's jsonlog, in its order.
        let log = r#"{"timestamp":"2026-11-27 10:00:00.120 UTC","user":"atlas","dbname":"gis","pid":4242,"remote_host":"[local]","session_id":"6564a1b0.1092","line_num":3,"ps":"SELECT","session_start":"2026-11-27 09:59:58 UTC","vxid":"3/12","txid":0,"error_severity":"LOG","message":"AUDIT: SESSION,1,1,READ,SELECT,MATERIALIZED VIEW,public.roads_summary,\"SELECT *\nFROM roads_summary\",<not logged>","application_name":"psql","backend_type":"client backend","query_id":0}
"#;
        assert_eq!(
            read(&mut a, log),
            vec![row(
                "2026-11-27T10:00:00.120+00:00",
                "atlas",
                "public/roads_summary"
            )]
        );
        assert!(a.parse(b"{\"timestamp\": 12").is_err());
    }

    #[test]
    fn each_read_carries_the_columns_its_statement_reads_of_its_relation() {
        let mut a = PgAudit::new(Some(Destination::Jsonlog), None, PgPrincipal::UserName);
        a.columns = true;
        // pgaudit's README: with `pgaudit.log_statement_once` a statement's text is logged
        // with its first entry only, the later ones (another relation, or the OBJECT twin)
        // saying `<not logged>`; a join audits each relation under the same statement id.
        let line = |session: &str, id: u32, kind: &str, object: &str, text: &str| {
            format!(
                r#"{{"timestamp":"2026-11-27 10:00:00.120 UTC","user":"atlas","session_id":"{session}","message":"AUDIT: {kind},{id},1,READ,SELECT,TABLE,{object},\"{text}\",<not logged>"}}"#
            )
        };
        let join =
            "SELECT r.name, t.pop FROM roads_v1 r JOIN towns t ON ST_Intersects(r.geom, t.geom)";
        let log = [
            line("s1", 1, "SESSION", "public.roads_v1", join),
            line("s1", 1, "SESSION", "public.towns", "<not logged>"),
            line("s1", 1, "OBJECT", "public.roads_v1", "<not logged>"),
            line(
                "s2",
                1,
                "SESSION",
                "public.roads_v1",
                "SELECT * FROM roads_v1",
            ),
            line("s3", 4, "SESSION", "public.roads_v1", "<not logged>"),
            line("s3", 5, "SESSION", "public.roads_v1", "SELECT name, FROM"),
        ];
        let mut got = Vec::new();
        for l in &log {
            if let Ok(Parsed::Request(r)) = a.parse(l.as_bytes()) {
                got.push((r.path.into_owned(), r.attributes));
            }
        }
        let named = |c: &[&str]| Columns::named(c.iter().map(|c| c.to_string()));
        assert_eq!(
            got,
            vec![
                ("public/roads_v1".to_string(), named(&["geom", "name"])),
                ("public/towns".to_string(), named(&["geom", "pop"])),
                ("public/roads_v1".to_string(), Columns::All),
                ("public/roads_v1".to_string(), Columns::Unknown),
                ("public/roads_v1".to_string(), Columns::Unknown),
            ]
        );
        // Unasked, no statement is parsed: the same entries read the same relations, and
        // every read says it cannot tell which columns.
        let mut quiet = PgAudit::new(Some(Destination::Jsonlog), None, PgPrincipal::UserName);
        let mut unasked = Vec::new();
        for l in &log {
            if let Ok(Parsed::Request(r)) = quiet.parse(l.as_bytes()) {
                unasked.push((r.path.into_owned(), r.attributes));
            }
        }
        let paths = |v: &[(String, Columns)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
        assert_eq!(paths(&unasked), paths(&got));
        assert!(
            unasked.iter().all(|(_, c)| *c == Columns::Unknown),
            "{unasked:?}"
        );
        assert!(quiet.parsed.is_empty());
    }

    #[test]
    fn a_month_of_one_statement_sessions_does_not_grow_the_pairing_without_end() {
        let mut a = PgAudit::new(Some(Destination::Jsonlog), None, PgPrincipal::UserName);
        a.columns = true;
        let entry = |pid: u64, secs: u64, kind: &str| {
            let t = chrono::DateTime::from_timestamp(1_795_000_000 + secs as i64, 0).unwrap();
            format!(
                r#"{{"timestamp":"{}","user":"atlas","pid":{pid},"message":"AUDIT: {kind},1,1,READ,SELECT,VIEW,public.roads_v1,SELECT 1,<not logged>"}}"#,
                t.format("%Y-%m-%d %H:%M:%S%.3f UTC")
            )
        };
        // 20,000 connections a second apart, each one statement logged twice.
        let mut reads = 0;
        for pid in 0..20_000u64 {
            for kind in ["OBJECT", "SESSION"] {
                if let Ok(Parsed::Request(r)) = a.parse(entry(pid, pid, kind).as_bytes()) {
                    reads += usize::from(r.method == "GET");
                }
            }
        }
        assert_eq!(reads, 20_000, "each statement once");
        assert!(
            a.seen.len() <= 2 * PRUNE_FLOOR,
            "{} sessions kept",
            a.seen.len()
        );
    }
}
