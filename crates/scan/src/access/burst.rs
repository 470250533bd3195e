//! Range bursts: many requests, one read.
//!
//! Opening a remote file is many requests: GDAL's `/vsicurl/`, a Parquet reader or DuckDB
//! send a HEAD, then ranged GETs for the footer, the metadata and the column chunks, all
//! within seconds. So a request by one principal for one object within `same_read_seconds`
//! of that principal's previous request for the same object continues the same read: one
//! read per burst, however long the burst runs. A request without a principal (anonymous)
//! continues the burst of the same client address, so that two anonymous readers are two
//! reads.
//!
//! The answer does not depend on the order of the requests: a burst is kept as the span
//! from its first to its last request, a request within the window of a span joins it (and
//! may join two spans into one), so the bursts are those of the requests sorted by time.
//! Memory stays bounded by the bursts still open: a span is closed, and its read handed
//! out, once the newest request seen is more than `same_read_seconds` plus a reordering
//! margin ([`DEFAULT_REORDER_SECONDS`]) past its last request. A request that arrives later
//! than that margin behind the newest one (a log object delivered hours late and read after
//! later ones) can only start a burst of its own, so it may count a second read where the
//! sorted log would have counted one; within the margin the order of lines and files does
//! not matter.
//!
//! A read carries the instant of its burst's last request (`at`), which is how recently
//! the principal read, and its first (`first`). In a summary cut at a boundary (a day, a
//! file), a burst that spans the boundary counts once on each side: each part is scanned on
//! its own.

use std::borrow::Cow;
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};

use super::{Columns, Hit};
use crate::reads::hash::NameMap;

/// How far behind the newest request a request may arrive and still join its burst: S3
/// delivers a log object minutes to hours after its requests, and a scan takes the objects
/// in the order of their names, which is that of delivery. Open bursts of the last this
/// many seconds of log time are what the scan holds in memory.
pub const DEFAULT_REORDER_SECONDS: u64 = 12 * 3600;

/// One read of a dataset: a burst of requests by one principal for one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub burst: Span,
    /// Shared by the reads of one principal on one object: a busy reader's object closes a
    /// read per burst, and each read had copied the four strings (a twentieth of the time of
    /// a warehouse scan).
    pub reader: Arc<Reader>,
    /// The attributes the burst's requests read, together ([`Columns::union`]).
    pub attributes: Columns,
}

impl Read {
    /// When the read is dated: the burst's last request, with the offset as written.
    pub fn at(&self) -> DateTime<FixedOffset> {
        self.burst.last
    }

    /// [`Read::at`] as RFC 3339 text, with the offset as written (`+00:00` for S3's
    /// `+0000`).
    pub fn at_text(&self) -> String {
        self.burst.last.to_rfc3339()
    }
}

/// Who read what: a principal (or anonymous client) and the object, with the dataset and
/// contract version it maps to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reader {
    /// `None`: anonymous.
    pub principal: Option<String>,
    pub dataset: String,
    pub contract: String,
    /// The object read (the decoded path or key).
    pub object: String,
}

/// One burst: its first and last request, and how many it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub first: DateTime<FixedOffset>,
    pub last: DateTime<FixedOffset>,
    pub requests: u64,
}

/// The open bursts of one principal (or anonymous client) on one object.
#[derive(Debug, Default)]
struct Open {
    reader: Arc<Reader>,
    /// Disjoint, sorted by time, each gap wider than the window: one per read of the
    /// reordering margin, so a busy reader's object holds dozens.
    spans: Vec<OpenSpan>,
}

/// An open burst, with its bounds in seconds since the epoch: [`join`] and the sweep compare
/// them on every request, so they are kept as numbers rather than worked out of the instants
/// (a date's days from the epoch) at each comparison.
#[derive(Debug)]
struct OpenSpan {
    span: Span,
    first: i64,
    last: i64,
    /// The attributes read in the span.
    attributes: Columns,
}

impl OpenSpan {
    fn new(t: DateTime<FixedOffset>, attributes: Columns) -> OpenSpan {
        let secs = t.timestamp();
        OpenSpan {
            span: Span {
                first: t,
                last: t,
                requests: 1,
            },
            first: secs,
            last: secs,
            attributes,
        }
    }
}

