//! The platforms' own access logs, read as they are written: Amazon S3 server access logs
//! ([`s3`]), CloudFront standard logs ([`cloudfront`]) and the Apache/nginx combined format
//! or a custom `log_format` ([`combined`]), PostgreSQL's audit log ([`pgaudit`]), and the
//! warehouses' access records, whose reads name their columns ([`snowflake`], [`bigquery`],
//! [`databricks`]). This layer turns the bytes of one log into reads
//! of datasets; the consumption scanner folds the reads in as it folds the lines of a JSON
//! Lines log.
//!
//! Three steps, each its own value, so that files can be parsed on every core and only the
//! last step is shared:
//! 1. a format reads a line into a [`Request`] (instant, principal, method, decoded path,
//!    query, status, and any other field by name);
//! 2. [`AccessLog::judge`] decides whether the request counts (a successful `GET` or `HEAD`
//!    of an object whose path a `match` template ([`template`]) maps to a dataset and
//!    version): a [`Hit`], or the reason it is not a read;
//! 3. [`Bursts`] ([`burst`]) folds the hits of one principal on one object that follow each
//!    other within `same_read_seconds` into one [`Read`]: the many ranged GETs of one file
//!    opened by GDAL, a Parquet reader or DuckDB are one read.
//!
//! [`AccessScan`] runs the three over the files of a source. A line that cannot be read is
//! handed back with its number, counted and skipped; a request that is not a read is only
//! counted, by reason ([`NotRead`]).

use std::borrow::Cow;
use std::io::BufRead;

use chrono::{DateTime, FixedOffset};

use crate::format::LogFormat;

pub mod bigquery;
pub mod burst;
pub mod cloudfront;
mod column_sets;
pub mod combined;
mod config_error;
mod counts;
pub mod databricks;
mod keys;
mod name_set;
mod parallel;
pub mod pgaudit;
pub mod s3;
pub mod sample;
pub mod snowflake;
pub mod sql_columns;
pub mod template;
mod text;
mod warehouse;

pub use column_sets::{ByAddress, Columns, KEPT_BY_ADDRESS};
pub use config_error::{AccessConfigError, PatternError, SourceKey};
pub use counts::{AccessStats, NotRead, NotReadExamples, NotReadReason};
pub use keys::AccessKeys;
pub use name_set::{NameSet, KEPT_BYTES};

pub use burst::{Bursts, Read, Reader, Span, DEFAULT_REORDER_SECONDS};
pub use combined::Pattern;
pub use template::{Captures, KeptMatches, Template, TemplateError, Templates};

/// A log (or part of one) that cannot be read on.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("line {line}: {source}")]
    Io {
        line: u64,
        #[source]
        source: std::io::Error,
    },
    /// A CloudFront `#Fields` header that lacks a field the source needs: no line under it
    /// can be read.
    #[error("line {line}: the `#Fields` header has no `{field}`")]
    Fields { line: u64, field: String },
    /// A Parquet file that cannot be read, or lacks a column a read needs.
    #[error("{0}")]
    Parquet(String),
}

/// A line that is not a request of the format, with its 1-based number and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub line: u64,
    pub reason: String,
}

/// How a format finds a principal in a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PrincipalAt {
    /// The field at this index of the line's fields.
    Field(usize),
    /// A query parameter of the request.
    Query(String),
}

/// The field names of a line and how its values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// As written (S3: only the quotes are removed).
    Plain,
    /// `%XX` escapes (CloudFront).
    Percent,
    /// Backslash escapes (Apache, nginx).
    Backslash,
}

/// The fields of one line, by index, to reach any of them by name.
#[derive(Debug, Clone, Copy)]
pub struct Fields<'a> {
    line: &'a [u8],
    spans: &'a [(u32, u32)],
    names: &'a [String],
    encoding: Encoding,
}

impl<'a> Fields<'a> {
    /// The raw text of field `i` as written (quotes and brackets removed).
    pub(crate) fn raw(&self, i: usize) -> Option<&'a [u8]> {
        let &(s, e) = self.spans.get(i)?;
        self.line.get(s as usize..e as usize)
    }

    /// Field `i` decoded; `None` when the line has no such field or it is `-` (absent).
    pub(crate) fn value(&self, i: usize) -> Option<Cow<'a, str>> {
        let raw = self.raw(i)?;
        if raw == b"-" || raw.is_empty() {
            return None;
        }
        Some(match self.encoding {
            Encoding::Plain => text::lossy(raw),
            Encoding::Percent => text::percent_decode(raw, false),
            Encoding::Backslash => text::unescape(raw),
        })
    }

    /// The field named `name`, decoded; `None` when absent or `-`.
    pub fn get(&self, name: &str) -> Option<Cow<'a, str>> {
        let i = self.names.iter().position(|n| n == name)?;
        self.value(i)
    }

    /// The names of the fields, in the line's order.
    pub fn names(&self) -> &'a [String] {
        self.names
    }
}

