//! One consumption source: where a log is, what format it is in, and how its records map to
//! reads (`at`, `consumer`, `dataset`, `contract`). The `[[consumption.source]]` tables of
//! `contracts.toml` and the globs of `[consumption] sources` (the default mapping) both become
//! a [`Source`]; the log scanner reads every source through this one value, whatever its
//! format.
//!
//! Parsed strictly: an unknown key, a wrong type, a key that does not apply to the format, or
//! a mapping that leaves a field undetermined is an error with the file, line and column.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use semver::Version;
use serde::Deserialize;
use toml::Spanned;

use super::contract::is_dataset_name;
use super::location::Located;

/// The default of `same_read_seconds`: requests by one principal for one object within this
/// many seconds of its previous one continue the same read.
pub const SAME_READ_SECONDS: u64 = 60;

/// What a log file is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LogFormat {
    /// JSON Lines: one object per line.
    Jsonl,
    /// CSV with a header naming the columns.
    Csv,
    /// Parquet, one read per row.
    Parquet,
    /// A read summary (rows of day, consumer, dataset, contract, reads, first and last read).
    Summary,
    /// Amazon S3 server access logs.
    S3Access,
    /// CloudFront standard logs (tab-separated, `#Fields` header).
    Cloudfront,
    /// The Apache/nginx combined log format, optionally with fields appended.
    Combined,
    /// PostgreSQL server logs with pgaudit's `AUDIT:` entries.
    Pgaudit,
}

impl LogFormat {
    pub const ALL: [LogFormat; 8] = [
        LogFormat::Jsonl,
        LogFormat::Csv,
        LogFormat::Parquet,
        LogFormat::Summary,
        LogFormat::S3Access,
        LogFormat::Cloudfront,
        LogFormat::Combined,
        LogFormat::Pgaudit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LogFormat::Jsonl => "jsonl",
            LogFormat::Csv => "csv",
            LogFormat::Parquet => "parquet",
            LogFormat::Summary => "summary",
            LogFormat::S3Access => "s3-access",
            LogFormat::Cloudfront => "cloudfront",
            LogFormat::Combined => "combined",
            LogFormat::Pgaudit => "pgaudit",
        }
    }

    fn parse(s: &str) -> Option<LogFormat> {
        LogFormat::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// A platform's access log (a request per line, mapped to reads by `match` templates),
    /// as opposed to a log of reads.
    pub fn is_access_log(self) -> bool {
        matches!(
            self,
            LogFormat::S3Access | LogFormat::Cloudfront | LogFormat::Combined | LogFormat::Pgaudit
        )
    }

    /// The format a file name implies (`.jsonl`, `.ndjson`, `.csv`, each optionally `.gz`,
    /// and `.parquet`); `None` when it implies none. Access logs have no extension of their
    /// own, so their sources name the format.
    pub fn from_name(name: &str) -> Option<LogFormat> {
        let (gzipped, plain) = match name.strip_suffix(".gz") {
            Some(plain) => (true, plain),
            None => (false, name),
        };
        let ext = plain.rsplit_once('.').map(|(_, e)| e)?;
        match ext {
            "jsonl" | "ndjson" => Some(LogFormat::Jsonl),
            "csv" => Some(LogFormat::Csv),
            // A Parquet file compresses its own pages; a gzipped one is not a Parquet file.
            "parquet" if !gzipped => Some(LogFormat::Parquet),
            _ => None,
        }
    }
}

super::display_as!(as_str: LogFormat);

/// A field of a record: the keys from the top-level object down (`client.id` is
/// `["client", "id"]`; `["client.id"]` is one key with a dot in it). For CSV and Parquet,
/// which have no nesting, a column name (the keys joined with dots).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldName(pub Vec<String>);

impl FieldName {
    pub fn plain(name: &str) -> FieldName {
        FieldName(vec![name.to_string()])
    }

    /// The column name in a flat format.
    pub fn column(&self) -> String {
        self.0.join(".")
    }
}

impl fmt::Display for FieldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.iter().any(|k| k.contains('.')) {
            write!(f, "{:?}", self.0)
        } else {
            f.write_str(&self.0.join("."))
        }
    }
}

