//! Waivers (issue 24), end to end through the real binary in temporary stores with a fixed
//! --today: granted, listed, honoured by `validate` in every format and recorded with a
//! release; expiring, revoked, refused when too long or not a clause key; `check` on a
//! doctored waivers file and its warning before a waiver ends; `show`, `site` and `timeline`.
//! Notices live beside the other notices (`notify_milestones.rs` by mail,
//! `notify_webhooks.rs` by mail and webhook), the retirement thresholds in `retire.rs`.

use crate::common;
use crate::common::world;
use crate::common::Rows;

use world::World;

const ID: &str = "places:1:max_null_fraction.pop_est:2026-11-29";

/// A dataset whose contract allows 2% nulls in `pop_est`, and a release with one null in
/// four (25%): it fails that one key.
fn world() -> (World, String) {
    let w = World::new(world::closed_port());
    w.write(
        "contracts/places/1.0.0.toml",
        "dataset = \"places\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
         [clauses]\ncrs = \"EPSG:4326\"\n\
         required_attributes = { name = \"string\", pop_est = \"float64\" }\n\
         max_null_fraction = { name = 0.10, pop_est = 0.02 }\n",
    );
    let feature = |name: &str, pop: &str| {
        format!(
            "{{\"type\":\"Feature\",\"geometry\":{{\"type\":\"Point\",\"coordinates\":[1.0,2.0]}},\
             \"properties\":{{\"name\":\"{name}\",\"pop_est\":{pop}}}}}"
        )
    };
    let data = format!(
        "{{\"type\":\"FeatureCollection\",\"features\":[{},{},{},{}]}}",
        feature("a", "1.5"),
        feature("b", "2.5"),
        feature("c", "null"),
        feature("d", "4.5")
    );
    let path = w.root().join("release.geojson");
    std::fs::write(&path, data).unwrap();
    std::fs::write(
        w.root().join("release.toml"),
        "version = \"2026.11\"\ndate = 2026-11-28\n",
    )
    .unwrap();
    let p = path.display().to_string();
    (w, p)
}

