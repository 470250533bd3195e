//! Object storage: the one client of `s3://`, `gs://`, `az://` and `http(s)://` objects that
//! releases (`release::remote_read`) and consumption sources (`consumers::reads`) share.
//!
//! `object_store` is async; the readers of this crate are synchronous. One small tokio
//! runtime, started the first time a URL is read, serves them: a caller blocks on a request
//! until it completes. Nothing outside this module and its two users sees tokio.
//!
//! **Credentials** come from each cloud's standard environment chain, through the stores'
//! `from_env` builders: `AWS_*` (keys, session token, region, `AWS_ENDPOINT_URL`,
//! `AWS_ALLOW_HTTP`, web identity, container and instance credentials), `GOOGLE_*`
//! (`GOOGLE_APPLICATION_CREDENTIALS`, `GOOGLE_SERVICE_ACCOUNT`, else the gcloud application
//! default credentials and the metadata server), `AZURE_*` (account name and key, SAS, client
//! secret, managed identity). They are never printed: every message that leaves this module
//! passes [`scrub`], which blanks the value of every credential-like environment variable and
//! the query string and user info of every URL in it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use object_store::ObjectStore;

/// The URL schemes a release or a consumption source may name.
pub const SCHEMES: &[&str] = &[
    "s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "http", "https",
];

/// How a remote read failed, as far as the user can act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteFailure {
    /// The URL is not one this build reads, or names nothing: bad input.
    BadUrl,
    /// No object (or no data file under the prefix) at the URL: bad input.
    NotFound,
    /// The store refused the credentials, or has none: the environment.
    Denied,
    /// The network or the store failed: the environment.
    Unavailable,
}

/// An error message from a remote read, already scrubbed of secrets.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{url}: {message}")]
pub struct RemoteError {
    pub url: String,
    pub failure: RemoteFailure,
    pub message: String,
}

impl RemoteError {
    pub(crate) fn new(url: &str, failure: RemoteFailure, message: impl AsRef<str>) -> RemoteError {
        RemoteError {
            url: scrub(url),
            failure,
            message: scrub(message.as_ref()),
        }
    }

    pub(crate) fn of(url: &str, e: object_store::Error) -> RemoteError {
        use object_store::Error as E;
        let failure = match &e {
            E::NotFound { .. } => RemoteFailure::NotFound,
            E::InvalidPath { .. } | E::NotSupported { .. } | E::NotImplemented { .. } => {
                RemoteFailure::BadUrl
            }
            E::PermissionDenied { .. } | E::Unauthenticated { .. } => RemoteFailure::Denied,
            E::Generic { store, .. } if *store == "Config" || store.ends_with("Config") => {
                RemoteFailure::BadUrl
            }
            // A store's reply the crate does not classify: its status decides.
            _ => {
                let t = e.to_string();
                if t.contains("403 Forbidden") || t.contains("401 Unauthorized") {
                    RemoteFailure::Denied
                } else if t.contains("404 Not Found") {
                    RemoteFailure::NotFound
                } else {
                    RemoteFailure::Unavailable
                }
            }
        };
        // The store's own message carries the request URL and part of the reply; one line.
        let text = e.to_string().replace('\n', " ");
        RemoteError::new(url, failure, text)
    }
}

/// Whether an argument (a release, a source path) names a URL rather than a local path.
pub fn is_url(arg: &str) -> bool {
    split_url(arg).is_some()
}

/// `scheme://authority/rest` with a scheme of letters, digits and `+-.`.
pub(crate) fn split_url(arg: &str) -> Option<(&str, &str, &str)> {
    let (scheme, after) = arg.split_once("://")?;
    if scheme.is_empty()
        || !scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return None;
    }
    let (authority, rest) = after.split_once('/').unwrap_or((after, ""));
    Some((scheme, authority, rest))
}

