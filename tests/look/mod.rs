//! What the tests of the pictures, pages and formats share: the hand-laid store of `world`
//! with recorded releases and a moved sunset, and headless Chromium.

use std::path::Path;
use std::process::Command;

use crate::world::World;

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
    let out = Command::new(chromium())
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
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed on {url}: {}",
        String::from_utf8_lossy(&out.stderr)
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
