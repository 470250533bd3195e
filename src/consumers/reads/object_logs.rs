//! Consumption logs in object storage: a source whose `path` is an `s3://`, `gs://` or `az://`
//! prefix or glob, or one `https://` object.
//!
//! Two costs decide whether this keeps up with a platform. **Listing**: a bucket's access
//! logs are thousands of small objects a day, kept for years, so only the objects that can
//! hold a read of the lookback are read, and for S3 access logs only those are listed (see
//! [`list`]). **Reading**: each request waits on the network, so up to [`IN_FLIGHT`] objects
//! are fetched at once while the scan decodes the ones before them, in the listing's order.
//! Nothing is written to disk: a small object is held in memory until the scan takes it, a
//! large one is streamed chunk by chunk.

use std::io::Read;
use std::sync::Arc;

use bytes::{Buf, Bytes};
use chrono::{Duration, NaiveDate};
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::model::source::{LogFormat, Source};
use crate::objects::{self, RemoteError, RemoteFailure};

/// Objects fetched concurrently.
pub(crate) const IN_FLIGHT: usize = 16;

/// An object up to this size is fetched whole (so sixteen can be in flight within a few tens
/// of mebibytes); a larger one is streamed.
const WHOLE_BYTES: u64 = 2 << 20;

/// One log object to read.
#[derive(Debug, Clone)]
pub(crate) struct LogObject {
    /// As printed: no user info, no query string.
    pub url: String,
    pub size: u64,
    store: Arc<dyn ObjectStore>,
    key: Key,
}

impl LogObject {
    /// The file name the key ends in (its format is decided by its extension).
    pub fn file_name(&self) -> &str {
        self.key.filename().unwrap_or("")
    }
}

/// What one source's listing found.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// The objects that can hold a read of the lookback, sorted by key.
    pub objects: Vec<LogObject>,
    /// How many objects the store's listing returned (the ones read among them).
    pub listed: u64,
}

/// The first `YYYY-MM-DD` in a file name: the delivery day of an S3 access log
/// (`2026-11-03-10-15-02-…`), of a CloudFront log (`E2ABC.2026-11-03-10.…`), or the day of a
/// log rotated daily (`reads-2026-11-03.jsonl.gz`).
pub(crate) fn name_day(name: &str) -> Option<NaiveDate> {
    let b = name.as_bytes();
    (0..b.len().saturating_sub(9)).find_map(|i| {
        let w = &b[i..i + 10];
        let shaped = w.iter().enumerate().all(|(j, c)| match j {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        });
        let starts_clean = i == 0 || !b[i - 1].is_ascii_digit();
        if !(shaped && starts_clean) {
            return None;
        }
        NaiveDate::parse_from_str(std::str::from_utf8(w).ok()?, "%Y-%m-%d").ok()
    })
}

/// Whether an object can hold a read of the days `from..=to`. An object named by a day holds
/// requests of that day or the day before (a log is delivered after its requests, within
/// hours), so it is kept from `from` to one day past `to`. An object without a day in its
/// name is kept unless it was last written before the lookback began, since a log is written
/// after the reads it records.
fn may_hold(
    name: &str,
    modified: chrono::DateTime<chrono::Utc>,
    from: NaiveDate,
    to: NaiveDate,
) -> bool {
    match name_day(name) {
        Some(day) => day >= from && day <= to + Duration::days(1),
        None => modified.date_naive() >= from,
    }
}

/// Whether a key below the source's prefix is a file the platform wrote for people rather
/// than a log: `_SUCCESS`, `.crc`, `_temporary/`.
fn hidden(relative: &str) -> bool {
    relative
        .split('/')
        .any(|seg| seg.starts_with('_') || seg.starts_with('.'))
}

