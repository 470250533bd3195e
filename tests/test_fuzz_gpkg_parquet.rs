//! Bounded mutation tests of the GeoPackage and GeoParquet readers: real files from
//! `tests/data` damaged a few thousand ways with a fixed seed (so a failure reproduces), each
//! read in-process through the library. Every read must return `Ok` or a typed error, never
//! panic. For GeoParquet the reader's own last-line `catch_unwind` is not allowed to be what
//! saves it: a mutation that reaches a panic inside the parquet or arrow crates fails the test,
//! so the checks before the decoder are what is tested.

use crate::common::data;
use crate::common::Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::Instant;

use contracts::release::{profile_file, NoProgress, ReadNotes, ReleaseError};

/// Damage `b` one way, chosen by `rng`; `hot` is the range most worth damaging (a Parquet
/// footer), where half of the mutations land.
fn mutate(rng: &mut Rng, b: &mut Vec<u8>, hot: std::ops::Range<usize>) {
    let pos = |rng: &mut Rng, b: &Vec<u8>| {
        if rng.below(2) == 0 && !hot.is_empty() && hot.end <= b.len() {
            hot.start + rng.below(hot.len())
        } else {
            rng.below(b.len())
        }
    };
    if b.is_empty() {
        b.push(0);
        return;
    }
    match rng.below(7) {
        0 => {
            let p = pos(rng, b);
            b[p] ^= 1 << rng.below(8);
        }
        1 => {
            let p = pos(rng, b);
            b[p] = [0x00, 0xff, 0x7f, 0x80, 0x01][rng.below(5)];
        }
        2 => {
            // A huge varint (or four 0xff bytes of a length).
            let p = pos(rng, b);
            let end = (p + 5).min(b.len());
            for (i, x) in b[p..end].iter_mut().enumerate() {
                *x = if i < 4 { 0xff } else { 0x0f };
            }
        }
        3 => {
            let p = pos(rng, b);
            let n = 1 + rng.below(16);
            let end = (p + n).min(b.len());
            b.drain(p..end);
        }
        4 => {
            let p = pos(rng, b);
            let n = 1 + rng.below(16);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            b.splice(p..p, bytes);
        }
        5 => {
            let keep = rng.below(b.len());
            b.truncate(keep);
        }
        _ => {
            // Several bytes overwritten at random.
            for _ in 0..1 + rng.below(8) {
                let p = pos(rng, b);
                b[p] = rng.next() as u8;
            }
        }
    }
}

/// Profile `path`, failing the test on a panic; returns a short tag for the outcome.
fn outcome(path: &Path, what: &str) -> &'static str {
    let r = catch_unwind(AssertUnwindSafe(|| {
        profile_file(path, &NoProgress, &mut ReadNotes::default())
    }));
    match r {
        Err(_) => panic!("{what}: the reader panicked"),
        Ok(Ok(_)) => "ok",
        Ok(Err(ReleaseError::Corrupt { reason, .. })) => {
            assert!(
                !reason.contains("the Parquet decoder failed"),
                "{what}: only the last-line catch_unwind saved it: {reason}"
            );
            assert!(reason.len() < 600, "{what}: a long message: {reason}");
            "corrupt"
        }
        Ok(Err(ReleaseError::Unsupported { .. })) => "unsupported",
        Ok(Err(ReleaseError::Io { .. })) => "io",
        Ok(Err(ReleaseError::Choose { .. })) => "choose",
        Ok(Err(e)) => panic!("{what}: an unexpected error kind: {e}"),
    }
}

fn footer_range(b: &[u8]) -> std::ops::Range<usize> {
    let n = b.len();
    let flen = u32::from_le_bytes(b[n - 8..n - 4].try_into().unwrap()) as usize;
    n - 8 - flen..n
}

