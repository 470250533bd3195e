//! Impact before publishing (issue 12), end to end through the real binary in temporary
//! stores with a fixed --today: per-consumer verdicts in `diff` and `propose`, tailored
//! notices received by a real SMTP server on loopback, the backtest of a draft on recorded
//! release profiles, the `can-retire` gate and consumer liveness.

mod common;
mod world;

use world::{SmtpServer, World};

/// The world's roads with a map change in 2.0.0 beside the CRS change, and consumers that
/// declare what they use: flood-model relies on `CNTY_ID` (retyped), atlas on `NAME` and the
/// envelope (neither changes).
fn declared_world(smtp: &SmtpServer) -> World {
    let w = World::new(smtp.port);
    w.write(
        "contracts/roads/1.1.0.toml",
        "dataset = \"roads\"\nversion = \"1.1.0\"\nsupersedes = \"1.0.0\"\n\
         valid_from = 2026-03-01\n[clauses]\ncrs = \"EPSG:4326\"\n\
         required_attributes = { CNTY_ = \"float64\", CNTY_ID = \"float64\", NAME = \"string\" }\n",
    );
    w.write(
        "contracts/roads/2.0.0.toml",
        &format!(
            "dataset = \"roads\"\nversion = \"2.0.0\"\nsupersedes = \"1.1.0\"\n\
             valid_from = 2026-11-01\nsunset = {}\n[clauses]\ncrs = \"EPSG:27700\"\n\
             required_attributes = {{ CNTY_ID = \"int64\", NAME = \"string\" }}\n",
            world::SUNSET
        ),
    );
    w.append(
        "history/roads.toml",
        &format!(
            r#"
[[change]]
at        = 2026-10-01T17:00:00Z
from      = "1.1.0"
to        = "2.0.0"
clause    = "required_attributes"
kind      = "fixed"
direction = "changed"
verdict   = "breaking"
window    = {{ opens = 2026-11-01, sunset = {} }}
rationale = "County ids are integers; the duplicate column goes."
"#,
            world::SUNSET
        ),
    );
    w.write(
        "consumers.toml",
        r#"
[consumers.flood-model]
team = "Hydrology"
contacts = ["hydro-oncall@example.org"]
datasets.roads = { uses = ["required_attributes.CNTY_ID"] }

[consumers.atlas]
team = "Cartography"
contacts = ["atlas@example.org"]
datasets.roads = { uses = ["required_attributes.NAME", "envelope"] }

[consumers.router]
team = "Routing"
contacts = ["routing@example.org"]
datasets.roads = {}

[consumers.archive]
contacts = ["records@example.org"]
datasets.rivers = {}
"#,
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
    // Both notices were sent and recorded.
    let mut ledger = w.ledger();
    ledger.sort();
    assert_eq!(
        ledger,
        [
            ("atlas".to_string(), "before-60".to_string()),
            ("flood-model".to_string(), "before-60".to_string())
        ]
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
"#;

/// One change of every kind: a widening clause shrank (envelope), a widening map lost a key
/// (optional_attributes.ref), a narrowing set tightened (compatible), per-key bounds loosened
/// at one key (max_null_fraction.name), a fixed map changed at one key
/// (required_attributes.class), a meaning changed (attribute_semantics.class), a fixed set
/// changed (dimensions), a narrowing clause was removed (max_imputed_fraction) and an
/// enforced clause became advisory (metric_tolerances, relaxed).
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
                    .as_array()
                    .unwrap()
                    .iter()
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
const ALL_BREAKING: [&str; 8] = [
    "attribute_semantics.class",
    "dimensions",
    "envelope",
    "max_imputed_fraction",
    "max_null_fraction",
    "metric_tolerances",
    "optional_attributes",
    "required_attributes",
];

#[test]
fn diff_gives_each_subscribed_consumer_its_verdict_for_every_clause_kind() {
    let w = World::new(world::closed_port());
    w.write("consumers.toml", REGISTRY);
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
            v("c-class", "breaks", &["attribute_semantics.class", "required_attributes"]),
            v("c-crs", "unaffected", &[]),
            v("c-env", "breaks", &["envelope"]),
            v("c-geom", "unaffected", &[]),
            v("c-gone", "breaks", &["dimensions", "max_imputed_fraction"]),
            v("c-keys", "unaffected", &[]),
            v("c-ref", "breaks", &["max_null_fraction", "optional_attributes"]),
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
    let table = out
        .split("consumers of roads:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"));
    assert!(out.find("required bump").unwrap() < out.find("consumers of roads:").unwrap());
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(1)
        .map(|l| l.split("   ").map(str::trim).filter(|c| !c.is_empty()).collect())
        .collect();
    assert_eq!(rows[0][..2], ["c-all", "breaks (uses everything)"]);
    assert_eq!(rows[2], ["c-crs", "unaffected", "-"]);
    assert_eq!(rows[3], ["c-env", "breaks", "envelope"]);
    assert_eq!(rows[9][..2], ["legacy", "breaks (uses everything)"]);
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
