//! What a scan remembers between reads ([`Memo`]): the dates of recent instants with their
//! day's place, and the versions read per dataset, so that the worst case (every line a read
//! of a requested dataset) parses a date or a version once, not once per line. The usual
//! spelling of RFC 3339 is parsed here against the remembered dates ([`Memo::rfc3339`]).

use std::collections::HashMap;

use chrono::NaiveDate;
use contracts_scan::reads::timestamps::{utc_seconds, Day};
use semver::Version;

use super::ScanRequest;

/// What the scan remembers between reads, so that the worst case (every line a read of a
/// requested dataset) does not parse the same few dates and versions again on every line:
/// the last day seen (a log is mostly in time order) and the versions seen per dataset.
#[derive(Debug, Clone, Default)]
pub(super) struct Memo {
    /// `YYYY-MM-DD` of recent instants, where that UTC day falls and its midnight in
    /// nanoseconds since the epoch, one slot per day of the month: a log's lines are not in
    /// time order, and a date seen once is not parsed again.
    days: [Option<([u8; 10], Day, i64)>; 32],
    /// The first nanosecond (since the epoch, UTC) of the first requested day and of the day
    /// after the last, once asked for.
    day_numbers: Option<(i64, i64)>,
    /// Every version read: the parsed version and whether the store has it; a version's
    /// number is its place here.
    pub(super) versions: Vec<(Version, bool)>,
    /// Per requested dataset (by [`Scan::dataset_index`]), the contract texts read and
    /// their numbers: the first [`MEMO_SCAN`] searched in turn, the rest by hash.
    texts: Vec<ContractTexts>,
}

/// One dataset's contract texts read so far and their version numbers.
#[derive(Debug, Clone, Default)]
struct ContractTexts {
    /// One slot per hash of a probe that decides ([`Probe::decides`]): the last such text
    /// seen with that hash and its number. Nearly every read is found here by one
    /// comparison whose outcome does not depend on which version the line names; the search
    /// in turn below branched on it, and a log that mixes its versions at random made that
    /// branch mispredict on most reads (a tenth of a read's fold on shape a of the bench).
    front: Vec<(Probe, u32)>,
    /// The first [`MEMO_SCAN`] texts, searched in turn.
    first: Vec<(Probe, Vec<u8>, u32)>,
    /// The rest, by hash.
    more: HashMap<Vec<u8>, u32>,
}

/// Slots in [`ContractTexts::front`].
const FRONT: usize = 64;

/// A short text's length and its first and last four bytes: for a text of four to eight
/// bytes (a version such as `1.10.0`) equal probes are equal texts, compared in the list
/// with no pointer to follow (following them was a sixth of a read's fold).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Probe {
    len: usize,
    head: u32,
    tail: u32,
}

impl Probe {
    #[inline(always)]
    fn of(text: &[u8]) -> Probe {
        let len = text.len();
        // Whole four-byte loads where the text has them: a copy of a length known only at
        // run time into a zeroed word was two calls to `memcpy` a read.
        let word = |at: usize| {
            let mut w = [0u8; 4];
            w.copy_from_slice(&text[at..at + 4]);
            u32::from_le_bytes(w)
        };
        if len >= 4 {
            return Probe {
                len,
                head: word(0),
                tail: word(len - 4),
            };
        }
        // Shorter: zero-padded, byte by byte (head and tail are the same bytes).
        let short = text
            .iter()
            .enumerate()
            .fold(0u32, |w, (i, &c)| w | (u32::from(c) << (8 * i)));
        Probe {
            len,
            head: short,
            tail: short,
        }
    }

    /// Whether the probe alone decides equality.
    fn decides(&self) -> bool {
        (4..=8).contains(&self.len)
    }

