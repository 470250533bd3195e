//! A real SMTP server on loopback for the notify tests: mailin-embedded, collecting what it
//! receives, plainly or behind STARTTLS with a certificate from a private CA made here with
//! rcgen. The relays that misbehave on purpose are hand-written (`MiniSmtp` in
//! `notify_support.rs`).

use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A private CA and a server certificate for 127.0.0.1 and localhost signed by it.
pub struct Pki {
    pub ca_pem: String,
    pub server: Arc<rustls::ServerConfig>,
    /// The server's certificate and key, PEM: what mailin-embedded loads from files.
    cert_pem: String,
    key_pem: String,
}

impl Pki {
    pub fn new() -> Pki {
        let (ca_pem, leaf, leaf_key) = issue(
            "contracts test private CA",
            "relay.test",
            &["localhost", "127.0.0.1"],
        );
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(leaf.der().to_vec())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
            )
            .unwrap();
        Pki {
            ca_pem,
            server: Arc::new(server),
            cert_pem: leaf.pem(),
            key_pem: leaf_key.serialize_pem(),
        }
    }
}

/// A CA named `ca_name` made on the spot, and a certificate named `leaf_name` it signs for
/// `names` (an IP address stands as one, anything else as a DNS name): the CA's PEM, the
/// certificate and its key.
pub fn issue(
    ca_name: &str,
    leaf_name: &str,
    names: &[&str],
) -> (String, rcgen::Certificate, rcgen::KeyPair) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, ca_name);
    ca_params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
    ];
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();

    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.subject_alt_names = names
        .iter()
        .map(|n| match n.parse() {
            Ok(ip) => rcgen::SanType::IpAddress(ip),
            Err(_) => rcgen::SanType::DnsName((*n).try_into().unwrap()),
        })
        .collect();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, leaf_name);
    let cert = params.signed_by(&key, &ca).unwrap();
    (ca.pem(), cert, key)
}

/// One message as the SMTP server received it.
#[derive(Debug, Clone, Default)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    pub data: String,
}

impl Mail {
    /// A header's value, unfolded.
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.data.split("\r\n\r\n").next()?;
        let unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ");
        unfolded.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }

    /// The body, decoded from quoted-printable when the message says so (lettre picks it
    /// for lines with trailing spaces, long lines or non-ASCII text).
    pub fn body(&self) -> String {
        let raw = self
            .data
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        let qp = self
            .header("Content-Transfer-Encoding")
            .is_some_and(|e| e.eq_ignore_ascii_case("quoted-printable"));
        let text = if qp { decode_qp(&raw) } else { raw };
        text.replace("\r\n", "\n")
    }
}

fn decode_qp(s: &str) -> String {
    let joined = s.replace("=\r\n", "");
    let b = joined.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'=', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Default)]
struct Received {
    mails: Vec<Mail>,
    sessions: usize,
    connections: usize,
    logins: Vec<String>,
}

/// The mailin handler, the received mail shared by every copy.
#[derive(Default)]
struct Handler {
    shared: Arc<Mutex<Received>>,
    current: Mail,
    /// A recipient the server refuses (550), to make one notice fail.
    reject: Option<String>,
}

/// mailin-embedded clones the handler once for each connection it accepts, before any byte
/// is read: the one place a connection that never says EHLO (a refused TLS handshake) is
/// counted.
impl Clone for Handler {
    fn clone(&self) -> Handler {
        self.shared.lock().unwrap().connections += 1;
        Handler {
            shared: self.shared.clone(),
            current: self.current.clone(),
            reject: self.reject.clone(),
        }
    }
}

impl mailin_embedded::Handler for Handler {
    fn rcpt(&mut self, to: &str) -> mailin_embedded::Response {
        if self.reject.as_deref().is_some_and(|r| to.contains(r)) {
            return mailin_embedded::response::NO_MAILBOX;
        }
        mailin_embedded::response::OK
    }

    fn helo(&mut self, _ip: std::net::IpAddr, _domain: &str) -> mailin_embedded::Response {
        self.shared.lock().unwrap().sessions += 1;
        mailin_embedded::response::OK
    }

    fn auth_plain(
        &mut self,
        _authorization_id: &str,
        authentication_id: &str,
        _password: &str,
    ) -> mailin_embedded::Response {
        self.login(authentication_id)
    }

