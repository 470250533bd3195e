//! The one harness of the CLI tests: a temporary HOME of the test's own and a directory for
//! the store, the real binary run in them with a fixed `--today` (see `hermetic.rs`). A world
//! starts empty ([`World::empty`]: the test makes its store with `contracts init`, or needs
//! none) or holds the notify fixture ([`World::new`]: a store laid out by hand and committed
//! with plain git; the tool reads the store at HEAD; consumption logs are the platform's files
//! and stay uncommitted) that mails through a real SMTP server on loopback.

use std::path::Path;
use std::process::Command;

use chrono::NaiveDate;

// Every test crate that includes this module includes `tests/common` too.
use crate::common as hermetic;
pub use crate::common::smtp::{closed_port, Mail, SmtpServer};
use crate::common::Rows;
pub use crate::common::Run;

pub const SUNSET: &str = "2027-01-15";

/// Why [`World::waive_crs`] waives.
pub const CRS_WAIVER_REASON: &str = "The reprojection job is down; fixed next week";

/// The git identity the world's runs commit as.
pub const NOTIFIER: (&str, &str) = ("Notifier", "notifier@example.org");

pub fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

/// Days from `today` to the fixture's sunset, computed here rather than read off the output.
pub fn days_left(today: &str) -> i64 {
    (day(SUNSET) - day(today)).num_days()
}

pub struct World {
    /// Where [`World::new`] lays out its store; empty in [`World::empty`].
    pub dir: tempfile::TempDir,
    pub home: tempfile::TempDir,
    /// The day [`World::command`] and [`World::run_in`] run on (`CONTRACTS_TODAY`).
    pub today: String,
    /// The instant those runs record (`CONTRACTS_NOW`): 09:00 UTC of `today` unless a test
    /// clears it to use the system clock.
    pub now: Option<String>,
}