    /// Its slot in [`ContractTexts::front`].
    #[inline(always)]
    fn slot(&self) -> usize {
        let x = u64::from(self.head) ^ (u64::from(self.tail) << 29) ^ self.len as u64;
        (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize
    }
}

/// Nanoseconds in a day.
const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// The first contract texts of a dataset, found by a linear search (a log names a few).
const MEMO_SCAN: usize = 16;

impl Memo {
    /// `at` when it is RFC 3339 in the usual spelling, `YYYY-MM-DDTHH:MM:SS`, then an
    /// optional fraction of one to nine digits, then `Z` or `±HH:MM`: its day's place, the
    /// instant in UTC nanoseconds since the epoch and the offset in minutes, with the date
    /// parsed once per run of reads on the same date. `None` for any other form (a leap
    /// second, a lower-case `t`, more digits, a day outside the nanosecond range), which the
    /// general parser takes.
    #[inline]
    pub(super) fn rfc3339(&mut self, b: &[u8], req: &ScanRequest) -> Option<(Day, i64, i16)> {
        if b.len() < 20 || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
            return None;
        }
        // The slot of the day of the month; a wrong guess is only a miss (all ten bytes are
        // compared).
        let slot = (usize::from(b[8].wrapping_sub(b'0') & 3) * 10
            + usize::from(b[9].wrapping_sub(b'0') % 10))
            & 31;
        let midnight = match &self.days[slot] {
            Some((d, _, m)) if short_eq(d, &b[..10]) => *m,
            _ => {
                let mut whole = [0u8; 20];
                whole[..19].copy_from_slice(&b[..19]);
                whole[19] = b'Z';
                let t = utc_seconds(&whole)?;
                let day = t.date_naive();
                let midnight = day.and_time(chrono::NaiveTime::MIN).and_utc();
                let midnight = midnight.timestamp_nanos_opt()?;
                let mut d = [0u8; 10];
                d.copy_from_slice(&b[..10]);
                self.days[slot] = Some((d, Day::of(day, req.from, req.to), midnight));
                midnight
            }
        };
        let two = |i: usize| two_digits(b, i);
        let (h, m, sec) = (two(11)?, two(14)?, two(17)?);
        // No leap second here (`:60` goes to the RFC 3339 parser, as before).
        if h > 23 || m > 59 || sec > 59 {
            return None;
        }
        let mut i = 19;
        let mut nanos = 0i64;
        if b[i] == b'.' {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                nanos = nanos * 10 + i64::from(b[i] - b'0');
                i += 1;
            }
            let digits = i - start;
            if digits == 0 || digits > 9 {
                return None;
            }
            nanos *= [
                1,
                100_000_000,
                10_000_000,
                1_000_000,
                100_000,
                10_000,
                1_000,
                100,
                10,
                1,
            ][digits];
        }
        let offset = match &b[i..] {
            b"Z" => 0i64,
            [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
                let (oh, om) = (two(i + 1)?, two(i + 4)?);
                if oh > 23 || om > 59 {
                    return None;
                }
                let minutes = oh * 60 + om;
                if *sign == b'-' {
                    -minutes
                } else {
                    minutes
                }
            }
            _ => return None,
        };
        let local = midnight.checked_add((h * 3600 + m * 60 + sec) * 1_000_000_000 + nanos)?;
        let ns = local.checked_sub(offset * 60_000_000_000)?;
        let place = if offset == 0 {
            // The date is the UTC date: its place is remembered with it.
            self.days[slot].as_ref().map_or(Day::Inside, |d| d.1)
        } else {
            self.place_of_nanos(ns, req)
        };
        Some((place, ns, i16::try_from(offset).ok()?))
    }

    /// Where an instant in UTC nanoseconds falls: compared with the first nanosecond of the
    /// first day and of the day after the last, with no division per read (a division by the
    /// nanoseconds of a day was a sixth of the fold of a read).
    #[inline]
    pub(super) fn place_of_nanos(&mut self, ns: i64, req: &ScanRequest) -> Day {
        // Not `get_or_insert_with`: it was not inlined, a call on every read.
        let (from, after) = match self.day_numbers {
            Some(numbers) => numbers,
            None => *self.day_numbers.insert(day_numbers(req)),
        };
        if ns >= after {
            Day::After
        } else if ns < from {
            Day::Before
        } else {
            Day::Inside
        }
    }

    /// The number of the version `contract` names, and whether the store has it for
    /// `dataset`, the `d`th requested.
    #[inline]
    pub(super) fn version(
        &mut self,
        req: &ScanRequest,
        d: usize,
        dataset: &str,
        contract: &[u8],
    ) -> Result<(u32, bool), String> {
        if self.texts.len() <= d {
            self.texts.resize_with(d + 1, Default::default);
        }
        let texts = &mut self.texts[d];
        let probe = Probe::of(contract);
        let decides = probe.decides();
        if decides {
            if let Some(&(p, i)) = texts.front.get(probe.slot()) {
                if p == probe {
                    return Ok((i, self.versions[i as usize].1));
                }
            }
        }
        let found = texts
            .first
            .iter()
            .find(|(p, c, _)| *p == probe && (decides || c.as_slice() == contract))
            .map(|&(_, _, i)| i)
            .or_else(|| texts.more.get(contract).copied());
        if let Some(i) = found {
            texts.remember(probe, i);
            return Ok((i, self.versions[i as usize].1));
        }
        let not_semver = || {
            format!(
                "`contract` {:?} is not a semantic version",
                String::from_utf8_lossy(contract)
            )
        };
        let text = std::str::from_utf8(contract).map_err(|_| not_semver())?;
        let version = Version::parse(text).map_err(|_| not_semver())?;
        let known = req.is_known(dataset, &version);
        let i = u32::try_from(self.versions.len()).map_err(|_| "too many versions".to_string())?;
        if texts.first.len() < MEMO_SCAN {
            texts.first.push((probe, contract.to_vec(), i));
        } else {
            texts.more.insert(contract.to_vec(), i);
        }
        texts.remember(probe, i);
        self.versions.push((version, known));
        Ok((i, known))
    }
}

