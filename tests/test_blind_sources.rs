//! Never a false "yes" (issue 44, item 1): a consumption source that turned none of its
//! requests into reads, or none of its lines into a read of any dataset in the lookback, is
//! blind. The gates (`can-retire`, `status`'s `retire?`, `notify`) never conclude "nobody
//! reads it" from a blind source: they say "cannot tell" and exit 4. A source marked
//! `expect_reads = false` is exempt. Every case runs the real binary on logs written here,
//! S3 access-log lines in the field order of AWS's published format (`world::s3_line`).

use crate::common::world;
use crate::common::Rows;

use world::World;

const ROLE: &str = "arn:aws:sts::123456789012:assumed-role/flood-model/i-0abc";
const V1: &str = "datasets/roads/v1.1.0/part-00000.parquet";

/// The world read only through one S3 access-log source whose `match` template is
/// `template`, with `hydrology-batch` claiming ROLE. ROLE reads line 1 of roads on three
/// days (a HEAD and two ranged GETs each, one read per day); besides, one listing (method),
/// one refused GET (status) and one GET of a key no dataset has (unmatched).
fn s3_world(template: &str) -> World {
    let w = World::new(world::closed_port());
    w.read_only_sources(&format!(
        "[[consumption.source]]\npath = \"consumption/s3/*\"\nformat = \"s3-access\"\n\
         match = [\"{template}\"]\nsame_read_seconds = 120\n"
    ));
    w.append(
        "consumers.toml",
        &format!(
            "\n[consumers.hydrology-batch]\ncontacts = [\"batch@example.org\"]\n\
             identities = [\"{}\"]\n",
            "arn:aws:sts::123456789012:assumed-role/flood-model/*"
        ),
    );
    std::fs::create_dir_all(w.root().join("consumption/s3")).unwrap();
    for day in ["25", "26", "27"] {
        let mut log = String::new();
        let at = |s: &str| format!("{day}/Nov/2026:10:00:{s}");
        log += &world::s3_line(&at("00"), ROLE, "REST.HEAD.OBJECT", V1, 200, "-");
        log += &world::s3_line(&at("01"), ROLE, "REST.GET.OBJECT", V1, 206, "65536");
        log += &world::s3_line(&at("02"), ROLE, "REST.GET.OBJECT", V1, 206, "1048576");
        if day == "27" {
            log += &world::s3_line(&at("30"), ROLE, "REST.GET.BUCKET", "-", 200, "512");
            log += &world::s3_line(&at("40"), ROLE, "REST.GET.OBJECT", V1, 403, "243");
            log += &world::s3_line(&at("50"), ROLE, "REST.GET.OBJECT", "README.md", 200, "10");
        }
        std::fs::write(
            w.root().join(format!(
                "consumption/s3/2026-11-{day}-10-15-00-5A1B2C3D4E5F6A7B"
            )),
            log,
        )
        .unwrap();
    }
    w
}

/// The template the world's keys need, and the one with a wrong first segment.
const RIGHT: &str = "datasets/{dataset}/v{contract}/*.parquet";
const MISTYPED: &str = "data/{dataset}/v{contract}/*.parquet";

#[test]
fn a_mistyped_match_template_makes_can_retire_say_cannot_tell() {
    // The control: read through the right template, hydrology-batch holds line 1.
    let right = s3_world(RIGHT);
    right
        .run("2026-11-29", &["can-retire", "roads", "1"])
        .assert_code(1)
        .assert_stdout_has("hydrology-batch");

    let w = s3_world(MISTYPED);
    let run = w.run("2026-11-29", &["can-retire", "roads", "1"]);
    run.assert_code(4);
    assert!(
        !run.stdout().contains("roads line 1 can retire"),
        "a blind source never gives a yes: {}",
        run.stdout()
    );
    run.assert_stdout_has("roads line 1: cannot tell whether it can retire");
    run.assert_stdout_has("consumption/s3/*");
    // The warning names the source, its top reason and one line it could not map.
    run.assert_stderr_has("warning: the source `consumption/s3/*`");
    run.assert_stderr_has("12 request(s), none of them a read");
    run.assert_stderr_has("10 unmatched");
    run.assert_stderr_has(V1);

    let run = w.run(
        "2026-11-29",
        &["--format", "json", "can-retire", "roads", "1"],
    );
    run.assert_code(4);
    let j = run.json();
    assert_eq!(j["can_retire"], false, "{j:#}");
    assert_eq!(j["cannot_tell"], true, "{j:#}");
    let blind = j["blind_sources"].rows().collect::<Vec<_>>();
    assert_eq!(blind.len(), 1, "{j:#}");
    assert_eq!(blind[0]["source"], "consumption/s3/*");
    assert_eq!(blind[0]["reason"], "mostly_unmatched");
}

