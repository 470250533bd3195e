//! Deprecation of one clause key within a line, through the real binary in a temporary store
//! with a fixed --today (2026-11-29): the `[deprecated]` table parsed strictly, its change
//! records (`deprecated`, `undeprecated`), the refusal of an early removal and its `--force`,
//! and a newer build's top-level key read by this one.

use crate::common::{draft, Store};

use serde_json::Value;

/// The clauses of every roads version here: `pop_est` is the attribute that goes away.
const CLAUSES: &str = r#"crs = "EPSG:4326"
permitted_geometry = ["LineString", "MultiLineString"]
required_attributes = { id = "int64" }
optional_attributes = { pop_est = "float64", pop_2026 = "int64" }
"#;

/// `pop_est` deprecated, promised through 2027-09-01.
const DEPRECATED: &str = r#"
[deprecated]
"optional_attributes.pop_est" = { reason = "estimates replaced by the 2026 census", replacement = "pop_2026", remove_after = 2027-09-01 }
"#;

fn roads(
    version: &str,
    supersedes: Option<&str>,
    valid_from: &str,
    sunset: Option<&str>,
) -> String {
    crate::common::roads(version, supersedes, valid_from, sunset, CLAUSES)
}

/// The row of `diff --format json` (or of `log`) whose `field` is `value`.
fn row<'a>(rows: &'a Value, field: &str, value: &str) -> &'a Value {
    rows.as_array()
        .into_iter()
        .flatten()
        .find(|r| r[field] == value)
        .unwrap_or_else(|| panic!("no {field} = {value} in {rows:#}"))
}

/// A store with roads 1.0.0 and 1.1.0, which deprecates `pop_est`.
fn deprecated_store() -> Store {
    let s = Store::new();
    s.propose_ok(&roads("1.0.0", None, "2026-12-01", None), "first version");
    s.propose_ok(
        &(roads("1.1.0", Some("1.0.0"), "2026-12-15", None) + DEPRECATED),
        "pop_est goes away",
    );
    s
}

#[test]
fn a_deprecation_is_a_compatible_minor_change_with_its_own_direction() {
    let s = deprecated_store();
    let log = s.json(&["log", "roads"]);
    let rec = row(&log, "direction", "deprecated");
    assert_eq!(rec["clause"], "optional_attributes.pop_est");
    assert_eq!(rec["verdict"], "compatible");
    assert_eq!(rec["kind"], "widening");
    // diff says the same, and a minor bump covers it.
    let j = s.json(&["diff", "roads@1.0.0", "roads@1.1.0"]);
    assert_eq!(j["required_bump"], "minor", "{j:#}");
    let change = row(&j["changes"], "direction", "deprecated");
    assert_eq!(change["new"]["remove_after"], "2027-09-01");
    assert_eq!(change["new"]["replacement"], "pop_2026");
    let text = s.run(&["diff", "roads@1.0.0", "roads@1.1.0"]);
    text.assert_stdout_has("deprecated")
        .assert_stdout_has("remove after 2027-09-01");
    s.assert_check_passes();
}

#[test]
fn show_prints_each_deprecation_in_text_and_json() {
    let s = deprecated_store();
    let j = s.json(&["show", "roads"]);
    let d = &j["deprecated"][0];
    assert_eq!(d["key"], "optional_attributes.pop_est");
    assert_eq!(d["reason"], "estimates replaced by the 2026 census");
    assert_eq!(d["replacement"], "pop_2026");
    assert_eq!(d["remove_after"], "2027-09-01");
    // 2026-11-29 to 2027-09-01 is 276 days.
    s.run(&["show", "roads"]).assert_stdout_has(
        "deprecated: `optional_attributes.pop_est`, promised through 2027-09-01 (276 days left)",
    );
}

