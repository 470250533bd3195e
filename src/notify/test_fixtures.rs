//! What the notifier's unit tests build again and again, written once: a day, a line, where
//! each consumer stands after its newest read, and what a read shows of an attribute. Compiled
//! for tests only.

use std::collections::HashMap;

use chrono::NaiveDate;
use semver::Version;

use crate::consumers::attributes::Evidence;
use crate::consumers::reads::SeenColumns;
use crate::consumers::{classify, NewestRead, Registry, Standing};
use crate::model::Line;

/// A day written `YYYY-MM-DD`.
pub fn day(s: &str) -> NaiveDate {
    s.parse().expect("a fixture's day")
}

/// Line `major`, open from `opens`, with its `sunset` if any and its `versions`.
pub fn line(major: u64, opens: &str, sunset: Option<&str>, versions: &[&str]) -> Line {
    Line {
        major,
        opens: day(opens),
        sunset: sunset.map(day),
        source: None,
        versions: versions
            .iter()
            .map(|v| v.parse::<Version>().expect("a fixture's version"))
            .collect(),
    }
}

/// Where each consumer of `dataset` stands when each of `by` (consumer, version) last read
/// at `at`, `reads` times, from line 1.
pub fn standings(
    dataset: &str,
    lines: &[Line],
    registry: &Registry,
    (at, reads): (&str, u64),
    by: &[(&str, &str)],
) -> Vec<Standing> {
    let newest: HashMap<String, NewestRead> = by
        .iter()
        .map(|(consumer, version)| {
            let read = NewestRead {
                at: at.parse().expect("a fixture's instant"),
                version: version.parse().expect("a fixture's version"),
                oldest_line: 1,
                reads,
                known: None,
            };
            (consumer.to_string(), read)
        })
        .collect();
    classify(dataset, lines, registry, &newest)
}

/// What one read at `at` of the attributes `read` shows of attribute `key`.
pub fn evidence(at: &str, read: &[&str], key: &str) -> Evidence {
    let seen = SeenColumns::reading(at.parse().expect("a fixture's instant"), read);
    Evidence::of(1, Some(&seen), Some(key))
}
