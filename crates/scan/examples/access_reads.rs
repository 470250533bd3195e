//! The scanner alone, for benchmarks: read an access log from standard input and print what it
//! holds, with no store, registry or contracts around it.
//!
//!   zcat logs/*.gz | cargo run -p contracts-scan --release --example access_reads -- \
//!       s3-access '/datasets/{dataset}/v{contract}/**'
//!
//! Prints one line of counts (lines, requests, reads, requests that continued a read, lines
//! that are no request of the format) and the reads per dataset and version; on stderr, the
//! reads by what they are known to read (every column, named columns, unknown), which stays
//! off stdout so that two builds' reports compare equal. With `--columns` first, reads carry
//! the columns they read where the format can tell (pgaudit parses each statement).

use std::collections::BTreeMap;
use std::io::BufReader;
use std::process::ExitCode;

use contracts_scan::access::{AccessKeys, AccessLog, AccessScan, Columns};
use contracts_scan::LogFormat;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let columns = args.first().is_some_and(|a| a == "--columns");
    if columns {
        args.remove(0);
    }
    let Some((format, templates)) = args.split_first() else {
        eprintln!("usage: access_reads [--columns] FORMAT TEMPLATE... < LOG");
        return ExitCode::from(2);
    };
    let Some(format) = LogFormat::parse(format).filter(|f| f.is_access_log()) else {
        eprintln!("access_reads: {format:?} is not an access-log format");
        return ExitCode::from(2);
    };
    let keys = AccessKeys {
        templates: templates.iter().map(String::as_str).collect(),
        same_read_seconds: 60,
        ..AccessKeys::default()
    };
    let log = match AccessLog::compile(format, &keys) {
        Ok(log) => log.with_columns(columns),
        Err(errors) => {
            for e in errors {
                eprintln!("access_reads: {e}");
            }
            return ExitCode::from(2);
        }
    };
    let mut scan = AccessScan::new(&log);
    let mut per_version = BTreeMap::<String, u64>::new();
    let mut known = [0u64; 3];
    let mut count = |r: contracts_scan::access::Read| {
        let key = format!("{} {}", r.reader.dataset, r.reader.contract);
        *per_version.entry(key).or_default() += 1;
        known[match r.attributes {
            Columns::All => 0,
            Columns::Named(_) => 1,
            Columns::Unknown => 2,
        }] += 1;
    };
    let input = BufReader::with_capacity(1 << 20, std::io::stdin());
    if let Err(e) = scan.feed(input, &mut count, |_| {}) {
        eprintln!("access_reads: {e}");
        return ExitCode::from(3);
    }
    let stats = scan.finish(&mut count);
    println!(
        "lines {} requests {} reads {} same_read {} malformed {}",
        stats.lines, stats.requests, stats.reads, stats.same_read, stats.malformed
    );
    for (version, reads) in per_version {
        println!("{version} {reads}");
    }
    eprintln!(
        "attributes: all {} named {} unknown {}",
        known[0], known[1], known[2]
    );
    ExitCode::SUCCESS
}
