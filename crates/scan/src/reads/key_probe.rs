//! A mapped key, compiled for the JSON walks ([`KeyProbe`]), and how deep they go: what the
//! field mapping and both walks of a JSON line share, below all three.

/// Nesting deeper than this goes to the model (whose parser has its own limit).
pub const MAX_DEPTH: usize = 64;

/// A key as the scanner compares it: its length and its first and last eight bytes
/// (zero-padded when shorter), which decide equality for keys of up to sixteen bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyProbe {
    pub len: usize,
    pub head: u64,
    pub tail: u64,
}

impl KeyProbe {
    pub fn of(key: &[u8]) -> KeyProbe {
        let (head, tail) = KeyProbe::words(key, 0, key.len());
        KeyProbe {
            len: key.len(),
            head,
            tail,
        }
    }

    /// The head and tail words of the key `b[start..end]`, read in place: a short key is
    /// read as the eight bytes at its start (a key in a line is followed by at least its
    /// quote and colon) with the bytes past it masked off.
    #[inline(always)]
    pub fn words(b: &[u8], start: usize, end: usize) -> (u64, u64) {
        let len = end - start;
        let word = |from: usize, n: usize| -> u64 {
            let mut w = [0u8; 8];
            match b.get(from..from + 8) {
                Some(eight) => {
                    w.copy_from_slice(eight);
                    let v = u64::from_le_bytes(w);
                    if n >= 8 {
                        v
                    } else {
                        v & ((1u64 << (8 * n)) - 1)
                    }
                }
                None => {
                    w[..n].copy_from_slice(&b[from..from + n]);
                    u64::from_le_bytes(w)
                }
            }
        };
        let head = word(start, len.min(8));
        let tail = if len > 8 { word(end - 8, 8) } else { head };
        (head, tail)
    }
}
