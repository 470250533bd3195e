//! One fold over the scan's accumulator and the record walk's ([`Pair`]), for a log of reads
//! read once for both sinks of one walk (`both.rs`).

use contracts_scan::reads::blocks::{Accumulator, Fold};
use contracts_scan::reads::timestamps::At;

use super::record_fold::{RecordFold, RecordRequest};
use super::{Scan, ScanRequest};

/// One fold over the scan's accumulator and the record walk's, for a log of reads read once
/// for both (`both.rs`'s `Both`). A line both take or both refuse is as either alone would have it
/// (refused: reported once, with the scan's reason, and counted by both). A line only one
/// refuses is malformed to that one only, as `both.rs`'s `Refused` has it for the other inputs: the
/// scan's refusal is reported and counted by the scan alone; the record walk's is counted
/// by its fold, not reported (beside the scan, the record walk reports nothing: the scan
/// reports each line).
pub(crate) struct Pair<'a> {
    scan: Scan,
    records: RecordFold,
    /// The line now refused, by the scan alone: the reader counts it next.
    scan_alone: bool,
    _req: std::marker::PhantomData<&'a ()>,
}

impl<'a> Pair<'a> {
    pub(super) fn new(scan: Scan, records: &RecordRequest) -> Pair<'a> {
        Pair {
            scan,
            records: RecordFold::for_request(records),
            scan_alone: false,
            _req: std::marker::PhantomData,
        }
    }

    pub(super) fn into_parts(self) -> (Scan, RecordFold) {
        (self.scan, self.records)
    }
}

impl<'a> Accumulator for Pair<'a> {
    type Request = (&'a ScanRequest, &'a RecordRequest);

    fn for_request(req: &Self::Request) -> Self {
        Pair::new(Scan::for_request(req.0), req.1)
    }

    fn flush(&mut self) {
        self.scan.flush();
        self.records.flush();
    }

    fn absorb(&mut self, part: Self) {
        self.scan.absorb(part.scan);
        self.records.absorb(part.records);
    }

    fn count_lines(&mut self, n: u64) {
        self.scan.count_lines(n);
    }

    fn count_malformed(&mut self) {
        self.scan.count_malformed();
        if !std::mem::take(&mut self.scan_alone) {
            self.records.count_malformed();
        }
    }
}

/// The scan's datasets, which the record walk's are (`Both`): one index for both.
impl Fold for Pair<'_> {
    fn only_dataset(req: &Self::Request) -> Option<&str> {
        <Scan as Fold>::only_dataset(req.0)
    }

    fn is_requested(req: &Self::Request, dataset: &str) -> bool {
        <Scan as Fold>::is_requested(req.0, dataset)
    }

    #[inline(always)]
    fn dataset_index(&self, dataset: &[u8]) -> Option<usize> {
        Fold::dataset_index(&self.scan, dataset)
    }

    fn fold_into(
        &mut self,
        req: &Self::Request,
        d: usize,
        at: At<'_>,
        consumer: &[u8],
        contract: &[u8],
    ) -> Result<(), String> {
        let a = self.scan.fold_into(req.0, d, at, consumer, contract);
        let b = self.records.fold_into(req.1, d, at, consumer, contract);
        match (a, b) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(reason), Ok(())) => {
                self.scan_alone = true;
                Err(reason)
            }
            (Ok(()), Err(_)) => {
                self.records.refused();
                Ok(())
            }
            (Err(reason), Err(_)) => Err(reason),
        }
    }
}
