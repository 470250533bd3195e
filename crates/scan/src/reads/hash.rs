//! The map keys and the hasher of the scan: consumer names kept inline, and a fast hash.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map keyed by dataset or consumer name. The scan does two lookups per read, and SipHash
/// was a fifth of its time; names come from the platform's own log, so a fast
/// multiply-rotate hash (as in rustc's FxHash) is used instead of a DoS-resistant one.
pub type NameMap<V> = HashMap<String, V, BuildHasherDefault<NameHasher>>;

/// A map keyed by consumer name ([`Key`]), with the same hasher: the scan keeps the newest
/// read of each consumer of a dataset in one.
pub type KeyMap<V> = HashMap<Key, V, BuildHasherDefault<NameHasher>>;

/// A consumer name as a map key, kept inside the table when short: a large log has a read
/// per line to look up, and chasing each key's heap pointer was a cache miss per read.
#[derive(Clone, Debug)]
pub enum Key {
    Inline { len: u8, bytes: [u8; 31] },
    Heap(Box<[u8]>),
}

impl Key {
    /// The key of a name's bytes (a name's: keys hold UTF-8).
    #[inline]
    pub fn from_bytes(b: &[u8]) -> Key {
        match u8::try_from(b.len()) {
            Ok(len) if b.len() <= 31 => {
                let mut bytes = [0u8; 31];
                bytes[..b.len()].copy_from_slice(b);
                Key::Inline { len, bytes }
            }
            _ => Key::Heap(b.into()),
        }
    }

    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Key::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Key::Heap(b) => b,
        }
    }

    /// The name; keys are only built from `&str`, so this is lossless.
    pub fn name(&self) -> String {
        String::from_utf8_lossy(self.as_bytes()).into_owned()
    }
}

// Hash and equality are those of the bytes, so a `&[u8]` can look a key up (`Borrow`).
impl std::hash::Hash for Key {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl PartialEq for Key {
    #[inline]
    fn eq(&self, other: &Key) -> bool {
        match (self, other) {
            // Two fixed-size arrays: compared inline, with no call to `memcmp` (the unused
            // tail of an inline key is always zero, so equal names give equal arrays).
            (Key::Inline { len: a, bytes: x }, Key::Inline { len: b, bytes: y }) => {
                a == b && x == y
            }
            _ => self.as_bytes() == other.as_bytes(),
        }
    }
}

impl Eq for Key {}

impl std::borrow::Borrow<[u8]> for Key {
    #[inline]
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// The hasher of [`NameMap`].
#[derive(Default, Clone, Copy)]
pub struct NameHasher(u64);

impl Hasher for NameHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        // The tail (up to seven bytes) as one zero-padded word, not byte by byte: consumer
        // names are hashed once per line.
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(i)).wrapping_mul(0xf135_7aea_2e62_a9c5);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // Fold the high bits down: hashbrown takes its bucket from the low bits and its tag
        // from the top seven.
        self.0 ^ (self.0 >> 29)
    }
}
