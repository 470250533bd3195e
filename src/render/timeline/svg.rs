//! The picture as one SVG document: its frame, heading, month grid and windows, the lanes
//! (`lanes.rs`), the still-on charts, today's line and the legend, drawn in that order so that
//! what comes later lies on top.

use std::fmt::Write as _;

use chrono::{Datelike, Duration};

use super::ink::{colour, svg_text, FAIL, INK, MUTED, PASS, TOLD};
use super::lanes::{lanes, plan, Plan};
use super::scale::{n, plural, text_width, Scale, CHART, LEFT, MONTHS, RIGHT, WIDTH};
use super::{StillOn, Timeline};
use crate::render::escape;

const TODAY: &str = "#8250df";
const WINDOW: &str = "#f2cc60";

/// Where each band of the picture stands, top to bottom.
struct Layout {
    axis_y: f64,
    lanes_top: f64,
    lanes_bottom: f64,
    charts_top: f64,
    charts_bottom: f64,
    legend_y: f64,
    height: f64,
}

/// Where the first lane starts.
const LANES_TOP: f64 = 100.0;

impl Layout {
    /// The bands of the picture around the lanes as `lanes` lays them out.
    fn of(t: &Timeline, lanes: &Plan) -> Layout {
        let axis_y = 74.0;
        let lanes_top = LANES_TOP;
        let lanes_bottom = lanes.bottom;
        let charts_top = lanes_bottom + 34.0;
        let charts = t.still_on.len().max(1) as f64;
        let charts_bottom = charts_top + charts * (CHART + 44.0);
        let legend_y = charts_bottom + 18.0;
        let height = legend_y + 28.0;
        Layout {
            axis_y,
            lanes_top,
            lanes_bottom,
            charts_top,
            charts_bottom,
            legend_y,
            height,
        }
    }
}

/// Render the picture as a standalone SVG document.
pub fn svg(t: &Timeline) -> String {
    let scale = Scale::of(t);
    let lane_plan = plan(t, &scale, LANES_TOP);
    let at = Layout::of(t, &lane_plan);
    let title = format!("{}: contract lines and deprecation windows", t.dataset);
    let mut body = String::new();
    heading(&mut body, t, &title);
    month_grid(&mut body, &scale, &at);
    windows(&mut body, t, &scale, &at);
    lanes(&mut body, t, &scale, &lane_plan);
    still_on_charts(&mut body, t, &scale, at.charts_top);
    today(&mut body, t, &scale, &at);
    legend(&mut body, t, at.legend_y);
    document(&title, at.height, &body)
}

/// Title and the sentence that says how to read it.
fn heading(body: &mut String, t: &Timeline, title: &str) {
    let _ = writeln!(
        body,
        r#"<text x="20" y="30" font-size="18" font-weight="bold" fill="{INK}">{}</text>"#,
        escape(title)
    );
    let _ = writeln!(
        body,
        r#"<text x="20" y="50" fill="{MUTED}">As of {}. Each bar is a contract line, from the day it opens to its sunset. Marks are recorded releases.</text>"#,
        t.today
    );
}

/// Month grid and labels.
fn month_grid(body: &mut String, scale: &Scale, at: &Layout) {
    let ticks = scale.ticks();
    for (i, &d) in ticks.iter().enumerate() {
        let x = n(scale.x(d));
        // The year is said at each January, and on the first tick unless a January follows
        // closely enough to say it.
        let january_soon = ticks.iter().skip(i + 1).take(2).any(|t| t.month() == 1);
        let label = if d.month() == 1 || (i == 0 && !january_soon) {
            format!("{} {}", MONTHS[d.month0() as usize], d.year())
        } else {
            MONTHS[d.month0() as usize].to_string()
        };
        let _ = writeln!(
            body,
            r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#d1d9e0" stroke-width="1"/>"##,
            at.axis_y + 4.0,
            n(at.charts_bottom)
        );
        let _ = writeln!(
            body,
            r#"<text x="{x}" y="{}" font-size="11" fill="{MUTED}" text-anchor="middle">{}</text>"#,
            n(at.axis_y),
            escape(&label)
        );
    }
}

/// Windows: shaded behind the lanes and the charts.
fn windows(body: &mut String, t: &Timeline, scale: &Scale, at: &Layout) {
    for w in &t.windows {
        let (x1, x2) = (scale.x(w.opens), scale.x(w.sunset));
        let _ = writeln!(
            body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{WINDOW}" fill-opacity="0.28"/>"#,
            n(x1),
            n(at.lanes_top - 6.0),
            n((x2 - x1).max(1.0)),
            n(at.charts_bottom - at.lanes_top + 6.0)
        );
        let label = format!(
            "window: line {} and line {} both live for {} days",
            w.old_line,
            w.new_line,
            w.days()
        );
        let mid = ((x1 + x2) / 2.0)
            .max(LEFT + text_width(&label, 11.0) / 2.0)
            .min(WIDTH - RIGHT - text_width(&label, 11.0) / 2.0);
        svg_text(
            body,
            mid,
            at.lanes_bottom + 14.0,
            r##"font-size="11" fill="#7d4e00" text-anchor="middle""##,
            &label,
        );
    }
}

