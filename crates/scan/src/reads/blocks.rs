//! A text log of reads in blocks: the file is read in blocks cut where a line (a CSV record)
//! ends, and the blocks are scanned on all cores ([`scan_blocks`], on the crate's one block
//! scheduler), their line counts and malformed lines taken in file order. What the blocks'
//! reads are folded into is the caller's ([`Accumulator`]: the `contracts` crate's scan), one
//! per thread, merged at the end.

use std::path::{Path, PathBuf};

use super::timestamps::At;
use crate::schedule::{self, Outcome, Piece, Sizes, Stop, Work};

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
/// last such break in a buffer), on the crate's one block scheduler (`crate::schedule`): the
/// calling thread reads the blocks, and they are scanned on every core, the calling thread's
/// among them. Each thread keeps its own accumulator of newest reads, in its own core's
/// cache, merged once at the end (the merge does not depend on order). Line counts and
/// malformed lines are taken in file order, so line numbers and the order of malformed-line
/// reports are those of a sequential scan and the result does not depend on the thread
/// count. `per_block` gets the block's number (0 for the first).
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
    let sizes = Sizes {
        piece: block_size,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let mut first_line = 1u64;
    let mut hand_out = |_: Piece<'_>, p: Partial| -> Result<(), std::convert::Infallible> {
        for (line, reason) in p.malformed {
            on_malformed(&Malformed {
                file: path.to_path_buf(),
                line: first_line + line - 1,
                reason,
            });
        }
        first_line += p.breaks;
        scan.count_lines(p.lines);
        Ok(())
    };
    let blocks = Blocks { req, per_block };
    let Outcome { states, result } = schedule::run(file, sizes, cut, &blocks, &mut hand_out);
    for part in states {
        scan.absorb(part);
    }
    // Reads before a failure (a truncated gzip stream, an I/O error) still count.
    match result {
        Ok(()) => Ok(()),
        Err(Stop::Read(source)) => Err(ReadError {
            path: path.to_path_buf(),
            source,
        }),
        Err(Stop::HandOut(never)) => match never {},
    }
}

/// A block's scan, for the scheduler: each thread folds into an accumulator of its own.
struct Blocks<'a, S: Accumulator> {
    req: &'a S::Request,
    per_block: &'a (dyn Fn(usize, &[u8], &mut S) -> Partial + Sync),
}

impl<S: Accumulator> Work for Blocks<'_, S> {
    type State = S;
    type Out = Partial;

    fn start(&self) -> S {
        S::for_request(self.req)
    }

    fn piece(&self, acc: &mut S, block: Piece<'_>) -> Partial {
        (self.per_block)(block.index, block.bytes, acc)
    }

    /// What the thread still holds back is folded in on the thread, before the merge.
    fn end(&self, acc: &mut S) {
        acc.flush();
    }
}
