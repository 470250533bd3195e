//! What the reads of a scan showed of their attributes, gathered while the scan runs: each
//! attribute name numbered once per scan, each principal's newest read of each attribute
//! kept by number, and the numbers of a shared set's names found by the set's address. A
//! read then costs a hash of its principal and of its set's address; kept
//! in ordered maps of names ([`SeenColumns`]) it cost a dozen string comparisons per name,
//! the largest part of folding an access log's read on the thread that folds them in order.
//! [`SeenIds::settle_into`] makes the [`SeenColumns`] at the end, the same as adding each
//! read to them would have.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};

use contracts_scan::access::{ByAddress, Reader};
use contracts_scan::reads::hash::NameMap;

use super::terms::SeenColumns;
use crate::consumers::access::Columns;

#[derive(Debug, Clone, Default)]
pub(super) struct SeenIds {
    /// Each attribute name met, by its number, and the number of each.
    names: Vec<String>,
    numbers: NameMap<usize>,
    /// The numbers of a shared set's names: a warehouse reader hands out the same few sets
    /// read after read, and each name of each read had been hashed.
    by_set: ByAddress<1, Vec<usize>>,
    /// By dataset and principal, each the place of its entry in `ids`.
    per: NameMap<NameMap<usize>>,
    ids: Vec<ById>,
    /// The reader of the last read added by [`SeenIds::add_of`], held (so that no other
    /// reader is made at its address), and the place of its entry: the bursts close a
    /// reader's reads one after another, and each had been looked up by its dataset and
    /// principal.
    last: Option<(Arc<Reader>, usize)>,
}

/// One principal's [`SeenColumns`] of one dataset, its names by number.
#[derive(Debug, Clone, Default)]
struct ById {
    told: u64,
    all: Option<DateTime<FixedOffset>>,
    named: Vec<Option<DateTime<FixedOffset>>>,
}

impl SeenIds {
    /// [`SeenColumns::add`] of one read of `dataset` by `principal`.
    #[cfg(test)]
    pub(super) fn add(
        &mut self,
        dataset: &str,
        principal: &str,
        at: DateTime<FixedOffset>,
        columns: &Columns,
    ) {
        // A read that cannot tell is not counted, and makes no entry.
        if *columns == Columns::Unknown {
            return;
        }
        let id = self.id(dataset, principal);
        self.add_at(id, at, columns);
    }

    /// [`SeenIds::add`] of a read of `reader`'s dataset by `principal` (the reader's, or
    /// the name of the anonymous).
    pub(super) fn add_of(
        &mut self,
        reader: &Arc<Reader>,
        principal: &str,
        at: DateTime<FixedOffset>,
        columns: &Columns,
    ) {
        if *columns == Columns::Unknown {
            return;
        }
        let id = match &self.last {
            Some((last, id)) if Arc::ptr_eq(last, reader) => *id,
            _ => {
                let id = self.id(&reader.dataset, principal);
                self.last = Some((Arc::clone(reader), id));
                id
            }
        };
        self.add_at(id, at, columns);
    }

    /// The place in `ids` of the entry of `principal` on `dataset`, made if new.
    fn id(&mut self, dataset: &str, principal: &str) -> usize {
        let per = match self.per.get_mut(dataset) {
            Some(per) => per,
            None => self.per.entry(dataset.to_string()).or_default(),
        };
        match per.get(principal) {
            Some(&id) => id,
            None => {
                self.ids.push(ById::default());
                per.insert(principal.to_string(), self.ids.len() - 1);
                self.ids.len() - 1
            }
        }
    }

    fn add_at(&mut self, id: usize, at: DateTime<FixedOffset>, columns: &Columns) {
        let seen = &mut self.ids[id];
        match columns {
            Columns::Unknown => {}
            // As `SeenColumns::add`: `max`, which keeps the read counted last on a tie.
            Columns::All => seen.all = seen.all.max(Some(at)),
            Columns::Named(names) => {
                let (all, numbers) = (&mut self.names, &mut self.numbers);
                let numbers = self.by_set.get_or_make([names], || {
                    names
                        .iter()
                        .map(|name| match numbers.get(name.as_str()) {
                            Some(&n) => n,
                            None => {
                                all.push(name.clone());
                                numbers.insert(name.clone(), all.len() - 1);
                                all.len() - 1
                            }
                        })
                        .collect()
                });
                for &number in numbers {
                    if seen.named.len() <= number {
                        seen.named.resize(number + 1, None);
                    }
                    let last = &mut seen.named[number];
                    *last = Some(match *last {
                        Some(last) => last.max(at),
                        None => at,
                    });
                }
            }
        }
        seen.told += 1;
    }

