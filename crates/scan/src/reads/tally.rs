//! A plain fold of reads, for the readers' example (`examples/log_reads.rs`) and tests: the
//! reads of the datasets asked for, counted by dataset and contract as written, with no store,
//! registry or contracts around them. Each read's instant is parsed; no newest read is kept
//! and no version parsed.

use std::collections::BTreeMap;

use super::blocks::{Accumulator, Fold};
use super::timestamps::At;

/// The reads of the datasets asked for, counted by dataset (its place in the request) and
/// contract text.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub datasets: Vec<String>,
    pub lines: u64,
    pub malformed: u64,
    pub reads: BTreeMap<(usize, Vec<u8>), u64>,
}

impl Accumulator for Tally {
    type Request = Vec<String>;

    fn for_request(req: &Vec<String>) -> Tally {
        Tally {
            datasets: req.clone(),
            ..Tally::default()
        }
    }

    fn flush(&mut self) {}

    fn absorb(&mut self, part: Tally) {
        // A worker's lines are counted by the reader on the tally it was given.
        self.malformed += part.malformed;
        for (key, n) in part.reads {
            *self.reads.entry(key).or_default() += n;
        }
    }

    fn count_lines(&mut self, n: u64) {
        self.lines += n;
    }

    fn count_malformed(&mut self) {
        self.malformed += 1;
    }
}

impl Fold for Tally {
    fn only_dataset(req: &Vec<String>) -> Option<&str> {
        match &req[..] {
            [one] => Some(one),
            _ => None,
        }
    }

    fn is_requested(req: &Vec<String>, dataset: &str) -> bool {
        req.iter().any(|d| d == dataset)
    }

    fn dataset_index(&self, dataset: &[u8]) -> Option<usize> {
        self.datasets.iter().position(|d| d.as_bytes() == dataset)
    }

    fn fold_into(
        &mut self,
        _: &Vec<String>,
        d: usize,
        at: At<'_>,
        consumer: &[u8],
        contract: &[u8],
    ) -> Result<(), String> {
        if consumer.is_empty() {
            return Err("`consumer` is empty".to_string());
        }
        at.instant()?;
        *self.reads.entry((d, contract.to_vec())).or_default() += 1;
        Ok(())
    }
}
