//! Spatial data releases: one streaming reader per format, the mergeable [`Profile`] they
//! produce, and the validation of a profile against every live contract.
//!
//! Every reader feeds the same [`Accumulator`], so the rules every format is read by live in
//! one place: the geometry types as stored, the dimensions and the
//! invalid-geometry definition in [`geom`], the attribute type names in [`profile`]. Readers
//! never hold more than a bounded batch of features in memory; where a format has independent
//! parts (GeoParquet row groups, GeoPackage rowid ranges, FlatGeobuf feature batches) the
//! parts are profiled on all cores and merged with the same `merge` a user gets from
//! `contracts profile --merge`.
//!
//! A release is named by [`Source`]s: files, directories and globs of partition files
//! (Hive-style `key=value/` folders included), and objects, prefixes and globs in object
//! storage ([`remote`]). The partitions are profiled in parallel and merged in the order named.
//! A `postgresql://` URL names a table or view in PostGIS ([`postgis`]), profiled in the
//! database by aggregate SQL instead of read.

use std::path::{Path, PathBuf};

pub mod assemble;
pub mod crs_identify;
pub mod draft;
mod fgb;
mod geoarrow;
mod geojson;
pub mod geom;
mod gpkg;
mod parquet;
mod parquet_footer;
mod parquet_geo;
mod parquet_source;
pub mod postgis;
pub mod profile;
pub mod read_warning;
pub mod record;
pub mod remote_read;
mod shp;
pub mod validate;

pub use profile::{Accumulator, AttrType, AttributeProfile, MergeError, Profile};
pub use read_warning::{ReadWarning, Warned};

pub(crate) fn unsupported(path: &Path, format: Format, reason: impl Into<String>) -> ReleaseError {
    ReleaseError::Unsupported {
        path: path.to_path_buf(),
        format,
        reason: reason.into(),
    }
}

/// The release formats `contracts` reads. The names are those a contract's
/// `supported_output_formats` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    GeoJson,
    FlatGeobuf,
    Gpkg,
    GeoParquet,
    Shapefile,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::GeoJson => "GeoJSON",
            Format::FlatGeobuf => "FlatGeobuf",
            Format::Gpkg => "GPKG",
            Format::GeoParquet => "GeoParquet",
            Format::Shapefile => "Shapefile",
        }
    }

    /// The format a file is in, by its extension (the formats have no common magic number
    /// to sniff, and a wrong guess would report a corrupt file instead of an unknown one).
    pub fn of_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            // Newline-delimited GeoJSON and RFC 8142 sequences are read by the same reader.
            "geojson" | "json" | "geojsonl" | "geojsons" | "ndjson" => Format::GeoJson,
            "fgb" => Format::FlatGeobuf,
            "gpkg" => Format::Gpkg,
            "parquet" | "geoparquet" => Format::GeoParquet,
            "shp" => Format::Shapefile,
            _ => return None,
        })
    }
}

crate::model::display_as!(name: Format);

