//! One notify run, from the store to the ledger: plan today's notices, sift them by the
//! ledgers, render them, then claim → send and journal → confirm, taking over (and first
//! recovering from their journals) the claims of runs that died.
//!
//! The protocol lives here so that every channel goes through the same ledger: the caller
//! hands in the clock, one [`Transport`] (mail today) and an event sink; nothing here reads
//! the clock, prints or knows the terminal. What a run did comes back as rows and [`Event`]s,
//! which the CLI turns into its table and its talk.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use chrono::{DateTime, FixedOffset, NaiveDate};
use lettre::message::Mailbox;
use lettre::Message;
use serde::Serialize;

use super::journal::{self, Delivered, Journal};
use super::ledger::{
    claim_text, commit_ledger, entry_text, ledger_header, parse_ledger, release_text, sent_keys,
    Claim, ClaimState, Key, Ledger, LedgerEntry, Release, MAIL,
};
use super::plan::{milestone_due, plan, DatasetInput, Notice, SentKey};
use super::render::{ChangeValues, RenderError, Templates, BODY, SUBJECT};
use super::send::{message, MailError};
use crate::consumers::{classify, Registry, Scan, Standing, Status};
use crate::model::config::Config;
use crate::model::history::{ChangeRecord, History};
use crate::model::{ConsumerVerdict, Line, TomlErrors};
use crate::store::{layout, Edit, Step, Store, StoreError};

/// The clock of a run: the instant a claim, a delivery or a release is stamped with.
pub type Clock<'a> = &'a dyn Fn() -> DateTime<FixedOffset>;

/// Where a run says what it does, as it does it.
pub type Sink<'a> = &'a mut dyn FnMut(Event<'_>);

/// A delivery that did not happen.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error(transparent)]
    Mail(#[from] MailError),
    #[error(transparent)]
    Webhook(#[from] super::webhook::WebhookError),
}

impl DeliveryError {
    /// The HTTP status of a webhook delivery the receiver refused for good (a 4xx other than
    /// 429): recorded as failed rather than released for the next run.
    pub fn refused_status(&self) -> Option<u16> {
        match self {
            DeliveryError::Webhook(super::webhook::WebhookError::Refused { status, .. }) => {
                Some(*status)
            }
            _ => None,
        }
    }

    /// Whether every later delivery through the same transport would fail the same way.
    pub fn ends_batch(&self) -> bool {
        match self {
            DeliveryError::Mail(e) => e.ends_batch(),
            // One receiver down says nothing of mail or of the other receivers.
            DeliveryError::Webhook(_) => false,
        }
    }
}

/// One way notices reach people. `open` is called before anything is claimed, so a transport
/// that cannot work fails the run with nothing written; `deliver` sends one rendered notice;
/// `close` ends the session after the last.
pub trait Transport {
    fn open(&mut self) -> Result<(), DeliveryError>;
    fn deliver(&mut self, notice: &Notice) -> Result<(), DeliveryError>;
    fn close(&mut self);
    /// What the transport used so far, for the run's summary.
    fn usage(&self) -> Usage {
        Usage::default()
    }
}

/// The connections and requests a run's transports made.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// SMTP connections opened.
    pub connections: u64,
    /// Webhook requests made, retries included.
    pub requests: u64,
}

/// What a run tells as it goes.
#[derive(Debug)]
pub enum Event<'a> {
    /// The standings of a dataset with a milestone due, as classified.
    Standings {
        dataset: &'a str,
        standings: &'a [Standing],
    },
    /// Registered readers still on a retiring line that are not subscribed to the dataset.
    Unsubscribed {
        dataset: &'a str,
        count: usize,
    },
    /// Readers still on a retiring line that are not registered at all.
    Unregistered {
        dataset: &'a str,
        count: usize,
    },
    /// Left alone: another run claimed it `minutes` ago and may still be sending it.
    InFlight {
        notice: &'a Notice,
        run: &'a str,
        minutes: i64,
        stale_minutes: i64,
    },
    /// Left alone: another run's claim landed first.
    ClaimedFirst {
        notice: &'a Notice,
    },
    /// Recorded without sending: the dead run `run` delivered it at `at`, as its journal says.
    Recovered {
        notice: &'a Notice,
        run: &'a str,
        at: DateTime<FixedOffset>,
    },
    /// About to be sent again: the dead run `run` claimed it at `at` and never confirmed it.
    Resending {
        notice: &'a Notice,
        run: &'a str,
        at: DateTime<FixedOffset>,
        stale_minutes: i64,
    },
    Sent {
        notice: &'a Notice,
    },
    Failed {
        notice: &'a Notice,
        error: &'a DeliveryError,
    },
}

/// A notice as the talk names it.
fn about(n: &Notice) -> String {
    let by = match n.channel.as_str() {
        MAIL => String::new(),
        c => format!(" by {c}"),
    };
    format!(
        "{} line {} {} to {}{by}",
        n.dataset, n.line, n.milestone, n.consumer
    )
}

