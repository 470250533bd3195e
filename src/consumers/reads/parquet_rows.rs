//! Parquet logs of reads and Parquet read summaries, read by the scanner crate
//! (`contracts_scan::reads::parquet_rows`, `contracts_scan::reads::parquet_summary`); here
//! only what names the main crate: the check of a summary's
//! row, and the error both fail with.

use std::path::Path;

use contracts_scan::reads::fields::Mapping;
use contracts_scan::reads::{parquet_rows, parquet_summary};

use super::{LogError, Malformed};
use crate::consumers::summary::{check_row, ParsedRow};
use contracts_scan::reads::blocks::Fold;

pub(crate) use parquet_summary::ParquetInput;

/// Scan a Parquet log: row groups in parallel, each into its own accumulator; malformed rows
/// are reported in row order.
pub(super) fn scan_parquet<S: Fold>(
    path: &Path,
    req: &S::Request,
    scan: &mut S,
    on_malformed: &mut dyn FnMut(&Malformed),
    mapping: &Mapping,
) -> Result<(), LogError> {
    parquet_rows::scan_parquet(path, req, scan, on_malformed, mapping).map_err(LogError::from)
}

/// Hand each row of the Parquet read summary `input` (the file `path`, or its fetched bytes)
/// to `each` with its 1-based row number: the row checked as a JSON Lines row is
/// ([`check_row`]), or why it is malformed. Columns are found by name in any order; other
/// columns are not decoded. A missing column, or one of another type, is an error naming it,
/// and no row is read.
pub(crate) fn read_summary(
    path: &Path,
    input: ParquetInput,
    each: &mut dyn FnMut(u64, Result<ParsedRow, String>),
) -> Result<(), LogError> {
    parquet_summary::read_summary(path, input, check_row, each).map_err(LogError::from)
}
