//! Partitioned releases on disk: a directory (Hive-style `key=value/` folders included) or a
//! glob of partition files is one release, profiled in parallel and merged; the result equals
//! the profile of the unsplit file (tests/data/partitions/make.py split it) and the
//! `--merge` of the partitions' own profiles.

use crate::common;
use crate::common::data;

use common::{Run, World};
use serde_json::Value;

fn profile(env: &World, args: &[&str]) -> Run {
    let mut all = vec!["--format", "json", "profile"];
    all.extend_from_slice(args);
    env.run_in(env.home(), &all)
}

fn without_files(mut v: Value) -> (Value, Vec<String>) {
    let files = v
        .as_object_mut()
        .and_then(|o| o.remove("files"))
        .and_then(|f| serde_json::from_value(f).ok())
        .unwrap_or_default();
    (v, files)
}

fn whole(env: &World, rel: &str) -> Value {
    let r = profile(env, &[data(rel).to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    without_files(r.json()).0
}

#[test]
fn a_folder_of_hive_partitions_profiles_as_the_unsplit_file() {
    let env = World::empty();
    let dir = data("partitions/countries_hive");
    let r = profile(&env, &[dir.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (merged, files) = without_files(r.json());
    assert_eq!(merged, whole(&env, "naturalearth/countries.parquet"));
    // Eight continents, in path order; the `_SUCCESS` marker is not a partition.
    assert_eq!(files.len(), 8, "{files:?}");
    assert!(
        files[0].ends_with("continent=Africa/part-0.parquet"),
        "{files:?}"
    );
    assert!(files.iter().all(|f| !f.contains("_SUCCESS")));
    let mut sorted = files.clone();
    sorted.sort();
    assert_eq!(files, sorted);
}

#[test]
fn a_folder_and_a_glob_of_flatgeobuf_partitions_profile_as_the_unsplit_file() {
    let env = World::empty();
    let expected = whole(&env, "naturalearth/countries.fgb");
    let dir = data("partitions/countries_fgb");
    let glob = format!("{}/*.fgb", dir.display());
    for arg in [dir.to_str().unwrap(), glob.as_str()] {
        let r = profile(&env, &[arg]);
        assert_eq!(r.code, 0, "{arg}: {}", r.stderr);
        let (merged, files) = without_files(r.json());
        assert_eq!(files.len(), 8, "{arg}");
        assert_eq!(merged, expected, "{arg}");
    }
}

#[test]
fn the_merge_of_the_partitions_profiles_equals_the_folders_profile() {
    let env = World::empty();
    let dir = data("partitions/countries_hive");
    let folder = profile(&env, &[dir.to_str().unwrap()]);
    assert_eq!(folder.code, 0, "{}", folder.stderr);
    let mut saved = Vec::new();
    for (i, e) in std::fs::read_dir(&dir).unwrap().enumerate() {
        let p = e.unwrap().path();
        if !p.is_dir() {
            continue;
        }
        let part = p.join("part-0.parquet");
        let r = profile(&env, &[part.to_str().unwrap()]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let out = env.home().join(format!("p{i}.json"));
        std::fs::write(&out, &r.stdout).unwrap();
        saved.push(out.to_str().unwrap().to_string());
    }
    assert_eq!(saved.len(), 8);
    let mut args = vec!["--merge"];
    args.extend(saved.iter().map(String::as_str));
    let merged = profile(&env, &args);
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    assert_eq!(
        without_files(merged.json()).0,
        without_files(folder.json()).0
    );
}

#[test]
fn a_folder_or_glob_without_data_files_is_bad_input() {
    let env = World::empty();
    let empty = env.home().join("empty");
    std::fs::create_dir_all(empty.join("_temporary")).unwrap();
    std::fs::write(empty.join("_SUCCESS"), "").unwrap();
    std::fs::write(empty.join("_temporary/part-0.parquet"), "not yet").unwrap();
    let r = profile(&env, &[empty.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    r.assert_stderr_has("holds no data file");
    let glob = format!("{}/*.gpkg", data("partitions/countries_fgb").display());
    let r = profile(&env, &[&glob]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    r.assert_stderr_has("the glob holds no data file");
}

#[test]
fn validate_takes_saved_partition_profiles_as_the_release() {
    let env = World::empty();
    let store = common::world_store_with(
        &env,
        "dataset = \"world\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n[clauses]\ncrs = \"EPSG:4326\"\nrequired_attributes = { name = \"string\", continent = \"string\" }\n",
    );
    let dir = data("partitions/countries_hive");
    let mut saved = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path().join("part-0.parquet");
        if p.exists() {
            let r = profile(&env, &[p.to_str().unwrap()]);
            assert_eq!(r.code, 0, "{}", r.stderr);
            let out = env.home().join(format!("p{}.json", saved.len()));
            std::fs::write(&out, &r.stdout).unwrap();
            saved.push(out.to_str().unwrap().to_string());
        }
    }
    let validate = |args: &[&str]| {
        let all = [&common::VALIDATE_WORLD[..], args].concat();
        let r = env.run_in(&store, &all);
        (r.code, r.json())
    };
    let mut args = vec!["--merge"];
    args.extend(saved.iter().map(String::as_str));
    let (code, merged) = validate(&args);
    assert_eq!(code, 0, "{merged}");
    let (code, folder) = validate(&[dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{folder}");
    assert_eq!(merged["profile"]["feature_count"], 177);
    assert_eq!(merged["contracts"], folder["contracts"]);
    // A file and saved profiles together are one release, too.
    let (code, mixed) = validate(&[
        data("naturalearth/countries.parquet").to_str().unwrap(),
        "--merge",
        &saved[0],
    ]);
    assert_eq!(code, 0, "{mixed}");
    assert!(mixed["profile"]["feature_count"].as_u64().unwrap() > 177);
}
