//! The mailer: notices as messages, over one SMTP connection for the whole batch.
//!
//! lettre's `SmtpTransport` reuses connections only with its `pool` feature; without it every
//! send opens, greets, authenticates and quits. A nightly batch to thousands of consumers
//! should not do a TLS handshake per notice, so the mailer holds one `SmtpConnection` itself,
//! opens it on the first send, reopens it only after a failure broke it, and quits at the end.
//!
//! lettre 0.11.23 leaves Nagle's algorithm on and writes a message body and its `.`
//! terminator as two writes; the terminator then waits for the server's delayed ACK, 40 ms on
//! Linux, which caps a connection at about 23 messages a second (lettre PR #1159, not released
//! yet). So for the common all-ASCII message the mailer drives the same SMTP commands through
//! lettre's public `command` API and sends body and terminator as one write; anything else
//! goes through lettre's own `send`.
//!
//! Credentials come only from the environment variables `[smtp]` names; their values are never
//! formatted into any message or error. A server may echo what it was sent (some quote the
//! AUTH line in their 535 reply), so every reply is scrubbed of the user, the password and
//! their AUTH encodings before it becomes an error.
//!
//! A batch makes one attempt: the first failure to connect, greet, start TLS or authenticate,
//! and any timeout or broken connection, ends it ([`MailError::ends_batch`]); only a refusal
//! of one message (a 4xx/5xx reply to MAIL, RCPT or DATA) lets the next notice go on.

use std::net::IpAddr;
use std::time::Duration;

use lettre::address::Envelope;
use lettre::message::header::{self, ContentType};
use lettre::message::{Mailbox, Mailboxes};
use lettre::transport::smtp::authentication::{Credentials, DEFAULT_MECHANISMS};
use lettre::transport::smtp::client::{Certificate, SmtpConnection, TlsParameters};
use lettre::transport::smtp::commands::{Data, Mail, Rcpt};
use lettre::transport::smtp::extension::ClientId;
use lettre::Message;

use super::error_chain;
use super::message::Rendered;
use super::plan::Notice;
use crate::model::config::{Config, Smtp, Tls};

#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error(
        "[smtp] tls = \"none\" would send notices and credentials in clear text; it is allowed \
         only to a loopback host (localhost, 127.0.0.1, ::1), not `{0}`"
    )]
    PlainToRemote(String),
    #[error("[smtp] {key} names the environment variable {var}, which is not set")]
    MissingCredential { key: &'static str, var: String },
    #[error("[smtp] names only one of username_env and password_env: give both or neither")]
    HalfCredentials,
    #[error("[smtp] ca_file {path}: {reason}")]
    CaFile { path: String, reason: String },
    #[error("[notify] from {from:?} is not a valid mailbox: {reason}")]
    BadFrom { from: String, reason: String },
    #[error("notice to `{consumer}`: cannot build the message: {reason}")]
    Build { consumer: String, reason: String },
    #[error("timed out after {secs} s {what} of {host}:{port}")]
    Timeout {
        host: String,
        port: u16,
        secs: u64,
        what: String,
    },
    #[error("cannot connect to {host}:{port}: {reason}")]
    Connect {
        host: String,
        port: u16,
        reason: String,
    },
    #[error("{host}:{port} refused the login: {reply}")]
    Auth {
        host: String,
        port: u16,
        reply: String,
    },
    /// Any other SMTP failure; `message` is lettre's error chain, scrubbed of credentials.
    #[error("SMTP {host}:{port}: {message}")]
    Smtp {
        host: String,
        port: u16,
        message: String,
        /// The connection is gone (network error), so the batch cannot go on.
        broken: bool,
    },
}

impl MailError {
    /// The key of `contracts.toml` a refusal of the settings is about, for an error that
    /// points at it (file, line, column); `None` when no one value is at fault.
    pub fn key(&self) -> Option<&'static str> {
        match self {
            MailError::BadFrom { .. } => Some("notify.from"),
            MailError::PlainToRemote(_) => Some("smtp.host"),
            _ => None,
        }
    }

    /// Whether the configuration is at fault (exit 2) rather than the network or the
    /// server (exit 3).
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            MailError::PlainToRemote(_)
                | MailError::HalfCredentials
                | MailError::CaFile { .. }
                | MailError::BadFrom { .. }
                | MailError::Build { .. }
        )
    }

    /// Whether this failure ends the batch: the relay is unreachable, silent, untrusted or
    /// refuses the login, and every later notice would fail the same way (and cost another
    /// timeout or another failed login). A reply refusing one message does not.
    pub fn ends_batch(&self) -> bool {
        match self {
            MailError::Smtp { broken, .. } => *broken,
            _ => true,
        }
    }
}

