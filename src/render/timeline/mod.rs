//! The window picture (docs/src/commands/timeline.md): one lane per contract line from its
//! `valid_from` to its sunset, the deprecation windows shaded across the lanes, sunset moves, every
//! recorded release as a mark on the lane of each contract it was validated against (a green dot
//! passed, a red cross failed), today as a vertical line, and underneath, per window, the number of
//! registered consumers still reading the old line, day by day.
//!
//! The picture is built from a plain [`Timeline`] value, so `--format json` prints the same
//! facts the picture shows; [`gather`] reads those facts from the store (the consumption log
//! is scanned by the caller, who hands in the daily reads), and drawing them is pure (`svg.rs`, with the geometry in `scale.rs`
//! and the lanes in `lanes.rs`). Coordinates are rounded to a tenth of a pixel and nothing depends
//! on the clock or on iteration order, so the same store gives the same bytes.

mod ink;
mod lanes;
mod scale;
mod svg;

use chrono::NaiveDate;
use serde::Serialize;

use crate::consumers::daily::DayCount;
use crate::model::Window;
pub use svg::svg;

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
