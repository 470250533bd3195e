//! `contracts site`: the static registry, its content, its snapshot, and a real browser.

use crate::common::look;
use crate::common::world;

use std::path::Path;

use look::{console_messages, file_url, headless, with_releases_and_a_move};

/// The site of the hand-laid store, written into `<store>/public`.
fn site(w: &world::World) -> std::path::PathBuf {
    let out = w.root().join("public");
    let run = w.run("2026-11-29", &["site", out.to_str().unwrap()]);
    run.assert_code(0);
    assert!(run.stdout().is_empty(), "pages go to files, not stdout");
    out
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A page with what changes from run to run (commit ids, the tool's version) replaced.
fn normalised(w: &world::World, html: &str) -> String {
    let mut s = html.replace(env!("CARGO_PKG_VERSION"), "<version>");
    for id in w.git(&["log", "--format=%H"]).lines() {
        s = s.replace(id, "<commit>").replace(&id[..12], "<commit>");
    }
    s
}

#[test]
fn pages_carry_the_registry() {
    let w = with_releases_and_a_move();
    let out = site(&w);
    let index = read(&out, "index.html");
    let roads = read(&out, "roads.html");
    // The index: the dataset, its live lines and the days to the moved sunset.
    // 2026-11-29 to 2027-02-01: 2 + 31 + 31 = 64 days (worked out by hand).
    for needle in [
        "<a href=\"roads.html\">roads</a>",
        "line 1 (1.1.0), line 2 (2.0.0)",
        "2027-02-01",
        "<td class=\"num\">64</td>",
    ] {
        assert!(index.contains(needle), "index lacks {needle:?}");
    }
    for needle in [
        // The timeline, inline.
        "<svg xmlns=\"http://www.w3.org/2000/svg\"",
        "sunset moved later from 2027-01-15 to 2027-02-01",
        // Every version with each clause's kind and value.
        "<h3 id=\"v2.0.0\">roads 2.0.0</h3>",
        "<h3 id=\"v1.0.0\">roads 1.0.0</h3>",
        "<td>crs</td><td>fixed</td><td class=\"value\">EPSG:27700</td>",
        // The change log with rationale, commit and author.
        "Move to British National Grid — to match the other layers.",
        "Two consumers asked for more time.",
        "Fixture &lt;fixture@example.org&gt;",
        // Release validations, per contract.
        "2.0.0: failed crs",
        "1.1.0: passed",
        // Consumers and where each stands.
        "<td>flood-model</td><td>Hydrology</td><td class=\"still-on\">still-on</td>",
        "<td>router</td><td>Routing</td><td class=\"migrated\">migrated</td>",
        "<td class=\"silent\">silent</td>",
    ] {
        assert!(roads.contains(needle), "roads.html lacks {needle:?}");
    }
    // The commit that appended the breaking change is named, by its short id.
    let commit = w.git(&["log", "--format=%H", "-1", "--", "history/roads.toml"]);
    assert!(roads.contains(&commit.trim()[..12]));
}

#[test]
fn pages_are_self_contained() {
    let w = with_releases_and_a_move();
    let out = site(&w);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["index.html", "roads.html"]);
    for name in &names {
        let html = read(&out, name);
        assert!(!html.contains("<script"), "{name}: no script");
        assert!(!html.contains(" src="), "{name}: nothing loaded");
        assert!(!html.contains("<link rel=\"stylesheet\""), "{name}");
        // The only absolute URL is the SVG namespace, which is never fetched.
        let urls = html.matches("http://").count() + html.matches("https://").count();
        let namespaces = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
        assert_eq!(urls, namespaces, "{name}: an external URL");
    }
}

#[test]
fn the_pages_snapshot() {
    let w = with_releases_and_a_move();
    let out = site(&w);
    insta::assert_snapshot!("index", normalised(&w, &read(&out, "index.html")));
    insta::assert_snapshot!("roads", normalised(&w, &read(&out, "roads.html")));
}

/// Headless Chromium loads every page with no console message, and a screenshot of the
/// dataset's page shows the timeline. Fails loudly when Chromium is missing.
#[test]
fn a_real_browser_loads_every_page_and_shows_the_timeline() {
    let w = with_releases_and_a_move();
    let out = site(&w);

    // The check can fail: a page with a script error is caught.
    let bad = out.join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><title>bad</title><script>undefinedFunction();</script>",
    )
    .unwrap();
    let (_, stderr) = headless(&file_url(&bad), &["--dump-dom"]);
    assert!(
        !console_messages(&stderr).is_empty(),
        "the console check missed a script error:\n{stderr}"
    );
    std::fs::remove_file(&bad).unwrap();

    for (name, expect) in [
        ("index.html", "Data contracts"),
        ("roads.html", "Consumers still reading line 1"),
    ] {
        let (dom, stderr) = headless(&file_url(&out.join(name)), &["--dump-dom"]);
        assert_eq!(
            console_messages(&stderr),
            Vec::<String>::new(),
            "{name}: console messages"
        );
        assert!(dom.contains(expect), "{name}: the page did not load");
    }

    let shot = out.join("roads.png");
    headless(
        &file_url(&out.join("roads.html")),
        &[
            "--hide-scrollbars",
            "--window-size=1240,1100",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&shot).expect("a screenshot was written"),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1240, 1100), "screenshot size");
    let channels = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(channels).collect();
    // Lane colours at 85% over white, worked out by hand: line 1 #0969da -> (46, 128, 224),
    // line 2 #bc4c00 -> (198, 103, 38). Only the timeline's bars have them in quantity.
    let near = |p: &[u8], c: [i32; 3]| (0..3).all(|i| (i32::from(p[i]) - c[i]).abs() <= 14);
    let blue = pixels.iter().filter(|p| near(p, [46, 128, 224])).count();
    let orange = pixels.iter().filter(|p| near(p, [198, 103, 38])).count();
    let ink = pixels
        .iter()
        .filter(|p| p[..3].iter().any(|v| *v < 200))
        .count();
    // Line 1's bar is about 640 x 22 px and line 2's about 250 x 22 px.
    assert!(blue > 5000, "line 1's bar is not on screen: {blue} pixels");
    assert!(
        orange > 2500,
        "line 2's bar is not on screen: {orange} pixels"
    );
    assert!(ink > 20_000, "the page looks blank: {ink} dark pixels");
}

