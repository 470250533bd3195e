#![forbid(unsafe_code)]

/// mimalloc, not the system's allocator: reads are parsed on every core and folded on one, so
/// most strings are freed by a thread that did not allocate them, which glibc's allocator
/// pays for in locks and consolidation (about a quarter of an access-log scan's CPU time).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    contracts::cli::main()
}
