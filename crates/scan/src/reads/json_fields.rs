//! The scanner that finds the mapped fields of a JSON line ([`scan_line`]): one walk over the
//! line, in any key order and with any whitespace, descending only into the objects on a mapped
//! field's path and skipping every other value without building it, as strictly as a JSON
//! parser would. What it does not take goes to [`Mapping::model`], which decides.

use std::borrow::Cow;

use super::fields::{Mapping, Num, Read, Val};
use super::json_walk::Walk;
use super::key_probe::{KeyProbe, MAX_DEPTH};

impl Mapping {
    /// The read in one JSON line; `Err` is why the line is none.
    pub fn json<'a>(&'a self, line: &'a [u8]) -> Result<Read<'a>, String> {
        let mut found: [Option<Val<'a>>; 4] = [None, None, None, None];
        if scan_line(line, self, &mut found).is_some()
            && (0..4).all(|s| self.paths[s].is_none() || found[s].is_some())
        {
            if let Ok(read) = self.read(found) {
                return Ok(read);
            }
        }
        self.model(line)
    }
}

/// Find the mapped fields of `line` into `found`; `None` when the line is not a JSON object
/// this scanner takes (then the model decides).
pub fn scan_line<'a>(
    line: &'a [u8],
    mapping: &Mapping,
    found: &mut [Option<Val<'a>>; 4],
) -> Option<()> {
    let mut p = Walk::new(line);
    p.ws();
    if p.peek()? != b'{' {
        return None;
    }
    let paths = &mapping.paths;
    let mask = (0..4).fold(0u8, |m, s| m | (u8::from(paths[s].is_some()) << s));
    p.object(mapping, 0, mask, found)?;
    p.ws();
    if p.i != line.len() {
        return None;
    }
    // A byte above ASCII was seen in a string: the line must be UTF-8 as a whole, as the
    // parser would require of every string.
    if p.high != 0 && std::str::from_utf8(line).is_err() {
        return None;
    }
    Some(())
}

// The scanner's own steps on the shared walk: the descent into the mapped objects, and the
// value of a mapped field.
impl<'a> Walk<'a> {
    /// The object at `i` (its `{`), at nesting `level`, looking for the slots in `mask`.
    fn object(
        &mut self,
        mapping: &Mapping,
        level: usize,
        mask: u8,
        found: &mut [Option<Val<'a>>; 4],
    ) -> Option<()> {
        if level > MAX_DEPTH {
            return None;
        }
        self.members(|w, start, end| {
            let key = &w.b[start..end];
            // The slots whose key at this level is this one: by length and first and last
            // eight bytes, in place, and in full only past sixteen bytes.
            let (mut leaf, mut deeper) = (0u8, 0u8);
            let probes = &mapping.probes[level];
            let wanted_length = mapping.lengths[level] & (1 << key.len().min(63)) != 0;
            let (head, tail) = if wanted_length {
                KeyProbe::words(w.b, start, end)
            } else {
                (0, 0)
            };
            let mut m = if wanted_length { mask } else { 0 };
            while m != 0 {
                let s = m.trailing_zeros() as usize;
                m &= m - 1;
                if let Some((p, last)) = &probes[s] {
                    if p.len == key.len()
                        && p.head == head
                        && p.tail == tail
                        && (p.len <= 16
                            || mapping.paths[s]
                                .as_ref()
                                .is_some_and(|path| path[level] == key))
                    {
                        if *last {
                            leaf |= 1 << s;
                        } else {
                            deeper |= 1 << s;
                        }
                    }
                }
            }
            if leaf != 0 {
                let v = w.scalar()?;
                if leaf.count_ones() == 1 {
                    // One slot (the usual case): the value moves in, uncloned.
                    let s = leaf.trailing_zeros() as usize;
                    if found[s].is_some() {
                        return None;
                    }
                    found[s] = Some(v);
                } else {
                    let mut m = leaf;
                    while m != 0 {
                        let s = m.trailing_zeros() as usize;
                        m &= m - 1;
                        if found[s].is_some() {
                            return None;
                        }
                        found[s] = Some(v.clone());
                    }
                }
            } else if deeper != 0 && w.peek()? == b'{' {
                w.object(mapping, level + 1, deeper, found)?;
            } else {
                w.skip(level + 1)?;
            }
            Some(())
        })
    }

    /// A mapped field's value: a string or a number (anything else goes to the model).
    fn scalar(&mut self) -> Option<Val<'a>> {
        match self.peek()? {
            b'"' => {
                let start = self.i + 1;
                self.i = start;
                match self.plain_end() {
                    Some(end) => {
                        self.i = end + 1;
                        Some(Val::Str(Cow::Borrowed(&self.b[start..end])))
                    }
                    None => {
                        self.i = start;
                        let end = self.string_end()?;
                        self.i = end + 1;
                        let text: String = serde_json::from_slice(&self.b[start - 1..=end]).ok()?;
                        Some(Val::Str(Cow::Owned(text.into_bytes())))
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                if let Some(n) = self.plain_int() {
                    return Some(Val::Num(Num::Int(n)));
                }
                let start = self.i;
                self.number_end();
                Num::parse(&self.b[start..self.i]).map(Val::Num)
            }
            _ => None,
        }
    }

    /// The number at `i` when it is a plain integer of at most 18 digits (as `plain_integer`
    /// in [`super::fields`] reads one), read as the walk moves past it; `None`, with `i` where
    /// it was, for any other number, which [`Num::parse`] then reads.
    #[inline]
    fn plain_int(&mut self) -> Option<i64> {
        let b = self.b;
        let neg = b.get(self.i) == Some(&b'-');
        let first = self.i + usize::from(neg);
        let mut i = first;
        let mut n = 0i64;
        while let Some(&c) = b.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            if i - first == 18 {
                return None;
            }
            n = n * 10 + i64::from(d);
            i += 1;
        }
        match i - first {
            0 => return None,
            1 if neg && n == 0 => return None,
            1 => {}
            _ if b[first] == b'0' => return None,
            _ => {}
        }
        if matches!(b.get(i), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.i = i;
        Some(if neg { -n } else { n })
    }

    /// Past the bytes a number can be made of (the grammar is checked on them after).
    fn number_end(&mut self) {
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.b.get(self.i) {
            self.i += 1;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::reads::field_names::{AtUnit, FieldName, Fields};
    use crate::reads::fields::Read;
    use proptest::prelude::*;

    /// A read as compared: the instant with its offset, and the three texts.
    type Plain = (Option<(i64, i32)>, Vec<u8>, Vec<u8>, Vec<u8>);

    /// The read, or why it is none; an `at` that is no instant is the reason (the scan
    /// would report it so, whether the text was unescaped or borrowed).
    fn plain(r: Result<Read<'_>, String>) -> Result<Plain, String> {
        let r = r?;
        let t = r.at.instant()?;
        let at = Some((
            t.timestamp_nanos_opt().unwrap_or(0),
            t.offset().local_minus_utc(),
        ));
        Ok((
            at,
            r.consumer.into_owned(),
            r.dataset.into_owned(),
            r.contract.into_owned(),
        ))
    }

    /// The mapping of a source whose `at` is `ts` (in `unit`), consumer `client.id` (nested),
    /// dataset `["req.ds"]` (a key with a dot) and contract `v`.
    pub(in crate::reads) fn nested(unit: AtUnit) -> Mapping {
        let fields = Fields {
            at: FieldName::plain("ts"),
            at_unit: unit,
            consumer: FieldName(vec!["client".into(), "id".into()]),
            dataset: FieldName(vec!["req.ds".into()]),
            contract: FieldName::plain("v"),
        };
        Mapping::new(&fields, None, None)
    }

    /// A JSON value the scan has no use for, of any kind and nesting; its strings with
    /// escapes or, for `escapes = false`, written plain.
    pub(crate) fn other_value(escapes: bool) -> impl Strategy<Value = String> {
        let text = if escapes {
            "[a-z \\\\\"/é{}\\[\\],:]{0,12}"
                .prop_map(|s| serde_json::to_string(&s).unwrap())
                .boxed()
        } else {
            "[a-z é{}\\[\\],:/]{0,12}"
                .prop_map(|s| format!("\"{s}\""))
                .boxed()
        };
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            Just("0.5".to_string()),
            Just("-0".to_string()),
            (-1_000_000i64..1_000_000).prop_map(|n| n.to_string()),
            (-1e9f64..1e9).prop_map(|f| format!("{f:e}")),
            text,
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(" , "))),
                prop::collection::vec(("[a-z]{1,4}", inner), 0..4).prop_map(|v| {
                    let parts: Vec<String> = v
                        .into_iter()
                        .map(|(k, x)| format!("\"{k}\": {x}"))
                        .collect();
                    format!("{{{}}}", parts.join(","))
                }),
            ]
        })
    }

