//! Rendering and the one output path, the run's [`Printer`]: text tables for people and JSON
//! for scripts go to stdout (`outln!(ctx, ..)`, `out!(ctx, ..)`); talk goes to stderr
//! (`talkln!(ctx, ..)`, silenced by `--quiet`) and so do errors (`errln!(ctx, ..)`, never
//! silenced). No command prints any other way.
//!
//! Tables are drawn by `tabled`. Each column says what it holds ([`Role`]), and only a
//! terminal is fitted: into a pipe or a file nothing is shortened or wrapped, whatever
//! `COLUMNS` says, because what a script reads must be whole. On a terminal narrower than
//! the table, in this order: headers wrap at their spaces; the gutters narrow to two spaces;
//! free text gives way, the widest first, ending in `…`; findings and the last column wrap;
//! and if the identifiers alone are still too wide, each row is printed as a block of
//! `header value` lines. Identifiers,
//! dates, versions and verdicts are never shortened, and a finding or an error is never cut
//! anywhere. JSON always keeps every value whole. When colour is on (`--color`, `NO_COLOR`)
//! a cell is coloured by the [`Tone`] of the typed value it holds (a verdict, a result, a
//! state: see [`Cell`]), never by its text, so a rationale that reads "breaking" stays plain.

use tabled::settings::object::Columns;
use tabled::settings::{Padding, Style, Width};

use crate::consumers::standing::Status as Standing;
use crate::model::waiver::WaiverState;
use crate::model::{Change, ConsumerVerdict, Verdict};
use crate::release::validate::Status as ValidationStatus;
use crate::render::delta::delta;

/// The width of a table that must never be shortened: into a pipe, or a finding.
pub const UNLIMITED: usize = usize::MAX;

/// The width of a terminal that does not tell its size.
const UNKNOWN_TERMINAL: usize = 80;

/// Where a command's output goes and how it looks, decided once from the global flags and
/// handed to every command in its [`Context`](super::Context): whether talk is silenced
/// (`--quiet`), whether tables are coloured (`--color`, `NO_COLOR`) and the width they fit.
/// Data (stdout) and errors are never silenced; `--quiet` drops only talk (warnings, notes,
/// progress, what a run did).
#[derive(Debug, Clone)]
pub struct Printer {
    quiet: bool,
    colour: bool,
    width: usize,
}

impl Printer {
    /// The printer of this run: `quiet` silences talk, `colour` colours table cells by role,
    /// and tables fit the terminal stdout is (see [`width`]).
    pub fn new(quiet: bool, colour: bool) -> Printer {
        Printer {
            quiet,
            colour,
            width: width(),
        }
    }

    /// Whether talk is silenced: a progress bar is not drawn either.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    pub fn colour(&self) -> bool {
        self.colour
    }

    pub fn width(&self) -> usize {
        self.width
    }

    /// Write one line of data to stdout. If the reader went away (a closed pipe) or stdout
    /// fails, stop at once: nothing more can be delivered, and a panic would only add noise.
    pub fn out(&self, args: std::fmt::Arguments) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
            self.stdout_failed(e);
        }
    }

    /// Write data to stdout with no newline added (a rendered JUnit report, a draft file).
    pub fn out_raw(&self, args: std::fmt::Arguments) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
            self.stdout_failed(e);
        }
    }

    /// Write one line of talk to stderr: warnings, notes, progress, what a run did; nothing
    /// with `--quiet`. A stderr that is gone (a closed pipe, a full disk) loses the talk but
    /// never stops the command or panics.
    pub fn talk(&self, args: std::fmt::Arguments) {
        if !self.quiet {
            stderr_line(args);
        }
    }

    /// Write one line of an error to stderr, `--quiet` or not: a refusal, a failure, why the
    /// command stopped.
    pub fn error(&self, args: std::fmt::Arguments) {
        stderr_line(args);
    }

    /// Print a value as pretty JSON on stdout.
    pub fn json<T: serde::Serialize>(&self, value: &T) {
        match serde_json::to_string_pretty(value) {
            Ok(s) => self.out(format_args!("{s}")),
            // Serialising our own report types cannot fail; say so loudly if it ever does.
            Err(e) => self.error(format_args!("error: could not render JSON: {e}")),
        }
    }

    /// A plain table with a header row, fitted to this run's width and coloured by role
    /// when colour is on.
    pub fn table<I, R, C>(&self, cols: &[Col], rows: I) -> String
    where
        I: IntoIterator<Item = R>,
        R: IntoIterator<Item = C>,
        C: Into<Cell>,
    {
        fit_table(cols, rows, self.width, self.colour)
    }

    fn stdout_failed(&self, e: std::io::Error) -> ! {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            self.error(format_args!("error: cannot write to stdout: {e}"));
        }
        std::process::exit(3);
    }
}

