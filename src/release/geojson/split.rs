//! The structural pre-scan that cuts a GeoJSON file into pieces the parser can take apart.
//!
//! A file is read in windows (never whole), and each window is scanned for the boundaries of
//! its units: the members of a FeatureCollection's `features` array, and whole texts of a
//! newline-delimited or RFC 8142 sequence. The scan looks only at the three bytes that can
//! end an object — `"`, `{` and `}` — with `memchr3`, and inside a string only at `"` and
//! `\`: coordinates, which are most of a file, are skipped at the speed of memory. Square
//! brackets are not counted: in valid JSON the `}` that brings the brace depth back to where
//! an object began closes that object, and a file that is not valid JSON is caught by the
//! parser of the piece (then the whole file is read again by the sequential reader, which
//! gives the error and its location).
//!
//! What the scan hands on is a [`Batch`]: either a run of consecutive features, copied with
//! the separators between them and wrapped as `[[ … ]]` (so that the parser meets them at the
//! same nesting depth as inside `{"features":[ … ]}`, and its depth limit cuts at the same
//! place), or a list of whole texts. A collection's own members (`type`, `crs`, foreign
//! members) are kept as a *skeleton*: the text with its `features` array emptied, parsed like
//! any other text. Everything the scan skips between pieces (whitespace, one comma, record
//! separators) it checks itself; everything else the parser checks, so the pieces together
//! are exactly the file.

use std::io::Read;

/// Bytes read from the file at a time.
pub(super) const WINDOW: usize = 2 << 20;
/// A batch is handed on once it holds this many bytes.
pub(super) const BATCH: usize = 128 << 10;
/// A single unit (a feature or a text) larger than this, or a skeleton larger than this, is
/// left to the sequential reader, which streams it in bounded memory.
pub(super) const MAX_UNIT: usize = 8 << 20;

/// A piece of the file for one parser.
pub(super) enum Batch {
    /// Consecutive features of one collection as `[[f1,f2,…]]`.
    Features(Vec<u8>),
    /// Whole texts (a sequence's texts, or a collection's skeleton): the bytes and where each
    /// text is in them.
    Texts(Vec<u8>, Vec<(usize, usize)>),
}

/// Why the pre-scan gave up: the sequential reader then reads the file from the start.
#[derive(Debug)]
pub(super) enum GiveUp {
    /// Something the scan does not split (not valid JSON, a unit too large, a document that
    /// is not an object, …): the sequential reader decides what it is.
    Unsplittable,
    Io,
}

/// Where a scan of an object stopped.
enum Stop {
    /// Just after the `}` closing the object.
    End(usize),
    /// Just after the `[` opening the object's `features` array.
    Features(usize),
    /// The window ends first.
    More,
}

/// The end (just after the closing quote) of the string whose content starts at `i`.
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let at = i + memchr::memchr2(b'"', b'\\', b.get(i..)?)?;
        if b[at] == b'"' {
            return Some(at + 1);
        }
        // An escape: the next byte is never the end of the string.
        i = at + 2;
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Scan from `i`, inside an object at brace depth `depth`, to the `}` that closes it. With
/// `features`, stop instead at a member `"features": [` of the outermost object.
fn scan_object(b: &[u8], mut i: usize, mut depth: usize, features: bool) -> Stop {
    loop {
        let Some(k) = memchr::memchr3(b'"', b'{', b'}', &b[i..]) else {
            return Stop::More;
        };
        let at = i + k;
        match b[at] {
            b'{' => {
                depth += 1;
                i = at + 1;
            }
            b'}' => {
                depth -= 1;
                i = at + 1;
                if depth == 0 {
                    return Stop::End(i);
                }
            }
            _ => {
                let Some(end) = string_end(b, at + 1) else {
                    return Stop::More;
                };
                if features && depth == 1 && &b[at + 1..end - 1] == b"features" {
                    // A string followed by `:` is a key; at depth 1 it is the text's own.
                    let colon = skip_ws(b, end);
                    if colon >= b.len() {
                        return Stop::More;
                    }
                    if b[colon] == b':' {
                        let open = skip_ws(b, colon + 1);
                        if open >= b.len() {
                            return Stop::More;
                        }
                        if b[open] == b'[' {
                            return Stop::Features(open + 1);
                        }
                    }
                }
                i = end;
            }
        }
    }
}

