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
//! formatted into any message or error.

use std::net::IpAddr;
use std::time::Duration;

use lettre::address::Envelope;
use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::{Credentials, DEFAULT_MECHANISMS};
use lettre::transport::smtp::client::{SmtpConnection, TlsParameters};
use lettre::transport::smtp::commands::{Data, Mail, Rcpt};
use lettre::transport::smtp::extension::ClientId;
use lettre::Message;

use super::plan::Notice;
use super::render::Rendered;
use crate::model::config::{Smtp, Tls};

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
    #[error("[notify] from {from:?} is not a valid mailbox: {reason}")]
    BadFrom { from: String, reason: String },
    #[error("notice to `{consumer}`: cannot build the message: {reason}")]
    Build { consumer: String, reason: String },
    #[error("SMTP {host}:{port}: {source}")]
    Smtp {
        host: String,
        port: u16,
        #[source]
        source: lettre::transport::smtp::Error,
    },
}

impl MailError {
    /// Whether the configuration is at fault (exit 2) rather than the network or the
    /// server (exit 3).
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            MailError::PlainToRemote(_)
                | MailError::HalfCredentials
                | MailError::BadFrom { .. }
                | MailError::Build { .. }
        )
    }
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
    for r in &notice.recipients {
        // The registry checked every contact already; a failure here is still reported,
        // never unwrapped.
        let to: Mailbox = r
            .parse()
            .map_err(|e| build(format!("recipient {r:?}: {e}")))?;
        b = b.to(to);
    }
    b.body(rendered.body.clone())
        .map_err(|e| build(e.to_string()))
}

/// One SMTP session, reused for every message of a run.
pub struct Mailer {
    host: String,
    port: u16,
    tls: Tls,
    tls_parameters: Option<TlsParameters>,
    credentials: Option<Credentials>,
    timeout: Option<Duration>,
    hello: ClientId,
    conn: Option<SmtpConnection>,
    /// Connections opened so far (one for a batch without failures).
    pub connections: u64,
}

impl Mailer {
    /// Check the settings and read the credentials through `env` (the process environment in
    /// the CLI). Nothing is connected yet: a dry run never gets here, a real run connects on
    /// its first notice.
    pub fn new(smtp: &Smtp, env: impl Fn(&str) -> Option<String>) -> Result<Mailer, MailError> {
        check_settings(smtp)?;
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
                Some(Credentials::new(user, pass))
            }
            _ => return Err(MailError::HalfCredentials),
        };
        let tls_parameters = match smtp.tls {
            Tls::None => None,
            Tls::Tls | Tls::Starttls => Some(TlsParameters::new(smtp.host.clone()).map_err(
                |source| MailError::Smtp {
                    host: smtp.host.clone(),
                    port: smtp.port,
                    source,
                },
            )?),
        };
        Ok(Mailer {
            host: smtp.host.clone(),
            port: smtp.port,
            tls: smtp.tls,
            tls_parameters,
            credentials,
            timeout: Some(Duration::from_secs(smtp.timeout_seconds.max(1))),
            hello: ClientId::default(),
            conn: None,
            connections: 0,
        })
    }

    fn error(&self, source: lettre::transport::smtp::Error) -> MailError {
        MailError::Smtp {
            host: self.host.clone(),
            port: self.port,
            source,
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
            self.timeout,
            &self.hello,
            implicit,
            None,
        )
        .map_err(|e| self.error(e))?;
        if let (Tls::Starttls, Some(p)) = (self.tls, &self.tls_parameters) {
            // Required, not opportunistic: a server that does not offer STARTTLS is refused
            // rather than sent credentials in clear text. lettre says so in its error.
            conn.starttls(p, &self.hello).map_err(|e| self.error(e))?;
        }
        if let Some(c) = &self.credentials {
            conn.auth(DEFAULT_MECHANISMS, c)
                .map_err(|e| self.error(e))?;
        }
        Ok(conn)
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
            conn.send(envelope, &formatted).map(|_| ())
        };
        if !conn.has_broken() {
            self.conn = Some(conn);
        }
        result.map_err(|e| self.error(e))
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
) -> Result<(), lettre::transport::smtp::Error> {
    let mut steps = || {
        conn.command(Mail::new(envelope.from().cloned(), vec![]))?;
        for to in envelope.to() {
            conn.command(Rcpt::new(to.clone(), vec![]))?;
        }
        conn.command(Data)?;
        conn.command(Payload(data_payload(formatted)))?;
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
            Mailer::new(&smtp, |_| None),
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
        let e = Mailer::new(&smtp, |v| (v == "U").then(|| "user-secret".to_string()))
            .err()
            .unwrap();
        let shown = e.to_string();
        assert!(
            shown.contains("P") && !shown.contains("user-secret"),
            "{shown}"
        );
        assert!(Mailer::new(&smtp, |v| Some(format!("{v}-value"))).is_ok());
        let half = Smtp {
            password_env: None,
            ..smtp
        };
        assert!(matches!(
            Mailer::new(&half, |_| None),
            Err(MailError::HalfCredentials)
        ));
    }
}