/// What holds this run's [`Printer`]: the printer itself and a command's context, so that
/// `outln!(ctx, ...)` reads the same in `run` and in the helpers it calls.
pub trait Print {
    fn printer(&self) -> &Printer;
}

impl Print for Printer {
    fn printer(&self) -> &Printer {
        self
    }
}

impl Print for super::Context {
    fn printer(&self) -> &Printer {
        &self.printer
    }
}

/// One line on stderr; a stderr that is gone loses it, as `eprintln!` would panic.
fn stderr_line(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// The width tables must fit in. Into a pipe or a file, [`UNLIMITED`]: what a script reads is
/// never cut, and a `COLUMNS` left in the environment does not change that. On a terminal,
/// `COLUMNS` if set (a user narrowing the output on purpose), else the terminal's width.
pub fn width() -> usize {
    let term = console::Term::stdout();
    if !term.is_term() {
        return UNLIMITED;
    }
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        return n;
    }
    term.size_checked()
        .map_or(UNKNOWN_TERMINAL, |(_, cols)| usize::from(cols))
}

/// What a column holds, which decides how it may give way on a narrow terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Identifiers, dates, versions, numbers, verdicts: a shortened one is wrong, not short,
    /// so it is never cut (a last column may wrap at its spaces).
    Key,
    /// Free text (a rationale, a team, a list of addresses): the first to give way.
    Text,
    /// A finding, an error or the evidence of one: never cut, it wraps instead.
    Whole,
}

/// A column of a table: its header and what it holds.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    pub header: &'static str,
    pub role: Role,
}

/// A column of identifiers, dates, versions, numbers or verdicts.
pub const fn key(header: &'static str) -> Col {
    Col {
        header,
        role: Role::Key,
    }
}

/// A column of free text.
pub const fn text(header: &'static str) -> Col {
    Col {
        header,
        role: Role::Text,
    }
}

/// A column of findings or errors.
pub const fn whole(header: &'static str) -> Col {
    Col {
        header,
        role: Role::Whole,
    }
}

/// What a value means to the reader, which alone decides its colour: a cell is coloured
/// because it holds a verdict, a result or a state, never because of the words it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// All is well: compatible, pass, current, live, sent (green).
    Good,
    /// Something is broken or someone is at risk: breaking, fail, still on an old line,
    /// an unknown reader, a notice that failed (red).
    Bad,
    /// Worth a look, not a failure: advisory, silent, upcoming, planned, stale (yellow).
    Warn,
    /// Over or out of play: not evaluated, retired, expired (dim).
    Muted,
}

impl Tone {
    /// The ANSI code of the tone's colour.
    fn ansi(self) -> &'static str {
        match self {
            Tone::Good => "32",
            Tone::Bad => "31",
            Tone::Warn => "33",
            Tone::Muted => "2",
        }
    }
}

/// One cell of a table: the text printed and, when the cell holds a typed value that has one,
/// its [`Tone`]. Text alone ([`Cell::plain`], or a `String` through `From`) is never coloured,
/// whatever it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    text: String,
    tone: Option<Tone>,
}

