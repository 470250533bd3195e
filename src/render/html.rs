//! The static registry's pages (`contracts site`): plain HTML5 with one inline style sheet, no
//! script, no font, image or style from anywhere else, so a page works from any file server,
//! from a CI artefact, or opened straight from disk.
//!
//! Pure: the site command gathers the facts into a view model ([`Index`], [`Dataset`]), plain
//! data with no markup in it, and the templates under `templates/site/` turn it into markup.
//! The templates are embedded in the binary, which stands alone. Every value a template
//! prints is escaped with the one escaper of [`super::escape`] (auto-escaping is on for every
//! template), so a dataset name, a rationale or an author cannot inject markup; the only
//! value printed as it is is the timeline's SVG, which its renderer escaped already.

use chrono::NaiveDate;
use minijinja::{AutoEscape, Environment, Error, Output, State, UndefinedBehavior, Value};
use serde::Serialize;

use super::escape;
use crate::model::{ClauseStatus, LineState};

/// A dataset's page, relative to the registry's root (and so to `[notify] registry_url`).
pub fn dataset_page(dataset: &str) -> String {
    format!("{dataset}.html")
}

/// The index page: every dataset.
#[derive(Debug, Serialize)]
pub struct Index {
    pub today: NaiveDate,
    pub datasets: Vec<IndexRow>,
}

#[derive(Debug, Serialize)]
pub struct IndexRow {
    pub dataset: String,
    /// Its page ([`dataset_page`]).
    pub page: String,
    pub description: String,
    /// The live lines, oldest first, as `(major, newest version)`.
    pub live: Vec<(u64, String)>,
    pub next_sunset: Option<NaiveDate>,
    pub days_to_sunset: Option<i64>,
    /// Consumers still on an old line, summed; `None` where no line is in a window.
    pub still_on: Option<usize>,
}

/// A dataset's page.
#[derive(Debug, Serialize)]
pub struct Dataset {
    pub today: NaiveDate,
    pub dataset: String,
    pub description: Option<String>,
    pub lines: Vec<LineRow>,
    pub waivers: Vec<WaiverRow>,
    /// The timeline, already markup (rendered and escaped by `render::timeline`).
    pub timeline_svg: String,
    /// Newest first.
    pub contracts: Vec<ContractView>,
    pub log: Vec<LogRow>,
    /// Newest first.
    pub releases: Vec<ReleaseRow>,
    pub lookback_days: i64,
    pub consumers: Vec<ConsumerRow>,
    pub told: Vec<ToldRow>,
}

