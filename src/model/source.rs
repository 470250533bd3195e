//! One consumption source: where a log is, what format it is in, and how its records map to
//! reads (`at`, `consumer`, `dataset`, `contract`). The `[[consumption.source]]` tables of
//! `contracts.toml` and the globs of `[consumption] sources` (the default mapping) both become
//! a [`Source`]; the log scanner reads every source through this one value, whatever its
//! format.
//!
//! Parsed strictly: an unknown key, a wrong type, a key that does not apply to the format, or
//! a mapping that leaves a field undetermined is an error with the file, line and column.

use std::collections::BTreeMap;
use std::ops::Range;

use semver::Version;
use serde::Deserialize;
use toml::Spanned;

use super::contract::is_dataset_name;
use super::location::Located;
use contracts_scan::access::{AccessKeys, AccessLog, SourceKey};

/// The default of `same_read_seconds`: requests by one principal for one object within this
/// many seconds of its previous one continue the same read.
pub const SAME_READ_SECONDS: u64 = 60;

pub use contracts_scan::reads::field_names::{AtUnit, FieldName, Fields};
pub use contracts_scan::LogFormat;

/// One consumption source, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// A glob relative to the store root, or an object URL (`s3://`, `gs://`, `az://` prefix
    /// or glob, one `https://` object).
    pub path: String,
    /// `None`: each file's format from its name ([`LogFormat::from_name`]).
    pub format: Option<LogFormat>,
    /// Where the parts of a read are (for JSON Lines, CSV and Parquet logs).
    pub fields: Fields,
    /// Every record is a read of this dataset (no dataset field is read).
    pub dataset: Option<String>,
    /// Every record is a read of this contract version (no contract field is read).
    pub contract: Option<Version>,
    /// Whether the source is expected to hold reads. A source that holds none in the lookback
    /// is blind, and the gates say "cannot tell" rather than "nobody reads it"; `false` (a
    /// source the user knows to be quiet) exempts it.
    pub expect_reads: bool,
    /// An access log's settings (principal, `match` templates, `same_read_seconds`,
    /// `pattern`, the pgaudit keys, `ignore_principals`), compiled when the configuration is
    /// read; `None` for a log of reads.
    pub access: Option<AccessLog>,
    /// Where the table is in `contracts.toml` (`None` for a `sources` glob).
    pub place: Option<Located>,
}

impl Source {
    /// A `[consumption] sources` glob: the default mapping, the format from each file's name.
    pub fn glob(path: &str) -> Source {
        Source {
            path: path.to_string(),
            format: None,
            fields: Fields::default(),
            dataset: None,
            contract: None,
            expect_reads: true,
            access: None,
            place: None,
        }
    }

    /// Whether `path` names objects in a store rather than files under the store root.
    pub fn is_remote(&self) -> bool {
        is_object_url(&self.path)
    }

    /// The format of a file of this source: the one named, else the one its name implies.
    pub fn format_of(&self, file_name: &str) -> Option<LogFormat> {
        self.format.or_else(|| LogFormat::from_name(file_name))
    }

    /// How the source is named in messages: its path, and where it is configured.
    pub fn describe(&self) -> String {
        match &self.place {
            Some(p) if p.line > 0 => format!("the source `{}` ({}:{})", self.path, p.file, p.line),
            _ => format!("the source `{}`", self.path),
        }
    }
}

/// The URL schemes a source path may have.
pub const URL_SCHEMES: [&str; 4] = ["s3", "gs", "az", "https"];

fn is_object_url(path: &str) -> bool {
    path.split_once("://")
        .is_some_and(|(scheme, _)| URL_SCHEMES.contains(&scheme))
}

/// A `[[consumption.source]]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSource {
    path: Spanned<String>,
    format: Option<Spanned<String>>,
    fields: Option<Spanned<BTreeMap<Spanned<String>, Spanned<toml::Value>>>>,
    dataset: Option<Spanned<String>>,
    contract: Option<Spanned<String>>,
    principal: Option<Spanned<String>>,
    #[serde(rename = "match")]
    templates: Option<Spanned<toml::Value>>,
    same_read_seconds: Option<Spanned<i64>>,
    pattern: Option<Spanned<String>>,
    expect_reads: Option<bool>,
    log_destination: Option<Spanned<String>>,
    prefix: Option<Spanned<String>>,
    ignore_principals: Option<Spanned<Vec<String>>>,
}

