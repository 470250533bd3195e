//! JSON Lines logs: blocks cut at line breaks, scanned in parallel; each line read by the
//! quick walk ([`plain_lines`]) when it takes it, every other line by the mapped-field scanner
//! ([`Mapping::json`]).

use super::blocks::{fold, scan_blocks, FileScan, Fold, Partial, ReadError};
use super::fields::Mapping;
use super::plain_lines;

/// Bytes per block of a JSON Lines file: large enough that the per-block work (a task, a line
/// count) is small against the ten thousand lines in it, small enough that the kernel copies
/// into buffers that stay in cache.
pub const BLOCK: usize = 1 << 20;

/// JSON Lines files are cut into blocks that end at a line break and scanned in parallel
/// ([`scan_blocks`]).
pub fn scan_json_lines<R: std::io::Read + Send, S: Fold>(
    file: R,
    into: FileScan<'_, S>,
    mapping: &Mapping,
) -> Result<(), ReadError> {
    let req = into.req;
    // With one dataset requested, only the lines that contain its name can be reads of it:
    // past a run of other lines, the block is searched for the name ([`scan_block`]). A
    // source of one dataset (a constant) has no name in its lines.
    let only: Option<memchr::memmem::Finder> = match S::only_dataset(req) {
        Some(one) if mapping.constant_dataset().is_none() => {
            Some(memchr::memmem::Finder::new(one.as_bytes()).into_owned())
        }
        _ => None,
    };
    let cut = |b: &[u8]| memchr::memrchr(b'\n', b);
    scan_blocks(file, into, &cut, &|_, block, acc| {
        scan_block(block, req, only.as_ref(), mapping, acc)
    })
}

/// Lines of other datasets in a row after which a scan for one dataset stops reading line
/// by line and searches for the dataset's name instead: one, since the search costs less than
/// walking a line.
const SKIP_AFTER: u32 = 1;

/// Scan one block of whole lines. Lines are read one after the other, where they start in the
/// block, by the quick walk, which keeps the layout of the last line for the next; with one
/// dataset requested, a run of other datasets' lines is skipped by searching the block for
/// the name.
fn scan_block<S: Fold>(
    block: &[u8],
    req: &S::Request,
    only: Option<&memchr::memmem::Finder>,
    mapping: &Mapping,
    acc: &mut S,
) -> Partial {
    // Lines are counted as they are read, and those a search for the name passes over by
    // their breaks: no pass over the block only to count them.
    let mut lines = 0u64;
    let count = |part: &[u8]| memchr::memchr_iter(b'\n', part).count() as u64;
    // Byte offsets of malformed lines; their line numbers are counted afterwards, only for
    // them.
    let mut bad: Vec<(usize, String)> = Vec::new();
    let mut pos = 0;
    let mut others = 0u32;
    // A line that spells the name with JSON escapes (`"r\u006fads"`) does not contain it, so
    // a search for the name also stops at every backslash. The next one is found once and
    // kept until the scan passes it: a block without one costs one memchr, and only once a
    // search is made.
    let mut backslash: Option<Option<usize>> = None;
    let mut plain = plain_lines::Lines::default();
    while pos < block.len() {
        if let Some(finder) = only.filter(|_| others >= SKIP_AFTER) {
            if backslash.is_none_or(|b| b.is_some_and(|b| b < pos)) {
                backslash = Some(memchr::memchr(b'\\', &block[pos..]).map(|b| pos + b));
            }
            let name = finder.find(&block[pos..]).map(|h| pos + h);
            let hit = match (name, backslash.flatten()) {
                (Some(n), Some(b)) => n.min(b),
                (Some(n), None) => n,
                (None, Some(b)) => b,
                (None, None) => {
                    let rest = &block[pos..];
                    lines += count(rest) + u64::from(!rest.ends_with(b"\n"));
                    break;
                }
            };
            let to = memchr::memrchr(b'\n', &block[pos..hit]).map_or(pos, |i| pos + i + 1);
            lines += count(&block[pos..to]);
            pos = to;
            others = 0;
        }
        // The common line read in one quick walk, whatever its layout, with no search for its
        // end first; the rest, to its end, judged when it can be a read of the dataset.
        lines += 1;
        let walked = plain.read(block, pos, mapping);
        if let Some((r, next)) = walked {
            match acc.dataset_index(r.dataset) {
                Some(d) => {
                    others = 0;
                    if let Err(reason) = acc.fold_into(req, d, r.at, r.consumer, r.contract) {
                        acc.count_malformed();
                        bad.push((pos, reason));
                    }
                }
                None => others += 1,
            }
            pos = next;
            continue;
        }
        let end = memchr::memchr(b'\n', &block[pos..]).map_or(block.len(), |i| pos + i);
        let line = &block[pos..end];
        let candidate =
            only.is_none_or(|f| f.find(line).is_some() || memchr::memchr(b'\\', line).is_some());
        let trimmed = line.trim_ascii();
        if candidate && !trimmed.is_empty() {
            if let Err(reason) = judge_line(acc, req, mapping, trimmed) {
                acc.count_malformed();
                bad.push((pos, reason));
            }
        }
        others += 1;
        pos = end + 1;
    }
    let mut line = 1u64;
    let mut at = 0usize;
    let mut malformed = Vec::with_capacity(bad.len());
    for (offset, reason) in bad {
        line += memchr::memchr_iter(b'\n', &block[at..offset]).count() as u64;
        at = offset;
        malformed.push((line, reason));
    }
    Partial {
        lines,
        breaks: lines,
        malformed,
    }
}

/// One non-empty line, by the mapped-field scanner.
fn judge_line<S: Fold>(
    scan: &mut S,
    req: &S::Request,
    mapping: &Mapping,
    line: &[u8],
) -> Result<(), String> {
    let r = mapping.json(line)?;
    fold(scan, req, r.at, &r.consumer, &r.dataset, &r.contract)
}
