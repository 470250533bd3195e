//! GeoJSON, streamed: the document is walked with serde visitors, one feature at a time and,
//! inside a geometry, one position at a time, so memory holds neither the file nor a whole
//! geometry (geozero's and serde_json's whole-document readers would hold it all; a 200 MB
//! geometry as a `serde_json::Value` takes gigabytes). What is kept is one feature's
//! properties, the nesting depth of the coordinates and a few counts.
//!
//! What a file may hold, as GDAL reads it: a FeatureCollection, a single Feature or a bare
//! geometry as the whole document (one feature), after an optional UTF-8 byte-order mark; or a
//! sequence of such texts — newline-delimited GeoJSON (`.geojsonl`, `.ndjson`) or an RFC 8142
//! sequence (`.geojsons`, each text after an ASCII record separator) — whose features add up.
//! A member given twice in one object (`features`, `type`, `geometry`, `properties`,
//! `coordinates`, ...) is an error, not a doubled count.
//!
//! CRS: RFC 7946 fixes GeoJSON to WGS 84 longitude/latitude. We report `EPSG:4326`, the
//! identifier the other formats use for the same data, so one dataset gives one profile in
//! every format (`validate` treats `EPSG:4326` and `OGC:CRS84` as the same system anyway). A
//! legacy (2008) `crs` member naming a code is honoured, as GDAL does.
//!
//! Attribute types are inferred from the values, as GDAL does: booleans are `bool`, integral
//! numbers `int64` (JSON numbers have no width, and every typed format here stores the same
//! columns as 64-bit), other numbers `float64`, ISO dates and date-times `date`/`datetime`,
//! other strings, arrays and objects `string`. Mixed columns take the common type of
//! [`AttrType::join`], or `string` if there is none. A property absent from a feature is
//! null in it; a property that is null in every feature is a column of type `string`, all
//! null (as GDAL makes it). A Feature's string `id` is a column `id`, as GDAL makes it (an
//! integer `id` is the feature id, not an attribute).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::de::{DeserializeSeed, SeqAccess};

use rayon::prelude::*;

use super::{corrupt, io_err, Accumulator, Format, Progress, ReleaseError};
use columns::State;
use document::{Document, Features};

/// One serde seed and its visitor, written once: `$seed` is handed to the deserializer's
/// `$entry` method, says it expects `$what`, and the visitor methods given are its own. Every
/// object and array of the document is walked by one of these, so the two impls each needs
/// would otherwise be most of this module's text.
macro_rules! seed {
    ($seed:ty => $value:ty, $entry:ident, $what:literal; $($methods:tt)*) => {
        impl<'de> serde::de::DeserializeSeed<'de> for $seed {
            type Value = $value;
            fn deserialize<D: serde::de::Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<Self::Value, D::Error> {
                d.$entry(self)
            }
        }

        impl<'de> serde::de::Visitor<'de> for $seed {
            type Value = $value;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str($what)
            }
            $($methods)*
        }
    };
}

mod columns;
mod coords;
mod document;
mod fast;
mod geometry;
mod number;
mod pieces;
mod split;

const F: Format = Format::GeoJson;

/// A parser message, with any long run cut (serde quotes offending strings whole).
fn clip(msg: &str) -> String {
    const MAX: usize = 160;
    let (body, tail) = match msg.rfind(" at line ") {
        Some(i) => msg.split_at(i),
        None => (msg, ""),
    };
    if body.len() <= MAX {
        return msg.to_string();
    }
    let mut cut = MAX;
    while !body.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes){tail}", &body[..cut], body.len())
}

/// Counts bytes as they are read, for the progress bar.
struct Counting<'a, R> {
    inner: R,
    progress: &'a dyn Progress,
    pending: u64,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pending += n as u64;
        if self.pending >= 1 << 20 || n == 0 {
            self.progress.advance(self.pending);
            self.pending = 0;
        }
        Ok(n)
    }
}

/// Skip whitespace and RFC 8142 record separators; `false` at the end of the input.
fn skip_separators<R: BufRead>(r: &mut R) -> std::io::Result<bool> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        let n = buf
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x1E))
            .unwrap_or(buf.len());
        let more = n < buf.len();
        r.consume(n);
        if more {
            return Ok(true);
        }
    }
}

