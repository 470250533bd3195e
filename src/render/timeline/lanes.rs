//! The lanes: one per contract line, its bar and versions, the moves of its sunset, its
//! waivers, the releases validated against it and the notices told about it.
//!
//! The labels under a bar (each sunset move's and each waiver's) are laid out before anything
//! is drawn: each takes the first row under the bar where it overlaps no label placed before
//! it, and a lane with more rows is taller, so no label is ever drawn over another.

use std::fmt::Write as _;

use chrono::{Duration, NaiveDate};

use super::ink::{colour, svg_text, FAIL, INK, MUTED, PASS, TOLD, WAIVER};
use super::scale::{n, text_width, Scale, LANE, LEFT, RIGHT, WIDTH};
use super::{LineSpan, SunsetMark, Timeline, WaiverSpan};
use crate::render::escape;

/// How far apart the rows of labels under a bar are: more than the tallest label (10 px).
const ROW: f64 = 13.0;
/// The baseline of the first row of labels, below the top of the bar.
const FIRST_ROW: f64 = 40.0;
/// The least room between two labels on one row.
const GAP: f64 = 6.0;

/// A label under a bar, before it is given its row.
struct Label {
    x: f64,
    anchor: &'static str,
    size: f64,
    text: String,
}

impl Label {
    /// The label of something drawn from `xa` to `xb`: from its start, or ending at its end
    /// when it would run out of the picture.
    fn spanning(xa: f64, xb: f64, size: f64, text: String) -> Label {
        let (x, anchor) = if xa + text_width(&text, size) < WIDTH - 4.0 {
            (xa, "start")
        } else {
            (xb.max(xa), "end")
        };
        Label {
            x,
            anchor,
            size,
            text,
        }
    }

    /// From where to where the label runs, by the estimate of [`text_width`].
    fn span(&self) -> (f64, f64) {
        let w = text_width(&self.text, self.size);
        match self.anchor {
            "end" => (self.x - w, self.x),
            _ => (self.x, self.x + w),
        }
    }

    fn draw(&self, body: &mut String, y: f64, fill: &str) {
        svg_text(
            body,
            self.x,
            y,
            &format!(
                r#"font-size="{}" fill="{fill}" text-anchor="{}""#,
                n(self.size),
                self.anchor
            ),
            &self.text,
        );
    }
}

/// Where each lane's bar stands, the row of each label under it, and where the lanes end.
pub(super) struct Plan {
    lanes: Vec<LanePlan>,
    pub(super) bottom: f64,
}

/// One lane: the top of its bar, and the baseline of the label of each of its sunset moves
/// and waivers, in the order [`moves_of`] and [`waivers_of`] give them.
struct LanePlan {
    bar_y: f64,
    moves: Vec<f64>,
    waivers: Vec<f64>,
}

/// Lay the lanes out from `lanes_top` down, each as tall as its rows of labels need.
pub(super) fn plan(t: &Timeline, scale: &Scale, lanes_top: f64) -> Plan {
    let mut top = lanes_top;
    let mut lanes = Vec::with_capacity(t.lines.len());
    for l in &t.lines {
        let bar_y = top + 18.0;
        let mut labels: Vec<Label> = moves_of(t, l.major)
            .map(|(m, from)| move_label(m, from, scale))
            .collect();
        let moves = labels.len();
        labels.extend(waivers_of(t, l.major).map(|w| waiver_label(w, scale)));
        let rows = rows(&labels);
        let baseline = |row: usize| bar_y + FIRST_ROW + ROW * row as f64;
        lanes.push(LanePlan {
            bar_y,
            moves: rows[..moves].iter().map(|&r| baseline(r)).collect(),
            waivers: rows[moves..].iter().map(|&r| baseline(r)).collect(),
        });
        let used = rows.iter().max().map_or(0, |&r| r);
        top += LANE + ROW * used as f64;
    }
    Plan {
        lanes,
        bottom: top.max(lanes_top + LANE),
    }
}

/// The row of each label, in order: the first where it keeps [`GAP`] from every label
/// already on that row.
fn rows(labels: &[Label]) -> Vec<usize> {
    let mut placed: Vec<(usize, (f64, f64))> = Vec::new();
    labels
        .iter()
        .map(|l| {
            let (a, b) = l.span();
            let clashes = |row: usize| {
                placed
                    .iter()
                    .any(|&(r, (pa, pb))| r == row && a < pb + GAP && pa < b + GAP)
            };
            let mut row = 0;
            while clashes(row) {
                row += 1;
            }
            placed.push((row, (a, b)));
            row
        })
        .collect()
}

