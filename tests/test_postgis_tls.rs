//! TLS to a PostGIS release, against a real PostgreSQL with `ssl = on` and a certificate from a
//! private CA made here with rcgen. The server accepts TCP connections over TLS only
//! (`hostnossl ... reject`), so a profile that succeeds proves the session was encrypted.

use crate::common;
use crate::common::postgres::Cluster;

const PASSWORD: &str = "Tls-Sesame-2026";

/// A CA, and a server certificate for `names` signed by it: (CA PEM, certificate PEM, key
/// PEM).
fn pki(names: &[&str]) -> (String, String, String) {
    let (ca, cert, key) = common::smtp::issue("contracts test PostgreSQL CA", "db.test", names);
    (ca, cert.pem(), key.serialize_pem())
}

#[test]
fn sslmode_is_honoured_as_libpq_honours_it() {
    // The certificate names localhost only: verify-full to 127.0.0.1 must fail on the name.
    let (ca, cert, key) = pki(&["localhost"]);
    let pg = Cluster::start_with_files(
        &[
            "ssl = on",
            "ssl_cert_file = 'server.crt'",
            "ssl_key_file = 'server.key'",
        ],
        &[
            ("server.crt", cert.as_bytes()),
            ("server.key", key.as_bytes()),
        ],
    );
    pg.set_hba(
        "local all all trust\n\
         hostnossl all all 127.0.0.1/32 reject\n\
         hostssl all all 127.0.0.1/32 scram-sha-256\n",
    );
    pg.load_countries();
    pg.sql(
        "postgres",
        &format!("CREATE ROLE ada LOGIN PASSWORD '{PASSWORD}'; GRANT SELECT ON countries TO ada;"),
    );
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("root.crt");
    std::fs::write(&ca_file, &ca).unwrap();
    let ca_path = ca_file.display().to_string();
    let (other_ca, _, _) = pki(&["localhost"]);
    let other_file = dir.path().join("other.crt");
    std::fs::write(&other_file, &other_ca).unwrap();
    let other_path = other_file.display().to_string();

    let port = pg.port();
    let url = |host: &str, params: &str| {
        format!("postgresql://ada:{PASSWORD}@{host}:{port}/postgres?table=countries{params}")
    };
    let ok = |env: &[(&str, &str)], u: String| {
        let r = common::run_with_env(env, &["profile", "--format", "json", &u]);
        assert_eq!(r.code, 0, "{u}: {}", r.stderr);
        assert_eq!(r.json()["feature_count"], 177);
    };
    let fails = |env: &[(&str, &str)], u: String, code: i32, needle: &str| {
        let r = common::run_with_env(env, &["profile", &u]);
        assert_eq!(r.code, code, "{u}: {}", r.stderr);
        r.assert_stderr_has(needle);
        assert!(!r.stderr.contains(PASSWORD), "{}", r.stderr);
    };

    // Encrypted without checking the certificate: the default (prefer) and require.
    ok(&[], url("127.0.0.1", ""));
    ok(&[], url("127.0.0.1", "&sslmode=require"));
    ok(&[("PGSSLMODE", "require")], url("127.0.0.1", ""));
    // The server refuses a session without TLS: disable is honoured, never upgraded.
    fails(
        &[],
        url("127.0.0.1", "&sslmode=disable"),
        3,
        "no encryption",
    );
    // verify-full: the chain and the name.
    ok(
        &[],
        url(
            "localhost",
            &format!("&sslmode=verify-full&sslrootcert={ca_path}"),
        ),
    );
    ok(
        &[("PGSSLROOTCERT", &ca_path), ("PGSSLMODE", "verify-full")],
        url("localhost", ""),
    );
    fails(
        &[],
        url(
            "127.0.0.1",
            &format!("&sslmode=verify-full&sslrootcert={ca_path}"),
        ),
        3,
        &format!("127.0.0.1 port {port}"),
    );
    // verify-ca: the chain, any name.
    ok(
        &[],
        url(
            "127.0.0.1",
            &format!("&sslmode=verify-ca&sslrootcert={ca_path}"),
        ),
    );
    fails(
        &[],
        url(
            "localhost",
            &format!("&sslmode=verify-ca&sslrootcert={other_path}"),
        ),
        3,
        "certificate",
    );
    // require with a root file checks the chain, as libpq does.
    fails(
        &[],
        url(
            "localhost",
            &format!("&sslmode=require&sslrootcert={other_path}"),
        ),
        3,
        "certificate",
    );
    // A Unix socket is never encrypted, as in libpq, whatever sslmode says.
    let sock = pg.socket_dir().display().to_string();
    ok(
        &[("PGSSLMODE", "verify-full")],
        format!("postgresql:///postgres?host={sock}&port={port}&user=postgres&table=countries"),
    );
    // No root file where one is needed.
    fails(
        &[],
        url(
            "localhost",
            "&sslmode=verify-full&sslrootcert=/nonexistent/root.crt",
        ),
        2,
        "/nonexistent/root.crt",
    );
}
