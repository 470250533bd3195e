//! The common JSON line, read in one quick walk ([`Lines::read`]).
//!
//! Nearly every line an exporter writes has no backslash and no control byte: no escape to
//! undo, no tab between tokens. In such a line a string's end is simply its next quote, found
//! eight bytes at a time together with any backslash or control byte (which send the line
//! elsewhere), and a value the read does not need (a string, a number, a nested object or
//! array) is passed over by its quotes, brackets and digits without building it. The walk
//! checks every byte between strings as a JSON parser does (spaces, `:`, `,`, brackets, the
//! number grammar, the literals), and a line with a byte above ASCII for UTF-8, so a line it
//! reads is a line `serde_json` reads, with the same values. It holds for any key order, any
//! run of spaces, fractions, offsets, extra and nested fields: nothing here depends on the
//! layout of one exporter. A line is walked where it starts in its block, with no search for
//! its end first: it ends where its object does.
//!
//! Lines written by one exporter share their layout, whatever it is, so the layout of the
//! last line walked in full is kept ([`Template`]) and the next line is read by comparing its
//! bytes between values with it, word for word, and scanning only its values.
//!
//! Whatever the walk does not take — an escape or a tab anywhere in the line, a mapped field
//! that is missing, written twice or of another type, an integer consumer, nesting deeper than
//! [`MAX_DEPTH`] — it leaves to the general scanner ([`super::json_fields`]) and the model
//! behind it, which decide and give the reason a line is malformed.

use super::field_names::AtUnit;
use super::fields::{epoch_nanos, number, number_end, Mapping, Num, HIGH, ONES};
use super::key_probe::{KeyProbe, MAX_DEPTH};
use super::timestamps::At;
use super::wide;

/// The fields of one read, borrowed from the line (or from the mapping's constants).
#[derive(Debug, Clone, Copy)]
pub struct PlainRead<'a> {
    pub at: At<'a>,
    pub consumer: &'a [u8],
    pub dataset: &'a [u8],
    pub contract: &'a [u8],
}

/// The lines of one block, read one after the other ([`Lines::read`]), with the layout of the
/// last line walked in full kept for the next.
#[derive(Default)]
pub struct Lines {
    template: Template,
    recording: Template,
    /// The values of the line being read. Kept from line to line rather than made anew:
    /// a replay writes every slot the layout holds before [`Template::resolve`] reads it, so
    /// only the flags need resetting, where zeroing the whole was a twentieth of a line.
    found: Found,
}

impl Lines {
    /// The read of the line starting at `start` of `b`, and where the next line starts (past
    /// its `\n`, or `b.len()` at the end); `None` when the line is not one this walk takes. A
    /// line laid out as the last one is read by replaying that one's layout; any other is
    /// walked in full, and its layout kept for the next.
    #[inline]
    pub fn read<'a>(
        &mut self,
        b: &'a [u8],
        start: usize,
        mapping: &'a Mapping,
    ) -> Option<(PlainRead<'a>, usize)> {
        let found = &mut self.found;
        found.slots = 0;
        found.high = 0;
        let end = match self.template.replay(b, start, found) {
            Some(end) => end,
            None => {
                *found = Found::default();
                learn(
                    &mut self.template,
                    &mut self.recording,
                    b,
                    start,
                    mapping,
                    found,
                )?
            }
        };
        let next = match b.get(end) {
            None => end,
            Some(b'\n') => end + 1,
            Some(b'\r') if b.get(end + 1) == Some(&b'\n') => end + 2,
            Some(b'\r') if end + 1 == b.len() => end + 1,
            _ => return None,
        };
        // A byte above ASCII in a string: the line must be UTF-8 as a whole, as a parser
        // requires of every string (the parts between strings are ASCII or the template's).
        if found.high != 0 && std::str::from_utf8(&b[start..end]).is_err() {
            return None;
        }
        Some((self.template.resolve(found, b, mapping)?, next))
    }
}

/// Walk the line at `start` in full into `found`, and keep its layout for the next line in
/// `template` (recorded in `recording`, then swapped): where its object (and the spaces after
/// it) ends. Out of the way of the replay, which nearly every line takes.
#[cold]
#[inline(never)]
fn learn(
    template: &mut Template,
    recording: &mut Template,
    b: &[u8],
    start: usize,
    mapping: &Mapping,
    found: &mut Found,
) -> Option<usize> {
    recording.clear(start);
    let i = spaces(b, start);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let i = spaces(
        b,
        object(b, i, 0, mapping.wanted(), mapping, found, recording)?,
    );
    recording.finish(b, i);
    std::mem::swap(template, recording);
    Some(i)
}

