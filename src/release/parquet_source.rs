//! Where a Parquet file's bytes come from, for the GeoParquet reader (`parquet.rs`): the
//! local file here, byte ranges of an object in object storage in `remote_read.rs`. Both
//! readers name this file, and it names neither.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

use bytes::Bytes;
use parquet::file::reader::ChunkReader;

use super::{io_err, ReleaseError};

/// Where a Parquet file's bytes come from: the local file, or byte ranges of an object in
/// object storage. The decoder is handed a [`ChunkReader`] for the footer and one per row
/// group, so a remote file is read as the footer and the column chunks a row group needs.
pub(crate) trait Source: Sync {
    type Chunks: ChunkReader + 'static;
    fn len(&self) -> Result<u64, ReleaseError>;
    /// `len` bytes at `start`.
    fn read_at(&self, start: u64, len: usize) -> Result<Bytes, ReleaseError>;
    /// A reader the footer (and only the footer) is decoded from.
    fn footer(&self) -> Result<Self::Chunks, ReleaseError>;
    /// A reader for one row group, which will ask only for bytes in `ranges`.
    fn row_group(&self, ranges: &[Range<u64>]) -> Result<Self::Chunks, ReleaseError>;
}

/// The local file: the operating system reads ahead and caches, every reader opens it anew.
pub(crate) struct LocalFile<'a>(pub(crate) &'a Path);

impl Source for LocalFile<'_> {
    type Chunks = File;
    fn len(&self) -> Result<u64, ReleaseError> {
        let f = File::open(self.0).map_err(io_err(self.0))?;
        Ok(f.metadata().map_err(io_err(self.0))?.len())
    }
    fn read_at(&self, start: u64, len: usize) -> Result<Bytes, ReleaseError> {
        let mut f = File::open(self.0).map_err(io_err(self.0))?;
        f.seek(SeekFrom::Start(start)).map_err(io_err(self.0))?;
        let mut buf = vec![0u8; len];
        f.read_exact(&mut buf).map_err(io_err(self.0))?;
        Ok(Bytes::from(buf))
    }
    fn footer(&self) -> Result<File, ReleaseError> {
        File::open(self.0).map_err(io_err(self.0))
    }
    // A file of its own: a cloned handle shares its seek offset with the others, and row
    // groups read at the same time would read each other's bytes.
    fn row_group(&self, _: &[Range<u64>]) -> Result<File, ReleaseError> {
        File::open(self.0).map_err(io_err(self.0))
    }
}
