//! No two files of the library import each other, directly or round a longer circle (issue 40).
//! A reader should be able to tell which file to read first, and what a change to one can
//! break; a circle of imports says neither.
//!
//! The graph is read from the sources as text: every `use` (but `pub use`, a module's face,
//! not its dependency) and every `crate::…`, `super::…` and `self::…` path names the file of
//! the longest module prefix it reaches. A name a module re-exports (`pub use child::Item`)
//! is followed to the file that defines it, so a child naming its parent's re-export of a
//! sibling depends on the sibling, not on the parent. Test modules do not count.
//!
//! The circles that were there when this guard was written are listed in [`KNOWN`], each to be
//! broken; the test fails on a new circle, and on a listed one that is gone (so the list only
//! shrinks).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The circles found when the guard came, as sorted module paths. Each was a debt, broken by
/// moving what both sides need into the lower file; none is left, and the list stays empty.
const KNOWN: &[&[&str]] = &[];

type Module = Vec<String>;

/// Every module file under `src/`, by its module path (`notify/run/mod.rs` is `notify/run`).
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<Module, PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("src/ is readable") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, src, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                let rel = path
                    .strip_prefix(src)
                    .expect("under src")
                    .with_extension("");
                let mut module: Module = rel
                    .iter()
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect();
                if module.last().is_some_and(|l| l == "mod") {
                    module.pop();
                }
                if module == ["lib"] || module == ["main"] {
                    module.clear();
                }
                out.insert(module, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// A file's code up to its test module, without comments and string contents.
fn code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let end = crate::common::test_module::test_module_start(&lines);
    let mut out = String::new();
    for line in &lines[..end] {
        let line = line.split("//").next().unwrap_or("");
        // String literals: their text is not a path.
        let mut in_str = false;
        let mut escaped = false;
        for c in line.chars() {
            match (in_str, c) {
                (true, _) if escaped => escaped = false,
                (true, '\\') => escaped = true,
                (true, '"') => in_str = false,
                (true, _) => {}
                (false, '"') => {
                    in_str = true;
                    out.push('"');
                }
                (false, c) => out.push(c),
            }
        }
        out.push('\n');
    }
    out
}

/// The paths of one `use` tree: `a::{b, c::{d, e as f}}` is `a::b`, `a::c::d`, `a::c::e`.
fn expand(prefix: &[String], tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let base: Vec<String> = tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        let mut parts = Vec::new();
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&inner[start..]);
        let mut full = prefix.to_vec();
        full.extend(base);
        return parts
            .into_iter()
            .filter(|p| !p.trim().is_empty())
            .flat_map(|p| expand(&full, p))
            .collect();
    }
    let tree = tree.split(" as ").next().unwrap_or(tree);
    let mut out = prefix.to_vec();
    out.extend(
        tree.split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from),
    );
    vec![out]
}

struct Graph {
    files: BTreeMap<Module, PathBuf>,
    /// Per module, the names it re-exports and the path each names.
    reexports: BTreeMap<Module, BTreeMap<String, Vec<String>>>,
}

