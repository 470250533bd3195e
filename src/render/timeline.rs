//! The window picture (docs/src/commands/timeline.md): one lane per contract line from its
//! `valid_from` to its sunset, the deprecation windows shaded across the lanes, sunset moves, every
//! recorded release as a mark on the lane of each contract it was validated against (a green dot
//! passed, a red cross failed), today as a vertical line, and underneath, per window, the number of
//! registered consumers still reading the old line, day by day.
//!
//! The picture is built from a plain [`Timeline`] value, so `--format json` prints the same
//! facts the picture shows; [`gather`] reads those facts from the store (the consumption log
//! is scanned by the caller, who hands in the daily reads), and drawing them is pure. Coordinates are rounded to a tenth of a pixel and nothing depends
//! on the clock or on iteration order, so the same store gives the same bytes.

use std::fmt::Write as _;

use chrono::{Datelike, Duration, NaiveDate};
use serde::Serialize;

use super::escape;
use crate::consumers::daily::DayCount;
use crate::model::Window;

/// Everything the picture shows.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    pub dataset: String,
    pub today: NaiveDate,
    pub lookback_days: i64,
    pub lines: Vec<LineSpan>,
    pub windows: Vec<Window>,
    pub sunset_moves: Vec<SunsetMark>,
    pub releases: Vec<ReleaseMark>,
    /// Per window, the consumers still on its old line, from the window's opening to today.
    pub still_on: Vec<StillOn>,
    /// Every notice delivered about a line, from the dataset's ledger.
    pub told: Vec<Told>,
    /// Every recorded waiver, drawn on the lane of the line it covers.
    pub waivers: Vec<WaiverSpan>,
}

/// One notice delivered: who was told what about which line, by which channel and when.
#[derive(Debug, Clone, Serialize)]
pub struct Told {
    pub line: u64,
    pub consumer: String,
    pub milestone: String,
    /// `mail` or `webhook:<name>`.
    pub channel: String,
    /// The day the notice was sent for (the run's day).
    pub day: NaiveDate,
    /// The instant it was delivered.
    pub at: String,
}

/// A waiver, from the day it was granted to its last day.
#[derive(Debug, Clone, Serialize)]
pub struct WaiverSpan {
    pub id: String,
    /// The line it covers; `None`: every line.
    pub line: Option<u64>,
    pub clause: String,
    pub granted: NaiveDate,
    pub until: NaiveDate,
    /// The day it was revoked, if it was.
    pub revoked_on: Option<NaiveDate>,
}

const WAIVER: &str = "#9a6700";

#[derive(Debug, Clone, Serialize)]
pub struct LineSpan {
    pub major: u64,
    pub opens: NaiveDate,
    /// The effective sunset (after any recorded move).
    pub sunset: Option<NaiveDate>,
    pub versions: Vec<VersionMark>,
}

#[derive(Debug, Clone, Serialize)]
pub struct VersionMark {
    pub version: String,
    pub valid_from: NaiveDate,
}

/// A `[[sunset]]` record: the line's sunset set (no `from`) or moved.
#[derive(Debug, Clone, Serialize)]
pub struct SunsetMark {
    pub line: u64,
    pub recorded: NaiveDate,
    pub from: Option<NaiveDate>,
    pub to: NaiveDate,
    pub forced: bool,
}

/// One recorded release validation.
#[derive(Debug, Clone, Serialize)]
pub struct ReleaseMark {
    /// The release's date, or the day it was validated when it has none.
    pub day: NaiveDate,
    pub version: Option<String>,
    pub results: Vec<ContractResult>,
}

