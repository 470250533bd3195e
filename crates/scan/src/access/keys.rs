//! An access-log source compiled from the keys of its `[[consumption.source]]` table: the one
//! place its templates, pattern, principal, globs and pgaudit keys are parsed
//! ([`AccessLog::compile`]), called when the configuration is read. Each error names the key
//! it is about, so that the configuration locates it in `contracts.toml`.

use super::combined::{self, Pattern};
use super::config_error::AccessConfigError;
use super::pgaudit::PgKeys;
use super::template::{Template, Templates};
use super::{
    bigquery, cloudfront, databricks, pgaudit, s3, snowflake, AccessLog, Dialect, PrincipalSpec,
};
use crate::format::LogFormat;

/// The keys of an access-log source's table as written (borrowed from it), already checked
/// for whether they apply to the format.
#[derive(Debug, Clone, Default)]
pub struct AccessKeys<'a> {
    /// `match`: the templates, first match wins.
    pub templates: Vec<&'a str>,
    /// `dataset = "..."`: the dataset of every request, where a template captures none.
    pub dataset: Option<&'a str>,
    /// `contract = "..."`: the version of every request, where a template captures none.
    pub contract: Option<&'a str>,
    /// `principal`: a field name of the format, `query:NAME` or `header:NAME`. `None`: the
    /// format's default ([`LogFormat::default_principal`]). A pgaudit source says it in `pg`.
    pub principal: Option<&'a str>,
    /// `pattern`: the fields of a custom `combined` format.
    pub pattern: Option<&'a str>,
    /// `same_read_seconds`, the `[consumption]` default applied.
    pub same_read_seconds: u64,
    /// `pgaudit`: `log_destination`, `prefix` and who reads, checked where they are read.
    pub pg: PgKeys,
    /// `ignore_principals`: globs of principals whose requests are no reads.
    pub ignore_principals: &'a [String],
}

impl AccessLog {
    /// Compile an access-log source of `format` from its keys: every mistake, not only the
    /// first. `format` must be an access-log one ([`LogFormat::is_access_log`]).
    pub fn compile(
        format: LogFormat,
        keys: &AccessKeys<'_>,
    ) -> Result<AccessLog, Vec<AccessConfigError>> {
        let mut errors = Vec::new();
        let mut templates = Vec::new();
        for text in &keys.templates {
            // A relation `schema.name` (pgaudit) or `db.schema.table` (a warehouse) is matched
            // as the path `schema/name`, `db/schema/table`: its templates are written with dots.
            let dots = match format {
                LogFormat::Pgaudit => 1,
                LogFormat::SnowflakeAccessHistory | LogFormat::DatabricksColumnLineage => 2,
                _ => 0,
            };
            let parsed = if dots > 0 {
                Template::parse(&text.replacen('.', "/", dots)).map_err(|mut e| {
                    e.template = text.to_string();
                    e
                })
            } else {
                Template::parse(text)
            };
            match parsed {
                Ok(t) => {
                    if !t.captures_dataset() && keys.dataset.is_none() {
                        errors.push(AccessConfigError::Missing {
                            template: text.to_string(),
                            what: "dataset",
                        });
                    }
                    if !t.captures_contract() && keys.contract.is_none() {
                        errors.push(AccessConfigError::Missing {
                            template: text.to_string(),
                            what: "contract",
                        });
                    }
                    templates.push(t);
                }
                Err(e) => errors.push(e.into()),
            }
        }
        if keys.templates.is_empty() && (keys.dataset.is_none() || keys.contract.is_none()) {
            errors.push(AccessConfigError::NoMatch);
        }
        let ignore = keys
            .ignore_principals
            .iter()
            .filter_map(|g| match glob::Pattern::new(g) {
                Ok(p) => Some(p),
                Err(_) => {
                    errors.push(AccessConfigError::Ignore(g.clone()));
                    None
                }
            })
            .collect();
        let dialect = match Dialect::new(format, keys) {
            Ok(d) => Some(d),
            Err(e) => {
                errors.push(e);
                None
            }
        };
        match dialect {
            Some(dialect) if errors.is_empty() => Ok(AccessLog {
                format,
                templates: Templates::from(templates),
                dataset: keys.dataset.map(str::to_string),
                contract: keys.contract.map(str::to_string),
                same_read_seconds: keys.same_read_seconds,
                ignore,
                dialect,
            }),
            _ => Err(errors),
        }
    }
}

impl Dialect {
    /// The per-line reader of `format`: a principal the format cannot have, or a pattern
    /// without the fields a read needs, is an error here, not an empty column later
    /// (CloudFront names its fields per file, so its principal is checked per file).
    fn new(format: LogFormat, keys: &AccessKeys<'_>) -> Result<Dialect, AccessConfigError> {
        let principal = match format {
            LogFormat::Pgaudit => None,
            LogFormat::SnowflakeAccessHistory
            | LogFormat::BigqueryAudit
            | LogFormat::DatabricksColumnLineage => {
                // A warehouse record names one user; there is no other field to read one from.
                let field = format.default_principal().unwrap_or_default();
                match keys.principal {
                    Some(p) if p != field => {
                        return Err(AccessConfigError::Principal {
                            principal: p.to_string(),
                            reason: format!(
                                "a {format} record names who read in `{field}` alone (leave \
                                 `principal` out)"
                            ),
                        })
                    }
                    _ => None,
                }
            }
            _ => keys.principal.map(PrincipalSpec::parse).transpose()?,
        };
        Ok(match format {
            LogFormat::S3Access => Dialect::S3(s3::S3::new(principal.as_ref())?),
            LogFormat::Cloudfront => {
                Dialect::CloudFront(cloudfront::CloudFront::new(principal.as_ref()))
            }
            LogFormat::Combined => {
                let pattern = match keys.pattern {
                    Some(p) => Pattern::parse(p)?,
                    None => Pattern::combined(),
                };
                Dialect::Combined(combined::Combined::new(pattern, principal.as_ref())?)
            }
            LogFormat::Pgaudit => {
                let who = if keys.pg.by_application {
                    pgaudit::PgPrincipal::ApplicationName
                } else {
                    pgaudit::PgPrincipal::UserName
                };
                Dialect::Pgaudit(pgaudit::PgAudit::new(
                    keys.pg.destination,
                    keys.pg.prefix.clone(),
                    who,
                ))
            }
            LogFormat::SnowflakeAccessHistory => Dialect::Snowflake(snowflake::Snowflake::new()),
            LogFormat::BigqueryAudit => Dialect::BigQuery(bigquery::BigQuery::new()),
            LogFormat::DatabricksColumnLineage => {
                Dialect::Databricks(databricks::Databricks::new())
            }
            LogFormat::Jsonl | LogFormat::Csv | LogFormat::Parquet | LogFormat::Summary => {
                return Err(AccessConfigError::NotAccessLog(format.as_str()))
            }
        })
    }
}