impl Cell {
    /// A cell that is only text: an identifier, a date, a rationale.
    pub fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            tone: None,
        }
    }

    /// A cell of `text` that holds a value of `tone`: for a value whose type the library does
    /// not name (a line's state, a notice's outcome) or whose text differs from its type's
    /// (`FAIL` for [`ValidationStatus::Fail`]).
    pub fn toned(text: impl Into<String>, tone: Option<Tone>) -> Cell {
        Cell {
            text: text.into(),
            tone,
        }
    }

    /// A cell holding a typed value: its text is the value's, its tone the value's own.
    pub fn of<T: Toned + std::fmt::Display>(value: T) -> Cell {
        Cell::toned(value.to_string(), value.tone())
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn tone(&self) -> Option<Tone> {
        self.tone
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::plain(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::plain(text)
    }
}

/// A domain value that has a [`Tone`] when it is shown in a table.
pub trait Toned {
    fn tone(&self) -> Option<Tone>;
}

impl Toned for Verdict {
    fn tone(&self) -> Option<Tone> {
        Some(match self {
            Verdict::Compatible => Tone::Good,
            Verdict::Breaking => Tone::Bad,
        })
    }
}

impl Toned for ValidationStatus {
    fn tone(&self) -> Option<Tone> {
        Some(match self {
            ValidationStatus::Pass => Tone::Good,
            ValidationStatus::Fail => Tone::Bad,
            ValidationStatus::AdvisoryFail | ValidationStatus::Waived => Tone::Warn,
            ValidationStatus::NotEvaluated => Tone::Muted,
        })
    }
}

impl Toned for Standing {
    fn tone(&self) -> Option<Tone> {
        Some(match self {
            Standing::Current | Standing::Migrated => Tone::Good,
            Standing::StillOn | Standing::Unknown => Tone::Bad,
            Standing::Silent | Standing::Unsubscribed | Standing::UnknownVersion => Tone::Warn,
            Standing::Automation | Standing::Incidental => Tone::Muted,
        })
    }
}

impl Toned for ConsumerVerdict {
    fn tone(&self) -> Option<Tone> {
        Some(match self {
            ConsumerVerdict::Unaffected => Tone::Good,
            ConsumerVerdict::Breaks => Tone::Bad,
        })
    }
}

impl Toned for WaiverState {
    fn tone(&self) -> Option<Tone> {
        Some(match self {
            WaiverState::Live => Tone::Good,
            WaiverState::Upcoming => Tone::Warn,
            WaiverState::Expired | WaiverState::Revoked => Tone::Muted,
        })
    }
}

/// The state of a line in `status` (`live`, `upcoming`, `retired`), a word the command
/// chooses from the line and the day; the library names no type for it.
pub fn line_state(state: &'static str) -> Cell {
    let tone = match state {
        "live" => Some(Tone::Good),
        "upcoming" => Some(Tone::Warn),
        "retired" => Some(Tone::Muted),
        _ => None,
    };
    Cell::toned(state, tone)
}

/// How `show` says a contract holds a clause (`enforced`, `advisory`, `not evaluated`, and
/// `not evaluated (unknown to this build)`): an enforced clause is the norm and stays plain.
pub fn clause_status(status: &'static str) -> Cell {
    let tone = match status {
        "advisory" => Some(Tone::Warn),
        s if s.starts_with("not evaluated") => Some(Tone::Muted),
        _ => None,
    };
    Cell::toned(status, tone)
}

/// The outcome of one notice in `notify` (`planned`, `sent`, `recovered`, `failed`,
/// `unsent`), as the notifier records it.
pub fn notice_status(status: &'static str) -> Cell {
    let tone = match status {
        "sent" | "recovered" => Some(Tone::Good),
        "failed" => Some(Tone::Bad),
        "planned" | "unsent" => Some(Tone::Warn),
        _ => None,
    };
    Cell::toned(status, tone)
}

fn text_width(s: &str) -> usize {
    console::measure_text_width(s)
}

/// The narrowest a free-text column is cut to.
const TEXT_FLOOR: usize = 8;
/// The narrowest a finding is wrapped to.
const WHOLE_FLOOR: usize = 20;

/// How one column is fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    Whole,
    Truncate(usize),
    Wrap(usize),
}

/// How a whole table is fitted: its headers (wrapped or not), one [`Fit`] per column, or a
/// block per row when even that is too wide.
#[derive(Debug, PartialEq, Eq)]
enum Layout {
    Grid {
        headers: Vec<String>,
        fits: Vec<Fit>,
        tight: bool,
    },
    Blocks,
}

/// The width of a row of cells `widths` wide. Loose: one space of padding on each side of a
/// cell and one space between cells (`Style::blank`). Tight, for a narrow terminal: two
/// spaces between cells and none around the row.
fn total(widths: &[usize], tight: bool) -> usize {
    let (pad, gap) = if tight { (0, 2) } else { (2, 1) };
    widths
        .iter()
        .map(|w| w.saturating_add(pad))
        .fold(0usize, usize::saturating_add)
        .saturating_add(gap * widths.len().saturating_sub(1))
}

