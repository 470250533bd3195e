//! The command line. Each subcommand lives in its own file with its clap `Args` (whose doc comment
//! is the help text) and one `run` function that computes a plain value, renders it, and only then
//! acts. Errors are classified once, here, into the exit codes of docs/src/reference/exit-codes.md.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `method` of the run's printer, called with the formatted arguments: what `outln!`, `out!`,
/// `talkln!` and `errln!` share. `$p` is the command's `Context` or its `Printer`.
macro_rules! to_printer {
    ($method:ident, $p:expr, $($t:tt)*) => {{
        #[allow(unused_imports)]
        use $crate::cli::output::Print as _;
        ($p).printer().$method(format_args!($($t)*))
    }};
}

/// A line of data on stdout through the run's printer (`outln!(ctx, ...)`, where `ctx` is the
/// command's `Context` or its `Printer`): after a closed pipe (`contracts log | head`) the
/// rest of the data is dropped quietly and the command exits with its own code. Defined before the modules that use it.
macro_rules! outln {
    ($p:expr) => {
        to_printer!(out, $p, "")
    };
    ($p:expr, $($t:tt)*) => {
        to_printer!(out, $p, $($t)*)
    };
}

/// Data on stdout without a newline, through the same closed-pipe handling as `outln!`.
macro_rules! out {
    ($p:expr, $($t:tt)*) => {
        to_printer!(out_raw, $p, $($t)*)
    };
}

/// A line of talk on stderr (warnings, notes, progress), silenced by `--quiet`; never a
/// panic when stderr is gone.
macro_rules! talkln {
    ($p:expr, $($t:tt)*) => {
        to_printer!(talk, $p, $($t)*)
    };
}

/// A line of an error on stderr (a refusal, a failure): printed even with `--quiet`.
macro_rules! errln {
    ($p:expr, $($t:tt)*) => {
        to_printer!(error, $p, $($t)*)
    };
}

mod advisory;
mod backtest;
mod can_remove;
mod can_retire;
mod check;
mod completions;
mod consumers;
mod consumption;
mod context;
mod diff;
mod error;
mod export;
mod flags;
mod import;
mod init;
mod log;
mod new;
mod notify;
mod output;
mod profile;
mod propose;
mod review;
mod schema;
mod show;
mod site;
mod status;
mod sunset;
mod timeline;
mod unwaive;
mod validate;
mod waive;
mod waivers;

pub use context::Context;
pub use error::{CommandError, ErrorClass, Outcome};
pub use flags::{parse_day, ColorChoice, Format, Globals, PartArgs};

/// Spatial data contracts: kinds, verdicts, windows, validation and sunset notices.
#[derive(Debug, Parser)]
#[command(name = "contracts", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub globals: Globals,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Init(init::Args),
    Diff(diff::Args),
    Propose(propose::Args),
    Check(check::Args),
    Status(status::Args),
    Log(log::Args),
    Show(show::Args),
    Sunset(sunset::Args),
    Profile(profile::Args),
    Validate(validate::Args),
    Advisory(advisory::Args),
    Backtest(backtest::Args),
    CanRetire(can_retire::Args),
    CanRemove(can_remove::Args),
    New(new::Args),
    Consumers(consumers::Args),
    Notify(notify::Args),
    Timeline(timeline::Args),
    Consumption(consumption::GroupArgs),
    Site(site::Args),
    Completions(completions::Args),
    Man(completions::ManArgs),
    Schema(schema::Args),
    Export(export::Args),
    Import(import::Args),
    Waive(waive::Args),
    Unwaive(unwaive::Args),
    Waivers(waivers::Args),
    Review(review::Args),
}

