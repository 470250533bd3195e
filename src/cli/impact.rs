//! What `diff`, `propose` and `backtest` share: the per-consumer verdicts of a change list
//! (from the committed `consumers.toml`), and their table.

use super::output::{key, table};
use super::{CommandError, Context};
use crate::consumers::{parse_registry, Registry};
use crate::model::{impacts, Change, Impact};
use crate::store::{layout, Store};

/// The registry committed in `store`, or none (no `consumers.toml`): a change then has no
/// registered consumer to judge.
pub fn registry_of(store: &Store) -> Result<Registry, CommandError> {
    match store.read(layout::CONSUMERS)? {
        Some(text) => Ok(parse_registry(layout::CONSUMERS, &text)?),
        None => Ok(Registry::default()),
    }
}

/// The registry of the store the command runs in, if it runs in one (`diff` of two loose
/// files outside a store has no consumers).
pub fn registry_if_store(ctx: &Context) -> Result<Option<Registry>, CommandError> {
    let Some(root) = ctx.find_root() else {
        return Ok(None);
    };
    if !root.join(".git").exists() {
        return Ok(None);
    }
    match Store::open(&root) {
        Ok(store) => registry_of(&store).map(Some),
        Err(crate::store::StoreError::NotAStore { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Each consumer subscribed to `dataset`, by name, with its verdict on `changes`.
pub fn verdicts(registry: &Registry, dataset: &str, changes: &[Change]) -> Vec<Impact> {
    impacts(
        registry
            .subscribers(dataset)
            .map(|c| (c.name.as_str(), c.uses(dataset))),
        changes,
    )
}

/// The consumers' verdicts as text, printed after the clause table.
pub fn print_verdicts(ctx: &Context, dataset: &str, impacts: &[Impact]) {
    if impacts.is_empty() {
        outln!(
            ctx,
            "no consumer of {dataset} is registered in consumers.toml"
        );
        return;
    }
    let rows = impacts.iter().map(|i| {
        vec![
            i.consumer.clone(),
            i.verdict_text(),
            if i.changes.is_empty() {
                "-".to_string()
            } else {
                i.changes.join(", ")
            },
        ]
    });
    outln!(ctx, "consumers of {dataset}:");
    outln!(
        ctx,
        "{}",
        table(
            ctx,
            &[
                key("consumer"),
                key("verdict"),
                key("breaking changes it uses")
            ],
            rows
        )
    );
}
