//! `[smtp] ca_file`: a relay whose certificate comes from a private CA, made in the test with
//! rcgen, served with rustls on loopback, over STARTTLS and over implicit TLS. Without the CA
//! the certificate is refused (the system's roots do not know it), once for the batch; with
//! it every notice is delivered over one encrypted session, logged in.

use crate::common::notify_support;
use crate::common::world;

use notify_support::{Auth, MiniSmtp, Pki, Tls};
use world::{SmtpServer, World};

/// The relay of a mode: mailin-embedded over STARTTLS; the hand-written relay for implicit
/// TLS, which mailin-embedded does not serve (see [`MiniSmtp`]).
enum Relay {
    Starttls(SmtpServer),
    Implicit(MiniSmtp),
}

impl Relay {
    fn port(&self) -> u16 {
        match self {
            Relay::Starttls(r) => r.port,
            Relay::Implicit(r) => r.port,
        }
    }

    fn connections(&self) -> usize {
        match self {
            Relay::Starttls(r) => r.connections(),
            Relay::Implicit(r) => r.connections(),
        }
    }

    /// Each message's text.
    fn mails(&self) -> Vec<String> {
        match self {
            Relay::Starttls(r) => r.mails().into_iter().map(|m| m.data).collect(),
            Relay::Implicit(r) => r.mails(),
        }
    }

    /// What the client sent to log in: one entry for each AUTH PLAIN (the user, from
    /// mailin-embedded; the command line, from the hand-written relay).
    fn auth_lines(&self) -> Vec<String> {
        match self {
            Relay::Starttls(r) => r.logins(),
            Relay::Implicit(r) => r.auth_lines(),
        }
    }
}

const TODAY: &str = "2026-11-29";

fn config(port: u16, tls: &str, extra: &str) -> String {
    world::config(port).replace(
        "tls = \"none\"\n",
        &format!(
            "tls = \"{tls}\"\nusername_env = \"CONTRACTS_SMTP_USER\"\n\
             password_env = \"CONTRACTS_SMTP_PASSWORD\"\n{extra}"
        ),
    )
}

const CREDS: [(&str, &str); 2] = [
    ("CONTRACTS_SMTP_USER", "notifier"),
    ("CONTRACTS_SMTP_PASSWORD", "tls-secret"),
];

fn private_relay(mode: &str) {
    let pki = Pki::new();
    let relay = match mode {
        "starttls" => Relay::Starttls(SmtpServer::start_tls(&pki)),
        _ => Relay::Implicit(MiniSmtp::start(
            Tls::Implicit(pki.server.clone()),
            Auth::Accept("PLAIN LOGIN"),
        )),
    };
    let w = World::new(relay.port());

    // Without ca_file: the system's roots do not know the private CA.
    w.write("contracts.toml", &config(relay.port(), mode, ""));
    let run = w.run_env(TODAY, &["notify"], &CREDS);
    run.assert_code(3);
    let err = run.stderr();
    assert!(
        err.contains("certificate") || err.contains("UnknownIssuer"),
        "{mode}: {err}"
    );
    assert!(err.contains("nothing was sent"), "{mode}: {err}");
    assert_eq!(relay.connections(), 1, "{mode}: one attempt for the batch");
    assert!(
        relay.auth_lines().is_empty(),
        "{mode}: credentials went out"
    );
    assert!(w.read("notifications/roads.toml").is_none());

    // With the CA's PEM in the store (a path relative to the store root).
    w.write("certs/relay-ca.pem", &pki.ca_pem);
    w.write(
        "contracts.toml",
        &config(relay.port(), mode, "ca_file = \"certs/relay-ca.pem\"\n"),
    );
    w.run_env(TODAY, &["notify"], &CREDS).assert_code(0);
    let mails = relay.mails();
    assert_eq!(mails.len(), 2, "{mode}");
    assert_eq!(
        relay.connections(),
        2,
        "{mode}: one more session for the batch"
    );
    assert_eq!(relay.auth_lines().len(), 1, "{mode}: one login");
    assert_eq!(w.ledger().len(), 2);
}

#[test]
fn starttls_to_a_relay_signed_by_a_private_ca() {
    private_relay("starttls");
}

#[test]
fn implicit_tls_to_a_relay_signed_by_a_private_ca() {
    private_relay("tls");
}

#[test]
fn a_missing_or_empty_ca_file_is_a_config_error_naming_it() {
    let pki = Pki::new();
    let relay = SmtpServer::start_tls(&pki);
    let w = World::new(relay.port);
    w.write(
        "contracts.toml",
        &config(relay.port, "starttls", "ca_file = \"certs/none.pem\"\n"),
    );
    let run = w.run_env(TODAY, &["notify"], &CREDS);
    run.assert_code(2);
    run.assert_stderr_has("certs/none.pem");
    w.write("certs/empty.pem", "not a certificate\n");
    w.write(
        "contracts.toml",
        &config(relay.port, "starttls", "ca_file = \"certs/empty.pem\"\n"),
    );
    let run = w.run_env(TODAY, &["notify"], &CREDS);
    run.assert_code(2);
    run.assert_stderr_has("certs/empty.pem")
        .assert_stderr_has("BEGIN CERTIFICATE");
    assert_eq!(relay.connections(), 0);
}
