//! When each consumer was told, shown where people look: notices are sent first, for real,
//! through the binary and a loopback SMTP server on two days; then `timeline` marks each
//! delivery on its line (a title naming consumer and milestone) and `site` lists, per consumer,
//! the milestones delivered on the dataset's page. The expectations come from the ledger the
//! runs wrote, not from the pictures.

use crate::common::world;

use world::{SmtpServer, World};

const FIRST: &str = "2026-11-29";
/// 30 days before the sunset of line 1 (2027-01-15): the `before-30` milestone.
const SECOND: &str = "2026-12-16";

/// The ledger's deliveries, as (consumer, milestone, day sent for, channel).
fn delivered(w: &World) -> Vec<(String, String, String, String)> {
    let text = w.read("notifications/roads.toml").unwrap();
    world::notices(&text)
        .iter()
        .map(|n| {
            (
                n["consumer"].as_str().unwrap().to_string(),
                n["milestone"].as_str().unwrap().to_string(),
                n["for_date"].as_datetime().unwrap().to_string(),
                n.get("channel")
                    .and_then(|c| c.as_str())
                    .unwrap_or("mail")
                    .to_string(),
            )
        })
        .collect()
}

fn notified_world(smtp: &SmtpServer) -> World {
    let w = World::new(smtp.port);
    w.run(FIRST, &["notify"]).assert_code(0);
    w.run(SECOND, &["notify"]).assert_code(0);
    w
}

#[test]
fn the_timeline_marks_each_delivery_on_its_line_with_who_and_which_milestone() {
    let smtp = SmtpServer::start();
    let w = notified_world(&smtp);
    let sent = delivered(&w);
    let days: std::collections::BTreeSet<&str> = sent.iter().map(|s| s.2.as_str()).collect();
    assert_eq!(days.into_iter().collect::<Vec<_>>(), vec![FIRST, SECOND]);

    let run = w.run(SECOND, &["timeline", "roads"]);
    run.assert_code(0);
    let svg = run.stdout();
    let marks: Vec<&str> = svg
        .lines()
        .filter(|l| l.contains("class=\"told\""))
        .collect();
    assert_eq!(marks.len(), 2, "one mark per day on line 1:\n{svg}");
    for (consumer, milestone, day, channel) in &sent {
        let title = marks
            .iter()
            .find(|m| m.contains(&format!("told on {day}:")))
            .unwrap_or_else(|| panic!("no mark for {day}:\n{svg}"));
        assert!(
            title.contains(&format!("{consumer} {milestone} by {channel}")),
            "{consumer} {milestone} on {day}: {title}"
        );
    }
    // The day of the mark is also where it sits: the later day is further right.
    let x = |m: &str| -> f64 {
        let d = m.split("d=\"M").nth(1).unwrap();
        d.split(' ').next().unwrap().parse().unwrap()
    };
    let at = |day: &str| {
        x(marks
            .iter()
            .find(|m| m.contains(&format!("told on {day}:")))
            .unwrap())
    };
    assert!(at(FIRST) < at(SECOND));

    // --format json carries the same facts.
    let json = w
        .run(SECOND, &["--format", "json", "timeline", "roads"])
        .json();
    let told = json["told"].as_array().unwrap();
    assert_eq!(told.len(), sent.len());
    for (consumer, milestone, day, channel) in &sent {
        assert!(
            told.iter().any(|t| t["consumer"] == consumer.as_str()
                && t["milestone"] == milestone.as_str()
                && t["day"] == day.as_str()
                && t["channel"] == channel.as_str()
                && t["line"] == 1),
            "{consumer} {milestone} {day}: {told:#?}"
        );
    }
}

#[test]
fn the_site_lists_what_each_consumer_was_told_on_the_dataset_page() {
    let smtp = SmtpServer::start();
    let w = notified_world(&smtp);
    let sent = delivered(&w);
    let out = w.root().join("public");
    w.run(SECOND, &["site", out.to_str().unwrap()])
        .assert_code(0);
    let page = std::fs::read_to_string(out.join("roads.html")).unwrap();
    let section = page
        .split("<h2 id=\"told\">")
        .nth(1)
        .unwrap_or_else(|| panic!("no told section:\n{page}"));
    let section = section.split("<h2").next().unwrap();
    for (consumer, milestone, day, _) in &sent {
        let row = section
            .split("<tr>")
            .find(|r| r.contains(&format!(">{consumer}<")) && r.contains(&format!(">{milestone}<")))
            .unwrap_or_else(|| panic!("no row for {consumer} {milestone}:\n{section}"));
        assert!(row.contains(&format!(">{day}<")), "{row}");
        assert!(row.contains(">mail<"), "{row}");
    }
    // A consumer never told (router moved to line 2 before any notice) has no row.
    assert!(!sent.iter().any(|s| s.0 == "router"), "{sent:?}");
    assert!(!section.contains(">router<"), "{section}");
}
