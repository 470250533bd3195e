//! Strict parsing of contract files: every mistake names the file, line and column and the
//! offending value. Each expectation below was worked out by hand from the input text.

use contracts::model::{parse_contract, KindTable, Strictness};

const GOOD: &str = r#"dataset     = "roads"
version     = "2.0.0"
supersedes  = "1.3.0"
valid_from  = 2027-01-01
sunset      = 2027-07-01
description = "Road centrelines of Great Britain"
advisory    = ["max_imputed_fraction"]

[clauses]
crs                      = "EPSG:27700"
units                    = "metre"
envelope                 = [0.0, 0.0, 700000.0, 1300000.0]
permitted_geometry       = ["LineString", "MultiLineString"]
emitted_geometry         = ["LineString"]
permitted_crs            = ["EPSG:27700", "EPSG:4326"]
required_attributes      = { id = "int64", class = "string" }
optional_attributes      = { name = "string", ref = "string" }
attribute_semantics      = { class = "road classification", name = "name as signed" }
max_null_fraction        = { name = 0.10, ref = 0.60 }
metric_tolerances        = { positional_rmse_m = 1.0, invalid_geometry_fraction = 0.0 }
max_imputed_fraction     = 0.02
supported_output_formats = ["GPKG", "FlatGeobuf", "GeoParquet"]
"#;

fn error_of(text: &str) -> String {
    parse_contract("c.toml", text, &KindTable::builtin(), Strictness::Writing)
        .expect_err("the text must be refused")
        .to_string()
}

/// Replace the first occurrence of `from` in the good contract.
fn with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "test bug: `{from}` not in GOOD");
    GOOD.replacen(from, to, 1)
}

#[test]
fn the_spec_example_parses_into_typed_clauses() {
    let c = parse_contract("c.toml", GOOD, &KindTable::builtin(), Strictness::Writing).unwrap();
    assert_eq!(c.dataset, "roads");
    assert_eq!(c.version.to_string(), "2.0.0");
    assert_eq!(c.supersedes.as_ref().unwrap().to_string(), "1.3.0");
    assert_eq!(c.valid_from.to_string(), "2027-01-01");
    assert_eq!(c.sunset.unwrap().to_string(), "2027-07-01");
    assert_eq!(c.clauses.len(), 13);
    assert!(c.is_advisory("max_imputed_fraction"));
    assert_eq!(c.line(), 2);
}

#[test]
fn a_toml_syntax_error_names_line_and_column() {
    let msg = error_of(&with(
        "units                    = \"metre\"",
        "units = metre",
    ));
    assert!(msg.starts_with("c.toml:11:9:"), "{msg}");
}

#[test]
fn an_unknown_top_level_key_is_refused() {
    let msg = error_of(&with("description", "descripton"));
    assert!(msg.starts_with("c.toml:6:1:"), "{msg}");
    assert!(msg.contains("descripton"), "{msg}");
}

#[test]
fn a_bad_semver_names_the_value() {
    let msg = error_of(&with("\"2.0.0\"", "\"2.0\""));
    assert!(msg.starts_with("c.toml:2:15:"), "{msg}");
    assert!(msg.contains("`2.0` is not a semantic version"), "{msg}");
}

#[test]
fn a_bad_dataset_name_is_refused() {
    let msg = error_of(&with("\"roads\"", "\"Roads/../x\""));
    assert!(msg.starts_with("c.toml:1:15:"), "{msg}");
}

#[test]
fn supersedes_must_be_older() {
    let msg = error_of(&with("\"1.3.0\"", "\"2.1.0\""));
    assert!(msg.contains("supersedes `2.1.0` is not older"), "{msg}");
}

#[test]
fn dates_must_be_dates_and_the_sunset_after_valid_from() {
    let msg = error_of(&with("2027-01-01", "2027-01-01T10:00:00Z"));
    assert!(msg.starts_with("c.toml:4:15:"), "{msg}");
    let msg = error_of(&with("2027-07-01", "2026-12-01"));
    assert!(
        msg.contains("sunset 2026-12-01 is not after valid_from 2027-01-01"),
        "{msg}"
    );
}

