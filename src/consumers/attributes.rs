//! Use of one clause key by the consumers of a dataset (`contracts can-remove`, the
//! deprecation notices): from what each consumer declares in `uses`, and from what its reads
//! show. Pure: the standings, the declarations and the evidence of the reads come in; one
//! answer per consumer goes out.
//!
//! A read can say which attributes it touched only where its source records them (pgaudit's
//! statements, the warehouses' access records): [`SeenColumns`] counts those reads per
//! consumer, and every other read is one that cannot tell. Unknown is never taken for
//! "none": nothing may look unused by mistake.

use chrono::{DateTime, FixedOffset};
use serde::Serialize;

use super::reads::SeenColumns;
use super::standing::{Standing, Status};
use crate::model::Use;

/// What a consumer's reads in the lookback show of one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Evidence {
    /// Reads counted (of a line that promises the key).
    pub reads: u64,
    /// Of those, reads whose source cannot tell which attributes they read.
    pub unknown: u64,
    /// The newest read seen reading the key.
    #[serde(serialize_with = "crate::model::wire::instant")]
    pub key_last_read: Option<DateTime<FixedOffset>>,
}

impl Evidence {
    /// What `reads` reads of a consumer show of `attribute`, of which `seen` told their
    /// attributes (`None`: none did). `attribute` is `None` for a key that is no attribute
    /// (`crs`, a geometry type), which no list of attributes can show.
    pub fn of(reads: u64, seen: Option<&SeenColumns>, attribute: Option<&str>) -> Evidence {
        let (Some(seen), Some(attribute)) = (seen, attribute) else {
            return Evidence::unknown_reads(reads);
        };
        // The reads that told are those of the scan; `reads` may count fewer (of the lines
        // that promise the key only), so the told ones are capped by it.
        let told = seen.told.min(reads);
        Evidence {
            reads,
            unknown: reads - told,
            key_last_read: seen.last_read_of(attribute),
        }
    }

    /// Reads with no attribute evidence: `reads` reads whose source cannot tell.
    pub fn unknown_reads(reads: u64) -> Evidence {
        Evidence {
            reads,
            unknown: reads,
            key_last_read: None,
        }
    }
}

/// How one consumer stands towards a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyUse {
    /// Its `uses` names the key (or its whole clause): its word that it uses it.
    Declared,
    /// Seen reading the key in the lookback.
    Observed,
    /// No `uses` for the dataset, reads in the lookback, and their sources cannot tell which
    /// attributes they read: it may use the key.
    Unknown,
    /// Its `uses` does not name the key, and no read shows it reading it: its promise.
    DeclaredWithout,
    /// No `uses`, and its reads show none of the key: no read in the lookback, its newest
    /// read is of a line that does not promise the key, or every read's attributes are known.
    NotSeen,
    /// An automation, or a reader under the thresholds: it does not hold the key, as it
    /// would not hold a line.
    Ignored,
}

impl KeyUse {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyUse::Declared => "declared",
            KeyUse::Observed => "observed",
            KeyUse::Unknown => "unknown",
            KeyUse::DeclaredWithout => "declared-without",
            KeyUse::NotSeen => "not-seen",
            KeyUse::Ignored => "ignored",
        }
    }

    /// Whether the consumer holds the key back from removal.
    pub fn uses(self) -> bool {
        matches!(self, KeyUse::Declared | KeyUse::Observed)
    }
}

crate::model::display_as!(as_str: KeyUse);

/// Whether a declared use covers `key` (`clause` or `clause.member`).
pub fn declares(uses: &[Use], key: &str) -> bool {
    let (clause, member) = match key.split_once('.') {
        Some((c, m)) => (c, Some(m)),
        None => (key, None),
    };
    uses.iter().any(|u| {
        u.clause == clause && (u.key.is_none() || member.is_none() || u.key.as_deref() == member)
    })
}

/// One consumer's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyStanding {
    pub consumer: String,
    pub team: Option<String>,
    #[serde(rename = "use")]
    pub key_use: KeyUse,
    /// Its status towards the lines (`can-retire`'s, after the thresholds).
    pub status: Status,
    #[serde(serialize_with = "crate::model::wire::instant")]
    pub last_read: Option<DateTime<FixedOffset>>,
    pub evidence: Evidence,
}

