//! What a reader warns of while it profiles a file or a table: a typed value the library hands
//! back in [`ReadNotes`](super::ReadNotes), worded by the CLI (`cli/output/notes.rs`) on
//! stderr and in a validation report. Each names `at`, the file (as the user named it) or the
//! table's URL it is about, and what it warns of ([`Warned`]).

/// A box as GeoParquet writes one: minimum x, minimum y, maximum x, maximum y.
pub type Bbox = [f64; 4];

/// One warning of a reader: where, and what.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadWarning {
    /// The file as the user named it, or the table's URL.
    pub at: String,
    pub what: Warned,
}

/// What a reader warns of.
#[derive(Debug, Clone, PartialEq)]
pub enum Warned {
    /// GeoJSON: a Feature with a `features` member, a foreign member whose contents are
    /// ignored.
    ForeignFeatures,
    /// GeoParquet: the CRS of geometry column `column` cannot be taken as stated (`why`); it
    /// is reported as unknown.
    ColumnCrs { column: String, why: String },
    /// GeoParquet: a geometry column with spherical edges, whose envelope is over the vertices.
    SphericalEdges { column: String },
    /// GeoParquet: a part of the `geo` metadata (`what`) that is not checked.
    GeoUnchecked { column: String, what: String },
    /// GeoParquet: the declared bbox does not contain the data's envelope.
    BboxMisses {
        column: String,
        declared: Bbox,
        data: Bbox,
    },
    /// GeoParquet: the data holds geometry types the metadata does not declare.
    TypesUndeclared {
        column: String,
        declared: Vec<String>,
        found: Vec<String>,
        missing: Vec<String>,
    },
    /// GeoParquet: a longitude/latitude CRS, but the data reaches beyond [-180, -90, 180, 90].
    BeyondLonLat {
        column: String,
        crs: String,
        data: Bbox,
    },
    /// GeoParquet: the declared covering column cannot be checked (`why`).
    CoveringUnchecked {
        column: String,
        covering: String,
        why: String,
    },
    /// GeoParquet: the covering column's box misses the geometry's in `misses` of `rows`
    /// rows; the first is `row` (from 0), with its covering box (`None`: null) and geometry
    /// envelope.
    CoveringMisses {
        column: String,
        covering: String,
        misses: u64,
        rows: u64,
        row: u64,
        cover: Option<Bbox>,
        geometry: Bbox,
    },
    /// PostGIS: a geometry type (`ST_…`) no contract names.
    UnknownGeometryType { name: String },
    /// PostGIS: a column whose rows mix SRIDs; the CRS is unknown.
    MixedSrids { column: String, srids: Vec<i32> },
    /// PostGIS: an SRID without an authority and code this build knows; the CRS is unknown.
    UnknownSrid { srid: i32 },
    /// Shapefile: no `.dbf`; the shapes are read without attributes.
    NoDbf,
    /// Shapefile: no `.prj`; the CRS is unknown.
    NoPrj,
    /// Shapefile: the CRS of the `.prj` is not identified (`why`); it is unknown.
    PrjUnidentified { why: String },
    /// Shapefile: `bytes` after the last of `records` records, padding or junk.
    TrailingBytes { bytes: u64, records: u64 },
    /// Shapefile: the header's file length (`declared`) where the records end at `end`.
    HeaderLength {
        declared: u64,
        records: u64,
        end: u64,
    },
    /// Shapefile: an `.shx` listing `listed` records where the `.shp` holds `records`.
    ShxMismatch { listed: u64, records: u64 },
}

impl ReadWarning {
    /// A warning about the file at `path`.
    pub fn of(path: &std::path::Path, what: Warned) -> ReadWarning {
        ReadWarning {
            at: path.display().to_string(),
            what,
        }
    }

    /// The same warning about `to`, where it was about `from` (a local copy of an object in
    /// object storage is warned of by its URL).
    pub fn relabel(mut self, from: &str, to: &str) -> ReadWarning {
        if self.at == from {
            self.at = to.to_string();
        }
        self
    }
}
