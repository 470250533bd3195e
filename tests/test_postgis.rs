//! PostGIS tables as releases (`postgresql://host/db?table=schema.name`), against a real
//! PostgreSQL with PostGIS started for each test (`common::postgres`).
//!
//! Parity is the oracle: a file of `tests/data` loaded into PostGIS with GDAL's `ogr2ogr` must
//! profile exactly as the file does, field by field, but for `files` and `format`.

use std::path::Path;

use serde_json::Value;

use crate::common;
use crate::common::postgres::Cluster;

#[track_caller]
pub(crate) fn profile(env: &[(&str, &str)], release: &str) -> Value {
    let r = common::run_with_env(env, &["profile", "--format", "json", release]);
    assert_eq!(r.code, 0, "profile {release}: {}", r.stderr);
    r.json()
}

/// A profile without the fields a PostGIS release must differ in (its snapshot is a
/// database's alone).
pub(crate) fn comparable(mut p: Value) -> Value {
    let o = p.as_object_mut().expect("a profile object");
    o.remove("files");
    o.remove("format");
    o.remove("snapshot");
    p
}

/// Countries in the `postgres` database as `public.countries`.
fn with_countries() -> Cluster {
    let pg = Cluster::start();
    pg.load_countries();
    pg
}

#[test]
fn views_materialized_views_and_partitioned_tables_are_releases_too() {
    let pg = with_countries();
    let cols = "pop_est, continent, name, iso_a3, gdp_md_est, geom";
    pg.sql(
        "postgres",
        &format!(
            "CREATE SCHEMA world;
             CREATE VIEW world.v AS SELECT {cols} FROM public.countries;
             CREATE MATERIALIZED VIEW world.m AS SELECT {cols} FROM public.countries;
             CREATE TABLE world.p (pop_est float8, continent varchar, name varchar, iso_a3 varchar,
                                   gdp_md_est int8, geom geometry(MultiPolygon, 4326))
                 PARTITION BY LIST (continent);
             CREATE TABLE world.p_africa PARTITION OF world.p FOR VALUES IN ('Africa');
             CREATE TABLE world.p_rest PARTITION OF world.p DEFAULT;
             INSERT INTO world.p SELECT {cols} FROM public.countries;"
        ),
    );
    let table = comparable(profile(&[], &pg.socket_url("postgres", "public.countries")));
    assert_eq!(table["feature_count"], 177);
    for rel in ["world.v", "world.m", "world.p"] {
        let p = comparable(profile(&[], &pg.socket_url("postgres", rel)));
        assert_eq!(p, table, "{rel}");
    }
}

