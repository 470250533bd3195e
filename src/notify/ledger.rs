//! The ledger of notices, `notifications/<dataset>.toml`, appended and never edited. It is what
//! makes `notify` send each notice once, even when a run is killed or two runs overlap.
//!
//! A notice goes through two commits: a `[[claim]]` before it is sent, and a `[[notice]]`
//! (sent) or a `[[release]]` (not sent after all) after. The claim commit is a
//! compare-and-swap on the store's HEAD, so of two runs planning the same notice one claims
//! first; the other re-reads, sees the claim and leaves the notice alone. A run killed between
//! the two commits leaves an open claim: the notices it was sending at that moment. Such a
//! claim is taken for a run still sending until it is `[notify] claim_stale_minutes` old, and
//! after that for a run that died: the next run sends the notice again, with the same
//! Message-ID, and says so.
//!
//! Ledgers written before claims existed hold only `[[notice]]` entries, which parse as they
//! always did: a notice without `run` is simply sent.
//!
//! Each entry names its channel: `mail`, or `webhook:<name>` for a consumer's webhook. A
//! notice is delivered once per channel. An entry without `channel` is mail, so ledgers
//! written before webhooks parse as they did, and mail entries are still written without it.
//!
//! One message may serve two milestones (the `published` announcement and a countdown milestone
//! due on the same run). It is an entry per milestone, with the one Message-ID, appended
//! together: every reader of the ledger keeps counting notices by milestone as before.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, FixedOffset, NaiveDate};
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::plan::SentKey;
use crate::model::contract::toml_date;
use crate::model::history::{instant_text, toml_instant, toml_string};
use crate::model::{Located, TomlErrors};
use crate::store::{Edit, Step, Store, StoreError};

/// A notice as its `[[claim]]` and its `[[notice]]` both record it: the claim is the notice
/// about to be sent, the notice entry the same notice delivered.
#[derive(Debug, Clone, PartialEq)]
pub struct NoticeRecord {
    pub consumer: String,
    pub line: u64,
    pub milestone: String,
    pub recipients: Vec<String>,
    pub message_id: String,
    /// For a `[[notice]]`, when the SMTP server accepted it; for a `[[claim]]`, when the claim
    /// was made (the clock of the claiming host).
    pub at: DateTime<FixedOffset>,
    /// The day the run was for (`--today`), which may differ from `at` in a replay.
    pub for_date: NaiveDate,
    /// The sunset the notice announced.
    pub sunset: NaiveDate,
    /// `mail` or `webhook:<name>`.
    pub channel: String,
}

impl NoticeRecord {
    /// The notice within its dataset's ledger.
    pub fn key(&self) -> Key {
        (
            self.consumer.clone(),
            self.line,
            self.milestone.clone(),
            self.channel.clone(),
        )
    }
}

/// One delivered notice (`[[notice]]`).
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerEntry {
    pub notice: NoticeRecord,
    /// The run that claimed and sent it; absent in ledgers older than claims.
    pub run: Option<String>,
}

/// A notice a run is about to send (`[[claim]]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub notice: NoticeRecord,
    pub run: String,
}

/// A claim given up without sending (`[[release]]`): the send failed, the batch stopped before
/// it, or another run's claim came first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Release {
    pub consumer: String,
    pub line: u64,
    pub milestone: String,
    pub run: String,
    pub at: DateTime<FixedOffset>,
    pub reason: String,
    pub channel: String,
}

/// A delivery refused for good (`[[failed]]`): a webhook receiver answered a 4xx other than
/// 429, which no retry will change. Recorded so that later runs do not send it again; the
/// run that recorded it said so and exited non-zero.
/// It is a release that no later run takes up again, with the receiver's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    #[serde(flatten)]
    pub entry: Release,
    /// The HTTP status the receiver answered.
    pub status: u16,
}

impl Release {
    /// The notice this entry is about.
    fn key(&self) -> Key {
        (
            self.consumer.clone(),
            self.line,
            self.milestone.clone(),
            self.channel.clone(),
        )
    }
}

/// A dataset's ledger, each kind of entry in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ledger {
    pub notices: Vec<LedgerEntry>,
    pub claims: Vec<Claim>,
    pub releases: Vec<Release>,
    pub failed: Vec<Failure>,
    /// Built once by [`parse_ledger`]: a batch asks about every one of thousands of notices.
    sent: HashSet<Key>,
    /// Open claims by key, as indices into `claims`, in file order.
    open: HashMap<Key, Vec<usize>>,
}