#[test]
fn the_summary_and_the_json_count_what_each_source_did_not_read() {
    let w = s3_world(RIGHT);
    let run = w.consumers_json("2026-11-29");
    let j = run.json();
    let sources = j["scan"]["sources"].rows().collect::<Vec<_>>();
    assert_eq!(sources.len(), 1, "{j:#}");
    let s3 = sources[0];
    assert_eq!(s3["source"], "consumption/s3/*");
    assert_eq!(s3["files"], 3);
    // 3 days x 3 requests, and the three noise requests of the 27th.
    assert_eq!(s3["lines"], 12);
    assert_eq!(s3["requests"], 9, "{s3:#}");
    assert_eq!(s3["reads"], 3, "{s3:#}");
    assert_eq!(s3["same_read"], 6, "{s3:#}");
    assert_eq!(s3["not_read"]["method"], 1, "{s3:#}");
    assert_eq!(s3["not_read"]["status"], 1, "{s3:#}");
    assert_eq!(s3["not_read"]["unmatched"], 1, "{s3:#}");
    assert_eq!(s3["blind"], serde_json::Value::Null, "{s3:#}");
    // The text summary says the same, per source.
    run.assert_stderr_has(
        "source `consumption/s3/*`: 3 file(s), 12 request line(s): 3 read(s), 6 request(s) \
         continued a read; not reads: 1 method, 1 status, 1 unmatched",
    );
}

#[test]
fn status_says_cannot_tell_where_a_blind_source_would_have_let_the_line_go() {
    let right = s3_world(RIGHT);
    let rows = right
        .run("2026-11-29", &["--format", "json", "status", "roads"])
        .assert_code(0)
        .json();
    let line1 = rows.rows().find(|r| r["line"] == 1).unwrap().clone();
    assert_eq!(line1["can_retire"], false, "{rows:#}");
    assert_eq!(line1["cannot_tell"], false, "{rows:#}");

    let w = s3_world(MISTYPED);
    let rows = w
        .run("2026-11-29", &["--format", "json", "status", "roads"])
        .assert_code(0)
        .json();
    let line1 = rows.rows().find(|r| r["line"] == 1).unwrap().clone();
    assert_eq!(line1["can_retire"], false, "{rows:#}");
    assert_eq!(line1["cannot_tell"], true, "{rows:#}");
    let text = w.run("2026-11-29", &["status", "roads"]);
    text.assert_code(0);
    let row = text
        .stdout()
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["roads", "1"]))
        .unwrap_or_else(|| panic!("no row of line 1: {}", text.stdout()))
        .to_string();
    assert!(row.contains("cannot tell"), "{row:?}");
}

#[test]
fn notify_sends_what_the_other_sources_decide_names_the_blind_one_and_exits_4() {
    let w = s3_world(MISTYPED);
    // A second source that works: flood-model's JSON Lines reads of line 1.
    w.append(
        "contracts.toml",
        "\n[[consumption.source]]\npath = \"consumption/*.jsonl\"\n",
    );
    let run = w.run("2026-11-29", &["--format", "json", "notify", "--dry-run"]);
    run.assert_code(4);
    run.assert_stderr_has("consumption/s3/*");
    let plan = run.json();
    assert!(
        plan.rows()
            .any(|r| r["consumer"] == "flood-model" && r["line"] == 1),
        "the working source still decides: {plan:#}"
    );
}

