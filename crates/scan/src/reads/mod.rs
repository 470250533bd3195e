//! The fast readers of the logs of reads (JSON Lines, CSV, Parquet), from the leaves up: what
//! a scan of such a log does on every line without knowing what a contract or a consumer is.
//! [`hash`] (the map keys and their hasher), [`hot`] (the table a scan updates per read, one
//! cache line per consumer), [`wide`] (sixteen bytes of a JSON string at once, and the
//! table's prefetch), [`timestamps`] (a read's instant and the place of its day) and
//! [`key_probe`] (a mapped key as the JSON walks compare it). The scan that folds reads into
//! the newest read of each consumer, and what the days and the registry mean, are the
//! `contracts` crate's (`consumers::reads`).

pub mod hash;
pub mod hot;
pub mod key_probe;
pub mod timestamps;
pub mod wide;
