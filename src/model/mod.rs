//! The domain: contracts, clause kinds and shapes, containment, change verdicts, version bumps
//! and windows. Pure by design: no files, no git, no clock, no terminal. Texts come in as
//! strings and dates as arguments, so every rule can be tested and replayed exactly.

/// `impl Display` for enums that have one word for each variant, as their `$word` method
/// (`as_str` or `name`) gives it: the word their files, tables and reports use.
macro_rules! display_as {
    ($word:ident: $t:ty) => {
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.$word())
            }
        }
    };
}
pub(crate) use display_as;

pub mod change;
pub mod config;
pub mod consistency;
pub mod contract;
pub mod crs;
pub mod day;
pub mod deprecation;
pub mod history;
pub mod impact;
pub mod kind;
pub mod location;
pub mod pg_log_keys;
pub mod proposal;
pub mod source;
pub mod spatial;
pub mod suggest;
pub mod sunset;
pub mod value;
pub mod waiver;

pub use change::{derive_changes, verdict, Bump, Change, ChangeSet, Direction, Verdict};
pub use config::{parse_config, Config};
pub use contract::{is_dataset_name, parse_contract, Clause, ClauseStatus, Contract, Strictness};
pub use day::parse_day;
pub use impact::{impact, impacts, ConsumerVerdict, Impact, Use};
pub use kind::{Check, ClauseSpec, Kind, KindTable, Shape, BUILTIN};
pub use location::{Located, Locator, TomlErrors};
pub use spatial::{AttrType, Dimension, GeometryType};
pub use value::{ClauseValue, Envelope, UpperBounds};
pub mod window;
pub mod wire;
pub use window::{
    lines, version_state, Line, LineState, SunsetMove, SunsetSource, VersionState, Window,
};
