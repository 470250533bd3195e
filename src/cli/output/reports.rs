//! The tables more than one command prints: a contract's changes, the consumers' verdicts
//! and a backtest.

use super::{key, print_table, table, whole, Cell, Print, Toned as _};
use crate::model::Change;
use crate::render::delta::change_words;

/// The instant of a consumer's last read, to the second (`Z` in UTC), or `-` for none.
pub fn last_read(at: Option<chrono::DateTime<chrono::FixedOffset>>) -> String {
    at.map_or("-".to_string(), |t| crate::model::history::instant_text(&t))
}

/// A clause value (or its absence) for a table cell.
pub fn cell(v: Option<&serde_json::Value>) -> String {
    match v {
        None => "-".to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// The per-clause change table of `diff` and `propose`: what changed in words, a map key by
/// key and a set item by item (JSON keeps both whole values).
pub fn changes_table(p: &(impl Print + ?Sized), changes: &[Change]) -> String {
    let rows = changes.iter().map(|c| {
        vec![
            c.clause.clone().into(),
            c.kind.to_string().into(),
            change_words(c).into(),
            c.direction.to_string().into(),
            Cell::of(c.verdict),
        ]
    });
    table(
        p,
        &[
            key("clause"),
            key("kind"),
            whole("change"),
            key("direction"),
            key("verdict"),
        ],
        rows,
    )
}

/// The consumers' verdicts of `diff` and `propose`, printed after the clause table.
pub fn print_verdicts(
    ctx: &(impl Print + ?Sized),
    dataset: &str,
    impacts: &[crate::model::Impact],
) {
    if impacts.is_empty() {
        outln!(
            ctx,
            "no consumer of {dataset} is registered in consumers.toml"
        );
        return;
    }
    let rows = impacts.iter().map(|i| {
        vec![
            i.consumer.clone().into(),
            Cell::toned(i.verdict_text(), i.verdict.tone()),
            if i.changes.is_empty() {
                "-".into()
            } else {
                i.changes.join(", ").into()
            },
        ]
    });
    outln!(ctx, "consumers of {dataset}:");
    print_table(
        ctx,
        &[
            key("consumer"),
            key("verdict"),
            key("breaking changes it uses"),
        ],
        rows,
    );
}

/// A backtest as a table, printed by `backtest` and after `propose`'s consumers' verdicts.
pub fn print_backtest(
    ctx: &(impl Print + ?Sized),
    b: &crate::release::record::Backtest,
    dataset: &str,
) {
    if b.clauses.is_empty() {
        outln!(ctx, "backtest: no changed or added clause to replay");
        return;
    }
    outln!(
        ctx,
        "backtest on {} recorded release(s) of {dataset} validated since {}:",
        b.releases - b.without_profile,
        b.since
    );
    let rows = b.clauses.iter().map(|r| {
        vec![
            r.clause.clone(),
            r.evaluated.to_string(),
            r.would_fail.to_string(),
            r.releases_text(),
        ]
    });
    print_table(
        ctx,
        &[
            key("clause"),
            key("evaluated"),
            key("would fail"),
            key("releases"),
        ],
        rows,
    );
}

/// Declared against observed, one row per consumer and attribute, printed by `consumers
/// --attributes` and `diff --attributes`; then how many reads could not tell.
pub fn print_attribute_uses(
    p: &(impl Print + ?Sized),
    consumers: &[crate::consumers::attribute_uses::ConsumerAttributes],
) {
    if consumers.is_empty() {
        outln!(
            p,
            "no consumer declares or is seen reading these attributes"
        );
        return;
    }
    let rows = consumers.iter().flat_map(|c| {
        c.attributes.iter().map(|a| {
            vec![
                c.consumer.clone(),
                a.attribute.clone(),
                a.evidence.to_string(),
                last_read(a.last_read),
                gap_words(a).unwrap_or_else(|| "-".to_string()),
            ]
        })
    });
    print_table(
        p,
        &[
            key("consumer"),
            key("attribute"),
            key("evidence"),
            key("last read"),
            whole("gap"),
        ],
        rows,
    );
    for c in consumers.iter().filter(|c| c.unknown_reads > 0) {
        outln!(
            p,
            "{}: {} of {} read(s) cannot tell which attributes they read",
            c.consumer,
            c.unknown_reads,
            c.reads
        );
    }
}

/// A gap between a consumer's declaration and its reads, in words.
fn gap_words(a: &crate::consumers::attribute_uses::AttributeUse) -> Option<String> {
    use crate::consumers::attribute_uses::Gap;
    a.gap.as_ref().map(|g| match g {
        Gap::DeclaredNotSeen { since } => format!("declared, not seen since {since}"),
        Gap::NotInUses => format!("reads `{}`, not in `uses`", a.attribute),
    })
}
