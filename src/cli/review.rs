use std::collections::{BTreeMap, BTreeSet, HashMap};

use semver::Version;

use super::context::{registry_and_scan, talk_backtest};
use super::output::{changes_table, key, print_backtest, print_json, print_table, Cell};
use super::{CommandError, Context, Format, Outcome};
use crate::consumers::{classify, registry, Registry};
use crate::model::consistency::moves_of;
use crate::model::proposal::{check_step, judge, Refusal};
use crate::model::window::windows;
use crate::model::{lines, Bump, Change, Contract, Line, Strictness};
use crate::release::record::{backtest, parse_records};
use crate::render::html::dataset_page;
use crate::render::review::{
    markdown, read_text, verdict_lines, ConsumerRow, DatasetReview, LineRow, Links, Proposal,
    Review, Touch, WaiverRow, WindowView,
};
use crate::store::{layout, ObjectId, Store};

/// Review a pull request's contract changes in one report
///
/// Compare the store at the base with the store at HEAD, plus the drafts (`[review] drafts`,
/// default `drafts/**/*.toml`) committed since the base. For every dataset touched (a draft, a
/// version published, a sunset moved, consumers or waivers edited): the verdict line, the
/// clause changes, the consumers affected with their last read, the backtest of the draft on
/// recorded releases, the window with its lines and the waivers that end within it, and links
/// to the registry when `[notify] registry_url` is set.
///
/// The base is REF, or else the merge base of HEAD with the default branch: `origin/HEAD`,
/// else `main`, else `master` (no network is asked). `--format markdown` writes one pull
/// request comment, with a hidden marker so a re-run can edit it.
///
/// Exit 1 when something would be refused (a draft `propose` refuses, a version published with
/// too small a bump), 0 otherwise; 2 for a bad draft or base, 3 for git.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Compare with this commit (a branch, tag or commit id) [default: the merge base of HEAD
    /// with the default branch]
    #[arg(long, value_name = "REF")]
    base: Option<String>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let store = ctx.store_unwarned()?;
    // A base named is compared as it is; the default branch's tip is not, since it may have
    // moved on since the branch left it: the merge base is what the branch changed from.
    let (name, base_commit, compared) = match &args.base {
        Some(rev) => {
            let id = store.resolve(rev)?;
            (rev.clone(), id, id)
        }
        None => {
            let (name, tip) = store.default_branch()?;
            let base = store.merge_base_with(tip, &name)?;
            (name, tip, base)
        }
    };
    let base = store.at(compared)?;
    let review = gather(ctx, &store, base.as_ref(), &name, base_commit, compared)?;
    match ctx.format {
        Format::Json => print_json(ctx, &review),
        Format::Markdown => out!(ctx, "{}", markdown(&review)),
        _ => print_text(ctx, &review),
    }
    Ok(Outcome::findings_if(review.refused))
}

/// Everything that changed between `base` (none: before the store existed) and HEAD, by
/// dataset, before any of it is judged.
#[derive(Default)]
struct Touched {
    touches: BTreeMap<String, Vec<Touch>>,
    drafts: BTreeMap<String, Vec<(String, Contract)>>,
    published: BTreeMap<String, Vec<Version>>,
}

impl Touched {
    fn add(&mut self, dataset: &str, t: Touch) {
        self.touches.entry(dataset.to_string()).or_default().push(t);
    }
}