    /// RFC 3339 text with any fraction and offset (and sometimes a form only the general
    /// parser takes).
    fn instant() -> impl Strategy<Value = String> {
        (
            (
                2000i32..2040,
                1u32..13,
                1u32..32,
                0u32..25,
                0u32..60,
                0u32..61,
            ),
            prop::option::of((1usize..12, 0u64..1_000_000_000_000)),
            prop_oneof![
                Just("Z".to_string()),
                Just("z".to_string()),
                (0u32..24, 0u32..60, any::<bool>()).prop_map(|(h, m, neg)| format!(
                    "{}{h:02}:{m:02}",
                    if neg { '-' } else { '+' }
                )),
            ],
            prop::sample::select(vec!['T', 't', ' ']),
        )
            .prop_map(|((y, mo, d, h, mi, s), frac, off, sep)| {
                let frac = frac.map_or(String::new(), |(n, digits)| {
                    let text = format!("{digits:012}");
                    format!(".{}", &text[..n])
                });
                format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{frac}{off}")
            })
    }

    fn json_string(s: &str, escape: bool) -> String {
        if escape {
            // Every character as a \u escape: the same string to a JSON parser.
            let mut out = String::from("\"");
            for c in s.encode_utf16() {
                out.push_str(&format!("\\u{c:04x}"));
            }
            out.push('"');
            out
        } else {
            serde_json::to_string(s).unwrap()
        }
    }

