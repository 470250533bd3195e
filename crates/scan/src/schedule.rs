//! The one block scheduler of the crate: a file read in pieces cut where a line (a record)
//! ends, the pieces parsed on every core, and what each came to handed out in the file's
//! order on the calling thread. Both text readers are the work of a piece and the hand-out
//! only: the logs of reads (`reads::blocks::scan_blocks`), whose workers fold into states of
//! their own merged at the end, and the access logs (`access::parallel`), whose hits are
//! folded into bursts in order on the calling thread, and whose hand-out parses a piece again
//! when the piece before left a CSV record open (it is handed the piece's bytes for that).
//!
//! Whichever thread needs a piece reads it (one at a time, under a lock: the file is read in
//! order), so the copy out of the page cache is shared by every core instead of holding up
//! the hand-out. The calling thread hands out each piece as soon as the pieces before it are
//! handed out, and reads and parses a piece itself whenever none is ready to be handed out:
//! where the hand-out is heavy (the bursts of an access log) it parses little, where it is
//! light (a line count) it is one more core's worth of parsing. `threads - 1` workers read
//! and parse the rest. At most [`window`] pieces are read and not yet handed out, so memory
//! stays bounded however slow the hand-out is.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{mpsc, Condvar, Mutex, MutexGuard, PoisonError};

/// How many pieces per thread may be read and not yet handed out, and how many in all. The
/// hand-out's work comes unevenly: an access log's bursts close in a batch each few hours of
/// log time, and the calling thread also parses a piece whenever none is ready. With a few
/// pieces of room a worker found the window full and waited, idle for a good part of a
/// dense warehouse scan on two cores; sixteen carry it through (`bench/RESULTS.md`). The cap
/// keeps a many-core machine's read-ahead at 64 MiB of 512 KiB pieces.
pub(crate) const PIECES_PER_THREAD: usize = 16;
pub(crate) const MOST_PIECES_AHEAD: usize = 128;

/// The pieces that may be read ahead of the hand-out on `threads` threads.
pub(crate) fn window(threads: usize) -> usize {
    (PIECES_PER_THREAD * threads.max(1)).min(MOST_PIECES_AHEAD)
}

/// One piece of the file: whole lines (records), cut at the caller's break.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Piece<'a> {
    /// 0 for the file's first piece.
    pub index: usize,
    /// Of the piece's first byte in the input.
    pub offset: usize,
    pub bytes: &'a [u8],
}

/// What is done to each piece, on whichever thread takes it: each thread keeps a state of its
/// own (in its own core's cache), returned at the end for the caller to merge.
pub(crate) trait Work: Sync {
    /// What a thread keeps from piece to piece.
    type State: Send;
    /// What a piece comes to, handed out in the file's order.
    type Out: Send;
    /// A thread's state before its first piece.
    fn start(&self) -> Self::State;
    /// Parse one piece.
    fn piece(&self, state: &mut Self::State, piece: Piece<'_>) -> Self::Out;
    /// Done with `state`: on the thread that kept it, before it is returned.
    fn end(&self, _state: &mut Self::State) {}
}

/// How a file is taken: bytes per piece (a line longer is read whole into one piece), and the
/// threads that parse, the calling thread one of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sizes {
    pub piece: usize,
    pub threads: usize,
}

/// Why a scan stopped before the file's end.
pub(crate) enum Stop<E> {
    /// The input failed: every piece read before was handed out.
    Read(std::io::Error),
    /// The hand-out said stop.
    HandOut(E),
}

/// The threads' states (the calling thread's first), and how the scan ended.
pub(crate) struct Outcome<S, E> {
    pub states: Vec<S>,
    pub result: Result<(), Stop<E>>,
}

/// What takes each piece's [`Work::Out`] in the file's order, with the piece; `Err` stops.
pub(crate) type HandOut<'h, O, E> = dyn FnMut(Piece<'_>, O) -> Result<(), E> + 'h;

/// A piece read and not yet handed out.
struct Job {
    index: usize,
    offset: usize,
    /// The piece is `buf[..len]`; the rest is room kept from earlier pieces.
    buf: Vec<u8>,
    len: usize,
}

