//! Where a source's reads are in its records: the [`Mapping`] of a source (field names,
//! constants, the unit of `at`), the plain `serde_json` reading of a JSON line that defines the
//! answer ([`Mapping::model`]), and the numbers a record holds ([`Num`]). The scanner that finds
//! the mapped fields of a JSON line without building it is `json_fields.rs`.
//!
//! The scanner walks a line once, in any key order and with any whitespace, descending only
//! into the objects on a mapped field's path and skipping every other value without building
//! it (a string to its closing quote, eight bytes at a time; an object or array by its
//! structure). It validates what it skips as strictly as a JSON parser would, so a line it
//! accepts is one `serde_json` accepts too. Anything it does not take — an escaped key, a
//! mapped field that is missing, twice present or of another type, nesting deeper than
//! `MAX_DEPTH` — goes to [`model`], the plain `serde_json` reading that defines the answer
//! and gives the reason a line is malformed.

use std::borrow::Cow;

use super::field_names::{AtUnit, FieldName, Fields};
use super::key_probe::KeyProbe;
use super::timestamps::At;

/// The slots of a read, in the order [`Mapping`] keeps them.
const AT: usize = 0;
const CONSUMER: usize = 1;
const DATASET: usize = 2;
const CONTRACT: usize = 3;
const NAMES: [&str; 4] = ["at", "consumer", "dataset", "contract"];

/// A source's mapping, ready for the readers.
#[derive(Debug, Clone)]
pub struct Mapping {
    /// The keys from the top-level object down, per slot; `None` for a slot given by a
    /// constant.
    pub paths: [Option<Vec<Vec<u8>>>; 4],
    /// The same keys as the scanner compares them: per level of nesting, per slot, the
    /// probe of the slot's key at that level and whether it is the path's last.
    pub probes: Vec<[Option<(KeyProbe, bool)>; 4]>,
    /// Per level, bit `n` set when a wanted key at that level is `n` bytes long (bit 63: any
    /// of 63 bytes or more): a key of no wanted length is not compared at all.
    pub lengths: Vec<u64>,
    /// The column names, per slot, for flat formats.
    columns: [Option<String>; 4],
    unit: AtUnit,
    dataset: Option<String>,
    contract: Option<String>,
}

impl Default for Mapping {
    fn default() -> Self {
        Mapping::new(&Fields::default(), None, None)
    }
}

/// A scalar value found in a record.
#[derive(Debug, Clone, PartialEq)]
pub enum Val<'a> {
    Str(Cow<'a, [u8]>),
    Num(Num),
}

/// A JSON number: an integer when it is one that fits, else its nearest double.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    /// The number a JSON number literal (or a CSV field) spells; `None` when it spells none.
    pub fn parse(text: &[u8]) -> Option<Num> {
        if let Some(i) = plain_integer(text) {
            return Some(Num::Int(i));
        }
        Num::parse_full(text)
    }

    /// [`Num::parse`] without the shortcut for plain integers: the definition it is held to.
    fn parse_full(text: &[u8]) -> Option<Num> {
        if !number_grammar(text) {
            return None;
        }
        let s = std::str::from_utf8(text).ok()?;
        // `-0` is a double to serde_json (negative zero), as it is here.
        if !s.contains(['.', 'e', 'E']) && s != "-0" {
            if let Ok(i) = s.parse::<i64>() {
                return Some(Num::Int(i));
            }
        }
        s.parse::<f64>().ok().map(Num::Float)
    }
}

/// The fields of one read, borrowed from the line (or the mapping's constants) when they can
/// be.
#[derive(Debug, Clone)]
pub struct Read<'a> {
    pub at: At<'a>,
    pub consumer: Cow<'a, [u8]>,
    pub dataset: Cow<'a, [u8]>,
    pub contract: Cow<'a, [u8]>,
}

