//! A planned deprecation notice as a [`Notice`], from the facts of its dataset.

use chrono::NaiveDate;

use super::facts::DatasetFacts;
use crate::consumers::Registry;
use crate::model::deprecation::attribute_of;
use crate::notify::deprecation_notices::{removal_day, DeprecationNotice};
use crate::notify::plan::{message_id, DeprecationFacts, Notice, MAIL};

/// The notice of a planned deprecation notice: its dataset's facts fill the line's versions,
/// and the day the key may go (the day after `remove_after`) stands as the notice's `sunset`,
/// the day it counts to, as the ledger records it.
pub(super) fn deprecation_notice(
    facts: &DatasetFacts,
    p: &DeprecationNotice,
    registry: &Registry,
    today: NaiveDate,
    domain: &str,
) -> Option<Notice> {
    let lines = &facts.lines;
    let line = lines.iter().find(|l| l.major == p.line)?;
    let newest = lines.iter().max_by_key(|l| l.major)?;
    let c = registry.get(&p.consumer)?;
    let reads = facts
        .standings
        .iter()
        .find(|s| s.consumer == p.consumer)
        .and_then(|s| s.version.clone())
        .unwrap_or_else(|| line.newest().clone());
    let d = &p.deprecation;
    let removal = removal_day(d);
    Some(Notice {
        dataset: p.dataset.clone(),
        consumer: p.consumer.clone(),
        team: c.team.clone(),
        line: p.line,
        recipients: c.contacts.clone(),
        sunset: removal,
        days_left: (removal - today).num_days(),
        old_version: line.newest().clone(),
        reads_version: reads,
        new_line: newest.major,
        new_version: newest.newest().clone(),
        message_id: message_id(&p.dataset, p.line, &p.consumer, &p.milestone, domain),
        milestone: p.milestone.clone(),
        also: p.also.clone(),
        channel: MAIL.to_string(),
        uses: c.uses(&p.dataset).map(<[_]>::to_vec),
        verdict: None,
        breaking_changes: Vec::new(),
        told: Vec::new(),
        opens: None,
        waiver: None,
        deprecation: Some(DeprecationFacts {
            key: d.key.clone(),
            attribute: attribute_of(&d.key).map(str::to_string),
            reason: d.reason.clone(),
            replacement: d.replacement.clone(),
            remove_after: d.remove_after,
            version: p.version.clone(),
            evidence: p.standing.key_use,
            key_last_read: p.standing.evidence.key_last_read,
        }),
    })
}
