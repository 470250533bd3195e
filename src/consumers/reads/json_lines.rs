//! The benchmark's entry into the scanner crate's reader of JSON Lines logs
//! (`contracts_scan::reads::json_lines`), which takes a [`Source`]: the main crate's.

use contracts_scan::reads::plain_lines;

use super::mapping::mapping_of;
use crate::model::source::Source;

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
