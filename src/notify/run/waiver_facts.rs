//! The notice of a planned waiver notice, with the bound it suspends and the value measured.

use chrono::NaiveDate;

use super::facts::DatasetFacts;
use crate::consumers::Registry;
use crate::model::Line;
use crate::notify::ledger::MAIL;
use crate::notify::plan::Notice;

/// The notice of one planned waiver notice: to the consumer's contacts, about the covered
/// line, with the waiver's facts (the bound from the line's live contract and, for a waiver
/// granted `--release`, that release's measured value from its record), all from the
/// dataset's `facts`. A line with no sunset records the waiver's last day as the notice's
/// `sunset`: the day the notice is about.
pub(super) fn waiver_notice(
    facts: &DatasetFacts,
    w: &crate::notify::waiver_notices::WaiverNotice,
    registry: &Registry,
    today: NaiveDate,
    domain: &str,
) -> Option<Notice> {
    let (lines, standings) = (&facts.lines, &facts.standings);
    let line = lines.iter().find(|l| l.major == w.line)?;
    let newest = lines.iter().max_by_key(|l| l.major)?;
    let c = registry.get(&w.consumer)?;
    let reads = standings
        .iter()
        .find(|s| s.consumer == w.consumer)
        .and_then(|s| s.version.clone())
        .unwrap_or_else(|| line.newest().clone());
    let sunset = line.sunset.unwrap_or(w.waiver.until);
    let milestone = crate::notify::plan::Milestone::Waiver(w.waiver.id.clone());
    let (bound, measured) = waived_values(facts, &w.dataset, line, &w.waiver);
    Some(Notice {
        dataset: w.dataset.clone(),
        consumer: w.consumer.clone(),
        team: c.team.clone(),
        line: w.line,
        recipients: c.contacts.clone(),
        sunset,
        days_left: (sunset - today).num_days(),
        old_version: line.newest().clone(),
        reads_version: reads,
        new_line: newest.major,
        new_version: newest.newest().clone(),
        message_id: crate::notify::plan::message_id(
            &w.dataset,
            w.line,
            &w.consumer,
            &milestone,
            domain,
        ),
        milestone,
        also: Vec::new(),
        channel: MAIL.to_string(),
        uses: c.uses(&w.dataset).map(<[_]>::to_vec),
        verdict: None,
        breaking_changes: Vec::new(),
        told: Vec::new(),
        opens: None,
        waiver: Some(crate::notify::plan::WaiverFacts {
            id: w.waiver.id.clone(),
            clause: w.waiver.clause.clone(),
            bound,
            release: w.waiver.release.clone(),
            measured,
            granted: w.waiver.granted,
            until: w.waiver.until,
            by: w.waiver.by.clone(),
            reason: w.waiver.reason.clone(),
        }),
        deprecation: None,
    })
}

/// The bound a waiver suspends, from the covered line's live contract, and the value the
/// release it names measured, replayed from that release's recorded profile by `validate`
/// itself. Either is `None` when the facts cannot say (no contract, no such clause, no
/// record, no profile): a notice is still worth sending without them.
fn waived_values(
    facts: &DatasetFacts,
    dataset: &str,
    line: &Line,
    w: &crate::model::waiver::Waiver,
) -> (Option<serde_json::Value>, Option<serde_json::Value>) {
    let Some(contract) = facts.contracts.get(&line.newest().to_string()) else {
        return (None, None);
    };
    let (clause, key) = match w.clause.split_once('.') {
        Some((c, k)) => (c, Some(k)),
        None => (w.clause.as_str(), None),
    };
    let pick = |v: serde_json::Value| match key {
        Some(k) => v.get(k).cloned(),
        None => Some(v),
    };
    let bound = contract
        .clauses
        .get(clause)
        .and_then(|c| pick(c.value.to_json()));
    let measured = w.release.as_ref().and_then(|release| {
        let record = facts
            .records
            .as_ref()?
            .iter()
            .rev()
            .find(|r| r.version.as_deref() == Some(release.as_str()))?;
        let recorded = record.profile.as_ref()?;
        let (profile, manifest) = recorded.restore(&record.files);
        let mut one = contract.clone();
        one.clauses.retain(|k, _| k == clause);
        one.unknown.clear();
        let report = crate::release::validate::validate(dataset, &profile, Some(&manifest), &[one]);
        let results: Vec<_> = report
            .contracts
            .into_iter()
            .flat_map(|c| c.results)
            .collect();
        // `metric_tolerances.<metric>` is a result of its own; a map clause's key is a key
        // of its one result's measured value.
        results
            .iter()
            .find(|r| r.clause == w.clause)
            .and_then(|r| r.measured.clone())
            .or_else(|| {
                results
                    .iter()
                    .find(|r| r.clause == clause)
                    .and_then(|r| r.measured.clone())
                    .and_then(pick)
            })
    });
    (bound, measured)
}
