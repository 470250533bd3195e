//! The one place where the library's typed notes become talk: each [`ScanNote`] (a blind
//! source, a malformed line, an unreadable file, the scan's counts), each consumer read at a
//! version its dataset does not have, and each [`Event`] of a notify run is worded here, so
//! the library says what happened and the CLI alone says how it reads. So are a reader's
//! warnings ([`ReadWarning`]), a backtest's notes and what a writer did on its own on the way to its commit ([`WriterNote`]).

use std::fmt;

use crate::consumers::scan_report::{BlindNote, BlindWhy, ScanNote};
use crate::consumers::{Standing, Status};
use crate::model::history::instant_text;
use crate::notify::ledger::MAIL;
use crate::notify::run::{about, Event};
use crate::release::read_warning::Bbox;
use crate::release::record::BacktestNote;
use crate::release::{ReadWarning, Warned};
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

/// A reader's warning, without the `warning: ` that stderr puts before it (a validation
/// report holds the same words).
impl fmt::Display for Said<'_, ReadWarning> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = &self.0.at;
        match &self.0.what {
            Warned::ForeignFeatures => write!(
                f,
                "{at}: a Feature has a `features` member; it is a foreign member and its \
                 contents are ignored"
            ),
            Warned::ColumnCrs { column, why } => write!(
                f,
                "{at}: geometry column `{column}`: {why}; reporting the CRS as unknown"
            ),
            Warned::SphericalEdges { column } => write!(
                f,
                "{at}: geometry column `{column}` has spherical edges: its envelope is taken \
                 over the vertices, and an edge (a great-circle arc) can reach beyond it \
                 towards a pole"
            ),
            Warned::GeoUnchecked { column, what } => write!(
                f,
                "{at}: geometry column `{column}`: its `geo` metadata's {what} is not checked"
            ),
            Warned::BboxMisses {
                column,
                declared,
                data,
            } => write!(
                f,
                "{at}: geometry column `{column}`: its `geo` metadata declares bbox {}, which \
                 does not contain the data's envelope {}; the profile reports the data's",
                show_box(declared),
                show_box(data)
            ),
            Warned::TypesUndeclared {
                column,
                declared,
                found,
                missing,
            } => write!(
                f,
                "{at}: geometry column `{column}`: its `geo` metadata declares geometry_types \
                 {}, the data holds {} ({} not declared); the profile reports the data's",
                show_names(declared),
                show_names(found),
                show_names(missing)
            ),
            Warned::BeyondLonLat { column, crs, data } => write!(
                f,
                "{at}: geometry column `{column}`: its `geo` metadata declares a \
                 longitude/latitude CRS ({crs}; an absent `crs` means OGC:CRS84), but the \
                 data's envelope {} reaches beyond [-180, -90, 180, 90]; the profile keeps \
                 that CRS and the data's envelope",
                show_box(data)
            ),
            Warned::CoveringUnchecked {
                column,
                covering,
                why,
            } => write!(
                f,
                "{at}: geometry column `{column}`: its `geo` metadata declares covering column \
                 `{covering}`, which is not checked ({why})"
            ),
            Warned::CoveringMisses {
                column,
                covering,
                misses,
                rows,
                row,
                cover,
                geometry,
            } => write!(
                f,
                "{at}: geometry column `{column}`: its `geo` metadata declares covering column \
                 `{covering}`, whose box does not contain the geometry's in {misses} of {rows} \
                 rows (first row {row}, counted from 0: covering {}, geometry {}); the profile \
                 reports the geometries",
                cover.as_ref().map_or("null".to_string(), show_box),
                show_box(geometry)
            ),
            Warned::UnknownGeometryType { name } => {
                write!(f, "{at}: geometry type {name} is not one a contract names")
            }
            Warned::MixedSrids { column, srids } => {
                let list: Vec<String> = srids.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "{at}: column `{column}` mixes SRIDs {}; the CRS is unknown",
                    list.join(", ")
                )
            }
            Warned::UnknownSrid { srid } => write!(
                f,
                "{at}: SRID {srid} has no authority and code in spatial_ref_sys that this build \
                 knows; the CRS is unknown"
            ),
            Warned::NoDbf => write!(
                f,
                "{at}: no .dbf file; reading the shapes without attributes"
            ),
            Warned::NoPrj => write!(f, "{at}: no .prj file; reporting the CRS as unknown"),
            Warned::PrjUnidentified { why } => write!(
                f,
                "{at}: the CRS in its .prj is not identified ({why}); reporting it as unknown"
            ),
            Warned::TrailingBytes { bytes, records } => write!(
                f,
                "{at}: ignored {bytes} bytes after the last record ({records}), padding or junk"
            ),
            Warned::HeaderLength {
                declared,
                records,
                end,
            } => write!(
                f,
                "{at}: ignored the header's file length ({declared} bytes): the {records} \
                 records end at byte {end}"
            ),
            Warned::ShxMismatch { listed, records } => write!(
                f,
                "{at}: ignored its .shx, which lists {listed} records where the .shp holds \
                 {records}"
            ),
        }
    }
}

/// A box as GeoParquet writes one, in the shortest form of each number.
fn show_box(b: &Bbox) -> String {
    format!("[{}, {}, {}, {}]", b[0], b[1], b[2], b[3])
}

/// Geometry type names as a JSON list.
fn show_names(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    format!("[{}]", quoted.join(", "))
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
