//! CSV logs, read by the scanner crate's block reader (`contracts_scan::reads::csv_rows`)
//! into a fold (the scan's, the record walk's); here only the error it fails with, which is the main crate's.

use contracts_scan::reads::csv_rows;
use contracts_scan::reads::fields::Mapping;

use super::{FileScan, LogError};
use contracts_scan::reads::blocks::Fold;

/// CSV logs are cut into blocks at record boundaries and scanned in parallel like JSON Lines.
pub(super) fn scan_csv<R: std::io::Read + Send, S: Fold>(
    file: R,
    into: FileScan<'_, S>,
    mapping: &Mapping,
) -> Result<(), LogError> {
    csv_rows::scan_csv(file, into, mapping).map_err(LogError::from)
}