/// Why a release could not be profiled.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error("{path}: unknown format (expected .geojson, .json, .geojsonl, .geojsons, .ndjson, .fgb, .gpkg, .parquet or .shp)")]
    UnknownFormat { path: PathBuf },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: corrupt or truncated {format}: {reason}")]
    Corrupt {
        path: PathBuf,
        format: Format,
        reason: String,
    },
    /// A valid file of a kind this build does not read (a tiles-only GeoPackage, Parquet
    /// without `geo` metadata, …), as opposed to [`ReleaseError::Corrupt`], a damaged one.
    #[error("{path}: a valid {format} file of a kind this build does not read: {reason}")]
    Unsupported {
        path: PathBuf,
        format: Format,
        reason: String,
    },
    /// The file holds several layers (GeoPackage feature tables, GeoParquet geometry
    /// columns) and none was chosen, or the chosen one is not there.
    #[error("{path}: {problem}; choose one with {flag} NAME (it has: {})", .names.join(", "))]
    Choose {
        path: PathBuf,
        problem: String,
        flag: &'static str,
        names: Vec<String>,
    },
    #[error("{path}: cannot be merged into this release: {source}")]
    Merge {
        path: PathBuf,
        #[source]
        source: MergeError,
    },
    /// A directory or glob that names no data file.
    #[error("{path}: {what} holds no data file (.geojson, .json, .geojsonl, .geojsons, .ndjson, .fgb, .gpkg, .parquet or .shp)")]
    NoData { path: PathBuf, what: &'static str },
    /// An object in object storage could not be listed or read (message scrubbed of secrets).
    #[error(transparent)]
    Remote(remote_read::RemoteError),
    /// A PostGIS relation could not be read (the password blanked).
    #[error(transparent)]
    Postgis(#[from] postgis::PostgisError),
}

/// Told how far a reader has got, so a terminal can show a progress bar. The release module
/// knows nothing about terminals; the CLI implements this.
pub trait Progress: Sync {
    /// The total amount of work, in the unit the reader reports in (bytes or features).
    fn start(&self, _file: &Path, _total: u64) {}
    fn advance(&self, _done: u64) {}
    /// Work whose amount the reader cannot know (a scan on a database server): `what` is
    /// under way until [`Progress::finish`].
    fn working(&self, _what: &str) {}
    fn finish(&self) {}
}

/// A progress sink that shows nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

/// What a reader hands back besides the counts: where the CRS came from, and warnings the
/// user should see on stderr (never on stdout, which carries the data).
#[derive(Debug, Default)]
pub struct ReadNotes {
    pub warnings: Vec<ReadWarning>,
    /// What was read of each object in object storage, against its size.
    pub reads: Vec<remote_read::ReadCount>,
}

/// Which part of a file to read, where a format holds several.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// The GeoPackage feature table (`--layer`); needed when there are several.
    pub layer: Option<String>,
    /// The GeoParquet or PostGIS geometry column (`--geometry-column`); the primary (or only)
    /// one by default.
    pub geometry_column: Option<String>,
    /// Read GeoJSON with the sequential reader only, never the parallel one (the hidden
    /// `--geojson-sequential`): the reader every file falls back on, kept reachable for the
    /// benchmark and for tests that compare the two.
    pub geojson_sequential: bool,
}

