//! The newest-read scan ([`scan`]): the one walk over the consumption record
//! ([`readers::walk`]) into the sink that keeps the newest read per (dataset, consumer)
//! ([`Newest`], in `newest.rs`), alone or beside another sink of the same walk
//! ([`scan_beside`]).

use super::both::{Both, Folds};
use super::newest::Newest;
use super::readers::{self, Sink};
use super::{LogError, LogFile, Malformed, Scan, ScanRequest};
use crate::consumers::access::AccessLog;
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
    let logs = compiled(sources, req);
    let logs = logs.iter().map(Option::as_ref).collect();
    readers::walk(sources, files, (req.from, req.to), logs, &mut sink)?;
    Ok(sink.finish())
}

/// [`scan`], with `other` fed by the same walk ([`Both`]): it must want `req`'s datasets.
pub(crate) fn scan_beside<S: Sink + Folds>(
    sources: &[Source],
    files: &[LogFile],
    req: &ScanRequest,
    on_malformed: &mut dyn FnMut(&Malformed),
    other: &mut S,
) -> Result<Scan, LogError> {
    let mut both = Both::new(Newest::new(sources, req, on_malformed), other);
    let logs = compiled(sources, req);
    let logs = logs.iter().map(Option::as_ref).collect();
    readers::walk(sources, files, (req.from, req.to), logs, &mut both)?;
    Ok(both.first.finish())
}

/// The access log of each source (`None`: a log of reads), read with the columns of each
/// read where `req` asks for the attributes.
fn compiled(sources: &[Source], req: &ScanRequest) -> Vec<Option<AccessLog>> {
    let columns = req.attributes;
    sources
        .iter()
        .map(|s| s.access.clone().map(|l| l.with_columns(columns)))
        .collect()
}
