//! The consumer registry, `consumers.toml` (SPEC §9): who reads the datasets and how to reach
//! them. Parsed strictly; every contact must be one valid mailbox, because a contact is put
//! into an email header and a line break there would let a registry entry inject headers.

use std::collections::BTreeMap;

use lettre::message::Mailbox;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::model::{Located, TomlErrors};

/// One registered consumer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Consumer {
    pub name: String,
    pub team: Option<String>,
    /// Where notices go, as written in the registry (each one checked to be a mailbox).
    pub contacts: Vec<String>,
}

/// Every registered consumer, by name.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Registry {
    pub consumers: BTreeMap<String, Consumer>,
}

impl Registry {
    pub fn get(&self, name: &str) -> Option<&Consumer> {
        self.consumers.get(name)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConsumer {
    team: Option<String>,
    contacts: Spanned<Vec<Spanned<String>>>,
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
    if contact.chars().any(char::is_control) {
        return Err("it contains a line break or another control character".to_string());
    }
    let mailbox: Mailbox = contact
        .parse()
        .map_err(|e| format!("it is not a mailbox: {e}"))?;
    let t = contact.trim();
    let email = mailbox.email.to_string();
    let whole = t == email || (t.ends_with('>') && t.contains(&format!("<{email}>")));
    if !whole || t.matches('@').count() != 1 {
        return Err("it must hold exactly one mailbox".to_string());
    }
    Ok(mailbox)
}

/// Parse `consumers.toml`. `file` names it in errors.
pub fn parse_registry(file: &str, text: &str) -> Result<Registry, TomlErrors> {
    let raw: RawRegistry = crate::model::location::from_toml(file, text)?;
    let mut errors = Vec::new();
    let mut registry = Registry::default();
    for (name, c) in raw.consumers {
        let name_span = name.span();
        let name = name.into_inner();
        if !is_consumer_name(&name) {
            errors.push(Located::at(
                file,
                text,
                Some(name_span),
                format!("consumer name `{name}` must match [A-Za-z0-9][A-Za-z0-9_-]{{0,63}}"),
            ));
            continue;
        }
        if c.contacts.get_ref().is_empty() {
            errors.push(Located::at(
                file,
                text,
                Some(c.contacts.span()),
                format!("consumer `{name}` has no contact: a notice could reach nobody"),
            ));
            continue;
        }
        let mut contacts = Vec::new();
        for contact in c.contacts.into_inner() {
            match check_mailbox(contact.get_ref()) {
                Ok(_) => contacts.push(contact.get_ref().trim().to_string()),
                Err(why) => errors.push(Located::at(
                    file,
                    text,
                    Some(contact.span()),
                    format!(
                        "consumer `{name}`: contact {:?} is not a valid mailbox: {why}",
                        contact.get_ref()
                    ),
                )),
            }
        }
        registry.consumers.insert(
            name.clone(),
            Consumer {
                name,
                team: c.team,
                contacts,
            },
        );
    }
    if !errors.is_empty() {
        return Err(TomlErrors(errors));
    }
    Ok(registry)
}

#[cfg(test)]
mod tests {
    use super::*;

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
