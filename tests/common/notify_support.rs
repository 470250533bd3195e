//! What the notify fault tests need beyond `world`: a hand-written SMTP relay on loopback
//! whose behaviour a test chooses, the real binary run without a git identity, and a world
//! with more consumers.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

pub use super::smtp::Pki;
// Every test crate that includes this module includes `tests/common` too.
use crate::common as hermetic;

#[derive(Clone)]
pub enum Tls {
    None,
    /// TLS from the first byte (SMTPS, RFC 8314), which mailin-embedded does not serve.
    Implicit(Arc<rustls::ServerConfig>),
}

#[derive(Clone, Copy, PartialEq)]
pub enum Auth {
    /// AUTH is not offered.
    None,
    /// AUTH is offered with these mechanisms and every attempt accepted.
    Accept(&'static str),
    /// AUTH is offered with these mechanisms and refused with 535, quoting what was sent.
    EchoReject(&'static str),
}

#[derive(Default)]
pub struct Seen {
    /// TCP connections accepted.
    pub connections: usize,
    /// Each delivered message, as received (headers and body).
    pub mails: Vec<String>,
    /// Lines the client sent after AUTH (the command and its continuation lines).
    pub auth_lines: Vec<String>,
}

/// A relay written by hand, for what the real server of the happy paths (mailin-embedded,
/// `smtp.rs`) cannot be made to do: refuse a login with 535 echoing the AUTH line back,
/// accept a connection and never answer, drop the connection mid-batch, and serve implicit
/// TLS with AUTH (mailin-embedded offers TLS only through STARTTLS, and AUTH only inside
/// it). It speaks enough SMTP for lettre: EHLO, AUTH PLAIN/LOGIN, MAIL, RCPT, DATA, RSET,
/// NOOP, QUIT.
pub struct MiniSmtp {
    pub port: u16,
    pub seen: Arc<Mutex<Seen>>,
}

impl MiniSmtp {
    pub fn start(tls: Tls, auth: Auth) -> MiniSmtp {
        MiniSmtp::spawn(tls, auth, false, None)
    }

    /// A relay that accepts each connection and never says a word.
    pub fn silent() -> MiniSmtp {
        MiniSmtp::spawn(Tls::None, Auth::None, true, None)
    }

    /// A relay that takes `n` messages, then drops the connection at the next MAIL.
    pub fn dying_after(n: usize) -> MiniSmtp {
        MiniSmtp::spawn(Tls::None, Auth::None, false, Some(n))
    }

    fn spawn(tls: Tls, auth: Auth, silent: bool, drop_after: Option<usize>) -> MiniSmtp {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let shared = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                shared.lock().unwrap().connections += 1;
                let tls = tls.clone();
                let seen = shared.clone();
                std::thread::spawn(move || {
                    if silent {
                        // Hold the connection open without answering until the client leaves.
                        let mut s = stream;
                        let mut buf = [0u8; 512];
                        while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
                        return;
                    }
                    serve(stream, tls, auth, drop_after, seen);
                });
            }
        });
        MiniSmtp { port, seen }
    }

    pub fn connections(&self) -> usize {
        self.seen.lock().unwrap().connections
    }

    pub fn mails(&self) -> Vec<String> {
        self.seen.lock().unwrap().mails.clone()
    }

    pub fn auth_lines(&self) -> Vec<String> {
        self.seen.lock().unwrap().auth_lines.clone()
    }
}

fn serve(
    stream: TcpStream,
    tls: Tls,
    auth: Auth,
    drop_after: Option<usize>,
    seen: Arc<Mutex<Seen>>,
) {
    let auth = (auth, drop_after);
    match tls {
        Tls::Implicit(config) => {
            let conn = rustls::ServerConnection::new(config).unwrap();
            let _ = session(rustls::StreamOwned::new(conn, stream), auth, &seen);
        }
        Tls::None => {
            let _ = session(stream, auth, &seen);
        }
    }
}

fn read_line<S: Read>(s: &mut S) -> Option<String> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match s.read(&mut byte) {
            Ok(1) => {
                line.push(byte[0]);
                if line.ends_with(b"\r\n") {
                    line.truncate(line.len() - 2);
                    return Some(String::from_utf8_lossy(&line).into_owned());
                }
            }
            _ => return None,
        }
    }
}

