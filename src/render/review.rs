//! `contracts review`: the report of a pull request's contract changes, and its Markdown for
//! one pull-request comment. Pure: `src/cli/review.rs` gathers the value from the store at
//! the base and at HEAD; this module only holds its shape and writes it.
//!
//! The Markdown is for GitHub's renderer: a hidden marker first (so a re-run finds and edits
//! the same comment), one heading per dataset holding its verdict line, tables of more than
//! [`OPEN_ROWS`] rows folded into `<details>`, and no line wider than [`WIDTH`] characters, so
//! the comment reads in the conversation column and in a terminal alike (a table cell too long
//! for it is shortened with `…`; the JSON keeps every value whole).

use std::fmt::Write as _;

use chrono::{DateTime, FixedOffset, NaiveDate};
use serde::Serialize;

use crate::model::{Bump, Change, ConsumerVerdict, LineState, Verdict, Window};
use crate::release::record::Backtest;

/// The first line of every review comment, invisible once rendered: what a bot looks for to
/// edit its own comment instead of adding another.
pub const MARKER: &str = "<!-- contracts-review -->";

/// The widest line the Markdown holds, in characters.
pub const WIDTH: usize = 100;

/// A table with more rows than this is folded into `<details>`.
pub const OPEN_ROWS: usize = 8;

/// The whole review.
#[derive(Debug, Serialize)]
pub struct Review {
    /// What the base was asked as (`--base`, or the default branch found) and its commit.
    pub base: String,
    pub base_commit: String,
    /// The merge base actually compared with: the commit HEAD branched from.
    pub compared_with: String,
    pub head_commit: String,
    pub today: NaiveDate,
    /// Whether something would be refused (exit 1): a draft `propose` would refuse, or a
    /// version published since the base that bumps less than its changes require.
    pub refused: bool,
    pub datasets: Vec<DatasetReview>,
}

/// One dataset the pull request touches.
#[derive(Debug, Serialize)]
pub struct DatasetReview {
    pub dataset: String,
    /// Why it is in the review, in the order found.
    pub touched: Vec<Touch>,
    /// Each draft and each version published since the base, with its verdict.
    pub proposals: Vec<Proposal>,
    /// Every consumer subscribed to the dataset (registry at HEAD).
    pub consumers: Vec<ConsumerRow>,
    pub window: WindowView,
    /// The registry page and its timeline, when `[notify] registry_url` is set.
    pub links: Option<Links>,
}

/// Why a dataset is in the review.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Touch {
    /// A draft file matching `[review] drafts` added or changed since the base.
    Draft { path: String },
    /// A contract version committed to the store since the base.
    Published { version: String },
    /// A line's effective sunset differs between the base and HEAD.
    SunsetMoved {
        line: u64,
        from: Option<NaiveDate>,
        to: Option<NaiveDate>,
    },
    /// Consumers of the dataset added, removed or edited in `consumers.toml`.
    ConsumersEdited { consumers: Vec<String> },
    /// Waivers granted or revoked since the base, by id.
    WaiversEdited {
        granted: Vec<String>,
        revoked: Vec<String>,
    },
}

/// A draft, or a version published since the base, against the version before it.
#[derive(Debug, Serialize)]
pub struct Proposal {
    /// The draft's path, or the published contract's path.
    pub source: String,
    pub version: String,
    /// The version it is compared with (the dataset's newest before it); none for a first.
    pub previous: Option<String>,
    pub required_bump: Bump,
    /// The smallest version that bumps as much as the changes require.
    pub requires: Option<String>,
    pub declared_bump: Bump,
    pub sufficient: bool,
    pub changes: Vec<Change>,
    /// Every reason `propose` would refuse it, in its words.
    pub refusals: Vec<String>,
    pub backtest: Backtest,
}

impl Proposal {
    /// The word of the verdict line.
    fn word(&self) -> &'static str {
        if self.previous.is_none() {
            "NEW DATASET"
        } else if self.changes.iter().any(|c| c.verdict == Verdict::Breaking) {
            "BREAKING"
        } else if self.changes.is_empty() {
            "NO CLAUSE CHANGE"
        } else {
            "COMPATIBLE"
        }
    }

    /// `countries: BREAKING → requires 3.0.0 (declared 2.4.0 ✗)`, and the refusals' count.
    pub fn verdict_line(&self, dataset: &str) -> String {
        let mut s = match &self.requires {
            Some(req) => format!(
                "{dataset}: {} → requires {req} (declared {} {})",
                self.word(),
                self.version,
                if self.sufficient { "✓" } else { "✗" }
            ),
            None => format!("{dataset}: {} → {}", self.word(), self.version),
        };
        // An insufficient bump is one of the refusals, and the ✗ already says it.
        let other = self
            .refusals
            .len()
            .saturating_sub(usize::from(!self.sufficient));
        if other > 0 {
            let more = if self.sufficient { "" } else { " more" };
            let _ = write!(s, ", refused ({other}{more} reason{})", plural(other));
        }
        s
    }
}

