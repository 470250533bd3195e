//! `contracts can-remove`, through the real binary in the hand-laid world of `common::world`
//! (roads line 1 read by flood-model and atlas, router moved to line 2, archive reading rivers
//! only, ghost unregistered): declared `uses` answer for a consumer; a consumer without `uses`
//! read through a log that cannot say which attributes a read touched leaves "cannot tell";
//! pgaudit's logged statements show who read the attribute and who read only others.

use crate::common::{pg_audit_lines, world};

use world::{registry, World, FLOOD_ONCALL};

const TODAY: &str = "2026-11-29";

/// The world with `pop_est` on line 1 (deprecated in 1.1.0) and gone from line 2.
pub(crate) fn with_pop_est() -> World {
    let w = World::new(world::closed_port());
    w.write(
        "contracts/roads/1.1.0.toml",
        "dataset = \"roads\"\nversion = \"1.1.0\"\nsupersedes = \"1.0.0\"\n\
         valid_from = 2026-03-01\n[clauses]\ncrs = \"EPSG:4326\"\n\
         optional_attributes = { pop_est = \"float64\", name = \"string\" }\n\
         [deprecated]\n\"optional_attributes.pop_est\" = { reason = \"census\", remove_after = 2027-01-10 }\n",
    );
    w
}

/// consumers.toml with each of flood-model, atlas, router declaring `uses` for roads.
fn declaring(flood: &str, atlas: &str, router: &str) -> String {
    let uses = |u: &str| format!("datasets.roads = {{ uses = {u} }}");
    registry(
        FLOOD_ONCALL,
        [
            Some(&uses(flood)),
            Some(&uses(atlas)),
            Some(&uses(router)),
            Some(""),
        ],
    )
}

