use serde::Serialize;

use super::output::{clause_status, key, print_json, print_table, text, whole};
use super::{CommandError, Context, Format, Outcome};
use crate::model::contract::{crossings, Crossing};
use crate::model::{Strictness, SunsetSource};

/// How `validate` reads a contract, stated once.
pub const READING_RULES: &str = "\
How releases are validated against this contract:
  - a clause this build cannot evaluate is reported as not evaluated and never fails a release;
  - a clause missing from a contract is permissive;
  - a clause is enforced only from the version that introduces it, and an advisory clause
    only warns until a later version enforces it.";

/// Print one contract version
///
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

/// The effective sunset of the line a version is on: the one value every command uses.
#[derive(Serialize)]
struct LineSunset {
    line: u64,
    date: chrono::NaiveDate,
    days_left: i64,
    source: SunsetSource,
}

/// The sunset a new major declares for the line before it, beside the one in force: `sunset`
/// may have moved it since.
#[derive(Serialize)]
struct PredecessorSunset {
    line: u64,
    /// What this version's file says (it never changes).
    declared: chrono::NaiveDate,
    /// The date in force today, after any `contracts sunset`.
    effective: Option<chrono::NaiveDate>,
    source: Option<SunsetSource>,
}

/// A live waiver covering this version's line (or every line) on `--today`.
#[derive(Serialize)]
struct ShownWaiver {
    id: String,
    /// The line it covers; `null`: every live line.
    line: Option<u64>,
    clause: String,
    granted: chrono::NaiveDate,
    until: chrono::NaiveDate,
    days_left: i64,
    by: String,
    reason: String,
}

