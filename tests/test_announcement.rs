//! What the notices of the example store say about days (issue 44): every "N days from now" and
//! "N days left" is counted from `--today` to the day written beside it, and a window that has
//! closed is not announced.

use std::path::Path;

use crate::common::copy_dir;
use crate::common::world::{day, World};

/// The example store this repository carries, copied into a fresh repository of one commit
/// (without `[store] since`, which names a commit of this repository).
fn example() -> World {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let w = World::empty();
    for d in ["contracts", "history", "notifications", "consumption"] {
        copy_dir(&repo.join(d), &w.root().join(d));
    }
    std::fs::copy(repo.join("consumers.toml"), w.root().join("consumers.toml")).unwrap();
    let config: String = std::fs::read_to_string(repo.join("contracts.toml"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("[store]") && !l.starts_with("since"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(w.root().join("contracts.toml"), config).unwrap();
    w.git(&["init", "-q"]);
    w.git(&["add", "-A"]);
    w.git(&["commit", "-q", "-m", "the example store"]);
    w
}

/// Every `<day><sep><N> day(s) <tail>` in `text` (lines joined), as (day, N), where `sep` is
/// `, `, `: ` or ` (`: each count must stand right after the day it counts to.
fn counts(text: &str, tail: &str) -> Vec<(String, i64)> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    for unit in [" days ", " day "] {
        let needle = format!("{unit}{tail}");
        let mut rest = flat.as_str();
        while let Some(at) = rest.find(&needle) {
            let before = &rest[..at];
            let n_start = before
                .rfind(|c: char| !c.is_ascii_digit())
                .map_or(0, |i| i + 1);
            let n: i64 = before[n_start..].parse().expect("a count before `days`");
            let head = [", ", ": ", " ("]
                .iter()
                .find_map(|sep| before[..n_start].strip_suffix(sep))
                .unwrap_or_else(|| panic!("no day right before the count in {before:?}"));
            let d = &head[head.len() - 10..];
            out.push((d.to_string(), n));
            rest = &rest[at + needle.len()..];
        }
    }
    out
}

#[test]
fn every_count_of_days_in_a_notice_is_the_distance_to_the_day_beside_it() {
    let w = example();
    // 2027-01-10: the window of countries line 2 (opened 2026-12-01) is announced alone;
    // 2027-03-05: the 60-day countdown is due with it, and one notice serves both.
    let (mut from_now, mut left) = (Vec::new(), Vec::new());
    let mut shown = String::new();
    for today in ["2027-01-10", "2027-03-05"] {
        let run = w.run(today, &["notify", "--dry-run", "--show"]);
        run.assert_code(0);
        let text = run.stdout();
        for (counted, tail) in [(&mut from_now, "from now"), (&mut left, "left")] {
            counted.extend(counts(&text, tail).into_iter().map(|c| (today, c)));
        }
        shown.push_str(&text);
    }
    assert!(
        from_now.iter().any(|(t, _)| *t == "2027-01-10")
            && left.iter().any(|(t, _)| *t == "2027-03-05"),
        "the announcement and the countdown both count days: {shown}"
    );
    for (today, (d, n)) in from_now.iter().chain(&left) {
        assert_eq!(
            (day(d) - day(today)).num_days(),
            *n,
            "{d} is not {n} day(s) from {today}:\n{shown}"
        );
    }
    // The line's sunset is 2027-05-01, its last day the day before.
    assert!(shown.contains("its last day is 2027-04-30"), "{shown}");
    assert!(shown.contains("Its last day is 2027-04-30"), "{shown}");
    assert!(
        from_now.iter().any(|(_, (d, _))| d == "2027-05-01"),
        "{shown}"
    );
}

#[test]
fn a_window_that_has_closed_is_not_announced_only_the_overdue_notices_apply() {
    let w = example();
    w.append(
        "consumption/reads.jsonl",
        "{\"at\":\"2027-05-03T03:00:00Z\",\"consumer\":\"flood-model\",\"dataset\":\"countries\",\"contract\":\"1.2.0\"}\n",
    );
    w.git(&["add", "-A"]);
    w.git(&["commit", "-q", "-m", "a read of line 1 after its sunset"]);
    let today = "2027-05-08";
    let sunset = "2027-05-01";

    let run = w.run(today, &["--format", "json", "notify", "--dry-run"]);
    run.assert_code(0);
    let planned: Vec<(String, String, i64)> = run
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["consumer"].as_str().unwrap().to_string(),
                n["milestone"].as_str().unwrap().to_string(),
                n["days_left"].as_i64().unwrap(),
            )
        })
        .collect();
    let days_left = (day(sunset) - day(today)).num_days();
    // `overdue-1` on the sunset, then one more every `overdue_every_days` (7 in the example).
    let overdue = format!("overdue-{}", -days_left / 7 + 1);
    assert_eq!(
        planned,
        vec![("flood-model".to_string(), overdue, days_left)],
        "{}",
        run.stdout()
    );

    let shown = w.run(today, &["notify", "--dry-run", "--show"]);
    shown.assert_code(0);
    let text = shown.stdout();
    assert!(!text.contains("stays"), "{text}");
    assert!(
        text.contains("was retired on 2027-05-01, 7 days ago"),
        "{text}"
    );
}