/// A subscribed consumer: its verdict on the changes, and where it last read.
#[derive(Debug, Serialize)]
pub struct ConsumerRow {
    pub consumer: String,
    /// `None` where no version is proposed (only consumers or waivers were edited).
    pub verdict: Option<ConsumerVerdict>,
    /// The breaking changes that touch what it uses.
    pub breaking_changes: Vec<String>,
    pub uses_everything: bool,
    /// Where it stands, as `consumers` says (`still-on`, `current`, `silent`, …).
    pub status: String,
    #[serde(serialize_with = "crate::model::wire::instant")]
    pub last_read: Option<DateTime<FixedOffset>>,
    /// The contract version of its newest read.
    pub version: Option<String>,
}

/// The dataset's lines at HEAD with the drafts added, the windows between them and the
/// waivers that end within a window.
#[derive(Debug, Default, Serialize)]
pub struct WindowView {
    pub lines: Vec<LineRow>,
    pub windows: Vec<Window>,
    pub waivers_ending: Vec<WaiverRow>,
}

#[derive(Debug, Serialize)]
pub struct LineRow {
    pub line: u64,
    pub state: LineState,
    pub opens: NaiveDate,
    pub sunset: Option<NaiveDate>,
    /// The newest version of the line, a draft's included.
    pub newest: String,
}

#[derive(Debug, Serialize)]
pub struct WaiverRow {
    pub id: String,
    pub clause: String,
    pub line: Option<u64>,
    pub until: NaiveDate,
}

