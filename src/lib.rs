//! `contracts`: spatial data contracts, their kinds and verdicts, an append-only history in
//! git, validation of real releases against every live contract, and the sunset notifier.
#![forbid(unsafe_code)]

/// The store audit behind `contracts check`: every finding, from every room's files.
pub mod audit;
/// The command line: clap types, one file per subcommand, output and exit codes.
pub mod cli;
/// The consumer registry, the consumption log and who is still on which line.
pub mod consumers;
/// What the timeline and the site show of a dataset, gathered from every room below.
pub mod gather;
/// The pure domain: contracts, kinds, containment, verdicts, bumps, windows.
pub mod model;
/// The sunset notifier: plan, render, send, and the ledger of sent notices.
pub mod notify;
/// Object storage: the one client that releases and consumption sources share.
pub mod objects;
/// Spatial data releases: streaming readers, the mergeable profile, validation and records.
pub mod release;
/// Pictures, pages and schemas: the timeline SVG, the static HTML registry, the CI formats and
/// the JSON Schemas of the file formats (pure renderers).
pub mod render;
/// The pauses between attempts of every retry loop (store locks, moved HEAD, webhooks).
pub mod retry;
/// The git store: contracts, history and ledgers, read at HEAD and written in one commit.
pub mod store;

/// Every `.rs` file under `src/` and `crates/*/src/`, for the guard tests that read the
/// sources as text.
#[cfg(test)]
pub(crate) fn source_files() -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).expect("src/ is readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    walk(&root.join("src"), &mut out);
    // The workspace's other crates (crates/*/src) are held to the same rules.
    for e in std::fs::read_dir(root.join("crates")).expect("crates/ is readable") {
        walk(&e.expect("entry").path().join("src"), &mut out);
    }
    out
}

/// The rooms and the arrows between them: each room may name only the rooms listed for it,
/// so a dependency that runs back up (a cycle, or `model` reaching for anything) fails here
/// before it settles in. `docs/src/development.md` draws the same table.
// Where a file's test module begins: one rule for the line-count guard below and for
// tests/test_file_circles.rs, which the library cannot see, so the file lives there.
#[cfg(test)]
#[path = "../tests/common/test_module.rs"]
mod test_module;

#[cfg(test)]
mod rooms {
    use super::test_module;

    const MAY_USE: &[(&str, &[&str])] = &[
        ("model", &[]),
        ("objects", &[]),
        ("retry", &[]),
        ("store", &["model", "retry"]),
        ("release", &["model", "objects"]),
        ("consumers", &["model", "objects", "store"]),
        ("render", &["model", "consumers", "release"]),
        (
            "notify",
            &["model", "consumers", "release", "render", "retry", "store"],
        ),
        (
            "audit",
            &["model", "consumers", "release", "store", "notify"],
        ),
        (
            "gather",
            &["model", "consumers", "release", "render", "store", "notify"],
        ),
        (
            "cli",
            &[
                "model",
                "objects",
                "store",
                "release",
                "consumers",
                "render",
                "notify",
                "audit",
                "gather",
            ],
        ),
    ];

    /// The code of a file before its tests, without comment lines.
    fn code(text: &str) -> String {
        // The file's test module: `#[cfg(test)]` at the margin, then a `mod` line. An inner
        // `#[cfg(test)]` on an item is the file's code, and counts.
        let lines: Vec<&str> = text.lines().collect();
        let end = test_module::test_module_start(&lines);
        lines[..end]
            .iter()
            .copied()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `crate::<room>` named in `code`, as a whole path segment.
    fn names(code: &str, room: &str) -> bool {
        let needle = format!("crate::{room}");
        code.match_indices(&needle).any(|(i, _)| {
            let next = code[i + needle.len()..].chars().next();
            !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    }

    #[test]
    fn every_room_names_only_the_rooms_below_it() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let all = super::source_files();
        let mut wrong = Vec::new();
        for path in &all {
            // Another crate of the workspace cannot name this one's rooms at all.
            let Ok(rel) = path.strip_prefix(&src) else {
                continue;
            };
            let first = rel.components().next().expect("a component");
            let room = first
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string();
            let Some((_, allowed)) = MAY_USE.iter().find(|(r, _)| *r == room) else {
                continue; // lib.rs, main.rs
            };
            let text = code(&std::fs::read_to_string(path).expect("readable"));
            for (other, _) in MAY_USE {
                if *other != room && !allowed.contains(other) && names(&text, other) {
                    wrong.push(format!("{} names {other}", rel.display()));
                }
            }
        }
        assert!(wrong.is_empty(), "arrows that run back up: {wrong:#?}");
    }

    /// How many code lines a file may hold before its tests: past that, a file holds more
    /// than one idea, and the next reader has to find the seams.
    const MAX_CODE_LINES: usize = 600;

    /// Code lines: neither blank nor only a comment, before the file's tests.
    fn code_lines(text: &str) -> usize {
        code(text).lines().filter(|l| !l.trim().is_empty()).count()
    }

    #[test]
    fn no_file_holds_more_than_its_share_of_code() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut over: Vec<String> = super::source_files()
            .iter()
            .filter_map(|path| {
                let n = code_lines(&std::fs::read_to_string(path).expect("readable"));
                let rel = path.strip_prefix(root).expect("in the workspace").display();
                (n > MAX_CODE_LINES).then(|| format!("{rel}: {n} code lines"))
            })
            .collect();
        over.sort();
        assert!(
            over.is_empty(),
            "files over {MAX_CODE_LINES} code lines before their tests (split them by idea): \
             {over:#?}"
        );
    }

    /// The module names of the library's files, each with where it stands: a file's stem
    /// (`mod.rs` names its folder, which is counted once as a folder) and every folder. The
    /// files of `cli/` keep their commands' names and are left out.
    fn module_names(src: &std::path::Path) -> Vec<(String, String)> {
        let mut out = std::collections::BTreeSet::new();
        for path in super::source_files() {
            let Ok(rel) = path.strip_prefix(src) else {
                continue;
            };
            if rel.starts_with("cli") {
                continue;
            }
            let parts: Vec<String> = rel
                .iter()
                .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            // Every folder on the way, and the file (a `foo.rs` beside its `foo/` is the same
            // module as the folder: one entry).
            for i in 0..parts.len() {
                let name = &parts[i];
                if matches!(name.as_str(), "mod" | "lib" | "main") {
                    continue;
                }
                out.insert((name.clone(), parts[..=i].join("/")));
            }
        }
        out.into_iter().collect()
    }

    #[test]
    fn no_two_library_modules_share_a_name() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut by_name: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for (name, place) in module_names(&src) {
            by_name.entry(name).or_default().push(place);
        }
        let shared: Vec<_> = by_name.into_iter().filter(|(_, p)| p.len() > 1).collect();
        assert!(
            shared.is_empty(),
            "library modules that share a name (rename one so the name says which): {shared:#?}"
        );
    }