fn gather(
    ctx: &Context,
    store: &Store,
    base: Option<&Store>,
    name: &str,
    base_commit: ObjectId,
    compared: ObjectId,
) -> Result<Review, CommandError> {
    let mut t = Touched::default();
    find_drafts(store, base.map(|_| compared), &mut t)?;
    find_store_changes(store, base, &mut t)?;
    let names: BTreeSet<String> = t.touches.keys().cloned().collect();
    let (registry, scan) = if names.is_empty() {
        (Registry::default(), None)
    } else {
        let (r, s, _) = registry_and_scan(ctx, store, names.clone(), false)?;
        (r, Some(s))
    };
    let mut datasets = Vec::new();
    for dataset in &names {
        let newest = scan.as_ref().map(|s| s.of(dataset)).unwrap_or_default();
        datasets.push(review_dataset(ctx, store, &t, dataset, &registry, &newest)?);
    }
    let refused = datasets
        .iter()
        .flat_map(|d| &d.proposals)
        .any(|p| !p.sufficient || !p.refusals.is_empty());
    Ok(Review {
        base: name.to_string(),
        base_commit: base_commit.to_string(),
        compared_with: compared.to_string(),
        head_commit: store.head().to_string(),
        today: ctx.today,
        refused,
        datasets,
    })
}

/// The folder a glob's files are all below: its segments before the first with a wildcard.
fn literal_prefix(glob: &str) -> String {
    glob.split('/')
        .take_while(|seg| !seg.contains(['*', '?', '[', '{']))
        .collect::<Vec<_>>()
        .join("/")
}

/// The committed drafts that match `[review] drafts` and differ from the base (every one
/// when there is no base), parsed.
fn find_drafts(store: &Store, base: Option<ObjectId>, t: &mut Touched) -> Result<(), CommandError> {
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    let mut seen = BTreeSet::new();
    for g in &store.config().review.drafts {
        let Ok(pattern) = glob::Pattern::new(g) else {
            continue;
        };
        let mut prefix = literal_prefix(g);
        if prefix == *g {
            // A glob with no wildcard names one file: list its folder.
            prefix = prefix
                .rsplit_once('/')
                .map_or(String::new(), |(d, _)| d.to_string());
        }
        let before: HashMap<String, ObjectId> = match base {
            Some(b) => store.files_below(b, &prefix)?.into_iter().collect(),
            None => HashMap::new(),
        };
        for (path, id) in store.files_below(store.head(), &prefix)? {
            if !pattern.matches_with(&path, options)
                || before.get(&path) == Some(&id)
                || !seen.insert(path.clone())
            {
                continue;
            }
            let text = store.read(&path)?.unwrap_or_default();
            let kinds = &store.config().kinds;
            let draft = crate::model::parse_contract(&path, &text, kinds, Strictness::Draft)?;
            t.add(&draft.dataset, Touch::Draft { path: path.clone() });
            t.drafts
                .entry(draft.dataset.clone())
                .or_default()
                .push((path, draft));
        }
    }
    Ok(())
}

