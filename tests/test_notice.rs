//! The notice stands on its own: each breaking change with its old and new value (a map key
//! by key), and a link to the dataset's page of the registry when one is configured — never
//! an instruction to run a tool the consumer does not have.

use crate::common::world;

use world::{SmtpServer, World};

/// The world's roads, with a required attribute dropped and one retyped in 2.0.0.
fn flood_body(smtp: &SmtpServer) -> String {
    let mails = smtp.mail_to("hydro-oncall@example.org");
    assert_eq!(mails.len(), 1, "{mails:#?}");
    mails[0].body()
}

#[test]
fn each_breaking_change_shows_its_old_and_new_value() {
    let smtp = SmtpServer::start();
    let w = World::with_a_map_change(smtp.port);
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
    let w = World::with_a_map_change(smtp.port);
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
    run.assert_stderr_has("contracts.toml");
    run.assert_stderr_has("registry_url");
}