/// Blank every secret a message could carry: the values of credential-like environment
/// variables, and the user info and query string (a SAS token, a presigned signature) of
/// every URL in it.
pub fn scrub(message: &str) -> String {
    let mut out = message.to_string();
    const SECRETISH: &[&str] = &[
        "SECRET",
        "TOKEN",
        "KEY",
        "PASSWORD",
        "SAS",
        "SIGNATURE",
        "CREDENTIAL",
    ];
    for (name, value) in std::env::vars_os() {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        let upper = name.to_ascii_uppercase();
        if value.len() >= 8 && SECRETISH.iter().any(|s| upper.contains(s)) {
            out = out.replace(value, "***");
        }
    }
    // User info: `scheme://user:pass@host` keeps only the host.
    let mut cleaned = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        cleaned.push_str(head);
        let end = tail
            .find(|c: char| c.is_whitespace() || "/\"'<>)".contains(c))
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => {
                cleaned.push_str("***@");
                cleaned.push_str(&authority[at + 1..]);
            }
            None => cleaned.push_str(authority),
        }
        rest = &tail[end..];
        // The query string of this URL, up to the next blank or quote.
        let path_end = rest
            .find(|c: char| c.is_whitespace() || "\"'<>?".contains(c))
            .unwrap_or(rest.len());
        cleaned.push_str(&rest[..path_end]);
        rest = &rest[path_end..];
        if let Some(q) = rest.strip_prefix('?') {
            let qend = q
                .find(|c: char| c.is_whitespace() || "\"'<>".contains(c))
                .unwrap_or(q.len());
            cleaned.push_str("?***");
            rest = &q[qend..];
        }
    }
    cleaned.push_str(rest);
    cleaned
}

pub(crate) fn runtime() -> Result<&'static tokio::runtime::Runtime, RemoteError> {
    static RT: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        // Two I/O threads: the requests wait on the network, the decoding runs on rayon.
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("contracts-io")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| {
        RemoteError::new(
            "object storage",
            RemoteFailure::Unavailable,
            format!("cannot start the I/O runtime: {e}"),
        )
    })
}

pub(crate) fn block<F: std::future::Future>(f: F) -> Result<F::Output, RemoteError> {
    Ok(runtime()?.block_on(f))
}

/// Few, bounded retries: a store that is down should fail a CI job in seconds, not minutes.
fn retry() -> object_store::RetryConfig {
    object_store::RetryConfig {
        max_retries: 3,
        retry_timeout: Duration::from_secs(30),
        ..Default::default()
    }
}

/// One client per `scheme://authority`, shared by every object of a release, so a prefix of
/// a thousand partitions reuses its connections.
pub(crate) fn store_for(
    scheme: &str,
    authority: &str,
    url: &str,
) -> Result<Arc<dyn ObjectStore>, RemoteError> {
    static STORES: OnceLock<Mutex<HashMap<String, Arc<dyn ObjectStore>>>> = OnceLock::new();
    let base = format!("{scheme}://{authority}");
    let stores = STORES.get_or_init(Default::default);
    if let Some(s) = stores.lock().ok().and_then(|m| m.get(&base).cloned()) {
        return Ok(s);
    }
    // reqwest is built without a crypto provider of its own: use ring, as lettre does.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let built: Result<Arc<dyn ObjectStore>, object_store::Error> = match scheme {
        "s3" | "s3a" => object_store::aws::AmazonS3Builder::from_env()
            .with_url(&base)
            .with_retry(retry())
            .build()
            .map(|s| Arc::new(s) as _),
        "gs" => object_store::gcp::GoogleCloudStorageBuilder::from_env()
            .with_url(&base)
            .with_retry(retry())
            .build()
            .map(|s| Arc::new(s) as _),
        "az" | "azure" | "abfs" | "abfss" => object_store::azure::MicrosoftAzureBuilder::from_env()
            .with_url(&base)
            .with_retry(retry())
            .build()
            .map(|s| Arc::new(s) as _),
        "http" | "https" => {
            if authority.contains('@') {
                return Err(RemoteError::new(
                    url,
                    RemoteFailure::BadUrl,
                    "credentials in a URL are not read (they would be printed); use a store scheme (s3://, gs://, az://) and the environment",
                ));
            }
            object_store::http::HttpBuilder::new()
                .with_url(&base)
                .with_retry(retry())
                .with_config(
                    object_store::ClientConfigKey::AllowHttp,
                    (scheme == "http").to_string(),
                )
                .build()
                .map(|s| Arc::new(s) as _)
        }
        other => {
            return Err(RemoteError::new(
                url,
                RemoteFailure::BadUrl,
                format!(
                    "unsupported URL scheme `{other}://` (this build reads {})",
                    SCHEMES
                        .iter()
                        .map(|s| format!("{s}://"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ))
        }
    };
    let store = built.map_err(|e| {
        let mut r = RemoteError::of(url, e);
        if r.failure == RemoteFailure::Unavailable {
            r.failure = RemoteFailure::BadUrl;
        }
        r
    })?;
    if let Ok(mut m) = stores.lock() {
        m.insert(base, store.clone());
    }
    Ok(store)
}
