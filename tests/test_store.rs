//! The git-native store through the real binary: init, propose and its refusals, sunset,
//! check and each tampering it must catch, log, show, status, concurrency and crash safety.

use crate::common;
use crate::common::Rows;

use std::collections::BTreeMap;
use std::path::Path;

use common::{draft, roads, Store, World, CLAUSES};

/// The compatible roads 1.1.0 of [`Store::with_roads`] (a tighter positional tolerance).
fn roads_1_1_0() -> String {
    roads(
        "1.1.0",
        Some("1.0.0"),
        "2026-03-01",
        None,
        &CLAUSES.replace("2.0 }", "1.5 }"),
    )
}

impl Store {
    /// roads 1.0.0 and a compatible 1.1.0.
    fn with_roads(&self) {
        self.propose_ok(
            &roads("1.0.0", None, "2026-01-01", None, CLAUSES),
            "First roads contract.",
        );
        self.propose_ok(&roads_1_1_0(), "Survey improved positional accuracy.");
    }

    /// roads 2.0.0 (a breaking change of crs), live from 2027-01-01; line 1 sunsets 2027-07-01.
    fn with_line_2(&self) {
        self.propose_ok(
            &roads(
                "2.0.0",
                Some("1.1.0"),
                "2027-01-01",
                Some("2027-07-01"),
                &CLAUSES.replace("EPSG:4326", "EPSG:4258"),
            ),
            "ETRS89.",
        );
    }

    /// A store [`Store::with_roads`] whose consumers.toml is changed in the work tree only:
    /// the commands warn that the change is not used.
    fn with_roads_and_uncommitted_consumers() -> Store {
        let s = Store::new();
        s.with_roads();
        std::fs::write(s.dir.join("consumers.toml"), "# edited, not committed\n").unwrap();
        s
    }

