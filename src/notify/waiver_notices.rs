//! Who is told about a waiver: the plan side of the `waiver:<id>` notices.
//!
//! Each consumer on a line a waiver covers is told once per waiver, if it declared that it
//! relies on the waived clause key (or declared nothing, which means everything). Consumers
//! that do not use the clause are not told. The notice names the clause, the covered line,
//! until when, by whom and why, and the release it was granted for. Pure: the waivers, the
//! standings, the registry and what the ledger already holds come in; the notices go out.
//! Rendering and sending them belong to the notifier's protocol.

use chrono::NaiveDate;
use serde::Serialize;

use crate::consumers::{Registry, Standing, Status};
use crate::model::waiver::{Waiver, Waivers};
use crate::model::Use;

/// The ledger milestone of a waiver's notice.
pub fn milestone(w: &Waiver) -> String {
    format!("waiver:{}", w.id)
}

/// One notice to send about one waiver.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaiverNotice {
    pub consumer: String,
    pub dataset: String,
    /// The line the consumer is on, which the waiver covers (the ledger key's line).
    pub line: u64,
    /// `waiver:<id>`.
    pub milestone: String,
    pub waiver: Waiver,
}

/// Whether a consumer that declared `uses` relies on the waived key: it uses the whole
/// clause, or the waiver is of the whole clause, or both name the same key.
pub fn touches(uses: Option<&[Use]>, waived: &str) -> bool {
    let Some(uses) = uses else { return true };
    let (clause, key) = match waived.split_once('.') {
        Some((c, k)) => (c, Some(k)),
        None => (waived, None),
    };
    uses.iter().any(|u| {
        u.clause == clause && (u.key.is_none() || key.is_none() || u.key.as_deref() == key)
    })
}

/// The notices due on `today` for the live waivers of `dataset`: one per waiver and consumer
/// whose newest read is on a covered line and who relies on the key, unless `sent` (consumer,
/// line, milestone) says the ledger already has it. Automations and incidental readers are
/// told like anyone (thresholds decide retirement, not who is told); unsubscribed and unknown
/// readers, and silent consumers (no line), are not.
pub fn plan(
    dataset: &str,
    waivers: &Waivers,
    today: NaiveDate,
    standings: &[Standing],
    registry: &Registry,
    sent: &dyn Fn(&str, u64, &str) -> bool,
) -> Vec<WaiverNotice> {
    let mut out = Vec::new();
    for w in waivers.live(today) {
        let m = milestone(w);
        for s in standings {
            let told = matches!(
                s.status,
                Status::StillOn
                    | Status::Migrated
                    | Status::Current
                    | Status::UnknownVersion
                    | Status::Automation
                    | Status::Incidental
            );
            let (true, Some(line), Some(c)) = (told, s.line, registry.get(&s.consumer)) else {
                continue;
            };
            if w.line.is_some_and(|l| l != line) || !touches(c.uses(dataset), &w.clause) {
                continue;
            }
            if sent(&s.consumer, line, &m) {
                continue;
            }
            out.push(WaiverNotice {
                consumer: s.consumer.clone(),
                dataset: dataset.to_string(),
                line,
                milestone: m.clone(),
                waiver: w.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consumers::parse_registry;
    use crate::model::waiver::parse_waivers;
    use crate::notify::test_fixtures::{day as d, line, standings};

    #[test]
    fn only_consumers_that_use_the_key_on_a_covered_line_once_each() {
        let registry = parse_registry(
            "consumers.toml",
            "[consumers.a]\ncontacts=[\"a@x.org\"]\ndatasets.places = { uses = [\"max_null_fraction.pop_est\"] }\n\
             [consumers.b]\ncontacts=[\"b@x.org\"]\ndatasets.places = { uses = [\"crs\"] }\n\
             [consumers.c]\ncontacts=[\"c@x.org\"]\n\
             [consumers.d]\ncontacts=[\"d@x.org\"]\ndatasets.places = { uses = [\"max_null_fraction\"] }\n\
             [consumers.e]\ncontacts=[\"e@x.org\"]\n",
        )
        .unwrap();
        let lines = [
            line(1, "2026-01-01", Some("2027-06-01"), &["1.0.0"]),
            line(2, "2026-11-01", None, &["2.0.0"]),
        ];
        // e reads line 2, which the waiver does not cover.
        let standings = standings(
            "places",
            &lines,
            &registry,
            ("2026-11-28T03:00:00Z", 1),
            &[
                ("a", "1.0.0"),
                ("b", "1.0.0"),
                ("c", "1.0.0"),
                ("d", "1.0.0"),
                ("e", "2.0.0"),
            ],
        );
        let text = "[[waiver]]\nid = \"places:1:max_null_fraction.pop_est:2026-11-29\"\nline = 1\n\
                    clause = \"max_null_fraction.pop_est\"\ngranted = 2026-11-29\nuntil = 2026-12-31\n\
                    at = 2026-11-29T09:00:00Z\nby = \"A <a@x.org>\"\nreason = \"outage\"\n";
        let waivers = parse_waivers("w.toml", "places", text, 90).unwrap();
        let told = |sent: &dyn Fn(&str, u64, &str) -> bool| -> Vec<String> {
            plan(
                "places",
                &waivers,
                d("2026-11-30"),
                &standings,
                &registry,
                sent,
            )
            .into_iter()
            .map(|n| n.consumer)
            .collect()
        };
        assert_eq!(told(&|_, _, _| false), ["a", "c", "d"]);
        // Once each: what the ledger holds is not planned again.
        let sent = |c: &str, l: u64, m: &str| {
            c == "a" && l == 1 && m == "waiver:places:1:max_null_fraction.pop_est:2026-11-29"
        };
        assert_eq!(told(&sent), ["c", "d"]);
        // After its last day nobody is told.
        assert!(plan(
            "places",
            &waivers,
            d("2027-01-01"),
            &standings,
            &registry,
            &|_, _, _| false
        )
        .is_empty());
    }
}
