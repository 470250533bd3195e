//! The `coordinates` member of a geometry, in two readers that agree: a serde visitor that
//! streams the positions one by one (the sequential reader, any size in bounded memory), and
//! a hand-written scan of the member's text (the parallel reader, whose input is a slice in
//! memory). Both record only the envelope, the dimensions and the nesting of the arrays.

use serde::de::{self, SeqAccess};

use super::super::geom::GeomScan;
use super::MAX_DEPTH;

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

    /// A JSON number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Option<f64> {
        let b = self.b;
        let start = self.i;
        let mut i = start;
        let digits = |i: &mut usize| {
            let s = *i;
            while *i < b.len() && b[*i].is_ascii_digit() {
                *i += 1;
            }
            *i - s
        };
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                digits(&mut i);
            }
            _ => return None,
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            if digits(&mut i) == 0 {
                return None;
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if digits(&mut i) == 0 {
                return None;
            }
        }
        self.i = i;
        // ASCII from `start` to `i`: both are character boundaries.
        let v: f64 = self.text.get(start..i)?.parse().ok()?;
        v.is_finite().then_some(v)
    }

    /// One array at `level` (1 = the `coordinates` array): the rules of
    /// [`CoordSeed::visit_seq`].
    fn array(&mut self, level: usize) -> Option<Node> {
        if level > MAX_DEPTH {
            return None;
        }
        self.i += 1;
        let mut tally = Tally::default();
        self.ws();
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
}
