//! A real S3-compatible server on loopback for the object-storage tests: moto in server mode
//! (PyPI `moto[server]`, installed by `.ci/run`), started on a free port by the test and
//! killed when the handle drops. Objects are uploaded with the `object_store` client, the same
//! crate the binary reads them with.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::{ObjectStoreExt, PutPayload};

/// The credentials every test gives both moto and the binary: static keys, so no client ever
/// looks for instance credentials off this machine.
pub const KEY_ID: &str = "AKIATESTINGKEY00001";
pub const SECRET: &str = "testing-secret-for-moto-0001";
pub const BUCKET: &str = "releases";

pub struct Moto {
    child: Child,
    pub port: u16,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// One raw HTTP/1.0 request; the status code and the body.
pub fn http(port: u16, method: &str, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\r\n"
    )?;
    let mut reply = String::new();
    s.read_to_string(&mut reply)?;
    let code = reply
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = reply
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    Ok((code, body))
}

impl Moto {
    /// Start moto and create [`BUCKET`]. Fails loudly when moto is not installed.
    pub fn start() -> Moto {
        Moto::start_with(&[])
    }

    /// [`Moto::start`] with moto's own settings in its environment (its request recorder:
    /// `MOTO_ENABLE_RECORDING`, `MOTO_RECORDER_FILEPATH`).
    pub fn start_with(env: &[(&str, &str)]) -> Moto {
        crate::common::require_python(
            "import moto.server, flask, flask_cors",
            "moto is missing: the object-storage tests need a real S3-compatible server; install it with `pip install 'moto[server]'` (see .ci/run)",
        );
        let port = free_port();
        let child = Command::new("python3")
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .envs(env.iter().copied())
            .spawn()
            .expect("python3 starts moto");
        let mut moto = Moto { child, port };
        // Until one of two events: moto creates the bucket, or it exits (a port taken, a
        // broken install), which fails the test loudly.
        loop {
            if let Ok((200, _)) = http(port, "PUT", &format!("/{BUCKET}")) {
                break;
            }
            if let Ok(Some(status)) = moto.child.try_wait() {
                panic!("moto exited at start, before answering on port {port}: {status}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        moto
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Upload local files: (key, path) pairs.
    pub fn upload(&self, files: &[(String, &Path)]) {
        // reqwest is built without a crypto provider of its own (as in the binary).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let store = AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_bucket_name(BUCKET)
            .with_region("us-east-1")
            .with_access_key_id(KEY_ID)
            .with_secret_access_key(SECRET)
            .build()
            .expect("an S3 client for moto");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        // Sixteen at a time: a month of access-log objects is thousands of small PUTs.
        rt.block_on(async {
            use futures_util::StreamExt;
            let puts = files.iter().map(|(key, path)| {
                let store = &store;
                async move {
                    let bytes = std::fs::read(path).expect("test file");
                    store
                        .put(
                            &object_store::path::Path::from(key.as_str()),
                            PutPayload::from(bytes),
                        )
                        .await
                        .unwrap_or_else(|e| panic!("upload {key}: {e}"));
                }
            });
            futures_util::stream::iter(puts)
                .buffer_unordered(16)
                .collect::<Vec<()>>()
                .await;
        });
    }

    /// Upload one file readable by anyone (`public-read`, which the object_store client does
    /// not set): with boto3, which moto depends on.
    pub fn upload_public(&self, key: &str, path: &Path) {
        let script = "import sys, boto3\n\
s3 = boto3.client('s3', endpoint_url=sys.argv[1], region_name='us-east-1', aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3])\n\
s3.put_object(Bucket=sys.argv[4], Key=sys.argv[5], Body=open(sys.argv[6], 'rb').read(), ACL='public-read')\n";
        crate::common::run_ok(
            Command::new("python3")
                .args(["-c", script, &self.endpoint(), KEY_ID, SECRET, BUCKET, key])
                .arg(path),
            "boto3 upload",
        );
    }

    /// The environment the binary reads the store with (nothing else of the machine's).
    pub fn env(&self, c: &mut Command) {
        c.env("AWS_ACCESS_KEY_ID", KEY_ID)
            .env("AWS_SECRET_ACCESS_KEY", SECRET)
            .env("AWS_DEFAULT_REGION", "us-east-1")
            .env("AWS_ENDPOINT_URL", self.endpoint())
            .env("AWS_ALLOW_HTTP", "true");
    }
}

/// Every file below `dir`, as (key under `prefix`, path), sorted.
pub fn tree(dir: &Path, prefix: &str) -> Vec<(String, std::path::PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("test data dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("below dir");
                out.push((format!("{prefix}{}", rel.display()), p));
            }
        }
    }
    out.sort();
    out
}