impl Mapping {
    /// The mapping of a source's `fields`, with the constants that stand for its dataset and
    /// its contract version (a field given by a constant is not read).
    pub fn new(f: &Fields, dataset: Option<String>, contract: Option<String>) -> Mapping {
        let path = |n: &FieldName| {
            Some(
                n.0.iter()
                    .map(|k| k.as_bytes().to_vec())
                    .collect::<Vec<_>>(),
            )
        };
        let paths = [
            path(&f.at),
            path(&f.consumer),
            dataset.is_none().then(|| path(&f.dataset)).flatten(),
            contract.is_none().then(|| path(&f.contract)).flatten(),
        ];
        let columns = [
            Some(f.at.column()),
            Some(f.consumer.column()),
            dataset.is_none().then(|| f.dataset.column()),
            contract.is_none().then(|| f.contract.column()),
        ];
        let depth = paths.iter().flatten().map(Vec::len).max().unwrap_or(0);
        let probes = (0..depth)
            .map(|level| {
                let mut at = [None; 4];
                for (slot, p) in at.iter_mut().zip(&paths) {
                    if let Some(p) = p.as_ref().filter(|p| p.len() > level) {
                        *slot = Some((KeyProbe::of(&p[level]), p.len() == level + 1));
                    }
                }
                at
            })
            .collect::<Vec<_>>();
        let lengths = probes
            .iter()
            .map(|level| {
                level
                    .iter()
                    .flatten()
                    .fold(0u64, |bits, (p, _)| bits | 1 << p.len.min(63))
            })
            .collect();
        Mapping {
            paths,
            probes,
            lengths,
            columns,
            unit: f.at_unit,
            dataset,
            contract,
        }
    }

    /// The constant dataset, when the source has one.
    pub fn constant_dataset(&self) -> Option<&str> {
        self.dataset.as_deref()
    }

    /// The constant contract version, when the source has one.
    pub fn constant_contract(&self) -> Option<&str> {
        self.contract.as_deref()
    }

    /// The column that holds each slot (`None`: a constant), in the order at, consumer,
    /// dataset, contract.
    pub fn columns(&self) -> &[Option<String>; 4] {
        &self.columns
    }