/// List the objects of a remote source that can hold a read of `from..=to`.
///
/// - An `https://` URL names one object (a web server does not list).
/// - A prefix (`s3://logs/access/`) or a glob (`s3://logs/*/2026-*.gz`; `*` stays within a
///   folder, `**` crosses folders) lists below its literal part.
/// - An S3 access log is named `<prefix>YYYY-MM-DD-hh-mm-ss-<id>` in S3's default (simple)
///   key format, so listing starts after `<prefix><from>`: S3 lists keys in order and skips
///   the older ones server-side. That start is trusted only when every key it returns is
///   named so; a bucket in S3's date-partitioned key format (`<prefix><account>/<region>/…`)
///   is listed whole instead and filtered by the day in each name.
pub(crate) fn list(
    source: &Source,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Listing, RemoteError> {
    let url = source.path.as_str();
    let Some((scheme, authority, rest)) = objects::split_url(url) else {
        return Err(RemoteError::new(url, RemoteFailure::BadUrl, "not a URL"));
    };
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let store = objects::store_for(scheme, authority, url)?;
    let object = |key: Key, size: u64| LogObject {
        url: format!("{scheme}://{host}/{key}"),
        size,
        store: store.clone(),
        key,
    };
    let is_http = scheme == "http" || scheme == "https";
    if is_http {
        if rest.is_empty() || rest.ends_with('/') || rest.contains(['*', '?', '[']) {
            return Err(RemoteError::new(
                url,
                RemoteFailure::BadUrl,
                "an http(s) source names one object: a prefix or glob needs a store that lists (s3://, gs://, az://)",
            ));
        }
        let key = Key::from_url_path(rest)
            .map_err(|e| RemoteError::new(url, RemoteFailure::BadUrl, e.to_string()))?;
        let meta = objects::block(store.head(&key))?.map_err(|e| RemoteError::of(url, e))?;
        return Ok(Listing {
            objects: vec![object(key, meta.size)],
            listed: 1,
        });
    }
    let glob_at = rest.find(['*', '?', '[']);
    let literal = &rest[..glob_at.unwrap_or(rest.len())];
    let dir = literal.rsplit_once('/').map_or("", |(d, _)| d);
    let pattern =
        match glob_at {
            Some(_) => Some(glob::Pattern::new(rest).map_err(|e| {
                RemoteError::new(url, RemoteFailure::BadUrl, format!("bad glob: {e}"))
            })?),
            None => None,
        };
    let opts = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let prefix = (!dir.is_empty()).then(|| Key::from(dir));
    let collect = |stream: BoxStream<'static, object_store::Result<object_store::ObjectMeta>>| {
        objects::block(stream.collect::<Vec<_>>()).and_then(|metas| {
            metas
                .into_iter()
                .map(|m| m.map_err(|e| RemoteError::of(url, e)))
                .collect::<Result<Vec<_>, _>>()
        })
    };
    // The keys of the prefix's folder that start with the literal part of the path.
    let under = |m: &object_store::ObjectMeta| m.location.as_ref().starts_with(literal);
    let mut metas = None;
    if pattern.is_none() && source.format == Some(LogFormat::S3Access) {
        let offset = Key::from(format!("{literal}{}", from.format("%Y-%m-%d")));
        let found: Vec<_> = collect(store.list_with_offset(prefix.as_ref(), &offset))?
            .into_iter()
            .filter(under)
            .collect();
        let simple = !found.is_empty()
            && found.iter().all(|m| {
                let after = &m.location.as_ref()[literal.len()..];
                after.len() >= 10 && name_day(&after[..10]).is_some()
            });
        if simple {
            metas = Some(found);
        }
    }
    let metas = match metas {
        Some(m) => m,
        None => collect(store.list(prefix.as_ref()))?
            .into_iter()
            .filter(under)
            .collect(),
    };
    let listed = metas.len() as u64;
    let mut objects: Vec<LogObject> = metas
        .into_iter()
        .filter(|m| {
            let key = m.location.as_ref();
            let relative = key[dir.len()..].trim_start_matches('/');
            let name = m.location.filename().unwrap_or("");
            !hidden(relative)
                && pattern.as_ref().is_none_or(|p| p.matches_with(key, opts))
                && may_hold(name, m.last_modified, from, to)
        })
        .map(|m| object(m.location, m.size))
        .collect();
    objects.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(Listing { objects, listed })
}