impl World {
    /// A HOME and an empty directory: where a test that makes its own store (or runs no
    /// store command) starts.
    pub fn empty() -> World {
        World {
            dir: tempfile::tempdir().expect("temp dir"),
            home: tempfile::tempdir().expect("temp dir"),
            today: "2026-11-29".to_string(),
            now: Some("2026-11-29T09:00:00Z".to_string()),
        }
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// A command for the binary, run in `dir`, with the hermetic environment, the fixed
    /// author, [`World::today`] and [`World::now`].
    pub fn command(&self, dir: &Path) -> Command {
        let mut c = hermetic::contracts(self.home());
        c.current_dir(dir).env("CONTRACTS_TODAY", &self.today);
        if let Some(now) = &self.now {
            hermetic::fix_clock(&mut c, now);
        }
        c
    }

    pub fn run_in(&self, dir: &Path, args: &[&str]) -> Run {
        Run::of(self.command(dir).args(args).output().expect("binary runs"))
    }

    /// The world with roads 1.1.0 and 2.0.0 rewritten so 2.0.0 changes a map clause
    /// (`required_attributes`: `CNTY_` dropped, `CNTY_ID` float64 -> int64) and the CRS, with
    /// its breaking change record: what a notice must spell out with old and new values.
    pub fn with_a_map_change(smtp_port: u16) -> World {
        let w = World::new(smtp_port);
        w.write(
            "contracts/roads/1.1.0.toml",
            "dataset = \"roads\"\nversion = \"1.1.0\"\nsupersedes = \"1.0.0\"\n\
             valid_from = 2026-03-01\n[clauses]\ncrs = \"EPSG:4326\"\n\
             required_attributes = { CNTY_ = \"float64\", CNTY_ID = \"float64\", NAME = \"string\" }\n",
        );
        w.write(
            "contracts/roads/2.0.0.toml",
            &format!(
                "dataset = \"roads\"\nversion = \"2.0.0\"\nsupersedes = \"1.1.0\"\n\
                 valid_from = 2026-11-01\nsunset = {}\n[clauses]\ncrs = \"EPSG:27700\"\n\
                 required_attributes = {{ CNTY_ID = \"int64\", NAME = \"string\" }}\n",
                SUNSET
            ),
        );
        w.append(
            "history/roads.toml",
            &format!(
                "\n{}",
                breaking_change(
                    "required_attributes",
                    "County ids are integers; the duplicate column goes."
                )
            ),
        );
        w
    }

    /// roads 1.0.0, 1.1.0 and 2.0.0 (sunset of line 1 on 2027-01-15), a breaking change record,
    /// four registered consumers and a log in which:
    /// flood-model still reads 1.1.0; atlas reads 1.1.0 (and 2.0.0 only after the test days);
    /// router moved from 1.1.0 to 2.0.0; archive is silent; ghost is not registered.
    pub fn new(smtp_port: u16) -> World {
        let w = World::empty();
        w.git(&["init", "-q"]);
        w.write("contracts.toml", &config(smtp_port));
        w.write(
            "consumers.toml",
            &registry(FLOOD_AND_LEAD, [Some(""), Some(""), Some(""), Some("")]),
        );
        w.write(
            "contracts/roads/1.0.0.toml",
            "dataset = \"roads\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
             [clauses]\ncrs = \"EPSG:4326\"\n",
        );
        w.write(
            "contracts/roads/1.1.0.toml",
            "dataset = \"roads\"\nversion = \"1.1.0\"\nsupersedes = \"1.0.0\"\n\
             valid_from = 2026-03-01\n[clauses]\ncrs = \"EPSG:4326\"\n",
        );
        w.write(
            "contracts/roads/2.0.0.toml",
            &format!(
                "dataset = \"roads\"\nversion = \"2.0.0\"\nsupersedes = \"1.1.0\"\n\
                 valid_from = 2026-11-01\nsunset = {SUNSET}\n[clauses]\ncrs = \"EPSG:27700\"\n"
            ),
        );
        w.write(
            "history/roads.toml",
            &breaking_change(
                "crs",
                "Move to British National Grid — to match the other layers.",
            ),
        );
        w.write(
            "consumption/reads.jsonl",
            concat!(
                r#"{"at":"2026-11-28T03:00:00Z","consumer":"flood-model","dataset":"roads","contract":"1.1.0"}"#, "\n",
                r#"{"at":"2026-11-20T03:00:00Z","consumer":"router","dataset":"roads","contract":"1.1.0"}"#, "\n",
                r#"{"at":"2026-11-25T03:00:00Z","consumer":"router","dataset":"roads","contract":"2.0.0"}"#, "\n",
                r#"{"at":"2026-11-26T03:00:00Z","consumer":"ghost","dataset":"roads","contract":"1.0.0"}"#, "\n",
                r#"{"at":"2026-11-26T03:00:00Z","consumer":"archive","dataset":"rivers","contract":"1.0.0"}"#, "\n",
            ),
        );
        w.write(
            "consumption/platform.csv",
            "at,consumer,dataset,contract\n\
             2026-11-27T03:00:00Z,atlas,roads,1.1.0\n\
             2027-03-01T03:00:00Z,atlas,roads,2.0.0\n",
        );
        w
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Write a file; a store file (anything but a consumption log) is committed at once.
    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        if !rel.starts_with("consumption/") {
            self.git(&["add", rel]);
            self.git(&["commit", "-q", "-m", &format!("fixture: {rel}")]);
        }
    }

    pub fn git(&self, args: &[&str]) -> String {
        crate::common::git_as(
            self.root(),
            self.home.path(),
            ("Fixture", "fixture@example.org"),
            args,
        )
    }

    /// Append to a file; like `write`, a store file is committed at once.
    pub fn append(&self, rel: &str, text: &str) {
        let mut content = self.read(rel).unwrap_or_default();
        content.push_str(text);
        self.write(rel, &content);
    }

    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.root().join(rel)).ok()
    }

    pub fn set_smtp_port(&self, port: u16) {
        self.write("contracts.toml", &config(port));
    }

    /// Run the real binary in the store on `today`.
    pub fn run(&self, today: &str, args: &[&str]) -> Run {
        self.run_env(today, args, &[])
    }

    pub fn run_env(&self, today: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = hermetic::contracts_as(self.home.path(), NOTIFIER);
        cmd.current_dir(self.root())
            .arg("--repo")
            .arg(self.root())
            .arg("--today")
            .arg(today)
            .args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Run::of(cmd.output().unwrap())
    }

    /// Run the real binary in the store on `today` with stdout on a pseudo-terminal `cols`
    /// columns wide (util-linux `script`), and return what it printed there, ANSI colour
    /// codes removed and line ends as `\n`. Its stderr is dropped: only the data is looked at.
    pub fn run_pty(&self, today: &str, args: &[&str], cols: u16) -> String {
        let inner = hermetic::contracts_as(self.home.path(), NOTIFIER);
        let mut cmd = std::process::Command::new("script");
        cmd.env_clear();
        for (k, v) in inner.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        let line = format!(
            "stty rows 24 cols {cols}; exec '{}' --repo '{}' --today {today} --color always {} 2>/dev/null",
            env!("CARGO_BIN_EXE_contracts"),
            self.root().display(),
            args.iter().map(|a| format!("'{a}'")).collect::<Vec<_>>().join(" ")
        );
        let out = cmd
            .args(["-qec", &line, "/dev/null"])
            .current_dir(self.root())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("util-linux `script` runs");
        let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
        strip_ansi(&text)
    }

    /// The notices recorded in the ledger, as (consumer, milestone).
    pub fn ledger(&self) -> Vec<(String, String)> {
        let Some(text) = self.read("notifications/roads.toml") else {
            return Vec::new();
        };
        notice_keys(&text)
    }

    /// `--format json consumers roads` on `today`, which must exit 0: the standings most
    /// consumption tests read.
    #[track_caller]
    pub fn consumers_json(&self, today: &str) -> Run {
        let run = self.run(today, &["--format", "json", "consumers", "roads"]);
        run.assert_code(0);
        run
    }

    /// `--format json can-retire roads 1` on `today`: the question most retirement tests ask.
    pub fn can_retire_line_1_json(&self, today: &str) -> Run {
        self.run(today, &["--format", "json", "can-retire", "roads", "1"])
    }

    /// Read the consumption only through `sources` (`[[consumption.source]]` tables) from now
    /// on: the world's own glob of logs is taken out of its current config.
    pub fn read_only_sources(&self, sources: &str) {
        let config = self.read("contracts.toml").unwrap().replace(
            "sources = [\"consumption/*.jsonl\", \"consumption/*.csv\"]\n",
            "",
        );
        self.write("contracts.toml", &format!("{config}\n{sources}"));
    }

    /// Write `tables` (`[[consumption.source]]` tables) after the world's config and assert
    /// that `check` reports (exit 1), and a command refuses (exit 2), saying each of
    /// `needles(config)`: the places and reasons, worked out from the config as written.
    #[track_caller]
    pub fn assert_sources_refused(&self, tables: &str, needles: impl Fn(&str) -> Vec<String>) {
        self.write("contracts.toml", &format!("{}\n{tables}", config(25)));
        let needles = needles(&self.read("contracts.toml").unwrap());
        for (args, code) in [(&["check"][..], 1), (&["consumers", "roads"], 2)] {
            let run = self.run("2026-11-29", args);
            run.assert_code(code);
            let said = format!("{}{}", run.stdout(), run.stderr());
            for needle in &needles {
                assert!(said.contains(needle), "{args:?}: no {needle} in {said}");
            }
            assert!(!said.contains("cannot be read yet"), "{said}");
        }
    }

    /// Assert that no tracked file is staged or modified, failing with `message`: what every
    /// run after a killed one must leave (it repairs what the kill left behind HEAD).
    #[track_caller]
    pub fn assert_checkout_clean(&self, message: &str) {
        assert_eq!(
            self.git(&["status", "--porcelain", "--untracked-files=no"]),
            "",
            "{message}"
        );
    }

    /// Waive line 1's `crs` until 2026-12-20 for [`CRS_WAIVER_REASON`] on `today`, which must
    /// succeed: the waiver the notify tests have told to consumers.
    pub fn waive_crs(&self, today: &str) {
        self.run(
            today,
            &[
                "waive",
                "roads",
                "crs",
                "--line",
                "1",
                "--until",
                "2026-12-20",
                "--reason",
                CRS_WAIVER_REASON,
            ],
        )
        .assert_code(0);
    }

    /// The ledger's `table` entries (`notice`, `waiver`, ...) delivered by `channel` (an entry
    /// naming none is `mail`), as (consumer, milestone): the webhook tests' view of a ledger.
    pub fn ledger_entries(&self, table: &str, channel: &str) -> Vec<(String, String)> {
        let Some(text) = self.read("notifications/roads.toml") else {
            return Vec::new();
        };
        let v: toml::Value = toml::from_str(&text).unwrap();
        v.get(table)
            .and_then(|t| t.as_array())
            .into_iter()
            .flatten()
            .filter(|n| n.get("channel").and_then(|c| c.as_str()).unwrap_or("mail") == channel)
            .map(|n| {
                (
                    n["consumer"].as_str().unwrap().to_string(),
                    n["milestone"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

/// `v` sorted: a ledger or a list of statuses compared without its order.
pub fn sorted(mut v: Vec<(String, String)>) -> Vec<(String, String)> {
    v.sort();
    v
}

/// `items` as owned pairs, sorted: the expected side of a [`sorted`] comparison.
pub fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    sorted(
        items
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
    )
}

/// The `[[change]]` record of a breaking change of `clause` from roads 1.1.0 to 2.0.0 in the
/// world's window (opens 2026-11-01, line 1 sunsets on [`SUNSET`]), for `rationale`.
fn breaking_change(clause: &str, rationale: &str) -> String {
    format!(
        r#"[[change]]
at        = 2026-10-01T17:00:00Z
from      = "1.1.0"
to        = "2.0.0"
clause    = "{clause}"
kind      = "fixed"
direction = "changed"
verdict   = "breaking"
window    = {{ opens = 2026-11-01, sunset = {SUNSET} }}
rationale = "{rationale}"
"#
    )
}

/// The findings of a `--format json check` run about the ledgers (`notifications/`): the
/// world's hand-made contracts have findings of their own (no change records), which the
/// notify tests leave aside.
pub fn ledger_findings(check: &Run) -> Vec<serde_json::Value> {
    check.json()["findings"]
        .rows()
        .filter(|f| f["file"].as_str().unwrap().starts_with("notifications/"))
        .cloned()
        .collect()
}

/// The `[[notice]]` entries of a ledger's text.
pub fn notices(ledger: &str) -> Vec<toml::Value> {
    let v: toml::Value = toml::from_str(ledger).unwrap();
    v["notice"].as_array().unwrap().clone()
}

/// The notices of a ledger's text, as (consumer, milestone).
pub fn notice_keys(ledger: &str) -> Vec<(String, String)> {
    notices(ledger)
        .iter()
        .map(|n| {
            (
                n["consumer"].as_str().unwrap().to_string(),
                n["milestone"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// flood-model's contacts in the world's own registry: the on-call list and a named lead.
pub const FLOOD_AND_LEAD: &str = r#"["hydro-oncall@example.org", "Hydro Lead <lead@example.org>"]"#;
/// flood-model's contacts without the lead.
pub const FLOOD_ONCALL: &str = r#"["hydro-oncall@example.org"]"#;

/// A `consumers.toml` of the world's consumers, in this order: flood-model (Hydrology, with
/// `flood_contacts`), atlas (Cartography), router (Routing) and archive (no team). Each
/// entry of `extra` is that consumer's further lines (`""` for none); a `None` leaves the
/// consumer out.
pub fn registry(flood_contacts: &str, extra: [Option<&str>; 4]) -> String {
    let flood = format!("team = \"Hydrology\"\ncontacts = {flood_contacts}");
    let heads = [
        ("flood-model", flood.as_str()),
        (
            "atlas",
            "team = \"Cartography\"\ncontacts = [\"atlas@example.org\"]",
        ),
        (
            "router",
            "team = \"Routing\"\ncontacts = [\"routing@example.org\"]",
        ),
        ("archive", "contacts = [\"records@example.org\"]"),
    ];
    let mut out = String::new();
    for ((name, head), extra) in heads.iter().zip(extra) {
        let Some(extra) = extra else { continue };
        out.push_str(&format!("\n[consumers.{name}]\n{head}\n"));
        if !extra.is_empty() {
            out.push_str(extra);
            out.push('\n');
        }
    }
    out
}

/// The world's config with `[kinds]` declaring `min_feature_count` a narrowing lower bound on
/// the feature count: the custom clause the CI-format and export tests check.
pub fn with_feature_count_kind(w: &World) {
    w.write(
        "contracts.toml",
        &format!(
            "{}\n[kinds]\nmin_feature_count = {{ kind = \"narrowing\", shape = \"lower_bound\", metric = \"feature_count\" }}\n",
            config(25)
        ),
    );
}

/// The world's registry with flood-model an automation, atlas's further lines `atlas`, and
/// the usage thresholds of two reads on two days.
pub fn with_thresholds(w: &World, atlas: &str) {
    w.write(
        "consumers.toml",
        &registry(
            FLOOD_ONCALL,
            [
                Some("kind = \"automation\""),
                Some(atlas),
                Some(""),
                Some(""),
            ],
        ),
    );
    w.append("contracts.toml", "min_reads = 2\nmin_days = 2\n");
}

pub fn config(smtp_port: u16) -> String {
    format!(
        r#"[notify]
days_before = [60, 30, 14, 7, 1]
overdue_every_days = 7
from = "Data Platform <data-platform@example.org>"
# The countdown alone: tests of the `published` announcement turn it on.
announce = false

[smtp]
host = "127.0.0.1"
port = {smtp_port}
tls = "none"

[consumption]
sources = ["consumption/*.jsonl", "consumption/*.csv"]
lookback_days = 365
"#
    )
}

/// The 1-based line of the first line of `text` that starts with `prefix`: tests expecting a
/// `file:line:col` count the line in the text they wrote, so a change to [`config`] moves the
/// expectation with it.
pub fn line_of(text: &str, prefix: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starts with {prefix:?} in\n{text}"))
        + 1
}

/// A relay on loopback and the world that mails through it: where most notify tests start.
pub fn with_relay() -> (SmtpServer, World) {
    let smtp = SmtpServer::start();
    let w = World::new(smtp.port);
    (smtp, w)
}

/// `text` without its ANSI escape sequences (`ESC [ ... letter`).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A field of a JSON object as text: `None` when it is absent or not a string.
pub fn text(v: &serde_json::Value, key: &str) -> Option<String> {
    v[key].as_str().map(str::to_string)
}

/// Each standing of a `consumers --format json` run, as `f` makes it, in the order printed.
pub fn standings<T>(run: &Run, f: impl Fn(&serde_json::Value) -> T) -> Vec<T> {
    run.json()["consumers"].rows().map(f).collect()
}

/// (consumer, status, reads, days) of a list of standings in JSON (a holder of `can-retire`).
pub fn counted(list: &serde_json::Value) -> Vec<(String, String, u64, u64)> {
    list.rows()
        .map(|s| {
            (
                s["consumer"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
                s["usage"]["reads"].as_u64().unwrap_or(0),
                s["usage"]["days"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// One expected row of `counted`.
pub fn counted_row(name: &str, status: &str, reads: u64, days: u64) -> (String, String, u64, u64) {
    (name.to_string(), status.to_string(), reads, days)
}

/// An S3 server access log line, in the field order of AWS's "Amazon S3 server access log
/// format" (bucket owner, bucket, [time], remote IP, requester, request ID, operation, key,
/// "request-URI", status, error code, bytes sent, object size, total time, turn-around time,
/// "referer", "user-agent", version id, host id, signature version, cipher suite, auth type,
/// host header, TLS version, access point ARN, ACL required).
pub fn s3_line(
    time: &str,
    requester: &str,
    op: &str,
    key: &str,
    status: u16,
    bytes: &str,
) -> String {
    let method = if op.contains("HEAD") { "HEAD" } else { "GET" };
    format!(
        "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be open-data \
         [{time} +0000] 2001:db8::7 {requester} 3E57427F3EXAMPLE {op} {key} \
         \"{method} /{key} HTTP/1.1\" {status} - {bytes} 104857600 70 10 \"-\" \
         \"GDAL/3.8.4 (Linux x86_64) libcurl/8.5.0\" - \
         s9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6UkFVdtjf5mKR3/eTPFvsiP/XV/VLi31234= SigV4 \
         ECDHE-RSA-AES128-GCM-SHA256 AuthHeader open-data.s3.eu-west-1.amazonaws.com TLSv1.3 - -\n"
    )
}
