//! Findings for CI: GitHub Actions workflow commands and SARIF 2.1.0.
//!
//! `check`, `validate`, `diff` and `propose --dry-run` turn what they found into plain
//! [`Finding`]s (a rule, a level, a message, a file and line when known); this module writes
//! them either as `::error file=…,line=…::…` lines, which GitHub shows as annotations on the
//! pull request's diff, or as one SARIF log for code-scanning dashboards.

use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    fn github(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "notice",
        }
    }
    fn sarif(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// One thing a command found, where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// A stable rule id, e.g. `breaking-change`, `clause-failed`.
    pub rule: &'static str,
    pub level: Level,
    /// A one-line title, for the annotation's title.
    pub title: String,
    pub message: String,
    /// A path relative to the repository root, `/`-separated.
    pub file: Option<String>,
    /// 1-based.
    pub line: Option<u32>,
}

/// What each rule means, for SARIF's rule table.
pub const RULES: &[(&str, &str)] = &[
    (
        "check",
        "The store's CI gate found a violation (kinds, verdicts, bumps, windows, immutability)",
    ),
    (
        "breaking-change",
        "A clause change that breaks consumers: it needs a major bump",
    ),
    (
        "insufficient-bump",
        "The version bumps less than its changes require",
    ),
    (
        "compatible-change",
        "A clause change that keeps every consumer working",
    ),
    ("refused", "A proposal the store would refuse"),
    (
        "clause-failed",
        "A release fails an enforced clause of a live contract",
    ),
    (
        "advisory-failed",
        "A release fails an advisory clause (a warning until it is enforced)",
    ),
    (
        "read-warning",
        "A release file's reader warned (e.g. GeoParquet metadata that contradicts the data)",
    ),
    (
        "waiver-ending",
        "A live waiver ends within 14 days: after it the clause it covers fails again",
    ),
];

/// GitHub's escaping of a workflow command's message.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub's escaping of a workflow command's property value.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One workflow command per finding, e.g.
/// `::error file=contracts/roads/2.0.0.toml,line=9,title=crs breaks consumers::…`.
pub fn github(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let mut props = Vec::new();
        if let Some(file) = &f.file {
            props.push(format!("file={}", escape_property(file)));
            if let Some(line) = f.line {
                props.push(format!("line={line}"));
            }
        }
        props.push(format!("title={}", escape_property(&f.title)));
        out.push_str(&format!(
            "::{} {}::{}\n",
            f.level.github(),
            props.join(","),
            escape_data(&f.message)
        ));
    }
    out
}

/// One SARIF 2.1.0 log with one run of the tool.
pub fn sarif(findings: &[Finding], tool_version: &str) -> Value {
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let mut result = json!({
                "ruleId": f.rule,
                "ruleIndex": RULES.iter().position(|(id, _)| *id == f.rule).unwrap_or(0),
                "level": f.level.sarif(),
                "message": { "text": format!("{}: {}", f.title, f.message) },
            });
            if let Some(file) = &f.file {
                let mut physical = json!({ "artifactLocation": { "uri": file } });
                if let Some(line) = f.line {
                    physical["region"] = json!({ "startLine": line });
                }
                result["locations"] = json!([{ "physicalLocation": physical }]);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "contracts",
                    "version": tool_version,
                    "rules": RULES.iter().map(|(id, text)| json!({
                        "id": id,
                        "shortDescription": { "text": text },
                    })).collect::<Vec<_>>(),
                }
            },
            "results": results,
        }]
    })
}

/// The 1-based line on which a TOML file sets `key` (`key = …` at the start of a line), or
/// the `[clauses]` table's line for a key that is not set there. For `a.b`, the line of `a`.
pub fn toml_line(text: &str, key: &str) -> Option<u32> {
    let key = key.split('.').next().unwrap_or(key);
    let sets = |line: &str| {
        line.trim_start()
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    };
    let found = text
        .lines()
        .position(sets)
        .or_else(|| text.lines().position(|l| l.trim() == "[clauses]"))?;
    u32::try_from(found + 1).ok()
}

/// The line a located TOML error names: `FILE:LINE:COL: …` at the start of the message.
pub fn line_in_message(file: &str, message: &str) -> Option<u32> {
    let rest = message.strip_prefix(file)?.strip_prefix(':')?;
    rest.split(':').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_commands_escape_what_github_reads() {
        let f = Finding {
            rule: "breaking-change",
            level: Level::Error,
            title: "crs: breaking, 100% sure".into(),
            message: "EPSG:4326 → EPSG:27700\nsecond line".into(),
            file: Some("contracts/roads/2.0.0.toml".into()),
            line: Some(9),
        };
        assert_eq!(
            github(&[f]),
            "::error file=contracts/roads/2.0.0.toml,line=9,title=crs%3A breaking%2C 100%25 sure::\
             EPSG:4326 → EPSG:27700%0Asecond line\n"
        );
    }

    #[test]
    fn lines_of_keys() {
        let text =
            "dataset = \"r\"\n[clauses]\ncrs = \"EPSG:4326\"\ncrs_extra = 1\n  units= \"m\"\n";
        assert_eq!(toml_line(text, "crs"), Some(3));
        assert_eq!(toml_line(text, "units"), Some(5));
        assert_eq!(toml_line(text, "attribute_semantics.name"), Some(2));
        assert_eq!(toml_line(text, "dataset"), Some(1));
        assert_eq!(
            line_in_message("contracts/r/1.0.0.toml", "contracts/r/1.0.0.toml:3:8: bad"),
            Some(3)
        );
        assert_eq!(line_in_message("a.toml", "something else"), None);
    }
}
