//! Releases in object storage: objects read through the crate's one object-store client
//! ([`crate::objects`]), by byte range.
//!
//! The readers are synchronous and run on rayon; each range request blocks on the shared
//! runtime until it arrives. Credentials and the scrubbing of messages are the client's.
//!
//! **Bytes read** are counted per object (what the store returned, request by request) so the
//! CLI can report them against the object's size.

use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Buf, Bytes};
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::file::reader::ChunkReader;

use super::parquet_source::Source;
use super::{Format, ReleaseError};
use crate::objects::{block, split_url, store_for};
pub use crate::objects::{is_url, scrub, RemoteError, RemoteFailure, SCHEMES};

/// Ranges whose gap is at most this are fetched in one request: a round trip to a cloud
/// store costs about what a mebibyte of transfer does (object_store's own default).
pub const COALESCE_BYTES: u64 = 1 << 20;

impl From<RemoteError> for ReleaseError {
    fn from(e: RemoteError) -> Self {
        ReleaseError::Remote(e)
    }
}

/// What was read of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadCount {
    pub url: String,
    pub bytes_read: u64,
    pub size: u64,
    pub requests: u64,
}

#[derive(Debug, Default)]
struct Counter {
    bytes: AtomicU64,
    requests: AtomicU64,
}

/// One object in a store, with its size and a count of what was read of it.
#[derive(Debug, Clone)]
pub struct Object {
    url: String,
    store: Arc<dyn ObjectStore>,
    key: Key,
    size: u64,
    read: Arc<Counter>,
    failed: Arc<Mutex<Option<RemoteError>>>,
}

impl Object {
    /// The first request of this object that failed. A format reader that met it saw only an
    /// I/O error or missing bytes and may call the file truncated; this is the real cause.
    pub fn failure(&self) -> Option<RemoteError> {
        self.failed.lock().ok().and_then(|f| f.clone())
    }

    /// The object's URL as printed (no user info, no query string).
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The file name the object's key ends in (its format is decided by its extension).
    pub fn file_name(&self) -> &str {
        self.key.filename().unwrap_or("")
    }

    pub fn count(&self) -> ReadCount {
        ReadCount {
            url: self.url.clone(),
            bytes_read: self.read.bytes.load(Ordering::Relaxed),
            size: self.size,
            requests: self.read.requests.load(Ordering::Relaxed),
        }
    }

    fn err(&self, e: object_store::Error) -> RemoteError {
        let e = RemoteError::of(&self.url, e);
        if let Ok(mut slot) = self.failed.lock() {
            slot.get_or_insert(e.clone());
        }
        e
    }

    fn counted(&self, b: &Bytes) {
        self.read.bytes.fetch_add(b.len() as u64, Ordering::Relaxed);
        self.read.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// The bytes in `range` (clamped to the object).
    pub fn range(&self, range: Range<u64>) -> Result<Bytes, RemoteError> {
        let range = range.start.min(self.size)..range.end.min(self.size);
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        let b = block(self.store.get_range(&self.key, range))?.map_err(|e| self.err(e))?;
        self.counted(&b);
        Ok(b)
    }

    /// Several ranges, fetched concurrently; ranges closer than [`COALESCE_BYTES`] share a
    /// request (and the gap between them is read, and counted).
    pub fn ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<(u64, Bytes)>, RemoteError> {
        let mut sorted: Vec<Range<u64>> = ranges
            .iter()
            .map(|r| r.start.min(self.size)..r.end.min(self.size))
            .filter(|r| !r.is_empty())
            .collect();
        sorted.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<u64>> = Vec::new();
        for r in sorted {
            match merged.last_mut() {
                Some(last) if r.start <= last.end + COALESCE_BYTES => {
                    last.end = last.end.max(r.end)
                }
                _ => merged.push(r),
            }
        }
        let fetches = merged.iter().map(|r| {
            let r = r.clone();
            async move {
                let start = r.start;
                self.store.get_range(&self.key, r).await.map(|b| (start, b))
            }
        });
        let got = block(futures_util::future::try_join_all(fetches))?.map_err(|e| self.err(e))?;
        for (_, b) in &got {
            self.counted(b);
        }
        Ok(got)
    }

    /// Stream the whole object into `to` (a temporary file), chunk by chunk.
    pub fn download(&self, to: &Path) -> Result<(), ReleaseError> {
        let io = |source| ReleaseError::Io {
            path: to.to_path_buf(),
            source,
        };
        let mut file = std::fs::File::create(to).map_err(io)?;
        let result: Result<Result<(), ReleaseError>, RemoteError> = block(async {
            let got = match self.store.get(&self.key).await {
                Ok(g) => g,
                Err(e) => return Err(self.err(e).into()),
            };
            let mut stream = got.into_stream();
            self.read.requests.fetch_add(1, Ordering::Relaxed);
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| self.err(e))?;
                self.read
                    .bytes
                    .fetch_add(chunk.len() as u64, Ordering::Relaxed);
                file.write_all(&chunk).map_err(io)?;
            }
            Ok(())
        });
        result??;
        file.flush().map_err(io)
    }

    /// A reader over the object that fetches it in growing sequential ranges (1 MiB, then
    /// doubling up to 16 MiB): few requests for a file read front to back, as FlatGeobuf is.
    pub fn reader(&self) -> RangeReader {
        RangeReader {
            object: self.clone(),
            pos: 0,
            buf: Bytes::new(),
            buf_start: 0,
            next_block: 1 << 20,
        }
    }

    /// A sibling object: the same key with another extension (a shapefile's `.dbf`, …), or
    /// `None` when there is none.
    pub fn sibling(&self, ext: &str) -> Result<Option<Object>, RemoteError> {
        let name = self.file_name();
        let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
        let raw = self.key.as_ref();
        let dir = raw.rsplit_once('/').map_or("", |(d, _)| d);
        let key = if dir.is_empty() {
            Key::from(format!("{stem}.{ext}"))
        } else {
            Key::from(format!("{dir}/{stem}.{ext}"))
        };
        let url = match self.url.rsplit_once('/') {
            Some((base, _)) => format!("{base}/{stem}.{ext}"),
            None => format!("{}.{ext}", self.url),
        };
        match block(self.store.head(&key))? {
            Ok(meta) => Ok(Some(Object {
                url,
                store: self.store.clone(),
                key,
                size: meta.size,
                read: self.read.clone(),
                failed: self.failed.clone(),
            })),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(RemoteError::of(&url, e)),
        }
    }
}