    /// Add what was gathered to `seen` (by dataset and principal) as [`SeenColumns`];
    /// nothing is left gathered after.
    pub(super) fn settle_into(
        &mut self,
        seen: &mut BTreeMap<String, BTreeMap<String, SeenColumns>>,
    ) {
        let names = &self.names;
        let ids = std::mem::take(&mut self.ids);
        self.last = None;
        for (dataset, per) in std::mem::take(&mut self.per) {
            let mine = seen.entry(dataset).or_default();
            for (principal, id) in per {
                let by_id = &ids[id];
                let named = by_id
                    .named
                    .iter()
                    .enumerate()
                    .filter_map(|(n, at)| Some((names[n].clone(), (*at)?)))
                    .collect();
                let settled = SeenColumns {
                    told: by_id.told,
                    all: by_id.all,
                    named,
                };
                mine.entry(principal).or_default().absorb(settled);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(s).expect("an instant")
    }

    fn named(names: &[&str]) -> Columns {
        Columns::named(names.iter().map(|n| n.to_string()))
    }

    /// More sets than the numbers kept by set: each set made and dropped in turn, so that a
    /// later one may be made at an earlier one's address once the kept numbers are cleared.
    #[test]
    fn past_the_sets_kept_each_read_counts_its_own_names() {
        let mut ids = SeenIds::default();
        let mut each: BTreeMap<(String, String), SeenColumns> = BTreeMap::new();
        for i in 0..contracts_scan::access::KEPT_BY_ADDRESS + 50 {
            let columns = named(&[&format!("C{}", i % 97), "GEOM"]);
            let t = at("2026-11-01T00:00:00Z") + chrono::Duration::seconds(i as i64);
            ids.add("roads", "a", t, &columns);
            each.entry(("roads".to_string(), "a".to_string()))
                .or_default()
                .add(t, &columns);
        }
        let mut by_dataset = BTreeMap::new();
        ids.settle_into(&mut by_dataset);
        let settled = &by_dataset["roads"]["a"];
        assert_eq!(settled, &each[&("roads".to_string(), "a".to_string())]);
        assert_eq!(settled.named.len(), 98);
    }

    /// Reads added by their readers, in runs of one reader as the bursts close them, each
    /// reader dropped after its run so that the next may be made at its address, count as
    /// the same reads added by dataset and principal.
    #[test]
    fn reads_added_by_reader_count_as_by_dataset_and_principal() {
        let reader = |dataset: &str, principal: Option<&str>| {
            Arc::new(Reader {
                principal: principal.map(str::to_string),
                dataset: dataset.to_string(),
                contract: "1.0.0".to_string(),
                object: format!("{dataset}/v1"),
            })
        };
        let mut by_reader = SeenIds::default();
        let mut by_name = SeenIds::default();
        for i in 0..40usize {
            let dataset = ["roads", "towns"][i % 2];
            let principal = [Some("a"), Some("b"), None][i % 3];
            let name = principal.unwrap_or("anonymous");
            let r = reader(dataset, principal);
            for k in 0..(i % 4) {
                let t = at("2026-11-01T00:00:00Z") + chrono::Duration::minutes((i * 7 + k) as i64);
                let columns = named(&[["NAME", "GEOM", "POP_EST"][(i + k) % 3]]);
                by_reader.add_of(&r, name, t, &columns);
                by_name.add(dataset, name, t, &columns);
            }
        }
        let (mut got, mut want) = (BTreeMap::new(), BTreeMap::new());
        by_reader.settle_into(&mut got);
        by_name.settle_into(&mut want);
        assert_eq!(got, want);
        assert_eq!(got["roads"].len(), 3, "{got:?}");
    }

    /// The same reads added to `SeenColumns` one by one and through the numbers come to the
    /// same counts, ties between one instant written with two offsets included.
    #[test]
    fn numbered_names_settle_to_what_adding_each_read_makes() {
        // One set shared by several reads, as a warehouse reader hands them out, beside
        // sets of the same names made apart.
        let shared = named(&["NAME", "GEOM"]);
        let reads = [
            ("roads", "a", "2026-11-01T09:45:00Z", shared.clone()),
            ("roads", "b", "2026-11-01T11:00:00Z", shared.clone()),
            ("roads", "a", "2026-11-01T09:30:00Z", shared.clone()),
            (
                "roads",
                "a",
                "2026-11-01T10:00:00Z",
                named(&["NAME", "GEOM"]),
            ),
            (
                "roads",
                "a",
                "2026-11-01T09:00:00Z",
                named(&["NAME", "POP_EST"]),
            ),
            ("roads", "a", "2026-11-01T12:00:00+02:00", named(&["NAME"])),
            ("roads", "a", "2026-11-02T10:00:00Z", Columns::Unknown),
            ("roads", "b", "2026-11-01T08:00:00Z", Columns::All),
            ("roads", "b", "2026-11-01T07:00:00Z", named(&["GEOM"])),
            ("towns", "a", "2026-11-03T08:00:00Z", named(&["POP_EST"])),
            ("towns", "a", "2026-11-03T08:00:00Z", Columns::All),
        ];
        let mut ids = SeenIds::default();
        let mut each: BTreeMap<(String, String), SeenColumns> = BTreeMap::new();
        for (dataset, principal, t, columns) in &reads {
            ids.add(dataset, principal, at(t), columns);
            each.entry((dataset.to_string(), principal.to_string()))
                .or_default()
                .add(at(t), columns);
        }
        let mut by_dataset = BTreeMap::new();
        ids.settle_into(&mut by_dataset);
        let settled: BTreeMap<(String, String), SeenColumns> = by_dataset
            .into_iter()
            .flat_map(|(d, per)| per.into_iter().map(move |(p, s)| ((d.clone(), p), s)))
            .collect();
        assert_eq!(settled, each);
        // The offset of the tie is the one counted last, as `SeenColumns::add` keeps it.
        let a = &settled[&("roads".to_string(), "a".to_string())];
        assert_eq!(a.named["NAME"].offset().local_minus_utc(), 7200);
        assert_eq!(a.told, 5);
        let mut again = BTreeMap::new();
        ids.settle_into(&mut again);
        assert!(again.is_empty(), "settling takes what was gathered");
    }
}