fn instant(t: &DateTime<FixedOffset>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// What the CLI says of an event, one line on stderr. (`Standings` says nothing here: the CLI
/// warns about unknown versions as `consumers` does.)
impl std::fmt::Display for Event<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Standings { .. } => Ok(()),
            Event::Unsubscribed { dataset: d, count } => write!(
                f,
                "warning: {d}: {count} registered reader(s) still on a retiring line are not \
                 subscribed to {d} in consumers.toml and are not told (add datasets.{d} to \
                 their entry)"
            ),
            Event::Unregistered { dataset: d, count } => write!(
                f,
                "warning: {d}: {count} reader(s) still on a retiring line are not in \
                 consumers.toml and cannot be told (see `contracts consumers {d}`)"
            ),
            Event::InFlight {
                notice,
                run,
                minutes,
                stale_minutes,
            } => write!(
                f,
                "skipped {}: claimed {minutes} min ago by run {run}, which may still be sending \
                 it (a claim is stale after {stale_minutes} min)",
                about(notice)
            ),
            Event::ClaimedFirst { notice } => {
                write!(f, "skipped {}: another run claimed it first", about(notice))
            }
            Event::Recovered { notice, run, at } => write!(
                f,
                "recorded {}: run {run} delivered it at {} and died before recording it (its \
                 journal says so); not sent again",
                about(notice),
                instant(at)
            ),
            Event::Resending {
                notice,
                run,
                at,
                stale_minutes,
            } => write!(
                f,
                "resending {} with the same Message-ID: run {run} claimed it at {} and never \
                 confirmed it (stale after {stale_minutes} min)",
                about(notice),
                instant(at)
            ),
            // A webhook is named, never its URL: the URL is a credential.
            Event::Sent { notice } if notice.channel != MAIL => {
                write!(f, "sent {}", about(notice))
            }
            Event::Sent { notice } => {
                write!(
                    f,
                    "sent {} ({})",
                    about(notice),
                    notice.recipients.join(", ")
                )
            }
            Event::Failed { notice, error } => write!(f, "failed {}: {error}", about(notice)),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Ledger(#[from] TomlErrors),
    #[error(transparent)]
    Templates(RenderError),
    #[error("notice {notice}: {source}")]
    Render {
        notice: String,
        source: Box<RenderError>,
    },
    #[error(transparent)]
    Message(MailError),
    /// No git identity to record with: nothing was sent.
    #[error(transparent)]
    Identity(StoreError),
    /// The transport failed to open: nothing was sent or recorded.
    #[error("{source}")]
    Open {
        source: DeliveryError,
        pending: usize,
    },
    #[error("cannot write the journal of this run in {}, so nothing was sent: {source}", dir.display())]
    Journal {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("could not claim the notices in the ledger, so none was sent: {source}")]
    Claim { source: Box<RunError> },
    /// The batch stopped at a failure that ends it; `unsent` notices after it were released.
    #[error(
        "the batch stopped at the first connection failure: {why}; {unsent} notice(s) after it \
         were not sent and not recorded"
    )]
    Stopped { why: String, unsent: usize },
    #[error("{failed} notice(s) could not be sent and were not recorded")]
    Undelivered { failed: usize },
    #[error("{sent} notice(s) were sent but could not be confirmed in the ledger: {source}")]
    Confirm {
        sent: usize,
        journal: PathBuf,
        stale_minutes: i64,
        source: StoreError,
    },
}

impl RunError {
    /// Whether the store's content or the configuration is at fault rather than the
    /// environment.
    pub fn is_input(&self) -> bool {
        match self {
            RunError::Store(e) | RunError::Identity(e) | RunError::Confirm { source: e, .. } => {
                e.is_input()
            }
            RunError::Ledger(_) | RunError::Templates(_) | RunError::Render { .. } => true,
            RunError::Message(e) => e.is_input(),
            RunError::Open { source, .. } => match source {
                DeliveryError::Mail(e) => e.is_input(),
                DeliveryError::Webhook(e) => e.is_input(),
            },
            RunError::Journal { .. } | RunError::Stopped { .. } | RunError::Undelivered { .. } => {
                false
            }
            RunError::Claim { source } => source.is_input(),
        }
    }
}

/// One notice in a run's report.
#[derive(Debug, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub notice: Notice,
    /// `planned` in a dry run, else `sent`, `failed`, `unsent` (the batch stopped first), or
    /// `recovered` (delivered by a run that died before recording it, as its journal says:
    /// recorded now, not sent again).
    pub status: &'static str,
    /// Whether this notice was claimed by a run that never confirmed it, so it may have
    /// been delivered already: it is sent again with the same Message-ID.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub resent: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    pub sent: usize,
    pub failed: usize,
    pub unsent: usize,
    pub recovered: usize,
    /// Why the batch stopped before its end, if it did.
    pub stopped: Option<String>,
    /// What the transports used, once closed.
    pub usage: Usage,
}

