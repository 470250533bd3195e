//! Dates, windows and versions that cannot drift apart (issue 9), through the real binary in
//! a temporary store with a fixed `--today` (2026-11-29 unless a test says otherwise).

use crate::common;

use std::path::PathBuf;

use common::{roads, Run, Store, World, CLAUSES};

fn draft(
    version: &str,
    supersedes: Option<&str>,
    valid_from: &str,
    sunset: Option<&str>,
) -> String {
    roads(version, supersedes, valid_from, sunset, &crs_of(version))
}

/// Each major changes the CRS (a breaking change), so every line is a real major.
fn crs_of(version: &str) -> String {
    let crs = match version.split('.').next().unwrap() {
        "1" => "EPSG:4326",
        "2" => "EPSG:4258",
        "3" => "EPSG:4269",
        _ => "EPSG:4230",
    };
    CLAUSES.replace("EPSG:4326", crs)
}

impl Store {
    fn sunset(&self, line: &str, on: &str, extra: &[&str]) -> Run {
        self.sunset_roads(line, on, "Two teams need more time.", extra)
    }

    /// roads 1.0.0, 1.1.0, and 2.0.0 live from 2027-01-01 closing line 1 on 2027-07-01.
    fn with_two_lines(&self) {
        self.propose_ok(&draft("1.0.0", None, "2026-01-01", None), "Because.");
        self.propose_ok(
            &roads(
                "1.1.0",
                Some("1.0.0"),
                "2026-03-01",
                None,
                &crs_of("1").replace("2.0 }", "1.5 }"),
            ),
            "Because.",
        );
        self.propose_ok(
            &draft("2.0.0", Some("1.1.0"), "2027-01-01", Some("2027-07-01")),
            "Because.",
        );
    }
}

/// Assert that one of `findings` says `text`, showing them all when none does.
#[track_caller]
fn assert_finding(findings: &[serde_json::Value], text: &str) {
    assert!(
        findings
            .iter()
            .any(|f| f["message"].as_str().unwrap().contains(text)),
        "{findings:#?}"
    );
}