impl ContractTexts {
    /// Keep text number `i` in the front slot of its probe, when the probe decides.
    fn remember(&mut self, probe: Probe, i: u32) {
        if !probe.decides() {
            return;
        }
        if self.front.is_empty() {
            // A probe of length 0 never decides: an empty slot matches nothing.
            let empty = Probe {
                len: 0,
                head: 0,
                tail: 0,
            };
            self.front = vec![(empty, u32::MAX); FRONT];
        }
        self.front[probe.slot()] = (probe, i);
    }
}

/// The first nanosecond (since the epoch, UTC) of the first requested day and of the day
/// after the last.
#[cold]
fn day_numbers(req: &ScanRequest) -> (i64, i64) {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
    let start = |day: NaiveDate| {
        day.signed_duration_since(epoch)
            .num_days()
            .saturating_mul(NANOS_PER_DAY)
    };
    (start(req.from), start(req.to).saturating_add(NANOS_PER_DAY))
}

/// Two ASCII digits at `b[i..i + 2]` as a number; `None` when either is not a digit. A
/// function that is always inlined: as a closure it was a call, five a read.
#[inline(always)]
fn two_digits(b: &[u8], i: usize) -> Option<i64> {
    let (x, y) = (b[i].wrapping_sub(b'0'), b[i + 1].wrapping_sub(b'0'));
    (x < 10 && y < 10).then(|| i64::from(x * 10 + y))
}

