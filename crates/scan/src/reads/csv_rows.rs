//! CSV logs: a header naming the columns, then one read per record.

use std::io::Read;

use super::blocks::{fold, scan_blocks, FileScan, Fold, Partial, ReadError};
use super::fields::Mapping;

/// CSV logs are cut into blocks at record boundaries ([`record_end`]: a line break outside
/// a quoted field) and scanned in parallel like JSON Lines ([`scan_blocks`]). The header is
/// read first, from the file's first record, to find the columns; the first block reads it
/// again as its header, so every block is read by the same `csv` reader a whole-file scan
/// uses, and line numbers are the file's.
pub fn scan_csv<R: Read + Send, S: Fold>(
    mut file: R,
    mut into: FileScan<'_, S>,
    mapping: &Mapping,
) -> Result<(), ReadError> {
    let path = into.path;
    let io = |source| ReadError {
        path: path.to_path_buf(),
        source,
    };
    // The bytes up to the end of the header record (or all of a file without a break).
    let mut head = Vec::new();
    loop {
        let n = (&mut file)
            .take(1 << 16)
            .read_to_end(&mut head)
            .map_err(io)?;
        if n == 0 || record_end(&head).is_some() {
            break;
        }
    }
    let mut reader = builder(true).from_reader(&head[..]);
    let headers = match reader.byte_headers() {
        Ok(h) => h.clone(),
        Err(e) => return csv_failure(&mut into, e, io),
    };
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim_ascii() == name.as_bytes())
    };
    let mut slots = [None; 4];
    let mut missing = Vec::new();
    for (slot, name) in slots.iter_mut().zip(mapping.columns()) {
        if let Some(name) = name {
            match col(name) {
                Some(i) => *slot = Some(i),
                None => missing.push(name.as_str()),
            }
        }
    }
    if !missing.is_empty() {
        let reason = format!(
            "the header has no column {}; the file is skipped",
            missing.join(", ")
        );
        into.malformed(1, reason);
        return Ok(());
    }
    let rows = Rows {
        cols: Columns {
            slots,
            count: headers.len(),
            need: slots.iter().flatten().copied().max().unwrap_or(0),
        },
        mapping,
        req: into.req,
    };
    let whole = std::io::Cursor::new(head).chain(file);
    scan_blocks(whole, into, &record_end, &|k, block, acc| {
        rows.scan_records(block, k == 0, acc)
    })
}

/// The reader every block is read with.
fn builder(headers: bool) -> csv::ReaderBuilder {
    let mut b = csv::ReaderBuilder::new();
    b.has_headers(headers)
        // A row with a missing or extra field is reported as malformed, not a fatal error.
        .flexible(true);
    b
}

/// Where the columns of a read are: per slot of the mapping (at, consumer, dataset,
/// contract), `None` for a constant.
struct Columns {
    slots: [Option<usize>; 4],
    /// Fields in the header.
    count: usize,
    /// The highest column read.
    need: usize,
}

/// The last line break of `b` that ends a record, `b` starting at a record's start: a break
/// inside a quoted field (`"two\nlines"`) does not. The same rules as the `csv` reader: a
/// quote opens a quoted field only as the field's first byte, `""` inside one is a quote,
/// and `\r`, `\n` and `\r\n` end a record.
pub fn record_end(b: &[u8]) -> Option<usize> {
    if memchr::memchr(b'"', b).is_none() {
        return memchr::memrchr(b'\n', b);
    }
    let (mut quoted, mut field_start, mut last) = (false, true, None);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        i += 1;
        if quoted {
            if c == b'"' {
                if b.get(i) == Some(&b'"') {
                    i += 1;
                } else {
                    quoted = false;
                }
            }
            continue;
        }
        match c {
            b'"' if field_start => {
                quoted = true;
                field_start = false;
            }
            b'\n' => {
                last = Some(i - 1);
                field_start = true;
            }
            b',' | b'\r' => field_start = true,
            _ => field_start = false,
        }
    }
    last
}

/// Line numbers (1-based, in the block) for records at byte offsets, in order. A record's
/// line is that of its first byte: the reader's own count places a record after a `\r\n`
/// on the line before (it counts the `\n` as part of the next record), so it is not used.
fn numbered(block: &[u8], at: Vec<(u64, String)>) -> Vec<(u64, String)> {
    let mut line = 1u64;
    let mut from = 0usize;
    at.into_iter()
        .map(|(offset, reason)| {
            let mut o = usize::try_from(offset)
                .unwrap_or(block.len())
                .min(block.len());
            while o < block.len() && matches!(block[o], b'\r' | b'\n') {
                o += 1;
            }
            let o = o.max(from);
            line += memchr::memchr_iter(b'\n', &block[from..o]).count() as u64;
            from = o;
            (line, reason)
        })
        .collect()
}

