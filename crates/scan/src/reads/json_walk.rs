//! The one strict walk over a JSON line, shared by every reader that takes a few fields of a
//! line without building it: the mapped-field scanner of the logs of reads
//! ([`super::json_fields`]) and the warehouses' JSON rows (Snowflake's `ACCESS_HISTORY`,
//! BigQuery's audit log, in `access`). It moves past whitespace, punctuation, plain strings
//! and any value it is asked to skip, checking each as strictly as a JSON parser would, and
//! answers `None` where it meets anything it does not take plainly (an escape in a key or a
//! string taken, a value of another type, bytes that are not JSON): the caller then hands
//! the line to `serde_json`, whose reading is the answer.

use super::key_probe::MAX_DEPTH;

/// A walk over one line: `b[i]` is the next byte to read.
pub(crate) struct Walk<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) i: usize,
    /// The high bits of the string bytes seen (non-zero: some byte is not ASCII).
    pub(crate) high: u64,
}

impl<'a> Walk<'a> {
    /// A walk from the line's first byte.
    pub(crate) fn new(b: &'a [u8]) -> Walk<'a> {
        Walk { b, i: 0, high: 0 }
    }

    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    pub(crate) fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    pub(crate) fn expect(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// Whether the walk ended the line: only whitespace is left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.ws();
        self.i == self.b.len()
    }

    /// A member's key at `i` (its opening quote) when it has no escape, and past it the `:`
    /// and the whitespace around it: the walk is then at the value. The key's contents are
    /// `b[start..end]`.
    #[inline(always)]
    pub(crate) fn key(&mut self) -> Option<(usize, usize)> {
        self.expect(b'"')?;
        let start = self.i;
        let end = self.plain_end()?;
        self.i = end + 1;
        self.ws();
        self.expect(b':')?;
        self.ws();
        Some((start, end))
    }

    /// The string at `i` when it has no escape: the range of its contents in `b`; `None`
    /// for any other value.
    #[inline]
    pub(crate) fn plain_string(&mut self) -> Option<std::ops::Range<usize>> {
        self.expect(b'"')?;
        let start = self.i;
        let end = self.plain_end()?;
        self.i = end + 1;
        Some(start..end)
    }

    /// Past a `null` at `i` (`true`), or nowhere (`false`) when the value is something else.
    #[inline]
    pub(crate) fn null(&mut self) -> bool {
        self.peek() == Some(b'n') && self.literal(b"null").is_some()
    }

    /// The members of the object at `i` (its `{`): `each` is handed the walk at each value
    /// with where the member's key is in `b` (`b[start..end]`), and must move past the value.
    /// `None` when the value is no object, a key has an escape, or `each` says `None`.
    #[inline(always)]
    pub(crate) fn members(
        &mut self,
        mut each: impl FnMut(&mut Walk<'a>, usize, usize) -> Option<()>,
    ) -> Option<()> {
        if self.peek()? != b'{' {
            return None;
        }
        if !self.opened(b'}')? {
            return Some(());
        }
        loop {
            self.ws();
            let (start, end) = self.key()?;
            each(self, start, end)?;
            if !self.more(b'}')? {
                return Some(());
            }
        }
    }

    /// The elements of the array at `i` (its `[`): `each` is handed the walk at each one and
    /// must move past it. `None` when the value is no array, or `each` says `None`.
    pub(crate) fn elements(
        &mut self,
        mut each: impl FnMut(&mut Walk<'a>) -> Option<()>,
    ) -> Option<()> {
        if self.peek()? != b'[' {
            return None;
        }
        if !self.opened(b']')? {
            return Some(());
        }
        loop {
            self.ws();
            each(self)?;
            if !self.more(b']')? {
                return Some(());
            }
        }
    }

    /// Past the `{` or `[` at `i` and the whitespace after it: `false` (and past the `close`
    /// too) when the object or array is empty.
    #[inline]
    pub(crate) fn opened(&mut self, close: u8) -> Option<bool> {
        self.i += 1;
        self.ws();
        if self.peek()? == close {
            self.i += 1;
            return Some(false);
        }
        Some(true)
    }

    /// After a member or element: past the `,` before the next (`true`) or the `close` that
    /// ends the object or array (`false`); `None` for anything else.
    #[inline]
    pub(crate) fn more(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let c = self.peek()?;
        self.i += 1;
        match c {
            b',' => Some(true),
            _ if c == close => Some(false),
            _ => None,
        }
    }

    /// Past the JSON number at `i`, its grammar checked on the way ([`super::fields::number`]):
    /// `None` when it is none. Whatever follows a value is checked by its caller.
    #[inline]
    fn number(&mut self) -> Option<()> {
        self.i = super::fields::number_end(self.b, self.i)?;
        Some(())
    }

    /// Move past the value at `i`, at nesting `level`, checking it is JSON.
    pub(crate) fn skip(&mut self, level: usize) -> Option<()> {
        if level > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => {
                self.i += 1;
                self.i = self.string_end()? + 1;
            }
            b'{' => {
                if !self.opened(b'}')? {
                    return Some(());
                }
                loop {
                    self.ws();
                    self.expect(b'"')?;
                    self.i = self.string_end()? + 1;
                    self.ws();
                    self.expect(b':')?;
                    self.ws();
                    self.skip(level + 1)?;
                    if !self.more(b'}')? {
                        return Some(());
                    }
                }
            }
            b'[' => {
                if !self.opened(b']')? {
                    return Some(());
                }
                loop {
                    self.ws();
                    self.skip(level + 1)?;
                    if !self.more(b']')? {
                        return Some(());
                    }
                }
            }
            b'-' | b'0'..=b'9' => self.number()?,
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            _ => return None,
        }
        Some(())
    }

    pub(crate) fn literal(&mut self, word: &[u8]) -> Option<()> {
        (self.b.get(self.i..self.i + word.len())? == word).then(|| self.i += word.len())
    }

    /// The closing quote of a string whose contents start at `i`, when it has no escape (and
    /// no control character); `None` otherwise.
    #[inline(always)]
    pub(crate) fn plain_end(&mut self) -> Option<usize> {
        let k = self.special(self.i)?;
        (self.b[k] == b'"').then_some(k)
    }

    /// The closing quote of a string whose contents start at `i`, escapes checked.
    pub(crate) fn string_end(&mut self) -> Option<usize> {
        let mut i = self.i;
        loop {
            let k = self.special(i)?;
            match self.b[k] {
                b'"' => return Some(k),
                b'\\' => match *self.b.get(k + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i = k + 2,
                    b'u' => {
                        let hex = self.b.get(k + 2..k + 6)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        // A surrogate needs its pair checked: the parser decides.
                        if matches!(hex[0], b'd' | b'D') && !matches!(hex[1], b'0'..=b'7') {
                            return None;
                        }
                        i = k + 6;
                    }
                    _ => return None,
                },
                // A control character in a string is not JSON.
                _ => return None,
            }
        }
    }

    /// The first quote, backslash or control character at or after `i`: sixteen bytes at a
    /// time ([`super::wide::specials`]) while the line has them, then eight (the first such
    /// byte of a word is found exactly with the usual carry tricks: a false hit can only come
    /// above a true one). The high bits of the bytes passed are kept for the line's UTF-8
    /// check.
    #[inline(always)]
    pub(crate) fn special(&mut self, mut i: usize) -> Option<usize> {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        while let Some((hits, above)) = super::wide::specials(self.b, i) {
            if hits != 0 {
                let first = hits.trailing_zeros();
                self.high |= u64::from(above & ((1u32 << first) - 1));
                return Some(i + first as usize);
            }
            self.high |= u64::from(above);
            i += 16;
        }
        while let Some(word) = self.b.get(i..i + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            let w = u64::from_le_bytes(w);
            let zero = |x: u64| x.wrapping_sub(ONES) & !x;
            let hit = (zero(w ^ (ONES * u64::from(b'"')))
                | zero(w ^ (ONES * u64::from(b'\\')))
                | (w.wrapping_sub(ONES * 0x20) & !w))
                & HIGH;
            if hit != 0 {
                let first = hit.trailing_zeros();
                self.high |= w & HIGH & ((1u64 << first) - 1);
                return Some(i + (first / 8) as usize);
            }
            self.high |= w & HIGH;
            i += 8;
        }
        while let Some(&c) = self.b.get(i) {
            if c == b'"' || c == b'\\' || c < 0x20 {
                return Some(i);
            }
            self.high |= u64::from(c & 0x80);
            i += 1;
        }
        None
    }
}