/// Consumers still on the old line of each window.
fn still_on_charts(body: &mut String, t: &Timeline, scale: &Scale, charts_top: f64) {
    if t.still_on.is_empty() {
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" fill="{MUTED}">No deprecation window: no consumer has to move.</text>"#,
            n(LEFT),
            n(charts_top + 20.0)
        );
    }
    for (k, s) in t.still_on.iter().enumerate() {
        let top = charts_top + k as f64 * (CHART + 44.0);
        still_on_chart(body, t, s, scale, top);
    }
}

/// The chart of one window's old line: how many consumers still read it, day by day.
fn still_on_chart(body: &mut String, t: &Timeline, s: &StillOn, scale: &Scale, top: f64) {
    let c = t
        .lines
        .iter()
        .position(|l| l.major == s.line)
        .map_or(MUTED, colour);
    let _ = writeln!(
        body,
        r#"<text x="20" y="{}" font-size="13" font-weight="bold" fill="{INK}">Consumers still reading line {}</text>"#,
        n(top),
        s.line
    );
    let _ = writeln!(
        body,
        r#"<text x="20" y="{}" font-size="11" fill="{MUTED}">registered consumers whose newest read in the last {} days was of line {}, each day up to today</text>"#,
        n(top + 15.0),
        t.lookback_days,
        s.line
    );
    let base = top + 24.0 + CHART;
    let max = s
        .counts
        .iter()
        .map(|c| c.consumers)
        .max()
        .unwrap_or(0)
        .max(1);
    let y = |v: u32| base - f64::from(v) * CHART / f64::from(max);
    // Axis with 0 and the highest count.
    let _ = writeln!(
        body,
        r#"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="{MUTED}" stroke-width="1"/>"#,
        n(LEFT),
        n(base),
        n(WIDTH - RIGHT)
    );
    for v in [0, max] {
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" font-size="11" fill="{MUTED}" text-anchor="end">{v}</text>"#,
            n(LEFT - 8.0),
            n(y(v) + 4.0)
        );
        if v > 0 {
            let _ = writeln!(
                body,
                r##"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#d1d9e0" stroke-width="1" stroke-dasharray="2 3"/>"##,
                n(LEFT),
                n(y(v)),
                n(WIDTH - RIGHT)
            );
        }
    }
    let (Some(first), Some(last)) = (s.counts.first(), s.counts.last()) else {
        let opens = t
            .windows
            .iter()
            .find(|w| w.old_line == s.line)
            .map(|w| w.opens);
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" fill="{MUTED}">{}</text>"#,
            n(LEFT + 8.0),
            n(base - 10.0),
            escape(&match opens {
                Some(d) => format!("The window opens on {d}: counting starts then."),
                None => "No count yet.".to_string(),
            })
        );
        return;
    };
    // A step line: each day's count holds until the next day.
    let mut d = format!("M{} {}", n(scale.x(first.day)), n(y(first.consumers)));
    let mut prev = first.consumers;
    for p in &s.counts[1..] {
        if p.consumers != prev {
            let _ = write!(d, " H{} V{}", n(scale.x(p.day)), n(y(p.consumers)));
            prev = p.consumers;
        }
    }
    let end_x = scale.x(last.day + Duration::days(1));
    let _ = write!(d, " H{}", n(end_x));
    let _ = writeln!(
        body,
        r#"<path d="{d} V{} H{} Z" fill="{c}" fill-opacity="0.18" stroke="none"/>"#,
        n(base),
        n(scale.x(first.day))
    );
    let _ = writeln!(
        body,
        r#"<path d="{d}" fill="none" stroke="{c}" stroke-width="2"/>"#
    );
    let label = format!(
        "{} on {}",
        plural(last.consumers, "consumer", "consumers"),
        last.day
    );
    let (x, anchor) = if end_x + 6.0 + text_width(&label, 11.0) < WIDTH - 4.0 {
        (end_x + 6.0, "start")
    } else {
        (end_x - 6.0, "end")
    };
    svg_text(
        body,
        x,
        (y(last.consumers) - 6.0).max(top + 30.0),
        &format!(r#"font-size="11" font-weight="bold" fill="{c}" text-anchor="{anchor}""#),
        &label,
    );
}

