//! The lanes: one per contract line, its bar and versions, the moves of its sunset, its
//! waivers, the releases validated against it and the notices told about it.

use std::fmt::Write as _;

use chrono::{Duration, NaiveDate};

use super::scale::{n, text_width, Scale, LANE, LEFT, RIGHT, WIDTH};
use super::svg::{colour, svg_text, FAIL, INK, MUTED, PASS, TOLD, WAIVER};
use super::{LineSpan, Timeline};
use crate::render::escape;

/// One lane per line, top to bottom, then the notices told about each.
pub(super) fn lanes(body: &mut String, t: &Timeline, scale: &Scale, lanes_top: f64) {
    for (i, l) in t.lines.iter().enumerate() {
        let bar_y = lanes_top + LANE * i as f64 + 18.0;
        let x2 = bar(body, l, colour(i), scale, bar_y);
        versions(body, l, scale, bar_y);
        bar_end(body, l, x2, bar_y);
        sunset_moves(body, t, l.major, scale, bar_y);
        waivers(body, t, l.major, scale, bar_y);
        releases(body, t, l.major, scale, bar_y);
    }
    told_marks(body, t, scale, lanes_top);
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

/// Sunset moves of this line: where it was, an arrow to where it is.
fn sunset_moves(body: &mut String, t: &Timeline, line: u64, scale: &Scale, bar_y: f64) {
    for m in t.sunset_moves.iter().filter(|m| m.line == line) {
        let Some(from) = m.from else { continue };
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
        let label = format!(
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
        let w = text_width(&label, 10.0);
        let (x, anchor) = if xa + w < WIDTH - 4.0 {
            (xa, "start")
        } else {
            (xb.max(xa), "end")
        };
        svg_text(
            body,
            x,
            bar_y + 40.0,
            &format!(r#"font-size="10" fill="{INK}" text-anchor="{anchor}""#),
            &label,
        );
    }
}

/// Waivers of this line (or of every line): a thin band under the bar, from the grant
/// to the last day covered, named by its clause key.
fn waivers(body: &mut String, t: &Timeline, line: u64, scale: &Scale, bar_y: f64) {
    for w in t
        .waivers
        .iter()
        .filter(|w| w.line.is_none_or(|m| m == line))
    {
        let (xa, xb) = (scale.x(w.granted), scale.x(w.until + Duration::days(1)));
        let y = bar_y + 24.0;
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
        let _ = writeln!(
            body,
            r#"<g class="waiver"><title>{}</title><rect x="{}" y="{}" width="{}" height="5" fill="{WAIVER}" fill-opacity="0.7"/><text x="{}" y="{}" font-size="9" fill="{WAIVER}">waived: {}</text></g>"#,
            escape(&what),
            n(xa),
            n(y),
            n((xb - xa).max(2.0)),
            n(xa),
            n(y + 13.0),
            escape(&w.clause)
        );
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
fn told_marks(body: &mut String, t: &Timeline, scale: &Scale, lanes_top: f64) {
    for (i, l) in t.lines.iter().enumerate() {
        let bar_bottom = lanes_top + LANE * i as f64 + 18.0 + 22.0;
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
