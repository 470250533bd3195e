//! The block scheduler of a text log: the file is read in blocks cut where a line (a CSV
//! record) ends, and the blocks are scanned on all cores ([`scan_blocks`]), their line counts
//! and malformed lines taken in file order. What the blocks' reads are folded into is the
//! caller's ([`Accumulator`]: the `contracts` crate's scan), one per worker, merged at the end.

use std::path::{Path, PathBuf};

use super::timestamps::At;

/// What a block reader folds reads into: one per worker, in its own core's cache, merged
/// once at the end (the merge must not depend on order).
pub trait Accumulator: Send + Sized {
    /// What the scan is asked for, which a worker's accumulator starts from.
    type Request: Sync;
    /// An empty accumulator for `req`.
    fn for_request(req: &Self::Request) -> Self;
    /// Fold in what the worker still holds back, before it is merged.
    fn flush(&mut self);
    /// Merge a worker's accumulator into this one.
    fn absorb(&mut self, part: Self);
    /// Count `n` lines (records) read.
    fn count_lines(&mut self, n: u64);
    /// Count one malformed line.
    fn count_malformed(&mut self);
}

/// An accumulator that judges reads itself: the readers hand it each read's fields as they
/// find them, and it counts and keeps the reads of the requested datasets inside the days.
pub trait Fold: Accumulator {
    /// The one dataset asked for, when exactly one is: a reader may then skip lines that
    /// do not contain its name.
    fn only_dataset(req: &Self::Request) -> Option<&str>;
    /// Whether `dataset` is one of those asked for.
    fn is_requested(req: &Self::Request, dataset: &str) -> bool;
    /// The place of `dataset` among the requested ones; `None` when it is not requested.
    fn dataset_index(&self, dataset: &[u8]) -> Option<usize>;
    /// Judge one read of the `d`th requested dataset ([`Fold::dataset_index`]); `Err` is
    /// the reason it is malformed. `consumer` must be UTF-8 (it becomes a name), the others
    /// are checked where they are parsed.
    fn fold_into(
        &mut self,
        req: &Self::Request,
        d: usize,
        at: At<'_>,
        consumer: &[u8],
        contract: &[u8],
    ) -> Result<(), String>;
}

/// Judge one read whose fields are extracted; `Err` is the reason it is malformed. Reads of
/// datasets not requested are skipped first. The fields are bytes, so that a reader need
/// not check a whole line's UTF-8 when the fields it compares decide; `consumer` must be
/// UTF-8 (it becomes a name), the others are checked where they are parsed.
#[inline]
pub fn fold<S: Fold>(
    scan: &mut S,
    req: &S::Request,
    at: At<'_>,
    consumer: &[u8],
    dataset: &[u8],
    contract: &[u8],
) -> Result<(), String> {
    match scan.dataset_index(dataset) {
        Some(d) => scan.fold_into(req, d, at, consumer, contract),
        None => Ok(()),
    }
}

/// A line the scan could not use, with where it is and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub file: PathBuf,
    /// 1-based line number in the file.
    pub line: u64,
    pub reason: String,
}

/// A text log that could not be read to its end: the reads before the failure are kept.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct ReadError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// What one block of lines yields, taken in file order.
pub struct Partial {
    /// Lines (JSON Lines) or records (CSV) in the block, for [`Accumulator::count_lines`].
    pub lines: u64,
    /// Line breaks in the block (a CSV record may span several lines), to number the next.
    pub breaks: u64,
    /// Malformed lines: (1-based line number within the block, reason).
    pub malformed: Vec<(u64, String)>,
}

/// One file's scan, besides its bytes: the file's name for messages, the request, where
/// what it finds goes (reads into `scan`, each malformed line to `on_malformed`), and the
/// bytes per block.
pub struct FileScan<'a, S: Accumulator> {
    pub path: &'a Path,
    pub req: &'a S::Request,
    pub scan: &'a mut S,
    pub on_malformed: &'a mut dyn FnMut(&Malformed),
    pub block_size: usize,
}

impl<S: Accumulator> FileScan<'_, S> {
    /// Count a malformed line and report it.
    pub fn malformed(&mut self, line: u64, reason: String) {
        self.scan.count_malformed();
        (self.on_malformed)(&Malformed {
            file: self.path.to_path_buf(),
            line,
            reason,
        });
    }
}