impl Graph {
    /// `segs` named in `module`, made absolute; `None` for a path outside the crate.
    fn absolute(&self, module: &Module, segs: &[String]) -> Option<Vec<String>> {
        let first = segs.first()?;
        let mut cur = module.clone();
        let mut rest = segs;
        match first.as_str() {
            "crate" => return Some(segs[1..].to_vec()),
            "super" | "self" => {
                while let Some(s) = rest.first() {
                    match s.as_str() {
                        "super" => {
                            cur.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
            }
            // A child module named directly (`use post::X` in `webhook/mod.rs`).
            name => {
                let mut child = module.clone();
                child.push(name.to_string());
                if !self.files.contains_key(&child) {
                    return None;
                }
            }
        }
        cur.extend(rest.iter().cloned());
        Some(cur)
    }

    /// The file a path in `module` depends on: the longest module prefix, followed through a
    /// re-export to the file that defines the name.
    fn target(&self, module: &Module, segs: &[String], depth: usize) -> Option<Module> {
        let full = self.absolute(module, segs)?;
        let n = (0..=full.len())
            .rev()
            .find(|&n| self.files.contains_key(&full[..n]))?;
        let file = full[..n].to_vec();
        if depth < 10 {
            if let Some(path) = full
                .get(n)
                .and_then(|name| self.reexports.get(&file)?.get(name))
            {
                if let Some(defined) = self.target(&file, path, depth + 1) {
                    return Some(defined);
                }
            }
        }
        Some(file)
    }
}

fn paths_in(code: &str, reexports_only: bool) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(at) = code[i..].find("use ") {
        let start = i + at;
        i = start + 4;
        // A `use` item starts its line, after at most its visibility.
        let line_start = code[..start].rfind('\n').map_or(0, |n| n + 1);
        let public = match code[line_start..start].trim() {
            "" => false,
            "pub" | "pub(crate)" | "pub(super)" => true,
            _ => continue,
        };
        if public != reexports_only {
            continue;
        }
        let Some(end) = code[i..].find(';') else {
            break;
        };
        out.extend(expand(&[], &code[i..i + end]));
    }
    if !reexports_only {
        for root in ["crate::", "super::", "self::"] {
            let mut j = 0;
            while let Some(at) = code[j..].find(root) {
                let start = j + at;
                j = start + root.len();
                if start > 0
                    && (bytes[start - 1].is_ascii_alphanumeric()
                        || bytes[start - 1] == b'_'
                        || bytes[start - 1] == b':')
                {
                    continue;
                }
                let len = code[start..]
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(code.len() - start);
                let path: Vec<String> = code[start..start + len]
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect();
                out.push(path);
            }
        }
    }
    out
}

/// The circles of imports between files: the strongly connected components of two or more.
fn circles(src: &Path) -> BTreeSet<Vec<String>> {
    let files = modules(src);
    let texts: BTreeMap<Module, String> = files
        .iter()
        .map(|(m, p)| {
            (
                m.clone(),
                code(&std::fs::read_to_string(p).expect("readable")),
            )
        })
        .collect();
    let mut reexports: BTreeMap<Module, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (m, text) in &texts {
        for path in paths_in(text, true) {
            if let Some(name) = path.last().filter(|n| *n != "*") {
                reexports
                    .entry(m.clone())
                    .or_default()
                    .insert(name.clone(), path.clone());
            }
        }
    }
    let graph = Graph { files, reexports };
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, text) in &texts {
        for path in paths_in(text, false) {
            if let Some(to) = graph.target(m, &path, 0) {
                if &to != m && !to.is_empty() {
                    edges.entry(m.clone()).or_default().insert(to);
                }
            }
        }
    }
    strongly_connected(&graph.files.keys().cloned().collect::<Vec<_>>(), &edges)
}

/// Tarjan's components of two or more nodes, each as sorted `a/b` names.
fn strongly_connected(
    nodes: &[Module],
    edges: &BTreeMap<Module, BTreeSet<Module>>,
) -> BTreeSet<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<Module, usize>,
        low: BTreeMap<Module, usize>,
        stack: Vec<Module>,
        on: BTreeSet<Module>,
        next: usize,
        out: BTreeSet<Vec<String>>,
    }
    fn visit(v: &Module, s: &mut State) {
        s.index.insert(v.clone(), s.next);
        s.low.insert(v.clone(), s.next);
        s.next += 1;
        s.stack.push(v.clone());
        s.on.insert(v.clone());
        for w in s.edges.get(v).cloned().unwrap_or_default() {
            if !s.index.contains_key(&w) {
                visit(&w, s);
                let low = s.low[v].min(s.low[&w]);
                s.low.insert(v.clone(), low);
            } else if s.on.contains(&w) {
                let low = s.low[v].min(s.index[&w]);
                s.low.insert(v.clone(), low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(&w);
                let done = &w == v;
                comp.push(w.join("/"));
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.insert(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: BTreeSet::new(),
    };
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(v, &mut s);
        }
    }
    s.out
}

#[test]
fn no_new_circle_of_imports_between_files() {
    // Each crate of the workspace on its own (a crate cannot import its dependents); the
    // scanner's modules are named under its folder.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = circles(&root.join("src"));
    for c in circles(&root.join("crates/scan/src")) {
        found.insert(c.iter().map(|m| format!("crates/scan/{m}")).collect());
    }
    let known: BTreeSet<Vec<String>> = KNOWN
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty(),
        "files that import each other (move what both need into the lower one): {new:#?}"
    );
    assert!(
        gone.is_empty(),
        "circles that are broken now: delete them from KNOWN: {gone:#?}"
    );
}

/// The guard sees a circle through a re-export and ignores a parent's face.
#[test]
fn the_guard_finds_a_circle_and_follows_re_exports() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("a folder");
        std::fs::write(p, text).expect("written");
    };
    write("lib.rs", "pub mod a;\npub mod b;\n");
    // A parent re-exporting its children and the children naming each other through it.
    write("a/mod.rs", "mod x;\nmod y;\npub use x::X;\npub use y::Y;\n");
    write("a/x.rs", "pub struct X;\n");
    write("a/y.rs", "use super::X;\npub struct Y(X);\n");
    write("b.rs", "use crate::a::Y;\n");
    assert!(circles(src).is_empty(), "{:?}", circles(src));
    // x now names y back: a circle of two files, found through the parent's re-export.
    write("a/x.rs", "pub struct X(Box<super::Y>);\n");
    let found = circles(src);
    assert_eq!(
        found,
        BTreeSet::from([vec!["a/x".to_string(), "a/y".to_string()]])
    );
}