/// [`Object::reader`]: `Read + Seek` over an object. A failed request surfaces as an I/O
/// error to the format reader, and is kept in [`Object::failure`].
pub struct RangeReader {
    object: Object,
    pos: u64,
    buf: Bytes,
    buf_start: u64,
    next_block: u64,
}

impl Read for RangeReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.object.size || out.is_empty() {
            return Ok(0);
        }
        let in_buf =
            self.pos >= self.buf_start && self.pos < self.buf_start + self.buf.len() as u64;
        if !in_buf {
            let end = self
                .pos
                .saturating_add(self.next_block.max(out.len() as u64));
            match self.object.range(self.pos..end) {
                Ok(b) => {
                    self.buf = b;
                    self.buf_start = self.pos;
                    self.next_block = (self.next_block * 2).min(16 << 20);
                }
                Err(e) => return Err(std::io::Error::other(e.to_string())),
            }
            if self.buf.is_empty() {
                return Ok(0);
            }
        }
        let at = (self.pos - self.buf_start) as usize;
        let n = out.len().min(self.buf.len() - at);
        out[..n].copy_from_slice(&self.buf[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for RangeReader {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.object.size.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        match target {
            Some(t) => {
                self.pos = t;
                Ok(t)
            }
            None => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "seek before the start of the object",
            )),
        }
    }
}

/// Whether a listed key is a data file of a release: a known format, and no folder or file
/// name that starts with `_` or `.` (Spark's `_SUCCESS`, `_committed_*`, `.crc` files,
/// `_temporary/` folders) below the prefix.
pub fn is_data_key(relative: &str) -> bool {
    let hidden = relative
        .split('/')
        .any(|seg| seg.starts_with('_') || seg.starts_with('.'));
    !hidden && Format::of_path(Path::new(relative)).is_some()
}

