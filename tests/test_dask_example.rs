//! examples/dask/profile_release.py on a Dask `LocalCluster` of three worker processes: the
//! partitions of a release profiled on the workers and merged there in a tree give exactly
//! the profile one machine gives. Needs `dask` and `distributed` (installed by `.ci/run`);
//! fails loudly without them.

use crate::common;
use crate::common::data;

use std::path::Path;
use std::process::Command;

use common::World;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn dask_script(args: &[&str]) -> std::process::Output {
    common::require_python(
        "import dask, distributed",
        "dask is missing: this test runs the example on a LocalCluster; install it with `pip install dask distributed` (pinned in .ci/run)",
    );
    let env = World::empty();
    Command::new("python3")
        .arg(root().join("examples/dask/profile_release.py"))
        .args(["--local-workers", "3", "--fan-in", "3"])
        .args(["--contracts", env!("CARGO_BIN_EXE_contracts")])
        .args(args)
        .current_dir(env.home())
        .env("HOME", env.home())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs the example")
}

fn profile(args: &[&str]) -> Value {
    let env = World::empty();
    let mut all = vec!["--format", "json", "profile"];
    all.extend_from_slice(args);
    let r = env.run_in(env.home(), &all);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.json()
}

#[test]
fn the_dask_example_merges_to_the_single_machine_profile() {
    let dir = data("partitions/countries_hive");
    let out = dask_script(&[dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let merged: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stderr}"));
    // Eight partitions, three merge tasks, one final merge: the files in partition order.
    assert_eq!(merged, profile(&[dir.to_str().unwrap()]));
    let mut merged = merged;
    let mut single = profile(&[data("naturalearth/countries.parquet").to_str().unwrap()]);
    assert_eq!(merged["files"].as_array().map(Vec::len), Some(8));
    merged.as_object_mut().unwrap().remove("files");
    single.as_object_mut().unwrap().remove("files");
    assert_eq!(merged, single);
}

#[test]
fn a_failing_partition_fails_the_dask_example_with_the_tools_message() {
    let missing = data("partitions/no-such-partition.parquet");
    let good = data("partitions/countries_fgb/Africa.fgb");
    let out = dask_script(&[good.to_str().unwrap(), missing.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no-such-partition.parquet"), "{stderr}");
    assert!(out.stdout.is_empty());
}