impl Job {
    fn piece(&self) -> Piece<'_> {
        Piece {
            index: self.index,
            offset: self.offset,
            bytes: &self.buf[..self.len],
        }
    }
}

/// The input and where its reading stands, taken by whichever thread needs a piece.
struct Input<R> {
    input: R,
    reading: Reading,
    /// Pieces read, and pieces handed out: at most `window` apart.
    read: usize,
    handed: usize,
    window: usize,
    failure: Option<std::io::Error>,
    /// No piece is to be read any more: the hand-out said stop, or a thread unwound.
    closed: bool,
    /// Buffers of pieces handed out, filled again: fresh pages would cost a page fault per
    /// 4 KiB.
    spare: Vec<Vec<u8>>,
}

impl<R> Input<R> {
    /// No piece will be read any more.
    fn over(&self) -> bool {
        self.closed || self.failure.is_some() || self.reading.done()
    }
}

struct Shared<R> {
    input: Mutex<Input<R>>,
    /// Signalled when a piece is handed out (so one more may be read) or the scan closes.
    room: Condvar,
}

/// Closes the input when dropped, also when a thread unwinds: the workers then stop, so
/// neither the calling thread nor the scope's join waits on a thread that will never send.
struct Closer<'a, R>(&'a Shared<R>);

impl<R> Drop for Closer<'_, R> {
    fn drop(&mut self) {
        lock(&self.0.input).closed = true;
        self.0.room.notify_all();
    }
}

/// Scan `input` in pieces of about `sizes.piece` bytes, each ending just after a break `cut`
/// finds (the last in the bytes it is given; at the end of the input, all that is left).
/// Each piece's [`Work::Out`] goes to `hand_out` in the file's order, with the piece; an
/// `Err` from it stops the scan. A read that fails stops the reading, the pieces read before
/// are handed out, and the error is returned.
pub(crate) fn run<R: Read + Send, W: Work, E>(
    input: R,
    sizes: Sizes,
    cut: &(dyn Fn(&[u8]) -> Option<usize> + Sync),
    work: &W,
    hand_out: &mut HandOut<'_, W::Out, E>,
) -> Outcome<W::State, E> {
    let threads = sizes.threads.max(1);
    let shared = Shared {
        input: Mutex::new(Input {
            input,
            reading: Reading {
                carry: Vec::new(),
                eof: false,
                offset: 0,
            },
            read: 0,
            handed: 0,
            window: window(threads),
            failure: None,
            closed: false,
            spare: Vec::new(),
        }),
        room: Condvar::new(),
    };
    let size = sizes.piece;
    let (to_hand, parsed) = mpsc::channel::<(Job, W::Out)>();
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads)
            .map(|_| {
                let (shared, to_hand) = (&shared, to_hand.clone());
                s.spawn(move || worker(shared, size, cut, work, &to_hand))
            })
            .collect();
        drop(to_hand);
        let closer = Closer(&shared);
        let mut own = work.start();
        // Pieces parsed ahead of their turn, by index.
        let mut waiting = BTreeMap::new();
        let mut handed = 0usize;
        let mut done = Vec::new();
        let result = loop {
            let before = handed;
            let stop = hand_ready(&mut waiting, &mut handed, &mut done, hand_out);
            let (read, over) = {
                let mut input = lock(&shared.input);
                input.handed = handed;
                input.spare.append(&mut done);
                if stop.is_some() {
                    input.closed = true;
                }
                (input.read, input.over())
            };
            // Room for another piece only when one was handed out (or the scan closes).
            if handed != before || stop.is_some() {
                shared.room.notify_all();
            }
            if let Some(stop) = stop {
                break Err(Stop::HandOut(stop));
            }
            if over && handed == read {
                let failure = lock(&shared.input).failure.take();
                break failure.map_or(Ok(()), |e| Err(Stop::Read(e)));
            }
            // Nothing to hand out: a piece a worker parsed, or the next piece read and
            // parsed here, or else wait for a worker's.
            if let Ok((job, out)) = parsed.try_recv() {
                waiting.insert(job.index, (job, out));
                continue;
            }
            match take(&shared, size, cut, false) {
                Some(job) => {
                    let out = work.piece(&mut own, job.piece());
                    waiting.insert(job.index, (job, out));
                }
                None if waiting.contains_key(&handed) => {}
                None => {
                    // The next piece to hand out is a worker's (or no piece is left, which
                    // the check above sees once this returns).
                    let gone = {
                        let input = lock(&shared.input);
                        input.over() && input.read == handed
                    };
                    if gone {
                        continue;
                    }
                    match parsed.recv() {
                        Ok((job, out)) => {
                            waiting.insert(job.index, (job, out));
                        }
                        // Every worker is gone: one panicked, and the join below says so.
                        Err(_) => break Ok(()),
                    }
                }
            }
        };
        drop(closer);
        work.end(&mut own);
        let mut states = vec![own];
        // A worker that panicked has lost its pieces: the panic goes on, as in a sequential
        // scan.
        states.extend(
            helpers
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
        );
        Outcome { states, result }
    })
}

