//! `contracts timeline`: the window picture of a store laid out by hand, with recorded
//! releases, a moved sunset and a consumption log.

use crate::common::look;
use crate::common::world;

use look::with_releases_and_a_move;
use world::World;

#[test]
fn the_facts_behind_the_picture() {
    let w = with_releases_and_a_move();
    let run = w.run("2026-11-29", &["--format", "json", "timeline", "roads"]);
    run.assert_code(0);
    let j = run.json();
    // The moved sunset is the effective one, and the window runs to it.
    assert_eq!(j["lines"][0]["sunset"], "2027-02-01");
    assert_eq!(j["windows"][0]["opens"], "2026-11-01");
    assert_eq!(j["windows"][0]["sunset"], "2027-02-01");
    assert_eq!(j["sunset_moves"][0]["from"], "2027-01-15");
    // Release 2: passed 1.1.0 (line 1), failed 2.0.0 (line 2).
    let r = &j["releases"][1];
    assert_eq!(r["day"], "2026-11-24");
    assert_eq!(r["results"][0]["passed"], true);
    assert_eq!(r["results"][1]["line"], 2);
    assert_eq!(r["results"][1]["passed"], false);
    // Worked out by hand from the log (lookback 365 days, registered consumers only):
    // router reads 1.1.0 on 11-20 and 2.0.0 on 11-25; atlas 1.1.0 on 11-27; flood-model
    // 1.1.0 on 11-28; ghost is not registered. From the window's opening on 11-01 to today:
    let mut want = vec![0u64; 19]; // 11-01 ..= 11-19
    want.extend([1, 1, 1, 1, 1]); // 11-20 ..= 11-24: router
    want.extend([0, 0]); // 11-25, 11-26: router moved
    want.push(1); // 11-27: atlas
    want.extend([2, 2]); // 11-28, 11-29: atlas and flood-model
    let counts = j["still_on"][0]["counts"].as_array().unwrap();
    assert_eq!(counts[0]["day"], "2026-11-01");
    assert_eq!(counts.last().unwrap()["day"], "2026-11-29");
    let got: Vec<u64> = counts
        .iter()
        .map(|c| c["consumers"].as_u64().unwrap())
        .collect();
    assert_eq!(got, want);
}

/// The picture of `roads` on `today`, drawn without an error.
fn picture(w: &World, today: &str) -> String {
    let run = w.run(today, &["timeline", "roads"]);
    run.assert_code(0);
    run.stdout()
}

#[test]
fn the_picture_is_deterministic_and_says_what_it_shows() {
    let w = with_releases_and_a_move();
    let svg = picture(&w, "2026-11-29");
    assert_eq!(svg, picture(&w, "2026-11-29"), "two runs, same bytes");
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(!svg.contains("<script"), "no JavaScript");
    for words in [
        "line 1",
        "line 2",
        "sunset 2027-02-01",
        "sunset moved later from 2027-01-15 to 2027-02-01",
        "today 2026-11-29",
        "Consumers still reading line 1",
        "2 consumers on 2026-11-29",
        "window: line 1 and line 2 both live for 92 days",
        "release 2026.11 on 2026-11-10: passed against 1.1.0",
        "release on 2026-11-24: failed against 2.0.0",
    ] {
        assert!(svg.contains(words), "missing {words:?}");
    }
    // Two passes on 11-10, one pass and one failure on 11-24.
    assert_eq!(svg.matches("passed against").count(), 3);
    assert_eq!(svg.matches("failed against").count(), 1);
    insta::assert_snapshot!(svg);
}

#[test]
fn out_writes_the_file_and_bad_input_exits_2() {
    let w = with_releases_and_a_move();
    let out = w.root().join("roads.svg");
    let run = w.run(
        "2026-11-29",
        &["timeline", "roads", "--out", out.to_str().unwrap()],
    );
    run.assert_code(0);
    assert!(run.stdout().is_empty());
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.trim_end().ends_with("</svg>"));
    w.run("2026-11-29", &["timeline", "rivers"]).assert_code(2);
    w.run("2026-11-29", &["timeline", "Bad Name"])
        .assert_code(2);
}

#[test]
fn a_dataset_without_a_window_says_so() {
    let w = World::new(25);
    w.write(
        "contracts/rivers/1.0.0.toml",
        "dataset = \"rivers\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
         [clauses]\ncrs = \"EPSG:4326\"\n",
    );
    let run = w.run("2026-11-29", &["timeline", "rivers"]);
    run.assert_code(0);
    assert!(run.stdout().contains("no sunset set"));
    assert!(run.stdout().contains("No deprecation window"));
}

#[test]
fn control_characters_of_a_release_never_reach_the_picture() {
    let w = look::with_control_characters();
    let run = w.run("2026-11-29", &["timeline", "roads"]);
    run.assert_code(0);
    let svg = run.stdout();
    assert!(
        svg.contains("release 2026.11  [0m on 2026-11-10"),
        "the release is named, each control a space: {svg}"
    );
    assert!(!look::has_forbidden_control(&svg), "{svg:?}");
    assert!(look::well_formed(&svg), "{svg}");
}