fn say<S: Write>(s: &mut S, text: &str) -> Option<()> {
    s.write_all(text.as_bytes()).ok()?;
    s.write_all(b"\r\n").ok()?;
    s.flush().ok()
}

/// One SMTP session over `s`.
fn session<S: Read + Write>(
    mut s: S,
    (auth, drop_after): (Auth, Option<usize>),
    seen: &Mutex<Seen>,
) -> Option<()> {
    say(&mut s, "220 relay.test ESMTP mini")?;
    loop {
        let line = read_line(&mut s)?;
        let upper = line.to_ascii_uppercase();
        if upper.starts_with("EHLO") || upper.starts_with("HELO") {
            let mut reply = vec!["250-relay.test".to_string()];
            match auth {
                Auth::Accept(m) | Auth::EchoReject(m) => reply.push(format!("250-AUTH {m}")),
                Auth::None => {}
            }
            reply.push("250 8BITMIME".into());
            say(&mut s, &reply.join("\r\n"))?;
        } else if upper.starts_with("AUTH ") {
            let mut sent = vec![line.clone()];
            if upper.starts_with("AUTH LOGIN") {
                say(&mut s, "334 VXNlcm5hbWU6")?;
                sent.push(read_line(&mut s)?);
                say(&mut s, "334 UGFzc3dvcmQ6")?;
                sent.push(read_line(&mut s)?);
            }
            seen.lock().unwrap().auth_lines.extend(sent.iter().cloned());
            match auth {
                Auth::Accept(_) => say(&mut s, "235 2.7.0 accepted")?,
                _ => say(
                    &mut s,
                    &format!("535 5.7.8 authentication failed for: {}", sent.join(" / ")),
                )?,
            }
        } else if upper.starts_with("MAIL")
            && drop_after.is_some_and(|n| seen.lock().unwrap().mails.len() >= n)
        {
            return None;
        } else if upper.starts_with("MAIL") || upper.starts_with("RCPT") {
            say(&mut s, "250 2.1.0 ok")?;
        } else if upper == "DATA" {
            say(&mut s, "354 end with <CRLF>.<CRLF>")?;
            let mut data = String::new();
            loop {
                let l = read_line(&mut s)?;
                if l == "." {
                    break;
                }
                data.push_str(l.strip_prefix('.').unwrap_or(&l));
                data.push_str("\r\n");
            }
            seen.lock().unwrap().mails.push(data);
            say(&mut s, "250 2.0.0 queued")?;
        } else if upper == "RSET" || upper == "NOOP" {
            say(&mut s, "250 2.0.0 ok")?;
        } else if upper == "QUIT" {
            say(&mut s, "221 2.0.0 bye")?;
            return None;
        } else {
            say(&mut s, "502 5.5.2 not implemented")?;
        }
    }
}

/// A message's Message-ID header.
pub fn message_id(data: &str) -> Option<String> {
    data.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("message-id")
            .then(|| v.trim().to_string())
    })
}

