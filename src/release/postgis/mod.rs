//! PostGIS tables as releases: a table, view, materialized view, partitioned or foreign table
//! named by `postgresql://host/db?table=schema.name[&geometry_column=NAME]`
//! (docs/src/reference/release-formats.md).
//!
//! The profile is computed **in the database**: one aggregate statement over the relation,
//! grouped by geometry type, Z/M flag and SRID, gives the feature count, the null counts of
//! the geometry and of every attribute, the envelope, the types and dimensions as stored and
//! the SRIDs. No row of the relation comes to the client (a row per group does, a handful),
//! so a table of a hundred million rows costs one scan on the server. The catalogue queries and the scan run in one
//! read-only `REPEATABLE READ` transaction, so the profile is of one snapshot.
//!
//! The figures follow the rules every file reader follows ([`super::geom`]): types as stored
//! with Z and M dropped, dimensions apart, and the cheap invalid-geometry rule. PostGIS
//! refuses at input the one-point lines and unclosed rings that rule looks for, so what is
//! left to count is a non-finite coordinate, which only a second scan counts, when the first
//! found an infinite envelope. GEOS validity (`ST_IsValid`) is not judged, as no file reader
//! judges it: on a road table it took two thirds of the scan. A single-column integer primary key is
//! the feature id, not an attribute, as GDAL reads it (and as `ogr2ogr` writes `fid`).

mod cancel;
mod connect;
mod service;
mod tls;

use std::collections::BTreeSet;

use postgres::types::ToSql;
use postgres::{IsolationLevel, Transaction};

use super::profile::{Accumulator, AttrAcc};
use super::{crs_identify, Progress, ReadNotes, ReadOptions, ReadWarning, Warned};
use crate::model::spatial::{AttrType, Dimension, GeometryType};
pub use connect::{is_postgres_url, Target};

/// The profile's `format` for a PostGIS relation.
pub const FORMAT_NAME: &str = "PostGIS";

/// Why a PostGIS relation could not be profiled. The URL in a message has its password
/// blanked; server messages are scrubbed of it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PostgisError {
    #[error("{url}: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("cannot reach the PostgreSQL server at {host} port {port}: {reason}")]
    Unreachable {
        host: String,
        port: u16,
        reason: String,
    },
    #[error("the PostgreSQL server at {host} port {port} refused user `{user}`: {reason}")]
    Auth {
        host: String,
        port: u16,
        user: String,
        reason: String,
    },
    #[error("{url}: {reason}")]
    NoDatabase { url: String, reason: String },
    #[error("{url}: the database has no postgis extension (CREATE EXTENSION postgis)")]
    NoPostgis { url: String },
    #[error("{url}: no table or view `{relation}`{}", did_you_mean(.suggestion))]
    NoRelation {
        url: String,
        relation: String,
        suggestion: Option<String>,
    },
    #[error("{url}: `{relation}` has no geometry or geography column")]
    NoGeometryColumn { url: String, relation: String },
    #[error("{url}: {problem}; choose one with &geometry_column=NAME (it has: {})", .names.join(", "))]
    ChooseGeometryColumn {
        url: String,
        problem: String,
        names: Vec<String>,
    },
    #[error("{url}: user `{user}` may not SELECT from `{relation}`")]
    NoPrivilege {
        url: String,
        user: String,
        relation: String,
    },
    #[error("{url}: the query failed: {reason}")]
    Query { url: String, reason: String },
    #[error("{url}: the scan ran longer than statement_timeout ({limit}) allows, and the server cancelled it")]
    Timeout { url: String, limit: String },
    #[error("interrupted: the scan of {url} was cancelled on the server; nothing was written")]
    Interrupted { url: String },
}

fn did_you_mean(s: &Option<String>) -> String {
    s.as_ref()
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default()
}

impl PostgisError {
    /// The server could not be reached, refused the credentials or failed a query: the
    /// environment's fault (exit 3). Everything else names something that is not there.
    pub fn is_environment(&self) -> bool {
        matches!(
            self,
            PostgisError::Unreachable { .. }
                | PostgisError::Auth { .. }
                | PostgisError::Query { .. }
                | PostgisError::Timeout { .. }
        )
    }
}

