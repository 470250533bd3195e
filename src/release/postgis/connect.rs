//! The connection to a PostGIS release, made as libpq makes it, so a URL that works with
//! `psql` works here: what the URL leaves out comes from `PGHOST`, `PGPORT`, `PGUSER`,
//! `PGDATABASE`, `PGPASSWORD`, `PGSSLMODE`, `PGCONNECT_TIMEOUT` and `PGOPTIONS`, a password
//! last from the password file (`PGPASSFILE`, else `~/.pgpass`). A service (`?service=NAME` or
//! `PGSERVICE`) fills in what the URL leaves out before the environment does, as in libpq. A host that starts with `/` (in the URL
//! percent-encoded, or as `?host=/path`) is a Unix-socket directory.
//!
//! The password is never part of a message: the URL a user sees has it blanked
//! ([`Target::display`]), and every server or driver message passes [`Target::scrub`].

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use postgres::config::{Host, SslMode};
use postgres::{CancelToken, Client, Config, NoTls};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::service::{self, Service};
use super::tls::{self, Verify};
use super::PostgisError;

/// libpq's compiled-in socket directory on Debian, used when neither the URL nor `PGHOST`
/// names a host.
const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// A server that does not answer fails a CI job in seconds, as libpq's
/// `connect_timeout` would make it (libpq itself waits forever by default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a `postgresql://` release argument names: where to connect, and which relation.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as given with its password blanked: the profile's `files` entry.
    display: String,
    /// The URL's own password, kept only to be scrubbed from messages.
    secret: Option<String>,
    /// The connection URL without this tool's own parameters.
    conn_url: String,
    /// `schema.name` or `name`, as given.
    pub relation: String,
    /// `&geometry_column=NAME`.
    pub geometry_column: Option<String>,
    sslmode: Option<String>,
    sslrootcert: Option<String>,
    /// `&service=NAME`: a section of libpq's service file.
    service: Option<String>,
    /// `&statement_timeout=VALUE`, in PostgreSQL's units (`300ms`, `5min`).
    pub statement_timeout: Option<String>,
}

/// Whether and how the connection is encrypted, and against which root certificates.
enum Tls {
    Off,
    On(Verify, Option<PathBuf>),
}

/// What cancels the connection's running statement from another thread: the server's
/// cancel key, sent over a connection made as the first was (TLS or not).
pub struct Canceller {
    token: CancelToken,
    tls: Option<MakeRustlsConnect>,
}

impl Canceller {
    /// Ask the server to cancel what the connection is running. Best effort, as libpq's
    /// `PQcancel`: a failure leaves the query to the server's own limits.
    pub fn cancel(&self) {
        let _ = match &self.tls {
            None => self.token.cancel_query(NoTls),
            Some(tls) => self.token.cancel_query(tls.clone()),
        };
    }
}

/// Whether a release argument is a PostgreSQL URL.
pub fn is_postgres_url(arg: &str) -> bool {
    let lower = arg.get(..14).unwrap_or(arg).to_ascii_lowercase();
    lower.starts_with("postgresql://") || lower.starts_with("postgres://")
}

