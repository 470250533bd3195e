//! A throw-away PostgreSQL cluster for one test: `initdb` in a temporary directory, a free
//! loopback port and a socket directory of its own, `shared_preload_libraries = 'pgaudit'`,
//! started with `pg_ctl` and stopped (immediately) when the value is dropped. The `postgres`
//! database has the `postgis` extension.
//!
//! initdb and postgres refuse to run as root: under root (CI's `test.sh`) they run as the
//! `postgres` OS user through `runuser`, on a directory that user owns. A machine without
//! PostgreSQL, PostGIS or pgaudit fails the test loudly (`test.sh` installs them); it never
//! skips.
//!
//! Local connections (the socket) are trusted; TCP connections need a password
//! (scram-sha-256), so tests can exercise both. Extra `postgresql.conf` lines (logging settings
//! for the pgaudit tests, say) go in through [`Cluster::start_with`]; the server's log is in
//! [`Cluster::log_dir`] (`pg_ctl.log` holds its stderr; with `logging_collector = on` the
//! collector writes its files there too, as `log_directory` points there).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The superuser every helper connects as (over the trusted socket).
pub const SUPERUSER: &str = "postgres";

pub struct Cluster {
    /// Owned by the `postgres` user under root; removed on drop.
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

/// `/usr/lib/postgresql/<newest>/bin`, or `PG_BIN`: where initdb and pg_ctl are.
fn bin_dir() -> PathBuf {
    if let Some(b) = std::env::var_os("PG_BIN") {
        return PathBuf::from(b);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, b)| b).unwrap_or_else(|| {
        panic!(
            "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): the PostGIS tests \
             need the Debian packages postgresql, postgresql-15-postgis-3, postgresql-15-pgaudit and \
             gdal-bin; run test.sh as root to install them"
        )
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

#[track_caller]
fn check(out: std::io::Result<Output>, what: &str) -> Output {
    let out = out.unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Cluster {
    /// A started cluster with pgaudit preloaded and postgis in the `postgres` database.
    pub fn start() -> Cluster {
        Cluster::start_with(&[])
    }

    /// [`Cluster::start`] with `extra` lines appended to postgresql.conf (they win over the
    /// defaults written before them).
    pub fn start_with(extra: &[&str]) -> Cluster {
        Cluster::start_with_files(extra, &[])
    }

    /// [`Cluster::start_with`], with `files` (name, content) written into the data directory
    /// before the server starts, owned by the server's user and readable by it alone (a TLS
    /// key and certificate, named in `extra` relative to the data directory).
    pub fn start_with_files(extra: &[&str], files: &[(&str, &[u8])]) -> Cluster {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("pg-")
            .tempdir()
            .expect("temp dir");
        let c = Cluster {
            dir,
            bin,
            port: free_port(),
        };
        std::fs::create_dir_all(c.socket_dir()).expect("socket dir");
        std::fs::create_dir_all(c.log_dir()).expect("log dir");
        if is_root() {
            check(
                Command::new("chown")
                    .args(["-R", "postgres:postgres"])
                    .arg(c.dir.path())
                    .output(),
                "chown the cluster directory to postgres",
            );
        }
        check(
            c.as_owner(&c.bin.join("initdb"))
                .args(["-D", &c.data().display().to_string()])
                .args([
                    "-U",
                    SUPERUSER,
                    "--auth-local=trust",
                    "--auth-host=scram-sha-256",
                ])
                .args(["-E", "UTF8", "--no-locale"])
                .output(),
            "initdb",
        );
        let mut conf = format!(
            "\n# written by tests/common/postgres.rs\nport = {}\nlisten_addresses = '127.0.0.1'\n\
             unix_socket_directories = '{}'\nshared_preload_libraries = 'pgaudit'\n\
             log_directory = '{}'\nfsync = off\n",
            c.port,
            c.socket_dir().display(),
            c.log_dir().display()
        );
        for line in extra {
            conf.push_str(line);
            conf.push('\n');
        }
        for (name, content) in files {
            let path = c.data().join(name);
            std::fs::write(&path, content).expect("write a file of the data directory");
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                .expect("chmod 600");
            if is_root() {
                check(
                    Command::new("chown")
                        .arg("postgres:postgres")
                        .arg(&path)
                        .output(),
                    "chown a file of the data directory",
                );
            }
        }
        let conf_path = c.data().join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf_path).expect("postgresql.conf");
        text.push_str(&conf);
        std::fs::write(&conf_path, text).expect("write postgresql.conf");
        // The free port was free when asked for; another test may take it before the server
        // binds it. Then a later `port =` line (the last one wins) and another try.
        let mut c = c;
        for attempt in 0.. {
            let out = c
                .as_owner(&c.bin.join("pg_ctl"))
                .args(["-D", &c.data().display().to_string()])
                .args(["-l", &c.log_dir().join("pg_ctl.log").display().to_string()])
                .args(["-w", "-t", "60", "start"])
                .output();
            let log = std::fs::read_to_string(c.log_dir().join("pg_ctl.log")).unwrap_or_default();
            let taken = log.contains("Address already in use");
            if attempt < 3 && taken && out.as_ref().is_ok_and(|o| !o.status.success()) {
                c.port = free_port();
                let mut text = std::fs::read_to_string(&conf_path).expect("postgresql.conf");
                text.push_str(&format!("port = {}\n", c.port));
                std::fs::write(&conf_path, text).expect("write postgresql.conf");
                std::fs::write(c.log_dir().join("pg_ctl.log"), "").expect("clear pg_ctl.log");
                continue;
            }
            check(out, "pg_ctl start");
            break;
        }
        c.sql("postgres", "CREATE EXTENSION postgis");
        c
    }

    /// A command run as the cluster's owner: `postgres` under root, else this user.
    fn as_owner(&self, program: &Path) -> Command {
        if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c.current_dir(self.dir.path());
            c
        } else {
            Command::new(program)
        }
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The directory of the server's socket (a `host=` of libpq).
    pub fn socket_dir(&self) -> PathBuf {
        self.dir.path().join("sock")
    }

    /// Where the server's log goes: `pg_ctl.log` (its stderr) and the collector's files.
    pub fn log_dir(&self) -> PathBuf {
        self.dir.path().join("log")
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Run `sql` in `db` as the superuser over the socket; panics on an error, returns the
    /// rows as psql's unaligned text (`|`-separated, one row a line).
    #[track_caller]
    pub fn sql(&self, db: &str, sql: &str) -> String {
        let out = check(self.psql(db, sql).output(), &format!("psql {sql}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Run `sql` in `db` as `role` over the socket, as a consumer's client would; panics on an
    /// error.
    #[track_caller]
    pub fn sql_as(&self, role: &str, db: &str, sql: &str) {
        let out = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(self.socket_dir())
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                role,
                "-d",
                db,
                "-c",
                sql,
            ])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql as {role}: {sql}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `psql` on `db` as the superuser, ready to run `sql` (for a test that expects failure).
    pub fn psql(&self, db: &str, sql: &str) -> Command {
        let mut c = Command::new(self.bin.join("psql"));
        c.args(["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", &self.socket_dir().display().to_string()])
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                SUPERUSER,
                "-d",
                db,
                "-c",
                sql,
            ]);
        c
    }

    /// Replace pg_hba.conf by `lines` and reload. Keep a `local all all trust` line: the
    /// helpers connect over the socket.
    pub fn set_hba(&self, lines: &str) {
        let path = self.data().join("pg_hba.conf");
        std::fs::write(&path, lines).expect("write pg_hba.conf");
        self.sql("postgres", "SELECT pg_reload_conf()");
    }

    /// A new database with the postgis extension.
    pub fn create_db(&self, name: &str) {
        self.sql("postgres", &format!("CREATE DATABASE \"{name}\""));
        self.sql(name, "CREATE EXTENSION postgis");
    }

    /// Load a file into `db` as `table` with GDAL's `ogr2ogr` (its PostgreSQL driver), with
    /// `extra` arguments (e.g. `-nlt GEOMETRY`).
    #[track_caller]
    pub fn load(&self, db: &str, file: &Path, table: &str, extra: &[&str]) {
        if let Err(e) = self.try_load(db, file, table, extra) {
            panic!("ogr2ogr {}: {e}", file.display());
        }
    }

    /// The Natural Earth countries (`tests/data/naturalearth/countries.gpkg`, 177 features)
    /// in the `postgres` database as `public.countries`: the table most PostGIS tests read.
    pub fn load_countries(&self) {
        let countries = super::data("naturalearth/countries.gpkg");
        self.load("postgres", &countries, "public.countries", &[]);
    }

    /// [`Cluster::load`], with GDAL's refusal as the error (for a test that lists the files
    /// GDAL cannot load).
    pub fn try_load(
        &self,
        db: &str,
        file: &Path,
        table: &str,
        extra: &[&str],
    ) -> Result<(), String> {
        let pg = format!(
            "PG:host={} port={} user={SUPERUSER} dbname={db}",
            self.socket_dir().display(),
            self.port
        );
        let out = Command::new("ogr2ogr")
            .args(["-f", "PostgreSQL", &pg])
            .arg(file)
            .args(["-nln", table])
            .args(extra)
            .output()
            .unwrap_or_else(|e| panic!("ogr2ogr cannot run (gdal-bin): {e}"));
        if out.status.success() {
            Ok(())
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            Err(err.lines().next().unwrap_or("").to_string())
        }
    }

    /// A URL reaching `db` over the socket, as the superuser, naming `table`.
    pub fn socket_url(&self, db: &str, table: &str) -> String {
        let host: String = self.socket_dir().display().to_string().replace('/', "%2F");
        format!(
            "postgresql://{SUPERUSER}@{host}:{}/{db}?table={table}",
            self.port
        )
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .as_owner(&self.bin.join("pg_ctl"))
            .args(["-D", &self.data().display().to_string()])
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }
}
