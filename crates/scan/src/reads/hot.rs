//! The table a scan updates on every read: one cache line per consumer.
//!
//! The worst case of a scan (every line a read of the scanned dataset) looks a consumer up
//! on every line, at random among thousands. With the full `NewestRead` (the `contracts` crate's) in a
//! general map an entry was 96 bytes, so a lookup touched two cache lines and ten thousand
//! consumers did not fit the core's cache. Here an
//! entry is exactly one 64-byte line: the name inline (up to [`HotKey::MAX`] bytes), the
//! instants as nanoseconds, the versions as numbers in the scan's table of versions. A read
//! this cannot hold (a longer name, an instant outside 1677–2262, a leap second, an offset
//! that is not whole minutes) goes to the general map instead; the merge law makes the two
//! one answer.

use chrono::{DateTime, FixedOffset, Offset, Utc};

/// A consumer name of up to [`HotKey::MAX`] bytes as three words: the bytes zero-padded,
/// the length in the last byte. Equal names give equal words and a hash of three
/// multiplications, with no loop and no call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HotKey([u64; 3]);

impl HotKey {
    pub const MAX: usize = 23;

    /// The key of `name`; `None` when it is empty or longer than [`HotKey::MAX`]. Built from
    /// whole-word loads of the name: copying it into a zeroed buffer and reading the words
    /// back made the loads wait for the bytes just stored (the one stall `perf` showed in a
    /// CSV read's fold, a sixth of it).
    #[inline]
    pub fn new(name: &[u8]) -> Option<HotKey> {
        let len = name.len();
        if len == 0 || len > Self::MAX {
            return None;
        }
        Some(HotKey([
            word_of(name, 0),
            word_of(name, 8),
            word_of(name, 16) | ((len as u64) << 56),
        ]))
    }

    #[inline]
    pub fn hash(&self) -> u64 {
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let [a, b, c] = self.0;
        let h = (a.wrapping_mul(K).rotate_left(23) ^ b).wrapping_mul(K);
        let h = (h.rotate_left(23) ^ c).wrapping_mul(K);
        // hashbrown takes the bucket from the low bits and the tag from the top seven.
        h ^ (h >> 32)
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(24);
        for w in self.0 {
            b.extend_from_slice(&w.to_le_bytes());
        }
        let len = usize::from(b[23]);
        b.truncate(len);
        b
    }
}

/// Bytes `from..from + 8` of `name` as a little-endian word, zero past the name's end.
#[inline(always)]
fn word_of(name: &[u8], from: usize) -> u64 {
    let len = name.len();
    if from + 8 <= len {
        return load8(name, from);
    }
    if from >= len {
        return 0;
    }
    let n = len - from;
    if len >= 8 {
        // The name's last eight bytes, shifted down past those before `from`.
        load8(name, len - 8) >> (8 * (8 - n))
    } else if n >= 4 {
        // Two overlapping four-byte loads: the overlap has the same bytes in both.
        load4(name, from) | (load4(name, len - 4) << (8 * (n - 4)))
    } else {
        let mut w = 0u64;
        for (i, &c) in name[from..].iter().enumerate() {
            w |= u64::from(c) << (8 * i);
        }
        w
    }
}

#[inline(always)]
fn load8(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline(always)]
fn load4(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u64::from(u32::from_le_bytes(w))
}

/// An instant as nanoseconds since the Unix epoch and the offset it was written with, in
/// minutes; `None` for one the hot table cannot hold exactly.
#[inline]
pub fn stamp(t: &DateTime<FixedOffset>) -> Option<(i64, i16)> {
    // chrono keeps a leap second as a nanosecond count of a second or more; as a plain count
    // it would equal the next second.
    if t.timestamp_subsec_nanos() >= 1_000_000_000 {
        return None;
    }
    let offset = t.offset().local_minus_utc();
    if offset % 60 != 0 {
        return None;
    }
    Some((t.timestamp_nanos_opt()?, i16::try_from(offset / 60).ok()?))
}

/// The instant [`stamp`] gave.
#[inline]
pub fn instant(ns: i64, offset_minutes: i16) -> DateTime<FixedOffset> {
    let offset = FixedOffset::east_opt(i32::from(offset_minutes) * 60).unwrap_or_else(|| Utc.fix());
    DateTime::from_timestamp_nanos(ns).with_timezone(&offset)
}

/// A version's number in the scan's table of versions; [`NO_VERSION`] for none.
pub const NO_VERSION: u32 = u32::MAX;