/// The SMTP step a failure happened in, for its message.
#[derive(Debug, Clone, Copy)]
enum Step {
    Connect,
    Starttls,
    Auth,
    Command(&'static str),
}

/// The io error at the root of a lettre error, if any.
fn io_kind(e: &lettre::transport::smtp::Error) -> Option<std::io::ErrorKind> {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        source = s.source();
    }
    None
}

/// The strings a client sends after AUTH, in every form a server could echo: the user and
/// password as typed, and base64 of each (AUTH LOGIN) and of `\0user\0password` (AUTH PLAIN).
fn secrets_of(user: &str, password: &str) -> Vec<String> {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    let mut out = vec![
        b64(&format!("\0{user}\0{password}")),
        b64(user),
        b64(password),
        password.to_string(),
        user.to_string(),
    ];
    // Unpadded forms too: a reply may quote the token without its `=`.
    for s in out.clone() {
        out.push(s.trim_end_matches('=').to_string());
    }
    out.retain(|s| s.len() >= 3);
    // Longest first, so a token is redacted whole before a part of it is.
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

/// `text` with every secret replaced, and whatever follows an echoed `AUTH <mechanism>`
/// hidden too, in case the server transformed the token.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        out = out.replace(s.as_str(), "[redacted]");
    }
    let lower = out.to_ascii_lowercase();
    for mech in ["auth plain ", "auth login ", "auth xoauth2 "] {
        if let Some(at) = lower.find(mech) {
            let start = at + mech.len();
            let end = out[start..]
                .find(|c: char| c.is_whitespace())
                .map_or(out.len(), |e| start + e);
            if end > start {
                out.replace_range(start..end, "[redacted]");
            }
            break;
        }
    }
    out
}

/// Whether `host` is a loopback host, decided from its text alone: resolving a name could be
/// redirected, and clear text must never leave the machine.
pub fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost") || h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The `[smtp]` rules that need no environment: checked on every run, dry or not, so a
/// wrong setting shows up before the day it would have mattered.
pub fn check_settings(smtp: &Smtp) -> Result<(), MailError> {
    if smtp.tls == Tls::None && !is_loopback(&smtp.host) {
        return Err(MailError::PlainToRemote(smtp.host.clone()));
    }
    if smtp.username_env.is_some() != smtp.password_env.is_some() {
        return Err(MailError::HalfCredentials);
    }
    Ok(())
}

/// What a run checks of `contracts.toml` before it plans anything: the sender, then the
/// relay's settings. Returns the sender.
pub fn check_config(config: &Config) -> Result<Mailbox, MailError> {
    let from = sender(&config.notify.from)?;
    check_settings(&config.smtp)?;
    Ok(from)
}

/// The `from` mailbox of the notices, checked.
pub fn sender(from: &str) -> Result<Mailbox, MailError> {
    crate::consumers::check_mailbox(from).map_err(|reason| MailError::BadFrom {
        from: from.to_string(),
        reason,
    })
}

/// Build the message of one rendered notice.
pub fn message(from: &Mailbox, notice: &Notice, rendered: &Rendered) -> Result<Message, MailError> {
    let build = |reason: String| MailError::Build {
        consumer: notice.consumer.clone(),
        reason,
    };
    let mut b = Message::builder()
        .from(from.clone())
        .subject(rendered.subject.clone())
        .message_id(Some(notice.message_id.clone()))
        .header(ContentType::TEXT_PLAIN);
    // The To header is set once with every recipient: lettre's `to` adds one mailbox by
    // parsing and re-encoding the header built so far, which makes a long distribution list
    // quadratic (issue 25: 10,000 contacts took 90 s).
    let mut to = Mailboxes::new();
    for r in &notice.recipients {
        // The registry checked every contact already; a failure here is still reported,
        // never unwrapped.
        let mailbox: Mailbox = r
            .parse()
            .map_err(|e| build(format!("recipient {r:?}: {e}")))?;
        to.push(mailbox);
    }
    if !notice.recipients.is_empty() {
        b = b.mailbox(header::To::from(to));
    }
    b.body(rendered.body.clone())
        .map_err(|e| build(e.to_string()))
}

/// The bytes of a file of PEM root certificates (`[smtp] ca_file`, `[notify] ca_file`), or why
/// it is none: unreadable, or no certificate in it.
pub(crate) fn read_pem(path: &std::path::Path) -> Result<Vec<u8>, String> {
    let pem = std::fs::read(path).map_err(|e| e.to_string())?;
    if !String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----") {
        return Err("no PEM certificate (-----BEGIN CERTIFICATE-----) in it".into());
    }
    Ok(pem)
}

