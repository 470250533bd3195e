//! Where a Rust file's test module begins, for the guards that read the sources as text: the
//! line-count guard of the library (`src/lib.rs`, which includes this file by its path) and
//! the guard against circles of imports (`tests/test_file_circles.rs`). One rule, so the two
//! never disagree on what is a file's code.

/// The index of the `#[cfg(test)]` line at the margin that a `mod` line follows (the file's
/// test module), or `lines.len()` when there is none. An inner `#[cfg(test)]` on an item is the
/// file's code: it does not end it.
pub fn test_module_start(lines: &[&str]) -> usize {
    lines
        .windows(2)
        .position(|w| {
            w[0].trim_end() == "#[cfg(test)]"
                && w[1]
                    .trim_start_matches("pub(super) ")
                    .trim_start_matches("pub(crate) ")
                    .trim_start_matches("pub ")
                    .starts_with("mod ")
        })
        .unwrap_or(lines.len())
}
