//! `contracts export odcs` read by other tools: every export is valid against the ODCS v3.1.0
//! JSON Schema, `datacontract lint` (datacontract-cli, pinned in test.sh) passes it,
//! `datacontract breaking` (consumer view, its default) grades as breaking every pair of
//! versions that `contracts diff` grades breaking, and any text survives a YAML reader. Fails
//! loudly, never skips, without datacontract-cli or PyYAML.

use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;

use crate::common;
use crate::common::world::World;

/// The version test.sh pins: the grading these tests expect is that release's.
const DATACONTRACT_VERSION: &str = "1.2.8";

/// The datacontract binary: `$DATACONTRACT`, else the venv test.sh makes, else `PATH`; it
/// must be the pinned release.
fn datacontract() -> PathBuf {
    let candidates = [
        std::env::var_os("DATACONTRACT").map(PathBuf::from),
        Some(PathBuf::from("/opt/datacontract/bin/datacontract")),
        Some(PathBuf::from("datacontract")),
    ];
    for c in candidates.into_iter().flatten() {
        let Ok(out) = Command::new(&c).arg("--version").output() else {
            continue;
        };
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert_eq!(
            version,
            DATACONTRACT_VERSION,
            "{} is datacontract-cli {version}, the tests expect {DATACONTRACT_VERSION} \
             (test.sh installs it into /opt/datacontract)",
            c.display()
        );
        return c;
    }
    panic!(
        "DATACONTRACT-CLI IS MISSING: these tests run `datacontract lint` and `datacontract \
         breaking` (test.sh installs datacontract-cli=={DATACONTRACT_VERSION} into \
         /opt/datacontract; or set $DATACONTRACT to its binary)"
    )
}

pub(crate) fn datacontract_run(args: &[&Path]) -> common::Run {
    let mut c = Command::new(datacontract());
    // Rich tables wide enough that no path is cut in a failure message.
    c.env("COLUMNS", "250").env("NO_COLOR", "1");
    for a in args {
        c.arg(a);
    }
    common::Run::of(c.output().expect("datacontract runs"))
}

/// `datacontract lint` passes the export at `file`.
fn assert_lints(file: &Path) {
    let run = datacontract_run(&[Path::new("lint"), file]);
    assert_eq!(
        run.code,
        0,
        "datacontract lint refuses {}:\n{}{}\n{}",
        file.display(),
        run.stdout,
        run.stderr,
        std::fs::read_to_string(file).unwrap_or_default()
    );
}

/// Whether `datacontract breaking OLD NEW` grades the change breaking (exit 1) or not (exit 0).
fn datacontract_breaking(old: &Path, new: &Path) -> (bool, String) {
    let run = datacontract_run(&[Path::new("breaking"), old, new]);
    assert!(
        run.code == 0 || run.code == 1,
        "datacontract breaking failed ({}): {}{}",
        run.code,
        run.stdout,
        run.stderr
    );
    (run.code == 1, run.stdout)
}

/// The clauses `contracts diff --format json` grades breaking.
fn breaking_clauses(diff: &serde_json::Value) -> Vec<String> {
    diff["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter(|c| c["verdict"] == "breaking")
        .map(|c| c["clause"].as_str().unwrap().to_string())
        .collect()
}

/// Every ordered pair of `versions` (oldest first).
fn pairs(versions: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, a) in versions.iter().enumerate() {
        for b in &versions[i + 1..] {
            out.push((a.to_string(), b.to_string()));
        }
    }
    out
}

