//! The scan itself: the newest read per (dataset, consumer) and the counts, kept in the hot
//! tables while lines are folded in (in `fold.rs`) and flushed into maps at the end.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use contracts_scan::reads::blocks::Accumulator;
use contracts_scan::reads::hash::{Key, NameMap};
use contracts_scan::reads::hot::{self, HotKey, HotTable, Slot, NO_VERSION};

use super::memo::{short_eq, Memo};
use super::seen_ids::SeenIds;
use super::terms::{ConsumerMap, KnownRead, NewestRead, ScanRequest, SeenColumns, Skipped};
use crate::consumers::access::AccessStats;
use crate::consumers::source_health::SourceCounts;

/// Counts of one scan, for the summary a user sees.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ScanStats {
    pub files: u64,
    pub lines: u64,
    /// Reads of a requested dataset within the days.
    pub reads: u64,
    pub malformed: u64,
    /// Reads of a requested dataset after the last day (ignored).
    pub after_today: u64,
    /// Reads of a requested dataset before the lookback (ignored).
    pub before_lookback: u64,
    /// Objects the listings of remote sources returned, and how many of them were read (the
    /// others cannot hold a read of the lookback). Both 0 without a remote source.
    pub objects_listed: u64,
    pub objects_read: u64,
    /// The same counts for each source, in the order of `[consumption]`'s tables and then
    /// its globs, with the judgement of whether the source can be believed.
    pub sources: Vec<SourceCounts>,
}

/// The result of a scan: the newest read per dataset and consumer.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub newest: NameMap<ConsumerMap>,
    pub stats: ScanStats,
    /// Files that could not be read, or not to their end (reads before the failure count).
    pub skipped: Vec<Skipped>,
    pub(super) memo: Memo,
    /// The reads of the scan in progress, by dataset (in [`ScanRequest::datasets`] order)
    /// and consumer, in tables of one cache line per consumer ([`hot`]).
    pub(super) hot: Vec<(String, HotTable)>,
    /// Reads of the hot tables not yet folded in (at most [`PENDING`]).
    pub(super) pending: Vec<Pending>,
    /// What the access logs held besides reads: requests, ranged requests taken as one
    /// read, and requests that are no read (unmatched, other methods, failed).
    pub access: AccessStats,
    /// What the reads showed of the attributes they read, by dataset and consumer: only
    /// where [`ScanRequest::attributes`] asked and a source could tell.
    pub seen: BTreeMap<String, BTreeMap<String, SeenColumns>>,
    /// The same while the scan runs, settled into [`Scan::seen`] by [`Scan::flush`].
    pub(super) seen_ids: SeenIds,
}

/// The block reader of the scanner crate folds each worker's reads into a scan of its own.
impl Accumulator for Scan {
    type Request = ScanRequest;

    fn for_request(req: &ScanRequest) -> Scan {
        Scan::for_request(req)
    }

    fn flush(&mut self) {
        Scan::flush(self);
    }

    fn absorb(&mut self, part: Scan) {
        Scan::absorb(self, part);
    }

    fn count_lines(&mut self, n: u64) {
        self.stats.lines += n;
    }

    fn count_malformed(&mut self) {
        self.stats.malformed += 1;
    }
}

impl Scan {
    /// An empty scan with a map for each requested dataset.
    pub(super) fn for_request(req: &ScanRequest) -> Scan {
        let mut scan = Scan::default();
        for d in &req.datasets {
            scan.newest.insert(d.clone(), ConsumerMap::default());
            scan.hot.push((d.clone(), HotTable::default()));
        }
        scan
    }

    /// The place of `dataset` among the requested ones; `None` when it is not requested.
    /// With one requested (the common case) a comparison per line.
    #[inline(always)]
    pub(super) fn dataset_index(&self, dataset: &[u8]) -> Option<usize> {
        self.hot
            .iter()
            .position(|(name, _)| short_eq(name.as_bytes(), dataset))
    }

    /// Put each reader under the consumer it is: a principal the registry's identities
    /// claim becomes that consumer (several principals of one consumer merge, the tie rule
    /// of the newest read kept), any other keeps its name. A principal claimed by several
    /// consumers is kept as it is (an unknown reader) and returned with its claimants.
    pub fn claim(&mut self, registry: &crate::consumers::Registry) -> Vec<(String, Vec<String>)> {
        let mut ambiguous = BTreeSet::new();
        if !registry.has_identities() {
            return Vec::new();
        }
        for per in self.newest.values_mut() {
            let old = std::mem::take(per);
            for (key, read) in old {
                let principal = key.name();
                let name = match registry.claim(&principal) {
                    crate::consumers::Claim::Consumer(c) => c.to_string(),
                    crate::consumers::Claim::Ambiguous(all) => {
                        ambiguous.insert((
                            principal.clone(),
                            all.into_iter().map(str::to_string).collect::<Vec<_>>(),
                        ));
                        principal
                    }
                    crate::consumers::Claim::Unclaimed => principal,
                };
                let key = Key::from_bytes(name.as_bytes());
                match per.get_mut(key.as_bytes()) {
                    Some(n) => n.absorb(read),
                    None => {
                        per.insert(key, read);
                    }
                }
            }
        }
        // What the reads showed of their attributes follows its principal to its consumer.
        for per in self.seen.values_mut() {
            for (principal, seen) in std::mem::take(per) {
                let name = match registry.claim(&principal) {
                    crate::consumers::Claim::Consumer(c) => c.to_string(),
                    _ => principal,
                };
                per.entry(name).or_default().absorb(seen);
            }
        }
        ambiguous.into_iter().collect()
    }

