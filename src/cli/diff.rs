use std::path::Path;

use serde::Serialize;

use super::context::{print_ci, read_input, registry_and_scan, registry_if_store, shown_path};
use super::output::{changes_table, print_attribute_uses, print_json, print_verdicts};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::attribute_uses::{
    changed_attributes, dataset_attributes, of_consumers, ConsumerAttributes, Lookback,
};
use crate::consumers::classify;
use crate::consumers::source_health::blind_sources;
use crate::model::contract::crossings;
use crate::model::proposal::demanding;
use crate::model::{
    derive_changes, parse_contract, Bump, Change, Contract, Impact, KindTable, Strictness,
};
use crate::render::ci_findings::change_findings;
use crate::render::delta::change_words;

/// Compare two contract versions clause by clause
///
/// Compare two contract versions clause by clause: kind, old and new value, direction and
/// verdict, and the version bump the change requires.
///
/// With --attributes (in a store), also each subscribed consumer's use of each attribute the
/// changes touch, as `consumers --attributes` says it: `declared` in its `uses`, `observed` in
/// a read of the lookback whose source tells the attributes it read, `both`, or `unknown`; and
/// the gaps "declared, not seen since DAY" and "reads `X`, not in `uses`".
///
/// Exit 0 when NEW's version bumps at least as much as required, 1 when it bumps less
/// (each clause that demands more is named), 2 for bad input.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The older contract: a file path, or DATASET@VERSION from the store at HEAD
    old: String,
    /// The newer contract: a file path, or DATASET@VERSION from the store at HEAD
    new: String,
    /// Also say whether each consumer's use of each changed attribute is declared, observed or
    /// both (scans the consumption sources)
    #[arg(long)]
    attributes: bool,
}

#[derive(Serialize)]
struct VersionRef<'a> {
    dataset: &'a str,
    version: String,
}

#[derive(Serialize)]
struct Report<'a> {
    old: VersionRef<'a>,
    new: VersionRef<'a>,
    changes: &'a [Change],
    required_bump: Bump,
    actual_bump: Bump,
    sufficient: bool,
    /// Each consumer subscribed to the dataset, with its verdict on these changes.
    /// Empty outside a store.
    consumers: Vec<Impact>,
    /// With --attributes: each consumer's use of each changed attribute, declared against
    /// observed.
    #[serde(skip_serializing_if = "Option::is_none")]
    attributes: Option<Vec<ConsumerAttributes>>,
    #[serde(skip)]
    in_store: bool,
}

/// Load a contract named on the command line: a file, or `dataset@version` in the store.
fn load(ctx: &Context, arg: &str, kinds: &KindTable) -> Result<Contract, CommandError> {
    if let Some((dataset, version)) = arg.split_once('@').filter(|_| !Path::new(arg).exists()) {
        return Ok(ctx
            .store()?
            .contract(dataset, version, Strictness::Writing)?);
    }
    let text = read_input(Path::new(arg)).map_err(|e| match not_a_file(ctx, arg) {
        Some(hint) => e.with_hint(hint),
        None => e,
    })?;
    Ok(parse_contract(arg, &text, kinds, Strictness::Writing)?)
}

/// The hint for an argument that is neither a file nor `DATASET@VERSION`: most often a
/// dataset named without its version, so the store's versions of it are named when it has any.
fn not_a_file(ctx: &Context, arg: &str) -> Option<String> {
    if arg.contains('@') || Path::new(arg).exists() {
        return None;
    }
    let form = "OLD and NEW are contract files or DATASET@VERSION from the store at HEAD";
    let Ok(store) = ctx.store() else {
        return Some(format!(
            "{form}; `{arg}` is not a file, and there is no store here to find it in"
        ));
    };
    let versions = store.versions(arg).unwrap_or_default();
    Some(match versions.last() {
        Some(newest) => {
            let all: Vec<String> = versions.iter().map(ToString::to_string).collect();
            format!(
                "{form}: `{arg}` is a dataset of this store, so write `{arg}@{newest}` (its \
                 versions: {})",
                all.join(", ")
            )
        }
        None => format!("{form}, and `{arg}` is neither a file nor a dataset of this store"),
    })
}

