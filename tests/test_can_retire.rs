//! The retirement gate (issue 22 item 15, issue 24), end to end through the real binary in
//! temporary stores with a fixed --today: a line retires only when a live line succeeds it
//! (or the producer says it discontinues the dataset), and only readers that matter hold it.

use crate::common::world;
use crate::common::Rows;

use world::{counted_row as row, World};

/// A dataset of one line, read by `archive` (registered without `datasets`, so subscribed to
/// every dataset) on 2026-11-26.
fn with_rivers(w: &World) {
    w.write(
        "contracts/rivers/1.0.0.toml",
        "dataset = \"rivers\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
         [clauses]\ncrs = \"EPSG:4326\"\n",
    );
}

#[test]
fn a_line_whose_successor_has_not_opened_cannot_retire() {
    let w = World::new(world::closed_port());
    // On 2026-10-15 line 2 (valid_from 2026-11-01) is upcoming and nobody has read line 1 in
    // the log yet (every read is later): only the successor rule can say no.
    let run = w.run("2026-10-15", &["can-retire", "roads", "1"]);
    run.assert_code(1);
    assert_eq!(
        run.stdout(),
        "roads line 1 cannot retire: line 2 opens on 2026-11-01\n"
    );
    let run = w.can_retire_line_1_json("2026-10-15");
    run.assert_code(1);
    let j = run.json();
    assert_eq!(j["can_retire"], false);
    assert_eq!(j["successor"]["line"], 2);
    assert_eq!(j["successor"]["opens"], "2026-11-01");
    assert_eq!(j["successor"]["live"], false);
    assert_eq!(j["holders"], serde_json::json!([]));
    // status says the same for the line in its window.
    let rows = w
        .run("2026-10-15", &["--format", "json", "status", "roads"])
        .assert_code(0)
        .json();
    let line1 = rows.rows().find(|r| r["line"] == 1).unwrap().clone();
    assert_eq!(line1["can_retire"], false, "{rows:#}");
    // --no-successor waives the successor rule, not the readers. Here every read of the log
    // is after --today: the sources show no read at all, and a source that shows none cannot
    // be told from one that is blind (issue 44), so the gate cannot tell.
    w.run(
        "2026-10-15",
        &["can-retire", "roads", "1", "--no-successor"],
    )
    .assert_code(4)
    .assert_stdout_has("cannot tell");
    // Once line 2 is live and nobody holds line 1, it can.
    w.write(
        "consumption/moved.jsonl",
        "{\"at\":\"2027-01-10T03:00:00Z\",\"consumer\":\"flood-model\",\"dataset\":\"roads\",\"contract\":\"2.0.0\"}\n",
    );
    w.run("2027-03-05", &["can-retire", "roads", "1"])
        .assert_code(0);
}

#[test]
fn the_only_line_cannot_retire_without_no_successor() {
    let w = World::new(world::closed_port());
    with_rivers(&w);
    // No read of rivers in the lookback on 2028-01-01: nobody holds it.
    let run = w.run("2028-01-01", &["can-retire", "rivers", "1"]);
    run.assert_code(1);
    assert_eq!(
        run.stdout(),
        "rivers line 1 cannot retire: no successor line\n"
    );
    assert!(
        run.stderr().contains("--no-successor"),
        "the hint names the flag: {}",
        run.stderr()
    );
    let j = w
        .run(
            "2028-01-01",
            &["--format", "json", "can-retire", "rivers", "1"],
        )
        .assert_code(1)
        .json();
    assert_eq!(j["successor"], serde_json::Value::Null);
    assert_eq!(j["no_successor"], false);
    // No read of anything in the lookback on 2028-01-01: the sources show nothing, so the
    // gate cannot tell (issue 44); a read of roads in the lookback shows that they work.
    w.run(
        "2028-01-01",
        &["can-retire", "rivers", "1", "--no-successor"],
    )
    .assert_code(4);
    for (file, contract) in [("recent.jsonl", "2.0.0"), ("recent.csv", "2.0.0")] {
        let line = if file.ends_with(".csv") {
            format!("at,consumer,dataset,contract\n2027-12-30T03:00:00Z,router,roads,{contract}\n")
        } else {
            format!("{{\"at\":\"2027-12-30T03:00:00Z\",\"consumer\":\"router\",\"dataset\":\"roads\",\"contract\":\"{contract}\"}}\n")
        };
        w.write(&format!("consumption/{file}"), &line);
    }
    let run = w.run(
        "2028-01-01",
        &["can-retire", "rivers", "1", "--no-successor"],
    );
    run.assert_code(0);
    assert!(
        run.stdout().starts_with("rivers line 1 can retire"),
        "{}",
        run.stdout()
    );
    // The newest line of roads has no successor either, though nobody holds line 1 any more.
    w.run("2028-01-01", &["can-retire", "roads", "2"])
        .assert_code(1);
    // archive read rivers 1.0.0 on 2026-11-26: with the flag, the readers still decide.
    let run = w.run(
        "2026-11-29",
        &["can-retire", "rivers", "1", "--no-successor"],
    );
    run.assert_code(1);
    run.assert_stdout_has("archive");
}