/// How `at` is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AtUnit {
    /// RFC 3339 text with any fraction of a second and any offset (or, in Parquet, a
    /// timestamp column).
    #[default]
    Rfc3339,
    /// Seconds since the epoch, a number.
    Seconds,
    /// Milliseconds since the epoch, a number.
    Millis,
}

impl AtUnit {
    pub const ALL: [AtUnit; 3] = [AtUnit::Rfc3339, AtUnit::Seconds, AtUnit::Millis];

    /// How `unit` names it in `fields.at`.
    pub fn name(self) -> &'static str {
        match self {
            AtUnit::Rfc3339 => "rfc3339",
            AtUnit::Seconds => "s",
            AtUnit::Millis => "ms",
        }
    }
}

/// Where each part of a read is found in a record.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fields {
    pub at: FieldName,
    pub at_unit: AtUnit,
    pub consumer: FieldName,
    pub dataset: FieldName,
    pub contract: FieldName,
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            at: FieldName::plain("at"),
            at_unit: AtUnit::Rfc3339,
            consumer: FieldName::plain("consumer"),
            dataset: FieldName::plain("dataset"),
            contract: FieldName::plain("contract"),
        }
    }
}

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
    /// Access logs: the field that names who made the request, instead of the format's own.
    pub principal: Option<String>,
    /// Access logs: templates mapping a requested key or path to dataset and version; the
    /// first that matches wins.
    pub templates: Vec<String>,
    /// Access logs: a principal's requests for one object within this many seconds of its
    /// previous one continue the same read.
    pub same_read_seconds: u64,
    /// `combined`: the names of the fields of a custom log format.
    pub pattern: Option<String>,
    /// Whether the source is expected to hold reads. A source that holds none in the lookback
    /// is blind, and the gates say "cannot tell" rather than "nobody reads it"; `false` (a
    /// source the user knows to be quiet) exempts it.
    pub expect_reads: bool,
    /// `pgaudit`: `log_destination`, `prefix` and who reads.
    pub pg: super::pg_log_keys::PgKeys,
    /// Access logs: principals (globs) whose requests are no reads.
    pub ignore_principals: Vec<String>,
    /// Where the table is in `contracts.toml` (`None` for a `sources` glob).
    pub place: Option<Located>,
}

