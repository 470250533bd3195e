//! The store configuration, `contracts.toml`: policy, custom clause kinds, notifier, SMTP and
//! consumption sources. Parsed strictly; every section has documented defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::kind::{Kind, KindTable};
use super::location::{from_toml, Located, TomlErrors};
use super::source::{validate_source, RawSource, Source, SAME_READ_SECONDS};

/// `policy.new_clauses`: how a clause may enter a contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NewClauses {
    /// A new clause must be listed in `advisory` in the version that adds it.
    Advisory,
    /// A new clause may be enforced at once.
    Enforced,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Policy {
    pub min_window_days: i64,
    pub max_window_days: i64,
    pub new_clauses: NewClauses,
    /// The longest a waiver may run, in days from its grant to its `until`.
    pub max_waiver_days: i64,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            min_window_days: 90,
            max_window_days: 365,
            new_clauses: NewClauses::Advisory,
            max_waiver_days: 90,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomKind {
    pub kind: Kind,
    pub shape: String,
    pub metric: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Notify {
    /// Milestones, in days before a sunset.
    pub days_before: Vec<i64>,
    /// After the sunset, a reminder this often while a consumer still reads the old line.
    pub overdue_every_days: i64,
    pub from: String,
    /// Where `contracts site` is published; each notice links to its dataset's page there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry_url: Option<String>,
    /// A claimed notice with no confirmation is taken for the claim of a run still sending
    /// for this many minutes; after that, for the claim of a run that died, and sent again.
    pub claim_stale_minutes: i64,
    /// How long one webhook request may take before it counts as a timeout (and is retried).
    pub webhook_timeout_seconds: u64,
    /// Announce each window when it opens (the `published` notice), not only its countdown.
    pub announce: bool,
    /// A PEM file of root certificates that webhook deliveries trust beside the system's, for
    /// a receiver signed by a private CA; relative to the store root. (`[smtp] ca_file` is the
    /// relay's own.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
}

impl Default for Notify {
    fn default() -> Self {
        Notify {
            days_before: vec![60, 30, 14, 7, 1],
            overdue_every_days: 7,
            from: "Data Platform <data-platform@example.org>".to_string(),
            registry_url: None,
            claim_stale_minutes: 60,
            webhook_timeout_seconds: 10,
            announce: true,
            ca_file: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Tls {
    Starttls,
    Tls,
    None,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Smtp {
    pub host: String,
    pub port: u16,
    pub tls: Tls,
    /// Names of environment variables; the credentials themselves never live in a file.
    pub username_env: Option<String>,
    pub password_env: Option<String>,
    /// Seconds to wait for the connection and for each reply.
    #[serde(alias = "timeout_secs")]
    pub timeout_seconds: u64,
    /// A PEM file of root certificates added to the system's, for a relay signed by a private
    /// CA; relative to the store root.
    pub ca_file: Option<String>,
}

impl Default for Smtp {
    fn default() -> Self {
        Smtp {
            host: "localhost".to_string(),
            port: 587,
            tls: Tls::Starttls,
            username_env: None,
            password_env: None,
            timeout_seconds: 30,
            ca_file: None,
        }
    }
}

/// `[consumption]`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Consumption {
    /// Globs relative to the store root, read with the default mapping; the format from each
    /// file's name. Unset: `consumption/*.jsonl`, unless `[[consumption.source]]` tables
    /// are given.
    pub sources: Vec<String>,
    /// The `[[consumption.source]]` tables.
    pub tables: Vec<Source>,
    pub lookback_days: i64,
    /// A consumer with no read in this many days is `stale` (liveness in `consumers`).
    /// Unset: 30, or `lookback_days` when that is shorter (reads are only seen in the
    /// lookback).
    pub stale_after_days: Option<i64>,
    /// Below these a reader is incidental on a line.
    pub thresholds: Thresholds,
    /// The default of each access-log source's `same_read_seconds`.
    pub same_read_seconds: u64,
}

/// The usage thresholds of `[consumption]`: below them a reader is incidental on a line, and
/// its reads do not hold the line back from retiring (it is still told).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Thresholds {
    /// A consumer with fewer reads of a line in the lookback is incidental on it.
    pub min_reads: u64,
    /// A consumer whose reads of a line fall on fewer distinct days of the lookback is
    /// incidental on it.
    pub min_days: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            min_reads: 1,
            min_days: 1,
        }
    }
}

/// The default of `[consumption] stale_after_days`.
pub const STALE_AFTER_DAYS: i64 = 30;

/// The default of `[consumption] sources`.
pub const DEFAULT_SOURCES: &str = "consumption/*.jsonl";

impl Consumption {
    /// The staleness threshold in force.
    pub fn stale_after(&self) -> i64 {
        self.stale_after_days
            .unwrap_or(STALE_AFTER_DAYS.min(self.lookback_days))
    }

    /// Every source: the tables in the order written, then the `sources` globs.
    pub fn all_sources(&self) -> Vec<Source> {
        let mut all = self.tables.clone();
        all.extend(self.sources.iter().map(|g| Source::glob(g)));
        all
    }
}

impl Default for Consumption {
    fn default() -> Self {
        Consumption {
            sources: vec![DEFAULT_SOURCES.to_string()],
            tables: Vec::new(),
            lookback_days: 30,
            stale_after_days: None,
            thresholds: Thresholds::default(),
            same_read_seconds: SAME_READ_SECONDS,
        }
    }
}

/// `[consumption]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConsumption {
    sources: Option<Vec<String>>,
    #[serde(default)]
    source: Vec<RawSource>,
    #[serde(default = "default_lookback")]
    lookback_days: i64,
    stale_after_days: Option<i64>,
    same_read_seconds: Option<Spanned<i64>>,
    #[serde(default = "one")]
    min_reads: u64,
    #[serde(default = "one")]
    min_days: u64,
}

fn one() -> u64 {
    1
}

fn default_lookback() -> i64 {
    Consumption::default().lookback_days
}

impl Default for RawConsumption {
    fn default() -> Self {
        RawConsumption {
            sources: None,
            source: Vec::new(),
            lookback_days: default_lookback(),
            stale_after_days: None,
            same_read_seconds: None,
            min_reads: 1,
            min_days: 1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSection {
    /// The commit the immutability proofs start from, for a store adopted in a repository
    /// with earlier history.
    pub since: Option<String>,
    /// The git remote writers fetch from before and push to after each commit (`origin`), for
    /// a store shared through a git server. Unset: this checkout only.
    pub remote: Option<String>,
}

/// The default of `[review] drafts`.
pub const DEFAULT_DRAFTS: &str = "drafts/**/*.toml";

/// `[review]`: where `contracts review` finds the drafts of a pull request.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    /// Globs relative to the store root (`**` crosses folders, `*` does not); a committed file
    /// that matches one and changed since the base is a draft to review.
    pub drafts: Vec<String>,
}

impl Default for Review {
    fn default() -> Self {
        Review {
            drafts: vec![DEFAULT_DRAFTS.to_string()],
        }
    }
}

/// `[review]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawReview {
    drafts: Option<Vec<Spanned<String>>>,
}

/// `[review]` checked: each glob parses and stays inside the store.
fn validate_review(file: &str, text: &str, raw: RawReview, errors: &mut Vec<Located>) -> Review {
    let Some(globs) = raw.drafts else {
        return Review::default();
    };
    let mut drafts = Vec::new();
    for g in globs {
        let glob = g.get_ref();
        let problem = if let Err(e) = glob::Pattern::new(glob) {
            Some(format!("is not a glob: {}", e.msg))
        } else if glob.starts_with('/') || glob.split('/').any(|p| p == "..") {
            Some("must be relative to the store root and stay inside it".to_string())
        } else {
            None
        };
        match problem {
            Some(p) => errors.push(Located::at(
                file,
                text,
                Some(g.span()),
                format!("[review] drafts {glob:?} {p}"),
            )),
            None => drafts.push(glob.clone()),
        }
    }
    Review { drafts }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawConfig {
    store: StoreSection,
    policy: Policy,
    kinds: BTreeMap<String, Spanned<CustomKind>>,
    notify: Notify,
    smtp: Smtp,
    consumption: RawConsumption,
    review: RawReview,
}

/// The whole of `contracts.toml`, validated.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    pub store: StoreSection,
    pub policy: Policy,
    pub kinds: KindTable,
    pub notify: Notify,
    pub smtp: Smtp,
    pub consumption: Consumption,
    pub review: Review,
    /// Where some values are, for errors found after parsing (`[store] since` that does
    /// not resolve, an `[smtp] host` or `[notify] from` that the mailer refuses): keyed by
    /// `section.key`, each a [`Located`] whose message is to be filled in.
    pub locations: BTreeMap<String, Located>,
}

impl Config {
    /// `message` about the value at `key` (`section.key`), with the file, line and column
    /// when the file sets it.
    pub fn error_at(&self, key: &str, message: &str) -> String {
        match self.locations.get(key) {
            Some(l) => Located {
                message: super::location::short(message),
                ..l.clone()
            }
            .to_string(),
            None => message.to_string(),
        }
    }
}

/// The keys whose place in the file is kept for later errors.
const LOCATED: [(&str, &str); 11] = [
    ("store", "since"),
    ("smtp", "host"),
    ("notify", "from"),
    ("notify", "days_before"),
    ("notify", "overdue_every_days"),
    ("policy", "min_window_days"),
    ("policy", "max_window_days"),
    ("consumption", "lookback_days"),
    ("consumption", "stale_after_days"),
    ("consumption", "min_reads"),
    ("consumption", "min_days"),
];

/// The places of the [`LOCATED`] keys, from a second, lenient read of the same text.
fn locations(file: &str, text: &str) -> BTreeMap<String, Located> {
    type Sections = BTreeMap<String, BTreeMap<String, Spanned<toml::Value>>>;
    let Ok(sections) = toml::from_str::<Sections>(text) else {
        return BTreeMap::new();
    };
    LOCATED
        .iter()
        .filter_map(|(section, key)| {
            let v = sections.get(*section)?.get(*key)?;
            Some((
                format!("{section}.{key}"),
                Located::at(file, text, Some(v.span()), String::new()),
            ))
        })
        .collect()
}

/// Parse `contracts.toml`.
pub fn parse_config(file: &str, text: &str) -> Result<Config, TomlErrors> {
    let raw: RawConfig = from_toml(file, text)?;
    let locations = locations(file, text);
    let at = |key: &str, message: String| match locations.get(key) {
        Some(l) => Located {
            message,
            ..l.clone()
        },
        None => Located::at(file, text, None, message),
    };
    let mut errors = Vec::new();
    let mut kinds = KindTable::builtin();
    for (name, row) in &raw.kinds {
        let r = row.get_ref();
        if let Err(e) = kinds.add_custom(name, r.kind, &r.shape, r.metric.as_deref()) {
            errors.push(Located::at(file, text, Some(row.span()), e.to_string()));
        }
    }
    let p = &raw.policy;
    if p.min_window_days < 0 || p.max_window_days < p.min_window_days {
        let key = if p.min_window_days < 0 {
            "policy.min_window_days"
        } else {
            "policy.max_window_days"
        };
        errors.push(at(
            key,
            format!(
                "[policy] window bounds {}..{} days are not a range",
                p.min_window_days, p.max_window_days
            ),
        ));
    }
    if p.max_waiver_days < 0 {
        errors.push(Located::at(
            file,
            text,
            None,
            "[policy] max_waiver_days must be non-negative".to_string(),
        ));
    }
    if raw.notify.days_before.iter().any(|d| *d < 0)
        || raw.notify.overdue_every_days < 1
        || raw.notify.claim_stale_minutes < 0
    {
        let key = if raw.notify.overdue_every_days < 1 {
            "notify.overdue_every_days"
        } else if raw.notify.claim_stale_minutes < 0 {
            "notify.claim_stale_minutes"
        } else {
            "notify.days_before"
        };
        errors.push(at(
            key,
            "[notify] days_before and claim_stale_minutes must be non-negative and \
             overdue_every_days at least 1"
                .to_string(),
        ));
    }
    if !(1..=300).contains(&raw.notify.webhook_timeout_seconds) {
        errors.push(at(
            "notify.webhook_timeout_seconds",
            format!(
                "[notify] webhook_timeout_seconds must be 1 to 300, not {}",
                raw.notify.webhook_timeout_seconds
            ),
        ));
    }
    if let Some(url) = &raw.notify.registry_url {
        let scheme = url.split_once("://").map(|(s, _)| s);
        if !matches!(scheme, Some("http" | "https" | "file")) || url.contains(char::is_whitespace) {
            errors.push(Located::at(
                file,
                text,
                None,
                format!(
                    "[notify] registry_url {url:?} must be an absolute http, https or file URL \
                     (where `contracts site` is published)"
                ),
            ));
        }
    }
    if raw.consumption.lookback_days < 1 {
        errors.push(at(
            "consumption.lookback_days",
            "[consumption] lookback_days must be at least 1".to_string(),
        ));
    }
    if let Some(days) = raw.consumption.stale_after_days {
        if days < 1 || days > raw.consumption.lookback_days {
            errors.push(at(
                "consumption.stale_after_days",
                format!(
                    "[consumption] stale_after_days must be from 1 to lookback_days ({}): \
                     reads are only seen in the lookback",
                    raw.consumption.lookback_days
                ),
            ));
        }
    }
    if raw.consumption.min_reads < 1 {
        errors.push(at(
            "consumption.min_reads",
            "[consumption] min_reads must be at least 1".to_string(),
        ));
    }
    let lookback = u64::try_from(raw.consumption.lookback_days).unwrap_or(0);
    if raw.consumption.min_days < 1 || raw.consumption.min_days > lookback {
        errors.push(at(
            "consumption.min_days",
            format!(
                "[consumption] min_days must be from 1 to lookback_days ({}): reads are only \
                 seen in the lookback",
                raw.consumption.lookback_days
            ),
        ));
    }
    let same_read_seconds = match &raw.consumption.same_read_seconds {
        None => SAME_READ_SECONDS,
        Some(s) => u64::try_from(*s.get_ref()).unwrap_or_else(|_| {
            errors.push(Located::at(
                file,
                text,
                Some(s.span()),
                "[consumption] same_read_seconds must be non-negative".to_string(),
            ));
            0
        }),
    };
    let review = validate_review(file, text, raw.review, &mut errors);
    let c = raw.consumption;
    let tables: Vec<Source> = c
        .source
        .into_iter()
        .filter_map(|t| validate_source(file, text, t, same_read_seconds, &mut errors))
        .collect();
    let consumption = Consumption {
        // With tables and no `sources`, the tables are all the sources.
        sources: c.sources.unwrap_or_else(|| {
            if tables.is_empty() {
                vec![DEFAULT_SOURCES.to_string()]
            } else {
                Vec::new()
            }
        }),
        tables,
        lookback_days: c.lookback_days,
        stale_after_days: c.stale_after_days,
        same_read_seconds,
        thresholds: Thresholds {
            min_reads: c.min_reads,
            min_days: c.min_days,
        },
    };
    if !errors.is_empty() {
        return Err(TomlErrors::in_line_order(errors));
    }
    Ok(Config {
        store: raw.store,
        policy: raw.policy,
        kinds,
        notify: raw.notify,
        smtp: raw.smtp,
        consumption,
        review,
        locations,
    })
}