/// Validate one table; `same_read_seconds` is the `[consumption]` default. Every mistake in
/// the table goes to `errors`.
pub(crate) fn validate_source(
    file: &str,
    text: &str,
    raw: RawSource,
    same_read_seconds: u64,
    errors: &mut Vec<Located>,
) -> Option<Source> {
    let before = errors.len();
    let mut err = |span: Range<usize>, message: String| {
        errors.push(Located::at(file, text, Some(span), message));
    };
    let path = raw.path.get_ref().trim().to_string();
    if path.is_empty() {
        err(
            raw.path.span(),
            "[[consumption.source]] path is empty".into(),
        );
    } else if path.contains("://") && !is_object_url(&path) {
        err(
            raw.path.span(),
            format!(
                "[[consumption.source]] path {path:?}: a URL must be s3://, gs://, az:// or \
                 https:// (a local log is a glob relative to the store root)"
            ),
        );
    } else if !path.contains("://") {
        if let Err(e) = glob::Pattern::new(&path) {
            err(
                raw.path.span(),
                format!("[[consumption.source]] path `{path}` is not a valid glob: {e}"),
            );
        }
    }
    let format = match &raw.format {
        None => {
            let implied = LogFormat::from_name(&path);
            if implied.is_none() && is_object_url(&path) {
                err(
                    raw.path.span(),
                    format!(
                        "[[consumption.source]] path `{path}`: an object URL needs a `format` \
                         (its objects' names need not say it)"
                    ),
                );
            }
            implied
        }
        Some(f) => match LogFormat::parse(f.get_ref()) {
            Some(format) => Some(format),
            None => {
                let all: Vec<&str> = LogFormat::ALL.iter().map(|f| f.as_str()).collect();
                err(
                    f.span(),
                    format!(
                        "[[consumption.source]] format {:?} is not one of {}",
                        f.get_ref(),
                        all.join(", ")
                    ),
                );
                None
            }
        },
    };
    let access = format.is_some_and(LogFormat::is_access_log);
    let format_name = format.map_or("a log of reads", LogFormat::as_str);
    let mut fields = Fields::default();
    let mut mapped = std::collections::BTreeSet::new();
    if let Some(table) = &raw.fields {
        if format == Some(LogFormat::Summary) {
            err(
                table.span(),
                "[[consumption.source]] fields: a read summary has fixed fields (day, consumer, \
                 dataset, contract, reads, first_at, last_at, registered)"
                    .to_string(),
            );
        }
        if access {
            err(
                table.span(),
                format!(
                    "[[consumption.source]] fields: a {format_name} log has its own fields; \
                     name the requester with `principal` and the dataset and version with `match`"
                ),
            );
        }
        for (key, value) in table.get_ref() {
            let name = key.get_ref().as_str();
            let slot = match name {
                "at" => &mut fields.at,
                "consumer" => &mut fields.consumer,
                "dataset" => &mut fields.dataset,
                "contract" => &mut fields.contract,
                other => {
                    err(
                        key.span(),
                        format!(
                            "[[consumption.source]] fields: unknown key `{other}` (expected at, \
                             consumer, dataset or contract)"
                        ),
                    );
                    continue;
                }
            };
            mapped.insert(name.to_string());
            let parsed = if name == "at" {
                at_field(value).map(|(n, unit)| {
                    fields.at_unit = unit;
                    n
                })
            } else {
                field_name(value.get_ref())
            };
            match parsed {
                Ok(n) => *slot = n,
                Err(why) => err(
                    value.span(),
                    format!("[[consumption.source]] fields.{name}: {why}"),
                ),
            }
        }
    }
    let dataset = raw.dataset.as_ref().and_then(|d| {
        if mapped.contains("dataset") {
            err(
                d.span(),
                "[[consumption.source]] dataset is a constant here and fields.dataset a field: \
                 name one"
                    .into(),
            );
        }
        if is_dataset_name(d.get_ref()) {
            Some(d.get_ref().clone())
        } else {
            err(
                d.span(),
                format!(
                    "[[consumption.source]] dataset `{}` is not a dataset name \
                     ([a-z0-9][a-z0-9_-]{{0,63}})",
                    d.get_ref()
                ),
            );
            None
        }
    });
    let contract = raw.contract.as_ref().and_then(|c| {
        if mapped.contains("contract") {
            err(
                c.span(),
                "[[consumption.source]] contract is a constant here and fields.contract a \
                 field: name one"
                    .into(),
            );
        }
        match Version::parse(c.get_ref().trim()) {
            Ok(v) => Some(v),
            Err(e) => {
                err(
                    c.span(),
                    format!(
                        "[[consumption.source]] contract {:?} is not a semantic version: {e}",
                        c.get_ref()
                    ),
                );
                None
            }
        }
    });
    // The keys of access logs, refused elsewhere so that a misplaced one is not silently
    // ignored.
    let access_formats = LogFormat::ALL
        .iter()
        .filter(|f| f.is_access_log())
        .map(|f| f.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let only_access = |key: &str| {
        format!(
            "[[consumption.source]] {key} applies to access logs ({access_formats}), not to \
             {format_name}"
        )
    };
    let pg = super::pg_log_keys::check(
        format == Some(LogFormat::Pgaudit),
        format_name,
        super::pg_log_keys::Raw {
            log_destination: raw.log_destination.as_ref(),
            prefix: raw.prefix.as_ref(),
            principal: raw.principal.as_ref(),
        },
        &mut err,
    );
    if let Some(g) = &raw.ignore_principals {
        if !access {
            err(g.span(), only_access("ignore_principals"));
        }
    }
    if let Some(p) = &raw.principal {
        if !access && format != Some(LogFormat::Pgaudit) {
            err(p.span(), only_access("principal"));
        }
    }
    if let Some(s) = &raw.same_read_seconds {
        if !access {
            err(s.span(), only_access("same_read_seconds"));
        } else if *s.get_ref() < 0 {
            err(
                s.span(),
                "[[consumption.source]] same_read_seconds must be non-negative".into(),
            );
        }
    }
    if let Some(p) = &raw.pattern {
        if format != Some(LogFormat::Combined) {
            err(
                p.span(),
                format!(
                    "[[consumption.source]] pattern applies to the combined format, not to \
                     {format_name}"
                ),
            );
        }
    }
    let mut templates = Vec::new();
    match &raw.templates {
        Some(t) if !access => err(t.span(), only_access("match")),
        Some(t) => {
            let list: Option<Vec<&str>> = match t.get_ref() {
                toml::Value::String(s) => Some(vec![s.as_str()]),
                toml::Value::Array(a) => a.iter().map(toml::Value::as_str).collect(),
                _ => None,
            };
            match list {
                Some(list) if !list.is_empty() => templates = list,
                _ => err(
                    t.span(),
                    "[[consumption.source]] match must be a template or an array of templates"
                        .into(),
                ),
            }
        }
        // An access log without `match` is the scanner's to judge (it may name `dataset` and
        // `contract` instead), below: one rule, said once.
        None => {}
    }
    let same_read_seconds = raw
        .same_read_seconds
        .as_ref()
        .map_or(same_read_seconds, |s| {
            u64::try_from(*s.get_ref()).unwrap_or(0)
        });
    let contract_text = contract.as_ref().map(Version::to_string);
    let ignore_principals = raw
        .ignore_principals
        .as_ref()
        .map_or(&[][..], |g| g.get_ref().as_slice());
    // The one place an access log's keys are parsed: its templates, pattern, principal and
    // globs are compiled here, and each mistake is located at its key.
    let access_log = match format.filter(|f| f.is_access_log()) {
        None => None,
        Some(format) => {
            let keys = AccessKeys {
                templates,
                dataset: dataset.as_deref(),
                contract: contract_text.as_deref(),
                principal: raw.principal.as_ref().map(|p| p.get_ref().trim()),
                pattern: raw.pattern.as_ref().map(|p| p.get_ref().as_str()),
                same_read_seconds,
                pg,
                ignore_principals,
            };
            match AccessLog::compile(format, &keys) {
                Ok(log) => Some(log),
                Err(problems) => {
                    for e in problems {
                        let span = match e.key() {
                            SourceKey::Match => raw.templates.as_ref().map(Spanned::span),
                            SourceKey::Pattern => raw.pattern.as_ref().map(Spanned::span),
                            SourceKey::Principal => raw.principal.as_ref().map(Spanned::span),
                            SourceKey::IgnorePrincipals => {
                                raw.ignore_principals.as_ref().map(Spanned::span)
                            }
                            SourceKey::Format => raw.format.as_ref().map(Spanned::span),
                            SourceKey::Path => None,
                        };
                        err(
                            span.unwrap_or_else(|| raw.path.span()),
                            format!("[[consumption.source]] {e}"),
                        );
                    }
                    None
                }
            }
        }
    };
    if errors.len() > before {
        return None;
    }
    Some(Source {
        path,
        format: raw.format.as_ref().and(format),
        fields,
        dataset,
        contract,
        expect_reads: raw.expect_reads.unwrap_or(true),
        access: access_log,
        place: Some(Located::at(
            file,
            text,
            Some(raw.path.span()),
            String::new(),
        )),
    })
}

/// A field name: a dotted string, or an array of keys (each taken whole).
fn field_name(value: &toml::Value) -> Result<FieldName, String> {
    let keys: Vec<String> = match value {
        toml::Value::String(s) => s.split('.').map(str::to_string).collect(),
        toml::Value::Array(a) => a
            .iter()
            .map(|k| k.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or("an array of keys must hold strings only")?,
        _ => {
            return Err(
                "expected a field name (`client.id`) or an array of keys (`[\"client.id\"]`)"
                    .into(),
            )
        }
    };
    if keys.is_empty() || keys.iter().any(String::is_empty) {
        return Err("a field name has no empty key (`a..b`, `.a`, `[]`)".into());
    }
    Ok(FieldName(keys))
}

/// `at`: a field name, or `{ name = …, unit = "s" | "ms" | "rfc3339" }`.
fn at_field(value: &Spanned<toml::Value>) -> Result<(FieldName, AtUnit), String> {
    let toml::Value::Table(t) = value.get_ref() else {
        return field_name(value.get_ref()).map(|n| (n, AtUnit::Rfc3339));
    };
    if let Some(k) = t.keys().find(|k| !matches!(k.as_str(), "name" | "unit")) {
        return Err(format!("unknown key `{k}` (expected name and unit)"));
    }
    let name = field_name(t.get("name").ok_or("`name` is missing")?)?;
    let unit = match t.get("unit") {
        None => AtUnit::Rfc3339,
        Some(u) => match AtUnit::ALL
            .into_iter()
            .find(|a| u.as_str() == Some(a.name()))
        {
            Some(a) => a,
            None => return Err(format!("unit {u} is not \"s\", \"ms\" or \"rfc3339\"")),
        },
    };
    Ok((name, unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_and_globs_become_sources_with_their_defaults() {
        let text = r#"[consumption]
sources = ["consumption/*.csv"]
same_read_seconds = 30

[[consumption.source]]
path = "logs/*.jsonl"
contract = "2.0.0"
fields = { at = { name = "ts", unit = "ms" }, consumer = ["client.id"], dataset = "req.ds" }

[[consumption.source]]
path = "s3://bucket/logs/"
format = "s3-access"
match = "{dataset}/v{contract}/**"

[[consumption.source]]
path = "web/*.log"
format = "combined"
match = ["/d/{dataset}/{contract}/*", "/e/{dataset}/{contract}"]
same_read_seconds = 5
pattern = '$remote_addr - $remote_user [$time_local] "$request" $status $api_key'
principal = "api_key"
"#;
        let c = crate::model::parse_config("contracts.toml", text)
            .unwrap()
            .consumption;
        let all = c.all_sources();
        assert_eq!(all.len(), 4);
        let f = &all[0].fields;
        assert_eq!(f.at, FieldName::plain("ts"));
        assert_eq!(f.at_unit, AtUnit::Millis);
        assert_eq!(f.consumer, FieldName(vec!["client.id".into()]));
        assert_eq!(f.dataset, FieldName(vec!["req".into(), "ds".into()]));
        assert_eq!(all[0].contract, Some(Version::new(2, 0, 0)));
        assert_eq!(all[0].format, None);
        assert_eq!(all[0].format_of("a.jsonl"), Some(LogFormat::Jsonl));
        assert_eq!(all[0].place.as_ref().map(|p| p.line), Some(6));
        assert!(all[1].is_remote());
        let access = |i: usize| all[i].access.as_ref().expect("an access log");
        assert_eq!(access(1).same_read_seconds(), 30);
        let texts = |i: usize| access(i).templates().iter().map(|t| t.as_str().to_string());
        assert_eq!(texts(1).collect::<Vec<_>>(), ["{dataset}/v{contract}/**"]);
        assert_eq!(access(2).same_read_seconds(), 5);
        assert_eq!(texts(2).count(), 2);
        assert_eq!(access(2).format(), LogFormat::Combined);
        assert!(all[0].access.is_none() && all[3].access.is_none());
        assert_eq!(all[3], Source::glob("consumption/*.csv"));
        // Tables alone: no default glob.
        let only = "[[consumption.source]]\npath = \"logs/*.csv\"\n";
        let c = crate::model::parse_config("c", only).unwrap().consumption;
        assert!(c.sources.is_empty());
        assert_eq!(c.all_sources().len(), 1);
        let none = crate::model::parse_config("c", "").unwrap().consumption;
        assert_eq!(none.sources, ["consumption/*.jsonl"]);
    }

    /// The errors `contracts.toml` gets for one `[[consumption.source]]` table.
    fn refusals(table: &str) -> Vec<String> {
        let text = format!("[[consumption.source]]\n{table}");
        match crate::model::parse_config("contracts.toml", &text) {
            Ok(_) => Vec::new(),
            Err(e) => {
                e.0.iter()
                    .map(|l| format!("{}:{} {}", l.line, l.column, l.message))
                    .collect()
            }
        }
    }

    #[test]
    fn access_log_keys_are_compiled_once_and_each_mistake_is_located() {
        let s3 = "path = \"logs/*\"\nformat = \"s3-access\"\n";
        assert!(refusals(&format!(
            "{s3}match = \"/datasets/{{dataset}}/v{{contract}}/**\""
        ))
        .is_empty());
        let e = refusals(&format!(
            "{s3}match = [\"{{dataset}}/*.parquet\", \"{{dataset}}/{{version}}\"]"
        ));
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(
            e[0].starts_with("4:9 ") && e[0].contains("captures no contract"),
            "{e:?}"
        );
        assert!(
            e[1].contains("is not a placeholder") && e[1].contains("column 11"),
            "{e:?}"
        );
        let e = refusals(&format!(
            "{s3}match = \"{{dataset}}/{{contract}}\"\nprincipal = \"requestor\"\n"
        ));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("5:13 ") && e[0].contains("requester"),
            "{e:?}"
        );
        let combined =
            "path = \"web/*\"\nformat = \"combined\"\nmatch = \"{dataset}/{contract}\"\n";
        let e = refusals(&format!(
            "{combined}pattern = \"$remote_addr $request $status\"\n"
        ));
        assert!(
            e.len() == 1 && e[0].starts_with("5:11 ") && e[0].contains("no time"),
            "{e:?}"
        );
        let e = refusals(&format!("{combined}ignore_principals = [\"[a\"]\n"));
        assert!(
            e.len() == 1 && e[0].starts_with("5:21 ") && e[0].contains("not a valid glob"),
            "{e:?}"
        );
        // Without `match`, a source that names its dataset and contract reads every request
        // that counts as theirs, as the reference says; one that names neither is refused
        // once, at its path.
        assert!(refusals(&format!("{s3}dataset = \"roads\"\ncontract = \"1.0.0\"\n")).is_empty());
        let e = refusals(&format!("{s3}dataset = \"roads\"\n"));
        assert!(
            e.len() == 1 && e[0].starts_with("2:8 ") && e[0].contains("needs `match` templates"),
            "{e:?}"
        );
        let pg = "path = \"pg/*\"\nformat = \"pgaudit\"\nmatch = \"public.{dataset}_v{line}\"\n";
        let e = refusals(&format!("{pg}log_destination = \"stderr\"\n"));
        assert!(e.len() == 1 && e[0].contains("needs `prefix`"), "{e:?}");
        let e = refusals(&format!(
            "{pg}log_destination = \"csvlog\"\nprefix = \"%m \"\n"
        ));
        assert!(
            e.len() == 1 && e[0].contains("only for log_destination"),
            "{e:?}"
        );
    }
}
