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
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "contracts", &mut out);
    write_out(ctx, &out)
}

/// Print the man page, contracts(1), as roff on stdout, e.g.
/// `contracts man > /usr/local/share/man/man1/contracts.1`; with --out DIR, write it and one
/// page per subcommand (`contracts-propose.1`, …) into DIR.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write contracts.1 and a contracts-<command>.1 for every subcommand into this directory
    #[arg(long, value_name = "DIR")]
    out: Option<std::path::PathBuf>,
}

pub fn run_man(ctx: &Context, args: &ManArgs) -> Result<Outcome, CommandError> {
    let render = |cmd: clap::Command| -> Result<Vec<u8>, CommandError> {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd)
            .render(&mut out)
            .map_err(|e| CommandError::environment(format!("cannot render the man page: {e}")))?;
        Ok(out)
    };
    let Some(dir) = &args.out else {
        return write_out(ctx, &render(Cli::command())?);
    };
    let fail = |e: std::io::Error| CommandError::environment(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(fail)?;
    let top = Cli::command();
    std::fs::write(dir.join("contracts.1"), render(top.clone())?).map_err(fail)?;
    let mut pages = 1;
    for sub in top.get_subcommands() {
        let name = format!("contracts-{}", sub.get_name());
        let page = sub.clone().name(name.clone());
        std::fs::write(dir.join(format!("{name}.1")), render(page)?).map_err(fail)?;
        pages += 1;
    }
    talkln!(ctx, "wrote {pages} man page(s) to {}", dir.display());
    Ok(Outcome::Clean)
}

fn write_out(ctx: &Context, bytes: &[u8]) -> Result<Outcome, CommandError> {
    let text = String::from_utf8_lossy(bytes);
    outln!(ctx, "{}", text.trim_end());
    Ok(Outcome::Clean)
}
