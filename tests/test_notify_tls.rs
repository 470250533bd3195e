//! `[smtp] ca_file`: a relay whose certificate comes from a private CA, made in the test with
//! rcgen, served with rustls on loopback, over STARTTLS and over implicit TLS. Without the CA
//! the certificate is refused (the system's roots do not know it), once for the batch; with
//! it every notice is delivered over one encrypted session, logged in.

use crate::common::notify_support;
use crate::common::world;

use notify_support::{Auth, MiniSmtp, Pki, Tls};
use world::World;

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
    let tls = match mode {
        "starttls" => Tls::Starttls(pki.server.clone()),
        _ => Tls::Implicit(pki.server.clone()),
    };
    let relay = MiniSmtp::start(tls, Auth::Accept("PLAIN LOGIN"));
    let w = World::new(relay.port);

    // Without ca_file: the system's roots do not know the private CA.
    w.write("contracts.toml", &config(relay.port, mode, ""));
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
        &config(relay.port, mode, "ca_file = \"certs/relay-ca.pem\"\n"),
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
    let relay = MiniSmtp::start(Tls::Starttls(pki.server.clone()), Auth::None);
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