#[derive(Serialize)]
struct Report {
    dataset: String,
    version: String,
    supersedes: Option<String>,
    valid_from: String,
    /// The sunset this version declares for the previous line (a new major only).
    sunset: Option<String>,
    /// This version's line's effective sunset; `null` while the line has none.
    line_sunset: Option<LineSunset>,
    /// The previous line's sunset as declared here and as in force; `null` on a minor.
    predecessor_sunset: Option<PredecessorSunset>,
    description: Option<String>,
    /// The live waivers of this version's line, on `--today`.
    waivers: Vec<ShownWaiver>,
    clauses: Vec<ClauseRow>,
    /// Envelope clauses that cross the antimeridian, with their width.
    antimeridian: Vec<Crossing>,
    /// The `[deprecated]` entries: clause keys announced to go away, by key.
    deprecated: Vec<crate::model::deprecation::Deprecation>,
    /// Top-level keys this build does not know (a newer build's), set aside unread.
    unknown_keys: Vec<String>,
    reading_rules: &'static str,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    let dataset_of_target = args.target.split('@').next().unwrap_or_default();
    let store = ctx.store_for(dataset_of_target)?;
    let (dataset, version) = store.resolve_target(&args.target)?;
    let c = store.contract(&dataset, &version, Strictness::Reading)?;
    let lines = store.lines(&dataset)?;
    let waivers = store
        .waivers(&dataset)?
        .live(ctx.today)
        .filter(|w| w.line.is_none_or(|l| l == c.version.major))
        .map(|w| ShownWaiver {
            id: w.id.clone(),
            line: w.line,
            clause: w.clause.clone(),
            granted: w.granted,
            until: w.until,
            days_left: w.days_left(ctx.today),
            by: w.by.clone(),
            reason: w.reason.clone(),
        })
        .collect();
    let mut clauses: Vec<ClauseRow> = c
        .clauses
        .iter()
        .map(|(name, clause)| ClauseRow {
            clause: name.clone(),
            kind: Some(clause.spec.kind.to_string()),
            shape: Some(clause.spec.shape.to_string()),
            value: clause.value.to_json(),
            status: c.clause_status(name).as_str(),
        })
        .collect();
    clauses.extend(c.unknown.iter().map(|(name, v)| ClauseRow {
        clause: name.clone(),
        kind: None,
        shape: None,
        value: serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
        status: c.clause_status(name).as_str(),
    }));
    let report = Report {
        dataset: c.dataset.clone(),
        version: c.version.to_string(),
        supersedes: c.supersedes.as_ref().map(|v| v.to_string()),
        valid_from: c.valid_from.to_string(),
        sunset: c.sunset.map(|d| d.to_string()),
        line_sunset: lines
            .iter()
            .find(|l| l.major == c.version.major)
            .and_then(|l| {
                Some(LineSunset {
                    line: l.major,
                    date: l.sunset?,
                    days_left: (l.sunset? - ctx.today).num_days(),
                    source: l.source.clone()?,
                })
            }),
        predecessor_sunset: c.sunset.and_then(|declared| {
            let previous = lines.iter().rev().find(|l| l.major < c.version.major)?;
            Some(PredecessorSunset {
                line: previous.major,
                declared,
                effective: previous.sunset,
                source: previous.source.clone(),
            })
        }),
        description: c.description.clone(),
        waivers,
        clauses,
        antimeridian: crossings(&c),
        deprecated: c.deprecated.values().cloned().collect(),
        unknown_keys: c.unknown_keys.keys().cloned().collect(),
        reading_rules: READING_RULES,
    };
    match ctx.format {
        Format::Json => print_json(ctx, &report),
        _ => {
            outln!(ctx, "{} {}", report.dataset, report.version);
            if let Some(d) = &report.description {
                outln!(ctx, "  {d}");
            }
            if let Some(s) = &report.supersedes {
                outln!(ctx, "supersedes: {s}");
            }
            outln!(ctx, "valid from: {}", report.valid_from);
            if let Some(p) = &report.predecessor_sunset {
                let moved = p
                    .effective
                    .filter(|d| *d != p.declared)
                    .map(|d| format!(" (since moved to {d})"))
                    .unwrap_or_default();
                outln!(
                    ctx,
                    "declares the sunset of line {}: {}{moved}",
                    p.line,
                    p.declared
                );
            }
            match &report.line_sunset {
                None => outln!(ctx, "sunset of line {}: none yet", c.version.major),
                Some(ls) => outln!(
                    ctx,
                    "sunset of line {}: {} ({}), {}",
                    ls.line,
                    ls.date,
                    days_left(ls.days_left),
                    describe_source(&ls.source)
                ),
            }
            if !report.waivers.is_empty() {
                outln!(ctx, "live waivers of line {}:", c.version.major);
                let rows = report.waivers.iter().map(|w| {
                    vec![
                        w.id.clone(),
                        w.clause.clone(),
                        w.until.to_string(),
                        days_left(w.days_left),
                        w.by.clone(),
                        w.reason.clone(),
                    ]
                });
                print_table(
                    ctx,
                    &[
                        key("waiver"),
                        key("clause"),
                        key("until"),
                        key("left"),
                        key("by"),
                        text("reason"),
                    ],
                    rows,
                );
            }
            let rows = report.clauses.iter().map(|r| {
                vec![
                    r.clause.clone().into(),
                    r.kind.clone().unwrap_or_else(|| "-".into()).into(),
                    r.shape.clone().unwrap_or_else(|| "-".into()).into(),
                    super::output::cell(Some(&r.value)).into(),
                    clause_status(r.status),
                ]
            });
            print_table(
                ctx,
                &[
                    key("clause"),
                    key("kind"),
                    key("shape"),
                    whole("value"),
                    key("status"),
                ],
                rows,
            );
            for x in &report.antimeridian {
                outln!(ctx, "{x}");
            }
            for d in &report.deprecated {
                let days = (d.remove_after - ctx.today).num_days();
                let instead = d
                    .replacement
                    .as_ref()
                    .map_or(String::new(), |r| format!(" (use {r})"));
                outln!(
                    ctx,
                    "deprecated: `{}`, promised through {} ({}): {}{instead}",
                    d.key,
                    d.remove_after,
                    days_left(days),
                    d.reason
                );
            }
            for k in &report.unknown_keys {
                outln!(
                    ctx,
                    "not read by this build: top-level key `{k}` (a newer build's)"
                );
            }
            outln!(ctx, "{READING_RULES}");
        }
    }
    Ok(Outcome::Clean)
}

fn days_left(days: i64) -> String {
    match days {
        d if d > 0 => format!("{d} days left"),
        0 => "today".to_string(),
        d => format!("{} days ago", -d),
    }
}

fn describe_source(source: &SunsetSource) -> String {
    match source {
        SunsetSource::Contract { version } => format!("declared by {version}"),
        SunsetSource::SunsetEvent {
            at,
            rationale,
            forced,
        } => format!(
            "set by `contracts sunset` on {}{}: {rationale}",
            at.format("%Y-%m-%d"),
            if *forced { " (forced)" } else { "" }
        ),
    }
}