/// Hand out the pieces whose turn has come, their buffers put in `done`; `Some` when the
/// hand-out said stop.
fn hand_ready<O, E>(
    waiting: &mut BTreeMap<usize, (Job, O)>,
    handed: &mut usize,
    done: &mut Vec<Vec<u8>>,
    hand_out: &mut HandOut<'_, O, E>,
) -> Option<E> {
    while let Some((job, out)) = waiting.remove(handed) {
        if let Err(stop) = hand_out(job.piece(), out) {
            return Some(stop);
        }
        *handed += 1;
        done.push(job.buf);
    }
    None
}

/// Read the next piece, on the thread that asks: the copy out of the page cache is a good
/// part of a scan's time, and done on the calling thread it held up the hand-out, which is
/// the one part that cannot be shared. `None` when no piece is left to read, or (`wait`
/// false) when as many pieces as the window allows are read and not yet handed out; with
/// `wait`, the thread waits for room instead.
fn take<R: Read>(
    shared: &Shared<R>,
    size: usize,
    cut: &dyn Fn(&[u8]) -> Option<usize>,
    wait: bool,
) -> Option<Job> {
    let mut input = lock(&shared.input);
    loop {
        if input.over() {
            return None;
        }
        if input.read - input.handed < input.window {
            break;
        }
        if !wait {
            return None;
        }
        input = shared
            .room
            .wait(input)
            .unwrap_or_else(PoisonError::into_inner);
    }
    let mut buf = input.spare.pop().unwrap_or_default();
    let Input {
        input: r, reading, ..
    } = &mut *input;
    match reading.next(r, &mut buf, size, cut) {
        Ok(Some((offset, len))) => {
            let index = input.read;
            input.read += 1;
            Some(Job {
                index,
                offset,
                buf,
                len,
            })
        }
        Ok(None) => None,
        Err(e) => {
            input.failure = Some(e);
            None
        }
    }
}

/// A worker: read and parse pieces until none is left.
fn worker<R: Read, W: Work>(
    shared: &Shared<R>,
    size: usize,
    cut: &dyn Fn(&[u8]) -> Option<usize>,
    work: &W,
    to_hand: &mpsc::Sender<(Job, W::Out)>,
) -> W::State {
    let _closer = Closer(shared);
    let mut state = work.start();
    while let Some(job) = take(shared, size, cut, true) {
        let out = work.piece(&mut state, job.piece());
        if to_hand.send((job, out)).is_err() {
            break;
        }
    }
    work.end(&mut state);
    state
}

/// A poisoned lock only means another thread panicked while holding it; its panic goes on
/// when the workers are joined.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where the reading of the input stands.
struct Reading {
    /// What followed the last piece's break, read already: the next piece's start.
    carry: Vec<u8>,
    eof: bool,
    /// Of the next piece in the input.
    offset: usize,
}

impl Reading {
    fn done(&self) -> bool {
        self.eof && self.carry.is_empty()
    }