/// A buffered reader that knows how many bytes were consumed, to name the offset of content
/// after a file's one text.
struct Tracked<R> {
    inner: R,
    consumed: u64,
}

impl<R: BufRead> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Tracked<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.consumed += n as u64;
        self.inner.consume(n);
    }
}

/// Whether a path names a GeoJSON sequence (many texts) rather than one GeoJSON text.
pub fn is_sequence(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        matches!(
            e.to_ascii_lowercase().as_str(),
            "geojsonl" | "geojsons" | "ndjson"
        )
    })
}

/// Read every GeoJSON text of `r` into `st`; returns how many there were. Unless `sequence`,
/// the input holds one text, and anything after it is an error naming its byte offset: a
/// second collection concatenated by mistake must not count as more features.
fn read_texts<R: BufRead>(r: R, st: &mut State, sequence: bool) -> Result<u64, String> {
    let mut r = Tracked {
        inner: r,
        consumed: 0,
    };
    // A UTF-8 byte-order mark is allowed before the first text (RFC 8259 §8.1 lets a parser
    // ignore it; GDAL does).
    let head = r.fill_buf().map_err(|e| e.to_string())?;
    if head.starts_with(b"\xEF\xBB\xBF") {
        r.consume(3);
    }
    let mut texts = 0u64;
    while skip_separators(&mut r).map_err(|e| e.to_string())? {
        if texts == 1 && !sequence {
            return Err(format!(
                "content after the GeoJSON text, at byte offset {}: a .geojson or .json file \
                 holds one text (a sequence of texts is named .geojsonl, .geojsons or .ndjson)",
                r.consumed
            ));
        }
        texts += 1;
        // A fresh parser per text, on the same buffered reader: an object ends at its `}`,
        // so no byte of the next text is consumed.
        let mut de = serde_json::Deserializer::from_reader(&mut r);
        Document(st).deserialize(&mut de).map_err(|e| {
            let m = clip(&e.to_string());
            if texts > 1 {
                format!("text {texts} of the sequence: {m}")
            } else {
                m
            }
        })?;
    }
    if texts == 0 {
        return Err("the file holds no GeoJSON text".to_string());
    }
    Ok(texts)
}

/// Profile a GeoJSON file: with the parallel reader unless `sequential_only`, and with the
/// sequential one wherever the parallel one gives up.
pub fn read(
    path: &Path,
    sequential_only: bool,
    progress: &dyn Progress,
    notes: &mut super::ReadNotes,
) -> Result<(Option<String>, Accumulator), ReleaseError> {
    let sequence = is_sequence(path);
    let mut noted = |st: &State| {
        if st.foreign_features > 0 {
            let warned = super::ReadWarning::of(path, super::Warned::ForeignFeatures);
            notes.warnings.push(warned);
        }
    };
    let open = || File::open(path).map_err(io_err(path));
    let file = open()?;
    let len = file.metadata().map_err(io_err(path))?.len();
    progress.start(path, len);
    if !sequential_only {
        match read_parallel(file, split::WINDOW, split::BATCH, sequence, &mut |n| {
            progress.advance(n)
        }) {
            Ok(part) => {
                let mut st = State::whole();
                st.absorb(part);
                noted(&st);
                return Ok(st.finish());
            }
            // Whatever the pre-scan could not split (an error, a huge single geometry), the
            // sequential reader reads from the start: it streams any feature in bounded
            // memory and names the place of an error.
            Err(_) => progress.start(path, len),
        }
    }
    let st = read_sequential(open()?, progress, sequence).map_err(|e| corrupt(path, F, e))?;
    noted(&st);
    Ok(st.finish())
}

/// The sequential reader: one pass with one streaming parser.
fn read_sequential(file: File, progress: &dyn Progress, sequence: bool) -> Result<State, String> {
    let reader = BufReader::with_capacity(
        1 << 20,
        Counting {
            inner: file,
            progress,
            pending: 0,
        },
    );
    let mut st = State::whole();
    read_texts(reader, &mut st, sequence)?;
    Ok(st)
}

/// The features of one [`split::Batch`], wrapped as `[[f1,f2,…]]`.
struct Run<'a>(&'a mut State);

seed! {
    Run<'_> => (), deserialize_seq, "a run of Features";
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Features(&mut *self.0))?.is_some() {}
        Ok(())
    }
}

