//! `contracts review`: a pull request's contract changes in one report. Each test builds a
//! pull request the way a person does: the example store committed on `main`, a branch, a
//! draft (or a sunset move, a consumers.toml edit) committed on it, and `review` run on the
//! branch. The Markdown is rendered with a real CommonMark/GFM parser (pulldown-cmark) and its
//! tables are counted from the parser's events, against the JSON report of the same run.

use std::path::Path;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::common::{self, git_as, Run};
use crate::test_snapshots::{example, Example};

const TODAY: &str = "2027-03-05";

/// The example draft of countries 2.1.0 (a compatible minor: `emitted_geometry` enforced,
/// `min_feature_count` raised), with each `(from, to)` replaced.
fn draft(edits: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/drafts/countries-2.1.0.toml"),
    )
    .unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "the example draft has no `{from}`");
        text = text.replace(from, to);
    }
    text
}

/// The example store on `main`, and a branch `pr` checked out on top of it.
fn pull_request() -> Example {
    let s = example();
    git(&s, &["checkout", "-q", "-b", "pr"]);
    s
}

/// [`pull_request`] with a draft that changes the CRS: a breaking change offered as a minor
/// of line 2.
fn breaking_pull_request() -> Example {
    let s = pull_request();
    let text = draft(&[(
        r#"crs                      = "EPSG:4326""#,
        r#"crs = "EPSG:3857""#,
    )]);
    commit_file(&s, "drafts/countries-2.1.0.toml", &text);
    s
}

fn git(s: &Example, args: &[&str]) -> String {
    git_as(&s.dir, s.env.home(), common::AUTHOR, args)
}

/// Write `text` at `path` in the store and commit it on the current branch.
fn commit_file(s: &Example, path: &str, text: &str) {
    let file = s.dir.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    git(s, &["add", path]);
    git(s, &["commit", "-q", "-m", &format!("edit {path}")]);
}

fn review(s: &Example, args: &[&str]) -> Run {
    let mut c = s.env.command(&s.dir);
    c.env("CONTRACTS_TODAY", TODAY);
    Run::of(c.args(args).output().expect("binary runs"))
}

/// The tables of a Markdown text as a GFM renderer sees them: per table, its column count and
/// the number of cells of each row (header first).
fn tables(md: &str) -> Vec<(usize, Vec<usize>)> {
    let mut out = Vec::new();
    let mut cells = 0;
    for event in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Table(align)) => out.push((align.len(), Vec::new())),
            Event::Start(Tag::TableHead) | Event::Start(Tag::TableRow) => cells = 0,
            Event::Start(Tag::TableCell) => cells += 1,
            Event::End(TagEnd::TableHead) | Event::End(TagEnd::TableRow) => out
                .last_mut()
                .expect("a row is inside a table")
                .1
                .push(cells),
            _ => {}
        }
    }
    out
}

/// The text of the level-3 headings: the verdict lines.
fn headings(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for event in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                inside = level == pulldown_cmark::HeadingLevel::H3;
                if inside {
                    out.push(String::new());
                }
            }
            Event::End(TagEnd::Heading(_)) => inside = false,
            Event::Text(t) | Event::Code(t) if inside => out.last_mut().unwrap().push_str(&t),
            _ => {}
        }
    }
    out
}

fn assert_reads_well(md: &str) {
    assert!(
        md.starts_with("<!-- contracts-review -->\n"),
        "the marker is the first line:\n{md}"
    );
    for line in md.lines() {
        assert!(
            line.chars().count() <= 100,
            "a line of {} characters:\n{line}",
            line.chars().count()
        );
    }
}