/// One request as a format reads it from a line.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The instant, with the offset as written (UTC where the format writes none).
    pub at: DateTime<FixedOffset>,
    /// The HTTP method (`GET`, `HEAD`, ...); empty when the line has no request line.
    pub method: &'a str,
    /// Whether the request is for an object: always for HTTP; for S3 an operation on an
    /// `OBJECT` (not a bucket listing or a policy).
    pub object: bool,
    /// The requested path (S3: the object key), decoded.
    pub path: Cow<'a, str>,
    /// The query string as written, without `?`.
    pub query: Option<&'a [u8]>,
    /// The HTTP status; `None` where the log wrote `-` (no status was sent).
    pub status: Option<u16>,
    /// Who asked, from the source's principal field; `None` for anonymous (`-`).
    pub principal: Option<Cow<'a, str>>,
    /// The client's address, when the format logs it: a burst of anonymous requests is
    /// one client's.
    pub client: Option<&'a [u8]>,
    /// Every field of the line, by name.
    pub fields: Fields<'a>,
    /// The attributes (columns) the request read, where the format can tell (pgaudit's
    /// statement, the columns a warehouse's record names); `Unknown` elsewhere.
    pub attributes: Columns,
}

impl Request<'_> {
    /// Any field by name (`key`, `cs(User-Agent)`, `http_x_api_key`, ...), decoded.
    pub fn field(&self, name: &str) -> Option<Cow<'_, str>> {
        self.fields.get(name)
    }

    /// What the combined and CloudFront parsers' tests compare of a request: its instant,
    /// method, path, query, status and principal, in one line.
    #[cfg(test)]
    fn described(&self) -> String {
        format!(
            "{} {} {:?} q={:?} {} principal={:?}",
            self.at.to_rfc3339(),
            self.method,
            self.path,
            self.query.map(text::lossy),
            self.status
                .map_or_else(|| "-".to_string(), |s| s.to_string()),
            self.principal,
        )
    }

    /// A query parameter, decoded.
    pub fn query_param(&self, name: &str) -> Option<Cow<'_, str>> {
        text::query_param(self.query?, name)
    }
}

/// What a line asked for, as each format finds it: the method, whether it is an object
/// read, the decoded path and the raw query.
pub(crate) struct Asked<'a> {
    pub method: &'a str,
    pub object: bool,
    pub path: Cow<'a, str>,
    pub query: Option<&'a [u8]>,
}

impl<'a> Request<'a> {
    /// The request of a parsed line: its principal read by `principal`, its client the raw
    /// `client` field unless that is `-`.
    pub(crate) fn of(
        at: DateTime<FixedOffset>,
        status: Option<u16>,
        asked: Asked<'a>,
        principal: &PrincipalAt,
        client: Option<&'a [u8]>,
        fields: Fields<'a>,
    ) -> Request<'a> {
        let Asked {
            method,
            object,
            path,
            query,
        } = asked;
        Request {
            at,
            method,
            object,
            path,
            query,
            status,
            principal: principal_of(principal, &fields, query),
            client: client.filter(|c| *c != b"-"),
            fields,
            attributes: Columns::Unknown,
        }
    }
}

/// The principal of a request, by `at`: `None` when the field is absent or `-`.
pub(crate) fn principal_of<'a>(
    at: &PrincipalAt,
    fields: &Fields<'a>,
    query: Option<&'a [u8]>,
) -> Option<Cow<'a, str>> {
    match at {
        PrincipalAt::Field(i) => fields.value(*i),
        PrincipalAt::Query(name) => {
            text::query_param(query?, name).filter(|v| !v.is_empty() && v != "-")
        }
    }
}

/// How a `principal` value is written: `query:NAME`, `header:NAME` or a field name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PrincipalSpec {
    Field(String),
    Query(String),
    Header(String),
}

impl PrincipalSpec {
    fn parse(text: &str) -> Result<PrincipalSpec, AccessConfigError> {
        let bad = |reason: &str| AccessConfigError::Principal {
            principal: text.to_string(),
            reason: reason.to_string(),
        };
        let spec = if let Some(name) = text.strip_prefix("query:") {
            PrincipalSpec::Query(name.to_string())
        } else if let Some(name) = text.strip_prefix("header:") {
            PrincipalSpec::Header(name.to_string())
        } else {
            PrincipalSpec::Field(text.to_string())
        };
        match &spec {
            PrincipalSpec::Field(n) | PrincipalSpec::Query(n) | PrincipalSpec::Header(n)
                if n.trim().is_empty() =>
            {
                Err(bad("names no field"))
            }
            _ => Ok(spec),
        }
    }
}

