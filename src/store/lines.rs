//! A dataset's lines (when each opens and sunsets) and the contract current on a day: worked
//! out from the first version of each line and the history's sunset moves, kept once worked
//! out, and worked out ahead for many datasets at once by [`Store::prefetch`].

use chrono::NaiveDate;
use semver::Version;

use super::git::ObjectId;
use super::{layout, parse_contract_text, read_and_judge, Store, StoreError};
use crate::model::consistency::moves_of;
use crate::model::history::parse_history;
use crate::model::{lines, Contract, Line, Strictness};

/// The first version of each line, in `versions` (oldest first): a line opens on its first
/// version's `valid_from`, and its successor's first version declares its sunset.
fn first_versions(versions: &[Version]) -> impl Iterator<Item = &Version> {
    versions
        .iter()
        .enumerate()
        .filter(|(i, v)| *i == 0 || versions[i - 1].major != v.major)
        .map(|(_, v)| v)
}

/// A dataset's lines from the parsed first version of each line, its history file's text
/// (sunsets moved by `[[sunset]]` events) and all its versions.
fn lines_of(
    dataset: &str,
    firsts: &[Contract],
    history: Option<&str>,
    versions: &[Version],
) -> Result<Vec<Line>, StoreError> {
    let refs: Vec<&Contract> = firsts.iter().collect();
    // Most histories never moved a sunset; skip parsing those.
    let moves = match history {
        Some(text) if text.contains("[[sunset]]") => {
            moves_of(&parse_history(&layout::history(dataset), text)?)
        }
        _ => Vec::new(),
    };
    let mut out = lines(&refs, &moves);
    for line in &mut out {
        line.versions = versions
            .iter()
            .filter(|v| v.major == line.major)
            .cloned()
            .collect();
    }
    Ok(out)
}

/// What [`Store::prefetch`] reads of a dataset to work out its lines.
struct FirstVersions {
    dataset: String,
    versions: Vec<Version>,
    /// The first version of each line with its text.
    firsts: Vec<(String, String)>,
    history: Option<String>,
}

impl Store {
    /// The lines of a dataset, with sunsets as declared and as moved, and every version's
    /// number.
    ///
    /// Only the first version of each line is parsed: a line opens on its first version's
    /// `valid_from`, and its successor's first version declares its sunset. So `status` over
    /// thousands of datasets parses a few files per dataset, not every version.
    pub fn lines(&self, dataset: &str) -> Result<Vec<Line>, StoreError> {
        if let Some(known) = self.lines.borrow().get(dataset) {
            return Ok(known.clone());
        }
        let versions = self.versions(dataset)?;
        if versions.is_empty() {
            return Err(self.unknown_dataset(dataset));
        }
        let parsed: Vec<Contract> = first_versions(&versions)
            .map(|v| self.contract(dataset, &v.to_string(), Strictness::Reading))
            .collect::<Result<_, _>>()?;
        let history = self.history_text(dataset)?;
        let out = lines_of(dataset, &parsed, history.as_deref(), &versions)?;
        self.lines
            .borrow_mut()
            .insert(dataset.to_string(), out.clone());
        Ok(out)
    }

    /// Work out ahead what [`Store::lines`] answers for each of `datasets`, and what
    /// [`Store::current_version`] answers on `day` for the lines `wanted` picks, reading the
    /// files on this thread while the contracts read are parsed on every core. Only answers
    /// are kept: a dataset whose files do not read or parse is left to those methods, which
    /// then fail as they always have.
    pub fn prefetch(&self, datasets: &[String], day: NaiveDate, wanted: impl Fn(&Line) -> bool) {
        const PER_BATCH: usize = 256;
        let config = &self.config;
        let todo: Vec<&String> = {
            let known = self.lines.borrow();
            datasets
                .iter()
                .filter(|d| !known.contains_key(*d))
                .collect()
        };
        let read = |batch: &[&String]| Ok::<_, std::convert::Infallible>(self.read_firsts(batch));
        let judge = |read: Option<FirstVersions>| {
            let read = read?;
            let parsed: Vec<Contract> = read
                .firsts
                .iter()
                .map(|(v, text)| {
                    parse_contract_text(config, &read.dataset, v, text, Strictness::Reading).ok()
                })
                .collect::<Option<_>>()?;
            let lines = lines_of(
                &read.dataset,
                &parsed,
                read.history.as_deref(),
                &read.versions,
            );
            Some((read.dataset, lines.ok()?))
        };
        let Ok(judged) = read_and_judge(&todo, PER_BATCH, read, judge);
        let mut asks: Vec<(String, u64, String)> = Vec::new();
        {
            let mut known = self.lines.borrow_mut();
            for (dataset, lines) in judged.into_iter().flatten() {
                for line in lines.iter().filter(|l| wanted(l)) {
                    asks.push((dataset.clone(), line.major, line.newest().to_string()));
                }
                known.insert(dataset, lines);
            }
        }
        // The newest version of a line is the current one once it is valid.
        let read = |batch: &[(String, u64, String)]| {
            let blobs: Vec<Option<ObjectId>> = batch
                .iter()
                .map(|(dataset, _, version)| self.contract_blob(dataset, version).ok())
                .collect();
            let wanted: Vec<(ObjectId, String)> = batch
                .iter()
                .zip(&blobs)
                .filter_map(|((d, _, v), id)| id.map(|id| (id, layout::contract(d, v))))
                .collect();
            let mut texts = self.read_texts(&wanted).into_iter();
            let read = batch
                .iter()
                .zip(blobs)
                .map(|((dataset, major, version), id)| {
                    id?;
                    let text = texts.next()?.ok()?;
                    Some((dataset.clone(), *major, version.clone(), text))
                });
            Ok::<_, std::convert::Infallible>(read.collect())
        };
        let judge = |read: Option<(String, u64, String, String)>| {
            let (dataset, major, version, text) = read?;
            let c = parse_contract_text(config, &dataset, &version, &text, Strictness::Reading);
            c.ok()
                .filter(|c| c.valid_from <= day)
                .map(|c| ((dataset, major, day), c.version))
        };
        let Ok(current) = read_and_judge(&asks, PER_BATCH, read, judge);
        self.current
            .borrow_mut()
            .extend(current.into_iter().flatten());
    }

