//! One webhook receiver for every notify test: an HTTP (or HTTPS) server on 127.0.0.1 that
//! keeps each request it read whole and answers it as the test chose: 200, a scripted status,
//! or 200 after a delay. A request cut off before its body ends (a refused TLS handshake, a
//! sender killed mid-request) was not delivered, so it is not kept.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The request target: the path with its query, if any.
    pub path: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Request {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(String::as_str).unwrap_or("")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

/// How a receiver answers.
#[derive(Default)]
struct Setup {
    tls: Option<Arc<rustls::ServerConfig>>,
    /// The status of each next request (200 once used up); 0 holds the connection unanswered.
    script: Vec<u16>,
    /// How long to wait before answering, each connection on its own thread (so that a kill
    /// can land while a delivery is on the way).
    delay: Option<Duration>,
    /// The `Retry-After` seconds sent with a scripted 429 or 503.
    retry_after: u64,
}

pub struct Receiver {
    pub port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    https: bool,
    path: String,
}

impl Receiver {
    /// Answers 200 to every request.
    pub fn start() -> Receiver {
        Receiver::serve(Setup::default())
    }

    /// Answers each request with the next status of `script` (200 once it is used up), with
    /// `Retry-After: 1` on 429 and 503; a scripted 0 never answers.
    pub fn scripted(script: &[u16]) -> Receiver {
        Receiver::scripted_retry_after(script, 1)
    }

    /// As [`Receiver::scripted`], with `Retry-After: {seconds}` on 429 and 503.
    pub fn scripted_retry_after(script: &[u16], seconds: u64) -> Receiver {
        Receiver::serve(Setup {
            script: script.to_vec(),
            retry_after: seconds,
            ..Setup::default()
        })
    }

    /// Answers 200 over TLS with `config`.
    pub fn tls(config: Arc<rustls::ServerConfig>) -> Receiver {
        Receiver::serve(Setup {
            tls: Some(config),
            ..Setup::default()
        })
    }

    /// Reads each request on its own thread and answers 200 after `delay`.
    pub fn slow(delay: Duration) -> Receiver {
        Receiver::serve(Setup {
            delay: Some(delay),
            ..Setup::default()
        })
    }

    /// The same receiver with `path` as the path of its `url`.
    pub fn at(mut self, path: &str) -> Receiver {
        self.path = path.to_string();
        self
    }

    pub fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}{}", self.port, self.path)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    pub fn bodies(&self) -> Vec<String> {
        self.requests().into_iter().map(|r| r.body).collect()
    }

    pub fn received(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    /// How many times each `webhook-id` was received.
    pub fn deliveries(&self) -> HashMap<String, usize> {
        let mut n = HashMap::new();
        for r in self.requests.lock().unwrap().iter() {
            *n.entry(r.header("webhook-id").to_string()).or_default() += 1;
        }
        n
    }

    fn serve(setup: Setup) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let https = setup.tls.is_some();
        let state = Arc::new(State {
            seen: requests.clone(),
            script: Mutex::new(setup.script.into_iter().collect()),
            delay: setup.delay,
            retry_after: setup.retry_after,
            tls: setup.tls,
        });
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                if state.delay.is_some() {
                    let state = state.clone();
                    std::thread::spawn(move || state.answer(stream));
                } else {
                    state.answer(stream);
                }
            }
        });
        Receiver {
            port,
            requests,
            https,
            path: "/hooks/roads".to_string(),
        }
    }
}

struct State {
    seen: Arc<Mutex<Vec<Request>>>,
    script: Mutex<VecDeque<u16>>,
    delay: Option<Duration>,
    retry_after: u64,
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl State {
    fn answer(&self, stream: TcpStream) {
        match &self.tls {
            Some(config) => {
                let conn = rustls::ServerConnection::new(config.clone()).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, stream);
                if self.exchange(&mut tls) {
                    tls.conn.send_close_notify();
                    let _ = tls.conn.complete_io(&mut tls.sock);
                }
            }
            None => {
                let mut plain = stream;
                self.exchange(&mut plain);
            }
        }
    }

    /// Read one request, keep it, and answer it; false when nothing was answered.
    fn exchange(&self, mut stream: impl Read + Write) -> bool {
        let Some(request) = read_request(&mut stream) else {
            return false;
        };
        self.seen.lock().unwrap().push(request);
        let status = self.script.lock().unwrap().pop_front().unwrap_or(200);
        if let Some(delay) = self.delay {
            std::thread::sleep(delay);
        }
        if status == 0 {
            // Scripted silence: hold the connection without an answer.
            std::thread::sleep(Duration::from_secs(4));
            return false;
        }
        let (reason, retry) = match status {
            200 => ("OK", String::new()),
            429 | 503 => ("Scripted", format!("Retry-After: {}\r\n", self.retry_after)),
            _ => ("Scripted", String::new()),
        };
        let reply = format!(
            "HTTP/1.1 {status} {reason}\r\n{retry}Content-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let _ = stream.write_all(reply.as_bytes());
        let _ = stream.flush();
        true
    }
}

/// One HTTP request read from `stream`, or `None` when the stream ended before its body did
/// (also the reader of the GitHub stand-in of tests/test_pr_comment.rs).
pub fn read_request(stream: impl Read) -> Option<Request> {
    let mut reader = BufReader::new(stream);
    let mut first = String::new();
    if reader.read_line(&mut first).ok()? == 0 {
        return None;
    }
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.trim_end().split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method: first.split(' ').next().unwrap_or("").to_string(),
        path: first.split(' ').nth(1).unwrap_or("").to_string(),
        headers,
        body: String::from_utf8(body).ok()?,
    })
}
