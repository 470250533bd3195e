//! Gathering what the pictures show: the facts of one dataset's timeline read from the
//! store, its change history, its release records, its waivers, the notification ledger and
//! the daily reads. This room sits above `notify`, `consumers`, `release` and `store`, so that
//! `render` stays a set of pure renderers of values handed to it (the timeline SVG draws a
//! [`Timeline`]; it reads nothing).

use chrono::NaiveDate;
use semver::Version;

use crate::consumers::daily::{still_on_by_day, DailyReads, DaySpan};
use crate::consumers::Registry;
use crate::model::window::windows;
use crate::model::Strictness;
use crate::release::record::parse_records;
use crate::release::validate::Status;
use crate::render::timeline::{
    ContractResult, LineSpan, ReleaseMark, StillOn, SunsetMark, Timeline, Told, VersionMark,
    WaiverSpan,
};
use crate::store::{layout, Store, StoreError};

/// Everything the picture of `dataset` shows on `today`, read from the store. `reads`: the
/// registry and the dataset's daily reads, for the consumers still on each window's old line
/// (only the registry's subscribers to the dataset count); `None` when the dataset has no
/// window (then no count is drawn). A releases record or notification ledger that does not
/// parse is a [`StoreError::Toml`], as a change history that does not parse is.
pub fn gather(
    store: &Store,
    dataset: &str,
    today: NaiveDate,
    reads: Option<(&Registry, &DailyReads)>,
) -> Result<Timeline, StoreError> {
    let lines = store.lines(dataset)?;
    let contracts = store.contracts(dataset, Strictness::Reading)?;
    let history = store.history(dataset)?;
    let path = layout::releases(dataset);
    let records = match store.read(&path)? {
        Some(text) => parse_records(&path, &text)?,
        None => Vec::new(),
    };
    let spans = lines
        .iter()
        .map(|l| LineSpan {
            major: l.major,
            opens: l.opens,
            sunset: l.sunset,
            versions: contracts
                .iter()
                .filter(|c| c.version.major == l.major)
                .map(|c| VersionMark {
                    version: c.version.to_string(),
                    valid_from: c.valid_from,
                })
                .collect(),
        })
        .collect();
    let sunset_moves = history
        .sunset
        .iter()
        .map(|s| SunsetMark {
            line: s.line,
            recorded: s.at.date_naive(),
            from: s.from,
            to: s.to,
            forced: s.forced,
        })
        .collect();
    let releases = records
        .iter()
        .map(|r| ReleaseMark {
            day: r.date.unwrap_or(r.validated),
            version: r.version.clone(),
            results: r
                .contract
                .iter()
                .filter_map(|c| {
                    let v = Version::parse(&c.version).ok()?;
                    Some(ContractResult {
                        line: v.major,
                        contract: c.version.clone(),
                        passed: !c.results.values().any(|s| *s == Status::Fail),
                    })
                })
                .collect(),
        })
        .collect();
    let recorded = store.waivers(dataset)?;
    let waivers = recorded
        .waiver
        .iter()
        .map(|w| WaiverSpan {
            id: w.id.clone(),
            line: w.line,
            clause: w.clause.clone(),
            granted: w.granted,
            until: w.until,
            revoked_on: recorded.revocation(&w.id).map(|r| r.on),
        })
        .collect();
    let windows = windows(&lines);
    let consumption = &store.config().consumption;
    let mut still_on = Vec::new();
    if let (false, Some((all, reads))) = (windows.is_empty(), reads) {
        // Only the consumers subscribed to the dataset hold its lines.
        let registry = Registry::new(
            all.subscribers(dataset)
                .map(|c| (c.name.clone(), c.clone()))
                .collect(),
        );
        for w in &windows {
            let counts = if w.opens <= today {
                let days = DaySpan {
                    from: w.opens,
                    to: today,
                    lookback_days: consumption.lookback_days,
                };
                still_on_by_day(reads, &registry, w.old_line, days)
            } else {
                Vec::new()
            };
            still_on.push(StillOn {
                line: w.old_line,
                counts,
            });
        }
    }
    Ok(Timeline {
        dataset: dataset.to_string(),
        today,
        lookback_days: consumption.lookback_days,
        lines: spans,
        windows,
        sunset_moves,
        releases,
        still_on,
        told: told(store, dataset)?,
        waivers,
    })
}

/// Every notice delivered about `dataset`, from its ledger (notifications/<dataset>.toml).
pub fn told(store: &Store, dataset: &str) -> Result<Vec<Told>, StoreError> {
    let path = layout::notifications(dataset);
    let Some(text) = store.read(&path)? else {
        return Ok(Vec::new());
    };
    let ledger = crate::notify::ledger::parse_ledger(&path, &text)?;
    Ok(ledger
        .notices
        .iter()
        .map(|e| &e.notice)
        .map(|e| Told {
            line: e.line,
            consumer: e.consumer.clone(),
            milestone: e.milestone.clone(),
            channel: e.channel.clone(),
            day: e.for_date,
            at: crate::model::history::instant_text(&e.at),
        })
        .collect())
}