/// Profile one file.
pub fn profile_file(
    path: &Path,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<Profile, ReleaseError> {
    profile_file_with(path, &ReadOptions::default(), progress, notes)
}

/// Profile one file, reading the part `opts` names.
pub fn profile_file_with(
    path: &Path,
    opts: &ReadOptions,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<Profile, ReleaseError> {
    let format = Format::of_path(path).ok_or_else(|| ReleaseError::UnknownFormat {
        path: path.to_path_buf(),
    })?;
    let (crs, acc) = match format {
        Format::GeoJson => geojson::read(path, opts.geojson_sequential, progress, notes)?,
        Format::FlatGeobuf => fgb::read(path, progress)?,
        Format::Gpkg => gpkg::read(path, opts, progress)?,
        Format::GeoParquet => parquet::read(path, opts, progress, notes)?,
        Format::Shapefile => shp::read(path, progress, notes)?,
    };
    progress.finish();
    Ok(finish(path.display().to_string(), format, crs, acc))
}

fn finish(file: String, format: Format, crs: Option<String>, acc: Accumulator) -> Profile {
    // One name per system in every format: `OGC:CRS84` data prints as `EPSG:4326`.
    let crs = crs.as_deref().map(crate::model::crs::canonical_text);
    acc.into_profile(vec![file], format.name(), crs)
}

/// One partition of a release: a local file, or an object in object storage.
#[derive(Debug, Clone)]
pub enum Source {
    Local(PathBuf),
    Remote(remote_read::Object),
    /// A table or view in PostGIS, profiled in the database.
    Postgis(postgis::Target),
}

impl Source {
    /// The name the profile's `files` lists.
    pub fn label(&self) -> String {
        match self {
            Source::Local(p) => p.display().to_string(),
            Source::Remote(o) => o.url().to_string(),
            Source::Postgis(t) => t.display().to_string(),
        }
    }
}

/// The partitions a release argument names, in order: a URL (an object, a prefix or a glob;
/// see [`remote_read::expand`]), a directory (every data file below it, sorted), a glob of files
/// or directories (when no file has that very name), or a file.
pub fn expand_source(arg: &Path) -> Result<Vec<Source>, ReleaseError> {
    if let Some(text) = arg.to_str().filter(|t| postgis::is_postgres_url(t)) {
        return Ok(vec![Source::Postgis(postgis::Target::parse(text)?)]);
    }
    if let Some(text) = arg.to_str().filter(|t| remote_read::is_url(t)) {
        return Ok(remote_read::expand(text)?
            .into_iter()
            .map(Source::Remote)
            .collect());
    }
    if arg.is_dir() {
        let mut out = Vec::new();
        walk(arg, &mut out)?;
        if out.is_empty() {
            return Err(ReleaseError::NoData {
                path: arg.to_path_buf(),
                what: "the directory",
            });
        }
        return Ok(out.into_iter().map(Source::Local).collect());
    }
    let text = arg.to_str().unwrap_or("");
    if !arg.exists() && text.contains(['*', '?', '[']) {
        let matches = glob::glob(text).map_err(|e| ReleaseError::Io {
            path: arg.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()),
        })?;
        let mut out = Vec::new();
        for m in matches {
            let p = m.map_err(|e| ReleaseError::Io {
                path: e.path().to_path_buf(),
                source: e.into(),
            })?;
            if p.is_dir() {
                walk(&p, &mut out)?;
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(remote_read::is_data_key)
            {
                out.push(p);
            }
        }
        if out.is_empty() {
            return Err(ReleaseError::NoData {
                path: arg.to_path_buf(),
                what: "the glob",
            });
        }
        return Ok(out.into_iter().map(Source::Local).collect());
    }
    Ok(vec![Source::Local(arg.to_path_buf())])
}

/// Every data file below `dir`, sorted by path; names starting with `_` or `.` (`_SUCCESS`,
/// `_temporary/`, `.crc` files) are not partitions.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ReleaseError> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io_err(dir))?
        .map(|e| e.map(|e| e.path()).map_err(io_err(dir)))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with('_') || name.starts_with('.') {
            continue;
        }
        if p.is_dir() {
            walk(&p, out)?;
        } else if remote_read::is_data_key(name) {
            out.push(p);
        }
    }
    Ok(())
}