impl Report {
    /// The error a run ends with when not every notice went out.
    pub fn failure(&self) -> Option<RunError> {
        if let Some(why) = &self.stopped {
            return Some(RunError::Stopped {
                why: why.clone(),
                unsent: self.unsent,
            });
        }
        (self.failed > 0).then_some(RunError::Undelivered {
            failed: self.failed,
        })
    }

    /// The run's summary, one line for stderr.
    pub fn summary(&self) -> String {
        let recovered = (self.recovered > 0).then(|| format!(", {} recovered", self.recovered));
        let requests = match self.usage.requests {
            0 => String::new(),
            n => format!(" and {n} webhook request(s)"),
        };
        format!(
            "notify: {} sent, {} failed, {} unsent{}, over {} SMTP connection(s){requests}",
            self.sent,
            self.failed,
            self.unsent,
            recovered.unwrap_or_default(),
            self.usage.connections,
        )
    }
}

/// A notice this run may send, with the stale claim it takes over, if any.
#[derive(Debug)]
pub struct Todo {
    pub notice: Notice,
    /// The newest stale claim, by run and time.
    stale: Option<(String, DateTime<FixedOffset>)>,
    /// Every run with an open (stale) claim on the notice.
    earlier: Vec<String>,
    /// The notice's mail as rendered (subject and body), for a preview.
    pub rendered: Option<super::render::Rendered>,
}

impl Todo {
    /// The row of a planned notice, for a dry run.
    pub fn planned(&self) -> Row {
        self.row("planned", None)
    }

    fn row(&self, status: &'static str, error: Option<String>) -> Row {
        Row {
            notice: self.notice.clone(),
            status,
            resent: self.stale.is_some(),
            error,
        }
    }
}

/// The fixed facts of one run.
pub struct Settings<'a> {
    pub today: NaiveDate,
    /// When the run started, in whole seconds as the ledger records it (so this run's own
    /// claim reads back as made `now`).
    pub now: DateTime<FixedOffset>,
    pub stale_minutes: i64,
    /// This run's name in the ledger's claims ([`run_id`]).
    pub run: &'a str,
}

fn key_of(n: &Notice) -> Key {
    (
        n.consumer.clone(),
        n.line,
        n.milestone.to_string(),
        n.channel.clone(),
    )
}

/// Every channel of `consumer`: mail, then its webhooks.
fn channels(registry: &Registry, consumer: &str) -> Vec<String> {
    let mut out = vec![MAIL.to_string()];
    if let Some(c) = registry.get(consumer) {
        out.extend(c.webhooks.iter().map(crate::consumers::Webhook::channel));
    }
    out
}

/// Each planned notice once per channel of its consumer; the ledger then drops the channels
/// that already have it.
fn per_channel(registry: &Registry, notices: Vec<Notice>) -> Vec<Notice> {
    let mut out = Vec::with_capacity(notices.len());
    for n in notices {
        for c in channels(registry, &n.consumer).into_iter().skip(1) {
            out.push(Notice {
                channel: c,
                ..n.clone()
            });
        }
        out.push(n);
    }
    out
}

/// A run's name in the ledger's claims: host, process and start instant, unique enough that
/// two runs never share one.
pub fn run_id(now: DateTime<FixedOffset>) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
        .collect();
    let host = if host.is_empty() { "host".into() } else { host };
    format!(
        "{host}.{}.{}",
        std::process::id(),
        now.timestamp_nanos_opt().unwrap_or_default()
    )
}

/// The ledgers of `datasets` at the store's HEAD.
fn read_ledgers<'a>(
    store: &Store,
    datasets: impl IntoIterator<Item = &'a str>,
) -> Result<BTreeMap<String, Ledger>, RunError> {
    let mut out = BTreeMap::new();
    for d in datasets {
        if out.contains_key(d) {
            continue;
        }
        let path = layout::notifications(d);
        let ledger = match store.read(&path)? {
            Some(text) => parse_ledger(&path, &text)?,
            None => Ledger::default(),
        };
        out.insert(d.to_string(), ledger);
    }
    Ok(out)
}

/// Sort planned notices by their ledger state: free or stale ones to send, the rest (already
/// sent, or claimed by a run that may still be sending) told to `sink` and left alone.
fn sift(
    notices: Vec<Notice>,
    ledgers: &BTreeMap<String, Ledger>,
    now: DateTime<FixedOffset>,
    stale_minutes: i64,
    sink: Sink,
) -> Vec<Todo> {
    let mut out = Vec::new();
    for n in notices {
        let free = |notice| Todo {
            notice,
            stale: None,
            earlier: Vec::new(),
            rendered: None,
        };
        let Some(ledger) = ledgers.get(&n.dataset) else {
            out.push(free(n));
            continue;
        };
        let k = key_of(&n);
        if ledger.sent().contains(&k) {
            continue;
        }
        match ledger.state(&k, now, stale_minutes) {
            ClaimState::Free => out.push(free(n)),
            ClaimState::InFlight { run, minutes } => sink(Event::InFlight {
                notice: &n,
                run: &run,
                minutes,
                stale_minutes,
            }),
            ClaimState::Stale { run, at, runs } => out.push(Todo {
                notice: n,
                stale: Some((run, at)),
                earlier: runs,
                rendered: None,
            }),
        }
    }
    out
}

