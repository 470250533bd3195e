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

use crate::model::spatial::{AttrType, Dimension, GeometryType};
use crate::model::{Contract, Envelope};

use super::profile::AttributeProfile;
use super::validate::{validate, Manifest, Report, Status};
use super::Profile;

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
    /// What the release contained, kept so later clauses can be replayed on it (`backtest`,
    /// `propose`, `advisory`). Absent in records written before profiles were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<RecordedProfile>,
    /// The waivers the release was recorded under (ids in the waivers file). Absent in
    /// records written before waivers, and when none applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waivers: Vec<String>,
    pub contract: Vec<ContractRecord>,
}

/// A release's profile as a record keeps it: the counts (fractions are derived from them) and
/// the manifest's metrics, written as one inline table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedProfile {
    pub format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crs: Option<String>,
    pub features: u64,
    #[serde(default)]
    pub null_geometries: u64,
    #[serde(default)]
    pub invalid_geometries: u64,
    /// `[minx, miny, maxx, maxy]`; absent when the release has no coordinate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envelope: Option<[f64; 4]>,
    #[serde(default)]
    pub geometry: Vec<GeometryType>,
    #[serde(default)]
    pub dimensions: Vec<Dimension>,
    /// Attribute name → `[type, nulls]`.
    #[serde(default)]
    pub attributes: BTreeMap<String, (AttrType, u64)>,
    /// Where a database release was read (a PostGIS table's snapshot); absent for files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<super::profile::Snapshot>,
    /// The manifest's metrics (`imputed_fraction`, ...): figures the data cannot give.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub manifest: BTreeMap<String, f64>,
}

impl RecordedProfile {
    pub fn of(profile: &Profile, manifest: &Manifest) -> RecordedProfile {
        RecordedProfile {
            format: profile.format.clone(),
            crs: profile.crs.clone(),
            features: profile.feature_count,
            null_geometries: profile.null_geometries,
            invalid_geometries: profile.invalid_geometries,
            envelope: profile.envelope.map(|e| [e.minx, e.miny, e.maxx, e.maxy]),
            geometry: profile.geometry_types.iter().copied().collect(),
            dimensions: profile.dimensions.iter().copied().collect(),
            attributes: profile
                .attributes
                .iter()
                .map(|(k, a)| (k.clone(), (a.ty, a.nulls)))
                .collect(),
            snapshot: profile.snapshot.clone(),
            manifest: manifest.metrics.clone(),
        }
    }

    /// The profile and manifest back, with every derived figure recomputed, as `validate`
    /// saw them.
    pub fn restore(&self, files: &[String]) -> (Profile, Manifest) {
        let mut p = Profile {
            files: files.to_vec(),
            format: self.format.clone(),
            crs: self.crs.clone(),
            feature_count: self.features,
            null_geometries: self.null_geometries,
            invalid_geometries: self.invalid_geometries,
            envelope: self.envelope.map(Envelope::from),
            geometry_types: self.geometry.iter().copied().collect(),
            dimensions: self.dimensions.iter().copied().collect(),
            attributes: self
                .attributes
                .iter()
                .map(|(k, (ty, nulls))| {
                    (
                        k.clone(),
                        AttributeProfile {
                            ty: *ty,
                            nulls: *nulls,
                            null_fraction: 0.0,
                        },
                    )
                })
                .collect(),
            metrics: BTreeMap::new(),
            snapshot: self.snapshot.clone(),
        };
        p.finish();
        let m = Manifest {
            version: None,
            date: None,
            metrics: self.manifest.clone(),
        };
        (p, m)
    }
}