/// TLS settings for `smtp.host`: the system's roots, plus those of `[smtp] ca_file` (a path
/// relative to the store root `root`, or absolute) for a relay signed by a private CA.
fn tls_parameters(smtp: &Smtp, root: &std::path::Path) -> Result<TlsParameters, MailError> {
    let mut builder = TlsParameters::builder(smtp.host.clone());
    if let Some(file) = &smtp.ca_file {
        let path = root.join(file);
        let ca = |reason: String| MailError::CaFile {
            path: path.display().to_string(),
            reason,
        };
        let pem = read_pem(&path).map_err(ca)?;
        let cert = Certificate::from_pem(&pem).map_err(|e| ca(error_chain(&e)))?;
        builder = builder.add_root_certificate(cert);
    }
    builder.build_rustls().map_err(|e| MailError::Smtp {
        host: smtp.host.clone(),
        port: smtp.port,
        message: error_chain(&e),
        broken: true,
    })
}

/// One SMTP session, reused for every message of a run.
pub struct Mailer {
    host: String,
    port: u16,
    tls: Tls,
    tls_parameters: Option<TlsParameters>,
    credentials: Option<Credentials>,
    /// What the client sends after AUTH, scrubbed from every reply before it is shown.
    secrets: Vec<String>,
    timeout: Duration,
    hello: ClientId,
    conn: Option<SmtpConnection>,
    /// Connections opened so far (one for a batch without failures).
    pub connections: u64,
}

