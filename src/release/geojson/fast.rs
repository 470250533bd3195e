//! The parallel reader's fast path: a batch of plain features (see [`split::Batch`]) walked by
//! hand, without serde. What makes up most files — `{"type": "Feature", "properties": {…},
//! "geometry": {"type": …, "coordinates": […]}}` with flat property values and strings without
//! escapes — is read here in one pass over the bytes: the coordinates are scanned where they
//! lie (serde_json's `RawValue` walked them once more before), and property values are
//! classified without building a `serde_json::Value`.
//!
//! Anything else in a batch (an escape, a nested property value, a foreign member, a
//! `bbox`, a GeometryCollection, a member given twice, a very long integer, a byte the JSON
//! grammar refuses) makes the whole batch `None`, and the serde walk reads it instead. So
//! this path only ever answers for text whose meaning is plain, with the figures the serde
//! walk gives for it (a unit test compares the two).
//!
//! [`split::Batch`]: super::split::Batch

use super::super::geom::GeomScan;
use super::super::profile::AttrType;
use super::columns::State;
use super::coords::{raw_coords_at, Shape};
use super::geometry;

/// Profile a batch `[[f1,f2,…]]` by hand; `None` when anything in it is not plain.
pub(super) fn batch(buf: &[u8]) -> Option<State> {
    // Once for the whole batch: strings and numbers are then slices of a `str`.
    let text = std::str::from_utf8(buf).ok()?;
    let mut p = Walk { text, b: buf, i: 0 };
    let mut st = State::part();
    st.raw = true;
    p.ws();
    p.eat(b'[')?;
    p.ws();
    p.eat(b'[')?;
    p.ws();
    if p.peek()? == b']' {
        p.i += 1;
    } else {
        loop {
            p.ws();
            p.feature(&mut st)?;
            p.ws();
            match p.next()? {
                b',' => {}
                b']' => break,
                _ => return None,
            }
        }
    }
    p.ws();
    p.eat(b']')?;
    p.ws();
    (p.i == buf.len()).then_some(st)
}

struct Walk<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

/// A property's value as the serde walk types it ([`super::columns::value_type`]).
enum Value {
    Null,
    Typed(AttrType),
}