/// Expand one URL argument into the objects it names: a single object, a prefix (every data
/// file below it, Hive-style `key=value/` folders included), or a glob (`*`, `?`, `[...]` in the
/// key; `*` stays within a folder, `**` crosses folders). Sorted by key.
pub fn expand(arg: &str) -> Result<Vec<Object>, RemoteError> {
    let Some((scheme, authority, rest)) = split_url(arg) else {
        return Err(RemoteError::new(arg, RemoteFailure::BadUrl, "not a URL"));
    };
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let is_http = scheme == "http" || scheme == "https";
    if is_http && rest.contains('?') {
        return Err(RemoteError::new(
            arg,
            RemoteFailure::BadUrl,
            "a URL with a query string (a presigned or SAS URL) is not read: use the store's scheme and credentials from the environment",
        ));
    }
    let store = store_for(scheme, authority, arg)?;
    let url_of = |key: &str| format!("{scheme}://{host}/{key}");
    let object = |key: Key, size: u64| Object {
        url: url_of(key.as_ref()),
        store: store.clone(),
        key,
        size,
        read: Arc::new(Counter::default()),
        failed: Arc::new(Mutex::new(None)),
    };
    // The data files of a listing below `dir` that `keep` takes (by key), sorted by key; not
    // found, saying `why`, when there is none.
    let data_files = |found: Vec<(String, u64)>,
                      dir: &str,
                      keep: &dyn Fn(&str) -> bool,
                      why: &str|
     -> Result<Vec<Object>, RemoteError> {
        let mut out: Vec<Object> = found
            .into_iter()
            .filter(|(k, _)| {
                let rel = k.strip_prefix(dir).unwrap_or(k).trim_start_matches('/');
                keep(k) && is_data_key(rel)
            })
            .map(|(k, size)| object(Key::from(k), size))
            .collect();
        if out.is_empty() {
            return Err(RemoteError::new(arg, RemoteFailure::NotFound, why));
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    };
    let glob_at = rest.find(['*', '?', '[']);
    let listing_refused = || {
        RemoteError::new(
            arg,
            RemoteFailure::BadUrl,
            "an http(s) URL names one object: a prefix or glob needs a store that lists (s3://, gs://, az://)",
        )
    };
    if let Some(at) = glob_at {
        if is_http {
            return Err(listing_refused());
        }
        let dir = rest[..at].rsplit_once('/').map_or("", |(d, _)| d);
        let pattern = glob::Pattern::new(rest)
            .map_err(|e| RemoteError::new(arg, RemoteFailure::BadUrl, format!("bad glob: {e}")))?;
        let opts = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: true,
        };
        return data_files(
            list(&store, dir, arg)?,
            dir,
            &|k| pattern.matches_with(k, opts),
            "the glob matches no data file",
        );
    }
    let names_a_folder = rest.is_empty() || rest.ends_with('/');
    if is_http && names_a_folder {
        return Err(listing_refused());
    }
    let key_text = if is_http {
        // An http(s) path is percent-encoded by definition; a store key is raw text.
        match Key::from_url_path(rest) {
            Ok(k) => k.as_ref().to_string(),
            Err(e) => return Err(RemoteError::new(arg, RemoteFailure::BadUrl, e.to_string())),
        }
    } else {
        rest.to_string()
    };
    if !names_a_folder {
        let key = Key::from(key_text.as_str());
        match block(store.head(&key))? {
            Ok(meta) => return Ok(vec![object(key, meta.size)]),
            Err(object_store::Error::NotFound { .. }) if !is_http => {}
            Err(e) => return Err(RemoteError::of(arg, e)),
        }
    }
    // A prefix: every data file below it.
    let dir = key_text.trim_end_matches('/');
    data_files(
        list(&store, dir, arg)?,
        dir,
        &|_| true,
        "no such object, and no data file below it as a prefix",
    )
}

/// Every object below `dir` (recursively), as (key, size).
fn list(
    store: &Arc<dyn ObjectStore>,
    dir: &str,
    url: &str,
) -> Result<Vec<(String, u64)>, RemoteError> {
    let prefix = (!dir.is_empty()).then(|| Key::from(dir));
    let listed = block(store.list(prefix.as_ref()).try_collect::<Vec<_>>())?
        .map_err(|e| RemoteError::of(url, e))?;
    Ok(listed
        .into_iter()
        .map(|m| (m.location.as_ref().to_string(), m.size))
        .collect())
}

