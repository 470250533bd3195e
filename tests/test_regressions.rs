//! Every saved proptest regression file belongs to a file that still has property tests
//! (issue 44, item 5): proptest finds a file's saved cases by the source file's path, so a
//! rename of the source leaves them behind, never replayed again, and nothing says so.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The source file whose saved cases `regressions` holds: `proptest-regressions/a/b.txt` is
/// `src/a/b.rs`; `tests/x.proptest-regressions` is `tests/x.rs`.
fn source_of(regressions: &Path) -> PathBuf {
    let root = root();
    let rel = regressions.strip_prefix(&root).unwrap();
    if let Ok(under) = rel.strip_prefix("proptest-regressions") {
        root.join("src").join(under.with_extension("rs"))
    } else {
        let name = rel
            .to_string_lossy()
            .replace(".proptest-regressions", ".rs");
        root.join(name)
    }
}

#[test]
fn every_saved_regression_file_belongs_to_a_file_with_property_tests() {
    let mut saved = Vec::new();
    files_under(&root().join("proptest-regressions"), &mut saved);
    for e in std::fs::read_dir(root().join("tests")).unwrap().flatten() {
        if e.path()
            .to_string_lossy()
            .ends_with(".proptest-regressions")
        {
            saved.push(e.path());
        }
    }
    assert!(!saved.is_empty(), "no saved regression file found at all");
    let orphans: Vec<String> = saved
        .iter()
        .filter(|f| {
            let source = source_of(f);
            !std::fs::read_to_string(&source).is_ok_and(|text| text.contains("proptest!"))
        })
        .map(|f| format!("{} (for {})", f.display(), source_of(f).display()))
        .collect();
    assert!(
        orphans.is_empty(),
        "saved cases no test replays: move them to the regression file of the tests' new \
         source file: {orphans:#?}"
    );
}