/// Versions published, sunsets moved, consumers and waivers edited since the base.
fn find_store_changes(
    store: &Store,
    base: Option<&Store>,
    t: &mut Touched,
) -> Result<(), CommandError> {
    let before_registry = match base {
        Some(b) => registry::load(b)?.unwrap_or_default(),
        None => Registry::default(),
    };
    let registry = registry::load(store)?.unwrap_or_default();
    let old_datasets: BTreeSet<String> = match base {
        Some(b) => b.datasets()?.into_iter().collect(),
        None => BTreeSet::new(),
    };
    // Only the history files whose blob differs from the base's are parsed: a store of
    // thousands of datasets is listed once, not read whole twice.
    let head_files = store.files_below(store.head(), layout::HISTORY)?;
    let changed: BTreeSet<String> = match base {
        Some(b) => {
            let before: HashMap<String, ObjectId> = store
                .files_below(b.head(), layout::HISTORY)?
                .into_iter()
                .collect();
            head_files
                .into_iter()
                .filter(|(p, id)| before.get(p) != Some(id))
                .map(|(p, _)| p)
                .collect()
        }
        None => head_files.into_iter().map(|(p, _)| p).collect(),
    };
    for dataset in store.datasets()? {
        let had = old_datasets.contains(&dataset);
        let old_versions = match base {
            Some(b) if had => b.versions(&dataset)?,
            _ => Vec::new(),
        };
        for v in store.versions(&dataset)? {
            if !old_versions.contains(&v) {
                t.add(
                    &dataset,
                    Touch::Published {
                        version: v.to_string(),
                    },
                );
                t.published.entry(dataset.clone()).or_default().push(v);
            }
        }
        if let Some(b) = base.filter(|_| had && changed.contains(&layout::history(&dataset))) {
            let old_moves = moves_of(&b.history(&dataset)?);
            let new_moves = moves_of(&store.history(&dataset)?);
            let old_lines = b.lines(&dataset)?;
            for m in new_moves.iter().skip(old_moves.len()) {
                let from = old_lines
                    .iter()
                    .find(|l| l.major == m.line)
                    .and_then(|l| l.sunset);
                t.add(
                    &dataset,
                    Touch::SunsetMoved {
                        line: m.line,
                        from,
                        to: Some(m.to),
                    },
                );
            }
        }
        let edited: Vec<String> = registry
            .subscribers(&dataset)
            .chain(before_registry.subscribers(&dataset))
            .filter(|c| registry.get(&c.name) != before_registry.get(&c.name))
            .map(|c| c.name.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if !edited.is_empty() {
            t.add(&dataset, Touch::ConsumersEdited { consumers: edited });
        }
        if !changed.contains(&layout::waivers(&dataset)) {
            continue;
        }
        let now = store.waivers(&dataset)?;
        let then = match base {
            Some(b) if had => b.waivers(&dataset)?,
            _ => Default::default(),
        };
        let granted: Vec<String> = now
            .waiver
            .iter()
            .filter(|w| !then.waiver.iter().any(|o| o.id == w.id))
            .map(|w| w.id.clone())
            .collect();
        let revoked: Vec<String> = now
            .unwaive
            .iter()
            .filter(|r| !then.unwaive.iter().any(|o| o.id == r.id))
            .map(|r| r.id.clone())
            .collect();
        if !granted.is_empty() || !revoked.is_empty() {
            t.add(&dataset, Touch::WaiversEdited { granted, revoked });
        }
    }
    Ok(())
}

/// The smallest version after `prev` that bumps by `bump`.
fn bumped(prev: &Version, bump: Bump) -> Version {
    match bump {
        Bump::None => prev.clone(),
        Bump::Patch => Version::new(prev.major, prev.minor, prev.patch + 1),
        Bump::Minor => Version::new(prev.major, prev.minor + 1, 0),
        Bump::Major => Version::new(prev.major + 1, 0, 0),
    }
}

fn review_dataset(
    ctx: &Context,
    store: &Store,
    t: &Touched,
    dataset: &str,
    registry: &Registry,
    newest: &HashMap<String, crate::consumers::NewestRead>,
) -> Result<DatasetReview, CommandError> {
    let config = store.config();
    // A dataset whose first version is drafted has nothing at HEAD yet.
    let (existing, head_lines): (Vec<Contract>, Vec<Line>) = if store.versions(dataset)?.is_empty()
    {
        (Vec::new(), Vec::new())
    } else {
        (
            store.contracts(dataset, Strictness::Reading)?,
            store.lines(dataset)?,
        )
    };
    let moves = moves_of(&store.history(dataset)?);
    let path = layout::releases(dataset);
    let records = parse_records(&path, &store.read(&path)?.unwrap_or_default())?;
    let published = t.published.get(dataset).cloned().unwrap_or_default();
    let mut proposals = Vec::new();
    let mut drafted: Vec<&Contract> = Vec::new();
    for v in &published {
        let before: Vec<Contract> = existing
            .iter()
            .filter(|c| c.version < *v)
            .cloned()
            .collect();
        let Some(c) = existing.iter().find(|c| c.version == *v) else {
            continue;
        };
        let step = check_step(before.last(), c, &config.policy);
        let source = layout::contract(dataset, &v.to_string());
        let bt = backtest(&records, ctx.today, None, before.last(), c);
        let refusals = step.refusals.iter().map(ToString::to_string).collect();
        proposals.push(proposal(source, c, before.last(), step, refusals, bt));
    }
    for (path, draft) in t.drafts.get(dataset).map(Vec::as_slice).unwrap_or_default() {
        if published.contains(&draft.version) {
            // Proposed in this same pull request: the published version above is its review.
            continue;
        }
        let prev = existing.last();
        let bt = backtest(&records, ctx.today, None, prev, draft);
        talk_backtest(ctx, dataset, &bt);
        let (step, refusals) = if existing.iter().any(|c| c.version == draft.version) {
            let (step, _) = judge(&existing, &moves, draft, config, false);
            let r = Refusal::AlreadyPublished {
                version: draft.version.clone(),
                on: None,
                commit: None,
            };
            (step, vec![r])
        } else {
            judge(&existing, &moves, draft, config, false)
        };
        let refusals = refusals.iter().map(ToString::to_string).collect();
        proposals.push(proposal(path.clone(), draft, prev, step, refusals, bt));
        drafted.push(draft);
    }
    let mut all: Vec<&Contract> = existing.iter().collect();
    all.extend(drafted.iter().copied());
    let all_lines = lines(&all, &moves);
    let changes: Vec<Change> = proposals
        .iter()
        .flat_map(|p| p.changes.iter().cloned())
        .collect();
    let consumers = consumer_rows(
        dataset,
        registry,
        &changes,
        !proposals.is_empty(),
        &head_lines,
        newest,
    );
    let window = window_view(ctx, store, dataset, &all_lines)?;
    let links = config.notify.registry_url.as_ref().map(|u| {
        let page = format!("{}/{}", u.trim_end_matches('/'), dataset_page(dataset));
        Links {
            timeline: format!("{page}#timeline"),
            page,
        }
    });
    Ok(DatasetReview {
        dataset: dataset.to_string(),
        touched: t.touches.get(dataset).cloned().unwrap_or_default(),
        proposals,
        consumers,
        window,
        links,
    })
}

fn proposal(
    source: String,
    c: &Contract,
    prev: Option<&Contract>,
    step: crate::model::proposal::Step,
    refusals: Vec<String>,
    backtest: crate::release::record::Backtest,
) -> Proposal {
    let required = step.changes.required;
    Proposal {
        source,
        version: c.version.to_string(),
        previous: prev.map(|p| p.version.to_string()),
        required_bump: required,
        requires: prev.map(|p| bumped(&p.version, required).to_string()),
        declared_bump: step.bump,
        sufficient: prev.is_none() || step.bump >= required,
        changes: step.changes.changes,
        refusals,
        backtest,
    }
}

/// Every subscriber of `dataset`: its verdict on `changes` (when a version is proposed) and
/// where its newest read stands.
fn consumer_rows(
    dataset: &str,
    registry: &Registry,
    changes: &[Change],
    judged: bool,
    head_lines: &[Line],
    newest: &HashMap<String, crate::consumers::NewestRead>,
) -> Vec<ConsumerRow> {
    let standings = classify(dataset, head_lines, registry, newest);
    registry
        .impacts(dataset, changes)
        .into_iter()
        .map(|i| {
            let s = standings.iter().find(|s| s.consumer == i.consumer);
            ConsumerRow {
                verdict: judged.then_some(i.verdict),
                breaking_changes: i.changes,
                uses_everything: i.uses_everything,
                status: s.map_or("-", |s| s.status.as_str()).to_string(),
                last_read: s.and_then(|s| s.last_read),
                version: s.and_then(|s| s.version.as_ref()).map(ToString::to_string),
                consumer: i.consumer,
            }
        })
        .collect()
}

/// The lines not yet retired on `--today`, the windows still open or to come, and the live
/// waivers whose last day falls inside one of them.
fn window_view(
    ctx: &Context,
    store: &Store,
    dataset: &str,
    all_lines: &[Line],
) -> Result<WindowView, CommandError> {
    let today = ctx.today;
    let shown: Vec<LineRow> = all_lines
        .iter()
        .filter(|l| l.sunset.is_none_or(|s| s > today))
        .map(|l| LineRow {
            line: l.major,
            state: l.state(today),
            opens: l.opens,
            sunset: l.sunset,
            newest: l.newest().to_string(),
        })
        .collect();
    let open: Vec<_> = windows(all_lines)
        .into_iter()
        .filter(|w| w.sunset > today)
        .collect();
    let waivers = store.waivers(dataset)?;
    let waivers_ending = waivers
        .live(today)
        .filter(|w| {
            open.iter()
                .any(|win| win.opens <= w.until && w.until < win.sunset)
        })
        .map(|w| WaiverRow {
            id: w.id.clone(),
            clause: w.clause.clone(),
            line: w.line,
            until: w.until,
        })
        .collect();
    Ok(WindowView {
        lines: shown,
        windows: open,
        waivers_ending,
    })
}

fn print_text(ctx: &Context, r: &Review) {
    outln!(
        ctx,
        "compared with {} ({}) on {}",
        r.base,
        &r.compared_with[..r.compared_with.len().min(12)],
        r.today
    );
    if r.datasets.is_empty() {
        outln!(
            ctx,
            "no draft, contract, sunset, consumer or waiver changed since the base"
        );
    }
    for d in &r.datasets {
        outln!(ctx);
        for line in verdict_lines(d) {
            outln!(ctx, "{line}");
        }
        for p in &d.proposals {
            outln!(ctx);
            outln!(ctx, "{} {}:", p.source, p.version);
            for refusal in &p.refusals {
                outln!(ctx, "  refused: {refusal}");
            }
            if !p.changes.is_empty() {
                outln!(ctx, "{}", changes_table(ctx, &p.changes));
            }
            print_backtest(ctx, &p.backtest, &d.dataset);
        }
        if !d.consumers.is_empty() {
            outln!(ctx);
            outln!(ctx, "consumers of {}:", d.dataset);
            let rows = d.consumers.iter().map(|c| {
                vec![
                    c.consumer.clone().into(),
                    c.verdict.map_or(Cell::from("-"), Cell::of),
                    if c.breaking_changes.is_empty() {
                        "-".into()
                    } else {
                        c.breaking_changes.join(", ").into()
                    },
                    c.status.clone().into(),
                    read_text(c.last_read).into(),
                    c.version.clone().unwrap_or_else(|| "-".to_string()).into(),
                ]
            });
            print_table(
                ctx,
                &[
                    key("consumer"),
                    key("verdict"),
                    key("breaking changes it uses"),
                    key("status"),
                    key("last read"),
                    key("version"),
                ],
                rows,
            );
        }
        for w in &d.window.windows {
            outln!(
                ctx,
                "window: line {} -> {} from {} to {} ({} days)",
                w.old_line,
                w.new_line,
                w.opens,
                w.sunset,
                w.days()
            );
        }
        for w in &d.window.waivers_ending {
            outln!(ctx, "waiver ending within it: {} (until {})", w.id, w.until);
        }
        if let Some(l) = &d.links {
            outln!(ctx, "registry: {}", l.page);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::literal_prefix;

    #[test]
    fn a_glob_is_listed_from_its_folder_before_the_first_wildcard() {
        assert_eq!(literal_prefix("drafts/**/*.toml"), "drafts");
        assert_eq!(literal_prefix("a/b/c-*.toml"), "a/b");
        assert_eq!(literal_prefix("*.toml"), "");
        assert_eq!(literal_prefix("x/[ab]/y.toml"), "x");
    }

    #[test]
    fn the_default_glob_reads_drafts_at_any_depth_and_nothing_else() {
        let p = glob::Pattern::new(crate::model::config::DEFAULT_DRAFTS).unwrap();
        let o = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        for yes in ["drafts/a.toml", "drafts/roads/b.toml", "drafts/x/y/z.toml"] {
            assert!(p.matches_with(yes, o), "{yes}");
        }
        for no in [
            "drafts/a.json",
            "contracts/a/1.0.0.toml",
            "a.toml",
            "other/drafts/a.toml",
        ] {
            assert!(!p.matches_with(no, o), "{no}");
        }
    }
}
