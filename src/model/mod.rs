//! The domain: contracts, clause kinds and shapes, containment, change verdicts, version bumps
//! and windows. Pure by design: no files, no git, no clock, no terminal. Texts come in as
//! strings and dates as arguments, so every rule can be tested and replayed exactly.

pub mod change;
pub mod config;
pub mod consistency;
pub mod contract;
pub mod crs;
pub mod day;
pub mod history;
pub mod impact;
pub mod kind;
pub mod location;
pub mod proposal;
pub mod source;
pub mod spatial;
pub mod suggest;
pub mod sunset;
pub mod value;
pub mod waiver;

pub use change::{derive_changes, verdict, Bump, Change, ChangeSet, Direction, Verdict};
pub use config::{parse_config, Config};
pub use contract::{is_dataset_name, parse_contract, Clause, Contract, Strictness};
pub use day::parse_day;
pub use impact::{impact, impacts, ConsumerVerdict, Impact, Use};
pub use kind::{Check, ClauseSpec, Kind, KindTable, Shape, BUILTIN};
pub use location::{Located, TomlErrors};
pub use spatial::{AttrType, Dimension, GeometryType};
pub use value::{ClauseValue, Envelope, UpperBounds};
pub mod window;
pub use window::{lines, Line, SunsetMove, SunsetSource, Window};
