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

mod cells;
mod fit;
mod notes;
mod reports;

pub use cells::{
    clause_status, key, line_state, notice_status, text, whole, Cell, Col, Tone, Toned,
};
pub use fit::fit_table;
pub use notes::{unknown_versions, Said};
pub use reports::{
    cell, changes_table, last_read, print_attribute_uses, print_backtest, print_verdicts,
};

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

    /// Write one line of data to stdout. If the reader went away (a closed pipe), the rest of
    /// the data is dropped without a word and the command goes on to its own end and exit
    /// code, so `contracts log | head` exits the same way whenever `head` leaves. If stdout
    /// fails otherwise (a full disk), stop at once with exit 3.
    pub fn out(&self, args: std::fmt::Arguments) {
        use std::io::Write;
        if stdout_gone() {
            return;
        }
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
            self.stdout_failed(e);
        }
    }

    /// Write data to stdout with no newline added (a rendered JUnit report, a draft file).
    pub fn out_raw(&self, args: std::fmt::Arguments) {
        use std::io::Write;
        if stdout_gone() {
            return;
        }
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

    fn stdout_failed(&self, e: std::io::Error) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STDOUT_GONE.store(true, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        self.error(format_args!("error: cannot write to stdout: {e}"));
        std::process::exit(3);
    }
}

/// Set when a write to stdout found its reader gone. A reader that left early is not a
/// failure (ripgrep's rule): exiting then with an error, or at once with 0, would make the
/// exit code depend on when `head` closed the pipe, and `set -o pipefail` would fail at random.
static STDOUT_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn stdout_gone() -> bool {
    STDOUT_GONE.load(std::sync::atomic::Ordering::Relaxed)
}

/// What holds this run's [`Printer`]: the printer itself and a command's context (whose
/// `impl` is in `context.rs`, above this file), so that `outln!(ctx, ...)` reads the same in
/// `run` and in the helpers it calls.
pub trait Print {
    fn printer(&self) -> &Printer;
}

impl Print for Printer {
    fn printer(&self) -> &Printer {
        self
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

/// Print a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(p: &(impl Print + ?Sized), value: &T) {
    p.printer().json(value);
}

/// A plain table with a header row on stdout, fitted and coloured as `p`'s printer says.
pub fn print_table<I, R, C>(p: &(impl Print + ?Sized), cols: &[Col], rows: I)
where
    I: IntoIterator<Item = R>,
    R: IntoIterator<Item = C>,
    C: Into<Cell>,
{
    outln!(p, "{}", table(p, cols, rows));
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

#[cfg(test)]
mod tests {
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
        // The printer's own file (which also names the macros, here) is the one exemption;
        // the rest of `output/` (cells, fitting, the shared tables) is held to the rule.
        let printer = src.join("cli").join("output").join("mod.rs");
        assert!(
            printer.is_file(),
            "the printer lives at {}",
            printer.display()
        );
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
