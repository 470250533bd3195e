//! Hostile files: a bounded mutation test per reader (GeoJSON, FlatGeobuf, Shapefile).
//!
//! Each reader's corpus is seeded from the test data; every case is a copy of a seed with a
//! few bytes flipped, a 4-byte field set to an absurd count or length, a run overwritten,
//! bytes inserted, or the file truncated, chosen by a fixed-seed generator so a failure
//! reproduces. Each mutant is profiled in-process: it must give a profile or a typed error
//! naming the file — never a panic (caught and reported with the seed and case), and never
//! an allocation that aborts the process (which would fail the whole test binary). The
//! number of cases is fixed, so the run time is bounded (a few seconds each in debug).

use crate::common::data;
use crate::common::Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use contracts::release::{profile_file, NoProgress, ReadNotes, ReleaseError};

/// Absurd values a declared count or length may take.
const ABSURD: [u32; 6] = [0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0x0010_0000];

/// One mutant of `b`.
fn mutate(b: &[u8], rng: &mut Rng, text: bool) -> Vec<u8> {
    let mut m = b.to_vec();
    let n = m.len();
    match rng.below(6) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(n);
                m[i] ^= 1 << rng.below(8);
            }
        }
        1 if n >= 4 => {
            // A count or length field: at an aligned offset near the start (headers) or anywhere.
            let at = if rng.below(2) == 0 {
                rng.below(n.min(256) - 3) & !3
            } else {
                rng.below(n - 3)
            };
            let v = ABSURD[rng.below(ABSURD.len())];
            let bytes = if rng.below(2) == 0 {
                v.to_le_bytes()
            } else {
                v.to_be_bytes()
            };
            m[at..at + 4].copy_from_slice(&bytes);
        }
        2 => m.truncate(rng.below(n)),
        3 => {
            let at = rng.below(n);
            let len = (1 + rng.below(64)).min(n - at);
            let fill = if text {
                [b'[', b']', b'{', b'}', b'"', b',', b'9', b'-'][rng.below(8)]
            } else {
                [0x00, 0xFF, 0x7F, 0x80][rng.below(4)]
            };
            m[at..at + len].fill(fill);
        }
        4 => {
            let at = rng.below(n);
            let ins: Vec<u8> = if text {
                let pieces: [&[u8]; 8] = [
                    b"[[[[",
                    b"]]",
                    b"{\"type\":",
                    b"null",
                    b"1e999",
                    b"\"\xff\"",
                    b"\"properties\":{\"a\":1},",
                    b"\"geometry\":null,",
                ];
                pieces[rng.below(pieces.len())].to_vec()
            } else {
                (0..1 + rng.below(16)).map(|_| rng.next() as u8).collect()
            };
            m.splice(at..at, ins);
        }
        _ => {
            // A field set to a plausible-but-wrong small number.
            let i = rng.below(n);
            m[i] = rng.below(40) as u8;
        }
    }
    m
}

/// Profile `cases` mutants of the seed files' `.ext` part, each written to a temporary
/// directory with its siblings copied unchanged, profiling the `.profiled` file of the set;
/// fail on any panic or unnamed error.
fn run(
    seeds: &[&str],
    siblings: &[&str],
    (ext, profiled): (&str, &str),
    cases: usize,
    seed: u64,
    text: bool,
) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let originals: Vec<(PathBuf, Vec<u8>)> = seeds
        .iter()
        .map(|s| {
            let p = data(&format!("{s}.{ext}"));
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    let (mut ok, mut refused) = (0, 0);
    for case in 0..cases {
        let (src, bytes) = &originals[rng.below(originals.len())];
        let stem = src.file_stem().unwrap().to_str().unwrap();
        let name = format!("m{case}_{stem}");
        for sib in siblings {
            let from = src.with_extension(sib);
            if from.is_file() {
                std::fs::copy(&from, dir.path().join(format!("{name}.{sib}"))).unwrap();
            }
        }
        let target = dir.path().join(format!("{name}.{ext}"));
        std::fs::write(&target, mutate(bytes, &mut rng, text)).unwrap();
        let file = dir.path().join(format!("{name}.{profiled}"));
        let result = catch_unwind(AssertUnwindSafe(|| {
            let mut notes = ReadNotes::default();
            profile_file(&file, &NoProgress, &mut notes)
        }));
        match result {
            Err(_) => panic!(
                "case {case} (seed {seed:#x}) from {}: the reader panicked",
                src.display()
            ),
            Ok(Ok(p)) => {
                assert!(p.null_geometries <= p.feature_count, "case {case}: {p:?}");
                ok += 1;
            }
            Ok(Err(e)) => {
                let msg = e.to_string();
                assert!(
                    matches!(
                        e,
                        ReleaseError::Corrupt { .. }
                            | ReleaseError::Unsupported { .. }
                            | ReleaseError::Io { .. }
                    ),
                    "case {case}: unexpected kind of error: {msg}"
                );
                assert!(
                    msg.contains(&name),
                    "case {case}: the error names no file: {msg}"
                );
                assert!(
                    msg.len() < 1000,
                    "case {case}: {} bytes of error",
                    msg.len()
                );
                refused += 1;
            }
        }
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let _ = std::fs::remove_file(e.unwrap().path());
        }
    }
    // Both outcomes occur, or the mutations are not exercising the reader.
    assert!(ok > 0 && refused > 0, "{ok} read, {refused} refused");
}

#[test]
fn mutated_geojson_never_panics() {
    run(
        &[
            "naturalearth/cities",
            "made/typed_nulls",
            "edge/null_geom",
            "geojson/feature",
            "geojson/geometry",
        ],
        &[],
        ("geojson", "geojson"),
        3000,
        0x6E0_1505,
        true,
    );
    run(
        &["geojson/cities"],
        &[],
        ("geojsons", "geojsons"),
        500,
        0x5E0,
        true,
    );
}

#[test]
fn mutated_flatgeobuf_never_panics() {
    run(
        &[
            "naturalearth/cities",
            "made/typed_nulls",
            "made/null_geom",
            "edge/line_zm",
            "fgb/alldatatypes",
        ],
        &[],
        ("fgb", "fgb"),
        3000,
        0xF6B,
        false,
    );
}

#[test]
fn mutated_shapefiles_never_panic() {
    run(
        &[
            "naturalearth/cities",
            "made/null_geom",
            "edge/line_zm",
            "edge/line_m",
        ],
        &["shx", "dbf", "prj"],
        ("shp", "shp"),
        3000,
        0x5AF,
        false,
    );
    // The attribute table is parsed here too.
    run(
        &["naturalearth/cities", "edge/line_zm"],
        &["shp", "shx", "prj"],
        ("dbf", "shp"),
        1000,
        0xDBF,
        false,
    );
}
