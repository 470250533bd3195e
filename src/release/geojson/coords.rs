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
        // What this array holds: numbers (a position), positions (a list) or arrays.
        let mut numbers = 0usize;
        let mut xy = [f64::NAN; 2];
        let mut points = 0usize;
        let mut first = (f64::NAN, f64::NAN);
        let mut last = first;
        let mut arrays = false;
        loop {
            let child = CoordSeed {
                scan: &mut *self.scan,
                shape: &mut *self.shape,
                level: self.level + 1,
            };
            let Some(node) = seq.next_element_seed(child)? else {
                break;
            };
            match node {
                Node::Number(v) if points == 0 && !arrays => {
                    if numbers < 2 {
                        xy[numbers] = v;
                    }
                    numbers += 1;
                }
                Node::Position(x, y) if numbers == 0 && !arrays => {
                    self.scan.coord(x, y);
                    if points == 0 {
                        first = (x, y);
                    }
                    last = (x, y);
                    points += 1;
                }
                Node::List if numbers == 0 && points == 0 => arrays = true,
                _ => {
                    return Err(de::Error::custom(
                        "coordinates mix numbers, positions and arrays in one array",
                    ))
                }
            }
        }
        if numbers > 0 {
            if numbers < 2 {
                return Err(de::Error::custom("a position needs two numbers"));
            }
            // A third number is a height; a fourth is ignored, as GDAL does (RFC 7946
            // positions carry no measure).
            if numbers >= 3 {
                self.scan.z = true;
            }
            return Ok(Node::Position(xy[0], xy[1]));
        }
        if points > 0 {
            match self.shape.list_level {
                None => self.shape.list_level = Some(self.level),
                Some(l) if l == self.level => {}
                Some(_) => {
                    return Err(de::Error::custom(
                        "positions at different depths in one geometry",
                    ))
                }
            }
            self.shape.line_bad |= points == 1;
            self.shape.ring_bad |= points < 4 || first != last;
        } else if !arrays {
            self.shape.empty_levels |= 1 << self.level.min(63);
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
    let b = text.as_bytes();
    let mut r = RawCoords {
        text,
        b,
        i: 0,
        scan,
        shape,
    };
    let node = r.value(1)?;
    r.ws();
    (r.i == b.len()).then_some(node)
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
        let mut numbers = 0usize;
        let mut xy = [f64::NAN; 2];
        let mut points = 0usize;
        let mut first = (f64::NAN, f64::NAN);
        let mut last = first;
        let mut arrays = false;
        self.ws();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
        } else {
            loop {
                match self.value(level + 1)? {
                    Node::Number(v) if points == 0 && !arrays => {
                        if numbers < 2 {
                            xy[numbers] = v;
                        }
                        numbers += 1;
                    }
                    Node::Position(x, y) if numbers == 0 && !arrays => {
                        self.scan.coord(x, y);
                        if points == 0 {
                            first = (x, y);
                        }
                        last = (x, y);
                        points += 1;
                    }
                    Node::List if numbers == 0 && points == 0 => arrays = true,
                    _ => return None,
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
        if numbers > 0 {
            if numbers < 2 {
                return None;
            }
            if numbers >= 3 {
                self.scan.z = true;
            }
            return Some(Node::Position(xy[0], xy[1]));
        }
        if points > 0 {
            match self.shape.list_level {
                None => self.shape.list_level = Some(level),
                Some(l) if l == level => {}
                Some(_) => return None,
            }
            self.shape.line_bad |= points == 1;
            self.shape.ring_bad |= points < 4 || first != last;
        } else if !arrays {
            self.shape.empty_levels |= 1 << level.min(63);
        }
        Some(Node::List)
    }
}