fn uses_of(j: &serde_json::Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = j["consumers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["consumer"].as_str().unwrap().to_string(),
                c["use"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

/// `can-remove roads optional_attributes.pop_est` in JSON, which must exit `code`.
fn pop_est_exits(w: &World, code: i32) -> serde_json::Value {
    let args = [
        "--format",
        "json",
        "can-remove",
        "roads",
        "optional_attributes.pop_est",
    ];
    let run = w.run(TODAY, &args);
    run.assert_code(code);
    run.json()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    world::sorted(world::pairs(items))
}

#[test]
fn consumers_without_uses_that_read_the_line_leave_cannot_tell() {
    let w = with_pop_est();
    let run = w.run(
        TODAY,
        &["can-remove", "roads", "optional_attributes.pop_est"],
    );
    run.assert_code(4)
        .assert_stdout_has("cannot tell")
        .assert_stdout_has("2 consumer(s) without `uses`");
    let j = pop_est_exits(&w, 4);
    assert_eq!(j["answer"], "cannot-tell");
    assert_eq!(j["can_remove"], false);
    assert_eq!(j["lines"], serde_json::json!([1]));
    assert_eq!(j["attribute"], "pop_est");
    assert_eq!(j["deprecation"]["remove_after"], "2027-01-10");
    // flood-model and atlas read line 1 without saying what: unknown, never "none". router
    // moved to line 2, which does not promise pop_est; archive reads rivers only; ghost is
    // not registered and does not count.
    assert_eq!(
        uses_of(&j),
        pairs(&[
            ("flood-model", "unknown"),
            ("atlas", "unknown"),
            ("router", "not-seen"),
            ("archive", "not-seen"),
        ])
    );
}

#[test]
fn a_declared_use_of_the_key_holds_it_and_is_listed_with_its_last_read() {
    let w = with_pop_est();
    w.write(
        "consumers.toml",
        &declaring(
            r#"["optional_attributes.pop_est"]"#,
            r#"["crs"]"#,
            r#"["crs"]"#,
        ),
    );
    let run = w.run(
        TODAY,
        &["can-remove", "roads", "optional_attributes.pop_est"],
    );
    run.assert_code(1)
        .assert_stdout_has("cannot be removed: 1 subscribed consumer(s) still use it");
    let j = pop_est_exits(&w, 1);
    assert_eq!(j["answer"], "no");
    let users = j["users"].as_array().unwrap();
    assert_eq!(users.len(), 1, "{j:#}");
    assert_eq!(users[0]["consumer"], "flood-model");
    assert_eq!(users[0]["use"], "declared");
    // Its newest read in consumption/reads.jsonl.
    assert_eq!(users[0]["last_read"], "2026-11-28T03:00:00Z");
    // A use of the whole clause covers the key too.
    w.write(
        "consumers.toml",
        &declaring(r#"["crs"]"#, r#"["optional_attributes"]"#, r#"["crs"]"#),
    );
    let j = pop_est_exits(&w, 1);
    assert_eq!(j["users"][0]["consumer"], "atlas", "{j:#}");
}

#[test]
fn every_consumer_shown_not_to_use_it_is_a_yes() {
    let w = with_pop_est();
    w.write(
        "consumers.toml",
        &declaring(
            r#"["crs"]"#,
            r#"["optional_attributes.name"]"#,
            r#"["crs"]"#,
        ),
    );
    let run = w.run(
        TODAY,
        &["can-remove", "roads", "optional_attributes.pop_est"],
    );
    run.assert_code(0).assert_stdout_has("can be removed");
    let j = pop_est_exits(&w, 0);
    assert_eq!(j["answer"], "yes");
    assert_eq!(
        uses_of(&j),
        pairs(&[
            ("flood-model", "declared-without"),
            ("atlas", "declared-without"),
            ("router", "declared-without"),
            ("archive", "not-seen"),
        ])
    );
}

#[test]
fn a_key_no_line_promises_is_bad_input() {
    let w = with_pop_est();
    for key in [
        "optional_attributes.pop_2026",
        "units",
        "permitted_geometry.Point",
    ] {
        w.run(TODAY, &["can-remove", "roads", key])
            .assert_code(2)
            .assert_stderr_has(&format!("no line of `roads` promises `{key}`"));
    }
    w.run(TODAY, &["can-remove", "lakes", "crs"]).assert_code(2);
}

/// The roads views of line 1 read through PostgreSQL, pgaudit logging each statement:
/// flood-model selects `pop_est` (its `uses` names only `crs`), atlas selects `name` alone;
/// archive reads through a log of reads that cannot tell which attributes it read: line 1
/// when `archive_on_1`, else line 2, which no longer promises `pop_est`.
pub(crate) fn read_through_postgis(flood_statement: &str, archive_on_1: bool) -> World {
    let w = with_pop_est();
    let uses = |u: &str| format!("datasets.roads = {{ uses = {u} }}");
    w.write(
        "consumers.toml",
        &registry(
            FLOOD_ONCALL,
            [
                Some(&uses(r#"["crs"]"#)),
                Some(""),
                Some(&uses(r#"["crs"]"#)),
                Some(""),
            ],
        ),
    );
    pg_audit_lines::with_pgaudit_log(
        &w,
        &pg_audit_lines::flood_and_atlas(
            flood_statement,
            "SELECT r.name, ST_AsText(r.geom) FROM roads_v1 AS r WHERE r.name LIKE 'A%'",
        ),
    );
    let version = if archive_on_1 { "1.1.0" } else { "2.0.0" };
    w.write(
        "consumption/blind.jsonl",
        &format!(
            "{{\"at\":\"2026-11-26T03:00:00Z\",\"consumer\":\"archive\",\"dataset\":\"roads\",\"contract\":\"{version}\"}}\n"
        ),
    );
    w
}

#[test]
fn a_read_seen_reading_the_attribute_holds_it_one_seen_reading_others_does_not() {
    let w = read_through_postgis("SELECT name, pop_est FROM roads_v1 ORDER BY pop_est", true);
    let j = pop_est_exits(&w, 1);
    assert_eq!(j["answer"], "no");
    // flood-model's `uses` leaves pop_est out, but its statement names it: observed, with the
    // statement's time. atlas has no `uses` and its statement names only `name` (and the
    // geometry): shown not to use it. archive's source cannot tell: unknown, never "none".
    assert_eq!(
        uses_of(&j),
        pairs(&[
            ("flood-model", "observed"),
            ("atlas", "not-seen"),
            ("archive", "unknown"),
            ("router", "declared-without"),
        ])
    );
    let users = j["users"].as_array().unwrap();
    assert_eq!(users.len(), 1, "{j:#}");
    assert_eq!(users[0]["consumer"], "flood-model");
    assert_eq!(users[0]["last_read"], "2026-11-27T10:00:00.120Z");
    assert_eq!(users[0]["evidence"]["unknown"], 0);
}

#[test]
fn attributes_shown_unread_by_every_reader_are_a_yes_and_a_blind_reader_a_cannot_tell() {
    // Nobody's statement names pop_est; archive reads line 2 only.
    let w = read_through_postgis("SELECT name FROM roads_v1", false);
    let j = pop_est_exits(&w, 0);
    assert_eq!(j["answer"], "yes", "{j:#}");
    assert_eq!(
        uses_of(&j),
        pairs(&[
            ("flood-model", "declared-without"),
            ("atlas", "not-seen"),
            ("archive", "not-seen"),
            ("router", "declared-without"),
        ])
    );
    // A statement the parser cannot follow says nothing of its attributes: atlas, with no
    // `uses`, is then unknown, and the answer cannot be a yes.
    let w = read_through_postgis("SELECT name FROM roads_v1", false);
    pg_audit_lines::with_pgaudit_log(
        &w,
        &[pg_audit_lines::entry(
            "2026-11-28 08:30:00.000 UTC",
            "atlas",
            2,
            "public.roads_v1",
            "SELECT FROM WHERE roads_v1",
        )],
    );
    let j = pop_est_exits(&w, 4);
    assert_eq!(j["answer"], "cannot-tell");
    assert!(
        uses_of(&j).contains(&("atlas".to_string(), "unknown".to_string())),
        "{j:#}"
    );
}

#[test]
fn a_malformed_line_is_warned_of_once_though_the_scan_and_the_daily_counts_both_read_it() {
    // The newest reads and the day-by-day counts were two walks over the logs, and each said
    // every malformed line: the user saw each warning twice. One walk feeds both now. The
    // pgaudit log is read once for both; the JSON Lines log of reads by each one's reader.
    let w = read_through_postgis("SELECT name, pop_est FROM roads_v1", true);
    w.append(
        "pg/postgresql.json",
        "{\"timestamp\":\"yesterday\",\"message\":\"AUDIT: SESSION,3,1,READ,SELECT,VIEW,public.roads_v1,SELECT 1,<none>\"}\n",
    );
    w.append(
        "consumption/blind.jsonl",
        "{\"at\":12,\"consumer\":\"archive\",\"dataset\":\"roads\",\"contract\":\"1.1.0\"}\n",
    );
    let run = w.run(
        TODAY,
        &["can-remove", "roads", "optional_attributes.pop_est"],
    );
    run.assert_code(1);
    let warned = |file: &str| {
        run.stderr
            .lines()
            .filter(|l| l.starts_with(&format!("warning: {file}:")))
            .count()
    };
    assert_eq!(
        (
            warned("pg/postgresql.json"),
            warned("consumption/blind.jsonl")
        ),
        (1, 1),
        "{}",
        run.stderr
    );
}

/// A store with no consumers.toml registers nobody, so "no subscribed consumer uses it" would
/// be true of any key whoever reads it: the logs here hold reads of roads line 1 by two
/// principals. That is no proof: cannot tell (4), never yes, in text and in JSON.
#[test]
fn a_store_without_consumers_toml_cannot_tell_never_yes() {
    let w = with_pop_est();
    w.git(&["rm", "-q", "consumers.toml"]);
    w.git(&["commit", "-q", "-m", "no registry"]);
    let run = w.run(
        TODAY,
        &["can-remove", "roads", "optional_attributes.pop_est"],
    );
    run.assert_code(4)
        .assert_stdout_has("cannot tell whether it can be removed")
        .assert_stdout_has("no consumers.toml");
    let j = pop_est_exits(&w, 4);
    assert_eq!(j["answer"], "cannot-tell");
    assert_eq!(j["can_remove"], false);
    assert_eq!(j["unregistered"], true);
    // With a registry, the same key is no longer held back by its absence.
    w.write(
        "consumers.toml",
        &declaring(r#"["crs"]"#, r#"["crs"]"#, r#"["crs"]"#),
    );
    let j = pop_est_exits(&w, 0);
    assert_eq!(j["unregistered"], false);
}