    fn auth_login(&mut self, username: &str, _password: &str) -> mailin_embedded::Response {
        self.login(username)
    }

    fn data_start(
        &mut self,
        _domain: &str,
        from: &str,
        _is8bit: bool,
        to: &[String],
    ) -> mailin_embedded::Response {
        self.current = Mail {
            from: from.to_string(),
            to: to.to_vec(),
            data: String::new(),
        };
        mailin_embedded::response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.current.data.push_str(&String::from_utf8_lossy(buf));
        Ok(())
    }

    fn data_end(&mut self) -> mailin_embedded::Response {
        let mail = std::mem::take(&mut self.current);
        self.shared.lock().unwrap().mails.push(mail);
        mailin_embedded::response::OK
    }
}

impl Handler {
    /// Every login is accepted and its user kept.
    fn login(&mut self, user: &str) -> mailin_embedded::Response {
        self.shared.lock().unwrap().logins.push(user.to_string());
        mailin_embedded::response::AUTH_OK
    }
}

/// A real SMTP server on 127.0.0.1, serving until the test process ends.
pub struct SmtpServer {
    pub port: u16,
    shared: Arc<Mutex<Received>>,
}

impl SmtpServer {
    pub fn start() -> SmtpServer {
        SmtpServer::start_rejecting(None)
    }

    /// A server that answers 550 to RCPT for any address containing `reject`.
    pub fn start_rejecting(reject: Option<&str>) -> SmtpServer {
        let handler = Handler {
            reject: reject.map(str::to_string),
            ..Handler::default()
        };
        SmtpServer::serve(handler, |_| {})
    }

    /// A server that offers STARTTLS with `pki`'s certificate and, inside TLS, AUTH PLAIN and
    /// LOGIN, accepting every login.
    pub fn start_tls(pki: &Pki) -> SmtpServer {
        // mailin-embedded builds its rustls config with the process's default provider; the
        // test build links two (ring, and aws-lc-rs through mailin-embedded), so one is named.
        let _ = rustls::crypto::ring::default_provider().install_default();
        // It reads the certificate and key from files, once, here.
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        std::fs::write(&cert, &pki.cert_pem).unwrap();
        std::fs::write(&key, &pki.key_pem).unwrap();
        SmtpServer::serve(Handler::default(), |server| {
            server
                .with_ssl(mailin_embedded::SslConfig::SelfSigned {
                    cert_path: cert.display().to_string(),
                    key_path: key.display().to_string(),
                })
                .unwrap()
                .with_auth(mailin_embedded::AuthMechanism::Plain)
                .with_auth(mailin_embedded::AuthMechanism::Login);
        })
    }

    /// Serve `handler` on a free loopback port with the server as `setup` leaves it.
    fn serve(
        handler: Handler,
        setup: impl FnOnce(&mut mailin_embedded::Server<Handler>),
    ) -> SmtpServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = handler.shared.clone();
        let mut server = mailin_embedded::Server::new(handler);
        server.with_name("sink.test").with_tcp_listener(listener);
        setup(&mut server);
        std::thread::spawn(move || {
            // serve() runs forever; its error type is not Send, so it is dropped here.
            let _ = server.serve();
        });
        SmtpServer { port, shared }
    }

    pub fn mails(&self) -> Vec<Mail> {
        self.shared.lock().unwrap().mails.clone()
    }

    /// SMTP sessions opened (one EHLO each; a STARTTLS session says EHLO twice).
    pub fn sessions(&self) -> usize {
        self.shared.lock().unwrap().sessions
    }

    /// TCP connections accepted, whatever became of them.
    pub fn connections(&self) -> usize {
        self.shared.lock().unwrap().connections
    }

    /// The user of each login, in order.
    pub fn logins(&self) -> Vec<String> {
        self.shared.lock().unwrap().logins.clone()
    }

    /// The mail whose envelope includes `rcpt`.
    pub fn mail_to(&self, rcpt: &str) -> Vec<Mail> {
        self.mails()
            .into_iter()
            .filter(|m| m.to.iter().any(|t| t == rcpt))
            .collect()
    }
}

/// A loopback port on which nothing listens: the server is down.
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}
