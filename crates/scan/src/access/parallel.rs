//! An access log read on every core: the file is cut into chunks at line ends, each chunk
//! parsed and judged on whichever thread takes it, and the hits handed on in the file's order
//! on the calling thread, where the bursts fold them (the crate's one block scheduler,
//! `crate::schedule`). Parsing and judging are most of a line's cost and depend on the line
//! alone; the bursts depend on order, so they stay on one thread, which parses a chunk
//! itself only while no chunk is ready to be folded.
//!
//! A CSV record may hold line ends inside a quoted field, so a chunk may start inside one.
//! Each chunk is parsed as if it started a record, and says whether its last record was still
//! open at its end. Only then was the next chunk's start no record's start: that chunk is
//! parsed again, in order, by the reader that holds the open record. A byte count of quotes
//! could not decide it ahead: a quote inside an unquoted field is no quote to CSV.
//!
//! The hits, malformed lines and counts are the same, in the same order, as a read of one
//! line at a time ([`super::AccessLog::hits_one_by_one`]), which the tests hold. A format
//! whose lines depend on earlier ones beyond that (CloudFront's `#Fields` headers, pgaudit's
//! sessions) is read one line at a time.

use std::borrow::Cow;
use std::io::{BufRead, Read as _};

use super::{
    AccessError, AccessLog, AccessStats, Columns, Dialect, Hit, KeptMatches, LineError, Parsed,
};
use crate::schedule::{self, Piece, Sizes, Stop, Work};

/// How a file is taken: the bytes read first (to find the first line, and to tell a small
/// file), the chunk size, the threads (the calling thread one of them), and the size under
/// which a file is read on the calling thread alone. Small in tests, so that every boundary
/// is crossed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Split {
    pub block: usize,
    pub chunk: usize,
    pub workers: usize,
    pub min_parallel: usize,
}

impl Split {
    /// Chunks of 512 KiB on every core, for a file of 1 MiB or more. Only that 1 MiB is read
    /// first: the scheduler copies what was read first into its chunks.
    pub(crate) fn machine() -> Split {
        Split {
            block: 1 << 20,
            chunk: 512 << 10,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            min_parallel: 1 << 20,
        }
    }
}

/// What a chunk came to: its hits and malformed lines in order (numbered from the chunk's
/// first line), its counts, its physical lines, and the reader when a record was still open
/// at its end.
struct Chunk {
    events: Vec<Event>,
    /// The text of every hit of the chunk, one after another: a hit made on a worker and
    /// folded on the calling thread was five strings, each allocated on one thread and freed
    /// on the other, and with glibc the threads then waited on each other's arena lock.
    text: String,
    stats: AccessStats,
    lines: u64,
    open: Option<Dialect>,
}

/// A hit whose text is in its chunk's [`Chunk::text`], each field by its place there.
struct Packed {
    at: chrono::DateTime<chrono::FixedOffset>,
    principal: Option<(usize, usize)>,
    client: (usize, usize),
    object: (usize, usize),
    dataset: (usize, usize),
    contract: (usize, usize),
    attributes: Columns,
}

impl Packed {
    /// The hit of `hit`, its text put at the end of `text`; its attributes are the caller's
    /// to move in (`hit` borrows them from its request).
    fn of(hit: &Hit<'_>, text: &mut String) -> Packed {
        let mut put = |s: &str| {
            text.push_str(s);
            (text.len() - s.len(), text.len())
        };
        Packed {
            at: hit.at,
            principal: hit.principal.as_deref().map(&mut put),
            client: put(&hit.client),
            object: put(&hit.object),
            dataset: put(&hit.dataset),
            contract: put(&hit.contract),
            attributes: Columns::Unknown,
        }
    }

    /// The hit again, its text borrowed from its chunk's and its attributes moved out.
    fn hit(self, text: &str) -> Hit<'_> {
        let at = |(a, b): (usize, usize)| Cow::Borrowed(&text[a..b]);
        Hit {
            at: self.at,
            principal: self.principal.map(at),
            client: at(self.client),
            object: at(self.object),
            dataset: at(self.dataset),
            contract: at(self.contract),
            attributes: Cow::Owned(self.attributes),
        }
    }
}

