//! Pictures and pages: the timeline SVG and the static HTML registry. Pure: plain values in,
//! text out, byte for byte the same for the same input (the tests snapshot them), no script.

pub mod ci;
pub mod ci_findings;
pub mod delta;
pub mod html;
pub mod odcs;
pub mod timeline;

/// Escape text for XML and HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
