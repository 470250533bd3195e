//! `contracts`: spatial data contracts, their kinds and verdicts, an append-only history in
//! git, validation of real releases against every live contract, and the sunset notifier.
#![forbid(unsafe_code)]

/// The command line: clap types, one file per subcommand, output and exit codes.
pub mod cli;
/// The consumer registry, the consumption log and who is still on which line.
pub mod consumers;
/// What the timeline and the site show of a dataset, gathered from every room below.
pub mod gather;
/// The pure domain: contracts, kinds, containment, verdicts, bumps, windows.
pub mod model;
/// The sunset notifier: plan, render, send, and the ledger of sent notices.
pub mod notify;
/// Object storage: the one client that releases and consumption sources share.
pub mod objects;
/// Spatial data releases: streaming readers, the mergeable profile, validation and records.
pub mod release;
/// Pictures, pages and schemas: the timeline SVG, the static HTML registry, the CI formats and
/// the JSON Schemas of the file formats (pure renderers).
pub mod render;
/// The git store: contracts, history and ledgers, read at HEAD and written in one commit.
pub mod store;
