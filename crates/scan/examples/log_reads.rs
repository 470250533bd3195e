//! The readers of the logs of reads alone, for benchmarks: read a JSON Lines or CSV log of
//! reads (with the default field names) from standard input and count what it holds, with no
//! store, registry or contracts around it. Each read's instant is parsed, but no newest read
//! is kept and no version parsed: what is timed is the block readers and the walks of a line.
//!
//!   zcat reads/*.jsonl.gz | cargo run -p contracts-scan --release --example log_reads -- \
//!       jsonl roads rivers
//!
//! Prints one line of counts (lines, reads of the datasets named, malformed lines) and the
//! reads per dataset and contract as written.

use std::path::Path;
use std::process::ExitCode;

use contracts_scan::reads::blocks::{Accumulator, FileScan};
use contracts_scan::reads::fields::Mapping;
use contracts_scan::reads::json_lines::BLOCK;
use contracts_scan::reads::tally::Tally;
use contracts_scan::reads::{csv_rows, json_lines};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((format, datasets)) = args.split_first().filter(|(_, d)| !d.is_empty()) else {
        eprintln!("usage: log_reads jsonl|csv DATASET... < LOG");
        return ExitCode::from(2);
    };
    let datasets = datasets.to_vec();
    let mut count = Tally::for_request(&datasets);
    let into = FileScan {
        path: Path::new("-"),
        req: &datasets,
        scan: &mut count,
        on_malformed: &mut |_| {},
        block_size: BLOCK,
    };
    let mapping = Mapping::default();
    let result = match format.as_str() {
        "jsonl" => json_lines::scan_json_lines(std::io::stdin(), into, &mapping),
        "csv" => csv_rows::scan_csv(std::io::stdin(), into, &mapping),
        other => {
            eprintln!("log_reads: {other:?} is not jsonl or csv");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = result {
        eprintln!("log_reads: {e}");
        return ExitCode::from(3);
    }
    let reads: u64 = count.reads.values().sum();
    println!(
        "lines {} reads {reads} malformed {}",
        count.lines, count.malformed
    );
    for ((d, contract), n) in &count.reads {
        println!("{} {} {n}", datasets[*d], String::from_utf8_lossy(contract));
    }
    ExitCode::SUCCESS
}
