//! The sunset notifier: plan -> render -> send (docs/src/commands/notify.md).
//!
//! `plan` decides, purely, who is told what today; `message` renders a notice as subject and
//! body from templates, on a fuel and size budget; `send` delivers over one SMTP connection,
//! one attempt per batch; `ledger` claims each notice before it is sent and confirms it after,
//! so that no notice is sent twice by two runs, and `journal` lists what a run delivered so that
//! a run killed before its confirmation is not resent. `run` drives them in that order for
//! the CLI, which reads the store once and hands it the facts (`run::Facts`) and the day as
//! values, the transports it opens when something is to be sent (a `Transport` per channel:
//! mail in `send`, webhooks in `webhook`; the clock that stamps deliveries goes with them, at
//! the edge) and an event sink, and renders the rows and events it gets back; `--dry-run`
//! stops after rendering, and `preview` is what `--show` prints of each notice. `waiver_notices` plans the `waiver:<id>` notices, and
//! `deprecation_notices` the `deprecated:<key>:<step>` ones.

/// Every channel of a run (mail and webhooks) behind one transport.
pub mod channels;
pub mod deprecation_notices;
pub mod journal;
pub mod ledger;
pub mod message;
pub mod plan;
pub mod preview;
pub mod run;
pub mod send;
#[cfg(test)]
mod test_fixtures;
pub mod waiver_notices;
pub mod webhook;

use crate::consumers::{Registry, Standing, Status};
use crate::model::Line;
use plan::{DatasetInput, Holder, WindowedLine};

/// An error with its sources, in one line, each source once (a source whose text the line
/// already holds is not repeated). Callers strip what must not be shown (a URL, a secret).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// The planner's input for one dataset: each line with a sunset, paired with the registered
/// consumers whose newest read is still on it. Consumers are told to move to the newest line,
/// since that is the one that stays.
pub fn dataset_input(
    dataset: &str,
    lines: &[Line],
    standings: &[Standing],
    registry: &Registry,
) -> DatasetInput {
    let Some(newest) = lines.iter().max_by_key(|l| l.major) else {
        return DatasetInput {
            dataset: dataset.to_string(),
            lines: Vec::new(),
        };
    };
    let windowed = lines
        .iter()
        .filter(|l| l.major < newest.major)
        .filter_map(|l| {
            let sunset = l.sunset?;
            let holders = standings
                .iter()
                // A consumer whose newest read names a version the store does not have is told
                // about the line of its last known read.
                .filter(|s| {
                    matches!(s.status, Status::StillOn | Status::UnknownVersion)
                        && s.line == Some(l.major)
                })
                .filter_map(|s| {
                    let c = registry.get(&s.consumer)?;
                    Some(Holder {
                        consumer: s.consumer.clone(),
                        team: c.team.clone(),
                        recipients: c.contacts.clone(),
                        reads_version: s.version.clone()?,
                        uses: c.uses(dataset).map(<[_]>::to_vec),
                    })
                })
                .collect();
            Some((
                WindowedLine {
                    line: l.major,
                    sunset,
                    old_version: l.newest().clone(),
                    new_line: newest.major,
                    new_version: newest.newest().clone(),
                    opens: newest.opens,
                },
                holders,
            ))
        })
        .collect();
    DatasetInput {
        dataset: dataset.to_string(),
        lines: windowed,
    }
}