/// Run the real binary in `dir` with no git identity anywhere: no GIT_* variables, a HOME
/// without a .gitconfig, no system config; `extra` adds variables.
pub fn run_without_identity(
    dir: &std::path::Path,
    today: &str,
    args: &[&str],
    extra: &[(&str, &str)],
) -> std::process::Output {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = hermetic::bare(home.path());
    cmd.current_dir(dir)
        .arg("--repo")
        .arg(dir)
        .arg("--today")
        .arg(today)
        .args(args);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// `n` more consumers of roads, `extra-0` .. `extra-{n-1}`, each still reading 1.1.0, on top
/// of the world's own (flood-model and atlas are still on line 1 too).
pub fn add_consumers(w: &crate::common::world::World, n: usize) {
    let mut registry = w.read("consumers.toml").unwrap();
    let mut log = String::new();
    for i in 0..n {
        registry.push_str(&format!(
            "\n[consumers.extra-{i}]\ncontacts = [\"extra-{i}@example.org\"]\n"
        ));
        log.push_str(&format!(
            "{{\"at\":\"2026-11-28T04:00:00Z\",\"consumer\":\"extra-{i}\",\"dataset\":\"roads\",\"contract\":\"1.1.0\"}}\n"
        ));
    }
    w.write("consumers.toml", &registry);
    w.append("consumption/reads.jsonl", &log);
}

/// The days of the fixture's countdown with a new milestone each (sunset 2027-01-15,
/// days_before 60/30/14/7/1, overdue every 7 days), worked out by hand.
pub const MILESTONE_DAYS: [&str; 8] = [
    "2026-11-29", // 47 days before: before-60 (the reads are of 2026-11-27/28)
    "2026-12-16", // 30 days: before-30
    "2027-01-01", // 14 days: before-14
    "2027-01-08", // 7 days: before-7
    "2027-01-14", // 1 day: before-1
    "2027-01-15", // the sunset: overdue-1
    "2027-01-22", // 7 days over: overdue-2
    "2027-01-29", // 14 days over: overdue-3
];

/// `contracts notify` for `day` in the store at `repo`, with a git identity, as cron would start
/// it: stdout dropped, stderr kept for the assertion message.
pub fn notify_command(
    repo: &std::path::Path,
    home: &std::path::Path,
    day: &str,
) -> std::process::Command {
    let mut c = hermetic::contracts_as(home, ("Notifier", "notifier@example.org"));
    c.arg("--repo")
        .arg(repo)
        .arg("--today")
        .arg(day)
        .arg("notify")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    c
}

/// How many times the server received each Message-ID.
pub fn deliveries(
    smtp: &crate::common::world::SmtpServer,
) -> std::collections::HashMap<String, usize> {
    let mut delivered = std::collections::HashMap::new();
    for m in smtp.mails() {
        *delivered
            .entry(m.header("Message-ID").unwrap())
            .or_default() += 1;
    }
    delivered
}

/// A world's store shared by two hosts: a bare remote (`[store] remote = "origin"`) the
/// world's checkout pushes to, and a second checkout cloned from it, with the same
/// consumption logs in its work tree (the log is the platform's, read on each host, not the
/// store's).
pub struct TwoHosts {
    server: tempfile::TempDir,
    bare: std::path::PathBuf,
    home: std::path::PathBuf,
    /// The second checkout.
    pub host_b: std::path::PathBuf,
}

const ADMIN: (&str, &str) = ("Admin", "admin@example.org");

impl TwoHosts {
    pub fn new(w: &crate::common::world::World) -> TwoHosts {
        let server = tempfile::tempdir().unwrap();
        let bare = server.path().join("store.git");
        let bare_s = bare.to_str().unwrap();
        hermetic::git_as(
            server.path(),
            w.home.path(),
            ADMIN,
            &["init", "-q", "--bare", "--initial-branch=main", bare_s],
        );
        let config = w.read("contracts.toml").unwrap();
        w.write(
            "contracts.toml",
            &format!("[store]\nremote = \"origin\"\n\n{config}"),
        );
        w.git(&["branch", "-M", "main"]);
        w.git(&["remote", "add", "origin", bare_s]);
        w.git(&["push", "-q", "origin", "main"]);
        let host_b = w.home.path().join("host-b");
        hermetic::git_as(
            w.home.path(),
            w.home.path(),
            ADMIN,
            &["clone", "-q", bare_s, host_b.to_str().unwrap()],
        );
        std::fs::create_dir_all(host_b.join("consumption")).unwrap();
        for f in ["reads.jsonl", "platform.csv"] {
            let from = w.root().join("consumption").join(f);
            if from.exists() {
                std::fs::copy(&from, host_b.join("consumption").join(f)).unwrap();
            }
        }
        TwoHosts {
            server,
            bare,
            home: w.home.path().to_path_buf(),
            host_b,
        }
    }

    /// The ledger of roads as the remote holds it.
    pub fn remote_ledger(&self) -> String {
        hermetic::git_as(
            self.server.path(),
            &self.home,
            ADMIN,
            &[
                "--git-dir",
                self.bare.to_str().unwrap(),
                "show",
                "main:notifications/roads.toml",
            ],
        )
    }
}
