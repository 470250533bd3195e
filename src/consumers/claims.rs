//! The identities of `consumers.toml`, and the two questions asked of them: who a principal
//! is ([`ClaimIndex::claimants`], for `Registry::claim`), and which identities claim the same
//! principals ([`conflicts`], for `check`). Both are answered from the identities indexed
//! once per registry: exact ones by their text, globs in a list. Testing every identity of
//! every consumer for each principal, and every identity against every other, grew with the
//! square of the registry: a registry of tens of thousands of consumers stopped `check` and
//! every scan for minutes (`bench/RESULTS.md`). The registry (`registry.rs`) is built on
//! this file, which knows nothing of it.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::model::Located;

/// One `identities` entry: an exact string, or a glob (it has `*`, `?` or `[`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Identity {
    pub text: String,
    #[serde(skip)]
    pub glob: Option<glob::Pattern>,
    /// Where it is written, for `check`'s findings.
    #[serde(skip)]
    pub place: Located,
}

impl Identity {
    pub fn matches(&self, principal: &str) -> bool {
        match &self.glob {
            Some(g) => g.matches(principal),
            None => self.text == principal,
        }
    }
}

/// The identities of every consumer of a registry, indexed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClaimIndex {
    /// Each exact identity's text, with the consumers that list it.
    exact: HashMap<String, Vec<String>>,
    /// Each glob, with its consumer.
    globs: Vec<(String, glob::Pattern)>,
}

impl ClaimIndex {
    /// The index of `consumers`' identities, each consumer by its name.
    pub fn of<'a>(consumers: impl Iterator<Item = (&'a str, &'a [Identity])>) -> ClaimIndex {
        let mut index = ClaimIndex::default();
        for (name, identities) in consumers {
            for i in identities {
                match &i.glob {
                    Some(g) => index.globs.push((name.to_string(), g.clone())),
                    None => index
                        .exact
                        .entry(i.text.clone())
                        .or_default()
                        .push(name.to_string()),
                }
            }
        }
        index
    }

    /// Whether no consumer lists an identity.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.globs.is_empty()
    }

    /// The consumers an identity of which matches `principal`, in name order, each once
    /// however many of its identities match.
    pub fn claimants(&self, principal: &str) -> BTreeSet<&str> {
        let mut claimants: BTreeSet<&str> = BTreeSet::new();
        if let Some(names) = self.exact.get(principal) {
            claimants.extend(names.iter().map(String::as_str));
        }
        for (name, glob) in &self.globs {
            if glob.matches(principal) {
                claimants.insert(name);
            }
        }
        claimants
    }
}

/// Where a finding comes in a walk over every pair: consumer `a`, its identity, consumer
/// `b`, then 0 for `b`'s name or 1 + `b`'s identity.
type WalkOrder = (usize, usize, usize, usize);