/// The layout of a line: the bytes between its values, word for word (keys, quotes,
/// punctuation, spaces, the brackets of nested objects on a mapped path), and the kind of each
/// value, with the slots it holds. A line that matches is exactly as valid as the one the
/// layout was taken from: the same keys in the same places (so the same duplicates), values
/// of the same kinds, each checked as the walk checks it.
#[derive(Default)]
struct Template {
    /// The literal parts, one after the other.
    bytes: Vec<u8>,
    /// A literal part then a value each; the last has only its literal part (the line's end).
    steps: Vec<Step>,
    /// Where the literal part being recorded starts in the line.
    from: usize,
    /// The slots the layout's values hold, and those of them that are strings.
    slots: u8,
    strings: u8,
    /// Per slot, the slot its value is kept under ([`Step::put`]): the first of its step's.
    kept: [u8; 4],
}

/// One literal part of a layout and the value after it.
#[derive(Clone, Copy, Debug)]
struct Step {
    /// Where the literal part is in [`Template::bytes`], and its length.
    at: u32,
    len: u32,
    /// Its first sixteen bytes (fewer: zero-padded, with `mask` keeping only them), compared
    /// as one number in place of the bytes when it is at most sixteen long; and the next
    /// sixteen (`head2` under `mask2`) for one of up to thirty-two, such as the keys and
    /// bracket between two values in different objects (`", "client": {"id": "`), which
    /// otherwise took a call to `memcmp` on every line.
    head: u128,
    mask: u128,
    head2: u128,
    mask2: u128,
    /// The value's kind, as three flags rather than the [`Value`] itself: the replay tests
    /// them one after another, and with one enum the compiler makes a jump table of the tests,
    /// whose indirect jump mispredicted where the branches learn a line's repeating kinds.
    string: bool,
    number: bool,
    /// The nesting level of any other value (0: none, the line's end).
    any: u8,
    /// The slot the value is kept under (the first it holds), or [`NO_SLOT`].
    put: u8,
}

/// Where a value no slot holds is put.
const NO_SLOT: u8 = 4;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    /// The contents of a string, up to its closing quote (its quotes are literal).
    Str,
    Num,
    /// Any JSON value (an object, an array or a literal nobody maps), at that nesting level.
    Any(u8),
    /// No value: the literal part ends the line.
    End,
}

impl Template {
    fn clear(&mut self, from: usize) {
        self.bytes.clear();
        self.steps.clear();
        self.from = from;
        self.slots = 0;
        self.strings = 0;
    }

    /// The literal part from the last value to `upto`, then `value` for `slots`; the next
    /// literal part starts at `next`.
    fn push(&mut self, b: &[u8], upto: usize, value: Value, slots: u8, next: usize) {
        let part = &b[self.from..upto];
        let len = part.len();
        let word = |from: usize| {
            let mut w = [0u8; 16];
            if let Some(rest) = part.get(from..) {
                let n = rest.len().min(16);
                w[..n].copy_from_slice(&rest[..n]);
            }
            u128::from_le_bytes(w)
        };
        let mask = |from: usize| match len.saturating_sub(from) {
            n if n >= 16 => u128::MAX,
            n => (1u128 << (8 * n)) - 1,
        };
        let put = if slots == 0 {
            NO_SLOT
        } else {
            slots.trailing_zeros() as u8
        };
        for s in 0..4 {
            if slots & (1 << s) != 0 {
                self.kept[s] = put;
            }
        }
        self.slots |= slots;
        if value == Value::Str {
            self.strings |= slots;
        }
        self.steps.push(Step {
            at: self.bytes.len() as u32,
            len: len as u32,
            head: word(0),
            mask: mask(0),
            head2: word(16),
            mask2: mask(16),
            string: value == Value::Str,
            number: value == Value::Num,
            any: match value {
                Value::Any(level) => level.max(1),
                _ => 0,
            },
            put,
        });
        self.bytes.extend_from_slice(part);
        self.from = next;
    }

    /// A value at `b[start..end]`, after the literal part before it.
    #[inline]
    fn value(&mut self, b: &[u8], start: usize, end: usize, value: Value, slots: u8) {
        self.push(b, start, value, slots, end);
    }

    /// The line's last literal part, up to `end`.
    fn finish(&mut self, b: &[u8], end: usize) {
        self.push(b, end, Value::End, 0, end);
    }