impl Source {
    /// A `[consumption] sources` glob: the default mapping, the format from each file's name.
    pub fn glob(path: &str, same_read_seconds: u64) -> Source {
        Source {
            path: path.to_string(),
            format: None,
            fields: Fields::default(),
            dataset: None,
            contract: None,
            principal: None,
            templates: Vec::new(),
            same_read_seconds,
            pattern: None,
            expect_reads: true,
            pg: Default::default(),
            ignore_principals: Vec::new(),
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
    let only_access = |key: &str| {
        format!(
            "[[consumption.source]] {key} applies to access logs (s3-access, cloudfront, \
             combined, pgaudit), not to {format_name}"
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
        } else if let Some(bad) = g.get_ref().iter().find(|p| glob::Pattern::new(p).is_err()) {
            err(
                g.span(),
                format!("[[consumption.source]] ignore_principals: {bad:?} is not a valid glob"),
            );
        }
    }
    if let Some(p) = &raw.principal {
        if format == Some(LogFormat::Pgaudit) {
            // Checked with the other pgaudit keys.
        } else if !access {
            err(p.span(), only_access("principal"));
        } else if p.get_ref().trim().is_empty() {
            err(p.span(), "[[consumption.source]] principal is empty".into());
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
        } else if p.get_ref().trim().is_empty() {
            err(p.span(), "[[consumption.source]] pattern is empty".into());
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
                Some(list) if !list.is_empty() => {
                    for template in list {
                        if let Err(why) = check_template(template, &dataset, &contract) {
                            err(
                                t.span(),
                                format!("[[consumption.source]] match {template:?}: {why}"),
                            );
                        }
                        templates.push(template.to_string());
                    }
                }
                _ => err(
                    t.span(),
                    "[[consumption.source]] match must be a template or an array of templates"
                        .into(),
                ),
            }
        }
        None if access => err(
            raw.path.span(),
            format!(
                "[[consumption.source]] a {format_name} source needs `match` templates: they \
                 say which requests are reads of which dataset and version"
            ),
        ),
        None => {}
    }
    if errors.len() > before {
        return None;
    }
    Some(Source {
        path,
        format: raw.format.as_ref().and(format),
        fields,
        dataset,
        contract,
        principal: raw.principal.map(|p| p.into_inner().trim().to_string()),
        templates,
        same_read_seconds: raw.same_read_seconds.map_or(same_read_seconds, |s| {
            u64::try_from(*s.get_ref()).unwrap_or(0)
        }),
        pattern: raw.pattern.map(Spanned::into_inner),
        expect_reads: raw.expect_reads.unwrap_or(true),
        pg,
        ignore_principals: raw
            .ignore_principals
            .map(Spanned::into_inner)
            .unwrap_or_default(),
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

/// A `match` template: its placeholders are `{dataset}` and `{contract}`, each at most once,
/// and together with the constants they determine both.
fn check_template(
    template: &str,
    dataset: &Option<String>,
    contract: &Option<Version>,
) -> Result<(), String> {
    if template.trim().is_empty() {
        return Err("a template is empty".into());
    }
    let mut seen = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').ok_or("a `{` is not closed")? + open;
        let name = &rest[open + 1..close];
        if !matches!(name, "dataset" | "contract" | "line") {
            return Err(format!(
                "`{{{name}}}` is not a placeholder (they are {{dataset}}, {{contract}} and {{line}})"
            ));
        }
        if seen.contains(&name) {
            return Err(format!("`{{{name}}}` is used twice"));
        }
        seen.push(name);
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return Err("a `}` is not opened".into());
    }
    if dataset.is_none() && !seen.contains(&"dataset") {
        return Err("no {dataset} and no `dataset` constant: which dataset is read?".into());
    }
    if seen.contains(&"contract") && seen.contains(&"line") {
        return Err("{contract} and {line} both say which version: use one".into());
    }
    if contract.is_none() && !seen.contains(&"contract") && !seen.contains(&"line") {
        return Err(
            "no {contract}, no {line} and no `contract` constant: which version is read?".into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_from_names() {
        assert_eq!(LogFormat::from_name("a.jsonl.gz"), Some(LogFormat::Jsonl));
        assert_eq!(
            LogFormat::from_name("logs/*.ndjson"),
            Some(LogFormat::Jsonl)
        );
        assert_eq!(LogFormat::from_name("a.csv"), Some(LogFormat::Csv));
        assert_eq!(LogFormat::from_name("a.parquet"), Some(LogFormat::Parquet));
        assert_eq!(LogFormat::from_name("a.parquet.gz"), None);
        assert_eq!(LogFormat::from_name("consumption/*"), None);
        for f in LogFormat::ALL {
            assert_eq!(LogFormat::parse(f.as_str()), Some(f));
        }
    }

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
        assert_eq!(all[1].same_read_seconds, 30);
        assert_eq!(all[1].templates, ["{dataset}/v{contract}/**"]);
        assert_eq!(all[2].same_read_seconds, 5);
        assert_eq!(all[2].principal.as_deref(), Some("api_key"));
        assert_eq!(all[2].templates.len(), 2);
        assert!(all[2].pattern.is_some());
        assert_eq!(all[3], Source::glob("consumption/*.csv", 30));
        // Tables alone: no default glob.
        let only = "[[consumption.source]]\npath = \"logs/*.csv\"\n";
        let c = crate::model::parse_config("c", only).unwrap().consumption;
        assert!(c.sources.is_empty());
        assert_eq!(c.all_sources().len(), 1);
        let none = crate::model::parse_config("c", "").unwrap().consumption;
        assert_eq!(none.sources, ["consumption/*.jsonl"]);
    }

    #[test]
    fn templates_name_what_they_give() {
        assert!(check_template("/datasets/{dataset}/v{contract}/**", &None, &None).is_ok());
        assert!(check_template("{dataset}/*.parquet", &None, &None).is_err());
        let v = Some(Version::new(2, 0, 0));
        assert!(check_template("{dataset}/*.parquet", &None, &v).is_ok());
        assert!(check_template("{dataset}/{version}", &None, &v).is_err());
        assert!(check_template("{dataset}/{dataset}", &None, &v).is_err());
        assert!(check_template("{dataset", &None, &v).is_err());
    }
}