#[test]
fn control_characters_of_a_release_never_reach_the_pages() {
    let w = look::with_control_characters();
    let out = site(&w);
    let roads = read(&out, "roads.html");
    assert!(
        roads.contains("2026.11  [0m"),
        "the release is named, each control a space: {roads}"
    );
    for name in ["index.html", "roads.html"] {
        let page = read(&out, name);
        assert!(!look::has_forbidden_control(&page), "{name}: {page:?}");
    }
    // The timeline inline in the page is well-formed SVG.
    let start = roads.find("<svg").expect("the page holds its timeline");
    let end = roads.find("</svg>").expect("the timeline closes") + "</svg>".len();
    assert!(
        look::well_formed(&roads[start..end]),
        "{}",
        &roads[start..end]
    );
}

/// The cells of the row of the Lines table whose first cell is `line {n}`, tags removed.
fn line_row(page: &str, n: u64) -> Vec<String> {
    let lines = &page[page.find("<h2 id=\"lines\">").expect("a Lines section")..];
    let lines = &lines[..lines.find("</table>").expect("the Lines table")];
    let start = lines
        .find(&format!("<td>line {n}</td>"))
        .unwrap_or_else(|| panic!("no row of line {n}"));
    let row = &lines[start
        ..lines[start..]
            .find("</tr>")
            .map_or(lines.len(), |e| start + e)];
    row.split("</td>")
        .filter_map(|cell| cell.rfind('>').map(|i| cell[i + 1..].to_string()))
        .collect()
}

#[test]
fn a_lines_consumers_still_on_it_are_what_status_shows() {
    // Issue 44, item 6: the page said "consumers still on it: 0" for the newest line, which has
    // no sunset and so is not counted (`status` shows `-`), and a reader read it as a count.
    let w = with_releases_and_a_move();
    let today = "2026-11-29";
    let status = w.run(today, &["--format", "json", "status"]);
    status.assert_code(0);
    let out = site(&w);
    let roads = read(&out, "roads.html");
    let rows = status.json();
    let roads_rows: Vec<&serde_json::Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["dataset"] == "roads")
        .collect();
    // Both lines of the fixture: line 1 in its window, line 2 (the newest) without a sunset.
    let lines: Vec<u64> = roads_rows
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [1, 2]);
    for r in roads_rows {
        let line = r["line"].as_u64().unwrap();
        let want = match r["consumers_still_on"].as_u64() {
            Some(n) => n.to_string(),
            None => "-".to_string(),
        };
        let cells = line_row(&roads, line);
        assert_eq!(
            cells.last().map(String::as_str),
            Some(want.as_str()),
            "line {line}: {cells:?}"
        );
    }
    // The windowed line's count is the fixture's: flood-model and atlas still read 1.1.0.
    assert_eq!(line_row(&roads, 1).last().unwrap(), "2");
    assert_eq!(line_row(&roads, 2).last().unwrap(), "-");
}