/// A line's place in a file: a request, or a line that is none by design (a header, a
/// blank line).
// One `Parsed` at a time lives on the stack, per line: boxing the request would cost an
// allocation per line for a few bytes of stack.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Parsed<'a> {
    Request(Request<'a>),
    /// A row that read several objects (a Snowflake query of a join): a request each.
    Requests(Vec<Request<'a>>),
    Skip,
}

/// What a format does per line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Dialect {
    S3(s3::S3),
    CloudFront(cloudfront::CloudFront),
    Combined(combined::Combined),
    Pgaudit(pgaudit::PgAudit),
    Snowflake(snowflake::Snowflake),
    BigQuery(bigquery::BigQuery),
    Databricks(databricks::Databricks),
}

impl Dialect {
    /// Whether a file of this format may be read on several threads at all: CloudFront's
    /// `#Fields` header may change a file's layout part way, pgaudit folds a session's
    /// entries.
    pub(crate) fn may_cut(&self) -> bool {
        !matches!(self, Dialect::CloudFront(_) | Dialect::Pgaudit(_))
    }

    /// Whether a reader that has read a file's first line that is not blank can hand the
    /// rest to readers that start part way: a Snowflake file has said JSON or CSV, a CSV
    /// file's header is read whole.
    pub(crate) fn cut_ready(&self) -> bool {
        match self {
            Dialect::Snowflake(d) => d.is_csv().is_some(),
            Dialect::Databricks(d) => d.header_read(),
            _ => true,
        }
    }

    /// Whether a CSV record is still open at the end of the last line read (a quoted field
    /// goes on in the next).
    pub(crate) fn open_record(&self) -> bool {
        match self {
            Dialect::Snowflake(d) => d.open_record(),
            Dialect::Databricks(d) => d.open_record(),
            _ => false,
        }
    }

    /// What line `number` of a file (its end trimmed) is to this format. `Err` only where the
    /// file cannot be read on (a CloudFront header the source cannot read under).
    pub(crate) fn parse_line<'l>(
        &'l mut self,
        line: &'l [u8],
        number: u64,
    ) -> Result<Result<Parsed<'l>, String>, AccessError> {
        Ok(match self {
            Dialect::S3(d) => d.parse(line),
            Dialect::CloudFront(d) => d.parse(line, number)?,
            Dialect::Combined(d) => d.parse(line),
            Dialect::Pgaudit(d) => d.parse(line),
            Dialect::Snowflake(d) => d.parse(line),
            Dialect::BigQuery(d) => d.parse(line),
            Dialect::Databricks(d) => d.parse(line),
        })
    }
}

/// The contract text of a read whose template captured only its line (`{line}`): the scan
/// resolves it to the newest version of that line valid on the read's day.
pub const LINE_MARK: &str = "line:";

/// The line a contract text made by a `{line}` template names.
pub fn line_mark(contract: &[u8]) -> Option<u64> {
    std::str::from_utf8(contract.strip_prefix(LINE_MARK.as_bytes())?)
        .ok()?
        .parse()
        .ok()
}

/// A request that counts as (part of) a read: what the bursts need of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit<'a> {
    pub at: DateTime<FixedOffset>,
    /// `None`: anonymous.
    pub principal: Option<Cow<'a, str>>,
    /// The client address, which tells anonymous readers apart within a burst.
    pub client: Cow<'a, str>,
    /// The requested object (the decoded path or key).
    pub object: Cow<'a, str>,
    pub dataset: Cow<'a, str>,
    pub contract: Cow<'a, str>,
    /// The attributes the request read ([`Request::attributes`]).
    pub attributes: Cow<'a, Columns>,
}

/// A compiled access-log source: its format, templates, principal and burst window. It
/// holds no state of a scan, so one serves every thread.
#[derive(Debug, Clone, PartialEq)]
pub struct AccessLog {
    format: LogFormat,
    templates: Templates,
    dataset: Option<String>,
    contract: Option<String>,
    same_read_seconds: u64,
    /// `ignore_principals`: whose requests are no reads.
    ignore: Vec<glob::Pattern>,
    /// The per-file reader, copied for each file.
    dialect: Dialect,
}

impl AccessLog {
    pub fn format(&self) -> LogFormat {
        self.format
    }