#[derive(Debug, Serialize)]
pub struct Links {
    pub page: String,
    pub timeline: String,
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The verdict lines of a dataset: one per proposal, or one saying what else changed.
pub fn verdict_lines(d: &DatasetReview) -> Vec<String> {
    if !d.proposals.is_empty() {
        return d
            .proposals
            .iter()
            .map(|p| p.verdict_line(&d.dataset))
            .collect();
    }
    let what: Vec<String> = d.touched.iter().map(touch_words).collect();
    vec![format!("{}: {}", d.dataset, what.join("; "))]
}

/// A touch in words, for the verdict line of a dataset with no proposal and the "touched" line.
pub fn touch_words(t: &Touch) -> String {
    let day = |d: &Option<NaiveDate>| d.map_or("none".to_string(), |d| d.to_string());
    match t {
        Touch::Draft { path } => format!("draft `{path}`"),
        Touch::Published { version } => format!("version {version} published"),
        Touch::SunsetMoved { line, from, to } => {
            format!("sunset of line {line} moved {} → {}", day(from), day(to))
        }
        Touch::ConsumersEdited { consumers } => {
            format!("consumers edited ({})", consumers.join(", "))
        }
        Touch::WaiversEdited { granted, revoked } => {
            let mut parts = Vec::new();
            if !granted.is_empty() {
                parts.push(format!("{} granted", granted.len()));
            }
            if !revoked.is_empty() {
                parts.push(format!("{} revoked", revoked.len()));
            }
            format!("waivers edited ({})", parts.join(", "))
        }
    }
}

/// A clause value's change in a few words (the `diff` table's "change" column).
fn change_cell(c: &Change) -> String {
    super::delta::change_words(c)
}

/// The instant of a read, to the second, or `-`.
pub fn read_text(at: Option<DateTime<FixedOffset>>) -> String {
    at.map_or("-".to_string(), |t| crate::model::history::instant_text(&t))
}

/// A table cell's text made safe for GFM: no pipe ends the cell, no `<` opens HTML, no `*`
/// starts emphasis, no line break splits the row.
fn escape_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '*' => out.push_str("\\*"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// One row of a table, its longest cells shortened with `…` until the row fits [`WIDTH`].
fn fit_row(cells: &[String]) -> String {
    let mut raw: Vec<String> = cells.to_vec();
    loop {
        let escaped: Vec<String> = raw.iter().map(|c| escape_cell(c)).collect();
        let row = format!("| {} |", escaped.join(" | "));
        let over = row.chars().count().saturating_sub(WIDTH);
        if over == 0 {
            return row;
        }
        let (i, longest) = raw
            .iter()
            .enumerate()
            .max_by_key(|(_, c)| c.chars().count())
            .map(|(i, c)| (i, c.chars().count()))
            .unwrap_or((0, 0));
        if longest <= 1 {
            return row;
        }
        // Escapes count double, so cut at least one more than the excess, and always one.
        let keep = longest.saturating_sub(over + 1).max(1);
        let short: String = raw[i].chars().take(keep).collect();
        raw[i] = format!("{}…", short.trim_end_matches('\\'));
        if raw[i].chars().count() >= longest {
            return row;
        }
    }
}

/// A table: header, rule, rows; folded into `<details>` under `summary` when long.
fn table(out: &mut String, summary: &str, header: &[&str], rows: &[Vec<String>]) {
    let fold = rows.len() > OPEN_ROWS;
    if fold {
        let _ = writeln!(out, "<details><summary>{summary}</summary>\n");
    } else {
        let _ = writeln!(out, "{summary}:\n");
    }
    let head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let _ = writeln!(out, "{}", fit_row(&head));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    for r in rows {
        let _ = writeln!(out, "{}", fit_row(r));
    }
    if fold {
        out.push_str("\n</details>\n");
    }
    out.push('\n');
}

/// Words filled into lines of at most [`WIDTH`] characters (a word longer than that, a URL,
/// stands alone on its line).
fn paragraph(out: &mut String, text: &str) {
    filled(out, text, WIDTH);
}

/// [`paragraph`] in lines of at most `width` characters.
fn filled(out: &mut String, text: &str, width: usize) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out.push('\n');
}

/// The review as one GitHub comment.
pub fn markdown(r: &Review) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{MARKER}\n## Contract review\n");
    let refused = r.datasets.iter().filter(|d| dataset_refused(d)).count();
    let short = |c: &str| c.chars().take(12).collect::<String>();
    paragraph(
        &mut out,
        &format!(
            "Compared with `{}` (merge base `{}`) on {}: {} dataset{} touched, {}.",
            r.base,
            short(&r.compared_with),
            r.today,
            r.datasets.len(),
            plural(r.datasets.len()),
            if refused == 0 {
                "nothing would be refused".to_string()
            } else {
                format!("{refused} would be refused")
            }
        ),
    );
    if r.datasets.is_empty() {
        paragraph(
            &mut out,
            "No draft, contract, sunset, consumer or waiver changed since the base.",
        );
    }
    for d in &r.datasets {
        dataset_markdown(&mut out, d);
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn dataset_refused(d: &DatasetReview) -> bool {
    d.proposals
        .iter()
        .any(|p| !p.sufficient || !p.refusals.is_empty())
}

fn dataset_markdown(out: &mut String, d: &DatasetReview) {
    for line in verdict_lines(d) {
        let _ = writeln!(out, "### {}\n", escape_cell(&line));
    }
    // Without a proposal the heading already says what was touched.
    if !d.proposals.is_empty() {
        let touched: Vec<String> = d.touched.iter().map(touch_words).collect();
        paragraph(out, &format!("Touched: {}.", touched.join("; ")));
    }
    for p in &d.proposals {
        proposal_markdown(out, d, p);
    }
    consumers_markdown(out, d);
    window_markdown(out, &d.window);
    if let Some(l) = &d.links {
        paragraph(
            out,
            &format!("[Registry page]({}) · [Timeline]({})", l.page, l.timeline),
        );
    }
}

fn proposal_markdown(out: &mut String, d: &DatasetReview, p: &Proposal) {
    let title = match &p.previous {
        Some(prev) => format!("`{}` {prev} → {}", p.source, p.version),
        None => format!("`{}` {} (first version)", p.source, p.version),
    };
    let _ = writeln!(out, "#### {title}\n");
    if !p.refusals.is_empty() {
        out.push_str("**`propose` would refuse it:**\n\n");
        for r in &p.refusals {
            let mut item = String::new();
            // A list item continues on lines indented under its text, two characters in.
            filled(&mut item, &escape_cell(r), WIDTH - 2);
            let text = item.trim_end().replace('\n', "\n  ");
            let _ = writeln!(out, "- {text}");
        }
        out.push('\n');
    }
    if p.changes.is_empty() {
        paragraph(out, "No clause changed.");
    } else {
        let rows: Vec<Vec<String>> = p
            .changes
            .iter()
            .map(|c| {
                vec![
                    format!("`{}`", c.clause),
                    c.kind.to_string(),
                    change_cell(c),
                    c.direction.to_string(),
                    c.verdict.to_string(),
                ]
            })
            .collect();
        table(
            out,
            &format!("{} clause change{}", rows.len(), plural(rows.len())),
            &["clause", "kind", "old → new", "direction", "verdict"],
            &rows,
        );
    }
    backtest_markdown(out, &d.dataset, &p.backtest);
}

fn backtest_markdown(out: &mut String, dataset: &str, b: &Backtest) {
    if b.clauses.is_empty() {
        paragraph(out, "Backtest: no changed or added clause to replay.");
        return;
    }
    let failing = b.clauses.iter().filter(|c| c.would_fail > 0).count();
    paragraph(
        out,
        &format!(
            "Backtest on {} recorded release{} of {dataset} validated since {}{}: {} of {} \
             clause{} would fail a release.",
            b.releases - b.without_profile,
            plural(b.releases - b.without_profile),
            b.since,
            if b.without_profile > 0 {
                format!(" ({} more without a profile)", b.without_profile)
            } else {
                String::new()
            },
            failing,
            b.clauses.len(),
            plural(b.clauses.len()),
        ),
    );
    let rows: Vec<Vec<String>> = b
        .clauses
        .iter()
        .map(|r| {
            vec![
                format!("`{}`", r.clause),
                r.evaluated.to_string(),
                r.would_fail.to_string(),
                r.releases_text(),
            ]
        })
        .collect();
    table(
        out,
        "Per clause",
        &[
            "clause",
            "evaluated",
            "would fail",
            "releases that would fail",
        ],
        &rows,
    );
}

fn consumers_markdown(out: &mut String, d: &DatasetReview) {
    if d.consumers.is_empty() {
        paragraph(
            out,
            &format!(
                "No consumer of {} is registered in consumers.toml.",
                d.dataset
            ),
        );
        return;
    }
    let breaks = d
        .consumers
        .iter()
        .filter(|c| c.verdict == Some(ConsumerVerdict::Breaks))
        .count();
    let rows: Vec<Vec<String>> = d
        .consumers
        .iter()
        .map(|c| {
            vec![
                c.consumer.clone(),
                match c.verdict {
                    None => "-".to_string(),
                    Some(ConsumerVerdict::Breaks) if c.uses_everything => {
                        "breaks (uses everything)".to_string()
                    }
                    Some(v) => v.as_str().to_string(),
                },
                if c.breaking_changes.is_empty() {
                    "-".to_string()
                } else {
                    c.breaking_changes.join(", ")
                },
                c.status.clone(),
                read_text(c.last_read),
                c.version.clone().unwrap_or_else(|| "-".to_string()),
            ]
        })
        .collect();
    let judged = d.consumers.iter().any(|c| c.verdict.is_some());
    table(
        out,
        &if judged {
            format!("Consumers ({breaks} of {} affected)", d.consumers.len())
        } else {
            format!("Consumers ({} subscribed)", d.consumers.len())
        },
        &[
            "consumer",
            "verdict",
            "breaking changes it uses",
            "status",
            "last read",
            "version",
        ],
        &rows,
    );
}

fn window_markdown(out: &mut String, w: &WindowView) {
    let day = |d: Option<NaiveDate>| d.map_or("-".to_string(), |d| d.to_string());
    let rows: Vec<Vec<String>> = w
        .lines
        .iter()
        .map(|l| {
            vec![
                l.line.to_string(),
                l.state.as_str().to_string(),
                l.opens.to_string(),
                day(l.sunset),
                l.newest.clone(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        table(
            out,
            "Lines",
            &["line", "state", "opens", "sunset", "newest"],
            &rows,
        );
    }
    for win in &w.windows {
        paragraph(
            out,
            &format!(
                "Window: line {} → {} from {} to {} ({} days).",
                win.old_line,
                win.new_line,
                win.opens,
                win.sunset,
                win.days()
            ),
        );
    }
    if !w.waivers_ending.is_empty() {
        let rows: Vec<Vec<String>> = w
            .waivers_ending
            .iter()
            .map(|v| {
                vec![
                    v.id.clone(),
                    format!("`{}`", v.clause),
                    v.line.map_or("all".to_string(), |l| l.to_string()),
                    v.until.to_string(),
                ]
            })
            .collect();
        table(
            out,
            "Waivers ending within the window",
            &["id", "clause", "line", "until"],
            &rows,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_row_is_shortened_to_the_width() {
        let cells = vec!["a".repeat(80), "b|c".repeat(20), "short".to_string()];
        let row = fit_row(&cells);
        assert!(row.chars().count() <= WIDTH, "{row}");
        assert!(row.contains('…'));
        assert!(row.ends_with("| short |"));
    }

    #[test]
    fn a_paragraph_wraps_at_the_width() {
        let mut out = String::new();
        paragraph(&mut out, &"word ".repeat(60));
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH));
        assert!(out.lines().count() >= 3);
    }
}