/// Today, over everything.
fn today(body: &mut String, t: &Timeline, scale: &Scale, at: &Layout) {
    let xt = n(scale.x(t.today));
    let _ = writeln!(
        body,
        r#"<line x1="{xt}" y1="{}" x2="{xt}" y2="{}" stroke="{TODAY}" stroke-width="2"/>"#,
        n(at.axis_y + 6.0),
        n(at.charts_bottom)
    );
    let today_label = format!("today {}", t.today);
    let today_anchor = if scale.x(t.today) + 4.0 + text_width(&today_label, 11.0) < WIDTH {
        "start"
    } else {
        "end"
    };
    svg_text(
        body,
        scale.x(t.today) + if today_anchor == "start" { 4.0 } else { -4.0 },
        at.axis_y + 16.0,
        &format!(
            r#"font-size="11" font-weight="bold" fill="{TODAY}" text-anchor="{today_anchor}""#
        ),
        &today_label,
    );
}

/// One entry of the legend: a kind of mark the picture draws.
#[derive(Clone, Copy)]
enum Key {
    Passed,
    Failed,
    Window,
    Today,
    Moved,
    Told,
}

impl Key {
    fn words(self) -> &'static str {
        match self {
            Key::Passed => "release passed",
            Key::Failed => "release failed",
            Key::Window => "deprecation window (two lines live)",
            Key::Today => "today",
            Key::Moved => "a sunset before it was moved",
            Key::Told => "consumers told",
        }
    }

    /// How wide the mark is.
    fn width(self) -> f64 {
        match self {
            Key::Passed | Key::Told => 12.0,
            Key::Failed => 11.0,
            Key::Window => 18.0,
            Key::Today | Key::Moved => 2.0,
        }
    }

    /// The mark, from `x` on, centred on the line at `y`.
    fn mark(self, x: f64, y: f64) -> String {
        let (top, bottom) = (n(y - 6.0), n(y + 6.0));
        match self {
            Key::Passed => format!(
                r#"<circle cx="{}" cy="{}" r="6" fill="{PASS}"/>"#,
                n(x + 6.0),
                n(y)
            ),
            Key::Failed => {
                let (a, b, t, u) = (n(x + 1.0), n(x + 10.0), n(y - 4.5), n(y + 4.5));
                format!(
                    r#"<path d="M{a} {t} L{b} {u} M{a} {u} L{b} {t}" stroke="{FAIL}" stroke-width="3" stroke-linecap="round"/>"#
                )
            }
            Key::Window => format!(
                r#"<rect x="{}" y="{top}" width="18" height="12" fill="{WINDOW}" fill-opacity="0.5"/>"#,
                n(x)
            ),
            Key::Today => format!(
                r#"<line x1="{0}" y1="{top}" x2="{0}" y2="{bottom}" stroke="{TODAY}" stroke-width="2"/>"#,
                n(x + 1.0)
            ),
            Key::Moved => format!(
                r#"<line x1="{0}" y1="{top}" x2="{0}" y2="{bottom}" stroke="{INK}" stroke-width="1.5" stroke-dasharray="4 3"/>"#,
                n(x + 1.0)
            ),
            Key::Told => format!(
                r#"<path d="M{} {} L{} {} L{} {} Z" fill="{TOLD}"/>"#,
                n(x + 6.0),
                n(y - 5.0),
                n(x + 12.0),
                n(y + 5.0),
                n(x),
                n(y + 5.0)
            ),
        }
    }
}

/// Legend: each mark and its words, one after the other, each entry placed after the words
/// before it by the width [`text_width`] gives them, so no words are drawn over the next
/// mark. The told mark is shown only when there is one.
fn legend(body: &mut String, t: &Timeline, ly: f64) {
    let mut keys = vec![
        Key::Passed,
        Key::Failed,
        Key::Window,
        Key::Today,
        Key::Moved,
    ];
    if !t.told.is_empty() {
        keys.push(Key::Told);
    }
    let mut x = 20.0;
    for key in keys {
        let text_x = x + key.width() + 6.0;
        let _ = writeln!(
            body,
            r#"{}<text x="{}" y="{}" fill="{INK}">{}</text>"#,
            key.mark(x, ly),
            n(text_x),
            n(ly + 4.0),
            key.words()
        );
        x = text_x + text_width(key.words(), 12.0) + 14.0;
    }
}

/// The frame: the `<svg>` element, its title, the arrow marker and a white ground, around
/// `body`.
fn document(title: &str, height: f64, body: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12" role="img" aria-labelledby="tl-title">
<title id="tl-title">{title}</title>
<defs><marker id="tl-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0 0 L8 4 L0 8 Z" fill="{INK}"/></marker></defs>
<rect width="{w}" height="{h}" fill="#ffffff"/>"##,
        w = n(WIDTH),
        h = n(height),
        title = escape(title),
    );
    out.push_str(body);
    out.push_str("</svg>\n");
    out
}
