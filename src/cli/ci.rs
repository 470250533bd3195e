//! `--format github` and `--format sarif`: what `check`, `validate`, `diff` and
//! `propose --dry-run` found, as CI annotations (see `render::ci`). Each command turns its own
//! report into findings here; the two writers are shared.

use std::path::Path;

use super::{CommandError, Context, Format};
use crate::model::proposal::Refusal;
use crate::model::{Change, Verdict};
use crate::render::ci::{github, sarif, toml_line, Finding, Level};
use crate::render::delta::delta;

/// Whether the format is one of the CI ones.
pub fn is_ci(format: Format) -> bool {
    matches!(format, Format::Github | Format::Sarif)
}

/// Print the findings in the CI format asked for.
pub fn print(ctx: &Context, findings: &[Finding]) {
    match ctx.format {
        Format::Github => {
            let text = github(findings);
            if !text.is_empty() {
                outln!(ctx, "{}", text.trim_end());
            }
        }
        _ => super::output::print_json(ctx, &sarif(findings, env!("CARGO_PKG_VERSION"))),
    }
}

/// A path for an annotation: `rel` under `root`, made relative to the current directory
/// when inside it (GitHub and SARIF viewers resolve paths against the checkout root, where CI
/// runs), `/`-separated.
pub fn shown_path(root: &Path, rel: &str) -> String {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let full = canon(root).join(rel);
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| full.strip_prefix(canon(&cwd)).ok().map(Path::to_path_buf))
        .unwrap_or(full);
    shown.to_string_lossy().replace('\\', "/")
}

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
                        delta(c.old.as_ref(), c.new.as_ref())
                    ),
                    _ => delta(c.old.as_ref(), c.new.as_ref()),
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

/// Refuse a CI format for a command that writes (`propose` without `--dry-run`).
pub fn refuse_unless_dry_run(ctx: &Context, dry_run: bool) -> Result<(), CommandError> {
    if is_ci(ctx.format) && !dry_run {
        return Err(CommandError::input(
            "`propose` speaks --format github and sarif only with --dry-run",
        ));
    }
    Ok(())
}
