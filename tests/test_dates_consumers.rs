//! Issue 9 on the consumer side, through the real binary: a read of a version the store does
//! not have, JSON escapes in the log, gzipped logs, and files the scan cannot read.

use crate::common::world;
use crate::common::Rows;

use std::io::Write as _;

use world::World;

/// (consumer, status, line, version, unknown_version) of one standing.
type Row = (String, String, Option<u64>, Option<String>, Option<String>);

/// Every standing, sorted.
fn standings(run: &world::Run) -> Vec<Row> {
    let mut out = world::standings(run, |c| {
        (
            c["consumer"].as_str().unwrap().to_string(),
            c["status"].as_str().unwrap().to_string(),
            c["line"].as_u64(),
            world::text(c, "version"),
            world::text(c, "unknown_version"),
        )
    });
    out.sort();
    out
}

fn of<'a>(all: &'a [Row], consumer: &str) -> &'a Row {
    all.iter()
        .find(|s| s.0 == consumer)
        .unwrap_or_else(|| panic!("no {consumer} in {all:#?}"))
}

#[test]
fn a_read_of_a_version_the_store_lacks_is_unknown_version_not_a_migration() {
    let w = World::new(25);
    w.append(
        "consumption/reads.jsonl",
        "{\"at\":\"2026-11-29T01:00:00Z\",\"consumer\":\"flood-model\",\"dataset\":\"roads\",\"contract\":\"7.0.0\"}\n",
    );
    let run = w.consumers_json("2026-11-29");
    let all = standings(&run);
    assert_eq!(
        of(&all, "flood-model"),
        &(
            "flood-model".to_string(),
            "unknown-version".to_string(),
            Some(1),
            Some("1.1.0".to_string()),
            Some("7.0.0".to_string())
        )
    );
    let json = run.json();
    assert_eq!(json["unknown_version"], 1);
    // flood-model (known on line 1) and atlas are still on line 1.
    assert_eq!(json["lines"][0]["still_on"], 2);
    assert_eq!(json["lines"][0]["unknown_version"], 1);
    run.assert_stderr_has("consumer `flood-model` read version 7.0.0, which roads does not have; its last read of a known version is 1.1.0 (line 1)");
    // notify still writes to it about line 1 (47 days before 2027-01-15: the 60-day notice).
    let run = w.run("2026-11-29", &["--format", "json", "notify", "--dry-run"]);
    run.assert_code(0);
    let plan = run.json();
    let flood = plan
        .rows()
        .find(|n| n["consumer"] == "flood-model")
        .unwrap_or_else(|| panic!("no notice for flood-model: {plan:#?}"));
    assert_eq!(flood["line"], 1);
    assert_eq!(flood["reads_version"], "1.1.0");
    // status counts it as still on line 1.
    let status = w
        .run("2026-11-29", &["--format", "json", "status", "roads"])
        .json();
    assert_eq!(status[0]["consumers_still_on"], 2);
}

#[test]
fn an_unknown_version_with_no_known_read_says_why_it_is_not_told() {
    let w = World::new(25);
    // archive was silent; its only read is of a version that does not exist.
    w.append(
        "consumption/reads.jsonl",
        "{\"at\":\"2026-11-29T01:00:00Z\",\"consumer\":\"archive\",\"dataset\":\"roads\",\"contract\":\"7.0.0\"}\n",
    );
    let run = w.run("2026-11-29", &["--format", "json", "notify", "--dry-run"]);
    run.assert_code(0);
    run.assert_stderr_has("consumer `archive` read version 7.0.0, which roads does not have, and no known version in the lookback: its line is unknown");
    assert!(!run.json().rows().any(|n| n["consumer"] == "archive"));
}