/// The datasets with a milestone due `today` on a line other than the newest (a countdown
/// milestone, or an open window to announce), or with a live waiver to tell, with their
/// lines: only these are worth a pass over the consumption log.
pub fn due(
    store: &Store,
    today: NaiveDate,
    config: &Config,
) -> Result<BTreeMap<String, Vec<Line>>, RunError> {
    let mut due = BTreeMap::new();
    for dataset in store.datasets()? {
        let lines = store.lines(&dataset)?;
        let newest = lines.iter().max_by_key(|l| l.major);
        let newest_major = newest.map(|l| l.major);
        // A window is announced from its first day on (the ledger keeps it to once).
        let opened = config.notify.announce && newest.is_some_and(|n| n.opens <= today);
        let any_due = lines.iter().any(|l| {
            Some(l.major) != newest_major
                && l.sunset.is_some_and(|s| {
                    opened
                        || milestone_due(
                            today,
                            s,
                            &config.notify.days_before,
                            config.notify.overdue_every_days,
                        )
                        .is_some()
                })
        });
        let waived = store.waivers(&dataset)?.live(today).next().is_some();
        if any_due || waived {
            due.insert(dataset, lines);
        }
    }
    Ok(due)
}

/// Today's notices not yet sent by the ledgers at the store's HEAD, sifted by their claims:
/// what this run may send. `scan` is the consumption log's scan of the `due` datasets.
#[allow(clippy::too_many_arguments)]
pub fn pending(
    store: &Store,
    registry: &Registry,
    due: &BTreeMap<String, Vec<Line>>,
    scan: Option<&Scan>,
    settings: &Settings,
    config: &Config,
    domain: &str,
    sink: Sink,
) -> Result<Vec<Todo>, RunError> {
    let mut inputs: Vec<DatasetInput> = Vec::new();
    let mut sent: HashSet<SentKey> = HashSet::new();
    let mut waived: Vec<Notice> = Vec::new();
    if let Some(scan) = scan {
        for (dataset, ledger) in read_ledgers(store, due.keys().map(String::as_str))? {
            sent.extend(sent_keys(&dataset, &ledger, &|c| channels(registry, c)));
        }
        for (dataset, lines) in due {
            let standings = classify(dataset, lines, registry, &scan.of(dataset));
            sink(Event::Standings {
                dataset,
                standings: &standings,
            });
            let windowed: Vec<u64> = lines
                .iter()
                .filter(|l| l.sunset.is_some())
                .map(|l| l.major)
                .collect();
            let count = |status: Status| {
                standings
                    .iter()
                    .filter(|s| s.status == status && s.line.is_some_and(|l| windowed.contains(&l)))
                    .count()
            };
            let (unknown, unsubscribed) = (count(Status::Unknown), count(Status::Unsubscribed));
            if unsubscribed > 0 {
                sink(Event::Unsubscribed {
                    dataset,
                    count: unsubscribed,
                });
            }
            if unknown > 0 {
                sink(Event::Unregistered {
                    dataset,
                    count: unknown,
                });
            }
            inputs.push(super::dataset_input(dataset, lines, &standings, registry));
            let waivers = store.waivers(dataset)?;
            let is_sent = |c: &str, l: u64, m: &str| {
                sent.contains(&(dataset.clone(), c.to_string(), l, m.to_string()))
            };
            for w in super::waiver_notices::plan(
                dataset,
                &waivers,
                settings.today,
                &standings,
                registry,
                &is_sent,
            ) {
                waived.extend(waiver_notice(
                    store,
                    &w,
                    lines,
                    &standings,
                    registry,
                    settings.today,
                    domain,
                ));
            }
        }
    }
    let mut planned = plan(settings.today, &config.notify, domain, &inputs, &sent);
    planned.extend(waived);
    let notices = per_channel(registry, planned);
    let ledgers = read_ledgers(store, notices.iter().map(|n| n.dataset.as_str()))?;
    Ok(sift(
        notices,
        &ledgers,
        settings.now,
        settings.stale_minutes,
        sink,
    ))
}

