use clap::CommandFactory;

use super::{Cli, CommandError, Context, Outcome};

/// Print a completion script for SHELL on stdout, generated from this build's own command
/// line, e.g. `contracts completions bash > /etc/bash_completion.d/contracts`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    ctx.refuse_junit("completions")?;
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "contracts", &mut out);
    write_out(&out)
}

/// Print the man page, contracts(1), as roff on stdout, e.g.
/// `contracts man > /usr/local/share/man/man1/contracts.1`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {}

pub fn run_man(ctx: &Context, _args: &ManArgs) -> Result<Outcome, CommandError> {
    ctx.refuse_junit("man")?;
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(|e| CommandError::environment(format!("cannot render the man page: {e}")))?;
    write_out(&out)
}

fn write_out(bytes: &[u8]) -> Result<Outcome, CommandError> {
    let text = String::from_utf8_lossy(bytes);
    outln!("{}", text.trim_end());
    Ok(Outcome::Clean)
}
