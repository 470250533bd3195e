//! What the tests of the pictures, pages and formats share: the hand-laid store of `world`
//! with recorded releases and a moved sunset, and headless Chromium.

use std::path::Path;
use std::process::Command;

use crate::common::world::World;

/// Two recorded releases (one passed both live contracts, one failed line 2's) and line 1's
/// sunset moved from 2027-01-15 to 2027-02-01.
pub fn with_releases_and_a_move() -> World {
    let w = World::new(25);
    w.write(
        "history/roads.releases.toml",
        r#"[[release]]
version = "2026.11"
date = "2026-11-10"
validated = "2026-11-10"
files = ["roads.gpkg"]
passed = true

[[release.contract]]
version = "1.1.0"
results = { crs = "pass" }

[[release.contract]]
version = "2.0.0"
results = { crs = "pass" }

[[release]]
validated = "2026-11-24"
files = ["roads.fgb"]
passed = false

[[release.contract]]
version = "1.1.0"
results = { crs = "pass" }

[[release.contract]]
version = "2.0.0"
results = { crs = "fail" }
"#,
    );
    w.append(
        "history/roads.toml",
        r#"
[[sunset]]
at        = 2026-11-15T09:00:00Z
line      = 1
from      = 2027-01-15
to        = 2027-02-01
rationale = "Two consumers asked for more time."
"#,
    );
    w
}

/// Headless Chromium, or a loud failure: these tests never pass without a browser.
pub fn chromium() -> &'static str {
    for name in ["chromium", "chromium-browser"] {
        if Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return name;
        }
    }
    panic!(
        "CHROMIUM IS MISSING: the site's browser test needs headless Chromium \
         (Debian: apt-get install -y chromium; .ci/run installs it). Not skipping."
    );
}

/// Run headless Chromium on `url` with `extra` flags, in a fresh profile, with nothing
/// fetched from the network. Returns (stdout, stderr).
pub fn headless(url: &str, extra: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = crate::common::run_ok(
        Command::new(chromium())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--enable-logging=stderr",
                "--v=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(url),
        &format!("chromium failed on {url}"),
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The console messages Chromium logged while loading a page (`:CONSOLE` lines).
pub fn console_messages(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

pub fn file_url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// The store of [`with_releases_and_a_move`] whose first recorded release has a version
/// holding SOH and a terminal colour sequence, as a release script pasting a terminal line
/// might record it.
pub fn with_control_characters() -> World {
    let w = with_releases_and_a_move();
    let text = w.read("history/roads.releases.toml").unwrap();
    let edited = text.replace(
        "version = \"2026.11\"",
        "version = \"2026.11\\u0001\\u001b[0m\"",
    );
    assert_ne!(edited, text, "the fixture names release 2026.11");
    w.write("history/roads.releases.toml", &edited);
    w
}

/// Whether `text` holds a character XML 1.0 forbids (a C0 control other than tab, newline
/// and carriage return) or HTML forbids in text (DEL and the C1 controls).
pub fn has_forbidden_control(text: &str) -> bool {
    text.chars().any(|c| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || ('\u{7f}'..='\u{9f}').contains(&c)
    })
}

/// Whether every tag of `xml` closes in order (a `<?...?>` or self-closing tag stands alone;
/// so does a `<!...>` when `bang_stands_alone`, else it must close like any tag): the one tag
/// walk of the SVG, page and JUnit checks.
pub fn tags_close_in_order(xml: &str, bang_stands_alone: bool) -> bool {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find('<') {
        let Some(j) = rest[i..].find('>') else {
            return false;
        };
        let tag = &rest[i + 1..i + j];
        rest = &rest[i + j + 1..];
        if tag.starts_with('?') || (bang_stands_alone && tag.starts_with('!')) || tag.ends_with('/')
        {
            continue;
        }
        let name = tag.split_whitespace().next().unwrap_or("");
        if let Some(closing) = name.strip_prefix('/') {
            if stack.pop() != Some(closing) {
                return false;
            }
        } else {
            stack.push(name);
        }
    }
    stack.is_empty()
}

/// Whether `xml` is well formed as far as a reader of SVG cares: every tag closes in order,
/// and every `&` starts an entity.
pub fn well_formed(xml: &str) -> bool {
    let entities = xml.split('&').skip(1).all(|after| {
        ["amp;", "lt;", "gt;", "quot;", "#"]
            .iter()
            .any(|e| after.starts_with(e))
    });
    tags_close_in_order(xml, true) && entities
}
