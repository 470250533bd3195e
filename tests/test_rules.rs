//! The clause table as data, checked against one fixture pair per rule.
//!
//! Each file in `tests/fixtures/rules/` holds the cases of one clause: an old and a new value
//! (either may be absent), the advisory status on each side, and the direction and verdict the
//! verdict table of docs/src/reference/contract.md demands, written from that table, not from the
//! tool's output. A guard test fails when a built-in clause has no fixture, lacks a case for a
//! direction its kind can take, or has no row in the clause table of the contract reference
//! (docs/src/reference/contract.md).
//!
//! Each file in `tests/fixtures/validate/` holds the validation cases of one clause: a clause
//! value, a profile (a base profile with changes), an optional manifest and the result the
//! reference's "checked as" table demands. The guard test also fails when a built-in clause has
//! a check that cannot decide its shape, or no validation fixture with a passing and a failing
//! case (a not-evaluated case for a clause that is never evaluated).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use contracts::model::{
    derive_changes, parse_config, parse_contract, Bump, Check, Contract, Kind, KindTable,
    Strictness, Verdict, BUILTIN,
};
use contracts::release::validate::{validate, Manifest};
use contracts::release::Profile;
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

/// The clause a fixture file is named for (its stem), and the file parsed: one reader for the
/// rule and the validation fixtures.
fn read_fixture<T: serde::de::DeserializeOwned>(path: &Path) -> (String, T) {
    let clause = path.file_stem().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path).expect("readable fixture");
    let fixture: T = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (clause, fixture)
}

fn fixtures() -> Vec<(String, Fixture)> {
    let mut out: Vec<(String, Fixture)> = std::fs::read_dir(fixtures_dir())
        .expect("fixture directory exists")
        .map(|e| read_fixture(&e.expect("readable entry").path()))
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
            let text = |version, value, advisory| {
                contract_text(version, &fixture.base, &clause, value, advisory)
            };
            let old_text = text("1.0.0", case.old.as_ref(), case.old_advisory);
            let new_text = text("2.0.0", case.new.as_ref(), case.new_advisory);
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
fn every_builtin_clause_has_a_kind_a_shape_fixtures_for_each_direction_and_a_reference_row() {
    let fixtures = fixtures();
    let validation = validation_fixtures();
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/reference/contract.md");
    let reference_text =
        std::fs::read_to_string(&reference).expect("the contract reference exists");
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
            reference_text.contains(&row),
            "docs/src/reference/contract.md has no clause-table row `{row}`"
        );
        assert!(
            b.check.fits(b.shape),
            "`{}`: check {:?} cannot decide a {} clause",
            b.name,
            b.check,
            b.shape
        );
        let Some((_, vf)) = validation.iter().find(|(c, _)| c == b.name) else {
            panic!("built-in clause `{}` has no validation fixture", b.name);
        };
        let seen: BTreeSet<&str> = vf.case.iter().flat_map(|c| c.statuses()).collect();
        let needed: &[&str] = match b.check {
            Check::NotEvaluated(_) => &["not-evaluated"],
            _ => &["pass", "fail"],
        };
        for st in needed {
            assert!(
                seen.contains(st),
                "`{}` has no validation case whose result is `{st}`",
                b.name
            );
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ValidationFixture {
    #[serde(default)]
    kinds: toml::Table,
    /// Other clauses the contract needs (a geographic `crs` for a crossing envelope); their
    /// results are not compared.
    #[serde(default)]
    base: toml::Table,
    case: Vec<ValidationCase>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ValidationCase {
    value: toml::Value,
    #[serde(default)]
    profile: toml::Table,
    #[serde(default)]
    unset: Vec<String>,
    #[serde(default)]
    manifest: Option<std::collections::BTreeMap<String, f64>>,
    #[serde(default)]
    advisory: bool,
    /// The result of a clause that yields one result, under its own name.
    status: Option<String>,
    /// The results of a clause that yields one per key, by label.
    results: Option<std::collections::BTreeMap<String, String>>,
}

impl ValidationCase {
    fn statuses(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.status.iter().map(String::as_str).collect();
        out.extend(
            self.results
                .iter()
                .flat_map(|r| r.values().map(String::as_str)),
        );
        out
    }
}

fn validation_fixtures() -> Vec<(String, ValidationFixture)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/validate");
    let mut out: Vec<(String, ValidationFixture)> = std::fs::read_dir(dir)
        .expect("validation fixture directory exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|path| read_fixture(&path))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The base profile of every validation case (described in the fixtures' README).
fn base_profile() -> toml::Table {
    toml::from_str(
        r#"
files = ["fixture.gpkg"]
format = "GPKG"
crs = "EPSG:4326"
feature_count = 10
null_geometries = 0
invalid_geometries = 0
envelope = [-10.0, -5.0, 10.0, 5.0]
geometry_types = ["Polygon"]
dimensions = ["XY"]
attributes = { name = { type = "string", nulls = 0 }, pop = { type = "int64", nulls = 2 } }
"#,
    )
    .unwrap()
}

#[test]
fn every_validation_fixture_gives_the_result_the_readme_demands() {
    let mut checked = 0;
    for (clause, fixture) in validation_fixtures() {
        let kinds = kind_table(&Fixture {
            kinds: fixture.kinds.clone(),
            base: toml::Table::new(),
            case: Vec::new(),
        });
        for (i, case) in fixture.case.iter().enumerate() {
            let what = format!("validate/{clause}.toml case {}", i + 1);
            let mut p = base_profile();
            for (k, v) in &case.profile {
                p.insert(k.clone(), v.clone());
            }
            for k in &case.unset {
                p.remove(k);
            }
            let profile: Profile = toml::Value::Table(p)
                .try_into()
                .unwrap_or_else(|e| panic!("{what}: bad profile: {e}"));
            let profile = profile.checked().expect("consistent counts");
            let text = contract_text(
                "1.0.0",
                &fixture.base,
                &clause,
                Some(&case.value),
                case.advisory,
            );
            let contract = parse("fixture.toml", &text, &kinds);
            let manifest = case.manifest.as_ref().map(|m| Manifest {
                metrics: m.clone(),
                ..Manifest::default()
            });
            let report = validate("fixture", &profile, manifest.as_ref(), &[contract]);
            let got: std::collections::BTreeMap<String, String> = report.contracts[0]
                .results
                .iter()
                .filter(|r| r.clause == clause || r.clause.starts_with(&format!("{clause}.")))
                .map(|r| (r.clause.clone(), r.status.as_str().to_string()))
                .collect();
            let want = match (&case.status, &case.results) {
                (Some(s), None) => std::collections::BTreeMap::from([(clause.clone(), s.clone())]),
                (None, Some(r)) => r.clone(),
                _ => panic!("{what}: give exactly one of `status` and `results`"),
            };
            assert_eq!(got, want, "{what}: {:#?}", report.contracts[0].results);
            let failed = want.values().any(|s| s == "fail");
            assert_eq!(report.passed, !failed, "{what}: passed");
            checked += 1;
        }
    }
    assert!(checked >= 50, "only {checked} validation cases ran");
}

#[test]
fn the_verdict_table_is_the_specs() {
    use contracts::model::{verdict, Direction as D};
    // The verdict table of docs/src/reference/contract.md, row by row.
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
