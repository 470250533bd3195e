//! A PostGIS profile as a well-behaved client of a shared server: its connection named by a
//! libpq service file, its statements bounded by `statement_timeout`, Ctrl-C cancelling the
//! query on the server, no row of the relation sent to the client, and a spinner on a
//! terminal while the server works. Against a real PostgreSQL started for each test.

use std::process::{Command, Stdio};

use crate::common::postgres::Cluster;
use crate::common::{self, Run};

/// Countries in `postgres` as `public.countries`, and a view over it that sleeps `seconds`
/// once before its first row: a scan the test can catch in the act.
fn with_slow_view(seconds: u32) -> Cluster {
    let pg = Cluster::start();
    pg.load_countries();
    pg.sql(
        "postgres",
        &format!(
            "CREATE VIEW slow AS SELECT c.* FROM countries c \
             CROSS JOIN (SELECT pg_sleep({seconds})) AS s"
        ),
    );
    pg
}

/// Wait for `sql` (one count) to say `want`, polling: the test waits for an event, and fails
/// only when it never comes within a bound far above the normal wait.
#[track_caller]
fn wait_for(pg: &Cluster, sql: &str, want: &str, what: &str) {
    for _ in 0..600 {
        if pg.sql("postgres", sql).trim() == want {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{what}: `{sql}` never gave {want}");
}

const OUR_ACTIVE: &str = "SELECT count(*) FROM pg_stat_activity \
     WHERE application_name = 'contracts' AND state = 'active'";

#[test]
fn a_service_file_names_the_connection_as_for_psql() {
    let pg = with_slow_view(0);
    pg.sql(
        "postgres",
        "CREATE ROLE ada LOGIN PASSWORD 'pw-4711'; GRANT SELECT ON countries TO ada;",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("services.conf");
    std::fs::write(
        &file,
        format!(
            "# the GIS server\n[gis]\nhost=127.0.0.1\nport={}\ndbname=postgres\nuser=ada\n\n\
             [elsewhere]\ndbname=nope\n",
            pg.port()
        ),
    )
    .unwrap();
    let f = file.display().to_string();
    let env = [("PGSERVICEFILE", f.as_str()), ("PGPASSWORD", "pw-4711")];
    for (extra, url) in [
        (None, "postgresql:///?service=gis&table=countries"),
        (Some(("PGSERVICE", "gis")), "postgresql:///?table=countries"),
        // What the URL names wins over the service file.
        (None, "postgresql:///postgres?service=gis&table=countries"),
    ] {
        let mut env = env.to_vec();
        env.extend(extra);
        let r = common::run_with_env(&env, &["profile", "--format", "json", url]);
        assert_eq!(r.code, 0, "{url}: {}", r.stderr);
        assert_eq!(r.json()["feature_count"], 177, "{url}");
        assert_eq!(r.json()["files"][0], url);
    }
    // The system-wide file in PGSYSCONFDIR is read when the user's file has no such service.
    let sys = tempfile::tempdir().unwrap();
    std::fs::copy(&file, sys.path().join("pg_service.conf")).unwrap();
    let s = sys.path().display().to_string();
    let missing = dir.path().join("none.conf").display().to_string();
    let r = common::run_with_env(
        &[
            ("PGSERVICEFILE", missing.as_str()),
            ("PGSYSCONFDIR", s.as_str()),
            ("PGPASSWORD", "pw-4711"),
        ],
        &[
            "profile",
            "--format",
            "json",
            "postgresql:///?service=gis&table=countries",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // An unknown service and a line that is not `key=value` are bad input, each named.
    let r = common::run_with_env(
        &env,
        &["profile", "postgresql:///?service=gsi&table=countries"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    r.assert_stderr_has("service `gsi`").assert_stderr_has(&f);
    std::fs::write(&file, "[gis]\nhost 127.0.0.1\n").unwrap();
    let r = common::run_with_env(
        &env,
        &["profile", "postgresql:///?service=gis&table=countries"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    r.assert_stderr_has(&format!("{f}:2"));
    assert!(!r.stderr.contains("pw-4711"));
}

#[test]
fn statement_timeout_bounds_the_scan_and_a_bad_value_is_bad_input() {
    let pg = with_slow_view(60);
    let slow = pg.socket_url("postgres", "slow");
    // The tool's own parameter, libpq's `options`, and PGOPTIONS: each ends the scan on the
    // server; the sleep of a minute never runs out.
    for (env, url) in [
        (vec![], format!("{slow}&statement_timeout=300ms")),
        (
            vec![],
            format!("{slow}&options=-c%20statement_timeout%3D300"),
        ),
        (
            vec![("PGOPTIONS", "-c statement_timeout=300")],
            slow.clone(),
        ),
    ] {
        let r = common::run_with_env(&env, &["profile", &url]);
        assert_eq!(r.code, 3, "{url}: {}", r.stderr);
        r.assert_stderr_has("statement_timeout");
    }
    let r = common::run_with_env(&[], &["profile", &format!("{slow}&statement_timeout=soon")]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    r.assert_stderr_has("statement_timeout");
    // A bound the scan stays inside changes nothing.
    let url = format!(
        "{}&statement_timeout=5min",
        pg.socket_url("postgres", "countries")
    );
    let r = common::run_with_env(&[], &["profile", "--format", "json", &url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["feature_count"], 177);
}

/// Ctrl-C (and a cron job's SIGTERM) cancels the scan on the server: without the cancel, the
/// server would go on sleeping for ten minutes after the client has gone.
#[test]
fn an_interrupt_cancels_the_query_on_the_server() {
    let pg = with_slow_view(600);
    let url = pg.socket_url("postgres", "slow");
    for signal in ["-INT", "-TERM"] {
        let child = common::contracts(&common::scratch_home())
            .args(["profile", &url])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        wait_for(&pg, OUR_ACTIVE, "1", "the scan starts");
        let pid = child.id().to_string();
        let kill = Command::new("kill").args([signal, &pid]).status().unwrap();
        assert!(kill.success());
        let r = Run::of(child.wait_with_output().unwrap());
        assert_eq!(r.code, 130, "{signal}: {}", r.stderr);
        r.assert_stderr_has("interrupted")
            .assert_stderr_has("cancelled on the server");
        assert_eq!(r.stdout, "");
        wait_for(&pg, OUR_ACTIVE, "0", "the server's query ends");
    }
}

/// No row of the relation comes to the client: what the server sent is the same for a
/// thousand rows as for a hundred thousand (pg_stat_statements counts the rows each
/// statement returned).
#[test]
fn the_rows_sent_to_the_client_do_not_grow_with_the_table() {
    let pg = Cluster::start_with(&[
        "shared_preload_libraries = 'pgaudit,pg_stat_statements'",
        "pg_stat_statements.track = 'all'",
    ]);
    pg.sql(
        "postgres",
        "CREATE EXTENSION IF NOT EXISTS postgis; CREATE EXTENSION pg_stat_statements; \
         CREATE ROLE profiler LOGIN;",
    );
    for (name, rows) in [("small", 1_000), ("big", 100_000)] {
        pg.sql(
            "postgres",
            &format!(
                "CREATE TABLE {name} AS SELECT i AS id, 'n' || i AS label, \
                 CASE WHEN i % 7 = 0 THEN NULL ELSE i * 0.5 END AS value, \
                 ST_SetSRID(ST_MakePoint(i % 360 - 180, i % 180 - 90), 4326) AS geom \
                 FROM generate_series(1, {rows}) AS i; GRANT SELECT ON {name} TO profiler;"
            ),
        );
    }
    let mut sent = Vec::new();
    for (name, rows) in [("small", 1_000), ("big", 100_000)] {
        pg.sql("postgres", "SELECT pg_stat_statements_reset()");
        let url = pg
            .socket_url("postgres", name)
            .replacen("postgres@", "profiler@", 1);
        let r = common::run_with_env(&[], &["profile", "--format", "json", &url]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(r.json()["feature_count"], rows);
        let n = pg.sql(
            "postgres",
            "SELECT coalesce(sum(rows), 0) FROM pg_stat_statements s \
             JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = 'profiler'",
        );
        sent.push(n.trim().parse::<u64>().expect("a row count"));
    }
    assert_eq!(sent[0], sent[1], "rows sent for 1,000 and 100,000 rows");
    assert!(sent[1] < 100, "{sent:?}");
}

/// On a terminal, stderr shows that the server is working; into a pipe, nothing is drawn.
#[test]
fn a_terminal_shows_the_server_at_work_and_a_pipe_does_not() {
    let pg = with_slow_view(2);
    let url = pg.socket_url("postgres", "slow");
    let bin = env!("CARGO_BIN_EXE_contracts");
    // `script` runs the binary on a pseudo-terminal and copies what it drew.
    let r = Run::of(
        Command::new("script")
            .args(["-qec", &format!("'{bin}' profile '{url}'"), "/dev/null"])
            .env("HOME", common::scratch_home())
            .env("COLUMNS", "100")
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("on the server"), "{}", r.stdout);
    let piped = common::run_with_env(&[], &["profile", &url]);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert!(!piped.stderr.contains("on the server"), "{}", piped.stderr);
}