#[test]
fn envelopes_need_four_finite_ordered_numbers() {
    let msg = error_of(&with(
        "[0.0, 0.0, 700000.0, 1300000.0]",
        "[0.0, 0.0, 700000.0]",
    ));
    assert!(msg.starts_with("c.toml:12:28:"), "{msg}");
    assert!(msg.contains("expected 4 numbers"), "{msg}");
    let msg = error_of(&with(
        "[0.0, 0.0, 700000.0, 1300000.0]",
        "[0.0, 10.0, 700000.0, 5.0]",
    ));
    assert!(msg.contains("miny 10 is greater than maxy 5"), "{msg}");
    let msg = error_of(&with(
        "[0.0, 0.0, 700000.0, 1300000.0]",
        "[0.0, 0.0, nan, 1.0]",
    ));
    assert!(msg.contains("not a finite number"), "{msg}");
    // minx > maxx only crosses the antimeridian in a geographic CRS.
    let msg = error_of(&with(
        "[0.0, 0.0, 700000.0, 1300000.0]",
        "[170.0, 0.0, -170.0, 10.0]",
    ));
    assert!(
        msg.contains("only an envelope in a geographic CRS"),
        "{msg}"
    );
    let geographic = with("\"EPSG:27700\"", "\"EPSG:4326\"").replacen(
        "[0.0, 0.0, 700000.0, 1300000.0]",
        "[170.0, 0.0, -170.0, 10.0]",
        1,
    );
    parse_contract(
        "c.toml",
        &geographic,
        &KindTable::builtin(),
        Strictness::Writing,
    )
    .expect("a geographic envelope may cross the antimeridian");
}

#[test]
fn fractions_must_lie_in_zero_to_one() {
    let msg = error_of(&with("name = 0.10", "name = 1.5"));
    assert!(msg.starts_with("c.toml:19:28:"), "{msg}");
    assert!(msg.contains("`name` 1.5 is not a fraction"), "{msg}");
    let msg = error_of(&with(
        "max_imputed_fraction     = 0.02",
        "max_imputed_fraction = -0.1",
    ));
    assert!(msg.contains("-0.1 is not a fraction"), "{msg}");
    let msg = error_of(&with(
        "invalid_geometry_fraction = 0.0",
        "invalid_geometry_fraction = 2.0",
    ));
    assert!(
        msg.contains("`invalid_geometry_fraction` 2 is not a fraction"),
        "{msg}"
    );
}

#[test]
fn geometry_and_attribute_type_names_are_checked() {
    let msg = error_of(&with("[\"LineString\"]", "[\"Linestring\"]"));
    assert!(msg.contains("unknown geometry type `Linestring`"), "{msg}");
    assert!(msg.starts_with("c.toml:14:28:"), "{msg}");
    let msg = error_of(&with("id = \"int64\"", "id = \"integer\""));
    assert!(
        msg.contains("`id`: unknown attribute type `integer`"),
        "{msg}"
    );
}

#[test]
fn duplicate_list_entries_are_refused() {
    let msg = error_of(&with("[\"GPKG\", \"FlatGeobuf\"", "[\"GPKG\", \"GPKG\""));
    assert!(msg.contains("`GPKG` is listed twice"), "{msg}");
    let msg = error_of(&with(
        "advisory    = [\"max_imputed_fraction\"]",
        "advisory    = [\"max_imputed_fraction\", \"max_imputed_fraction\"]",
    ));
    assert!(msg.contains("listed twice in advisory"), "{msg}");
}

#[test]
fn advisory_must_name_a_clause_of_the_contract() {
    let msg = error_of(&with(
        "[\"max_imputed_fraction\"]",
        "[\"min_feature_count\"]",
    ));
    assert!(msg.contains("advisory names `min_feature_count`"), "{msg}");
}

#[test]
fn every_mistake_in_a_file_is_reported_not_just_the_first() {
    let text = with("\"2.0.0\"", "\"two\"").replacen("0.02\n", "7.0\n", 1);
    let msg = error_of(&text);
    assert!(msg.contains("`two` is not a semantic version"), "{msg}");
    assert!(msg.contains("7 is not a fraction"), "{msg}");
}

