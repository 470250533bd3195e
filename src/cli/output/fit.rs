//! Fitting a table to the terminal (see the paragraph of the `output` module for the order
//! in which columns give way), and colouring its cells by tone.

use tabled::settings::object::Columns;
use tabled::settings::{Padding, Style, Width};

use super::cells::{Cell, Col, Role};

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
    // Per column, the widest of its cells by `measure`.
    let widest = |measure: fn(&str) -> usize| -> Vec<usize> {
        (0..cols.len())
            .map(|i| grid.iter().map(|r| measure(&r[i].text)).max().unwrap_or(0))
            .collect()
    };
    let values = widest(text_width);
    let paint = |cell: &Cell| match cell.tone.filter(|_| colour) {
        Some(tone) => format!("\x1b[{}m{}\x1b[0m", tone.ansi(), cell.text),
        None => cell.text.clone(),
    };
    let words = widest(longest_word);
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
            without_trailing_spaces(&t.to_string())
        }
        Layout::Blocks => without_trailing_spaces(&blocks(cols, &grid, max, paint)),
    }
}

/// `table` with the padding at the end of each line taken off: the last cell of a row is
/// padded to its column's width like any other, which leaves spaces nobody sees but every
/// editor, diff and copied example does. The padding is outside any colour, so this never
/// eats into a coloured cell.
fn without_trailing_spaces(table: &str) -> String {
    table
        .lines()
        .map(|l| l.trim_end_matches(' '))
        .collect::<Vec<_>>()
        .join("\n")
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

#[cfg(test)]
mod tests {
    use super::super::{key, text, whole, UNLIMITED};
    use super::*;
    use crate::model::Verdict;

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
        // The value ends its line: no padding after it.
        assert_eq!(t.matches(" us-states-boundaries-2020\n").count(), 2, "{t}");
        assert!(t.contains(" version   12.0.0"), "{t}");
        assert!(t.contains("\n\n"), "a blank line between blocks: {t}");
    }

    #[test]
    fn colour_wraps_only_verdict_cells_and_keeps_the_columns() {
        let cols = [key("clause"), key("verdict")];
        let row = || vec![Cell::plain("crs"), Cell::of(Verdict::Breaking)];
        let t = fit_table(&cols, [row()], 80, true);
        assert!(t.contains("\u{1b}[31mbreaking\u{1b}[0m"), "{t:?}");
        // The header is never coloured, and the padding (none at the end of a line) is
        // outside the colour.
        assert!(
            t.starts_with(" clause   verdict\n crs      \u{1b}[31m"),
            "{t:?}"
        );
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
}
