//! libpq's connection service file: `?service=NAME` in the URL, or `PGSERVICE`, names a
//! section of `pg_service.conf` whose `key=value` lines fill in what the URL leaves out. A
//! team that keeps its connections there (one name per server, passwords out of scripts)
//! names the same service to `contracts` as to `psql`.
//!
//! The files are read as libpq reads them: the user's (`PGSERVICEFILE`, else
//! `~/.pg_service.conf`) first, then the system's (`PGSYSCONFDIR/pg_service.conf`, Debian's
//! libpq compiled-in `/etc/postgresql-common` by default) when the user's has no such section.
//! A name found in neither, a line that is not `key=value`, or a key libpq does not know is
//! bad input naming the file and line, as libpq refuses them.

use std::path::{Path, PathBuf};

/// Where Debian's libpq looks for the system-wide service file without `PGSYSCONFDIR`.
const DEFAULT_SYSCONFDIR: &str = "/etc/postgresql-common";

/// The keys a service section may set: libpq's connection keywords that this client uses
/// or can safely pass over. `application_name` is read but ours is kept, so the server's
/// activity view shows which connections are the tool's.
const KNOWN: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "sslmode",
    "sslrootcert",
    "connect_timeout",
    "options",
    "application_name",
    "target_session_attrs",
    "keepalives",
    "keepalives_idle",
];

/// One service's settings, in the order the file gives them.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    pub settings: Vec<(String, String)>,
}

impl Service {
    /// The value of `key`, the first the section gives.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.settings
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The user's service file, then the system's.
fn files() -> Vec<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let mut out = Vec::new();
    if let Some(p) = env("PGSERVICEFILE") {
        out.push(PathBuf::from(p));
    } else if let Some(home) = env("HOME") {
        out.push(Path::new(&home).join(".pg_service.conf"));
    }
    let sys = env("PGSYSCONFDIR").map_or_else(|| PathBuf::from(DEFAULT_SYSCONFDIR), PathBuf::from);
    out.push(sys.join("pg_service.conf"));
    out
}

/// The section `name` of the first service file that has it.
pub fn lookup(name: &str) -> Result<Service, String> {
    let files = files();
    for file in &files {
        // A file that is not there is passed over, as libpq passes over it.
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        if let Some(found) = parse(&text, name, &file.display().to_string())? {
            return Ok(found);
        }
    }
    let looked: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    Err(format!(
        "service `{name}` is not defined in {} (set PGSERVICEFILE or PGSYSCONFDIR to the file that has it)",
        looked.join(" or ")
    ))
}

/// The section `name` of one file's text, or none when the file has no such section. A
/// malformed line in that section is an error, as libpq makes it one.
fn parse(text: &str, name: &str, file: &str) -> Result<Option<Service>, String> {
    let mut current: Option<&str> = None;
    let mut found: Option<Service> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let at = || format!("{file}:{}", i + 1);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            let Some(section) = section.strip_suffix(']') else {
                return Err(format!("{}: a section name ends with `]`", at()));
            };
            current = Some(section.trim());
            if current == Some(name) && found.is_none() {
                found = Some(Service {
                    settings: Vec::new(),
                });
            }
            continue;
        }
        // Only the wanted section's lines are judged, as libpq judges them.
        if current != Some(name) {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!(
                "{}: `{line}` is not `key=value` in a service file",
                at()
            ));
        };
        let key = key.trim();
        if key == "service" {
            return Err(format!("{}: a service may not name another service", at()));
        }
        if !KNOWN.contains(&key) {
            return Err(format!(
                "{}: `{key}` is not a connection setting this client knows (it knows: {})",
                at(),
                KNOWN.join(", ")
            ));
        }
        if let Some(s) = found.as_mut() {
            s.settings.push((key.to_string(), value.trim().to_string()));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# servers\n[gis]\nhost=db.internal\nport = 5433\n\n[other]\nuser=x\n";

    #[test]
    fn a_section_gives_its_settings_and_others_are_passed_over() {
        let s = parse(FILE, "gis", "f").unwrap().expect("found");
        assert_eq!(s.get("host"), Some("db.internal"));
        assert_eq!(s.get("port"), Some("5433"));
        assert_eq!(s.get("user"), None);
        assert_eq!(parse(FILE, "nope", "f").unwrap(), None);
    }

    #[test]
    fn a_malformed_line_or_unknown_key_names_the_file_and_line() {
        let e = parse("[gis]\nhost db\n", "gis", "svc.conf").unwrap_err();
        assert!(e.starts_with("svc.conf:2: "), "{e}");
        let e = parse("[gis]\nhots=db\n", "gis", "svc.conf").unwrap_err();
        assert!(e.contains("`hots`"), "{e}");
        let e = parse("[gis]\nservice=x\n", "gis", "svc.conf").unwrap_err();
        assert!(e.contains("svc.conf:2"), "{e}");
        // An unknown key in another section is that section's business.
        assert!(parse("[a]\nhots=db\n[gis]\nhost=h\n", "gis", "f").is_ok());
    }
}