impl Command {
    /// The command's name as typed.
    fn name(&self) -> &'static str {
        match self {
            Command::Init(_) => "init",
            Command::Diff(_) => "diff",
            Command::Propose(_) => "propose",
            Command::Check(_) => "check",
            Command::Status(_) => "status",
            Command::Log(_) => "log",
            Command::Show(_) => "show",
            Command::Sunset(_) => "sunset",
            Command::Profile(_) => "profile",
            Command::Validate(_) => "validate",
            Command::Advisory(_) => "advisory",
            Command::Backtest(_) => "backtest",
            Command::CanRetire(_) => "can-retire",
            Command::CanRemove(_) => "can-remove",
            Command::New(_) => "new",
            Command::Consumers(_) => "consumers",
            Command::Notify(_) => "notify",
            Command::Timeline(_) => "timeline",
            Command::Consumption(_) => "consumption",
            Command::Site(_) => "site",
            Command::Completions(_) => "completions",
            Command::Man(_) => "man",
            Command::Schema(_) => "schema",
            Command::Export(_) => "export",
            Command::Import(_) => "import",
            Command::Waive(_) => "waive",
            Command::Unwaive(_) => "unwaive",
            Command::Waivers(_) => "waivers",
            Command::Review(_) => "review",
        }
    }

    /// The output formats each command speaks, in one table: a command is never reached with
    /// a format it does not render. (`propose` speaks github and sarif with `--dry-run` only,
    /// which it checks itself.)
    fn formats(&self) -> &'static [Format] {
        use Format::*;
        match self {
            Command::Validate(_) => &[Text, Json, Junit, Github, Sarif],
            Command::Check(_) | Command::Diff(_) | Command::Propose(_) => {
                &[Text, Json, Github, Sarif]
            }
            Command::Review(_) => &[Text, Json, Markdown],
            // A draft is TOML: there is no JSON of it to give.
            Command::Import(_) => &[Text],
            _ => &[Text, Json],
        }
    }

    /// Refuse a format the command does not speak (exit 2), saying which commands speak it.
    fn refuse_format(&self, format: Format) -> Result<(), CommandError> {
        let speaks = self.formats();
        if speaks.contains(&format) {
            return Ok(());
        }
        let names: Vec<String> = speaks
            .iter()
            .map(|f| format!("{f:?}").to_lowercase())
            .collect();
        let elsewhere = match format {
            Format::Junit => "junit is for `validate`",
            Format::Markdown => "markdown is for `review`",
            _ => "github and sarif are for `check`, `validate`, `diff` and `propose --dry-run`",
        };
        Err(CommandError::input(format!(
            "`{}` speaks --format {}; {elsewhere}",
            self.name(),
            names.join(", ")
        )))
    }
}

/// Run the command line and turn the outcome into an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with success, usage errors to stderr.
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let printer = output::Printer::new(cli.globals.quiet, cli.globals.color.resolve());
    let ctx = match Context::new(&cli.globals, printer.clone()) {
        Ok(ctx) => ctx,
        Err(e) => {
            out_err(&printer, &e);
            return e.kind.exit_code();
        }
    };
    if let Err(e) = cli.command.refuse_format(cli.globals.format) {
        out_err(&printer, &e);
        return e.kind.exit_code();
    }
    let result = match &cli.command {
        Command::Init(args) => init::run(&ctx, args),
        Command::Diff(args) => diff::run(&ctx, args),
        Command::Propose(args) => propose::run(&ctx, args),
        Command::Check(args) => check::run(&ctx, args),
        Command::Status(args) => status::run(&ctx, args),
        Command::Log(args) => log::run(&ctx, args),
        Command::Show(args) => show::run(&ctx, args),
        Command::Sunset(args) => sunset::run(&ctx, args),
        Command::Profile(args) => profile::run(&ctx, args),
        Command::Validate(args) => validate::run(&ctx, args),
        Command::Advisory(args) => advisory::run(&ctx, args),
        Command::Backtest(args) => backtest::run(&ctx, args),
        Command::CanRetire(args) => can_retire::run(&ctx, args),
        Command::CanRemove(args) => can_remove::run(&ctx, args),
        Command::New(args) => new::run(&ctx, args),
        Command::Consumers(args) => consumers::run(&ctx, args),
        Command::Notify(args) => notify::run(&ctx, args),
        Command::Timeline(args) => timeline::run(&ctx, args),
        Command::Consumption(args) => consumption::run_group(&ctx, args),
        Command::Site(args) => site::run(&ctx, args),
        Command::Completions(args) => completions::run(&ctx, args),
        Command::Man(args) => completions::run_man(&ctx, args),
        Command::Schema(args) => schema::run(&ctx, args),
        Command::Export(args) => export::run(&ctx, args),
        Command::Import(args) => import::run(&ctx, args),
        Command::Waive(args) => waive::run(&ctx, args),
        Command::Unwaive(args) => unwaive::run(&ctx, args),
        Command::Waivers(args) => waivers::run(&ctx, args),
        Command::Review(args) => review::run(&ctx, args),
    };
    match result {
        Ok(outcome) => outcome.exit_code(),
        Err(e) => {
            out_err(&printer, &e);
            e.kind.exit_code()
        }
    }
}

/// The error, its causes and its hints, on stderr, `--quiet` or not.
fn out_err(p: &output::Printer, e: &CommandError) {
    errln!(p, "{}", e.render().trim_end());
}

