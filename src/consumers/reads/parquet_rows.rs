//! Parquet read summaries, read by the scanner crate
//! (`contracts_scan::reads::parquet_summary`); here only what names the main crate: the
//! check of a summary's row, and the error it fails with.

use std::path::Path;

use contracts_scan::reads::parquet_summary;

use super::LogError;
use crate::consumers::summary::{check_row, ParsedRow};

pub(crate) use parquet_summary::ParquetInput;

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