    /// Read the next piece into `buf`'s first bytes: what was carried over and up to `size`
    /// bytes more, ending at the last break `cut` finds (at the end of the input, all that
    /// is left); what follows that break is carried into the next piece. A line longer than
    /// a piece is read whole into one piece. The piece's offset and length; `None` once the
    /// input is read.
    ///
    /// `buf` keeps its length, all of it written: a buffer filled again is not zeroed
    /// again, and reads go straight into it in steps of `size` (`read_to_end`, which need
    /// not zero, starts at 8 KiB and doubles, and a read smaller than the input's buffer,
    /// 64 KiB for an access log, is copied through that buffer).
    fn next(
        &mut self,
        input: &mut impl Read,
        buf: &mut Vec<u8>,
        size: usize,
        cut: &dyn Fn(&[u8]) -> Option<usize>,
    ) -> std::io::Result<Option<(usize, usize)>> {
        let size = size.max(1);
        let mut len = self.carry.len();
        if buf.len() < len {
            buf.resize(len, 0);
        }
        buf[..len].copy_from_slice(&self.carry);
        self.carry.clear();
        while !self.eof {
            if buf.len() < len + size {
                buf.resize(len + size, 0);
            }
            let n = match read_full(input, &mut buf[len..len + size]) {
                Ok(n) => n,
                Err(e) => {
                    // What was read of this piece is dropped with it: only whole pieces
                    // are handed out.
                    self.eof = true;
                    return Err(e);
                }
            };
            len += n;
            if n < size {
                self.eof = true;
            } else if let Some(i) = cut(&buf[..len]) {
                self.carry.extend_from_slice(&buf[i + 1..len]);
                len = i + 1;
            } else {
                // A line longer than a piece so far: read on into the same buffer.
                continue;
            }
            break;
        }
        if len == 0 {
            return Ok(None);
        }
        let offset = self.offset;
        self.offset += len;
        Ok(Some((offset, len)))
    }
}