/// What every block of one CSV file is read with: where the read's columns are, the
/// source's mapping and the request.
struct Rows<'a, S: Fold> {
    cols: Columns,
    mapping: &'a Mapping,
    req: &'a S::Request,
}

impl<S: Fold> Rows<'_, S> {
    /// Scan one block of whole records; the first block starts with the header.
    fn scan_records(&self, block: &[u8], header: bool, acc: &mut S) -> Partial {
        if plain(block) {
            return self.scan_plain(block, header, acc);
        }
        let breaks = memchr::memchr_iter(b'\n', block).count() as u64;
        let mut reader = builder(header).from_reader(block);
        let mut lines = 0u64;
        if header {
            // Already read and checked by `scan_csv`.
            let _ = reader.byte_headers();
            lines += 1;
        }
        let mut malformed = Vec::new();
        let mut record = csv::ByteRecord::new();
        loop {
            match reader.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => {
                    // Reading a slice fails with no I/O error: this is a record the reader
                    // refuses.
                    lines += 1;
                    acc.count_malformed();
                    let at = e.position().map_or(0, |p| p.byte());
                    malformed.push((at, e.to_string()));
                    continue;
                }
            }
            lines += 1;
            let offset = record.position().map_or(0, |p| p.byte());
            if let Err(reason) = self.judge(acc, record.len(), |i| record.get(i)) {
                acc.count_malformed();
                malformed.push((offset, reason));
            }
        }
        Partial {
            lines,
            breaks,
            malformed: numbered(block, malformed),
        }
    }

    /// One record whose fields `get` gives (`len` of them); `Err` is why it is malformed.
    fn judge<'f>(
        &self,
        acc: &mut S,
        len: usize,
        get: impl Fn(usize) -> Option<&'f [u8]>,
    ) -> Result<(), String> {
        let Rows { cols, mapping, req } = self;
        let field = |i: usize| -> Result<&'f [u8], String> {
            let raw =
                get(i).ok_or_else(|| format!("expected {} fields, found {len}", cols.count))?;
            std::str::from_utf8(raw).map_err(|_| "a field is not UTF-8".to_string())?;
            Ok(raw)
        };
        // Another dataset's record is skipped before its other fields are looked at.
        let dataset = match (cols.slots[2], mapping.constant_dataset()) {
            (Some(i), _) => field(i)?,
            (None, d) => d.unwrap_or_default().as_bytes(),
        };
        if !S::is_requested(req, std::str::from_utf8(dataset).unwrap_or_default()) {
            return Ok(());
        }
        let mut fields = [None; 4];
        for (f, col) in fields.iter_mut().zip(cols.slots) {
            if let Some(i) = col {
                *f = Some(field(i)?);
            }
        }
        let r = mapping.flat(fields)?;
        fold(acc, req, r.at, &r.consumer, &r.dataset, &r.contract)
    }
}

/// Whether a block can be split without the `csv` reader: no quote (so no quoted field and
/// no record across lines) and no `\r` (so `\n` alone ends a record). The `csv` reader then
/// gives exactly the comma-separated pieces of each line that is not empty (it skips empty
/// lines, and so does [`Rows::scan_plain`]; tested against it in
/// `plain_blocks_split_as_the_csv_reader_does`).
pub fn plain(block: &[u8]) -> bool {
    memchr::memchr2(b'"', b'\r', block).is_none()
}

/// The most fields a record of a plain block is split into before the line is left to the
/// `csv` reader (only the count is needed beyond that).
const MAX_FIELDS: usize = 32;