/// A temporary local copy of an object (and, for a shapefile, of its sidecar files), for the
/// formats read from a local file (GeoJSON, GeoPackage, Shapefile). Removed on drop.
pub struct LocalCopy {
    _dir: TempDir,
    pub path: PathBuf,
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let n = SEQ.fetch_add(1, Ordering::Relaxed);
            let dir = base.join(format!("contracts-remote-{}-{n}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(TempDir(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// The sidecar files a shapefile is read with.
const SHAPEFILE_SIDECARS: &[&str] = &["shx", "dbf", "prj", "cpg"];

impl Object {
    /// Copy the object (and a shapefile's sidecars) into a fresh temporary directory.
    pub fn local_copy(&self, format: Format) -> Result<LocalCopy, ReleaseError> {
        let dir = TempDir::new().map_err(|source| ReleaseError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
        let name = match self.file_name() {
            "" => "object",
            n => n,
        };
        let path = dir.0.join(name);
        self.download(&path)?;
        if format == Format::Shapefile {
            let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
            for ext in SHAPEFILE_SIDECARS {
                if let Some(side) = self.sibling(ext)? {
                    side.download(&dir.0.join(format!("{stem}.{ext}")))?;
                }
            }
        }
        Ok(LocalCopy { _dir: dir, path })
    }
}

/// The byte-range cache a Parquet file in object storage is read through: the decoder asks
/// for the footer and then for each row group's column chunks, and every range is fetched
/// once (coalesced, see [`COALESCE_BYTES`]) and kept while the file is read.
/// How much of a remote file's end is fetched with its first request: the footer of most
/// files, so the metadata costs one round trip (the parquet crate's async reader does the same).
const TAIL_PREFETCH: u64 = 64 << 10;

/// An object in object storage, read by range. The ranges already fetched are kept (the
/// head, the tail with the footer), so the decoder never fetches a byte twice.
pub(super) struct RemoteFile {
    object: Object,
    fetched: Mutex<Vec<(u64, Bytes)>>,
}

impl RemoteFile {
    pub(super) fn new(object: &Object) -> RemoteFile {
        RemoteFile {
            object: object.clone(),
            fetched: Mutex::new(Vec::new()),
        }
    }
    fn cached(&self, start: u64, len: u64) -> Option<Bytes> {
        let parts = self.fetched.lock().ok()?;
        parts.iter().find_map(|(at, b)| {
            (start >= *at && start + len <= at + b.len() as u64)
                .then(|| b.slice((start - at) as usize..(start - at + len) as usize))
        })
    }
    fn parts(&self) -> Vec<(u64, Bytes)> {
        self.fetched.lock().map(|p| p.clone()).unwrap_or_default()
    }
}

impl Source for RemoteFile {
    type Chunks = Sparse;
    fn len(&self) -> Result<u64, ReleaseError> {
        Ok(self.object.size())
    }
    fn read_at(&self, start: u64, len: usize) -> Result<Bytes, ReleaseError> {
        if let Some(b) = self.cached(start, len as u64) {
            return Ok(b);
        }
        let size = self.object.size();
        // The first read near the end fetches the whole tail the footer is likely in.
        let from = if start + len as u64 == size {
            start.min(size.saturating_sub(TAIL_PREFETCH))
        } else {
            start
        };
        let b = self.object.range(from..start + len as u64)?;
        if let Ok(mut parts) = self.fetched.lock() {
            parts.push((from, b.clone()));
        }
        Ok(b.slice((start - from) as usize..))
    }
    fn footer(&self) -> Result<Sparse, ReleaseError> {
        Ok(Sparse {
            object: self.object.clone(),
            parts: self.parts(),
        })
    }
    fn row_group(&self, ranges: &[Range<u64>]) -> Result<Sparse, ReleaseError> {
        let mut parts = self.parts();
        // Only the bytes no earlier request brought (the tail prefetch often holds the end of
        // the last column chunk).
        let missing: Vec<Range<u64>> = ranges.iter().flat_map(|r| uncovered(r, &parts)).collect();
        parts.extend(self.object.ranges(&missing)?);
        // Each column chunk in one piece, first in the list, so a page reader started inside
        // it reads on to its end.
        let mut whole: Vec<(u64, Bytes)> = ranges
            .iter()
            .filter_map(|r| assemble(r, &parts).map(|b| (r.start, b)))
            .collect();
        whole.extend(parts);
        Ok(Sparse {
            object: self.object.clone(),
            parts: whole,
        })
    }
}

/// The parts of `r` that none of `parts` holds.
fn uncovered(r: &Range<u64>, parts: &[(u64, Bytes)]) -> Vec<Range<u64>> {
    let mut held: Vec<Range<u64>> = parts
        .iter()
        .map(|(at, b)| *at..at + b.len() as u64)
        .filter(|p| p.start < r.end && p.end > r.start)
        .collect();
    held.sort_by_key(|p| p.start);
    let mut out = Vec::new();
    let mut pos = r.start;
    for p in held {
        if p.start > pos {
            out.push(pos..p.start.min(r.end));
        }
        pos = pos.max(p.end);
        if pos >= r.end {
            break;
        }
    }
    if pos < r.end {
        out.push(pos..r.end);
    }
    out
}

/// The bytes of `r` in one piece, from one part or copied together from several; `None` when
/// some byte of it was not fetched.
fn assemble(r: &Range<u64>, parts: &[(u64, Bytes)]) -> Option<Bytes> {
    if let Some((at, b)) = parts
        .iter()
        .find(|(at, b)| r.start >= *at && r.end <= at + b.len() as u64)
    {
        return Some(b.slice((r.start - at) as usize..(r.end - at) as usize));
    }
    let mut out = Vec::with_capacity((r.end - r.start) as usize);
    let mut pos = r.start;
    while pos < r.end {
        let (at, b) = parts
            .iter()
            .filter(|(at, b)| pos >= *at && pos < at + b.len() as u64)
            .max_by_key(|(at, b)| at + b.len() as u64)?;
        let end = (at + b.len() as u64).min(r.end);
        out.extend_from_slice(&b[(pos - at) as usize..(end - at) as usize]);
        pos = end;
    }
    Some(Bytes::from(out))
}

/// A [`ChunkReader`] over the fetched ranges of an object. A range the decoder asks for that
/// was not fetched (a writer's page outside its column chunk's stated range) is fetched
/// then, so a wrong guess costs a request, never a wrong answer.
pub(crate) struct Sparse {
    object: Object,
    parts: Vec<(u64, Bytes)>,
}

impl Sparse {
    fn slice(&self, start: u64, len: u64) -> Option<Bytes> {
        self.parts.iter().find_map(|(at, b)| {
            (start >= *at && start + len <= at + b.len() as u64)
                .then(|| b.slice((start - at) as usize..(start - at + len) as usize))
        })
    }
}

impl parquet::file::reader::Length for Sparse {
    fn len(&self) -> u64 {
        self.object.size()
    }
}

impl ChunkReader for Sparse {
    type T = bytes::buf::Reader<Bytes>;
    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        // From `start` to the end of the fetched part holding it: a page header and its data
        // lie within one column chunk.
        let held = self
            .parts
            .iter()
            .filter(|(at, b)| start >= *at && start < at + b.len() as u64)
            .max_by_key(|(at, b)| at + b.len() as u64)
            .map(|(at, b)| b.slice((start - at) as usize..));
        let b = match held {
            Some(b) => b,
            None => self
                .object
                .range(start..start.saturating_add(COLUMN_FALLBACK))
                .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))?,
        };
        Ok(b.reader())
    }
    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        match self.slice(start, length as u64) {
            Some(b) => Ok(b),
            None => self
                .object
                .range(start..start + length as u64)
                .map_err(|e| parquet::errors::ParquetError::External(Box::new(e))),
        }
    }
}

