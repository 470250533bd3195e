//! The clause table as data, checked against one fixture pair per rule.
//!
//! Each file in `tests/fixtures/rules/` holds the cases of one clause: an old and a new value
//! (either may be absent), the advisory status on each side, and the direction and verdict
//! SPEC §4 demands. The expectations were written from the spec's tables, not from the tool's
//! output. A guard test fails when a built-in clause has no fixture, lacks a case for a
//! direction its kind can take, or has no row in the README's clause table.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use contracts::model::{
    derive_changes, parse_config, parse_contract, Bump, Contract, Kind, KindTable, Strictness,
    Verdict, BUILTIN,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    #[serde(default)]
    kinds: toml::Table,
    #[serde(default)]
    base: toml::Table,
    case: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// The change row's clause name when it differs from the file's (`attribute_semantics.x`).
    row: Option<String>,
    direction: String,
    verdict: String,
    old: Option<toml::Value>,
    new: Option<toml::Value>,
    #[serde(default)]
    old_advisory: bool,
    #[serde(default)]
    new_advisory: bool,
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules")
}

fn fixtures() -> Vec<(String, Fixture)> {
    let mut out: Vec<(String, Fixture)> = std::fs::read_dir(fixtures_dir())
        .expect("fixture directory exists")
        .map(|e| {
            let path = e.expect("readable entry").path();
            let clause = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).expect("readable fixture");
            let fixture: Fixture =
                toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (clause, fixture)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn kind_table(f: &Fixture) -> KindTable {
    let mut cfg = toml::Table::new();
    cfg.insert("kinds".into(), toml::Value::Table(f.kinds.clone()));
    parse_config("contracts.toml", &toml::to_string(&cfg).unwrap())
        .expect("fixture kinds are valid")
        .kinds
}

fn contract_text(
    version: &str,
    base: &toml::Table,
    clause: &str,
    value: Option<&toml::Value>,
    advisory: bool,
) -> String {
    let mut clauses = base.clone();
    if let Some(v) = value {
        clauses.insert(clause.to_string(), v.clone());
    }
    let mut t = toml::Table::new();
    t.insert("dataset".into(), "fixture".into());
    t.insert("version".into(), version.into());
    t.insert(
        "valid_from".into(),
        toml::Value::Datetime("2027-01-01".parse().unwrap()),
    );
    if advisory {
        t.insert("advisory".into(), toml::Value::Array(vec![clause.into()]));
    }
    t.insert("clauses".into(), toml::Value::Table(clauses));
    toml::to_string(&t).unwrap()
}

fn parse(name: &str, text: &str, kinds: &KindTable) -> Contract {
    parse_contract(name, text, kinds, Strictness::Writing)
        .unwrap_or_else(|e| panic!("fixture does not parse:\n{e}\n---\n{text}"))
}

#[test]
fn every_fixture_pair_derives_the_verdict_the_spec_demands() {
    let mut checked = 0;
    for (clause, fixture) in fixtures() {
        let kinds = kind_table(&fixture);
        for (i, case) in fixture.case.iter().enumerate() {
            let what = format!("{clause} case {} ({})", i + 1, case.direction);
            let old_text = contract_text(
                "1.0.0",
                &fixture.base,
                &clause,
                case.old.as_ref(),
                case.old_advisory,
            );
            let new_text = contract_text(
                "2.0.0",
                &fixture.base,
                &clause,
                case.new.as_ref(),
                case.new_advisory,
            );
            let old = parse("old.toml", &old_text, &kinds);
            let new = parse("new.toml", &new_text, &kinds);
            let set = derive_changes(&old, &new);
            let row = case.row.as_deref().unwrap_or(&clause);
            assert_eq!(
                set.changes.len(),
                1,
                "{what}: expected exactly one change, got {:?}",
                set.changes
            );
            let c = &set.changes[0];
            assert_eq!(c.clause, row, "{what}");
            assert_eq!(c.direction.as_str(), case.direction, "{what}");
            assert_eq!(c.verdict.as_str(), case.verdict, "{what}");
            let expected_bump = if case.verdict == "breaking" {
                Bump::Major
            } else {
                Bump::Minor
            };
            assert_eq!(set.required, expected_bump, "{what}");
            // An unchanged pair reports nothing, on either side.
            for same in [&old, &new] {
                let none = derive_changes(same, same);
                assert!(
                    none.changes.is_empty(),
                    "{what}: a contract diffed with itself reported {:?}",
                    none.changes
                );
                assert_eq!(none.required, Bump::Patch);
            }
            checked += 1;
        }
    }
    assert!(checked >= 100, "only {checked} cases ran");
}

fn directions_of(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Widening => &["grew", "shrank", "added", "removed", "enforced", "relaxed"],
        Kind::Narrowing => &[
            "tightened",
            "loosened",
            "added",
            "removed",
            "enforced",
            "relaxed",
        ],
        Kind::Fixed => &["changed", "added", "removed", "enforced", "relaxed"],
    }
}

#[test]
fn every_builtin_clause_has_a_kind_a_shape_fixtures_for_each_direction_and_a_readme_row() {
    let fixtures = fixtures();
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md exists");
    let table = KindTable::builtin();
    for b in BUILTIN {
        let spec = table
            .get(b.name)
            .expect("every built-in row is in the table");
        assert!(spec.builtin);
        let Some((_, fixture)) = fixtures.iter().find(|(c, _)| c == b.name) else {
            panic!("built-in clause `{}` has no fixture file", b.name);
        };
        let seen: BTreeSet<&str> = fixture.case.iter().map(|c| c.direction.as_str()).collect();
        for d in directions_of(b.kind) {
            assert!(
                seen.contains(d),
                "`{}` ({}) has no fixture case for direction `{d}`",
                b.name,
                b.kind
            );
        }
        let row = format!("| `{}` | {} | {} |", b.name, b.kind, b.shape);
        assert!(
            readme.contains(&row),
            "README.md has no clause-table row `{row}`"
        );
    }
}

#[test]
fn the_verdict_table_is_the_specs() {
    use contracts::model::{verdict, Direction as D};
    // SPEC §4, row by row.
    let rows = [
        (Kind::Widening, D::Grew, Verdict::Compatible),
        (Kind::Widening, D::Shrank, Verdict::Breaking),
        (Kind::Narrowing, D::Tightened, Verdict::Compatible),
        (Kind::Narrowing, D::Loosened, Verdict::Breaking),
        (Kind::Fixed, D::Changed, Verdict::Breaking),
        (Kind::Widening, D::Added, Verdict::Compatible),
        (Kind::Narrowing, D::Added, Verdict::Compatible),
        (Kind::Fixed, D::Added, Verdict::Compatible),
        (Kind::Widening, D::Removed, Verdict::Compatible),
        (Kind::Narrowing, D::Removed, Verdict::Breaking),
        (Kind::Fixed, D::Removed, Verdict::Breaking),
        (Kind::Widening, D::Enforced, Verdict::Compatible),
        (Kind::Fixed, D::Relaxed, Verdict::Breaking),
        (Kind::Narrowing, D::Relaxed, Verdict::Breaking),
    ];
    for (kind, direction, expected) in rows {
        assert_eq!(verdict(kind, direction), expected, "{kind} {direction}");
    }
}

#[test]
fn a_custom_kind_cannot_redefine_a_builtin_or_use_an_unknown_shape() {
    let e = parse_config(
        "contracts.toml",
        "[kinds]\ncrs = { kind = \"widening\", shape = \"value\" }\n",
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("built-in"), "{msg}");
    assert!(msg.contains("contracts.toml:2:7"), "{msg}");
    let e = parse_config(
        "contracts.toml",
        "[kinds]\nfoo = { kind = \"narrowing\", shape = \"polygon\" }\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("unknown shape `polygon`"), "{e}");
}

#[test]
fn a_clause_with_no_kind_is_an_error_when_writing_and_set_aside_when_reading() {
    let text = "dataset = \"roads\"\nversion = \"1.0.0\"\nvalid_from = 2027-01-01\n\n[clauses]\ncrs = \"EPSG:4326\"\nmin_feature_count = 10\n";
    let table = KindTable::builtin();
    let e = parse_contract("roads.toml", text, &table, Strictness::Writing).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("roads.toml:7:21"), "{msg}");
    assert!(msg.contains("`min_feature_count` has no kind"), "{msg}");
    let c = parse_contract("roads.toml", text, &table, Strictness::Reading).unwrap();
    assert!(c.unknown.contains_key("min_feature_count"));
    assert!(c.clauses.contains_key("crs"));
}
