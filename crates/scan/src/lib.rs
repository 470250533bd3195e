//! The readers of consumption sources: what each format's bytes say about who read what.
//!
//! This crate knows formats, not contracts: a line of a platform's access log becomes a
//! request, a request a read of a dataset and version by a principal ([`access`]); and the
//! pieces of the fast readers of the logs of reads, which record each read as it happens
//! ([`reads`]). Who is still on which line, the registry and the thresholds are the
//! `contracts` crate's; it compiles each `[[consumption.source]]` into these readers once,
//! when its configuration is read.
#![forbid(unsafe_code)]

/// The platforms' access logs: S3, CloudFront, combined, pgaudit, the warehouses' access
/// records (Snowflake, BigQuery, Databricks); templates and bursts.
pub mod access;
/// The one enum of source formats.
pub mod format;
/// PostgreSQL's `log_line_prefix`, read as the server writes it.
pub mod pg_prefix;
/// The logs of reads (JSON Lines, CSV, Parquet): the pieces of their fast readers.
pub mod reads;
/// The one block scheduler: a text file in pieces cut at line ends, parsed on every core,
/// handed out in the file's order (the logs of reads' blocks, the access logs' chunks).
mod schedule;

pub use format::LogFormat;