enum Event {
    Hit(Packed),
    Malformed {
        line: u64,
        reason: String,
    },
    /// The file cannot be read on (a CloudFront header; CloudFront is read one line at a
    /// time, but a format that stops is not to be read on silently).
    Stop(AccessError),
}

/// [`AccessLog::hits`] on every core, where the format allows: `Err(input)`, unread, when it
/// does not (the caller reads one line at a time).
pub(crate) fn hits<R: BufRead + Send>(
    log: &AccessLog,
    mut input: R,
    split: Split,
    stats: &mut AccessStats,
    on_hit: &mut impl FnMut(Hit<'_>),
    on_malformed: &mut impl FnMut(LineError),
) -> Result<Result<(), AccessError>, R> {
    if !log.dialect.may_cut() {
        return Err(input);
    }
    let mut bytes = Vec::new();
    let eof = match fill(&mut input, &mut bytes, split.block) {
        Ok(eof) => eof,
        Err(source) => return Ok(Err(AccessError::Io { line: 1, source })),
    };
    // The first line that is not blank: a CSV file's header, a Snowflake file's first row
    // (which says JSON or CSV). Each chunk after it starts from a reader that has read it.
    let prime = first_line(&bytes).filter(|(_, line)| {
        let mut d = log.dialect.clone();
        let _ = d.parse_line(trimmed(line), 1);
        d.cut_ready()
    });
    let small = eof && bytes.len() < split.min_parallel;
    let parquet = bytes.starts_with(b"PAR1");
    let (Some((prime_end, prime)), false, false) = (prime, small, parquet) else {
        // One line at a time, from the bytes already taken.
        let rest = std::io::Cursor::new(bytes).chain(input);
        let rest = std::io::BufReader::new(rest);
        return Ok(log.hits_one_by_one(rest, stats, on_hit, on_malformed));
    };
    let prime = prime.to_vec();
    let reader = Reader {
        log,
        prime: &prime,
        prime_end,
    };
    let mut sink = Sink {
        stats,
        on_hit,
        on_malformed,
        before: 0,
        carry: None,
    };
    let sizes = Sizes {
        piece: split.chunk,
        threads: split.workers,
    };
    // The bytes taken already are the file's start.
    let file = std::io::Cursor::new(bytes).chain(input);
    let outcome = schedule::run(
        file,
        sizes,
        &|b| memchr::memrchr(b'\n', b),
        &reader,
        &mut |piece, chunk| sink.take(&reader, piece, chunk),
    );
    Ok(match outcome.result {
        Ok(()) => Ok(()),
        Err(Stop::HandOut(error)) => Err(error),
        // What was handed out before counts, and the error names the next line.
        Err(Stop::Read(source)) => Err(AccessError::Io {
            line: sink.before + 1,
            source,
        }),
    })
}

struct Reader<'a> {
    log: &'a AccessLog,
    /// The file's first non-blank line, and the offset just after it.
    prime: &'a [u8],
    prime_end: usize,
}

impl Work for Reader<'_> {
    type State = ();
    type Out = Chunk;

    fn start(&self) {}

    /// A chunk past the first line is read by a reader that has read that line.
    fn piece(&self, _: &mut (), chunk: Piece<'_>) -> Chunk {
        let mut dialect = self.log.dialect.clone();
        if chunk.offset >= self.prime_end {
            let _ = dialect.parse_line(trimmed(self.prime), 1);
        }
        self.parse(chunk.bytes, dialect)
    }
}

