//! `contracts consumers` end to end on a store laid out by hand.

use crate::common::world;
use crate::common::Rows;

use world::World;

fn standings(run: &world::Run) -> Vec<(String, String, Option<u64>, Option<String>)> {
    world::standings(run, |c| {
        (
            c["consumer"].as_str().unwrap().to_string(),
            c["status"].as_str().unwrap().to_string(),
            c["line"].as_u64(),
            world::text(c, "version"),
        )
    })
}

fn row(
    c: &str,
    s: &str,
    line: Option<u64>,
    v: Option<&str>,
) -> (String, String, Option<u64>, Option<String>) {
    (c.to_string(), s.to_string(), line, v.map(str::to_string))
}

/// Run `consumers roads` on 2026-11-29 and assert the world's standings, sorted: what the
/// world's logs give, whichever format holds the reads.
fn assert_world_standings(w: &World) -> world::Run {
    let run = w.consumers_json("2026-11-29");
    let mut got = standings(&run);
    got.sort();
    assert_eq!(
        got,
        vec![
            row("archive", "silent", None, None),
            // atlas's read of 2.0.0 is dated after --today: ignored.
            row("atlas", "still-on", Some(1), Some("1.1.0")),
            row("flood-model", "still-on", Some(1), Some("1.1.0")),
            row("ghost", "unknown", Some(1), Some("1.0.0")),
            row("router", "migrated", Some(2), Some("2.0.0")),
        ]
    );
    run
}

#[test]
fn still_on_migrated_silent_and_unknown() {
    let w = World::new(25);
    let run = assert_world_standings(&w);
    let json = run.json();
    assert_eq!(json["scan"]["after_today"], 1);
    assert_eq!(json["lines"][0]["still_on"], 2);
    assert_eq!(json["lines"][0]["sunset"], world::SUNSET);
}

#[test]
fn replaying_a_later_day_counts_the_later_reads() {
    let w = World::new(25);
    let run = w.consumers_json("2027-03-02");
    let got = standings(&run);
    assert!(
        got.contains(&row("atlas", "migrated", Some(2), Some("2.0.0"))),
        "{got:?}"
    );
    assert_eq!(run.json()["scan"]["after_today"], 0);
}

#[test]
fn lookback_makes_old_readers_silent() {
    let w = World::new(25);
    w.write(
        "contracts.toml",
        &world::config(25).replace("lookback_days = 365", "lookback_days = 2"),
    );
    // Only flood-model (2026-11-28) read within the two days up to 2026-11-29.
    let run = w.consumers_json("2026-11-29");
    let silent: Vec<String> = standings(&run)
        .into_iter()
        .filter(|r| r.1 == "silent")
        .map(|r| r.0)
        .collect();
    assert_eq!(silent, ["archive", "atlas", "router"]);
}

#[test]
fn malformed_lines_are_reported_counted_and_skipped() {
    let w = World::new(25);
    w.write(
        "consumption/reads.jsonl",
        concat!(
            "{\"at\":\"2026-11-28T03:00:00Z\",\"consumer\":\"flood-model\",\"dataset\":\"roads\"\n",
            "{\"at\":\"not a date\",\"consumer\":\"router\",\"dataset\":\"roads\",\"contract\":\"2.0.0\"}\n",
            "{\"at\":\"2026-11-28T03:00:00Z\",\"consumer\":\"flood-model\",\"dataset\":\"roads\",\"contract\":\"one\"}\n",
            "{\"at\":\"2026-11-28T04:00:00Z\",\"consumer\":\"flood-model\",\"dataset\":\"roads\",\"contract\":\"2.0.0\"}\n",
        ),
    );
    w.append(
        "consumption/platform.csv",
        "2026-11-28T03:00:00Z,router,roads\n",
    );
    let run = w.consumers_json("2026-11-29");
    assert_eq!(run.json()["scan"]["malformed"], 4);
    let err = run.stderr();
    for place in [
        "consumption/reads.jsonl:1:",
        "consumption/reads.jsonl:2:",
        "consumption/reads.jsonl:3:",
        "consumption/platform.csv:4:",
    ] {
        assert!(err.contains(place), "no report at {place}:\n{err}");
    }
    // The good line after the bad ones still counts.
    assert!(standings(&run).contains(&row("flood-model", "current", Some(2), Some("2.0.0"))));
}

