//! JSON Lines logs: blocks cut at line breaks, scanned in parallel; the platform's own layout
//! in the default mapping read in place ([`fixed_at`]), every other line by the mapped-field
//! scanner ([`Mapping::json`]).

use std::path::Path;

use super::fields::Mapping;
use super::{
    fold, fold_into, plain_lines, scan_blocks, At, LogError, Malformed, Partial, Scan, ScanRequest,
};

/// The line as platforms write it, `{"at":"…","consumer":"…","dataset":"…","contract":"…"}`
/// with no space and no escape. `None` for any other line ([`Mapping::json`] then walks it).
#[cfg(test)]
pub(super) fn fixed_order(line: &[u8]) -> Option<[&str; 4]> {
    let (fields, stop) = fixed_at(line, 0)?;
    if stop != line.len() {
        return None;
    }
    let text = |b| std::str::from_utf8(b).ok();
    Some([
        text(fields[0])?,
        text(fields[1])?,
        text(fields[2])?,
        text(fields[3])?,
    ])
}

/// [`fixed_order`] for the object starting at `start` of a block: its fields (UTF-8) and the
/// index just past its closing brace. Each value's closing quote is found eight bytes at a time
/// ([`plain_string_end`]), and the keys are compared in place: the line is never walked byte
/// by byte, nor cut out of the block first.
pub(super) fn fixed_at(b: &[u8], start: usize) -> Option<([&[u8]; 4], usize)> {
    const KEYS: [&[u8]; 4] = [
        b"{\"at\":\"",
        b"\",\"consumer\":\"",
        b"\",\"dataset\":\"",
        b"\",\"contract\":\"",
    ];
    let mut spans = [(0usize, 0usize); 4];
    let mut ascii = true;
    let mut i = start;
    for (slot, key) in KEYS.iter().enumerate() {
        if b.get(i..i + key.len())? != *key {
            return None;
        }
        i += key.len();
        let (end, value_ascii) = plain_string_end(b, i)?;
        ascii &= value_ascii;
        spans[slot] = (i, end);
        i = end;
    }
    if b.get(i..i + 2)? != b"\"}" {
        return None;
    }
    let stop = i + 2;
    // UTF-8: an ASCII object (the common case) is, else one check for the object (every
    // cut is next to an ASCII quote, so each value then is too).
    if !ascii {
        std::str::from_utf8(&b[start..stop]).ok()?;
    }
    let f = |(s, e): (usize, usize)| &b[s..e];
    Some(([f(spans[0]), f(spans[1]), f(spans[2]), f(spans[3])], stop))
}

/// Where the JSON string whose contents start at `i` closes (the index of its quote), and
/// whether the contents are ASCII, when it has no escape and no control character (`None`
/// otherwise, or when it does not close). Eight bytes at a time: the first quote, backslash
/// or byte below 0x20 of a word is found with the usual carry tricks, which are exact for
/// the lowest such byte (a false hit can only come above a true one). The ASCII answer comes
/// from the same words, so the line is not read a second time.
fn plain_string_end(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut high = 0u64;
    while let Some(word) = b.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_le_bytes(w);
        let zero = |x: u64| x.wrapping_sub(ONES) & !x;
        let special = (zero(w ^ (ONES * u64::from(b'"')))
            | zero(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w))
            & HIGH;
        if special != 0 {
            let first = special.trailing_zeros();
            let k = i + (first / 8) as usize;
            // The bytes of the word before the quote.
            high |= w & HIGH & ((1u64 << first) - 1);
            return (b[k] == b'"').then_some((k, high == 0));
        }
        high |= w & HIGH;
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => return Some((i, high == 0)),
            b'\\' | 0..0x20 => return None,
            _ => {
                high |= u64::from(c & 0x80);
                i += 1;
            }
        }
    }
    None
}

/// Bytes per block of a JSON Lines file: large enough that the per-block work (a task, a line
/// count) is small against the ten thousand lines in it, small enough that the kernel copies
/// into buffers that stay in cache.
pub(super) const BLOCK: usize = 1 << 20;

