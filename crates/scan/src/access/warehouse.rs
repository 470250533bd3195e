//! What the warehouses' access records have in common: Snowflake's `ACCESS_HISTORY`
//! ([`super::snowflake`]), BigQuery's Data Access audit log ([`super::bigquery`]) and
//! Databricks' `system.access.column_lineage` ([`super::databricks`]) are tables exported as
//! JSON Lines or CSV, not request logs. Each record names who read which object (a table, not
//! a path) and which of its columns; this module reads their instants, their CSV records, and
//! makes each object read a [`Request`] for the shared judge, so that templates, bursts and
//! `ignore_principals` work on them as on the other access logs.

use std::borrow::Cow;

use chrono::{DateTime, FixedOffset, NaiveDateTime};

use super::column_sets::interned;
use super::{Columns, Encoding, Fields, Request};
use crate::reads::json_walk::Walk;
use crate::reads::wide;

/// An instant as the warehouses export one: RFC 3339 (`2026-11-27T10:00:00.123Z`, also with a
/// space), Snowflake's default `2026-11-27 10:00:00.123 +0000`, or a time without an offset,
/// which is UTC (Spark's CSV writer, a `TIMESTAMP_NTZ`).
pub(crate) fn instant(text: &str) -> Option<DateTime<FixedOffset>> {
    let text = text.trim();
    if let Some(t) = fixed_layout(text.as_bytes()) {
        return Some(t);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t);
    }
    for format in ["%Y-%m-%d %H:%M:%S%.f %z", "%Y-%m-%dT%H:%M:%S%.f%z"] {
        if let Ok(t) = DateTime::parse_from_str(text, format) {
            return Some(t);
        }
    }
    ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .map(|t| t.and_utc().fixed_offset())
}

/// The layouts every warehouse writes (`YYYY-MM-DD`, `T` or a space, `HH:MM:SS`, a fraction,
/// then `Z`, an offset `+HHMM` or `+HH:MM` after an optional space, or nothing for UTC), read
/// byte by byte: chrono's format parser costs more than the rest of a row. `None` for any
/// other layout, which [`instant`] hands to chrono.
fn fixed_layout(b: &[u8]) -> Option<DateTime<FixedOffset>> {
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        b.get(r)?.iter().try_fold(0u32, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    let sep = |i: usize, c: u8| b.get(i) == Some(&c);
    if !(sep(4, b'-') && sep(7, b'-') && matches!(b.get(10), Some(b'T' | b't' | b' '))) {
        return None;
    }
    if !(sep(13, b':') && sep(16, b':')) {
        return None;
    }
    let date = chrono::NaiveDate::from_ymd_opt(num(0..4)? as i32, num(5..7)?, num(8..10)?)?;
    let mut i = 19;
    let mut nanos = 0u32;
    if sep(i, b'.') {
        i += 1;
        let mut scale = 100_000_000;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            nanos += u32::from(c - b'0') * scale;
            scale /= 10;
            i += 1;
        }
    }
    let time =
        chrono::NaiveTime::from_hms_nano_opt(num(11..13)?, num(14..16)?, num(17..19)?, nanos)?;
    if sep(i, b' ') {
        i += 1;
    }
    let offset = match b.get(i) {
        None => 0,
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let rest = &b[i + 1..];
            let (h, m) = match rest.len() {
                4 => (num(i + 1..i + 3)?, num(i + 3..i + 5)?),
                5 if rest[2] == b':' => (num(i + 1..i + 3)?, num(i + 4..i + 6)?),
                _ => return None,
            };
            let secs = (h * 3600 + m * 60) as i32;
            if sign == b'-' {
                -secs
            } else {
                secs
            }
        }
        _ => return None,
    };
    let offset = FixedOffset::east_opt(offset)?;
    date.and_time(time).and_local_timezone(offset).single()
}

/// The error of a time that [`instant`] cannot read.
pub(crate) fn bad_instant(field: &str, text: &str) -> String {
    format!("`{field}` {text:?} is not a time (RFC 3339, or `YYYY-MM-DD HH:MM:SS[.fff] [+HHMM]`)")
}

/// A request for one object a record read: `GET` of `path` when `object`, else a request of
/// another method (a stage, a function, an entry that reads no table), which the judge counts
/// as no read.
pub(crate) fn request<'a>(
    at: DateTime<FixedOffset>,
    principal: Option<Cow<'a, str>>,
    path: Cow<'a, str>,
    object: bool,
    attributes: Columns,
) -> Request<'a> {
    Request {
        at,
        method: if object { "GET" } else { "OTHER" },
        object,
        path,
        query: None,
        status: Some(200),
        principal: principal.filter(|p| !p.is_empty()),
        client: None,
        fields: Fields {
            line: &[],
            spans: &[],
            names: &[],
            encoding: Encoding::Plain,
        },
        attributes,
    }
}