#[test]
fn mutated_geoparquet_never_panics() {
    let seeds = [
        "naturalearth/cities.parquet",
        "made/typed_nulls.parquet",
        "made/cities_rowgroups.parquet",
        "corpus/geoparquet/data-multipolygon-encoding_native.parquet",
        "corpus/geoparquet/data-point-encoding_native.parquet",
        "corpus/geoparquet/example.parquet",
        "parquet/two_geoms.parquet",
    ];
    let originals: Vec<Vec<u8>> = seeds
        .iter()
        .map(|s| std::fs::read(data(s)).unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.parquet");
    let mut rng = Rng(0x5eed_0000_0000_0001);
    let start = Instant::now();
    let mut tally = std::collections::BTreeMap::new();
    for i in 0..3000 {
        let k = rng.below(originals.len());
        let mut b = originals[k].clone();
        let hot = footer_range(&b);
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut b, hot.clone());
        }
        std::fs::write(&path, &b).unwrap();
        let what = format!("mutation {i} of {}", seeds[k]);
        *tally.entry(outcome(&path, &what)).or_insert(0) += 1;
    }
    eprintln!(
        "3000 GeoParquet mutations in {:?}: {tally:?}",
        start.elapsed()
    );
    // The test can fail the other way too: most mutations must be caught as damage.
    assert!(
        tally.get("corrupt").copied().unwrap_or(0) > 1000,
        "{tally:?}"
    );
}

#[test]
fn mutated_geopackage_never_panics() {
    let seeds = [
        "naturalearth/cities.gpkg",
        "corpus/gpkg/test_gpkg_nulls.gpkg",
        "corpus/gpkg/line_zm.gpkg",
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gpkg");
    let mut rng = Rng(0x5eed_0000_0000_0002);
    let start = Instant::now();
    let mut tally = std::collections::BTreeMap::new();
    // File-level damage: pages, headers, lengths.
    let originals: Vec<Vec<u8>> = seeds
        .iter()
        .map(|s| std::fs::read(data(s)).unwrap())
        .collect();
    for i in 0..1500 {
        let k = rng.below(originals.len());
        let mut b = originals[k].clone();
        // SQLite's header (page 1) and the schema pages are where damage bites hardest.
        let hot = 0..b.len().min(8192);
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut b, hot.clone());
        }
        std::fs::write(&path, &b).unwrap();
        *tally
            .entry(outcome(
                &path,
                &format!("file mutation {i} of {}", seeds[k]),
            ))
            .or_insert(0) += 1;
    }
    // Geometry-blob damage: the GeoPackage header, envelope and WKB inside a valid database.
    for i in 0..1500 {
        let k = rng.below(seeds.len());
        std::fs::write(&path, &originals[k]).unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        // A scratch copy: no journal, no fsync.
        conn.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
            .unwrap();
        let triggers: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for t in triggers {
            conn.execute_batch(&format!("DROP TRIGGER \"{t}\""))
                .unwrap();
        }
        let (table, geom): (String, String) = conn
            .query_row(
                "SELECT table_name, column_name FROM gpkg_geometry_columns",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let rows: Vec<(i64, Option<Vec<u8>>)> = conn
            .prepare(&format!("SELECT rowid, \"{geom}\" FROM \"{table}\""))
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let (id, blob) = &rows[rng.below(rows.len())];
        let mut blob = blob.clone().unwrap_or_default();
        let hot = 0..blob.len().min(64);
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut blob, hot.clone());
        }
        conn.execute(
            &format!("UPDATE \"{table}\" SET \"{geom}\" = ?1 WHERE rowid = ?2"),
            rusqlite::params![blob, id],
        )
        .unwrap();
        drop(conn);
        *tally
            .entry(outcome(
                &path,
                &format!("blob mutation {i} of {}", seeds[k]),
            ))
            .or_insert(0) += 1;
    }
    eprintln!(
        "3000 GeoPackage mutations in {:?}: {tally:?}",
        start.elapsed()
    );
    assert!(
        tally.get("corrupt").copied().unwrap_or(0) > 500,
        "{tally:?}"
    );
}
