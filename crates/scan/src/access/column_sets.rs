//! Which attributes of a dataset a read read ([`Columns`]): all of them, these, or "cannot
//! tell". The sets of names are shared: a reader of a warehouse's records hands out the same
//! few sets again and again, and the reads of one burst unite the same sets again and again,
//! so each set and each union is made once per thread.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::hash::BuildHasherDefault;
use std::sync::Arc;

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
    /// reading the record.
    Named(Arc<BTreeSet<String>>),
}

impl Columns {
    /// These columns and no other.
    pub fn named(names: impl IntoIterator<Item = String>) -> Columns {
        Columns::Named(Arc::new(names.into_iter().collect()))
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
                } else if !Arc::ptr_eq(a, &b) {
                    *a = united(a, &b);
                }
            }
        }
    }
}

/// A shared set by its address.
type SetKey = (usize, usize);

/// How many unions a thread keeps: past it they are dropped and made again as met.
pub(crate) const UNIONS_KEPT: usize = 1 << 14;

thread_local! {
    /// The unions this thread has made, by the addresses of the two sets, each kept with
    /// both sets: no other set can be made at their addresses while they are held here.
    static UNIONS: RefCell<Unions> = RefCell::default();
}

/// Addresses hashed as the scan's names are, not with the standard keyed hasher: the keys are
/// this process's own addresses, and one is looked up for every row of a burst.
type Unions = HashMap<SetKey, [Arc<BTreeSet<String>>; 3], BuildHasherDefault<NameHasher>>;

/// `a` and `b` together: a burst of Databricks rows, one column each, unites the same sets
/// read after read, and a copy of the names for each row was the folding thread's largest
/// allocation. `a` itself when `b` adds nothing to it; that is kept too, since asking the
/// sets first (comparing names) cost more than the lookup.
fn united(a: &Arc<BTreeSet<String>>, b: &Arc<BTreeSet<String>>) -> Arc<BTreeSet<String>> {
    let key = (Arc::as_ptr(a) as usize, Arc::as_ptr(b) as usize);
    UNIONS.with(|unions| {
        let mut unions = unions.borrow_mut();
        if let Some([_, _, both]) = unions.get(&key) {
            return Arc::clone(both);
        }
        let both = if b.is_subset(a) {
            Arc::clone(a)
        } else {
            Arc::new(a.union(b).cloned().collect())
        };
        if unions.len() >= UNIONS_KEPT {
            unions.clear();
        }
        unions.insert(key, [Arc::clone(a), Arc::clone(b), Arc::clone(&both)]);
        both
    })
}