/// The line of a [`plain`] block starting at `start`, split at its commas: how many fields
/// (the first [`MAX_FIELDS`] in `fields`), where the line ends (its break, or the block's
/// end) and whether it is ASCII. One pass, eight bytes at a time: the commas and the break
/// of a word are found together, where a `memchr` call per comma and per line, and a check
/// of the line's ASCII, were each a part of the worst case.
// Once per line, from the block reader's closure, which the main crate instantiates: it was
// inlined there while both sat in one crate, and is kept so (callgrind, shape c).
#[inline(always)]
pub fn split_line<'a>(
    block: &'a [u8],
    start: usize,
    fields: &mut [&'a [u8]; MAX_FIELDS],
) -> (usize, usize, bool) {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const COMMAS: u64 = 0x2c2c_2c2c_2c2c_2c2c;
    const BREAKS: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    // 0x80 in exactly the bytes of `x` that are zero (no carry crosses a byte).
    let zeros = |x: u64| !(((x & LOW7) + LOW7) | x | LOW7);
    let (mut n, mut from, mut high) = (0usize, start, 0u64);
    let mut cut = |end: usize, n: &mut usize, from: &mut usize| {
        if *n < MAX_FIELDS {
            fields[*n] = &block[*from..end];
        }
        *n += 1;
        *from = end + 1;
    };
    let mut i = start;
    while let Some(word) = block.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_le_bytes(w);
        let breaks = zeros(w ^ BREAKS);
        // The bytes before the word's first break, if it has one.
        let own = if breaks == 0 {
            u64::MAX
        } else {
            (1u64 << breaks.trailing_zeros()) - 1
        };
        high |= w & HIGH & own;
        let mut commas = zeros(w ^ COMMAS) & own;
        while commas != 0 {
            cut(
                i + (commas.trailing_zeros() / 8) as usize,
                &mut n,
                &mut from,
            );
            commas &= commas - 1;
        }
        if breaks != 0 {
            let end = i + (breaks.trailing_zeros() / 8) as usize;
            cut(end, &mut n, &mut from);
            return (n, end, high == 0);
        }
        i += 8;
    }
    for (k, &c) in block.iter().enumerate().skip(i) {
        match c {
            b',' => cut(k, &mut n, &mut from),
            b'\n' => {
                cut(k, &mut n, &mut from);
                return (n, k, high == 0);
            }
            _ => high |= u64::from(c & 0x80),
        }
    }
    cut(block.len(), &mut n, &mut from);
    (n, block.len(), high == 0)
}

impl<S: Fold> Rows<'_, S> {
    /// [`Rows::scan_records`] for a [`plain`] block: each line is a record, split at its commas.
    fn scan_plain(&self, block: &[u8], header: bool, acc: &mut S) -> Partial {
        let Rows { cols, mapping, req } = self;
        // Breaks are counted as the lines are split, not in a pass of their own.
        let (mut lines, mut breaks) = (0u64, 0u64);
        let mut malformed = Vec::new();
        let mut fields: [&[u8]; MAX_FIELDS] = [&[]; MAX_FIELDS];
        let need = cols.need;
        let mut pos = 0;
        while pos < block.len() {
            let offset = pos;
            let (n, end, ascii) = split_line(block, pos, &mut fields);
            let line = &block[pos..end];
            pos = end + 1;
            breaks += u64::from(end < block.len());
            if line.is_empty() {
                // The `csv` reader skips an empty line: no record, and not counted.
                continue;
            }
            lines += 1;
            if header && lines == 1 {
                continue;
            }
            let result = if need < MAX_FIELDS && n > need && ascii {
                // Every field is there, and ASCII, so UTF-8: the dataset first (another one's read
                // is skipped before anything else is looked at), then the read.
                let field = |s: usize| cols.slots[s].map(|c| fields[c]);
                let dataset = match (field(2), mapping.constant_dataset()) {
                    (Some(d), _) => d,
                    (None, d) => d.unwrap_or_default().as_bytes(),
                };
                match acc.dataset_index(dataset) {
                    None => Ok(()),
                    Some(d) => {
                        let all = [field(0), field(1), field(2), field(3)];
                        match mapping.flat_quick(all) {
                            Some((at, consumer, contract)) => {
                                acc.fold_into(req, d, at, consumer, contract)
                            }
                            None => mapping.flat(all).and_then(|r| {
                                acc.fold_into(req, d, r.at, &r.consumer, &r.contract)
                            }),
                        }
                    }
                }
            } else if need < MAX_FIELDS {
                self.judge(acc, n, |i| (i < n).then(|| fields[i]))
            } else {
                let all: Vec<&[u8]> = line.split(|&c| c == b',').collect();
                self.judge(acc, n, |i| all.get(i).copied())
            };
            if let Err(reason) = result {
                acc.count_malformed();
                malformed.push((offset as u64, reason));
            }
        }
        Partial {
            lines,
            breaks,
            malformed: numbered(block, malformed),
        }
    }
}

/// A CSV error before or between records: I/O is the environment's, anything else makes the
/// file unusable and is reported as malformed at its position.
fn csv_failure<S: Fold>(
    into: &mut FileScan<'_, S>,
    e: csv::Error,
    io: impl Fn(std::io::Error) -> ReadError,
) -> Result<(), ReadError> {
    let line = e.position().map_or(1, |p| p.line());
    match e.into_kind() {
        csv::ErrorKind::Io(source) => Err(io(source)),
        other => {
            into.malformed(line, format!("{other:?}"));
            Ok(())
        }
    }
}
