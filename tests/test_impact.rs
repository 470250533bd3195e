//! Impact before publishing (issue 12), end to end through the real binary in temporary
//! stores with a fixed --today: per-consumer verdicts in `diff` and `propose`, tailored
//! notices received by a real SMTP server on loopback, the backtest of a draft on recorded
//! release profiles, the `can-retire` gate and consumer liveness.

use crate::common;
use crate::common::world;
use crate::common::Rows;

use world::{SmtpServer, World};

/// The world's roads with a map change in 2.0.0 beside the CRS change, and consumers that
/// declare what they use: flood-model relies on `CNTY_ID` (retyped), atlas on `NAME` and the
/// envelope (neither changes).
fn declared_world(smtp: &SmtpServer) -> World {
    let w = World::with_a_map_change(smtp.port);
    w.write(
        "consumers.toml",
        &world::registry(
            world::FLOOD_ONCALL,
            [
                Some(r#"datasets.roads = { uses = ["required_attributes.CNTY_ID"] }"#),
                Some(r#"datasets.roads = { uses = ["required_attributes.NAME", "envelope"] }"#),
                Some("datasets.roads = {}"),
                Some("datasets.rivers = {}"),
            ],
        ),
    );
    w
}

fn body_to(smtp: &SmtpServer, rcpt: &str) -> String {
    let mails = smtp.mail_to(rcpt);
    assert_eq!(mails.len(), 1, "{mails:#?}");
    mails[0].body()
}

#[test]
fn notices_are_tailored_to_what_each_consumer_declared() {
    let smtp = SmtpServer::start();
    let w = declared_world(&smtp);
    // The dry run says what each notice will tell.
    let run = w.run("2026-11-29", &["--format", "json", "notify", "--dry-run"]);
    run.assert_code(0);
    let planned: Vec<(String, String, serde_json::Value)> = run
        .json()
        .rows()
        .map(|n| {
            (
                n["consumer"].as_str().unwrap().to_string(),
                n["verdict"].as_str().unwrap().to_string(),
                n.get("breaking_changes")
                    .cloned()
                    .unwrap_or(serde_json::Value::Null),
            )
        })
        .collect();
    assert_eq!(
        planned,
        vec![
            (
                "atlas".to_string(),
                "unaffected".to_string(),
                serde_json::Value::Null
            ),
            (
                "flood-model".to_string(),
                "breaks".to_string(),
                serde_json::json!(["required_attributes"])
            ),
        ]
    );
    assert!(smtp.mails().is_empty(), "a dry run sends nothing");
    w.run("2026-11-29", &["notify"]).assert_code(0);
    // flood-model relies on CNTY_ID, which 2.0.0 retypes: it gets that change with its old
    // and new value and rationale, and not the CRS change, which touches nothing it declared.
    let flood = body_to(&smtp, "hydro-oncall@example.org");
    for needle in [
        "These breaking changes touch what \"flood-model\" declared it relies on\n(required_attributes.CNTY_ID):",
        "- required_attributes (fixed, changed) in 2.0.0",
        "what changes: `CNTY_` removed (was float64); `CNTY_ID` float64 → int64",
        "was:  CNTY_ float64, CNTY_ID float64, NAME string",
        "now:  CNTY_ID int64, NAME string",
        "why:  County ids are integers; the duplicate column goes.",
        "(1 other breaking change touches nothing you declared.)",
        "2. Adapt your reader to each breaking change above and read contract 2.0.0.",
        "before the sunset",
    ] {
        assert!(flood.contains(needle), "flood-model's notice lacks {needle:?}:\n{flood}");
    }
    assert!(!flood.contains("- crs ("), "{flood}");
    // atlas relies on NAME and the envelope: nothing it declared changes.
    let atlas = body_to(&smtp, "atlas@example.org");
    for needle in [
        "Nothing \"atlas\" declared it relies on changes\n(required_attributes.NAME, envelope): switching to the new line is all you\nmust do, and it must still be done before the sunset.",
        "2. Switch your reader to contract 2.0.0: nothing you declared changes.",
        "please move to contract\n2.0.0 (line 2) before the sunset.",
    ] {
        assert!(atlas.contains(needle), "atlas's notice lacks {needle:?}:\n{atlas}");
    }
    assert!(
        !atlas.contains("- crs (") && !atlas.contains("- required_attributes ("),
        "{atlas}"
    );
    insta::assert_snapshot!("unaffected_notice", atlas);
    insta::assert_snapshot!("affected_notice", flood);
    // Both notices were sent and recorded.
    assert_eq!(
        world::sorted(w.ledger()),
        world::pairs(&[("atlas", "before-60"), ("flood-model", "before-60")])
    );
}

#[test]
fn a_consumer_relying_on_everything_is_told_every_breaking_change() {
    let smtp = SmtpServer::start();
    let w = declared_world(&smtp);
    // flood-model declares roads without `uses`: everything.
    w.write(
        "consumers.toml",
        "[consumers.flood-model]\ncontacts = [\"hydro-oncall@example.org\"]\ndatasets.roads = {}\n",
    );
    w.run("2026-11-29", &["notify"]).assert_code(0);
    let flood = body_to(&smtp, "hydro-oncall@example.org");
    assert!(flood.contains("- crs (fixed, changed) in 2.0.0"), "{flood}");
    assert!(
        flood.contains("- required_attributes (fixed, changed) in 2.0.0"),
        "{flood}"
    );
    assert!(!flood.contains("declared"), "{flood}");
}

const OLD: &str = r#"dataset = "roads"
version = "3.0.0"
valid_from = 2027-01-01
[clauses]
crs                  = "EPSG:4326"
envelope             = [-10.0, 40.0, 10.0, 60.0]
permitted_geometry   = ["LineString", "MultiLineString"]
permitted_crs        = ["EPSG:4326", "EPSG:3857"]
required_attributes  = { id = "int64", class = "string" }
optional_attributes  = { name = "string", ref = "string" }
attribute_semantics  = { class = "road class", name = "name as signed" }
max_null_fraction    = { name = 0.1, ref = 0.5 }
metric_tolerances    = { invalid_geometry_fraction = 0.01 }
max_imputed_fraction = 0.02
dimensions           = ["XY"]
min_feature_count    = 100
"#;

/// One change of every kind: a widening clause shrank (envelope), a widening map lost a key
/// (optional_attributes.ref), a narrowing set tightened (compatible), per-key bounds loosened
/// at one key (max_null_fraction.name), a fixed map changed at one key
/// (required_attributes.class), a meaning changed (attribute_semantics.class), a fixed set
/// changed (dimensions), a narrowing clause was removed (max_imputed_fraction) and an
/// enforced clause became advisory (metric_tolerances, relaxed); and a custom narrowing
/// lower bound loosened (min_feature_count 100 → 50).
const NEW: &str = r#"dataset = "roads"
version = "4.0.0"
supersedes = "3.0.0"
valid_from = 2027-06-01
sunset = 2027-12-01
advisory = ["metric_tolerances"]
[clauses]
crs                  = "EPSG:4326"
envelope             = [-5.0, 40.0, 10.0, 60.0]
permitted_geometry   = ["LineString", "MultiLineString"]
permitted_crs        = ["EPSG:4326"]
required_attributes  = { id = "int64", class = "int32" }
optional_attributes  = { name = "string" }
attribute_semantics  = { class = "road category", name = "name as signed" }
max_null_fraction    = { name = 0.2, ref = 0.5 }
metric_tolerances    = { invalid_geometry_fraction = 0.01 }
dimensions           = ["XYZ"]
min_feature_count    = 50
"#;

const REGISTRY: &str = r#"
[consumers.c-crs]
contacts = ["crs@example.org"]
datasets.roads = { uses = ["crs"] }

[consumers.c-env]
contacts = ["env@example.org"]
datasets.roads = { uses = ["envelope"] }

[consumers.c-geom]
contacts = ["geom@example.org"]
datasets.roads = { uses = ["permitted_geometry", "permitted_crs"] }

[consumers.c-keys]
contacts = ["keys@example.org"]
datasets.roads = { uses = ["required_attributes.id", "optional_attributes.name", "attribute_semantics.name", "max_null_fraction.ref"] }

[consumers.c-class]
contacts = ["class@example.org"]
datasets.roads = { uses = ["required_attributes.class", "attribute_semantics.class"] }

[consumers.c-ref]
contacts = ["ref@example.org"]
datasets.roads = { uses = ["optional_attributes.ref", "max_null_fraction.name"] }

[consumers.c-tol]
contacts = ["tol@example.org"]
datasets.roads = { uses = ["metric_tolerances.invalid_geometry_fraction"] }

[consumers.c-gone]
contacts = ["gone@example.org"]
datasets.roads = { uses = ["max_imputed_fraction", "dimensions"] }

[consumers.c-count]
contacts = ["count@example.org"]
datasets.roads = { uses = ["min_feature_count"] }

[consumers.c-all]
contacts = ["all@example.org"]
datasets.roads = {}
datasets.rivers = {}

[consumers.legacy]
contacts = ["legacy@example.org"]

[consumers.elsewhere]
contacts = ["elsewhere@example.org"]
datasets.rivers = {}
"#;

type Verdicts = Vec<(String, String, Vec<String>)>;

fn verdicts(j: &serde_json::Value) -> Verdicts {
    j["consumers"]
        .as_array()
        .unwrap_or_else(|| panic!("no consumers in {j:#}"))
        .iter()
        .map(|c| {
            (
                c["consumer"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
                c["changes"]
                    .rows()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

fn v(consumer: &str, verdict: &str, changes: &[&str]) -> (String, String, Vec<String>) {
    (
        consumer.to_string(),
        verdict.to_string(),
        changes.iter().map(|c| c.to_string()).collect(),
    )
}

/// Every breaking change of OLD → NEW, in clause order (permitted_crs only tightened).
const ALL_BREAKING: [&str; 9] = [
    "attribute_semantics.class",
    "dimensions",
    "envelope",
    "max_imputed_fraction",
    "max_null_fraction",
    "metric_tolerances",
    "min_feature_count",
    "optional_attributes",
    "required_attributes",
];

#[test]
fn diff_gives_each_subscribed_consumer_its_verdict_for_every_clause_kind() {
    let w = World::new(world::closed_port());
    w.write("consumers.toml", REGISTRY);
    w.write(
        "contracts.toml",
        &(world::config(world::closed_port())
            + "\n[kinds]\nmin_feature_count = { kind = \"narrowing\", shape = \"lower_bound\", metric = \"feature_count\" }\n"),
    );
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old.toml"), dir.path().join("new.toml"));
    std::fs::write(&old, OLD).unwrap();
    std::fs::write(&new, NEW).unwrap();
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let run = w.run("2026-11-29", &["--format", "json", "diff", old, new]);
    run.assert_code(0);
    let j = run.json();
    // Worked out by hand from the two files above; `elsewhere` reads rivers only.
    assert_eq!(
        verdicts(&j),
        vec![
            v("c-all", "breaks", &ALL_BREAKING),
            v(
                "c-class",
                "breaks",
                &["attribute_semantics.class", "required_attributes"]
            ),
            v("c-count", "breaks", &["min_feature_count"]),
            v("c-crs", "unaffected", &[]),
            v("c-env", "breaks", &["envelope"]),
            v("c-geom", "unaffected", &[]),
            v("c-gone", "breaks", &["dimensions", "max_imputed_fraction"]),
            v("c-keys", "unaffected", &[]),
            v(
                "c-ref",
                "breaks",
                &["max_null_fraction", "optional_attributes"]
            ),
            v("c-tol", "breaks", &["metric_tolerances"]),
            v("legacy", "breaks", &ALL_BREAKING),
        ]
    );
    assert_eq!(j["consumers"][0]["uses_everything"], true);
    assert_eq!(j["consumers"][1]["uses_everything"], false);

    // The text prints the same after the clause table.
    let text = w.run("2026-11-29", &["diff", old, new]);
    text.assert_code(0);
    let out = text.stdout();
    insta::assert_snapshot!("diff_with_consumers", out);
    let table = out
        .split("consumers of roads:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"));
    assert!(out.find("required bump").unwrap() < out.find("consumers of roads:").unwrap());
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(1)
        .map(|l| {
            l.split("   ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(rows[0][..2], ["c-all", "breaks (uses everything)"]);
    assert_eq!(rows[2], ["c-count", "breaks", "min_feature_count"]);
    assert_eq!(rows[3], ["c-crs", "unaffected", "-"]);
    assert_eq!(rows[4], ["c-env", "breaks", "envelope"]);
    assert_eq!(rows[10][..2], ["legacy", "breaks (uses everything)"]);
}

#[test]
fn propose_dry_run_gives_the_verdicts_and_a_consumer_without_uses_relies_on_everything() {
    let w = World::new(world::closed_port());
    w.write(
        "consumers.toml",
        "[consumers.flood-model]\ncontacts = [\"h@example.org\"]\ndatasets.roads = { uses = [\"crs\"] }\n\
         [consumers.atlas]\ncontacts = [\"a@example.org\"]\ndatasets.roads = { uses = [\"envelope\"] }\n\
         [consumers.router]\ncontacts = [\"r@example.org\"]\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let draft = dir.path().join("roads-3.0.0.toml");
    std::fs::write(
        &draft,
        "dataset = \"roads\"\nversion = \"3.0.0\"\nsupersedes = \"2.0.0\"\n\
         valid_from = 2027-02-01\nsunset = 2027-06-01\n[clauses]\ncrs = \"EPSG:3857\"\n",
    )
    .unwrap();
    let draft = draft.to_str().unwrap();
    let args = ["propose", draft, "--rationale", "Web maps.", "--dry-run"];
    let run = w.run("2026-11-29", &[&["--format", "json"][..], &args].concat());
    run.assert_code(0);
    assert_eq!(
        verdicts(&run.json()),
        vec![
            v("atlas", "unaffected", &[]),
            v("flood-model", "breaks", &["crs"]),
            v("router", "breaks", &["crs"]),
        ]
    );
    let text = w.run("2026-11-29", &args);
    text.assert_code(0);
    let out = text.stdout();
    assert!(out.contains("consumers of roads:"), "{out}");
    assert!(out.contains("breaks (uses everything)"), "{out}");
    // A dry run writes nothing.
    assert!(w.read("contracts/roads/3.0.0.toml").is_none());
}

/// A GeoJSON release of points: `names[i]` is feature i's `name` (None: null).
fn release(
    dir: &std::path::Path,
    file: &str,
    points: &[(f64, f64)],
    names: &[Option<&str>],
) -> String {
    let features: Vec<String> = points
        .iter()
        .zip(names)
        .enumerate()
        .map(|(i, ((x, y), n))| {
            let name = n.map_or("null".to_string(), |n| format!("\"{n}\""));
            format!(
                r#"{{"type":"Feature","geometry":{{"type":"Point","coordinates":[{x},{y}]}},"properties":{{"id":{i},"name":{name}}}}}"#
            )
        })
        .collect();
    let path = dir.join(file);
    std::fs::write(
        &path,
        format!(
            r#"{{"type":"FeatureCollection","features":[{}]}}"#,
            features.join(",")
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

fn manifest(dir: &std::path::Path, version: &str, imputed: Option<f64>) -> String {
    let path = dir.join(format!("{version}.toml"));
    let metrics = imputed.map_or(String::new(), |f| {
        format!("metrics = {{ imputed_fraction = {f} }}\n")
    });
    std::fs::write(&path, format!("version = \"{version}\"\n{metrics}")).unwrap();
    path.to_str().unwrap().to_string()
}

/// Four releases recorded with `validate --record`, with profiles worked out by hand:
///
/// | release | validated  | features | `name` nulls | imputed | outside [-10,40,10,60] |
/// |---------|------------|----------|--------------|---------|------------------------|
/// | 2025.12 | 2026-01-15 | 4        | 3 (0.75)     | -       | no                     |
/// | 2026.01 | 2026-06-01 | 4        | 0 (0.0)      | 0.01    | no                     |
/// | 2026.02 | 2026-09-01 | 4        | 2 (0.5)      | 0.05    | no                     |
/// | 2026.03 | 2026-12-01 | 5        | 1 (0.2)      | 0.03    | (20, 50)               |
///
/// and one record written before profiles were kept (validated 2026-07-01).
fn recorded_world() -> (World, tempfile::TempDir) {
    let w = World::new(world::closed_port());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let inside = [(1.0, 50.0), (2.0, 51.0), (-3.0, 45.0), (4.0, 55.0)];
    let runs = [
        (
            "2025.12",
            "2026-01-15",
            &inside[..],
            vec![None, None, None, Some("a")],
            None,
        ),
        (
            "2026.01",
            "2026-06-01",
            &inside[..],
            vec![Some("a"), Some("b"), Some("c"), Some("d")],
            Some(0.01),
        ),
        (
            "2026.02",
            "2026-09-01",
            &inside[..],
            vec![None, Some("b"), None, Some("d")],
            Some(0.05),
        ),
    ];
    for (version, day, points, names, imputed) in runs {
        let file = release(d, &format!("{version}.geojson"), points, &names);
        let m = manifest(d, version, imputed);
        let run = w.run(
            day,
            &["validate", "roads", &file, "--manifest", &m, "--record"],
        );
        assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    }
    // The record from before profiles were kept: its text as an older build wrote it.
    w.append(
        "history/roads.releases.toml",
        "\n[[release]]\nversion = \"2026.old\"\nvalidated = \"2026-07-01\"\nfiles = [\"old.gpkg\"]\n\
         passed = true\n\n[[release.contract]]\nversion = \"1.1.0\"\n\n\
         [release.contract.results]\ncrs = \"pass\"\n",
    );
    let points = [
        (1.0, 50.0),
        (2.0, 51.0),
        (-3.0, 45.0),
        (4.0, 55.0),
        (20.0, 50.0),
    ];
    let file = release(
        d,
        "2026.03.geojson",
        &points,
        &[Some("a"), None, Some("c"), Some("d"), Some("e")],
    );
    let m = manifest(d, "2026.03", Some(0.03));
    let run = w.run(
        "2026-12-01",
        &["validate", "roads", &file, "--manifest", &m, "--record"],
    );
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    (w, dir)
}

/// A minor version of line 2 adding three clauses (advisory, as the policy demands).
const DRAFT_2_1: &str = r#"dataset = "roads"
version = "2.1.0"
supersedes = "2.0.0"
valid_from = 2027-02-01
advisory = ["envelope", "max_imputed_fraction", "max_null_fraction"]
[clauses]
crs                  = "EPSG:27700"
envelope             = [-10.0, 40.0, 10.0, 60.0]
max_null_fraction    = { name = 0.3 }
max_imputed_fraction = 0.04
"#;

type Figures = Vec<(String, u64, u64, Vec<String>)>;

fn figures(j: &serde_json::Value) -> Figures {
    j["backtest"]
        .as_array()
        .unwrap_or_else(|| panic!("no backtest in {j:#}"))
        .iter()
        .map(|r| {
            (
                r["clause"].as_str().unwrap().to_string(),
                r["evaluated"].as_u64().unwrap(),
                r["would_fail"].as_u64().unwrap(),
                r["releases"]
                    .rows()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

fn f(
    clause: &str,
    evaluated: u64,
    would_fail: u64,
    releases: &[&str],
) -> (String, u64, u64, Vec<String>) {
    (
        clause.to_string(),
        evaluated,
        would_fail,
        releases.iter().map(|r| r.to_string()).collect(),
    )
}

#[test]
fn backtest_replays_the_drafts_new_clauses_on_the_recorded_profiles() {
    let (w, dir) = recorded_world();
    let records = w.read("history/roads.releases.toml").unwrap();
    assert_eq!(records.matches("\nprofile = {").count(), 4, "{records}");
    let draft = dir.path().join("roads-2.1.0.toml");
    std::fs::write(&draft, DRAFT_2_1).unwrap();
    let draft = draft.to_str().unwrap();
    let head = w.git(&["rev-parse", "HEAD"]);

    // Default span: the 365 days up to 2027-02-01, from 2026-02-01, leaves 2025.12 out.
    // max_null_fraction.name <= 0.3: 0.0 pass, 0.5 fail, 0.2 pass. imputed <= 0.04: 0.01,
    // 0.05 fail, 0.03. The envelope: only 2026.03 reaches outside it.
    let run = w.run("2027-02-01", &["--format", "json", "backtest", draft]);
    run.assert_code(0);
    let j = run.json();
    assert_eq!(
        figures(&j),
        vec![
            f("envelope", 3, 1, &["2026.03"]),
            f("max_imputed_fraction", 3, 1, &["2026.02"]),
            f("max_null_fraction", 3, 1, &["2026.02"]),
        ]
    );
    assert_eq!(j["since"], "2026-02-01");
    assert_eq!(j["releases"], 4, "three with a profile and the old record");
    assert_eq!(j["without_profile"], 1);
    let err = run.stderr();
    // A narrowing that would have failed recorded releases is a warning naming them; the
    // envelope is a widening clause.
    assert!(err.contains("warning: roads: narrowing `max_null_fraction` would have failed 1 of 3 recorded release(s) since 2026-02-01: 2026.02"), "{err}");
    assert!(
        err.contains("narrowing `max_imputed_fraction` would have failed 1 of 3"),
        "{err}"
    );
    assert!(!err.contains("`envelope` would"), "{err}");
    assert!(
        err.contains("1 recorded release(s) since 2026-02-01 have no profile"),
        "{err}"
    );

    // --since takes 2025.12 in: name nulls 0.75 fail; no imputed_fraction (not evaluated).
    let run = w.run(
        "2027-02-01",
        &[
            "--format",
            "json",
            "backtest",
            draft,
            "--since",
            "2025-06-01",
        ],
    );
    run.assert_code(0);
    assert_eq!(
        figures(&run.json()),
        vec![
            f("envelope", 4, 1, &["2026.03"]),
            f("max_imputed_fraction", 3, 1, &["2026.02"]),
            f("max_null_fraction", 4, 2, &["2025.12", "2026.02"]),
        ]
    );
    // The text table; backtest writes nothing.
    let text = w.run("2027-02-01", &["backtest", draft]);
    text.assert_code(0);
    text.assert_stdout_has(
        "backtest on 3 recorded release(s) of roads validated since 2026-02-01:",
    );
    assert_eq!(w.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(
        w.git(&["status", "--porcelain", "--", "contracts", "history"]),
        ""
    );

    // propose reports the same replay, in a dry run and when it records.
    let run = w.run(
        "2027-02-01",
        &[
            "--format",
            "json",
            "propose",
            draft,
            "--rationale",
            "Limits.",
            "--dry-run",
        ],
    );
    run.assert_code(0);
    assert_eq!(
        figures(&run.json())[2],
        f("max_null_fraction", 3, 1, &["2026.02"])
    );
    let run = w.run("2027-02-01", &["propose", draft, "--rationale", "Limits."]);
    run.assert_code(0);
    run.assert_stdout_has("backtest on 3 recorded release(s)");
    run.assert_stderr_has("narrowing `max_null_fraction` would have failed 1 of 3");

    // advisory uses the same replay, over every recorded release: the clauses are new, so no
    // record holds a result for them; the profiles answer. 2026.old has no profile and no result.
    let run = w.run("2027-02-01", &["--format", "json", "advisory", "roads"]);
    run.assert_code(0);
    let counts: Vec<(String, u64, u64)> = run
        .json()
        .rows()
        .map(|c| {
            (
                c["clause"].as_str().unwrap().to_string(),
                c["evaluated"].as_u64().unwrap(),
                c["failed"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        vec![
            ("envelope".to_string(), 4, 1),
            ("max_imputed_fraction".to_string(), 3, 1),
            ("max_null_fraction".to_string(), 4, 2),
        ]
    );
}

fn holders(j: &serde_json::Value) -> Vec<(String, String, String)> {
    common::string_triples(&j["holders"], "consumer", "version", "last_read")
}

#[test]
fn can_retire_says_who_still_holds_a_line_and_since_when_nobody_does() {
    let w = World::new(world::closed_port());
    // On 2026-11-29 flood-model (1.1.0 on 11-28) and atlas (1.1.0 on 11-27) hold line 1;
    // router moved to 2.0.0 on 11-25; ghost is not registered.
    let run = w.can_retire_line_1_json("2026-11-29");
    run.assert_code(1);
    let j = run.json();
    assert_eq!(j["can_retire"], false);
    assert_eq!(j["since"], serde_json::Value::Null);
    assert_eq!(
        holders(&j),
        vec![
            (
                "atlas".into(),
                "1.1.0".into(),
                "2026-11-27T03:00:00Z".into()
            ),
            (
                "flood-model".into(),
                "1.1.0".into(),
                "2026-11-28T03:00:00Z".into()
            ),
        ]
    );
    run.assert_stderr_has("`ghost` reads line 1 of roads but is not in consumers.toml");
    let text = w.run("2026-11-29", &["can-retire", "roads", "1"]);
    text.assert_code(1);
    assert!(
        text.stdout()
            .starts_with("roads line 1 cannot retire: 2 subscribed consumer(s) still read it\n"),
        "{}",
        text.stdout()
    );
    text.assert_stdout_has("flood-model");
    // status says the same.
    let run = w.run("2026-11-29", &["--format", "json", "status", "roads"]);
    run.assert_code(0);
    let rows = run.json();
    assert_eq!(rows[0]["line"], 1);
    assert_eq!(rows[0]["can_retire"], false);

    // flood-model moves on 2027-01-10; atlas reads 2.0.0 on 2027-03-01 (the CSV log). Line 1
    // is held by atlas until 2027-02-28 (its newest read within the lookback is 11-27's).
    w.write(
        "consumption/moved.jsonl",
        "{\"at\":\"2027-01-10T03:00:00Z\",\"consumer\":\"flood-model\",\"dataset\":\"roads\",\"contract\":\"2.0.0\"}\n",
    );
    w.run("2027-02-28", &["can-retire", "roads", "1"])
        .assert_code(1);
    let run = w.can_retire_line_1_json("2027-03-05");
    run.assert_code(0);
    let j = run.json();
    assert_eq!(j["can_retire"], true);
    assert_eq!(j["since"], "2027-03-01");
    assert_eq!(holders(&j), vec![]);
    let text = w.run("2027-03-05", &["can-retire", "roads", "1"]);
    text.assert_code(0);
    assert_eq!(
        text.stdout(),
        "roads line 1 can retire: no subscribed consumer's newest read since 2026-03-06 is on it (none since 2027-03-01)\n"
    );
    // Line 2 is read by everyone now.
    w.run("2027-03-05", &["can-retire", "roads", "2"])
        .assert_code(1);
    // Unknown dataset or line: bad input.
    w.run("2027-03-05", &["can-retire", "rivers", "1"])
        .assert_code(2);
    let run = w.run("2027-03-05", &["can-retire", "roads", "3"]);
    run.assert_code(2);
    run.assert_stderr_has("has no line 3 (its lines: 1, 2)");
}

#[test]
fn a_reader_not_subscribed_to_the_dataset_does_not_hold_its_line() {
    let w = World::new(world::closed_port());
    // atlas declares rivers only, yet reads roads 1.1.0 (2026-11-27); archive declares
    // rivers and never reads roads; flood-model moves to 2.0.0 on 2027-01-10.
    w.write(
        "consumers.toml",
        "[consumers.flood-model]\ncontacts = [\"h@example.org\"]\ndatasets.roads = {}\n\
         [consumers.atlas]\ncontacts = [\"a@example.org\"]\ndatasets.rivers = {}\n\
         [consumers.router]\ncontacts = [\"r@example.org\"]\ndatasets.roads = {}\n\
         [consumers.archive]\ncontacts = [\"x@example.org\"]\ndatasets.rivers = {}\n",
    );
    w.write(
        "consumption/moved.jsonl",
        "{\"at\":\"2027-01-10T03:00:00Z\",\"consumer\":\"flood-model\",\"dataset\":\"roads\",\"contract\":\"2.0.0\"}\n",
    );
    let run = w.can_retire_line_1_json("2027-01-20");
    run.assert_code(0);
    let j = run.json();
    // flood-model held line 1 until 2027-01-09.
    assert_eq!(j["since"], "2027-01-10");
    assert_eq!(j["not_holding"][0]["consumer"], "atlas");
    assert_eq!(j["not_holding"][0]["status"], "unsubscribed");
    run.assert_stderr_has("`atlas` reads line 1 of roads but is not subscribed to the dataset");

    // consumers lists atlas as unsubscribed, and archive not at all (silent only for the
    // datasets it declared).
    let run = w.consumers_json("2027-01-20");
    let listed = common::string_pairs(&run.json()["consumers"], "consumer", "status");
    assert_eq!(
        listed,
        vec![
            ("flood-model".to_string(), "migrated".to_string()),
            ("router".to_string(), "migrated".to_string()),
            ("atlas".to_string(), "unsubscribed".to_string()),
            ("ghost".to_string(), "unknown".to_string()),
        ]
    );
    // The line's count and the notifier leave atlas out too.
    assert!(w
        .run("2026-11-29", &["consumers", "roads"])
        .stdout()
        .contains("1 consumer(s) still on it"));
}

#[test]
fn consumers_shows_liveness_after_stale_after_days() {
    let w = World::new(world::closed_port());
    // Default: 30 days (lookback 365). On 2026-11-29 every reader read within 4 days; archive
    // never read roads.
    let run = w.consumers_json("2026-11-29");
    let j = run.json();
    assert_eq!(j["stale_after_days"], 30);
    let stale = |j: &serde_json::Value| -> Vec<(String, bool)> {
        j["consumers"]
            .rows()
            .map(|c| {
                (
                    c["consumer"].as_str().unwrap().into(),
                    c["stale"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        stale(&j),
        vec![
            ("atlas".to_string(), false),
            ("flood-model".to_string(), false),
            ("router".to_string(), false),
            ("archive".to_string(), true),
            ("ghost".to_string(), false),
        ]
    );
    // stale_after_days = 3: router (last read 11-25, 4 days) and ghost (11-26, 3 days) are
    // stale; atlas (11-27, 2 days) and flood-model (11-28) are not.
    let config = world::config(world::closed_port()).replace(
        "lookback_days = 365\n",
        "lookback_days = 365\nstale_after_days = 3\n",
    );
    w.write("contracts.toml", &config);
    let run = w.consumers_json("2026-11-29");
    assert_eq!(
        stale(&run.json()),
        vec![
            ("atlas".to_string(), false),
            ("flood-model".to_string(), false),
            ("router".to_string(), true),
            ("archive".to_string(), true),
            ("ghost".to_string(), true),
        ]
    );
    let text = w.run("2026-11-29", &["consumers", "roads"]);
    text.assert_stdout_has("liveness");

    // Strict: more than the lookback, or not a number, is bad config with its place.
    let bad = world::config(world::closed_port()).replace(
        "lookback_days = 365\n",
        "lookback_days = 365\nstale_after_days = 400\n",
    );
    w.write("contracts.toml", &bad);
    let run = w.run("2026-11-29", &["consumers", "roads"]);
    run.assert_code(2);
    run.assert_stderr_has(&format!(
        "contracts.toml:{}:20",
        world::line_of(&bad, "stale_after_days = ")
    ));
    run.assert_stderr_has("stale_after_days must be from 1 to lookback_days (365)");
    w.write("contracts.toml", &bad.replace("= 400", "= \"soon\""));
    let run = w.run("2026-11-29", &["consumers", "roads"]);
    run.assert_code(2);
    run.assert_stderr_has(&format!(
        "contracts.toml:{}:20",
        world::line_of(&bad, "stale_after_days = ")
    ));
}

#[test]
fn check_reports_uses_that_name_no_clause_with_their_place() {
    let w = World::new(world::closed_port());
    w.write(
        "consumers.toml",
        "[consumers.flood-model]\ncontacts = [\"h@example.org\"]\n\
         datasets.roads = { uses = [\"crs\", \"crss\", \"crs.code\"] }\n\
         datasets.lakes = {}\n",
    );
    let run = w.run("2026-11-29", &["--format", "json", "check"]);
    run.assert_code(1);
    let findings: Vec<(Option<u64>, Option<u64>, String)> = run.json()["findings"]
        .rows()
        .filter(|f| f["file"] == "consumers.toml")
        .map(|f| {
            (
                f["line"].as_u64(),
                f["column"].as_u64(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(findings.len(), 3, "{findings:#?}");
    assert_eq!(findings[0].0, None);
    assert_eq!(
        findings[0].2,
        "consumer `flood-model` reads dataset `lakes`, which the store does not have; the \
         datasets are: `roads`"
    );
    assert_eq!((findings[1].0, findings[1].1), (Some(3), Some(35)));
    assert!(
        findings[1].2.starts_with(
            "consumer `flood-model`, dataset `roads`: `crss` names no clause of roads@2.0.0"
        ),
        "{}",
        findings[1].2
    );
    assert_eq!((findings[2].0, findings[2].1), (Some(3), Some(43)));
    assert!(
        findings[2]
            .2
            .contains("`crs.code`: clause `crs` of roads@2.0.0 has no keys"),
        "{}",
        findings[2].2
    );
    // A registry that does not parse is exit 2 for the commands that read it.
    w.write(
        "consumers.toml",
        "[consumers.a]\ncontacts = [\"a@b.org\"]\ndatasets.roads = { uses = [\"Crs\"] }\n",
    );
    let run = w.run("2026-11-29", &["consumers", "roads"]);
    run.assert_code(2);
    run.assert_stderr_has("consumers.toml:3:28");
}

#[test]
fn notify_tells_no_reader_that_is_not_subscribed_and_says_so() {
    let (smtp, w) = world::with_relay();
    w.write(
        "consumers.toml",
        "[consumers.flood-model]\ncontacts = [\"hydro-oncall@example.org\"]\ndatasets.roads = {}\n\
         [consumers.atlas]\ncontacts = [\"atlas@example.org\"]\ndatasets.rivers = {}\n",
    );
    let run = w.run("2026-11-29", &["notify"]);
    run.assert_code(0);
    assert_eq!(smtp.mail_to("hydro-oncall@example.org").len(), 1);
    assert_eq!(smtp.mail_to("atlas@example.org").len(), 0);
    run.assert_stderr_has(
        "roads: 1 registered reader(s) still on a retiring line are not subscribed to roads",
    );
}

/// The README's worked example, on this repository's own store: its two recorded releases
/// are the Natural Earth countries as a GeoPackage (177 MultiPolygons) and as GeoParquet (177
/// features, Polygons and MultiPolygons). Enforcing `emitted_geometry = ["MultiPolygon"]`
/// fails the GeoParquet one; asking for 180 features fails both.
#[test]
fn the_example_store_backtests_the_readmes_draft() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let env = common::World::empty();
    let run = env.run_in(
        root,
        &[
            "--repo",
            root.to_str().unwrap(),
            "--today",
            "2027-02-01",
            "--format",
            "json",
            "backtest",
            "examples/drafts/countries-2.1.0.toml",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        figures(&run.json()),
        vec![
            f("emitted_geometry", 2, 1, &["2027.02"]),
            f("min_feature_count", 2, 2, &["2027.01", "2027.02"]),
        ]
    );
    // Its registry: flood-model relies on nothing 2.0.0 breaks.
    let run = env.run_in(
        root,
        &[
            "--repo",
            root.to_str().unwrap(),
            "--format",
            "json",
            "diff",
            "countries@1.2.0",
            "countries@2.0.0",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        verdicts(&run.json()),
        vec![
            v(
                "census-joins",
                "breaks",
                &["optional_attributes", "required_attributes"]
            ),
            v("flood-model", "unaffected", &[]),
            v("web-atlas", "breaks", &["optional_attributes"]),
        ]
    );
}
