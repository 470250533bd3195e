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

use std::path::{Path, PathBuf};

pub mod crs;
pub mod draft;
mod fgb;
mod geojson;
pub mod geom;
mod gpkg;
mod parquet;
mod parquet_footer;
pub mod profile;
pub mod record;
mod shp;
pub mod validate;

pub use profile::{Accumulator, AttrType, AttributeProfile, MergeError, Profile};

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

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
}

/// Told how far a reader has got, so a terminal can show a progress bar. The release module
/// knows nothing about terminals; the CLI implements this.
pub trait Progress: Sync {
    /// The total amount of work, in the unit the reader reports in (bytes or features).
    fn start(&self, _file: &Path, _total: u64) {}
    fn advance(&self, _done: u64) {}
    fn finish(&self) {}
}

/// A progress sink that shows nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

/// What a reader hands back besides the counts: where the CRS came from, and warnings the
/// user should see on stderr (never on stdout, which carries the data).
#[derive(Debug, Default)]
pub struct ReadNotes {
    pub warnings: Vec<String>,
}

/// Which part of a file to read, where a format holds several.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// The GeoPackage feature table (`--layer`); needed when there are several.
    pub layer: Option<String>,
    /// The GeoParquet geometry column (`--geometry-column`); the primary one by default.
    pub geometry_column: Option<String>,
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
        Format::GeoJson => geojson::read(path, progress)?,
        Format::FlatGeobuf => fgb::read(path, progress)?,
        Format::Gpkg => gpkg::read(path, opts, progress)?,
        Format::GeoParquet => parquet::read(path, opts, progress, notes)?,
        Format::Shapefile => shp::read(path, progress, notes)?,
    };
    progress.finish();
    // One name per system in every format: `OGC:CRS84` data prints as `EPSG:4326`.
    let crs = crs.as_deref().map(crate::model::crs::canonical_text);
    Ok(acc.into_profile(vec![path.display().to_string()], format.name(), crs))
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

/// [`profile_files`], reading in each file the part `opts` names.
pub fn profile_files_with(
    paths: &[PathBuf],
    opts: &ReadOptions,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<Profile, ReleaseError> {
    let mut out: Option<Profile> = None;
    for p in paths {
        let one = profile_file_with(p, opts, progress, notes)?;
        out = Some(match out {
            None => one,
            Some(acc) => acc.merge(&one).map_err(|source| ReleaseError::Merge {
                path: p.clone(),
                source,
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