/// What the scan expects next inside a `features` array.
#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// A feature or the end of an empty array.
    FirstOrClose,
    /// A feature (after a comma).
    Element,
    /// A comma or the end of the array.
    CommaOrClose,
}

enum Place {
    /// Between texts.
    Between,
    /// Inside a collection's `features`; `head` is the text up to and including the `[`.
    Features { head: Vec<u8>, expect: Expect },
    /// After a collection's `features` array, at its `]`.
    Tail { head: Vec<u8> },
}

/// The pre-scan over one file.
pub(super) struct Splitter<R> {
    file: R,
    buf: Vec<u8>,
    /// Bytes of `buf` already handed on.
    pos: usize,
    eof: bool,
    started: bool,
    texts: u64,
    place: Place,
    /// The features found in `buf` and not yet handed on: `buf[start..end]`.
    run: Option<(usize, usize)>,
    /// Texts gathered and not yet handed on.
    text_buf: Vec<u8>,
    text_spans: Vec<(usize, usize)>,
    window: usize,
    batch: usize,
    /// Whether the file may hold several texts; otherwise a second one gives up, and the
    /// sequential reader names its offset.
    sequence: bool,
    /// Bytes read, for the progress bar.
    pub(super) read: u64,
}

impl<R: Read> Splitter<R> {
    pub(super) fn new(file: R, window: usize, batch: usize, sequence: bool) -> Self {
        Splitter {
            file,
            buf: Vec::new(),
            pos: 0,
            eof: false,
            started: false,
            texts: 0,
            place: Place::Between,
            run: None,
            text_buf: Vec::new(),
            text_spans: Vec::new(),
            window,
            batch,
            sequence,
            read: 0,
        }
    }

    fn flush_run(&mut self, out: &mut Vec<Batch>) {
        if let Some((s, e)) = self.run.take() {
            let mut v = Vec::with_capacity(e - s + 4);
            v.extend_from_slice(b"[[");
            v.extend_from_slice(&self.buf[s..e]);
            v.extend_from_slice(b"]]");
            out.push(Batch::Features(v));
        }
    }

    fn flush_texts(&mut self, out: &mut Vec<Batch>) {
        if !self.text_spans.is_empty() {
            out.push(Batch::Texts(
                std::mem::take(&mut self.text_buf),
                std::mem::take(&mut self.text_spans),
            ));
        }
    }

    /// Gather the text `buf[s..e]`, after `head` when it is a skeleton's tail.
    fn push_text(&mut self, s: usize, e: usize, head: Option<&[u8]>, out: &mut Vec<Batch>) {
        let start = self.text_buf.len();
        if let Some(h) = head {
            self.text_buf.extend_from_slice(h);
        }
        self.text_buf.extend_from_slice(&self.buf[s..e]);
        self.text_spans.push((start, self.text_buf.len()));
        self.texts += 1;
        if self.text_buf.len() >= self.batch {
            self.flush_texts(out);
        }
    }