/// Fill `buf` from `input`; fewer bytes only at the input's end. How many.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the pieces each thread parsed, and gives back each piece's text.
    struct Echo;

    impl Work for Echo {
        type State = usize;
        type Out = Vec<u8>;
        fn start(&self) -> usize {
            0
        }
        fn piece(&self, parsed: &mut usize, piece: Piece<'_>) -> Vec<u8> {
            *parsed += 1;
            piece.bytes.to_vec()
        }
    }

    fn lines(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("line {}{}\n", i, "x".repeat(i % 7)).into_bytes())
            .collect()
    }

    /// What `run` hands out of `input`: each piece's index, offset and bytes.
    type Heard = Vec<(usize, usize, Vec<u8>)>;

    fn hear<E>(
        input: impl Read + Send,
        sizes: Sizes,
        stop_at: Option<(usize, E)>,
    ) -> (Heard, usize, Result<(), Stop<E>>) {
        let mut heard = Vec::new();
        let mut stop_at = stop_at;
        let mut hand_out = |p: Piece<'_>, out: Vec<u8>| {
            assert_eq!(out, p.bytes, "the hand-out gets the piece's own bytes");
            if stop_at.as_ref().is_some_and(|(k, _)| *k == p.index) {
                return Err(stop_at.take().map(|(_, e)| e).expect("set"));
            }
            heard.push((p.index, p.offset, out));
            Ok(())
        };
        let cut = |b: &[u8]| memchr::memrchr(b'\n', b);
        let outcome = run(input, sizes, &cut, &Echo, &mut hand_out);
        assert_eq!(outcome.states.len(), sizes.threads.max(1));
        let parsed = outcome.states.iter().sum();
        (heard, parsed, outcome.result)
    }

    #[test]
    fn pieces_are_handed_out_in_order_whole_lines_and_every_byte_once() {
        let file = lines(300);
        for piece in [1, 2, 7, 40, 333, 1 << 16] {
            for threads in [0, 1, 2, 3, 5] {
                let sizes = Sizes { piece, threads };
                let (heard, parsed, result) = hear::<()>(&file[..], sizes, None);
                assert!(result.is_ok());
                assert_eq!(parsed, heard.len(), "each piece parsed once");
                let mut at = 0;
                for (k, (index, offset, bytes)) in heard.iter().enumerate() {
                    assert_eq!((*index, *offset), (k, at), "{sizes:?}");
                    assert!(bytes.ends_with(b"\n") && !bytes.is_empty());
                    at += bytes.len();
                }
                assert_eq!(concat(&heard), file, "{sizes:?}");
            }
        }
    }

    fn concat(heard: &Heard) -> Vec<u8> {
        heard
            .iter()
            .flat_map(|(_, _, b)| b.iter().copied())
            .collect()
    }

    /// Notes, for every piece it parses, how far ahead of the hand-out it was taken.
    struct Ahead<'a> {
        handed: &'a std::sync::atomic::AtomicUsize,
        most: &'a std::sync::atomic::AtomicUsize,
    }

    impl Work for Ahead<'_> {
        type State = ();
        type Out = ();
        fn start(&self) {}
        fn piece(&self, _: &mut (), piece: Piece<'_>) {
            use std::sync::atomic::Ordering::SeqCst;
            // `handed` only grows, so what it says now is at least what it was at the take.
            let ahead = piece.index + 1 - self.handed.load(SeqCst);
            self.most.fetch_max(ahead, SeqCst);
        }
    }

    #[test]
    fn no_more_pieces_are_read_ahead_of_the_hand_out_than_the_window_allows() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let file = lines(8000);
        // Nine threads pass the cap.
        for threads in [1, 2, 3, 9] {
            let (handed, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let work = Ahead {
                handed: &handed,
                most: &most,
            };
            // A slow hand-out, so that the readers run ahead as far as they may.
            let mut hand_out = |p: Piece<'_>, ()| -> Result<(), ()> {
                std::thread::sleep(std::time::Duration::from_micros(50));
                handed.store(p.index + 1, SeqCst);
                Ok(())
            };
            let cut = |b: &[u8]| memchr::memrchr(b'\n', b);
            let sizes = Sizes { piece: 64, threads };
            let outcome = run(&file[..], sizes, &cut, &work, &mut hand_out);
            assert!(outcome.result.is_ok());
            let window = window(threads);
            assert_eq!(window, (16 * threads).min(128));
            let most = most.load(SeqCst);
            assert!(most <= window, "{most} pieces ahead, {threads} threads");
            // Far more pieces than the window: the bound was tested, not just never reached.
            assert!(handed.load(SeqCst) > 10 * window);
        }
    }

    /// Gives `good` bytes, then fails.
    struct Failing<'a> {
        good: &'a [u8],
    }

    impl Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.good.is_empty() {
                return Err(std::io::Error::other("the disk is gone"));
            }
            let n = buf.len().min(self.good.len()).min(5);
            buf[..n].copy_from_slice(&self.good[..n]);
            self.good = &self.good[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_read_that_fails_hands_out_the_whole_pieces_read_before_and_says_why() {
        let file = lines(100);
        for threads in [1, 2, 4] {
            let sizes = Sizes { piece: 64, threads };
            let (heard, _, result) = hear::<()>(Failing { good: &file }, sizes, None);
            let Err(Stop::Read(e)) = result else {
                panic!("the failure is returned")
            };
            assert_eq!(e.to_string(), "the disk is gone");
            let got = concat(&heard);
            assert!(!got.is_empty() && file.starts_with(&got), "{threads}");
            // Only the piece the failure cut short is missing: less than a piece and a line.
            assert!(file.len() - got.len() < 64 + 20, "{threads}");
        }
    }

    #[test]
    fn a_hand_out_that_says_stop_stops_the_scan() {
        let file = lines(500);
        for threads in [1, 2, 4] {
            let sizes = Sizes { piece: 50, threads };
            let (heard, _, result) = hear(&file[..], sizes, Some((9, "stop")));
            assert!(matches!(result, Err(Stop::HandOut("stop"))));
            assert_eq!(heard.len(), 9, "the pieces before the stop, no more");
        }
    }

    #[test]
    #[should_panic(expected = "boom")]
    fn a_piece_that_panics_panics_the_scan_rather_than_hanging_it() {
        let mut file = lines(200);
        file.extend_from_slice(b"boom\n");
        file.extend(lines(200));
        let sizes = Sizes {
            piece: 40,
            threads: 3,
        };
        let cut = |b: &[u8]| memchr::memrchr(b'\n', b);
        struct Boom;
        impl Work for Boom {
            type State = ();
            type Out = ();
            fn start(&self) {}
            fn piece(&self, _: &mut (), piece: Piece<'_>) {
                assert!(!piece.bytes.windows(4).any(|w| w == b"boom"), "boom");
            }
        }
        let _ = run::<_, _, ()>(&file[..], sizes, &cut, &Boom, &mut |_, ()| Ok(()));
    }
}
