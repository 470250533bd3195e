use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::context::read_input;
use super::output::{key, print_json, table};
use super::{CommandError, Context, Format, Outcome};
use crate::release::{self, Profile, Progress, ReadNotes};

/// What a release actually contains
///
/// Profile a release: what it actually contains — CRS, envelope, geometry types, attributes
/// with their types and null fractions, feature count, invalid-geometry fraction.
///
/// Several FILEs form one release and give one profile. Profiles are mergeable: `--merge`
/// adds profiles saved with `--format json` (for example one per partition, made where the
/// partition lies), and the result is the profile of the whole release.
///
/// A FILE may be a directory or a glob of partition files (Hive-style `key=value/` folders
/// included), or an object, prefix or glob in object storage (`s3://bucket/key`, `gs://`,
/// `az://`, `https://`); the partitions are profiled in parallel and merged. Credentials come
/// from each cloud's environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`) and are never printed.
///
/// Reads GeoJSON, FlatGeobuf, GeoPackage, GeoParquet and Shapefile. Exit 0, 2 for an
/// unreadable or corrupt file, 3 when object storage cannot be reached or refuses access.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Data files, directories, globs or URLs of one release (.geojson, .fgb, .gpkg, .parquet, .shp)
    files: Vec<PathBuf>,
    /// Saved profiles (`profile --format json`) to merge into the result
    #[arg(long, value_name = "P.json", num_args = 1..)]
    merge: Vec<PathBuf>,
    #[command(flatten)]
    part: PartArgs,
}

/// Which part of a file to read, where a format holds several.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PartArgs {
    /// The GeoPackage feature table to read (required when the file has several)
    #[arg(long, value_name = "NAME")]
    layer: Option<String>,
    /// The GeoParquet geometry column to read [default: the primary column]
    #[arg(long, value_name = "NAME")]
    geometry_column: Option<String>,
    /// Print on stderr what was read of each object in object storage, against its size
    #[arg(long)]
    verbose: bool,
}

impl PartArgs {
    pub(super) fn verbose(&self) -> bool {
        self.verbose
    }

    pub(super) fn options(&self) -> release::ReadOptions {
        release::ReadOptions {
            layer: self.layer.clone(),
            geometry_column: self.geometry_column.clone(),
        }
    }
}

/// A progress bar on stderr, drawn only when stderr is a terminal and talk is not silenced
/// (`--quiet`).
pub(super) struct Bar(Mutex<Option<ProgressBar>>, bool);

impl Bar {
    pub(super) fn new(quiet: bool) -> Bar {
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

/// Profile the files of one release, printing the readers' warnings on stderr.
pub(super) fn profile_release(
    ctx: &Context,
    files: &[PathBuf],
    opts: &release::ReadOptions,
) -> Result<Profile, CommandError> {
    profile_release_with(ctx, files, opts, false)
}

/// [`profile_release`]; what was read of objects in object storage is printed on stderr:
/// a total always, one line per object when `verbose`.
pub(super) fn profile_release_with(
    ctx: &Context,
    files: &[PathBuf],
    opts: &release::ReadOptions,
    verbose: bool,
) -> Result<Profile, CommandError> {
    let mut notes = ReadNotes::default();
    let bar = Bar::new(ctx.printer.quiet());
    let result = release::profile_files_with(files, opts, &bar, &mut notes);
    bar.finish();
    for w in &notes.warnings {
        talkln!(ctx, "warning: {w}");
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
    Ok(result?)
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// Read a saved profile.
pub(super) fn load_profile(path: &Path) -> Result<Profile, CommandError> {
    let text = read_input(path)?;
    let p: Profile = serde_json::from_str(&text).map_err(|e| {
        CommandError::input(format!("{}: not a saved profile: {e}", path.display()))
    })?;
    p.checked()
        .map_err(|e| CommandError::input(format!("{}: {e}", path.display())))
}

/// The profile of `files` (when there are any) merged with the saved profiles `merge`, in
/// order; `None` when both are empty. What `profile` prints and `validate` checks.
pub(super) fn profile_and_merge(
    ctx: &Context,
    files: &[PathBuf],
    opts: &release::ReadOptions,
    verbose: bool,
    merge: &[PathBuf],
) -> Result<Option<Profile>, CommandError> {
    let mut profile = if files.is_empty() {
        None
    } else {
        Some(profile_release_with(ctx, files, opts, verbose)?)
    };
    for m in merge {
        let p = load_profile(m)?;
        profile = Some(match profile {
            None => p,
            Some(acc) => acc.merge(&p).map_err(|e| {
                CommandError::input(format!("{}: cannot be merged: {e}", m.display()))
            })?,
        });
    }
    Ok(profile)
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    if args.files.is_empty() && args.merge.is_empty() {
        return Err(CommandError::input(
            "give at least one data file or --merge profile",
        ));
    }
    let profile = profile_and_merge(
        ctx,
        &args.files,
        &args.part.options(),
        args.part.verbose,
        &args.merge,
    )?;
    let Some(profile) = profile else {
        unreachable!("at least one file or profile was given")
    };
    match ctx.format {
        Format::Json => print_json(ctx, &profile),
        _ => print_text(ctx, &profile),
    }
    Ok(Outcome::Clean)
}

fn number(x: f64) -> String {
    format!("{x}")
}

pub(super) fn print_text(ctx: &Context, p: &Profile) {
    let envelope = p.envelope.map_or("-".to_string(), |e| {
        let e: [f64; 4] = e.into();
        format!(
            "[{}, {}, {}, {}]",
            number(e[0]),
            number(e[1]),
            number(e[2]),
            number(e[3])
        )
    });
    let fraction = |k: &str| p.metrics.get(k).copied().unwrap_or(0.0);
    let rows = vec![
        vec!["files".to_string(), p.files.join(", ")],
        vec!["format".to_string(), p.format.clone()],
        vec![
            "crs".to_string(),
            p.crs.clone().unwrap_or_else(|| "unknown".into()),
        ],
        vec!["features".to_string(), p.feature_count.to_string()],
        vec![
            "null geometries".to_string(),
            format!(
                "{} ({:.4})",
                p.null_geometries,
                fraction("null_geometry_fraction")
            ),
        ],
        vec![
            "invalid geometries".to_string(),
            format!(
                "{} ({:.4})",
                p.invalid_geometries,
                fraction("invalid_geometry_fraction")
            ),
        ],
        vec!["envelope".to_string(), envelope],
        vec![
            "geometry types".to_string(),
            p.geometry_types
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", "),
        ],
        vec![
            "dimensions".to_string(),
            p.dimensions
                .iter()
                .map(|d| d.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        ],
    ];
    for r in rows {
        outln!(ctx, "{:<20}{}", r[0], r[1]);
    }
    if !p.attributes.is_empty() {
        outln!(ctx);
        let rows = p.attributes.iter().map(|(name, a)| {
            vec![
                name.clone(),
                a.ty.to_string(),
                a.nulls.to_string(),
                format!("{:.4}", a.null_fraction),
            ]
        });
        outln!(
            ctx,
            "{}",
            table(
                ctx,
                &[
                    key("attribute"),
                    key("type"),
                    key("nulls"),
                    key("null fraction")
                ],
                rows
            )
        );
    }
}
