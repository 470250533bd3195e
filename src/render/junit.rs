//! JUnit XML of a release validation, for CI systems that show test results: one testsuite
//! per live contract, one testcase per clause. Text goes through the one markup escaper.

use std::fmt::Write as _;

use super::escape;
use crate::release::validate::{Report, Status};

/// A measured value or a limit as the report's text shows it: a string bare, `-` for none.
fn value(v: Option<&serde_json::Value>) -> String {
    match v {
        None => "-".to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// JUnit XML: one testsuite per live contract, one testcase per clause. A failure is a
/// `<failure>`, an advisory failure passes with its warning in `<system-out>`, a clause not
/// evaluated is `<skipped/>`.
pub fn junit(r: &Report) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let count = |st: Status| {
        r.contracts
            .iter()
            .flat_map(|c| &c.results)
            .filter(|x| x.status == st)
            .count()
    };
    let total: usize = r.contracts.iter().map(|c| c.results.len()).sum();
    let _ = writeln!(
        s,
        "<testsuites name=\"contracts validate {}\" tests=\"{total}\" failures=\"{}\" skipped=\"{}\" errors=\"0\">",
        escape(&r.dataset),
        count(Status::Fail),
        count(Status::NotEvaluated) + count(Status::Waived)
    );
    for c in &r.contracts {
        let suite = format!("{}@{}", c.dataset, c.version);
        let n = |st: Status| c.results.iter().filter(|x| x.status == st).count();
        let _ = writeln!(
            s,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" errors=\"0\">",
            escape(&suite),
            c.results.len(),
            n(Status::Fail),
            n(Status::NotEvaluated) + n(Status::Waived)
        );
        for x in &c.results {
            let detail = format!(
                "measured {}, limit {}{}",
                value(x.measured.as_ref()),
                value(x.limit.as_ref()),
                x.reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            );
            let open = format!(
                "    <testcase classname=\"{}\" name=\"{}\"",
                escape(&suite),
                escape(&x.clause)
            );
            match x.status {
                Status::Pass => {
                    let _ = writeln!(s, "{open}/>");
                }
                Status::Fail => {
                    let _ = writeln!(
                        s,
                        "{open}>\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                        escape(x.reason.as_deref().unwrap_or("failed")),
                        escape(&detail)
                    );
                }
                Status::AdvisoryFail => {
                    let _ = writeln!(
                        s,
                        "{open}>\n      <system-out>advisory-fail (a warning, not enforced): {}</system-out>\n    </testcase>",
                        escape(&detail)
                    );
                }
                Status::Waived => {
                    let why: Vec<String> = x.waivers.iter().map(|n| n.describe()).collect();
                    let _ = writeln!(
                        s,
                        "{open}>\n      <skipped message=\"{}\"/>\n      <system-out>{}</system-out>\n    </testcase>",
                        escape(&why.join("; ")),
                        escape(&detail)
                    );
                }
                Status::NotEvaluated => {
                    let _ = writeln!(
                        s,
                        "{open}>\n      <skipped message=\"{}\"/>\n    </testcase>",
                        escape(&format!(
                            "not evaluated: {}",
                            x.reason.as_deref().unwrap_or("")
                        ))
                    );
                }
            }
        }
        // The readers' warnings are about the release every suite checks: each suite says them.
        if !r.warnings.is_empty() {
            let lines: Vec<String> = r.warnings.iter().map(|w| format!("warning: {w}")).collect();
            let _ = writeln!(
                s,
                "    <system-err>{}</system-err>",
                escape(&lines.join("\n"))
            );
        }
        s.push_str("  </testsuite>\n");
    }
    s.push_str("</testsuites>\n");
    s
}