impl ReleaseRecord {
    /// How the record names the release: its version, else the day it was validated and its
    /// files.
    pub fn label(&self) -> String {
        self.version
            .clone()
            .unwrap_or_else(|| format!("{} ({})", self.validated, self.files.join(", ")))
    }
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
        profile: Some(RecordedProfile::of(&report.profile, &report.release)),
        waivers: report.waiver_ids(),
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

/// The TOML text appended for one record: a single `[[release]]` table, its profile as one
/// inline table (`profile = { format = "GPKG", ... }`) so a record stays a few lines long
/// whatever the number of attributes.
pub fn render_record(record: &ReleaseRecord) -> Result<String, toml::ser::Error> {
    let mut bare = record.clone();
    let profile = bare.profile.take();
    let file = ReleasesFile {
        release: vec![bare],
    };
    let text = toml::to_string(&file)?;
    let Some(profile) = profile else {
        return Ok(text);
    };
    let inline = toml::Value::try_from(&profile)?.to_string();
    // The record's own keys come first, up to its first sub-table.
    let cut = text
        .find("\n[[release.contract]]")
        .or_else(|| text.find("\n[release."))
        .map_or(text.len(), |i| i + 1);
    let (head, tail) = text.split_at(cut);
    let head = head.trim_end_matches('\n');
    Ok(format!("{head}\nprofile = {inline}\n\n{tail}"))
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
/// failed: the clause is replayed on each release's recorded profile (see [`replay`]). A
/// record written before profiles were kept is counted from its recorded results: under the
/// same contract version if it was validated against it, otherwise under the newest version
/// it was validated against that has the clause.
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
                // The clause as the contract writes it now, replayed on the release's profile;
                // a record from before profiles were kept falls back to its recorded results.
                let statuses: Vec<Status> = match replay_clause(r, c, clause) {
                    Some(statuses) => statuses,
                    None => {
                        let cr = r
                            .contract
                            .iter()
                            .find(|cr| cr.version == version && matching(cr))
                            .or_else(|| r.contract.iter().rev().find(matching));
                        let Some(cr) = cr else { continue };
                        cr.results
                            .iter()
                            .filter(|(k, _)| *k == clause || k.starts_with(&format!("{clause}.")))
                            .map(|(_, s)| *s)
                            .collect()
                    }
                };
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

/// How one clause of a draft fares on the recorded releases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replay {
    pub clause: String,
    /// Releases with a recorded profile on which the clause could be evaluated.
    pub evaluated: u64,
    /// Of those, how many it fails (or, advisory, would fail).
    pub would_fail: u64,
    /// The releases it fails, by [`ReleaseRecord::label`], in record order.
    pub releases: Vec<String>,
}

impl Replay {
    /// The releases it fails, comma-separated, or `-`: the cell every backtest table shows.
    pub fn releases_text(&self) -> String {
        if self.releases.is_empty() {
            "-".to_string()
        } else {
            self.releases.join(", ")
        }
    }
}

/// The results `validate` gives `clause` of `contract` on a record's profile: the same
/// [`validate`] and so the same `Check` dispatch as a release validation, on a copy of the
/// contract holding that clause alone. `None` for a record without a profile.
pub fn replay_clause(
    record: &ReleaseRecord,
    contract: &Contract,
    clause: &str,
) -> Option<Vec<Status>> {
    let recorded = record.profile.as_ref()?;
    let (profile, manifest) = recorded.restore(&record.files);
    let mut one = contract.clone();
    one.clauses.retain(|k, _| k == clause);
    one.unknown.retain(|k, _| k == clause);
    let report = validate(&contract.dataset, &profile, Some(&manifest), &[one]);
    Some(
        report
            .contracts
            .iter()
            .flat_map(|c| &c.results)
            .filter(|r| r.clause == clause || r.clause.starts_with(&format!("{clause}.")))
            .map(|r| r.status)
            .collect(),
    )
}

/// Replay each of `clauses` of `contract` on every record that kept its profile. A release
/// counts as evaluated when one of the clause's results is pass or a failure, and as failed
/// when one is a failure (enforced or advisory alike: the question is whether it would fire).
pub fn replay(records: &[&ReleaseRecord], contract: &Contract, clauses: &[String]) -> Vec<Replay> {
    clauses
        .iter()
        .map(|clause| {
            let mut out = Replay {
                clause: clause.clone(),
                evaluated: 0,
                would_fail: 0,
                releases: Vec::new(),
            };
            for r in records {
                let Some(statuses) = replay_clause(r, contract, clause) else {
                    continue;
                };
                if statuses.iter().any(|s| s.is_failure()) {
                    out.evaluated += 1;
                    out.would_fail += 1;
                    out.releases.push(r.label());
                } else if statuses.contains(&Status::Pass) {
                    out.evaluated += 1;
                }
            }
            out
        })
        .collect()
}

/// The header a new releases file starts with.
pub fn releases_header(dataset: &str) -> String {
    format!(
        "# Release validations of `{dataset}`: appended by `contracts validate --record`.\n\
         # Append-only: `contracts check` fails if an earlier record is ever edited or removed.\n"
    )
}

/// How far back a backtest looks by default: a year of releases.
pub const BACKTEST_DAYS: i64 = 365;

/// The replay of one draft on the releases recorded before it (`contracts backtest`, and
/// `propose` before it records).
#[derive(Debug, Clone, Serialize)]
pub struct Backtest {
    /// The first day of the releases replayed on (validated from it to the day of the run).
    pub since: NaiveDate,
    /// Recorded releases validated in that span.
    pub releases: usize,
    /// Of those, how many were recorded before profiles were kept and could not be replayed.
    pub without_profile: usize,
    pub clauses: Vec<Replay>,
    /// The kind of each clause replayed, for the narrowing warning.
    #[serde(skip)]
    kinds: Vec<crate::model::Kind>,
}

impl Backtest {
    /// No replay at all: for a proposal refused before any rule ran.
    pub fn none(since: NaiveDate) -> Backtest {
        Backtest {
            since,
            releases: 0,
            without_profile: 0,
            clauses: Vec::new(),
            kinds: Vec::new(),
        }
    }