/// `"name"`, with embedded quotes doubled.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The attribute type of a PostgreSQL type (`pg_type.typname`, `typcategory`); see the
/// table in docs/src/reference/release-formats.md.
pub fn attr_type(typname: &str, category: &str) -> AttrType {
    match typname {
        "bool" => AttrType::Bool,
        "int2" | "int4" => AttrType::Int32,
        "int8" => AttrType::Int64,
        "float4" | "float8" | "numeric" => AttrType::Float64,
        "date" => AttrType::Date,
        "timestamp" | "timestamptz" => AttrType::Datetime,
        "bytea" => AttrType::Binary,
        // Text of every kind, and what the other formats carry as text: arrays, JSON, uuid,
        // enums, times of day, intervals.
        _ if category == "N" => AttrType::Float64,
        _ => AttrType::String,
    }
}

/// One column of the relation.
struct Column {
    name: String,
    typname: String,
    category: String,
    /// The SRID of a geometry column's type modifier (0 when it has none).
    typmod_srid: i32,
}

impl Column {
    fn is_spatial(&self) -> bool {
        self.typname == "geometry" || self.typname == "geography"
    }
}

/// Profile the relation `target` names.
pub fn profile(
    target: &Target,
    opts: &ReadOptions,
    progress: &dyn Progress,
    notes: &mut ReadNotes,
) -> Result<super::Profile, PostgisError> {
    let url = target.display().to_string();
    let (mut client, canceller) = target.connect()?;
    let _armed = cancel::arm(canceller);
    let query_err = |e: postgres::Error| {
        let code = e.as_db_error().map(|d| d.code().code().to_string());
        let reason = target.scrub(&connect::chain(&e));
        match code.as_deref() {
            _ if cancel::interrupted() => PostgisError::Interrupted { url: url.clone() },
            Some("42501") => PostgisError::NoPrivilege {
                url: url.clone(),
                user: "(this user)".into(),
                relation: target.relation.clone(),
            },
            // Cancelled by the server's own limit (a user's cancel is caught above).
            Some("57014") => PostgisError::Timeout {
                url: url.clone(),
                limit: "the setting in force".into(),
            },
            _ => PostgisError::Query {
                url: url.clone(),
                reason,
            },
        }
    };
    let mut tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(query_err)?;
    // The scan's limit: the URL's own parameter, for this transaction only; otherwise what
    // `options`, PGOPTIONS, the role or the server set.
    if let Some(limit) = &target.statement_timeout {
        tx.execute("SELECT set_config('statement_timeout', $1, true)", &[limit])
            .map_err(|e| match e.as_db_error() {
                Some(d) if d.code().code() == "22023" => PostgisError::BadUrl {
                    url: url.clone(),
                    reason: format!("statement_timeout `{limit}`: {}", d.message()),
                },
                _ => query_err(e),
            })?;
    }
    let limit = tx
        .query_one("SELECT current_setting('statement_timeout')", &[])
        .map_err(query_err)?
        .get::<_, String>(0);
    let query_err = |e: postgres::Error| match query_err(e) {
        PostgisError::Timeout { url, .. } => PostgisError::Timeout {
            url,
            limit: limit.clone(),
        },
        other => other,
    };
    let postgis_schema: String = match tx
        .query_opt(
            "SELECT n.nspname::text FROM pg_extension e \
             JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'postgis'",
            &[],
        )
        .map_err(query_err)?
    {
        Some(row) => row.get(0),
        None => return Err(PostgisError::NoPostgis { url }),
    };
    let (oid, qualified) = resolve(&mut tx, target, &url).map_err(|e| e.or_query(query_err))?;
    // The relation is named through the user's search_path; the PostGIS functions are found
    // in the extension's schema even when that path does not hold it.
    tx.execute(
        "SELECT set_config('search_path', current_setting('search_path') || ', ' || quote_ident($1), true)",
        &[&postgis_schema],
    )
    .map_err(query_err)?;
    let row = tx
        .query_one(
            "SELECT has_table_privilege($1::oid, 'SELECT'), current_user::text",
            &[&oid],
        )
        .map_err(query_err)?;
    if !row.get::<_, bool>(0) {
        return Err(PostgisError::NoPrivilege {
            url,
            user: row.get(1),
            relation: target.relation.clone(),
        });
    }
    let columns = columns(&mut tx, oid).map_err(query_err)?;
    let geometry = pick_geometry(&columns, target, opts, &url)?;
    let fid = integer_primary_key(&mut tx, oid).map_err(query_err)?;
    let attributes: Vec<&Column> = columns
        .iter()
        .filter(|c| !c.is_spatial() && Some(&c.name) != fid.as_ref())
        .collect();

    let g = if geometry.typname == "geography" {
        format!("{}::geometry", ident(&geometry.name))
    } else {
        ident(&geometry.name)
    };
    // One pass, grouped by what is stored (type, Z/M flag, SRID): a handful of groups, so a
    // hash aggregate (parallel on a large table) instead of the sorts DISTINCT aggregates
    // need, and a result that does not grow with the table.
    let mut sql = format!(
        "SELECT ST_GeometryType({g}), ST_Zmflag({g})::int4, ST_SRID({g}), count(*)::int8, \
         min(ST_XMin({g})), min(ST_YMin({g})), max(ST_XMax({g})), max(ST_YMax({g}))"
    );
    for a in &attributes {
        sql.push_str(&format!(", count({})::int8", ident(&a.name)));
    }
    sql.push_str(&format!(" FROM {qualified} GROUP BY 1, 2, 3"));
    // The planner cannot know how few groups the geometry functions make, so it expects a
    // group per row and sorts them all; with sorting off it hashes (and spills to disk if it
    // must), which halved the scan of a 3.6 M-row table (bench/RESULTS.md). For this
    // transaction only.
    tx.batch_execute("SET LOCAL enable_sort = off")
        .map_err(query_err)?;
    progress.working(&format!("profiling {} on the server", target.relation));
    let rows = tx.query(&sql, &[]);
    progress.finish();
    let rows = rows.map_err(query_err)?;

    let mut features = 0u64;
    let mut non_null = vec![0u64; attributes.len()];
    let mut types = BTreeSet::new();
    let mut flags = BTreeSet::new();
    let mut srids = BTreeSet::new();
    let mut bounds = [
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    let mut null_geometries = 0u64;
    let mut non_finite = false;
    for row in &rows {
        let n = row.get::<_, i64>(3) as u64;
        features += n;
        for (i, c) in non_null.iter_mut().enumerate() {
            *c += row.get::<_, i64>(8 + i) as u64;
        }
        let Some(t) = row.get::<_, Option<String>>(0) else {
            null_geometries += n;
            continue;
        };
        types.insert(t);
        flags.extend(row.get::<_, Option<i32>>(1));
        srids.extend(row.get::<_, Option<i32>>(2));
        let b: [Option<f64>; 4] = [row.get(4), row.get(5), row.get(6), row.get(7)];
        for (i, v) in b.into_iter().enumerate() {
            if let Some(v) = v {
                non_finite |= !v.is_finite();
                bounds[i] = if i < 2 {
                    bounds[i].min(v)
                } else {
                    bounds[i].max(v)
                };
            }
        }
    }
    // A non-finite coordinate makes the plain envelope infinite: only then is a second
    // scan paid for, which counts those geometries and takes the envelope of the others
    // (the rule every file reader follows).
    let mut invalid = 0u64;
    if non_finite {
        let finite = format!(
            "(ST_XMin({g}) > '-Infinity'::float8 AND ST_XMax({g}) < 'Infinity'::float8 \
             AND ST_YMin({g}) > '-Infinity'::float8 AND ST_YMax({g}) < 'Infinity'::float8)"
        );
        let exact = format!(
            "SELECT count(*) FILTER (WHERE NOT ST_IsEmpty({g}) AND NOT {finite})::int8, \
             min(ST_XMin({g})) FILTER (WHERE {finite}), min(ST_YMin({g})) FILTER (WHERE {finite}), \
             max(ST_XMax({g})) FILTER (WHERE {finite}), max(ST_YMax({g})) FILTER (WHERE {finite}) \
             FROM {qualified} WHERE {g} IS NOT NULL"
        );
        let row = tx.query_one(&exact, &[]).map_err(query_err)?;
        invalid = row.get::<_, i64>(0) as u64;
        bounds = [
            row.get::<_, Option<f64>>(1).unwrap_or(f64::INFINITY),
            row.get::<_, Option<f64>>(2).unwrap_or(f64::INFINITY),
            row.get::<_, Option<f64>>(3).unwrap_or(f64::NEG_INFINITY),
            row.get::<_, Option<f64>>(4).unwrap_or(f64::NEG_INFINITY),
        ];
    }

    let mut acc = Accumulator::new(
        attributes
            .iter()
            .zip(&non_null)
            .map(|(a, n)| AttrAcc {
                name: a.name.clone(),
                ty: attr_type(&a.typname, &a.category),
                nulls: features - n,
            })
            .collect(),
    );
    acc.features = features;
    acc.null_geometries = null_geometries;
    acc.invalid_geometries = invalid;
    if bounds.iter().all(|v| v.is_finite()) {
        acc.envelope.add(bounds[0], bounds[1]);
        acc.envelope.add(bounds[2], bounds[3]);
    }
    for t in types {
        let name = t.trim_start_matches("ST_");
        match GeometryType::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
        {
            Some(k) => acc.add_type(k),
            None => notes.warnings.push(ReadWarning {
                at: url.clone(),
                what: Warned::UnknownGeometryType { name: t.clone() },
            }),
        }
    }
    for flag in flags {
        acc.dims |= Dimension::of(flag & 2 != 0, flag & 1 != 0).bit();
    }
    let crs = match srids.len() {
        0 => crs_of(&mut tx, geometry.typmod_srid, &url, notes).map_err(query_err)?,
        1 => {
            let srid = srids.first().copied().unwrap_or(0);
            crs_of(&mut tx, srid, &url, notes).map_err(query_err)?
        }
        _ => {
            notes.warnings.push(ReadWarning {
                at: url.clone(),
                what: Warned::MixedSrids {
                    column: geometry.name.clone(),
                    srids: srids.iter().copied().collect(),
                },
            });
            None
        }
    };
    // Which state of the table this was: the log position and the snapshot's transaction
    // ids, read in the same transaction as the scan.
    let row = tx
        .query_one(
            "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() \
             ELSE pg_current_wal_lsn() END)::text, pg_current_snapshot()::text, \
             to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')",
            &[],
        )
        .map_err(query_err)?;
    let snapshot = super::profile::Snapshot {
        lsn: row.get::<_, Option<String>>(0).unwrap_or_default(),
        xids: row.get(1),
        at: row.get(2),
    };
    tx.commit().map_err(query_err)?;
    // A signal that came while no statement ran cancelled nothing on the server; the
    // profile is still not wanted.
    if cancel::interrupted() {
        return Err(PostgisError::Interrupted { url });
    }
    let crs = crs.as_deref().map(crate::model::crs::canonical_text);
    let mut profile = acc.into_profile(vec![url], FORMAT_NAME, crs);
    profile.snapshot = Some(snapshot);
    Ok(profile)
}

/// `AUTHORITY:CODE` of an SRID, through `spatial_ref_sys` and the same registry the file
/// readers use; none for SRID 0 or an SRID the table does not hold.
fn crs_of(
    tx: &mut Transaction,
    srid: i32,
    url: &str,
    notes: &mut ReadNotes,
) -> Result<Option<String>, postgres::Error> {
    if srid <= 0 {
        return Ok(None);
    }
    let row = tx.query_opt(
        "SELECT auth_name::text, auth_srid::int8 FROM spatial_ref_sys WHERE srid = $1",
        &[&srid],
    )?;
    let found = row.and_then(|r| {
        let org: Option<String> = r.get(0);
        let code: Option<i64> = r.get(1);
        crs_identify::from_org_code(&org?, code?)
    });
    if found.is_none() {
        notes.warnings.push(ReadWarning {
            at: url.to_string(),
            what: Warned::UnknownSrid { srid },
        });
    }
    Ok(found)
}

/// A failure while resolving the relation: the user's input, or a failed query.
enum Resolve {
    Input(PostgisError),
    Query(postgres::Error),
}

impl Resolve {
    fn or_query(self, f: impl FnOnce(postgres::Error) -> PostgisError) -> PostgisError {
        match self {
            Resolve::Input(e) => e,
            Resolve::Query(e) => f(e),
        }
    }
}

impl From<postgres::Error> for Resolve {
    fn from(e: postgres::Error) -> Self {
        Resolve::Query(e)
    }
}

/// The relations a release may be: tables, views, materialized views, partitioned and
/// foreign tables.
const RELKINDS: &str = "('r','v','m','p','f')";

/// The relation's oid and its name quoted for SQL; a missing one with the nearest name.
fn resolve(tx: &mut Transaction, target: &Target, url: &str) -> Result<(u32, String), Resolve> {
    let wanted = &target.relation;
    let (schema, name) = match wanted.split_once('.') {
        Some((s, n)) => (Some(s.to_string()), n.to_string()),
        None => (None, wanted.clone()),
    };
    let text = match &schema {
        Some(s) => format!("{}.{}", ident(s), ident(&name)),
        None => ident(&name),
    };
    let params: [&(dyn ToSql + Sync); 1] = [&text];
    let row = tx.query_one(
        &format!(
            "SELECT c.oid, c.oid::regclass::text FROM (SELECT to_regclass($1) AS r) x \
             LEFT JOIN pg_class c ON c.oid = x.r AND c.relkind IN {RELKINDS}"
        ),
        &params,
    )?;
    if let (Some(oid), Some(q)) = (
        row.get::<_, Option<u32>>(0),
        row.get::<_, Option<String>>(1),
    ) {
        return Ok((oid, q));
    }
    let names: Vec<String> = tx
        .query(
            &format!(
                "SELECT n.nspname::text || '.' || c.relname::text FROM pg_class c \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE c.relkind IN {RELKINDS} AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
                 AND n.nspname NOT LIKE 'pg_toast%' ORDER BY 1"
            ),
            &[],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let key = |full: &str| -> String {
        if schema.is_some() {
            full.to_string()
        } else {
            full.split_once('.').map_or(full, |(_, n)| n).to_string()
        }
    };
    let suggestion = names
        .iter()
        .map(|n| (strsim::levenshtein(&key(n), wanted), n))
        .filter(|(d, _)| *d <= 2.max(wanted.chars().count() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.clone());
    Err(Resolve::Input(PostgisError::NoRelation {
        url: url.to_string(),
        relation: wanted.clone(),
        suggestion,
    }))
}

fn columns(tx: &mut Transaction, oid: u32) -> Result<Vec<Column>, postgres::Error> {
    let rows = tx.query(
        "SELECT a.attname::text, t.typname::text, t.typcategory::text, \
                CASE WHEN t.typname IN ('geometry', 'geography') AND a.atttypmod > 0 \
                     THEN postgis_typmod_srid(a.atttypmod) ELSE 0 END \
         FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid \
         WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        &[&oid],
    )?;
    Ok(rows
        .iter()
        .map(|r| Column {
            name: r.get(0),
            typname: r.get(1),
            category: r.get(2),
            typmod_srid: r.get(3),
        })
        .collect())
}

/// The one integer column of the primary key, if the key is one integer column.
fn integer_primary_key(tx: &mut Transaction, oid: u32) -> Result<Option<String>, postgres::Error> {
    let rows = tx.query(
        "SELECT a.attname::text, t.typname::text FROM pg_index i \
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) \
         JOIN pg_type t ON t.oid = a.atttypid \
         WHERE i.indrelid = $1 AND i.indisprimary",
        &[&oid],
    )?;
    Ok(match rows.as_slice() {
        [one] if matches!(one.get::<_, String>(1).as_str(), "int2" | "int4" | "int8") => {
            Some(one.get(0))
        }
        _ => None,
    })
}

fn pick_geometry<'a>(
    columns: &'a [Column],
    target: &Target,
    opts: &ReadOptions,
    url: &str,
) -> Result<&'a Column, PostgisError> {
    let spatial: Vec<&Column> = columns.iter().filter(|c| c.is_spatial()).collect();
    let names = || spatial.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    let wanted = target
        .geometry_column
        .as_deref()
        .or(opts.geometry_column.as_deref());
    match (spatial.as_slice(), wanted) {
        ([], _) => Err(PostgisError::NoGeometryColumn {
            url: url.to_string(),
            relation: target.relation.clone(),
        }),
        (_, Some(w)) => spatial
            .iter()
            .find(|c| c.name == w)
            .copied()
            .ok_or_else(|| PostgisError::ChooseGeometryColumn {
                url: url.to_string(),
                problem: format!("no geometry column `{w}`"),
                names: names(),
            }),
        ([one], None) => Ok(one),
        (many, None) => Err(PostgisError::ChooseGeometryColumn {
            url: url.to_string(),
            problem: format!("{} geometry columns", many.len()),
            names: names(),
        }),
    }
}