/// One lane per line, top to bottom, as `plan` lays them out, then the notices told about
/// each.
pub(super) fn lanes(body: &mut String, t: &Timeline, scale: &Scale, plan: &Plan) {
    for (i, (l, lane)) in t.lines.iter().zip(&plan.lanes).enumerate() {
        let bar_y = lane.bar_y;
        let x2 = bar(body, l, colour(i), scale, bar_y);
        versions(body, l, scale, bar_y);
        bar_end(body, l, x2, bar_y);
        sunset_moves(body, t, l.major, scale, lane);
        waivers(body, t, l.major, scale, lane);
        releases(body, t, l.major, scale, bar_y);
    }
    told_marks(body, t, scale, plan);
}

/// The line's name and range of versions left of the lane, and its bar from the day it opens
/// to its sunset (to the right edge when it has none); returns where the bar ends.
fn bar(body: &mut String, l: &LineSpan, c: &str, scale: &Scale, bar_y: f64) -> f64 {
    let x1 = scale.x(l.opens);
    let x2 = match l.sunset {
        Some(s) => scale.x(s),
        None => WIDTH - RIGHT,
    };
    let range = match (l.versions.first(), l.versions.last()) {
        (Some(a), Some(b)) if a.version != b.version => {
            format!("{} to {}", a.version, b.version)
        }
        (Some(a), _) => a.version.clone(),
        _ => String::new(),
    };
    let _ = writeln!(
        body,
        r#"<text x="{}" y="{}" font-size="14" font-weight="bold" fill="{c}" text-anchor="end">line {}</text>"#,
        n(LEFT - 14.0),
        n(bar_y + 11.0),
        l.major
    );
    svg_text(
        body,
        LEFT - 14.0,
        bar_y + 25.0,
        &format!(r#"font-size="11" fill="{MUTED}" text-anchor="end""#),
        &range,
    );
    let _ = writeln!(
        body,
        r#"<rect x="{}" y="{}" width="{}" height="22" rx="3" fill="{c}" fill-opacity="0.85"><title>line {}: live from {} {}</title></rect>"#,
        n(x1),
        n(bar_y),
        n((x2 - x1).max(2.0)),
        l.major,
        l.opens,
        match l.sunset {
            Some(s) => format!(
                "until its sunset on {s} (last day {})",
                s - Duration::days(1)
            ),
            None => "with no sunset set".to_string(),
        }
    );
    x2
}

/// Versions: a tick where each takes effect, its number above the bar when it fits.
fn versions(body: &mut String, l: &LineSpan, scale: &Scale, bar_y: f64) {
    let mut last_label_end = f64::MIN;
    for (j, v) in l.versions.iter().enumerate() {
        let x = scale.x(v.valid_from);
        if j > 0 {
            let _ = writeln!(
                body,
                r##"<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#ffffff" stroke-width="2"/>"##,
                n(x),
                n(bar_y),
                n(bar_y + 22.0)
            );
        }
        let w = text_width(&v.version, 10.0);
        if x > last_label_end + 4.0 {
            let _ = writeln!(
                body,
                r#"<text x="{}" y="{}" font-size="10" fill="{MUTED}">{}</text>"#,
                n(x),
                n(bar_y - 4.0),
                escape(&v.version)
            );
            last_label_end = x + w;
        }
    }
}

/// The end of the bar says what it is.
fn bar_end(body: &mut String, l: &LineSpan, x2: f64, bar_y: f64) {
    match l.sunset {
        Some(s) => {
            let label = format!("sunset {s}");
            let (x, anchor, fill) = if x2 + 6.0 + text_width(&label, 11.0) < WIDTH - 10.0 {
                (x2 + 6.0, "start", INK)
            } else {
                (x2 - 6.0, "end", "#ffffff")
            };
            svg_text(
                body,
                x,
                bar_y + 15.0,
                &format!(r#"font-size="11" fill="{fill}" text-anchor="{anchor}""#),
                &label,
            );
        }
        None => {
            let _ = writeln!(
                body,
                r##"<text x="{}" y="{}" font-size="11" fill="#ffffff" text-anchor="end">no sunset set</text>"##,
                n(x2 - 6.0),
                n(bar_y + 15.0)
            );
        }
    }
}

/// The moves of `line`'s sunset (a record with a `from`), with the day it was moved from.
fn moves_of(t: &Timeline, line: u64) -> impl Iterator<Item = (&SunsetMark, NaiveDate)> {
    t.sunset_moves
        .iter()
        .filter(move |m| m.line == line)
        .filter_map(|m| Some((m, m.from?)))
}

/// A move's label, from where the sunset was.
fn move_label(m: &SunsetMark, from: NaiveDate, scale: &Scale) -> Label {
    let (xa, xb) = (scale.x(from), scale.x(m.to));
    let text = format!(
        "sunset {} from {from} to {} (recorded {})",
        if m.forced {
            "moved earlier, forced,"
        } else if m.to > from {
            "moved later"
        } else {
            "moved"
        },
        m.to,
        m.recorded
    );
    Label::spanning(xa, xb, 10.0, text)
}

/// Sunset moves of this line: where it was, an arrow to where it is, and its label on the
/// row the plan gave it.
fn sunset_moves(body: &mut String, t: &Timeline, line: u64, scale: &Scale, lane: &LanePlan) {
    let bar_y = lane.bar_y;
    for ((m, from), &y) in moves_of(t, line).zip(&lane.moves) {
        let (xa, xb) = (scale.x(from), scale.x(m.to));
        let _ = writeln!(
            body,
            r#"<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{INK}" stroke-width="1.5" stroke-dasharray="4 3"/>"#,
            n(xa),
            n(bar_y - 2.0),
            n(bar_y + 30.0)
        );
        let _ = writeln!(
            body,
            r#"<path d="M{} {} H{}" stroke="{INK}" stroke-width="1.5" fill="none" marker-end="url(#tl-arrow)"/>"#,
            n(xa),
            n(bar_y + 28.0),
            n(if xb > xa { xb - 2.0 } else { xb + 2.0 })
        );
        move_label(m, from, scale).draw(body, y, INK);
    }
}

/// The waivers of `line`, and those of every line.
fn waivers_of(t: &Timeline, line: u64) -> impl Iterator<Item = &WaiverSpan> {
    t.waivers
        .iter()
        .filter(move |w| w.line.is_none_or(|m| m == line))
}

/// The first day a waiver no longer covers: the day after its last, or the day it was
/// revoked when that came first.
fn waiver_end(w: &WaiverSpan) -> NaiveDate {
    let after = w.until + Duration::days(1);
    w.revoked_on.map_or(after, |r| r.min(after))
}

/// A waiver's label: its clause key, and the day it was revoked, if it was.
fn waiver_label(w: &WaiverSpan, scale: &Scale) -> Label {
    let text = match w.revoked_on {
        Some(d) => format!("waived: {}, revoked {d}", w.clause),
        None => format!("waived: {}", w.clause),
    };
    let (xa, xb) = (scale.x(w.granted), scale.x(waiver_end(w)));
    Label::spanning(xa, xb, 9.0, text)
}

/// Waivers of this line (or of every line): a thin band under the bar, from the grant to
/// the last day covered (the day before its revocation, for a revoked waiver, which also
/// gets a mark at its end), and its label on the row the plan gave it.
fn waivers(body: &mut String, t: &Timeline, line: u64, scale: &Scale, lane: &LanePlan) {
    for (w, &label_y) in waivers_of(t, line).zip(&lane.waivers) {
        let (xa, xb) = (scale.x(w.granted), scale.x(waiver_end(w)));
        let y = lane.bar_y + 24.0;
        let what = format!(
            "waiver {}: {} waived on {} from {} to {}{}",
            w.id,
            w.clause,
            w.line
                .map_or("every line".to_string(), |n| format!("line {n}")),
            w.granted,
            w.until,
            w.revoked_on
                .map_or(String::new(), |d| format!(", revoked on {d}"))
        );
        let _ = write!(
            body,
            r#"<g class="waiver"><title>{}</title><rect x="{}" y="{}" width="{}" height="5" fill="{WAIVER}" fill-opacity="0.7"/>"#,
            escape(&what),
            n(xa),
            n(y),
            n((xb - xa).max(2.0)),
        );
        if w.revoked_on.is_some() {
            let _ = write!(
                body,
                r#"<line class="revoked" x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{WAIVER}" stroke-width="2"/>"#,
                n(xb),
                n(y - 3.0),
                n(y + 8.0)
            );
        }
        let mut label = String::new();
        waiver_label(w, scale).draw(&mut label, label_y, WAIVER);
        let _ = writeln!(body, "{}</g>", label.trim_end());
    }
}

/// Releases validated against this line's contracts.
fn releases(body: &mut String, t: &Timeline, line: u64, scale: &Scale, bar_y: f64) {
    for r in &t.releases {
        for res in r.results.iter().filter(|res| res.line == line) {
            let x = scale.x(r.day);
            let y = bar_y + 11.0;
            let what = format!(
                "release {}on {}: {} against {}",
                r.version
                    .as_ref()
                    .map_or(String::new(), |v| format!("{v} ")),
                r.day,
                if res.passed { "passed" } else { "failed" },
                res.contract
            );
            if res.passed {
                let _ = writeln!(
                    body,
                    r##"<circle cx="{}" cy="{}" r="6" fill="{PASS}" stroke="#ffffff" stroke-width="1.5"><title>{}</title></circle>"##,
                    n(x),
                    n(y),
                    escape(&what)
                );
            } else {
                let _ = writeln!(
                    body,
                    r##"<g><title>{}</title><circle cx="{x}" cy="{y}" r="7.5" fill="#ffffff"/><path d="M{} {} L{} {} M{} {} L{} {}" stroke="{FAIL}" stroke-width="3" stroke-linecap="round"/></g>"##,
                    escape(&what),
                    n(x - 4.5),
                    n(y - 4.5),
                    n(x + 4.5),
                    n(y + 4.5),
                    n(x - 4.5),
                    n(y + 4.5),
                    n(x + 4.5),
                    n(y - 4.5),
                    x = n(x),
                    y = n(y),
                );
            }
        }
    }
}

/// The notices delivered about each line, as a small triangle under its bar on the day they
/// were sent; one mark per day, its title naming every consumer and milestone told that day.
fn told_marks(body: &mut String, t: &Timeline, scale: &Scale, plan: &Plan) {
    for (l, lane) in t.lines.iter().zip(&plan.lanes) {
        let bar_bottom = lane.bar_y + 22.0;
        // By day, then by (consumer, milestone) with its channels.
        let mut days: std::collections::BTreeMap<
            NaiveDate,
            std::collections::BTreeMap<(&str, &str), Vec<&str>>,
        > = Default::default();
        for k in t.told.iter().filter(|k| k.line == l.major) {
            days.entry(k.day)
                .or_default()
                .entry((k.consumer.as_str(), k.milestone.as_str()))
                .or_default()
                .push(k.channel.as_str());
        }
        for (day, told) in days {
            let who: Vec<String> = told
                .iter()
                .map(|((consumer, milestone), channels)| {
                    format!("{consumer} {milestone} by {}", channels.join(", "))
                })
                .collect();
            let title = format!("told on {day}: {}", who.join("; "));
            let x = scale.x(day);
            let _ = writeln!(
                body,
                r##"<path class="told" d="M{} {} L{} {} L{} {} Z" fill="{TOLD}" stroke="#ffffff" stroke-width="1"><title>{}</title></path>"##,
                n(x),
                n(bar_bottom - 1.0),
                n(x + 5.0),
                n(bar_bottom + 8.0),
                n(x - 5.0),
                n(bar_bottom + 8.0),
                escape(&title)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(x: f64, text: &str) -> Label {
        Label {
            x,
            anchor: "start",
            size: 10.0,
            text: text.to_string(),
        }
    }

    #[test]
    fn a_label_goes_down_a_row_only_when_it_would_touch_one_placed_before() {
        // Each label 10 characters, 60 px wide at 10 px.
        let labels = [
            label(200.0, "0123456789"),
            label(230.0, "0123456789"),
            label(300.0, "0123456789"),
            label(250.0, "0123456789"),
        ];
        // The second runs into the first; the third is clear of it (260 + 6 < 300); the
        // fourth runs into the first two rows' labels.
        assert_eq!(rows(&labels), vec![0, 1, 0, 2]);
    }
}
