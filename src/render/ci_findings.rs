//! The CI findings (`--format github` and `--format sarif`) of a change table and of a
//! refused proposal, which `diff` and `propose --dry-run` share. Pure: the changes and the
//! contract's text in, [`Finding`]s out; `render::ci` writes them.

use crate::model::proposal::Refusal;
use crate::model::{Change, Verdict};
use crate::render::ci::{toml_line, Finding, Level};
use crate::render::delta::change_words;

/// The findings of a change table: breaking changes are errors when the bump does not cover
/// them (`insufficient-bump`) and warnings otherwise; compatible changes are notes.
/// `file`/`text` are the newer contract's path and content, for the line of each clause.
pub fn change_findings(
    changes: &[Change],
    sufficient: bool,
    file: &str,
    text: Option<&str>,
) -> Vec<Finding> {
    changes
        .iter()
        .map(|c| {
            let (rule, level) = match (c.verdict, sufficient) {
                (Verdict::Breaking, false) => ("insufficient-bump", Level::Error),
                (Verdict::Breaking, true) => ("breaking-change", Level::Warning),
                _ => ("compatible-change", Level::Note),
            };
            Finding {
                rule,
                level,
                title: format!("{}: {} ({}, {})", c.clause, c.verdict, c.kind, c.direction),
                message: match (c.verdict, sufficient) {
                    (Verdict::Breaking, false) => format!(
                        "{}; a breaking change needs a major version",
                        change_words(c)
                    ),
                    _ => change_words(c),
                },
                file: Some(file.to_string()),
                line: text.and_then(|t| toml_line(t, &c.clause)),
            }
        })
        .collect()
}

/// A refused proposal: one error per reason, on the line of the key it is about.
pub fn refusal_findings(refusals: &[Refusal], file: &str, text: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for r in refusals {
        if let Refusal::InsufficientBump { demanding, .. } = r {
            out.extend(change_findings(demanding, false, file, Some(text)));
            continue;
        }
        let key = match r {
            Refusal::NoKind { clause, .. }
            | Refusal::NotAdvisory { clause, .. }
            | Refusal::WideCrossing { clause, .. } => clause.as_str(),
            Refusal::RemovedBeforeDeadline { key, .. } => key.as_str(),
            Refusal::FirstHasSupersedes { .. } | Refusal::WrongSupersedes { .. } => "supersedes",
            Refusal::NotNewer { .. } | Refusal::AlreadyPublished { .. } => "version",
            Refusal::Placeholder { .. } => "description",
            Refusal::FirstHasSunset
            | Refusal::MissingSunset { .. }
            | Refusal::SunsetOnMinor { .. }
            | Refusal::WindowOutsidePolicy { .. }
            | Refusal::SunsetDisagrees { .. } => "sunset",
            Refusal::ValidFromBackwards { .. } | Refusal::ThreeLive { .. } => "valid_from",
            Refusal::InsufficientBump { .. } => "version",
        };
        out.push(Finding {
            rule: "refused",
            level: Level::Error,
            title: "proposal refused".to_string(),
            message: r.to_string(),
            file: Some(file.to_string()),
            // A key the draft does not set (a missing sunset) points at `version`.
            line: toml_line(text, key)
                .filter(|_| text.lines().any(|l| l.trim_start().starts_with(key)))
                .or_else(|| toml_line(text, "version")),
        });
    }
    out
}
