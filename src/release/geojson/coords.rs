//! The `coordinates` member of a geometry, in two readers that agree: a serde visitor that
//! streams the positions one by one (the sequential reader, any size in bounded memory), and
//! a hand-written scan of the member's text (the parallel reader, whose input is a slice in
//! memory). Both record only the envelope, the dimensions and the nesting of the arrays.

use serde::de::{self, SeqAccess};

use super::super::geom::GeomScan;
use super::pieces::MAX_DEPTH;

/// What the coordinates of one geometry looked like, gathered while they streamed by.
#[derive(Default)]
pub(super) struct Shape {
    /// The nesting level (1 = the `coordinates` array) of the arrays that hold positions.
    pub(super) list_level: Option<usize>,
    /// Bit `l` is set when an empty array occurred at level `l`.
    pub(super) empty_levels: u64,
    /// Some list of positions has exactly one (a bad LineString).
    pub(super) line_bad: bool,
    /// Some list of positions is not a closed ring of at least 4 (a bad linear ring).
    pub(super) ring_bad: bool,
}

/// What one JSON array (or number) inside `coordinates` turned out to be.
pub(super) enum Node {
    Number(f64),
    Position(f64, f64),
    List,
}

pub(super) struct CoordSeed<'a> {
    pub(super) scan: &'a mut GeomScan,
    pub(super) shape: &'a mut Shape,
    pub(super) level: usize,
}

seed! {
    CoordSeed<'_> => Node, deserialize_any, "GeoJSON coordinates (nested arrays of numbers)";
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Number(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Number(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Number(v as f64))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        if self.level > MAX_DEPTH {
            return Err(de::Error::custom("coordinates nested too deep"));
        }
        let mut tally = Tally::default();
        loop {
            let child = CoordSeed {
                scan: &mut *self.scan,
                shape: &mut *self.shape,
                level: self.level + 1,
            };
            let Some(node) = seq.next_element_seed(child)? else {
                break;
            };
            if !tally.add(node, self.scan) {
                return Err(de::Error::custom(
                    "coordinates mix numbers, positions and arrays in one array",
                ));
            }
        }
        tally
            .finish(self.level, self.scan, self.shape)
            .map_err(de::Error::custom)
    }
}

/// What one array holds so far: numbers (a position), positions (a list) or arrays. Both
/// readers keep it by the same rules.
struct Tally {
    numbers: usize,
    xy: [f64; 2],
    points: usize,
    first: (f64, f64),
    last: (f64, f64),
    arrays: bool,
}

impl Default for Tally {
    fn default() -> Tally {
        Tally {
            numbers: 0,
            xy: [f64::NAN; 2],
            points: 0,
            first: (f64::NAN, f64::NAN),
            last: (f64::NAN, f64::NAN),
            arrays: false,
        }
    }
}

impl Tally {
    /// One element of the array; `false` when it mixes numbers, positions and arrays.
    fn add(&mut self, node: Node, scan: &mut GeomScan) -> bool {
        match node {
            Node::Number(v) if self.points == 0 && !self.arrays => {
                if self.numbers < 2 {
                    self.xy[self.numbers] = v;
                }
                self.numbers += 1;
            }
            Node::Position(x, y) if self.numbers == 0 && !self.arrays => {
                scan.coord(x, y);
                if self.points == 0 {
                    self.first = (x, y);
                }
                self.last = (x, y);
                self.points += 1;
            }
            Node::List if self.numbers == 0 && self.points == 0 => self.arrays = true,
            _ => return false,
        }
        true
    }

    /// What the array at `level` was, once closed, or why it is refused.
    fn finish(
        self,
        level: usize,
        scan: &mut GeomScan,
        shape: &mut Shape,
    ) -> Result<Node, &'static str> {
        if self.numbers > 0 {
            if self.numbers < 2 {
                return Err("a position needs two numbers");
            }
            // A third number is a height; a fourth is ignored, as GDAL does (RFC 7946
            // positions carry no measure).
            if self.numbers >= 3 {
                scan.z = true;
            }
            return Ok(Node::Position(self.xy[0], self.xy[1]));
        }
        if self.points > 0 {
            match shape.list_level {
                None => shape.list_level = Some(level),
                Some(l) if l == level => {}
                Some(_) => return Err("positions at different depths in one geometry"),
            }
            shape.line_bad |= self.points == 1;
            shape.ring_bad |= self.points < 4 || self.first != self.last;
        } else if !self.arrays {
            shape.empty_levels |= 1 << level.min(63);
        }
        Ok(Node::List)
    }
}

