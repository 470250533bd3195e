//! Rendering and the one output path: text tables for people and JSON for scripts go to
//! stdout (`outln!`, `out!`); talk goes to stderr (`talkln!`). No command prints any other way.
//!
//! Tables fit the terminal: when a table is wider than `COLUMNS` (or the terminal), its
//! widest free-text columns give way first and long values end in an ellipsis; identifiers,
//! dates, versions and verdicts (cells without a space) are never cut. Into a pipe or a file
//! nothing is shortened, and a finding or an error is never cut anywhere. JSON always keeps
//! every value whole. Verdicts and results are coloured
//! when colour is on (`--color`, `NO_COLOR`).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::model::Change;
use crate::render::delta::delta;

/// The width of a table that must never be shortened: into a pipe, or a finding.
pub const UNLIMITED: usize = usize::MAX;

static COLOUR: AtomicBool = AtomicBool::new(false);

/// Colour verdicts and results in tables from now on.
pub fn set_colour(on: bool) {
    COLOUR.store(on, Ordering::Relaxed);
}

pub fn colour() -> bool {
    COLOUR.load(Ordering::Relaxed)
}

/// The width tables must fit in: `COLUMNS`, else the terminal's width, else (a pipe or a
/// file) [`UNLIMITED`]: what a script reads is never cut.
pub fn width() -> usize {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        return n;
    }
    console::Term::stdout()
        .size_checked()
        .map_or(UNLIMITED, |(_, cols)| usize::from(cols))
}

/// The ANSI colour of a cell whose whole text is a verdict or a result.
fn style_of(text: &str) -> Option<&'static str> {
    Some(match text {
        "compatible" | "pass" | "passed" | "accepted" | "live" | "current" | "migrated"
        | "sent" | "ok" | "unaffected" => "32",
        "breaking"
        | "FAIL"
        | "fail"
        | "failed"
        | "REFUSED"
        | "still-on"
        | "unknown"
        | "error"
        | "breaks"
        | "breaks (uses everything)" => "31",
        "advisory-fail" | "advisory" | "silent" | "upcoming" | "planned" | "warning" | "stale"
        | "unsubscribed" => "33",
        "not-evaluated" | "retired" => "2",
        _ => return None,
    })
}

fn text_width(s: &str) -> usize {
    console::measure_text_width(s)
}

/// A plain table with a header row, fitted to [`width`].
pub fn table<I, R>(headers: &[&str], rows: I) -> String
where
    I: IntoIterator<Item = R>,
    R: IntoIterator<Item = String>,
{
    fit_table(headers, rows, width(), colour())
}

/// A table fitted to `max` columns: each cell is padded by one space on each side and cells
/// are separated by one space; the widest columns shrink first, never below their header's
/// width; a shortened value ends in `…`.
pub fn fit_table<I, R>(headers: &[&str], rows: I, max: usize, colour: bool) -> String
where
    I: IntoIterator<Item = R>,
    R: IntoIterator<Item = String>,
{
    let mut grid: Vec<Vec<String>> = vec![headers.iter().map(|h| h.to_string()).collect()];
    for r in rows {
        // One line per cell: a newline would break the columns.
        grid.push(
            r.into_iter()
                .map(|c| c.replace(['\n', '\r'], " "))
                .collect(),
        );
    }
    let cols = grid.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths: Vec<usize> = (0..cols)
        .map(|i| {
            grid.iter()
                .filter_map(|r| r.get(i))
                .map(|c| text_width(c))
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Only free text gives way: a column none of whose cells holds a space is identifiers,
    // dates, versions or verdicts, which a shortened cell would make wrong, not just short.
    let floor: Vec<usize> = (0..cols)
        .map(|i| {
            let free_text = grid
                .iter()
                .skip(1)
                .filter_map(|r| r.get(i))
                .any(|c| c.contains(' '));
            let header = headers.get(i).map_or(0, |h| text_width(h));
            if free_text {
                widths[i].min(header.max(3))
            } else {
                widths[i]
            }
        })
        .collect();
    let total = |w: &[usize]| {
        w.iter()
            .map(|x| x.saturating_add(2))
            .fold(0usize, usize::saturating_add)
            .saturating_add(w.len().saturating_sub(1))
    };
    while total(&widths) > max {
        // Shrink the widest column that can still give way.
        let Some(i) = (0..cols)
            .filter(|&i| widths[i] > floor[i])
            .max_by_key(|&i| (widths[i], std::cmp::Reverse(i)))
        else {
            break;
        };
        widths[i] -= 1;
    }
    let mut out = String::new();
    for (n, row) in grid.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        for (i, w) in widths.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            let cell = row.get(i).map_or("", String::as_str);
            let shown = if text_width(cell) > *w {
                console::truncate_str(cell, *w, "…").into_owned()
            } else {
                cell.to_string()
            };
            let pad = w - text_width(&shown).min(*w);
            out.push(' ');
            match style_of(cell).filter(|_| colour && n > 0) {
                Some(code) => out.push_str(&format!("\x1b[{code}m{shown}\x1b[0m")),
                None => out.push_str(&shown),
            }
            out.push_str(&" ".repeat(pad + 1));
        }
    }
    out
}