fn commits(w: &World) -> usize {
    w.git(&["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap()
}

fn waive(w: &World, today: &str, extra: &[&str]) -> world::Run {
    let mut args = vec![
        "waive",
        "places",
        "max_null_fraction.pop_est",
        "--reason",
        "Upstream outage; the fix ships in January",
    ];
    args.extend_from_slice(extra);
    w.run(today, &args)
}

#[test]
fn a_waiver_is_granted_listed_honoured_and_recorded_then_expires() {
    let (w, data) = world();
    // Without a waiver the release fails the key.
    w.run("2026-11-29", &["validate", "places", &data])
        .assert_code(1);
    let before = commits(&w);
    let run = waive(
        &w,
        "2026-11-29",
        &[
            "--until",
            "2026-12-31",
            "--line",
            "1",
            "--release",
            "2026.11",
        ],
    );
    run.assert_code(0);
    assert!(run.stdout().starts_with(ID), "{}", run.stdout());
    assert_eq!(commits(&w), before + 1, "one commit");
    let file = w.read("history/places.waivers.toml").unwrap();
    assert!(
        file.contains("by      = \"Notifier <notifier@example.org>\""),
        "the author from git: {file}"
    );
    assert!(file.contains("release = \"2026.11\""), "{file}");
    // Listed with its days left (2026-11-29 to 2026-12-31).
    let rows = w
        .run("2026-11-29", &["--format", "json", "waivers"])
        .assert_code(0)
        .json();
    assert_eq!(rows[0]["id"], ID);
    assert_eq!(rows[0]["state"], "live");
    assert_eq!(rows[0]["days_left"], 32);
    let rows = w
        .run("2026-11-29", &["--format", "json", "status", "places"])
        .assert_code(0)
        .json();
    assert_eq!(rows[0]["waivers"], 1, "status counts it");
    let text = w.run("2026-11-29", &["waivers", "places"]);
    text.assert_code(0);
    text.assert_stdout_has("2026-12-31");

    // validate honours it in every format.
    let validate_in = |format: &str| {
        let run = w.run(
            "2026-11-29",
            &["--format", format, "validate", "places", &data],
        );
        run.assert_code(0);
        run
    };
    let run = w.run("2026-11-29", &["validate", "places", &data]);
    run.assert_code(0);
    let want = "waived (until 2026-12-31, by Notifier <notifier@example.org>: Upstream outage; \
                the fix ships in January)";
    run.assert_stdout_has(want);
    run.assert_stdout_has("places@1.0.0: pass (1 failing clause(s) waived)");
    let j = validate_in("json").json();
    let result = j["contracts"][0]["results"]
        .rows()
        .find(|r| r["clause"] == "max_null_fraction")
        .unwrap()
        .clone();
    assert_eq!(result["status"], "waived");
    assert_eq!(result["waivers"][0]["id"], ID);
    let junit = validate_in("junit").stdout();
    assert!(
        junit.contains(
            "name=\"max_null_fraction\">\n      <skipped message=\"waived (until 2026-12-31"
        ),
        "{junit}"
    );
    assert!(junit.contains("failures=\"0\""), "{junit}");
    let sarif = validate_in("sarif").json();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{sarif:#}");
    assert_eq!(results[0]["level"], "warning");
    let github = validate_in("github").stdout();
    assert!(github.starts_with("::warning "), "{github}");

    // Recorded with the release, naming the waiver.
    let manifest = w.root().join("release.toml").display().to_string();
    w.run(
        "2026-11-29",
        &[
            "validate",
            "places",
            &data,
            "--manifest",
            &manifest,
            "--record",
        ],
    )
    .assert_code(0);
    let records = w.read("history/places.releases.toml").unwrap();
    assert!(
        records.contains(&format!("waivers = [\"{ID}\"]")),
        "{records}"
    );
    // The store still checks, and warns once the waiver ends within 14 days.
    let run = w.run("2026-12-20", &["check"]);
    run.assert_stderr_has(&format!(
        "waiver {ID} on places line 1, max_null_fraction.pop_est, ends on 2026-12-31"
    ));
    assert!(!run.stdout().contains("waivers.toml"), "{}", run.stdout());
    assert!(!w.run("2026-11-29", &["check"]).stderr().contains("ends on"));

    // On its last day it still covers; the day after, the same release fails again.
    w.run("2026-12-31", &["validate", "places", &data])
        .assert_code(0);
    w.run("2027-01-01", &["validate", "places", &data])
        .assert_code(1);
    // Listed as expired only with --all.
    let rows = w.run("2027-01-01", &["--format", "json", "waivers"]).json();
    assert_eq!(rows, serde_json::json!([]));
    let rows = w
        .run("2027-01-01", &["--format", "json", "waivers", "--all"])
        .json();
    assert_eq!(rows[0]["state"], "expired");
}

#[test]
fn a_revoked_waiver_covers_nothing_from_the_day_it_is_revoked() {
    let (w, data) = world();
    waive(&w, "2026-11-29", &["--until", "2026-12-31"]).assert_code(0);
    let id = "places:all:max_null_fraction.pop_est:2026-11-29";
    let run = w.run(
        "2026-12-05",
        &[
            "unwaive",
            "places",
            "max_null_fraction.pop_est",
            "--reason",
            "Fixed upstream early",
        ],
    );
    run.assert_code(0);
    assert!(run.stdout().starts_with(id), "{}", run.stdout());
    w.run("2026-12-05", &["validate", "places", &data])
        .assert_code(1);
    // Replaying an earlier day, it still covered.
    w.run("2026-12-04", &["validate", "places", &data])
        .assert_code(0);
    let rows = w
        .run("2026-12-05", &["--format", "json", "waivers", "--all"])
        .json();
    assert_eq!(rows[0]["state"], "revoked");
    assert_eq!(rows[0]["revoked_on"], "2026-12-05");
    // Nothing left to revoke: exit 1, nothing written.
    let before = commits(&w);
    w.run(
        "2026-12-06",
        &[
            "unwaive",
            "places",
            "max_null_fraction.pop_est",
            "--reason",
            "again",
        ],
    )
    .assert_code(1);
    assert_eq!(commits(&w), before);
    // A second waiver of the same key on the same day gets a counter.
    waive(&w, "2026-11-29", &["--until", "2026-12-02"]).assert_code(0);
    let file = w.read("history/places.waivers.toml").unwrap();
    assert!(file.contains(&format!("id      = \"{id}:2\"")), "{file}");
}

#[test]
fn too_long_or_not_a_clause_key_is_refused_and_nothing_is_written() {
    let (w, _) = world();
    let before = commits(&w);
    // 2026-11-29 + 90 days is 2027-02-27.
    let run = waive(&w, "2026-11-29", &["--until", "2027-02-28"]);
    run.assert_code(2);
    run.assert_stderr_has("[policy] max_waiver_days allows 90");
    waive(&w, "2026-11-29", &["--until", "2027-02-27"]).assert_code(0);
    let before_refusals = commits(&w);
    assert_eq!(before_refusals, before + 1);
    for key in [
        "bump",
        "version",
        "window",
        "sunset",
        "min_window_days",
        "lines",
    ] {
        let run = w.run(
            "2026-11-29",
            &[
                "waive",
                "places",
                key,
                "--until",
                "2026-12-01",
                "--reason",
                "x",
            ],
        );
        run.assert_code(2);
        assert!(
            run.stderr().contains("a waiver covers validation only"),
            "{key}: {}",
            run.stderr()
        );
    }
    let run = w.run(
        "2026-11-29",
        &[
            "waive",
            "places",
            "max_null_fraction.nope",
            "--until",
            "2026-12-01",
            "--reason",
            "x",
        ],
    );
    run.assert_code(2);
    run.assert_stderr_has("`nope`");
    w.run(
        "2026-11-29",
        &[
            "waive",
            "places",
            "crs",
            "--until",
            "2026-12-01",
            "--reason",
            "x",
            "--line",
            "2",
        ],
    )
    .assert_code(2);
    assert_eq!(commits(&w), before_refusals, "a refusal writes nothing");
}

#[test]
fn check_finds_a_doctored_waivers_file() {
    let (w, _) = world();
    waive(&w, "2026-11-29", &["--until", "2026-12-31", "--line", "1"]).assert_code(0);
    let clean = w.run("2026-11-29", &["--format", "json", "check"]).json();
    let about = |j: &serde_json::Value| -> Vec<String> {
        j["findings"]
            .rows()
            .filter(|f| f["file"] == "history/places.waivers.toml")
            .map(|f| f["message"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(about(&clean), Vec::<String>::new());
    // Stretch the waiver by hand, in a commit of its own.
    let text = w.read("history/places.waivers.toml").unwrap();
    w.write(
        "history/places.waivers.toml",
        &text.replace("until   = 2026-12-31", "until   = 2027-12-31"),
    );
    let run = w.run("2026-11-29", &["--format", "json", "check"]);
    run.assert_code(1);
    let found = about(&run.json());
    assert!(
        found
            .iter()
            .any(|m| m.contains("an append-only file was rewritten")),
        "{found:#?}"
    );
    assert!(
        found.iter().any(|m| m.contains("max_waiver_days")),
        "{found:#?}"
    );
}

/// A store made by `init` and `propose` alone, so `check` finds nothing in it, with the
/// places contract and a waiver of `pop_est` on line 1 until 2026-12-31 granted on
/// 2026-11-29.
fn clean_store_with_a_waiver() -> (common::World, std::path::PathBuf) {
    let env = common::World::empty();
    let dir = env.home().join("store");
    let run = env.run_in(env.home(), &["init", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let draft = env.home().join("draft.toml");
    std::fs::write(
        &draft,
        "dataset = \"places\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n[clauses]\n\
         crs = \"EPSG:4326\"\nmax_null_fraction = { name = 0.10, pop_est = 0.02 }\n",
    )
    .unwrap();
    let run = env.run_in(
        &dir,
        &[
            "propose",
            draft.to_str().unwrap(),
            "--rationale",
            "First places contract.",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let run = env.run_in(
        &dir,
        &[
            "--today",
            "2026-11-29",
            "waive",
            "places",
            "max_null_fraction.pop_est",
            "--line",
            "1",
            "--until",
            "2026-12-31",
            "--reason",
            "Upstream outage",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    (env, dir)
}

/// `check` warns of a live waiver whose last day is 14 days away or nearer, in every format,
/// and a warning never changes the exit code.
#[test]
fn check_warns_of_a_waiver_ending_within_14_days_and_still_exits_0() {
    let (env, dir) = clean_store_with_a_waiver();
    let check = |today: &str, format: &str| -> common::Run {
        env.run_in(&dir, &["--today", today, "--format", format, "check"])
    };
    let until = world::day("2026-12-31");
    let fourteen = (until - chrono::Duration::days(14)).to_string();
    let fifteen = (until - chrono::Duration::days(15)).to_string();
    let file = "history/places.waivers.toml";
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let id_line = world::line_of(&text, &format!("id      = \"{ID}\""));

    // 15 days before its last day: nothing to say, and the store is clean.
    let run = check(&fifteen, "json");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let j = run.json();
    assert_eq!(j["findings"], serde_json::json!([]), "{j:#}");
    assert_eq!(
        (j["errors"].clone(), j["warnings"].clone()),
        (0.into(), 0.into())
    );
    let run = check(&fifteen, "text");
    assert_eq!(run.code, 0);
    assert!(!run.stderr.contains(ID), "{}", run.stderr);

    // 14 days before: one warning, exit 0.
    let run = check(&fourteen, "json");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let j = run.json();
    let found = j["findings"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{j:#}");
    assert_eq!(found[0]["severity"], "warning");
    assert_eq!(found[0]["file"], file);
    assert_eq!(found[0]["line"], id_line);
    let message = found[0]["message"].as_str().unwrap();
    let want = format!(
        "waiver {ID} on places line 1, max_null_fraction.pop_est, ends on 2026-12-31 (in 14 days)"
    );
    assert!(message.starts_with(&want), "{message}");
    assert_eq!(
        (j["errors"].clone(), j["warnings"].clone()),
        (0.into(), 1.into())
    );

    // Text: the warning is talk on stderr; stdout still says the gate passed.
    let run = check(&fourteen, "text");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.assert_stderr_has(&format!("warning: {file}:{id_line}:1: {want}"));
    assert!(run.stdout.starts_with("ok: "), "{}", run.stdout);
    run.assert_stdout_has("1 warning(s)");

    // CI formats: a warning-level annotation on the waiver's line.
    let run = check(&fourteen, "github");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("::warning file="), "{}", run.stdout);
    run.assert_stdout_has(&format!("line={id_line},"));
    let run = check(&fourteen, "sarif");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let sarif = run.json();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{sarif:#}");
    assert_eq!(results[0]["level"], "warning");
    assert_eq!(results[0]["ruleId"], "waiver-ending");

    // On its last day it still warns; the day after it is no longer live.
    let last = check("2026-12-31", "json").json();
    assert!(
        last["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("(today)"),
        "{last:#}"
    );
    let after = check("2027-01-01", "json");
    assert_eq!(after.code, 0);
    assert_eq!(after.json()["findings"], serde_json::json!([]));

    // A warning beside an error: the error alone sets the exit code, the table and the count.
    std::fs::write(dir.join("contracts/places/oops.toml"), "not a contract\n").unwrap();
    common::git_as(&dir, env.home(), common::AUTHOR, &["add", "-A"]);
    common::git_as(&dir, env.home(), common::AUTHOR, &["commit", "-qm", "oops"]);
    let run = check(&fourteen, "json");
    assert_eq!(run.code, 1, "{}", run.stdout);
    let j = run.json();
    assert_eq!(j["warnings"], 1, "{j:#}");
    assert!(j["errors"].as_u64().unwrap() >= 1, "{j:#}");
    let run = check(&fourteen, "text");
    assert_eq!(run.code, 1);
    assert!(
        !run.stdout.contains(ID),
        "a warning is not in the table: {}",
        run.stdout
    );
    run.assert_stderr_has(&want);
}

/// `show`, `site` and `timeline` say which waivers a line has: the live ones with their days
/// left in `show` and on the dataset's page, every one as a band in the picture.
#[test]
fn show_site_and_timeline_name_the_waivers_of_a_line() {
    let (w, _) = world();
    let reason = "Upstream outage; the fix ships in January";
    waive(&w, "2026-11-29", &["--until", "2026-12-31", "--line", "1"]).assert_code(0);
    let today = "2026-12-10";
    let left = (world::day("2026-12-31") - world::day(today)).num_days();

    let j = w
        .run(today, &["--format", "json", "show", "places"])
        .assert_code(0)
        .json();
    let shown = j["waivers"].as_array().unwrap();
    assert_eq!(shown.len(), 1, "{j:#}");
    assert_eq!(shown[0]["id"], ID);
    assert_eq!(shown[0]["clause"], "max_null_fraction.pop_est");
    assert_eq!(shown[0]["until"], "2026-12-31");
    assert_eq!(shown[0]["days_left"], left);
    assert_eq!(shown[0]["by"], "Notifier <notifier@example.org>");
    assert_eq!(shown[0]["reason"], reason);
    let text = w.run(today, &["show", "places"]);
    text.assert_code(0);
    let out = text.stdout();
    let row = out
        .lines()
        .find(|l| l.contains(ID))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains("2026-12-31"), "{row}");
    assert!(row.contains(&format!("{left} days left")), "{row}");
    // Once it has expired, `show` lists none.
    let j = w
        .run("2027-01-01", &["--format", "json", "show", "places"])
        .json();
    assert_eq!(j["waivers"], serde_json::json!([]));

    // The dataset's page lists it.
    let out = w.root().join("site-out");
    w.run(today, &["site", out.to_str().unwrap()])
        .assert_code(0);
    let page = std::fs::read_to_string(out.join("places.html")).unwrap();
    assert!(
        page.contains("<h2 id=\"waivers\">Live waivers</h2>"),
        "{page}"
    );
    let section = &page[page.find("id=\"waivers\"").unwrap()..];
    let section = &section[..section.find("<h2").unwrap_or(section.len())];
    for want in [
        ID,
        "max_null_fraction.pop_est",
        "2026-12-31",
        &left.to_string(),
    ] {
        assert!(section.contains(want), "{want}: {section}");
    }
    assert!(section.contains("Upstream outage"), "{section}");
    // Expired: no section.
    w.run("2027-01-01", &["site", out.to_str().unwrap()])
        .assert_code(0);
    let page = std::fs::read_to_string(out.join("places.html")).unwrap();
    assert!(!page.contains("id=\"waivers\""), "{page}");

    // The picture draws it on line 1 with a title naming the clause key and both days.
    let svg = w
        .run(today, &["timeline", "places"])
        .assert_code(0)
        .stdout();
    let band = svg
        .lines()
        .find(|l| l.starts_with("<g class=\"waiver\">"))
        .unwrap_or_else(|| panic!("{svg}"));
    assert!(
        band.contains(&format!(
            "<title>waiver {ID}: max_null_fraction.pop_est waived on line 1 from 2026-11-29 to \
             2026-12-31</title>"
        )),
        "{band}"
    );
    assert!(band.contains("waived: max_null_fraction.pop_est"), "{band}");
    let j = w
        .run(today, &["--format", "json", "timeline", "places"])
        .json();
    assert_eq!(j["waivers"][0]["id"], ID);
    assert_eq!(j["waivers"][0]["granted"], "2026-11-29");
    assert_eq!(j["waivers"][0]["until"], "2026-12-31");
}

#[test]
fn a_waiver_of_every_line_reads_as_english_in_check_and_the_timeline() {
    let (w, _) = world();
    waive(&w, "2026-11-29", &["--until", "2026-12-31"]).assert_code(0);
    let j = w
        .run("2026-12-20", &["--format", "json", "show", "places"])
        .assert_code(0)
        .json();
    let id = j["waivers"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(j["waivers"][0]["line"], serde_json::Value::Null, "{j:#}");

    let run = w.run("2026-12-20", &["check"]);
    run.assert_stderr_has(&format!(
        "waiver {id} on every line of places, max_null_fraction.pop_est, ends on 2026-12-31 \
         (in 11 days)"
    ));
    let svg = w
        .run("2026-12-20", &["timeline", "places"])
        .assert_code(0)
        .stdout();
    let title = format!(
        "<title>waiver {id}: max_null_fraction.pop_est waived on every line from 2026-11-29 to \
         2026-12-31</title>"
    );
    assert!(svg.contains(&title), "{svg}");
}