/// The bursts of one scan.
#[derive(Debug)]
pub struct Bursts {
    window: i64,
    reorder: i64,
    /// By principal (or client) and object: a fast hash, as the scan's tables use (the keys
    /// come from the platform's own log).
    open: NameMap<Open>,
    /// The newest request seen, in seconds since the epoch.
    newest: Option<i64>,
    /// When (in `newest`) the open bursts are next swept for closed ones.
    next_sweep: i64,
    key: String,
    reads: u64,
    continued: u64,
}

impl Bursts {
    /// Bursts with a window of `same_read_seconds` and the default reordering margin.
    pub fn new(same_read_seconds: u64) -> Bursts {
        Bursts::with_reorder(same_read_seconds, DEFAULT_REORDER_SECONDS)
    }

    /// Bursts that tolerate requests arriving up to `reorder_seconds` behind the newest.
    pub fn with_reorder(same_read_seconds: u64, reorder_seconds: u64) -> Bursts {
        let secs = |s: u64| i64::try_from(s).unwrap_or(i64::MAX / 4).min(i64::MAX / 4);
        Bursts {
            window: secs(same_read_seconds),
            reorder: secs(reorder_seconds),
            open: NameMap::default(),
            newest: None,
            next_sweep: i64::MIN,
            key: String::new(),
            reads: 0,
            continued: 0,
        }
    }

    /// Reads counted so far (closed or open).
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// Requests that continued a read rather than starting one (net of merges).
    pub fn continued(&self) -> u64 {
        self.continued
    }

    /// The bursts still open (the memory the scan holds).
    pub fn open(&self) -> usize {
        self.open.values().map(|o| o.spans.len()).sum()
    }

    /// Fold in one request that counts; reads whose bursts have closed go to `on_read`.
    /// The hit is taken whole: what it owns (a hit parsed on another thread owns all) is
    /// moved into the burst, not copied.
    pub fn push(&mut self, hit: Hit<'_>, on_read: &mut impl FnMut(Read)) {
        self.key.clear();
        match &hit.principal {
            Some(p) => {
                self.key.push('p');
                self.key.push_str(p);
            }
            None => {
                self.key.push('a');
                self.key.push_str(&hit.client);
            }
        }
        self.key.push('\n');
        self.key.push_str(&hit.object);
        let t = hit.at;
        let window = self.window;
        let (started, merged) = match self.open.get_mut(self.key.as_str()) {
            Some(open) => join(open, t, window, hit.attributes.into_owned()),
            None => {
                self.open.insert(
                    self.key.clone(),
                    Open {
                        reader: Arc::new(Reader {
                            principal: hit.principal.map(Cow::into_owned),
                            dataset: hit.dataset.into_owned(),
                            contract: hit.contract.into_owned(),
                            object: hit.object.into_owned(),
                        }),
                        spans: vec![OpenSpan::new(t, hit.attributes.into_owned())],
                    },
                );
                (true, 0)
            }
        };
        // A request that starts a burst is a read; one that joins two bursts undoes one.
        if started {
            self.reads += 1;
        } else {
            self.continued += 1;
        }
        self.reads -= merged;
        self.continued += merged;
        let secs = t.timestamp();
        if self.newest.is_none_or(|n| secs > n) {
            self.newest = Some(secs);
        }
        if secs >= self.next_sweep {
            self.sweep(on_read);
        }
    }

    /// Close the bursts the newest request has left behind.
    fn sweep(&mut self, on_read: &mut impl FnMut(Read)) {
        let Some(newest) = self.newest else { return };
        let horizon = newest
            .saturating_sub(self.reorder)
            .saturating_sub(self.window);
        self.open.retain(|_, open| {
            let keep = open.spans.iter().position(|s| s.last >= horizon);
            let closed = keep.unwrap_or(open.spans.len());
            if keep.is_none() {
                // Every span closes: the last read takes the reader itself.
                hand_out(std::mem::take(open), on_read);
                return false;
            }
            for s in open.spans.drain(..closed) {
                on_read(read_of(&open.reader, s));
            }
            true
        });
        // Sweeping once per part of the margin keeps each burst's cost to a few visits.
        self.next_sweep = newest.saturating_add((self.reorder / 4).max(self.window).max(1));
    }