/// An opened log object: its bytes as a reader (gzip is the scan's to undo).
pub(crate) type Opened = Result<Box<dyn Read + Send>, RemoteError>;

/// The objects of a scan, fetched up to [`IN_FLIGHT`] at a time ahead of the scan and handed
/// over in the order given.
pub(crate) struct Prefetch {
    rx: tokio::sync::mpsc::Receiver<Opened>,
}

impl Prefetch {
    pub fn start(objects: Vec<LogObject>) -> Result<Prefetch, RemoteError> {
        let rt = objects::runtime()?;
        // A bounded channel: the fetches run at most a channel and a batch ahead of the scan.
        let (tx, rx) = tokio::sync::mpsc::channel(IN_FLIGHT);
        rt.spawn(async move {
            let mut fetched = futures_util::stream::iter(objects)
                .map(|o| async move { open(o).await })
                .buffered(IN_FLIGHT);
            while let Some(opened) = fetched.next().await {
                if tx.send(opened).await.is_err() {
                    break;
                }
            }
        });
        Ok(Prefetch { rx })
    }

    /// The next object, in the order given; `None` past the last.
    pub fn next(&mut self) -> Option<Opened> {
        self.rx.blocking_recv()
    }
}

async fn open(o: LogObject) -> Opened {
    let got = o
        .store
        .get(&o.key)
        .await
        .map_err(|e| RemoteError::of(&o.url, e))?;
    if o.size <= WHOLE_BYTES {
        let bytes = got.bytes().await.map_err(|e| RemoteError::of(&o.url, e))?;
        Ok(Box::new(bytes.reader()))
    } else {
        Ok(Box::new(Streamed {
            url: o.url,
            stream: got.into_stream(),
            chunk: Bytes::new(),
        }))
    }
}

/// A large object read chunk by chunk as the store sends it.
struct Streamed {
    url: String,
    stream: BoxStream<'static, object_store::Result<Bytes>>,
    chunk: Bytes,
}

impl Read for Streamed {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.chunk.is_empty() {
            let next = objects::block(self.stream.next())
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            match next {
                None => return Ok(0),
                Some(Ok(b)) => self.chunk = b,
                Some(Err(e)) => {
                    return Err(std::io::Error::other(
                        RemoteError::of(&self.url, e).to_string(),
                    ))
                }
            }
        }
        let n = out.len().min(self.chunk.len());
        out[..n].copy_from_slice(&self.chunk[..n]);
        self.chunk.advance(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn the_day_of_each_platforms_log_name_is_found() {
        assert_eq!(
            name_day("2026-11-03-10-15-02-5A4C3B2D1E0F9A8B"),
            Some(day("2026-11-03"))
        );
        assert_eq!(
            name_day("E2ABCDEF.2026-11-03-10.a1b2c3d4.gz"),
            Some(day("2026-11-03"))
        );
        assert_eq!(
            name_day("reads-2026-11-03.jsonl.gz"),
            Some(day("2026-11-03"))
        );
        assert_eq!(name_day("reads-2026-11.jsonl"), None);
        // Not a day: 13th month, digits running on before it.
        assert_eq!(name_day("x2026-13-03"), None);
        assert_eq!(name_day("12026-11-03"), None);
    }

    #[test]
    fn an_object_is_kept_from_the_first_day_to_one_day_past_the_last() {
        let (from, to) = (day("2026-11-01"), day("2026-11-07"));
        let old = chrono::Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).unwrap();
        let new = chrono::Utc.with_ymd_and_hms(2026, 11, 2, 0, 0, 0).unwrap();
        assert!(!may_hold("2026-10-31-23-59-59-A", new, from, to));
        assert!(may_hold("2026-11-01-00-00-00-A", old, from, to));
        assert!(may_hold("2026-11-08-02-00-00-A", old, from, to));
        assert!(!may_hold("2026-11-09-00-00-00-A", new, from, to));
        assert!(!may_hold("reads.jsonl", old, from, to));
        assert!(may_hold("reads.jsonl", new, from, to));
    }
}
