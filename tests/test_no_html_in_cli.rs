//! No HTML is built in `src/cli/` (issue 40): markup lives in the templates under
//! `templates/site/`, rendered from a view model by `render::html`, where every value is
//! escaped. HTML pieced together with `format!` or `push_str` in a command is where a value
//! goes out unescaped, and where a page's markup gets spread over Rust code.
//!
//! The rule: the string literals of every `.rs` file under `src/cli/` (normal, byte and raw
//! strings; comments, doc comments and char literals are not literals and are skipped) may
//! not hold an HTML tag, which is any of
//! - a closing tag, `</name>`, of any name;
//! - an opening tag with an attribute, `<name attr=`, of any name;
//! - an HTML element's name (from the list in [`ELEMENTS`]) in a tag: `<td>`, `<td `, `<br/>`,
//!   or at the very end of the literal (`"<td"`, continued by a format argument);
//! - a doctype or an HTML comment: `<!DOCTYPE`, `<!--`.
//!
//! A placeholder of help text, such as `<dataset>` or `<command>`, is none of these: it is not
//! an element's name, has no attribute and closes nothing.

use std::path::{Path, PathBuf};

/// The HTML elements (the WHATWG list, less the obsolete ones). A placeholder that happens to
/// be one of these (`<time>`, `<data>`) has to be spelt otherwise in a literal of `src/cli/`.
const ELEMENTS: &[&str] = &[
    "a",
    "abbr",
    "address",
    "area",
    "article",
    "aside",
    "audio",
    "b",
    "base",
    "bdi",
    "bdo",
    "blockquote",
    "body",
    "br",
    "button",
    "canvas",
    "caption",
    "cite",
    "code",
    "col",
    "colgroup",
    "data",
    "datalist",
    "dd",
    "del",
    "details",
    "dfn",
    "dialog",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "hr",
    "html",
    "i",
    "iframe",
    "img",
    "input",
    "ins",
    "kbd",
    "label",
    "legend",
    "li",
    "link",
    "main",
    "map",
    "mark",
    "menu",
    "meta",
    "meter",
    "nav",
    "noscript",
    "object",
    "ol",
    "optgroup",
    "option",
    "output",
    "p",
    "param",
    "picture",
    "pre",
    "progress",
    "q",
    "rp",
    "rt",
    "ruby",
    "s",
    "samp",
    "script",
    "search",
    "section",
    "select",
    "slot",
    "small",
    "source",
    "span",
    "strong",
    "style",
    "sub",
    "summary",
    "sup",
    "svg",
    "table",
    "tbody",
    "td",
    "template",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "time",
    "title",
    "tr",
    "track",
    "u",
    "ul",
    "var",
    "video",
    "wbr",
];

