//! The comment step of the GitHub Action (`scripts/pr-comment.py`) against a loopback server
//! that stands in for GitHub's REST API (`tests/common/github.rs`): it implements the three
//! issue-comment endpoints the script calls (list, with GitHub's `Link` pagination; create;
//! update), keeps the comments of one pull request and records every request. The tests cannot reach GitHub, so each recorded
//! request is checked against GitHub's own OpenAPI description of those operations
//! (`tests/data/github-rest/issue-comments.json`, vendored with its licence).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::common::github::{GitHub, Recorded, PR, REPO};
use crate::common::{assert_exit, data};

const MARKER: &str = "<!-- contracts-review -->";
const TOKEN: &str = "ghs_test-token-0123456789";

fn script(dir: &Path, file: &Path, env: &[(&str, String)]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pr-comment.py");
    let mut c = Command::new("python3");
    c.arg(script)
        .arg(file)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output()
        .expect("python3 runs (the comment step needs Python 3, as GitHub's runners have)")
}

/// `pr-comment.py REVIEW` with the environment the action gives it (and nothing else).
fn post(github: &GitHub, review: &str) -> Output {
    post_with(github, review, &[], &[])
}

/// [`post`] without the variables `unset`, with `extra` ones (a file name in one is
/// relative to the run's own temporary directory, where `files` are written).
fn post_with(
    github: &GitHub,
    review: &str,
    unset: &[&str],
    files: &[(&str, &str, String)],
) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("review.md");
    std::fs::write(&file, review).unwrap();
    let mut env: Vec<(&str, String)> = env(github)
        .into_iter()
        .filter(|(k, _)| !unset.contains(k))
        .collect();
    for (var, name, text) in files {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        env.push((var, path.to_string_lossy().into_owned()));
    }
    script(dir.path(), &file, &env)
}

fn env(github: &GitHub) -> Vec<(&'static str, String)> {
    vec![
        ("GITHUB_API_URL", github.url()),
        ("GITHUB_REPOSITORY", REPO.to_string()),
        ("GITHUB_TOKEN", TOKEN.to_string()),
        ("PR_NUMBER", PR.to_string()),
    ]
}

