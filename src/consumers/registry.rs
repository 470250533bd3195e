//! The consumer registry, `consumers.toml` (docs/src/reference/consumers-toml.md): who reads the
//! datasets and how to reach them. Parsed strictly; every contact must be one valid mailbox,
//! because a contact is put into an email header and a line break there would let a registry entry
//! inject headers.

use std::collections::BTreeMap;

use lettre::message::Mailbox;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::claims::ClaimIndex;
use crate::model::{is_dataset_name, Located, Locator, TomlErrors, Use};

/// One registered consumer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Consumer {
    pub name: String,
    pub team: Option<String>,
    /// Where notices go, as written in the registry (each one checked to be a mailbox).
    pub contacts: Vec<String>,
    /// The datasets it reads, each with what it relies on. `None` (no `datasets` key): it
    /// may read any dataset and relies on everything, the meaning of a registry written
    /// before consumers declared their datasets.
    pub datasets: Option<BTreeMap<String, Subscription>>,
    /// What kind of reader it is: an automation's reads never hold a line back from
    /// retiring, though it is told like any consumer.
    pub kind: ConsumerKind,
    /// The principals it reads as (exact strings or globs), as logs name them: an IAM role's
    /// session ARNs, an API key, a user.
    pub identities: Vec<Identity>,
    /// Webhooks that are told too, each a channel of its own in the ledger.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub webhooks: Vec<Webhook>,
}

/// `kind` in `consumers.toml`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ConsumerKind {
    /// A system or a team that relies on the data (the default).
    #[default]
    Consumer,
    /// A CI robot, a monitor, a crawler: reads that show the data is reachable, not that
    /// anyone relies on it.
    Automation,
}

pub use super::claims::Identity;

/// Who a principal is: the consumer whose identities claim it, else the consumer of that
/// name; `Ambiguous` when identities of several consumers claim it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim<'a> {
    Consumer(&'a str),
    Ambiguous(Vec<&'a str>),
    Unclaimed,
}

/// The payload a webhook receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WebhookKind {
    /// Signed JSON, Standard Webhooks headers.
    Generic,
    /// A Slack incoming webhook (blocks).
    Slack,
    /// A Teams Workflows webhook (an Adaptive Card).
    Teams,
}

impl std::fmt::Display for WebhookKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WebhookKind::Generic => "generic",
            WebhookKind::Slack => "slack",
            WebhookKind::Teams => "teams",
        })
    }
}

/// One webhook of a consumer. Only the names of the environment variables are kept: a
/// webhook URL is a credential, read at send time and never printed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Webhook {
    pub name: String,
    pub kind: WebhookKind,
    pub url_env: String,
    /// The Standard Webhooks secret (`whsec_<base64>`); generic webhooks only.
    pub secret_env: Option<String>,
}

impl Webhook {
    /// Its channel in the ledger.
    pub fn channel(&self) -> String {
        format!("webhook:{}", self.name)
    }
}

/// One dataset a consumer reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subscription {
    /// What it relies on; `None` is everything (the safe default).
    pub uses: Option<Vec<Use>>,
    /// Where each `uses` entry is written, in the same order, for `check`'s findings.
    #[serde(skip)]
    pub places: Vec<Located>,
}

impl Consumer {
    /// Whether it is subscribed to `dataset`: it lists it, or lists no dataset at all.
    pub fn subscribes(&self, dataset: &str) -> bool {
        self.datasets
            .as_ref()
            .is_none_or(|d| d.contains_key(dataset))
    }

    /// What it relies on in `dataset`; `None` is everything.
    pub fn uses(&self, dataset: &str) -> Option<&[Use]> {
        self.datasets.as_ref()?.get(dataset)?.uses.as_deref()
    }
}

/// Every registered consumer, by name.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Registry {
    pub consumers: BTreeMap<String, Consumer>,
    /// Their identities indexed (`claims.rs`): made by [`Registry::new`], the one way to
    /// make a registry of consumers.
    #[serde(skip)]
    claims: ClaimIndex,
}