/// The string literals of Rust source `text`, each with the line it starts on (from 1).
fn literals(text: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    // Counts the newlines of `chars[from..to]` into `line`.
    let advance = |line: &mut usize, from: usize, to: usize| {
        *line += chars[from..to].iter().filter(|&&c| c == '\n').count();
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest in Rust.
            let (start, mut depth) = (i, 0);
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            advance(&mut line, start, i);
        } else if c == '\'' {
            // A char literal (`'"'`, `'\''`, `'\u{1b}'`) or a lifetime (`'a`), which has no
            // closing quote.
            if next == Some('\\') {
                // The escaped character (maybe a quote) is skipped before the closing one.
                let end = (i + 3..chars.len())
                    .find(|&j| chars[j] == '\'')
                    .unwrap_or(i + 1);
                i = end + 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if let Some(hashes) = (c == 'r' && raw_prefix(&chars, i))
            .then(|| raw_opening(&chars, i + 1))
            .flatten()
        {
            let start = i + 2 + hashes;
            let closing: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let end = (start..chars.len())
                .find(|&j| chars[j..].starts_with(&closing))
                .unwrap_or(chars.len());
            out.push((line, chars[start..end].iter().collect()));
            advance(&mut line, i, end);
            i = end + closing.len();
        } else if c == '"' {
            let start = i + 1;
            let mut j = start;
            let mut content = String::new();
            while j < chars.len() && chars[j] != '"' {
                if chars[j] == '\\' {
                    // An escaped quote or backslash stays in; `\` + newline (a continued
                    // line) drops the newline and the next line's indentation, as rustc does.
                    match chars.get(j + 1) {
                        Some('\n') => {
                            j += 2;
                            while j < chars.len() && chars[j].is_whitespace() {
                                j += 1;
                            }
                            continue;
                        }
                        Some(&e) => content.push(e),
                        None => {}
                    }
                    j += 2;
                } else {
                    content.push(chars[j]);
                    j += 1;
                }
            }
            out.push((line, content));
            advance(&mut line, i, j.min(chars.len()));
            i = j + 1;
        } else {
            if c == '\n' {
                line += 1;
            }
            i += 1;
        }
    }
    out
}

/// Whether the `r` at `i` can open a raw string: it starts a token, alone or after a lone `b`
/// (`br"…"`), and is not the end of a name such as `for` or `bar`.
fn raw_prefix(chars: &[char], i: usize) -> bool {
    let ident = |j: usize| chars[j].is_alphanumeric() || chars[j] == '_';
    match i {
        0 => true,
        1 => !ident(0) || chars[0] == 'b',
        _ => !ident(i - 1) || (chars[i - 1] == 'b' && !ident(i - 2)),
    }
}

/// The number of `#` of a raw string opening at `chars[at..]` (`"`, `#"`, `##"` …), if it is one.
fn raw_opening(chars: &[char], at: usize) -> Option<usize> {
    let hashes = chars[at..].iter().take_while(|&&c| c == '#').count();
    (chars.get(at + hashes) == Some(&'"')).then_some(hashes)
}

/// The first HTML tag in `s` by the rule of this file, if any.
fn html_tag(s: &str) -> Option<String> {
    // ASCII lowercase keeps every byte where it was, so an index into one is one into both.
    let lower = s.to_ascii_lowercase();
    if let Some(i) = lower.find("<!doctype").or_else(|| lower.find("<!--")) {
        return Some(s[i..].chars().take(12).collect());
    }
    for (i, _) in lower.match_indices('<') {
        let rest = &lower[i + 1..];
        let closing = rest.starts_with('/');
        let name: String = rest
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let after = &rest[usize::from(closing) + name.len()..];
        // The tag as written, to its `>` (or 40 characters).
        let tag = || {
            let t: String = s[i..].chars().take(40).collect();
            t.find('>').map_or(t.clone(), |end| t[..=end].to_string())
        };
        if closing && after.starts_with('>') {
            return Some(tag());
        }
        if closing {
            continue;
        }
        // `<name attr=`: an attribute, whatever the name.
        let attribute = after.starts_with(' ') && {
            let a = after.trim_start();
            let key: String = a
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            !key.is_empty() && a[key.len()..].starts_with('=')
        };
        let element = ELEMENTS.contains(&name.as_str())
            && (after.is_empty()
                || after.starts_with([' ', '>', '\n', '\t'])
                || after.starts_with("/>"));
        if attribute || element {
            return Some(tag());
        }
    }
    None
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// `file:line: tag` for every literal of `text` holding an HTML tag.
fn findings(file: &str, text: &str) -> Vec<String> {
    literals(text)
        .into_iter()
        .filter_map(|(line, s)| html_tag(&s).map(|t| format!("{file}:{line}: {t:?} in {s:?}")))
        .collect()
}

#[test]
fn no_literal_in_src_cli_holds_an_html_tag() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = rust_files(&root.join("src/cli"));
    assert!(files.len() > 20, "src/cli/ was not read: {files:?}");
    let found: Vec<String> = files
        .iter()
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).expect("a source file");
            let name = p.strip_prefix(root).unwrap_or(p).display().to_string();
            findings(&name, &text)
        })
        .collect();
    assert!(
        found.is_empty(),
        "HTML built in src/cli/ (put it in a template under templates/site/ and hand the \
         template a view model):\n{}",
        found.join("\n")
    );
}

/// The guard can fail: the ways HTML was built in the site command before the templates, and
/// the near misses it must let through.
#[test]
fn the_guard_finds_html_in_literals_and_only_there() {
    let sample = r####"fn page(d: &str) -> String {
    let mut s = String::new();
    s += &format!("<h1>{}</h1>\n", escape(d));
    s += "<h2 id=\"lines\">Lines</h2>\n";
    let cell = format!("<td class=\"{}\">", c);
    let open = "<td";
    let link = r#"<a href="x">"#;
    let doc = b"<!DOCTYPE html>";
    let more = "a \
                <br/>";
    s
}
// "<td>" in a comment is not a literal.
/// A doc comment naming `<div>` neither.
fn fine(q: char) -> &'static str {
    let _ = ('"', '\'', '<');
    let _: Vec<Option<String>> = Vec::new();
    "usage: contracts <command> <dataset> [<line>] a < b, c > d, 1<2"
}
"####;
    let found = findings("sample.rs", sample);
    let lines: Vec<&str> = found
        .iter()
        .map(|f| f.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "sample.rs:3",
            "sample.rs:4",
            "sample.rs:5",
            "sample.rs:6",
            "sample.rs:7",
            "sample.rs:8",
            "sample.rs:9",
        ],
        "{found:#?}"
    );
    assert!(found[0].contains("\"<h1>\""), "{found:#?}");
    assert!(found[1].contains("<h2 "), "{found:#?}");
}
