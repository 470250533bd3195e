//! What every command gets: the store it works on, the output format, and the day it runs on.
//! The clock is read here, at the edge, and nowhere else: commands ask the context for the day
//! (`today`) and for the instant they record (`now()`).

use std::collections::{BTreeSet, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::flags::{Format, Globals, PartArgs};
use super::output::{print_json, Print, Printer, Said};
use super::CommandError;
use crate::consumers::daily::DailyReads;
use crate::consumers::scan_report::{self, ScanNote};
use crate::consumers::store_scan;
use crate::consumers::{registry, Registry, Scan, ScanRequest};
use crate::model::{parse_config, Config};
use crate::release::record::Backtest;
use crate::release::{assemble, Profile, Progress, ReadNotes, ReadOptions};
use crate::render::ci::Finding;
use crate::store::{layout, Store, StoreError, Sync, WriterNote};

pub struct Context {
    pub repo: Option<PathBuf>,
    pub format: Format,
    pub today: NaiveDate,
    /// How writers sync with a remote (`--remote`, `--no-sync`, else `[store] remote`).
    pub sync: Sync,
    /// Where output goes and how it looks (`--quiet`, `--color`, the terminal's width).
    pub printer: Printer,
    /// `--now` / `CONTRACTS_NOW`, or the system clock when unset.
    fixed_now: Option<DateTime<FixedOffset>>,
}

/// A command's context holds this run's [`Printer`], so `outln!(ctx, ...)` reads the same in
/// `run` and in the helpers it calls.
impl Print for Context {
    fn printer(&self) -> &Printer {
        &self.printer
    }
}

/// The variable that sets the day when `--today` is not given.
pub const TODAY_ENV: &str = "CONTRACTS_TODAY";

impl Context {
    pub fn new(cli: &Globals, printer: Printer) -> Result<Context, CommandError> {
        // `--today`, else the variable, else the clock. The variable is read here (not by
        // clap) so that its mistakes name it.
        let from_env = match (cli.today, std::env::var_os(TODAY_ENV)) {
            (None, Some(v)) if !v.is_empty() => {
                let text = v.to_string_lossy();
                Some(
                    crate::model::parse_day(&text)
                        .map_err(|e| CommandError::input(format!("{TODAY_ENV}={e}")))?,
                )
            }
            _ => None,
        };
        Ok(Context {
            repo: cli.repo.clone(),
            format: cli.format,
            today: cli.today.or(from_env).unwrap_or_else(|| match cli.now {
                Some(now) => now.with_timezone(&Utc).date_naive(),
                None => Utc::now().date_naive(),
            }),
            fixed_now: cli.now,
            printer,
            sync: match (&cli.remote, cli.no_sync) {
                (Some(name), _) => Sync::Remote(name.clone()),
                (None, true) => Sync::Off,
                (None, false) => Sync::Config,
            },
        })
    }

    /// The instant a record, a claim or a notice is stamped with: the system clock, unless
    /// `--now` fixed it.
    pub fn now(&self) -> DateTime<FixedOffset> {
        self.fixed_now.unwrap_or_else(|| Utc::now().fixed_offset())
    }

    /// The store's root: `--repo`, or the nearest directory upwards holding `contracts.toml`
    /// or `.git`.
    pub fn find_root(&self) -> Option<PathBuf> {
        if let Some(r) = &self.repo {
            return Some(r.clone());
        }
        let cwd = std::env::current_dir().ok()?;
        cwd.ancestors()
            .find(|d| d.join(layout::CONFIG).is_file() || d.join(".git").exists())
            .map(Path::to_path_buf)
    }

    /// The store's configuration as committed, or the work tree's `contracts.toml` outside a
    /// store, or the defaults (so `diff` of two loose files works anywhere with the built-in
    /// kinds).
    pub fn config(&self) -> Result<Config, CommandError> {
        let Some(root) = self.find_root() else {
            return Ok(Config::default());
        };
        // Inside a store, the committed configuration, as every other command reads it; the
        // work-tree file only when the repository has none committed (not a store yet).
        if root.join(".git").exists() {
            match Store::open(&root) {
                Ok(store) => {
                    warn_uncommitted(self, &store, None);
                    return Ok(store.config().clone());
                }
                Err(crate::store::StoreError::NotAStore { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let path = root.join(layout::CONFIG);
        if !path.is_file() {
            if self.repo.is_some() {
                return Err(CommandError::input(format!(
                    "{} is not a contracts store: it has no contracts.toml",
                    root.display()
                ))
                .with_hint("run `contracts init` to create one"));
            }
            return Ok(Config::default());
        }
        let text = read_input(&path)?;
        Ok(parse_config(&path.display().to_string(), &text)?)
    }

    /// Where the store is: `--repo`, or the current directory.
    pub(super) fn repo_dir(&self) -> Result<PathBuf, CommandError> {
        match &self.repo {
            Some(r) => Ok(r.clone()),
            None => Ok(std::env::current_dir()?),
        }
    }

    /// The store this command works on: `--repo`, or the repository containing the current
    /// directory.
    pub fn store(&self) -> Result<Store, CommandError> {
        Ok(self.try_store()??)
    }

    /// The store as [`Context::store`] opens it, or, once the repository is found, why it
    /// does not open: `check` reports a `contracts.toml` that does not read as a finding.
    pub fn try_store(&self) -> Result<Result<Store, StoreError>, CommandError> {
        let dir = self.repo_dir()?;
        Ok(Store::open(&dir).inspect(|store| warn_uncommitted(self, store, None)))
    }

    /// The store without the uncommitted-change warning, for a command that learns which
    /// dataset it is about only after opening it (`propose`): it then calls
    /// [`warn_uncommitted`] itself.
    pub fn store_unwarned(&self) -> Result<Store, CommandError> {
        let dir = self.repo_dir()?;
        Ok(Store::open(&dir)?)
    }

    /// The store, for a command that reads one dataset: the uncommitted-change warning looks
    /// only at the files such a command reads (the config, the registry, the templates and
    /// that dataset's files), so it costs a few stats, not one per file of the store.
    pub fn store_for(&self, dataset: &str) -> Result<Store, CommandError> {
        let store = self.store_unwarned()?;
        if crate::model::is_dataset_name(dataset) {
            warn_uncommitted(self, &store, Some(dataset));
        } else {
            warn_uncommitted(self, &store, None);
        }
        Ok(store)
    }

    /// The store a writer works on: like [`Context::store`], after repairing a checkout left
    /// behind HEAD and syncing with the remote (see [`Store::open_writer`]).
    pub fn writer_store(&self) -> Result<Store, CommandError> {
        let dir = self.repo_dir()?;
        Ok(Store::open_writer(&dir, &self.sync, self.notices())?)
    }

    /// The sink a writer's notices (retries, repairs, a lagging checkout) go to: talk on
    /// stderr, silenced by `--quiet`.
    fn notices(&self) -> crate::store::Notices {
        let printer = self.printer.clone();
        std::sync::Arc::new(move |note: &WriterNote| printer.talk(format_args!("{}", Said(note))))
    }

    /// The store for `notify`: synced with the remote (per `--remote`, `--no-sync` and
    /// `[store] remote`) so its claim and confirmation are pushed, without holding the
    /// writers' lock through the batch (see [`Store::open_synced`]).
    pub fn synced_store(&self) -> Result<Store, CommandError> {
        let dir = self.repo_dir()?;
        let store = Store::open_synced(&dir, &self.sync, self.notices())?;
        warn_uncommitted(self, &store, None);
        Ok(store)
    }
}

// The consumer registry and the consumption log, as the commands that read them ask for
// them: the library reads and scans (`consumers::registry`, `consumers::store_scan`); what it
// notes is said here, on stderr.

/// The store's registry; a store without `consumers.toml` has no registered consumer
/// (everyone who reads is then `unknown`), which is said on stderr.
pub fn registry(ctx: &Context, store: &Store) -> Result<Registry, CommandError> {
    match registry::load(store)? {
        Some(r) => Ok(r),
        None => {
            no_registry(ctx);
            Ok(Registry::default())
        }
    }
}

/// That the store has no `consumers.toml`, said on stderr.
fn no_registry(ctx: &Context) {
    talkln!(
        ctx,
        "warning: the store has no consumers.toml: no consumer is registered"
    );
}

/// The registry of the store the command runs in, if it runs in one (`diff` of two loose
/// files outside a store has no consumers); none registered without `consumers.toml`.
pub fn registry_if_store(ctx: &Context) -> Result<Option<Registry>, CommandError> {
    let Some(root) = ctx.find_root() else {
        return Ok(None);
    };
    if !root.join(".git").exists() {
        return Ok(None);
    }
    match Store::open(&root) {
        Ok(store) => Ok(Some(registry::load(&store)?.unwrap_or_default())),
        Err(crate::store::StoreError::NotAStore { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The newest reads of `datasets` up to `--today`, their principals claimed by `registry`
/// ([`store_scan::walk_logs`], then [`scan_report::Walked::claimed`]); the notes on stderr.
pub fn scan_logs(
    ctx: &Context,
    store: &Store,
    datasets: BTreeSet<String>,
    registry: &Registry,
    attributes: bool,
) -> Result<(Scan, ScanRequest), CommandError> {
    let mut notes = Vec::new();
    let want = (attributes, false);
    let walked = store_scan::walk_logs(store, datasets, ctx.today, want, &mut notes);
    let claimed = walked.and_then(|w| w.claimed(store, registry, &mut notes));
    talk_scan_notes(ctx, &notes);
    let (scan, req, _) = claimed?;
    Ok((scan, req))
}

/// [`registry`] and [`scan_logs`] with it, the registry parsed while the logs are walked
/// ([`store_scan::registry_and_walk`]); the same notes, in the same order.
pub fn registry_and_scan(
    ctx: &Context,
    store: &Store,
    datasets: BTreeSet<String>,
    attributes: bool,
) -> Result<(Registry, Scan, ScanRequest), CommandError> {
    let (registry, scan, req, _) = registry_scan_daily(ctx, store, datasets, (attributes, false))?;
    Ok((registry, scan, req))
}

/// [`registry_and_scan`], and with `daily` the reads of the same datasets day by day over
/// the lookback, counted in the same walk over the logs and claimed by the same registry.
pub fn registry_scan_daily(
    ctx: &Context,
    store: &Store,
    datasets: BTreeSet<String>,
    want: (bool, bool),
) -> Result<(Registry, Scan, ScanRequest, HashMap<String, DailyReads>), CommandError> {
    let (registry, scan, req, reads) = committed_registry_scan_daily(ctx, store, datasets, want)?;
    Ok((registry.unwrap_or_default(), scan, req, reads))
}

/// What [`committed_registry_scan_daily`] gives: the registry as committed, the scan, its
/// request, the reads day by day.
pub type Committed = (
    Option<Registry>,
    Scan,
    ScanRequest,
    HashMap<String, DailyReads>,
);

/// [`registry_scan_daily`] with the registry as committed: `None` without `consumers.toml`
/// (warned of), where nobody is registered, so that a gate can tell "nobody subscribed reads
/// it" from "nobody is subscribed at all".
pub fn committed_registry_scan_daily(
    ctx: &Context,
    store: &Store,
    datasets: BTreeSet<String>,
    want: (bool, bool),
) -> Result<Committed, CommandError> {
    let mut notes = Vec::new();
    let (committed, walked) =
        store_scan::registry_and_walk(store, datasets, ctx.today, want, &mut notes)?;
    let none = Registry::default();
    let registry = match &committed {
        Some(r) => r,
        None => {
            no_registry(ctx);
            &none
        }
    };
    let claimed = walked.and_then(|w| w.claimed(store, registry, &mut notes));
    talk_scan_notes(ctx, &notes);
    let (scan, req, reads) = claimed?;
    // Counted in the same walk whenever `daily` asks for them.
    Ok((committed, scan, req, reads.unwrap_or_default()))
}

/// [`store_scan::scan_daily`] up to `--today`, its principals claimed by `registry`
/// ([`scan_report::claim_daily`]); its notes on stderr.
pub fn scan_daily(
    ctx: &Context,
    store: &Store,
    datasets: &BTreeSet<String>,
    from: Option<NaiveDate>,
    registry: &Registry,
) -> Result<HashMap<String, DailyReads>, CommandError> {
    let mut notes = Vec::new();
    let result = store_scan::scan_daily(store, datasets, from, ctx.today, &mut notes);
    talk_scan_notes(ctx, &notes);
    let mut all = result?;
    scan_report::claim_daily(&mut all, registry);
    Ok(all)
}

/// Line `major` of `dataset`, one of its `lines`; else the input error that lists the lines
/// it has.
pub fn line_of<'a>(
    dataset: &str,
    lines: &'a [crate::model::Line],
    major: u64,
) -> Result<&'a crate::model::Line, CommandError> {
    lines.iter().find(|l| l.major == major).ok_or_else(|| {
        let have: Vec<String> = lines.iter().map(|l| l.major.to_string()).collect();
        CommandError::input(format!(
            "dataset `{dataset}` has no line {major} (its lines: {})",
            have.join(", ")
        ))
    })
}

/// The readers of `dataset` at a version it does not have ([`super::output::unknown_versions`]),
/// one warning each on stderr.
pub fn warn_unknown_versions(
    ctx: &Context,
    dataset: &str,
    standings: &[crate::consumers::Standing],
) {
    for line in super::output::unknown_versions(dataset, standings) {
        talkln!(ctx, "{line}");
    }
}

/// A backtest's notes on `dataset`, worded by the printer ([`Said`]), one line each on stderr.
pub fn talk_backtest(ctx: &Context, dataset: &str, backtest: &Backtest) {
    for n in backtest.notes() {
        talkln!(ctx, "{}", Said(&(dataset, n)));
    }
}

/// A scan's notes, worded by the printer ([`Said`]), one line each on stderr.
pub fn talk_scan_notes(ctx: &Context, notes: &[ScanNote]) {
    for n in notes {
        talkln!(ctx, "{}", Said(n));
    }
}

/// How many uncommitted files are named one by one before the rest are only counted.
const SHOWN_UNCOMMITTED: usize = 10;

/// One rule for what a command reads: the store as committed at HEAD. An uncommitted change
/// to a store file is therefore not used, and each such file is named on stderr.
pub fn warn_uncommitted(ctx: &Context, store: &Store, dataset: Option<&str>) {
    match store.uncommitted(dataset) {
        Ok(files) => {
            for f in files.iter().take(SHOWN_UNCOMMITTED) {
                if is_published_contract(store, f) {
                    // Committing the edit would break the immutability `check` proves, so the
                    // usual hint would lead the user into a failing store.
                    talkln!(
                        ctx,
                        "warning: {f} is a published contract, and published contracts never \
                         change: restore it with `git checkout -- {f}` and propose a new version"
                    );
                } else {
                    talkln!(
                        ctx,
                        "warning: uncommitted changes to {f} are not used; commit them"
                    );
                }
            }
            if files.len() > SHOWN_UNCOMMITTED {
                talkln!(ctx,
                    "warning: {} more store files have uncommitted changes (`git status` lists them)",
                    files.len() - SHOWN_UNCOMMITTED
                );
            }
        }
        Err(e) => talkln!(ctx, "warning: {e}; uncommitted changes are not reported"),
    }
}

/// Whether a store path is a contract file that HEAD already holds (one `propose` published).
fn is_published_contract(store: &Store, path: &str) -> bool {
    path.starts_with("contracts/")
        && path.ends_with(".toml")
        && matches!(store.read(path), Ok(Some(_)))
}

// `--format github` and `--format sarif`: each command turns its own report into
// findings; these print them.

/// Print the findings in the CI format asked for.
pub fn print_ci(ctx: &Context, findings: &[Finding]) {
    match ctx.format {
        Format::Github => {
            let text = crate::render::ci::github(findings);
            if !text.is_empty() {
                outln!(ctx, "{}", text.trim_end());
            }
        }
        _ => print_json(
            ctx,
            &crate::render::ci::sarif(findings, env!("CARGO_PKG_VERSION")),
        ),
    }
}

/// A path for an annotation: `rel` under `root`, made relative to the current directory
/// when inside it (GitHub and SARIF viewers resolve paths against the checkout root, where CI
/// runs), `/`-separated.
pub fn shown_path(root: &Path, rel: &str) -> String {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let full = canon(root).join(rel);
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| full.strip_prefix(canon(&cwd)).ok().map(Path::to_path_buf))
        .unwrap_or(full);
    shown.to_string_lossy().replace('\\', "/")
}

// Profiling a release: the library profiles and merges (`release::assemble`); the progress
// bar and the readers' notes are drawn here, on stderr.

/// The profile of `files` (when there are any) merged with the saved profiles `merge`, in
/// order; `None` when both are empty. The readers' warnings are printed on stderr, and what
/// was read of objects in object storage: a total always, one line per object when
/// `verbose`.
pub fn profile_and_merge(
    ctx: &Context,
    files: &[PathBuf],
    opts: &ReadOptions,
    verbose: bool,
    merge: &[PathBuf],
) -> Result<Option<Profile>, CommandError> {
    Ok(profile_with_warnings(ctx, files, opts, verbose, merge)?.0)
}

/// [`profile_and_merge`], and the readers' warnings it printed, for a command that also
/// carries them in its output (`validate`'s json and CI formats).
fn profile_with_warnings(
    ctx: &Context,
    files: &[PathBuf],
    opts: &ReadOptions,
    verbose: bool,
    merge: &[PathBuf],
) -> Result<(Option<Profile>, Vec<String>), CommandError> {
    let mut notes = ReadNotes::default();
    let bar = Bar::new(ctx.printer.quiet());
    let result = assemble::profile_and_merge(files, opts, &bar, &mut notes, merge);
    bar.finish();
    talk_read_notes(ctx, &notes, verbose);
    let warnings = notes.warnings.iter().map(|w| Said(w).to_string());
    Ok((result?, warnings.collect()))
}

/// [`profile_and_merge`] for a command that needs a profile (`profile`, `validate`): read as
/// `part` says, and refused when no data file and no profile was given. The readers' warnings
/// come with it.
pub fn required_profile(
    ctx: &Context,
    files: &[PathBuf],
    part: &PartArgs,
    merge: &[PathBuf],
) -> Result<(Profile, Vec<String>), CommandError> {
    let (profile, warnings) =
        profile_with_warnings(ctx, files, &part.options(), part.verbose(), merge)?;
    let profile = profile
        .ok_or_else(|| CommandError::input("give at least one data file or --merge profile"))?;
    Ok((profile, warnings))
}

fn talk_read_notes(ctx: &Context, notes: &ReadNotes, verbose: bool) {
    for w in &notes.warnings {
        talkln!(ctx, "warning: {}", Said(w));
    }
    if verbose {
        for r in &notes.reads {
            talkln!(
                ctx,
                "read {} of {} bytes ({}) of {} in {} requests",
                r.bytes_read,
                r.size,
                percent(r.bytes_read, r.size),
                r.url,
                r.requests
            );
        }
    }
    if !notes.reads.is_empty() {
        let read: u64 = notes.reads.iter().map(|r| r.bytes_read).sum();
        let size: u64 = notes.reads.iter().map(|r| r.size).sum();
        let requests: u64 = notes.reads.iter().map(|r| r.requests).sum();
        let n = notes.reads.len();
        talkln!(
            ctx,
            "read {read} of {size} bytes ({}) of {n} object{} in {requests} requests",
            percent(read, size),
            if n == 1 { "" } else { "s" }
        );
    }
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// A progress bar on stderr, drawn only when stderr is a terminal and talk is not silenced
/// (`--quiet`).
pub struct Bar(Mutex<Option<ProgressBar>>, bool);

impl Bar {
    pub fn new(quiet: bool) -> Bar {
        Bar(Mutex::new(None), quiet)
    }
}

impl Progress for Bar {
    fn start(&self, file: &Path, total: u64) {
        if self.1 || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{msg} [{bar:30}] {percent}% {elapsed_precise} eta {eta}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(file.display().to_string());
        if let Ok(mut slot) = self.0.lock() {
            if let Some(old) = slot.replace(bar) {
                old.finish_and_clear();
            }
        }
    }

    fn working(&self, what: &str) {
        if self.1 || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
            bar.set_style(style);
        }
        bar.set_message(what.to_string());
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        if let Ok(mut slot) = self.0.lock() {
            if let Some(old) = slot.replace(bar) {
                old.finish_and_clear();
            }
        }
    }

    fn advance(&self, done: u64) {
        if let Ok(slot) = self.0.lock() {
            if let Some(bar) = slot.as_ref() {
                bar.inc(done);
            }
        }
    }

    fn finish(&self) {
        if let Ok(mut slot) = self.0.lock() {
            if let Some(bar) = slot.take() {
                bar.finish_and_clear();
            }
        }
    }
}

/// Read a file the user named: a missing or unreadable file is bad input (exit 2).
pub fn read_input(path: &Path) -> Result<String, CommandError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CommandError::input(format!("cannot read {}: {e}", path.display())))?;
    // Bad UTF-8 has no line to point at, so it is named by its byte offset, as in store files.
    crate::store::utf8(bytes, &path.display().to_string()).map_err(CommandError::from)
}

/// Every reader of one dataset in the lookback, classified and passed through the thresholds:
/// what `can-retire` and `can-remove` both judge from.
pub struct Counted {
    pub registry: crate::consumers::Registry,
    /// The store has a `consumers.toml`. Without one nobody is subscribed, so "no subscribed
    /// consumer uses it" holds of anything and proves nothing: a gate says "cannot tell".
    pub registered: bool,
    pub scan: crate::consumers::Scan,
    pub req: crate::consumers::ScanRequest,
    pub standings: Vec<crate::consumers::Standing>,
    /// Day by day, for each reader's counts on a line.
    pub reads: crate::consumers::daily::DailyReads,
}

pub fn counted_standings(
    ctx: &Context,
    store: &crate::store::Store,
    dataset: &str,
    lines: &[crate::model::Line],
    attributes: bool,
) -> Result<Counted, CommandError> {
    // The day-by-day reads give each reader's counts on the line and the day since which
    // nobody holds it.
    let names = [dataset.to_string()].into();
    let (committed, scan, req, mut reads) =
        committed_registry_scan_daily(ctx, store, names, (attributes, true))?;
    let registered = committed.is_some();
    let registry = committed.unwrap_or_default();
    let mut standings = crate::consumers::classify(dataset, lines, &registry, &scan.of(dataset));
    let reads = reads.remove(dataset).unwrap_or_default();
    let thresholds = store.config().consumption.thresholds;
    let usage = |c: &str, l: u64| reads.usage(c, l, req.from, ctx.today);
    crate::consumers::exempt(&mut standings, &registry, thresholds, Some(&usage));
    Ok(Counted {
        registry,
        registered,
        scan,
        req,
        standings,
        reads,
    })
}
