//! The notice stands on its own: each breaking change with its old and new value (a map key
//! by key), and a link to the dataset's page of the registry when one is configured — never
//! an instruction to run a tool the consumer does not have.

mod common;
mod world;

use world::{SmtpServer, World};

/// The world's roads, with a required attribute dropped and one retyped in 2.0.0.
fn with_a_map_change(smtp: &SmtpServer) -> World {
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
    w
}

fn flood_body(smtp: &SmtpServer) -> String {
    let mails = smtp.mail_to("hydro-oncall@example.org");
    assert_eq!(mails.len(), 1, "{mails:#?}");
    mails[0].body()
}

#[test]
fn each_breaking_change_shows_its_old_and_new_value() {
    let smtp = SmtpServer::start();
    let w = with_a_map_change(&smtp);
    w.run("2026-11-29", &["notify"]).assert_code(0);
    let body = flood_body(&smtp);
    for needle in [
        "- crs (fixed, changed) in 2.0.0",
        "was:  EPSG:4326",
        "now:  EPSG:27700",
        "- required_attributes (fixed, changed) in 2.0.0",
        "what changes: `CNTY_` removed (was float64); `CNTY_ID` float64 → int64",
        "why:  County ids are integers; the duplicate column goes.",
        "the value you rely on now and the value that replaces it",
    ] {
        assert!(body.contains(needle), "body lacks {needle:?}:\n{body}");
    }
    // A plain value is said once, as was/now; only a map or set gets "what changes".
    assert_eq!(body.matches("what changes:").count(), 1, "{body}");
    assert!(
        !body.contains("contracts show") && !body.contains("contracts diff"),
        "a consumer has no `contracts` to run:\n{body}"
    );
}

#[test]
fn the_registry_link_when_configured() {
    let smtp = SmtpServer::start();
    let w = with_a_map_change(&smtp);
    w.write(
        "contracts.toml",
        &world::config(smtp.port).replace(
            "[notify]\n",
            "[notify]\nregistry_url = \"https://data.example.org/contracts/\"\n",
        ),
    );
    w.run("2026-11-29", &["notify"]).assert_code(0);
    let body = flood_body(&smtp);
    assert!(
        body.contains("https://data.example.org/contracts/roads.html"),
        "{body}"
    );
    assert!(!body.contains("the value you rely on now"), "{body}");

    // A registry_url that is not an absolute URL is refused with the file named.
    w.write(
        "contracts.toml",
        &world::config(smtp.port).replace("[notify]\n", "[notify]\nregistry_url = \"data\"\n"),
    );
    let run = w.run("2026-11-29", &["notify", "--dry-run"]);
    run.assert_code(2);
    assert!(run.stderr().contains("contracts.toml"), "{}", run.stderr());
    assert!(run.stderr().contains("registry_url"), "{}", run.stderr());
}
