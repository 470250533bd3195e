//! What a scan of access logs counts besides its reads: its lines, the requests that counted,
//! the reads and continued reads their bursts made, and the requests that were no read, by
//! reason, with one example line of each reason for the warnings.

use serde::Serialize;

/// Why a request is not a read; each such request counts under one reason, the first of
/// method, status, unmatched that applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum NotReadReason {
    /// Not a `GET` or `HEAD` of an object (S3: not `REST.GET.OBJECT` / `REST.HEAD.OBJECT`;
    /// pgaudit: an entry of another class than READ, or of no relation).
    Method,
    /// Neither 2xx nor 304.
    Status,
    /// No `match` template maps the path.
    Unmatched,
    /// The principal is one of the source's `ignore_principals`.
    Ignored,
}

/// The word a report uses for the reason.
impl std::fmt::Display for NotReadReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NotReadReason::Method => "method",
            NotReadReason::Status => "status",
            NotReadReason::Unmatched => "unmatched",
            NotReadReason::Ignored => "ignored",
        })
    }
}

/// Counts of requests that are not reads, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NotRead {
    pub method: u64,
    pub status: u64,
    pub unmatched: u64,
    pub ignored: u64,
}

impl NotRead {
    pub(super) fn count(&mut self, reason: NotReadReason) {
        match reason {
            NotReadReason::Method => self.method += 1,
            NotReadReason::Status => self.status += 1,
            NotReadReason::Unmatched => self.unmatched += 1,
            NotReadReason::Ignored => self.ignored += 1,
        }
    }

    pub(super) fn add(&mut self, o: &NotRead) {
        self.method += o.method;
        self.status += o.status;
        self.unmatched += o.unmatched;
        self.ignored += o.ignored;
    }

    /// All requests that are not reads.
    pub fn total(&self) -> u64 {
        self.method + self.status + self.unmatched + self.ignored
    }
}

/// The first request line that was not a read, for each reason: the example a warning
/// shows when a source turned none of its requests into reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotReadExamples {
    pub method: Option<String>,
    pub status: Option<String>,
    pub unmatched: Option<String>,
    pub ignored: Option<String>,
}

/// How much of a line an example keeps: a whole log line, but not a page of one.
const EXAMPLE_CHARS: usize = 1000;

impl NotReadExamples {
    /// Keep `line`, whose request for `path` was no read for `reason`, unless that reason
    /// has its example. An unmatched request leads with its path: the templates saw that.
    pub(super) fn keep(&mut self, reason: NotReadReason, path: &str, line: &[u8]) {
        let slot = match reason {
            NotReadReason::Method => &mut self.method,
            NotReadReason::Status => &mut self.status,
            NotReadReason::Unmatched => &mut self.unmatched,
            NotReadReason::Ignored => &mut self.ignored,
        };
        if slot.is_none() {
            let line: String = String::from_utf8_lossy(line)
                .chars()
                .take(EXAMPLE_CHARS)
                .collect();
            *slot = Some(match reason {
                NotReadReason::Unmatched => format!("the path `{path}` of the line {line}"),
                _ => line,
            });
        }
    }

    pub fn add(&mut self, o: &NotReadExamples) {
        for (mine, theirs) in [
            (&mut self.method, &o.method),
            (&mut self.status, &o.status),
            (&mut self.unmatched, &o.unmatched),
            (&mut self.ignored, &o.ignored),
        ] {
            if mine.is_none() {
                mine.clone_from(theirs);
            }
        }
    }

    /// The example of `reason`.
    pub fn of(&self, reason: NotReadReason) -> Option<&str> {
        match reason {
            NotReadReason::Method => self.method.as_deref(),
            NotReadReason::Status => self.status.as_deref(),
            NotReadReason::Unmatched => self.unmatched.as_deref(),
            NotReadReason::Ignored => self.ignored.as_deref(),
        }
    }
}

/// The counts of one scan of access logs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AccessStats {
    /// Lines read, header and blank lines aside.
    pub lines: u64,
    pub malformed: u64,
    /// Requests that count ([`Hit`]s), before bursts are folded.
    pub requests: u64,
    /// Reads: bursts of requests (filled in by [`Bursts`]).
    pub reads: u64,
    /// Requests that continued a read already counted (`requests - reads` once finished).
    pub same_read: u64,
    pub not_read: NotRead,
    /// One line of each reason a request was not a read.
    #[serde(skip)]
    pub examples: NotReadExamples,
}

impl AccessStats {
    /// Add the counts of another part (a file parsed apart).
    pub fn add(&mut self, o: &AccessStats) {
        self.lines += o.lines;
        self.malformed += o.malformed;
        self.requests += o.requests;
        self.reads += o.reads;
        self.same_read += o.same_read;
        self.not_read.add(&o.not_read);
        self.examples.add(&o.examples);
    }
}