/// Exports every version of `dataset` with `export` into `dir`, validates each against the ODCS
/// JSON Schema and lints it, and checks every pair:
/// a pair `contracts diff` (through `diff`) grades breaking is breaking for datacontract, and a
/// compatible pair is not. Returns the number of breaking pairs seen.
pub(crate) fn check_grades(
    dir: &Path,
    dataset: &str,
    versions: &[&str],
    export: &dyn Fn(&str, &Path),
    diff: &dyn Fn(&str, &str) -> serde_json::Value,
) -> usize {
    for v in versions {
        let file = dir.join(format!("{dataset}-{v}.yaml"));
        export(&format!("{dataset}@{v}"), &file);
        crate::test_export_odcs::valid_odcs(&std::fs::read_to_string(&file).unwrap());
        assert_lints(&file);
    }
    let mut breaking = 0;
    for (a, b) in pairs(versions) {
        let ours = breaking_clauses(&diff(&a, &b));
        let (theirs, table) = datacontract_breaking(
            &dir.join(format!("{dataset}-{a}.yaml")),
            &dir.join(format!("{dataset}-{b}.yaml")),
        );
        assert_eq!(
            theirs,
            !ours.is_empty(),
            "{dataset} {a} -> {b}: contracts diff calls {ours:?} breaking, datacontract \
             breaking says breaking = {theirs}:\n{table}"
        );
        breaking += usize::from(theirs);
    }
    breaking
}

