//! The fast readers of the logs of reads (JSON Lines, CSV, Parquet), from the leaves up: what
//! a scan of such a log does on every line without knowing what a contract or a consumer is.
//! [`blocks`] (a text log in blocks on all cores, folded into the caller's accumulator),
//! [`csv_rows`] (a CSV log in blocks cut where a record ends, split at its commas when it
//! can be), [`field_names`] (where a source keeps each part of a read), [`fields`] (a source's
//! mapping compiled for the readers, and the plain `serde_json` reading of a line that
//! defines the answer), [`json_lines`] (a JSON Lines log in blocks, each line by the quick
//! walk or the mapped-field scanner), [`json_fields`] (the mapped fields of a JSON line, found without
//! building it, on `json_walk`, the one strict walk of a JSON line, which the warehouses'
//! JSON rows share), [`plain_lines`] (the quick walk of a plain JSON line), [`hash`] (the map
//! keys and their hasher), [`hot`] (the table a scan updates per read, one cache line per
//! consumer), [`wide`] (sixteen bytes of a JSON string at once, and the table's prefetch),
//! [`timestamps`] (a read's instant and the place of its day) and [`key_probe`] (a mapped key
//! as the JSON walks compare it); and the Parquet readers, [`parquet_rows`] (a Parquet log of
//! reads, row groups in parallel, its strings and instants decoded column by column) and
//! [`parquet_summary`] (a read summary in Parquet, into plain rows). `tally` is a plain
//! count of reads, for the example and the tests. The scan that folds reads into the newest
//! read of each consumer, and what the days and the registry mean, are the `contracts`
//! crate's (`consumers::reads`).

pub mod blocks;
pub mod csv_rows;
pub mod field_names;
pub mod fields;
pub mod hash;
pub mod hot;
pub mod json_fields;
pub mod json_lines;
pub(crate) mod json_walk;
pub mod key_probe;
pub mod parquet_rows;
pub mod parquet_summary;
pub mod plain_lines;
#[doc(hidden)]
pub mod tally;
pub mod timestamps;
pub mod wide;