/// Judge one subscribed consumer. `uses` is its declaration for the dataset (`None`: none),
/// `promised` whether the line of its newest read still promises the key, `evidence` what its
/// reads show. A declaration is taken at its word unless a read shows the key.
pub fn judge(
    standing: &Standing,
    uses: Option<&[Use]>,
    key: &str,
    promised: bool,
    evidence: Evidence,
) -> KeyStanding {
    let key_use = if matches!(standing.status, Status::Automation | Status::Incidental) {
        KeyUse::Ignored
    } else if evidence.key_last_read.is_some() {
        KeyUse::Observed
    } else {
        match uses {
            Some(u) if declares(u, key) => KeyUse::Declared,
            Some(_) => KeyUse::DeclaredWithout,
            None if evidence.reads == 0 || !promised => KeyUse::NotSeen,
            None if evidence.unknown > 0 => KeyUse::Unknown,
            None => KeyUse::NotSeen,
        }
    };
    KeyStanding {
        consumer: standing.consumer.clone(),
        team: standing.team.clone(),
        key_use,
        status: standing.status,
        last_read: evidence.key_last_read.or(standing.last_read),
        evidence,
    }
}

/// The answer to "can the producer remove this key?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RemoveAnswer {
    /// Every subscribed consumer is shown not to use it.
    Yes,
    /// Some consumer uses it (declared or observed).
    No,
    /// Nobody is shown to use it, but some consumer may (its reads cannot tell), or a source
    /// is blind: never a yes.
    CannotTell,
}

/// The answer from every consumer's standing; `blind` when a consumption source cannot be
/// believed, which matters only for consumers judged by their reads.
pub fn remove_answer(standings: &[KeyStanding], blind: bool) -> RemoveAnswer {
    if standings.iter().any(|s| s.key_use.uses()) {
        RemoveAnswer::No
    } else if standings.iter().any(|s| s.key_use == KeyUse::Unknown)
        || (blind && standings.iter().any(|s| s.key_use == KeyUse::NotSeen))
    {
        RemoveAnswer::CannotTell
    } else {
        RemoveAnswer::Yes
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_read_that_cannot_tell_is_never_a_read_without_the_key() {
        let at = DateTime::parse_from_rfc3339("2026-11-01T00:00:00Z").unwrap();
        // Two reads, one of which told it read `name`: the other is unknown.
        let name = SeenColumns::reading(at, &["name"]);
        let e = Evidence::of(2, Some(&name), Some("pop_est"));
        assert_eq!((e.reads, e.unknown, e.key_last_read), (2, 1, None));
        assert_eq!(Evidence::of(2, None, Some("pop_est")).unknown, 2);
        // Every attribute, or the key's name in another case, is a read of the key.
        let all = SeenColumns::reading(at, &["*"]);
        assert_eq!(
            Evidence::of(1, Some(&all), Some("pop_est")).key_last_read,
            Some(at)
        );
        let upper = SeenColumns::reading(at, &["POP_EST"]);
        assert_eq!(
            Evidence::of(1, Some(&upper), Some("pop_est")).key_last_read,
            Some(at)
        );
        // A key that is no attribute cannot be shown by a list of attributes.
        assert_eq!(Evidence::of(1, Some(&name), None).unknown, 1);
    }

    /// atlas's standing, on line 1, with `reads` reads.
    pub(crate) fn standing(status: Status, reads: u64) -> Standing {
        Standing {
            consumer: "atlas".into(),
            status,
            team: None,
            line: Some(1),
            version: None,
            unknown_version: None,
            last_read: None,
            reads,
            stale: false,
            usage: None,
        }
    }

    #[test]
    fn a_read_of_the_key_outweighs_a_declaration_without_it() {
        let at = DateTime::parse_from_rfc3339("2026-11-01T00:00:00Z").unwrap();
        let uses = [Use::parse("crs").unwrap()];
        let key = "optional_attributes.pop_est";
        let seen = Evidence::of(
            1,
            Some(&SeenColumns::reading(at, &["pop_est"])),
            Some("pop_est"),
        );
        let s = standing(Status::Current, 1);
        assert_eq!(
            judge(&s, Some(&uses), key, true, seen).key_use,
            KeyUse::Observed
        );
        // Without that read the declaration stands; without a declaration, reads that
        // cannot tell leave it unknown, and reads that show other attributes clear it.
        let blind = Evidence::unknown_reads(3);
        assert_eq!(
            judge(&s, Some(&uses), key, true, blind).key_use,
            KeyUse::DeclaredWithout
        );
        assert_eq!(judge(&s, None, key, true, blind).key_use, KeyUse::Unknown);
        let other = Evidence::of(
            1,
            Some(&SeenColumns::reading(at, &["name"])),
            Some("pop_est"),
        );
        let judged = judge(&s, None, key, true, other);
        assert_eq!(judged.key_use, KeyUse::NotSeen);
        assert_eq!(
            remove_answer(std::slice::from_ref(&judged), false),
            RemoveAnswer::Yes
        );
        // A blind source makes a consumer judged by its reads no proof.
        assert_eq!(remove_answer(&[judged], true), RemoveAnswer::CannotTell);
        let robot = standing(Status::Automation, 5);
        assert_eq!(
            judge(&robot, None, key, true, blind).key_use,
            KeyUse::Ignored
        );
    }
}