impl Reader<'_> {
    /// The events of one chunk, read by `dialect`.
    fn parse(&self, chunk: &[u8], mut dialect: Dialect) -> Chunk {
        let log = self.log;
        let mut out = Chunk {
            events: Vec::new(),
            text: String::new(),
            stats: AccessStats::default(),
            lines: 0,
            open: None,
        };
        let mut kept = KeptMatches::default();
        let mut judge = |mut req: super::Request<'_>, line: &[u8], out: &mut Chunk| match log
            .judge(&req, &mut kept)
        {
            Ok(hit) => {
                out.stats.requests += 1;
                // The attributes are moved, not copied: the request is done with.
                let mut packed = Packed::of(&hit, &mut out.text);
                packed.attributes = std::mem::take(&mut req.attributes);
                out.events.push(Event::Hit(packed));
            }
            Err(reason) => {
                out.stats.not_read.count(reason);
                out.stats.examples.keep(reason, &req.path, line);
            }
        };
        let mut rest = chunk;
        while !rest.is_empty() {
            // memchr, not a byte-by-byte split: a line is hundreds of bytes.
            let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
            let (raw, tail) = rest.split_at(end);
            rest = tail;
            out.lines += 1;
            let line = trimmed(raw);
            match dialect.parse_line(line, out.lines) {
                Err(error) => {
                    out.events.push(Event::Stop(error));
                    return out;
                }
                Ok(Ok(Parsed::Skip)) => {}
                Ok(Ok(Parsed::Request(req))) => {
                    out.stats.lines += 1;
                    judge(req, line, &mut out);
                }
                Ok(Ok(Parsed::Requests(reqs))) => {
                    out.stats.lines += 1;
                    for req in reqs {
                        judge(req, line, &mut out);
                    }
                }
                Ok(Err(reason)) => {
                    out.stats.lines += 1;
                    out.stats.malformed += 1;
                    out.events.push(Event::Malformed {
                        line: out.lines,
                        reason,
                    });
                }
            }
        }
        if dialect.open_record() {
            out.open = Some(dialect);
        }
        out
    }
}

/// Where the chunks go, in the file's order.
struct Sink<'a, H, M> {
    stats: &'a mut AccessStats,
    on_hit: &'a mut H,
    on_malformed: &'a mut M,
    /// Physical lines handed out so far.
    before: u64,
    /// The reader whose record was open at the end of the last chunk handed out.
    carry: Option<Dialect>,
}

impl<H: FnMut(Hit<'_>), M: FnMut(LineError)> Sink<'_, H, M> {
    /// Hand out a chunk, the chunks before it handed out; a chunk that started inside a
    /// record left open by the one before is parsed again by that one's reader.
    fn take(
        &mut self,
        reader: &Reader<'_>,
        piece: Piece<'_>,
        chunk: Chunk,
    ) -> Result<(), AccessError> {
        let chunk = match self.carry.take() {
            Some(open) => reader.parse(piece.bytes, open),
            None => chunk,
        };
        self.carry = chunk.open;
        self.stats.add(&chunk.stats);
        let text = chunk.text;
        for e in chunk.events {
            match e {
                Event::Hit(hit) => (self.on_hit)(hit.hit(&text)),
                Event::Malformed { line, reason } => (self.on_malformed)(LineError {
                    line: self.before + line,
                    reason,
                }),
                Event::Stop(error) => return Err(error),
            }
        }
        self.before += chunk.lines;
        Ok(())
    }
}

/// Read from `input` until `buf` holds `want` bytes or the input ends (`true`). Into the
/// vector's spare room, which `read_to_end` does not zero first as a `resize` would.
fn fill(input: &mut impl BufRead, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    let Some(need) = want.checked_sub(buf.len()).filter(|&n| n > 0) else {
        return Ok(false);
    };
    buf.reserve_exact(need);
    let got = input.by_ref().take(need as u64).read_to_end(buf)?;
    Ok(got < need)
}

/// A line without its end (`\n`, `\r\n`).
fn trimmed(mut line: &[u8]) -> &[u8] {
    while let [rest @ .., b'\n' | b'\r'] = line {
        line = rest;
    }
    line
}

/// The first line of `bytes` that is not blank, with the offset just after it; `None` when
/// the bytes hold no whole one.
fn first_line(bytes: &[u8]) -> Option<(usize, &[u8])> {
    let mut at = 0;
    for raw in bytes.split_inclusive(|&b| b == b'\n') {
        at += raw.len();
        if !raw.ends_with(b"\n") {
            return None;
        }
        if !raw.iter().all(u8::is_ascii_whitespace) {
            return Some((at, raw));
        }
    }
    None
}

#[cfg(test)]
#[path = "parallel_tests.rs"]
mod tests;