/// How a release fared against one live contract.
#[derive(Debug, Clone, Serialize)]
pub struct ContractResult {
    pub line: u64,
    pub contract: String,
    pub passed: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct StillOn {
    pub line: u64,
    pub counts: Vec<DayCount>,
}

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 170.0;
const RIGHT: f64 = 40.0;
const LANE: f64 = 62.0;
const CHART: f64 = 96.0;
const PASS: &str = "#1a7f37";
const FAIL: &str = "#cf222e";
const TODAY: &str = "#8250df";
const INK: &str = "#1f2328";
const MUTED: &str = "#59636e";
const WINDOW: &str = "#f2cc60";
/// Lane colours, by line in order; they repeat after four lines.
const PALETTE: [&str; 4] = ["#0969da", "#bc4c00", "#1a7f37", "#8250df"];

fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The first day of `d`'s month.
fn month_start(d: NaiveDate) -> NaiveDate {
    d.with_day(1).unwrap_or(d)
}

fn next_month(d: NaiveDate) -> NaiveDate {
    let (y, m) = if d.month() == 12 {
        (d.year() + 1, 1)
    } else {
        (d.year(), d.month() + 1)
    };
    NaiveDate::from_ymd_opt(y, m, 1).unwrap_or(d)
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// The horizontal scale: whole months around every date the picture shows.
struct Scale {
    start: NaiveDate,
    end: NaiveDate,
}

impl Scale {
    fn of(t: &Timeline) -> Scale {
        let mut days: Vec<NaiveDate> = vec![t.today];
        for l in &t.lines {
            days.push(l.opens);
            days.extend(l.sunset);
        }
        for m in &t.sunset_moves {
            days.extend(m.from);
            days.push(m.to);
        }
        days.extend(t.releases.iter().map(|r| r.day));
        for w in &t.waivers {
            days.push(w.granted);
            days.push(w.until);
        }
        let min = days.iter().min().copied().unwrap_or(t.today);
        let max = days.iter().max().copied().unwrap_or(t.today);
        // A line with no sunset runs on: leave room to show it does.
        let open_ended = t.lines.last().is_some_and(|l| l.sunset.is_none());
        let pad = if open_ended { 45 } else { 20 };
        Scale {
            start: month_start(min - Duration::days(10)),
            end: next_month(max + Duration::days(pad)),
        }
    }

    fn days(&self) -> f64 {
        (self.end - self.start).num_days().max(1) as f64
    }

    fn x(&self, d: NaiveDate) -> f64 {
        let d = d.clamp(self.start, self.end);
        LEFT + (d - self.start).num_days() as f64 * (WIDTH - LEFT - RIGHT) / self.days()
    }

    /// Month ticks, thinned so labels never crowd: every month, quarter or year.
    fn ticks(&self) -> Vec<NaiveDate> {
        let months = ((self.end - self.start).num_days() as f64 / 30.4).max(1.0);
        let px_per_month = (WIDTH - LEFT - RIGHT) / months;
        let step = if px_per_month >= 46.0 {
            1
        } else if px_per_month >= 16.0 {
            3
        } else {
            12
        };
        let mut out = Vec::new();
        let mut d = self.start;
        while d <= self.end {
            if d.month0().is_multiple_of(step) {
                out.push(d);
            }
            d = next_month(d);
        }
        out
    }
}

/// A number for an SVG attribute: one decimal, no trailing `.0`.
fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// A rough width of a label in pixels at 12 px, to keep labels inside the picture.
fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

fn plural(n: u32, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

const TOLD: &str = "#1f2328";

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

/// Render the picture as a standalone SVG document.
pub fn svg(t: &Timeline) -> String {
    let scale = Scale::of(t);
    let mut body = String::new();
    let title = format!("{}: contract lines and deprecation windows", t.dataset);

    let axis_y = 74.0;
    let lanes_top = 100.0;
    let lanes_bottom = lanes_top + LANE * t.lines.len().max(1) as f64;
    let charts_top = lanes_bottom + 34.0;
    let charts = t.still_on.len().max(1) as f64;
    let charts_bottom = charts_top + charts * (CHART + 44.0);
    let legend_y = charts_bottom + 18.0;
    let height = legend_y + 28.0;

    // Title and the sentence that says how to read it.
    let _ = writeln!(
        body,
        r#"<text x="20" y="30" font-size="18" font-weight="bold" fill="{INK}">{}</text>"#,
        escape(&title)
    );
    let _ = writeln!(
        body,
        r#"<text x="20" y="50" fill="{MUTED}">As of {}. Each bar is a contract line, from the day it opens to its sunset. Marks are recorded releases.</text>"#,
        t.today
    );

    // Month grid and labels.
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
            axis_y + 4.0,
            n(charts_bottom)
        );
        let _ = writeln!(
            body,
            r#"<text x="{x}" y="{}" font-size="11" fill="{MUTED}" text-anchor="middle">{}</text>"#,
            n(axis_y),
            escape(&label)
        );
    }

    // Windows: shaded behind the lanes and the charts.
    for w in &t.windows {
        let (x1, x2) = (scale.x(w.opens), scale.x(w.sunset));
        let _ = writeln!(
            body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{WINDOW}" fill-opacity="0.28"/>"#,
            n(x1),
            n(lanes_top - 6.0),
            n((x2 - x1).max(1.0)),
            n(charts_bottom - lanes_top + 6.0)
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
        let _ = writeln!(
            body,
            r##"<text x="{}" y="{}" font-size="11" fill="#7d4e00" text-anchor="middle">{}</text>"##,
            n(mid),
            n(lanes_bottom + 14.0),
            escape(&label)
        );
    }

    // One lane per line.
    for (i, l) in t.lines.iter().enumerate() {
        let top = lanes_top + LANE * i as f64;
        let c = colour(i);
        let bar_y = top + 18.0;
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
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" font-size="11" fill="{MUTED}" text-anchor="end">{}</text>"#,
            n(LEFT - 14.0),
            n(bar_y + 25.0),
            escape(&range)
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
        // Versions: a tick where each takes effect, its number above the bar when it fits.
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
        // The end of the bar says what it is.
        match l.sunset {
            Some(s) => {
                let label = format!("sunset {s}");
                let (x, anchor, fill) = if x2 + 6.0 + text_width(&label, 11.0) < WIDTH - 10.0 {
                    (x2 + 6.0, "start", INK)
                } else {
                    (x2 - 6.0, "end", "#ffffff")
                };
                let _ = writeln!(
                    body,
                    r#"<text x="{}" y="{}" font-size="11" fill="{fill}" text-anchor="{anchor}">{}</text>"#,
                    n(x),
                    n(bar_y + 15.0),
                    escape(&label)
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
        // Sunset moves of this line: where it was, an arrow to where it is.
        for m in t.sunset_moves.iter().filter(|m| m.line == l.major) {
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
            let _ = writeln!(
                body,
                r#"<text x="{}" y="{}" font-size="10" fill="{INK}" text-anchor="{anchor}">{}</text>"#,
                n(x),
                n(bar_y + 40.0),
                escape(&label)
            );
        }
        // Waivers of this line (or of every line): a thin band under the bar, from the grant
        // to the last day covered, named by its clause key.
        for w in t
            .waivers
            .iter()
            .filter(|w| w.line.is_none_or(|m| m == l.major))
        {
            let (xa, xb) = (scale.x(w.granted), scale.x(w.until + Duration::days(1)));
            let y = bar_y + 24.0;
            let what = format!(
                "waiver {}: {} waived on line {} from {} to {}{}",
                w.id,
                w.clause,
                w.line.map_or("every line".to_string(), |n| n.to_string()),
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
        // Releases validated against this line's contracts.
        for r in &t.releases {
            for res in r.results.iter().filter(|res| res.line == l.major) {
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

    told_marks(&mut body, t, &scale, lanes_top);

    // Consumers still on the old line of each window.
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
            continue;
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
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" font-size="11" font-weight="bold" fill="{c}" text-anchor="{anchor}">{}</text>"#,
            n(x),
            n((y(last.consumers) - 6.0).max(top + 30.0)),
            escape(&label)
        );
    }

    // Today, over everything.
    let xt = n(scale.x(t.today));
    let _ = writeln!(
        body,
        r#"<line x1="{xt}" y1="{}" x2="{xt}" y2="{}" stroke="{TODAY}" stroke-width="2"/>"#,
        n(axis_y + 6.0),
        n(charts_bottom)
    );
    let today_label = format!("today {}", t.today);
    let today_anchor = if scale.x(t.today) + 4.0 + text_width(&today_label, 11.0) < WIDTH {
        "start"
    } else {
        "end"
    };
    let _ = writeln!(
        body,
        r#"<text x="{}" y="{}" font-size="11" font-weight="bold" fill="{TODAY}" text-anchor="{today_anchor}">{}</text>"#,
        n(scale.x(t.today) + if today_anchor == "start" { 4.0 } else { -4.0 }),
        n(axis_y + 16.0),
        escape(&today_label)
    );

    // Legend.
    let ly = legend_y;
    let _ = writeln!(
        body,
        r##"<circle cx="26" cy="{0}" r="6" fill="{PASS}"/><text x="38" y="{1}" fill="{INK}">release passed</text>
<path d="M136 {2} L145 {3} M136 {3} L145 {2}" stroke="{FAIL}" stroke-width="3" stroke-linecap="round"/><text x="152" y="{1}" fill="{INK}">release failed</text>
<rect x="256" y="{4}" width="18" height="12" fill="{WINDOW}" fill-opacity="0.5"/><text x="280" y="{1}" fill="{INK}">deprecation window (two lines live)</text>
<line x1="502" y1="{4}" x2="502" y2="{5}" stroke="{TODAY}" stroke-width="2"/><text x="510" y="{1}" fill="{INK}">today</text>
<line x1="566" y1="{4}" x2="566" y2="{5}" stroke="{INK}" stroke-width="1.5" stroke-dasharray="4 3"/><text x="574" y="{1}" fill="{INK}">a sunset before it was moved</text>"##,
        n(ly),
        n(ly + 4.0),
        n(ly - 4.5),
        n(ly + 4.5),
        n(ly - 6.0),
        n(ly + 6.0),
    );

    if !t.told.is_empty() {
        let _ = writeln!(
            body,
            r#"<path d="M790 {} L796 {} L784 {} Z" fill="{TOLD}"/><text x="802" y="{}" fill="{INK}">consumers told</text>"#,
            n(ly - 5.0),
            n(ly + 5.0),
            n(ly + 5.0),
            n(ly + 4.0),
        );
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12" role="img" aria-labelledby="tl-title">
<title id="tl-title">{title}</title>
<defs><marker id="tl-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0 0 L8 4 L0 8 Z" fill="{INK}"/></marker></defs>
<rect width="{w}" height="{h}" fill="#ffffff"/>"##,
        w = n(WIDTH),
        h = n(height),
        title = escape(&title),
    );
    out.push_str(&body);
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn the_scale_spans_whole_months_around_every_date() {
        let t = Timeline {
            dataset: "roads".into(),
            today: d("2026-11-29"),
            lookback_days: 30,
            lines: vec![LineSpan {
                major: 1,
                opens: d("2026-03-15"),
                sunset: Some(d("2027-01-15")),
                versions: vec![],
            }],
            windows: vec![],
            sunset_moves: vec![],
            releases: vec![],
            still_on: vec![],
            told: vec![],
            waivers: vec![],
        };
        let s = Scale::of(&t);
        // 2026-03-15 minus 10 days is in March; 2027-01-15 plus 20 days is in February.
        assert_eq!((s.start, s.end), (d("2026-03-01"), d("2027-03-01")));
        assert_eq!(s.x(s.start), LEFT);
        assert_eq!(s.x(s.end), WIDTH - RIGHT);
        assert_eq!(n(12.04), "12");
        assert_eq!(n(12.06), "12.1");
    }
}
