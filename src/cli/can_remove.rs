use chrono::NaiveDate;
use serde::Serialize;

use super::context::{counted_standings, Counted};
use super::output::{key, last_read, print_json, print_table, text};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::attributes::{judge, remove_answer, Evidence, KeyStanding, RemoveAnswer};
use crate::consumers::source_health::{blind_sources, BlindSource};
use crate::consumers::{Status, Thresholds};
use crate::model::deprecation::{attribute_of, Deprecation};
use crate::model::{Contract, Line, Strictness};

/// Whether a clause key can be removed: no consumer still uses it
///
/// A gate for CI and cron: can the producer remove KEY (`optional_attributes.pop_est`,
/// `permitted_geometry.MultiPoint`, a whole clause) from DATASET? Each consumer subscribed to
/// the dataset is judged:
///
///   - its `uses` in consumers.toml names the key (or its clause): it uses it (declared);
///   - a read in `[consumption] lookback_days` is seen reading the key: it uses it (observed);
///   - its `uses` does not name the key: it does not (its promise);
///   - it has no `uses`: it does not when it has no read in the lookback, or its newest read
///     is of a line that no longer promises the key, or every read's source showed which
///     attributes it read and none was the key (pgaudit's statements, the warehouses' access
///     records); a read whose source
///     cannot tell (a log of reads, a web access log) leaves it `unknown`;
///   - automations and readers under `min_reads`/`min_days` are ignored, as by `can-retire`.
///
/// Exit 0 when every consumer is shown not to use the key; 1 when some consumer uses it
/// (listing who, with their last read); 4 when nobody is shown to use it but some consumer's
/// use is unknown, or a consumption source is blind and a consumer without `uses` was judged
/// by its reads, or the store has no consumers.toml (nobody is subscribed to be judged):
/// "cannot tell", never "yes"; 2 for an unknown dataset or a key that no line's
/// newest version promises.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset
    dataset: String,
    /// The clause key: a clause, or `clause.member` (`optional_attributes.pop_est`)
    key: String,
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: &'a str,
    key: &'a str,
    /// The attribute the key names, which a read that reports its attributes would be matched
    /// against; `null` for a key that is no attribute (a geometry type, `crs`).
    attribute: Option<&'a str>,
    today: NaiveDate,
    lookback_from: NaiveDate,
    /// `yes`, `no` or `cannot-tell`.
    answer: RemoveAnswer,
    can_remove: bool,
    /// The lines whose newest version still promises the key.
    lines: Vec<u64>,
    /// The key's `[deprecated]` entry in the newest version that promises it, if any.
    deprecation: Option<&'a Deprecation>,
    /// The subscribed consumers that use it (declared or observed).
    users: Vec<&'a KeyStanding>,
    /// Every subscribed consumer, with how it stands towards the key.
    consumers: &'a [KeyStanding],
    /// The store has no consumers.toml: nobody is subscribed to be judged, and no yes is
    /// given (`cannot-tell`).
    unregistered: bool,
    blind_sources: Vec<BlindSource>,
    thresholds: Thresholds,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store_for(&args.dataset)?;
    store.require_dataset(&args.dataset)?;
    let lines: Vec<Line> = store.lines(&args.dataset)?;
    let contracts = store.contracts(&args.dataset, Strictness::Reading)?;
    // The newest version of each line: what the line promises today.
    let newest = |major: u64| contracts.iter().rev().find(|c| c.version.major == major);
    let promising: Vec<&Contract> = lines
        .iter()
        .filter_map(|l| newest(l.major))
        .filter(|c| c.promises(&args.key))
        .collect();
    if promising.is_empty() {
        return Err(CommandError::input(format!(
            "no line of `{}` promises `{}`: name a clause of its newest versions, or \
             `clause.member` (`optional_attributes.pop_est`)",
            args.dataset, args.key
        )));
    }
    let Counted {
        registry,
        registered,
        scan,
        req,
        standings,
        ..
    } = counted_standings(ctx, &store, &args.dataset, &lines, true)?;
    let seen = scan.seen_of(&args.dataset);
    let promised_lines: Vec<u64> = promising.iter().map(|c| c.version.major).collect();
    let mut judged: Vec<KeyStanding> = standings
        .iter()
        .filter(|s| !matches!(s.status, Status::Unsubscribed | Status::Unknown))
        .map(|s| {
            let promised = s.line.is_none_or(|l| promised_lines.contains(&l));
            // The reads whose source told their attributes show whether they read the key;
            // the others cannot tell.
            let reads = if promised { s.reads } else { 0 };
            let evidence = Evidence::of(reads, seen.get(&s.consumer), attribute_of(&args.key));
            let uses = registry
                .get(&s.consumer)
                .and_then(|c| c.uses(&args.dataset));
            judge(s, uses, &args.key, promised, evidence)
        })
        .collect();
    // Users first, then the unknown, then those shown not to use it.
    judged.sort_by(|a, b| (a.key_use, &a.consumer).cmp(&(b.key_use, &b.consumer)));
    let blind_sources = blind_sources(&scan.stats.sources);
    let answer = match remove_answer(&judged, !blind_sources.is_empty()) {
        // Without a registry nobody is subscribed to be judged: a yes about nobody.
        RemoveAnswer::Yes if !registered => RemoveAnswer::CannotTell,
        answer => answer,
    };
    let report = Report {
        dataset: &args.dataset,
        key: &args.key,
        attribute: attribute_of(&args.key),
        today: ctx.today,
        lookback_from: req.from,
        answer,
        can_remove: answer == RemoveAnswer::Yes,
        lines: promised_lines,
        deprecation: promising.last().and_then(|c| c.deprecated.get(&args.key)),
        users: judged.iter().filter(|s| s.key_use.uses()).collect(),
        consumers: &judged,
        unregistered: !registered,
        blind_sources,
        thresholds: store.config().consumption.thresholds,
    };
    match ctx.format {
        Format::Json => print_json(ctx, &report),
        _ => print_text(ctx, &report),
    }
    Ok(match answer {
        RemoveAnswer::Yes => Outcome::Clean,
        RemoveAnswer::No => Outcome::Findings,
        RemoveAnswer::CannotTell => Outcome::CannotTell,
    })
}