/// A notice within one dataset's ledger: (consumer, line, milestone, channel).
pub type Key = (String, u64, String, String);

/// The channel of mail, and of every entry that names none (defined with the plan, which
/// names it too and sits below the ledger).
pub use super::plan::MAIL;

/// Whether `channel` may name a channel: `mail`, or `webhook:` and a registry webhook name.
pub fn is_channel(channel: &str) -> bool {
    channel == MAIL
        || channel
            .strip_prefix("webhook:")
            .is_some_and(crate::consumers::registry::is_consumer_name)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    consumer: String,
    line: u64,
    milestone: Spanned<String>,
    recipients: Vec<String>,
    message_id: String,
    at: Spanned<toml::value::Datetime>,
    for_date: Spanned<toml::value::Datetime>,
    sunset: Spanned<toml::value::Datetime>,
    run: Option<String>,
    channel: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRelease {
    consumer: String,
    line: u64,
    milestone: Spanned<String>,
    run: String,
    at: Spanned<toml::value::Datetime>,
    reason: String,
    channel: Option<Spanned<String>>,
}

impl RawFailure {
    /// The entry as a release, and the status.
    fn split(self) -> (RawRelease, u16) {
        let release = RawRelease {
            consumer: self.consumer,
            line: self.line,
            milestone: self.milestone,
            run: self.run,
            at: self.at,
            reason: self.reason,
            channel: self.channel,
        };
        (release, self.status)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFailure {
    consumer: String,
    line: u64,
    milestone: Spanned<String>,
    run: String,
    at: Spanned<toml::value::Datetime>,
    status: u16,
    reason: String,
    channel: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RawLedger {
    notice: Vec<RawEntry>,
    claim: Vec<RawEntry>,
    release: Vec<RawRelease>,
    failed: Vec<RawFailure>,
}

/// Parse a ledger. `file` names it in errors.
pub fn parse_ledger(file: &str, text: &str) -> Result<Ledger, TomlErrors> {
    let raw: RawLedger = crate::model::location::from_toml(file, text)?;
    let mut errors = Vec::new();
    let mut instant = |v: &Spanned<toml::value::Datetime>| {
        toml_instant(v.get_ref())
            .map(|t| t.fixed_offset())
            .map_err(|m| errors.push(Located::at(file, text, Some(v.span()), m)))
            .ok()
    };
    let mut bad_channels = Vec::new();
    let mut bad_milestones = Vec::new();
    let mut channel = |c: Option<Spanned<String>>| match c {
        None => MAIL.to_string(),
        Some(c) if is_channel(c.get_ref()) => c.into_inner(),
        Some(c) => {
            bad_channels.push(Located::at(
                file,
                text,
                Some(c.span()),
                format!(
                    "channel {:?} is neither `mail` nor `webhook:<name>`",
                    c.get_ref()
                ),
            ));
            MAIL.to_string()
        }
    };
    // A milestone this tool would not write is refused where it stands: a planner that met it
    // could never match it against a notice, and would send that notice again.
    let mut milestone = |m: Spanned<String>| {
        if let Err(e) = m.get_ref().parse::<super::plan::Milestone>() {
            bad_milestones.push(Located::at(file, text, Some(m.span()), e.to_string()));
        }
        m.into_inner()
    };
    let mut entries = Vec::new();
    let mut channels = Vec::new();
    for (is_claim, e) in raw
        .notice
        .into_iter()
        .map(|e| (false, e))
        .chain(raw.claim.into_iter().map(|e| (true, e)))
    {
        let at = instant(&e.at);
        entries.push((is_claim, e, at));
    }
    for (_, e, _) in &mut entries {
        channels.push(channel(e.channel.take()));
    }
    // Each entry's instant and channel are read here, in one pass, because both closures
    // record errors that the loops below add to. A macro, not a function: the two kinds of
    // entry are two types, and both closures are borrowed mutably.
    macro_rules! stamped {
        ($raws:expr) => {
            $raws
                .into_iter()
                .map(|mut r| {
                    let channel = channel(r.channel.take());
                    let at = instant(&r.at);
                    (r, at, channel)
                })
                .collect::<Vec<_>>()
        };
    }
    let releases = stamped!(raw.release);
    let failures = stamped!(raw.failed);
    errors.extend(bad_channels);
    let mut ledger = Ledger::default();
    for ((is_claim, e, at), channel) in entries.into_iter().zip(channels) {
        let for_date = toml_date(e.for_date.get_ref());
        let sunset = toml_date(e.sunset.get_ref());
        match (at, for_date, sunset) {
            (Some(_), Ok(_), Ok(_)) if is_claim && e.run.is_none() => errors.push(Located::at(
                file,
                text,
                Some(e.at.span()),
                "a [[claim]] needs the `run` that made it".to_string(),
            )),
            (Some(at), Ok(for_date), Ok(sunset)) => {
                let notice = NoticeRecord {
                    consumer: e.consumer,
                    line: e.line,
                    milestone: milestone(e.milestone),
                    recipients: e.recipients,
                    message_id: e.message_id,
                    at,
                    for_date,
                    sunset,
                    channel,
                };
                // A claim without a run was refused above.
                match e.run {
                    Some(run) if is_claim => ledger.claims.push(Claim { notice, run }),
                    run => ledger.notices.push(LedgerEntry { notice, run }),
                }
            }
            (_, for_date, sunset) => {
                for (span, m) in [
                    (e.for_date.span(), for_date.err()),
                    (e.sunset.span(), sunset.err()),
                ] {
                    if let Some(m) = m {
                        errors.push(Located::at(file, text, Some(span), m));
                    }
                }
            }
        }
    }
    let mut release = |r: RawRelease, at, channel| Release {
        consumer: r.consumer,
        line: r.line,
        milestone: milestone(r.milestone),
        run: r.run,
        at,
        reason: r.reason,
        channel,
    };
    for (r, at, channel) in releases {
        if let Some(at) = at {
            ledger.releases.push(release(r, at, channel));
        }
    }
    for (r, at, channel) in failures {
        if let Some(at) = at {
            let (r, status) = r.split();
            let entry = release(r, at, channel);
            ledger.failed.push(Failure { entry, status });
        }
    }
    errors.extend(bad_milestones);
    if !errors.is_empty() {
        return Err(TomlErrors::in_line_order(errors));
    }
    ledger.index();
    Ok(ledger)
}

/// What a run may do with a planned notice, by the ledger.
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimState {
    /// No open claim: claim it.
    Free,
    /// Another run claimed it `minutes` ago and may still be sending it: leave it alone.
    InFlight { run: String, minutes: i64 },
    /// Claimed by a run that never confirmed it and is older than the stale age: the notice
    /// may or may not have gone out. Claim it again and resend, with the same Message-ID.
    Stale {
        run: String,
        at: DateTime<FixedOffset>,
        /// Every run with an open claim on it, oldest first: a chain of runs that each took
        /// the claim over and died. Any of them may have delivered it (see their journals).
        runs: Vec<String>,
    },
}

impl Ledger {
    fn index(&mut self) {
        // A delivery recorded as failed is settled as a sent one is: no run sends it again.
        self.sent = self.notices.iter().map(|e| e.notice.key()).collect();
        self.sent.extend(self.failed.iter().map(|f| f.entry.key()));
        let released: HashSet<(Key, &str)> = self
            .releases
            .iter()
            .map(|r| (r.key(), r.run.as_str()))
            .collect();
        let mut open: HashMap<Key, Vec<usize>> = HashMap::new();
        for (i, c) in self.claims.iter().enumerate() {
            let k = c.notice.key();
            if !self.sent.contains(&k) && !released.contains(&(k.clone(), c.run.as_str())) {
                open.entry(k).or_default().push(i);
            }
        }
        self.open = open;
    }

    /// The notices settled, by key: delivered, or recorded as failed for good.
    pub fn sent(&self) -> &HashSet<Key> {
        &self.sent
    }

    /// The claims neither confirmed by a notice nor released, in file order.
    pub fn open_claims(&self) -> Vec<&Claim> {
        let mut idx: Vec<usize> = self.open.values().flatten().copied().collect();
        idx.sort_unstable();
        idx.into_iter().map(|i| &self.claims[i]).collect()
    }

    /// The open claims of any of `keys` (the milestones of one message), in file order.
    fn open_for(&self, keys: &[Key]) -> Vec<&Claim> {
        let mut idx: Vec<usize> = keys
            .iter()
            .filter_map(|k| self.open.get(k))
            .flatten()
            .copied()
            .collect();
        idx.sort_unstable();
        idx.dedup();
        idx.into_iter().map(|i| &self.claims[i]).collect()
    }

    /// The state at `now` of one message, by the keys of the milestones it serves (one, or a
    /// pair claimed together), when claims go stale after `stale_minutes`.
    pub fn state(
        &self,
        keys: &[Key],
        now: DateTime<FixedOffset>,
        stale_minutes: i64,
    ) -> ClaimState {
        let open = self.open_for(keys);
        if let Some(live) = open.iter().find(|c| is_live(c, now, stale_minutes)) {
            return ClaimState::InFlight {
                run: live.run.clone(),
                minutes: (now - live.notice.at).num_minutes(),
            };
        }
        match open.last() {
            Some(c) => ClaimState::Stale {
                run: c.run.clone(),
                at: c.notice.at,
                runs: open.iter().map(|c| c.run.clone()).collect(),
            },
            None => ClaimState::Free,
        }
    }

    /// Whether `run` holds every one of `keys` (the milestones of one message): for each, its
    /// claim comes before every live claim of another run. Read after the claim commit, this
    /// settles two runs that claimed the same notice (through a remote, both claims can land):
    /// the first in the file sends, the other backs off.
    pub fn holds(
        &self,
        keys: &[Key],
        run: &str,
        now: DateTime<FixedOffset>,
        stale_minutes: i64,
    ) -> bool {
        keys.iter().all(|k| {
            self.open_for(std::slice::from_ref(k))
                .into_iter()
                .find(|c| c.run == run || is_live(c, now, stale_minutes))
                .is_some_and(|c| c.run == run)
        })
    }

    /// Notices recorded more than once, with their count, in file order of the first.
    pub fn duplicates(&self) -> Vec<(Key, usize)> {
        let mut count: HashMap<Key, usize> = HashMap::new();
        for e in &self.notices {
            *count.entry(e.notice.key()).or_default() += 1;
        }
        let mut seen = HashSet::new();
        self.notices
            .iter()
            .map(|e| e.notice.key())
            .filter(|k| count[k] > 1 && seen.insert(k.clone()))
            .map(|k| {
                let n = count[&k];
                (k, n)
            })
            .collect()
    }
}

/// Whether another run's claim may still be in flight at `now`: younger than the stale age.
/// A stale age of 0 takes every other claim for a dead run's (for setups where runs never
/// overlap).
fn is_live(c: &Claim, now: DateTime<FixedOffset>, stale_minutes: i64) -> bool {
    now - c.notice.at < chrono::Duration::minutes(stale_minutes)
}

/// The keys of a dataset's notices delivered on every channel `channels` gives the consumer
/// today, for the planner: a notice still owed to one channel (a webhook added later, or one
/// that was down) is planned again, and the ledger then sends it to that channel only.
pub fn sent_keys(
    dataset: &str,
    ledger: &Ledger,
    channels: &dyn Fn(&str) -> Vec<String>,
) -> HashSet<SentKey> {
    ledger
        .notices
        .iter()
        .map(|e| &e.notice)
        .filter(|e| {
            channels(&e.consumer).iter().all(|c| {
                ledger
                    .sent
                    .contains(&(e.consumer.clone(), e.line, e.milestone.clone(), c.clone()))
            })
        })
        .map(|e| {
            (
                dataset.to_string(),
                e.consumer.clone(),
                e.line,
                e.milestone.clone(),
            )
        })
        .collect()
}

/// The `channel = …` line of an entry; none for mail, as before webhooks.
fn channel_line(channel: &str) -> String {
    match channel {
        MAIL => String::new(),
        c => format!("channel    = {}\n", toml_string(c)),
    }
}

/// The first lines of every table the ledger holds: which notice of which consumer.
fn table_head(table: &str, consumer: &str, line: u64, milestone: &str) -> String {
    format!(
        "\n[[{table}]]\nconsumer   = {}\nline       = {line}\nmilestone  = {}\n",
        toml_string(consumer),
        toml_string(milestone),
    )
}

/// The `run = …` line.
fn run_line(run: &str) -> String {
    format!("run        = {}\n", toml_string(run))
}

/// The `at = …` line.
fn at_line(at: &DateTime<FixedOffset>) -> String {
    format!("at         = {}\n", instant_text(at))
}

/// The lines of a `[[notice]]` or a `[[claim]]` (`table`) of `n`, with its `run` if any.
fn notice_text(table: &str, n: &NoticeRecord, run: Option<&str>) -> String {
    let recipients: Vec<String> = n.recipients.iter().map(|r| toml_string(r)).collect();
    format!(
        "{}recipients = [{}]\nmessage_id = {}\n{}{}{}for_date   = {}\nsunset     = {}\n",
        table_head(table, &n.consumer, n.line, &n.milestone),
        recipients.join(", "),
        toml_string(&n.message_id),
        channel_line(&n.channel),
        run.map(run_line).unwrap_or_default(),
        at_line(&n.at),
        n.for_date,
        n.sunset,
    )
}

/// The text appended to the ledger for one delivered notice.
pub fn entry_text(e: &LedgerEntry) -> String {
    notice_text("notice", &e.notice, e.run.as_deref())
}

/// The text appended to the ledger for one claim.
pub fn claim_text(c: &Claim) -> String {
    notice_text("claim", &c.notice, Some(&c.run))
}

/// The text appended to the ledger for one release.
pub fn release_text(r: &Release) -> String {
    release_lines("release", r, None)
}

/// The text appended to the ledger for one delivery that failed for good.
pub fn failure_text(f: &Failure) -> String {
    release_lines("failed", &f.entry, Some(f.status))
}

/// The lines of a `[[release]]` or a `[[failed]]` (`table`), with the receiver's `status` of
/// a failure.
fn release_lines(table: &str, r: &Release, status: Option<u16>) -> String {
    format!(
        "{}{}{}{}{}reason     = {}\n",
        table_head(table, &r.consumer, r.line, &r.milestone),
        channel_line(&r.channel),
        run_line(&r.run),
        at_line(&r.at),
        status.map_or(String::new(), |s| format!("status     = {s}\n")),
        toml_string(&r.reason),
    )
}

/// The header a new ledger starts with.
pub fn ledger_header() -> &'static str {
    "# Notices of `contracts notify`: a [[claim]] before a notice is sent, then a [[notice]]\n\
     # once delivered, a [[release]] if it was not sent after all (the next run\n\
     # tries again), or [[failed]] if the receiver refused it for good.\n\
     # Append-only: `contracts check` fails if an earlier entry is ever edited or removed,\n\
     # or if a notice is recorded twice.\n"
}

/// Append each ledger path's entries of `changes` in one commit with `message`, through
/// [`Store::transact`].
///
/// This is the confirmation after mail went out, and mail cannot be unsent: if another
/// writer moved the store meanwhile, the same entries are appended on top of the new HEAD
/// (ledger entries do not depend on each other), a bounded number of times, before giving up.
/// Only then does the claim stay open, and the notices are resent once it is stale.
pub fn commit_ledger(
    store: Store,
    changes: Vec<(String, String)>,
    message: &str,
) -> Result<(), StoreError> {
    store
        .transact(|current| -> Result<_, StoreError> {
            let files = changes
                .iter()
                .map(|(path, appended)| {
                    Ok((
                        path.clone(),
                        current.appended(path, ledger_header(), appended)?,
                    ))
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let edit = Edit {
                files,
                message: message.to_string(),
            };
            Ok(Step::Commit(edit, ()))
        })
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_appended_entry_parses_back() {
        let e = LedgerEntry {
            notice: NoticeRecord {
                consumer: "flood-model".into(),
                line: 1,
                milestone: "before-14".into(),
                recipients: vec![
                    "Hydro \"Lead\" <lead@example.org>".into(),
                    "a@example.org".into(),
                ],
                message_id: "<contracts.roads.1.flood-model.before-14@example.org>".into(),
                at: "2026-11-29T06:15:00Z".parse().unwrap(),
                for_date: "2026-11-29".parse().unwrap(),
                sunset: "2026-12-10".parse().unwrap(),
                channel: MAIL.into(),
            },
            run: None,
        };
        let text = format!("{}{}", entry_text(&e), entry_text(&e));
        let back = parse_ledger("notifications/roads.toml", &text).unwrap();
        assert_eq!(back.notices, vec![e.clone(), e]);
        assert_eq!(back.duplicates().len(), 1);
        let keys = sent_keys("roads", &back, &|_| vec![MAIL.to_string()]);
        assert!(keys.contains(&("roads".into(), "flood-model".into(), 1, "before-14".into())));
    }

    #[test]
    fn a_ledger_with_an_unknown_field_is_refused_with_its_line() {
        let text = "[[notice]]\nconsumer = \"a\"\nline = 1\nmilestone = \"before-1\"\n\
                    recipients = []\nmessage_id = \"<x@y>\"\nat = 2026-11-29T06:15:00Z\n\
                    for_date = 2026-11-29\nsunset = 2026-11-30\nextra = 1\n";
        let e = parse_ledger("notifications/roads.toml", text).unwrap_err();
        assert!(e.to_string().contains("notifications/roads.toml:"), "{e}");
    }

    #[test]
    fn a_failed_entry_with_a_malformed_milestone_is_refused_where_it_stands() {
        let failed = |milestone: &str| {
            format!(
                "[[failed]]\nconsumer = \"a\"\nline = 1\nmilestone = \"{milestone}\"\n\
                 channel = \"webhook:ops\"\nrun = \"r1\"\nat = 2026-11-29T06:15:00Z\n\
                 status = 400\nreason = \"bad request\"\n"
            )
        };
        let l = parse_ledger("notifications/roads.toml", &failed("before-60")).unwrap();
        assert_eq!(l.failed.len(), 1);
        let e = parse_ledger("notifications/roads.toml", &failed("before-sixty")).unwrap_err();
        // Line 4 holds the milestone.
        assert!(e.to_string().contains("notifications/roads.toml:4:"), "{e}");
        assert!(e.to_string().contains("before-sixty"), "{e}");
    }

    /// Atlas's before-60 notice of line 1 by mail, made or sent at `at`.
    fn atlas(at: DateTime<FixedOffset>) -> NoticeRecord {
        NoticeRecord {
            consumer: "atlas".into(),
            line: 1,
            milestone: "before-60".into(),
            recipients: vec!["atlas@example.org".into()],
            message_id: "<contracts.roads.1.atlas.before-60@example.org>".into(),
            at,
            for_date: "2026-11-29".parse().unwrap(),
            sunset: "2027-01-15".parse().unwrap(),
            channel: MAIL.into(),
        }
    }

    fn claim(run: &str, at: &str) -> Claim {
        Claim {
            notice: atlas(at.parse().unwrap()),
            run: run.into(),
        }
    }

    /// Atlas's notice as delivered at `at` by `run`.
    fn delivered(run: &str, at: DateTime<FixedOffset>) -> LedgerEntry {
        LedgerEntry {
            notice: NoticeRecord {
                recipients: vec![],
                message_id: "<m@example.org>".into(),
                ..atlas(at)
            },
            run: Some(run.into()),
        }
    }

    #[test]
    fn claims_releases_and_notices_interleave_and_decide_who_sends() {
        let k: Key = ("atlas".into(), 1, "before-60".into(), MAIL.into());
        let now: DateTime<FixedOffset> = "2026-11-29T10:30:00Z".parse().unwrap();
        // Run a claimed at 10:00 and died; run b claimed at 10:20 and is still sending.
        let text = format!(
            "{}{}",
            claim_text(&claim("a", "2026-11-29T10:00:00Z")),
            claim_text(&claim("b", "2026-11-29T10:20:00Z"))
        );
        let l = parse_ledger("notifications/roads.toml", &text).unwrap();
        assert_eq!(l.claims.len(), 2);
        // With a 15-minute stale age, a's claim is stale, b's live: b holds it.
        assert!(
            matches!(l.state(std::slice::from_ref(&k), now, 15), ClaimState::InFlight { ref run, minutes: 10 } if run == "b")
        );
        assert!(l.holds(std::slice::from_ref(&k), "b", now, 15));
        assert!(!l.holds(std::slice::from_ref(&k), "c", now, 15));
        // With a 5-minute stale age both are stale: the newest is reported, a new run may claim.
        assert!(
            matches!(l.state(std::slice::from_ref(&k), now, 5), ClaimState::Stale { ref run, .. } if run == "b")
        );
        // With an hour both are live: the first claim in the file wins.
        assert!(l.holds(std::slice::from_ref(&k), "a", now, 60));
        assert!(!l.holds(std::slice::from_ref(&k), "b", now, 60));
        // a released its claim: b's is the first open one.
        let released = format!(
            "{text}{}",
            release_text(&Release {
                consumer: "atlas".into(),
                line: 1,
                milestone: "before-60".into(),
                run: "a".into(),
                at: now,
                reason: "another run claimed it first".into(),
                channel: MAIL.into(),
            })
        );
        let l = parse_ledger("notifications/roads.toml", &released).unwrap();
        assert!(l.holds(std::slice::from_ref(&k), "b", now, 60));
        // Once a notice is recorded, no claim is open and the key is sent.
        let sent = format!("{released}{}", entry_text(&delivered("b", now)));
        let l = parse_ledger("notifications/roads.toml", &sent).unwrap();
        assert!(l.open_claims().is_empty());
        assert_eq!(l.state(std::slice::from_ref(&k), now, 60), ClaimState::Free);
        assert!(l.sent().contains(&k));
        assert!(l.duplicates().is_empty());
    }

    #[test]
    fn a_ledger_from_before_claims_still_parses() {
        // The format every earlier release wrote: [[notice]] only, no `run`.
        let text = "# Notices sent by `contracts notify`, one [[notice]] per delivered message.\n\
                    \n[[notice]]\nconsumer   = \"atlas\"\nline       = 1\n\
                    milestone  = \"before-60\"\nrecipients = [\"atlas@example.org\"]\n\
                    message_id = \"<contracts.roads.1.atlas.before-60@example.org>\"\n\
                    at         = 2026-11-29T06:15:00Z\nfor_date   = 2026-11-29\n\
                    sunset     = 2027-01-15\n";
        let l = parse_ledger("notifications/roads.toml", text).unwrap();
        assert_eq!(l.notices.len(), 1);
        assert_eq!(l.notices[0].run, None);
        assert_eq!(
            l.notices[0].notice.channel, MAIL,
            "an entry without a channel is mail"
        );
        assert!(l.claims.is_empty());
    }

    #[test]
    fn each_channel_is_delivered_once_and_planned_until_every_channel_has_it() {
        let mut c = claim("a", "2026-11-29T10:00:00Z");
        c.notice.channel = "webhook:ops".into();
        let mail = delivered("a", "2026-11-29T10:01:00Z".parse().unwrap());
        let text = format!("{}{}", claim_text(&c), entry_text(&mail));
        assert!(text.contains("channel    = \"webhook:ops\""), "{text}");
        assert_eq!(
            entry_text(&mail).matches("channel").count(),
            0,
            "mail is written as before"
        );
        let l = parse_ledger("notifications/roads.toml", &text).unwrap();
        assert_eq!(l.claims[0].notice.channel, "webhook:ops");
        let hook: Key = ("atlas".into(), 1, "before-60".into(), "webhook:ops".into());
        let now: DateTime<FixedOffset> = "2026-11-29T10:30:00Z".parse().unwrap();
        assert!(
            l.holds(std::slice::from_ref(&hook), "a", now, 60),
            "the webhook's claim is its own"
        );
        let both = |_: &str| vec![MAIL.to_string(), "webhook:ops".to_string()];
        assert!(
            sent_keys("roads", &l, &both).is_empty(),
            "the webhook is still owed"
        );
        assert_eq!(sent_keys("roads", &l, &|_| vec![MAIL.to_string()]).len(), 1);

        // The same notice on two channels is no duplicate; twice on one channel is.
        let mut hook_entry = mail.clone();
        hook_entry.notice.channel = "webhook:ops".into();
        let twice = format!("{}{}", entry_text(&mail), entry_text(&hook_entry));
        let l2 = parse_ledger("notifications/roads.toml", &twice).unwrap();
        assert!(l2.duplicates().is_empty());
        let thrice = format!("{twice}{}", entry_text(&hook_entry));
        let l3 = parse_ledger("notifications/roads.toml", &thrice).unwrap();
        assert_eq!(l3.duplicates(), vec![(hook, 2)]);

        let bad = text.replace("webhook:ops", "sms");
        let e = parse_ledger("notifications/roads.toml", &bad).unwrap_err();
        assert!(
            e.to_string()
                .contains("neither `mail` nor `webhook:<name>`"),
            "{e}"
        );
    }
}
