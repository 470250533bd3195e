//! The one place where the library's typed notes become talk: each [`ScanNote`] (a blind
//! source, a malformed line, an unreadable file, the scan's counts), each consumer read at a
//! version its dataset does not have, and each [`Event`] of a notify run is worded here, so
//! the library says what happened and the CLI alone says how it reads. So are a backtest's
//! notes and what a writer did on its own on the way to its commit ([`WriterNote`]).

use std::fmt;

use crate::consumers::store_scan::{BlindNote, BlindWhy, ScanNote};
use crate::consumers::{Standing, Status};
use crate::model::history::instant_text;
use crate::notify::ledger::MAIL;
use crate::notify::run::{about, Event};
use crate::release::record::BacktestNote;
use crate::store::{Tidy, WriterNote};

/// A note, an event or a standing as one line of talk on stderr.
pub struct Said<'a, T>(pub &'a T);

impl fmt::Display for Said<'_, ScanNote> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ScanNote::NoLogs { paths } => write!(
                f,
                "warning: no consumption log matches the consumption sources {paths:?}: every \
                 consumer is silent"
            ),
            // Line 0 is the whole file.
            ScanNote::Malformed {
                file,
                line: 0,
                reason,
            } => {
                write!(f, "warning: {}: {reason}", file.display())
            }
            ScanNote::Malformed { file, line, reason } => {
                write!(f, "warning: {}:{line}: {reason}", file.display())
            }
            ScanNote::MalformedTotal { total, shown } => write!(
                f,
                "warning: {total} malformed lines in all; the first {shown} are shown above"
            ),
            ScanNote::Skipped { file, reason } => write!(
                f,
                "warning: {}: {reason}; the file is skipped",
                file.display()
            ),
            ScanNote::SharedPrincipal {
                principal,
                claimants,
            } => write!(
                f,
                "warning: principal {principal:?} matches the identities of several consumers \
                 ({}); its reads are counted as unknown (run `contracts check`)",
                claimants.join(", ")
            ),
            ScanNote::Scanned {
                files,
                lines,
                reads,
                from,
                to,
                malformed,
                after_today,
            } => write!(
                f,
                "scanned {files} file(s), {lines} line(s): {reads} read(s) from {from} to {to}; \
                 {malformed} malformed, {after_today} after --today ignored"
            ),
            ScanNote::Access {
                source,
                files,
                request_lines,
                reads,
                same_read,
                not_read: n,
            } => write!(
                f,
                "source `{source}`: {files} file(s), {request_lines} request line(s): {reads} \
                 read(s), {same_read} request(s) continued a read; not reads: {} method, {} \
                 status, {} unmatched",
                n.method, n.status, n.unmatched
            ),
            ScanNote::Blind(b) => blind(f, b),
            ScanNote::ObjectStorage {
                listed,
                read,
                from,
                to,
            } => write!(
                f,
                "object storage: {listed} object(s) listed, {read} read (the others cannot hold \
                 a read from {from} to {to})"
            ),
        }
    }
}

/// A blind source: what it read, why it cannot be believed, one line it could not use, and
/// what the gates do about it.
fn blind(f: &mut fmt::Formatter<'_>, b: &BlindNote) -> fmt::Result {
    let what = &b.what;
    let reasons = b
        .reasons
        .iter()
        .map(|(reason, n)| format!("{n} {reason}"))
        .collect::<Vec<_>>()
        .join(", ");
    let example = b
        .example
        .as_ref()
        .map_or(String::new(), |line| format!("; for example: {line}"));
    match &b.why {
        BlindWhy::Unmatched {
            unmatched,
            requests,
        } => write!(
            f,
            "warning: {what}: {unmatched} of {requests} request(s) matched no `match` template \
             ({reasons}){example}"
        )?,
        BlindWhy::NoneARead { requests } => write!(
            f,
            "warning: {what} read {requests} request(s), none of them a read ({reasons}){example}"
        )?,
        BlindWhy::NoRead {
            from,
            to,
            files,
            lines,
            malformed,
        } => write!(
            f,
            "warning: {what} gave no read of any dataset from {from} to {to} ({files} file(s), \
             {lines} line(s), {malformed} malformed)"
        )?,
    }
    // A `sources` glob has no table to set the key on: it must become one.
    let quiet = if b.table {
        "set `expect_reads = false` on it"
    } else {
        "declare it as a [[consumption.source]] table with `expect_reads = false`"
    };
    write!(
        f,
        "; while it is blind, `can-retire`, `status` and `notify` cannot tell who still reads \
         (fix the source, or {quiet} if it is meant to be quiet)"
    )
}