    /// Every file of the work tree and of `.git`, for byte-for-byte comparison.
    fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        self.snapshot_of(true)
    }

    /// The same without `.git/objects`: a write that fails after its objects leaves them
    /// behind, unreachable and harmless; everything a reader sees is compared.
    fn snapshot_without_objects(&self) -> BTreeMap<String, Vec<u8>> {
        self.snapshot_of(false)
    }

    fn snapshot_of(&self, objects: bool) -> BTreeMap<String, Vec<u8>> {
        fn walk(root: &Path, dir: &Path, objects: bool, out: &mut BTreeMap<String, Vec<u8>>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                if !objects && rel.starts_with(".git/objects") {
                    continue;
                }
                if p.is_dir() {
                    walk(root, &p, objects, out);
                } else {
                    out.insert(rel, std::fs::read(&p).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.dir, &self.dir, objects, &mut out);
        out
    }
}

#[test]
fn init_creates_the_layout_in_one_clean_commit() {
    let s = Store::new();
    for f in [
        "contracts.toml",
        "consumers.toml",
        "contracts",
        "history",
        "notifications",
    ] {
        assert!(s.dir.join(f).exists(), "{f} missing");
    }
    assert_eq!(s.git(&["rev-list", "--count", "HEAD"]).trim(), "1");
    s.assert_clean();
    s.assert_check_passes();
    // A second init refuses.
    let again = s.run(&["init", s.dir.to_str().unwrap()]);
    assert_eq!(again.code, 2);
    again.assert_stderr_has("already a contracts store");
}

#[test]
fn propose_writes_the_contract_and_its_records_in_one_commit() {
    let s = Store::new();
    s.with_roads();
    assert_eq!(s.git(&["rev-list", "--count", "HEAD"]).trim(), "3");
    s.assert_clean();
    let files = s.git(&["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(
        files.trim(),
        "contracts/roads/1.1.0.toml\nhistory/roads.toml"
    );
    let history = std::fs::read_to_string(s.dir.join("history/roads.toml")).unwrap();
    assert_eq!(history.matches("[[change]]").count(), 2, "{history}");
    assert!(
        history.contains("clause    = \"metric_tolerances\""),
        "{history}"
    );
    assert!(history.contains("direction = \"tightened\""), "{history}");
    assert!(history.contains("rationale = \"Survey improved positional accuracy.\""));
    // The harness fixes the clock (CONTRACTS_NOW): every record carries that instant.
    assert_eq!(
        history.matches("at        = 2026-11-29T09:00:00Z").count(),
        2,
        "{history}"
    );
    s.assert_check_passes();

    let log = s.run(&["--format", "json", "log", "roads"]).json();
    let newest = &log[0];
    assert_eq!(newest["clause"], "metric_tolerances");
    assert_eq!(newest["to"], "1.1.0");
    assert_eq!(newest["commit"]["author"], "Ada Tester <ada@example.org>");
    assert_eq!(newest["commit"]["id"], s.head());
    assert_eq!(log[1]["clause"], "*");
    assert_eq!(log[1]["direction"], "added");
}

#[test]
fn a_major_bump_with_a_window_is_recorded_and_shown_by_status() {
    let s = Store::new();
    s.with_roads();
    let v2 = roads(
        "2.0.0",
        Some("1.1.0"),
        "2027-01-01",
        Some("2027-07-01"),
        &CLAUSES.replace("EPSG:4326", "EPSG:3035").replace(
            "[-10.0, 40.0, 10.0, 60.0]",
            "[2000000.0, 1000000.0, 6000000.0, 5500000.0]",
        ),
    );
    s.propose_ok(&v2, "Move to the European LAEA grid.");
    let history = std::fs::read_to_string(s.dir.join("history/roads.toml")).unwrap();
    assert!(
        history.contains("window    = { opens = 2027-01-01, sunset = 2027-07-01 }"),
        "{history}"
    );
    let status = s
        .run(&["--format", "json", "--today", "2027-02-01", "status"])
        .json();
    let rows = status.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{status}");
    assert_eq!(rows[0]["line"], 1);
    assert_eq!(rows[0]["version"], "1.1.0");
    assert_eq!(rows[0]["sunset"], "2027-07-01");
    // 2027-02-01 .. 2027-07-01: 28 + 31 + 30 + 31 + 30 = 150 days
    assert_eq!(rows[0]["days_to_sunset"], 150);
    assert_eq!(rows[1]["line"], 2);
    assert_eq!(rows[1]["state"], "live");
    // After the sunset only line 2 is live.
    let later = s
        .run(&["--format", "json", "--today", "2027-07-01", "status"])
        .json();
    assert_eq!(later.as_array().unwrap().len(), 1);
    assert_eq!(later[0]["line"], 2);
    // diff reads dataset@version from the store.
    let d = s
        .run(&["--format", "json", "diff", "roads@1.1.0", "roads@2.0.0"])
        .json();
    assert_eq!(d["required_bump"], "major");
    assert_eq!(d["changes"][0]["clause"], "crs");
}

/// Propose `text`; it must be refused with exit 1, every reason named, and the store left
/// byte-for-byte as it was.
fn assert_refused(s: &Store, text: &str, reasons: &[&str]) {
    let before = s.snapshot();
    let head = s.head();
    let run = s.propose(text, "A reason.");
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    for r in reasons {
        assert!(run.stderr.contains(r), "no `{r}` in:\n{}", run.stderr);
    }
    assert_eq!(s.head(), head);
    assert!(s.snapshot() == before, "the store changed");
}

#[test]
fn every_refusal_is_named_and_writes_nothing() {
    let s = Store::new();
    s.with_roads();
    let breaking = CLAUSES.replace("EPSG:4326", "EPSG:4258");
    // The next minor of the store, and its first major.
    let minor = |sunset: Option<&str>, advisory: &[&str], clauses: &str| {
        draft(
            "roads",
            "1.2.0",
            Some("1.1.0"),
            "2026-04-01",
            sunset,
            advisory,
            clauses,
        )
    };
    let major = |sunset: Option<&str>, clauses: &str| {
        roads("2.0.0", Some("1.1.0"), "2027-01-01", sunset, clauses)
    };
    // A breaking change with a minor bump: the clause is named with old and new value.
    assert_refused(
        &s,
        &minor(None, &[], &breaking),
        &[
            "1.1.0 -> 1.2.0 is a minor bump, but the changes require a major bump",
            "crs (fixed changed, breaking): EPSG:4326 → EPSG:4258",
            // A map-valued clause names the key that breaks.
            "metric_tolerances (narrowing loosened, breaking): `positional_rmse_m` 1.5 → 2.0",
        ],
    );
    // Not greater than the newest; supersedes not the newest.
    assert_refused(
        &s,
        &roads("1.0.5", Some("1.0.0"), "2026-04-01", None, CLAUSES),
        &[
            "version 1.0.5 is not greater than the newest version 1.1.0",
            "1.0.5 supersedes `1.0.0`, but the newest version is 1.1.0",
        ],
    );
    assert_refused(
        &s,
        &roads("1.2.0", None, "2026-04-01", None, CLAUSES),
        &["1.2.0 has no `supersedes`"],
    );
    // A clause with no kind.
    assert_refused(
        &s,
        &minor(
            None,
            &["min_feature_count"],
            &format!("{CLAUSES}min_feature_count = 5\n"),
        ),
        &["clause `min_feature_count` has no kind"],
    );
    // A major bump without a sunset; with windows too short and too long.
    assert_refused(
        &s,
        &major(None, &breaking),
        &["2.0.0 is a major bump and must carry `sunset`"],
    );
    assert_refused(
        &s,
        &major(Some("2027-02-01"), &breaking),
        &["window from valid_from to sunset is 31 days, outside the policy's 90..365"],
    );
    assert_refused(
        &s,
        &major(Some("2028-06-01"), &breaking),
        &["is 517 days, outside the policy's 90..365"],
    );
    // A sunset on a minor version.
    assert_refused(
        &s,
        &minor(Some("2026-09-01"), &[], CLAUSES),
        &["1.2.0 is not a major bump; only the first version of a new line declares a sunset"],
    );
    // A new clause not advisory under the default policy.
    assert_refused(
        &s,
        &minor(
            None,
            &[],
            &format!("{CLAUSES}max_imputed_fraction = 0.02\n"),
        ),
        &["1.2.0 adds clause `max_imputed_fraction` enforced"],
    );
    // ... and accepted when advisory, then enforced by a later minor.
    let v11 = CLAUSES.replace("2.0 }", "1.5 }");
    s.propose_ok(
        &minor(
            None,
            &["max_imputed_fraction"],
            &format!("{v11}max_imputed_fraction = 0.02\n"),
        ),
        "Start measuring imputation.",
    );
    s.propose_ok(
        &roads(
            "1.3.0",
            Some("1.2.0"),
            "2026-05-01",
            None,
            &format!("{v11}max_imputed_fraction = 0.02\n"),
        ),
        "Imputation stayed under 2% for every release.",
    );
    s.assert_check_passes();
}

#[test]
fn a_third_live_line_is_refused() {
    let s = Store::new();
    s.with_roads();
    s.with_line_2();
    let v3 = CLAUSES
        .replace("EPSG:4326", "EPSG:3035")
        .replace("[-10.0, 40.0, 10.0, 60.0]", "[0.0, 0.0, 1.0, 1.0]");
    assert_refused(
        &s,
        &roads(
            "3.0.0",
            Some("2.0.0"),
            "2027-03-01",
            Some("2027-09-01"),
            &v3,
        ),
        &[
            "lines 1, 2, 3 would all be live on 2027-03-01",
            "more than two live contracts is not a window, it is drift",
        ],
    );
    // After line 1's sunset a third major is fine.
    s.propose_ok(
        &roads(
            "3.0.0",
            Some("2.0.0"),
            "2027-07-01",
            Some("2027-12-01"),
            &v3,
        ),
        "LAEA.",
    );
}

#[test]
fn bad_drafts_exit_2_and_write_nothing() {
    let s = Store::new();
    let before = s.snapshot();
    let run = s.propose(
        "dataset = \"roads\"\nversion = \"1.0\"\nvalid_from = 2026-01-01\n",
        "r",
    );
    assert_eq!(run.code, 2);
    run.assert_stderr_has("draft.toml:2:11");
    let run = s.propose(
        &draft("../evil", "1.0.0", None, "2026-01-01", None, &[], CLAUSES),
        "r",
    );
    assert_eq!(run.code, 2);
    run.assert_stderr_has("dataset name `../evil`");
    let run = s.run(&["propose", "/nonexistent.toml", "--rationale", "r"]);
    assert_eq!(run.code, 2);
    let run = s.propose(&roads("1.0.0", None, "2026-01-01", None, CLAUSES), "  ");
    assert_eq!(run.code, 2);
    run.assert_stderr_has("--rationale is empty");
    assert!(s.snapshot() == before);
}

#[test]
fn a_drafts_errors_come_in_line_order() {
    let s = Store::new();
    let text = "# a draft with four mistakes\nadvisory = [\"nope\"]\ndataset = \"Roads\"\n\
                version = \"1.0\"\nvalid_from = 2026-01-01\nsupersedes = \"0.9\"\n[clauses]\n";
    let run = s.propose(text, "r");
    assert_eq!(run.code, 2, "{}", run.stderr);
    let lines: Vec<usize> = run
        .stderr
        .lines()
        .filter_map(|l| l.split("draft.toml:").nth(1))
        .filter_map(|rest| rest.split(':').next()?.parse().ok())
        .collect();
    let expected: Vec<usize> = ["advisory", "dataset", "version", "supersedes"]
        .iter()
        .map(|k| text.lines().position(|l| l.starts_with(k)).unwrap() + 1)
        .collect();
    assert_eq!(lines, expected, "{}", run.stderr);
}

#[test]
fn a_missing_field_names_its_table_or_the_file_not_a_comment() {
    let s = Store::new();
    // Top level: no position to point at, the file lacks the key.
    let run = s.propose(
        "# a draft\ndataset = \"roads\"\nvalid_from = 2026-01-01\n[clauses]\n",
        "r",
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    run.assert_stderr_has("draft.toml: the file has no `version`");
    assert!(!run.stderr.contains("draft.toml:1:1"), "{}", run.stderr);
    // In a table: its header line.
    let text = "# the consumers\n\n[consumers.atlas]\nteam = \"Cartography\"\n";
    std::fs::write(s.dir.join("consumers.toml"), text).unwrap();
    s.git(&["add", "consumers.toml"]);
    s.git(&["commit", "-qm", "atlas without contacts"]);
    let run = s.run(&["check"]);
    let header = text
        .lines()
        .position(|l| l.starts_with("[consumers.atlas]"))
        .unwrap()
        + 1;
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains(&format!(
            "consumers.toml:{header}:1: [consumers.atlas] has no `contacts`"
        )),
        "{said}"
    );
}

#[test]
fn dry_run_prints_the_records_and_writes_nothing() {
    let s = Store::new();
    let before = s.snapshot();
    let path = s.write("d.toml", &roads("1.0.0", None, "2026-01-01", None, CLAUSES));
    let run = s.run(&[
        "--format",
        "json",
        "propose",
        &path,
        "--rationale",
        "First.",
        "--dry-run",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["accepted"], true);
    assert_eq!(j["records"][0]["direction"], "added");
    assert_eq!(j["commit"], serde_json::Value::Null);
    assert!(s.snapshot() == before);
}

#[test]
fn sunset_moves_later_freely_and_earlier_only_with_force() {
    let s = Store::new();
    s.with_roads();
    s.with_line_2();
    let run = s.sunset_roads("1", "2027-08-01", "Two teams need a month more.", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let before = s.snapshot();
    let run = s.sunset_roads("1", "2027-07-15", "Hurry.", &[]);
    assert_eq!(run.code, 1);
    run.assert_stderr_has("2027-07-15 is earlier than the committed sunset 2027-08-01");
    assert!(s.snapshot() == before);
    let run = s.sunset_roads("1", "2027-07-15", "Licence ends early.", &["--force"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let history = std::fs::read_to_string(s.dir.join("history/roads.toml")).unwrap();
    assert_eq!(history.matches("[[sunset]]").count(), 2);
    assert!(history.contains("from      = 2027-08-01\nto        = 2027-07-15\nrationale = \"Licence ends early.\"\nforced    = true"), "{history}");
    let status = s
        .run(&[
            "--format",
            "json",
            "--today",
            "2027-02-01",
            "status",
            "roads",
        ])
        .json();
    assert_eq!(status[0]["sunset"], "2027-07-15");
    s.assert_check_passes();
    // Beyond the policy's window needs --force too; an unknown line is bad input.
    let run = s.sunset_roads("1", "2028-06-01", "r", &[]);
    assert_eq!(run.code, 1);
    run.assert_stderr_has("outside the policy's 90..365");
    let run = s.sunset_roads("7", "2028-06-01", "r", &[]);
    assert_eq!(run.code, 2);
}

/// The finding (optionally of `file`) whose message contains `text`; fails the test if none.
fn finding<'a>(
    findings: &'a [serde_json::Value],
    file: Option<&str>,
    text: &str,
) -> &'a serde_json::Value {
    findings
        .iter()
        .find(|f| {
            file.is_none_or(|file| f["file"] == file)
                && f["message"].as_str().unwrap().contains(text)
        })
        .unwrap_or_else(|| panic!("no finding `{text}` in {findings:#?}"))
}

/// Assert that `finding` is on `file` and blames `commit`, made by the hand editor: how check
/// names who tampered.
fn assert_blames_the_editor(finding: &serde_json::Value, file: &str, commit: &str) {
    assert_eq!(finding["file"], file);
    assert_eq!(finding["commit"], commit);
    assert_eq!(finding["author"], "Mallory Editor <mallory@example.org>");
}

/// Write a roads contract file by hand, bypassing `propose` (the test commits it with git).
fn sneak_in(s: &Store, version: &str, clauses: &str) {
    let text = roads(version, Some("1.1.0"), "2026-05-01", None, clauses);
    std::fs::write(s.dir.join(format!("contracts/roads/{version}.toml")), text).unwrap();
}

#[test]
fn check_catches_an_edited_published_contract_naming_commit_and_author() {
    let s = Store::new();
    s.with_roads();
    let path = s.dir.join("contracts/roads/1.0.0.toml");
    // 2.0 -> 1.0: now 1.0.0 -> 1.1.0 (1.5) loosens, and the record's "tightened" is wrong.
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("2.0 }", "1.0 }");
    std::fs::write(&path, text).unwrap();
    s.git(&["commit", "-qam", "quietly loosen 1.0.0"]);
    let head = s.head();
    let f = s.findings();
    let edited = finding(&f, None, "a published contract was edited");
    assert_blames_the_editor(edited, "contracts/roads/1.0.0.toml", &head);
    // The history is judged by what was published, so the edit is the one finding: not also
    // a wrong verdict of 1.1.0 blamed on the commit that proposed it.
    assert_eq!(f.len(), 1, "{f:#?}");
}

#[test]
fn an_edit_that_breaks_a_published_contract_is_one_finding_on_the_editing_commit() {
    let s = Store::new();
    s.with_roads();
    let path = s.dir.join("contracts/roads/1.0.0.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "envelope = [-10.0, 40.0, 10.0, 60.0]",
        "envelope = [-10.0, 40.0, 10.0]",
    );
    std::fs::write(&path, text).unwrap();

    // Before the commit, the warning says how to undo the edit, never "commit them".
    let run = s.run(&["status"]);
    run.assert_stderr_has(
        "contracts/roads/1.0.0.toml is a published contract, and published contracts never \
             change: restore it with `git checkout -- contracts/roads/1.0.0.toml` and propose a \
             new version",
    );
    assert!(!run.stderr.contains("commit them"), "{}", run.stderr);

    s.git(&["commit", "-qam", "narrow the envelope by hand"]);
    let head = s.head();
    let f = s.findings();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0]["message"], "a published contract was edited");
    assert_eq!(f[0]["file"], "contracts/roads/1.0.0.toml");
    assert_eq!(f[0]["commit"], head);
}

#[test]
fn a_new_uncommitted_file_still_gets_the_commit_hint() {
    let s = Store::with_roads_and_uncommitted_consumers();
    let run = s.run(&["status"]);
    run.assert_stderr_has("uncommitted changes to consumers.toml are not used; commit them");
}

#[test]
fn check_catches_a_deleted_contract() {
    let s = Store::new();
    s.with_roads();
    s.git(&["rm", "-q", "contracts/roads/1.1.0.toml"]);
    s.git(&["commit", "-qm", "drop 1.1.0"]);
    let f = s.findings();
    let deleted = finding(
        &f,
        Some("contracts/roads/1.1.0.toml"),
        "a published contract was deleted",
    );
    assert_eq!(deleted["author"], "Mallory Editor <mallory@example.org>");
}

#[test]
fn check_catches_a_rewritten_or_dropped_history_record() {
    let s = Store::new();
    s.with_roads();
    let path = s.dir.join("history/roads.toml");
    let original = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        original.replace("First roads contract.", "Backdated excuse."),
    )
    .unwrap();
    s.git(&["commit", "-qam", "reword"]);
    let f = s.findings();
    finding(
        &f,
        Some("history/roads.toml"),
        "`[[change]]` record 1 was rewritten",
    );

    let s = Store::new();
    s.with_roads();
    let path = s.dir.join("history/roads.toml");
    let original = std::fs::read_to_string(&path).unwrap();
    let cut = original.rfind("\n[[change]]").unwrap();
    std::fs::write(&path, &original[..cut]).unwrap();
    s.git(&["commit", "-qam", "drop the last record"]);
    let f = s.findings();
    finding(&f, Some("history/roads.toml"), "shrank from 2 to 1 records");
    finding(&f, None, "contract 1.1.0 has no change records");
}

#[test]
fn check_catches_a_contract_added_without_propose() {
    let s = Store::new();
    s.with_roads();
    sneak_in(&s, "1.2.0", CLAUSES);
    s.git(&["add", "."]);
    s.git(&["commit", "-qm", "sneak in 1.2.0"]);
    let head = s.head();
    let f = s.findings();
    let bypass = finding(&f, None, "contract 1.2.0 has no change records");
    assert_blames_the_editor(bypass, "contracts/roads/1.2.0.toml", &head);
}

#[test]
fn check_catches_a_forged_verdict() {
    let s = Store::new();
    s.with_roads();
    // A breaking 1.2.0 added with a hand-written record calling it compatible.
    sneak_in(
        &s,
        "1.2.0",
        &CLAUSES.replace("1.5 }", "3.0 }").replace("2.0 }", "3.0 }"),
    );
    let path = s.dir.join("history/roads.toml");
    let mut history = std::fs::read_to_string(&path).unwrap();
    history += "\n[[change]]\nat        = 2026-11-29T10:00:00Z\nfrom      = \"1.1.0\"\nto        = \"1.2.0\"\nclause    = \"metric_tolerances\"\nkind      = \"narrowing\"\ndirection = \"tightened\"\nverdict   = \"compatible\"\nrationale = \"Trust me.\"\n";
    std::fs::write(&path, history).unwrap();
    s.git(&["add", "."]);
    s.git(&["commit", "-qm", "forge"]);
    let f = s.findings();
    finding(
        &f,
        None,
        "1.1.0 -> 1.2.0 is a minor bump, but the changes require a major bump",
    );
    finding(
        &f,
        None,
        "the record of 1.2.0 says `metric_tolerances` (narrowing, tightened, compatible)",
    );
    finding(
        &f,
        None,
        "the contract files give `metric_tolerances` (narrowing, loosened, breaking) for 1.2.0",
    );
}

#[test]
fn an_adopted_repository_proves_from_its_since_commit() {
    let env = World::empty();
    let dir = env.home().join("adopt");
    std::fs::create_dir_all(dir.join("contracts/old")).unwrap();
    // Earlier history with a file that check would otherwise flag: it is before `since`.
    std::fs::write(dir.join("contracts/old/notes.txt"), "pre-store notes\n").unwrap();
    let git = |args: &[&str]| {
        common::git_as(&dir, env.home(), ("Old", "old@example.org"), args);
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "before the store"]);
    git(&["rm", "-q", "contracts/old/notes.txt"]);
    git(&["commit", "-qm", "remove notes"]);
    let run = env.run_in(&dir, &["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.assert_stderr_has("adopted an existing repository");
    let config = std::fs::read_to_string(dir.join("contracts.toml")).unwrap();
    assert!(config.starts_with("[store]\nsince = \""), "{config}");
    let run = env.run_in(&dir, &["check"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // Without the since commit the old deletion is a finding.
    let run = env.run_in(&dir, &["--format", "json", "check", "--since", "HEAD~2"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    run.assert_stdout_has("contracts/old/notes.txt");
}

#[test]
fn show_prints_clauses_with_kind_and_enforcement_and_the_reading_rules() {
    let s = Store::new();
    s.with_roads();
    let j = s.run(&["--format", "json", "show", "roads"]).json();
    assert_eq!(j["version"], "1.1.0");
    let crs = j["clauses"].rows().find(|c| c["clause"] == "crs").unwrap();
    assert_eq!(crs["kind"], "fixed");
    assert_eq!(crs["status"], "enforced");
    let text = s.run(&["show", "roads@1.0.0"]);
    assert_eq!(text.code, 0);
    assert!(text.stdout.starts_with("roads 1.0.0\n"), "{}", text.stdout);
    assert!(text
        .stdout
        .contains("a clause this build cannot evaluate is reported as not evaluated"));
    let missing = s.run(&["show", "roads@9.9.9"]);
    assert_eq!(missing.code, 2);
    assert!(
        missing
            .stderr
            .contains("dataset `roads` has no version 9.9.9"),
        "{}",
        missing.stderr
    );
}

#[test]
fn an_injected_crash_after_the_objects_leaves_the_store_unchanged() {
    let s = Store::new();
    s.with_roads();
    let before = s.snapshot_without_objects();
    let head = s.head();
    let path = s.write(
        "d.toml",
        &draft("rivers", "1.0.0", None, "2026-01-01", None, &[], CLAUSES),
    );
    let out = s
        .env
        .command(&s.dir)
        .env("CONTRACTS_FAULT", "after-objects")
        .args(["propose", &path, "--rationale", "First rivers."])
        .output()
        .unwrap();
    common::assert_exit(&out, 3, "");
    assert_eq!(s.head(), head);
    assert!(s.snapshot_without_objects() == before, "a file changed");
    s.assert_clean();
    s.git(&["fsck", "--no-progress"]);
    assert_eq!(s.run(&["check"]).code, 0);
    // The next run lands it.
    let run = s.run(&["propose", &path, "--rationale", "First rivers."]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(s.dir.join("contracts/rivers/1.0.0.toml").exists());
}

#[test]
fn no_identity_is_a_clear_error() {
    let s = Store::new();
    let path = s.write("d.toml", &roads("1.0.0", None, "2026-01-01", None, CLAUSES));
    let out = s
        .env
        .command(&s.dir)
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .args(["propose", &path, "--rationale", "r"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("GIT_AUTHOR_NAME"), "{stderr}");
}

#[test]
fn concurrent_proposals_lose_nothing_and_duplicate_nothing() {
    let s = Store::new();
    // Six writers: four datasets of their own, and two racing for the same roads 1.0.0.
    let mut drafts = Vec::new();
    for name in ["a", "b", "c", "d"] {
        drafts.push(s.write(
            &format!("{name}.toml"),
            &draft(name, "1.0.0", None, "2026-01-01", None, &[], CLAUSES),
        ));
    }
    for i in 0..2 {
        drafts.push(s.write(
            &format!("roads{i}.toml"),
            &roads("1.0.0", None, "2026-01-01", None, CLAUSES),
        ));
    }
    let handles: Vec<_> = drafts
        .into_iter()
        .map(|path| {
            let mut cmd = s.env.command(&s.dir);
            cmd.args(["propose", &path, "--rationale", "Race."]);
            std::thread::spawn(move || {
                // A writer that lost the race (exit 3, "the store moved") runs again, as a
                // user or cron would; a refusal (exit 1) is final.
                for _ in 0..50 {
                    let out = cmd.output().unwrap();
                    match out.status.code() {
                        Some(3) => {
                            let err = String::from_utf8_lossy(&out.stderr);
                            assert!(err.contains("the store moved; run again"), "{err}");
                            continue;
                        }
                        code => return code,
                    }
                }
                panic!("never landed");
            })
        })
        .collect();
    let codes: Vec<Option<i32>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(codes[..4].iter().all(|c| *c == Some(0)), "{codes:?}");
    let mut roads = codes[4..].to_vec();
    roads.sort();
    assert_eq!(
        roads,
        vec![Some(0), Some(1)],
        "one roads proposal lands, the other is refused"
    );
    // init + 5 proposals
    assert_eq!(s.git(&["rev-list", "--count", "HEAD"]).trim(), "6");
    s.assert_clean();
    let history = std::fs::read_to_string(s.dir.join("history/roads.toml")).unwrap();
    assert_eq!(history.matches("[[change]]").count(), 1);
    s.assert_check_passes();
}

/// The library error's causes reach the user: a `.git` that points nowhere is exit 3 with the
/// store error, gix's own reason under it as "caused by:", and the hint last.
#[test]
fn a_broken_repository_prints_the_git_cause_under_the_error() {
    let env = World::empty();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".git"), "gitdir: /nonexistent/elsewhere\n").unwrap();
    let r = env.run_in(dir.path(), &["status"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert!(
        lines[0].starts_with("error: ") && lines[0].ends_with("could not open the git repository"),
        "{}",
        r.stderr
    );
    assert!(
        lines[1].starts_with("caused by: ") && lines[1].contains("Could not find a git repository"),
        "{}",
        r.stderr
    );
    assert_eq!(
        lines.last().copied(),
        Some("hint: run inside a store's repository, or pass --repo DIR"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
}

/// Talk goes through one printer that never panics: with stderr a pipe whose reader is already
/// gone, the uncommitted-change warning is lost, and the command still prints its data and
/// exits as it would (`eprintln!` panicked here, exit 101).
#[test]
fn a_closed_stderr_loses_the_warnings_and_nothing_else() {
    let s = Store::with_roads_and_uncommitted_consumers();
    let open = s.run(&["status"]);
    assert_eq!(open.code, 0, "{}", open.stderr);
    open.assert_stderr_has("uncommitted changes to consumers.toml");

    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = s
        .env
        .command(&s.dir)
        .arg("status")
        .stderr(writer)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), open.stdout);
}

#[test]
fn re_proposing_a_published_version_gives_the_one_reason() {
    let s = Store::new();
    s.with_roads();
    s.with_line_2();
    let origin = s.git(&[
        "log",
        "--format=%H",
        "-1",
        "--",
        "contracts/roads/1.1.0.toml",
    ]);
    let before = s.snapshot();
    let run = s.propose(&roads_1_1_0(), "Again.");
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    run.assert_stderr_has(&format!(
        // The records' time is the harness's fixed clock (CONTRACTS_NOW).
        "1.1.0 is already published (on 2026-11-29, commit {})",
        &origin.trim()[..12]
    ));
    run.assert_stderr_has("(1 reason(s))");
    // Nothing compares the draft with 2.0.0, and no bump is claimed.
    assert!(!run.stdout.contains("2.0.0"), "{}", run.stdout);
    assert!(!run.stdout.contains("bump"), "{}", run.stdout);
    assert_eq!(s.snapshot(), before);
}

#[test]
fn typos_get_the_nearest_name() {
    let s = Store::new();
    s.with_roads();
    // A misspelt clause in a draft.
    let typo = CLAUSES.replace("permitted_geometry", "permited_geometry");
    let run = s.propose(
        &roads("1.2.0", Some("1.1.0"), "2026-05-01", None, &typo),
        "Typo.",
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    run.assert_stderr_has(
        "clause `permited_geometry` is not a known clause: did you mean `permitted_geometry`?",
    );
    // A misspelt dataset, and one far from any: the nearest, or the list.
    let run = s.run(&["status", "road"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    run.assert_stderr_has("dataset `road` has no contract in this store; did you mean `roads`?");
    let run = s.run(&["show", "lakes"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    run.assert_stderr_has("the datasets are: `roads`");
    // A misspelt dataset in the registry.
    std::fs::write(
        s.dir.join("consumers.toml"),
        "[consumers.atlas]\ncontacts = [\"a@example.org\"]\ndatasets.road = {}\n",
    )
    .unwrap();
    s.git(&["add", "consumers.toml"]);
    s.git(&["commit", "-qm", "register atlas"]);
    let f = s.findings();
    finding(
        &f,
        Some("consumers.toml"),
        "consumer `atlas` reads dataset `road`, which the store does not have; did you mean `roads`?",
    );
    // Into a pipe the table is never shortened, and a finding is never cut even in a narrow
    // terminal.
    for columns in [None, Some("60")] {
        let mut c = s.env.command(&s.dir);
        if let Some(n) = columns {
            c.env("COLUMNS", n);
        }
        let out = c.arg("check").output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(
                "consumer `atlas` reads dataset `road`, which the store does not have; did you mean `roads`?"
            ),
            "COLUMNS={columns:?}:\n{stdout}"
        );
        assert!(!stdout.contains('…'), "{stdout}");
    }
}

#[test]
fn outside_any_repository_is_input_with_the_init_hint() {
    let env = World::empty();
    let plain = env.home().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let run = env.run_in(&plain, &["status"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    run.assert_stderr_has("not inside a git repository");
    run.assert_stderr_has("run `contracts init DIR`");
    // The user is told where they are, not how gix searched.
    assert!(!run.stderr.contains("caused by"), "{}", run.stderr);
}

#[test]
fn date_mistakes_say_what_to_write_and_where_they_came_from() {
    let s = Store::new();
    s.with_roads();
    for bad in ["05-03-2027", "2027/03/05"] {
        let run = s.run(&["--today", bad, "status"]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(
            run.stderr
                .contains("expected a date YYYY-MM-DD such as 2027-03-05"),
            "{bad}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("trailing input"), "{}", run.stderr);
        assert!(!run.stderr.contains("invalid characters"), "{}", run.stderr);
    }
    // From the environment: the variable is named, and `--today` is not blamed.
    let out = s
        .env
        .command(&s.dir)
        .env("CONTRACTS_TODAY", "tomorrow")
        .arg("status")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("CONTRACTS_TODAY=`tomorrow`: expected a date YYYY-MM-DD"),
        "{stderr}"
    );
    assert!(!stderr.contains("--today"), "{stderr}");
    // In a draft: a quoted day names the file, line and column and says "unquoted".
    let text = roads("1.2.0", Some("1.1.0"), "\"15/01/2027\"", None, CLAUSES);
    let run = s.propose(&text, "Quoted.");
    assert_eq!(run.code, 2, "{}", run.stderr);
    run.assert_stderr_has("draft.toml:4:");
    run.assert_stderr_has(
        "valid_from: expected a date YYYY-MM-DD such as 2027-03-05 (unquoted in TOML), found \
             the string \"15/01/2027\"",
    );
}

#[test]
fn a_draft_that_is_not_utf8_is_named_with_its_byte_offset() {
    let s = Store::new();
    s.with_roads();
    let mut bytes = roads("1.2.0", Some("1.1.0"), "2026-05-01", None, CLAUSES).into_bytes();
    let at = bytes.len();
    bytes.extend_from_slice(b"# caf\xe9\n");
    let path = s.env.home().join("latin1.toml");
    std::fs::write(&path, &bytes).unwrap();
    let p = path.to_str().unwrap();
    let before = s.snapshot();
    for args in [
        vec!["propose", p, "--rationale", "x"],
        vec!["diff", "roads@1.1.0", p],
        vec!["backtest", p],
    ] {
        let run = s.run(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        let offset = format!("byte offset {}", at + 5);
        assert!(
            run.stderr.contains(p) && run.stderr.contains(&offset),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert_eq!(s.snapshot(), before);
}

#[test]
fn a_placeholder_description_is_not_published_unless_asked() {
    let s = Store::new();
    let data = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/naturalearth/cities.geojson"
    );
    let run = s.run(&["new", "cities", "--from", data]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.assert_stdout_has("TODO");
    let path = s.write("cities.toml", &run.stdout);
    let before = s.snapshot();
    let run = s.run(&["propose", &path, "--rationale", "First cities."]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    run.assert_stderr_has("the description is a placeholder");
    assert_eq!(s.snapshot(), before);
    let run = s.run(&[
        "propose",
        &path,
        "--rationale",
        "First cities.",
        "--allow-placeholder",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn quiet_silences_the_warnings_and_keeps_the_data_and_the_exit_code() {
    let s = Store::with_roads_and_uncommitted_consumers();
    for cmd in ["check", "status"] {
        let loud = s.run(&[cmd]);
        assert!(
            loud.stderr
                .contains("uncommitted changes to consumers.toml"),
            "{cmd} warns without --quiet: {}",
            loud.stderr
        );
        for flag in ["--quiet", "-q"] {
            let quiet = s.run(&[flag, cmd]);
            assert_eq!(quiet.stderr, "", "{cmd} {flag}: nothing on stderr");
            assert_eq!(quiet.code, loud.code, "{cmd} {flag}: the same exit code");
            assert_eq!(quiet.stdout, loud.stdout, "{cmd} {flag}: the same data");
        }
    }
    assert!(
        !s.run(&["status"]).stdout.is_empty(),
        "status prints its table"
    );
}

#[test]
fn quiet_never_silences_an_error_or_a_refusal() {
    let s = Store::new();
    s.with_roads();
    // An error of input: a dataset the store does not hold.
    let loud = s.run(&["show", "no-such-dataset"]);
    let quiet = s.run(&["show", "no-such-dataset", "--quiet"]);
    assert_eq!(loud.code, 2, "{}", loud.stderr);
    assert_eq!(quiet.code, 2);
    assert!(quiet.stderr.starts_with("error:"), "{}", quiet.stderr);
    assert_eq!(quiet.stderr, loud.stderr);
    // A refused proposal: the same version again is refused, and says why.
    let path = s.write(
        "again.toml",
        &std::fs::read_to_string(s.dir.join("contracts/roads/1.1.0.toml")).unwrap(),
    );
    let refused = s.run(&["--quiet", "propose", &path, "--rationale", "again"]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    refused.assert_stderr_has("refused");
}
