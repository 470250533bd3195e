//! A loopback stand-in for GitHub's REST API, for the comment step of the GitHub Action
//! (`scripts/pr-comment.py`, tests/test_pr_comment.rs): the three issue-comment endpoints the
//! script calls (list, with GitHub's `Link` pagination; create; update) for the comments of one
//! pull request, every request recorded.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::webhook;

pub const REPO: &str = "acme/roads-store";
pub const PR: u64 = 7;

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(String::as_str).unwrap_or("")
    }

    pub fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub body: String,
    pub login: String,
}

#[derive(Default)]
struct Issue {
    comments: Vec<Comment>,
    next_id: u64,
    requests: Vec<Recorded>,
    /// Answer every POST and PATCH with 403, as GitHub does for a read-only token.
    read_only: bool,
}

/// The stand-in for api.github.com: one repository, one pull request, its comments.
pub struct GitHub {
    pub port: u16,
    issue: Arc<Mutex<Issue>>,
}

impl GitHub {
    pub fn start(comments: &[(&str, &str)]) -> GitHub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let issue = Arc::new(Mutex::new(Issue {
            next_id: 1001,
            ..Issue::default()
        }));
        {
            let mut i = issue.lock().unwrap();
            for (login, body) in comments {
                let id = i.next_id;
                i.next_id += 1;
                i.comments.push(Comment {
                    id,
                    body: body.to_string(),
                    login: login.to_string(),
                });
            }
        }
        let shared = issue.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                answer(&shared, port, stream);
            }
        });
        GitHub { port, issue }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn comments(&self) -> Vec<Comment> {
        self.issue.lock().unwrap().comments.clone()
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.issue.lock().unwrap().requests.clone()
    }

    pub fn read_only(&self) {
        self.issue.lock().unwrap().read_only = true;
    }
}

fn answer(issue: &Mutex<Issue>, port: u16, mut stream: TcpStream) {
    let Some(request) = read_request(&mut stream) else {
        return;
    };
    let (status, link, body) = {
        let mut i = issue.lock().unwrap();
        i.requests.push(request.clone());
        route(&mut i, port, &request)
    };
    let text = body.to_string();
    let reason = match status {
        200 => "OK",
        201 => "Created",
        403 => "Forbidden",
        _ => "Not Found",
    };
    let link = link.map(|l| format!("Link: {l}\r\n")).unwrap_or_default();
    let reply = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json; charset=utf-8\r\n{link}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = stream.write_all(reply.as_bytes());
}

/// The three endpoints, as GitHub answers them (only the fields of an issue comment the
/// script could read, and the ones a reader of the recorded traffic would look for).
fn route(i: &mut Issue, port: u16, r: &Recorded) -> (u16, Option<String>, Value) {
    let base = format!("/repos/{REPO}");
    let list = format!("{base}/issues/{PR}/comments");
    let one = format!("{base}/issues/comments/");
    let not_found = json!({"message": "Not Found"});
    if r.path == list && r.method == "GET" {
        // GitHub's defaults and cap: 30 a page, at most 100.
        let per_page: usize = r
            .query("per_page")
            .and_then(|v| v.parse().ok())
            .unwrap_or(30);
        let per_page = per_page.clamp(1, 100);
        let page: usize = r
            .query("page")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1)
            .max(1);
        let items: Vec<Value> = i
            .comments
            .iter()
            .skip((page - 1) * per_page)
            .take(per_page)
            .map(|c| comment_json(c, port))
            .collect();
        let last = i.comments.len().div_ceil(per_page).max(1);
        let url =
            |p: usize| format!("<http://127.0.0.1:{port}{list}?per_page={per_page}&page={p}>");
        let link = (page < last).then(|| {
            format!(
                "{}; rel=\"next\", {}; rel=\"last\"",
                url(page + 1),
                url(last)
            )
        });
        return (200, link, Value::Array(items));
    }
    if (r.method == "POST" || r.method == "PATCH") && i.read_only {
        return (
            403,
            None,
            json!({"message": "Resource not accessible by integration"}),
        );
    }
    let sent: Option<String> = serde_json::from_str::<Value>(&r.body)
        .ok()
        .and_then(|v| v["body"].as_str().map(String::from));
    if r.path == list && r.method == "POST" {
        let Some(body) = sent else {
            return (422, None, json!({"message": "Invalid request"}));
        };
        let c = Comment {
            id: i.next_id,
            body,
            login: "github-actions[bot]".to_string(),
        };
        i.next_id += 1;
        i.comments.push(c.clone());
        return (201, None, comment_json(&c, port));
    }
    if let Some(id) = r.path.strip_prefix(&one) {
        if r.method == "PATCH" {
            let id: u64 = id.parse().unwrap_or(0);
            let Some(c) = i.comments.iter_mut().find(|c| c.id == id) else {
                return (404, None, not_found);
            };
            let Some(body) = sent else {
                return (422, None, json!({"message": "Invalid request"}));
            };
            c.body = body;
            return (200, None, comment_json(c, port));
        }
    }
    (404, None, not_found)
}

fn comment_json(c: &Comment, port: u16) -> Value {
    json!({
        "id": c.id,
        "node_id": format!("IC_{}", c.id),
        "url": format!("http://127.0.0.1:{port}/repos/{REPO}/issues/comments/{}", c.id),
        "html_url": format!("https://github.com/{REPO}/pull/{PR}#issuecomment-{}", c.id),
        "issue_url": format!("http://127.0.0.1:{port}/repos/{REPO}/issues/{PR}"),
        "body": c.body,
        "user": {"login": c.login, "id": 41898282, "type": "Bot"},
        "created_at": "2026-11-29T09:00:00Z",
        "updated_at": "2026-11-29T09:00:00Z",
        "author_association": "NONE",
    })
}

/// One HTTP/1.1 request, its target split into path and query, or `None` when the stream
/// ended early.
fn read_request(stream: impl Read) -> Option<Recorded> {
    let r = webhook::read_request(stream)?;
    let (path, query) = r.path.split_once('?').unwrap_or((&r.path, ""));
    let query = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.to_string(), v.to_string())
        })
        .collect();
    Some(Recorded {
        method: r.method,
        path: path.to_string(),
        query,
        headers: r.headers,
        body: r.body,
    })
}
