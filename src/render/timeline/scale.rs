//! The picture's geometry: its width and margins, the horizontal scale of days, and how a
//! number and a label's width are written.

use chrono::{Datelike, Duration, NaiveDate};

use super::Timeline;

pub(super) const WIDTH: f64 = 1000.0;
pub(super) const LEFT: f64 = 170.0;
pub(super) const RIGHT: f64 = 40.0;
pub(super) const LANE: f64 = 62.0;
pub(super) const CHART: f64 = 96.0;

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

pub(super) const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// The horizontal scale: whole months around every date the picture shows.
pub(super) struct Scale {
    start: NaiveDate,
    end: NaiveDate,
}

impl Scale {
    pub(super) fn of(t: &Timeline) -> Scale {
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

    pub(super) fn x(&self, d: NaiveDate) -> f64 {
        let d = d.clamp(self.start, self.end);
        LEFT + (d - self.start).num_days() as f64 * (WIDTH - LEFT - RIGHT) / self.days()
    }

    /// Month ticks, thinned so labels never crowd: every month, quarter or year.
    pub(super) fn ticks(&self) -> Vec<NaiveDate> {
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
pub(super) fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// A rough width of a label in pixels at 12 px, to keep labels inside the picture.
pub(super) fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

pub(super) fn plural(n: u32, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::timeline::LineSpan;

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