    /// Close every burst: the end of the scan.
    pub fn finish(&mut self, mut on_read: impl FnMut(Read)) {
        for (_, open) in self.open.drain() {
            hand_out(open, &mut on_read);
        }
    }
}

/// Every span of `open` as a read.
fn hand_out(open: Open, on_read: &mut impl FnMut(Read)) {
    let Open { reader, spans } = open;
    for s in spans {
        on_read(read_of(&reader, s));
    }
}

fn read_of(reader: &Arc<Reader>, s: OpenSpan) -> Read {
    Read {
        burst: s.span,
        reader: Arc::clone(reader),
        attributes: s.attributes,
    }
}

/// Put `t` into `spans`: `(true, 0)` when it starts a burst, `(false, n)` when it joins one
/// and so merged `n` others into it. Within one instant the span that ends later keeps the
/// offset it was written with, so a read's `at` is the same whatever the order.
/// The span's attributes take in `read`'s, and a merged span's.
fn join(open: &mut Open, t: DateTime<FixedOffset>, window: i64, read: Columns) -> (bool, u64) {
    let spans = &mut open.spans;
    let secs = t.timestamp();
    let near = |s: &OpenSpan| {
        s.first.saturating_sub(window) <= secs && secs <= s.last.saturating_add(window)
    };
    // The spans are sorted and disjoint, their gaps wider than the window: the only span `t`
    // can be near first is the first that does not end a window before it. A log comes
    // mostly in time order, so that is nearly always past the last span or the last one: the
    // end is looked at first. Only a request from further back is searched for, in halves:
    // a busy reader's object holds a span per read of the reordering margin, and with
    // thousands of readers each step of a search missed the cache.
    let ends_before = |s: &OpenSpan| s.last.saturating_add(window) < secs;
    let n = spans.len();
    let first_not_before = if spans.last().is_some_and(ends_before) {
        n
    } else if n < 2 || ends_before(&spans[n - 2]) {
        n.saturating_sub(1)
    } else {
        spans.partition_point(ends_before)
    };
    let Some(i) = Some(first_not_before).filter(|&i| spans.get(i).is_some_and(near)) else {
        let at = if spans.last().is_none_or(|s| s.span.last < t) {
            n
        } else {
            spans.partition_point(|s| s.span.last < t)
        };
        spans.insert(at, OpenSpan::new(t, read));
        return (true, 0);
    };
    let s = &mut spans[i];
    s.attributes.take_in(read);
    s.span.requests += 1;
    if later(&t, &s.span.last) {
        s.span.last = t;
        s.last = secs;
    }
    if later(&s.span.first, &t) {
        s.span.first = t;
        s.first = secs;
    }
    let mut merged = 0;
    while i + 1 < spans.len() && spans[i + 1].first.saturating_sub(window) <= spans[i].last {
        let next = spans.remove(i + 1);
        let s = &mut spans[i];
        s.attributes.take_in(next.attributes);
        s.span.requests += next.span.requests;
        if later(&next.span.last, &s.span.last) {
            s.span.last = next.span.last;
            s.last = next.last;
        }
        merged += 1;
    }
    (false, merged)
}