    /// Read more of the file after the bytes handed on; `false` at its end.
    fn refill(&mut self, out: &mut Vec<Batch>) -> Result<bool, GiveUp> {
        self.flush_run(out);
        if self.eof {
            return Ok(false);
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
        if self.buf.len() > MAX_UNIT {
            return Err(GiveUp::Unsplittable);
        }
        let n = (&mut self.file)
            .take(self.window as u64)
            .read_to_end(&mut self.buf)
            .map_err(|_| GiveUp::Io)?;
        self.read += n as u64;
        if n == 0 {
            self.eof = true;
        }
        // A UTF-8 byte-order mark may come before the first text, as in the sequential
        // reader.
        if !self.started && (self.buf.len() >= 3 || self.eof) {
            if self.buf.starts_with(b"\xEF\xBB\xBF") {
                self.pos = 3;
            }
            self.started = true;
        }
        Ok(n > 0)
    }

    /// The next batches, at least `count` unless the file ends; empty at its end.
    pub(super) fn next(&mut self, count: usize) -> Result<Vec<Batch>, GiveUp> {
        let mut out = Vec::new();
        while out.len() < count {
            if !self.started || !self.step(&mut out)? {
                // The window is used up: read on, or finish.
                if !self.refill(&mut out)? {
                    if !matches!(self.place, Place::Between)
                        || skip_separators(&self.buf, self.pos) < self.buf.len()
                        || self.texts == 0
                    {
                        return Err(GiveUp::Unsplittable);
                    }
                    self.flush_texts(&mut out);
                    return Ok(out);
                }
            }
        }
        Ok(out)
    }

    /// Take the next unit from the window; `false` when the window ends before it does.
    fn step(&mut self, out: &mut Vec<Batch>) -> Result<bool, GiveUp> {
        let b = &self.buf;
        match &mut self.place {
            Place::Between => {
                let i = skip_separators(b, self.pos);
                if i >= b.len() {
                    self.pos = i;
                    return Ok(false);
                }
                if b[i] != b'{' || (!self.sequence && self.texts > 0) {
                    return Err(GiveUp::Unsplittable);
                }
                match scan_object(b, i + 1, 1, true) {
                    Stop::More => {
                        self.pos = i;
                        Ok(false)
                    }
                    Stop::End(e) => {
                        self.pos = e;
                        self.push_text(i, e, None, out);
                        Ok(true)
                    }
                    Stop::Features(j) => {
                        let head = b[i..j].to_vec();
                        if head.len() > MAX_UNIT {
                            return Err(GiveUp::Unsplittable);
                        }
                        self.pos = j;
                        self.place = Place::Features {
                            head,
                            expect: Expect::FirstOrClose,
                        };
                        Ok(true)
                    }
                }
            }
            Place::Features { expect, .. } => {
                let i = skip_ws(b, self.pos);
                if i >= b.len() {
                    return Ok(false);
                }
                match (b[i], *expect) {
                    (b'{', Expect::FirstOrClose | Expect::Element) => {
                        match scan_object(b, i + 1, 1, false) {
                            Stop::End(e) => {
                                *expect = Expect::CommaOrClose;
                                self.pos = e;
                                let start = self.run.map_or(i, |(s, _)| s);
                                self.run = Some((start, e));
                                if e - start >= self.batch {
                                    self.flush_run(out);
                                }
                                Ok(true)
                            }
                            _ => {
                                // The feature runs past the window: what is whole is handed
                                // on, then the scan reads on from the feature's start.
                                self.pos = i;
                                Ok(false)
                            }
                        }
                    }
                    (b',', Expect::CommaOrClose) => {
                        // A comma inside a run is checked again by the parser; one between
                        // runs only here.
                        *expect = Expect::Element;
                        self.pos = i + 1;
                        Ok(true)
                    }
                    (b']', Expect::FirstOrClose | Expect::CommaOrClose) => {
                        self.flush_run(out);
                        let Place::Features { head, .. } =
                            std::mem::replace(&mut self.place, Place::Between)
                        else {
                            unreachable!("matched above")
                        };
                        self.pos = i;
                        self.place = Place::Tail { head };
                        Ok(true)
                    }
                    _ => Err(GiveUp::Unsplittable),
                }
            }
            Place::Tail { head } => match scan_object(b, self.pos + 1, 1, false) {
                Stop::End(e) => {
                    if head.len() + (e - self.pos) > MAX_UNIT {
                        return Err(GiveUp::Unsplittable);
                    }
                    let head = std::mem::take(head);
                    let start = self.pos;
                    self.pos = e;
                    self.place = Place::Between;
                    self.push_text(start, e, Some(&head), out);
                    Ok(true)
                }
                _ => Ok(false),
            },
        }
    }
}

/// Skip whitespace and RFC 8142 record separators.
fn skip_separators(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x1E) {
        i += 1;
    }
    i
}