    /// The files, relative to the workspace, whose code (before their tests) has a line for
    /// which `hit` holds.
    fn files_where(hit: impl Fn(&str) -> bool) -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out: Vec<String> = super::source_files()
            .iter()
            .filter(|p| {
                code(&std::fs::read_to_string(p).expect("readable"))
                    .lines()
                    .any(&hit)
            })
            .map(|p| {
                p.strip_prefix(root)
                    .expect("in the workspace")
                    .display()
                    .to_string()
            })
            .collect();
        out.sort();
        out
    }

    /// A line that declares the pgaudit variant of an enum: every enum of source formats has
    /// one, so a second such enum is a second list of the formats.
    fn declares_a_format_enum(line: &str) -> bool {
        matches!(line.trim(), "Pgaudit," | "Pgaudit")
    }

    /// A line that reads the `{line}` placeholder of a `match` template: a second such line is
    /// a second template parser.
    fn parses_a_template(line: &str) -> bool {
        line.contains("\"line\" =>") || line.contains("| \"line\"")
    }

    /// One enum of formats, one template parser: each `[[consumption.source]]` is parsed once,
    /// by the code every reader shares.
    #[test]
    fn one_enum_of_formats_and_one_template_parser() {
        assert_eq!(
            files_where(declares_a_format_enum),
            ["crates/scan/src/format.rs"]
        );
        assert_eq!(
            files_where(parses_a_template),
            ["crates/scan/src/access/template.rs"]
        );
        // Each rule sees what it is for: the enum and the parser this guard replaced.
        assert!("pub enum AccessFormat {\n    S3Access,\n    Pgaudit,\n}"
            .lines()
            .any(declares_a_format_enum));
        assert!(
            "        if !matches!(name, \"dataset\" | \"contract\" | \"line\") {"
                .lines()
                .any(parses_a_template)
        );
        assert!(!"            LogFormat::Pgaudit => Some(\"user_name\"),"
            .lines()
            .any(declares_a_format_enum));
    }

    /// One style of module file: a module with submodules is a folder with its `mod.rs`, never
    /// `foo.rs` beside a `foo/`, so a reader finds a module's root in one place.
    #[test]
    fn a_module_with_submodules_is_a_folder_with_its_mod_rs() {
        let beside: Vec<String> = super::source_files()
            .iter()
            .filter(|p| p.with_extension("").is_dir())
            .map(|p| p.display().to_string())
            .collect();
        assert!(
            beside.is_empty(),
            "files beside a folder of the same name (move each to <folder>/mod.rs): {beside:#?}"
        );
    }

    #[test]
    fn code_lines_leave_out_blanks_comments_and_tests() {
        let text = "//! A room.\n\nfn a() {}\n    // why\n/// doc\nfn b() {}\n\
                    #[cfg(test)]\nmod tests {}\n";
        assert_eq!(code_lines(text), 2);
        // An item of the file kept for its tests alone is still the file's code: the count
        // runs to the test module, not to the first `#[cfg(test)]` (issue 40).
        let text = "fn a() {}\n    #[cfg(test)]\n    fn described() {}\nfn b() {}\n\
                    #[cfg(test)]\npub(super) mod tests {\n    fn t() {}\n}\n";
        assert_eq!(code_lines(text), 4);
    }

    #[test]
    fn the_guard_sees_a_path_and_not_a_longer_name() {
        assert!(names("use crate::store::Store;", "store"));
        assert!(!names("use crate::storehouse::X;", "store"));
        assert!(!names(&code("// crate::store in a comment"), "store"));
    }
}