    /// The newest reads of one dataset, by consumer.
    pub fn of(&self, dataset: &str) -> HashMap<String, NewestRead> {
        self.newest
            .get(dataset)
            .map(|per| per.iter().map(|(k, v)| (k.name(), v.clone())).collect())
            .unwrap_or_default()
    }

    /// What the reads of `dataset` showed of their attributes, by consumer (empty unless
    /// [`ScanRequest::attributes`] asked and a source could tell).
    pub fn seen_of(&self, dataset: &str) -> BTreeMap<String, SeenColumns> {
        self.seen.get(dataset).cloned().unwrap_or_default()
    }

    /// Count what one read at `at` of `reader`'s dataset by `consumer` showed of its
    /// attributes.
    pub(super) fn see(
        &mut self,
        reader: &std::sync::Arc<contracts_scan::access::Reader>,
        consumer: &str,
        at: chrono::DateTime<chrono::FixedOffset>,
        columns: &crate::consumers::access::Columns,
    ) {
        if *columns == crate::consumers::access::Columns::Unknown {
            return;
        }
        self.seen_ids.add_of(reader, consumer, at, columns);
    }

    /// Add the reads and counts of a part scanned apart (its `files` and `lines` are the
    /// caller's to count).
    pub(super) fn absorb(&mut self, mut part: Scan) {
        part.flush();
        for (dataset, per) in part.seen {
            let mine = self.seen.entry(dataset).or_default();
            for (consumer, seen) in per {
                mine.entry(consumer).or_default().absorb(seen);
            }
        }
        let s = part.stats;
        self.stats.reads = self.stats.reads.saturating_add(s.reads);
        self.stats.malformed += s.malformed;
        self.stats.after_today += s.after_today;
        self.stats.before_lookback += s.before_lookback;
        for (dataset, per) in part.newest {
            match self.newest.get_mut(&dataset) {
                // Nothing of this dataset yet (the first worker's part, nearly always): the
                // part's map is taken whole instead of being inserted again entry by entry.
                Some(mine) if mine.is_empty() => *mine = per,
                _ => {
                    // No room reserved: the workers' parts name mostly the same consumers.
                    for (consumer, read) in per {
                        self.record(&dataset, &consumer, read);
                    }
                }
            }
        }
    }

    /// Move the reads the fold (`fold.rs`) gathered in the hot tables into [`Scan::newest`]. A worker
    /// does it before handing its scan back, so the workers do it side by side.
    pub(super) fn flush(&mut self) {
        self.settle();
        self.seen_ids.settle_into(&mut self.seen);
        let mut hot = std::mem::take(&mut self.hot);
        for (dataset, table) in &mut hot {
            if let Some(per) = self.newest.get_mut(dataset.as_str()) {
                per.reserve(table.len());
            }
            for Slot { key, read: h } in table.drain() {
                let version = |v: u32| self.memo.versions[v as usize].0.clone();
                let read = NewestRead {
                    at: hot::instant(h.at, h.at_offset),
                    version: version(h.version),
                    oldest_line: if h.oldest == NO_VERSION {
                        u64::MAX
                    } else {
                        self.memo.versions[h.oldest as usize].0.major
                    },
                    reads: h.reads,
                    known: (h.known_version != NO_VERSION).then(|| KnownRead {
                        at: hot::instant(h.known_at, h.known_offset),
                        version: version(h.known_version),
                    }),
                };
                let name = key.bytes();
                self.record(dataset, &Key::from_bytes(&name), read);
            }
        }
    }

    /// Fold one read in.
    pub(super) fn record(&mut self, dataset: &str, consumer: &Key, read: NewestRead) {
        let Some(per) = self.newest.get_mut(dataset) else {
            return;
        };
        match per.get_mut(consumer.as_bytes()) {
            Some(n) => n.absorb(read),
            None => {
                per.insert(consumer.clone(), read);
            }
        }
    }
}

/// A read of the hot table's kind, waiting for [`Scan::settle`].
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    pub(super) d: usize,
    pub(super) key: HotKey,
    pub(super) hash: u64,
    pub(super) ns: i64,
    pub(super) offset: i16,
    pub(super) v: u32,
    pub(super) known: bool,
}
