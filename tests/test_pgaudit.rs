//! PostgreSQL's own audit log as the consumption record (issue 39), on the log a real server
//! wrote: a throw-away cluster with pgaudit (`common::postgres`), real data loaded with
//! `ogr2ogr`, a view per contract line, consumers as roles reading through `psql`, and the
//! server logging to `stderr`, `csvlog` and `jsonlog` at once. `consumers`, `can-retire` and
//! `notify --dry-run` must then say the same from each of the three files.

use std::path::{Path, PathBuf};

use chrono::{Days, NaiveDate, Utc};

use crate::common::postgres::Cluster;
use crate::common::world::{self, World};
use crate::common::Rows;

const PREFIX: &str = "%m [%p] %q%u@%d ";

/// Run `sql` in `db` as `role` over the cluster's socket (trusted), the way a consumer's job
/// would, through `psql`.
/// The store's days, from the wall clock: the server stamps its log with the real time, so
/// the contracts are dated around it.
struct Days3 {
    today: NaiveDate,
}

impl Days3 {
    fn now() -> Days3 {
        Days3 {
            today: Utc::now().date_naive(),
        }
    }
    fn back(&self, n: u64) -> NaiveDate {
        self.today - Days::new(n)
    }
    fn ahead(&self, n: u64) -> NaiveDate {
        self.today + Days::new(n)
    }
}

/// roads 1.0.0 (a year ago), 1.1.0 (100 days ago) and 2.0.0 (60 days ago, line 1's sunset in
/// 45 days: the 60-day notice is due), read only through `source`.
fn store(days: &Days3, source: &str) -> World {
    let w = World::new(world::closed_port());
    w.write(
        "contracts/roads/1.0.0.toml",
        &format!(
            "dataset = \"roads\"\nversion = \"1.0.0\"\nvalid_from = {}\n[clauses]\ncrs = \"EPSG:4326\"\n",
            days.back(365)
        ),
    );
    w.write(
        "contracts/roads/1.1.0.toml",
        &format!(
            "dataset = \"roads\"\nversion = \"1.1.0\"\nsupersedes = \"1.0.0\"\nvalid_from = {}\n\
             [clauses]\ncrs = \"EPSG:4326\"\n",
            days.back(100)
        ),
    );
    w.write(
        "contracts/roads/2.0.0.toml",
        &format!(
            "dataset = \"roads\"\nversion = \"2.0.0\"\nsupersedes = \"1.1.0\"\nvalid_from = {}\n\
             sunset = {}\n[clauses]\ncrs = \"EPSG:27700\"\n",
            days.back(60),
            days.ahead(45)
        ),
    );
    w.read_only_sources(source);
    w
}

/// The cluster, its consumers' reads, and the three log files it wrote.
struct Logged {
    _cluster: Cluster,
    dir: PathBuf,
}

impl Logged {
    fn file(&self, ext: &str) -> PathBuf {
        self.dir.join(format!("postgresql.{ext}"))
    }
}