/// The `coordinates` member from its text: what [`CoordSeed`] computes from the streamed
/// values, by a hand-written scan (serde's visitor per number and its float parser were half
/// the parallel reader's time). Numbers follow the JSON grammar strictly and parse to the
/// correctly rounded `f64`, as serde_json's `float_roundtrip` parser does; a number out of
/// range is refused as serde_json refuses it. `None` is any refusal: the sequential reader
/// then reads the file and names the error.
pub(super) fn raw_coords(text: &str, scan: &mut GeomScan, shape: &mut Shape) -> Option<Node> {
    let (node, end) = raw_coords_at(text, 0, scan, shape)?;
    let mut r = RawCoords {
        text,
        b: text.as_bytes(),
        i: end,
        scan,
        shape,
    };
    r.ws();
    (r.i == text.len()).then_some(node)
}

/// [`raw_coords`] of the value that starts at byte `at` of `text` (after any whitespace),
/// and the byte just after it.
pub(super) fn raw_coords_at(
    text: &str,
    at: usize,
    scan: &mut GeomScan,
    shape: &mut Shape,
) -> Option<(Node, usize)> {
    let mut r = RawCoords {
        text,
        b: text.as_bytes(),
        i: at,
        scan,
        shape,
    };
    let node = r.value(1)?;
    Some((node, r.i))
}

/// The powers of ten that are exact doubles.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The powers of ten up to 10^21 as integers.
const POW10_INT: [u128; 22] = {
    let mut t = [1u128; 22];
    let mut k = 1;
    while k < 22 {
        t[k] = t[k - 1] * 10;
        k += 1;
    }
    t
};

/// The double nearest to `m / 10^k` (`m > 0`, `k` at most 21), when it is proved cheaply:
/// the quotient in floating point is within a unit in the last place of it, so one of that
/// double and its two neighbours is it. A double `M·2^e` is the nearest to `x` when
/// `|x − M·2^e| < 2^(e−1)`, which, times `2·10^k·2^−e`, is the integer comparison
/// `|2·m·2^−e − 2·M·10^k| < 10^k`. A tie, the bottom of a binade (where the gap below is
/// half the gap above), a subnormal or an overflow of 128 bits is `None`: the standard
/// parser decides.
fn nearest_quotient(m: u64, k: usize) -> Option<f64> {
    let p = *POW10_INT.get(k)?;
    let guess = m as f64 / POW10[k];
    if !guess.is_normal() || guess <= 0.0 {
        return None;
    }
    let g = guess.to_bits();
    for bits in [g, g + 1, g - 1] {
        let exp = (bits >> 52) & 0x7FF;
        let frac = bits & ((1 << 52) - 1);
        if exp == 0 || exp == 0x7FF || frac == 0 {
            return None;
        }
        let big_m = u128::from(frac | 1 << 52);
        // The double is big_m · 2^e with e = exp − 1075; only e < 0 comes here (x < 2^53).
        let s = 1075i64.checked_sub(exp as i64)?;
        if s <= 0 {
            return None;
        }
        let m_bits = 64 - i64::from(m.leading_zeros());
        if m_bits + s + 1 > 127 {
            return None;
        }
        let a = u128::from(m) << (s + 1);
        let b = big_m.checked_mul(p)?.checked_mul(2)?;
        let d = a.abs_diff(b);
        if d < p {
            return Some(f64::from_bits(bits));
        }
        if d == p {
            return None;
        }
    }
    None
}

struct RawCoords<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    scan: &'a mut GeomScan,
    shape: &'a mut Shape,
}

