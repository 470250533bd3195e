//! `contracts timeline`: the window picture of a store laid out by hand, with recorded
//! releases, a moved sunset and a consumption log.

use crate::common::look;
use crate::common::world;

use look::with_releases_and_a_move;
use world::World;

#[test]
fn the_facts_behind_the_picture() {
    let w = with_releases_and_a_move();
    let run = w.run("2026-11-29", &["--format", "json", "timeline", "roads"]);
    run.assert_code(0);
    let j = run.json();
    // The moved sunset is the effective one, and the window runs to it.
    assert_eq!(j["lines"][0]["sunset"], "2027-02-01");
    assert_eq!(j["windows"][0]["opens"], "2026-11-01");
    assert_eq!(j["windows"][0]["sunset"], "2027-02-01");
    assert_eq!(j["sunset_moves"][0]["from"], "2027-01-15");
    // Release 2: passed 1.1.0 (line 1), failed 2.0.0 (line 2).
    let r = &j["releases"][1];
    assert_eq!(r["day"], "2026-11-24");
    assert_eq!(r["results"][0]["passed"], true);
    assert_eq!(r["results"][1]["line"], 2);
    assert_eq!(r["results"][1]["passed"], false);
    // Worked out by hand from the log (lookback 365 days, registered consumers only):
    // router reads 1.1.0 on 11-20 and 2.0.0 on 11-25; atlas 1.1.0 on 11-27; flood-model
    // 1.1.0 on 11-28; ghost is not registered. From the window's opening on 11-01 to today:
    let mut want = vec![0u64; 19]; // 11-01 ..= 11-19
    want.extend([1, 1, 1, 1, 1]); // 11-20 ..= 11-24: router
    want.extend([0, 0]); // 11-25, 11-26: router moved
    want.push(1); // 11-27: atlas
    want.extend([2, 2]); // 11-28, 11-29: atlas and flood-model
    let counts = j["still_on"][0]["counts"].as_array().unwrap();
    assert_eq!(counts[0]["day"], "2026-11-01");
    assert_eq!(counts.last().unwrap()["day"], "2026-11-29");
    let got: Vec<u64> = counts
        .iter()
        .map(|c| c["consumers"].as_u64().unwrap())
        .collect();
    assert_eq!(got, want);
}

#[test]
fn the_picture_is_deterministic_and_says_what_it_shows() {
    let w = with_releases_and_a_move();
    let run = w.run("2026-11-29", &["timeline", "roads"]);
    run.assert_code(0);
    let svg = run.stdout();
    assert_eq!(
        svg,
        w.run("2026-11-29", &["timeline", "roads"]).stdout(),
        "two runs, same bytes"
    );
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(!svg.contains("<script"), "no JavaScript");
    for words in [
        "line 1",
        "line 2",
        "sunset 2027-02-01",
        "sunset moved later from 2027-01-15 to 2027-02-01",
        "today 2026-11-29",
        "Consumers still reading line 1",
        "2 consumers on 2026-11-29",
        "window: line 1 and line 2 both live for 92 days",
        "release 2026.11 on 2026-11-10: passed against 1.1.0",
        "release on 2026-11-24: failed against 2.0.0",
    ] {
        assert!(svg.contains(words), "missing {words:?}");
    }
    // Two passes on 11-10, one pass and one failure on 11-24.
    assert_eq!(svg.matches("passed against").count(), 3);
    assert_eq!(svg.matches("failed against").count(), 1);
    insta::assert_snapshot!(svg);
}

#[test]
fn out_writes_the_file_and_bad_input_exits_2() {
    let w = with_releases_and_a_move();
    let out = w.root().join("roads.svg");
    let run = w.run(
        "2026-11-29",
        &["timeline", "roads", "--out", out.to_str().unwrap()],
    );
    run.assert_code(0);
    assert!(run.stdout().is_empty());
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.trim_end().ends_with("</svg>"));
    w.run("2026-11-29", &["timeline", "rivers"]).assert_code(2);
    w.run("2026-11-29", &["timeline", "Bad Name"])
        .assert_code(2);
}

#[test]
fn a_dataset_without_a_window_says_so() {
    let w = World::new(25);
    w.write(
        "contracts/rivers/1.0.0.toml",
        "dataset = \"rivers\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
         [clauses]\ncrs = \"EPSG:4326\"\n",
    );
    let run = w.run("2026-11-29", &["timeline", "rivers"]);
    run.assert_code(0);
    assert!(run.stdout().contains("no sunset set"));
    assert!(run.stdout().contains("No deprecation window"));
}

#[test]
fn control_characters_of_a_release_never_reach_the_picture() {
    let w = look::with_control_characters();
    let run = w.run("2026-11-29", &["timeline", "roads"]);
    run.assert_code(0);
    let svg = run.stdout();
    assert!(
        svg.contains("release 2026.11  [0m on 2026-11-10"),
        "the release is named, each control a space: {svg}"
    );
    assert!(!look::has_forbidden_control(&svg), "{svg:?}");
    assert!(look::well_formed(&svg), "{svg}");
}