#[cfg(test)]
mod layering {
    //! A command imports the shared CLI infrastructure and the library, never another
    //! command: what two commands share is a domain query (the library) or a rendering
    //! helper (`render`, or `output`). The test reads the text of every `src/cli/*.rs`.

    use std::collections::BTreeSet;
    use std::path::Path;

    /// The files every command may import: the context, the output, the errors, the global
    /// flags and argument types (`flags`), and this file.
    const SHARED: &[&str] = &["context", "output", "error", "flags", "mod"];

    /// The modules a `cli/` file's text names through `super::` or `crate::cli::`, including
    /// the names inside a `use super::{...}` group.
    fn named_modules(text: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for prefix in ["super::", "crate::cli::"] {
            let mut rest = text;
            while let Some(i) = rest.find(prefix) {
                rest = &rest[i + prefix.len()..];
                if let Some(group) = rest.strip_prefix('{') {
                    let end = group.find('}').unwrap_or(group.len());
                    for item in group[..end].split(',') {
                        let name: String = item
                            .trim()
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        out.insert(name);
                    }
                } else {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    out.insert(name);
                }
            }
        }
        out
    }

    /// Every (file, command module) arrow between the files of `src/cli/`. A folder
    /// (`output/`) is one module: each `.rs` file in it, at any depth, is read as its text.
    fn arrows(dir: &Path) -> Vec<(String, String)> {
        fn rs_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    rs_files(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let mut modules: Vec<(String, Vec<std::path::PathBuf>)> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                let path = e.unwrap().path();
                let name = path.file_name()?.to_string_lossy().into_owned();
                if path.is_dir() {
                    let mut files = Vec::new();
                    rs_files(&path, &mut files);
                    Some((name, files))
                } else {
                    let stem = name.strip_suffix(".rs")?.to_string();
                    Some((stem, vec![path]))
                }
            })
            .collect();
        modules.sort();
        let commands: BTreeSet<&str> = modules
            .iter()
            .map(|(m, _)| m.as_str())
            .filter(|f| !SHARED.contains(f))
            .collect();
        let mut out = Vec::new();
        for (f, files) in modules.iter().filter(|(f, _)| f.as_str() != "mod") {
            for file in files {
                let text = std::fs::read_to_string(file).unwrap();
                for m in named_modules(&text) {
                    if m != *f && commands.contains(m.as_str()) {
                        out.push((f.clone(), m));
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    #[test]
    fn no_command_imports_another_command() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
        let found = arrows(&dir);
        assert!(
            found.is_empty(),
            "cli files that name another command module (move the shared code into the \
             library, or its rendering into src/render or cli/output/): {found:?}"
        );
    }

    #[test]
    fn the_guard_sees_each_way_of_naming_a_module() {
        let text = "use super::{status, Context};\nuse super::log::entries;\n\
                    let x = crate::cli::site::run(); let y = super::output::key(\"a\");";
        let names = named_modules(text);
        for m in ["status", "Context", "log", "site", "output"] {
            assert!(names.contains(m), "{m} in {names:?}");
        }
        assert!(!names.contains("entries"));
    }

    #[test]
    fn the_guard_fails_on_an_arrow() {
        let dir = std::env::temp_dir().join(format!("contracts-layering-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mod.rs"), "mod a;\nmod b;\nmod output;\n").unwrap();
        std::fs::write(
            dir.join("a.rs"),
            "use super::b::thing;\nuse super::output::key;\n",
        )
        .unwrap();
        std::fs::write(dir.join("b.rs"), "use super::{Context, Outcome};\n").unwrap();
        std::fs::write(dir.join("output.rs"), "").unwrap();
        let found = arrows(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found, vec![("a".to_string(), "b".to_string())]);
    }

    #[test]
    fn the_guard_reads_the_files_of_a_folder_module() {
        let dir =
            std::env::temp_dir().join(format!("contracts-layering-folder-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("output")).unwrap();
        std::fs::write(dir.join("mod.rs"), "mod a;\nmod output;\n").unwrap();
        std::fs::write(dir.join("a.rs"), "use super::output::key;\n").unwrap();
        std::fs::write(dir.join("output").join("mod.rs"), "mod fit;\n").unwrap();
        std::fs::write(
            dir.join("output").join("fit.rs"),
            "use crate::cli::a::thing;\n",
        )
        .unwrap();
        let found = arrows(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found, vec![("output".to_string(), "a".to_string())]);
    }
}
