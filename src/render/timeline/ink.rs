//! The picture's inks: the colours every part of the timeline draws with, and its one way of
//! writing text. The lanes and the frame both draw with them, so they sit below both.

use std::fmt::Write as _;

use super::scale::n;
use crate::render::escape;

pub(super) const PASS: &str = "#1a7f37";
pub(super) const FAIL: &str = "#cf222e";
pub(super) const INK: &str = "#1f2328";
pub(super) const MUTED: &str = "#59636e";
pub(super) const WAIVER: &str = "#9a6700";
pub(super) const TOLD: &str = "#1f2328";
/// Lane colours, by line in order; they repeat after four lines.
const PALETTE: [&str; 4] = ["#0969da", "#bc4c00", "#1a7f37", "#8250df"];

pub(super) fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A `<text>` at (`x`, `y`) with `attrs` (its size, colour, anchor) and `text`, escaped.
pub(super) fn svg_text(body: &mut String, x: f64, y: f64, attrs: &str, text: &str) {
    let _ = writeln!(
        body,
        r#"<text x="{}" y="{}" {attrs}>{}</text>"#,
        n(x),
        n(y),
        escape(text)
    );
}