fn print_text(ctx: &Context, r: &Report) {
    let what = format!("{} `{}`", r.dataset, r.key);
    let unknown = r
        .consumers
        .iter()
        .filter(|s| s.key_use == crate::consumers::attributes::KeyUse::Unknown)
        .count();
    match r.answer {
        RemoveAnswer::Yes => outln!(
            ctx,
            "{what} can be removed: no subscribed consumer uses it (declared in `uses`, or seen \
             since {})",
            r.lookback_from
        ),
        RemoveAnswer::No => outln!(
            ctx,
            "{what} cannot be removed: {} subscribed consumer(s) still use it",
            r.users.len()
        ),
        RemoveAnswer::CannotTell if r.unregistered => outln!(
            ctx,
            "{what}: cannot tell whether it can be removed: the store has no consumers.toml, so \
             no consumer is subscribed to be judged, whoever reads it (register the consumers)"
        ),
        RemoveAnswer::CannotTell if unknown > 0 => outln!(
            ctx,
            "{what}: cannot tell whether it can be removed: {unknown} consumer(s) without `uses` \
             read {} since {} through sources that do not report which attributes a read touched",
            r.dataset,
            r.lookback_from
        ),
        RemoveAnswer::CannotTell => outln!(
            ctx,
            "{what}: cannot tell whether it can be removed: nobody is seen using it, but a \
             consumption source cannot be believed (see the warnings on stderr)"
        ),
    }
    if let Some(d) = r.deprecation {
        outln!(
            ctx,
            "deprecated, promised through {}: {}",
            d.remove_after,
            d.reason
        );
    }
    let rows = r.consumers.iter().map(|s| {
        vec![
            s.consumer.clone(),
            s.key_use.to_string(),
            last_read(s.last_read),
            s.team.clone().unwrap_or_else(|| "-".to_string()),
        ]
    });
    print_table(
        ctx,
        &[key("consumer"), key("use"), key("last read"), text("team")],
        rows,
    );
}
