//! JSON Lines logs, read by the scanner crate's block reader
//! (`contracts_scan::reads::json_lines`) into a fold (the scan's, the record walk's); here only what names the main crate:
//! the error it fails with, and the benchmark's entry, which takes a [`Source`].

use contracts_scan::reads::fields::Mapping;
use contracts_scan::reads::json_lines;
use contracts_scan::reads::plain_lines;

use super::mapping::mapping_of;
use super::{FileScan, LogError};
use crate::model::source::Source;
use contracts_scan::reads::blocks::Fold;

pub(super) use json_lines::BLOCK;

/// JSON Lines files are cut into blocks that end at a line break and scanned in parallel.
pub(super) fn scan_json_lines<R: std::io::Read + Send, S: Fold>(
    file: R,
    into: FileScan<'_, S>,
    mapping: &Mapping,
) -> Result<(), LogError> {
    json_lines::scan_json_lines(file, into, mapping).map_err(LogError::from)
}

/// For `bench/jsonscan` only (not an interface): the reads the scanner of JSON lines takes
/// from `block` under `source`'s mapping, and a sum of their consumers' lengths, so that the
/// scanner can be timed against general JSON libraries on the same lines. Lines the quick
/// walk leaves go through the general scanner, as in a scan.
#[doc(hidden)]
pub fn bench_json_block(block: &[u8], source: &Source) -> (usize, usize) {
    let mapping = mapping_of(source);
    let mut lines = plain_lines::Lines::default();
    let (mut reads, mut sum, mut pos) = (0, 0, 0);
    while pos < block.len() {
        match lines.read(block, pos, &mapping) {
            Some((r, next)) => {
                reads += 1;
                sum += r.consumer.len();
                pos = next;
            }
            None => {
                let end = memchr::memchr(b'\n', &block[pos..]).map_or(block.len(), |i| pos + i);
                if let Ok(r) = mapping.json(block[pos..end].trim_ascii()) {
                    reads += 1;
                    sum += r.consumer.len();
                }
                pos = end + 1;
            }
        }
    }
    (reads, sum)
}
