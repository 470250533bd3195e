use super::{CommandError, Context, Outcome};

// `import odcs`: an Open Data Contract Standard document as a draft.
mod odcs;

/// Draft a contract from another format (ODCS)
///
/// Read a contract written in another standard's format and print it as a draft that
/// `contracts propose` takes.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    from: From,
}

#[derive(Debug, clap::Subcommand)]
enum From {
    Odcs(odcs::Args),
}

pub fn run(ctx: &Context, args: &Args) -> Result<Outcome, CommandError> {
    match &args.from {
        From::Odcs(a) => odcs::run(ctx, a),
    }
}