/// The 1-based line of `text` that starts with `key` (test helper: the expectations below are
/// positions in the input, found there rather than in the output).
fn line_of_key(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("test bug: no line starts with {key}"))
        + 1
}

#[test]
fn every_misspelt_key_of_a_file_is_reported_at_once_with_its_place() {
    // Issue 44, item 4: two misspelt keys were reported one per run, the first only.
    let text = with("valid_from", "valid_form")
        .replacen("description", "descripton", 1)
        .replacen("permitted_geometry", "permited_geometry", 1);
    let msg = error_of(&text);
    let lines: Vec<&str> = msg.lines().filter(|l| l.starts_with("c.toml")).collect();
    let expect = |key: &str, says: &str| {
        let at = format!("c.toml:{}:", line_of_key(&text, key));
        assert!(
            lines.iter().any(|l| l.starts_with(&at) && l.contains(says)),
            "no {at} … {says} in:\n{msg}"
        );
    };
    expect("valid_form", "unknown field `valid_form`");
    expect("descripton", "unknown field `descripton`");
    expect(
        "permited_geometry",
        "clause `permited_geometry` has no kind",
    );
    // valid_from is missing too, which has no place in the file: named once, file alone.
    assert!(
        lines.contains(&"c.toml: the file has no `valid_from`"),
        "{msg}"
    );
    assert_eq!(lines.len(), 4, "{msg}");
    // Listed as a reader meets them: the file-wide one first, then by line.
    let places: Vec<usize> = lines
        .iter()
        .filter_map(|l| l.split(':').nth(1)?.parse().ok())
        .collect();
    let mut sorted = places.clone();
    sorted.sort();
    assert_eq!(places, sorted, "{msg}");
}

#[test]
fn unknown_keys_in_a_table_are_all_reported_too() {
    // Two misspelt keys in one table of the config, each at its own line.
    let text = "[consumption]\nlookback_dayz = 30\n\n[notify]\nfrom = \"a@b.org\"\ndays_befor = [30]\nannounse = true\n";
    let err = contracts::model::parse_config("contracts.toml", text)
        .expect_err("misspelt keys are refused")
        .to_string();
    for key in ["lookback_dayz", "days_befor", "announse"] {
        let at = format!("contracts.toml:{}:1:", line_of_key(text, key));
        assert!(
            err.lines()
                .any(|l| l.starts_with(&at) && l.contains(&format!("`{key}`"))),
            "no {at} for {key} in:\n{err}"
        );
    }
}

#[test]
fn a_draft_read_leniently_names_its_misspelt_clause_with_its_other_mistakes() {
    // `propose` and `backtest` read a draft leniently, so a clause with no kind is a refusal
    // of its own; but when the draft is refused as input anyway, the misspelt clause must be
    // in the same list, not found one run later.
    let text =
        with("valid_from", "valid_form").replacen("permitted_geometry", "permited_geometry", 1);
    let msg = parse_contract("d.toml", &text, &KindTable::builtin(), Strictness::Draft)
        .expect_err("the draft must be refused")
        .to_string();
    for (key, says) in [
        ("valid_form", "unknown field `valid_form`".to_string()),
        (
            "permited_geometry",
            "clause `permited_geometry` has no kind (did you mean `permitted_geometry`?)".into(),
        ),
    ] {
        let at = format!("d.toml:{}:", line_of_key(&text, key));
        assert!(
            msg.lines().any(|l| l.starts_with(&at) && l.contains(&says)),
            "no {at} … {says} in:\n{msg}"
        );
    }
    // Without another mistake the lenient reading keeps the clause aside, as before.
    let only = GOOD.replacen("permitted_geometry", "permited_geometry", 1);
    let c = parse_contract("d.toml", &only, &KindTable::builtin(), Strictness::Draft)
        .expect("a clause with no kind alone is no parse error when read leniently");
    assert!(c.unknown.contains_key("permited_geometry"));
}
