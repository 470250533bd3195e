//! Pictures and pages: the timeline SVG and the static HTML registry. Pure: plain values in,
//! text out, byte for byte the same for the same input (the tests snapshot them), no script.

pub mod ci;
pub mod ci_findings;
pub mod delta;
pub mod escape;
pub mod html;
pub mod junit;
pub mod odcs;
pub mod review;
pub mod schema;
pub mod stac;
pub mod timeline;

pub use escape::escape;
