//! `contracts can-remove`, through the real binary in the hand-laid world of `common::world`
//! (roads line 1 read by flood-model and atlas, router moved to line 2, archive reading rivers
//! only, ghost unregistered): declared `uses` answer for a consumer, and a consumer without
//! `uses` that read the dataset leaves "cannot tell", since no consumption format of this
//! build reports which attributes a read touched.

use crate::common::world;

use world::{registry, World, FLOOD_ONCALL};

const TODAY: &str = "2026-11-29";

/// The world with `pop_est` on line 1 (deprecated in 1.1.0) and gone from line 2.
fn with_pop_est() -> World {
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
