use std::path::PathBuf;

use super::context::required_profile;
use super::output::{key, print_json, print_table};
use super::{CommandError, Context, Format, Outcome};
use crate::release::Profile;

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
/// A FILE may also be a PostGIS table or view, `postgresql://host/db?table=schema.name`
/// (`&geometry_column=NAME` when it has several), profiled in the database; the connection is
/// made as libpq makes it (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `~/.pgpass`), and only
/// the password is blanked where the URL is echoed.
///
/// Reads GeoJSON, FlatGeobuf, GeoPackage, GeoParquet, Shapefile and PostGIS. Exit 0, 2 for an
/// unreadable or corrupt file or a missing table, 3 when object storage or the database cannot
/// be reached or refuses access.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Data files, directories, globs or URLs of one release (.geojson, .fgb, .gpkg, .parquet, .shp)
    files: Vec<PathBuf>,
    /// Saved profiles (`profile --format json`) to merge into the result
    #[arg(long, value_name = "P.json", num_args = 1..)]
    merge: Vec<PathBuf>,
    #[command(flatten)]
    part: super::PartArgs,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    if args.files.is_empty() && args.merge.is_empty() {
        return Err(CommandError::input(
            "give at least one data file or --merge profile",
        ));
    }
    // The warnings were said on stderr; a profile is what the data holds, not what it warned.
    let (profile, _) = required_profile(ctx, &args.files, &args.part, &args.merge)?;
    match ctx.format {
        Format::Json => print_json(ctx, &profile),
        _ => print_text(ctx, &profile),
    }
    Ok(Outcome::Clean)
}

fn number(x: f64) -> String {
    format!("{x}")
}

/// Names, comma-separated.
fn listed<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

fn print_text(ctx: &Context, p: &Profile) {
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
            listed(p.geometry_types.iter().map(|t| t.name())),
        ],
        vec![
            "dimensions".to_string(),
            listed(p.dimensions.iter().map(|d| d.as_str())),
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
        print_table(
            ctx,
            &[
                key("attribute"),
                key("type"),
                key("nulls"),
                key("null fraction"),
            ],
            rows,
        );
    }
}
