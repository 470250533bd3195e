//! TLS to PostgreSQL with rustls on the `ring` provider (the one the rest of the build uses),
//! verifying as libpq's `sslmode` says:
//!
//! - `prefer`, `allow` and `require`: encrypted, the certificate not checked (libpq's meaning:
//!   these modes protect against eavesdropping, not against a server impostor); `require` with
//!   a root certificate file present verifies the chain, as libpq does;
//! - `verify-ca`: the chain must lead to a root of the root certificate file; any host name;
//! - `verify-full`: the chain, and the host name (or IP address) in the certificate.
//!
//! The root certificate file is `sslrootcert`, else `PGSSLROOTCERT`, else
//! `~/.postgresql/root.crt`, in PEM. The handshake signatures are always verified.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, Error, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Encrypted; the certificate is not checked.
    Nothing,
    /// The chain leads to a trusted root; any name.
    Chain,
    /// The chain, and the name the client connected to.
    Full,
}

/// The root certificate file libpq would read.
pub fn root_file(explicit: Option<&str>) -> Option<PathBuf> {
    if let Some(p) = explicit.filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    if let Some(p) = std::env::var_os("PGSSLROOTCERT").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".postgresql/root.crt"))
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A connector that checks what `verify` says, with the roots of `root` (read only when it is
/// needed). A missing or unreadable root file where one is needed is an error to show.
pub fn connector(verify: Verify, root: Option<&Path>) -> Result<MakeRustlsConnect, String> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let roots = |path: Option<&Path>| -> Result<rustls::RootCertStore, String> {
        let path = path.ok_or("no root certificate file (set sslrootcert or PGSSLROOTCERT)")?;
        let mut store = rustls::RootCertStore::empty();
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(|e| format!("root certificate file {}: {e}", path.display()))?;
        for c in certs {
            let c = c.map_err(|e| format!("root certificate file {}: {e}", path.display()))?;
            store
                .add(c)
                .map_err(|e| format!("root certificate file {}: {e}", path.display()))?;
        }
        if store.is_empty() {
            return Err(format!(
                "root certificate file {} holds no certificate",
                path.display()
            ));
        }
        Ok(store)
    };
    let config = match verify {
        Verify::Full => builder
            .with_root_certificates(roots(root)?)
            .with_no_client_auth(),
        Verify::Chain => {
            let inner = WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots(root)?),
                provider.clone(),
            )
            .build()
            .map_err(|e| e.to_string())?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyName(inner)))
                .with_no_client_auth()
        }
        Verify::Nothing => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(provider)))
            .with_no_client_auth(),
    };
    Ok(MakeRustlsConnect::new(config))
}

/// `verify-ca`: the chain is checked, the name is not.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `require` without roots: the certificate is taken as it is, the handshake still verified.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
