//! The floor under the GeoPackage reader (bench/RESULTS.md): the same rowid ranges on the
//! same cores through the same bundled SQLite, but only a bare `SELECT` of each row's
//! geometry blob, touched and not decoded. What `contracts profile` takes beyond this is
//! the reader's own cost; this itself is SQLite's.
//!
//!     cargo run --release --manifest-path bench/gpkg_floor/Cargo.toml -- \
//!       FILE.gpkg [TABLE] [GEOM] [KEY]
//!
//! (defaults `release`, `geom`, `fid`). Environment: `FLOOR_PRAGMAS` (run on each
//! connection; default the reader's `cell_size_check` and 2 MiB page cache), `FLOOR_COLS`
//! (extra select list after the blob, e.g. `"name IS NULL, value IS NULL"`), `FLOOR_PARTS`
//! (ranges, default 4 per thread). Prints the rows, a checksum and the time.

use std::time::Instant;

use rayon::prelude::*;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: gpkg_floor FILE [TABLE] [GEOM] [KEY]")?;
    let table = args.next().unwrap_or_else(|| "release".into());
    let geom = args.next().unwrap_or_else(|| "geom".into());
    let key = args.next().unwrap_or_else(|| "fid".into());
    // The reader's own settings unless told otherwise.
    let pragmas = std::env::var("FLOOR_PRAGMAS")
        .unwrap_or_else(|_| "PRAGMA cell_size_check = ON; PRAGMA cache_size = -2048;".into());
    let extra = std::env::var("FLOOR_COLS").unwrap_or_default();
    let open = || -> rusqlite::Result<Connection> {
        let c = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        c.execute_batch(&pragmas)?;
        Ok(c)
    };
    let start = Instant::now();
    let (lo, hi): (i64, i64) = open()?.query_row(
        &format!("SELECT min({key}), max({key}) FROM {table}"),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let n: i64 = std::env::var("FLOOR_PARTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(rayon::current_num_threads() as i64 * 4);
    let step = ((hi - lo + 1) / n).max(1);
    let ranges: Vec<(i64, i64)> = (0..n)
        .map(|i| {
            let a = lo + i * step;
            (a, if i == n - 1 { hi } else { a + step - 1 })
        })
        .collect();
    let cols = if extra.is_empty() {
        geom.clone()
    } else {
        format!("{geom}, {extra}")
    };
    let sql = format!("SELECT {cols} FROM {table} WHERE {key} BETWEEN ?1 AND ?2");
    let totals = ranges
        .par_iter()
        .map(|&(a, b)| -> rusqlite::Result<(u64, u64)> {
            let c = open()?;
            let mut st = c.prepare(&sql)?;
            let ncols = st.column_count();
            let mut rows = st.query([a, b])?;
            let (mut count, mut sum) = (0u64, 0u64);
            while let Some(row) = rows.next()? {
                count += 1;
                if let ValueRef::Blob(g) = row.get_ref(0)? {
                    // Touch the blob: its length and last byte.
                    sum += g.len() as u64 + u64::from(*g.last().unwrap_or(&0));
                }
                for i in 1..ncols {
                    if let ValueRef::Integer(v) = row.get_ref(i)? {
                        sum += v as u64;
                    }
                }
            }
            Ok((count, sum))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (count, sum) = totals
        .iter()
        .fold((0u64, 0u64), |(c, s), (a, b)| (c + a, s.wrapping_add(*b)));
    println!(
        "{count} rows, checksum {sum}, {:.3} s",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
