//! The store: contracts, history, ledgers and config in a git repository.
//!
//! PLACEHOLDER: this first version reads the working tree. It is being replaced by reads at
//! HEAD through gix and one-commit writes; callers should only use the methods below, whose
//! signatures will stay.

use std::path::{Path, PathBuf};

use chrono::NaiveDate;

use crate::model::{
    is_dataset_name, lines, parse_config, parse_contract, parse_history, Config, Contract, History,
    Line, Strictness, TomlErrors,
};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Toml(#[from] TomlErrors),
    #[error("`{0}` is not a valid dataset name ([a-z0-9][a-z0-9_-]{{0,63}})")]
    BadDataset(String),
    #[error("dataset `{0}` has no contract in this store")]
    UnknownDataset(String),
}

pub struct Store {
    root: PathBuf,
    config: Config,
}

impl Store {
    pub fn open(root: &Path) -> Result<Store, StoreError> {
        let path = root.join("contracts.toml");
        let text = std::fs::read_to_string(&path).map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        let config = parse_config("contracts.toml", &text)?;
        Ok(Store {
            root: root.to_path_buf(),
            config,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Every contract version of `dataset`, oldest first.
    pub fn contracts(
        &self,
        dataset: &str,
        strictness: Strictness,
    ) -> Result<Vec<Contract>, StoreError> {
        if !is_dataset_name(dataset) {
            return Err(StoreError::BadDataset(dataset.to_string()));
        }
        let dir = self.root.join("contracts").join(dataset);
        let entries =
            std::fs::read_dir(&dir).map_err(|_| StoreError::UnknownDataset(dataset.to_string()))?;
        let mut out = Vec::new();
        for e in entries {
            let e = e.map_err(|source| StoreError::Io {
                path: dir.clone(),
                source,
            })?;
            let p = e.path();
            if p.extension().is_some_and(|x| x == "toml") {
                let text = std::fs::read_to_string(&p).map_err(|source| StoreError::Io {
                    path: p.clone(),
                    source,
                })?;
                let name = format!("contracts/{dataset}/{}", e.file_name().to_string_lossy());
                out.push(parse_contract(
                    &name,
                    &text,
                    &self.config.kinds,
                    strictness,
                )?);
            }
        }
        out.sort_by(|a, b| a.version.cmp(&b.version));
        Ok(out)
    }

    /// The lines of `dataset` with their sunsets, as moved by the `[[sunset]]` records.
    pub fn lines(&self, dataset: &str) -> Result<Vec<Line>, StoreError> {
        let all = self.contracts(dataset, Strictness::Reading)?;
        let refs: Vec<&Contract> = all.iter().collect();
        let moves = self.history(dataset)?.sunset_moves();
        Ok(lines(&refs, &moves))
    }

    /// The live contract of every line live on `day` (at most two), oldest line first.
    pub fn live_contracts(
        &self,
        dataset: &str,
        day: NaiveDate,
    ) -> Result<Vec<Contract>, StoreError> {
        let all = self.contracts(dataset, Strictness::Reading)?;
        let refs: Vec<&Contract> = all.iter().collect();
        let ls = lines(&refs, &[]);
        let mut out = Vec::new();
        for l in ls.iter().filter(|l| l.is_live(day)) {
            if let Some(v) = l.current(day) {
                if let Some(c) = all.iter().find(|c| &c.version == v) {
                    out.push(c.clone());
                }
            }
        }
        Ok(out)
    }

    /// Every dataset of the store: the folders under `contracts/` with a valid dataset name,
    /// sorted. A store with no `contracts/` yet has no dataset.
    pub fn datasets(&self) -> Result<Vec<String>, StoreError> {
        let dir = self.root.join("contracts");
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(StoreError::Io { path: dir, source }),
        };
        let mut out = Vec::new();
        for e in entries {
            let e = e.map_err(|source| StoreError::Io {
                path: dir.clone(),
                source,
            })?;
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() && is_dataset_name(&name) {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
    }

    /// The change and sunset records of `dataset` (`history/<dataset>.toml`); empty when the
    /// dataset has no history yet.
    pub fn history(&self, dataset: &str) -> Result<History, StoreError> {
        if !is_dataset_name(dataset) {
            return Err(StoreError::BadDataset(dataset.to_string()));
        }
        let name = format!("history/{dataset}.toml");
        match self.read(&name)? {
            None => Ok(History::default()),
            Some(text) => Ok(parse_history(&name, &text)?),
        }
    }

    /// The text of a store file named by its path from the store root (`consumers.toml`,
    /// `notifications/roads.toml`, `templates/notice.txt.j2`), or `None` when it does not
    /// exist. Callers build the path from validated names only.
    pub fn read(&self, path: &str) -> Result<Option<String>, StoreError> {
        let full = self.root.join(path);
        match std::fs::read_to_string(&full) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io { path: full, source }),
        }
    }
}