/// Where a contract named on the command line lives, for annotations, and its text.
fn source(ctx: &Context, arg: &str) -> (String, Option<String>) {
    if let Some((dataset, version)) = arg.split_once('@').filter(|_| !Path::new(arg).exists()) {
        let path = crate::store::layout::contract(dataset, version);
        return match ctx.store() {
            Ok(store) => (
                shown_path(store.root(), &path),
                store.read(&path).ok().flatten(),
            ),
            Err(_) => (path, None),
        };
    }
    (arg.replace('\\', "/"), std::fs::read_to_string(arg).ok())
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let config = ctx.config()?;
    let old = load(ctx, &args.old, &config.kinds)?;
    let new = load(ctx, &args.new, &config.kinds)?;
    if old.dataset != new.dataset {
        return Err(CommandError::input(format!(
            "{} is dataset `{}` but {} is dataset `{}`: a diff compares two versions of one dataset",
            args.old, old.dataset, args.new, new.dataset
        )));
    }
    if new.version <= old.version {
        return Err(CommandError::input(format!(
            "NEW version {} is not greater than OLD version {}",
            new.version, old.version
        ))
        .with_hint("give the older contract first"));
    }
    for (c, x) in [(&old, crossings(&old)), (&new, crossings(&new))] {
        for x in x {
            talkln!(ctx, "note: {}@{}: {x}", c.dataset, c.version);
        }
    }
    let set = derive_changes(&old, &new);
    let actual = Bump::between(&old.version, &new.version);
    let sufficient = actual >= set.required;
    let registry = registry_if_store(ctx)?;
    let consumers = registry
        .as_ref()
        .map(|r| r.impacts(&new.dataset, &set.changes));
    let attributes = if args.attributes {
        Some(attribute_uses(ctx, &old, &new, &set.changes)?)
    } else {
        None
    };
    let report = Report {
        old: VersionRef {
            dataset: &old.dataset,
            version: old.version.to_string(),
        },
        new: VersionRef {
            dataset: &new.dataset,
            version: new.version.to_string(),
        },
        changes: &set.changes,
        required_bump: set.required,
        actual_bump: actual,
        sufficient,
        in_store: consumers.is_some(),
        consumers: consumers.unwrap_or_default(),
        attributes,
    };
    match ctx.format {
        Format::Json => print_json(ctx, &report),
        Format::Github | Format::Sarif => {
            let (file, text) = source(ctx, &args.new);
            print_ci(
                ctx,
                &change_findings(&set.changes, sufficient, &file, text.as_deref()),
            );
        }
        _ => print_text(ctx, &report),
    }
    if !sufficient {
        errln!(
            ctx,
            "error: {} -> {} is a {} bump, but the changes require a {} bump:",
            old.version,
            new.version,
            actual,
            set.required
        );
        for c in &demanding(&set.changes, actual) {
            errln!(
                ctx,
                "  {} ({}, {}): {}",
                c.clause,
                c.kind,
                c.direction,
                change_words(c)
            );
        }
    }
    Ok(Outcome::findings_if(!sufficient))
}

/// Each subscribed consumer's use of the attributes `changes` touch, from the store's
/// consumption sources read for their attributes.
fn attribute_uses(
    ctx: &Context,
    old: &Contract,
    new: &Contract,
    changes: &[Change],
) -> Result<Vec<ConsumerAttributes>, CommandError> {
    let store = ctx.store().map_err(|e| {
        e.with_hint("--attributes reads the consumption sources of a store: run it in one")
    })?;
    let dataset = &new.dataset;
    let lines = store.lines(dataset)?;
    let (registry, scan, req) = registry_and_scan(ctx, &store, [dataset.clone()].into(), true)?;
    let standings = classify(dataset, &lines, &registry, &scan.of(dataset));
    let changed = changed_attributes(changes);
    let mut attributes = dataset_attributes([old, new]);
    attributes.retain(|a| changed.contains(&a.name));
    Ok(of_consumers(
        &standings,
        &attributes,
        |c| registry.get(c).and_then(|c| c.uses(dataset)),
        &scan.seen_of(dataset),
        Lookback {
            since: req.from,
            blind: !blind_sources(&scan.stats.sources).is_empty(),
        },
    ))
}

fn print_text(ctx: &Context, r: &Report) {
    if r.changes.is_empty() {
        outln!(
            ctx,
            "no clause changed between {} {} and {}",
            r.old.dataset,
            r.old.version,
            r.new.version
        );
    } else {
        outln!(ctx, "{}", changes_table(ctx, r.changes));
    }
    outln!(ctx);
    outln!(ctx, "required bump: {}", r.required_bump);
    outln!(
        ctx,
        "actual bump:   {} ({} -> {}){}",
        r.actual_bump,
        r.old.version,
        r.new.version,
        if r.sufficient { "" } else { "  INSUFFICIENT" }
    );
    if r.in_store {
        outln!(ctx);
        print_verdicts(ctx, r.new.dataset, &r.consumers);
    }
    if let Some(attributes) = &r.attributes {
        outln!(ctx);
        outln!(ctx, "the changed attributes, declared against observed:");
        print_attribute_uses(ctx, attributes);
    }
}
