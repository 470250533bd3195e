//! The store configuration, `contracts.toml`: policy, custom clause kinds, notifier, SMTP and
//! consumption sources. Parsed strictly; every section has documented defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::kind::{Kind, KindTable};
use super::location::{from_toml, Located, TomlErrors};

/// `policy.new_clauses`: how a clause may enter a contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            min_window_days: 90,
            max_window_days: 365,
            new_clauses: NewClauses::Advisory,
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
    /// A claimed notice with no confirmation is taken for the claim of a run still sending
    /// for this many minutes; after that, for the claim of a run that died, and sent again.
    pub claim_stale_minutes: i64,
}

impl Default for Notify {
    fn default() -> Self {
        Notify {
            days_before: vec![60, 30, 14, 7, 1],
            overdue_every_days: 7,
            from: "Data Platform <data-platform@example.org>".to_string(),
            claim_stale_minutes: 60,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Consumption {
    /// Globs relative to the store root; JSON Lines (`.jsonl`, `.ndjson`) or CSV (`.csv`).
    pub sources: Vec<String>,
    pub lookback_days: i64,
}

impl Default for Consumption {
    fn default() -> Self {
        Consumption {
            sources: vec!["consumption/*.jsonl".to_string()],
            lookback_days: 30,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSection {
    /// The commit the immutability proofs start from, for a store adopted in a repository
    /// with earlier history.
    pub since: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawConfig {
    store: StoreSection,
    policy: Policy,
    kinds: BTreeMap<String, Spanned<CustomKind>>,
    notify: Notify,
    smtp: Smtp,
    consumption: Consumption,
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
}

/// Parse `contracts.toml`.
pub fn parse_config(file: &str, text: &str) -> Result<Config, TomlErrors> {
    let raw: RawConfig = from_toml(file, text)?;
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
        errors.push(Located::at(
            file,
            text,
            None,
            format!(
                "[policy] window bounds {}..{} days are not a range",
                p.min_window_days, p.max_window_days
            ),
        ));
    }
    if raw.notify.days_before.iter().any(|d| *d < 0)
        || raw.notify.overdue_every_days < 1
        || raw.notify.claim_stale_minutes < 0
    {
        errors.push(Located::at(
            file,
            text,
            None,
            "[notify] days_before and claim_stale_minutes must be non-negative and \
             overdue_every_days at least 1"
                .to_string(),
        ));
    }
    if raw.consumption.lookback_days < 1 {
        errors.push(Located::at(
            file,
            text,
            None,
            "[consumption] lookback_days must be at least 1".to_string(),
        ));
    }
    if !errors.is_empty() {
        return Err(TomlErrors(errors));
    }
    Ok(Config {
        store: raw.store,
        policy: raw.policy,
        kinds,
        notify: raw.notify,
        smtp: raw.smtp,
        consumption: raw.consumption,
    })
}
