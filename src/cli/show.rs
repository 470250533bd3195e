use serde::Serialize;

use super::output::{print_json, table};
use super::{CommandError, Context, Format, Outcome};
use crate::model::{Check, Strictness};

/// How `validate` reads a contract, stated once (SPEC §5).
pub const READING_RULES: &str = "\
How releases are validated against this contract:
  - a clause this build cannot evaluate is reported as not evaluated and never fails a release;
  - a clause missing from a contract is permissive;
  - a clause is enforced only from the version that introduces it, and an advisory clause
    only warns until a later version enforces it.";

/// Print one contract version (the newest by default): its dates, every clause with its kind
/// and whether it is enforced, advisory or not evaluated by this build.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// DATASET or DATASET@VERSION
    target: String,
}

#[derive(Serialize)]
struct ClauseRow {
    clause: String,
    kind: Option<String>,
    shape: Option<String>,
    value: serde_json::Value,
    status: &'static str,
}

#[derive(Serialize)]
struct Report {
    dataset: String,
    version: String,
    supersedes: Option<String>,
    valid_from: String,
    sunset: Option<String>,
    description: Option<String>,
    clauses: Vec<ClauseRow>,
    reading_rules: &'static str,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    ctx.refuse_junit("show")?;
    let store = ctx.store()?;
    let (dataset, version) = match args.target.split_once('@') {
        Some((d, v)) => (d.to_string(), v.to_string()),
        None => {
            let versions = store.versions(&args.target)?;
            let newest = versions
                .last()
                .ok_or_else(|| crate::store::StoreError::UnknownDataset(args.target.clone()))?;
            (args.target.clone(), newest.to_string())
        }
    };
    let c = store.contract(&dataset, &version, Strictness::Reading)?;
    let mut clauses: Vec<ClauseRow> = c
        .clauses
        .iter()
        .map(|(name, clause)| {
            let evaluated = !matches!(clause.spec.check, Check::NotEvaluated(_));
            ClauseRow {
                clause: name.clone(),
                kind: Some(clause.spec.kind.to_string()),
                shape: Some(clause.spec.shape.to_string()),
                value: clause.value.to_json(),
                status: if c.is_advisory(name) {
                    "advisory"
                } else if evaluated {
                    "enforced"
                } else {
                    "not evaluated"
                },
            }
        })
        .collect();
    clauses.extend(c.unknown.iter().map(|(name, v)| ClauseRow {
        clause: name.clone(),
        kind: None,
        shape: None,
        value: serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
        status: "not evaluated (unknown to this build)",
    }));
    let report = Report {
        dataset: c.dataset.clone(),
        version: c.version.to_string(),
        supersedes: c.supersedes.as_ref().map(|v| v.to_string()),
        valid_from: c.valid_from.to_string(),
        sunset: c.sunset.map(|d| d.to_string()),
        description: c.description.clone(),
        clauses,
        reading_rules: READING_RULES,
    };
    match ctx.format {
        Format::Json => print_json(&report),
        _ => {
            outln!("{} {}", report.dataset, report.version);
            if let Some(d) = &report.description {
                outln!("  {d}");
            }
            if let Some(s) = &report.supersedes {
                outln!("supersedes: {s}");
            }
            outln!("valid from: {}", report.valid_from);
            if let Some(s) = &report.sunset {
                outln!("sunset of the previous line: {s}");
            }
            let rows = report.clauses.iter().map(|r| {
                vec![
                    r.clause.clone(),
                    r.kind.clone().unwrap_or_else(|| "-".into()),
                    r.shape.clone().unwrap_or_else(|| "-".into()),
                    super::output::cell(Some(&r.value)),
                    r.status.to_string(),
                ]
            });
            outln!(
                "{}",
                table(&["clause", "kind", "shape", "value", "status"], rows)
            );
            outln!("{READING_RULES}");
        }
    }
    Ok(Outcome::Clean)
}
