//! Rendering every notice as a mail before anything is claimed.

use std::collections::BTreeMap;

use lettre::message::Mailbox;
use lettre::Message;

use super::events::about;
use super::facts::{DatasetFacts, Facts};
use super::report::{RunError, Todo};
use crate::model::config::Config;
use crate::model::history::ChangeRecord;
use crate::model::ConsumerVerdict;
use crate::notify::message::{ChangeValues, Templates};
use crate::notify::send::message;

/// Render every notice of `todo` as a mail from `from`, keyed by Message-ID, and set each
/// notice's verdict and breaking changes to what it tells. In a dry run too: a broken
/// template is found the day it is written, not the day it would have mattered. The
/// templates, histories and contracts are the run's `facts`.
pub fn render_mail(
    facts: &Facts,
    config: &Config,
    from: &Mailbox,
    todo: &mut [Todo],
) -> Result<BTreeMap<String, Message>, RunError> {
    let (subject, body) = facts.templates.clone();
    let templates = Templates::new(subject, body)
        .map_err(RunError::Templates)?
        .with_registry_url(config.notify.registry_url.clone());
    let mut messages = BTreeMap::new();
    let none = DatasetFacts::default();
    for t in todo {
        let n = &t.notice;
        let f = facts.datasets.get(&n.dataset).unwrap_or(&none);
        // A waiver or deprecation notice is about one clause key of the line it reads, not
        // about moving.
        let changes: Vec<_> = f
            .history
            .breaking_between(n.line, n.new_line)
            .filter(|_| n.waiver.is_none() && n.deprecation.is_none())
            .map(|c| (c, change_values(f, c)))
            .collect();
        let rendered = templates
            .render_with_values(
                n,
                &changes,
                &from.to_string(),
                config.consumption.lookback_days,
            )
            .map_err(|source| RunError::Render {
                notice: about(n),
                source: Box::new(source),
            })?;
        messages.insert(
            n.message_id.clone(),
            message(from, n, &rendered).map_err(RunError::Message)?,
        );
        t.rendered = Some(rendered);
        // What the notice told, for the report: the same selection the template received.
        let selected = crate::notify::message::told(n, &changes);
        let told: Vec<String> = selected.iter().map(|(c, _)| c.clause.clone()).collect();
        let facts = selected
            .iter()
            .map(|(c, v)| crate::notify::plan::ToldChange {
                clause: c.clause.clone(),
                old: v.old.clone(),
                new: v.new.clone(),
                rationale: c.rationale.clone(),
            })
            .collect();
        t.notice.told = facts;
        t.notice.verdict = Some(if told.is_empty() {
            ConsumerVerdict::Unaffected
        } else {
            ConsumerVerdict::Breaks
        });
        t.notice.breaking_changes = told;
    }
    Ok(messages)
}

/// The old and new value behind a change record, re-derived from the two contracts it
/// compares (the record names the clause, not the values). A record whose contracts could not
/// be read gets no values rather than stopping the run: `check` is where records are proved.
fn change_values(facts: &DatasetFacts, record: &ChangeRecord) -> ChangeValues {
    let Some(from) = &record.from else {
        return ChangeValues::default();
    };
    let read = |v: &str| facts.contracts.get(v);
    let (Some(old), Some(new)) = (read(from), read(&record.to)) else {
        return ChangeValues::default();
    };
    crate::model::derive_changes(old, new)
        .changes
        .into_iter()
        .find(|c| c.clause == record.clause)
        .map(|c| ChangeValues {
            old: c.old,
            new: c.new,
        })
        .unwrap_or_default()
}