fn longest_word(s: &str) -> usize {
    s.split(' ').map(text_width).max().unwrap_or(0)
}

/// `s` wrapped at its spaces into lines of at most `max` columns (a longer word keeps its
/// own line).
fn wrap_words(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in s.split(' ') {
        let w = text_width(word);
        if line > 0 && line + 1 + w > max {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += w;
    }
    out
}

/// Decide how a table of `cols` fits in `max`: the cells of column `i` are at most
/// `values[i]` wide and their longest word is `words[i]` wide.
fn plan(cols: &[Col], values: &[usize], words: &[usize], max: usize) -> Layout {
    let mut headers: Vec<String> = cols.iter().map(|c| c.header.to_string()).collect();
    let mut widths: Vec<usize> = cols
        .iter()
        .zip(values)
        .map(|(c, v)| text_width(c.header).max(*v))
        .collect();
    let mut fits = vec![Fit::Whole; cols.len()];
    if total(&widths, false) <= max {
        return Layout::Grid {
            headers,
            fits,
            tight: false,
        };
    }
    // 1. A header wider than its values wraps at its spaces: nothing is lost.
    for (i, c) in cols.iter().enumerate() {
        if text_width(c.header) > values[i] {
            let w = values[i].max(longest_word(c.header));
            headers[i] = wrap_words(c.header, w);
            widths[i] = w;
        }
    }
    // 2. The gutters narrow.
    let tight = total(&widths, false) > max;
    let header_of = |h: &str| h.lines().map(text_width).max().unwrap_or(0);
    let last = cols.len().saturating_sub(1);
    // 3. Free text gives way, the widest first; 4. then findings and the last column wrap.
    for step in 0..2 {
        let floor: Vec<Option<usize>> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let least = match (step, c.role) {
                    (0, Role::Text) => TEXT_FLOOR.max(header_of(&headers[i])),
                    (1, Role::Whole) => WHOLE_FLOOR.max(header_of(&headers[i])),
                    (1, Role::Key) if i == last => header_of(&headers[i]).max(words[i]),
                    (1, Role::Text) if i == last => widths[i],
                    _ => return None,
                };
                Some(least.min(widths[i]))
            })
            .collect();
        while total(&widths, tight) > max {
            let Some(i) = (0..cols.len())
                .filter(|&i| floor[i].is_some_and(|f| widths[i] > f))
                .max_by_key(|&i| (widths[i], std::cmp::Reverse(i)))
            else {
                break;
            };
            widths[i] -= 1;
            fits[i] = if step == 0 {
                Fit::Truncate(widths[i])
            } else {
                Fit::Wrap(widths[i])
            };
        }
    }
    // 5. Too wide even so: one block per row.
    if total(&widths, tight) > max {
        return Layout::Blocks;
    }
    Layout::Grid {
        headers,
        fits,
        tight,
    }
}