impl Registry {
    /// The registry of `consumers`, their identities indexed (`claims.rs`).
    pub fn new(consumers: BTreeMap<String, Consumer>) -> Registry {
        let claims = ClaimIndex::of(
            consumers
                .values()
                .map(|c| (c.name.as_str(), c.identities.as_slice())),
        );
        Registry { consumers, claims }
    }

    /// Who `principal` (a log's consumer value) is: looked up in the identities first, then
    /// as a registered name.
    pub fn claim(&self, principal: &str) -> Claim<'_> {
        let mut claimants = self.claims.claimants(principal).into_iter();
        match (claimants.next(), claimants.len()) {
            (Some(one), 0) => Claim::Consumer(one),
            (None, _) => match self.consumers.get_key_value(principal) {
                Some((name, _)) => Claim::Consumer(name),
                None => Claim::Unclaimed,
            },
            (Some(first), _) => Claim::Ambiguous(std::iter::once(first).chain(claimants).collect()),
        }
    }

    /// Identities that claim what another consumer's identity or name names
    /// ([`super::claims::conflicts`]).
    pub fn identity_conflicts(&self) -> Vec<(Located, String)> {
        let consumers: Vec<(&str, &[Identity])> = self
            .consumers
            .values()
            .map(|c| (c.name.as_str(), c.identities.as_slice()))
            .collect();
        super::claims::conflicts(&consumers)
    }

    pub fn get(&self, name: &str) -> Option<&Consumer> {
        self.consumers.get(name)
    }

    /// Whether any consumer lists identities (without, every principal is its own name).
    pub fn has_identities(&self) -> bool {
        !self.claims.is_empty()
    }

    /// Each consumer subscribed to `dataset`, by name, with its verdict on `changes`.
    pub fn impacts(
        &self,
        dataset: &str,
        changes: &[crate::model::Change],
    ) -> Vec<crate::model::Impact> {
        crate::model::impacts(
            self.subscribers(dataset)
                .map(|c| (c.name.as_str(), c.uses(dataset))),
            changes,
        )
    }

    /// The consumers subscribed to `dataset`, by name.
    pub fn subscribers<'a>(&'a self, dataset: &'a str) -> impl Iterator<Item = &'a Consumer> + 'a {
        self.consumers
            .values()
            .filter(move |c| c.subscribes(dataset))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConsumer {
    team: Option<String>,
    #[serde(default)]
    kind: ConsumerKind,
    contacts: Spanned<Vec<Spanned<String>>>,
    datasets: Option<BTreeMap<Spanned<String>, RawSubscription>>,
    #[serde(default)]
    identities: Vec<Spanned<String>>,
    #[serde(default)]
    webhooks: Vec<Spanned<RawWebhook>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWebhook {
    kind: WebhookKind,
    url_env: String,
    secret_env: Option<String>,
    name: Option<String>,
}

/// Whether `name` may name an environment variable (and so be read without surprise).
fn is_env_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && !b[0].is_ascii_digit()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSubscription {
    uses: Option<Vec<Spanned<String>>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawRegistry {
    consumers: BTreeMap<Spanned<String>, RawConsumer>,
}

/// Whether `name` may name a consumer: it ends up in Message-IDs and ledger keys, so it is
/// kept to letters, digits, `_` and `-`.
pub fn is_consumer_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
}

/// Check that `contact` is exactly one mailbox (`a@b.org` or `Name <a@b.org>`).
///
/// lettre's parser stops at the end of the first mailbox and ignores what follows, so
/// `a@b.org, c@d.org` or `a@b.org\r\nBcc: x@y` would parse; both are refused here.
pub fn check_mailbox(contact: &str) -> Result<Mailbox, String> {
    if let Some(mailbox) = plain_address(contact) {
        return Ok(mailbox);
    }
    if contact.chars().any(char::is_control) {
        return Err("it contains a line break or another control character".to_string());
    }
    let mailbox: Mailbox = contact
        .parse()
        .map_err(|_| "write it as `name@domain` or `Name <name@domain>`".to_string())?;
    let t = contact.trim();
    let email = mailbox.email.to_string();
    let whole = t == email || (t.ends_with('>') && t.contains(&format!("<{email}>")));
    if !whole || t.matches('@').count() != 1 {
        return Err("it must hold exactly one mailbox".to_string());
    }
    Ok(mailbox)
}

/// `contact` as a mailbox when it is a bare address of the plainest form, `local@domain`
/// with each side dot-separated runs of ASCII letters, digits and `_`, `+`, `-` (and the
/// domain's runs not starting or ending with `-`): what nearly every contact is, and what the
/// full parser above always takes as that one address. It is built by lettre's `Address::new`
/// without the general parser, which costs a registry of ten thousand consumers a quarter of
/// its parse. `None` sends anything else to the general parser.
fn plain_address(contact: &str) -> Option<Mailbox> {
    let (user, domain) = contact.split_once('@')?;
    let runs = |part: &str, ok: fn(u8) -> bool| {
        !part.is_empty() && part.split('.').all(|r| !r.is_empty() && r.bytes().all(ok))
    };
    let user_ok = runs(user, |c| {
        c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'-')
    });
    let domain_ok = runs(domain, |c| c.is_ascii_alphanumeric() || c == b'-')
        && domain
            .split('.')
            .all(|r| !r.starts_with('-') && !r.ends_with('-'));
    if !(user_ok && domain_ok) {
        return None;
    }
    let address = lettre::Address::new(user, domain).ok()?;
    Some(Mailbox::new(None, address))
}