/// GitHub's description of the three operations, as vendored.
fn description() -> Value {
    let text = std::fs::read_to_string(data("github-rest/issue-comments.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Whether `path` fills the description's path `template` (`{name}` is one segment).
fn fills(template: &str, path: &str) -> bool {
    let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len()
        && t.iter()
            .zip(&p)
            .all(|(t, p)| (t.starts_with('{') && t.ends_with('}') && !p.is_empty()) || t == p)
}

/// Check one recorded request against GitHub's description: an operation for its method and
/// path; only parameters the operation declares; a body that its `requestBody` schema accepts,
/// in a media type it lists (and no body where it has none); the API version of the
/// description; a bearer token.
fn against_description(spec: &Value, r: &Recorded) -> Result<(), String> {
    let (template, item) = spec["paths"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(t, _)| fills(t, &r.path))
        .ok_or_else(|| format!("{} {}: no path of the description", r.method, r.path))?;
    let op = item.get(r.method.to_ascii_lowercase()).ok_or_else(|| {
        format!(
            "{} {template}: not an operation of the description",
            r.method
        )
    })?;
    let id = op["operationId"].as_str().unwrap_or("?");
    // The parameters are shared components named by `$ref`; GitHub names the parameter the
    // component describes with `_` where the component has `-` (per-page is per_page).
    let declared: Vec<String> = op["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["$ref"].as_str().or(p["name"].as_str()))
        .map(|n| n.rsplit('/').next().unwrap_or(n).replace('-', "_"))
        .collect();
    for (name, _) in &r.query {
        if !declared.contains(name) {
            return Err(format!(
                "{id}: query parameter `{name}` is not one of {declared:?}"
            ));
        }
    }
    for segment in template.split('/').filter(|s| s.starts_with('{')) {
        let name = segment.trim_matches(['{', '}']);
        if !declared.iter().any(|d| d == name) {
            return Err(format!("{id}: path parameter `{name}` is not declared"));
        }
    }
    match op.get("requestBody") {
        None if !r.body.is_empty() => return Err(format!("{id} takes no body, got {}", r.body)),
        None => {}
        Some(rb) => {
            let media = r
                .header("content-type")
                .split(';')
                .next()
                .unwrap_or("")
                .trim();
            let schema = rb["content"]
                .get(media)
                .map(|c| &c["schema"])
                .ok_or_else(|| format!("{id}: content type `{media}` is not accepted"))?;
            let body: Value = serde_json::from_str(&r.body)
                .map_err(|e| format!("{id}: body is not JSON: {e}"))?;
            let validator = jsonschema::validator_for(schema).map_err(|e| e.to_string())?;
            let errors: Vec<String> = validator
                .iter_errors(&body)
                .map(|e| e.to_string())
                .collect();
            if !errors.is_empty() {
                return Err(format!("{id}: body {body} fails its schema: {errors:?}"));
            }
        }
    }
    // The version GitHub's file name carries (api.github.com.YYYY-MM-DD.json).
    let source = spec["x-extracted-from"].as_str().unwrap_or("");
    let version = source
        .trim_end_matches(".json")
        .rsplit('.')
        .next()
        .unwrap_or("");
    if r.header("x-github-api-version") != version {
        return Err(format!(
            "{id}: X-GitHub-Api-Version `{}` is not the description's `{version}`",
            r.header("x-github-api-version")
        ));
    }
    if r.header("accept") != "application/vnd.github+json" {
        return Err(format!("{id}: Accept is `{}`", r.header("accept")));
    }
    if r.header("authorization") != format!("Bearer {TOKEN}") {
        return Err(format!(
            "{id}: Authorization is `{}`",
            r.header("authorization")
        ));
    }
    if r.header("user-agent").is_empty() {
        return Err(format!(
            "{id}: no User-Agent (GitHub refuses requests without one)"
        ));
    }
    Ok(())
}

#[track_caller]
fn assert_all_described(github: &GitHub) {
    let spec = description();
    for r in github.requests() {
        if let Err(e) = against_description(&spec, &r) {
            panic!("a request GitHub would not take: {e}\n{r:?}");
        }
    }
}

fn operations(github: &GitHub) -> Vec<String> {
    github
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

fn review(text: &str) -> String {
    format!("{MARKER}\n## contracts review\n\n{text}\n")
}

#[test]
fn first_run_creates_the_comment_and_the_next_updates_it_leaving_the_others_alone() {
    let foreign = [
        ("reviewer", "Looks fine to me."),
        // Mentions the marker, but not as its first line: someone else's comment.
        (
            "maintainer",
            "Why does the bot write `<!-- contracts-review -->` at the top?",
        ),
        (
            "quoter",
            &format!("> {MARKER}\n> roads: BREAKING\n\nAgreed."),
        ),
    ];
    let github = GitHub::start(&foreign);
    let first = review("roads: BREAKING → requires 2.0.0 (declared 1.2.0 ✗)");
    let out = post(&github, &first);
    assert_exit(&out, 0, "first run: ");
    let comments = github.comments();
    assert_eq!(comments.len(), foreign.len() + 1);
    let ours = comments.last().unwrap().clone();
    assert_eq!(ours.body, first);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!(
            "https://github.com/{REPO}/pull/{PR}#issuecomment-{}",
            ours.id
        )
    );

    let second = review("roads: compatible → requires 1.3.0 (declared 2.0.0 ✓)");
    let out = post(&github, &second);
    assert_exit(&out, 0, "second run: ");
    let after = github.comments();
    assert_eq!(
        after.len(),
        foreign.len() + 1,
        "the second run adds no comment"
    );
    assert_eq!(after.last().unwrap().id, ours.id);
    assert_eq!(after.last().unwrap().body, second);
    for ((login, body), c) in foreign.iter().zip(&after) {
        assert_eq!((c.login.as_str(), c.body.as_str()), (*login, *body));
    }
    let list = format!("/repos/{REPO}/issues/{PR}/comments");
    assert_eq!(
        operations(&github),
        [
            format!("GET {list}"),
            format!("POST {list}"),
            format!("GET {list}"),
            format!("PATCH /repos/{REPO}/issues/comments/{}", ours.id),
        ]
    );
    assert_all_described(&github);
}

#[test]
fn the_listing_follows_every_next_page_to_find_the_comment() {
    // 230 comments of others, then ours: on the third page of 100.
    let chatter: Vec<String> = (0..230).map(|n| format!("comment {n}")).collect();
    let mut seed: Vec<(&str, &str)> = chatter.iter().map(|c| ("someone", c.as_str())).collect();
    let old = review("roads: BREAKING (an old run)");
    seed.push(("github-actions[bot]", &old));
    let trailing = "a comment after ours".to_string();
    seed.push(("someone", &trailing));
    let github = GitHub::start(&seed);
    let ours = github.comments()[230].id;

    let new = review("roads: compatible");
    assert_exit(&post(&github, &new), 0, "");
    let requests = github.requests();
    let pages: Vec<(Option<&str>, Option<&str>)> = requests
        .iter()
        .filter(|r| r.method == "GET")
        .map(|r| (r.query("per_page"), r.query("page")))
        .collect();
    assert_eq!(
        pages,
        [
            (Some("100"), None),
            (Some("100"), Some("2")),
            (Some("100"), Some("3"))
        ],
        "it asks for 100 a page and follows `next` until it finds the comment"
    );
    let last = requests.last().unwrap();
    assert_eq!(
        (last.method.as_str(), last.path.clone()),
        ("PATCH", format!("/repos/{REPO}/issues/comments/{ours}"))
    );
    let comments = github.comments();
    assert_eq!(comments.len(), seed.len());
    assert_eq!(comments[230].body, new);
    assert_eq!(comments[231].body, trailing);
    assert_all_described(&github);
}

#[test]
fn without_a_comment_of_ours_on_any_page_it_creates_one_after_the_last_page() {
    let chatter: Vec<String> = (0..150).map(|n| format!("comment {n}")).collect();
    let seed: Vec<(&str, &str)> = chatter.iter().map(|c| ("someone", c.as_str())).collect();
    let github = GitHub::start(&seed);
    assert_exit(&post(&github, &review("cities: no change")), 0, "");
    let ops: Vec<String> = operations(&github)
        .into_iter()
        .map(|o| o.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(ops, ["GET", "GET", "POST"]);
    assert_eq!(github.comments().len(), 151);
    assert_all_described(&github);
}

#[test]
fn a_review_over_githubs_limit_is_cut_to_fit_and_keeps_its_marker() {
    let github = GitHub::start(&[]);
    // 70 000 characters, more than the 65 536 GitHub takes in a comment body.
    let long = review(&"| roads | crs | breaking |\n".repeat(2700));
    assert!(long.chars().count() > 65_536);
    assert_exit(&post(&github, &long), 0, "");
    let posted = &github.comments()[0].body;
    assert!(posted.chars().count() <= 65_536, "{}", posted.len());
    assert!(posted.starts_with(MARKER));
    assert!(long.starts_with(&posted[..posted.len() - 200]));
    assert_all_described(&github);
}

#[test]
fn markdown_without_the_marker_gets_it_so_the_next_run_finds_the_comment() {
    let github = GitHub::start(&[]);
    assert_exit(&post(&github, "## a review written by hand\n"), 0, "");
    assert!(github.comments()[0]
        .body
        .starts_with(&format!("{MARKER}\n")));
    assert_exit(&post(&github, "## the next one\n"), 0, "");
    assert_eq!(github.comments().len(), 1);
    assert_all_described(&github);
}

#[test]
fn an_empty_review_sends_nothing_and_passes() {
    let github = GitHub::start(&[("reviewer", "Looks fine.")]);
    let out = post(&github, "\n");
    assert_exit(&out, 0, "");
    assert!(github.requests().is_empty());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}

#[test]
fn a_read_only_token_fails_the_step_with_githubs_answer() {
    let github = GitHub::start(&[]);
    github.read_only();
    let out = post(&github, &review("roads: BREAKING"));
    assert_exit(&out, 3, "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("HTTP 403"), "{err}");
    assert!(
        err.contains("Resource not accessible by integration"),
        "{err}"
    );
    assert!(err.contains("pull-requests: write"), "{err}");
    assert!(github.comments().is_empty());
}

#[test]
fn a_missing_setting_is_named_and_nothing_is_sent() {
    let github = GitHub::start(&[]);
    let out = post_with(&github, &review("x"), &["GITHUB_TOKEN", "PR_NUMBER"], &[]);
    assert_exit(&out, 2, "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("GITHUB_TOKEN") && err.contains("PR_NUMBER"),
        "{err}"
    );
    assert!(github.requests().is_empty());
}

#[test]
fn the_pull_request_number_comes_from_the_event_file_when_not_given() {
    let github = GitHub::start(&[]);
    let event = json!({"pull_request": {"number": PR}}).to_string();
    let out = post_with(
        &github,
        &review("x"),
        &["PR_NUMBER"],
        &[("GITHUB_EVENT_PATH", "event.json", event)],
    );
    assert_exit(&out, 0, "");
    assert_eq!(github.comments().len(), 1);
    assert_all_described(&github);
}

/// The check against the description is itself able to fail: what GitHub would refuse, it
/// refuses.
#[test]
fn the_description_check_refuses_requests_github_would_not_take() {
    let spec = description();
    let good = Recorded {
        method: "POST".to_string(),
        path: format!("/repos/{REPO}/issues/{PR}/comments"),
        query: vec![],
        headers: [
            ("accept", "application/vnd.github+json"),
            ("authorization", &format!("Bearer {TOKEN}")),
            ("x-github-api-version", "2022-11-28"),
            ("user-agent", "test"),
            ("content-type", "application/json; charset=utf-8"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        body: json!({"body": "hello"}).to_string(),
    };
    assert_eq!(against_description(&spec, &good), Ok(()));
    let mut bad = Vec::new();
    let mut r = good.clone();
    r.body = json!({"text": "hello"}).to_string();
    bad.push(("a body without `body`", r));
    let mut r = good.clone();
    r.body = json!({"body": 42}).to_string();
    bad.push(("a body that is not a string", r));
    let mut r = good.clone();
    r.method = "PUT".to_string();
    bad.push(("a method the path has not", r));
    let mut r = good.clone();
    r.path = format!("/repos/{REPO}/pulls/{PR}/comments");
    bad.push(("the review-comment endpoint", r));
    let mut r = good.clone();
    r.method = "GET".to_string();
    r.body = String::new();
    r.query = vec![("sort".to_string(), "created".to_string())];
    bad.push(("a query parameter the list does not take", r));
    let mut r = good.clone();
    r.headers
        .insert("x-github-api-version".into(), "2026-03-10".into());
    bad.push(("another API version", r));
    let mut r = good;
    r.headers.insert("content-type".into(), "text/plain".into());
    bad.push(("a body that is not JSON", r));
    for (what, r) in bad {
        assert!(
            against_description(&spec, &r).is_err(),
            "{what} passed the check"
        );
    }
}
