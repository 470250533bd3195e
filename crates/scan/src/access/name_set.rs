//! A set of column names shared by the reads that read it ([`NameSet`]), most of them kept
//! for the life of the process so that sharing one costs no count.
//!
//! A warehouse scan hands the same few sets from the thread that parses a record to the
//! thread that folds it, read after read. Counted sets (`Arc`) then had their count raised on
//! one core and lowered on the other, and each such step waited for the count's cache line to
//! come across: a twentieth of a dense Databricks scan. A set made by the scan's per-thread
//! tables (the sets of names and their unions, in `column_sets`) is kept instead, never
//! counted and never freed, up to [`KEPT_BYTES`] in all; past that, sets are counted as
//! before. The tables make each set once per thread, so an ordinary log keeps a few
//! kilobytes, and an adversarial one cannot keep more than the cap.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The most the kept sets may take in all, their names' bytes and a bound of their nodes
/// ([`footprint`]).
pub const KEPT_BYTES: usize = 16 << 20;

/// The bytes kept so far in this process.
static KEPT: AtomicUsize = AtomicUsize::new(0);

/// A set of column names: compared, hashed and shown as the set it holds.
#[derive(Clone)]
pub struct NameSet(Held);

#[derive(Clone)]
enum Held {
    Kept(&'static BTreeSet<String>),
    Counted(Arc<BTreeSet<String>>),
}

impl NameSet {
    /// A set counted and freed with its last holder, as any set made outside the scan's
    /// tables is.
    pub fn counted(names: BTreeSet<String>) -> NameSet {
        NameSet(Held::Counted(Arc::new(names)))
    }

    /// A set kept for the process's life while the cap allows, counted past it.
    pub fn kept(names: BTreeSet<String>) -> NameSet {
        keep(names, &KEPT, KEPT_BYTES)
    }

    /// Whether `a` and `b` are the same set, not only equal ones.
    pub fn ptr_eq(a: &NameSet, b: &NameSet) -> bool {
        a.address() == b.address()
    }

    /// Where the set is: one key for the tables of what was worked out from sets. The set
    /// must be held as long as its address is a key, so that no other set is made there.
    pub fn address(&self) -> usize {
        let set: &BTreeSet<String> = self;
        std::ptr::from_ref(set) as usize
    }

    /// Whether the set is kept for the process's life (no count).
    pub fn is_kept(&self) -> bool {
        matches!(self.0, Held::Kept(_))
    }
}

/// `names` kept while `kept` stays within `cap`, counted past it.
fn keep(names: BTreeSet<String>, kept: &AtomicUsize, cap: usize) -> NameSet {
    let size = footprint(&names);
    let fits = kept
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
            used.checked_add(size).filter(|&after| after <= cap)
        })
        .is_ok();
    if fits {
        NameSet(Held::Kept(Box::leak(Box::new(names))))
    } else {
        NameSet::counted(names)
    }
}

/// A bound of what a set takes from the allocator: the set, its tree's nodes (each room for
/// eleven names and twelve edges, a node for each five names or fewer, as a tree is at
/// least half full), and each name's bytes with the allocator's word before them. A set of
/// one name takes a whole node.
fn footprint(names: &BTreeSet<String>) -> usize {
    const NODE: usize = 11 * std::mem::size_of::<String>() + 12 * 8 + 16;
    let nodes = names.len().div_ceil(5).max(1);
    std::mem::size_of::<BTreeSet<String>>()
        + nodes * NODE
        + names.iter().map(|n| n.len() + 16).sum::<usize>()
}

impl Deref for NameSet {
    type Target = BTreeSet<String>;

    fn deref(&self) -> &BTreeSet<String> {
        match &self.0 {
            Held::Kept(set) => set,
            Held::Counted(set) => set,
        }
    }
}

impl PartialEq for NameSet {
    fn eq(&self, other: &NameSet) -> bool {
        NameSet::ptr_eq(self, other) || **self == **other
    }
}

impl Eq for NameSet {}

impl Hash for NameSet {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl std::fmt::Debug for NameSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> BTreeSet<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sets_are_kept_up_to_the_cap_then_counted() {
        let used = AtomicUsize::new(0);
        let one = names(&["geom", "name"]);
        let cap = 2 * footprint(&one);
        let first = keep(one.clone(), &used, cap);
        let second = keep(one.clone(), &used, cap);
        let third = keep(one.clone(), &used, cap);
        assert!(first.is_kept() && second.is_kept(), "two fit under the cap");
        assert!(!third.is_kept(), "the third is past the cap: counted");
        assert_eq!(used.load(Ordering::Relaxed), cap);
        // Kept or counted, each is the set it was made of, and equal sets are equal.
        for s in [&first, &second, &third] {
            assert_eq!(**s, one);
        }
        assert_eq!(first, third);
        assert!(!NameSet::ptr_eq(&first, &second), "two sets, not one");
        assert!(NameSet::ptr_eq(&third, &third.clone()));
        assert!(NameSet::ptr_eq(&first, &first.clone()));
        assert_ne!(first, keep(names(&["geom"]), &used, cap));
        assert_eq!(format!("{first:?}"), r#"{"geom", "name"}"#);
    }
}