/// Identities that claim what another consumer's identity or name names: the same text
/// twice, an exact identity or a consumer name that another's glob matches. (Two globs that
/// overlap only on some principals are found when such a principal is read.) `consumers` are
/// each name with its identities, in name order; the findings come in the order of a walk over
/// every consumer `a`, each identity of it, every other consumer `b` and each identity of
/// that one.
pub fn conflicts(consumers: &[(&str, &[Identity])]) -> Vec<(Located, String)> {
    let mut found: Vec<(WalkOrder, Located, String)> = Vec::new();
    let globs: Vec<(usize, usize, &Identity)> = consumers
        .iter()
        .enumerate()
        .flat_map(|(ai, (_, ids))| ids.iter().enumerate().map(move |(i, id)| (ai, i, id)))
        .filter(|(_, _, id)| id.glob.is_some())
        .collect();
    for &(ai, iai, ia) in &globs {
        let a = consumers[ai].0;
        for (bi, &(b, b_ids)) in consumers.iter().enumerate().filter(|&(bi, _)| bi != ai) {
            if ia.matches(b) {
                let message = format!(
                    "consumer `{a}`: identity {:?} matches the consumer name `{b}`: that \
                     consumer's reads would be counted as `{a}`'s",
                    ia.text
                );
                found.push(((ai, iai, bi, 0), ia.place.clone(), message));
            }
            // Another consumer's exact identity of another text that the glob matches.
            for (ibi, ib) in b_ids.iter().enumerate() {
                if ib.glob.is_none() && ia.text != ib.text && ia.matches(&ib.text) {
                    let message = format!(
                        "consumer `{b}`: identity {:?} is also claimed by consumer `{a}` \
                         ({:?}): a principal must match one consumer",
                        ib.text, ia.text
                    );
                    found.push(((ai, iai, bi, 1 + ibi), ib.place.clone(), message));
                }
            }
        }
    }
    // The same text listed by two consumers, reported once, at the later consumer's.
    let mut by_text: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for (ci, (_, ids)) in consumers.iter().enumerate() {
        for (ii, id) in ids.iter().enumerate() {
            by_text.entry(id.text.as_str()).or_default().push((ci, ii));
        }
    }
    for listed in by_text.values().filter(|l| l.len() > 1) {
        for &(ai, iai) in listed {
            for &(bi, ibi) in listed {
                let ((a, a_ids), (b, _)) = (consumers[ai], consumers[bi]);
                if ai != bi && a > b {
                    let ia = &a_ids[iai];
                    let message = format!(
                        "consumer `{a}`: identity {:?} is also consumer `{b}`'s: a principal \
                         must match one consumer",
                        ia.text
                    );
                    found.push(((ai, iai, bi, 1 + ibi), ia.place.clone(), message));
                }
            }
        }
    }
    found.sort_by_key(|(at, _, _)| *at);
    found.into_iter().map(|(_, place, m)| (place, m)).collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::consumers::{parse_registry, Claim, Registry};

    /// Who claims `principal`, every identity of every consumer tested: the rule the index
    /// must answer.
    fn claimed_by_every_identity<'r>(r: &'r Registry, principal: &str) -> Claim<'r> {
        let claimants: Vec<&str> = r
            .consumers
            .values()
            .filter(|c| c.identities.iter().any(|i| i.matches(principal)))
            .map(|c| c.name.as_str())
            .collect();
        match claimants[..] {
            [one] => Claim::Consumer(one),
            [] => match r.consumers.get_key_value(principal) {
                Some((name, _)) => Claim::Consumer(name),
                None => Claim::Unclaimed,
            },
            _ => Claim::Ambiguous(claimants),
        }
    }

    /// Every pair of identities tested, in the walk's order: the findings the index must
    /// give (their wording aside).
    fn conflicts_of_every_pair(r: &Registry) -> Vec<(usize, usize, String)> {
        let mut out = Vec::new();
        for a in r.consumers.values() {
            for ia in &a.identities {
                for b in r.consumers.values().filter(|b| b.name != a.name) {
                    if ia.glob.is_some() && ia.matches(&b.name) {
                        out.push((
                            ia.place.line,
                            ia.place.column,
                            format!("{} name {}", a.name, b.name),
                        ));
                    }
                    for ib in &b.identities {
                        let same = ia.text == ib.text;
                        if same && a.name > b.name {
                            out.push((
                                ia.place.line,
                                ia.place.column,
                                format!("{} same {}", a.name, b.name),
                            ));
                        } else if !same && ib.glob.is_none() && ia.matches(&ib.text) {
                            out.push((
                                ib.place.line,
                                ib.place.column,
                                format!("{} claimed {}", b.name, a.name),
                            ));
                        }
                    }
                }
            }
        }
        out
    }

    /// The index's findings, reduced to what [`conflicts_of_every_pair`] says.
    fn conflicts(r: &Registry) -> Vec<(usize, usize, String)> {
        r.identity_conflicts()
            .into_iter()
            .map(|(place, m)| {
                let consumer = |i: usize| m.split('`').nth(i).unwrap_or_default().to_string();
                let what = if m.contains("matches the consumer name") {
                    format!("{} name {}", consumer(1), consumer(3))
                } else if m.contains("is also claimed by") {
                    format!("{} claimed {}", consumer(1), consumer(3))
                } else {
                    format!("{} same {}", consumer(1), consumer(3))
                };
                (place.line, place.column, what)
            })
            .collect()
    }

    const IDENTITIES: &[&str] = &[
        "role/*", "role/a", "role/b", "key:?", "key:1", "key:2", "[a-c]", "a", "b", "d*", "*",
    ];

    proptest! {
        /// Any registry of up to five consumers with identities drawn from exact texts and
        /// globs that overlap: the index claims each principal as testing every identity
        /// does, and finds the same conflicts at the same places in the same order.
        #[test]
        fn the_index_answers_as_every_identity_tested(
            consumers in proptest::collection::vec(
                proptest::collection::btree_set(0..IDENTITIES.len(), 0..4), 1..6),
        ) {
            let mut text = String::new();
            for (n, ids) in consumers.iter().enumerate() {
                let name = ["a", "b", "c", "d", "e"][n];
                let ids: Vec<String> = ids.iter().map(|&i| format!("{:?}", IDENTITIES[i])).collect();
                text.push_str(&format!(
                    "[consumers.{name}]\ncontacts = [\"{name}@x.org\"]\nidentities = [{}]\n",
                    ids.join(", ")
                ));
            }
            let r = parse_registry("consumers.toml", &text).unwrap();
            for principal in IDENTITIES.iter().chain(&["a", "c", "e", "role/z", "key:3", "dx"]) {
                prop_assert_eq!(r.claim(principal), claimed_by_every_identity(&r, principal), "{}", principal);
            }
            prop_assert_eq!(conflicts(&r), conflicts_of_every_pair(&r), "{}", text);
        }
    }
}