    /// Read the line at `start` by this layout into `found`: where its last literal part
    /// ends, or `None` when the line is laid out otherwise (or the template is empty).
    #[inline]
    fn replay(&self, b: &[u8], start: usize, found: &mut Found) -> Option<usize> {
        let mut i = start;
        for step in &self.steps {
            if !same(b, i, step, &self.bytes) {
                return None;
            }
            i += step.len as usize;
            let put = usize::from(step.put & 7);
            if step.string {
                let end = quote(b, i, &mut found.high)?;
                found.spans[put] = (i, end);
                i = end;
            } else if step.number {
                if step.put == NO_SLOT {
                    i = number_end(b, i)?;
                } else {
                    let (end, integer) = number(b, i)?;
                    found.spans[put] = (i, end);
                    found.integers[put] = integer;
                    i = end;
                }
            } else if step.any != 0 {
                i = skip(b, i, usize::from(step.any), &mut found.high)?;
            } else {
                return Some(i);
            }
        }
        None
    }
}

/// Whether the bytes at `b[i..]` are the literal part of `step`: at most sixteen bytes as one
/// 128-bit number under the step's mask (one load, no index into the line past the first),
/// up to thirty-two as two, longer ones in full (and any near the block's end).
#[inline(always)]
fn same(b: &[u8], i: usize, step: &Step, bytes: &[u8]) -> bool {
    let n = step.len as usize;
    let load = |w: &[u8]| {
        let mut x = [0u8; 16];
        x.copy_from_slice(w);
        u128::from_le_bytes(x)
    };
    if n <= 16 {
        if let Some(w) = b.get(i..i + 16) {
            return load(w) & step.mask == step.head;
        }
    } else if n <= 32 {
        if let Some(w) = b.get(i..i + 32) {
            return load(&w[..16]) == step.head && load(&w[16..]) & step.mask2 == step.head2;
        }
    }
    let at = step.at as usize;
    b.get(i..i + n) == Some(&bytes[at..at + n])
}

/// The mapped values a walk found, by the slot each is kept under ([`Template::kept`]).
#[derive(Default)]
struct Found {
    /// Where each value is: a string's contents without the quotes, or a number (slots
    /// beyond the four take what no slot holds).
    spans: [(usize, usize); 8],
    /// A number's value when it is a plain integer (an epoch time), read as the walk passed
    /// it.
    integers: [Option<i64>; 8],
    /// The slots found so far by a walk in full, to see one twice.
    slots: u8,
    /// The high bits of the strings' bytes: non-zero when one is not ASCII.
    high: u64,
}

/// The byte at `i`; 0 past the end (which no rule takes).
#[inline(always)]
fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

/// Past a run of spaces (the only whitespace this walk takes).
#[inline(always)]
fn spaces(b: &[u8], mut i: usize) -> usize {
    while at(b, i) == b' ' {
        i += 1;
    }
    i
}

/// The closing quote of the string whose contents start at `k`: the first quote, backslash
/// or control byte (a line break among them) is found sixteen bytes at a time
/// ([`super::wide::specials`]), then eight at a time near the block's end, where the borrow
/// tricks find it exactly (a false hit can only come above a true one); anything but a quote
/// means a string this walk does not take. The high bits of the bytes passed go to `high`.
#[inline(always)]
fn quote(b: &[u8], mut k: usize, high: &mut u64) -> Option<usize> {
    while let Some((hits, above)) = wide::specials(b, k) {
        // As below, bytes past the string's end may set `high`.
        *high |= u64::from(above);
        if hits != 0 {
            let end = k + hits.trailing_zeros() as usize;
            return (b[end] == b'"').then_some(end);
        }
        k += 16;
    }
    while let Some(word) = b.get(k..k + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_le_bytes(w);
        let (q, s) = (w ^ (ONES * u64::from(b'"')), w ^ (ONES * u64::from(b'\\')));
        let hit = (q.wrapping_sub(ONES) & !q
            | s.wrapping_sub(ONES) & !s
            | w.wrapping_sub(ONES * 0x20) & !w)
            & HIGH;
        // Bytes past the string's end in the word may set a high bit too: that only costs
        // the line a UTF-8 check it passes.
        *high |= w & HIGH;
        if hit != 0 {
            let end = k + (hit.trailing_zeros() / 8) as usize;
            return (b[end] == b'"').then_some(end);
        }
        k += 8;
    }
    while let Some(&c) = b.get(k) {
        match c {
            b'"' => return Some(k),
            b'\\' | 0..0x20 => return None,
            _ => {
                *high |= u64::from(c & 0x80);
                k += 1;
            }
        }
    }
    None
}

