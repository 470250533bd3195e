//! The one reader of each log of reads ([`fold_log`]), whatever folds its reads: the
//! scan, the record walk, or both at once.

use std::path::Path;

use contracts_scan::reads::blocks::Fold;
use contracts_scan::reads::csv_rows::scan_csv;
use contracts_scan::reads::fields::Mapping;
use contracts_scan::reads::json_lines::{scan_json_lines, BLOCK};
use contracts_scan::reads::parquet_rows::scan_parquet;

use super::readers::ReadsLog;
use super::{FileScan, LogError, Malformed};

/// Read a log of reads by the scanner crate's readers (JSON Lines and CSV in blocks on all
/// cores, Parquet by row group) into `acc`: the one reader of each format, whichever sink
/// (the scan, the record walk, both at once) folds the reads. Each malformed line goes to
/// `on_malformed`, in file order, and is counted in `acc`.
pub(crate) fn fold_log<S: Fold>(
    path: &Path,
    log: ReadsLog,
    mapping: &Mapping,
    req: &S::Request,
    acc: &mut S,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<(), LogError> {
    let (csv, input) = match log {
        ReadsLog::Parquet => {
            return Ok(scan_parquet(path, req, acc, on_malformed, mapping)?);
        }
        ReadsLog::Jsonl(input) => (false, input),
        ReadsLog::Csv(input) => (true, input),
    };
    let into = FileScan {
        path,
        req,
        scan: acc,
        on_malformed,
        block_size: BLOCK,
    };
    // The scanner crate's `ReadError` becomes the main crate's `LogError` here, once.
    Ok(if csv {
        scan_csv(input, into, mapping)
    } else {
        scan_json_lines(input, into, mapping)
    }?)
}