/// Print a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => emit(format_args!("{s}")),
        // Serialising our own report types cannot fail; say so loudly if it ever does.
        Err(e) => talk(format_args!("error: could not render JSON: {e}")),
    }
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
pub fn changes_table(changes: &[Change]) -> String {
    let rows = changes.iter().map(|c| {
        vec![
            c.clause.clone(),
            c.kind.to_string(),
            delta(c.old.as_ref(), c.new.as_ref()),
            c.direction.to_string(),
            c.verdict.to_string(),
        ]
    });
    table(&["clause", "kind", "change", "direction", "verdict"], rows)
}

/// Write data to stdout without adding a newline (a rendered JUnit report, a draft file).
pub fn emit_raw(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        stdout_failed(e);
    }
}

/// Write one line of talk to stderr: warnings, progress, what a run did. A stderr that is
/// gone (a closed pipe, a full disk) loses the talk but never stops the command or panics,
/// as `eprintln!` would.
pub fn talk(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() != std::io::ErrorKind::BrokenPipe {
        talk(format_args!("error: cannot write to stdout: {e}"));
    }
    std::process::exit(3);
}

/// Write one line of data to stdout. If the reader went away (a closed pipe) or stdout
/// fails, stop at once: nothing more can be delivered, and a panic would only add noise.
pub fn emit(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        stdout_failed(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Vec<String>> {
        vec![vec![
            "crs".to_string(),
            "a long rationale that does not fit".to_string(),
            "breaking".to_string(),
        ]]
    }

    #[test]
    fn the_widest_column_gives_way_with_an_ellipsis() {
        let t = fit_table(&["clause", "rationale", "verdict"], rows(), 40, false);
        // Natural widths 6, 34 and 8: (6+2) + (34+2) + (8+2) + 2 separators = 56 columns.
        // 40 takes 16 from the rationale, the widest: 18 columns, 17 characters and `…`.
        for line in t.lines() {
            assert_eq!(line.chars().count(), 40, "{line:?}");
        }
        assert!(t.contains(" a long rationale … "), "{t}");
        assert!(t.contains(" breaking "), "{t}");
        let whole = fit_table(&["clause", "rationale", "verdict"], rows(), 200, false);
        assert!(
            whole.contains("a long rationale that does not fit"),
            "{whole}"
        );
    }

    #[test]
    fn colour_wraps_only_verdict_cells_and_keeps_the_columns() {
        let t = fit_table(
            &["clause", "verdict"],
            [vec!["crs".into(), "breaking".into()]],
            80,
            true,
        );
        assert!(t.contains("\u{1b}[31mbreaking\u{1b}[0m"), "{t:?}");
        // The header is never coloured, and the padding is outside the colour.
        assert!(t.starts_with(" clause   verdict  "), "{t:?}");
        let plain = fit_table(
            &["clause", "verdict"],
            [vec!["crs".into(), "breaking".into()]],
            80,
            false,
        );
        assert_eq!(console::strip_ansi_codes(&t), plain);
    }
}