/// The notice of one planned waiver notice: to the consumer's contacts, about the covered
/// line, with the waiver's facts (the bound from the line's live contract and, for a waiver
/// granted `--release`, that release's measured value from its record). A line with no sunset
/// records the waiver's last day as the notice's `sunset`: the day the notice is about.
fn waiver_notice(
    store: &Store,
    w: &super::waiver_notices::WaiverNotice,
    lines: &[Line],
    standings: &[Standing],
    registry: &Registry,
    today: NaiveDate,
    domain: &str,
) -> Option<Notice> {
    let line = lines.iter().find(|l| l.major == w.line)?;
    let newest = lines.iter().max_by_key(|l| l.major)?;
    let c = registry.get(&w.consumer)?;
    let reads = standings
        .iter()
        .find(|s| s.consumer == w.consumer)
        .and_then(|s| s.version.clone())
        .unwrap_or_else(|| line.newest().clone());
    let sunset = line.sunset.unwrap_or(w.waiver.until);
    let milestone = super::plan::Milestone::Waiver(w.waiver.id.clone());
    let (bound, measured) = waived_values(store, &w.dataset, line, &w.waiver);
    Some(Notice {
        dataset: w.dataset.clone(),
        consumer: w.consumer.clone(),
        team: c.team.clone(),
        line: w.line,
        recipients: c.contacts.clone(),
        sunset,
        days_left: (sunset - today).num_days(),
        old_version: line.newest().clone(),
        reads_version: reads,
        new_line: newest.major,
        new_version: newest.newest().clone(),
        message_id: super::plan::message_id(&w.dataset, w.line, &w.consumer, &milestone, domain),
        milestone,
        channel: MAIL.to_string(),
        uses: c.uses(&w.dataset).map(<[_]>::to_vec),
        verdict: None,
        breaking_changes: Vec::new(),
        told: Vec::new(),
        opens: None,
        waiver: Some(super::plan::WaiverFacts {
            id: w.waiver.id.clone(),
            clause: w.waiver.clause.clone(),
            bound,
            release: w.waiver.release.clone(),
            measured,
            granted: w.waiver.granted,
            until: w.waiver.until,
            by: w.waiver.by.clone(),
            reason: w.waiver.reason.clone(),
        }),
    })
}

/// The bound a waiver suspends, from the covered line's live contract, and the value the
/// release it names measured, replayed from that release's recorded profile by `validate`
/// itself. Either is `None` when the store cannot say (no such clause, no record, no profile):
/// a notice is still worth sending without them.
fn waived_values(
    store: &Store,
    dataset: &str,
    line: &Line,
    w: &crate::model::waiver::Waiver,
) -> (Option<serde_json::Value>, Option<serde_json::Value>) {
    let Ok(contract) = store.contract(
        dataset,
        &line.newest().to_string(),
        crate::model::Strictness::Reading,
    ) else {
        return (None, None);
    };
    let (clause, key) = match w.clause.split_once('.') {
        Some((c, k)) => (c, Some(k)),
        None => (w.clause.as_str(), None),
    };
    let pick = |v: serde_json::Value| match key {
        Some(k) => v.get(k).cloned(),
        None => Some(v),
    };
    let bound = contract
        .clauses
        .get(clause)
        .and_then(|c| pick(c.value.to_json()));
    let measured = w.release.as_ref().and_then(|release| {
        let path = layout::releases(dataset);
        let text = store.read(&path).ok()??;
        let records = crate::release::record::parse_records(&path, &text).ok()?;
        let record = records
            .iter()
            .rev()
            .find(|r| r.version.as_deref() == Some(release.as_str()))?;
        let recorded = record.profile.as_ref()?;
        let (profile, manifest) = recorded.restore(&record.files);
        let mut one = contract.clone();
        one.clauses.retain(|k, _| k == clause);
        one.unknown.clear();
        let report = crate::release::validate::validate(dataset, &profile, Some(&manifest), &[one]);
        let results: Vec<_> = report
            .contracts
            .into_iter()
            .flat_map(|c| c.results)
            .collect();
        // `metric_tolerances.<metric>` is a result of its own; a map clause's key is a key
        // of its one result's measured value.
        results
            .iter()
            .find(|r| r.clause == w.clause)
            .and_then(|r| r.measured.clone())
            .or_else(|| {
                results
                    .iter()
                    .find(|r| r.clause == clause)
                    .and_then(|r| r.measured.clone())
                    .and_then(pick)
            })
    });
    (bound, measured)
}

/// What a caller hands a run besides the store: the plan's inputs and the run's facts.
pub struct Inputs<'a> {
    pub registry: &'a Registry,
    /// The sender of every mail (`[notify] from`).
    pub from: &'a Mailbox,
    pub settings: Settings<'a>,
    /// Plan and render every notice, and claim, send and write nothing.
    pub dry_run: bool,
}

/// How a run ended.
#[derive(Debug)]
pub enum Ran {
    /// Planned and rendered, nothing claimed or sent: a dry run, or nothing to send.
    Planned(Vec<Todo>),
    /// Sent through the protocol: what became of each notice.
    Delivered(Report),
}