/// [`with_releases_and_a_move`] with two waivers granted through the binary on 2027-01-20:
/// one of line 1's `crs` until 2027-01-31, inside the days the "sunset moved later" label
/// spans, and one of line 2's `crs` until 2027-04-15, revoked on 2027-03-12.
fn with_a_move_and_waivers() -> World {
    let w = with_releases_and_a_move();
    for (line, until) in [("1", "2027-01-31"), ("2", "2027-04-15")] {
        let args = [
            "waive", "roads", "crs", "--line", line, "--until", until, "--reason", "outage",
        ];
        w.run("2027-01-20", &args).assert_code(0);
    }
    let args = [
        "unwaive",
        "roads",
        "crs",
        "--line",
        "2",
        "--reason",
        "fixed early",
    ];
    w.run("2027-03-12", &args).assert_code(0);
    w
}

/// A `<text>` of the picture: where it is anchored, its size and what it says.
#[derive(Debug)]
struct Text {
    x: f64,
    y: f64,
    size: f64,
    anchor: String,
    words: String,
}

/// The value of attribute `name` in the attributes `attrs` of one element.
fn attr<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    let at = attrs.find(&format!(" {name}=\""))? + name.len() + 3;
    attrs[at..].split('"').next()
}

/// Every `<text>` of `svg`, its size the document's (12) unless it says another.
fn texts(svg: &str) -> Vec<Text> {
    svg.split("<text")
        .skip(1)
        .map(|piece| {
            let (attrs, rest) = piece
                .split_once('>')
                .expect("a text element closes its tag");
            let words = rest.split("</text>").next().unwrap_or_default();
            let number = |name: &str| attr(attrs, name).map(|v| v.parse::<f64>().unwrap());
            Text {
                x: number("x").expect("a text has x"),
                y: number("y").expect("a text has y"),
                size: number("font-size").unwrap_or(12.0),
                anchor: attr(attrs, "text-anchor").unwrap_or("start").to_string(),
                words: words
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&#39;", "'")
                    .replace("&amp;", "&"),
            }
        })
        .collect()
}

/// The box a text takes, by the estimate the renderer lays labels out with: each character
/// 0.6 of the font size wide, from 0.8 of the size above the baseline to 0.2 below it.
fn text_box(t: &Text) -> (f64, f64, f64, f64) {
    let width = t.words.chars().count() as f64 * t.size * 0.6;
    let left = match t.anchor.as_str() {
        "middle" => t.x - width / 2.0,
        "end" => t.x - width,
        _ => t.x,
    };
    (left, t.y - 0.8 * t.size, left + width, t.y + 0.2 * t.size)
}

#[test]
fn no_two_labels_of_the_picture_overlap() {
    let svg = picture(&with_a_move_and_waivers(), "2027-01-25");
    let all = texts(&svg);
    // The two labels the issue saw drawn over each other are both there.
    for words in [
        "sunset moved later from 2027-01-15 to 2027-02-01 (recorded 2026-11-15)",
        "waived: crs",
    ] {
        assert!(
            all.iter().any(|t| t.words == words),
            "no {words:?} in {all:#?}"
        );
    }
    let mut overlaps = Vec::new();
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            let (al, at, ar, ab) = text_box(a);
            let (bl, bt, br, bb) = text_box(b);
            if al < br && bl < ar && at < bb && bt < ab {
                overlaps.push((&a.words, &b.words));
            }
        }
    }
    assert!(
        overlaps.is_empty(),
        "labels drawn over each other: {overlaps:#?}"
    );
}

#[test]
fn a_revoked_waiver_is_drawn_to_the_day_it_was_revoked() {
    let svg = picture(&with_a_move_and_waivers(), "2027-03-20");
    let waiver = svg
        .split("<g class=\"waiver\">")
        .skip(1)
        .find(|g| g.contains("revoked on 2027-03-12"))
        .unwrap_or_else(|| panic!("no revoked waiver in {svg}"));
    let band = waiver.split("<rect").nth(1).expect("the waiver has a band");
    let number = |s: &str, name: &str| attr(s, name).unwrap().parse::<f64>().unwrap();
    let (start, width) = (number(band, "x"), number(band, "width"));
    // The day scale, read off the picture: the band starts on its grant (2027-01-20) and
    // today's line stands on 2027-03-20, 59 days later.
    let today = svg
        .split("<line")
        .find(|l| l.contains("stroke=\"#8250df\""))
        .expect("today's line");
    let per_day = (number(today, "x1") - start) / 59.0;
    // Revoked on 2027-03-12: it covered the days up to 03-11, 51 days from its grant; its
    // `until` (04-15) would be 86.
    let drawn_days = width / per_day;
    assert!(
        (drawn_days - 51.0).abs() < 0.5,
        "the band covers {drawn_days:.1} days, not the 51 up to its revocation"
    );
    assert!(
        texts(&svg)
            .iter()
            .any(|t| t.words == "waived: crs, revoked 2027-03-12"),
        "the label says it was revoked: {svg}"
    );
}