/// The columns a record names, as a set; an empty list says nothing, so it is `Unknown`
/// (never "none": an attribute must not look unused by mistake).
pub(crate) fn named<'n>(names: impl IntoIterator<Item = Cow<'n, str>>) -> Columns {
    let mut set = Names::default();
    for n in names {
        set.add(n);
    }
    set.columns()
}

/// The set of one column, as [`named`] makes it: a Databricks row names one, and gathering
/// it into a list to sort cost an allocation per row.
pub(crate) fn named_one(name: Cow<'_, str>) -> Columns {
    if name.is_empty() {
        return Columns::Unknown;
    }
    Columns::Named(interned(std::slice::from_ref(&name), None))
}

/// The columns of a record gathered one at a time, as the JSON walk of a row meets them
/// (no list of them is built first); [`named`] is this over a list. Each set is made once
/// per thread ([`interned`]), borrowed names are not copied to look it up.
#[derive(Default)]
pub(crate) struct Names<'a> {
    /// Room for eight names before the heap: a record names a few columns, and a list made
    /// and freed for each was one of the allocations of a row.
    names: smallvec::SmallVec<[Cow<'a, str>; 8]>,
    /// How a name is folded into the set (Snowflake's unquoted identifiers), done only when
    /// a set is made: the names are looked up as written.
    fold: Option<fn(&str) -> Cow<'_, str>>,
}

impl<'a> Names<'a> {
    /// Names that go into the set as `fold` makes them.
    pub(crate) fn folding(fold: fn(&str) -> Cow<'_, str>) -> Names<'a> {
        Names {
            names: smallvec::SmallVec::new(),
            fold: Some(fold),
        }
    }

    pub(crate) fn add(&mut self, name: Cow<'a, str>) {
        if !name.is_empty() {
            self.names.push(name);
        }
    }

    pub(crate) fn columns(mut self) -> Columns {
        if self.names.is_empty() {
            return Columns::Unknown;
        }
        self.names.sort_unstable();
        self.names.dedup();
        Columns::Named(interned(&self.names, self.fold))
    }
}

/// A JSON row to be read by the shared walk ([`Walk`]): the line as text, checked to be
/// UTF-8 once (its strings are then slices of it, checked no more), and the walk at its first
/// value. `None` when the line is no UTF-8: the serde reading says why.
pub(crate) fn json_row(line: &[u8]) -> Option<(&str, Walk<'_>)> {
    let text = std::str::from_utf8(line).ok()?;
    let mut walk = Walk::new(line);
    walk.ws();
    Some((text, walk))
}

/// The members of the object at the walk that a struct of serde's takes: `field` says which
/// field a key is (`None` for a key no field takes: its value is skipped, at nesting
/// `level`), and `each` is handed the walk at the value with the field. `None` where the walk
/// gives up, and for a field met twice, which serde refuses.
pub(crate) fn fields<'a>(
    walk: &mut Walk<'a>,
    level: usize,
    field: impl Fn(&[u8]) -> Option<u8>,
    mut each: impl FnMut(&mut Walk<'a>, u8) -> Option<()>,
) -> Option<()> {
    let mut seen = 0u32;
    walk.members(|w, start, end| {
        let Some(f) = field(&w.b[start..end]) else {
            return w.skip(level);
        };
        if seen & (1 << f) != 0 {
            return None;
        }
        seen |= 1 << f;
        each(w, f)
    })
}

/// The string or `null` at the walk, as serde reads an `Option` of a borrowed string: `None`
/// when it is anything else, or a string with an escape (which serde would unescape).
pub(crate) fn text_or_null<'a>(walk: &mut Walk<'a>, text: &'a str) -> Option<Option<&'a str>> {
    if walk.null() {
        return Some(None);
    }
    let range = walk.plain_string()?;
    Some(Some(&text[range]))
}

/// Whether a line is blank (no record, unless inside a quoted CSV field).
pub(crate) fn blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// What a line did to a CSV file being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fed {
    /// A record is open: a quoted field goes on in the next line.
    Pending,
    /// A blank line between records.
    Blank,
    /// The header was read.
    Header,
    /// A record ended: its fields are the columns asked for ([`CsvRows::get`]).
    Record,
}