/// One notify run: plan today's notices and sift them by the ledgers ([`prepare`]); stop there
/// for a dry run or when nothing is left to send; else check the git identity, get the
/// transports from `open` (given the store, the notices to send and their rendered mails by
/// Message-ID; called only now, so a run with nothing to send reads no credentials) and
/// [`deliver`]: claim, send and journal, confirm, recovering a dead run's journal on the way.
/// `scan` is the consumption log's scan of the store's datasets with a milestone due.
pub fn run<E: From<RunError>, T: Transport>(
    store: Store,
    inputs: &Inputs,
    scan: impl FnOnce(&Store, BTreeSet<String>) -> Result<Scan, E>,
    open: impl FnOnce(&Store, &[Todo], BTreeMap<String, Message>) -> Result<T, E>,
    clock: Clock,
    sink: Sink,
) -> Result<Ran, E> {
    let (registry, from, s) = (inputs.registry, inputs.from, &inputs.settings);
    let scan = |datasets| scan(&store, datasets);
    let (todo, messages) = prepare(&store, registry, from, s, scan, &mut *sink)?;
    if inputs.dry_run || todo.is_empty() {
        return Ok(Ran::Planned(todo));
    }
    // The identity before the credentials, as `deliver` checks it first: nothing is sent
    // unless it can be recorded.
    store.identity().map_err(RunError::Identity)?;
    let mut transport = open(&store, &todo, messages)?;
    Ok(Ran::Delivered(deliver(
        store,
        todo,
        s,
        clock,
        &mut transport,
        sink,
    )?))
}

/// Today's notices this run may send, rendered: [`due`], then the consumption log's `scan`
/// of the due datasets (only when there are any), [`pending`] and [`render_mail`].
pub fn prepare<E: From<RunError>>(
    store: &Store,
    registry: &Registry,
    from: &Mailbox,
    settings: &Settings,
    scan: impl FnOnce(BTreeSet<String>) -> Result<Scan, E>,
    sink: Sink,
) -> Result<(Vec<Todo>, BTreeMap<String, Message>), E> {
    let config = store.config();
    let due = due(store, settings.today, config)?;
    let scan = match due.is_empty() {
        true => None,
        false => Some(scan(due.keys().cloned().collect())?),
    };
    let domain = from.email.domain().to_string();
    let mut todo = pending(
        store,
        registry,
        &due,
        scan.as_ref(),
        settings,
        config,
        &domain,
        sink,
    )?;
    let messages = render_mail(store, config, from, &mut todo)?;
    Ok((todo, messages))
}

/// Render every notice of `todo` as a mail from `from`, keyed by Message-ID, and set each
/// notice's verdict and breaking changes to what it tells. In a dry run too: a broken
/// template is found the day it is written, not the day it would have mattered.
pub fn render_mail(
    store: &Store,
    config: &Config,
    from: &Mailbox,
    todo: &mut [Todo],
) -> Result<BTreeMap<String, Message>, RunError> {
    let templates = Templates::new(
        store.read(&layout::template(SUBJECT))?,
        store.read(&layout::template(BODY))?,
    )
    .map_err(RunError::Templates)?
    .with_registry_url(config.notify.registry_url.clone());
    let mut messages = BTreeMap::new();
    let mut histories: BTreeMap<String, History> = BTreeMap::new();
    for t in todo {
        let n = &t.notice;
        if !histories.contains_key(&n.dataset) {
            histories.insert(n.dataset.clone(), store.history(&n.dataset)?);
        }
        // A waiver notice is about one clause of the line it reads, not about moving.
        let changes: Vec<_> = histories[&n.dataset]
            .breaking_between(n.line, n.new_line)
            .filter(|_| n.waiver.is_none())
            .map(|c| (c, change_values(store, &n.dataset, c)))
            .collect();
        let rendered = templates
            .render_with_values(
                n,
                &changes,
                &from.to_string(),
                config.consumption.lookback_days,
            )
            .map_err(|source| RunError::Render {
                notice: about(n),
                source: Box::new(source),
            })?;
        messages.insert(
            n.message_id.clone(),
            message(from, n, &rendered).map_err(RunError::Message)?,
        );
        t.rendered = Some(rendered);
        // What the notice told, for the report: the same selection the template received.
        let selected = super::render::told(n, &changes);
        let told: Vec<String> = selected.iter().map(|(c, _)| c.clause.clone()).collect();
        let facts = selected
            .iter()
            .map(|(c, v)| super::plan::ToldChange {
                clause: c.clause.clone(),
                old: v.old.clone(),
                new: v.new.clone(),
                rationale: c.rationale.clone(),
            })
            .collect();
        t.notice.told = facts;
        t.notice.verdict = Some(if told.is_empty() {
            ConsumerVerdict::Unaffected
        } else {
            ConsumerVerdict::Breaks
        });
        t.notice.breaking_changes = told;
    }
    Ok(messages)
}

/// The old and new value behind a change record, re-derived from the two contracts it
/// compares (the record names the clause, not the values). A record whose contracts cannot be
/// read gets no values rather than stopping the run: `check` is where records are proved.
fn change_values(store: &Store, dataset: &str, record: &ChangeRecord) -> ChangeValues {
    let Some(from) = &record.from else {
        return ChangeValues::default();
    };
    let read = |v: &str| store.contract(dataset, v, crate::model::Strictness::Reading);
    let (Ok(old), Ok(new)) = (read(from), read(&record.to)) else {
        return ChangeValues::default();
    };
    crate::model::derive_changes(&old, &new)
        .changes
        .into_iter()
        .find(|c| c.clause == record.clause)
        .map(|c| ChangeValues {
            old: c.old,
            new: c.new,
        })
        .unwrap_or_default()
}

