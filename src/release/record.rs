//! Release outcome records (`history/<dataset>.releases.toml`) and the advisory count.
//!
//! Every `validate --record` appends one `[[release]]` table: the release's version and date,
//! the day it was validated, its files, and for each live contract the status of each
//! clause. `contracts advisory` reads them back and counts, for each advisory clause, how many
//! recorded releases it would have failed, so a clause that would fail 40% of releases is
//! seen to be mis-specified before anyone enforces it. Rendering and counting are pure; the
//! store appends the text in one commit.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::model::Contract;

use super::validate::{Report, Status};

/// One contract's results in a recorded release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractRecord {
    pub version: String,
    /// Clause name → status.
    pub results: BTreeMap<String, Status>,
}

/// One recorded release validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseRecord {
    /// The release's own version (manifest), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The release's date (manifest), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<NaiveDate>,
    /// The day it was validated (`--today`).
    pub validated: NaiveDate,
    pub files: Vec<String>,
    pub passed: bool,
    pub contract: Vec<ContractRecord>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReleasesFile {
    #[serde(default)]
    release: Vec<ReleaseRecord>,
}

/// The record of one validation.
pub fn record_of(report: &Report, validated: NaiveDate) -> ReleaseRecord {
    ReleaseRecord {
        version: report.release.version.clone(),
        date: report.release.date,
        validated,
        files: report.profile.files.clone(),
        passed: report.passed,
        contract: report
            .contracts
            .iter()
            .map(|c| ContractRecord {
                version: c.version.clone(),
                results: c
                    .results
                    .iter()
                    .map(|r| (r.clause.clone(), r.status))
                    .collect(),
            })
            .collect(),
    }
}

/// The TOML text appended for one record: a single `[[release]]` table.
pub fn render_record(record: &ReleaseRecord) -> Result<String, toml::ser::Error> {
    let file = ReleasesFile {
        release: vec![record.clone()],
    };
    toml::to_string(&file)
}

/// Parse a whole releases file.
pub fn parse_records(
    file: &str,
    text: &str,
) -> Result<Vec<ReleaseRecord>, crate::model::TomlErrors> {
    let f: ReleasesFile = crate::model::location::from_toml(file, text)?;
    Ok(f.release)
}

/// How an advisory clause fared over the recorded releases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdvisoryCount {
    /// The live contract whose `advisory` list names the clause.
    pub contract: String,
    pub clause: String,
    /// Recorded releases in which the clause was evaluated (passed or failed).
    pub evaluated: u64,
    /// Of those, how many it failed (or would have failed).
    pub failed: u64,
    pub fail_fraction: f64,
}

/// For each advisory clause of each contract, how many recorded releases it would have
/// failed. A release is counted under the same contract version if it was validated against
/// it, otherwise under the newest version it was validated against that has the clause: an
/// advisory clause is usually new, and its value may have been the same in earlier versions.
/// `metric_tolerances.<metric>` results count for an advisory `metric_tolerances`.
pub fn advisory_counts(records: &[ReleaseRecord], contracts: &[Contract]) -> Vec<AdvisoryCount> {
    let mut out = Vec::new();
    for c in contracts {
        let version = c.version.to_string();
        for clause in &c.advisory {
            let mut evaluated = 0;
            let mut failed = 0;
            for r in records {
                let matching = |cr: &&ContractRecord| {
                    cr.results
                        .keys()
                        .any(|k| k == clause || k.starts_with(&format!("{clause}.")))
                };
                let cr = r
                    .contract
                    .iter()
                    .find(|cr| cr.version == version && matching(cr))
                    .or_else(|| r.contract.iter().rev().find(matching));
                let Some(cr) = cr else { continue };
                let statuses: Vec<Status> = cr
                    .results
                    .iter()
                    .filter(|(k, _)| *k == clause || k.starts_with(&format!("{clause}.")))
                    .map(|(_, s)| *s)
                    .collect();
                if statuses.iter().any(|s| s.is_failure()) {
                    evaluated += 1;
                    failed += 1;
                } else if statuses.contains(&Status::Pass) {
                    evaluated += 1;
                }
            }
            out.push(AdvisoryCount {
                contract: version.clone(),
                clause: clause.clone(),
                evaluated,
                failed,
                fail_fraction: if evaluated == 0 {
                    0.0
                } else {
                    failed as f64 / evaluated as f64
                },
            });
        }
    }
    out
}

/// The header a new releases file starts with.
pub fn releases_header(dataset: &str) -> String {
    format!(
        "# Release validations of `{dataset}`: appended by `contracts validate --record`.\n\
         # Append-only: `contracts check` fails if an earlier record is ever edited or removed.\n"
    )
}