impl RawCoords<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn value(&mut self, level: usize) -> Option<Node> {
        self.ws();
        match *self.b.get(self.i)? {
            b'[' => self.array(level),
            b'-' | b'0'..=b'9' => self.number().map(Node::Number),
            _ => None,
        }
    }

    /// A JSON number ([`number`](super::number::number)'s grammar), as the double the
    /// standard parser gives.
    fn number(&mut self) -> Option<f64> {
        let start = self.i;
        let n = super::number::number(self.b, start)?;
        self.i = n.end;
        let sign = |v: f64| if n.negative { -v } else { v };
        // Clinger's fast path: an integer of at most 2^53 and a power of ten of at most
        // 10^22 are both exact doubles, so one multiplication or division rounds correctly,
        // to the double the full parser gives.
        if let Some(exp) = n.exponent {
            let e = exp - n.fraction as i64;
            if n.digits <= 19 && n.mantissa <= 1 << 53 && (-22..=22).contains(&e) {
                let f = n.mantissa as f64;
                let v = if e < 0 {
                    f / POW10[(-e) as usize]
                } else {
                    f * POW10[e as usize]
                };
                return Some(sign(v));
            }
            // Longer digits (most coordinates have 16 or 17) over a power of ten: a
            // candidate from floating point, proved nearest in integers.
            if n.digits <= 19 && (-21..0).contains(&e) {
                if let Some(v) = nearest_quotient(n.mantissa, (-e) as usize) {
                    return Some(sign(v));
                }
            }
        }
        // ASCII from `start` to the number's end: both are character boundaries.
        let v: f64 = self.text.get(start..n.end)?.parse().ok()?;
        v.is_finite().then_some(v)
    }

    /// One array at `level` (1 = the `coordinates` array): the rules of
    /// [`CoordSeed::visit_seq`].
    fn array(&mut self, level: usize) -> Option<Node> {
        if level > MAX_DEPTH {
            return None;
        }
        self.i += 1;
        self.ws();
        if matches!(self.b.get(self.i), Some(b'-' | b'0'..=b'9')) {
            return self.position();
        }
        let mut tally = Tally::default();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
        } else {
            loop {
                let node = self.value(level + 1)?;
                if !tally.add(node, self.scan) {
                    return None;
                }
                self.ws();
                match *self.b.get(self.i)? {
                    b',' => self.i += 1,
                    b']' => {
                        self.i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        tally.finish(level, self.scan, self.shape).ok()
    }

    /// An array that starts with a number, at that number: a position, by [`Tally`]'s rules
    /// for an array of numbers (at least two; a third is a height; anything but a number
    /// after one is refused), in one loop rather than a [`Tally`] and a call per number.
    fn position(&mut self) -> Option<Node> {
        let mut xy = [f64::NAN; 2];
        let mut n = 0usize;
        loop {
            let v = self.number()?;
            if n < 2 {
                xy[n] = v;
            }
            n += 1;
            self.ws();
            match *self.b.get(self.i)? {
                b',' => {
                    self.i += 1;
                    self.ws();
                    if !matches!(self.b.get(self.i), Some(b'-' | b'0'..=b'9')) {
                        return None;
                    }
                }
                b']' => {
                    self.i += 1;
                    break;
                }
                _ => return None,
            }
        }
        if n < 2 {
            return None;
        }
        if n >= 3 {
            self.scan.z = true;
        }
        Some(Node::Position(xy[0], xy[1]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A number through [`RawCoords::number`].
    fn number(text: &str) -> Option<f64> {
        let mut scan = GeomScan::default();
        let mut shape = Shape::default();
        let mut r = RawCoords {
            text,
            b: text.as_bytes(),
            i: 0,
            scan: &mut scan,
            shape: &mut shape,
        };
        let v = r.number()?;
        (r.i == text.len()).then_some(v)
    }

    #[test]
    fn numbers_parse_to_the_double_the_standard_parser_gives() {
        let mut fixed = vec![
            "0",
            "-0",
            "0.0",
            "-0.0",
            "1",
            "-1",
            "1.5",
            "1e5",
            "1E+5",
            "1e-5",
            "-2.5e-3",
            "9007199254740992",
            "9007199254740993",
            "9007199254740993.0",
            "0.1",
            "0.3",
            "27.978910325413043",
            "29.22444343608101",
            "-1.552426163263748",
            "1e22",
            "1e23",
            "1e-22",
            "1e-23",
            "123456789012345678901234567890",
            "0.000000000000000000001",
            "4.9e-324",
            "1.7976931348623157e308",
            "2.2250738585072014e-308",
            "1e0000001",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        // Decimals of every length around the fast path's limits, from a fixed generator.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = 1 + (x % 20) as usize;
            let point = (x >> 8) as usize % (digits + 1);
            let mut s: String = (0..digits)
                .map(|k| char::from(b'0' + ((x >> (k * 3 % 60)) % 10) as u8))
                .collect();
            s = s.trim_start_matches('0').to_string();
            if s.is_empty() {
                s = "0".into();
            }
            if point > 0 && point < s.len() {
                s.insert(point, '.');
            }
            if x & 1 << 62 != 0 {
                s.insert(0, '-');
            }
            if x & 1 << 61 != 0 {
                s.push_str(&format!("e{}", (x >> 40) as i64 % 30 - 15));
            }
            fixed.push(s);
        }
        for s in &fixed {
            let want = s.parse::<f64>().ok().filter(|v| v.is_finite());
            let got = number(s);
            assert_eq!(
                got.map(f64::to_bits),
                want.map(f64::to_bits),
                "{s}: {got:?} against {want:?}"
            );
        }
        for bad in ["01", "1.", ".5", "-", "1e", "1e+", "+1"] {
            assert_eq!(number(bad), None, "{bad}");
        }
    }
}