impl<'a> Walk<'a> {
    #[inline]
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    /// Whether the next bytes are `word` (a literal); consumed if so.
    fn literal(&mut self, word: &[u8]) -> bool {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    /// A string without escapes or control characters, at its opening quote.
    #[inline]
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' | 0..=0x1F => return None,
                _ => self.i += 1,
            }
        }
        let s = self.text.get(start..self.i)?;
        self.i += 1;
        Some(s)
    }

    /// A JSON number ([`number`](super::number::number)'s grammar): whether it is integral,
    /// and its text.
    fn number(&mut self) -> Option<(bool, &'a str)> {
        let start = self.i;
        let n = super::number::number(self.b, start)?;
        self.i = n.end;
        Some((n.integral(), self.text.get(start..n.end)?))
    }

    /// A number's type as serde_json's `Value` has it: an integer that fits `i64` is
    /// `int64`, except `-0`, which serde_json reads as the float -0.0; any other number is
    /// `float64`, and one out of `f64`'s range is an error there (so `None` here). Integers of
    /// 19 digits or more are left to serde (`None`).
    fn number_type(&mut self) -> Option<AttrType> {
        let (integral, s) = self.number()?;
        if integral {
            let digits = s.trim_start_matches('-');
            if digits.len() > 18 {
                return None;
            }
            if s.starts_with('-') && digits == "0" {
                return Some(AttrType::Float64);
            }
            return Some(AttrType::Int64);
        }
        let v: f64 = s.parse().ok()?;
        v.is_finite().then_some(AttrType::Float64)
    }

    /// A flat property value: a string, a number, a boolean or null.
    fn value(&mut self) -> Option<Value> {
        Some(match self.peek()? {
            b'"' => {
                let s = self.string()?.as_bytes();
                Value::Typed(if super::columns::is_date(s) {
                    AttrType::Date
                } else if super::columns::is_datetime(s) {
                    AttrType::Datetime
                } else {
                    AttrType::String
                })
            }
            b'-' | b'0'..=b'9' => Value::Typed(self.number_type()?),
            b't' if self.literal(b"true") => Value::Typed(AttrType::Bool),
            b'f' if self.literal(b"false") => Value::Typed(AttrType::Bool),
            b'n' if self.literal(b"null") => Value::Null,
            _ => return None,
        })
    }

    /// The members of an object, after its `{`: `member` takes each key (its value is
    /// next, after whitespace) and says whether it took the value.
    fn members(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            member(self, key)?;
            self.ws();
            match self.next()? {
                b',' => {}
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// One Feature object, at its `{`.
    fn feature(&mut self, st: &mut State) -> Option<()> {
        self.eat(b'{')?;
        st.acc.features += 1;
        // Bits: type, properties, geometry, id; a member given twice is left to serde.
        let mut seen = 0u8;
        let mut once = |bit: u8| {
            let first = seen & bit == 0;
            seen |= bit;
            first.then_some(())
        };
        self.members(|p, key| match key {
            "type" => {
                once(1)?;
                (p.string()? == "Feature").then_some(())
            }
            "properties" => {
                once(2)?;
                p.properties(st)
            }
            "geometry" => {
                once(4)?;
                p.geometry(st)
            }
            "id" => {
                once(8)?;
                // A string id is a column `id`; a number is the feature id.
                if p.peek()? == b'"' {
                    let Value::Typed(t) = p.value()? else {
                        return None;
                    };
                    st.property("id", Some(t));
                } else {
                    p.number_type()?;
                }
                Some(())
            }
            _ => None,
        })?;
        if seen & 4 == 0 {
            st.acc.null_geometries += 1;
        }
        Some(())
    }

    /// A Feature's `properties`: null or an object of flat values.
    fn properties(&mut self, st: &mut State) -> Option<()> {
        if self.literal(b"null") {
            return Some(());
        }
        self.eat(b'{')?;
        self.members(|p, key| {
            let t = match p.value()? {
                Value::Null => None,
                Value::Typed(t) => Some(t),
            };
            st.property(key, t);
            Some(())
        })
    }

    /// A Feature's `geometry`: null, or an object of `type` and `coordinates` only.
    fn geometry(&mut self, st: &mut State) -> Option<()> {
        if self.literal(b"null") {
            st.acc.null_geometries += 1;
            return Some(());
        }
        self.eat(b'{')?;
        let mut scan = GeomScan::default();
        let mut kind = None;
        let mut coords = None;
        self.members(|p, key| match key {
            "type" if kind.is_none() => {
                kind = Some(p.string()?);
                Some(())
            }
            "coordinates" if coords.is_none() => {
                let mut shape = Shape::default();
                let (node, end) = raw_coords_at(p.text, p.i, &mut scan, &mut shape)?;
                p.i = end;
                coords = Some((node, shape));
                Some(())
            }
            _ => None,
        })?;
        let t = geometry::finish(kind?, coords, false, &mut scan).ok()?;
        scan.commit(&mut st.acc, t);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serde walk of the same batch.
    fn by_serde(text: &str) -> Option<State> {
        super::super::parse_batch_serde(text.as_bytes()).ok()
    }

    fn finish(st: State) -> (Option<String>, super::super::super::profile::Accumulator) {
        st.finish()
    }

    #[test]
    fn the_fast_walk_agrees_with_serde_or_leaves_the_batch_to_it() {
        let features = [
            r#"{"type":"Feature","properties":{"a":1,"b":"x","c":2.5,"d":true,"e":null,"f":"2024-01-31","g":"2024-01-31T10:00:00Z"},"geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}"#,
            r#"{ "type" : "Feature" , "geometry" : null , "properties" : null }"#,
            r#"{"geometry":{"coordinates":[[[0,0],[1,0],[1,1],[0,0]]],"type":"Polygon"},"properties":{"a":-0,"b":-12,"c":1e5,"d":0.0}}"#,
            r#"{"type":"Feature","id":7,"properties":{},"geometry":{"type":"Point","coordinates":[1,2,3]}}"#,
            r#"{"type":"Feature","id":"x-1","properties":{"a":1},"geometry":{"type":"Point","coordinates":[]}}"#,
            r#"{}"#,
            r#"{"type":"Feature","properties":{"a":1,"a":"x"},"geometry":{"type":"MultiPoint","coordinates":[[1,2]]}}"#,
            r#"{"type":"Feature","properties":{"a":12345678901234567890,"b":-9223372036854775808},"geometry":null}"#,
            r#"{"type":"Feature","properties":{"a":1e999},"geometry":null}"#,
            r#"{"type":"Feature","properties":{"a":"é\u00e9"},"geometry":null}"#,
            r#"{"type":"Feature","properties":{"a":"é"},"geometry":null}"#,
            r#"{"type":"Feature","properties":{"a":[1],"b":{"c":1}},"geometry":null}"#,
            r#"{"type":"Feature","bbox":[0,0,1,1],"properties":{},"geometry":null}"#,
            r#"{"type":"Feature","properties":{},"geometry":{"type":"GeometryCollection","geometries":[]}}"#,
            r#"{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[0,0]]}}"#,
            r#"{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[0,0]}}"#,
            r#"{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[0,0],[1,1]]}}"#,
            r#"{"type":"Feature","properties":{},"geometry":{"type":"Curve","coordinates":[[0,0],[1,1]]}}"#,
            r#"{"type":"Feature","properties":{},"geometry":{"coordinates":[[0,0],[1,1]]}}"#,
            r#"{"type":"Feature","properties":{},"geometry":{"type":"Point","type":"Point","coordinates":[1,1]}}"#,
            r#"{"type":"Feature","type":"Feature","geometry":null}"#,
            r#"{"type":"Feature","properties":{"a":01},"geometry":null}"#,
            r#"{"type":"Feature","properties":{"a":1.},"geometry":null}"#,
            r#"{"type":"Feature","properties":{"a":tru},"geometry":null}"#,
            r#"{"type":"Thing","geometry":null}"#,
            r#"{"type":"Feature","properties":{"a":"x"}"geometry":null}"#,
            r#"{"type":"Feature","properties":{"a":"x",},"geometry":null}"#,
            "{\"type\":\"Feature\",\"properties\":{\"a\":\"x\ty\"},\"geometry\":null}",
            "{\"type\"\t:\r\n\"Feature\",\"properties\":{\"a\":1},\"geometry\":{\"type\":\"Point\",\"coordinates\":[ 1.5 , -2e-3 ]}}",
        ];
        let mut accepted = 0;
        // Each alone, and all of them in one batch after a plain one.
        let mut all = vec![features[0].to_string()];
        for f in features {
            all.push(f.to_string());
            let text = format!("[[{f}]]");
            let fast = batch(text.as_bytes());
            let serde = by_serde(&text);
            if let Some(fast) = fast {
                accepted += 1;
                let serde = serde.unwrap_or_else(|| panic!("serde refuses {f}"));
                assert_eq!(finish(fast), finish(serde), "{f}");
            }
        }
        assert!(accepted >= 10, "the fast walk took only {accepted}");
        let plain: Vec<&str> = features[..5].to_vec();
        let text = format!("[[{}]]", plain.join(",\n "));
        let fast = batch(text.as_bytes()).expect("plain features");
        assert_eq!(finish(fast), finish(by_serde(&text).unwrap()));
        assert!(batch(b"[[]]").is_some());
        assert!(batch(format!("[[{}]]", all.join(",")).as_bytes()).is_none());
    }
}
