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