/// One consumer's reads so far: the newest read, the newest read of a version the store
/// has, the version of the oldest line read, and the count.
#[derive(Clone, Copy, Debug)]
pub struct HotRead {
    pub at: i64,
    pub known_at: i64,
    pub reads: u64,
    pub version: u32,
    /// [`NO_VERSION`] when no read was of a version the store has.
    pub known_version: u32,
    /// The known version with the lowest major read; [`NO_VERSION`] when none.
    pub oldest: u32,
    pub at_offset: i16,
    pub known_offset: i16,
}

/// A table entry, aligned so that it is one cache line, never two.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct Slot {
    pub key: HotKey,
    pub read: HotRead,
}

// If a field is added the entry no longer fits a line: this fails to compile.
const _: () = assert!(std::mem::size_of::<Slot>() == 64);

/// The consumers of one dataset.
#[derive(Clone, Debug, Default)]
pub struct HotTable {
    table: hashbrown::HashTable<Slot>,
}

impl HotTable {
    /// The entry of `key`, if the consumer has one.
    #[inline]
    pub fn get_mut(&mut self, key: &HotKey, hash: u64) -> Option<&mut HotRead> {
        self.table
            .find_mut(hash, |s| s.key == *key)
            .map(|s| &mut s.read)
    }

    /// Ask for the cache line of the entry of `hash` ([`super::wide::prefetch`]), so that it
    /// is on its way when [`HotTable::get_mut`] comes for it a few reads later.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        if let Some(slot) = self.table.find(hash, |_| true) {
            super::wide::prefetch(slot);
        }
    }

    /// A consumer's first read; `key` must have no entry yet.
    #[inline]
    pub fn insert(&mut self, key: HotKey, hash: u64, read: HotRead) {
        self.table
            .insert_unique(hash, Slot { key, read }, |s| s.key.hash());
    }

    /// How many consumers have an entry.
    #[inline]
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether no consumer has an entry.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    pub fn drain(&mut self) -> impl Iterator<Item = Slot> + '_ {
        self.table.drain()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// An instant the table holds comes back as the same instant with the same offset
        /// (as `DateTime` equality ignores the offset, the offsets are compared too).
        #[test]
        fn stamps_round_trip(secs in -9_000_000_000i64..9_000_000_000, nanos in 0u32..1_000_000_000, minutes in -1439i32..1440) {
            let offset = FixedOffset::east_opt(minutes * 60).unwrap();
            let t = DateTime::from_timestamp(secs, nanos).unwrap().with_timezone(&offset);
            let (ns, m) = stamp(&t).unwrap();
            let back = instant(ns, m);
            proptest::prop_assert_eq!(back, t);
            proptest::prop_assert_eq!(back.offset(), t.offset());
            proptest::prop_assert_eq!(back.to_rfc3339(), t.to_rfc3339());
        }

        /// Keys are equal exactly when the names are, and give back the name.
        #[test]
        fn keys_are_names(a in proptest::collection::vec(proptest::num::u8::ANY, 0..30), b in proptest::collection::vec(proptest::num::u8::ANY, 0..30)) {
            let (ka, kb) = (HotKey::new(&a), HotKey::new(&b));
            proptest::prop_assert_eq!(ka.is_some(), !a.is_empty() && a.len() <= HotKey::MAX);
            if let (Some(ka), Some(kb)) = (ka, kb) {
                proptest::prop_assert_eq!(ka == kb, a == b);
                proptest::prop_assert_eq!(ka.bytes(), a);
            }
        }
    }

    #[test]
    fn what_the_table_cannot_hold_is_refused() {
        // Out of the nanosecond range, a leap second, an offset of seconds.
        let far = DateTime::parse_from_rfc3339("2300-01-01T00:00:00Z").unwrap();
        assert_eq!(stamp(&far), None);
        let leap = DateTime::parse_from_rfc3339("2016-12-31T23:59:60Z").unwrap();
        assert_eq!(stamp(&leap), None);
        let odd = DateTime::from_timestamp(0, 0)
            .unwrap()
            .with_timezone(&FixedOffset::east_opt(30).unwrap());
        assert_eq!(stamp(&odd), None);
        // A name of 24 bytes goes to the general map.
        assert!(HotKey::new(&[b'a'; 24]).is_none());
        assert!(HotKey::new(&[b'a'; 23]).is_some());
    }
}
