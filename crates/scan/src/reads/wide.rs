//! Sixteen bytes of a JSON string at once ([`specials`]): where its closing quote, a
//! backslash or a control byte is, and which bytes are above ASCII; and a cache line asked
//! for ahead of its use ([`prefetch`]).
//!
//! On x86-64 this is SSE2 (part of the architecture, so no check at run time), through
//! `safe_arch`, whose functions are the intrinsics made safe: this crate forbids `unsafe`.
//! Elsewhere it is the same answer byte by byte ([`portable`]).

/// For the sixteen bytes at `b[k..]`: a bit per byte (the lowest for `b[k]`) that is a quote,
/// a backslash or below 0x20, and a bit per byte above ASCII; `None` when fewer than sixteen
/// bytes are left.
#[inline(always)]
pub fn specials(b: &[u8], k: usize) -> Option<(u32, u32)> {
    let w: [u8; 16] = b.get(k..k + 16)?.try_into().ok()?;
    Some(imp::specials(w))
}

/// For the sixteen bytes at `b[k..]`: a bit per comma, and a bit per byte that stops a CSV
/// line from being split at its commas alone (a quote, or a carriage return, which ends a
/// record to `csv_core`); `None` when fewer than sixteen bytes are left. One pass finds both,
/// where a check for the stops and then a search per comma took the line three times.
#[inline(always)]
pub fn csv_marks(b: &[u8], k: usize) -> Option<(u32, u32)> {
    let w: [u8; 16] = b.get(k..k + 16)?.try_into().ok()?;
    Some(imp::csv_marks(w))
}

/// Ask for the cache line of `value` without waiting for it: a prefetch retires at once,
/// where a load the program then ignores still held up the core until it arrived.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    imp::prefetch(value);
}

#[cfg(target_arch = "x86_64")]
mod imp {
    #[inline(always)]
    pub fn prefetch<T>(value: &T) {
        safe_arch::prefetch_t0(value);
    }

    use safe_arch::{
        bitor_m128i, cmp_eq_mask_i8_m128i, m128i, min_u8_m128i, move_mask_i8_m128i,
        set_splat_i8_m128i,
    };

    #[inline(always)]
    pub fn specials(w: [u8; 16]) -> (u32, u32) {
        let x = m128i::from(w);
        let splat = |c: u8| set_splat_i8_m128i(c as i8);
        let quote = cmp_eq_mask_i8_m128i(x, splat(b'"'));
        let backslash = cmp_eq_mask_i8_m128i(x, splat(b'\\'));
        // Unsigned x <= 0x1f exactly when min(x, 0x1f) is x.
        let control = cmp_eq_mask_i8_m128i(min_u8_m128i(x, splat(0x1f)), x);
        let hits = bitor_m128i(bitor_m128i(quote, backslash), control);
        (
            move_mask_i8_m128i(hits) as u32,
            move_mask_i8_m128i(x) as u32,
        )
    }

    #[inline(always)]
    pub fn csv_marks(w: [u8; 16]) -> (u32, u32) {
        let x = m128i::from(w);
        let splat = |c: u8| set_splat_i8_m128i(c as i8);
        let commas = cmp_eq_mask_i8_m128i(x, splat(b','));
        let stops = bitor_m128i(
            cmp_eq_mask_i8_m128i(x, splat(b'"')),
            cmp_eq_mask_i8_m128i(x, splat(b'\r')),
        );
        (
            move_mask_i8_m128i(commas) as u32,
            move_mask_i8_m128i(stops) as u32,
        )
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    /// No portable prefetch: the entry is fetched when it is updated.
    #[inline(always)]
    pub fn prefetch<T>(_: &T) {}

    #[inline(always)]
    pub fn specials(w: [u8; 16]) -> (u32, u32) {
        super::portable(w)
    }

    #[inline(always)]
    pub fn csv_marks(w: [u8; 16]) -> (u32, u32) {
        super::portable_csv(w)
    }
}

/// [`specials`] byte by byte: what other architectures use, compiled everywhere so that the
/// tests hold it to the same answers as SSE2.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn portable(w: [u8; 16]) -> (u32, u32) {
    marks(w, |c| c == b'"' || c == b'\\' || c < 0x20, |c| c >= 0x80)
}

/// [`csv_marks`] byte by byte, as [`portable`] is to [`specials`].
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn portable_csv(w: [u8; 16]) -> (u32, u32) {
    marks(w, |c| c == b',', |c| c == b'"' || c == b'\r')
}

/// A bit per byte of `w` that `first` holds for, and one per byte that `second` holds for.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn marks(w: [u8; 16], first: impl Fn(u8) -> bool, second: impl Fn(u8) -> bool) -> (u32, u32) {
    let mut a = 0u32;
    let mut b = 0u32;
    for (i, &c) in w.iter().enumerate() {
        a |= u32::from(first(c)) << i;
        b |= u32::from(second(c)) << i;
    }
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::{csv_marks, specials};

    /// Every byte value in every position: `fast` (at offset 0 of seventeen bytes) and
    /// `slow` (byte by byte) give the bits of the two rules, written out here byte by byte.
    fn each_byte_in_each_place(
        fast: impl Fn(&[u8]) -> (u32, u32),
        slow: fn([u8; 16]) -> (u32, u32),
        first: impl Fn(u8) -> bool,
        second: impl Fn(u8) -> bool,
    ) {
        for c in 0..=255u8 {
            for pos in 0..16 {
                let mut w = [b'a'; 17];
                w[pos] = c;
                let (a, b) = fast(&w);
                assert_eq!(a, u32::from(first(c)) << pos, "byte {c:#x} at {pos}");
                assert_eq!(b, u32::from(second(c)) << pos, "byte {c:#x} at {pos}");
                let mut arr = [0u8; 16];
                arr.copy_from_slice(&w[..16]);
                assert_eq!(slow(arr), (a, b), "byte {c:#x} at {pos}");
            }
        }
    }

    #[test]
    fn each_byte_is_classed_as_the_rule_says() {
        each_byte_in_each_place(
            |w| specials(w, 0).unwrap(),
            super::portable,
            |c| c == b'"' || c == b'\\' || c < 0x20,
            |c| c >= 0x80,
        );
        // From an offset: only the sixteen bytes there count.
        assert_eq!(specials(&[b'"'; 17], 1).unwrap().0 >> 15, 1);
        let mut w = [b'a'; 17];
        w[16] = b'"';
        assert_eq!(specials(&w, 0).unwrap().0, 0);
        assert_eq!(specials(&w, 1).unwrap().0, 1 << 15);
        assert_eq!(specials(&[b'a'; 15], 0), None);
        assert_eq!(specials(&[b'a'; 16], 1), None);
    }

    #[test]
    fn each_byte_is_marked_for_csv_as_the_rule_says() {
        each_byte_in_each_place(
            |w| csv_marks(w, 0).unwrap(),
            super::portable_csv,
            |c| c == b',',
            |c| c == b'"' || c == b'\r',
        );
        assert_eq!(csv_marks(&[b','; 15], 0), None);
    }
}