#[test]
fn removing_a_deprecated_key_before_remove_after_is_refused_unless_forced() {
    let s = deprecated_store();
    let without = CLAUSES.replace("pop_est = \"float64\", ", "");
    // A major opening on 2027-09-01, the last promised day: refused.
    let early = draft(
        "roads",
        "2.0.0",
        Some("1.1.0"),
        "2027-09-01",
        Some("2028-01-01"),
        &[],
        &without,
    );
    let run = s.propose(&early, "drop pop_est");
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    run.assert_stderr_has("removes `optional_attributes.pop_est` from 2027-09-01")
        .assert_stderr_has("through 2027-09-01");
    assert!(
        s.run(&["show", "roads@2.0.0"]).code != 0,
        "nothing was written"
    );
    // --force lifts that refusal alone, and says so; the removal stays breaking.
    let path = s.write("draft.toml", &early);
    let run = s.run(&["propose", &path, "--rationale", "legal order", "--force"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.assert_stderr_has("forced: 2.0.0 removes `optional_attributes.pop_est`");
    let j = s.json(&["diff", "roads@1.1.0", "roads@2.0.0"]);
    assert_eq!(j["required_bump"], "major", "{j:#}");
    // A forced removal is no inconsistency for check afterwards.
    s.assert_check_passes();
}

#[test]
fn a_major_may_remove_the_key_the_day_after_remove_after_within_the_window_policy() {
    let s = deprecated_store();
    let without = CLAUSES.replace("pop_est = \"float64\", ", "");
    let next = draft(
        "roads",
        "2.0.0",
        Some("1.1.0"),
        "2027-09-02",
        Some("2028-01-01"),
        &[],
        &without,
    );
    s.propose_ok(&next, "drop pop_est");
    // The window still obeys min_window_days (90 by default): 30 days is refused.
    let s = deprecated_store();
    let short = draft(
        "roads",
        "2.0.0",
        Some("1.1.0"),
        "2027-09-02",
        Some("2027-10-02"),
        &[],
        &without,
    );
    let run = s.propose(&short, "drop pop_est");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        !run.stderr.contains("removes `optional_attributes.pop_est`"),
        "{}",
        run.stderr
    );
}

#[test]
fn withdrawing_a_deprecation_is_an_undeprecated_record() {
    let s = deprecated_store();
    s.propose_ok(
        &roads("1.2.0", Some("1.1.0"), "2027-01-01", None),
        "pop_est stays after all",
    );
    let j = s.json(&["diff", "roads@1.1.0", "roads@1.2.0"]);
    let change = row(&j["changes"], "clause", "optional_attributes.pop_est");
    assert_eq!(change["direction"], "undeprecated");
    assert_eq!(change["verdict"], "compatible");
    row(&s.json(&["log", "roads"]), "direction", "undeprecated");
    s.assert_check_passes();
}

#[test]
fn every_mistake_of_the_table_is_located_at_once() {
    let s = Store::new();
    let bad = roads("1.0.0", None, "2026-12-01", None)
        + "\n[deprecated]\n\
           \"optional_attributes.nope\" = { reason = \"x\", remove_after = 2027-01-01 }\n\
           \"permitted_geometry.MultiPoint\" = { reason = \"x\", remove_after = 2027-01-01 }\n\
           \"required_attributes.id\" = { remove_after = \"2027-01-01\" }\n\
           \"crs\" = { reason = \"x\", remove_after = 2027-01-01, replace = \"y\" }\n\
           \"units\" = { reason = \"x\", remove_after = 2027-01-01 }\n";
    let run = s.propose(&bad, "first");
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    // The draft's lines: 3 header lines, a blank, [clauses] at 5, four clauses, a blank,
    // [deprecated] at 11, then one entry a line from 12.
    for needle in [
        "draft.toml:12:30: deprecated `optional_attributes.nope`: `nope` is not in clause `optional_attributes`",
        "draft.toml:13:35: deprecated `permitted_geometry.MultiPoint`: `MultiPoint` is not in clause `permitted_geometry`",
        "draft.toml:14:28: deprecated `required_attributes.id`: has no `reason`",
        "draft.toml:14:28: deprecated `required_attributes.id`: remove_after:",
        "draft.toml:15:9: deprecated `crs`: unknown key `replace`",
        "draft.toml:16:11: deprecated `units`: `units` is not a clause of this contract",
    ] {
        run.assert_stderr_has(needle);
    }
    assert!(s.run(&["show", "roads"]).code != 0, "nothing was written");
}

#[test]
fn a_newer_builds_top_level_key_is_set_aside_when_reading_and_refused_in_a_draft() {
    let s = deprecated_store();
    let text = roads("1.2.0", Some("1.1.0"), "2027-01-01", None);
    let inline = text.replacen(
        "\n[clauses]",
        "stewardship = { team = \"maps\" }\n\n[clauses]",
        1,
    );
    // A draft with it is a typo until this build knows the key: bad input, located.
    let run = s.propose(&inline, "x");
    assert_eq!(run.code, 2, "{}", run.stderr);
    run.assert_stderr_has("draft.toml:5:1: unknown field `stewardship`");
    // A table after the clauses too, whose keys must not become clauses.
    let future = inline + "\n[lineage]\nsource = \"census\"\n";
    // In the store (written by a newer build), the reading side sets it aside.
    s.commit_file("contracts/roads/1.2.0.toml", future.as_bytes());
    let run = s.run(&["show", "roads@1.2.0"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.assert_stdout_has("not read by this build: top-level key `stewardship`");
    let j = s.json(&["show", "roads@1.2.0"]);
    assert_eq!(
        j["unknown_keys"],
        serde_json::json!(["lineage", "stewardship"])
    );
    assert!(row(&j["clauses"], "clause", "crs").is_object());
    assert!(
        !j.to_string().contains("census"),
        "no clause `source`: {j:#}"
    );
}

/// lakes 1.0.0; 1.1.0 deprecates an attribute, a geometry type and a limit; 2.0.0 removes
/// the attribute the day after its remove_after.
const LAKES: [(&str, &str); 3] = [
    ("1.0.0", "valid_from = 2027-01-01\n[clauses]\n"),
    (
        "1.1.0",
        "supersedes = \"1.0.0\"\nvalid_from = 2027-02-01\n[clauses]\n",
    ),
    (
        "2.0.0",
        "supersedes = \"1.1.0\"\nvalid_from = 2027-06-02\nsunset = 2027-10-01\n[clauses]\n",
    ),
];

fn lakes_clauses(version: &str) -> String {
    let attrs = if version == "2.0.0" {
        "optional_attributes = { area = \"float64\" }\n"
    } else {
        "optional_attributes = { depth = \"float64\", area = \"float64\" }\n"
    };
    let mut t = format!(
        "crs = \"EPSG:4326\"\npermitted_geometry = [\"Polygon\", \"MultiPolygon\"]\n\
         required_attributes = {{ name = \"string\" }}\n{attrs}\
         max_null_fraction = {{ name = 0.1 }}\n"
    );
    if version == "1.1.0" {
        t += "[deprecated]\n\
              \"optional_attributes.depth\" = { reason = \"unsurveyed\", replacement = \"area\", remove_after = 2027-06-01 }\n\
              \"permitted_geometry.Polygon\" = { reason = \"always multi\", remove_after = 2027-06-01 }\n\
              \"max_null_fraction.name\" = { reason = \"names complete\", remove_after = 2027-06-01 }\n";
    }
    t
}

#[test]
fn the_odcs_export_carries_each_deprecation_and_datacontract_grades_it_as_diff_does() {
    use crate::common::world::{closed_port, World};
    use crate::test_export_odcs::custom;
    let w = World::new(closed_port());
    for (version, head) in LAKES {
        w.write(
            &format!("contracts/lakes/{version}.toml"),
            &format!(
                "dataset = \"lakes\"\nversion = \"{version}\"\ndescription = \"Lakes\"\n{head}{}",
                lakes_clauses(version)
            ),
        );
    }
    let today = "2026-11-29";
    let run = w.run(today, &["export", "odcs", "lakes@1.1.0"]);
    run.assert_code(0);
    let doc = crate::test_export_odcs::valid_odcs(&run.stdout());
    let object = &doc["schema"][0];
    let depth = row(&object["properties"], "name", "depth");
    let customs = &depth["customProperties"];
    assert_eq!(custom(customs, "deprecated"), Some(&Value::Bool(true)));
    assert_eq!(custom(customs, "reason"), Some(&"unsurveyed".into()));
    assert_eq!(custom(customs, "replacement"), Some(&"area".into()));
    assert_eq!(custom(customs, "removeAfter"), Some(&"2027-06-01".into()));
    // A geometry type is the geometry column's; a limit the schema object's.
    let geometry = &object["properties"][0];
    let listed = custom(&geometry["customProperties"], "deprecated").unwrap();
    assert_eq!(
        listed[0]["key"], "permitted_geometry.Polygon",
        "{geometry:#}"
    );
    let listed = custom(&object["customProperties"], "deprecated").unwrap();
    assert_eq!(listed[0]["key"], "max_null_fraction.name", "{object:#}");
    assert_eq!(listed[0]["removeAfter"], "2027-06-01");
    // datacontract-cli lints each export and grades each pair as `diff` does: the deprecation
    // is compatible, the removal breaking.
    let dir = tempfile::tempdir().unwrap();
    let export = |target: &str, file: &std::path::Path| {
        w.run(
            today,
            &["export", "odcs", target, "--out", file.to_str().unwrap()],
        )
        .assert_code(0);
    };
    let diff = |a: &str, b: &str| {
        let (a, b) = (format!("lakes@{a}"), format!("lakes@{b}"));
        w.run(today, &["--format", "json", "diff", &a, &b]).json()
    };
    let versions: Vec<&str> = LAKES.iter().map(|(v, _)| *v).collect();
    let breaking = crate::test_export_odcs_graded::check_grades(
        dir.path(),
        "lakes",
        &versions,
        &export,
        &diff,
    );
    assert_eq!(breaking, 2, "1.0.0 and 1.1.0 to 2.0.0");
    // The site lists them under the version that deprecates them.
    let out = w.root().join("public");
    w.run(today, &["site", out.to_str().unwrap()])
        .assert_code(0);
    let page = std::fs::read_to_string(out.join("lakes.html")).unwrap();
    let v11 = page.find("id=\"v1.1.0\"").expect("a section for 1.1.0");
    let v10 = page.find("id=\"v1.0.0\"").expect("a section for 1.0.0");
    let section = &page[v11..v10];
    let text =
        "<td>optional_attributes.depth</td><td>2027-06-01</td><td>area</td><td>unsurveyed</td>";
    assert!(section.contains(text), "no {text} in:\n{section}");
    assert!(
        !page[v10..].contains("unsurveyed"),
        "1.0.0 deprecates nothing"
    );
}
