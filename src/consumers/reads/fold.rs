//! The fold of one read into a scan ([`Fold`], which the scanner crate's readers and
//! `contracts_scan::reads::blocks::fold` call): a read of a requested dataset inside the days
//! is counted and kept, as the newest read of its consumer, in the hot tables
//! (`contracts_scan::reads::hot`), a few reads at a time ([`Scan::settle`]), or in the general
//! map when the table cannot hold it.

use chrono::Utc;

use contracts_scan::reads::blocks::Fold;
use contracts_scan::reads::hash::Key;
use contracts_scan::reads::hot::{self, HotKey, HotRead, NO_VERSION};

use super::scan::{Pending, Scan};
use super::terms::{KnownRead, NewestRead, ScanRequest};
use contracts_scan::reads::timestamps::{At, Day};

/// The scanner crate's readers hand each read's fields to the scan.
impl Fold for Scan {
    fn only_dataset(req: &ScanRequest) -> Option<&str> {
        match req.datasets.iter().collect::<Vec<_>>()[..] {
            [one] => Some(one),
            _ => None,
        }
    }

    #[inline]
    fn is_requested(req: &ScanRequest, dataset: &str) -> bool {
        req.datasets.contains(dataset)
    }

    // Called on every line by the scanner crate's generic readers: across the crate
    // boundary `#[inline]` was not enough (callgrind: 45 instructions a read more).
    #[inline(always)]
    fn dataset_index(&self, dataset: &[u8]) -> Option<usize> {
        Scan::dataset_index(self, dataset)
    }

    /// A read of the `d`th requested dataset ([`Scan::dataset_index`]).
    #[inline]
    fn fold_into(
        &mut self,
        req: &ScanRequest,
        d: usize,
        at: At<'_>,
        consumer: &[u8],
        contract: &[u8],
    ) -> Result<(), String> {
        let scan = self;
        if consumer.is_empty() {
            return Err("`consumer` is empty".to_string());
        }
        // The instant as the hot table keeps it when it can (`stamp`), else as parsed.
        let fast = match at {
            At::Text(text) => scan.memo.rfc3339(text, req),
            At::UtcNanos(ns) => Some((scan.memo.place_of_nanos(ns, req), ns, 0)),
            At::Instant(_) => None,
        };
        let (place, stamp, full) = match fast {
            Some((place, ns, offset)) => (place, Some((ns, offset)), None),
            None => {
                let t = at.instant()?;
                let day = t.with_timezone(&Utc).date_naive();
                (Day::of(day, req.from, req.to), hot::stamp(&t), Some(t))
            }
        };
        match place {
            Day::After => scan.stats.after_today += 1,
            Day::Before => scan.stats.before_lookback += 1,
            Day::Inside => {
                let (v, known) = scan.memo.version(req, d, &scan.hot[d].0, contract)?;
                scan.stats.reads += 1;
                let key = HotKey::new(consumer);
                let (Some((ns, offset)), Some(key)) = (stamp, key) else {
                    // What the hot table cannot hold goes to the general map as it is.
                    let at = full.unwrap_or_else(|| {
                        let (ns, offset) = stamp.unwrap_or((0, 0));
                        hot::instant(ns, offset)
                    });
                    let version = scan.memo.versions[v as usize].0.clone();
                    let read = NewestRead {
                        at,
                        oldest_line: if known { version.major } else { u64::MAX },
                        reads: 1,
                        known: known.then(|| KnownRead {
                            at,
                            version: version.clone(),
                        }),
                        version,
                    };
                    let dataset = scan.hot[d].0.clone();
                    scan.record(&dataset, &Key::from_bytes(consumer), read);
                    return Ok(());
                };
                let hash = key.hash();
                scan.hot[d].1.prefetch(hash);
                // Updated a few reads later, with others (`Scan::settle`), when its entry has
                // reached the cache.
                scan.pending.push(Pending {
                    d,
                    key,
                    hash,
                    ns,
                    offset,
                    v,
                    known,
                });
                if scan.pending.len() == PENDING {
                    scan.settle();
                }
            }
        }
        Ok(())
    }
}

/// Reads waiting for their table entry, at most this many: a lookup in a table of thousands
/// of consumers misses the cache (it was a fifth of the worst case). Each read's entry is
/// asked for when the read is parked ([`super::hot::HotTable::prefetch`]) and updated when
/// the batch is full, so the line was on its way while the next lines were parsed. (Asking
/// for a whole batch's entries at once at the update, with loads, still waited for the
/// first of them.)
const PENDING: usize = 16;

impl Scan {
    /// Fold the pending reads into the hot tables.
    pub(super) fn settle(&mut self) {
        let versions = &self.memo.versions;
        for p in self.pending.drain(..) {
            let Pending {
                d,
                key,
                hash,
                ns,
                offset,
                v,
                known,
            } = p;
            let table = &mut self.hot[d].1;
            match table.get_mut(&key, hash) {
                // What `NewestRead::absorb` does with a fresh read of one line.
                Some(n) => {
                    // `later`, on the hot table's numbers.
                    let newer = |at2: i64, v2: u32, offset2: i16| {
                        ns > at2
                            || (ns == at2
                                && (&versions[v as usize].0, offset)
                                    > (&versions[v2 as usize].0, offset2))
                    };
                    n.reads += 1;
                    if known {
                        if n.oldest == NO_VERSION
                            || versions[v as usize].0.major < versions[n.oldest as usize].0.major
                        {
                            n.oldest = v;
                        }
                        if n.known_version == NO_VERSION
                            || newer(n.known_at, n.known_version, n.known_offset)
                        {
                            n.known_at = ns;
                            n.known_offset = offset;
                            n.known_version = v;
                        }
                    }
                    if newer(n.at, n.version, n.at_offset) {
                        n.at = ns;
                        n.at_offset = offset;
                        n.version = v;
                    }
                }
                None => {
                    let known_version = if known { v } else { NO_VERSION };
                    table.insert(
                        key,
                        hash,
                        HotRead {
                            at: ns,
                            known_at: ns,
                            reads: 1,
                            version: v,
                            known_version,
                            oldest: known_version,
                            at_offset: offset,
                            known_offset: offset,
                        },
                    );
                }
            }
        }
    }
}