/// Group `(dataset, text)` appends by ledger file.
fn by_ledger(items: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut m: BTreeMap<String, String> = BTreeMap::new();
    for (dataset, text) in items {
        m.entry(layout::notifications(&dataset))
            .or_default()
            .push_str(&text);
    }
    m.into_iter().collect()
}

fn claim_of(n: &Notice, s: &Settings) -> Claim {
    Claim {
        consumer: n.consumer.clone(),
        line: n.line,
        milestone: n.milestone.to_string(),
        recipients: n.recipients.clone(),
        message_id: n.message_id.clone(),
        run: s.run.to_string(),
        at: s.now,
        for_date: s.today,
        sunset: n.sunset,
        channel: n.channel.clone(),
    }
}

fn release_of(
    n: &Notice,
    run: &str,
    at: DateTime<FixedOffset>,
    reason: String,
) -> (String, String) {
    (
        n.dataset.clone(),
        release_text(&Release {
            consumer: n.consumer.clone(),
            line: n.line,
            milestone: n.milestone.to_string(),
            run: run.to_string(),
            at,
            reason,
            channel: n.channel.clone(),
        }),
    )
}

fn entry_of(n: &Notice, at: DateTime<FixedOffset>, today: NaiveDate, run: &str) -> String {
    entry_text(&LedgerEntry {
        consumer: n.consumer.clone(),
        line: n.line,
        milestone: n.milestone.to_string(),
        recipients: n.recipients.clone(),
        message_id: n.message_id.clone(),
        at,
        for_date: today,
        sunset: n.sunset,
        run: Some(run.to_string()),
        channel: n.channel.clone(),
    })
}

