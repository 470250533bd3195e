//! Rendering every notice as a mail before anything is claimed.

use std::collections::BTreeMap;

use lettre::message::Mailbox;
use lettre::Message;

use super::events::about;
use super::report::{RunError, Todo};
use crate::model::config::Config;
use crate::model::history::{ChangeRecord, History};
use crate::model::ConsumerVerdict;
use crate::notify::message::{ChangeValues, Templates, BODY, SUBJECT};
use crate::notify::send::message;
use crate::store::{layout, Store};

/// Render every notice of `todo` as a mail from `from`, keyed by Message-ID, and set each
/// notice's verdict and breaking changes to what it tells. In a dry run too: a broken
/// template is found the day it is written, not the day it would have mattered.
pub fn render_mail(
    store: &Store,
    config: &Config,
    from: &Mailbox,
    todo: &mut [Todo],
) -> Result<BTreeMap<String, Message>, RunError> {
    let templates = Templates::new(
        store.read(&layout::template(SUBJECT))?,
        store.read(&layout::template(BODY))?,
    )
    .map_err(RunError::Templates)?
    .with_registry_url(config.notify.registry_url.clone());
    let mut messages = BTreeMap::new();
    let mut histories: BTreeMap<String, History> = BTreeMap::new();
    for t in todo {
        let n = &t.notice;
        if !histories.contains_key(&n.dataset) {
            histories.insert(n.dataset.clone(), store.history(&n.dataset)?);
        }
        // A waiver notice is about one clause of the line it reads, not about moving.
        let changes: Vec<_> = histories[&n.dataset]
            .breaking_between(n.line, n.new_line)
            .filter(|_| n.waiver.is_none())
            .map(|c| (c, change_values(store, &n.dataset, c)))
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
/// compares (the record names the clause, not the values). A record whose contracts cannot be
/// read gets no values rather than stopping the run: `check` is where records are proved.
fn change_values(store: &Store, dataset: &str, record: &ChangeRecord) -> ChangeValues {
    let Some(from) = &record.from else {
        return ChangeValues::default();
    };
    let read = |v: &str| store.contract(dataset, v, crate::model::Strictness::Reading);
    let (Ok(old), Ok(new)) = (read(from), read(&record.to)) else {
        return ChangeValues::default();
    };
    crate::model::derive_changes(&old, &new)
        .changes
        .into_iter()
        .find(|c| c.clause == record.clause)
        .map(|c| ChangeValues {
            old: c.old,
            new: c.new,
        })
        .unwrap_or_default()
}