/// Whether `a` is later than `b`, the offset deciding between equal instants (as the
/// consumption scan orders reads).
fn later(a: &DateTime<FixedOffset>, b: &DateTime<FixedOffset>) -> bool {
    (a, a.offset().local_minus_utc()) > (b, b.offset().local_minus_utc())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn at(s: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(s).unwrap()
    }

    fn hit<'a>(t: &str, principal: Option<&'a str>, client: &'a str, object: &'a str) -> Hit<'a> {
        Hit {
            at: at(t),
            principal: principal.map(Cow::Borrowed),
            client: Cow::Borrowed(client),
            object: Cow::Borrowed(object),
            dataset: Cow::Borrowed("roads"),
            contract: Cow::Borrowed("2.0.0"),
            attributes: Cow::Owned(Columns::Unknown),
        }
    }

    fn run(b: &mut Bursts, hits: &[Hit<'_>]) -> Vec<Read> {
        let mut out = Vec::new();
        for h in hits {
            b.push(h.clone(), &mut |r| out.push(r));
        }
        b.finish(|r| out.push(r));
        out.sort_by(|a, b| {
            let key = |r: &Read| {
                (
                    r.burst.first,
                    r.reader.principal.clone(),
                    r.reader.object.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
        out
    }

    #[test]
    fn a_burst_is_one_read_however_long_it_runs() {
        // A request every 50 s for 20 minutes, window 60: one read.
        let hits = (0..25)
            .map(|i| {
                let t = at("2024-05-01T10:00:00Z") + chrono::Duration::seconds(50 * i);
                Hit {
                    at: t,
                    ..hit("2024-05-01T10:00:00Z", Some("a"), "ip", "o")
                }
            })
            .collect::<Vec<_>>();
        let mut b = Bursts::new(60);
        let reads = run(&mut b, &hits);
        assert_eq!(reads.len(), 1);
        assert_eq!(reads[0].burst.requests, 25);
        assert_eq!(reads[0].burst.first, at("2024-05-01T10:00:00Z"));
        assert_eq!(reads[0].at(), at("2024-05-01T10:20:00Z"));
        assert_eq!((b.reads(), b.continued()), (1, 24));
    }

    #[test]
    fn a_read_reads_what_its_requests_read_together() {
        let named = |c: &[&str]| Columns::named(c.iter().map(|c| c.to_string()));
        let with = |t: &'static str, who: &'static str, c: Columns| Hit {
            attributes: Cow::Owned(c),
            ..hit(t, Some(who), "ip", "o")
        };
        let hits = [
            with("2024-05-01T10:00:00Z", "a", named(&["name"])),
            with("2024-05-01T10:00:10Z", "a", named(&["geom"])),
            with("2024-05-01T10:05:00Z", "a", named(&["name"])),
            with("2024-05-01T10:05:10Z", "a", Columns::Unknown),
            with("2024-05-01T10:00:00Z", "b", named(&["name"])),
            with("2024-05-01T10:00:10Z", "b", Columns::All),
            with("2024-05-01T10:00:20Z", "b", Columns::Unknown),
            // Joins the two spans of `c` around it: one read of all three.
            with("2024-05-01T10:00:00Z", "c", named(&["a"])),
            with("2024-05-01T10:02:00Z", "c", named(&["b"])),
            with("2024-05-01T10:01:00Z", "c", named(&["c"])),
        ];
        let reads = run(&mut Bursts::new(60), &hits)
            .into_iter()
            .map(|r| (r.reader.principal.clone().unwrap_or_default(), r.attributes))
            .collect::<Vec<_>>();
        let who = |w: &str| w.to_string();
        assert_eq!(
            reads,
            vec![
                (who("a"), named(&["geom", "name"])),
                (who("b"), Columns::All),
                (who("c"), named(&["a", "b", "c"])),
                (who("a"), Columns::Unknown),
            ]
        );
    }

    #[test]
    fn a_gap_wider_than_the_window_is_a_new_read() {
        let hits = [
            hit("2024-05-01T10:00:00Z", Some("a"), "ip", "o"),
            hit("2024-05-01T10:01:00Z", Some("a"), "ip", "o"),
            hit("2024-05-01T10:02:01Z", Some("a"), "ip", "o"),
        ];
        let reads = run(&mut Bursts::new(60), &hits);
        assert_eq!(reads.len(), 2, "60 s is within, 61 s is not: {reads:?}");
        assert_eq!(reads[0].burst.requests, 2);
    }

    #[test]
    fn principals_objects_and_anonymous_clients_are_apart() {
        let hits = [
            hit("2024-05-01T10:00:00Z", Some("a"), "ip1", "o"),
            hit("2024-05-01T10:00:01Z", Some("b"), "ip1", "o"),
            hit("2024-05-01T10:00:02Z", Some("a"), "ip1", "p"),
            hit("2024-05-01T10:00:03Z", None, "ip1", "o"),
            hit("2024-05-01T10:00:04Z", None, "ip2", "o"),
            hit("2024-05-01T10:00:05Z", None, "ip1", "o"),
            // The principal, not the address, ties a signed request to its burst.
            hit("2024-05-01T10:00:06Z", Some("a"), "ip9", "o"),
        ];
        let reads = run(&mut Bursts::new(60), &hits);
        assert_eq!(reads.len(), 5, "{reads:?}");
    }

    #[test]
    fn the_order_of_the_requests_does_not_change_the_reads() {
        let times = [
            "2024-05-01T10:00:00Z",
            "2024-05-01T10:00:40Z",
            "2024-05-01T10:01:20Z", // joins the two around it only in time order
            "2024-05-01T10:05:00Z",
            "2024-05-01T10:05:30Z",
            "2024-05-01T11:00:00Z",
        ];
        let sorted = run(
            &mut Bursts::new(60),
            &times
                .iter()
                .map(|t| hit(t, Some("a"), "ip", "o"))
                .collect::<Vec<_>>(),
        );
        assert_eq!(sorted.len(), 3);
        for order in [[5, 0, 3, 2, 4, 1], [2, 5, 4, 1, 3, 0], [1, 2, 0, 5, 3, 4]] {
            let hits = order
                .iter()
                .map(|&i| hit(times[i], Some("a"), "ip", "o"))
                .collect::<Vec<_>>();
            let mut b = Bursts::new(60);
            assert_eq!(run(&mut b, &hits), sorted, "{order:?}");
            assert_eq!(b.reads(), 3);
            assert_eq!(b.continued(), 3);
        }
    }

    /// Many requests of one reader, in time order and shuffled: joining looks at the last
    /// spans before it searches, and every way in (past the end, near the last, near the one
    /// before, further back, between two spans it then joins) must give the reads of the
    /// sorted log. A fixed seed, named in each failure.
    #[test]
    fn shuffled_requests_give_the_reads_of_the_sorted_log() {
        let base = at("2024-05-01T00:00:00Z");
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..200 {
            // Gaps of 0 to 150 s around a window of 60 s: some join, some do not.
            let mut secs = 0i64;
            let times: Vec<_> = (0..40)
                .map(|_| {
                    secs += (next() % 151) as i64;
                    base + chrono::Duration::seconds(secs)
                })
                .collect();
            let hits_in = |order: &[usize]| -> Vec<Hit<'static>> {
                order
                    .iter()
                    .map(|&i| Hit {
                        at: times[i],
                        ..hit("2024-05-01T00:00:00Z", Some("a"), "ip", "o")
                    })
                    .collect()
            };
            let in_order: Vec<usize> = (0..times.len()).collect();
            let mut sorted_bursts = Bursts::new(60);
            let sorted = run(&mut sorted_bursts, &hits_in(&in_order));
            let mut order = in_order.clone();
            for k in (1..order.len()).rev() {
                order.swap(k, (next() % (k as u64 + 1)) as usize);
            }
            let mut b = Bursts::new(60);
            let got = run(&mut b, &hits_in(&order));
            assert_eq!(
                got, sorted,
                "round {round} of seed 0x9e3779b97f4a7c15: {order:?}"
            );
            assert_eq!(
                (b.reads(), b.continued()),
                (sorted_bursts.reads(), sorted_bursts.continued()),
                "round {round}"
            );
        }
    }

    #[test]
    fn closed_bursts_leave_memory_as_the_log_moves_on() {
        let mut b = Bursts::with_reorder(60, 600);
        let mut out = Vec::new();
        let base = at("2024-05-01T00:00:00Z");
        let names = (0..500).map(|i| format!("reader-{i}")).collect::<Vec<_>>();
        for (i, name) in names.iter().enumerate() {
            // A new reader every 10 minutes of log time, each reading once.
            let t = base + chrono::Duration::minutes(10 * i as i64);
            let h = Hit {
                at: t,
                ..hit("2024-05-01T00:00:00Z", Some(name), "ip", "o")
            };
            b.push(h, &mut |r| out.push(r));
            assert!(b.open() <= 4, "{} open at {i}", b.open());
        }
        b.finish(|r| out.push(r));
        assert_eq!(out.len(), 500);
    }

    #[test]
    fn a_request_later_than_the_margin_starts_its_own_read() {
        let mut b = Bursts::with_reorder(60, 600);
        let hits = [
            hit("2024-05-01T10:00:00Z", Some("a"), "ip", "o"),
            hit("2024-05-01T12:00:00Z", Some("b"), "ip", "o"),
            // Behind the newest by two hours: the first burst is closed already.
            hit("2024-05-01T10:00:30Z", Some("a"), "ip", "o"),
        ];
        assert_eq!(run(&mut b, &hits).len(), 3);
        let mut b = Bursts::with_reorder(60, 3 * 3600);
        assert_eq!(run(&mut b, &hits).len(), 2);
    }
}