    /// What the user should hear on stderr, one note each: a narrowing that would have
    /// failed recorded releases, and the releases that could not be replayed.
    pub fn notes(&self) -> Vec<BacktestNote<'_>> {
        let mut out = Vec::new();
        for (replay, kind) in self.clauses.iter().zip(&self.kinds) {
            if *kind == crate::model::Kind::Narrowing && replay.would_fail > 0 {
                out.push(BacktestNote::NarrowingWouldFail {
                    replay,
                    since: self.since,
                });
            }
        }
        if self.without_profile > 0 {
            out.push(BacktestNote::WithoutProfile {
                releases: self.without_profile,
                since: self.since,
            });
        }
        out
    }
}

/// What a backtest has to say besides its table, worded by the CLI.
#[derive(Debug, Clone, Copy)]
pub enum BacktestNote<'a> {
    /// A narrowing clause that would have failed recorded releases since `since`.
    NarrowingWouldFail {
        replay: &'a Replay,
        since: NaiveDate,
    },
    /// Recorded releases since `since` that have no profile (recorded before profiles were
    /// kept), so were not replayed.
    WithoutProfile { releases: usize, since: NaiveDate },
}

/// The clauses of `draft` a replay is about: those changed or added since `prev` (all of
/// them for a first version); a removed clause has nothing to replay.
fn replayed_clauses(prev: Option<&Contract>, draft: &Contract) -> Vec<String> {
    use crate::model::{derive_changes, Direction};
    let mut out: Vec<String> = match prev {
        None => draft.clauses.keys().cloned().collect(),
        Some(prev) => derive_changes(prev, draft)
            .changes
            .iter()
            .filter(|c| c.direction != Direction::Removed)
            .map(|c| c.clause.split('.').next().unwrap_or(&c.clause).to_string())
            .filter(|c| draft.clauses.contains_key(c))
            .collect(),
    };
    out.dedup();
    out
}

/// Replay `draft` (whose newest committed predecessor is `prev`) on the `records` of its
/// dataset validated from `since` (default: [`BACKTEST_DAYS`] before `today`) to `today`.
pub fn backtest(
    records: &[ReleaseRecord],
    today: NaiveDate,
    since: Option<NaiveDate>,
    prev: Option<&Contract>,
    draft: &Contract,
) -> Backtest {
    let since = since.unwrap_or(today - chrono::Duration::days(BACKTEST_DAYS));
    let span: Vec<_> = records
        .iter()
        .filter(|r| r.validated >= since && r.validated <= today)
        .collect();
    let clauses = replayed_clauses(prev, draft);
    let kinds = clauses.iter().map(|c| draft.clauses[c].spec.kind).collect();
    Backtest {
        since,
        releases: span.len(),
        without_profile: span.iter().filter(|r| r.profile.is_none()).count(),
        clauses: replay(&span, draft, &clauses),
        kinds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_keeps_its_profile_on_one_line_and_old_records_still_parse() {
        let text = "[[release]]\nversion = \"2026.01\"\nvalidated = \"2026-01-02\"\nfiles = [\"a.gpkg\"]\n\
                    passed = true\n\n[[release.contract]]\nversion = \"1.0.0\"\n\n\
                    [release.contract.results]\ncrs = \"pass\"\n";
        let old = parse_records("r.toml", text).unwrap();
        assert_eq!(
            old[0].profile, None,
            "a record from before profiles were kept"
        );
        let mut rec = old[0].clone();
        rec.profile = Some(RecordedProfile {
            format: "GPKG".into(),
            crs: Some("EPSG:4326".into()),
            features: 10,
            null_geometries: 1,
            invalid_geometries: 0,
            envelope: Some([0.0, 1.0, 2.0, 3.0]),
            geometry: vec![GeometryType::Polygon],
            dimensions: vec![Dimension::Xy],
            attributes: [("name".to_string(), (AttrType::String, 2))].into(),
            // A table's snapshot nests inside the inline table and still reads back.
            snapshot: Some(super::super::profile::Snapshot {
                lsn: "0/1A2B3C8".into(),
                xids: "748:750:748".into(),
                at: "2026-12-06T09:40:00.123456Z".into(),
            }),
            manifest: [("imputed_fraction".to_string(), 0.25)].into(),
        });
        let rendered = render_record(&rec).unwrap();
        let line = rendered
            .lines()
            .find(|l| l.starts_with("profile = {"))
            .unwrap_or_else(|| panic!("{rendered}"));
        assert!(line.ends_with('}'), "{rendered}");
        assert_eq!(
            parse_records("r.toml", &rendered).unwrap(),
            vec![rec.clone()]
        );
        let (p, m) = rec.profile.as_ref().unwrap().restore(&rec.files);
        assert_eq!(p.attributes["name"].null_fraction, 0.2);
        assert_eq!(p.metrics["null_geometry_fraction"], 0.1);
        assert_eq!(m.metrics["imputed_fraction"], 0.25);
    }
}