#[test]
fn postgresql_types_map_to_the_profiles_types_and_nulls_are_counted_per_column() {
    let pg = Cluster::start();
    pg.sql(
        "postgres",
        "CREATE TABLE typed (id serial PRIMARY KEY, i2 int2, i4 int4, i8 int8, f4 float4,
             f8 float8, n numeric(10, 2), t text, vc varchar(10), c char(3), b bool, d date,
             ts timestamp, tz timestamptz, by bytea, arr int4[], j jsonb, u uuid,
             g geometry(PointZ, 3857));
         INSERT INTO typed (i2, i4, i8, f4, f8, n, t, vc, c, b, d, ts, tz, by, arr, j, u, g) VALUES
           (1, 2, 3, 1.5, 2.5, 3.25, 'a', 'b', 'c', true, '2026-01-01', '2026-01-01 10:00',
            '2026-01-01 10:00+00', '\\x00', '{1,2}', '{\"a\": 1}',
            'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'SRID=3857;POINT Z (10 20 5)'),
           (NULL, 7, NULL, NULL, 1, NULL, NULL, 'x', NULL, false, NULL, NULL, NULL, NULL, NULL,
            NULL, NULL, 'SRID=3857;POINT Z (-30 40 1)'),
           (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
            NULL, NULL, NULL, NULL);",
    );
    let p = profile(&[], &pg.socket_url("postgres", "public.typed"));
    let expected = [
        ("i2", "int32", 2),
        ("i4", "int32", 1),
        ("i8", "int64", 2),
        ("f4", "float64", 2),
        ("f8", "float64", 1),
        ("n", "float64", 2),
        ("t", "string", 2),
        ("vc", "string", 1),
        ("c", "string", 2),
        ("b", "bool", 1),
        ("d", "date", 2),
        ("ts", "datetime", 2),
        ("tz", "datetime", 2),
        ("by", "binary", 2),
        ("arr", "string", 2),
        ("j", "string", 2),
        ("u", "string", 2),
    ];
    let attrs = p["attributes"].as_object().expect("attributes");
    // The serial primary key is the feature id, not an attribute.
    assert_eq!(attrs.len(), expected.len(), "{p}");
    for (name, ty, nulls) in expected {
        assert_eq!(attrs[name]["type"], ty, "{name}: {p}");
        assert_eq!(attrs[name]["nulls"], nulls, "{name}: {p}");
    }
    assert_eq!(p["feature_count"], 3);
    assert_eq!(p["null_geometries"], 1);
    assert_eq!(p["crs"], "EPSG:3857");
    assert_eq!(p["envelope"], serde_json::json!([-30.0, 20.0, 10.0, 40.0]));
    assert_eq!(p["geometry_types"], serde_json::json!(["Point"]));
    assert_eq!(p["dimensions"], serde_json::json!(["XYZ"]));

    // Types as stored and dimensions, Z and M apart, in a column of any type.
    pg.sql(
        "postgres",
        "CREATE TABLE mixed (g geometry);
         INSERT INTO mixed VALUES ('SRID=4326;LINESTRING M (0 0 1, 1 1 2)'),
           ('SRID=4326;POINT ZM (2 3 4 5)'), ('SRID=4326;MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)))'),
           ('SRID=4326;POINT (1 NaN)');
         INSERT INTO mixed VALUES (ST_SetSRID(ST_MakePoint('-Infinity'::float8, 5), 4326));",
    );
    let p = profile(&[], &pg.socket_url("postgres", "mixed"));
    assert_eq!(
        p["geometry_types"],
        serde_json::json!(["LineString", "MultiPolygon", "Point"])
    );
    assert_eq!(p["dimensions"], serde_json::json!(["XY", "XYM", "XYZM"]));
    assert_eq!(
        p["invalid_geometries"], 2,
        "a NaN and an infinite coordinate: {p}"
    );
    assert_eq!(p["envelope"], serde_json::json!([0.0, 0.0, 2.0, 3.0]));
    assert!(p["attributes"].as_object().unwrap().is_empty());
}

/// PostGIS in a schema of its own, off the search_path: its functions are still found, and
/// the relation is still named through the search_path.
#[test]
fn postgis_in_a_schema_off_the_search_path_is_found() {
    let pg = Cluster::start();
    pg.sql("postgres", "CREATE DATABASE other");
    pg.sql(
        "other",
        "CREATE SCHEMA gis; CREATE EXTENSION postgis SCHEMA gis;
         CREATE TABLE pts (id int8, g gis.geometry(Point, 4326));
         INSERT INTO pts VALUES (1, 'SRID=4326;POINT (5 6)'), (NULL, 'SRID=4326;POINT (7 8)');",
    );
    let p = profile(&[], &pg.socket_url("other", "pts"));
    assert_eq!(p["crs"], "EPSG:4326");
    assert_eq!(p["envelope"], serde_json::json!([5.0, 6.0, 7.0, 8.0]));
    assert_eq!(p["attributes"]["id"]["nulls"], 1);
    assert_eq!(p["attributes"]["id"]["type"], "int64");
}

