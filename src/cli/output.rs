//! Rendering: text tables for people, JSON for scripts. Both go to stdout; talk goes to stderr.

use tabled::builder::Builder;

use crate::model::Change;
use tabled::settings::Style;

/// A plain table with a header row.
pub fn table<I, R>(headers: &[&str], rows: I) -> String
where
    I: IntoIterator<Item = R>,
    R: IntoIterator<Item = String>,
{
    let mut b = Builder::default();
    b.push_record(headers.iter().map(|h| h.to_string()));
    for r in rows {
        b.push_record(r);
    }
    let mut t = b.build();
    t.with(Style::blank());
    t.to_string()
}

/// Print a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => emit(format_args!("{s}")),
        // Serialising our own report types cannot fail; say so loudly if it ever does.
        Err(e) => eprintln!("error: could not render JSON: {e}"),
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

/// The per-clause change table of `diff` and `propose`.
pub fn changes_table(changes: &[Change]) -> String {
    let rows = changes.iter().map(|c| {
        vec![
            c.clause.clone(),
            c.kind.to_string(),
            cell(c.old.as_ref()),
            cell(c.new.as_ref()),
            c.direction.to_string(),
            c.verdict.to_string(),
        ]
    });
    table(
        &["clause", "kind", "old", "new", "direction", "verdict"],
        rows,
    )
}

/// Write one line of data to stdout. If the reader went away (a closed pipe) or stdout
/// fails, stop at once: nothing more can be delivered, and a panic would only add noise.
pub fn emit(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write to stdout: {e}");
        }
        std::process::exit(3);
    }
}