/// The records of one CSV file with a header, fed a line at a time (a quoted field may hold
/// newlines: a record then spans lines), read by `csv_core` into one reused buffer: no
/// allocation per record. The columns asked for are found by name in the header, in any
/// case (Snowflake's unloads write `QUERY_START_TIME`, Spark writes `event_time`).
#[derive(Debug)]
pub(crate) struct CsvRows {
    reader: csv_core::Reader,
    out: Vec<u8>,
    ends: Vec<usize>,
    out_len: usize,
    ends_len: usize,
    open: bool,
    /// Whether a plain line is split without csv_core ([`CsvRows::plain`]); off only in the
    /// test that holds the two readings to the same fields.
    split_plain: bool,
    /// Whether the record read was a plain line, its commas kept in `out`.
    delimited: bool,
    wanted: &'static [&'static str],
    /// The header's column of each name asked for; `None` until the header is read.
    at: Option<Vec<Option<usize>>>,
}

// A copy starts a file afresh. csv_core 0.1.13's `Reader::clone` loses the DFA's final states
// (its `Dfa::clone` copies the transitions alone), and a copied reader then ends every record
// at its first byte; the scan copies its reader per file, so a copy is a new reader.
impl Clone for CsvRows {
    fn clone(&self) -> CsvRows {
        CsvRows::new(self.wanted)
    }
}

// The reader and its buffers are per-file scratch: two readers are the same if they look for
// the same columns.
impl PartialEq for CsvRows {
    fn eq(&self, other: &CsvRows) -> bool {
        self.wanted == other.wanted
    }
}

