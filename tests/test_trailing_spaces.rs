//! No line of a text table ends in whitespace (issue 44, item 10): not into a pipe, not on a
//! terminal of any width, with or without colour. Trailing spaces make every copied table dirty
//! in an editor and in a diff, and a doc example that shows them cannot be checked by eye.

use crate::common::world::World;

/// The lines of `text` that end in a space or a tab, numbered from 1.
fn trailing(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.ends_with([' ', '\t']))
        .map(|(i, l)| (i + 1, format!("{l:?}")))
        .collect()
}

/// The commands that print a table on the fixture world (roads, four consumers, a window).
fn tables() -> Vec<Vec<&'static str>> {
    vec![
        vec!["status"],
        vec!["status", "--all"],
        vec!["log"],
        vec!["log", "roads"],
        vec!["diff", "roads@1.1.0", "roads@2.0.0"],
        vec!["consumers", "roads"],
        vec!["can-retire", "roads", "1"],
        vec!["show", "roads@2.0.0"],
        vec!["check"],
    ]
}

#[test]
fn no_table_line_ends_in_a_space_in_a_pipe() {
    let w = World::new(25);
    for args in tables() {
        for colour in ["never", "always"] {
            let mut full = vec!["--color", colour];
            full.extend(&args);
            let run = w.run("2026-11-29", &full);
            let out = run.stdout();
            assert!(
                out.lines().count() > 1,
                "{full:?} printed no table:\n{out}{}",
                run.stderr()
            );
            let bad = trailing(&out);
            assert!(
                bad.is_empty(),
                "{full:?} ends {} line(s) in whitespace: {bad:?}\n{out}",
                bad.len()
            );
        }
    }
}

#[test]
fn no_table_line_ends_in_a_space_on_a_terminal() {
    let w = World::new(25);
    // 200 columns: the loose layout; 60: tight or cut; 30: a row per block.
    for cols in [200, 60, 30] {
        for args in tables() {
            let out = w.run_pty("2026-11-29", &args, cols);
            assert!(out.lines().count() > 1, "{args:?} at {cols}:\n{out}");
            let bad = trailing(&out);
            assert!(
                bad.is_empty(),
                "{args:?} at {cols} columns ends {} line(s) in whitespace: {bad:?}\n{out}",
                bad.len()
            );
        }
    }
}
