//! JSON Lines logs: blocks cut at line breaks, scanned in parallel; a fast path for the
//! common flat line, the full parser for everything else.

use std::borrow::Cow;
use std::path::Path;

use serde::Deserialize;

use super::{fold, scan_blocks, LogError, Malformed, Partial, Scan, ScanRequest};

/// The four fields of a read, borrowed from the line when they need no unescaping.
#[derive(Deserialize)]
pub(super) struct RawRead<'a> {
    #[serde(borrow)]
    pub(super) at: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) consumer: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) dataset: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) contract: Cow<'a, str>,
}

/// The fast path for the common line: a flat JSON object whose values are all strings with
/// no escapes. Returns `at`, `consumer`, `dataset` and `contract` borrowed from the line, or
/// `None` whenever the line is anything else (then the full parser decides). Other keys are
/// allowed, as with the full parser.
pub(super) fn flat_fields(line: &[u8]) -> Option<[&str; 4]> {
    if let Some(f) = fixed_order(line) {
        return Some(f);
    }
    // One UTF-8 check for the whole line; the quotes found below are ASCII, so every slice
    // between them is on a character boundary.
    let text = std::str::from_utf8(line).ok()?;
    let mut out: [Option<&str>; 4] = [None; 4];
    let ws = |i: &mut usize| {
        while *i < line.len() && matches!(line[*i], b' ' | b'\t' | b'\r' | b'\n') {
            *i += 1;
        }
    };
    // A string starting at `i` (which must be a quote); `i` ends after the closing quote.
    // The fields are short, so a plain loop beats a memchr call per field.
    let string = |i: &mut usize| -> Option<(usize, usize)> {
        if line.get(*i) != Some(&b'"') {
            return None;
        }
        let start = *i + 1;
        let mut end = start;
        loop {
            match *line.get(end)? {
                b'"' => break,
                // A backslash means escapes; a control character means invalid JSON: either
                // way, leave it to the full parser.
                b'\\' | 0..0x20 => return None,
                _ => end += 1,
            }
        }
        *i = end + 1;
        Some((start, end))
    };
    let mut i = 0;
    ws(&mut i);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        ws(&mut i);
        let (ks, ke) = string(&mut i)?;
        ws(&mut i);
        if line.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        ws(&mut i);
        let (vs, ve) = string(&mut i)?;
        let slot = match &line[ks..ke] {
            b"at" => 0,
            b"consumer" => 1,
            b"dataset" => 2,
            b"contract" => 3,
            _ => usize::MAX,
        };
        if slot != usize::MAX {
            if out[slot].is_some() {
                return None;
            }
            out[slot] = Some(text.get(vs..ve)?);
        }
        ws(&mut i);
        match line.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => {
                i += 1;
                break;
            }
            _ => return None,
        }
    }
    ws(&mut i);
    if i != line.len() {
        return None;
    }
    Some([out[0]?, out[1]?, out[2]?, out[3]?])
}

/// The line as platforms write it, `{"at":"…","consumer":"…","dataset":"…","contract":"…"}`
/// with no space and no escape: each value is found with one `memchr` for its closing quote
/// instead of a walk over every byte of the line. `None` for any other line ([`flat_fields`]
/// then walks it).
pub(super) fn fixed_order(line: &[u8]) -> Option<[&str; 4]> {
    const KEYS: [&[u8]; 4] = [
        b"{\"at\":\"",
        b"\",\"consumer\":\"",
        b"\",\"dataset\":\"",
        b"\",\"contract\":\"",
    ];
    // One UTF-8 check for the line; every cut below is next to an ASCII quote.
    let text = std::str::from_utf8(line).ok()?;
    let mut out = [""; 4];
    let mut rest = line;
    for (slot, key) in KEYS.iter().enumerate() {
        rest = rest.strip_prefix(*key)?;
        let end = memchr::memchr(b'"', rest)?;
        let value = &rest[..end];
        // An escape or a control character: the walk (and then the full parser) decides.
        if value.iter().any(|&c| c == b'\\' || c < 0x20) {
            return None;
        }
        let from = line.len() - rest.len();
        out[slot] = text.get(from..from + end)?;
        rest = &rest[end..];
    }
    (rest == b"\"}").then_some(out)
}

/// Bytes per block of a JSON Lines file: large enough that the per-block work (a task, a line
/// count) is small against the ten thousand lines in it, small enough that the kernel copies
/// into buffers that stay in cache (8 MiB blocks cost a third more system time).
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
) -> Result<(), LogError> {
    // With one dataset requested, only the lines that contain its name can be reads of it:
    // the block is searched for the name and other lines are never looked at.
    let only: Option<memchr::memmem::Finder> = match req.datasets.iter().collect::<Vec<_>>()[..] {
        [one] => Some(memchr::memmem::Finder::new(one.as_bytes()).into_owned()),
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
        &|_, block, acc| scan_block(block, req, only.as_ref(), acc),
    )
}

/// Scan one block of whole lines.
fn scan_block(
    block: &[u8],
    req: &ScanRequest,
    only: Option<&memchr::memmem::Finder>,
    acc: &mut Scan,
) -> Partial {
    let lines = memchr::memchr_iter(b'\n', block).count() as u64
        + u64::from(!block.is_empty() && !block.ends_with(b"\n"));
    // Byte offsets of malformed lines; their line numbers are counted afterwards, only for
    // them.
    let mut bad: Vec<(usize, String)> = Vec::new();
    let mut judge = |start: usize, line: &[u8]| {
        let line = line.trim_ascii();
        if line.is_empty() {
            return;
        }
        if let Err(reason) = judge_line(acc, req, line) {
            acc.stats.malformed += 1;
            bad.push((start, reason));
        }
    };
    match only {
        Some(finder) => {
            // A line that spells the name with JSON escapes (`"r\u006fads"`) does not contain
            // it, so every line with a backslash is judged too. The next backslash is found
            // once and kept until the scan passes it: a block without one costs one memchr.
            let mut pos = 0;
            let mut backslash = memchr::memchr(b'\\', block);
            loop {
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
                let start = memchr::memrchr(b'\n', &block[..hit]).map_or(0, |i| i + 1);
                let end = memchr::memchr(b'\n', &block[hit..]).map_or(block.len(), |i| hit + i);
                judge(start, &block[start..end]);
                pos = end + 1;
                if pos >= block.len() {
                    break;
                }
            }
        }
        None => {
            let mut start = 0;
            for end in memchr::memchr_iter(b'\n', block).chain(std::iter::once(block.len())) {
                if start >= block.len() {
                    break;
                }
                judge(start, &block[start..end]);
                start = end + 1;
            }
        }
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

/// One non-empty line: the fast path, else the full parser for a precise reason.
fn judge_line(scan: &mut Scan, req: &ScanRequest, line: &[u8]) -> Result<(), String> {
    match flat_fields(line) {
        Some([at, consumer, dataset, contract]) => fold(scan, req, at, consumer, dataset, contract),
        // Anything unusual (escapes, other value types, a missing field) goes through the
        // full parser, which also gives the precise reason for a malformed line.
        None => match serde_json::from_slice::<RawRead>(line) {
            Ok(r) => fold(scan, req, &r.at, &r.consumer, &r.dataset, &r.contract),
            Err(e) => Err(format!("not a JSON read record: {e}")),
        },
    }
}