/// `%XX` escapes decoded; a malformed escape is kept as written.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The URL with the password of its user info and of a `password=` parameter blanked.
fn blank_password(url: &str) -> String {
    let (head, query) = url
        .split_once('?')
        .map_or((url, None), |(h, q)| (h, Some(q)));
    let mut out = match head.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest
                .split_once('/')
                .map_or((rest, None), |(a, p)| (a, Some(p)));
            let authority = match authority.rsplit_once('@') {
                Some((info, host)) => match info.split_once(':') {
                    Some((user, _)) => format!("{user}:***@{host}"),
                    None => format!("{info}@{host}"),
                },
                None => authority.to_string(),
            };
            match path {
                Some(p) => format!("{scheme}://{authority}/{p}"),
                None => format!("{scheme}://{authority}"),
            }
        }
        None => head.to_string(),
    };
    if let Some(q) = query {
        let params: Vec<String> = q
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k == "password" => format!("{k}=***"),
                _ => kv.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

impl Target {
    /// Read a release argument. Bad input (no `table=`, a parameter libpq does not know) is
    /// [`PostgisError::BadUrl`].
    pub fn parse(arg: &str) -> Result<Target, PostgisError> {
        let display = blank_password(arg);
        let bad = |reason: String| PostgisError::BadUrl {
            url: display.clone(),
            reason,
        };
        let (head, query) = arg.split_once('?').map_or((arg, ""), |(h, q)| (h, q));
        let mut relation = None;
        let mut geometry_column = None;
        let mut sslmode = None;
        let mut sslrootcert = None;
        let mut service = None;
        let mut statement_timeout = None;
        let mut secret = None;
        let mut kept = Vec::new();
        for kv in query.split('&').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            match k {
                "table" => relation = Some(percent_decode(v)),
                "geometry_column" => geometry_column = Some(percent_decode(v)),
                "sslmode" => sslmode = Some(percent_decode(v)),
                "sslrootcert" => sslrootcert = Some(percent_decode(v)),
                "service" => service = Some(percent_decode(v)),
                "statement_timeout" => statement_timeout = Some(percent_decode(v)),
                _ => {
                    if k == "password" {
                        secret = Some(percent_decode(v));
                    }
                    kept.push(kv);
                }
            }
        }
        if let Some((_, rest)) = head.split_once("://") {
            let authority = rest.split_once('/').map_or(rest, |(a, _)| a);
            if let Some((info, _)) = authority.rsplit_once('@') {
                if let Some((_, pw)) = info.split_once(':') {
                    secret = Some(percent_decode(pw));
                }
            }
        }
        let relation = relation.filter(|r| !r.is_empty()).ok_or_else(|| {
            bad("name the table or view with ?table=schema.name (and &geometry_column=NAME when it has several)".into())
        })?;
        let conn_url = if kept.is_empty() {
            head.to_string()
        } else {
            format!("{head}?{}", kept.join("&"))
        };
        // Parsed now so a bad URL is bad input before any connection is tried.
        Config::from_str(&conn_url).map_err(|e| bad(e.to_string()))?;
        Ok(Target {
            display,
            secret,
            conn_url,
            relation,
            geometry_column,
            sslmode,
            sslrootcert,
            service,
            statement_timeout,
        })
    }

    /// The URL as a user may see it: the password blanked, the table visible.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// A message with every password this connection knows blanked.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        let env_pw = std::env::var("PGPASSWORD").ok();
        for pw in self.secret.iter().chain(env_pw.iter()) {
            if !pw.is_empty() {
                out = out.replace(pw.as_str(), "***");
            }
        }
        out
    }

    /// The connection settings: the URL's, then the service's, then the environment's, then
    /// libpq's defaults.
    fn config(&self) -> Result<(Config, Endpoint, Tls), PostgisError> {
        let bad = |reason: String| PostgisError::BadUrl {
            url: self.display.clone(),
            reason,
        };
        let mut c = Config::from_str(&self.conn_url).map_err(|e| bad(e.to_string()))?;
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let service = match self.service.clone().or_else(|| env("PGSERVICE")) {
            Some(name) => service::lookup(&name).map_err(bad)?,
            None => Service { settings: vec![] },
        };
        // A setting the URL leaves out: the service's, else the environment variable's.
        let fallback = |key: &str, var: &str| service.get(key).map(str::to_string).or(env(var));
        if c.get_hosts().is_empty() {
            let host = fallback("host", "PGHOST")
                .or(service.get("hostaddr").map(str::to_string))
                .unwrap_or_else(|| DEFAULT_SOCKET_DIR.to_string());
            for h in host.split(',') {
                if h.starts_with('/') {
                    c.host_path(h);
                } else {
                    c.host(h);
                }
            }
        }
        if c.get_ports().is_empty() {
            let port = match fallback("port", "PGPORT") {
                Some(p) => p
                    .parse::<u16>()
                    .map_err(|_| bad(format!("port `{p}` is not a port number")))?,
                None => 5432,
            };
            c.port(port);
        }
        if c.get_user().is_none() {
            if let Some(u) = fallback("user", "PGUSER") {
                c.user(&u);
            }
        }
        if c.get_dbname().is_none() {
            if let Some(d) = fallback("dbname", "PGDATABASE") {
                c.dbname(&d);
            }
        }
        if c.get_options().is_none() {
            if let Some(o) = fallback("options", "PGOPTIONS") {
                c.options(&o);
            }
        }
        if c.get_connect_timeout().is_none() {
            let t = fallback("connect_timeout", "PGCONNECT_TIMEOUT")
                .and_then(|t| t.parse::<u64>().ok())
                .filter(|t| *t > 0)
                .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
            c.connect_timeout(t);
        }
        let endpoint = Endpoint::of(&c);
        if c.get_password().is_none() {
            if let Some(pw) = fallback("password", "PGPASSWORD") {
                c.password(pw);
            } else if let Some(pw) = passfile_password(&endpoint, &c) {
                c.password(pw);
            }
        }
        let mode = self
            .sslmode
            .clone()
            .or_else(|| fallback("sslmode", "PGSSLMODE"));
        let root = tls::root_file(self.sslrootcert.as_deref().or(service.get("sslrootcert")));
        let root_exists = root.as_deref().is_some_and(Path::exists);
        let verify = match mode.as_deref() {
            Some("disable") => None,
            // libpq: `require` with a root certificate file verifies the chain.
            Some("require") if root_exists => Some(Verify::Chain),
            None | Some("prefer" | "allow" | "require") => Some(Verify::Nothing),
            Some("verify-ca") => Some(Verify::Chain),
            Some("verify-full") => Some(Verify::Full),
            Some(m) => return Err(bad(format!("unknown sslmode `{m}`"))),
        };
        // libpq never encrypts a Unix socket, whatever sslmode says.
        let tls = match verify {
            Some(v) if !endpoint.socket => Tls::On(v, root),
            _ => Tls::Off,
        };
        c.ssl_mode(match mode.as_deref() {
            _ if endpoint.socket => SslMode::Disable,
            Some("disable") => SslMode::Disable,
            None | Some("prefer" | "allow") => SslMode::Prefer,
            _ => SslMode::Require,
        });
        c.application_name("contracts");
        Ok((c, endpoint, tls))
    }

    /// Connect, classifying a failure: unreachable, refused credentials (the environment),
    /// or no such database (the input). With the client comes what cancels its statements.
    pub fn connect(&self) -> Result<(Client, Canceller), PostgisError> {
        let (config, at, tls) = self.config()?;
        let user = config.get_user().unwrap_or("(the OS user)").to_string();
        let (connected, cancel_tls) = match tls {
            Tls::Off => (config.connect(NoTls), None),
            Tls::On(verify, root) => {
                let connector = tls::connector(verify, root.as_deref()).map_err(|reason| {
                    PostgisError::BadUrl {
                        url: self.display.clone(),
                        reason,
                    }
                })?;
                (config.connect(connector.clone()), Some(connector))
            }
        };
        // A password from the service or password file is blanked too.
        let file_password = config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned());
        let client = connected.map_err(|e| {
            let mut reason = self.scrub(&chain(&e));
            if let Some(pw) = file_password.as_deref().filter(|p| !p.is_empty()) {
                reason = reason.replace(pw, "***");
            }
            let code = e.as_db_error().map(|d| d.code().code().to_string());
            match code.as_deref() {
                Some("28P01" | "28000") => PostgisError::Auth {
                    host: at.host.clone(),
                    port: at.port,
                    user,
                    reason,
                },
                Some("3D000") => PostgisError::NoDatabase {
                    url: self.display.clone(),
                    reason,
                },
                _ if reason.contains("password missing") => PostgisError::Auth {
                    host: at.host.clone(),
                    port: at.port,
                    user,
                    reason: "the server asks for a password and none was given (in the URL, the service, PGPASSWORD or the password file)".into(),
                },
                _ => PostgisError::Unreachable {
                    host: at.host.clone(),
                    port: at.port,
                    reason,
                },
            }
        })?;
        let canceller = Canceller {
            token: client.cancel_token(),
            tls: cancel_tls,
        };
        Ok((client, canceller))
    }
}