#[derive(Debug, Serialize)]
pub struct LineRow {
    pub major: u64,
    pub state: LineState,
    pub current: String,
    pub opens: NaiveDate,
    pub sunset: Option<NaiveDate>,
    pub days_to_sunset: Option<i64>,
    /// `None` where `status` shows `-` (a line nobody is asked to leave).
    pub still_on: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct WaiverRow {
    pub id: String,
    /// `None`: every line.
    pub line: Option<u64>,
    pub clause: String,
    pub until: NaiveDate,
    pub days_left: i64,
    pub by: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct ContractView {
    pub version: String,
    pub valid_from: NaiveDate,
    pub supersedes: Option<String>,
    /// The sunset this version declares for the line before it: `(line, day)`.
    pub declared_sunset: Option<(u64, NaiveDate)>,
    pub clauses: Vec<ClauseRow>,
    pub deprecated: Vec<DeprecatedRow>,
}

#[derive(Debug, Serialize)]
pub struct ClauseRow {
    pub name: String,
    /// `None` for a clause this build does not know.
    pub kind: Option<String>,
    /// The value in words.
    pub value: String,
    pub status: ClauseStatus,
    /// The status in words ([`ClauseStatus::as_str`]).
    pub wording: &'static str,
}

#[derive(Debug, Serialize)]
pub struct DeprecatedRow {
    pub key: String,
    pub remove_after: NaiveDate,
    pub replacement: Option<String>,
    pub reason: String,
}

/// One row of the change log: a change record or a sunset move.
#[derive(Debug, Serialize)]
#[serde(tag = "row", rename_all = "lowercase")]
pub enum LogRow {
    Change {
        date: String,
        from: Option<String>,
        to: String,
        clause: String,
        kind: Option<String>,
        direction: String,
        verdict: String,
        rationale: String,
        commit: Option<CommitView>,
    },
    Sunset {
        date: String,
        line: u64,
        from: Option<NaiveDate>,
        to: NaiveDate,
        forced: bool,
        rationale: String,
        commit: Option<CommitView>,
    },
}

#[derive(Debug, Serialize)]
pub struct CommitView {
    /// The short id (12 characters).
    pub id: String,
    pub author: String,
}

#[derive(Debug, Serialize)]
pub struct ReleaseRow {
    pub date: NaiveDate,
    pub version: Option<String>,
    pub validated: NaiveDate,
    pub passed: bool,
    pub per_contract: Vec<ReleaseContract>,
    pub files: Vec<String>,
}

/// How a release fared against one contract.
#[derive(Debug, Serialize)]
pub struct ReleaseContract {
    pub version: String,
    pub failed: Vec<String>,
    pub advisory_failed: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ConsumerRow {
    pub consumer: String,
    pub team: Option<String>,
    pub status: String,
    pub line: Option<u64>,
    pub version: Option<String>,
    /// The instant in words, `-` for none.
    pub last_read: String,
    pub reads: u64,
}

/// The notices one consumer was told about a line on a day, by every channel it went by.
#[derive(Debug, Serialize)]
pub struct ToldRow {
    pub consumer: String,
    pub line: u64,
    pub milestone: String,
    pub day: NaiveDate,
    pub channels: Vec<String>,
}

const PAGE: &str = "site/page.html.j2";
const TABLE: &str = "site/table.html.j2";
const INDEX: &str = "site/index.html.j2";
const DATASET: &str = "site/dataset.html.j2";
const TEMPLATES: [(&str, &str); 4] = [
    (PAGE, include_str!("../../templates/site/page.html.j2")),
    (TABLE, include_str!("../../templates/site/table.html.j2")),
    (INDEX, include_str!("../../templates/site/index.html.j2")),
    (
        DATASET,
        include_str!("../../templates/site/dataset.html.j2"),
    ),
];

/// The index page as HTML.
pub fn index(page: &Index) -> Result<String, Error> {
    render(INDEX, page, page.today)
}

/// A dataset's page as HTML.
pub fn dataset(page: &Dataset) -> Result<String, Error> {
    render(DATASET, page, page.today)
}

fn render(name: &str, page: &impl Serialize, today: NaiveDate) -> Result<String, Error> {
    let env = environment()?;
    env.get_template(name)?.render(minijinja::context! {
        page => minijinja::value::Serde(page),
        today => today.to_string(),
        tool_version => env!("CARGO_PKG_VERSION"),
    })
}

/// The templates, compiled. Built per page: a handful of pages per run, a millisecond each.
fn environment() -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    // A misspelt field is an error at once, not a blank cell.
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.set_formatter(formatter);
    // Block tags on their own line leave no line behind, so a template reads as the page.
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()?,
    );
    env.add_filter("or_dash", or_dash);
    for (name, source) in TEMPLATES {
        env.add_template(name, source)?;
    }
    Ok(env)
}

/// Prints a value through the house escaper rather than minijinja's own: the same entities as
/// the JUnit report and the SVG (`'` as `&#39;`, `/` as itself) and forbidden controls as
/// spaces, which minijinja's escaper lets through.
fn formatter(out: &mut Output, state: &mut State, value: &Value) -> Result<(), Error> {
    if value.is_safe() || *state.auto_escape() == AutoEscape::None {
        return minijinja::escape_formatter(out, state, value);
    }
    if value.is_none() || value.is_undefined() {
        // Strict undefined stops an undefined one earlier; `none` is a view-model slip.
        return Err(Error::new(
            minijinja::ErrorKind::InvalidOperation,
            "printed none: use `or_dash` or a test",
        ));
    }
    out.write_str(&escape(&value.to_string()))
        .map_err(Error::from)
}

/// `-` for an absent value, the value otherwise (a `0` stays `0`, unlike `or "-"`).
fn or_dash(v: Value) -> Value {
    if v.is_none() || v.is_undefined() {
        Value::from("-")
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn empty_dataset(name: &str) -> Dataset {
        Dataset {
            today: day("2026-11-29"),
            dataset: name.to_string(),
            description: Some("Roads <b>&amp</b> 'paths'\u{1b}".into()),
            lines: vec![],
            waivers: vec![],
            timeline_svg: "<svg></svg>".into(),
            contracts: vec![],
            log: vec![],
            releases: vec![],
            lookback_days: 30,
            consumers: vec![],
            told: vec![],
        }
    }

    #[test]
    fn every_printed_value_is_escaped_by_the_house_escaper() {
        let html = dataset(&empty_dataset("a/b")).unwrap();
        assert!(
            html.contains("<title>a/b — data contract</title>"),
            "{html}"
        );
        assert!(
            html.contains(
                "<p class=\"lead\">Roads &lt;b&gt;&amp;amp&lt;/b&gt; &#39;paths&#39; </p>"
            ),
            "{html}"
        );
        // The SVG is markup already and goes in as it is.
        assert!(
            html.contains("<figure>\n<svg></svg>\n</figure>\n"),
            "{html}"
        );
    }

    #[test]
    fn an_absent_value_is_a_dash_and_zero_stays_zero() {
        let mut page = empty_dataset("roads");
        page.lines.push(LineRow {
            major: 1,
            state: LineState::Live,
            current: "1.0.0".into(),
            opens: day("2026-01-01"),
            sunset: None,
            days_to_sunset: None,
            still_on: Some(0),
        });
        let html = dataset(&page).unwrap();
        assert!(
            html.contains(
                "<tr><td>line 1</td><td class=\"live\">live</td><td>1.0.0</td>\
                 <td>2026-01-01</td><td>-</td><td class=\"num\">-</td><td class=\"num\">0</td></tr>\n"
            ),
            "{html}"
        );
    }

    #[test]
    fn an_empty_table_says_so() {
        let html = index(&Index {
            today: day("2026-11-29"),
            datasets: vec![],
        })
        .unwrap();
        assert!(html.contains("<p class=\"lead\">0 datasets, as of 2026-11-29."));
        assert!(html.contains("<p class=\"lead\">This store has no dataset yet.</p>\n</main>"));
    }
}