#[test]
fn datacontract_grades_the_example_store_as_diff_does() {
    let repo = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--repo", repo, "--today", "2027-02-10"];
        all.extend_from_slice(args);
        common::run_with_env(&[], &all)
    };
    let export = |target: &str, file: &Path| {
        let r = run(&["export", "odcs", target, "--out", file.to_str().unwrap()]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    let mut breaking = 0;
    for (dataset, versions) in [
        ("cities", &["1.0.0", "1.1.0"][..]),
        ("countries", &["1.0.0", "1.1.0", "1.2.0", "2.0.0"][..]),
    ] {
        let diff = |a: &str, b: &str| {
            run(&[
                "--format",
                "json",
                "diff",
                &format!("{dataset}@{a}"),
                &format!("{dataset}@{b}"),
            ])
            .json()
        };
        breaking += check_grades(dir.path(), dataset, versions, &export, &diff);
    }
    // countries 1.x -> 2.0.0: pop_est became required.
    assert_eq!(breaking, 3);
}

/// A dataset whose consecutive versions change one thing each: 1.1.0 grows (compatible), 2.0.0
/// changes the CRS, 3.0.0 narrows the permitted geometry types, 4.0.0 removes an attribute,
/// 5.0.0 loosens a null limit, 6.0.0 makes an optional attribute required.
const WORLD: [(&str, &str); 7] = [
    ("1.0.0", "crs = \"EPSG:4326\"\npermitted_geometry = [\"Polygon\", \"MultiPolygon\"]\nrequired_attributes = { name = \"string\" }\noptional_attributes = { pop = \"float64\", gdp = \"int64\" }\nmax_null_fraction = { gdp = 0.1 }\n"),
    ("1.1.0", "crs = \"EPSG:4326\"\npermitted_geometry = [\"Polygon\", \"MultiPolygon\"]\nrequired_attributes = { name = \"string\" }\noptional_attributes = { pop = \"float64\", gdp = \"int64\", area = \"float64\" }\nmax_null_fraction = { gdp = 0.05 }\n"),
    ("2.0.0", "crs = \"EPSG:3857\"\npermitted_geometry = [\"Polygon\", \"MultiPolygon\"]\nrequired_attributes = { name = \"string\" }\noptional_attributes = { pop = \"float64\", gdp = \"int64\", area = \"float64\" }\nmax_null_fraction = { gdp = 0.05 }\n"),
    ("3.0.0", "crs = \"EPSG:3857\"\npermitted_geometry = [\"MultiPolygon\"]\nrequired_attributes = { name = \"string\" }\noptional_attributes = { pop = \"float64\", gdp = \"int64\", area = \"float64\" }\nmax_null_fraction = { gdp = 0.05 }\n"),
    ("4.0.0", "crs = \"EPSG:3857\"\npermitted_geometry = [\"MultiPolygon\"]\nrequired_attributes = { name = \"string\" }\noptional_attributes = { gdp = \"int64\", area = \"float64\" }\nmax_null_fraction = { gdp = 0.05 }\n"),
    ("5.0.0", "crs = \"EPSG:3857\"\npermitted_geometry = [\"MultiPolygon\"]\nrequired_attributes = { name = \"string\" }\noptional_attributes = { gdp = \"int64\", area = \"float64\" }\nmax_null_fraction = { gdp = 0.2 }\n"),
    ("6.0.0", "crs = \"EPSG:3857\"\npermitted_geometry = [\"MultiPolygon\"]\nrequired_attributes = { name = \"string\", area = \"float64\" }\noptional_attributes = { gdp = \"int64\" }\nmax_null_fraction = { gdp = 0.2 }\n"),
];

#[test]
fn datacontract_grades_crs_geometry_and_attribute_changes_as_diff_does() {
    let w = World::new(25);
    let mut previous: Option<&str> = None;
    for (i, (version, clauses)) in WORLD.iter().enumerate() {
        // A new line declares the sunset of the one before it.
        let head = match previous {
            None => String::new(),
            Some(p) if version.ends_with(".0.0") => {
                format!("supersedes = \"{p}\"\nsunset = 2028-{:02}-01\n", i + 1)
            }
            Some(p) => format!("supersedes = \"{p}\"\n"),
        };
        w.write(
            &format!("contracts/world/{version}.toml"),
            &format!(
                "dataset = \"world\"\nversion = \"{version}\"\n{head}valid_from = 2027-{:02}-01\n\
                 description = \"Countries\"\n[clauses]\n{clauses}",
                i + 1
            ),
        );
        previous = Some(version);
    }
    let dir = tempfile::tempdir().unwrap();
    let export = |target: &str, file: &Path| {
        w.run(
            "2026-11-29",
            &["export", "odcs", target, "--out", file.to_str().unwrap()],
        )
        .assert_code(0);
    };
    let diff = |a: &str, b: &str| {
        w.run(
            "2026-11-29",
            &[
                "--format",
                "json",
                "diff",
                &format!("world@{a}"),
                &format!("world@{b}"),
            ],
        )
        .json()
    };
    // Each consecutive pair but the first carries one breaking change, so each is seen alone.
    for pair in WORLD.windows(2).skip(1) {
        let d = diff(pair[0].0, pair[1].0);
        assert!(
            !breaking_clauses(&d).is_empty(),
            "{} -> {} is meant to break: {d}",
            pair[0].0,
            pair[1].0
        );
    }
    let versions: Vec<&str> = WORLD.iter().map(|(v, _)| *v).collect();
    let breaking = check_grades(dir.path(), "world", &versions, &export, &diff);
    // Every pair that reaches 2.0.0 or later: 21 pairs less the one compatible pair.
    assert_eq!(breaking, 20);
}

/// `items` as one YAML document by the exporter, read back by PyYAML as JSON.
fn through_pyyaml(items: &[String]) -> Vec<String> {
    let doc = serde_json::json!({ "items": items });
    let text = contracts::render::odcs::yaml(&doc);
    let out = common::python3_with_stdin(
        &[
            "-c",
            "import sys, json, yaml; json.dump(yaml.safe_load(sys.stdin.buffer), sys.stdout)",
        ],
        &text,
    )
    .unwrap_or_else(|e| panic!("PYTHON3 IS MISSING ({e}): apt-get install python3-yaml"));
    assert!(
        out.status.success(),
        "PyYAML refuses the export: {}\n{text:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    back["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

/// Text that reaches the corners a YAML reader trips on: C0 and C1 controls, DEL, the line
/// and paragraph separators, the byte-order mark, the two non-characters at the end of the
/// BMP, quotes, backslashes and YAML indicators, mixed with any character at all.
fn tricky_text() -> impl Strategy<Value = String> {
    let special = prop_oneof![
        (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap()),
        (0x7Fu32..0xA0).prop_map(|c| char::from_u32(c).unwrap()),
        prop::sample::select(vec![
            '\u{2028}', '\u{2029}', '\u{FEFF}', '\u{FFFE}', '\u{FFFF}', '"', '\\', '\'', ' ', '#',
            ':', '-', '&', '*', '!', '%', '@', '`',
        ]),
    ];
    prop::collection::vec(prop_oneof![any::<char>(), special], 0..24)
        .prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any text reads back unchanged.
    #[test]
    fn any_text_reads_back_through_pyyaml(items in prop::collection::vec(tricky_text(), 1..64)) {
        prop_assert_eq!(through_pyyaml(&items), items);
    }
}