/// An error with its causes, one line: the driver's "error connecting to server" says
/// nothing without the refusal or timeout under it.
pub(super) fn chain(e: &postgres::Error) -> String {
    let mut out = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out.replace('\n', " ")
}

/// The first host and port a connection tries, for messages and the password file.
#[derive(Debug, Clone)]
struct Endpoint {
    host: String,
    port: u16,
    socket: bool,
}

impl Endpoint {
    fn of(c: &Config) -> Endpoint {
        let (host, socket) = match c.get_hosts().first() {
            Some(Host::Tcp(h)) => (h.clone(), false),
            Some(Host::Unix(p)) => (p.display().to_string(), true),
            None => (DEFAULT_SOCKET_DIR.to_string(), true),
        };
        let port = c.get_ports().first().copied().unwrap_or(5432);
        Endpoint { host, port, socket }
    }
}

/// The password file libpq reads: `PGPASSFILE`, else `~/.pgpass`.
fn passfile_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PGPASSFILE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass"))
}

/// The password of the first line of the password file that matches, as libpq reads it:
/// `host:port:database:user:password`, `*` matching anything, `\:` and `\\` escaped. A file
/// that others may read is ignored, as libpq ignores it.
fn passfile_password(at: &Endpoint, c: &Config) -> Option<String> {
    let path = passfile_path()?;
    let text = std::fs::read_to_string(&path).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).ok()?.permissions().mode();
        if mode & 0o077 != 0 {
            return None;
        }
    }
    let user = c
        .get_user()
        .map(str::to_string)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_default();
    let db = c.get_dbname().map_or(user.clone(), str::to_string);
    let port = at.port.to_string();
    // A socket in the default directory is `localhost` to libpq.
    let host_matches = |h: &str| {
        h == "*" || h == at.host || (at.socket && at.host == DEFAULT_SOCKET_DIR && h == "localhost")
    };
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_passfile_line(line);
        let [h, p, d, u, pw] = fields.as_slice() else {
            continue;
        };
        let m = |pat: &String, v: &str| pat == "*" || pat == v;
        if host_matches(h) && m(p, &port) && m(d, &db) && m(u, &user) {
            return Some(pw.clone());
        }
    }
    None
}

