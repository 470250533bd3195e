//! Who reads the datasets: the consumer registry (`consumers.toml`), the consumption log
//! (streamed, never loaded whole) and the classification of each consumer against the lines
//! of a dataset. Takes the day as an argument and prints nothing; only [`registry::load`] and
//! [`store_scan`] read through the store, the rest reads files or nothing.

pub use contracts_scan::access;
pub mod attribute_uses;
pub mod attributes;
pub mod claims;
pub mod daily;
pub mod reads;
pub mod records;
pub mod registry;
pub mod scan_report;
pub mod source_health;
pub mod standing;
pub mod store_scan;
pub mod summary;

pub use reads::{
    log_files, overlapping_files, scan, KnownRead, LogError, LogFile, Malformed, NewestRead, Scan,
    ScanRequest, ScanStats, Skipped,
};
pub use registry::ConsumerKind;
pub use registry::{
    check_mailbox, parse_registry, Claim, Consumer, Identity, Registry, Subscription,
};
pub use registry::{Webhook, WebhookKind};
pub use standing::{
    classify, exempt, mark_stale, retire_gate, Gate, LineUse, Standing, Status, Successor,
    Thresholds,
};