/// JSON Lines files are cut into blocks that end at a line break and scanned in parallel
/// ([`scan_blocks`]).
pub(super) fn scan_json_lines<R: std::io::Read + Send>(
    path: &Path,
    file: R,
    req: &ScanRequest,
    scan: &mut Scan,
    on_malformed: &mut dyn FnMut(&Malformed),
    block_size: usize,
    mapping: &Mapping,
) -> Result<(), LogError> {
    // With one dataset requested, only the lines that contain its name can be reads of it:
    // past a run of other lines, the block is searched for the name ([`scan_block`]). A
    // source of one dataset (a constant) has no name in its lines.
    let only: Option<memchr::memmem::Finder> = match req.datasets.iter().collect::<Vec<_>>()[..] {
        [one] if mapping.constant_dataset().is_none() => {
            Some(memchr::memmem::Finder::new(one.as_bytes()).into_owned())
        }
        _ => None,
    };
    let cut = |b: &[u8]| memchr::memrchr(b'\n', b);
    scan_blocks(
        path,
        file,
        req,
        scan,
        on_malformed,
        block_size,
        &cut,
        &|_, block, acc| scan_block(block, req, only.as_ref(), mapping, acc),
    )
}

/// Lines of other datasets in a row after which a scan for one dataset stops reading line
/// by line and searches for the dataset's name instead.
const SKIP_AFTER: u32 = 2;

/// Scan one block of whole lines. Lines are read one after the other, a line in the fixed
/// order ([`fixed_at`]) without being cut out first; with one dataset requested, a run of
/// other datasets' lines is skipped by searching the block for the name.
fn scan_block(
    block: &[u8],
    req: &ScanRequest,
    only: Option<&memchr::memmem::Finder>,
    mapping: &Mapping,
    acc: &mut Scan,
) -> Partial {
    let lines = memchr::memchr_iter(b'\n', block).count() as u64
        + u64::from(!block.is_empty() && !block.ends_with(b"\n"));
    // Byte offsets of malformed lines; their line numbers are counted afterwards, only for
    // them.
    let mut bad: Vec<(usize, String)> = Vec::new();
    let mut pos = 0;
    let mut others = 0u32;
    // A line that spells the name with JSON escapes (`"r\u006fads"`) does not contain it, so
    // a search for the name also stops at every backslash. The next one is found once and
    // kept until the scan passes it: a block without one costs one memchr.
    let mut backslash = memchr::memchr(b'\\', block);
    let mut plain = plain_lines::Lines::default();
    while pos < block.len() {
        if let Some(finder) = only.filter(|_| others >= SKIP_AFTER) {
            if backslash.is_some_and(|b| b < pos) {
                backslash = memchr::memchr(b'\\', &block[pos..]).map(|b| pos + b);
            }
            let name = finder.find(&block[pos..]).map(|h| pos + h);
            let hit = match (name, backslash) {
                (Some(n), Some(b)) => n.min(b),
                (Some(n), None) => n,
                (None, Some(b)) => b,
                (None, None) => break,
            };
            pos = memchr::memrchr(b'\n', &block[pos..hit]).map_or(pos, |i| pos + i + 1);
            others = 0;
        }
        // The platform's own layout is read in place only where the mapping is its own.
        let fixed = if mapping.plain {
            fixed_at(block, pos)
        } else {
            None
        };
        if let Some(([at, consumer, dataset, contract], stop)) = fixed {
            let next = match block.get(stop) {
                None => Some(stop),
                Some(b'\n') => Some(stop + 1),
                Some(b'\r') if block.get(stop + 1) == Some(&b'\n') => Some(stop + 2),
                _ => None,
            };
            if let Some(next) = next {
                match acc.dataset_index(dataset) {
                    Some(d) => {
                        others = 0;
                        let read = fold_into(acc, req, d, At::Text(at), consumer, contract);
                        if let Err(reason) = read {
                            acc.stats.malformed += 1;
                            bad.push((pos, reason));
                        }
                    }
                    None => others += 1,
                }
                pos = next;
                continue;
            }
        }
        // Any other line: the common line read in one quick walk, whatever its layout, with
        // no search for its end first; the rest, to its end, judged when it can be a read of
        // the dataset.
        let walked = plain.read(block, pos, mapping);
        if let Some((r, next)) = walked {
            match acc.dataset_index(r.dataset) {
                Some(d) => {
                    others = 0;
                    if let Err(reason) = fold_into(acc, req, d, r.at, r.consumer, r.contract) {
                        acc.stats.malformed += 1;
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
                acc.stats.malformed += 1;
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
fn judge_line(
    scan: &mut Scan,
    req: &ScanRequest,
    mapping: &Mapping,
    line: &[u8],
) -> Result<(), String> {
    let r = mapping.json(line)?;
    fold(scan, req, r.at, &r.consumer, &r.dataset, &r.contract)
}
