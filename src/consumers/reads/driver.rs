//! The newest-read scan ([`scan`]): the one walk over the consumption record
//! ([`readers::walk`]) into the sink that keeps the newest read per (dataset, consumer)
//! ([`Newest`], in `newest.rs`).

use super::newest::Newest;
use super::readers;
use super::{LogError, LogFile, Malformed, Scan, ScanRequest};
use crate::model::source::Source;

/// Scan every file of `sources` ([`log_files`]), and the objects of the remote sources that can
/// hold a read of the lookback ([`object_logs::list`]), for reads matching `req`.
/// `on_malformed` hears of each unusable line. A remote source that cannot be listed fails
/// the scan before anything is read; an object that cannot be read is skipped, as a file is.
///
/// [`log_files`]: super::log_files
/// [`object_logs::list`]: super::object_logs::list
pub fn scan(
    sources: &[Source],
    files: &[LogFile],
    req: &ScanRequest,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<Scan, LogError> {
    let mut sink = Newest::new(sources, req, on_malformed);
    // Where the attributes are asked for, each access log is read with its columns.
    let with_columns: Vec<Option<crate::consumers::access::AccessLog>> = match req.attributes {
        true => sources
            .iter()
            .map(|s| s.access.clone().map(|l| l.with_columns(true)))
            .collect(),
        false => Vec::new(),
    };
    let logs = match req.attributes {
        true => with_columns.iter().map(Option::as_ref).collect(),
        false => readers::access_logs(sources),
    };
    readers::walk(sources, files, (req.from, req.to), logs, &mut sink)?;
    Ok(sink.finish())
}