#[test]
fn a_source_with_no_read_of_any_dataset_is_blind_unless_it_is_expected_to_be_quiet() {
    let w = World::new(world::closed_port());
    // On 2027-03-05 every registered consumer has moved off line 1: it can retire.
    w.write(
        "consumption/moved.jsonl",
        "{\"at\":\"2027-01-10T03:00:00Z\",\"consumer\":\"flood-model\",\"dataset\":\"roads\",\"contract\":\"2.0.0\"}\n",
    );
    w.run("2027-03-05", &["can-retire", "roads", "1"])
        .assert_code(0);
    // A source that reads only another dataset of the store is not blind: its reads show
    // that it works.
    w.write(
        "contracts/rivers/1.0.0.toml",
        "dataset = \"rivers\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
         [clauses]\ncrs = \"EPSG:4326\"\n",
    );
    w.write(
        "consumption/rivers/2027-03.jsonl",
        "{\"at\":\"2027-03-01T03:00:00Z\",\"consumer\":\"archive\",\"dataset\":\"rivers\",\"contract\":\"1.0.0\"}\n",
    );
    w.append(
        "contracts.toml",
        "\n[[consumption.source]]\npath = \"consumption/rivers/*.jsonl\"\n",
    );
    w.run("2027-03-05", &["can-retire", "roads", "1"])
        .assert_code(0);
    // A source whose glob matches nothing has no read: it is blind.
    w.append(
        "contracts.toml",
        "\n[[consumption.source]]\npath = \"consumption/warehouse/*.csv\"\n",
    );
    let run = w.run("2027-03-05", &["can-retire", "roads", "1"]);
    run.assert_code(4);
    run.assert_stderr_has("consumption/warehouse/*.csv");
    run.assert_stderr_has("no read of any dataset");
    // Marked as expected to be quiet, it no longer stops the gate.
    w.append("contracts.toml", "expect_reads = false\n");
    w.run("2027-03-05", &["can-retire", "roads", "1"])
        .assert_code(0);
}

#[test]
fn check_tries_each_template_on_the_newest_requests_and_reports_one_that_matches_none() {
    // The control: the right template matches, and check has nothing to say of it.
    let right = s3_world(RIGHT);
    let run = right.run("2026-11-29", &["check"]);
    assert!(
        !run.stdout().contains("`match` template"),
        "{}",
        run.stdout()
    );

    let w = s3_world(MISTYPED);
    let run = w.run("2026-11-29", &["--format", "json", "check"]);
    run.assert_code(1);
    let findings = run.json()["findings"].clone();
    let about: Vec<&serde_json::Value> = findings
        .rows()
        .filter(|f| f["message"].as_str().unwrap().contains("`match` template"))
        .collect();
    assert_eq!(about.len(), 1, "{findings:#}");
    let f = about[0];
    assert_eq!(f["file"], "contracts.toml");
    // The place of the source's `path` in contracts.toml.
    let config = w.read("contracts.toml").unwrap();
    assert_eq!(
        f["line"],
        world::line_of(&config, "path = \"consumption/s3/*\"") as u64,
        "{f:#}"
    );
    let message = f["message"].as_str().unwrap();
    // The newest file holds 4 successful GETs and HEADs of objects (the 27th: 3 of the
    // dataset and README.md).
    assert!(message.contains(MISTYPED), "{message}");
    assert!(message.contains("none of the 4 newest"), "{message}");
    assert!(message.contains(V1), "{message}");

    // Of two templates, the one that matches nothing is named, and only it.
    let two = s3_world(&format!("{RIGHT}\", \"legacy/{{dataset}}/{{contract}}/*"));
    let run = two.run("2026-11-29", &["check"]);
    run.assert_code(1);
    run.assert_stdout_has("legacy/{dataset}/{contract}/*");
    assert!(
        !run.stdout().contains(&format!("template \"{RIGHT}\"")),
        "{}",
        run.stdout()
    );
}