#[test]
fn automations_and_incidental_readers_do_not_hold_a_line() {
    let w = World::new(world::closed_port());
    // Without thresholds or kinds, flood-model and atlas hold line 1 on 2026-11-29.
    w.run("2026-11-29", &["can-retire", "roads", "1"])
        .assert_code(1);
    world::with_thresholds(&w, "");
    // flood-model is an automation; atlas read line 1 once (2026-11-27): incidental. router's
    // one read of line 2 makes it incidental there, which does not matter to line 1.
    let run = w.can_retire_line_1_json("2026-11-29");
    run.assert_code(0);
    let j = run.json();
    assert_eq!(j["can_retire"], true);
    assert_eq!(j["holders"], serde_json::json!([]));
    assert_eq!(
        world::counted(&j["ignored"]),
        vec![
            row("flood-model", "automation", 1, 1),
            row("atlas", "incidental", 1, 1)
        ]
    );
    assert_eq!(
        j["thresholds"],
        serde_json::json!({"min_reads": 2, "min_days": 2})
    );
    // Replayed day by day nobody ever held line 1 by these rules: free since it opened.
    assert_eq!(j["since"], "2026-01-01");
    let text = w.run("2026-11-29", &["can-retire", "roads", "1"]);
    text.assert_code(0);
    let out = text.stdout();
    assert!(
        out.contains("ignored (automations, and readers under min_reads = 2 or min_days = 2):"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.contains("atlas") && l.contains("incidental")),
        "{out}"
    );
    // status agrees, while still counting both as still on the line (they are still told).
    let rows = w
        .run("2026-11-29", &["--format", "json", "status", "roads"])
        .assert_code(0)
        .json();
    assert_eq!(rows[0]["line"], 1);
    assert_eq!(rows[0]["can_retire"], true);
    assert_eq!(rows[0]["consumers_still_on"], 2);
    // consumers shows them in their own status.
    let j = w
        .run("2026-11-29", &["--format", "json", "consumers", "roads"])
        .assert_code(0)
        .json();
    let statuses: Vec<(String, String)> = world::counted(&j["consumers"])
        .into_iter()
        .map(|(c, s, _, _)| (c, s))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("archive".to_string(), "silent".to_string()),
            ("ghost".to_string(), "unknown".to_string()),
            ("flood-model".to_string(), "automation".to_string()),
            ("atlas".to_string(), "incidental".to_string()),
            ("router".to_string(), "incidental".to_string()),
        ]
    );
    assert_eq!(j["lines"][0]["still_on"], 2);
    assert_eq!(j["lines"][0]["ignored"], 2);
    // notify still tells every registered consumer on the old line.
    let planned: Vec<String> = w
        .run("2026-11-29", &["--format", "json", "notify", "--dry-run"])
        .assert_code(0)
        .json()
        .rows()
        .map(|n| n["consumer"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(planned, ["atlas", "flood-model"]);

    // The other way. Two more reads by atlas on 2026-11-27: three reads, one day, still
    // incidental by min_days.
    w.write(
        "consumption/atlas.jsonl",
        concat!(
            r#"{"at":"2026-11-27T05:00:00Z","consumer":"atlas","dataset":"roads","contract":"1.1.0"}"#, "\n",
            r#"{"at":"2026-11-27T06:00:00Z","consumer":"atlas","dataset":"roads","contract":"1.0.0"}"#, "\n",
        ),
    );
    let j = w.can_retire_line_1_json("2026-11-29").assert_code(0).json();
    assert_eq!(
        world::counted(&j["ignored"])[1],
        row("atlas", "incidental", 3, 1)
    );
    // A read on a second day makes atlas hold the line; the automation never does.
    w.write(
        "consumption/atlas2.jsonl",
        r#"{"at":"2026-11-28T05:00:00Z","consumer":"atlas","dataset":"roads","contract":"1.1.0"}"#,
    );
    let run = w.can_retire_line_1_json("2026-11-29");
    run.assert_code(1);
    let j = run.json();
    assert_eq!(
        world::counted(&j["holders"]),
        vec![row("atlas", "still-on", 4, 2)]
    );
    assert_eq!(
        world::counted(&j["ignored"]),
        vec![row("flood-model", "automation", 1, 1)]
    );
    let rows = w
        .run("2026-11-29", &["--format", "json", "status", "roads"])
        .assert_code(0)
        .json();
    assert_eq!(rows[0]["can_retire"], false);
}

#[test]
fn thresholds_are_checked_where_they_are_written() {
    let w = World::new(world::closed_port());
    w.append("contracts.toml", "min_days = 400\n");
    let run = w.run("2026-11-29", &["status"]);
    run.assert_code(2);
    run.assert_stderr_has("[consumption] min_days must be from 1 to lookback_days (365)");
    run.assert_stderr_has("contracts.toml:");
}

/// Without consumers.toml nobody is registered, so nobody is subscribed to hold line 1,
/// though flood-model and atlas read it in the lookback: "no subscribed consumer reads it"
/// would be a yes about nobody. Cannot tell (4), in text and in JSON; the same store with a
/// registry is judged as usual.
#[test]
fn a_store_without_consumers_toml_cannot_tell_never_yes() {
    let w = World::new(world::closed_port());
    let registered = w.read("consumers.toml").unwrap();
    w.git(&["rm", "-q", "consumers.toml"]);
    w.git(&["commit", "-q", "-m", "no registry"]);
    let run = w.run("2026-11-29", &["can-retire", "roads", "1"]);
    run.assert_code(4)
        .assert_stdout_has("cannot tell whether it can retire")
        .assert_stdout_has("no consumers.toml");
    let run = w.can_retire_line_1_json("2026-11-29");
    run.assert_code(4);
    let j = run.json();
    assert_eq!(
        (j["can_retire"].clone(), j["cannot_tell"].clone()),
        (false.into(), true.into())
    );
    assert_eq!(j["unregistered"], true);
    w.write("consumers.toml", &registered);
    let run = w.can_retire_line_1_json("2026-11-29");
    run.assert_code(1);
    assert_eq!(run.json()["unregistered"], false);
}
