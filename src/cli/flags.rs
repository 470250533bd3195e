//! The global flags and the argument types several commands share. Below `context.rs`, which
//! turns the flags into a command's [`Context`](super::Context), and `mod.rs`, which parses
//! them with the command list: a flag names neither.

use std::path::PathBuf;

use chrono::NaiveDate;
use clap::ValueEnum;

// The flags every command takes (`global = true`), flattened into `Cli`. (No doc comment on
// the struct: clap would take it for the program's about.)
#[derive(Debug, clap::Args)]
pub struct Globals {
    /// The store: a git repository with `contracts.toml` [default: the repository containing
    /// the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub repo: Option<PathBuf>,

    /// Output format: `text` is a table for people, `json` is stable for scripts; `junit`,
    /// `github` and `sarif` are for CI, `markdown` a pull request comment (see each command)
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// The day every date rule is evaluated on [default: $CONTRACTS_TODAY, else today's UTC
    /// date]
    // The variable is read by `Context`, not by clap, so that a bad value is blamed on the
    // variable rather than on a `--today` the user never passed.
    #[arg(
        long,
        global = true,
        value_name = "YYYY-MM-DD",
        value_parser = parse_day
    )]
    pub today: Option<NaiveDate>,

    /// The instant recorded in history, ledgers and notices [default: the system clock]. For
    /// reproducible runs and tests; hidden from the help because a person never needs it.
    #[arg(
        long,
        global = true,
        env = "CONTRACTS_NOW",
        value_name = "RFC3339",
        hide = true
    )]
    pub now: Option<chrono::DateTime<chrono::FixedOffset>>,

    /// Writers: fetch from and push to this git remote around each commit, whatever
    /// `[store] remote` says
    #[arg(long, global = true, value_name = "NAME", conflicts_with = "no_sync")]
    pub remote: Option<String>,

    /// Writers: do not sync with `[store] remote`; commit to this checkout only
    #[arg(long, global = true)]
    pub no_sync: bool,

    /// Colour verdicts and results: `auto` colours a terminal unless `NO_COLOR` is set
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// Print no talk on stderr: no warnings, notes or progress. Data on stdout, errors and
    /// the exit code are unchanged
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

/// A calendar day as the user types it, with an error in the user's words rather than the
/// date parser's ("trailing input", "invalid characters").
pub fn parse_day(text: &str) -> Result<NaiveDate, String> {
    crate::model::parse_day(text)
}

/// Which part of a file to read, where a format holds several.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PartArgs {
    /// The GeoPackage feature table to read (required when the file has several)
    #[arg(long, value_name = "NAME")]
    pub layer: Option<String>,
    /// The GeoParquet or PostGIS geometry column to read [default: the primary column, or the only one]
    #[arg(long, value_name = "NAME")]
    pub geometry_column: Option<String>,
    /// Print on stderr what was read of each object in object storage, against its size
    #[arg(long)]
    pub verbose: bool,
    /// Read GeoJSON with the sequential reader only (for the benchmark and tests)
    #[arg(long, hide = true)]
    pub geojson_sequential: bool,
}

impl PartArgs {
    pub fn verbose(&self) -> bool {
        self.verbose
    }

    pub fn options(&self) -> crate::release::ReadOptions {
        crate::release::ReadOptions {
            layer: self.layer.clone(),
            geometry_column: self.geometry_column.clone(),
            geojson_sequential: self.geojson_sequential,
        }
    }
}

/// When to colour table cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour: `auto` means stdout is a terminal and `NO_COLOR` is unset or empty
    /// (no-color.org); an explicit `always` or `never` wins over the environment.
    pub fn resolve(self) -> bool {
        use std::io::IsTerminal;
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        }
    }
}

/// Output formats. `junit` is accepted by `validate` only; `github` (workflow commands that
/// annotate a pull request) and `sarif` (SARIF 2.1.0) by `check`, `validate`, `diff` and
/// `propose --dry-run`; `markdown` (a pull request comment) by `review`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Junit,
    Github,
    Sarif,
    Markdown,
}

impl Format {
    /// Whether the format is one of the CI ones (`github`, `sarif`).
    pub fn is_ci(self) -> bool {
        matches!(self, Format::Github | Format::Sarif)
    }
}