/// A table fitted to `max` columns (see the module's paragraph for the order in which
/// columns give way); `colour` colours each cell that has a [`Tone`], and no other.
pub fn fit_table<I, R, C>(cols: &[Col], rows: I, max: usize, colour: bool) -> String
where
    I: IntoIterator<Item = R>,
    R: IntoIterator<Item = C>,
    C: Into<Cell>,
{
    // One line per cell: a newline would break the columns.
    let grid: Vec<Vec<Cell>> = rows
        .into_iter()
        .map(|r| {
            let mut r: Vec<Cell> = r
                .into_iter()
                .map(|c| {
                    let c: Cell = c.into();
                    Cell::toned(c.text.replace(['\n', '\r'], " "), c.tone)
                })
                .collect();
            r.resize(cols.len(), Cell::plain(""));
            r
        })
        .collect();
    let values: Vec<usize> = (0..cols.len())
        .map(|i| {
            grid.iter()
                .map(|r| text_width(&r[i].text))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let paint = |cell: &Cell| match cell.tone.filter(|_| colour) {
        Some(tone) => format!("\x1b[{}m{}\x1b[0m", tone.ansi(), cell.text),
        None => cell.text.clone(),
    };
    let words: Vec<usize> = (0..cols.len())
        .map(|i| {
            grid.iter()
                .map(|r| longest_word(&r[i].text))
                .max()
                .unwrap_or(0)
        })
        .collect();
    match plan(cols, &values, &words, max) {
        Layout::Grid {
            headers,
            fits,
            tight,
        } => {
            let mut b = tabled::builder::Builder::default();
            b.push_record(headers);
            for r in &grid {
                b.push_record(r.iter().map(paint));
            }
            let mut t = b.build();
            t.with(Style::blank());
            if tight {
                t.with(Padding::new(0, 1, 0, 0));
                t.modify(Columns::last(), Padding::zero());
            }
            for (i, fit) in fits.iter().enumerate() {
                match *fit {
                    Fit::Whole => {}
                    Fit::Truncate(w) => {
                        t.modify(Columns::one(i), Width::truncate(w).suffix("…"));
                    }
                    Fit::Wrap(w) => {
                        t.modify(Columns::one(i), Width::wrap(w).keep_words(true));
                    }
                }
            }
            t.to_string()
        }
        Layout::Blocks => blocks(cols, &grid, max, paint),
    }
}

/// Each row as a block of `header value` lines, a blank line between blocks: the layout of
/// a table whose identifiers alone are wider than the terminal. Findings and free text wrap;
/// an identifier is never broken, even one wider than the terminal.
fn blocks(cols: &[Col], grid: &[Vec<Cell>], max: usize, paint: impl Fn(&Cell) -> String) -> String {
    let label = cols.iter().map(|c| text_width(c.header)).max().unwrap_or(0);
    let room = max.saturating_sub(label + 5).max(WHOLE_FLOOR);
    let mut out = Vec::new();
    for r in grid {
        let mut b = tabled::builder::Builder::default();
        for (c, v) in cols.iter().zip(r) {
            let v = match c.role {
                Role::Key => paint(v),
                Role::Text | Role::Whole => {
                    tabled::settings::width::Wrap::wrap(&v.text, room, true)
                }
            };
            b.push_record([c.header.to_string(), v]);
        }
        let mut t = b.build();
        t.with(Style::blank());
        out.push(t.to_string());
    }
    out.join("\n\n")
}

/// Print a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(p: &(impl Print + ?Sized), value: &T) {
    p.printer().json(value);
}

/// A plain table with a header row, fitted and coloured as `p`'s printer says.
pub fn table<I, R, C>(p: &(impl Print + ?Sized), cols: &[Col], rows: I) -> String
where
    I: IntoIterator<Item = R>,
    R: IntoIterator<Item = C>,
    C: Into<Cell>,
{
    p.printer().table(cols, rows)
}

/// A clause value (or its absence) for a table cell.
pub fn cell(v: Option<&serde_json::Value>) -> String {
    match v {
        None => "-".to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// The per-clause change table of `diff` and `propose`: what changed in words, a map key by
/// key and a set item by item (JSON keeps both whole values).
pub fn changes_table(p: &(impl Print + ?Sized), changes: &[Change]) -> String {
    let rows = changes.iter().map(|c| {
        vec![
            c.clause.clone().into(),
            c.kind.to_string().into(),
            delta(c.old.as_ref(), c.new.as_ref()).into(),
            c.direction.to_string().into(),
            Cell::of(c.verdict),
        ]
    });
    table(
        p,
        &[
            key("clause"),
            key("kind"),
            whole("change"),
            key("direction"),
            key("verdict"),
        ],
        rows,
    )
}

/// The consumers' verdicts of `diff` and `propose`, printed after the clause table.
pub fn print_verdicts(
    ctx: &(impl Print + ?Sized),
    dataset: &str,
    impacts: &[crate::model::Impact],
) {
    if impacts.is_empty() {
        outln!(
            ctx,
            "no consumer of {dataset} is registered in consumers.toml"
        );
        return;
    }
    let rows = impacts.iter().map(|i| {
        vec![
            i.consumer.clone().into(),
            Cell::toned(i.verdict_text(), i.verdict.tone()),
            if i.changes.is_empty() {
                "-".into()
            } else {
                i.changes.join(", ").into()
            },
        ]
    });
    outln!(ctx, "consumers of {dataset}:");
    outln!(
        ctx,
        "{}",
        table(
            ctx,
            &[
                key("consumer"),
                key("verdict"),
                key("breaking changes it uses")
            ],
            rows
        )
    );
}

/// A backtest as a table, printed by `backtest` and after `propose`'s consumers' verdicts.
pub fn print_backtest(
    ctx: &(impl Print + ?Sized),
    b: &crate::release::record::Backtest,
    dataset: &str,
) {
    if b.clauses.is_empty() {
        outln!(ctx, "backtest: no changed or added clause to replay");
        return;
    }
    outln!(
        ctx,
        "backtest on {} recorded release(s) of {dataset} validated since {}:",
        b.releases - b.without_profile,
        b.since
    );
    let rows = b.clauses.iter().map(|r| {
        vec![
            r.clause.clone(),
            r.evaluated.to_string(),
            r.would_fail.to_string(),
            if r.releases.is_empty() {
                "-".to_string()
            } else {
                r.releases.join(", ")
            },
        ]
    });
    outln!(
        ctx,
        "{}",
        table(
            ctx,
            &[
                key("clause"),
                key("evaluated"),
                key("would fail"),
                key("releases")
            ],
            rows
        )
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: [Col; 3] = [key("clause"), text("rationale"), key("verdict")];

    fn rows() -> Vec<Vec<String>> {
        vec![vec![
            "crs".to_string(),
            "a long rationale that does not fit".to_string(),
            "breaking".to_string(),
        ]]
    }

    fn widest(t: &str) -> usize {
        t.lines().map(text_width).max().unwrap_or(0)
    }

    #[test]
    fn free_text_gives_way_with_an_ellipsis_and_keys_stay_whole() {
        let t = fit_table(&COLS, rows(), 40, false);
        // Natural widths 6, 34 and 8 need 56 columns loose, 52 tight (two spaces between
        // cells): 40 takes 12 from the rationale, the only free text.
        assert!(widest(&t) <= 40, "{t}");
        assert!(t.contains(" a long rationale that…  "), "{t}");
        assert!(t.contains("crs ") && t.contains("breaking"), "{t}");
        let whole = fit_table(&COLS, rows(), 200, false);
        assert!(
            whole.contains(" a long rationale that does not fit "),
            "{whole}"
        );
    }

    #[test]
    fn nothing_is_shortened_when_there_is_no_limit() {
        let long = "x".repeat(500);
        let t = fit_table(
            &[key("clause"), text("rationale"), whole("finding")],
            [vec![long.clone(), long.clone(), long.clone()]],
            UNLIMITED,
            false,
        );
        assert_eq!(t.lines().count(), 2, "one header line, one row");
        assert_eq!(t.matches(long.as_str()).count(), 3);
        assert!(!t.contains('…'));
    }

    #[test]
    fn a_finding_wraps_instead_of_being_cut() {
        let finding = "consumer `tlc-routing` reads dataset `road`, which the store does not have";
        let t = fit_table(
            &[key("file"), whole("finding")],
            [vec!["consumers.toml".to_string(), finding.to_string()]],
            50,
            false,
        );
        assert!(widest(&t) <= 50, "{t}");
        assert!(!t.contains('…'), "{t}");
        let words: Vec<&str> = t.split_whitespace().collect();
        let joined = words.join(" ");
        assert!(joined.contains(finding), "{t}");
    }

    #[test]
    fn headers_wrap_at_their_spaces_before_anything_gives_way() {
        let cols = [key("dataset"), key("days left"), key("still on")];
        let t = fit_table(&cols, [vec!["roads", "9", "1"]], 22, false);
        assert!(widest(&t) <= 22, "{t}");
        assert!(t.starts_with("dataset  days  still\n"), "{t:?}");
        assert!(t.contains("roads    9     1"), "{t:?}");
    }

    #[test]
    fn identifiers_too_wide_for_one_line_become_one_block_per_row() {
        let cols = [key("dataset"), key("version"), key("sunset")];
        let row = vec![
            "us-states-boundaries-2020".to_string(),
            "12.0.0".to_string(),
            "2027-05-01".to_string(),
        ];
        let t = fit_table(&cols, [row.clone(), row], 40, false);
        assert!(widest(&t) <= 40, "{t}");
        assert_eq!(t.matches(" us-states-boundaries-2020 ").count(), 2, "{t}");
        assert!(t.contains(" version   12.0.0"), "{t}");
        assert!(t.contains("\n\n"), "a blank line between blocks: {t}");
    }

    #[test]
    fn colour_wraps_only_verdict_cells_and_keeps_the_columns() {
        let cols = [key("clause"), key("verdict")];
        let row = || vec![Cell::plain("crs"), Cell::of(Verdict::Breaking)];
        let t = fit_table(&cols, [row()], 80, true);
        assert!(t.contains("\u{1b}[31mbreaking\u{1b}[0m"), "{t:?}");
        // The header is never coloured, and the padding is outside the colour.
        assert!(t.starts_with(" clause   verdict  "), "{t:?}");
        let plain = fit_table(&cols, [row()], 80, false);
        assert_eq!(console::strip_ansi_codes(&t), plain);
    }

    /// Colour marks what a value is, not what it reads: a rationale that says "breaking" is
    /// text, the verdict beside it is a verdict.
    #[test]
    fn a_cell_reading_breaking_is_coloured_only_when_it_is_a_verdict() {
        let cols = [key("clause"), text("rationale"), key("verdict")];
        let rows = [
            vec![
                Cell::plain("crs"),
                Cell::plain("breaking"),
                Cell::of(Verdict::Breaking),
            ],
            vec![
                Cell::plain("fail"),
                Cell::plain("FAIL"),
                Cell::of(Verdict::Compatible),
            ],
        ];
        let red = "\u{1b}[31mbreaking\u{1b}[0m";
        for max in [80, 30] {
            // 30 columns is too narrow for the grid: the rows become blocks.
            let t = fit_table(&cols, rows.clone(), max, true);
            assert_eq!(t.matches("breaking").count(), 2, "{t:?}");
            assert_eq!(t.matches(red).count(), 1, "{t:?}");
            let verdict_line = t.lines().find(|l| l.contains(red)).unwrap();
            assert!(!verdict_line.contains("rationale"), "{t:?}");
            assert!(t.contains("\u{1b}[32mcompatible\u{1b}[0m"), "{t:?}");
            // Nothing else is painted: two coloured cells, two resets.
            assert_eq!(t.matches("\u{1b}[0m").count(), 2, "{t:?}");
        }
        // A plain string is plain, whatever it says.
        let t = fit_table(&cols, [vec!["crs", "breaking", "breaking"]], 80, true);
        assert!(!t.contains('\u{1b}'), "{t:?}");
    }

    #[test]
    fn each_typed_value_has_its_tone() {
        assert_eq!(Cell::of(ValidationStatus::Fail).tone(), Some(Tone::Bad));
        assert_eq!(Cell::of(ValidationStatus::Pass).tone(), Some(Tone::Good));
        assert_eq!(
            Cell::of(ValidationStatus::NotEvaluated).tone(),
            Some(Tone::Muted)
        );
        assert_eq!(Cell::of(Standing::StillOn).tone(), Some(Tone::Bad));
        assert_eq!(Cell::of(Standing::Current).tone(), Some(Tone::Good));
        assert_eq!(Cell::of(Standing::Silent).tone(), Some(Tone::Warn));
        assert_eq!(Cell::of(ConsumerVerdict::Breaks).tone(), Some(Tone::Bad));
        assert_eq!(WaiverState::Expired.tone(), Some(Tone::Muted));
        assert_eq!(line_state("retired").tone(), Some(Tone::Muted));
        assert_eq!(notice_status("failed").tone(), Some(Tone::Bad));
        assert_eq!(clause_status("advisory").tone(), Some(Tone::Warn));
        assert_eq!(clause_status("enforced").tone(), None);
        assert_eq!(Cell::from("breaking".to_string()).tone(), None);
    }

    /// Every line printed goes through the printer: `--quiet` and a closed pipe are handled
    /// in one place only if no other file prints on its own.
    #[test]
    fn nothing_in_src_prints_outside_the_printer() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let files = crate::source_files();
        assert!(
            files.len() > 50,
            "the walk finds the sources: {}",
            files.len()
        );
        let printer = src.join("cli").join("output.rs");
        let macros = ["println!", "eprintln!", "print!", "eprint!", "dbg!"];
        let mut found = Vec::new();
        for f in files.iter().filter(|f| **f != printer) {
            let text = std::fs::read_to_string(f).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for m in macros {
                    // `print!` must not match inside `eprint!` or `sprint!`.
                    let hit = code.match_indices(m).any(|(i, _)| {
                        !code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                    });
                    if hit {
                        found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "print through the printer:\n{}",
            found.join("\n")
        );
    }
}