/// Why the store's registry could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Registry(#[from] TomlErrors),
}

/// The registry committed in `store`'s `consumers.toml`, or `None` when the store has none
/// (then no consumer is registered, and everyone who reads is `unknown`).
pub fn load(store: &crate::store::Store) -> Result<Option<Registry>, LoadError> {
    use crate::store::layout::CONSUMERS;
    match store.read(CONSUMERS)? {
        Some(text) => Ok(Some(parse_registry(CONSUMERS, &text)?)),
        None => Ok(None),
    }
}

/// Parse `consumers.toml`. `file` names it in errors.
pub fn parse_registry(file: &str, text: &str) -> Result<Registry, TomlErrors> {
    let raw: RawRegistry = crate::model::location::from_toml(file, text)?;
    let locator = Locator::new(file, text);
    let located = |span, message: String| locator.at(span, message);
    let mut errors = Vec::new();
    let mut consumers = Vec::with_capacity(raw.consumers.len());
    for (name, c) in raw.consumers {
        let name_span = name.span();
        let name = name.into_inner();
        if !is_consumer_name(&name) {
            let why = format!("consumer name `{name}` must match [A-Za-z0-9][A-Za-z0-9_-]{{0,63}}");
            errors.push(located(name_span, why));
            continue;
        }
        if c.contacts.get_ref().is_empty() {
            let why = format!("consumer `{name}` has no contact: a notice could reach nobody");
            errors.push(located(c.contacts.span(), why));
            continue;
        }
        let mut contacts = Vec::new();
        // A list that names one mailbox twice (pasted from two rosters, or once as
        // `Ops <ops@x.org>` and once bare) must still mean one mail. The domain is
        // compared without case, the local part exactly: it may be case-sensitive.
        // (A single contact, what nearly every consumer has, needs no set.)
        let listed = c.contacts.into_inner();
        let several = listed.len() > 1;
        let mut seen = std::collections::HashSet::new();
        for contact in listed {
            match check_mailbox(contact.get_ref()) {
                Ok(m) => {
                    if !several
                        || seen
                            .insert((m.email.user().to_string(), m.email.domain().to_lowercase()))
                    {
                        contacts.push(contact.get_ref().trim().to_string());
                    }
                }
                Err(why) => errors.push(located(
                    contact.span(),
                    format!(
                        "consumer `{name}`: contact {:?} is not a valid mailbox: {why}",
                        contact.get_ref()
                    ),
                )),
            }
        }
        let datasets = c.datasets.map(|datasets| {
            let mut out = BTreeMap::new();
            for (dataset, sub) in datasets {
                let span = dataset.span();
                let dataset = dataset.into_inner();
                if !is_dataset_name(&dataset) {
                    let why = format!(
                        "consumer `{name}`: `{dataset}` is not a dataset name \
                         ([a-z0-9][a-z0-9_-]{{0,63}})"
                    );
                    errors.push(located(span, why));
                    continue;
                }
                let mut subscription = Subscription {
                    uses: None,
                    places: Vec::new(),
                };
                if let Some(list) = sub.uses {
                    let mut uses: Vec<Use> = Vec::new();
                    for entry in list {
                        let at = |message: String| located(entry.span(), message);
                        match Use::parse(entry.get_ref()) {
                            Ok(u) if uses.contains(&u) => errors.push(at(format!(
                                "consumer `{name}`, dataset `{dataset}`: `{u}` is listed twice in `uses`"
                            ))),
                            Ok(u) => {
                                subscription.places.push(at(String::new()));
                                uses.push(u);
                            }
                            Err(why) => errors.push(at(format!(
                                "consumer `{name}`, dataset `{dataset}`: uses entry {why}"
                            ))),
                        }
                    }
                    subscription.uses = Some(uses);
                }
                out.insert(dataset, subscription);
            }
            out
        });
        let mut identities: Vec<Identity> = Vec::new();
        for entry in c.identities {
            let at = |message: String| located(entry.span(), message);
            let id = entry.get_ref().trim();
            if id.is_empty() {
                errors.push(at(format!("consumer `{name}`: an identity is empty")));
                continue;
            }
            if identities.iter().any(|i| i.text == id) {
                errors.push(at(format!(
                    "consumer `{name}`: identity {id:?} is listed twice"
                )));
                continue;
            }
            let glob = if id.contains(['*', '?', '[']) {
                match glob::Pattern::new(id) {
                    Ok(p) => Some(p),
                    Err(e) => {
                        errors.push(at(format!(
                            "consumer `{name}`: identity {id:?} is not a valid glob: {e}"
                        )));
                        continue;
                    }
                }
            } else {
                None
            };
            identities.push(Identity {
                text: id.to_string(),
                glob,
                place: at(String::new()),
            });
        }
        let mut webhooks: Vec<Webhook> = Vec::new();
        for w in c.webhooks {
            let at = |message: String| located(w.span(), message);
            let raw = w.get_ref();
            let hook = raw.name.clone().unwrap_or_else(|| raw.kind.to_string());
            let mut bad = |why: String| {
                errors.push(at(format!("consumer `{name}`, webhook `{hook}`: {why}")))
            };
            if !is_consumer_name(&hook) {
                bad("a webhook name must match [A-Za-z0-9][A-Za-z0-9_-]{0,63}".into());
                continue;
            }
            if webhooks.iter().any(|o| o.name == hook) {
                bad(
                    "the name is used twice in this consumer (name the webhooks apart with `name`)"
                        .into(),
                );
                continue;
            }
            if !is_env_name(&raw.url_env) {
                bad(format!(
                    "url_env {:?} is not an environment variable name",
                    raw.url_env
                ));
                continue;
            }
            match (&raw.secret_env, raw.kind) {
                (Some(v), WebhookKind::Generic) if !is_env_name(v) => {
                    bad(format!(
                        "secret_env {v:?} is not an environment variable name"
                    ));
                    continue;
                }
                (None, WebhookKind::Generic) => {
                    bad("a generic webhook needs secret_env (its payloads are signed)".into());
                    continue;
                }
                (Some(_), kind) if kind != WebhookKind::Generic => {
                    bad(format!(
                        "secret_env is for generic webhooks only; {kind} does not sign"
                    ));
                    continue;
                }
                _ => {}
            }
            webhooks.push(Webhook {
                name: hook,
                kind: raw.kind,
                url_env: raw.url_env.clone(),
                secret_env: raw.secret_env.clone(),
            });
        }
        consumers.push((
            name.clone(),
            Consumer {
                name,
                team: c.team,
                contacts,
                datasets,
                kind: c.kind,
                identities,
                webhooks,
            },
        ));
    }
    if !errors.is_empty() {
        return Err(TomlErrors::in_line_order(errors));
    }
    // Built at once from the list (which comes in name order): inserting ten thousand
    // consumers one by one was a tenth of reading the registry.
    Ok(Registry::new(consumers.into_iter().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The shortcut for plain addresses gives what the general parser gives, and takes
        /// nothing the general parser would refuse or read otherwise.
        #[test]
        fn plain_addresses_are_read_as_the_general_parser_reads_them(
            contact in proptest::prop_oneof![
                "[a-zA-Z0-9_+.-]{0,8}@[a-zA-Z0-9.-]{0,10}",
                "[a-z0-9]{1,6}(\\.[a-z0-9]{1,6}){0,2}@[a-z0-9-]{1,6}\\.(org|example|xn--p1ai)",
                "[ a-zA-Z0-9_+.@<>\"-]{0,16}",
            ],
        ) {
            let general = |c: &str| -> Result<Mailbox, String> {
                let mailbox: Mailbox = c.parse().map_err(|_| "refused".to_string())?;
                let t = c.trim();
                let email = mailbox.email.to_string();
                let whole = t == email || (t.ends_with('>') && t.contains(&format!("<{email}>")));
                if !whole || t.matches('@').count() != 1 || c.chars().any(char::is_control) {
                    return Err("refused".to_string());
                }
                Ok(mailbox)
            };
            if let Some(fast) = plain_address(&contact) {
                proptest::prop_assert_eq!(Ok(fast), general(&contact), "{}", contact);
            }
        }
    }

    #[test]
    fn parses_a_registry() {
        let r = parse_registry(
            "consumers.toml",
            "[consumers.flood-model]\nteam = \"Hydrology\"\ncontacts = [\"hydro@example.org\", \"Ops <ops@example.org>\"]\n",
        )
        .unwrap();
        let c = r.get("flood-model").unwrap();
        assert_eq!(c.team.as_deref(), Some("Hydrology"));
        assert_eq!(c.contacts.len(), 2);
        assert_eq!(c.kind, ConsumerKind::Consumer);
        // The same mailbox twice, bare and with a name, and with the domain in capitals:
        // one contact, the first spelling kept. A local part that differs in case is kept.
        let r = parse_registry(
            "consumers.toml",
            "[consumers.dup]\ncontacts = [\"ops@example.org\", \"Ops <ops@Example.ORG>\", \"OPS@example.org\", \"ops@example.org\"]\n",
        )
        .unwrap();
        assert_eq!(
            r.get("dup").unwrap().contacts,
            vec!["ops@example.org".to_string(), "OPS@example.org".to_string()]
        );
        let r = parse_registry(
            "consumers.toml",
            "[consumers.ci]\nkind = \"automation\"\ncontacts = [\"ci@example.org\"]\n",
        )
        .unwrap();
        assert_eq!(r.get("ci").unwrap().kind, ConsumerKind::Automation);
        let e = parse_registry(
            "consumers.toml",
            "[consumers.ci]\nkind = \"robot\"\ncontacts = [\"ci@example.org\"]\n",
        )
        .unwrap_err();
        assert_eq!((e.0[0].line, e.0[0].column), (2, 8), "{e}");
    }

    /// Why a registry of one consumer `a`, with `extra` after its contacts, is refused.
    fn refused_with(extra: &str) -> TomlErrors {
        let text = format!("[consumers.a]\ncontacts = [\"a@b.org\"]\n{extra}\n");
        parse_registry("consumers.toml", &text).unwrap_err()
    }

    #[test]
    fn refuses_bad_mailboxes_naming_the_consumer() {
        for bad in [
            "hydro@example.org\\r\\nBcc: evil@example.org",
            "hydro@example.org\\nX: y",
            "not an address",
            "a@example.org, b@example.org",
            "a@example.org junk",
        ] {
            let text = format!("[consumers.flood-model]\ncontacts = [\"{bad}\"]\n");
            let e = parse_registry("consumers.toml", &text).unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains("`flood-model`"), "{bad}: {msg}");
            assert!(msg.contains("consumers.toml:2:"), "{bad}: {msg}");
        }
    }

    #[test]
    fn parses_datasets_and_uses_with_places() {
        let text = "[consumers.flood-model]\ncontacts = [\"h@x.org\"]\n\
                    datasets.roads  = { uses = [\"crs\", \"required_attributes.class\"] }\n\
                    datasets.rivers = {}\n\
                    [consumers.old]\ncontacts = [\"o@x.org\"]\n";
        let r = parse_registry("consumers.toml", text).unwrap();
        let c = r.get("flood-model").unwrap();
        let uses: Vec<String> = c
            .uses("roads")
            .unwrap()
            .iter()
            .map(|u| u.to_string())
            .collect();
        assert_eq!(uses, ["crs", "required_attributes.class"]);
        assert_eq!(c.uses("rivers"), None, "{{}} relies on everything");
        assert!(c.subscribes("rivers") && !c.subscribes("lakes"));
        let places = &c.datasets.as_ref().unwrap()["roads"].places;
        assert_eq!((places[1].line, places[1].column), (3, 36));
        // No `datasets`: any dataset, everything.
        let old = r.get("old").unwrap();
        assert!(old.subscribes("lakes") && old.uses("lakes").is_none());
        let subs: Vec<&str> = r.subscribers("lakes").map(|c| c.name.as_str()).collect();
        assert_eq!(subs, ["old"]);
    }

    #[test]
    fn refuses_bad_datasets_and_uses_with_their_place() {
        for (bad, line, column, says) in [
            (
                "datasets.roads = { uses = [\"Crs\"] }",
                3,
                28,
                "clause name",
            ),
            (
                "datasets.roads = { uses = [\"crs\", \"crs\"] }",
                3,
                35,
                "listed twice",
            ),
            (
                "datasets.roads = { use = [\"crs\"] }",
                3,
                20,
                "unknown field",
            ),
            ("datasets.Roads = {}", 3, 10, "not a dataset name"),
            ("datasets.roads = { uses = \"crs\" }", 3, 27, "sequence"),
        ] {
            let e = refused_with(bad);
            let msg = e.to_string();
            assert!(msg.contains(says), "{bad}: {msg}");
            assert_eq!((e.0[0].line, e.0[0].column), (line, column), "{bad}: {msg}");
        }
    }

    #[test]
    fn identities_claim_principals_before_names() {
        let text = "[consumers.flood-model]\ncontacts = [\"h@x.org\"]\n\
                    identities = [\"arn:aws:sts::123456789012:assumed-role/flood-model/*\", \"key:7f3a\"]\n\
                    [consumers.atlas]\ncontacts = [\"a@x.org\"]\n";
        let r = parse_registry("consumers.toml", text).unwrap();
        let arn = "arn:aws:sts::123456789012:assumed-role/flood-model/session-17";
        assert_eq!(r.claim(arn), Claim::Consumer("flood-model"));
        assert_eq!(r.claim("key:7f3a"), Claim::Consumer("flood-model"));
        assert_eq!(r.claim("key:7f3"), Claim::Unclaimed);
        assert_eq!(r.claim("atlas"), Claim::Consumer("atlas"));
        assert_eq!(r.claim("flood-model"), Claim::Consumer("flood-model"));
        assert!(r.identity_conflicts().is_empty());
    }

    #[test]
    fn identities_claimed_twice_are_conflicts_with_their_place() {
        let text = "[consumers.a]\ncontacts = [\"a@x.org\"]\nidentities = [\"role/*\"]\n\
                    [consumers.b]\ncontacts = [\"b@x.org\"]\nidentities = [\"role/b\"]\n\
                    [consumers.c]\ncontacts = [\"c@x.org\"]\nidentities = [\"key:1\"]\n\
                    [consumers.d]\ncontacts = [\"d@x.org\"]\nidentities = [\"key:1\", \"[a-c]\"]\n";
        let r = parse_registry("consumers.toml", text).unwrap();
        assert_eq!(r.claim("role/b"), Claim::Ambiguous(vec!["a", "b"]));
        let found: Vec<(usize, String)> = r
            .identity_conflicts()
            .into_iter()
            .map(|(l, m)| (l.line, m))
            .collect();
        // Each finding at its place, in the order of a walk over every pair, each message
        // whole (one once held a run of thirty-four spaces from a broken line break).
        let name = |n: &str| {
            format!(
                "consumer `d`: identity \"[a-c]\" matches the consumer name `{n}`: that \
                 consumer's reads would be counted as `d`'s"
            )
        };
        let expected: Vec<(usize, String)> = vec![
            (
                6,
                "consumer `b`: identity \"role/b\" is also claimed by consumer `a` \
                 (\"role/*\"): a principal must match one consumer"
                    .into(),
            ),
            (
                12,
                "consumer `d`: identity \"key:1\" is also consumer `c`'s: a principal must \
                 match one consumer"
                    .into(),
            ),
            (12, name("a")),
            (12, name("b")),
            (12, name("c")),
        ];
        assert_eq!(found, expected);
        for bad in [
            "identities = [\"\"]",
            "identities = [\"x\", \"x\"]",
            "identities = [\"[\"]",
        ] {
            let e = refused_with(bad);
            assert_eq!(e.0[0].line, 3, "{bad}: {e}");
        }
    }

    #[test]
    fn parses_webhooks_with_default_names() {
        let text = "[consumers.a]\ncontacts = [\"a@b.org\"]\nwebhooks = [\n\
                    { kind = \"generic\", url_env = \"A_URL\", secret_env = \"A_SECRET\" },\n\
                    { kind = \"slack\", url_env = \"A_SLACK\" },\n\
                    { kind = \"slack\", url_env = \"B_SLACK\", name = \"ops\" },\n\
                    { kind = \"teams\", url_env = \"A_TEAMS\" },\n]\n";
        let r = parse_registry("consumers.toml", text).unwrap();
        let hooks = &r.get("a").unwrap().webhooks;
        let names: Vec<String> = hooks.iter().map(Webhook::channel).collect();
        assert_eq!(
            names,
            [
                "webhook:generic",
                "webhook:slack",
                "webhook:ops",
                "webhook:teams"
            ]
        );
        assert_eq!(hooks[0].secret_env.as_deref(), Some("A_SECRET"));
        assert_eq!(hooks[3].kind, WebhookKind::Teams);
    }

    #[test]
    fn refuses_bad_webhooks_with_their_place() {
        for (bad, says) in [
            (
                "{ kind = \"slack\", url_env = \"X\" }, { kind = \"slack\", url_env = \"Y\" }",
                "used twice",
            ),
            (
                "{ kind = \"generic\", url_env = \"X\" }",
                "needs secret_env",
            ),
            (
                "{ kind = \"teams\", url_env = \"X\", secret_env = \"S\" }",
                "generic webhooks only",
            ),
            ("{ kind = \"discord\", url_env = \"X\" }", "unknown variant"),
            ("{ kind = \"slack\", url = \"https://x\" }", "unknown field"),
            (
                "{ kind = \"slack\", url_env = \"HOOK URL\" }",
                "not an environment variable",
            ),
            (
                "{ kind = \"slack\", url_env = \"X\", name = \"a b\" }",
                "webhook name",
            ),
        ] {
            let msg = refused_with(&format!("webhooks = [{bad}]")).to_string();
            assert!(msg.contains(says), "{bad}: {msg}");
            assert!(msg.contains("consumers.toml:3:"), "{bad}: {msg}");
        }
    }

    #[test]
    fn refuses_unknown_fields_and_empty_contacts() {
        assert!(parse_registry(
            "c",
            "[consumers.a]\ncontacts = [\"a@b.org\"]\nteem = \"x\"\n"
        )
        .is_err());
        assert!(parse_registry("c", "[consumers.a]\ncontacts = []\n").is_err());
        assert!(parse_registry("c", "[consumers.\"a b\"]\ncontacts = [\"a@b.org\"]\n").is_err());
    }
}

#[cfg(test)]
mod mailbox_wording {
    use super::check_mailbox;

    #[test]
    fn a_bad_contact_says_what_to_write_once() {
        let e = check_mailbox("hydro oncall").unwrap_err();
        assert_eq!(e, "write it as `name@domain` or `Name <name@domain>`");
        assert!(!e.contains("mailbox: "), "{e}");
    }
}