#[test]
fn a_breaking_draft_is_refused_with_its_verdict_line() {
    let s = breaking_pull_request();
    let md = review(&s, &["--format", "markdown", "review"]);
    assert_eq!(md.code, 1, "{}", md.stderr);
    assert_reads_well(&md.stdout);
    // Line 2's newest is 2.0.0, so a breaking change requires 3.0.0.
    assert_eq!(
        headings(&md.stdout),
        vec!["countries: BREAKING → requires 3.0.0 (declared 2.1.0 ✗)"]
    );
    let json = review(&s, &["--format", "json", "review"]);
    assert_eq!(json.code, 1, "{}", json.stderr);
    let r = json.json();
    assert_eq!(r["refused"], true);
    let d = &r["datasets"][0];
    assert_eq!(d["dataset"], "countries");
    assert_eq!(d["touched"][0]["path"], "drafts/countries-2.1.0.toml");
    let p = &d["proposals"][0];
    assert_eq!(p["required_bump"], "major");
    assert_eq!(p["declared_bump"], "minor");
    let crs = p["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["clause"] == "crs")
        .expect("the crs change");
    assert_eq!(crs["verdict"], "breaking");
    // Every consumer relies on the CRS (census-joins uses everything; the others list it).
    assert!(d["consumers"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["verdict"] == "breaks"));

    // The tables survive a GFM renderer: clause table, backtest, consumers, lines, each
    // with every row as wide as its header.
    let t = tables(&md.stdout);
    let changes = p["changes"].as_array().unwrap().len();
    let replayed = p["backtest"]["clauses"].as_array().unwrap().len();
    let consumers = d["consumers"].as_array().unwrap().len();
    let lines = d["window"]["lines"].as_array().unwrap().len();
    let expected = [(5, changes), (4, replayed), (6, consumers), (5, lines)];
    assert_eq!(t.len(), expected.len(), "{t:?}\n{}", md.stdout);
    for ((cols, rows), (want_cols, want_rows)) in t.iter().zip(expected) {
        assert_eq!(*cols, want_cols, "{t:?}");
        assert_eq!(rows.len(), want_rows + 1, "{t:?}");
        assert!(rows.iter().all(|n| *n == want_cols), "{t:?}");
    }
}

#[test]
fn a_compatible_draft_passes() {
    let s = pull_request();
    commit_file(&s, "drafts/countries-2.1.0.toml", &draft(&[]));
    let run = review(&s, &["--format", "markdown", "review"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_reads_well(&run.stdout);
    assert_eq!(
        headings(&run.stdout),
        vec!["countries: COMPATIBLE → requires 2.1.0 (declared 2.1.0 ✓)"]
    );
    // The backtest: both clauses replayed on the two releases recorded before --today, and
    // the draft's 180 countries fail both (each recorded 177).
    let json = review(&s, &["--format", "json", "review"]).json();
    let bt = &json["datasets"][0]["proposals"][0]["backtest"];
    assert_eq!(bt["releases"], 2);
    let count = bt["clauses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["clause"] == "min_feature_count")
        .unwrap();
    assert_eq!(count["would_fail"], 2);
    assert!(
        run.stdout.contains("| `min_feature_count` | 2 | 2 |"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_markdown_snapshot() {
    let s = breaking_pull_request();
    insta::assert_snapshot!(
        "review_markdown",
        s.run(TODAY, &["--format", "markdown", "review"])
    );
}

#[test]
fn a_long_table_is_folded_and_still_a_table() {
    let s = pull_request();
    // Nine clause changes: more than the eight a table shows unfolded.
    let text = draft(&[
        (
            r#"units                    = "degree""#,
            r#"units = "metre""#,
        ),
        (
            "[-180.0, -90.0, 180.0, 90.0]",
            "[-170.0, -80.0, 170.0, 80.0]",
        ),
        (
            r#"permitted_crs            = ["EPSG:4326"]"#,
            r#"permitted_crs = ["EPSG:4326", "EPSG:3857"]"#,
        ),
        (r#""GPKG", "GeoParquet", "FlatGeobuf""#, r#""GPKG""#),
        (
            "max_null_fraction        = { pop_est = 0.0 }",
            "max_null_fraction = { pop_est = 0.1 }",
        ),
        (
            "invalid_geometry_fraction = 0.01",
            "invalid_geometry_fraction = 0.02",
        ),
        ("persons", "people"),
    ]);
    commit_file(&s, "drafts/countries-2.1.0.toml", &text);
    let run = review(&s, &["--format", "markdown", "review"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_reads_well(&run.stdout);
    let json = review(&s, &["--format", "json", "review"]).json();
    let changes = json["datasets"][0]["proposals"][0]["changes"]
        .as_array()
        .unwrap()
        .len();
    assert!(changes > 8, "{changes} changes");
    assert!(
        run.stdout.contains(&format!(
            "<details><summary>{changes} clause changes</summary>"
        )),
        "{}",
        run.stdout
    );
    let t = tables(&run.stdout);
    assert_eq!(t[0].0, 5);
    assert_eq!(t[0].1.len(), changes + 1, "{t:?}");
}

#[test]
fn a_sunset_moved_on_the_branch() {
    let s = pull_request();
    let moved = s
        .env
        .command(&s.dir)
        .env("CONTRACTS_TODAY", "2026-11-29")
        .args([
            "sunset",
            "countries",
            "1",
            "--on",
            "2027-06-01",
            "--rationale",
            "The flood model needs a month more.",
        ])
        .output()
        .unwrap();
    assert!(moved.status.success(), "{moved:?}");
    let run = review(&s, &["--format", "json", "review"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.json();
    let d = &r["datasets"][0];
    assert_eq!(d["dataset"], "countries");
    assert_eq!(
        d["touched"],
        serde_json::json!([{"kind": "sunset-moved", "line": 1, "from": "2027-05-01", "to": "2027-06-01"}])
    );
    assert_eq!(d["proposals"], serde_json::json!([]));
    assert_eq!(d["window"]["windows"][0]["sunset"], "2027-06-01");
    let md = review(&s, &["--format", "markdown", "review"]);
    assert_eq!(
        headings(&md.stdout),
        vec!["countries: sunset of line 1 moved 2027-05-01 → 2027-06-01"]
    );
}

#[test]
fn a_consumers_edit_names_who_changed() {
    let s = pull_request();
    let registry = std::fs::read_to_string(s.dir.join("consumers.toml")).unwrap();
    let added = format!(
        "{registry}\n[consumers.tile-cache]\ncontacts = [\"tiles@example.org\"]\n\
         datasets.countries = {{}}\n"
    );
    commit_file(&s, "consumers.toml", &added);
    let run = review(&s, &["--format", "json", "review"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.json();
    let d = &r["datasets"][0];
    assert_eq!(
        d["touched"],
        serde_json::json!([{"kind": "consumers-edited", "consumers": ["tile-cache"]}])
    );
    let row = d["consumers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["consumer"] == "tile-cache")
        .expect("the new consumer is listed");
    // No version is proposed, so no verdict; it has never read.
    assert_eq!(row["verdict"], serde_json::Value::Null);
    assert_eq!(row["last_read"], serde_json::Value::Null);
    let md = review(&s, &["--format", "markdown", "review"]);
    assert_reads_well(&md.stdout);
    assert_eq!(
        headings(&md.stdout),
        vec!["countries: consumers edited (tile-cache)"]
    );
    // Without a proposal nobody is judged affected: the table counts the subscribers.
    let subscribers = d["consumers"].as_array().unwrap().len();
    assert!(
        md.stdout
            .contains(&format!("Consumers ({subscribers} subscribed):")),
        "{}",
        md.stdout
    );
}

#[test]
fn nothing_changed_is_clean() {
    let s = pull_request();
    let run = review(&s, &["--format", "markdown", "review"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_reads_well(&run.stdout);
    assert!(run.stdout.contains("0 datasets touched"), "{}", run.stdout);
}

#[test]
fn the_report_follows_its_schema() {
    let s = breaking_pull_request();
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/review-report.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let report = review(&s, &["--format", "json", "review"]).json();
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // And the schema is strict: a field it does not know fails it.
    let mut extra = report.clone();
    extra["surprise"] = serde_json::json!(1);
    assert!(!validator.is_valid(&extra));
}

#[test]
fn other_commands_refuse_markdown() {
    let s = example();
    for args in [
        vec!["status"],
        vec!["check"],
        vec!["diff", "countries@1.2.0", "countries@2.0.0"],
    ] {
        let mut all = vec!["--format", "markdown"];
        all.extend(args.iter());
        let run = review(&s, &all);
        assert_eq!(run.code, 2, "{all:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("markdown is for `review`"),
            "{}",
            run.stderr
        );
        assert_eq!(run.stdout, "");
    }
}

#[test]
fn no_default_branch_is_a_usage_error() {
    let s = example();
    git(&s, &["branch", "-m", "main", "trunk"]);
    let run = review(&s, &["review"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no default branch"), "{}", run.stderr);
    assert!(run.stderr.contains("--base REF"), "{}", run.stderr);
    // Named, the base is found.
    assert_eq!(review(&s, &["review", "--base", "trunk"]).code, 0);
}

#[test]
fn drafts_are_found_where_the_config_says() {
    let s = example();
    let config = std::fs::read_to_string(s.dir.join("contracts.toml")).unwrap();
    commit_file(
        &s,
        "contracts.toml",
        &format!("{config}\n[review]\ndrafts = [\"proposals/*.toml\"]\n"),
    );
    git(&s, &["checkout", "-q", "-b", "pr"]);
    commit_file(&s, "proposals/countries.toml", &draft(&[]));
    // Not matched: the default folder is no longer read.
    commit_file(&s, "drafts/other.toml", "not a contract");
    let run = review(&s, &["--format", "json", "review"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.json()["datasets"][0]["touched"][0]["path"],
        "proposals/countries.toml"
    );
}

#[test]
fn a_bad_drafts_glob_is_located() {
    let s = example();
    let config = std::fs::read_to_string(s.dir.join("contracts.toml")).unwrap();
    let lines = config.lines().count();
    commit_file(
        &s,
        "contracts.toml",
        &format!("{config}\n[review]\ndrafts = [\"drafts/[oops\"]\n"),
    );
    let run = review(&s, &["status"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    // The glob is on the second line after the config's own.
    let at = format!("contracts.toml:{}:", lines + 3);
    assert!(run.stderr.contains(&at), "{at} in {}", run.stderr);
    assert!(run.stderr.contains("[review] drafts"), "{}", run.stderr);
}

/// A command of the binary on the branch, on `--today`, that must succeed.
fn contracts_ok(s: &Example, args: &[&str]) {
    let mut c = s.env.command(&s.dir);
    let out = c.env("CONTRACTS_TODAY", TODAY).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
}

#[test]
fn a_version_proposed_and_a_waiver_granted_in_the_same_pull_request() {
    let s = pull_request();
    commit_file(&s, "drafts/countries-2.1.0.toml", &draft(&[]));
    contracts_ok(
        &s,
        &[
            "propose",
            "drafts/countries-2.1.0.toml",
            "--rationale",
            "Enforce the geometry.",
        ],
    );
    // Line 1's window closes on 2027-05-01: a waiver until 2027-04-15 ends within it.
    contracts_ok(
        &s,
        &[
            "waive",
            "countries",
            "max_null_fraction.pop_est",
            "--line",
            "1",
            "--until",
            "2027-04-15",
            "--reason",
            "Census feed outage.",
        ],
    );
    let run = review(&s, &["--format", "json", "review"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.json();
    let d = &r["datasets"][0];
    let kinds: Vec<&str> = d["touched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["draft", "published", "waivers-edited"]);
    // The draft is the version now published: one proposal, read from the store.
    let sources: Vec<&str> = d["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["contracts/countries/2.1.0.toml"]);
    let ending = &d["window"]["waivers_ending"];
    assert_eq!(ending.as_array().unwrap().len(), 1, "{ending}");
    assert_eq!(ending[0]["until"], "2027-04-15");
    assert_eq!(ending[0]["line"], 1);
}

#[test]
fn links_to_the_registry_where_one_is_configured() {
    let s = example();
    let config = std::fs::read_to_string(s.dir.join("contracts.toml")).unwrap();
    let config = config.replace(
        "[notify]\n",
        "[notify]\nregistry_url = \"https://data.example.org/registry/\"\n",
    );
    commit_file(&s, "contracts.toml", &config);
    git(&s, &["checkout", "-q", "-b", "pr"]);
    commit_file(&s, "drafts/countries-2.1.0.toml", &draft(&[]));
    let run = review(&s, &["--format", "markdown", "review"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let links: Vec<String> = Parser::new_ext(&run.stdout, Options::ENABLE_TABLES)
        .filter_map(|e| match e {
            Event::Start(Tag::Link { dest_url, .. }) => Some(dest_url.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        links,
        [
            "https://data.example.org/registry/countries.html",
            "https://data.example.org/registry/countries.html#timeline"
        ]
    );
    // Without a registry URL, no link (the other tests' stores have none).
    let s = pull_request();
    commit_file(&s, "drafts/countries-2.1.0.toml", &draft(&[]));
    let md = review(&s, &["--format", "markdown", "review"]).stdout;
    assert!(!md.contains("]("), "{md}");
}

#[test]
fn the_first_version_of_a_new_dataset() {
    let s = pull_request();
    commit_file(
        &s,
        "drafts/rivers/1.0.0.toml",
        "dataset = \"rivers\"\nversion = \"1.0.0\"\nvalid_from = 2027-04-01\n\
         description = \"Rivers of the world\"\n[clauses]\ncrs = \"EPSG:4326\"\n",
    );
    let run = review(&s, &["--format", "markdown", "review"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_reads_well(&run.stdout);
    assert_eq!(headings(&run.stdout), vec!["rivers: NEW DATASET → 1.0.0"]);
    let r = review(&s, &["--format", "json", "review"]).json();
    let d = &r["datasets"][0];
    assert_eq!(d["proposals"][0]["previous"], serde_json::Value::Null);
    // Its one line opens on the draft's valid_from, after --today.
    assert_eq!(
        d["window"]["lines"],
        serde_json::json!([{"line": 1, "state": "upcoming", "opens": "2027-04-01", "sunset": null, "newest": "1.0.0"}])
    );
}