fn split_passfile_line(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => {
                if let (Some(n), Some(f)) = (chars.next(), fields.last_mut()) {
                    f.push(n);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            _ => {
                if let Some(f) = fields.last_mut() {
                    f.push(ch)
                }
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_password_is_blanked_and_the_table_stays() {
        assert_eq!(
            blank_password(
                "postgresql://ada:s3cret@db.example:5433/gis?table=public.roads&password=x"
            ),
            "postgresql://ada:***@db.example:5433/gis?table=public.roads&password=***"
        );
        assert_eq!(
            blank_password("postgres://ada@%2Ftmp%2Fpg/gis?table=roads"),
            "postgres://ada@%2Ftmp%2Fpg/gis?table=roads"
        );
    }

    #[test]
    fn the_tools_parameters_are_taken_out_of_the_connection_url() {
        let t = Target::parse(
            "postgresql://ada:pw@localhost/gis?table=public.roads&geometry_column=geom&sslmode=disable&connect_timeout=3",
        )
        .unwrap();
        assert_eq!(t.relation, "public.roads");
        assert_eq!(t.geometry_column.as_deref(), Some("geom"));
        assert_eq!(t.sslmode.as_deref(), Some("disable"));
        assert_eq!(
            t.conn_url,
            "postgresql://ada:pw@localhost/gis?connect_timeout=3"
        );
        assert_eq!(t.scrub("failed for pw x"), "failed for *** x");
        assert!(matches!(
            Target::parse("postgresql://localhost/gis"),
            Err(PostgisError::BadUrl { .. })
        ));
    }

    #[test]
    fn password_file_lines_unescape_like_libpq() {
        assert_eq!(
            split_passfile_line(r"h\:x:5432:*:ada:p\:w\\d"),
            vec!["h:x", "5432", "*", "ada", r"p:w\d"]
        );
    }
}