#[test]
fn a_new_major_must_agree_with_the_sunset_already_recorded_for_its_line() {
    let s = Store::new();
    s.with_two_lines();
    // Line 2 is the newest line: no successor declares its sunset, an event does.
    let run = s.sunset("2", "2027-08-01", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = s.propose(
        &draft("3.0.0", Some("2.0.0"), "2027-07-01", Some("2027-11-01")),
        "Because.",
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    run.assert_stderr_has(
        "3.0.0 declares sunset = 2027-11-01 for line 2, but line 2's sunset is already 2027-08-01",
    );
    // Agreeing is not enough: 2027-07-01 .. 2027-08-01 is 31 days (July has 31), under 90.
    let run = s.propose(
        &draft("3.0.0", Some("2.0.0"), "2027-07-01", Some("2027-08-01")),
        "Because.",
    );
    assert_eq!(run.code, 1);
    run.assert_stderr_has("is 31 days, outside the policy's 90..365");
    // Moved later first, the proposal that agrees is accepted with a 123-day window
    // (Jul 31 + Aug 31 + Sep 30 + Oct 31 = 123).
    let run = s.sunset("2", "2027-11-01", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = s.propose(
        &draft("3.0.0", Some("2.0.0"), "2027-07-01", Some("2027-11-01")),
        "Because.",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run
        .stdout
        .contains("window: 2027-07-01 .. 2027-11-01 (123 days)"));
    s.assert_check_passes();
}

#[test]
fn check_fails_a_store_whose_new_major_disagrees_with_a_recorded_sunset() {
    // Lay out by hand what `propose` accepted before: a [[sunset]] event for line 2, then
    // 3.0.0 declaring another date. Both records are genuine output of the binary.
    let s = Store::new();
    s.with_two_lines();
    let base = s.git(&["rev-parse", "HEAD"]).trim().to_string();
    s.propose_ok(
        &draft("3.0.0", Some("2.0.0"), "2027-07-01", Some("2027-11-01")),
        "Because.",
    );
    let with_3 = std::fs::read_to_string(s.dir.join("history/roads.toml")).unwrap();
    let contract_3 = std::fs::read_to_string(s.dir.join("contracts/roads/3.0.0.toml")).unwrap();
    s.git(&["reset", "-q", "--hard", &base]);
    let before = std::fs::read_to_string(s.dir.join("history/roads.toml")).unwrap();
    let records_3 = with_3.strip_prefix(&before).unwrap().to_string();
    let run = s.sunset("2", "2027-08-01", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut history = std::fs::read_to_string(s.dir.join("history/roads.toml")).unwrap();
    history += &records_3;
    std::fs::write(s.dir.join("history/roads.toml"), history).unwrap();
    std::fs::write(s.dir.join("contracts/roads/3.0.0.toml"), contract_3).unwrap();
    s.git(&["add", "-A"]);
    s.git(&["commit", "-qm", "3.0.0 the old way"]);
    let f = s.findings();
    assert_finding(
        &f,
        "3.0.0 declares sunset = 2027-11-01 for line 2, but line 2's sunset is already 2027-08-01",
    );
    assert_finding(
        &f,
        "the window of line 2 (from 2027-07-01, line 3 opens, to its sunset 2027-08-01) is 31 days",
    );
    // status, show and check agree on the one value.
    let status = s.json(&["--today", "2027-07-15", "status", "roads"]);
    assert_eq!(status[0]["line"], 2);
    assert_eq!(status[0]["sunset"], "2027-08-01");
}

#[test]
fn check_replays_a_hand_appended_move_against_the_sunset_rules() {
    let s = Store::new();
    s.with_two_lines();
    // Moved earlier by hand, without --force and outside the window: a valid-looking record.
    let path = s.dir.join("history/roads.toml");
    let mut history = std::fs::read_to_string(&path).unwrap();
    history +=
        "\n[[sunset]]\nat        = 2026-11-29T10:00:00Z\nline      = 1\nfrom      = 2027-07-01\n\
                to        = 2027-02-01\nrationale = \"Hurry.\"\n";
    std::fs::write(&path, history).unwrap();
    s.git(&["commit", "-qam", "hurry"]);
    let f = s.findings();
    assert_finding(&f, "line 1's sunset was set to 2027-02-01 without --force: 2027-02-01 is earlier than the committed sunset 2027-07-01");
    // 2027-01-01 .. 2027-02-01 is 31 days.
    assert_finding(&f, "line 1's sunset was set to 2027-02-01 without --force: the window from 2027-01-01 (line 2 opens) to 2027-02-01 would be 31 days");
    assert_finding(&f, "the window of line 1");
}

#[test]
fn show_prints_the_effective_sunset_of_every_version_and_where_it_came_from() {
    let s = Store::new();
    s.with_two_lines();
    // 2026-11-29 .. 2027-07-01: Dec 2 + 31 + Jan..Jun (31+28+31+30+31+30 = 181) = 214.
    let j = s.json(&["show", "roads@1.1.0"]);
    assert_eq!(j["line_sunset"]["date"], "2027-07-01");
    assert_eq!(j["line_sunset"]["days_left"], 214);
    assert_eq!(j["line_sunset"]["source"]["kind"], "contract");
    assert_eq!(j["line_sunset"]["source"]["version"], "2.0.0");
    // Before any `contracts sunset`, the date 2.0.0 declares for line 1 is the one in force.
    let j = s.json(&["show", "roads@2.0.0"]);
    assert_eq!(j["sunset"], "2027-07-01", "{j}");
    let p = &j["predecessor_sunset"];
    assert_eq!(p["line"], 1, "{j}");
    assert_eq!(p["declared"], "2027-07-01", "{j}");
    assert_eq!(p["effective"], "2027-07-01", "{j}");
    assert_eq!(p["source"]["kind"], "contract", "{j}");
    assert_eq!(p["source"]["version"], "2.0.0", "{j}");
    let text = s.run(&["show", "roads@2.0.0"]);
    text.assert_stdout_has("declares the sunset of line 1: 2027-07-01\n");
    let run = s.sunset("1", "2027-08-01", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for v in ["1.0.0", "1.1.0"] {
        let j = s.json(&["show", &format!("roads@{v}")]);
        assert_eq!(j["line_sunset"]["date"], "2027-08-01", "{v}");
        // + 31 days of July.
        assert_eq!(j["line_sunset"]["days_left"], 245, "{v}");
        assert_eq!(j["line_sunset"]["source"]["kind"], "sunset-event");
        assert_eq!(
            j["line_sunset"]["source"]["rationale"],
            "Two teams need more time."
        );
    }
    let text = s.run(&["show", "roads@1.1.0"]);
    text.assert_stdout_has(
        "sunset of line 1: 2027-08-01 (245 days left), set by `contracts sunset` on ",
    );
    text.assert_stdout_has("Two teams need more time.");
    // 2.0.0 declared 2027-07-01 for line 1; show says the line's sunset moved since.
    let text = s.run(&["show", "roads@2.0.0"]);
    text.assert_stdout_has("declares the sunset of line 1: 2027-07-01 (since moved to 2027-08-01)");
    text.assert_stdout_has("sunset of line 2: none yet");
    // JSON readers get the moved date too, not only the one the file declares.
    let j = s.json(&["show", "roads@2.0.0"]);
    // `sunset` stays what the file says, for the readers that use it.
    assert_eq!(j["sunset"], "2027-07-01", "{j}");
    let p = &j["predecessor_sunset"];
    assert_eq!(p["line"], 1, "{j}");
    assert_eq!(p["declared"], "2027-07-01", "{j}");
    assert_eq!(p["effective"], "2027-08-01", "{j}");
    assert_eq!(p["source"]["kind"], "sunset-event", "{j}");
    // A minor declares no sunset of another line.
    assert!(s.json(&["show", "roads@1.1.0"])["predecessor_sunset"].is_null());
}

/// A store laid out by hand with plain git: world 1.0.0 (EPSG:4326) and 2.0.0 (EPSG:3857)
/// live together from 2026-05-01 until line 1's sunset on 2026-10-01.
fn world_store() -> (World, PathBuf) {
    let env = World::empty();
    let dir = env.home().join("world");
    std::fs::create_dir_all(dir.join("contracts/world")).unwrap();
    std::fs::write(dir.join("contracts.toml"), "").unwrap();
    std::fs::write(
        dir.join("contracts/world/1.0.0.toml"),
        "dataset = \"world\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n[clauses]\ncrs = \"EPSG:4326\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("contracts/world/2.0.0.toml"),
        "dataset = \"world\"\nversion = \"2.0.0\"\nsupersedes = \"1.0.0\"\nvalid_from = 2026-05-01\n\
         sunset = 2026-10-01\n[clauses]\ncrs = \"EPSG:3857\"\n",
    )
    .unwrap();
    let git = |args: &[&str]| common::git_as(&dir, env.home(), ("Fixture", "f@example.org"), args);
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "fixture"]);
    (env, dir)
}

#[test]
fn validate_line_checks_a_release_against_one_live_line() {
    let (env, dir) = world_store();
    let countries = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/naturalearth/countries.gpkg")
        .display()
        .to_string();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--format",
            "json",
            "--today",
            "2026-06-01",
            "validate",
            "world",
        ];
        args.extend_from_slice(extra);
        args.push(&countries);
        env.run_in(&dir, &args)
    };
    // Default: every live line; the EPSG:4326 release fails line 2's EPSG:3857.
    let both = run(&[]);
    assert_eq!(both.code, 1, "{}", both.stderr);
    assert_eq!(both.json()["contracts"].as_array().unwrap().len(), 2);
    let one = run(&["--line", "1"]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    let contracts = one.json()["contracts"].as_array().unwrap().clone();
    assert_eq!(contracts.len(), 1);
    assert_eq!(contracts[0]["version"], "1.0.0");
    let two = run(&["--line", "2"]);
    assert_eq!(two.code, 1);
    assert_eq!(two.json()["contracts"][0]["version"], "2.0.0");
    let three = run(&["--line", "3"]);
    assert_eq!(three.code, 2);
    assert!(
        three
            .stderr
            .contains("line 3 of `world` is not live on 2026-06-01 (live lines: 1, 2)"),
        "{}",
        three.stderr
    );
}

#[test]
fn a_crossing_envelope_is_never_silent_and_a_wide_one_must_be_meant() {
    let s = Store::new();
    // [-10, 40, 10, 60] with minx and maxx swapped: crosses, 360 - (10 - -10) = 340° wide.
    let swapped = CLAUSES.replace("[-10.0, 40.0, 10.0, 60.0]", "[10.0, 40.0, -10.0, 60.0]");
    let run = s.propose(
        &roads("1.0.0", None, "2026-01-01", None, &swapped),
        "Because.",
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    run.assert_stderr_has("1.0.0: `envelope` has minx 10 > maxx -10, so it crosses the antimeridian and is 340.0° wide");
    run.assert_stderr_has("wide_antimeridian = [\"envelope\"]");
    // Meant: listed, it is accepted, and still named with its width.
    let meant = roads("1.0.0", None, "2026-01-01", None, &swapped).replace(
        "\n[clauses]",
        "wide_antimeridian = [\"envelope\"]\n\n[clauses]",
    );
    let run = s.propose(&meant, "Because.");
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.assert_stderr_has("note: roads@1.0.0: `envelope` crosses the antimeridian (minx 10 > maxx -10) and is 340.0° wide");
    // A narrow crossing (Fiji-like, 170 .. -170: 20° wide) is accepted and said.
    let fiji = CLAUSES.replace("[-10.0, 40.0, 10.0, 60.0]", "[170.0, 40.0, -170.0, 60.0]");
    let next = roads("1.1.0", Some("1.0.0"), "2026-02-01", None, &fiji);
    let path = s.write("fiji.toml", &next);
    let run = s.run(&["diff", "roads@1.0.0", &path]);
    run.assert_stderr_has("note: roads@1.1.0: `envelope` crosses the antimeridian (minx 170 > maxx -170) and is 20.0° wide");
    run.assert_stderr_has("note: roads@1.0.0: `envelope` crosses the antimeridian (minx 10 > maxx -10) and is 340.0° wide");
    let j = s.json(&["show", "roads@1.0.0"]);
    assert_eq!(j["antimeridian"][0]["clause"], "envelope");
    assert_eq!(j["antimeridian"][0]["width_degrees"], 340.0);
    assert_eq!(j["antimeridian"][0]["meant_wide"], true);
    let text = s.run(&["show", "roads@1.0.0"]);
    text.assert_stdout_has("`envelope` crosses the antimeridian (minx 10 > maxx -10) and is 340.0° wide (wide_antimeridian: on purpose)");
    // Naming a clause that is not a wide crossing is an error in the draft.
    let wrong = draft("1.1.0", Some("1.0.0"), "2026-02-01", None).replace(
        "\n[clauses]",
        "wide_antimeridian = [\"envelope\"]\n\n[clauses]",
    );
    let run = s.propose(&wrong, "Because.");
    assert_eq!(run.code, 2, "{}", run.stderr);
    run.assert_stderr_has("wide_antimeridian names `envelope`, which is 20.0° wide and does not cross the antimeridian");
}

#[test]
fn check_flags_a_committed_wide_crossing_that_is_not_meant() {
    let s = Store::new();
    s.propose_ok(&draft("1.0.0", None, "2026-01-01", None), "Because.");
    // A minor version committed by hand with the box swapped (records copied from 1.0.0's
    // shape are not needed: check reports the missing records too, and the crossing).
    let swapped = crs_of("1").replace("[-10.0, 40.0, 10.0, 60.0]", "[10.0, 40.0, -10.0, 60.0]");
    std::fs::write(
        s.dir.join("contracts/roads/1.1.0.toml"),
        roads("1.1.0", Some("1.0.0"), "2026-02-01", None, &swapped),
    )
    .unwrap();
    s.git(&["add", "-A"]);
    s.git(&["commit", "-qm", "swapped"]);
    let f = s.findings();
    assert_finding(&f, "1.1.0: `envelope` has minx 10 > maxx -10, so it crosses the antimeridian and is 340.0° wide");
}

fn finding_at<'a>(f: &'a [serde_json::Value], file: &str, text: &str) -> &'a serde_json::Value {
    f.iter()
        .find(|x| x["file"] == file && x["message"].as_str().unwrap().contains(text))
        .unwrap_or_else(|| panic!("no finding `{text}` in {file}: {f:#?}"))
}

const NOTICE: &str = r#"[[notice]]
consumer   = "atlas"
line       = 1
milestone  = "before-60"
recipients = ["atlas@example.org"]
message_id = "<a@example.org>"
at         = 2026-11-29T09:00:00Z
for_date   = 2026-11-29
sunset     = 2027-07-01
"#;

const RELEASE: &str = r#"[[release]]
validated = "2026-11-29"
files = ["roads.gpkg"]
passed = true

[[release.contract]]
version = "1.0.0"
results = { crs = "pass" }
"#;

#[test]
fn check_parses_ledgers_and_release_records_as_strictly_as_their_readers() {
    let s = Store::new();
    s.with_two_lines();
    // Each file is valid TOML that `notify` or `advisory` refuses.
    s.commit_file(
        "notifications/roads.toml",
        NOTICE
            .replace("line       = 1", "line       = -1")
            .as_bytes(),
    );
    s.commit_file(
        "notifications/rivers.toml",
        (NOTICE.to_string() + "colour = \"red\"\n").as_bytes(),
    );
    s.commit_file(
        "history/roads.releases.toml",
        RELEASE.replace("\"pass\"", "\"maybe\"").as_bytes(),
    );
    s.commit_file(
        "history/rivers.releases.toml",
        RELEASE.replace("passed = true\n", "").as_bytes(),
    );
    let f = s.findings();
    let minus = finding_at(
        &f,
        "notifications/roads.toml",
        "notifications/roads.toml:3:14:",
    );
    assert_eq!(
        (minus["line"].as_u64(), minus["column"].as_u64()),
        (Some(3), Some(14))
    );
    let colour = finding_at(&f, "notifications/rivers.toml", "colour");
    assert_eq!(colour["line"], 10, "{colour:#}");
    let maybe = finding_at(&f, "history/roads.releases.toml", "maybe");
    assert_eq!(
        (maybe["line"].as_u64(), maybe["column"].as_u64()),
        (Some(8), Some(19))
    );
    // `results = { crs = ` is 18 characters: the value starts in column 19.
    let missing = finding_at(&f, "history/rivers.releases.toml", "passed");
    assert!(missing["line"].as_u64().is_some(), "{missing:#}");
}

#[test]
fn check_flags_a_record_prepended_to_an_append_only_file() {
    let s = Store::new();
    s.with_two_lines();
    // A [[sunset]] record inserted at the top of a history that had none: every earlier
    // [[change]] record is untouched, but the file no longer only grew at its end.
    let path = s.dir.join("history/roads.toml");
    let history = std::fs::read_to_string(&path).unwrap();
    let forged = format!(
        "[[sunset]]\nat        = 2026-11-29T10:00:00Z\nline      = 1\nfrom      = 2027-07-01\n\
         to        = 2027-09-01\nrationale = \"Earlier than it looks.\"\n\n{history}"
    );
    s.commit_file("history/roads.toml", forged.as_bytes());
    let f = s.findings();
    finding_at(
        &f,
        "history/roads.toml",
        "an append-only file was rewritten, not appended to: a `[[sunset]]` record was inserted before existing records (record 1 of the file)",
    );
}

#[test]
fn errors_about_files_are_located_and_quote_short_excerpts() {
    let s = Store::new();
    s.with_two_lines();
    // Bad UTF-8 has no line: the byte offset is given. "ok = 1\n" is 7 bytes.
    s.commit_file("notifications/roads.toml", b"ok = 1\n\xff\xfe = 2\n");
    // A 10 MB value is quoted as an excerpt, not echoed.
    let huge = format!("{}consumer = \"{}\"\n", NOTICE, "x".repeat(10_000_000));
    s.commit_file("notifications/rivers.toml", huge.as_bytes());
    // A file that is not TOML at all.
    s.commit_file("history/lakes.toml", b"[[change]\nat = \n");
    let run = s.run(&["--format", "json", "check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.len() < 100_000,
        "{} bytes of output",
        run.stdout.len()
    );
    let f = run.json()["findings"].as_array().unwrap().clone();
    finding_at(
        &f,
        "notifications/roads.toml",
        "not UTF-8 text (the first invalid byte is at byte offset 7)",
    );
    let dup = finding_at(&f, "notifications/rivers.toml", "consumer");
    assert_eq!(dup["line"], 10, "{dup:#}");
    let lakes = finding_at(&f, "history/lakes.toml", "history/lakes.toml:1:");
    assert_eq!(lakes["line"], 1);
}

#[test]
fn diff_in_a_store_reads_the_committed_config_and_names_an_uncommitted_one() {
    let s = Store::new();
    let config = std::fs::read_to_string(s.dir.join("contracts.toml")).unwrap()
        + "\n[kinds]\nmin_feature_count = { kind = \"narrowing\", shape = \"lower_bound\", metric = \"feature_count\" }\n";
    std::fs::write(s.dir.join("contracts.toml"), config).unwrap();
    let old = s.write(
        "old.toml",
        &roads(
            "1.0.0",
            None,
            "2026-01-01",
            None,
            &(crs_of("1") + "min_feature_count = 10\n"),
        ),
    );
    let new = s.write(
        "new.toml",
        &roads(
            "1.1.0",
            Some("1.0.0"),
            "2026-02-01",
            None,
            &(crs_of("1") + "min_feature_count = 20\n"),
        ),
    );
    let run = s.run(&["diff", &old, &new]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    run.assert_stderr_has("clause `min_feature_count` has no kind");
    run.assert_stderr_has(
        "warning: uncommitted changes to contracts.toml are not used; commit them",
    );
    s.git(&["commit", "-qam", "a custom kind"]);
    let run = s.run(&["diff", &old, &new]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("uncommitted"), "{}", run.stderr);
}

/// What the error says about a bad day, after clap's `invalid value '…' for '--x <…>': `.
fn day_complaint(run: &Run, arg: &str) -> String {
    assert_eq!(run.code, 2, "{arg}: {}", run.stderr);
    let head = format!("for '{arg} <YYYY-MM-DD>': ");
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains(&head))
        .unwrap_or_else(|| panic!("{arg}: no `{head}` in {}", run.stderr));
    line.split_once(&head).unwrap().1.to_string()
}

#[test]
fn every_date_argument_reads_a_day_the_same_way_and_says_so_in_the_same_words() {
    let s = Store::new();
    s.with_two_lines();
    let draft = s.write(
        "draft.toml",
        &draft("2.1.0", Some("2.0.0"), "2027-02-01", None),
    );
    let uses: [(&str, Vec<&str>); 5] = [
        ("--today", vec!["status"]),
        ("--on", vec!["sunset", "roads", "1", "--rationale", "r."]),
        ("--since", vec!["backtest", &draft]),
        ("--since", vec!["propose", &draft, "--rationale", "r."]),
        ("--until", vec!["waive", "roads", "crs", "--reason", "r."]),
    ];
    // Not zero-padded, not a calendar day, not a date at all.
    for bad in ["2027-4-1", "2027-04-31", "tomorrow"] {
        let mut said = Vec::new();
        for (arg, command) in &uses {
            let mut args: Vec<&str> = if *arg == "--today" {
                vec![]
            } else {
                vec!["--today", "2027-01-15"]
            };
            args.extend(command.iter().copied());
            args.extend([*arg, bad]);
            let run = s.run(&args);
            said.push((format!("{command:?}"), day_complaint(&run, arg)));
        }
        let first = said[0].1.clone();
        assert!(first.starts_with(&format!("`{bad}`")), "{first}");
        assert!(first.contains("YYYY-MM-DD such as"), "{first}");
        for (command, words) in &said {
            assert_eq!(words, &first, "{command} words `{bad}` differently");
        }
        // And the variable that stands for --today.
        let run = s.run_env(&[("CONTRACTS_TODAY", bad)], &["status"]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        run.assert_stderr_has(&format!("CONTRACTS_TODAY={first}"));
    }
    // A day in range is accepted by `waive --until` as by `--today`: no date error.
    let run = s.run(&[
        "--today",
        "2027-01-15",
        "waive",
        "roads",
        "crs",
        "--until",
        "2027-01-20",
        "--reason",
        "r.",
    ]);
    assert!(!run.stderr.contains("YYYY-MM-DD"), "{}", run.stderr);
}
