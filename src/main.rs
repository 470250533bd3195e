#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    contracts::cli::main()
}