    proptest! {
        /// Lines in any key order, with any whitespace, extra values of every kind, escaped
        /// values, and instants with any fraction and offset: the scanner takes every line the
        /// model takes and gives the model's read, and refuses no valid one.
        #[test]
        fn the_scanner_gives_the_model_answer(
            at in instant(),
            consumer in "[a-z0-9:/*-]{0,10}",
            dataset in prop::sample::select(vec!["roads", "rivers", "r\"oads"]),
            contract in prop::sample::select(vec!["1.0.0", "2.10.3", "x"]),
            escaped in prop::collection::vec(any::<bool>(), 4),
            extra in prop::collection::vec(("[a-z]{1,6}", other_value(true)), 0..5),
            order in Just((0..9).collect::<Vec<usize>>()).prop_shuffle(),
            space in prop::sample::select(vec!["", " ", "\t", "  \r"]),
            nested_shape in any::<bool>(),
        ) {
            let (m, key) = if nested_shape {
                (nested(AtUnit::Rfc3339), ["ts", "client", "req.ds", "v"])
            } else {
                (Mapping::default(), ["at", "consumer", "dataset", "contract"])
            };
            let consumer_value = if nested_shape {
                format!("{{\"ip\":\"::1\",{space}\"id\":{}}}", json_string(&consumer, escaped[1]))
            } else {
                json_string(&consumer, escaped[1])
            };
            let mut members = vec![
                format!("\"{}\":{space}{}", key[0], json_string(&at, escaped[0])),
                format!("\"{}\":{space}{consumer_value}", key[1]),
                format!("\"{}\":{space}{}", key[2], json_string(dataset, escaped[2])),
                format!("\"{}\":{space}{}", key[3], json_string(contract, escaped[3])),
            ];
            for (k, v) in &extra {
                // Extra keys never collide with the mapped ones.
                members.push(format!("\"x{k}\":{space}{v}"));
            }
            let mut ordered = Vec::new();
            for i in &order {
                if let Some(m) = members.get(*i) {
                    ordered.push(m.clone());
                }
            }
            let line = format!("{space}{{{space}{}{space}}}{space}", ordered.join(&format!("{space},{space}")));
            let got = plain(m.json(line.as_bytes()));
            let want = plain(m.model(line.as_bytes()));
            prop_assert_eq!(&got, &want, "{}", line);
            // The scanner takes every such line itself, without the model.
            let mut found: [Option<Val<'_>>; 4] = [None, None, None, None];
            prop_assert!(scan_line(line.as_bytes(), &m, &mut found).is_some(), "{}", line);
        }

        /// What the scanner's shortcuts meet: a mapped key written with an escape, the
        /// mapped key names again inside other values (objects and arrays, at any depth),
        /// numbers with fractions and exponents in every place (the `at` in milliseconds
        /// included), and a different run of whitespace around every token. The scanner
        /// gives the model's answer, and takes every line without an escaped key itself.
        #[test]
        fn keys_numbers_and_whitespace_anywhere_read_as_the_model_reads_them(
            at in prop_oneof![
                (1_700_000_000_000i64..1_800_000_000_000).prop_map(|n| n.to_string()),
                (1.7e12f64..1.8e12).prop_map(|f| format!("{f:e}")),
                (1.7e12f64..1.8e12).prop_map(|f| format!("{f:E}").replace('E', "E+")),
                (17_000i64..18_000).prop_map(|n| format!("{n}.5e8")),
                Just("1764298800125.0".to_string()),
            ],
            consumer in prop_oneof![
                "[a-z0-9-]{1,10}".prop_map(|c| serde_json::to_string(&c).unwrap()),
                (0i64..100_000).prop_map(|n| n.to_string()),
            ],
            escaped_key in prop::option::of(0usize..4),
            decoys in prop::collection::vec(
                (
                    prop::sample::select(vec!["at", "consumer", "dataset", "contract"]),
                    prop_oneof![
                        Just("\"roads\"".to_string()),
                        Just("1e5".to_string()),
                        Just("-0.25E-3".to_string()),
                        Just("[\"at\", {\"dataset\": \"rivers\"}]".to_string()),
                    ],
                    0usize..3,
                ),
                0..4,
            ),
            numbers in prop::collection::vec(
                prop::sample::select(vec!["0", "-0", "1e5", "1E-5", "-12.5e+3", "0.0", "7"]),
                0..3,
            ),
            order in Just((0..11).collect::<Vec<usize>>()).prop_shuffle(),
            spaces in prop::collection::vec(prop::sample::select(vec!["", " ", "\t", " \r ", "\n"]), 64),
        ) {
            let fields = Fields {
                at_unit: AtUnit::Millis,
                ..Fields::default()
            };
            let m = Mapping::new(&fields, None, None);
            let mut ws = spaces.iter().cycle();
            let mut w = || *ws.next().unwrap();
            let key = |slot: usize, name: &str| {
                if escaped_key == Some(slot) {
                    // The key's first letter as a \u escape: the same key to a parser.
                    let mut chars = name.chars();
                    let first = chars.next().unwrap();
                    format!("\"\\u{:04x}{}\"", first as u32, chars.as_str())
                } else {
                    format!("\"{name}\"")
                }
            };
            let mut members = vec![
                (key(0, "at"), at.clone()),
                (key(1, "consumer"), consumer.clone()),
                (key(2, "dataset"), "\"roads\"".to_string()),
                (key(3, "contract"), "\"1.1.0\"".to_string()),
            ];
            for (i, (name, value, depth)) in decoys.iter().enumerate() {
                // A mapped name, one to three objects down, under a key of its own.
                let mut v = format!("{{\"{name}\":{}{value}}}", w());
                for _ in 0..*depth {
                    v = format!("{{{}\"{name}\"{}:{}{v}{}}}", w(), w(), w(), w());
                }
                members.push((format!("\"d{i}\""), v));
            }
            for (i, n) in numbers.iter().enumerate() {
                members.push((format!("\"n{i}\""), n.to_string()));
            }
            let mut parts = Vec::new();
            for i in &order {
                if let Some((k, v)) = members.get(*i) {
                    parts.push(format!("{}{k}{}:{}{v}{}", w(), w(), w(), w()));
                }
            }
            let line = format!("{}{{{}}}{}", w(), parts.join(","), w());
            let got = plain(m.json(line.as_bytes()));
            let want = plain(m.model(line.as_bytes()));
            prop_assert_eq!(&got, &want, "{}", line);
            prop_assert!(want.is_ok(), "{}: {:?}", line, want);
            if escaped_key.is_none() {
                let mut found: [Option<Val<'_>>; 4] = [None, None, None, None];
                prop_assert!(scan_line(line.as_bytes(), &m, &mut found).is_some(), "{}", line);
            }
        }

        /// Arbitrary bytes around JSON punctuation: whatever the scanner accepts, the model
        /// accepts with the same read.
        #[test]
        fn the_scanner_accepts_nothing_the_model_refuses(
            parts in prop::collection::vec(prop::sample::select(vec![
                "{", "}", "[", "]", ",", ":", " ", "\"", "\\", "\\u00e9", "\\ud800", "\"at\"",
                "\"consumer\"", "\"dataset\"", "\"contract\"", "\"2026-11-28T03:00:00Z\"",
                "\"roads\"", "\"1.0.0\"", "1", "-0", "01", "1e", "1.5", "true", "nul", "\u{7}",
                "\u{e9}",
            ]), 0..30),
        ) {
            let line = parts.concat();
            let m = Mapping::default();
            let mut found: [Option<Val<'_>>; 4] = [None, None, None, None];
            if scan_line(line.as_bytes(), &m, &mut found).is_some() {
                prop_assert!(serde_json::from_str::<serde_json::Value>(&line).is_ok(), "{}", line);
            }
            prop_assert_eq!(plain(m.json(line.as_bytes())), plain(m.model(line.as_bytes())));
        }
    }

    #[test]
    fn numbers_are_read_alike_by_the_scanner_and_the_model() {
        let fields = Fields {
            at_unit: AtUnit::Millis,
            ..Fields::default()
        };
        let m = Mapping::new(&fields, None, None);
        for (at, consumer) in [
            ("1764298800125", "12"),
            ("1764298800125.5", "-0"),
            ("1.764298800125e12", "0"),
            ("-5", "99999999999999999999"),
            ("99999999999999999999", "7"),
        ] {
            let line = format!(
                "{{\"at\": {at}, \"consumer\": {consumer}, \"dataset\": \"roads\", \"contract\": \"1.0.0\"}}"
            );
            assert_eq!(
                plain(m.json(line.as_bytes())),
                plain(m.model(line.as_bytes())),
                "{line}"
            );
        }
        let line =
            br#"{"at": 1764298800125, "consumer": 42, "dataset": "roads", "contract": "1.0.0"}"#;
        let r = plain(m.json(line)).unwrap();
        assert_eq!(r.0, Some((1_764_298_800_125_000_000, 0)));
        assert_eq!(r.1, b"42");
    }
}