    /// The read of a line as `serde_json` reads it: the definition `Mapping::json` (in `json_fields.rs`) is held
    /// to, and the source of its reasons.
    pub fn model<'a>(&'a self, line: &[u8]) -> Result<Read<'a>, String> {
        let value: Json =
            serde_json::from_slice(line).map_err(|e| format!("not a JSON read record: {e}"))?;
        if !matches!(value, Json::Object(_)) {
            return Err("not a JSON read record: not an object".to_string());
        }
        let mut found: [Option<Val<'a>>; 4] = [None, None, None, None];
        for (s, slot) in found.iter_mut().enumerate() {
            let Some(path) = &self.paths[s] else {
                continue;
            };
            let mut v = &value;
            for key in path {
                let Json::Object(entries) = v else {
                    return Err(self.missing(s));
                };
                let mut hits = entries
                    .iter()
                    .filter(|(k, _)| k.as_bytes() == key.as_slice());
                v = &hits.next().ok_or_else(|| self.missing(s))?.1;
                if hits.next().is_some() {
                    return Err(format!(
                        "not a JSON read record: duplicate field `{}`",
                        String::from_utf8_lossy(key)
                    ));
                }
            }
            *slot = Some(match v {
                Json::String(text) => Val::Str(Cow::Owned(text.as_bytes().to_vec())),
                Json::Number(n) => Val::Num(*n),
                _ => return Err(self.not_a(s)),
            });
        }
        self.read(found)
    }

    fn missing(&self, s: usize) -> String {
        format!("not a JSON read record: no field {}", self.describe(s))
    }

    fn not_a(&self, s: usize) -> String {
        let what = if s == AT && self.unit != AtUnit::Rfc3339 {
            "a number"
        } else if s == CONSUMER {
            "a string or an integer"
        } else {
            "a string"
        };
        format!("{} is not {what}", self.describe(s))
    }

    /// `at`, or `at` (field `ts`) when mapped to another name.
    fn describe(&self, s: usize) -> String {
        let name = NAMES[s];
        match &self.paths[s] {
            Some(p) if !(p.len() == 1 && p[0] == name.as_bytes()) => {
                let keys: Vec<String> = p
                    .iter()
                    .map(|k| String::from_utf8_lossy(k).into_owned())
                    .collect();
                let field = FieldName(keys);
                format!("`{name}` (field `{field}`)")
            }
            _ => format!("`{name}`"),
        }
    }

    /// The read from the values found for the mapped slots (the constants fill the others).
    pub fn read<'a>(&'a self, found: [Option<Val<'a>>; 4]) -> Result<Read<'a>, String> {
        let [at, consumer, dataset, contract] = found;
        let text = |s: usize, v: Option<Val<'a>>| -> Result<Cow<'a, [u8]>, String> {
            match v {
                Some(Val::Str(t)) => Ok(t),
                None => Err(self.missing(s)),
                Some(Val::Num(_)) => Err(self.not_a(s)),
            }
        };
        let at = match (self.unit, at) {
            (AtUnit::Rfc3339, Some(Val::Str(Cow::Borrowed(t)))) => At::Text(t),
            (AtUnit::Rfc3339, Some(Val::Str(Cow::Owned(t)))) => {
                At::Instant(At::Text(&t).instant()?)
            }
            (unit, Some(Val::Num(n))) if unit != AtUnit::Rfc3339 => At::UtcNanos(
                epoch_nanos(n, unit)
                    .ok_or_else(|| format!("{} is out of range", self.describe(AT)))?,
            ),
            (_, None) => return Err(self.missing(AT)),
            _ => return Err(self.not_a(AT)),
        };
        let consumer = match consumer {
            Some(Val::Num(Num::Int(i))) => Cow::Owned(i.to_string().into_bytes()),
            other => text(CONSUMER, other)?,
        };
        let dataset = match &self.dataset {
            Some(d) => Cow::Borrowed(d.as_bytes()),
            None => text(DATASET, dataset)?,
        };
        let contract = match &self.contract {
            Some(c) => Cow::Borrowed(c.as_bytes()),
            None => text(CONTRACT, contract)?,
        };
        Ok(Read {
            at,
            consumer,
            dataset,
            contract,
        })
    }

    /// [`Mapping::flat`] for the common record, without building a [`Read`]: the instant (as
    /// text, or an epoch time that is a plain integer in range), the consumer and the
    /// contract, every one of them there. `None` leaves the record to `flat`, which says what
    /// is wrong with it, or reads a number of another form. On a CSV log of epoch times,
    /// building the `Read` and reading its number in general were a sixth of a read's cost.
    /// Always inlined: with the CSV reader instantiated for three folds (the scan's, the
    /// record walk's, both), `#[inline]` left it a call (callgrind: 10 instructions a read).
    #[inline(always)]
    pub fn flat_quick<'a>(
        &'a self,
        fields: [Option<&'a [u8]>; 4],
    ) -> Option<(At<'a>, &'a [u8], &'a [u8])> {
        let [at, consumer, _, contract] = fields;
        let at = match self.unit {
            AtUnit::Rfc3339 => At::Text(at?),
            unit => At::UtcNanos(epoch_nanos(Num::Int(plain_integer(at?)?), unit)?),
        };
        let contract = match &self.contract {
            Some(c) => c.as_bytes(),
            None => contract?,
        };
        Some((at, consumer?, contract))
    }

    /// The read of a flat record whose columns `get` gives by slot (`None`: a constant
    /// slot, or a missing field); numbers in text are read as numbers where the unit says.
    pub fn flat<'a>(&'a self, fields: [Option<&'a [u8]>; 4]) -> Result<Read<'a>, String> {
        let [at, consumer, dataset, contract] = fields;
        let at = match (self.unit, at) {
            (AtUnit::Rfc3339, Some(t)) => At::Text(t),
            (unit, Some(t)) => match Num::parse(t.trim_ascii()) {
                Some(n) => At::UtcNanos(
                    epoch_nanos(n, unit)
                        .ok_or_else(|| format!("{} is out of range", self.describe(AT)))?,
                ),
                None => {
                    return Err(format!(
                        "{} {:?} is not a number",
                        self.describe(AT),
                        String::from_utf8_lossy(t)
                    ))
                }
            },
            (_, None) => return Err(self.missing(AT)),
        };
        let need =
            |s: usize, v: Option<&'a [u8]>| v.map(Cow::Borrowed).ok_or_else(|| self.missing(s));
        Ok(Read {
            at,
            consumer: need(CONSUMER, consumer)?,
            dataset: match &self.dataset {
                Some(d) => Cow::Borrowed(d.as_bytes()),
                None => need(DATASET, dataset)?,
            },
            contract: match &self.contract {
                Some(c) => Cow::Borrowed(c.as_bytes()),
                None => need(CONTRACT, contract)?,
            },
        })
    }

    pub fn unit(&self) -> AtUnit {
        self.unit
    }
}

/// A JSON value as the model reads it: objects keep every entry in order (so that a key
/// written twice is seen, not silently taken from its last place), arrays and literals are
/// only checked.
#[derive(Debug)]
enum Json {
    Object(Vec<(String, Json)>),
    String(String),
    Number(Num),
    Other,
}

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Json, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = m.next_entry::<String, Json>()? {
                    entries.push(entry);
                }
                Ok(Json::Object(entries))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut s: A) -> Result<Json, A::Error> {
                while s.next_element::<Json>()?.is_some() {}
                Ok(Json::Other)
            }
            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::String(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<Json, E> {
                Ok(Json::String(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Number(Num::Int(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Number(
                    i64::try_from(v).map_or(Num::Float(v as f64), Num::Int),
                ))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Number(Num::Float(v)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Json, E> {
                Ok(Json::Other)
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// An epoch number in UTC nanoseconds.
pub fn epoch_nanos(n: Num, unit: AtUnit) -> Option<i64> {
    let per: i64 = match unit {
        AtUnit::Seconds => 1_000_000_000,
        AtUnit::Millis => 1_000_000,
        AtUnit::Rfc3339 => return None,
    };
    match n {
        Num::Int(i) => i.checked_mul(per),
        // A double holds an epoch time of today to about a tenth of a microsecond, not to the
        // nanosecond: rounded to the microsecond, `1764212400.123456` is that instant
        // exactly, where nanoseconds would carry the double's error.
        Num::Float(f) => {
            let micros = (f * (per / 1_000) as f64).round();
            // The range of i64 nanoseconds, with a margin for the rounding at its ends.
            (micros.is_finite() && micros.abs() < 9.2e15).then(|| micros as i64 * 1_000)
        }
    }
}

/// The value of `b` when it is a plain integer of at most 18 digits (an epoch time in
/// milliseconds is 13), `-?(0|[1-9][0-9]*)` but not `-0`, read eight digits at a time
/// ([`digits`]); `None` for any other text, which [`Num::parse`] reads in full. Eighteen
/// digits cannot overflow an `i64`.
#[inline(always)]
fn plain_integer(b: &[u8]) -> Option<i64> {
    let neg = b.first() == Some(&b'-');
    let first = usize::from(neg);
    match b.get(first..) {
        None | Some([]) => return None,
        Some([b'0', _, ..]) => return None,
        Some([b'0']) if neg => return None,
        Some(d) if d.len() > 18 => return None,
        _ => {}
    }
    let (end, n) = digits::<true>(b, first);
    (end == b.len()).then_some(if neg { -n } else { n })
}

pub const ONES: u64 = 0x0101_0101_0101_0101;
pub const HIGH: u64 = 0x8080_8080_8080_8080;

/// Past the run of ASCII digits at `i`, and their value (meaningful for up to 18 digits):
/// eight at a time. In a word less '0' in every byte, a byte is a digit when it is at most 9,
/// and the lowest byte that is not is found exactly (a borrow or a carry only runs upwards).
/// The digits then sit in the word's low bytes, the first in the lowest: shifted to its top
/// (zeros before them are leading zeros), they are combined in pairs, fours and eights.
#[inline(always)]
pub fn digits<const VALUE: bool>(b: &[u8], mut i: usize) -> (usize, i64) {
    let mut n = 0i64;
    loop {
        let x = match b.get(i..i + 8) {
            Some(word) => {
                let mut w = [0u8; 8];
                w.copy_from_slice(word);
                u64::from_le_bytes(w)
            }
            // Fewer than eight bytes left: the text's last eight, shifted down past those
            // before `i`, so that zeros (no digit) follow its end.
            None if i < b.len() && b.len() >= 8 => {
                let mut w = [0u8; 8];
                w.copy_from_slice(&b[b.len() - 8..]);
                u64::from_le_bytes(w) >> (8 * (8 - (b.len() - i)))
            }
            None => break,
        }
        .wrapping_sub(ONES * u64::from(b'0'));
        let other = (x | x.wrapping_add(ONES * 0x76)) & HIGH;
        let count = (other.trailing_zeros() / 8) as usize;
        if VALUE && count > 0 {
            let mut v = x << (8 * (8 - count));
            v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
            v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
            v = (v.wrapping_mul(10_000) + (v >> 32)) & 0xffff_ffff;
            n = n.wrapping_mul(POW10[count]).wrapping_add(v as i64);
        }
        i += count;
        if count < 8 {
            return (i, n);
        }
    }
    // A text of fewer than eight bytes.
    while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        if VALUE {
            n = n.wrapping_mul(10).wrapping_add(i64::from(d));
        }
        i += 1;
    }
    (i, n)
}

/// Powers of ten, to append `k` digits to a number.
const POW10: [i64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Whether `b` is a JSON number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn number_grammar(b: &[u8]) -> bool {
    number_end(b, 0) == Some(b.len())
}

/// Past the JSON number at `i`, its grammar checked on the way,
/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, and its value when it is a plain
/// integer of at most 18 digits (as [`Num::parse`] reads one; `-0` is a double to it). What
/// follows the number is its caller's to check (no byte of a number may).
#[inline(always)]
pub fn number(b: &[u8], i: usize) -> Option<(usize, Option<i64>)> {
    number_in::<true>(b, i)
}

/// Past the JSON number at `i` ([`number`]) when its value is not needed: its digits are
/// checked and passed, not added up.
#[inline(always)]
pub fn number_end(b: &[u8], i: usize) -> Option<usize> {
    number_in::<false>(b, i).map(|(end, _)| end)
}

/// [`number`], adding the digits up only for `VALUE`.
#[inline(always)]
fn number_in<const VALUE: bool>(b: &[u8], mut i: usize) -> Option<(usize, Option<i64>)> {
    let neg = byte(b, i) == b'-';
    i += usize::from(neg);
    let first = i;
    let (mut n, mut integer) = match byte(b, i) {
        b'0' => {
            i += 1;
            (0, !neg)
        }
        b'1'..=b'9' => {
            let (end, n) = digits::<VALUE>(b, i);
            let count = end - i;
            i = end;
            (n, count <= 18)
        }
        _ => return None,
    };
    if byte(b, i) == b'.' {
        let (j, _) = digits::<false>(b, i + 1);
        if j == i + 1 {
            return None;
        }
        (i, integer) = (j, false);
    }
    if matches!(byte(b, i), b'e' | b'E') {
        i += 1;
        if matches!(byte(b, i), b'+' | b'-') {
            i += 1;
        }
        let (j, _) = digits::<false>(b, i);
        if j == i {
            return None;
        }
        (i, integer) = (j, false);
    }
    debug_assert!(i > first);
    if neg {
        n = n.wrapping_neg();
    }
    Some((i, integer.then_some(n)))
}

/// The byte at `i`; 0 past the end (which no rule of a number takes).
#[inline(always)]
fn byte(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The shortcut for plain integers reads every text as the full number parser does:
        /// digits of any length (overflow included), signs, leading zeros, `-0`, fractions
        /// and exponents.
        #[test]
        fn plain_integers_are_read_as_the_full_parser_reads_them(
            text in prop_oneof![
                "-?[0-9]{0,21}",
                "-?[0-9]{1,5}[.eE+-][0-9]{0,3}",
                "[ 0-9a+.-]{0,6}",
                Just("9223372036854775807".to_string()),
                Just("-9223372036854775808".to_string()),
                Just("9223372036854775808".to_string()),
            ],
        ) {
            prop_assert_eq!(Num::parse(text.as_bytes()), Num::parse_full(text.as_bytes()), "{}", text);
        }
    }
}