impl Mailer {
    /// Check the settings and read the credentials through `env` (the process environment in
    /// the CLI). Nothing is connected yet: a dry run never gets here, a real run connects on
    /// its first notice.
    pub fn new(
        smtp: &Smtp,
        root: &std::path::Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Mailer, MailError> {
        check_settings(smtp)?;
        let mut secrets = Vec::new();
        let credentials = match (&smtp.username_env, &smtp.password_env) {
            (None, None) => None,
            (Some(u), Some(p)) => {
                let user = env(u).ok_or_else(|| MailError::MissingCredential {
                    key: "username_env",
                    var: u.clone(),
                })?;
                let pass = env(p).ok_or_else(|| MailError::MissingCredential {
                    key: "password_env",
                    var: p.clone(),
                })?;
                secrets = secrets_of(&user, &pass);
                Some(Credentials::new(user, pass))
            }
            _ => return Err(MailError::HalfCredentials),
        };
        let tls_parameters = match smtp.tls {
            Tls::None => None,
            Tls::Tls | Tls::Starttls => Some(tls_parameters(smtp, root)?),
        };
        Ok(Mailer {
            host: smtp.host.clone(),
            port: smtp.port,
            tls: smtp.tls,
            tls_parameters,
            credentials,
            secrets,
            timeout: Duration::from_secs(smtp.timeout_seconds.max(1)),
            hello: ClientId::default(),
            conn: None,
            connections: 0,
        })
    }

    /// A lettre error as one clear, scrubbed message: a timeout says what it waited for, a
    /// refused login says so, and no reply text carries a credential.
    fn error(&self, step: Step, e: lettre::transport::smtp::Error) -> MailError {
        let host = self.host.clone();
        let port = self.port;
        let secs = self.timeout.as_secs();
        let kind = io_kind(&e);
        let timed_out = matches!(
            kind,
            Some(std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
        );
        if timed_out {
            let what = match step {
                // lettre reports a TCP connect that timed out as a connection error, and a
                // read that timed out (EAGAIN on Linux) as a network error.
                Step::Connect if !e.is_response() && kind == Some(std::io::ErrorKind::TimedOut) => {
                    "connecting to the server".to_string()
                }
                Step::Connect => "waiting for the greeting".to_string(),
                Step::Starttls => "waiting for the reply to STARTTLS".to_string(),
                Step::Auth => "waiting for the reply to AUTH".to_string(),
                Step::Command(c) => format!("waiting for the reply to {c}"),
            };
            return MailError::Timeout {
                host,
                port,
                secs,
                what,
            };
        }
        let message = scrub(&error_chain(&e), &self.secrets);
        match step {
            Step::Auth if e.is_permanent() || e.is_transient() => MailError::Auth {
                host,
                port,
                reply: message,
            },
            Step::Connect if kind.is_some() && !e.is_response() => MailError::Connect {
                host,
                port,
                reason: message,
            },
            Step::Connect | Step::Starttls | Step::Auth => MailError::Smtp {
                host,
                port,
                message,
                broken: true,
            },
            Step::Command(_) => MailError::Smtp {
                host,
                port,
                broken: !(e.is_permanent() || e.is_transient()),
                message,
            },
        }
    }

    fn connect(&mut self) -> Result<SmtpConnection, MailError> {
        let implicit = match self.tls {
            Tls::Tls => self.tls_parameters.as_ref(),
            _ => None,
        };
        self.connections += 1;
        let mut conn = SmtpConnection::connect(
            (self.host.as_str(), self.port),
            Some(self.timeout),
            &self.hello,
            implicit,
            None,
        )
        .map_err(|e| self.error(Step::Connect, e))?;
        if let (Tls::Starttls, Some(p)) = (self.tls, &self.tls_parameters) {
            // Required, not opportunistic: a server that does not offer STARTTLS is refused
            // rather than sent credentials in clear text. lettre says so in its error.
            conn.starttls(p, &self.hello)
                .map_err(|e| self.error(Step::Starttls, e))?;
        }
        if let Some(c) = &self.credentials {
            conn.auth(DEFAULT_MECHANISMS, c)
                .map_err(|e| self.error(Step::Auth, e))?;
        }
        Ok(conn)
    }

    /// Connect, greet, start TLS and log in now, before anything is claimed: a relay that is
    /// down, silent, untrusted or refuses the login then fails the run with nothing written.
    pub fn open(&mut self) -> Result<(), MailError> {
        if self.conn.is_none() {
            self.conn = Some(self.connect()?);
        }
        Ok(())
    }

    /// Send one message over the batch's connection, opening it if needed. After a failure
    /// the connection is dropped if broken, so the next message starts clean.
    pub fn send(&mut self, message: &Message) -> Result<(), MailError> {
        let mut conn = match self.conn.take() {
            Some(c) if !c.has_broken() => c,
            _ => self.connect()?,
        };
        let envelope = message.envelope();
        let formatted = message.formatted();
        let ascii = formatted.is_ascii()
            && envelope
                .from()
                .is_none_or(|a| AsRef::<str>::as_ref(a).is_ascii())
            && envelope
                .to()
                .iter()
                .all(|a| AsRef::<str>::as_ref(a).is_ascii());
        let result = if ascii {
            send_in_one_write(&mut conn, envelope, &formatted)
        } else {
            conn.send(envelope, &formatted)
                .map(|_| ())
                .map_err(|e| ("the message", e))
        };
        if !conn.has_broken() {
            self.conn = Some(conn);
        }
        result.map_err(|(step, e)| self.error(Step::Command(step), e))
    }

    /// End the session politely; a failure to say goodbye loses nothing.
    pub fn close(mut self) {
        if let Some(mut c) = self.conn.take() {
            let _ = c.quit();
        }
    }
}

/// The DATA payload, written by `SmtpConnection::command` as one write.
struct Payload(String);

impl std::fmt::Display for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An ASCII message made transparent for DATA (RFC 5321 §4.5.2: a line starting with `.`
/// gets another `.`) and terminated with `CRLF . CRLF`.
fn data_payload(formatted: &[u8]) -> String {
    let text = String::from_utf8_lossy(formatted);
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.split("\r\n").enumerate() {
        if i > 0 {
            out.push_str("\r\n");
        }
        if line.starts_with('.') {
            out.push('.');
        }
        out.push_str(line);
    }
    if !out.ends_with("\r\n") {
        out.push_str("\r\n");
    }
    out.push_str(".\r\n");
    out
}

/// MAIL, RCPT, DATA and the payload, as lettre's `send` does for an ASCII message, but with
/// the payload and its terminator in one write. Any failure breaks the connection, as in
/// lettre, so the next message starts a clean session.
fn send_in_one_write(
    conn: &mut SmtpConnection,
    envelope: &Envelope,
    formatted: &[u8],
) -> Result<(), (&'static str, lettre::transport::smtp::Error)> {
    let mut steps = || {
        conn.command(Mail::new(envelope.from().cloned(), vec![]))
            .map_err(|e| ("MAIL FROM", e))?;
        for to in envelope.to() {
            conn.command(Rcpt::new(to.clone(), vec![]))
                .map_err(|e| ("RCPT TO", e))?;
        }
        conn.command(Data).map_err(|e| ("DATA", e))?;
        conn.command(Payload(data_payload(formatted)))
            .map_err(|e| ("the message", e))?;
        Ok(())
    };
    let result = steps();
    if result.is_err() {
        conn.abort();
    }
    result
}

#[cfg(test)]
mod tests {
    #[test]
    fn data_is_made_transparent_and_terminated() {
        assert_eq!(
            super::data_payload(b"Subject: x\r\n\r\n.hidden\r\nok\r\n..two\r\n"),
            "Subject: x\r\n\r\n..hidden\r\nok\r\n...two\r\n.\r\n"
        );
        assert_eq!(super::data_payload(b".a"), "..a\r\n.\r\n");
    }

    use super::*;

    #[test]
    fn a_long_distribution_list_is_every_recipient_once_in_order() {
        let n = 3_000;
        let recipients: Vec<String> = (0..n)
            .map(|i| format!("Reader {i} <reader-{i:05}@example.org>"))
            .collect();
        let notice = Notice {
            consumer: "atlas".into(),
            team: None,
            milestone: crate::notify::plan::Milestone::Before(60),
            recipients: recipients.clone(),
            old_version: semver::Version::new(1, 0, 0),
            ..crate::notify::message::tests::notice(47)
        };
        let rendered = Rendered {
            subject: "s".into(),
            body: "b".into(),
        };
        let from = sender("Data Platform <data-platform@example.org>").unwrap();
        let m = message(&from, &notice, &rendered).unwrap();
        let to: Vec<String> = m.envelope().to().iter().map(|a| a.to_string()).collect();
        let expected: Vec<String> = (0..n)
            .map(|i| format!("reader-{i:05}@example.org"))
            .collect();
        assert_eq!(to, expected);
        let header = m.headers().get_raw("To").unwrap().to_string();
        assert_eq!(header.matches("@example.org").count(), n);
        assert!(header.starts_with(&format!("{}, {}", recipients[0], recipients[1])));
    }

    #[test]
    fn clear_text_only_to_loopback() {
        for h in [
            "localhost",
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "[::1]",
            "LOCALHOST",
        ] {
            assert!(is_loopback(h), "{h}");
        }
        for h in [
            "smtp.example.org",
            "10.0.0.1",
            "localhost.example.org",
            "0.0.0.0",
        ] {
            assert!(!is_loopback(h), "{h}");
        }
        let smtp = Smtp {
            host: "smtp.example.org".into(),
            tls: Tls::None,
            ..Smtp::default()
        };
        assert!(matches!(
            Mailer::new(&smtp, std::path::Path::new("."), |_| None),
            Err(MailError::PlainToRemote(_))
        ));
    }

    #[test]
    fn credentials_come_from_the_environment_and_are_never_shown() {
        let smtp = Smtp {
            host: "127.0.0.1".into(),
            tls: Tls::None,
            username_env: Some("U".into()),
            password_env: Some("P".into()),
            ..Smtp::default()
        };
        let e = Mailer::new(&smtp, std::path::Path::new("."), |v| {
            (v == "U").then(|| "user-secret".to_string())
        })
        .err()
        .unwrap();
        let shown = e.to_string();
        assert!(
            shown.contains("P") && !shown.contains("user-secret"),
            "{shown}"
        );
        assert!(
            Mailer::new(&smtp, std::path::Path::new("."), |v| Some(format!(
                "{v}-value"
            )))
            .is_ok()
        );
        let half = Smtp {
            password_env: None,
            ..smtp
        };
        assert!(matches!(
            Mailer::new(&half, std::path::Path::new("."), |_| None),
            Err(MailError::HalfCredentials)
        ));
    }

    #[test]
    fn replies_are_scrubbed_of_what_was_sent_after_auth() {
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let secrets = secrets_of("notifier", "hunter22");
        let token = b64("\0notifier\0hunter22");
        let reply = format!(
            "535 5.7.8 bad credentials in AUTH PLAIN {token} ({}/{}) for notifier:hunter22",
            b64("notifier"),
            b64("hunter22")
        );
        let shown = scrub(&reply, &secrets);
        for s in [
            &token,
            &b64("notifier"),
            &b64("hunter22"),
            "hunter22",
            "notifier",
        ] {
            assert!(!shown.contains(s), "{s} in {shown}");
        }
        assert!(
            shown.starts_with("535 5.7.8 bad credentials in AUTH PLAIN [redacted]"),
            "{shown}"
        );
        // A token the server mangled is still hidden after an echoed AUTH PLAIN.
        let shown = scrub("535 you sent AUTH PLAIN QUJDREVGRw (sic)", &secrets);
        assert_eq!(shown, "535 you sent AUTH PLAIN [redacted] (sic)");
        // Nothing to hide: the reply is unchanged.
        assert_eq!(scrub("550 no such user", &[]), "550 no such user");
    }
}