impl CsvRows {
    /// A file whose header must name `wanted` (or at least the first `required` of them).
    pub(crate) fn new(wanted: &'static [&'static str]) -> CsvRows {
        CsvRows {
            reader: csv_core::Reader::new(),
            out: vec![0; 1024],
            ends: vec![0; 32],
            out_len: 0,
            ends_len: 0,
            open: false,
            split_plain: true,
            delimited: false,
            wanted,
            at: None,
        }
    }

    /// Whether the header has been read, and no record is open.
    pub(crate) fn header_read(&self) -> bool {
        self.at.is_some() && !self.open
    }

    /// Whether a record is open: a quoted field goes on in the next line.
    pub(crate) fn open(&self) -> bool {
        self.open
    }

    /// Feed one line (its end trimmed). `Err`: the header lacks a column in `required`
    /// (every line of the file is then that error, so that it is loud).
    pub(crate) fn feed(&mut self, line: &[u8], required: usize) -> Result<Fed, String> {
        if !self.open {
            if blank(line) {
                return Ok(Fed::Blank);
            }
            self.out_len = 0;
            self.ends_len = 0;
            self.delimited = false;
        }
        let mut ended = !self.open && self.split_plain && self.plain(line);
        // An empty input is the end of the data to csv_core, which would end the record.
        'chunks: for chunk in [line, b"\n"]
            .into_iter()
            .filter(|c| !ended && !c.is_empty())
        {
            let mut input = chunk;
            loop {
                let (res, nin, nout, nend) = self.reader.read_record(
                    input,
                    &mut self.out[self.out_len..],
                    &mut self.ends[self.ends_len..],
                );
                input = &input[nin..];
                self.out_len += nout;
                self.ends_len += nend;
                match res {
                    csv_core::ReadRecordResult::InputEmpty => continue 'chunks,
                    csv_core::ReadRecordResult::OutputFull => {
                        let n = self.out.len() * 2;
                        self.out.resize(n, 0);
                    }
                    csv_core::ReadRecordResult::OutputEndsFull => {
                        let n = self.ends.len() * 2;
                        self.ends.resize(n, 0);
                    }
                    csv_core::ReadRecordResult::Record | csv_core::ReadRecordResult::End => {
                        ended = true;
                        break 'chunks;
                    }
                }
            }
        }
        self.open = !ended;
        if self.open {
            return Ok(Fed::Pending);
        }
        let Some(at) = &self.at else {
            let names: Vec<String> = (0..self.ends_len)
                .filter_map(|i| self.field(i))
                .map(|f| String::from_utf8_lossy(f).trim().to_ascii_lowercase())
                .collect();
            let at: Vec<Option<usize>> = self
                .wanted
                .iter()
                .map(|w| names.iter().position(|n| n == w))
                .collect();
            let missing = self.missing(&at, required);
            self.at = Some(at);
            return match missing {
                Some(e) => Err(e),
                None => Ok(Fed::Header),
            };
        };
        match self.missing(at, required) {
            Some(e) => Err(e),
            None => Ok(Fed::Record),
        }
    }

    fn missing(&self, at: &[Option<usize>], required: usize) -> Option<String> {
        let missing: Vec<&str> = self
            .wanted
            .iter()
            .zip(at)
            .take(required)
            .filter(|(_, i)| i.is_none())
            .map(|(w, _)| *w)
            .collect();
        (!missing.is_empty()).then(|| {
            format!(
                "the CSV header (the file's first line) has no column {}",
                missing.join(", ")
            )
        })
    }

    /// A whole record on one line with no quote and no carriage return (which ends a record
    /// to csv_core): its fields are what lies between its commas, as csv_core reads them. The
    /// line is kept whole with the place of each comma, not passed byte by byte through
    /// csv_core's machine, which was a third of a Databricks scan (two dozen columns a row).
    /// The commas and the bytes that forbid this are found in one pass, sixteen bytes at a
    /// time ([`wide::csv_marks`]). `false`, and nothing kept, for a line that has a quote or
    /// a carriage return: csv_core reads it. csv_core is still at the start of a record, as
    /// after the last one.
    fn plain(&mut self, line: &[u8]) -> bool {
        let mut k = 0;
        let mut at = 0;
        while at < line.len() {
            // The last bytes, fewer than sixteen, are classed alike, padded with zeros
            // (neither a comma nor a stop).
            let marks = wide::csv_marks(line, at).or_else(|| {
                let mut last = [0u8; 16];
                last[..line.len() - at].copy_from_slice(&line[at..]);
                wide::csv_marks(&last, 0)
            });
            let Some((commas, stops)) = marks else { break };
            if stops != 0 {
                return false;
            }
            // Room for a comma per byte of the block and the line's end, so that the loop
            // checks no bound.
            if self.ends.len() < k + 17 {
                self.ends.resize((2 * self.ends.len()).max(k + 17), 0);
            }
            let mut m = commas;
            while m != 0 {
                self.ends[k] = at + m.trailing_zeros() as usize;
                k += 1;
                m &= m - 1;
            }
            at += 16;
        }
        if self.ends.len() <= k {
            self.ends.resize(k + 1, 0);
        }
        self.ends[k] = line.len();
        k += 1;
        if self.out.len() < line.len() {
            self.out.resize(line.len(), 0);
        }
        self.out[..line.len()].copy_from_slice(line);
        self.out_len = line.len();
        self.ends_len = k;
        self.delimited = true;
        true
    }

    /// Field `i` of the record read: csv_core writes the fields one after another, a plain
    /// line keeps its commas between them.
    fn field(&self, i: usize) -> Option<&[u8]> {
        if i >= self.ends_len {
            return None;
        }
        let start = match (i, self.delimited) {
            (0, _) => 0,
            (_, true) => self.ends[i - 1] + 1,
            (_, false) => self.ends[i - 1],
        };
        self.out.get(start..self.ends[i])
    }

    /// The value of the `n`th column asked for in the record just read; `None` when the
    /// header has no such column or the field is empty (Spark writes a null so).
    pub(crate) fn get(&self, n: usize) -> Option<Cow<'_, str>> {
        let i = (*self.at.as_ref()?.get(n)?)?;
        let f = self.field(i)?;
        (!f.is_empty()).then(|| super::text::lossy(f))
    }
}