/// Profile one batch on its own; `Err` when any of it does not parse (the sequential reader
/// then says where and why).
fn parse_batch(batch: &split::Batch) -> Result<State, serde_json::Error> {
    match batch {
        // Plain features by hand; whatever the hand walk leaves, serde's.
        split::Batch::Features(buf) => fast::batch(buf).map_or_else(|| parse_batch_serde(buf), Ok),
        split::Batch::Texts(..) => parse_texts(batch),
    }
}

/// A batch of features `[[f1,f2,…]]` through serde.
fn parse_batch_serde(buf: &[u8]) -> Result<State, serde_json::Error> {
    let mut st = State::part();
    st.raw = true;
    let mut de = serde_json::Deserializer::from_slice(buf);
    Run(&mut st).deserialize(&mut de)?;
    de.end()?;
    Ok(st)
}

/// A batch of whole texts through serde.
fn parse_texts(batch: &split::Batch) -> Result<State, serde_json::Error> {
    let mut st = State::part();
    st.raw = true;
    match batch {
        split::Batch::Features(buf) => return parse_batch_serde(buf),
        split::Batch::Texts(buf, spans) => {
            for &(s, e) in spans {
                let mut de = serde_json::Deserializer::from_slice(&buf[s..e]);
                Document(&mut st).deserialize(&mut de)?;
                de.end()?;
            }
        }
    }
    Ok(st)
}