#[test]
fn the_crs_comes_from_the_srid_through_spatial_ref_sys() {
    let pg = Cluster::start();
    pg.sql(
        "postgres",
        "INSERT INTO spatial_ref_sys (srid, auth_name, auth_srid, srtext, proj4text)
           SELECT 910001, 'EPSG', 2263, srtext, proj4text FROM spatial_ref_sys WHERE srid = 2263;
         CREATE TABLE custom (g geometry(Point, 910001));
         INSERT INTO custom VALUES ('SRID=910001;POINT (1000000 200000)');
         CREATE TABLE mixed_srids (g geometry);
         INSERT INTO mixed_srids VALUES ('SRID=4326;POINT (1 2)'), ('SRID=3857;POINT (3 4)');
         CREATE TABLE no_srid (g geometry);
         INSERT INTO no_srid VALUES ('POINT (1 2)');
         CREATE TABLE empty_typed (g geometry(Point, 3857));
         CREATE TABLE \"Geo Graphy\" (\"Where\" geography(Point, 4326));
         INSERT INTO \"Geo Graphy\" VALUES ('SRID=4326;POINT (-70 40)'), ('SRID=4326;POINT (10 -5)');",
    );
    assert_eq!(
        profile(&[], &pg.socket_url("postgres", "custom"))["crs"],
        "EPSG:2263"
    );
    assert_eq!(
        profile(&[], &pg.socket_url("postgres", "no_srid"))["crs"],
        Value::Null
    );
    // No row: the column's declared SRID.
    assert_eq!(
        profile(&[], &pg.socket_url("postgres", "empty_typed"))["crs"],
        "EPSG:3857"
    );
    // A geography column, in a relation whose name must be quoted (percent-encoded in the URL).
    let p = profile(&[], &pg.socket_url("postgres", "public.Geo%20Graphy"));
    assert_eq!(p["crs"], "EPSG:4326");
    assert_eq!(p["envelope"], serde_json::json!([-70.0, -5.0, 10.0, 40.0]));
    assert_eq!(p["geometry_types"], serde_json::json!(["Point"]));
    let r = common::run_with_env(
        &[],
        &[
            "profile",
            "--format",
            "json",
            &pg.socket_url("postgres", "mixed_srids"),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["crs"], Value::Null);
    r.assert_stderr_has("mixes SRIDs 3857, 4326");
}

const PASSWORD: &str = "Open-Sesame-4711";

/// A login role `ada` with [`PASSWORD`] that may read the countries.
fn with_ada(pg: &Cluster) {
    pg.sql(
        "postgres",
        &format!(
            "CREATE ROLE ada LOGIN PASSWORD '{PASSWORD}'; GRANT SELECT ON public.countries TO ada;"
        ),
    );
}

#[test]
fn the_connection_is_made_as_libpq_makes_it() {
    let pg = with_countries();
    with_ada(&pg);
    let port = pg.port().to_string();
    let sock = pg.socket_dir().display().to_string();

    // The password in the URL: read, and blanked wherever the URL is echoed.
    let url =
        format!("postgresql://ada:{PASSWORD}@127.0.0.1:{port}/postgres?table=public.countries");
    let r = common::run_with_env(&[], &["profile", "--format", "json", &url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.json()["files"][0],
        format!("postgresql://ada:***@127.0.0.1:{port}/postgres?table=public.countries")
    );
    assert!(!r.stdout.contains(PASSWORD) && !r.stderr.contains(PASSWORD));
    let text = common::run_with_env(&[], &["profile", &url]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(!text.stdout.contains(PASSWORD));

    // Everything from the environment.
    let env = [
        ("PGHOST", "127.0.0.1"),
        ("PGPORT", port.as_str()),
        ("PGUSER", "ada"),
        ("PGDATABASE", "postgres"),
        ("PGPASSWORD", PASSWORD),
    ];
    let p = profile(&env, "postgres:///?table=countries");
    assert_eq!(p["feature_count"], 177);

    // The password file, which libpq ignores when others may read it.
    let dir = tempfile::tempdir().unwrap();
    let passfile = dir.path().join("pgpass");
    std::fs::write(
        &passfile,
        format!("# comment\n127.0.0.1:{port}:*:ada:{PASSWORD}\n"),
    )
    .unwrap();
    let chmod = |mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    chmod(0o600);
    let pf = passfile.display().to_string();
    let url = format!("postgresql://ada@127.0.0.1:{port}/postgres?table=public.countries");
    assert_eq!(profile(&[("PGPASSFILE", &pf)], &url)["feature_count"], 177);
    chmod(0o644);
    let r = common::run_with_env(&[("PGPASSFILE", &pf)], &["profile", &url]);
    assert_eq!(r.code, 3, "{}", r.stderr);

    // A socket directory as `?host=`, and sslmode=disable.
    let url = format!(
        "postgresql:///postgres?host={sock}&port={port}&user=postgres&sslmode=disable&table=countries"
    );
    assert_eq!(profile(&[], &url)["feature_count"], 177);
    // A server without TLS: require is refused, never silently downgraded.
    let url = format!("postgresql://ada@127.0.0.1:{port}/postgres?sslmode=require&table=countries");
    let r = common::run_with_env(&[("PGPASSWORD", PASSWORD)], &["profile", &url]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    r.assert_stderr_has(&format!("127.0.0.1 port {port}"));
}

#[test]
fn an_unreachable_server_or_refused_credentials_is_exit_3_without_the_password() {
    let pg = with_countries();
    with_ada(&pg);
    let port = pg.port();
    let wrong = "Wrong-Password-0815";
    let url = format!("postgresql://ada:{wrong}@127.0.0.1:{port}/postgres?table=countries");
    let r = common::run_with_env(&[], &["profile", &url]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    r.assert_stderr_has(&format!("127.0.0.1 port {port}"));
    r.assert_stderr_has("refused user `ada`");
    assert!(
        !r.stderr.contains(wrong) && !r.stdout.contains(wrong),
        "{}",
        r.stderr
    );

    let r = common::run_with_env(
        &[("PGPASSWORD", wrong)],
        &["profile", &url.replace(&format!(":{wrong}"), "")],
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(!r.stderr.contains(wrong), "{}", r.stderr);

    drop(pg);
    let r = common::run_with_env(&[], &["profile", &url]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    r.assert_stderr_has(&format!(
        "cannot reach the PostgreSQL server at 127.0.0.1 port {port}"
    ));
    assert!(!r.stderr.contains(wrong), "{}", r.stderr);
}

#[test]
fn what_is_not_a_spatial_relation_the_user_may_read_is_exit_2_with_its_own_message() {
    let pg = with_countries();
    pg.sql(
        "postgres",
        "CREATE TABLE plain (a int);
         CREATE TABLE two (a geometry(Point, 4326), b geometry(Point, 4326));
         INSERT INTO two VALUES ('SRID=4326;POINT (1 2)', 'SRID=4326;POINT (3 4)');
         CREATE ROLE bob LOGIN;",
    );
    pg.sql("postgres", "CREATE DATABASE nogis");
    let url = |table: &str| pg.socket_url("postgres", table);
    let refused = |url: &str, needle: &str| {
        let r = common::run_with_env(&[], &["profile", url]);
        assert_eq!(r.code, 2, "{url}: {}", r.stderr);
        r.assert_stderr_has(needle);
    };
    refused(
        &url("public.countrys"),
        "no table or view `public.countrys` (did you mean `public.countries`?)",
    );
    refused(&url("contries"), "(did you mean `public.countries`?)");
    refused(
        &url("nothing_like_it"),
        "no table or view `nothing_like_it`",
    );
    refused(&url("plain"), "`plain` has no geometry or geography column");
    refused(
        &url("two"),
        "2 geometry columns; choose one with &geometry_column=NAME (it has: a, b)",
    );
    refused(
        &format!("{}&geometry_column=c", url("two")),
        "no geometry column `c`",
    );
    let p = profile(&[], &format!("{}&geometry_column=b", url("two")));
    assert_eq!(p["envelope"], serde_json::json!([3.0, 4.0, 3.0, 4.0]));
    refused(
        &pg.socket_url("nogis", "countries"),
        "the database has no postgis extension",
    );
    refused(
        &pg.socket_url("nosuchdb", "countries"),
        "database \"nosuchdb\" does not exist",
    );
    let as_bob = url("countries").replace("postgres@", "bob@");
    refused(&as_bob, "user `bob` may not SELECT from `countries`");
    refused(
        &url("countries").replace("?table=countries", ""),
        "name the table or view with ?table=",
    );
}

/// `validate` (and `--record`) and `new --from` read the table as they read a file.
#[test]
fn validate_checks_a_postgis_table_against_the_live_contracts() {
    let pg = with_countries();
    let env = common::World::empty();
    let store = common::world_store(&env);
    let git = |args: &[&str]| {
        common::git_as(&store, env.home(), ("Fixture", "fixture@example.org"), args)
    };
    let url = pg.socket_url("postgres", "public.countries");
    let validate = || env.run_in(&store, &[&common::VALIDATE_WORLD[..], &[&url]].concat());
    let r = validate();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report = r.json();
    assert_eq!(report["profile"]["feature_count"], 177, "{report}");
    assert_eq!(report["profile"]["format"], "PostGIS", "{report}");

    // Recorded with a password in the URL: the history names the table, never the password.
    with_ada(&pg);
    let port = pg.port();
    let with_password =
        format!("postgresql://ada:{PASSWORD}@127.0.0.1:{port}/postgres?table=public.countries");
    let r = env.run_in(
        &store,
        &[
            "--today",
            "2026-03-01",
            "validate",
            "world",
            &with_password,
            "--record",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains(PASSWORD) && !r.stderr.contains(PASSWORD));
    let record = std::fs::read_to_string(store.join("history/world.releases.toml")).unwrap();
    assert!(
        record.contains(&format!(
            "files = [\"postgresql://ada:***@127.0.0.1:{port}/postgres?table=public.countries\"]"
        )),
        "{record}"
    );
    let log = git(&["log", "-p", "--all"]);
    assert!(
        !log.contains(PASSWORD) && !record.contains(PASSWORD),
        "{log}"
    );
    // The record names the state of the table it judged: the server's log position (at or
    // before where the server is now), the snapshot's transaction ids, the server's time.
    let parsed: toml::Value = toml::from_str(&record).unwrap();
    let snap = &parsed["release"][0]["profile"]["snapshot"];
    let lsn = snap["lsn"].as_str().expect("an lsn");
    let behind = pg.sql(
        "postgres",
        &format!("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '{lsn}') >= 0"),
    );
    assert_eq!(behind.trim(), "t", "{record}");
    let xids = snap["xids"].as_str().expect("xids");
    assert!(
        xids.split(':').count() == 3 && xids.split(':').take(2).all(|n| n.parse::<u64>().is_ok()),
        "{xids}"
    );
    let at = snap["at"].as_str().expect("at");
    assert!(chrono::DateTime::parse_from_rfc3339(at).is_ok(), "{at}");

    // A first contract drafted from the table.
    let r = env.run_in(&store, &["new", "world2", "--from", &with_password]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.assert_stdout_has("Drafted from a profile of: postgresql://ada:***@127.0.0.1");
    r.assert_stdout_has("= \"EPSG:4326\"");
    r.assert_stdout_has("{ continent = \"string\", gdp_md_est = \"int64\"");
    assert!(!r.stdout.contains(PASSWORD) && !r.stderr.contains(PASSWORD));

    common::world_crs(&env, &store, "EPSG:3857", "a crs the table does not have");
    assert_eq!(validate().code, 1);
}

/// The harness is usable by other tests: extra configuration lines and the log directory.
#[test]
fn the_cluster_takes_extra_configuration_and_tells_where_its_log_is() {
    let pg = Cluster::start_with(&["log_statement = 'all'", "logging_collector = on"]);
    assert_eq!(pg.sql("postgres", "SHOW log_statement").trim(), "all");
    assert_eq!(
        pg.sql("postgres", "SHOW shared_preload_libraries").trim(),
        "pgaudit"
    );
    pg.sql("postgres", "CREATE EXTENSION pgaudit");
    pg.create_db("second");
    assert!(pg
        .sql("second", "SELECT postgis_version()")
        .starts_with('3'));
    assert_eq!(
        pg.sql("postgres", "SHOW log_directory").trim(),
        pg.log_dir().display().to_string()
    );
    assert!(Path::new(&pg.log_dir()).join("pg_ctl.log").exists());
}

/// The profile is computed in the database, in one read-only REPEATABLE READ transaction, by
/// one aggregate statement over the relation, grouped by what is stored: the server's own
/// statement log says so.
#[test]
fn the_profile_is_one_aggregate_statement_in_one_read_only_snapshot() {
    let pg = Cluster::start_with(&["log_statement = 'all'", "log_line_prefix = '[%a] '"]);
    pg.load_countries();
    let p = profile(&[], &pg.socket_url("postgres", "public.countries"));
    assert_eq!(p["feature_count"], 177);
    let log = std::fs::read_to_string(pg.log_dir().join("pg_ctl.log")).unwrap();
    let ours: Vec<&str> = log
        .lines()
        .filter(|l| {
            l.starts_with("[contracts] ") && (l.contains("statement: ") || l.contains("execute "))
        })
        .collect();
    assert!(
        ours.iter()
            .any(|l| l.contains("REPEATABLE READ") && l.contains("READ ONLY")),
        "{ours:#?}"
    );
    // Simple-protocol statements log as `statement:`, prepared ones as `execute`. One
    // statement reads the table, and it is the aggregate: the counts, the envelope and every
    // attribute's count(col) together, a row per type, Z/M flag and SRID (no second scan:
    // every coordinate is finite).
    let reads: Vec<&str> = ours
        .iter()
        .copied()
        .filter(|l| l.contains(" FROM countries"))
        .collect();
    assert_eq!(reads.len(), 1, "{ours:#?}");
    for part in [
        ": SELECT ST_GeometryType(\"geom\"), ST_Zmflag(\"geom\")::int4, ST_SRID(\"geom\"), count(*)::int8",
        "min(ST_XMin(\"geom\"))",
        "max(ST_YMax(\"geom\"))",
        "count(\"pop_est\")::int8, count(\"continent\")::int8, count(\"name\")::int8",
        " FROM countries GROUP BY 1, 2, 3",
    ] {
        assert!(reads[0].contains(part), "{part} in {}", reads[0]);
    }
    assert!(ours.iter().any(|l| l.contains("COMMIT")), "{ours:#?}");
}