/// The helpers the formats' tests share: a file read through a compiled source, and a
/// parse described as text. A module of its own, so that the reader files do not import
/// the configuration's compiler outside their tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Columns, Request};

    /// One read as the format tests compare it: principal, dataset, contract, last request,
    /// columns.
    pub(crate) type ReadRow = (Option<String>, String, String, String, Columns);

    /// What a source of `format` with one `template` and a 60-second burst reads of `file`: its
    /// reads sorted by first request then dataset, its counts, and the lines it cannot read.
    pub(crate) fn reads_of(
        format: crate::LogFormat,
        template: &str,
        file: &[u8],
    ) -> (
        Vec<ReadRow>,
        super::super::AccessStats,
        Result<(), super::super::AccessError>,
        Vec<super::super::LineError>,
    ) {
        let keys = super::super::AccessKeys {
            templates: vec![template],
            same_read_seconds: 60,
            ..super::super::AccessKeys::default()
        };
        let log = super::super::AccessLog::compile(format, &keys).unwrap();
        let mut reads = Vec::new();
        let mut bad = Vec::new();
        let (stats, outcome) =
            super::super::read_access_log(&log, file, |r| reads.push(r), |e| bad.push(e));
        reads.sort_by(|a, b| {
            (a.burst.first, &a.reader.dataset).cmp(&(b.burst.first, &b.reader.dataset))
        });
        let rows = reads
            .into_iter()
            .map(|r| {
                (
                    r.reader.principal.clone(),
                    r.reader.dataset.clone(),
                    r.reader.contract.clone(),
                    r.at_text(),
                    r.attributes,
                )
            })
            .collect();
        (rows, stats, outcome, bad)
    }

    /// Each request of a parse in full, or the error.
    pub(crate) type Whole = Result<Vec<String>, String>;

    /// A parse as the fast paths' tests compare it: every field of each request (its
    /// instant with its offset, method, path, principal, columns, ...), or the error.
    pub(crate) fn whole(parsed: Result<super::super::Parsed<'_>, String>) -> Whole {
        Ok(match parsed? {
            super::super::Parsed::Skip => vec!["skip".into()],
            super::super::Parsed::Request(r) => vec![format!("{r:?}")],
            super::super::Parsed::Requests(v) => v.iter().map(|r| format!("{r:?}")).collect(),
        })
    }

    /// A line as the fast paths' tests hold it: what the reader answered (`got`), what serde
    /// alone answers (which a blank line never reaches: it is skipped), and whether the walk
    /// took the line (`walked`), which must then have given serde's answer.
    pub(crate) fn against_serde(
        line: &str,
        got: Whole,
        serde: impl FnOnce() -> Whole,
        walked: Option<Whole>,
    ) -> (Whole, Whole, bool) {
        let want = if line.trim().is_empty() {
            Ok(vec!["skip".to_string()])
        } else {
            serde()
        };
        if let Some(walked) = &walked {
            assert_eq!(walked, &want, "the walk differs from serde on {line}");
        }
        (got, want, walked.is_some())
    }

    /// The requests of a parse, for the tests: (instant, principal, path, method, columns).
    pub(crate) fn described(parsed: Result<super::super::Parsed<'_>, String>) -> Vec<String> {
        let list = |r: &Request| {
            format!(
                "{} {:?} {} {} {:?}",
                r.at.to_rfc3339(),
                r.principal.as_deref(),
                r.method,
                r.path,
                r.attributes
            )
        };
        match parsed {
            Ok(super::super::Parsed::Skip) => vec!["skip".into()],
            Ok(super::super::Parsed::Request(r)) => vec![list(&r)],
            Ok(super::super::Parsed::Requests(v)) => v.iter().map(list).collect(),
            Err(e) => vec![format!("error: {e}")],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every record of `lines` fed to CSV rows that split plain lines themselves (`plain`)
    /// or not: each line's outcome, and each record's fields.
    fn records(lines: &[&[u8]], plain: bool) -> Vec<(String, Vec<Vec<u8>>)> {
        const WANTED: &[&str] = &["a", "b"];
        let mut rows = CsvRows::new(WANTED);
        rows.split_plain = plain;
        lines
            .iter()
            .map(|l| {
                let fed = format!("{:?}", rows.feed(l, 0));
                let fields = match rows.open {
                    true => Vec::new(),
                    false => (0..rows.ends_len)
                        .map(|i| rows.field(i).unwrap_or_default().to_vec())
                        .collect(),
                };
                (fed, fields)
            })
            .collect()
    }

    #[test]
    fn a_plain_line_is_split_into_the_fields_csv_core_reads() {
        // Spark's CSV writer (Databricks' column lineage export): empty fields for nulls, a
        // quoted field only where a value holds a comma, a quote or a line end.
        let lines: [&[u8]; 13] = [
            b"a,b,c",
            // Commas on both sides of the sixteenth byte, and in the bytes after the last
            // block of sixteen.
            b"0123456789abcde,f,0123456789abcdef,x,y",
            // A quote or a carriage return past the first sixteen bytes.
            b"0123456789abcdef,0123456789,\"q\"",
            b"0123456789abcdef0123456789abcdef,a\rb",
            b"0123456789abcdef0123456789abcdef,a\"",
            b"1,,3,,",
            b"",
            b"x",
            b",",
            b"q,\"he said \"\"hi\"\"\",z",
            b"open,\"a",
            b"b\",end",
            b"cr\rin,the middle",
        ];
        assert_eq!(records(&lines, true), records(&lines, false));
        assert_eq!(
            records(&lines, true)[1].1,
            [
                &b"0123456789abcde"[..],
                b"f",
                b"0123456789abcdef",
                b"x",
                b"y"
            ]
        );
        assert_eq!(
            records(&lines, true)[5].1,
            [b"1".to_vec(), vec![], b"3".to_vec(), vec![], vec![]]
        );
    }

    proptest::proptest! {
        #[test]
        fn any_line_is_read_alike_split_plain_or_not(
            // Past sixteen bytes, so that lines are split a block at a time and then byte by
            // byte, with a quote or a carriage return in either part.
            lines in proptest::collection::vec("[a,\" \r\u{e9}]{0,40}", 1..8)
        ) {
            let lines: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
            proptest::prop_assert_eq!(records(&lines, true), records(&lines, false));
        }
    }

    #[test]
    fn instants_as_the_warehouses_write_them() {
        let utc = |t: &str| instant(t).map(|t| t.to_rfc3339());
        // Snowflake's default TIMESTAMP_LTZ output, as its ACCESS_HISTORY reference shows it.
        assert_eq!(
            utc("2022-01-25 16:17:47.388 +0000").as_deref(),
            Some("2022-01-25T16:17:47.388+00:00")
        );
        assert_eq!(
            utc("2022-01-25 08:17:47.388 -0800").as_deref(),
            Some("2022-01-25T08:17:47.388-08:00")
        );
        // Cloud Logging's LogEntry timestamp (nanoseconds), Spark's CSV writer.
        assert_eq!(
            utc("2026-11-27T10:00:00.123456789Z").as_deref(),
            Some("2026-11-27T10:00:00.123456789+00:00")
        );
        assert_eq!(
            utc("2026-11-27T10:00:00.000+01:00").as_deref(),
            Some("2026-11-27T10:00:00+01:00")
        );
        assert_eq!(
            utc("2026-11-27 10:00:00").as_deref(),
            Some("2026-11-27T10:00:00+00:00")
        );
        assert_eq!(utc("27/Nov/2026"), None);
        assert_eq!(utc("2026-11-27 25:00:00"), None);
        assert_eq!(utc("2026-02-30T10:00:00Z"), None);
        // The byte reader and chrono agree wherever the byte reader answers.
        for t in [
            "2026-11-27T10:00:00Z",
            "2026-11-27 10:00:00.5+05:30",
            "2026-11-27T10:00:00.000000001-0800",
            "2026-11-27 10:00:00.123 +0000",
            "2026-11-27T10:00:00",
        ] {
            let chrono = DateTime::parse_from_rfc3339(t)
                .or_else(|_| DateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S%.f %z"))
                .or_else(|_| DateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f%z"))
                .ok()
                .or_else(|| {
                    NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f")
                        .ok()
                        .map(|t| t.and_utc().fixed_offset())
                });
            let fast = fixed_layout(t.as_bytes());
            assert!(fast.is_some(), "{t}");
            assert_eq!(fast, chrono, "{t}");
            assert_eq!(
                fast.map(|f| f.offset().local_minus_utc()),
                chrono.map(|c| c.offset().local_minus_utc()),
                "{t}"
            );
        }
    }

    #[test]
    fn csv_records_span_lines_inside_quotes_and_columns_are_found_by_name() {
        let mut rows = CsvRows::new(&["b", "a", "c"]);
        let mut got = Vec::new();
        for line in ["A,B", "", "1,\"two", "", "lines\"", "x,\"y\"\"z\""] {
            match rows.feed(line.as_bytes(), 2).unwrap() {
                Fed::Record => got.push((
                    rows.get(0).map(Cow::into_owned),
                    rows.get(1).map(Cow::into_owned),
                    rows.get(2).map(Cow::into_owned),
                )),
                other => got.push((Some(format!("{other:?}")), None, None)),
            }
        }
        let s = |t: &str| Some(t.to_string());
        assert_eq!(
            got,
            vec![
                (s("Header"), None, None),
                (s("Blank"), None, None),
                (s("Pending"), None, None),
                (s("Pending"), None, None),
                (s("two\n\nlines"), s("1"), None),
                (s("y\"z"), s("x"), None),
            ]
        );
        // A copy (the scan copies its reader for each file) reads a file of its own.
        let mut copy = CsvRows::new(&["a"]).clone();
        assert_eq!(copy.feed(b"a", 1), Ok(Fed::Header));
        assert_eq!(copy.feed(b"1", 1), Ok(Fed::Record));
        assert_eq!(copy.get(0).as_deref(), Some("1"));
        let mut bad = CsvRows::new(&["b", "a"]);
        assert!(bad.feed(b"a,c", 2).unwrap_err().contains("no column b"));
        assert!(bad.feed(b"1,2", 2).is_err(), "every row says so");
    }
}

#[cfg(test)]
mod no_panic {
    use super::super::{bigquery::BigQuery, databricks::Databricks, snowflake::Snowflake};

    /// Lines of each format cut, spliced and garbled: every one is a request, a skip or an
    /// error with a reason, never a panic.
    fn every_reader(lines: &[Vec<u8>]) {
        let mut s = Snowflake::new();
        let mut b = BigQuery::new();
        let mut d = Databricks::new();
        for line in lines {
            let _ = s.parse(line);
            let _ = b.parse(line);
            let _ = d.parse(line);
        }
    }

    const SEEDS: [&str; 3] = [
        r#"{"QUERY_START_TIME":"2026-11-27 10:00:00.120 +0000","USER_NAME":"JSMITH","BASE_OBJECTS_ACCESSED":[{"columns":[{"columnId":1,"columnName":"NAME"}],"objectDomain":"Table","objectName":"GIS.PUBLIC.ROADS_V1"}]}"#,
        r#"{"protoPayload":{"authenticationInfo":{"principalEmail":"a@b.org"},"resourceName":"projects/p/datasets/d/tables/t","metadata":{"tableDataRead":{"fields":["a.b","c"]}}},"timestamp":"2026-11-27T10:00:00Z"}"#,
        "main.gis.roads_v1,name,TABLE,a@b.org,2026-11-27T10:00:00.000+05:30",
    ];

    proptest::proptest! {
        #[test]
        fn any_bytes_are_answered_without_a_panic(
            lines in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..80), 0..8)
        ) {
            every_reader(&lines);
        }

        #[test]
        fn cut_and_garbled_rows_are_answered_without_a_panic(
            seed in 0usize..3,
            cut in 0usize..400,
            at in 0usize..400,
            byte in proptest::sample::select(b"\",:{}[]. -+Z\\0T9\n".to_vec()),
        ) {
            let mut line = SEEDS[seed].as_bytes().to_vec();
            let at = at % (line.len() + 1);
            line.insert(at, byte);
            line.truncate(cut.min(line.len()));
            let header = b"source_table_full_name,source_column_name,source_type,created_by,event_time".to_vec();
            every_reader(&[header, line.clone(), line]);
        }
    }
}

#[cfg(test)]
mod sets {
    use crate::access::NameSet;
    use std::borrow::Cow;

    use super::{named, named_one, Columns, Names};
    use crate::access::column_sets::SETS_KEPT;

    fn set(names: &[&str]) -> Columns {
        named(names.iter().map(|n| Cow::Borrowed(*n)))
    }

    fn shared(a: &Columns, b: &Columns) -> bool {
        match (a, b) {
            (Columns::Named(a), Columns::Named(b)) => NameSet::ptr_eq(a, b),
            _ => false,
        }
    }

    /// A set met again is the one made before; its names are sorted and once each, whatever
    /// the record's order; two lists of names never share a set because their names run
    /// together (`ab` is not `a`, `b`); nothing named is `Unknown`, never "none".
    #[test]
    fn each_set_is_made_once_and_is_the_set_of_its_names() {
        let first = set(&["name", "geom", "name"]);
        let again = set(&["geom", "name"]);
        assert_eq!(first, Columns::named(["geom".into(), "name".into()]));
        assert!(
            shared(&first, &again),
            "the second record shares the first's set"
        );
        let ab = set(&["ab"]);
        let a_b = set(&["a", "b"]);
        assert_eq!(ab, Columns::named(["ab".into()]));
        assert_eq!(a_b, Columns::named(["a".into(), "b".into()]));
        assert_eq!(set(&[]), Columns::Unknown);
        assert_eq!(set(&[""]), Columns::Unknown);
        // The scan's sets are kept, never counted: a count moved between the cores.
        let kept = |c: &Columns| matches!(c, Columns::Named(s) if s.is_kept());
        assert!(kept(&first) && kept(&ab), "{first:?} {ab:?}");
        assert!(
            kept(&first.clone().union(set(&["pop_est"]))),
            "a union is kept too"
        );
        // One name alone (a Databricks row) is the same shared set as in a list.
        let one = named_one("ab".into());
        assert!(
            shared(&one, &ab),
            "one name shares the set of the list of it"
        );
        assert_eq!(named_one("".into()), Columns::Unknown);
    }

    /// The union of the same two shared sets is made once and shared in turn; a set that
    /// adds nothing leaves the burst's set as it was; each union is the set of both.
    #[test]
    fn unions_of_shared_sets_are_made_once_and_hold_both() {
        let (geom, name) = (set(&["geom"]), set(&["name"]));
        let unite = |a: &Columns, b: &Columns| a.clone().union(b.clone());
        let first = unite(&geom, &name);
        let again = unite(&geom, &name);
        assert_eq!(first, Columns::named(["geom".into(), "name".into()]));
        assert!(
            shared(&first, &again),
            "the second burst shares the first's union"
        );
        let same = unite(&first, &set(&["name"]));
        assert!(
            shared(&same, &first),
            "a set that adds nothing changes nothing"
        );
        let three = unite(&first, &set(&["pop_est", "geom"]));
        let want = ["geom", "name", "pop_est"].map(String::from);
        assert_eq!(three, Columns::named(want));
        assert_eq!(
            geom,
            Columns::named(["geom".into()]),
            "the sets united are unchanged"
        );
    }

    /// Past the unions a thread keeps, they are dropped and made again: the answers stay.
    #[test]
    fn past_the_unions_kept_each_union_stays_the_set_of_both() {
        let geom = set(&["geom"]);
        for i in 0..crate::access::KEPT_BY_ADDRESS + 10 {
            let name = format!("c{i}");
            let got = geom.clone().union(named([Cow::Owned(name.clone())]));
            assert_eq!(got, Columns::named(["geom".into(), name]), "{i}");
        }
    }

    /// A union of names the thread already holds a set of is that set: the unions are
    /// dropped when their table is full and made again, and a kept set made anew each time
    /// would be kept twice. Sets made apart (a new address each) make a new entry each time.
    #[test]
    fn a_union_made_again_is_the_set_held_for_its_names() {
        let first = set(&["geom", "c0"]);
        for i in 0..crate::access::KEPT_BY_ADDRESS + 10 {
            let apart = |n: &str| Columns::named([n.to_string()]);
            let again = apart("geom").union(apart("c0"));
            assert!(shared(&first, &again), "{i}: {first:?} {again:?}");
        }
    }

    /// Names folded into their set (Snowflake's) and the same names taken as written are two
    /// sets, whichever was made first on the thread.
    #[test]
    fn a_folded_set_is_not_the_set_of_the_names_as_written() {
        let lower = |n: &str| Cow::Owned(n.to_ascii_lowercase());
        let folded = |names: &[&'static str]| {
            let mut set = Names::folding(lower);
            for n in names {
                set.add(Cow::Borrowed(*n));
            }
            set.columns()
        };
        assert_eq!(
            folded(&["GEOM", "NAME", "name"]),
            Columns::named(["geom".into(), "name".into()])
        );
        assert_eq!(
            set(&["GEOM", "NAME"]),
            Columns::named(["GEOM".into(), "NAME".into()])
        );
        assert_eq!(
            folded(&["NAME", "GEOM"]),
            Columns::named(["geom".into(), "name".into()])
        );
    }

    /// A burst's reads together (`Columns::take_in`) make a set of their own: the shared
    /// set the first read holds is not changed under the other reads that hold it.
    #[test]
    fn a_union_leaves_the_shared_set_as_it_was() {
        let mut burst = set(&["geom", "name"]);
        burst.take_in(set(&["pop_est"]));
        assert_eq!(
            burst,
            Columns::named(["geom".into(), "name".into(), "pop_est".into()])
        );
        assert_eq!(
            set(&["name", "geom"]),
            Columns::named(["geom".into(), "name".into()])
        );
    }

    /// Past the sets a thread keeps, they are dropped and made again: the answers stay.
    #[test]
    fn past_the_sets_kept_each_answer_stays_the_set_of_its_names() {
        let name = |i: usize| format!("c{i}");
        for i in 0..SETS_KEPT + 10 {
            let got = named([Cow::Owned(name(i)), Cow::Borrowed("geom")]);
            assert_eq!(got, Columns::named([name(i), "geom".into()]), "{i}");
        }
        let early = named([Cow::Owned(name(3)), Cow::Borrowed("geom")]);
        assert_eq!(early, Columns::named([name(3), "geom".into()]));
    }
}
