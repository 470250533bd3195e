//! What each consumption source gave a scan, and whether it can be believed.
//!
//! A source that reads nothing looks exactly like a dataset nobody reads: a `match` template
//! with one wrong segment, a glob that matches no file, an exporter that stopped writing —
//! every consumer turns `silent`, and a gate would conclude that a line can go. That is the
//! worst answer this tool can give, so each source's scan is counted apart and judged here:
//! a source is *blind* when it gave no read of any dataset in the lookback, or when more
//! than half of its requests matched no template. A gate never says "yes" while a source is
//! blind; it says "cannot tell". A source the user marks `expect_reads = false` is exempt.
//!
//! Pure: the counts come from the scan ([`super::reads::scan`]), the probe for reads of other
//! datasets from [`super::store_scan`].

use serde::Serialize;

use super::access::{AccessStats, NotRead, NotReadReason};
use crate::model::source::Source;

/// The counts of one source in one scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceCounts {
    /// The source's `path`, as configured.
    pub source: String,
    /// Files and objects opened.
    pub files: u64,
    /// Lines (rows, request lines) read.
    pub lines: u64,
    /// Reads of the datasets asked for, within the lookback.
    pub reads: u64,
    pub malformed: u64,
    /// Access logs: requests that count, before a burst of them is folded into one read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// Access logs: requests that continued a read already counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_read: Option<u64>,
    /// Access logs: requests that were no read, by reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_read: Option<NotRead>,
    /// Why the source cannot be believed; `null` when it can (or is expected to be quiet).
    pub blind: Option<Blindness>,
    /// `false`: the source is expected to be quiet, and is never blind.
    pub expect_reads: bool,
    /// One line of each reason a request was not a read (not in the JSON: it is a log line).
    #[serde(skip)]
    pub examples: Option<super::access::NotReadExamples>,
}

impl SourceCounts {
    /// Nothing counted yet for `source`.
    pub fn of(source: &Source) -> SourceCounts {
        SourceCounts {
            source: source.path.clone(),
            files: 0,
            lines: 0,
            reads: 0,
            malformed: 0,
            requests: None,
            same_read: None,
            not_read: None,
            blind: None,
            expect_reads: source.expect_reads,
            examples: None,
        }
    }

    /// Take in the counts of an access-log scan of this source (its malformed lines were
    /// counted file by file).
    pub fn add_access(&mut self, stats: &AccessStats) {
        self.lines += stats.lines;
        *self.requests.get_or_insert(0) += stats.requests;
        *self.same_read.get_or_insert(0) += stats.same_read;
        let n = self.not_read.get_or_insert_with(NotRead::default);
        n.method += stats.not_read.method;
        n.status += stats.not_read.status;
        n.unmatched += stats.not_read.unmatched;
        n.ignored += stats.not_read.ignored;
        let mut examples = self.examples.take().unwrap_or_default();
        examples.add(&stats.examples);
        self.examples = Some(examples);
    }

    /// Request lines of an access log: those that counted and those that were no read.
    pub fn request_lines(&self) -> Option<u64> {
        Some(self.requests? + self.not_read?.total())
    }

    /// The reasons requests were no read, the most frequent first (ties in the order
    /// method, status, unmatched), without the reasons that never applied.
    pub fn top_reasons(&self) -> Vec<(NotReadReason, u64)> {
        let Some(n) = self.not_read else {
            return Vec::new();
        };
        let mut all = vec![
            (NotReadReason::Method, n.method),
            (NotReadReason::Status, n.status),
            (NotReadReason::Unmatched, n.unmatched),
            (NotReadReason::Ignored, n.ignored),
        ];
        all.retain(|(_, count)| *count > 0);
        all.sort_by_key(|r| std::cmp::Reverse(r.1));
        all
    }

    /// A line of the most frequent reason a request was no read.
    pub fn example(&self) -> Option<&str> {
        let examples = self.examples.as_ref()?;
        self.top_reasons()
            .into_iter()
            .find_map(|(reason, _)| examples.of(reason))
    }

    /// Judge the source (see the module): `read_any` says whether it held a read of any
    /// dataset in the lookback, the ones asked for or others.
    pub fn judge(&mut self, read_any: bool) {
        self.blind = blindness(self, read_any);
    }
}

/// Why a source cannot be believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Blindness {
    /// No read of any dataset in the lookback.
    NoReads,
    /// More than half of its request lines matched no `match` template.
    MostlyUnmatched { unmatched: u64, requests: u64 },
}

/// A blind source as the gates' JSON names it: its path and why.
#[derive(Debug, Clone, Serialize)]
pub struct BlindSource {
    pub source: String,
    #[serde(flatten)]
    pub blindness: Blindness,
}

/// The blind sources among `counts`, in their order.
pub fn blind_sources(counts: &[SourceCounts]) -> Vec<BlindSource> {
    counts
        .iter()
        .filter_map(|c| {
            Some(BlindSource {
                source: c.source.clone(),
                blindness: c.blind?,
            })
        })
        .collect()
}

/// The rule of the module, on one source's counts.
pub fn blindness(counts: &SourceCounts, read_any: bool) -> Option<Blindness> {
    if !counts.expect_reads {
        return None;
    }
    if let (Some(requests), Some(n)) = (counts.request_lines(), counts.not_read) {
        if n.unmatched * 2 > requests {
            return Some(Blindness::MostlyUnmatched {
                unmatched: n.unmatched,
                requests,
            });
        }
    }
    (counts.reads == 0 && !read_any).then_some(Blindness::NoReads)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(reads: u64, requests: Option<(u64, NotRead)>) -> SourceCounts {
        let mut c = SourceCounts::of(&Source::glob("logs/*"));
        c.reads = reads;
        if let Some((r, n)) = requests {
            c.requests = Some(r);
            c.not_read = Some(n);
        }
        c
    }

    #[test]
    fn a_source_without_reads_is_blind_unless_another_dataset_was_read() {
        assert_eq!(blindness(&counts(0, None), false), Some(Blindness::NoReads));
        assert_eq!(blindness(&counts(0, None), true), None);
        assert_eq!(blindness(&counts(1, None), false), None);
    }

    #[test]
    fn more_than_half_unmatched_is_blind_even_with_reads() {
        let n = |unmatched| NotRead {
            method: 1,
            status: 0,
            unmatched,
            ignored: 0,
        };
        // 4 counted + 1 method + 5 unmatched = 10 request lines: half is not more than half.
        assert_eq!(blindness(&counts(3, Some((4, n(5)))), true), None);
        assert_eq!(
            blindness(&counts(3, Some((4, n(6)))), true),
            Some(Blindness::MostlyUnmatched {
                unmatched: 6,
                requests: 11
            })
        );
    }

    #[test]
    fn a_source_expected_to_be_quiet_is_never_blind() {
        let mut c = counts(0, None);
        c.expect_reads = false;
        assert_eq!(blindness(&c, false), None);
    }

    #[test]
    fn the_top_reason_comes_first_and_gives_the_example() {
        let mut c = counts(
            0,
            Some((
                0,
                NotRead {
                    method: 2,
                    status: 0,
                    unmatched: 7,
                    ignored: 0,
                },
            )),
        );
        c.examples = Some(super::super::access::NotReadExamples {
            method: Some("a listing".into()),
            status: None,
            unmatched: Some("a key".into()),
            ignored: None,
        });
        assert_eq!(
            c.top_reasons(),
            vec![(NotReadReason::Unmatched, 7), (NotReadReason::Method, 2)]
        );
        assert_eq!(c.example(), Some("a key"));
    }
}
