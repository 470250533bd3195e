//! Which attributes of a dataset a read read ([`Columns`]): all of them, these, or "cannot
//! tell". The sets of names are shared: a reader of a warehouse's records hands out the same
//! few sets again and again, and the reads of one burst unite the same sets again and again,
//! so each set and each union is made once per thread.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::hash::BuildHasherDefault;

use super::NameSet;
use crate::reads::hash::NameHasher;

/// What a statement reads of one relation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Columns {
    /// The reader cannot tell: never to be taken as "none".
    #[default]
    Unknown,
    /// Every column (the whole row).
    All,
    /// These columns and no other, folded as PostgreSQL folds identifiers. Shared: a reader
    /// of a warehouse's records hands out the same few sets again and again
    /// (`warehouse::Names`), and a set made on one thread and freed on another cost more than
    /// reading the record; the sets the scan's tables make are never counted ([`NameSet`]).
    Named(NameSet),
}

impl Columns {
    /// These columns and no other.
    pub fn named(names: impl IntoIterator<Item = String>) -> Columns {
        Columns::Named(NameSet::counted(names.into_iter().collect()))
    }

    /// What two reads read together. `All` is every column whatever the other read, so it
    /// absorbs even `Unknown`; otherwise `Unknown` absorbs.
    pub fn union(mut self, other: Columns) -> Columns {
        self.take_in(other);
        self
    }

    /// [`Columns::union`] in place. The sets are shared, so a set that adds nothing leaves
    /// this one as it is, and the union of two sets is made once per thread ([`united`]).
    pub fn take_in(&mut self, other: Columns) {
        match (&mut *self, other) {
            (Columns::All, _) | (Columns::Unknown, Columns::Named(_)) => {}
            (_, Columns::All) => *self = Columns::All,
            (_, Columns::Unknown) => *self = Columns::Unknown,
            (Columns::Named(a), Columns::Named(b)) => {
                if a.is_empty() {
                    *a = b;
                } else if !NameSet::ptr_eq(a, &b) {
                    *a = united(a, &b);
                }
            }
        }
    }
}

/// How many sets a thread keeps: past it they are dropped and made again as met.
pub(crate) const SETS_KEPT: usize = 1 << 14;

thread_local! {
    /// The sets of columns this thread has made, by their names (each behind its length, so
    /// that no two lists of names have one key), and the key being built.
    static SETS: RefCell<(Vec<u8>, NameBytesMap<NameSet>)> = RefCell::default();
}

type NameBytesMap<V> = HashMap<Vec<u8>, V, BuildHasherDefault<NameHasher>>;

/// The set of `names` (sorted, without repeats), each folded by `fold` if given, shared
/// with every read of this thread that read the same: records name the same few sets again
/// and again, and a set of strings made for each record was allocated on the thread that
/// parses and freed on the one that folds.
pub(crate) fn interned(names: &[Cow<'_, str>], fold: Option<fn(&str) -> Cow<'_, str>>) -> NameSet {
    SETS.with(|sets| {
        let (key, kept) = &mut *sets.borrow_mut();
        key.clear();
        // Names folded and names as written are different sets of the same key otherwise.
        key.push(u8::from(fold.is_some()));
        for n in names {
            key.extend_from_slice(&n.len().to_le_bytes());
            key.extend_from_slice(n.as_bytes());
        }
        if let Some(set) = kept.get(key.as_slice()) {
            return set.clone();
        }
        let set: BTreeSet<String> = match fold {
            Some(fold) => names.iter().map(|n| fold(n).into_owned()).collect(),
            None => names.iter().map(|n| n.to_string()).collect(),
        };
        let set = NameSet::kept(set);
        if kept.len() >= SETS_KEPT {
            kept.clear();
        }
        kept.insert(key.clone(), set.clone());
        set
    })
}

/// How many entries a [`ByAddress`] keeps: past it they are dropped and worked out again as
/// met, so an adversarial log costs time, never memory.
pub const KEPT_BY_ADDRESS: usize = 1 << 14;

type Set = NameSet;

/// What was worked out from `N` shared sets, by the sets' addresses: looking a set up by its
/// address costs one hash of a number, where its names cost a hash or a comparison each.
/// Each entry holds its sets, so no other set can be made at those addresses while the
/// entry stands. The addresses are hashed as the scan's names are, not with the standard
/// keyed hasher: they are this process's own.
#[derive(Debug, Clone)]
pub struct ByAddress<const N: usize, V> {
    entries: HashMap<[usize; N], ([Set; N], V), BuildHasherDefault<NameHasher>>,
}

impl<const N: usize, V> Default for ByAddress<N, V> {
    fn default() -> Self {
        ByAddress {
            entries: HashMap::default(),
        }
    }
}

impl<const N: usize, V> ByAddress<N, V> {
    /// The value kept for `sets`, made by `make` when there is none.
    pub fn get_or_make(&mut self, sets: [&Set; N], make: impl FnOnce() -> V) -> &V {
        let key = sets.map(NameSet::address);
        if self.entries.len() >= KEPT_BY_ADDRESS && !self.entries.contains_key(&key) {
            self.entries.clear();
        }
        &self
            .entries
            .entry(key)
            .or_insert_with(|| (sets.map(NameSet::clone), make()))
            .1
    }
}

thread_local! {
    /// The unions this thread has made.
    static UNIONS: RefCell<ByAddress<2, Set>> = RefCell::default();
}

/// `a` and `b` together: a burst of Databricks rows, one column each, unites the same sets
/// read after read, and a copy of the names for each row was the folding thread's largest
/// allocation. `a` itself when `b` adds nothing to it; that is kept too, since asking the
/// sets first (comparing names) cost more than the lookup.
fn united(a: &Set, b: &Set) -> Set {
    UNIONS.with(|unions| {
        let mut unions = unions.borrow_mut();
        let both = unions.get_or_make([a, b], || {
            if b.is_subset(a) {
                a.clone()
            } else {
                // The set of these names this thread holds, if it does: this table is
                // cleared when full and its unions made again, and a kept set made anew
                // each time would be kept twice.
                let names: Vec<_> = a.union(b).map(|n| Cow::Borrowed(n.as_str())).collect();
                interned(&names, None)
            }
        });
        both.clone()
    })
}
