//! The rules for setting or moving a line's sunset (docs/src/commands/sunset.md), shared by
//! `contracts sunset`, which refuses a move that breaks one, and `contracts check`, which replays
//! every recorded move against the same rules.
//!
//! A sunset is a promise to consumers, so it is one value per line — the effective sunset of
//! [`super::window::lines`] — and every rule is about that value: it may move later, never
//! earlier; it stays after the day the line opened; the window it closes stays within the
//! policy; and no day has three live lines. "Earlier", "in the past" and "outside the policy"
//! may be overridden with `--force` (the record then says `forced = true`); the others may not.

use std::fmt;

use chrono::NaiveDate;

use super::config::Policy;
use super::window::{first_day_over_two_live, windows, Line, SunsetSource, Window};

/// Why a sunset may not be set to a day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SunsetRefusal {
    NoSuchLine {
        line: u64,
        lines: Vec<u64>,
    },
    /// Earlier than the line's effective sunset (overridable).
    Earlier {
        on: NaiveDate,
        committed: NaiveDate,
    },
    /// Not after the day the command runs (overridable).
    NotAfterToday {
        on: NaiveDate,
        today: NaiveDate,
    },
    NotAfterOpening {
        line: u64,
        on: NaiveDate,
        opens: NaiveDate,
    },
    /// The window the sunset closes would be outside the policy (overridable).
    WindowOutsidePolicy {
        window: Window,
        min: i64,
        max: i64,
    },
    ThreeLive {
        day: NaiveDate,
        lines: Vec<u64>,
    },
}

impl SunsetRefusal {
    /// Whether `--force` may override this rule. Every rule is named, so that a new one is
    /// decided here, not overridable by default.
    pub fn overridable(&self) -> bool {
        use SunsetRefusal as R;
        match self {
            R::Earlier { .. } | R::NotAfterToday { .. } | R::WindowOutsidePolicy { .. } => true,
            R::NoSuchLine { .. } | R::NotAfterOpening { .. } | R::ThreeLive { .. } => false,
        }
    }
}

fn join(lines: &[u64]) -> String {
    lines
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for SunsetRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SunsetRefusal::NoSuchLine { line, lines } => {
                write!(f, "there is no line {line} (lines: {})", join(lines))
            }
            SunsetRefusal::Earlier { on, committed } => write!(
                f,
                "{on} is earlier than the committed sunset {committed}: consumers planned their migration on it"
            ),
            SunsetRefusal::NotAfterToday { on, today } => {
                write!(f, "{on} is not after today ({today})")
            }
            SunsetRefusal::NotAfterOpening { line, on, opens } => write!(
                f,
                "{on} is not after the day line {line} opened ({opens})"
            ),
            SunsetRefusal::WindowOutsidePolicy { window, min, max } => write!(
                f,
                "the window from {} (line {} opens) to {} would be {} days, outside the policy's {min}..{max}",
                window.opens,
                window.new_line,
                window.sunset,
                window.days()
            ),
            SunsetRefusal::ThreeLive { day, lines } => write!(
                f,
                "lines {} would all be live on {day}: more than two live contracts is not a window, it is drift",
                join(lines)
            ),
        }
    }
}

/// What the rules say about one move.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MoveCheck {
    /// Rules broken whatever `--force` says.
    pub refusals: Vec<SunsetRefusal>,
    /// Rules broken that `--force` overrides.
    pub needs_force: Vec<SunsetRefusal>,
}

impl MoveCheck {
    /// Whether the move may be recorded, with or without `--force`.
    pub fn accepted(&self, force: bool) -> bool {
        self.refusals.is_empty() && (force || self.needs_force.is_empty())
    }
}

/// Whether a window keeps the policy.
pub fn within_policy(window: &Window, policy: &Policy) -> bool {
    (policy.min_window_days..=policy.max_window_days).contains(&window.days())
}

