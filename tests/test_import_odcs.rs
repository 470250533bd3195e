//! `contracts import odcs`: an ODCS document as a draft, proposed into a real store and
//! exported back. The round trip is checked as data, the way another tool reads YAML: both
//! documents are read by PyYAML (with YAML 1.2's reading of dates: plain `2022-10-03` stays
//! a string) and compared as JSON values; and `datacontract lint` (pinned in test.sh) must
//! grade the export as it grades the original. Fails loudly without python3, PyYAML or
//! datacontract-cli.

use std::path::{Path, PathBuf};

use crate::common;
use crate::common::Store;
use crate::test_export_odcs_graded::datacontract_run;

/// What importing one official example must give, written from reading each file.
enum Expect {
    /// Imports (with this `--dataset`, if any) and round-trips.
    Imports(Option<&'static str>),
    /// Refused, the error naming each of these reasons.
    Refused(&'static [&'static str]),
}

const EXAMPLES: [(&str, Expect); 18] = {
    use Expect::*;
    [
        (
            "all/full-example.odcs.yaml",
            Refused(&["2 schema objects", "no `name`"]),
        ),
        (
            "all/postgresql-adventureworks-contract.odcs.yaml",
            Refused(&["68 schema objects", "no `name`"]),
        ),
        (
            "data-types/all-data-types.odcs.yaml",
            Refused(&[
                "`txn_time`: logicalType `time`",
                "`latest_txns`: logicalType `array`",
                "`customer_details`: logicalType `object`",
            ]),
        ),
        (
            "fundamentals/table-column-description.odcs.yaml",
            Imports(None),
        ),
        ("quality/column-accuracy.odcs.yaml", Imports(None)),
        ("quality/column-completeness.odcs.yaml", Imports(None)),
        ("quality/column-custom.odcs.yaml", Imports(None)),
        ("quality/column-validity.odcs.yaml", Imports(None)),
        (
            "roles/service-and-operational-roles.odcs.yaml",
            Refused(&["no schema object"]),
        ),
        (
            "schema/all-schema-types.odcs.yaml",
            Refused(&["3 schema objects"]),
        ),
        (
            "schema/kafka-schema.odcs.yaml",
            Refused(&["name `Orders Event Stream` is not a dataset name"]),
        ),
        (
            "schema/kafka-schemaregistry.odcs.yaml",
            Refused(&["name `Orders Event Stream` is not a dataset name"]),
        ),
        ("schema/table-column.odcs.yaml", Imports(None)),
        (
            "schema/table-columns-with-partition.odcs.yaml",
            Imports(None),
        ),
        (
            "server/azure-server.odcs.yaml",
            Refused(&["no `name`", "no schema object"]),
        ),
        ("server/kafka-server.odcs.yaml", Refused(&["no `name`"])),
        (
            "sla/database-table-sla.odcs.yaml",
            Refused(&["no schema object"]),
        ),
        (
            "stakeholders/basic-four-dpo.odcs.yaml",
            Refused(&["no schema object"]),
        ),
    ]
};

fn example(rel: &str) -> PathBuf {
    common::data(&format!("odcs/examples/{rel}"))
}

/// A YAML document as data: PyYAML's safe reading, less its YAML 1.1 timestamps.
fn as_data(text: &str) -> serde_json::Value {
    const READ: &str = "import sys, json, yaml\n\
class L(yaml.SafeLoader): pass\n\
L.yaml_implicit_resolvers = {k: [r for r in v if r[0] != 'tag:yaml.org,2002:timestamp'] \
for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}\n\
json.dump(yaml.load(sys.stdin, Loader=L), sys.stdout)";
    let out = common::python3_with_stdin(&["-c", READ], text).unwrap_or_else(|e| {
        panic!("PYTHON3 IS MISSING ({e}): the round trip is compared with PyYAML (python3-yaml)")
    });
    assert!(
        out.status.success(),
        "PyYAML could not read (is python3-yaml installed?): {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Import `file` into `store`, propose the draft, export it: the export's text.
fn round_trip(store: &Store, file: &Path, dataset: Option<&str>) -> String {
    let draft = store.env.home().join("imported.toml");
    let mut args = vec![
        "import",
        "odcs",
        file.to_str().unwrap(),
        "--out",
        draft.to_str().unwrap(),
    ];
    if let Some(d) = dataset {
        args.extend(["--dataset", d]);
    }
    let run = store.run(&args);
    assert_eq!(run.code, 0, "import {}: {}", file.display(), run.stderr);
    let text = std::fs::read_to_string(&draft).unwrap();
    let run = store.run(&[
        "propose",
        draft.to_str().unwrap(),
        "--rationale",
        "imported",
    ]);
    assert_eq!(
        run.code,
        0,
        "propose {}: {}{}\n{text}",
        file.display(),
        run.stdout,
        run.stderr
    );
    let name = text
        .lines()
        .find_map(|l| l.strip_prefix("dataset     = "))
        .unwrap()
        .trim_matches('"')
        .to_string();
    let run = store.run(&["export", "odcs", &name]);
    assert_eq!(run.code, 0, "export {name}: {}", run.stderr);
    run.stdout
}

/// Whether `datacontract lint` passes a file.
fn lints(file: &Path) -> bool {
    let run = datacontract_run(&[Path::new("lint"), file]);
    assert!(
        run.code <= 1,
        "datacontract lint failed to run: {}{}",
        run.stdout,
        run.stderr
    );
    run.code == 0
}

fn assert_round_trips(store: &Store, rel: &str, dataset: Option<&str>) {
    let file = example(rel);
    let original = std::fs::read_to_string(&file).unwrap();
    let exported = round_trip(store, &file, dataset);
    assert_eq!(
        as_data(&exported),
        as_data(&original),
        "{rel}: export(import(x)) is not x as data:\n{exported}"
    );
    let out = store.env.home().join("exported.odcs.yaml");
    std::fs::write(&out, &exported).unwrap();
    assert_eq!(
        lints(&out),
        lints(&file),
        "{rel}: datacontract lint grades the round trip unlike the original"
    );
}

#[test]
fn every_official_example_imports_and_round_trips_or_is_refused_for_its_reason() {
    let on_disk: Vec<String> = common::files_under(&common::data("odcs/examples"))
        .iter()
        .filter_map(|p| p.to_str()?.split("odcs/examples/").nth(1).map(String::from))
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    let listed: Vec<String> = EXAMPLES.iter().map(|(p, _)| p.to_string()).collect();
    let mut sorted = on_disk.clone();
    sorted.sort();
    assert_eq!(
        sorted, listed,
        "every vendored example has an expected outcome"
    );
    for (rel, expect) in &EXAMPLES {
        // A fresh store each: several examples share one name.
        let store = Store::new();
        match expect {
            Expect::Imports(dataset) => assert_round_trips(&store, rel, *dataset),
            Expect::Refused(reasons) => {
                let out = store.env.home().join("refused.toml");
                let file = example(rel);
                let run = store.run(&[
                    "import",
                    "odcs",
                    file.to_str().unwrap(),
                    "--out",
                    out.to_str().unwrap(),
                ]);
                assert_eq!(run.code, 2, "{rel} is refused as bad input: {}", run.stderr);
                for r in *reasons {
                    assert!(run.stderr.contains(r), "{rel}: no `{r}` in {}", run.stderr);
                }
                assert!(!out.exists(), "{rel}: a refused import writes nothing");
            }
        }
    }
}

#[test]
fn a_name_that_is_no_dataset_name_imports_with_dataset() {
    assert_round_trips(
        &Store::new(),
        "schema/kafka-schema.odcs.yaml",
        Some("orders"),
    );
}