#[test]
fn a_read_spelled_with_json_escapes_is_the_same_read() {
    let w = World::new(25);
    // router moved to 2.0.0 on 2026-11-25; a later read of 1.1.0 spelled with escapes puts
    // it back on line 1.
    w.append(
        "consumption/reads.jsonl",
        "{\"at\":\"2026-11-29T02:00:00Z\",\"consumer\":\"r\\u006futer\",\"dataset\":\"r\\u006fads\",\"contract\":\"1.1.0\"}\n",
    );
    let run = w.consumers_json("2026-11-29");
    let all = standings(&run);
    assert_eq!(of(&all, "router").1, "still-on");
    assert_eq!(of(&all, "router").3.as_deref(), Some("1.1.0"));
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn gzipped_logs_are_read_and_unreadable_files_are_reported_and_skipped() {
    let w = World::new(25);
    w.write(
        "contracts.toml",
        &world::config(25).replace(
            r#"sources = ["consumption/*.jsonl", "consumption/*.csv"]"#,
            r#"sources = ["consumption/*"]"#,
        ),
    );
    let dir = w.root().join("consumption");
    std::fs::write(
        dir.join("archive.jsonl.gz"),
        gzip(b"{\"at\":\"2026-11-28T03:00:00Z\",\"consumer\":\"archive\",\"dataset\":\"roads\",\"contract\":\"1.0.0\"}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("late.csv.gz"),
        gzip(b"at,consumer,dataset,contract\n2026-11-29T03:00:00Z,router,roads,1.1.0\n"),
    )
    .unwrap();
    // Named gzip, but plain text: a corrupt stream.
    std::fs::write(dir.join("broken.jsonl.gz"), "not gzip\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "who reads what\n").unwrap();
    let run = w.consumers_json("2026-11-29");
    let all = standings(&run);
    assert_eq!(of(&all, "archive").1, "still-on");
    assert_eq!(of(&all, "archive").3.as_deref(), Some("1.0.0"));
    assert_eq!(of(&all, "router").1, "still-on");
    assert_eq!(of(&all, "flood-model").1, "still-on");
    let err = run.stderr();
    assert!(
        err.contains("warning: consumption/broken.jsonl.gz: cannot be read to its end: "),
        "{err}"
    );
    assert!(
        err.contains("warning: consumption/notes.txt: ") && err.contains("must end in .jsonl"),
        "{err}"
    );
}

#[test]
fn uncommitted_store_files_are_named_and_not_used() {
    let w = World::new(25);
    // An uncommitted registry that drops every consumer, and an uncommitted contract.
    std::fs::write(w.root().join("consumers.toml"), "").unwrap();
    std::fs::write(
        w.root().join("contracts/roads/3.0.0.toml"),
        "dataset = \"roads\"\nversion = \"3.0.0\"\n",
    )
    .unwrap();
    let run = w.consumers_json("2026-11-29");
    let err = run.stderr();
    assert!(
        err.contains("warning: uncommitted changes to consumers.toml are not used; commit them"),
        "{err}"
    );
    assert!(
        err.contains("warning: uncommitted changes to contracts/roads/3.0.0.toml are not used"),
        "{err}"
    );
    // The committed registry is the one used: flood-model is still registered.
    let all = standings(&run);
    assert_eq!(of(&all, "flood-model").1, "still-on");
    // The consumption log is read from the work tree and is never warned about.
    assert!(!err.contains("consumption/"), "{err}");
    // A staged but uncommitted config counts too.
    std::fs::write(
        w.root().join("contracts.toml"),
        world::config(26).replace("lookback_days = 365", "lookback_days = 7"),
    )
    .unwrap();
    w.git(&["add", "contracts.toml"]);
    let run = w.run("2026-11-29", &["status"]);
    run.assert_stderr_has(
        "warning: uncommitted changes to contracts.toml are not used; commit them",
    );
}

#[test]
fn config_values_refused_after_parsing_are_located() {
    let w = World::new(25);
    // Line numbers are counted in the text written (line_of), so a change to world::config
    // moves the expectation with it; the columns are worked out by hand.
    let config = world::config(25).replace(
        "from = \"Data Platform <data-platform@example.org>\"",
        "from = \"not a mailbox\"",
    ) + "\n[store]\nsince = \"no-such-rev\"\n";
    w.write("contracts.toml", &config);
    let run = w.run("2026-11-29", &["notify", "--dry-run"]);
    run.assert_code(2);
    run.assert_stderr_has(&format!(
        "contracts.toml:{}:8: ",
        world::line_of(&config, "from = ")
    ));
    let since_line = world::line_of(&config, "since = ");
    let run = w.run("2026-11-29", &["check"]);
    run.assert_code(2);
    run.assert_stderr_has(&format!("contracts.toml:{since_line}:9: [store] since: "));
    let config = world::config(25).replace("host = \"127.0.0.1\"", "host = \"smtp.example.org\"");
    w.write("contracts.toml", &config);
    let run = w.run("2026-11-29", &["notify", "--dry-run"]);
    run.assert_code(2);
    run.assert_stderr_has(&format!(
        "contracts.toml:{}:8: ",
        world::line_of(&config, "host = ")
    ));
    // A bound out of range points at its value: `lookback_days = ` is 16 characters.
    let config = world::config(25).replace("lookback_days = 365", "lookback_days = 0");
    w.write("contracts.toml", &config);
    let run = w.run("2026-11-29", &["status"]);
    run.assert_code(2);
    run.assert_stderr_has(&format!(
        "contracts.toml:{}:17: [consumption] lookback_days",
        world::line_of(&config, "lookback_days = ")
    ));
}