/// Check setting line `line`'s sunset to `on`, given the dataset's lines with their effective
/// sunsets. `today` is the day the command runs; `None` skips that rule (a replay in `check`
/// cannot know the `--today` the command was given).
pub fn check_move(
    lines: &[Line],
    line: u64,
    on: NaiveDate,
    today: Option<NaiveDate>,
    policy: &Policy,
) -> MoveCheck {
    let mut out = MoveCheck::default();
    let Some(idx) = lines.iter().position(|l| l.major == line) else {
        out.refusals.push(SunsetRefusal::NoSuchLine {
            line,
            lines: lines.iter().map(|l| l.major).collect(),
        });
        return out;
    };
    let this = &lines[idx];
    let mut push = |r: SunsetRefusal| {
        if r.overridable() {
            out.needs_force.push(r);
        } else {
            out.refusals.push(r);
        }
    };
    if let Some(committed) = this.sunset {
        if on < committed {
            push(SunsetRefusal::Earlier { on, committed });
        }
    }
    if let Some(today) = today {
        if on <= today {
            push(SunsetRefusal::NotAfterToday { on, today });
        }
    }
    if on <= this.opens {
        push(SunsetRefusal::NotAfterOpening {
            line,
            on,
            opens: this.opens,
        });
    }
    if let Some(next) = lines.get(idx + 1) {
        let window = Window {
            old_line: line,
            new_line: next.major,
            opens: next.opens,
            sunset: on,
        };
        if !within_policy(&window, policy) {
            push(SunsetRefusal::WindowOutsidePolicy {
                window,
                min: policy.min_window_days,
                max: policy.max_window_days,
            });
        }
    }
    let mut after = lines.to_vec();
    after[idx].sunset = Some(on);
    if let Some((day, lines)) = first_day_over_two_live(&after) {
        push(SunsetRefusal::ThreeLive { day, lines });
    }
    out
}

/// The effective windows outside the policy, however they were reached. A window closed by a
/// forced event is the one exception: `--force` is the recorded, deliberate override.
pub fn windows_outside_policy(lines: &[Line], policy: &Policy) -> Vec<Window> {
    windows(lines)
        .into_iter()
        .filter(|w| !within_policy(w, policy))
        .filter(|w| {
            !lines.iter().any(|l| {
                l.major == w.old_line
                    && matches!(
                        l.source,
                        Some(SunsetSource::SunsetEvent { forced: true, .. })
                    )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use semver::Version;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn line(major: u64, opens: &str, sunset: Option<&str>) -> Line {
        Line {
            major,
            opens: d(opens),
            sunset: sunset.map(d),
            source: None,
            versions: vec![Version::new(major, 0, 0)],
        }
    }

    #[test]
    fn earlier_is_overridable_but_before_opening_is_not() {
        let lines = [
            line(1, "2026-01-01", Some("2027-07-01")),
            line(2, "2027-01-01", None),
        ];
        let policy = Policy::default();
        let c = check_move(&lines, 1, d("2027-06-01"), Some(d("2026-12-01")), &policy);
        assert!(c.refusals.is_empty());
        assert_eq!(
            c.needs_force,
            vec![SunsetRefusal::Earlier {
                on: d("2027-06-01"),
                committed: d("2027-07-01")
            }]
        );
        assert!(c.accepted(true) && !c.accepted(false));
        let c = check_move(&lines, 2, d("2026-12-01"), None, &policy);
        assert!(matches!(
            c.refusals[..],
            [SunsetRefusal::NotAfterOpening { line: 2, .. }]
        ));
        assert!(!c.accepted(true));
    }

    #[test]
    fn a_window_of_31_days_needs_force() {
        // 2027-07-01 .. 2027-08-01 is 31 days (July has 31), under the 90-day minimum.
        let lines = [
            line(2, "2026-01-01", Some("2027-11-01")),
            line(3, "2027-07-01", None),
        ];
        let c = check_move(&lines, 2, d("2027-08-01"), None, &Policy::default());
        assert!(matches!(
            c.needs_force[..],
            [SunsetRefusal::Earlier { .. }, SunsetRefusal::WindowOutsidePolicy { window, .. }]
                if window.days() == 31
        ));
    }
}