#[test]
fn line_filter_and_text_table() {
    let w = World::new(25);
    let run = w.run(
        "2026-11-29",
        &["--format", "json", "consumers", "roads", "--line", "2"],
    );
    run.assert_code(0);
    let mut names: Vec<String> = standings(&run).into_iter().map(|r| r.0).collect();
    names.sort();
    assert_eq!(names, ["archive", "router"]);
    let text = w.run("2026-11-29", &["consumers", "roads"]);
    text.assert_code(0);
    text.assert_stdout_has("still-on");
    w.run("2026-11-29", &["consumers", "roads", "--line", "7"])
        .assert_code(2);
}

#[test]
fn bad_input_exits_2() {
    let w = World::new(25);
    w.run("2026-11-29", &["consumers", "rivers"]).assert_code(2);
    w.write(
        "consumers.toml",
        "[consumers.atlas]\ncontacts = [\"atlas@example.org\\nBcc: x@example.org\"]\n",
    );
    let run = w.run("2026-11-29", &["consumers", "roads"]);
    run.assert_code(2);
    run.assert_stderr_has("`atlas`");
}

#[test]
fn status_counts_the_consumers_still_on_a_line_in_a_window() {
    let w = World::new(25);
    let run = w.run("2026-11-29", &["--format", "json", "status"]);
    run.assert_code(0);
    let rows: serde_json::Value = serde_json::from_str(&run.stdout()).unwrap();
    // flood-model (1.1.0 on 11-28) and atlas (1.1.0 on 11-27) are still on line 1; router
    // moved to 2.0.0, archive is silent and ghost is not registered.
    assert_eq!(rows[0]["line"], 1);
    assert_eq!(rows[0]["consumers_still_on"], 2);
    // Line 2 has no sunset: nobody is counted as "still on" it.
    assert_eq!(rows[1]["line"], 2);
    assert_eq!(rows[1]["consumers_still_on"], serde_json::Value::Null);
    let text = w.run("2026-11-29", &["status"]);
    text.assert_stdout_has("still on");
}

/// The World's reads, from a Parquet log written by pyarrow
/// (tests/data/consumption/make_reads_parquet.py) instead of its JSON Lines and CSV logs.
#[test]
fn a_parquet_log_written_by_pyarrow_gives_the_standings() {
    let w = World::new(25);
    std::fs::remove_file(w.root().join("consumption/reads.jsonl")).unwrap();
    std::fs::remove_file(w.root().join("consumption/platform.csv")).unwrap();
    std::fs::copy(
        crate::common::data("consumption/reads.parquet"),
        w.root().join("consumption/reads.parquet"),
    )
    .unwrap();
    w.write(
        "contracts.toml",
        &world::config(25).replace("\"consumption/*.csv\"", "\"consumption/*.parquet\""),
    );
    let run = assert_world_standings(&w);
    let json = run.json();
    assert_eq!(json["scan"]["lines"], 9);
    assert_eq!(json["scan"]["after_today"], 1);
    assert_eq!(json["scan"]["malformed"], 2);
    let err = run.stderr();
    for place in [
        "consumption/reads.parquet:5: `consumer` is null",
        "consumption/reads.parquet:8:",
    ] {
        assert!(err.contains(place), "no report at {place}:\n{err}");
    }
    // The millisecond of router's read survives the timestamp column.
    let router = json["consumers"]
        .rows()
        .find(|c| c["consumer"] == "router")
        .unwrap()
        .clone();
    assert!(
        router.to_string().contains("2026-11-25T03:00:00.250"),
        "{router}"
    );
}