/// Commit the claims of `todo` through [`Store::transact`]: at each HEAD it lands on, the
/// ledgers are read again and whatever was claimed or sent meanwhile is dropped before the
/// rest is claimed. Returns the store at the newest HEAD (the claims read back: of two claims
/// of one notice, the first in the ledger sends) and what is left to send (empty when others
/// took it all).
fn claim(
    store: Store,
    todo: Vec<Todo>,
    s: &Settings,
    sink: Sink,
) -> Result<(Store, Vec<Todo>), RunError> {
    let datasets: BTreeSet<String> = todo.iter().map(|t| t.notice.dataset.clone()).collect();
    let notices: Vec<Notice> = todo.into_iter().map(|t| t.notice).collect();
    let done = store.transact(|current| -> Result<_, RunError> {
        let ledgers = read_ledgers(current, datasets.iter().map(String::as_str))?;
        let todo = sift(notices.clone(), &ledgers, s.now, s.stale_minutes, sink);
        if todo.is_empty() {
            return Ok(Step::Nothing(todo));
        }
        let appends = by_ledger(todo.iter().map(|t| {
            (
                t.notice.dataset.clone(),
                claim_text(&claim_of(&t.notice, s)),
            )
        }));
        let files = appends
            .iter()
            .map(|(path, text)| Ok((path.clone(), current.appended(path, ledger_header(), text)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        let message = format!("notify: claim {} notice(s) for {}", todo.len(), s.today);
        Ok(Step::Commit(Edit { files, message }, todo))
    })?;
    let after = done.store.refreshed()?;
    Ok((after, done.value))
}

/// Send `todo` through `transport`: open it, claim the batch in the ledgers (one commit),
/// record what a dead run's journal says it delivered, send the rest one by one (each
/// journalled before the next), close the transport and confirm the batch (one more commit).
///
/// Errors before the claim mean nothing was sent or written. After it, a failed delivery is
/// a row (released in the ledger, for the next run); a failure that ends the batch leaves the
/// rest `unsent` and released.
pub fn deliver(
    store: Store,
    todo: Vec<Todo>,
    s: &Settings,
    clock: Clock,
    transport: &mut dyn Transport,
    sink: Sink,
) -> Result<Report, RunError> {
    // Everything needed to record and to send, before the first delivery: a git identity for
    // the commits, and a transport that works.
    store.identity().map_err(RunError::Identity)?;
    transport.open().map_err(|source| RunError::Open {
        source,
        pending: todo.len(),
    })?;
    let journal_dir = store.notify_journal_dir();
    let mut journal = Journal::create(&journal_dir, s.run).map_err(|source| RunError::Journal {
        dir: journal_dir.clone(),
        source,
    })?;

    let (after, todo) = match claim(store, todo, s, sink) {
        Ok(x) => x,
        Err(e) => {
            journal.remove();
            return Err(RunError::Claim {
                source: Box::new(e),
            });
        }
    };
    let after_ledgers = read_ledgers(&after, todo.iter().map(|t| t.notice.dataset.as_str()))?;
    let mut mine = Vec::new();
    let mut releases = Vec::new();
    for t in todo {
        let held = after_ledgers
            .get(&t.notice.dataset)
            .is_some_and(|l| l.holds(&key_of(&t.notice), s.run, s.now, s.stale_minutes));
        if held {
            mine.push(t);
        } else {
            sink(Event::ClaimedFirst { notice: &t.notice });
            releases.push(release_of(
                &t.notice,
                s.run,
                clock(),
                "another run claimed it first".into(),
            ));
        }
    }

    // A stale claim's run may have delivered the notice before it died: its journal says.
    let mut journals: BTreeMap<String, HashMap<Delivered, DateTime<FixedOffset>>> = BTreeMap::new();
    for t in &mine {
        for old in &t.earlier {
            if !journals.contains_key(old) {
                journals.insert(old.clone(), journal::read(&journal_dir, old));
            }
        }
    }
    let delivered_by = |t: &Todo| {
        let d = (t.notice.dataset.clone(), key_of(&t.notice));
        t.earlier
            .iter()
            .find_map(|old| Some((old.clone(), *journals[old].get(&d)?)))
    };

    let mut report = Report {
        rows: Vec::with_capacity(mine.len()),
        ..Report::default()
    };
    let mut confirmations = Vec::new();
    let mut confirmed: HashSet<Delivered> = HashSet::new();
    for t in &mine {
        let n = &t.notice;
        if let Some((old, at)) = delivered_by(t) {
            sink(Event::Recovered {
                notice: n,
                run: &old,
                at,
            });
            confirmations.push((n.dataset.clone(), entry_of(n, at, s.today, &old)));
            confirmed.insert((n.dataset.clone(), key_of(n)));
            report.recovered += 1;
            report.rows.push(Row {
                resent: false,
                ..t.row("recovered", None)
            });
            continue;
        }
        if let Some(why) = &report.stopped {
            releases.push(release_of(
                n,
                s.run,
                clock(),
                format!("not sent: the batch stopped ({why})"),
            ));
            report.rows.push(t.row("unsent", None));
            report.unsent += 1;
            continue;
        }
        if let Some((old, at)) = &t.stale {
            sink(Event::Resending {
                notice: n,
                run: old,
                at: *at,
                stale_minutes: s.stale_minutes,
            });
        }
        match transport.deliver(n) {
            Ok(()) => {
                // The instant the server accepted it, on disk before the next send.
                let at = clock();
                if let Err(e) = journal.record(&n.dataset, &key_of(n), at) {
                    report.stopped = Some(format!(
                        "cannot write the journal {}: {e}",
                        journal.path().display()
                    ));
                }
                sink(Event::Sent { notice: n });
                confirmations.push((n.dataset.clone(), entry_of(n, at, s.today, s.run)));
                confirmed.insert((n.dataset.clone(), key_of(n)));
                report.sent += 1;
                report.rows.push(t.row("sent", None));
            }
            Err(e) => {
                report.failed += 1;
                sink(Event::Failed {
                    notice: n,
                    error: &e,
                });
                if e.ends_batch() {
                    report.stopped = Some(e.to_string());
                }
                match e.refused_status() {
                    // Refused for good: recorded, so later runs do not send it again.
                    Some(status) => releases.push((
                        n.dataset.clone(),
                        super::ledger::failure_text(&super::ledger::Failure {
                            consumer: n.consumer.clone(),
                            line: n.line,
                            milestone: n.milestone.to_string(),
                            run: s.run.to_string(),
                            at: clock(),
                            status,
                            reason: e.to_string(),
                            channel: n.channel.clone(),
                        }),
                    )),
                    None => releases.push(release_of(n, s.run, clock(), format!("not sent: {e}"))),
                }
                report.rows.push(t.row("failed", Some(e.to_string())));
            }
        }
    }
    transport.close();
    report.usage = transport.usage();
    if !confirmations.is_empty() || !releases.is_empty() {
        let mut message = format!("notify: {} notice(s) sent for {}", report.sent, s.today);
        if report.recovered > 0 {
            message.push_str(&format!(
                ", {} recovered from a dead run's journal",
                report.recovered
            ));
        }
        let changes = by_ledger(confirmations.into_iter().chain(releases));
        commit_ledger(after, changes, &message).map_err(|source| RunError::Confirm {
            sent: report.sent,
            journal: journal.path().to_path_buf(),
            stale_minutes: s.stale_minutes,
            source,
        })?;
    }
    // Confirmed: this run's journal, and those of dead runs now wholly recorded, are done.
    journal.remove();
    for (old, entries) in &journals {
        let done = entries.keys().all(|d| {
            confirmed.contains(d)
                || after_ledgers
                    .get(&d.0)
                    .is_some_and(|l| l.sent().contains(&d.1))
        });
        if done {
            journal::remove_run(&journal_dir, old);
        }
    }
    Ok(report)
}
