//! The static registry's pages (`contracts site`): plain HTML5 with one inline style sheet, no
//! script, no font, image or style from anywhere else, so a page works from any file server,
//! from a CI artefact, or opened straight from disk. Pure: the site command gathers the facts
//! and hands them over as rows of text.

use std::fmt::Write as _;

use super::escape;

/// A dataset's page, relative to the registry's root (and so to `[notify] registry_url`).
pub fn dataset_page(dataset: &str) -> String {
    format!("{dataset}.html")
}

/// The style sheet every page carries inline.
const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:0;color:#1f2328;background:#fff;line-height:1.45}
header{background:#f6f8fa;border-bottom:1px solid #d1d9e0;padding:14px 28px}
header a{color:#0969da;text-decoration:none;font-weight:600}
main{padding:8px 28px 40px;max-width:1240px}
h1{font-size:26px;margin:16px 0 4px}
h2{font-size:19px;margin:30px 0 8px;border-bottom:1px solid #d1d9e0;padding-bottom:4px}
h3{font-size:16px;margin:20px 0 6px}
p.lead{color:#59636e;margin:0 0 12px}
table{border-collapse:collapse;margin:6px 0 14px;font-size:14px}
th,td{border:1px solid #d1d9e0;padding:4px 9px;text-align:left;vertical-align:top}
th{background:#f6f8fa}
td.num{text-align:right;font-variant-numeric:tabular-nums}
code,td.value{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:13px}
td.value{white-space:pre-wrap;word-break:break-word;max-width:640px}
.pass,.compatible,.live,.current,.migrated{color:#1a7f37;font-weight:600}
.fail,.breaking,.still-on,.unknown{color:#cf222e;font-weight:600}
.advisory,.upcoming,.silent,.advisory-fail{color:#9a6700;font-weight:600}
.retired,.not-evaluated{color:#59636e}
figure{margin:8px 0;overflow-x:auto}
figure svg{max-width:100%;height:auto;border:1px solid #d1d9e0}
footer{color:#59636e;font-size:12px;padding:0 28px 24px}
";

/// A table cell: text, with an optional class (for colour or alignment).
pub struct Cell {
    pub text: String,
    pub class: Option<String>,
    /// A link target, relative to the page.
    pub href: Option<String>,
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            class: None,
            href: None,
        }
    }
    pub fn class(s: impl Into<String>, class: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            class: Some(class.into()),
            href: None,
        }
    }
    pub fn link(s: impl Into<String>, href: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            class: None,
            href: Some(href.into()),
        }
    }
}

/// A table with a header row; `empty` is said instead when there is no row.
pub fn table(headers: &[&str], rows: &[Vec<Cell>], empty: &str) -> String {
    if rows.is_empty() {
        return format!("<p class=\"lead\">{}</p>\n", escape(empty));
    }
    let mut s = String::from("<table>\n<thead><tr>");
    for h in headers {
        let _ = write!(s, "<th>{}</th>", escape(h));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            let text = match &c.href {
                Some(h) => format!("<a href=\"{}\">{}</a>", escape(h), escape(&c.text)),
                None => escape(&c.text),
            };
            match &c.class {
                Some(class) => {
                    let _ = write!(s, "<td class=\"{}\">{text}</td>", escape(class));
                }
                None => {
                    let _ = write!(s, "<td>{text}</td>");
                }
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody>\n</table>\n");
    s
}

/// A whole page around `body` (already HTML). `home` is the link back to the index, if any.
pub fn page(title: &str, home: Option<&str>, body: &str, footer: &str) -> String {
    let nav = match home {
        Some(h) => format!("<a href=\"{}\">Data contracts registry</a>", escape(h)),
        None => "<a href=\"index.html\">Data contracts registry</a>".to_string(),
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>\n{STYLE}</style>\n</head>\n\
         <body>\n<header>{nav}</header>\n<main>\n{body}</main>\n<footer>{}</footer>\n</body>\n</html>\n",
        escape(title),
        escape(footer)
    )
}