/// A backtest's note on a dataset.
impl fmt::Display for Said<'_, (&str, BacktestNote<'_>)> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (dataset, note) = self.0;
        match note {
            BacktestNote::NarrowingWouldFail { replay: r, since } => write!(
                f,
                "warning: {dataset}: narrowing `{}` would have failed {} of {} recorded \
                 release(s) since {since}: {}",
                r.clause,
                r.would_fail,
                r.evaluated,
                r.releases.join(", ")
            ),
            BacktestNote::WithoutProfile { releases, since } => write!(
                f,
                "note: {dataset}: {releases} recorded release(s) since {since} have no profile \
                 (recorded before profiles were kept) and were not replayed"
            ),
        }
    }
}

/// What a writer did on its own, or could not do, on the way to its commit.
impl fmt::Display for Said<'_, WriterNote> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            WriterNote::Tidied { what, paths } => {
                let n = paths.len();
                match what {
                    Tidy::DeadLocks => {
                        write!(f, "removed {n} git lock file(s) left by a writer that died")?
                    }
                    Tidy::Checkout => {
                        write!(f, "repaired the checkout: {n} file(s) were behind HEAD")?
                    }
                    Tidy::StaleTemps => write!(
                        f,
                        "removed {n} temporary file(s) left by a writer that died"
                    )?,
                }
                write!(f, " ({})", paths.join(", "))
            }
            WriterNote::TidyFailed { what, error } => {
                let failed = match what {
                    Tidy::DeadLocks => "remove the git lock files a writer that died left",
                    Tidy::Checkout => "repair the checkout",
                    Tidy::StaleTemps => "remove temporary files",
                };
                write!(f, "warning: could not {failed}: {}", chain(error))
            }
            WriterNote::Lagging { commit, error } => {
                let hint = error
                    .hint()
                    .map(|h| format!("\n  hint: {h}"))
                    .unwrap_or_default();
                write!(
                    f,
                    "warning: committed {commit}, but updating the work tree and index failed: \
                     {}; the commit is safe, and the next writer repairs the checkout{hint}",
                    chain(error)
                )
            }
            WriterNote::PushedEarlier { remote } => {
                write!(f, "pushed this checkout's earlier commits to {remote}")
            }
            WriterNote::Moved { attempt, attempts } => write!(
                f,
                "the store moved under this writer (attempt {attempt} of {attempts}); reading \
                 the new HEAD, checking again and retrying"
            ),
        }
    }
}

/// An error with its causes, for a one-line warning.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// What the CLI says of a notify run's event, one line on stderr. (`Standings` says nothing
/// here: the CLI warns about unknown versions as `consumers` does.)
impl fmt::Display for Said<'_, Event<'_>> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
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
                instant_text(at)
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
                instant_text(at)
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

/// A warning line for each consumer of `dataset` whose newest read names a version the store
/// does not have, saying which line it is then counted on (or that it has none).
pub fn unknown_versions<'a>(
    dataset: &'a str,
    standings: &'a [Standing],
) -> impl Iterator<Item = String> + 'a {
    let odd = standings
        .iter()
        .filter(|s| s.status == Status::UnknownVersion);
    odd.map(move |s| {
        let read = s
            .unknown_version
            .as_ref()
            .map_or("?".to_string(), |v| v.to_string());
        match (&s.version, s.line) {
            (Some(v), Some(l)) => format!(
                "warning: {dataset}: consumer `{}` read version {read}, which {dataset} does not \
                 have; its last read of a known version is {v} (line {l})",
                s.consumer
            ),
            _ => format!(
                "warning: {dataset}: consumer `{}` read version {read}, which {dataset} does not \
                 have, and no known version in the lookback: its line is unknown",
                s.consumer
            ),
        }
    })
}