/// The parallel reader: the pre-scan cuts the file into batches (see [`split`]), a batch of
/// them is parsed on all cores while the next is read and cut, and the parts are absorbed in
/// file order, so the result is that of the sequential reader whatever the thread count.
fn read_parallel<R: Read + Send>(
    file: R,
    window: usize,
    batch: usize,
    sequence: bool,
    advance: &mut dyn FnMut(u64),
) -> Result<State, split::GiveUp> {
    let mut sp = split::Splitter::new(file, window, batch, sequence);
    // Several small batches per thread and round: the round ends when its slowest batch
    // does, so a few large ones left a core idle for most of a batch at every round.
    let count = rayon::current_num_threads().max(1) * 16;
    let mut total = State::part();
    let mut batches = sp.next(count)?;
    let mut reported = 0;
    while !batches.is_empty() {
        let (parts, next) = rayon::join(
            || batches.par_iter().map(parse_batch).collect::<Vec<_>>(),
            || sp.next(count),
        );
        for p in parts {
            total.absorb(p.map_err(|_| split::GiveUp::Unsplittable)?);
        }
        advance(sp.read - reported);
        reported = sp.read;
        batches = next?;
    }
    // A Feature with a `features` member had that member cut out and counted like a
    // collection's; only the sequential reader, which knows the type first, reads it right.
    if total.foreign_features > 0 {
        return Err(split::GiveUp::Unsplittable);
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::columns::{is_date, is_datetime};
    use super::document::legacy_crs;
    use super::*;
    use crate::model::spatial::GeometryType;
    use crate::release::Profile;

    fn profile(text: &[u8]) -> Result<State, String> {
        let mut st = State::part();
        read_texts(text, &mut st, true)?;
        Ok(st)
    }

    #[test]
    fn legacy_crs_names() {
        let v = |s: &str| serde_json::json!({"type": "name", "properties": {"name": s}});
        assert_eq!(
            legacy_crs(&v("urn:ogc:def:crs:EPSG::2263")).as_deref(),
            Some("EPSG:2263")
        );
        assert_eq!(
            legacy_crs(&v("urn:ogc:def:crs:OGC:1.3:CRS84")).as_deref(),
            Some("EPSG:4326")
        );
        assert_eq!(legacy_crs(&v("EPSG:27700")).as_deref(), Some("EPSG:27700"));
        assert_eq!(
            legacy_crs(&v("urn:ogc:def:crs:EPSG:6.6:4326")).as_deref(),
            Some("EPSG:4326")
        );
    }

    #[test]
    fn dates_are_recognised_by_shape() {
        assert!(is_date(b"2024-01-31"));
        assert!(is_datetime(b"2024-01-31T10:00:00Z"));
        assert!(is_datetime(b"2024-01-31 10:00:00.123+02:00"));
        assert!(!is_date(b"2024-1-31"));
        assert!(!is_datetime(b"2024-01-31"));
    }

    #[test]
    fn coordinates_are_checked_against_the_type_whatever_the_member_order() {
        let one = |g: &str| {
            let st = profile(
                format!(r#"{{"type":"Feature","properties":{{}},"geometry":{g}}}"#).as_bytes(),
            )?;
            Ok::<_, String>((
                GeometryType::from_bits(st.acc.types).collect::<Vec<_>>(),
                st.acc.invalid_geometries,
            ))
        };
        // Coordinates before the type.
        assert_eq!(
            one(r#"{"coordinates":[[0,0],[1,0],[1,1],[0,0]],"type":"LineString"}"#).unwrap(),
            (vec![GeometryType::LineString], 0)
        );
        // An open ring is invalid; a one-point line is invalid.
        assert_eq!(
            one(r#"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}"#)
                .unwrap()
                .1,
            1
        );
        assert_eq!(
            one(r#"{"type":"MultiLineString","coordinates":[[[0,0]]]}"#)
                .unwrap()
                .1,
            1
        );
        // An empty ring is invalid; an empty polygon is not.
        assert_eq!(
            one(r#"{"type":"Polygon","coordinates":[[]]}"#).unwrap().1,
            1
        );
        assert_eq!(one(r#"{"type":"Polygon","coordinates":[]}"#).unwrap().1, 0);
        assert_eq!(one(r#"{"type":"Point","coordinates":[]}"#).unwrap().1, 0);
        // Wrong nesting for the type is an error.
        assert!(one(r#"{"type":"Polygon","coordinates":[[0,0],[1,1]]}"#).is_err());
        assert!(one(r#"{"type":"Point","coordinates":[[0,0]]}"#).is_err());
        assert!(one(r#"{"type":"LineString","coordinates":[[0,0],[[1,1]]]}"#).is_err());
        assert!(one(r#"{"type":"LineString","coordinates":[[0]]}"#).is_err());
        // A single member is stored as a Multi*, and reported so.
        assert_eq!(
            one(r#"{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]]]}"#).unwrap(),
            (vec![GeometryType::MultiPolygon], 0)
        );
    }

    #[test]
    fn foreign_members_of_a_collection_count_nothing() {
        let st = profile(
            br#"{"properties":{"a":1},"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{"b":2}}]}"#,
        )
        .unwrap();
        assert_eq!(st.acc.features, 1);
        assert_eq!(st.columns.len(), 1);
        assert_eq!(st.columns[0].name, "b");
    }

    #[test]
    fn a_member_given_twice_is_an_error() {
        let e = profile(br#"{"type":"FeatureCollection","features":[],"features":[]}"#)
            .err()
            .unwrap();
        assert!(e.contains("`features` is given twice"), "{e}");
        assert!(profile(br#"{"type":"Feature","geometry":null,"geometry":null}"#).is_err());
        assert!(profile(
            br#"{"type":"Feature","geometry":{"type":"Point","type":"Point","coordinates":[1,2]}}"#
        )
        .is_err());
    }

    #[test]
    fn long_values_are_quoted_as_a_short_excerpt() {
        let long = "x".repeat(1 << 20);
        let doc = format!(r#"{{"type":"{long}","features":[]}}"#);
        let e = profile(doc.as_bytes()).err().unwrap();
        assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..200]);
        let doc = format!(r#"{{"type":"FeatureCollection","features":["{long}"]}}"#);
        let e = profile(doc.as_bytes()).err().unwrap();
        assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..200]);
    }

    #[test]
    fn a_second_text_in_a_single_text_file_is_an_error_at_its_offset() {
        let one = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{}}]}"#;
        let two = format!("{one}\n{one}\n");
        let mut st = State::whole();
        let e = read_texts(two.as_bytes(), &mut st, false).unwrap_err();
        assert!(
            e.contains(&format!(
                "content after the GeoJSON text, at byte offset {}",
                one.len() + 1
            )),
            "{e}"
        );
        // The parallel reader gives up on it (and the sequential one then names the place).
        assert!(read_parallel(two.as_bytes(), 64, 16, false, &mut |_| {}).is_err());
        // As a sequence, the two texts are two features.
        assert_eq!(sequential(two.as_bytes()).unwrap().feature_count, 2);
    }

    #[test]
    fn a_feature_with_a_features_member_is_one_feature() {
        let doc = r#"{"type":"Feature","features":[{"type":"Feature","geometry":null,"properties":{}},{"type":"Feature","geometry":null,"properties":{}}],"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"a":1}}"#;
        let mut st = State::whole();
        read_texts(doc.as_bytes(), &mut st, false).unwrap();
        assert_eq!(st.acc.features, 1);
        assert!(st.foreign_features > 0);
        // The members in the other order: `features` before `type`.
        let doc = r#"{"features":[{"type":"Feature","geometry":null,"properties":{}}],"type":"Feature","geometry":null,"properties":{}}"#;
        let mut st = State::whole();
        read_texts(doc.as_bytes(), &mut st, false).unwrap();
        assert_eq!(st.acc.features, 1);
        // The parallel reader leaves such a file to the sequential one.
        assert!(read_parallel(doc.as_bytes(), 1 << 20, 1 << 20, false, &mut |_| {}).is_err());
    }

    /// The profile of `text` by the sequential reader.
    fn sequential(text: &[u8]) -> Result<Profile, String> {
        let mut st = State::whole();
        read_texts(text, &mut st, true)?;
        let (crs, acc) = st.finish();
        Ok(acc.into_profile(vec![], "GeoJSON", crs))
    }

    /// The profile of `text` by the parallel reader, reading `window` bytes at a time.
    fn parallel(text: &[u8], window: usize, batch: usize) -> Result<Profile, split::GiveUp> {
        let part = read_parallel(text, window, batch, true, &mut |_| {})?;
        let mut st = State::whole();
        st.absorb(part);
        let (crs, acc) = st.finish();
        Ok(acc.into_profile(vec![], "GeoJSON", crs))
    }

    /// Every window and batch size from one byte up gives the sequential profile, and the
    /// parallel reader did split the text (it did not fall back).
    fn same_for_every_cut(text: &str) {
        let want = sequential(text.as_bytes()).unwrap();
        let mut windows: Vec<usize> = (1..=text.len().min(40)).collect();
        windows.extend([64, 1000, 1 << 20]);
        for w in windows {
            for b in [1, 7, 100, 1 << 20] {
                let got = parallel(text.as_bytes(), w, b)
                    .unwrap_or_else(|e| panic!("window {w}, batch {b}: {e:?} for {text}"));
                assert_eq!(got, want, "window {w}, batch {b}: {text}");
            }
        }
    }

    #[test]
    fn the_parallel_reader_cuts_anywhere_and_agrees_with_the_sequential_one() {
        let awkward = [
            // Strings holding braces, brackets, quotes, backslashes and the word features.
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":"}]{[","b":"\"}","c":"\\","d":"x\\\"}"},"geometry":null},{"type":"Feature","properties":{"features":[{"x":"]"}],"e":{"f":{"g":"{"}}},"geometry":{"type":"Point","coordinates":[1.5,-2]}}]}"#,
            // Members before and after the features array, a string value `features`, a
            // legacy crs after the features, whitespace everywhere.
            " \n{ \"name\" : \"features\" , \"bbox\":[0,0,1,1],\"x\":{\"features\":[1]},\n \"type\" : \"FeatureCollection\" ,\r\n\t\"features\" :\n [ \n{\"type\":\"Feature\",\"id\":\"a}\",\"properties\":{\"n\":1},\"geometry\":{\"type\":\"LineString\",\"coordinates\":[[0,0],[1,1]]}} ,\n {\"type\":\"Feature\",\"properties\":{\"n\":2.5,\"d\":\"2024-01-31\"},\"geometry\":null}\n ] , \"crs\":{\"type\":\"name\",\"properties\":{\"name\":\"urn:ogc:def:crs:EPSG::2263\"}} } \n",
            // An empty collection; a feature without properties.
            r#"{"type":"FeatureCollection","features":[ ]}"#,
            r#"{"features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}}],"type":"FeatureCollection"}"#,
            // A sequence: lines of features and of collections, record separators, a BOM.
            "\u{feff}{\"type\":\"Feature\",\"properties\":{\"a\":1},\"geometry\":null}\n{\"type\":\"FeatureCollection\",\"features\":[{\"type\":\"Feature\",\"properties\":{\"a\":\"x\"},\"geometry\":{\"type\":\"Point\",\"coordinates\":[3,4,5]}}]}\n\u{1e}{\"type\":\"Point\",\"coordinates\":[9,9]}\u{1e}{\"type\":\"Feature\",\"geometry\":null,\"properties\":{\"b\":true}}",
            // Collections of different CRS in one sequence: the last one named wins.
            r#"{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"EPSG:27700"}},"features":[]}{"type":"FeatureCollection","features":[{"type":"Feature","properties":null,"geometry":null}]}"#,
        ];
        for text in awkward {
            same_for_every_cut(text);
        }
    }

    #[test]
    fn the_parallel_reader_gives_up_where_the_sequential_one_refuses() {
        let bad = [
            r#"{"type":"FeatureCollection","features":[{"type":"Feature"},]}"#,
            r#"{"type":"FeatureCollection","features":[{"type":"Feature"} {"type":"Feature"}]}"#,
            r#"{"type":"FeatureCollection","features":[{"type":"Feature"}"#,
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":[}}]}"#,
            r#"{"type":"FeatureCollection","features":[],"features":[]}"#,
            r#"{"type":"FeatureCollection","features":[1]}"#,
            r#"{"type":"Point","features":[],"coordinates":[1,2]}"#,
            "{\"type\":\"Feature\",\"geometry\":null}\n,",
            "",
            " \n ",
        ];
        for text in bad {
            assert!(sequential(text.as_bytes()).is_err(), "{text}");
            for w in [1, 3, 16, 1 << 20] {
                assert!(parallel(text.as_bytes(), w, 1).is_err(), "{w}: {text}");
            }
        }
    }

    #[test]
    fn a_feature_nested_to_the_parser_limit_is_refused_by_both_readers() {
        // serde_json refuses nesting deeper than 128; inside `{"features":[` a feature has
        // 125 levels left, and the parallel reader's `[[` wrapper leaves it the same.
        let nested = |n: usize| {
            format!(
                r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","geometry":null,"properties":{{"a":{}1{}}}}}]}}"#,
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        // The feature's `{` and its properties' `{` use two levels: 123 arrays fit, 124 not.
        assert!(sequential(nested(123).as_bytes()).is_ok());
        assert!(parallel(nested(123).as_bytes(), 1 << 20, 1 << 20).is_ok());
        assert!(sequential(nested(124).as_bytes()).is_err());
        assert!(parallel(nested(124).as_bytes(), 1 << 20, 1 << 20).is_err());
    }

    #[test]
    fn the_coordinate_scan_agrees_with_the_streamed_visitor() {
        // Each coordinates text in a LineString feature: the two readers give the same
        // profile, or both refuse it.
        let texts = [
            "[[0,0],[1,1]]",
            "[[-0,-0.0],[1e2,1E+2],[0.1e-400,-1e-400]]",
            "[[12345678901234567890,-9223372036854775809],[3.187038114086544,40.259535527914217]]",
            "[[0.30000000000000004,1.7976931348623157e308],[5e-324,2.2250738585072014e-308]]",
            "[ [ 1 , 2 , 3 ] , [ 4 , 5 ] ]",
            "[[1,2,3,4],[5,6]]",
            "[[1e999,0],[1,1]]",
            "[[01,0],[1,1]]",
            "[[1.,0],[1,1]]",
            "[[.5,0],[1,1]]",
            "[[+1,0],[1,1]]",
            "[[1,2],]",
            "[[1,2] [3,4]]",
            "[[1],[2,3]]",
            "[[1,2],[[3,4]]]",
            "[[\"1\",2],[3,4]]",
            "[[1,2],[3,null]]",
            "[[1e5,2e-5],[3,4]]",
            "[]",
            "[[]]",
            "5",
            "[[1,2],[3,4]] x",
        ];
        let mut refused = 0;
        for c in texts {
            let doc = format!(
                r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","properties":{{}},"geometry":{{"type":"LineString","coordinates":{c}}}}}]}}"#
            );
            match (
                sequential(doc.as_bytes()),
                parallel(doc.as_bytes(), 1 << 20, 1 << 20),
            ) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{c}"),
                (Err(_), Err(_)) => refused += 1,
                (a, b) => panic!("{c}: sequential {a:?}, parallel {b:?}"),
            }
        }
        // Refused: the five bad numbers, the trailing and the missing comma, the one-number
        // position, positions beside an array, the string, the null, `[[]]` (nested too
        // deep for a LineString) and the trailing text.
        assert_eq!(refused, 13);
        // Deep nesting: refused past MAX_DEPTH by both.
        for n in [30, 31, 32, 33, 40, 130] {
            let c = format!("{}0,0{}", "[".repeat(n), "]".repeat(n));
            let doc = format!(
                r#"{{"type":"Feature","properties":{{}},"geometry":{{"type":"MultiPolygon","coordinates":{c}}}}}"#
            );
            let (a, b) = (
                sequential(doc.as_bytes()),
                parallel(doc.as_bytes(), 1 << 20, 1 << 20),
            );
            assert_eq!(a.is_ok(), b.is_ok(), "{n}");
        }
    }

    #[test]
    fn real_files_give_the_same_profile_in_parallel_at_any_thread_count() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let files = [
            "naturalearth/cities.geojson",
            "naturalearth/countries.geojson",
            "made/typed_nulls.geojson",
            "edge/null_geom.geojson",
            "edge/line_zm.geojson",
            "geojson/cities.geojsonl",
            "geojson/cities.geojsons",
            "geojson/bom.geojson",
            "geojson/feature.geojson",
            "geojson/geometry.geojson",
            "geojson/all_null.geojson",
            "corpus/flatgeobuf/countries.geojson",
            "corpus/flatgeobuf/properties.geojson",
        ];
        for f in files {
            let text = std::fs::read(dir.join(f)).unwrap();
            let want = sequential(&text).unwrap();
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                for (w, b) in [
                    (4096, 1000),
                    (1 << 16, 1 << 14),
                    (split::WINDOW, split::BATCH),
                ] {
                    let got = pool
                        .install(|| parallel(&text, w, b))
                        .unwrap_or_else(|e| panic!("{f}: {e:?}"));
                    assert_eq!(got, want, "{f}, {threads} threads, window {w}");
                }
            }
        }
    }

    #[test]
    fn mutated_files_give_the_same_answer_in_parallel() {
        // Where the parallel reader succeeds on a damaged file, the sequential one must give
        // the same profile; where the sequential one refuses, the parallel one must not
        // succeed (`read` then falls back on the sequential reader and its message).
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let seeds: Vec<Vec<u8>> = [
            "naturalearth/cities.geojson",
            "made/typed_nulls.geojson",
            "geojson/cities.geojsonl",
            "geojson/cities.geojsons",
        ]
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();
        let mut x = 0x5EED_u64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n.max(1) as u64) as usize
        };
        let pieces: [&[u8]; 10] = [
            b"{",
            b"}",
            b"[",
            b"]",
            b"\"",
            b"\\",
            b",",
            b"\"features\":[",
            b" ",
            b"\x1e",
        ];
        let (mut agreed, mut refused) = (0, 0);
        for case in 0..1500 {
            let mut m = seeds[next(seeds.len())].clone();
            for _ in 0..1 + next(3) {
                let at = next(m.len());
                match next(3) {
                    0 => {
                        m.remove(at);
                    }
                    1 => {
                        let p = pieces[next(pieces.len())];
                        m.splice(at..at, p.iter().copied());
                    }
                    _ => m.truncate(at),
                }
            }
            let want = sequential(&m);
            let got = parallel(&m, 1 + next(5000), 1 + next(3000));
            match (want, got) {
                (Ok(w), Ok(g)) => {
                    assert_eq!(g, w, "case {case}");
                    agreed += 1;
                }
                (Ok(w), Err(_)) => {
                    // A fall-back is allowed (the sequential reader then answers), but must
                    // be rare on a valid file: only a damaged-looking but valid text.
                    let _ = w;
                }
                (Err(_), Ok(g)) => panic!(
                    "case {case}: the sequential reader refuses, the parallel one gives {g:?}: {}",
                    String::from_utf8_lossy(&m)
                ),
                (Err(_), Err(_)) => refused += 1,
            }
        }
        assert!(
            agreed > 100 && refused > 100,
            "{agreed} agreed, {refused} refused"
        );
    }
}
