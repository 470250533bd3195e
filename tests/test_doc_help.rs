//! Every `contracts … --help` pasted in a command page is what the binary prints (issue 44,
//! section 2). A ```text block whose first line is `$ contracts … --help` is a help block; the
//! rest of the block must equal the binary's stdout for those arguments, into a pipe and with a
//! cleared environment (so no `COLUMNS`). `UPDATE_DOCS=1 cargo test --test runner -- test_doc_help`
//! rewrites the blocks instead.

use crate::common::docs;

/// A help block: its page, the line of its command, the arguments, the lines it shows.
struct Help {
    page: String,
    open: usize,
    len: usize,
    args: Vec<String>,
    shown: String,
}

fn help_blocks(page: &str) -> Vec<Help> {
    let text = std::fs::read_to_string(docs::root().join(page)).expect("the page");
    docs::fences(&text, "text")
        .into_iter()
        .filter_map(|f| {
            let first = f.lines.first()?;
            let cmd = first.strip_prefix("$ contracts ")?;
            let args: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
            if !matches!(args.last().map(String::as_str), Some("--help" | "-h")) {
                return None;
            }
            let mut shown = f.lines[1..].join("\n");
            shown.push('\n');
            Some(Help {
                page: page.to_string(),
                open: f.open,
                len: f.lines.len(),
                args,
                shown,
            })
        })
        .collect()
}

#[test]
fn every_pasted_help_is_what_the_binary_prints() {
    let mut wrong = Vec::new();
    let mut edits: std::collections::BTreeMap<String, Vec<(usize, usize, String)>> =
        Default::default();
    let mut count = 0;
    for page in docs::pages() {
        for h in help_blocks(&page) {
            count += 1;
            let out = docs::example_command(&h.args)
                .output()
                .expect("binary runs");
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}: `contracts {}` failed: {}",
                h.page,
                h.args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
            let actual = String::from_utf8(out.stdout).expect("UTF-8 help");
            let name = format!("{}:{} contracts {}", h.page, h.open + 2, h.args.join(" "));
            if let Some(diff) = docs::difference(&name, &h.shown, &actual) {
                wrong.push(diff);
                // The block's lines after the command: open + 2 ..= open + len.
                edits.entry(h.page.clone()).or_default().push((
                    h.open + 2,
                    h.open + 1 + h.len,
                    actual,
                ));
            }
        }
    }
    assert!(
        count >= 22,
        "only {count} help blocks found: is the parser broken?"
    );
    docs::rewrite_or_fail(edits, &wrong, "help block(s)");
}

#[test]
fn every_command_page_pastes_its_help() {
    let dir = docs::root().join("docs/src/commands");
    let mut missing = Vec::new();
    for e in std::fs::read_dir(&dir).expect("docs/src/commands") {
        let name = e.expect("entry").file_name().to_string_lossy().into_owned();
        if name == "index.md" || !name.ends_with(".md") {
            continue;
        }
        if help_blocks(&format!("docs/src/commands/{name}")).is_empty() {
            missing.push(name);
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "command pages without a `$ contracts … --help` block: {missing:?}"
    );
}