    /// The `match` templates, compiled.
    pub fn templates(&self) -> &Templates {
        &self.templates
    }

    /// The same log, whose reads carry the columns they read where the format can tell
    /// (pgaudit: the statement, parsed); otherwise every read says `Unknown`. The warehouse
    /// formats (Snowflake, BigQuery, Databricks) carry their records' columns either way:
    /// they are written in the record, not worked out.
    pub fn with_columns(mut self, on: bool) -> AccessLog {
        if let Dialect::Pgaudit(d) = &mut self.dialect {
            d.columns = on;
        }
        self
    }

    pub fn same_read_seconds(&self) -> u64 {
        self.same_read_seconds
    }

    /// Whether `req` counts, and as what: the first of method, status and template that
    /// fails is the reason it does not. `kept`: the template answers of the paths seen.
    pub fn judge<'r>(
        &self,
        req: &'r Request<'_>,
        kept: &mut KeptMatches,
    ) -> Result<Hit<'r>, NotReadReason> {
        if !(req.object && matches!(req.method, "GET" | "HEAD")) {
            return Err(NotReadReason::Method);
        }
        if !req
            .status
            .is_some_and(|s| (200..300).contains(&s) || s == 304)
        {
            return Err(NotReadReason::Status);
        }
        if let Some(p) = &req.principal {
            if self.ignore.iter().any(|g| g.matches(p)) {
                return Err(NotReadReason::Ignored);
            }
        }
        let (dataset, contract) = if self.templates.is_empty() {
            (None, None)
        } else {
            let caps = self
                .templates
                .first_match_kept(&req.path, kept)
                .ok_or(NotReadReason::Unmatched)?;
            let contract = match caps.line {
                Some(line) => Some(Cow::Owned(format!("{LINE_MARK}{line}"))),
                None => caps.contract.map(Cow::Borrowed),
            };
            (caps.dataset, contract)
        };
        // `new` made sure each template's missing capture has a constant.
        let constant = |c: &Option<String>| Cow::Owned(c.clone().unwrap_or_default());
        Ok(Hit {
            at: req.at,
            principal: req.principal.as_ref().map(|p| Cow::Borrowed(p.as_ref())),
            client: req.client.map(text::lossy).unwrap_or_default(),
            object: Cow::Borrowed(req.path.as_ref()),
            dataset: dataset.map_or_else(|| constant(&self.dataset), Cow::Borrowed),
            contract: contract.unwrap_or_else(|| constant(&self.contract)),
            attributes: Cow::Borrowed(&req.attributes),
        })
    }

    /// Each line of `input`, its line end trimmed, with its 1-based number and what the
    /// format makes of it. Stops at the first read error, or at a CloudFront header the
    /// source cannot read under.
    pub(crate) fn each_line<R: BufRead>(
        &self,
        mut input: R,
        mut on_line: impl for<'l> FnMut(u64, &'l [u8], Result<Parsed<'l>, String>),
    ) -> Result<(), AccessError> {
        let mut dialect = self.dialect.clone();
        if let Dialect::Databricks(d) = &mut dialect {
            // Databricks' table may be exported as Parquet: read whole, a row for a line.
            let head = input
                .fill_buf()
                .map_err(|source| AccessError::Io { line: 1, source })?;
            if head.starts_with(b"PAR1") {
                let mut file = Vec::new();
                input
                    .read_to_end(&mut file)
                    .map_err(|source| AccessError::Io { line: 1, source })?;
                return d
                    .parquet(file, |number, parsed| on_line(number, &[], parsed))
                    .map_err(AccessError::Parquet);
            }
        }
        let mut buf = Vec::with_capacity(1024);
        let mut number = 0u64;
        loop {
            buf.clear();
            let n = input
                .read_until(b'\n', &mut buf)
                .map_err(|source| AccessError::Io {
                    line: number + 1,
                    source,
                })?;
            if n == 0 {
                break;
            }
            number += 1;
            trim_end(&mut buf);
            // A pgaudit statement of several lines goes on, in a stderr log, in lines the
            // server starts with a tab: they are joined to their entry, so that the whole
            // statement is read for its columns. The entry keeps its first line's number.
            if let Dialect::Pgaudit(d) = &mut dialect {
                if d.continues_with_tabs(&buf) {
                    loop {
                        let next = input.fill_buf().map_err(|source| AccessError::Io {
                            line: number + 1,
                            source,
                        })?;
                        if next.first() != Some(&b'\t') {
                            break;
                        }
                        buf.push(b'\n');
                        let at = buf.len();
                        input
                            .read_until(b'\n', &mut buf)
                            .map_err(|source| AccessError::Io {
                                line: number + 1,
                                source,
                            })?;
                        number += 1;
                        buf.remove(at);
                        trim_end(&mut buf);
                    }
                }
            }
            let line = buf.as_slice();
            let parsed = dialect.parse_line(line, number)?;
            on_line(number, line, parsed);
        }
        Ok(())
    }

    /// Read one log: each request that counts goes to `on_hit`, each line that is no
    /// request of the format to `on_malformed`, and the counts into `stats` (all but
    /// `reads` and `same_read`, which are the bursts'). Stops at the first read error, or at
    /// a CloudFront header the source cannot read under; the counts so far stay in `stats`.
    pub fn hits<R: BufRead + Send>(
        &self,
        input: R,
        stats: &mut AccessStats,
        on_hit: impl FnMut(Hit<'_>),
        on_malformed: impl FnMut(LineError),
    ) -> Result<(), AccessError> {
        self.hits_split(
            input,
            parallel::Split::machine(),
            stats,
            on_hit,
            on_malformed,
        )
    }

    /// [`AccessLog::hits`], on as many threads as `split` says where the format allows.
    pub(crate) fn hits_split<R: BufRead + Send>(
        &self,
        input: R,
        split: parallel::Split,
        stats: &mut AccessStats,
        mut on_hit: impl FnMut(Hit<'_>),
        mut on_malformed: impl FnMut(LineError),
    ) -> Result<(), AccessError> {
        match parallel::hits(self, input, split, stats, &mut on_hit, &mut on_malformed) {
            Ok(done) => done,
            Err(input) => self.hits_one_by_one(input, stats, on_hit, on_malformed),
        }
    }

    /// [`AccessLog::hits`] one line at a time, on the calling thread.
    pub(crate) fn hits_one_by_one<R: BufRead>(
        &self,
        input: R,
        stats: &mut AccessStats,
        mut on_hit: impl FnMut(Hit<'_>),
        mut on_malformed: impl FnMut(LineError),
    ) -> Result<(), AccessError> {
        let mut kept = KeptMatches::default();
        let mut one = |req: &Request<'_>, line: &[u8], stats: &mut AccessStats| match self
            .judge(req, &mut kept)
        {
            Ok(hit) => {
                stats.requests += 1;
                on_hit(hit);
            }
            Err(reason) => {
                stats.not_read.count(reason);
                stats.examples.keep(reason, &req.path, line);
            }
        };
        self.each_line(input, |number, line, parsed| match parsed {
            Ok(Parsed::Skip) => {}
            Ok(Parsed::Request(req)) => {
                stats.lines += 1;
                one(&req, line, stats);
            }
            Ok(Parsed::Requests(reqs)) => {
                stats.lines += 1;
                for req in &reqs {
                    one(req, line, stats);
                }
            }
            Err(reason) => {
                stats.lines += 1;
                stats.malformed += 1;
                on_malformed(LineError {
                    line: number,
                    reason,
                });
            }
        })
    }
}

/// Drop a line's end (`\n`, `\r\n`) from `buf`.
fn trim_end(buf: &mut Vec<u8>) {
    while let Some(b'\n' | b'\r') = buf.last() {
        buf.pop();
    }
}

/// The scan of one source's logs: parse each, fold the hits into bursts, hand out reads.
/// Bursts run across files (S3 delivers a few minutes of requests per object), so one
/// scan serves all the files of a source, fed in about the order of their time.
#[derive(Debug)]
pub struct AccessScan<'l> {
    log: &'l AccessLog,
    bursts: Bursts,
    stats: AccessStats,
}

impl<'l> AccessScan<'l> {
    pub fn new(log: &'l AccessLog) -> AccessScan<'l> {
        AccessScan::with_reorder(log, DEFAULT_REORDER_SECONDS)
    }

    /// A scan whose files may come up to `reorder_seconds` out of time order (S3 delivers
    /// an object minutes to hours after its requests, so files taken in name order are
    /// that far out of order) with the same reads as in time order; memory grows with it.
    pub fn with_reorder(log: &'l AccessLog, reorder_seconds: u64) -> AccessScan<'l> {
        AccessScan {
            log,
            bursts: Bursts::with_reorder(log.same_read_seconds, reorder_seconds),
            stats: AccessStats::default(),
        }
    }

    /// Read one file. Reads whose burst is over are handed to `on_read` as they close; the
    /// rest at [`AccessScan::finish`]. On an error the hits before it still count.
    pub fn feed<R: BufRead + Send>(
        &mut self,
        input: R,
        mut on_read: impl FnMut(Read),
        on_malformed: impl FnMut(LineError),
    ) -> Result<(), AccessError> {
        let bursts = &mut self.bursts;
        self.log.hits(
            input,
            &mut self.stats,
            |hit| bursts.push(hit, &mut on_read),
            on_malformed,
        )
    }

    /// Close every burst still open and return the counts of the whole scan.
    pub fn finish(mut self, on_read: impl FnMut(Read)) -> AccessStats {
        self.bursts.finish(on_read);
        self.stats.reads = self.bursts.reads();
        self.stats.same_read = self.bursts.continued();
        self.stats
    }
}

/// The access logs of a walk over a list of sources: the compiled log of each source that is
/// one (`None` for the others), and one [`AccessScan`] per such source across all of its
/// files, made when its first file is fed (a burst of ranged GETs may span two delivered
/// objects).
pub struct AccessScans<'l> {
    logs: Vec<Option<&'l AccessLog>>,
    scans: std::collections::BTreeMap<usize, AccessScan<'l>>,
}

impl<'l> AccessScans<'l> {
    /// The scans of sources whose compiled access logs are `logs`, by source number (`None`
    /// for a log of reads).
    pub fn new(logs: Vec<Option<&'l AccessLog>>) -> AccessScans<'l> {
        AccessScans {
            logs,
            scans: std::collections::BTreeMap::new(),
        }
    }

    /// Whether source number `source` is an access log with a compiled log to read it.
    pub fn reads(&self, source: usize) -> bool {
        self.logs.get(source).is_some_and(Option::is_some)
    }

    /// Read one file of source number `source` into that source's scan
    /// ([`AccessScan::feed`]). A source that is no access log ([`AccessScans::reads`]) has
    /// nothing to read: `Ok`, and nothing is handed out.
    pub fn feed<R: BufRead + Send>(
        &mut self,
        source: usize,
        input: R,
        on_read: impl FnMut(Read),
        on_malformed: impl FnMut(LineError),
    ) -> Result<(), AccessError> {
        let Some(&Some(log)) = self.logs.get(source) else {
            return Ok(());
        };
        let scan = self
            .scans
            .entry(source)
            .or_insert_with(|| AccessScan::new(log));
        scan.feed(input, on_read, on_malformed)
    }

    /// Close every source's bursts, in source order, and return the counts of each with its
    /// source number; `on_read` hears each read with the number of its source.
    pub fn finish(self, mut on_read: impl FnMut(usize, Read)) -> Vec<(usize, AccessStats)> {
        self.scans
            .into_iter()
            .map(|(source, scan)| (source, scan.finish(|read| on_read(source, read))))
            .collect()
    }
}

/// Read one access log to its end: its reads to `on_read`, its unreadable lines to
/// `on_malformed`, and its counts returned (on an error, with the counts up to it).
pub fn read_access_log<R: BufRead + Send>(
    log: &AccessLog,
    input: R,
    mut on_read: impl FnMut(Read),
    on_malformed: impl FnMut(LineError),
) -> (AccessStats, Result<(), AccessError>) {
    let mut scan = AccessScan::new(log);
    let outcome = scan.feed(input, &mut on_read, on_malformed);
    (scan.finish(on_read), outcome)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    const OWNER: &str = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be";

    /// An S3 line in the field order of AWS's "Amazon S3 server access log format".
    fn s3(time: &str, requester: &str, op: &str, key: &str, status: u16, range: &str) -> String {
        let method = op.split('.').nth(1).unwrap_or("GET");
        format!(
            "{OWNER} open-data [{time} +0000] 203.0.113.8 {requester} 7B4A0FABBEXAMPLE {op} {key} \
             \"{method} /{key} HTTP/1.1\" {status} - {range} 104857600 25 20 \"-\" \
             \"GDAL/3.8.4 (Linux x86_64)\" - hostid SigV4 ECDHE-RSA-AES128-GCM-SHA256 \
             AuthHeader open-data.s3.eu-west-1.amazonaws.com TLSv1.3 - -\n"
        )
    }

    /// An S3 source with these templates; a keys value for the rest.
    fn s3_keys<'a>(templates: &[&'a str]) -> AccessKeys<'a> {
        AccessKeys {
            templates: templates.to_vec(),
            same_read_seconds: 60,
            ..AccessKeys::default()
        }
    }

    pub(super) fn s3_log(templates: &[&str]) -> AccessLog {
        AccessLog::compile(LogFormat::S3Access, &s3_keys(templates)).unwrap()
    }

    #[test]
    fn a_stderr_statement_over_several_lines_is_read_whole_for_its_columns() {
        let keys = AccessKeys {
            templates: vec!["public.{dataset}_v{line}"],
            dataset: None,
            contract: None,
            principal: None,
            pattern: None,
            same_read_seconds: 0,
            pg: pgaudit::PgKeys {
                destination: Some(pgaudit::Destination::Stderr),
                prefix: Some(crate::pg_prefix::Prefix::parse("%m [%p] %q%u@%d ").unwrap()),
                by_application: false,
            },
            ignore_principals: &[],
        };
        let log = AccessLog::compile(LogFormat::Pgaudit, &keys).unwrap();
        // PostgreSQL writes a message's further lines to stderr each after a tab; the first
        // line alone (`SELECT r.name,`) does not parse.
        let text = "\
2026-11-27 10:00:00.120 UTC [4242] atlas@gis LOG:  AUDIT: SESSION,1,1,READ,SELECT,VIEW,public.roads_v1,\"SELECT r.name,
\t       r.pop_est
\t  FROM roads_v1 r\",<not logged>
2026-11-27 10:01:00.000 UTC [4242] atlas@gis LOG:  AUDIT: SESSION,2,1,READ,SELECT,VIEW,public.roads_v1,\"SELECT
\t  FROM\",<not logged>
";
        let columns = |log: &AccessLog| {
            let mut got = Vec::new();
            let mut bad = Vec::new();
            let (stats, outcome) = read_access_log(
                log,
                text.as_bytes(),
                |r| got.push(r.attributes),
                |e| bad.push(e.line),
            );
            outcome.unwrap();
            assert!(bad.is_empty(), "{bad:?}");
            assert_eq!(stats.lines, 2);
            got
        };
        let named = Columns::named(["name".to_string(), "pop_est".to_string()]);
        assert_eq!(
            columns(&log.clone().with_columns(true)),
            [named, Columns::Unknown]
        );
        // Not asked for columns, the further lines are skipped as before.
        assert_eq!(columns(&log), [Columns::Unknown, Columns::Unknown]);
    }

    #[test]
    fn opening_a_geoparquet_file_twice_is_two_reads() {
        // What GDAL /vsicurl/ (or a Parquet reader) sends when it opens a file: a HEAD, the
        // footer's last 64 KiB, the metadata, then column chunks, within seconds; the same
        // file opened again ten minutes later.
        let role = "arn:aws:sts::123456789012:assumed-role/flood-model/i-0abc";
        let key = "datasets/roads/v2.0.0/part-00000.parquet";
        let mut log = String::new();
        log += &s3(
            "06/Feb/2019:10:00:00",
            role,
            "REST.HEAD.OBJECT",
            key,
            200,
            "-",
        );
        for (t, n) in [
            ("00", 65536),
            ("01", 16384),
            ("01", 1048576),
            ("03", 8388608),
        ] {
            log += &s3(
                &format!("06/Feb/2019:10:00:{t}"),
                role,
                "REST.GET.OBJECT",
                key,
                206,
                &n.to_string(),
            );
        }
        log += &s3(
            "06/Feb/2019:10:10:02",
            role,
            "REST.HEAD.OBJECT",
            key,
            200,
            "-",
        );
        log += &s3(
            "06/Feb/2019:10:10:03",
            role,
            "REST.GET.OBJECT",
            key,
            206,
            "65536",
        );
        // Not reads: a listing, a denied GET, another key, the producer's PUT, a 304.
        log += &s3(
            "06/Feb/2019:10:00:05",
            role,
            "REST.GET.BUCKET",
            "-",
            200,
            "2048",
        );
        log += &s3(
            "06/Feb/2019:10:00:06",
            "-",
            "REST.GET.OBJECT",
            key,
            403,
            "243",
        );
        log += &s3(
            "06/Feb/2019:10:00:07",
            role,
            "REST.GET.OBJECT",
            "index.html",
            200,
            "5120",
        );
        log += &s3(
            "06/Feb/2019:10:00:08",
            "arn:aws:iam::123456789012:user/publisher",
            "REST.PUT.OBJECT",
            key,
            200,
            "-",
        );
        log += &s3(
            "06/Feb/2019:10:30:00",
            "-",
            "REST.GET.OBJECT",
            key,
            304,
            "-",
        );
        // A line cut short, and a blank line.
        let cut = s3(
            "06/Feb/2019:10:30:01",
            role,
            "REST.GET.OBJECT",
            key,
            206,
            "1",
        );
        log += &cut[..cut.find("GDAL").unwrap()];
        log += "\n\n";

        let access = s3_log(&["/datasets/{dataset}/v{contract}/**"]);
        let mut reads = Vec::new();
        let mut bad = Vec::new();
        let (stats, outcome) =
            read_access_log(&access, log.as_bytes(), |r| reads.push(r), |e| bad.push(e));
        outcome.unwrap();
        reads.sort_by_key(|r| r.burst.first);
        let got = reads
            .iter()
            .map(|r| {
                (
                    r.at_text(),
                    r.burst.requests,
                    r.reader.principal.clone(),
                    r.reader.dataset.as_str(),
                    r.reader.contract.as_str(),
                )
            })
            .collect::<Vec<_>>();
        assert_eq!(
            got,
            vec![
                (
                    "2019-02-06T10:00:03+00:00".to_string(),
                    5,
                    Some(role.to_string()),
                    "roads",
                    "2.0.0"
                ),
                (
                    "2019-02-06T10:10:03+00:00".to_string(),
                    2,
                    Some(role.to_string()),
                    "roads",
                    "2.0.0"
                ),
                (
                    "2019-02-06T10:30:00+00:00".to_string(),
                    1,
                    None,
                    "roads",
                    "2.0.0"
                ),
            ]
        );
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].line, 13, "{bad:?}");
        // One example line of each reason a request was no read, kept for the warnings.
        let e = &stats.examples;
        assert!(
            e.method.is_some() && e.status.is_some() && e.unmatched.is_some(),
            "{e:?}"
        );
        assert_eq!(
            AccessStats {
                examples: NotReadExamples::default(),
                ..stats
            },
            AccessStats {
                examples: NotReadExamples::default(),
                lines: 13,
                malformed: 1,
                requests: 8,
                reads: 3,
                same_read: 5,
                not_read: NotRead {
                    method: 2,
                    status: 1,
                    unmatched: 1,
                    ignored: 0
                },
            }
        );
    }

    #[test]
    fn bursts_run_across_the_files_of_a_scan() {
        let key = "roads/2.0.0/x.parquet";
        let a = s3(
            "06/Feb/2019:23:59:50",
            "-",
            "REST.GET.OBJECT",
            key,
            206,
            "1",
        );
        let b = s3(
            "06/Feb/2019:23:59:40",
            "-",
            "REST.GET.OBJECT",
            key,
            206,
            "1",
        ) + &s3(
            "07/Feb/2019:00:00:20",
            "-",
            "REST.GET.OBJECT",
            key,
            206,
            "1",
        );
        let access = s3_log(&["{dataset}/{contract}/*.parquet"]);
        let mut scan = AccessScan::new(&access);
        let mut reads = Vec::new();
        for file in [a, b] {
            scan.feed(file.as_bytes(), |r| reads.push(r), |e| panic!("{e:?}"))
                .unwrap();
        }
        let stats = scan.finish(|r| reads.push(r));
        assert_eq!(reads.len(), 1, "{reads:?}");
        assert_eq!(
            reads[0].burst.first.to_rfc3339(),
            "2019-02-06T23:59:40+00:00"
        );
        assert_eq!((stats.requests, stats.reads, stats.same_read), (3, 1, 2));
    }

    #[test]
    fn sources_that_cannot_work_are_refused() {
        let bad = |f: LogFormat, k: AccessKeys| {
            let e = AccessLog::compile(f, &k).unwrap_err();
            e.iter()
                .map(|e| format!("{}: {e}", e.key()))
                .collect::<Vec<_>>()
        };
        let s3 = LogFormat::S3Access;
        assert_eq!(
            bad(s3, s3_keys(&[])),
            [
                "path: an access log needs `match` templates (they say which requests are reads \
              of which dataset and version), or else both `dataset` and `contract`"
            ]
        );
        let e = bad(s3, s3_keys(&["/d/{dataset}/**", "/d/{datset}/**"]));
        assert_eq!(e.len(), 2, "every mistake at once: {e:?}");
        assert!(e[0].starts_with("match: ") && e[0].contains("captures no contract"));
        assert!(e[1].contains("column 4"), "{e:?}");
        let e = bad(
            LogFormat::Combined,
            AccessKeys {
                pattern: Some("$status"),
                ..s3_keys(&["{dataset}/{contract}"])
            },
        );
        assert!(
            e[0].starts_with("pattern: ") && e[0].contains("no time"),
            "{e:?}"
        );
        let e = bad(
            s3,
            AccessKeys {
                principal: Some("requestor"),
                ..s3_keys(&["{dataset}/{contract}"])
            },
        );
        assert!(
            e[0].starts_with("principal: ") && e[0].contains("requester"),
            "{e:?}"
        );
        let ok = AccessKeys {
            dataset: Some("roads"),
            contract: Some("2.0.0"),
            ..s3_keys(&[])
        };
        assert!(AccessLog::compile(s3, &ok).is_ok());
    }
}