/// Profile one partition.
pub fn profile_source(
    source: &Source,
    opts: &ReadOptions,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<Profile, ReleaseError> {
    let object = match source {
        Source::Local(p) => return profile_file_with(p, opts, progress, notes),
        Source::Remote(o) => o,
        Source::Postgis(t) => return Ok(postgis::profile(t, opts, progress, notes)?),
    };
    let url = object.url();
    let label = Path::new(url);
    let result = (|| {
        let format = Format::of_path(Path::new(object.file_name())).ok_or_else(|| {
            ReleaseError::UnknownFormat {
                path: label.to_path_buf(),
            }
        })?;
        let (crs, acc) = match format {
            Format::GeoParquet => parquet::read_remote(object, opts, progress, notes)?,
            Format::FlatGeobuf => fgb::read_from(label, object.reader(), object.size(), progress)?,
            // Read from a local file by their readers (SQLite, sidecar files): streamed into a
            // temporary copy first.
            Format::GeoJson | Format::Gpkg | Format::Shapefile => {
                let copy = object.local_copy(format)?;
                let mut local_notes = ReadNotes::default();
                let mut p = profile_file_with(&copy.path, opts, progress, &mut local_notes)
                    .map_err(|e| relabel(e, &copy.path, label))?;
                let tmp = copy.path.display().to_string();
                notes.warnings.extend(
                    local_notes
                        .warnings
                        .into_iter()
                        .map(|w| w.relabel(&tmp, url)),
                );
                p.files = vec![url.to_string()];
                return Ok(p);
            }
        };
        progress.finish();
        Ok(finish(url.to_string(), format, crs, acc))
    })();
    notes.reads.push(object.count());
    // A reader that met a failed request saw missing bytes; the failure is the cause.
    result.map_err(|e| match object.failure() {
        Some(r) => ReleaseError::Remote(r),
        None => e,
    })
}

/// An error about the temporary copy of an object, told about the object.
fn relabel(e: ReleaseError, copy: &Path, label: &Path) -> ReleaseError {
    let fix = |p: PathBuf| if p == copy { label.to_path_buf() } else { p };
    match e {
        ReleaseError::UnknownFormat { path } => ReleaseError::UnknownFormat { path: fix(path) },
        ReleaseError::Io { path, source } => ReleaseError::Io {
            path: fix(path),
            source,
        },
        ReleaseError::Corrupt {
            path,
            format,
            reason,
        } => ReleaseError::Corrupt {
            path: fix(path),
            format,
            reason,
        },
        ReleaseError::Unsupported {
            path,
            format,
            reason,
        } => ReleaseError::Unsupported {
            path: fix(path),
            format,
            reason,
        },
        ReleaseError::Choose {
            path,
            problem,
            flag,
            names,
        } => ReleaseError::Choose {
            path: fix(path),
            problem,
            flag,
            names,
        },
        other => other,
    }
}

/// Profile several files as one release: each file on its own, then merged, so that the
/// result is by construction what `profile --merge` of the single profiles gives.
pub fn profile_files(
    paths: &[PathBuf],
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<Profile, ReleaseError> {
    profile_files_with(paths, &ReadOptions::default(), progress, notes)
}

/// [`profile_files`], reading in each file the part `opts` names. Each path may be a
/// directory, a glob or a URL ([`expand_source`]).
pub fn profile_files_with(
    paths: &[PathBuf],
    opts: &ReadOptions,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<Profile, ReleaseError> {
    let mut sources = Vec::new();
    for p in paths {
        sources.extend(expand_source(p)?);
    }
    profile_sources(&sources, opts, progress, notes)
}

/// Profile the partitions of one release in parallel and merge them in the order given, so
/// the result is what `profile --merge` of the partitions' profiles gives. With several
/// partitions the progress counts partitions.
pub fn profile_sources(
    sources: &[Source],
    opts: &ReadOptions,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<Profile, ReleaseError> {
    use rayon::prelude::*;
    match sources {
        [] => {
            return Err(ReleaseError::UnknownFormat {
                path: PathBuf::from("(no file given)"),
            })
        }
        [one] => return profile_source(one, opts, progress, notes),
        _ => {}
    }
    progress.start(
        Path::new(&format!("{} partitions", sources.len())),
        sources.len() as u64,
    );
    let parts: Vec<(Result<Profile, ReleaseError>, ReadNotes)> = sources
        .par_iter()
        .map(|s| {
            let mut n = ReadNotes::default();
            let r = profile_source(s, opts, &NoProgress, &mut n);
            progress.advance(1);
            (r, n)
        })
        .collect();
    progress.finish();
    let mut out: Option<Profile> = None;
    for (source, (one, n)) in sources.iter().zip(parts) {
        notes.warnings.extend(n.warnings);
        notes.reads.extend(n.reads);
        let one = one?;
        out = Some(match out {
            None => one,
            Some(acc) => acc.merge(&one).map_err(|source_err| ReleaseError::Merge {
                path: PathBuf::from(source.label()),
                source: source_err,
            })?,
        });
    }
    out.ok_or_else(|| ReleaseError::UnknownFormat {
        path: PathBuf::from("(no file given)"),
    })
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReleaseError + '_ {
    move |source| ReleaseError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub(crate) fn corrupt(path: &Path, format: Format, reason: impl Into<String>) -> ReleaseError {
    ReleaseError::Corrupt {
        path: path.to_path_buf(),
        format,
        reason: reason.into(),
    }
}
