//! The guide *A dataset served from PostGIS* (docs/src/guides/postgis.md), run as written
//! against a real PostgreSQL with PostGIS and pgaudit: its `postgresql.conf` lines configure
//! the server, its SQL runs as the database owner would run it, its shell commands run in a
//! store with the one line that names the reader's own host (`PGHOST=db.example`) pointed at
//! the test's server, and its source and consumer tables go into the store's files. Only the
//! crontab line, which needs a machine's cron and a server's log directory, is not run.

use std::path::Path;
use std::process::Command;

use crate::common::docs::fences;
use crate::common::postgres::Cluster;
use crate::common::{self, data, Run};

fn guide() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/guides/postgis.md"),
    )
    .expect("the guide")
}

/// The lines of a fenced block that are not comments.
fn settings(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .cloned()
        .collect()
}

#[test]
fn the_postgis_guide_runs_as_written() {
    let text = guide();
    let ini = fences(&text, "ini");
    let sql = fences(&text, "sql");
    let sh = fences(&text, "sh");
    let toml = fences(&text, "toml");
    assert_eq!((ini.len(), sql.len(), sh.len(), toml.len()), (1, 2, 3, 3));

    // The server as the guide configures it; pgaudit quiet while PostGIS installs, as the
    // guide says, then reading again through ALTER SYSTEM (which wins over the file).
    let mut conf = settings(&ini[0].lines);
    conf.push("pgaudit.log = 'none'".into());
    let conf: Vec<&str> = conf.iter().map(String::as_str).collect();
    let pg = Cluster::start_with(&conf);
    pg.sql("postgres", "CREATE DATABASE gis");
    pg.sql("gis", "CREATE EXTENSION postgis; CREATE EXTENSION pgaudit;");
    pg.sql(
        "gis",
        "CREATE ROLE publisher LOGIN; CREATE ROLE atlas LOGIN; CREATE ROLE router LOGIN;",
    );
    pg.load(
        "gis",
        &data("naturalearth/countries.gpkg"),
        "public.roads_data",
        &["-lco", "FID=id", "-lco", "GEOMETRY_NAME=geom"],
    );
    pg.sql("gis", "GRANT SELECT ON public.roads_data TO publisher");
    // Each statement on its own, as psql runs what one types: ALTER SYSTEM may not share a
    // transaction.
    for block in &sql {
        for statement in block.lines.iter().filter(|l| !l.trim().is_empty()) {
            pg.sql("gis", statement);
        }
    }
    pg.sql("postgres", "ALTER SYSTEM SET pgaudit.log = 'read'");
    pg.sql("postgres", "SELECT pg_reload_conf()");

    // A store, and the guide's commands in it, on the day the server's clock says.
    let env = common::World {
        today: chrono::Utc::now().date_naive().to_string(),
        ..common::World::empty()
    };
    let store = env.home().join("store");
    std::fs::create_dir_all(store.join("drafts")).unwrap();
    let r = env.run_in(&store, &["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_contracts")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sock = pg.socket_dir().display().to_string();
    let run_block = |lines: &[String]| -> Run {
        let script = lines
            .join("\n")
            .replace("PGHOST=db.example", &format!("PGHOST={sock}"));
        // The binary's hermetic environment (HOME, git author, --today), with bash in its
        // place and the binary's folder on PATH.
        let hermetic = env.command(&store);
        let mut bash = Command::new("bash");
        bash.env_clear();
        for (k, v) in hermetic.get_envs() {
            if let Some(v) = v {
                bash.env(k, v);
            }
        }
        bash.env("PATH", &path)
            .env("PGPORT", pg.port().to_string())
            .current_dir(&store)
            .args(["-euo", "pipefail", "-c", &script]);
        Run::of(bash.output().expect("bash runs"))
    };
    let first = run_block(&sh[0].lines);
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    assert!(
        first.stdout.contains("177"),
        "the profile's feature count: {}",
        first.stdout
    );
    let draft = std::fs::read_to_string(store.join("drafts/roads-1.0.0.toml")).unwrap();
    assert!(
        draft.contains("Drafted from a profile of: postgresql:///gis?table=public.roads_data")
            && !draft.contains("TODO"),
        "{draft}"
    );
    assert!(
        store.join("contracts/roads/1.0.0.toml").exists(),
        "proposed"
    );
    // The guide's blocks are typed in one shell: the second keeps the first's exports.
    let mut session: Vec<String> = sh[0]
        .lines
        .iter()
        .filter(|l| l.starts_with("export "))
        .cloned()
        .collect();
    session.extend(sh[1].lines.iter().cloned());
    let second = run_block(&session);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    let record = std::fs::read_to_string(store.join("history/roads.releases.toml")).unwrap();
    assert!(record.contains("table=public.roads_data"), "{record}");

    // Consumers read their lines; the publisher's own read is no read.
    pg.sql_as("atlas", "gis", "SELECT count(*) FROM public.roads_v1");
    pg.sql_as("router", "gis", "SELECT count(*) FROM public.roads_v2");
    pg.sql_as("publisher", "gis", "SELECT count(*) FROM public.roads_data");
    // The collector hands the lines over through a pipe: wait (boundedly) for the last.
    let logs = store.join("pglogs");
    let mut seen = false;
    for _ in 0..300 {
        let csv: String = std::fs::read_dir(pg.log_dir())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".csv"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect();
        if csv.contains("roads_v2") {
            seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        seen,
        "no audit entry of router's read in {}",
        pg.log_dir().display()
    );
    std::fs::create_dir_all(&logs).unwrap();
    for e in std::fs::read_dir(pg.log_dir()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), logs.join(e.file_name())).unwrap();
    }

    // The guide's source (the csvlog one) and its consumer table, plus router as a role of
    // the same name.
    let mut config = std::fs::read_to_string(store.join("contracts.toml")).unwrap();
    config.push('\n');
    config.push_str(&toml[1].lines.join("\n"));
    config.push('\n');
    std::fs::write(store.join("contracts.toml"), config).unwrap();
    let consumers = format!(
        "{}\n\n[consumers.router]\nteam = \"Routing\"\ncontacts = [\"router@example.org\"]\n",
        toml[0].lines.join("\n")
    );
    std::fs::write(store.join("consumers.toml"), consumers).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .current_dir(&store)
            .env("HOME", env.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args([
                "-c",
                "user.name=Ada Tester",
                "-c",
                "user.email=ada@example.org",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["add", "contracts.toml", "consumers.toml"]);
    git(&[
        "commit",
        "-q",
        "-m",
        "consumption from the server's audit log",
    ]);

    let r = env.run_in(&store, &["--format", "json", "consumers", "roads"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    let on: Vec<(String, String)> = json["consumers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["version"].is_null())
        .map(|c| {
            (
                c["consumer"].as_str().unwrap().to_string(),
                c["version"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        on,
        vec![("atlas".to_string(), "1.0.0".to_string())],
        "{json}"
    );
}
