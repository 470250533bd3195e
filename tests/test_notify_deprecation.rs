//! The `deprecated:<key>:<step>` notices, through the real binary and a real SMTP server on
//! loopback: roads 1.1.0 (line 1) deprecates `optional_attributes.pop_est`, promised through
//! 2027-01-10, and `notify` tells the consumers on line 1 that use it — declared in `uses`,
//! or no `uses` and reads that cannot tell — once when it is published and once at each
//! countdown milestone; a consumer whose `uses` names only other attributes hears nothing. A
//! run that died after claiming one leaves it to the next, which sends it once more with the
//! same Message-ID, as for every notice.

use crate::common::{pg_audit_lines, world};

use world::{registry, SmtpServer, World, FLOOD_ONCALL};

const FLOOD: &str = "hydro-oncall@example.org";
const ATLAS: &str = "atlas@example.org";
const ARCHIVE: &str = "records@example.org";
const PUBLISHED: &str = "deprecated:optional_attributes.pop_est:published";
const BEFORE_30: &str = "deprecated:optional_attributes.pop_est:before-30";

/// The world with line 1's current version deprecating `pop_est`; flood-model declares
/// `pop_est`, atlas only `name`, archive nothing (and reads roads 1.1.0 too); the countdown
/// is [30, 7] days, so that publication and the first milestone fall on different days.
fn deprecating() -> (SmtpServer, World) {
    let (smtp, w) = world::with_relay();
    w.write(
        "contracts/roads/1.1.0.toml",
        "dataset = \"roads\"\nversion = \"1.1.0\"\nsupersedes = \"1.0.0\"\n\
         valid_from = 2026-03-01\n[clauses]\ncrs = \"EPSG:4326\"\n\
         optional_attributes = { pop_est = \"float64\", name = \"string\" }\n\
         [deprecated]\n\"optional_attributes.pop_est\" = { reason = \"estimates replaced by the census\", \
         replacement = \"pop_2026\", remove_after = 2027-01-10 }\n",
    );
    let uses = |u: &str| format!("datasets.roads = {{ uses = {u} }}");
    w.write(
        "consumers.toml",
        &registry(
            FLOOD_ONCALL,
            [
                Some(&uses(r#"["optional_attributes.pop_est"]"#)),
                Some(&uses(r#"["optional_attributes.name"]"#)),
                Some(""),
                Some(""),
            ],
        ),
    );
    let config = w.read("contracts.toml").unwrap();
    w.write(
        "contracts.toml",
        &config.replace("days_before = [60, 30, 14, 7, 1]", "days_before = [30, 7]"),
    );
    w.write(
        "consumption/archive.jsonl",
        r#"{"at":"2026-11-27T03:00:00Z","consumer":"archive","dataset":"roads","contract":"1.1.0"}"#,
    );
    (smtp, w)
}

/// The mails about the deprecation sent to `to`.
fn deprecation_mails(smtp: &SmtpServer, to: &str) -> Vec<world::Mail> {
    smtp.mail_to(to)
        .into_iter()
        .filter(|m| m.header("Subject").unwrap().contains("is deprecated"))
        .collect()
}

/// The deprecation notices of the ledger, as (consumer, milestone), sorted.
fn told(w: &World) -> Vec<(String, String)> {
    world::sorted(
        w.ledger()
            .into_iter()
            .filter(|(_, m)| m.starts_with("deprecated:"))
            .collect(),
    )
}

#[test]
fn users_of_a_deprecated_key_are_told_once_on_publication_and_once_per_milestone() {
    let (smtp, w) = deprecating();
    // 2026-11-29: 43 days before 2027-01-11, the first day without the promise: publication
    // only. Twice on the same day sends it once.
    w.run("2026-11-29", &["notify"]).assert_code(0);
    w.run("2026-11-29", &["notify"]).assert_code(0);
    assert_eq!(
        told(&w),
        world::pairs(&[("archive", PUBLISHED), ("flood-model", PUBLISHED)])
    );
    assert_eq!(deprecation_mails(&smtp, FLOOD).len(), 1);
    assert_eq!(deprecation_mails(&smtp, ARCHIVE).len(), 1);
    // atlas declared only `name`: it is shown not to use `pop_est`.
    assert!(
        deprecation_mails(&smtp, ATLAS).is_empty(),
        "{:#?}",
        smtp.mails()
    );

    let flood = &deprecation_mails(&smtp, FLOOD)[0];
    let subject = flood.header("Subject").unwrap();
    assert!(
        subject.contains("[roads]")
            && subject.contains("optional_attributes.pop_est")
            && subject.contains("promised through 2027-01-10"),
        "{subject}"
    );
    let body = flood.body();
    for needle in [
        "\"roads\"",
        "key:          optional_attributes.pop_est",
        "why:          estimates replaced by the census",
        "instead:      pop_2026",
        "remove after: 2027-01-10",
        "declared it uses it (optional_attributes.pop_est)",
        PUBLISHED,
    ] {
        assert!(body.contains(needle), "lacks {needle:?}: {body}");
    }
    // archive declared nothing and its reads cannot tell which attributes they touched.
    let body = deprecation_mails(&smtp, ARCHIVE)[0].body();
    assert!(body.contains("declared no `uses`"), "{body}");
    assert!(body.contains("cannot tell"), "{body}");

    // 2026-12-12: 30 days before 2027-01-11, the first countdown milestone; again twice.
    w.run("2026-12-12", &["notify"]).assert_code(0);
    w.run("2026-12-12", &["notify"]).assert_code(0);
    assert_eq!(
        told(&w),
        world::pairs(&[
            ("archive", BEFORE_30),
            ("archive", PUBLISHED),
            ("flood-model", BEFORE_30),
            ("flood-model", PUBLISHED),
        ])
    );
    let flood = deprecation_mails(&smtp, FLOOD);
    assert_eq!(flood.len(), 2);
    let subject = flood[1].header("Subject").unwrap();
    assert!(subject.contains("30 days left"), "{subject}");
    assert!(deprecation_mails(&smtp, ATLAS).is_empty());
}

#[test]
fn a_dry_run_shows_the_deprecation_notices_and_sends_nothing() {
    let (smtp, w) = deprecating();
    let run = w.run("2026-11-29", &["--format", "json", "notify", "--dry-run"]);
    run.assert_code(0);
    let rows: Vec<(String, String)> = run
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["deprecation"].is_object())
        .map(|r| {
            (
                r["consumer"].as_str().unwrap().to_string(),
                r["deprecation"]["evidence"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        world::sorted(rows),
        world::pairs(&[("archive", "unknown"), ("flood-model", "declared")])
    );
    let shown = w.run("2026-11-29", &["notify", "--dry-run", "--show"]);
    shown.assert_code(0);
    let out = shown.stdout();
    assert!(
        out.contains("optional_attributes.pop_est is deprecated"),
        "{out}"
    );
    assert!(smtp.mails().is_empty());
    assert!(told(&w).is_empty());
}

#[test]
fn a_deprecation_notice_claimed_by_a_run_that_died_is_sent_once_more_with_its_id() {
    let (smtp, w) = deprecating();
    let config = w.read("contracts.toml").unwrap();
    w.write(
        "contracts.toml",
        &config.replace(
            "overdue_every_days = 7\n",
            "overdue_every_days = 7\nclaim_stale_minutes = 0\n",
        ),
    );
    // A run claimed flood-model's announcement and died before confirming it.
    let id = "<contracts.roads.1.flood-model.deprecated.optional_attributes.pop_est.published@example.org>";
    w.write(
        "notifications/roads.toml",
        &format!(
            "[[claim]]\nconsumer   = \"flood-model\"\nline       = 1\nmilestone  = \"{PUBLISHED}\"\n\
             recipients = [\"{FLOOD}\"]\nmessage_id = \"{id}\"\nrun        = \"dead.1.1\"\n\
             at         = 2026-11-29T01:00:00Z\nfor_date   = 2026-11-29\nsunset     = 2027-01-11\n"
        ),
    );
    let run = w.run("2026-11-29", &["notify"]);
    run.assert_code(0);
    assert!(run.stderr().contains("dead.1.1"), "{}", run.stderr());
    let flood = deprecation_mails(&smtp, FLOOD);
    assert_eq!(flood.len(), 1);
    assert_eq!(flood[0].header("Message-ID").unwrap(), id);
    w.run("2026-11-29", &["notify"]).assert_code(0);
    assert_eq!(deprecation_mails(&smtp, FLOOD).len(), 1);
    assert_eq!(
        told(&w),
        world::pairs(&[("archive", PUBLISHED), ("flood-model", PUBLISHED)])
    );
}

#[test]
fn the_audit_log_decides_who_is_told_a_read_of_the_key_tells_a_read_of_others_spares() {
    let (smtp, w) = deprecating();
    // flood-model now declares only `crs`, atlas nothing; what they read is in PostgreSQL's
    // audit log. archive reads line 1 through a log that cannot tell.
    let uses = |u: &str| format!("datasets.roads = {{ uses = {u} }}");
    w.write(
        "consumers.toml",
        &registry(
            FLOOD_ONCALL,
            [Some(&uses(r#"["crs"]"#)), Some(""), Some(""), Some("")],
        ),
    );
    pg_audit_lines::with_pgaudit_log(
        &w,
        &pg_audit_lines::flood_and_atlas(
            "SELECT v.name, v.pop_est FROM roads_v1 v WHERE v.pop_est > 1e6",
            "SELECT name FROM roads_v1",
        ),
    );
    w.write(
        "consumption/blind.jsonl",
        r#"{"at":"2026-11-27T03:00:00Z","consumer":"archive","dataset":"roads","contract":"1.1.0"}"#,
    );
    w.run("2026-11-29", &["notify"]).assert_code(0);
    // flood-model never declared pop_est, but its statement read it: told. atlas's statement
    // read only `name`: not told. archive's reads cannot tell: told.
    assert_eq!(
        told(&w),
        world::pairs(&[("archive", PUBLISHED), ("flood-model", PUBLISHED)])
    );
    assert_eq!(deprecation_mails(&smtp, FLOOD).len(), 1);
    assert!(deprecation_mails(&smtp, ATLAS).is_empty());
}