/// A server with pgaudit logging reads (session auditing, one entry per relation) and object
/// auditing through the `auditor` role on the views; the Natural Earth countries loaded as a
/// table and served as one view per line; then:
/// - `atlas` reads line 1 twice: a statement over several lines that names the other view in
///   a string literal, and `COPY … TO`;
/// - `router` reads line 2;
/// - `publisher`, the producer's own role, reads line 1 (ignored by the source);
/// - `atlas` also runs `SELECT 1` (no relation) and writes nothing.
fn logged() -> Logged {
    let c = Cluster::start_with(&[
        "logging_collector = on",
        "log_destination = 'stderr,csvlog,jsonlog'",
        "log_filename = 'postgresql.log'",
        "log_rotation_age = 0",
        "log_timezone = 'UTC'",
        &format!("log_line_prefix = '{PREFIX}'"),
    ]);
    let db = "gis";
    c.create_db(db);
    let countries =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/naturalearth/countries.gpkg");
    c.load(db, &countries, "countries_data", &[]);
    c.sql(
        db,
        "CREATE EXTENSION pgaudit; \
         CREATE ROLE auditor NOLOGIN; \
         CREATE ROLE atlas LOGIN; CREATE ROLE router LOGIN; CREATE ROLE publisher LOGIN; \
         CREATE VIEW roads_v1 AS SELECT * FROM countries_data; \
         CREATE VIEW roads_v2 AS SELECT * FROM countries_data; \
         GRANT SELECT ON roads_v1, roads_v2 TO atlas, router, publisher; \
         GRANT SELECT ON roads_v1, roads_v2 TO auditor;",
    );
    // PostGIS refuses to install while pgaudit logs (it says so), so the auditing is turned
    // on once the database is set up, as a publisher would on a live server.
    for setting in [
        "ALTER SYSTEM SET pgaudit.log = 'read'",
        "ALTER SYSTEM SET pgaudit.log_relation = on",
        "ALTER SYSTEM SET pgaudit.role = 'auditor'",
        "SELECT pg_reload_conf()",
    ] {
        c.sql("postgres", setting);
    }
    c.sql_as(
        "atlas",
        db,
        "SELECT count(*),\n       'public.roads_v2, not read' AS note\n  FROM public.roads_v1",
    );
    c.sql_as(
        "atlas",
        db,
        "COPY (SELECT * FROM roads_v1 LIMIT 1) TO STDOUT",
    );
    c.sql_as("atlas", db, "SELECT 1");
    c.sql_as("router", db, "SELECT count(*) FROM roads_v2");
    c.sql_as("publisher", db, "SELECT count(*) FROM roads_v1");
    // The backends hand their lines to the collector through a pipe: wait (boundedly) until
    // the last read, the publisher's, is in all three files.
    let dir = c.log_dir();
    for ext in ["log", "csv", "json"] {
        let path = dir.join(format!("postgresql.{ext}"));
        let mut text = String::new();
        for _ in 0..300 {
            text = std::fs::read_to_string(&path).unwrap_or_default();
            if text.contains("roads_v1") && text.contains("publisher") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert!(
            text.contains("AUDIT: ") && text.contains("publisher"),
            "{} holds no audit entry of the reads after 30 s:\n{text}",
            path.display()
        );
    }
    Logged { _cluster: c, dir }
}

/// (consumer, status, version) of each standing that read roads, sorted.
fn standings(w: &World, today: &str) -> (Vec<(String, String, String)>, serde_json::Value) {
    let run = w.run(today, &["--format", "json", "consumers", "roads"]);
    run.assert_code(0);
    let json = run.json();
    let mut out: Vec<(String, String, String)> = json["consumers"]
        .rows()
        .filter(|c| !c["version"].is_null())
        .map(|c| {
            (
                c["consumer"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
                c["version"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    (out, json)
}

#[test]
fn the_servers_own_audit_log_says_who_reads_each_line_in_all_three_destinations() {
    let days = Days3::now();
    // A day after the run, so that a run across midnight still counts every read.
    let today = days.ahead(1).to_string();
    let log = logged();
    for (ext, keys) in [
        (
            "log",
            format!("log_destination = \"stderr\"\nprefix = \"{PREFIX}\"\n"),
        ),
        ("csv", "log_destination = \"csvlog\"\n".to_string()),
        // Without `log_destination`, the file's first line says.
        ("json", String::new()),
    ] {
        let source = format!(
            "[[consumption.source]]\npath = \"pg/*.{ext}\"\nformat = \"pgaudit\"\n{keys}\
             match = \"public.{{dataset}}_v{{line}}\"\nignore_principals = [\"publisher\"]\n"
        );
        let w = store(&days, &source);
        std::fs::create_dir_all(w.root().join("pg")).unwrap();
        std::fs::copy(log.file(ext), w.root().join(format!("pg/postgresql.{ext}"))).unwrap();
        let (got, json) = standings(&w, &today);
        // atlas's two reads of the view of line 1 are of its newest version valid today;
        // router's of line 2; the publisher's own read is no read.
        assert_eq!(
            got,
            vec![
                ("atlas".into(), "still-on".into(), "1.1.0".into()),
                ("router".into(), "current".into(), "2.0.0".into()),
            ],
            "{ext}: {json:#}"
        );
        let atlas = json["consumers"]
            .rows()
            .find(|c| c["consumer"] == "atlas")
            .unwrap();
        // Two statements within a minute of each other: one read (same_read_seconds).
        assert_eq!(atlas["reads"], 1, "{ext}: {json:#}");
        let source = &json["scan"]["sources"][0];
        // pgaudit logs each statement once per relation: the view (as SESSION and, through
        // the auditor role, as OBJECT: one request) and the table behind it (a relation no
        // template maps). atlas's two statements and router's one are the requests that
        // count; `SELECT 1` and the COPY's own sub-statement name no relation (`method`);
        // the publisher's view and table are ignored.
        assert_eq!(source["requests"], 3, "{ext}: {source:#}");
        assert_eq!(source["not_read"]["unmatched"], 3, "{ext}: {source:#}");
        assert_eq!(source["not_read"]["method"], 2, "{ext}: {source:#}");
        assert_eq!(source["not_read"]["ignored"], 2, "{ext}: {source:#}");
        assert_eq!(
            source["blind"],
            serde_json::Value::Null,
            "{ext}: {source:#}"
        );
        // The gate and the notifier read the same log.
        w.run(&today, &["can-retire", "roads", "1"])
            .assert_code(1)
            .assert_stdout_has("atlas");
        let plan = w.run(&today, &["--format", "json", "notify", "--dry-run"]);
        plan.assert_code(0);
        let told: Vec<String> = plan
            .json()
            .rows()
            .map(|r| r["consumer"].as_str().unwrap().to_string())
            .collect();
        assert!(told.contains(&"atlas".to_string()), "{ext}: {told:?}");
        assert!(!told.contains(&"router".to_string()), "{ext}: {told:?}");
    }
}

#[test]
fn a_prefix_that_is_not_the_servers_makes_the_source_blind_and_the_gate_cannot_tell() {
    let days = Days3::now();
    let today = days.ahead(1).to_string();
    let log = logged();
    let source = "[[consumption.source]]\npath = \"pg/*.log\"\nformat = \"pgaudit\"\n\
                  log_destination = \"stderr\"\nprefix = \"%t [%p]: [%l-1] user=%u,db=%d \"\n\
                  match = \"public.{dataset}_v{line}\"\n";
    let w = store(&days, source);
    std::fs::create_dir_all(w.root().join("pg")).unwrap();
    std::fs::copy(log.file("log"), w.root().join("pg/postgresql.log")).unwrap();
    // Make line 1 otherwise retirable: nobody that counts is seen on it.
    let run = w.run(&today, &["can-retire", "roads", "1"]);
    run.assert_code(4);
    run.assert_stderr_has("does not start with the prefix `%t [%p]: [%l-1] user=%u,db=%d `");
    run.assert_stderr_has("pg/postgresql.log:1:");
    run.assert_stderr_has("gave no read of any dataset");
}

#[test]
fn bad_pgaudit_keys_are_refused_where_they_stand() {
    let w = World::new(world::closed_port());
    w.read_only_sources(
        "[[consumption.source]]\npath = \"pg/*.log\"\nformat = \"pgaudit\"\n\
         log_destination = \"syslog\"\nprefix = \"%u%d \"\nprincipal = \"client_addr\"\n\
         match = \"public.{dataset}_v{line}_{contract}\"\n",
    );
    let run = w.run("2026-11-29", &["consumers", "roads"]);
    run.assert_code(2);
    let config = w.read("contracts.toml").unwrap();
    for (key, says) in [
        (
            "log_destination",
            "\"syslog\" is not one of stderr, csvlog, jsonlog",
        ),
        ("prefix", "cannot be told apart"),
        ("principal", "\"user_name\""),
        ("match", "{contract} and {line} both"),
    ] {
        let line = world::line_of(&config, &format!("{key} = "));
        run.assert_stderr_has(&format!("contracts.toml:{line}:"));
        run.assert_stderr_has(says);
    }
}
