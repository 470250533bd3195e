//! `check` on store files that do not parse: each is a finding (exit 1, with every other
//! finding), and the text output gives every placed finding its `file:line:column`, as the
//! JSON does, with a multi-line message printed whole rather than squashed into a cell.

use crate::common::{Rng, Store};

/// The findings of `check --format json` as (file, line, column), each line and column
/// `None` when the finding has no place.
fn placed(s: &Store) -> Vec<(String, Option<u64>, Option<u64>)> {
    let report = s.json(&["check"]);
    report["findings"]
        .as_array()
        .expect("findings is a list")
        .iter()
        .map(|f| {
            (
                f["file"].as_str().expect("a finding names its file").into(),
                f["line"].as_u64(),
                f["column"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn a_contracts_toml_that_does_not_parse_is_a_finding_not_a_usage_error() {
    let s = Store::new();
    let config = std::fs::read_to_string(s.dir.join("contracts.toml")).unwrap();
    let broken = format!("{config}\nbad = = 1\n");
    let line = broken.lines().count();
    s.commit_file("contracts.toml", broken.as_bytes());
    let run = s.run(&["check"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    run.assert_stdout_has(&format!("contracts.toml:{line}:7"));
    let found = placed(&s);
    assert!(
        found.contains(&("contracts.toml".into(), Some(line as u64), Some(7))),
        "{found:?}"
    );
}

#[test]
fn a_registry_that_is_not_text_is_a_finding_with_the_others() {
    let s = Store::new();
    s.commit_file("consumers.toml", b"\xff\xfe[consumers]\n");
    s.commit_file("history/roads.waivers.toml", b"[[waiver]]\nid = = 1\n");
    let run = s.run(&["check"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let files: Vec<String> = placed(&s).into_iter().map(|(f, _, _)| f).collect();
    assert!(files.contains(&"consumers.toml".to_string()), "{files:?}");
    assert!(
        files.contains(&"history/roads.waivers.toml".to_string()),
        "{files:?}"
    );
}

/// Values a mutation puts where a value was: each is wrong for some key.
const BAD_VALUES: [&str; 8] = [
    "-1",
    "\"\"",
    "[1,",
    "true",
    "2026-13-45",
    "{ x = 1 }",
    "\"EPSG:0\"",
    "1e999",
];

/// One mutant of a contract's text: characters deleted, two keys swapped, or a value
/// replaced by a bad one.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let with_value: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains(" = "))
        .collect();
    match rng.below(3) {
        0 => {
            let chars: Vec<char> = text.chars().collect();
            let at = rng.below(chars.len());
            let len = (1 + rng.below(3usize)).min(chars.len() - at);
            return chars[..at].iter().chain(&chars[at + len..]).collect();
        }
        1 => {
            let (a, b) = (
                with_value[rng.below(with_value.len())],
                with_value[rng.below(with_value.len())],
            );
            let key = |l: &str| l.split(" = ").next().unwrap_or("").to_string();
            let (ka, kb) = (key(&lines[a]), key(&lines[b]));
            lines[a] = lines[a].replacen(&ka, &kb, 1);
            lines[b] = lines[b].replacen(&kb, &ka, 1);
        }
        _ => {
            let i = with_value[rng.below(with_value.len())];
            let key = lines[i].split(" = ").next().unwrap_or("").to_string();
            lines[i] = format!("{key} = {}", BAD_VALUES[rng.below(BAD_VALUES.len())]);
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn every_placed_finding_shows_its_file_line_and_column_in_the_text() {
    const SEED: u64 = 0x00c0_ffee_0044_0308;
    const MUTANTS: usize = 900;
    println!("seed {SEED:#x}, {MUTANTS} mutants");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contracts");
    let mut seeds: Vec<(String, String)> = Vec::new();
    for dataset in ["countries", "cities"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dataset))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            seeds.push((dataset.to_string(), text));
        }
    }
    let s = Store::new();
    // The example store's configuration declares the custom clause kinds its contracts use;
    // its `[store] since` names a commit of this repository, not of the test's store.
    let config = std::fs::read_to_string(root.with_file_name("contracts.toml")).unwrap();
    let config: Vec<&str> = config.lines().filter(|l| !l.starts_with("since")).collect();
    s.commit_file("contracts.toml", config.join("\n").as_bytes());
    let mut rng = Rng(SEED);
    for i in 0..MUTANTS {
        let (dataset, text) = &seeds[rng.below(seeds.len())];
        // Each mutant is a dataset of its own, so every one of them is judged.
        let name = format!("m{i:03}");
        let own = text.replace(&format!("\"{dataset}\""), &format!("\"{name}\""));
        let version = own
            .lines()
            .find_map(|l| l.strip_prefix("version"))
            .and_then(|v| v.split('"').nth(1))
            .unwrap_or("1.0.0")
            .to_string();
        let rel = format!("contracts/{name}/{version}.toml");
        let path = s.dir.join(&rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, mutate(&own, &mut rng)).unwrap();
    }
    s.git(&["add", "-A"]);
    s.git(&["commit", "-qm", "mutated contracts"]);

    let report = s.json(&["check"]);
    let messages: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings is a list")
        .iter()
        .filter_map(|f| f["message"].as_str())
        .collect();
    let found = placed(&s);
    let with_place: Vec<_> = found
        .iter()
        .filter_map(|(f, l, c)| Some(format!("{f}:{}:{}", (*l)?, (*c)?)))
        .collect();
    assert!(
        with_place.len() > MUTANTS / 4,
        "most mutants break a file at a place: {found:?}"
    );
    let text = s.run(&["check"]);
    assert_eq!(text.code, 1, "{}", text.stderr);
    // A place is said where a reader looks for it: at the start of a line (the table's file
    // column, or a message printed whole under the table).
    let lines: Vec<&str> = text.stdout.lines().map(str::trim).collect();
    let missing: Vec<&String> = with_place
        .iter()
        .filter(|p| {
            !lines
                .iter()
                .any(|l| l.starts_with(&format!("{p} ")) || l.starts_with(&format!("{p}:")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "seed {SEED:#x}: {} of {} placed findings have no place in the text: {missing:?}\n{}",
        missing.len(),
        with_place.len(),
        text.stdout
    );
    // Every line of a multi-line message (a quoted source line, its caret) is a line of its
    // own in the text, not run together with the others in one cell.
    let squashed: Vec<&str> = messages
        .iter()
        .flat_map(|m| m.lines().skip(1))
        .filter(|l| {
            !l.trim().is_empty() && !text.stdout.lines().any(|o| o.trim_end() == l.trim_end())
        })
        .collect();
    assert!(
        squashed.is_empty(),
        "seed {SEED:#x}: lines of messages not printed as lines: {squashed:?}\n{}",
        text.stdout
    );
}

#[test]
fn a_consumption_source_whose_glob_is_not_one_is_a_finding_of_contracts_toml() {
    let s = Store::new();
    let config = std::fs::read_to_string(s.dir.join("contracts.toml")).unwrap();
    let bad = config.replace("\"consumption/*.jsonl\"", "\"consumption/[*.jsonl\"");
    assert_ne!(bad, config, "the store's config names the default source");
    s.commit_file("contracts.toml", bad.as_bytes());
    let run = s.run(&["check"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    run.assert_stdout_has("`consumption/[*.jsonl` is not a valid glob");
    let files: Vec<String> = placed(&s).into_iter().map(|(f, _, _)| f).collect();
    assert_eq!(files, vec!["contracts.toml".to_string()]);
}