    /// The texts [`Store::lines`] reads of each dataset, for [`Store::prefetch`]; `None` for a
    /// dataset one of whose files does not read.
    fn read_firsts(&self, datasets: &[&String]) -> Vec<Option<FirstVersions>> {
        // Each dataset's versions, and its first versions with their blobs.
        type Plan = (Vec<Version>, Vec<String>, Vec<ObjectId>);
        let plans: Vec<Option<Plan>> = datasets
            .iter()
            .map(|dataset| {
                let versions = self.versions(dataset).ok()?;
                let firsts: Vec<String> =
                    first_versions(&versions).map(ToString::to_string).collect();
                let blobs: Vec<ObjectId> = firsts
                    .iter()
                    .map(|v| self.contract_blob(dataset, v))
                    .collect::<Result<_, _>>()
                    .ok()?;
                Some((versions, firsts, blobs))
            })
            .collect();
        let wanted: Vec<(ObjectId, String)> = datasets
            .iter()
            .zip(&plans)
            .filter_map(|(d, plan)| plan.as_ref().map(|p| (d, p)))
            .flat_map(|(d, (_, firsts, blobs))| {
                blobs
                    .iter()
                    .zip(firsts)
                    .map(|(id, v)| (*id, layout::contract(d, v)))
            })
            .collect();
        let mut texts = self.read_texts(&wanted).into_iter();
        datasets
            .iter()
            .zip(plans)
            .map(|(dataset, plan)| {
                let (versions, firsts, _) = plan?;
                let texts: Vec<Result<String, StoreError>> =
                    texts.by_ref().take(firsts.len()).collect();
                let texts: Vec<String> = texts.into_iter().collect::<Result<_, _>>().ok()?;
                Some(FirstVersions {
                    dataset: dataset.to_string(),
                    firsts: firsts.into_iter().zip(texts).collect(),
                    // Only a history that moved a sunset is parsed (see `lines_of`).
                    history: self
                        .history_text(dataset)
                        .ok()?
                        .filter(|t| t.contains("[[sunset]]")),
                    versions,
                })
            })
            .collect()
    }

    /// [`Store::current`]'s version, answered from what [`Store::prefetch`] worked out when it
    /// looked at the line.
    pub fn current_version(
        &self,
        dataset: &str,
        versions: &[Version],
        major: u64,
        day: NaiveDate,
    ) -> Result<Option<Version>, StoreError> {
        let key = (dataset.to_string(), major, day);
        if let Some(v) = self.current.borrow().get(&key) {
            return Ok(Some(v.clone()));
        }
        Ok(self
            .current(dataset, versions, major, day)?
            .map(|c| c.version))
    }

    /// The live contract of every line live on `day` (at most two), oldest line first.
    pub fn live_contracts(
        &self,
        dataset: &str,
        day: NaiveDate,
    ) -> Result<Vec<Contract>, StoreError> {
        let versions = self.versions(dataset)?;
        let mut out = Vec::new();
        for line in self.lines(dataset)?.iter().filter(|l| l.is_live(day)) {
            if let Some(c) = self.current(dataset, &versions, line.major, day)? {
                out.push(c);
            }
        }
        Ok(out)
    }

    /// The version of line `major` current on `day`: its newest version already valid.
    /// `versions` is [`Store::versions`] of the dataset.
    pub fn current(
        &self,
        dataset: &str,
        versions: &[Version],
        major: u64,
        day: NaiveDate,
    ) -> Result<Option<Contract>, StoreError> {
        // `valid_from` never goes backwards within a dataset (propose refuses it), so the
        // first valid version found walking back from the newest is the current one.
        for v in versions.iter().rev().filter(|v| v.major == major) {
            let c = self.contract(dataset, &v.to_string(), Strictness::Reading)?;
            if c.valid_from <= day {
                return Ok(Some(c));
            }
        }
        Ok(None)
    }
}