/// How far a read outside the fetched ranges reaches (a page header and its page, usually).
const COLUMN_FALLBACK: u64 = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bytes_no_part_holds_are_fetched_and_a_range_is_put_together_from_its_parts() {
        let parts = vec![
            (100u64, Bytes::from(vec![1u8; 50])),
            (180, Bytes::from(vec![2u8; 20])),
        ];
        assert_eq!(uncovered(&(120..140), &parts), Vec::<Range<u64>>::new());
        assert_eq!(
            uncovered(&(90..210), &parts),
            vec![90..100, 150..180, 200..210]
        );
        assert_eq!(uncovered(&(0..10), &parts), vec![0..10]);
        let mut all = parts.clone();
        all.push((150, Bytes::from(vec![3u8; 30])));
        let b = assemble(&(140..190), &all).unwrap();
        assert_eq!(b.len(), 50);
        assert_eq!((b[0], b[10], b[39], b[40], b[49]), (1, 3, 3, 2, 2));
        assert!(assemble(&(140..190), &parts).is_none());
    }

    #[test]
    fn urls_are_told_from_paths() {
        assert!(is_url("s3://bucket/key.parquet"));
        assert!(is_url("gs://b/"));
        assert!(is_url("https://example.org/a.fgb"));
        assert!(!is_url("data/roads.parquet"));
        assert!(!is_url("/abs/path://odd"));
        assert!(!is_url("://x"));
    }

    #[test]
    fn scrub_blanks_user_info_and_query_strings() {
        let s = scrub("GET https://user:pa55@host.example/k.fgb?X-Amz-Signature=abc&t=1 failed");
        assert_eq!(s, "GET https://***@host.example/k.fgb?*** failed");
        let s = scrub("error at http://127.0.0.1:9000/b/k: 403");
        assert_eq!(s, "error at http://127.0.0.1:9000/b/k: 403");
    }

    #[test]
    fn data_keys_skip_markers_and_unknown_formats() {
        assert!(is_data_key("year=2024/part-0.parquet"));
        assert!(!is_data_key("_SUCCESS"));
        assert!(!is_data_key("year=2024/_committed_1"));
        assert!(!is_data_key("_temporary/0/part-0.parquet"));
        assert!(!is_data_key(".part-0.parquet.crc"));
        assert!(!is_data_key("part-0.dbf"));
    }
}