/// Equality of two short byte strings (names, versions, days) without a call to `memcmp`:
/// the scan compares a few per line, and a call costs more than the comparison. Strings of 4
/// to 16 bytes are compared as two overlapping words, shorter ones byte by byte.
#[inline]
pub(super) fn short_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word8 = |s: &[u8], i: usize| {
        s.get(i..i + 8)
            .and_then(|w| w.try_into().ok())
            .map(u64::from_le_bytes)
    };
    let word4 = |s: &[u8], i: usize| {
        s.get(i..i + 4)
            .and_then(|w| w.try_into().ok())
            .map(u32::from_le_bytes)
    };
    match n {
        0 => true,
        1..4 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..8 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        8..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    proptest::proptest! {
        /// The memo gives one number per contract text and different numbers to different
        /// texts, whatever the order they come in: more texts than the front has slots (so
        /// slots are shared and overwritten), than the list holds (so the map is used), of
        /// every length (the front takes only those of four to eight bytes), on two datasets.
        #[test]
        fn a_version_text_has_one_number(
            picks in proptest::collection::vec((0usize..2, 0usize..120), 1..600),
        ) {
            let texts: Vec<String> = (0..120)
                .map(|k| match k % 4 {
                    0 => format!("{}.{}.{}", k / 40, k % 7, k % 11),
                    1 => format!("{k}.{}.{}", k * 7 % 100, k * 13 % 1000),
                    2 => format!("1.0.{k}-rc.{}", k % 3),
                    _ => format!("{}.0.0", k % 10),
                })
                .collect();
            let req = ScanRequest::lookback(
                ["rivers".to_string(), "roads".to_string()].into(),
                day("2026-11-29"),
                30,
            );
            let mut memo = Memo::default();
            let mut seen: HashMap<(usize, &str), u32> = HashMap::new();
            for (d, k) in picks {
                let text = texts[k].as_str();
                let (i, known) = memo.version(&req, d, "roads", text.as_bytes()).unwrap();
                proptest::prop_assert!(known);
                proptest::prop_assert_eq!(*seen.entry((d, text)).or_insert(i), i, "{}", text);
                proptest::prop_assert_eq!(memo.versions[i as usize].0.to_string(), text);
            }
            let mut numbers: Vec<u32> = seen.values().copied().collect();
            numbers.sort_unstable();
            numbers.dedup();
            proptest::prop_assert_eq!(numbers.len(), seen.len());
        }

        /// The fast date path, with its remembered days, agrees with chrono's RFC 3339 parser
        /// on every form it takes (any fraction, any offset), and takes none chrono refuses.
        #[test]
        fn the_fast_date_path_with_fractions_and_offsets_is_rfc3339(
            texts in proptest::collection::vec(
                (
                    (2026i32..2028, 1u32..13, 26u32..32, 0u32..25, 0u32..61),
                    proptest::option::of((1usize..11, 0u64..10_000_000_000)),
                    proptest::sample::select(vec!["Z", "+00:00", "-00:00", "+02:00", "-09:30", "+23:59", "+24:00", "z", "+0200"]),
                ),
                1..20,
            ),
        ) {
            let req = ScanRequest::lookback(["roads".to_string()].into(), day("2026-11-29"), 30);
            let mut memo = Memo::default();
            for ((y, mo, d, h, s), frac, off) in texts {
                let frac = frac.map_or(String::new(), |(n, digits)| {
                    format!(".{}", &format!("{digits:010}")[..n])
                });
                let text = format!("{y:04}-{mo:02}-{d:02}T{h:02}:30:{s:02}{frac}{off}");
                let want = DateTime::parse_from_rfc3339(&text).ok();
                match (memo.rfc3339(text.as_bytes(), &req), want) {
                    (Some((place, ns, offset)), Some(t)) => {
                        let d = t.with_timezone(&Utc).date_naive();
                        let want = if d > req.to {
                            Day::After
                        } else if d < req.from {
                            Day::Before
                        } else {
                            Day::Inside
                        };
                        proptest::prop_assert_eq!(place, want, "{}", text);
                        proptest::prop_assert_eq!(Some(ns), t.timestamp_nanos_opt(), "{}", text);
                        proptest::prop_assert_eq!(i32::from(offset) * 60, t.offset().local_minus_utc());
                    }
                    (Some(_), None) => proptest::prop_assert!(false, "taken, but not RFC 3339: {}", text),
                    // The general parser takes the rest; a leap second or hour 24 is its to judge.
                    (None, _) => {}
                }
            }
        }

        #[test]
        fn a_deciding_probe_is_equality(a in proptest::collection::vec(0u8..3, 0..12), b in proptest::collection::vec(0u8..3, 0..12)) {
            let (pa, pb) = (Probe::of(&a), Probe::of(&b));
            if a == b {
                proptest::prop_assert_eq!(pa, pb);
            }
            if pa == pb && pa.decides() {
                proptest::prop_assert_eq!(a, b);
            }
        }

        #[test]
        fn short_eq_is_equality(a in proptest::collection::vec(0u8..3, 0..20), b in proptest::collection::vec(0u8..3, 0..20)) {
            proptest::prop_assert_eq!(short_eq(&a, &b), a == b);
            proptest::prop_assert!(short_eq(&a, &a));
        }
    }
}