/// The parallel scan of a file cut into blocks that end where a line does (`cut` gives the
/// last such break in a buffer). One worker per core takes turns at the file (the lock is
/// held only while a block is read) and scans the block it read while another reads the
/// next: no worker waits for others to finish a batch (with batches, the cores were a fifth
/// idle), and memory is a block per worker. Each worker keeps its own accumulator of newest
/// reads, in its own core's cache, merged once at the end (the merge does not depend on
/// order). Line counts and malformed lines are taken in file order, so line numbers and the
/// order of malformed-line reports are those of a sequential scan and the result does not
/// depend on the thread count. `per_block` gets the block's number (0 for the first).
pub fn scan_blocks<R: std::io::Read + Send, S: Accumulator>(
    file: R,
    into: FileScan<'_, S>,
    cut: &(dyn Fn(&[u8]) -> Option<usize> + Sync),
    per_block: &(dyn Fn(usize, &[u8], &mut S) -> Partial + Sync),
) -> Result<(), ReadError> {
    let FileScan {
        path,
        req,
        scan,
        on_malformed,
        block_size,
    } = into;
    /// The file and where its reading stands, shared by the workers.
    struct Source<R> {
        file: R,
        carry: Vec<u8>,
        eof: bool,
        next: usize,
        failure: Option<std::io::Error>,
    }
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let source = std::sync::Mutex::new(Source {
        file,
        carry: Vec::new(),
        eof: false,
        next: 0,
        failure: None,
    });
    let (to_collect, scanned) = std::sync::mpsc::channel::<(usize, Partial)>();
    let parts = std::thread::scope(|s| {
        let scanners: Vec<_> = (0..workers)
            .map(|_| {
                let (source, to_collect) = (&source, to_collect.clone());
                s.spawn(move || {
                    let mut acc = S::for_request(req);
                    // The worker's buffer, filled again for each block: fresh pages would
                    // cost a page fault per 4 KiB.
                    let mut spare = Some(Vec::new());
                    loop {
                        let (k, block) = {
                            let mut src = lock(source);
                            if src.eof || src.failure.is_some() {
                                break;
                            }
                            let Source {
                                file, carry, eof, ..
                            } = &mut *src;
                            let buf = spare.take().unwrap_or_default();
                            match read_block(file, carry, eof, buf, block_size, cut) {
                                Ok(Some(block)) => {
                                    src.next += 1;
                                    (src.next - 1, block)
                                }
                                Ok(None) => break,
                                Err(e) => {
                                    src.failure = Some(e);
                                    break;
                                }
                            }
                        };
                        let partial = per_block(k, &block, &mut acc);
                        spare = Some(block);
                        if to_collect.send((k, partial)).is_err() {
                            break;
                        }
                    }
                    acc.flush();
                    acc
                })
            })
            .collect();
        drop(to_collect);
        // Partials in file order, whatever order the workers finish in.
        let mut waiting = std::collections::BTreeMap::new();
        let (mut next, mut first_line) = (0usize, 1u64);
        for (k, partial) in scanned {
            waiting.insert(k, partial);
            while let Some(p) = waiting.remove(&next) {
                for (line, reason) in p.malformed {
                    on_malformed(&Malformed {
                        file: path.to_path_buf(),
                        line: first_line + line - 1,
                        reason,
                    });
                }
                first_line += p.breaks;
                scan.count_lines(p.lines);
                next += 1;
            }
        }
        // A worker that panicked has lost its reads: the panic goes on, as in a sequential
        // scan.
        scanners
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect::<Vec<S>>()
    });
    for part in parts {
        scan.absorb(part);
    }
    // Reads before a failure (a truncated gzip stream, an I/O error) still count.
    let failure = source
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .failure;
    failure.map_or(Ok(()), |source| {
        Err(ReadError {
            path: path.to_path_buf(),
            source,
        })
    })
}

/// A poisoned lock only means another worker panicked while reading; its panic goes on when
/// the workers are joined.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Read the next block into `buf`: what was carried over and up to `block_size` bytes more,
/// ending at the last break `cut` finds (at end of file, all that is left); what follows
/// that break is carried into the next block. A line longer than a block is read whole into
/// one block. `None` once the file is read.
fn read_block<R: std::io::Read>(
    file: &mut R,
    carry: &mut Vec<u8>,
    eof: &mut bool,
    mut buf: Vec<u8>,
    block_size: usize,
    cut: &dyn Fn(&[u8]) -> Option<usize>,
) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read as _;
    buf.clear();
    buf.append(carry);
    loop {
        if *eof {
            return Ok((!buf.is_empty()).then_some(buf));
        }
        // `take` + `read_to_end` fills the spare capacity without zeroing it first.
        let n = (&mut *file).take(block_size as u64).read_to_end(&mut buf)?;
        if n < block_size {
            *eof = true;
        } else if let Some(i) = cut(&buf) {
            carry.extend_from_slice(&buf[i + 1..]);
            buf.truncate(i + 1);
            return Ok(Some(buf));
        }
        // Else a line longer than a block so far: read on into the same buffer.
    }
}