/// Past the string whose opening quote is at `i`, and its contents' span.
#[inline(always)]
fn string(b: &[u8], i: usize, high: &mut u64) -> Option<(usize, (usize, usize))> {
    let end = quote(b, i + 1, high)?;
    Some((end + 1, (i + 1, end)))
}

/// Past the object whose `{` is at `i`, at nesting `level`, taking the values of the slots in
/// `mask` into `found` and the line's layout into `rec`.
fn object(
    b: &[u8],
    i: usize,
    level: usize,
    mask: u8,
    mapping: &Mapping,
    found: &mut Found,
    rec: &mut Template,
) -> Option<usize> {
    if level > MAX_DEPTH {
        return None;
    }
    let mut i = spaces(b, i + 1);
    if at(b, i) == b'}' {
        return Some(i + 1);
    }
    // The keys on a path further down seen in this object: one seen twice is a duplicate the
    // model reports.
    let mut down = 0u8;
    loop {
        if at(b, i) != b'"' {
            return None;
        }
        let (after, (ks, ke)) = string(b, i, &mut found.high)?;
        i = spaces(b, after);
        if at(b, i) != b':' {
            return None;
        }
        i = spaces(b, i + 1);
        let (leaf, deeper) = if mask == 0 {
            (0, 0)
        } else {
            mapping.slots_of(level, mask, b, ks, ke)
        };
        if deeper != 0 {
            if leaf != 0 || down & deeper != 0 {
                return None;
            }
            down |= deeper;
            i = if at(b, i) == b'{' {
                object(b, i, level + 1, deeper, mapping, found, rec)?
            } else {
                value(b, i, level + 1, 0, found, rec)?
            };
        } else {
            if found.slots & leaf != 0 {
                return None;
            }
            i = value(b, i, level + 1, leaf, found, rec)?;
        }
        i = spaces(b, i);
        match at(b, i) {
            b',' => i = spaces(b, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Past the value at `i`, a member's at nesting `level`, taking it into `found` for the
/// slots in `leaf` (which only a string or a number can fill) and into the layout.
#[inline]
fn value(
    b: &[u8],
    i: usize,
    level: usize,
    leaf: u8,
    found: &mut Found,
    rec: &mut Template,
) -> Option<usize> {
    match at(b, i) {
        b'"' => {
            let (after, span) = string(b, i, &mut found.high)?;
            found.take(leaf, span, None);
            rec.value(b, span.0, span.1, Value::Str, leaf);
            Some(after)
        }
        b'-' | b'0'..=b'9' => {
            let (after, integer) = number(b, i)?;
            found.take(leaf, (i, after), integer);
            rec.value(b, i, after, Value::Num, leaf);
            Some(after)
        }
        _ if leaf != 0 => None,
        _ => {
            let after = skip(b, i, level, &mut found.high)?;
            rec.value(b, i, after, Value::Any(u8::try_from(level).ok()?), 0);
            Some(after)
        }
    }
}

/// Past the value at `i`, checking that it is JSON.
fn skip(b: &[u8], i: usize, level: usize, high: &mut u64) -> Option<usize> {
    if level > MAX_DEPTH {
        return None;
    }
    let literal = |word: &[u8]| (b.get(i..i + word.len())? == word).then_some(i + word.len());
    match at(b, i) {
        b'"' => string(b, i, high).map(|(after, _)| after),
        b'-' | b'0'..=b'9' => number_end(b, i),
        open @ (b'{' | b'[') => {
            // `}` and `]` follow their openers by two in ASCII.
            let close = open + 2;
            let mut i = spaces(b, i + 1);
            if at(b, i) == close {
                return Some(i + 1);
            }
            loop {
                if open == b'{' {
                    if at(b, i) != b'"' {
                        return None;
                    }
                    i = spaces(b, string(b, i, high)?.0);
                    if at(b, i) != b':' {
                        return None;
                    }
                    i = spaces(b, i + 1);
                }
                i = spaces(b, skip(b, i, level + 1, high)?);
                match at(b, i) {
                    b',' => i = spaces(b, i + 1),
                    c if c == close => return Some(i + 1),
                    _ => return None,
                }
            }
        }
        b't' => literal(b"true"),
        b'f' => literal(b"false"),
        b'n' => literal(b"null"),
        _ => None,
    }
}

impl Found {
    /// The value at `span` (a number's value `integer`) for the slots in `slots`, kept under
    /// the first of them as a replay keeps it.
    #[inline]
    fn take(&mut self, slots: u8, span: (usize, usize), integer: Option<i64>) {
        if slots != 0 {
            let put = slots.trailing_zeros() as usize & 7;
            self.spans[put] = span;
            self.integers[put] = integer;
            self.slots |= slots;
        }
    }
}

impl Template {
    /// The read of the line this layout was replayed on (or taken from) with `found`: every
    /// mapped slot present and of its type, the constants for the others.
    #[inline]
    fn resolve<'a>(&self, found: &Found, b: &'a [u8], m: &'a Mapping) -> Option<PlainRead<'a>> {
        if self.slots != m.wanted() {
            return None;
        }
        let text = |s: usize| -> Option<&'a [u8]> {
            let (start, end) = found.spans[usize::from(self.kept[s] & 7)];
            (self.strings & (1 << s) != 0).then_some(&b[start..end])
        };
        let at = match m.unit() {
            AtUnit::Rfc3339 => At::Text(text(0)?),
            _ if self.strings & 1 != 0 => return None,
            unit => {
                let put = usize::from(self.kept[0] & 7);
                let n = match found.integers[put] {
                    Some(i) => Num::Int(i),
                    None => Num::parse(&b[found.spans[put].0..found.spans[put].1])?,
                };
                At::UtcNanos(epoch_nanos(n, unit)?)
            }
        };
        Some(PlainRead {
            at,
            consumer: text(1)?,
            dataset: match m.constant_dataset() {
                Some(d) => d.as_bytes(),
                None => text(2)?,
            },
            contract: match m.constant_contract() {
                Some(c) => c.as_bytes(),
                None => text(3)?,
            },
        })
    }
}

impl Mapping {
    /// The slots read from the line (the others are constants), as a bit mask.
    #[inline]
    pub fn wanted(&self) -> u8 {
        (0..4).fold(0u8, |m, s| m | (u8::from(self.paths[s].is_some()) << s))
    }

    /// The slots among `mask` whose key at `level` is the key `b[ks..ke]`: those for which it
    /// is the last key (`leaf`) and those whose path goes on below it (`deeper`). A key is
    /// compared by its length and first and last eight bytes, in place, and in full only
    /// past sixteen bytes; a key of no wanted length is not compared at all.
    #[inline(always)]
    fn slots_of(&self, level: usize, mask: u8, b: &[u8], ks: usize, ke: usize) -> (u8, u8) {
        let len = ke - ks;
        if self.lengths[level] & (1 << len.min(63)) == 0 {
            return (0, 0);
        }
        let (head, tail) = KeyProbe::words(b, ks, ke);
        let (mut leaf, mut deeper) = (0u8, 0u8);
        let mut m = mask;
        while m != 0 {
            let s = m.trailing_zeros() as usize;
            m &= m - 1;
            if let Some((p, last)) = &self.probes[level][s] {
                if p.len == len
                    && p.head == head
                    && p.tail == tail
                    && (len <= 16
                        || self.paths[s]
                            .as_ref()
                            .is_some_and(|path| path[level] == b[ks..ke]))
                {
                    if *last {
                        leaf |= 1 << s;
                    } else {
                        deeper |= 1 << s;
                    }
                }
            }
        }
        (leaf, deeper)
    }
}

#[cfg(test)]
mod tests {
    use super::super::json_fields::tests::{nested, other_value};
    use super::*;
    use crate::reads::field_names::Fields;
    use proptest::prelude::*;

    /// A read as compared: the instant with its offset, and the three texts.
    type Plain = (i64, i32, Vec<u8>, Vec<u8>, Vec<u8>);

    fn plain_of(at: At<'_>, texts: [&[u8]; 3]) -> Option<Plain> {
        let t = at.instant().ok()?;
        let [consumer, dataset, contract] = texts.map(<[u8]>::to_vec);
        Some((
            t.timestamp_nanos_opt()?,
            t.offset().local_minus_utc(),
            consumer,
            dataset,
            contract,
        ))
    }

    fn of_model(m: &Mapping, line: &str) -> Option<Plain> {
        let r = m.model(line.as_bytes()).ok()?;
        plain_of(r.at, [&r.consumer, &r.dataset, &r.contract])
    }

    fn of_plain(r: PlainRead<'_>) -> Option<Plain> {
        plain_of(r.at, [r.consumer, r.dataset, r.contract])
    }

    /// The reads of `lines` written as one block (each line then its break, the last with
    /// or without one), read as the scan reads a block: every line the walk takes, with where
    /// the next one starts.
    fn walk_block(m: &Mapping, lines: &[String], last_break: bool) -> Vec<Option<Plain>> {
        let mut block = String::new();
        let mut starts = Vec::new();
        for (k, l) in lines.iter().enumerate() {
            starts.push(block.len());
            block.push_str(l);
            if k + 1 < lines.len() || last_break {
                block.push('\n');
            }
        }
        let b = block.as_bytes();
        let mut walk = Lines::default();
        let mut out = Vec::new();
        for (k, &start) in starts.iter().enumerate() {
            let end = start + lines[k].len();
            let got = walk.read(b, start, m);
            if let Some((_, next)) = got {
                let want = if end == b.len() { end } else { end + 1 };
                assert_eq!(next, want, "where the line after {:?} starts", lines[k]);
            }
            out.push(got.and_then(|(r, _)| of_plain(r)));
        }
        out
    }

    /// One line of a source mapped as `nested` or by default (with `at` in RFC 3339), its
    /// members in `order`, extra members nobody maps, and `space` around every token.
    fn line(
        nested_shape: bool,
        values: (&str, &str, &str, &str),
        extra: &[(String, String)],
        order: &[usize],
        space: &str,
    ) -> String {
        let (at, consumer, dataset, contract) = values;
        let mut members = if nested_shape {
            vec![
                format!("\"ts\":{space}{at}"),
                format!("\"client\":{space}{{\"ip\": \"::1\",{space}\"id\":{space}{consumer}}}"),
                format!("\"req.ds\":{space}{dataset}"),
                format!("\"v\":{space}{contract}"),
            ]
        } else {
            vec![
                format!("\"at\":{space}{at}"),
                format!("\"consumer\":{space}{consumer}"),
                format!("\"dataset\":{space}{dataset}"),
                format!("\"contract\":{space}{contract}"),
            ]
        };
        for (k, v) in extra {
            members.push(format!("\"x{k}\":{space}{v}"));
        }
        let ordered: Vec<String> = order
            .iter()
            .filter_map(|i| members.get(*i).cloned())
            .collect();
        format!(
            "{space}{{{space}{}{space}}}{space}",
            ordered.join(&format!("{space},{space}"))
        )
    }

    proptest! {
        /// Lines in any key order, with any run of spaces, extra values of every kind and
        /// nesting, numbers and instants of any form, one after another in a block (so that
        /// each line is read by the layout of the one before when they share it): every line
        /// the walk takes gives the model's read, and it takes every plain line the model
        /// reads.
        #[test]
        fn plain_lines_read_as_the_model_reads_them(
            rows in prop::collection::vec(
                (
                    prop_oneof![
                        (1_700_000_000_000i64..1_800_000_000_000).prop_map(|n| n.to_string()),
                        (1.7e12f64..1.8e12).prop_map(|f| format!("{f:e}")),
                        Just("1764298800125.5".to_string()),
                        Just("\"1764298800125\"".to_string()),
                        Just("-0".to_string()),
                    ],
                    prop_oneof![
                        "[a-z0-9-]{0,16}".prop_map(|c| format!("\"{c}\"")),
                        (0i64..100).prop_map(|n| n.to_string()),
                    ],
                    prop::sample::select(vec!["\"roads\"", "\"rivers\"", "null", "{}"]),
                    prop::sample::select(vec!["\"1.0.0\"", "\"2.10.3\"", "\"x\""]),
                    prop::collection::vec(("[a-z]{1,3}", other_value(false)), 0..4),
                ),
                1..6,
            ),
            order in Just((0..8).collect::<Vec<usize>>()).prop_shuffle(),
            reorder in any::<bool>(),
            space in prop::sample::select(vec!["", " ", "  "]),
            nested_shape in any::<bool>(),
            crlf in any::<bool>(),
            last_break in any::<bool>(),
        ) {
            let m = if nested_shape {
                nested(AtUnit::Millis)
            } else {
                let fields = Fields {
                    at_unit: AtUnit::Millis,
                    ..Fields::default()
                };
                Mapping::new(&fields, None, None)
            };
            let mut lines = Vec::new();
            for (k, (at, consumer, dataset, contract, extra)) in rows.iter().enumerate() {
                // Some blocks change their layout from one line to the next.
                let mut order = order.clone();
                if reorder && k % 2 == 1 {
                    order.reverse();
                }
                let mut l = line(nested_shape, (at, consumer, dataset, contract), extra, &order, space);
                if crlf {
                    l.push('\r');
                }
                lines.push(l);
            }
            let got = walk_block(&m, &lines, last_break);
            for ((l, got), row) in lines.iter().zip(got).zip(&rows) {
                let want = of_model(&m, l.strip_suffix('\r').unwrap_or(l));
                match got {
                    Some(g) => prop_assert_eq!(Some(g), want, "{}", l),
                    // Not taken: the model must find no read in it, or its consumer is an
                    // integer (left to the general scanner, which spells it).
                    None => prop_assert!(
                        want.is_none() || !row.1.starts_with('"'),
                        "a plain line the model reads was not taken: {}", l
                    ),
                }
            }
        }

        /// A line read by the layout of another must be laid out as that one in every byte
        /// between values: a line made from a good one by replacing, inserting or removing
        /// a few bytes is read as the model reads it, or not taken. The good lines have
        /// literal parts of every size the replay compares differently: up to sixteen bytes,
        /// seventeen to thirty-two (`", "client": {"ip": "`) and more.
        #[test]
        fn a_line_that_strays_from_the_layout_is_never_misread(
            good in prop::sample::select(vec![0usize, 1, 2]),
            cuts in prop::collection::vec((0usize..200, prop::sample::select(vec![
                "", " ", "\"", ",", ":", "{", "}", "[", "]", "1", "-", ".", "e", "a", "\n",
                "\"at\"", "\"consumer\"", "null", "é", "\"ip\"", "\"id\"",
            ]), 0usize..3), 1..4),
        ) {
            let fields = Fields {
                at_unit: AtUnit::Millis,
                ..Fields::default()
            };
            let flat = Mapping::new(&fields, None, None);
            let nested = nested(AtUnit::Rfc3339);
            let (m, good) = [
                (&flat, r#"{"consumer": "consumer-00042", "dataset": "roads", "at": 1764298800125, "contract": "1.1.0", "agent": "GDAL/3.8.4", "bytes": 1000, "nested": {"at": [1, {"x": null}]}}"#),
                (&nested, r#"{"v": "1.0.0", "client": {"ip": "10.0.0.1", "id": "consumer-04012"}, "ts": "2026-11-12T17:41:00.397+02:00", "status": 200, "req.ds": "roads"}"#),
                (&nested, r#"{"v": "1.0.0", "a key long enough to make a literal part of over thirty-two bytes": 1, "client": {"id": "c-1", "ip": "::1"}, "ts": "2026-11-12T17:41:00Z", "req.ds": "roads"}"#),
            ][good];
            prop_assert!(of_model(m, good).is_some(), "the good line reads: {}", good);
            let mut bad = good.to_string();
            for (at, with, remove) in &cuts {
                let mut at = (*at).min(bad.len());
                while !bad.is_char_boundary(at) {
                    at -= 1;
                }
                let mut to = (at + remove).min(bad.len());
                while !bad.is_char_boundary(to) {
                    to += 1;
                }
                bad.replace_range(at..to, with);
            }
            // The good line teaches the layout; the doctored one follows it in the block.
            let lines = vec![good.to_string(), bad.clone()];
            if bad.contains('\n') {
                // A break makes two lines of it: each is held to the model on its own.
                let mut all = vec![good.to_string()];
                all.extend(bad.split('\n').map(str::to_string));
                let got = walk_block(m, &all, true);
                for (l, g) in all.iter().zip(got) {
                    if let Some(g) = g {
                        prop_assert_eq!(Some(g), of_model(m, l), "{}", l);
                    }
                }
            } else {
                let got = walk_block(m, &lines, true);
                prop_assert_eq!(got[0].clone(), of_model(m, good));
                if let Some(g) = got[1].clone() {
                    prop_assert!(serde_json::from_str::<serde_json::Value>(&bad).is_ok(), "{}", bad);
                    prop_assert_eq!(Some(g), of_model(m, &bad), "{}", bad);
                }
            }
        }
    }

    #[test]
    fn numbers_are_read_as_the_general_parser_reads_them() {
        for text in [
            "0",
            "-0",
            "7",
            "-7",
            "12345678",
            "123456789",
            "1764298800125",
            "-1764298800125",
            "123456789012345678",
            "1234567890123456789",
            "99999999999999999999",
            "0.5",
            "1e5",
            "1E+5",
            "-12.5e-3",
            "10",
            "100000000",
            "01",
            "1.",
            "-",
            "1e",
            "00",
        ] {
            let b = format!("{text},");
            let got = number(b.as_bytes(), 0).and_then(|(end, n)| {
                (end == text.len())
                    .then(|| n.map_or_else(|| Num::parse(text.as_bytes()), |i| Some(Num::Int(i))))
            });
            let want = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|_| Num::parse(text.as_bytes()));
            assert_eq!(got.flatten(), want, "{text}");
        }
    }

    /// A string's end is found sixteen bytes at a time, then eight near the block's end:
    /// a consumer of up to forty bytes with a quote, backslash, control byte or byte above
    /// ASCII at each place in it, in a line as long as the block or followed by more lines,
    /// is read exactly when `serde_json` reads it, with the same name.
    #[test]
    fn a_string_ends_where_the_parser_says_at_every_place_in_a_word() {
        let m = Mapping::default();
        for len in 0..40 {
            for pos in 0..len {
                for special in [b'"', b'\\', b'\n', 0x1f, 0xc3, 0xff] {
                    let mut consumer = vec![b'c'; len];
                    consumer[pos] = special;
                    if special == 0xc3 && pos + 1 < len {
                        consumer[pos + 1] = 0xa9;
                    }
                    let mut l = br#"{"consumer": ""#.to_vec();
                    l.extend_from_slice(&consumer);
                    l.extend_from_slice(
                        br#"", "at": "2026-11-28T03:00:00Z", "dataset": "roads", "contract": "1.0.0"}"#,
                    );
                    let want = serde_json::from_slice::<serde_json::Value>(&l)
                        .ok()
                        .and_then(|v| v["consumer"].as_str().map(|c| c.as_bytes().to_vec()));
                    for more in [
                        &b""[..],
                        b"\n",
                        b"\n{\"consumer\": \"next-line-of-the-block\"}\n",
                    ] {
                        let mut block = l.clone();
                        block.extend_from_slice(more);
                        let got = Lines::default()
                            .read(&block, 0, &m)
                            .map(|(r, _)| r.consumer.to_vec());
                        if got.is_some() {
                            assert_eq!(got, want, "{}", String::from_utf8_lossy(&block));
                        }
                        // Every plain line is taken: a lone quote ends the name early and
                        // leaves the line malformed, and an escape or control byte is the
                        // general scanner's.
                        let cut_short = special == 0xc3 && pos + 1 == len;
                        let plain =
                            !(matches!(special, b'"' | b'\\' | b'\n' | 0x1f | 0xff) || cut_short);
                        assert_eq!(got.is_some(), plain, "{}", String::from_utf8_lossy(&block));
                    }
                }
            }
        }
    }

    #[test]
    fn a_line_with_an_escape_a_control_byte_or_bad_utf8_is_left_to_the_general_scanner() {
        let m = Mapping::default();
        let line = |consumer: &[u8], gap: &[u8]| {
            let mut l = b"{\"at\": \"2026-11-28T03:00:00Z\",".to_vec();
            l.extend_from_slice(gap);
            l.extend_from_slice(b"\"consumer\": \"");
            l.extend_from_slice(consumer);
            l.extend_from_slice(b"\", \"dataset\": \"roads\", \"contract\": \"1.0.0\"}\n");
            l
        };
        let read = |l: &[u8]| {
            Lines::default()
                .read(l, 0, &m)
                .map(|(r, _)| r.consumer.to_vec())
        };
        assert_eq!(
            read(&line(b"ops-\xc3\xa9t\xc3\xa9", b" ")),
            Some("ops-été".as_bytes().to_vec())
        );
        for (consumer, gap) in [
            (&b"ops\\u0041"[..], &b" "[..]),
            (b"ops\tx", b" "),
            (b"ops\x01", b" "),
            (b"ops\rx", b" "),
            (b"ops", b"\t"),
            (b"ops", b"\r\n"),
            (b"ops\xc3", b" "),
            (b"\xff", b" "),
        ] {
            let l = line(consumer, gap);
            assert_eq!(read(&l), None, "{}", String::from_utf8_lossy(&l));
            // The same line after one the walk took: its layout does not let it through.
            let mut two = line(b"ops", b" ");
            let second = two.len();
            two.extend_from_slice(&l);
            let mut walk = Lines::default();
            assert!(walk.read(&two, 0, &m).is_some());
            assert!(
                walk.read(&two, second, &m).is_none(),
                "{}",
                String::from_utf8_lossy(&l)
            );
        }
    }
}
