//! Consumption logs in object storage, against a real S3-compatible server on loopback (moto,
//! with its request recorder on). moto writes no access logs of its own, so a month of S3
//! server access-log objects, written by bench/gen_access_logs.py in the field order of AWS's
//! "Amazon S3 server access log format" and named by delivery time as S3 names them
//! (`<prefix>YYYY-MM-DD-hh-mm-ss-<id>`), is uploaded into a bucket. A scan must read only the
//! objects that can hold a read of the lookback, list from the lookback's first day, give the
//! answer the same objects give from a local folder, and print no credential.

use crate::common;
use crate::common::remote_support;
use crate::common::world;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use remote_support::{tree, Moto, BUCKET, SECRET};
use world::{closed_port, World};

const TODAY: &str = "2026-11-20";
/// The lookback: 2026-11-14 to 2026-11-20.
const LOOKBACK_DAYS: u32 = 7;

/// Generate the month; returns the directory of its objects.
fn month_of_logs(dir: &Path, gzip: bool) -> std::path::PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/gen_access_logs.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script)
        .arg(dir.join("out"))
        .args([
            "--requests",
            "3000",
            "--consumers",
            "40",
            "--month",
            "2026-11",
        ])
        .arg("--consumers-toml")
        .arg(dir.join("consumers.toml"));
    if gzip {
        cmd.arg("--gzip");
    }
    common::run_ok(&mut cmd, "generator");
    dir.join("out/logs/access")
}

fn config(source: &str) -> String {
    format!(
        r#"[notify]
from = "Data Platform <data-platform@example.org>"
announce = false

[smtp]
host = "127.0.0.1"
port = {}
tls = "none"

[consumption]
lookback_days = {LOOKBACK_DAYS}
# The thresholds bite, so the day-by-day counts are read too.
min_reads = 2

[[consumption.source]]
path = "{source}"
format = "s3-access"
match = "/datasets/{{dataset}}/v{{contract}}/**"
"#,
        closed_port()
    )
}

/// The day in an S3 access-log object name (`2026-11-14-03-12-09-…`, optionally `.gz`).
fn day_of(name: &str) -> &str {
    &name[..10]
}

/// The object keys of GET requests moto recorded for the bucket, and the query strings of
/// its list requests.
fn recorded(file: &Path) -> (BTreeSet<String>, Vec<String>) {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut gets = BTreeSet::new();
    let mut lists = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("a recorded request");
        if v["method"] != "GET" {
            continue;
        }
        let url = v["url"].as_str().unwrap();
        let path_and_query = url.split_once("://").map_or(url, |(_, r)| r);
        let path_and_query = &path_and_query[path_and_query.find('/').unwrap()..];
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        let key = path
            .strip_prefix(&format!("/{BUCKET}"))
            .unwrap()
            .trim_start_matches('/');
        if key.is_empty() {
            lists.push(query.to_string());
        } else {
            gets.insert(key.to_string());
        }
    }
    (gets, lists)
}

fn each_shape(gzip: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let logs = month_of_logs(tmp.path(), gzip);
    let objects = tree(&logs, "access/");
    let names: Vec<String> = objects
        .iter()
        .map(|(k, _)| k.trim_start_matches("access/").to_string())
        .collect();
    assert!(names.len() > 100, "a month of objects: {}", names.len());
    let recording = tmp.path().join("moto-recording.jsonl");
    let moto = Moto::start_with(&[
        ("MOTO_ENABLE_RECORDING", "True"),
        ("MOTO_RECORDER_FILEPATH", recording.to_str().unwrap()),
    ]);
    let uploads: Vec<(String, &Path)> = objects
        .iter()
        .map(|(k, p)| (k.clone(), p.as_path()))
        .collect();
    moto.upload(&uploads);
    let (code, _) = remote_support::http(moto.port, "POST", "/moto-api/recorder/reset-recording")
        .expect("moto resets its recording");
    assert_eq!(code, 200);

    // The store, once reading the bucket and once the same objects from a local folder.
    let remote = World::new(closed_port());
    let local = World::new(closed_port());
    let registry = std::fs::read_to_string(tmp.path().join("consumers.toml")).unwrap();
    for (w, source) in [
        (&remote, format!("s3://{BUCKET}/access/")),
        (&local, "consumption/access/*".to_string()),
    ] {
        for f in ["consumption/reads.jsonl", "consumption/platform.csv"] {
            std::fs::remove_file(w.root().join(f)).unwrap();
        }
        w.write("contracts.toml", &config(&source));
        w.write("consumers.toml", &registry);
    }
    for (k, p) in &objects {
        let to = local.root().join("consumption").join(k);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(p, to).unwrap();
    }

    let mut cmd = common::contracts_as(remote.home.path(), ("Test", "t@example.org"));
    moto.env(&mut cmd);
    let out = cmd
        .current_dir(remote.root())
        .args(["--repo"])
        .arg(remote.root())
        .args(["--today", TODAY, "consumers", "roads", "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}");

    // Which objects can hold a read of 2026-11-14..=20: delivered from the 14th to the 21st.
    let expected_read: BTreeSet<String> = names
        .iter()
        .filter(|n| ("2026-11-14"..="2026-11-21").contains(&day_of(n)))
        .map(|n| format!("access/{n}"))
        .collect();
    // Listing starts after `access/2026-11-14`: every object of the 14th on is listed.
    let expected_listed = names.iter().filter(|n| day_of(n) >= "2026-11-14").count();
    assert!(expected_listed < names.len() && expected_read.len() < expected_listed);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("object storage:"))
        .unwrap_or_else(|| panic!("the scan reports its objects: {stderr}"));
    assert!(
        line.contains(&format!(
            "{expected_listed} object(s) listed, {} read",
            expected_read.len()
        )),
        "{line} (expected {expected_listed} listed, {} read)",
        expected_read.len()
    );

    // moto saw exactly those GETs, and a listing that started at the lookback.
    let (gets, lists) = recorded(&recording);
    assert_eq!(gets, expected_read, "the objects the binary fetched");
    assert!(
        lists
            .iter()
            .any(|q| q.contains("start-after=access%2F2026-11-14")
                || q.contains("start-after=access/2026-11-14")),
        "a listing from the lookback's first day: {lists:?}"
    );

    // No credential in any output.
    for text in [&stdout, &stderr] {
        assert!(!text.contains(SECRET), "the secret leaked: {text}");
    }

    // The same answer as the same objects read from a local folder.
    let from_folder = local.run(TODAY, &["consumers", "roads", "--format", "json"]);
    assert_eq!(from_folder.code(), 0, "{}", from_folder.stderr());
    // Apart from the scan's own statistics (the folder's scan reads every file of the month).
    let mut remote_json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let mut folder_json = from_folder.json();
    let (remote_scan, folder_scan) = (remote_json["scan"].take(), folder_json["scan"].take());
    assert_eq!(remote_scan["reads"], folder_scan["reads"]);
    assert_eq!(remote_scan["objects_read"], expected_read.len());
    assert_eq!(remote_json, folder_json);
    // The day-by-day counts (the thresholds of can-retire, the timeline's reads) read the
    // bucket too, and agree with the folder.
    for args in [
        &["can-retire", "roads", "1", "--format", "json"][..],
        &["timeline", "roads", "--format", "json"][..],
    ] {
        let mut cmd = common::contracts_as(remote.home.path(), ("Test", "t@example.org"));
        moto.env(&mut cmd);
        let out = cmd
            .current_dir(remote.root())
            .arg("--repo")
            .arg(remote.root())
            .args(["--today", TODAY])
            .args(args)
            .output()
            .unwrap();
        let from_folder = local.run(TODAY, args);
        common::assert_exit(&out, from_folder.code(), &format!("{args:?}: "));
        let mut a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut b = from_folder.json();
        a["scan"].take();
        b["scan"].take();
        assert_eq!(a, b, "{args:?}");
    }
    let consumers = remote_json.to_string();
    assert!(
        consumers.contains("still") || consumers.contains("migrated"),
        "the answer names consumers on a line: {consumers}"
    );
}

#[test]
fn a_bucket_of_access_logs_is_read_only_for_the_lookback_and_agrees_with_a_folder() {
    each_shape(false);
}

#[test]
fn gzipped_access_log_objects_are_read_as_they_stream() {
    each_shape(true);
}

#[test]
fn a_local_log_gzipped_without_saying_so_in_its_name_is_read() {
    use std::io::Write;
    let w = World::new(closed_port());
    let plain = w.read("consumption/reads.jsonl").unwrap();
    let before = w.run("2026-11-30", &["consumers", "roads", "--format", "json"]);
    assert_eq!(before.code(), 0, "{}", before.stderr());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(plain.as_bytes()).unwrap();
    std::fs::write(
        w.root().join("consumption/reads.jsonl"),
        gz.finish().unwrap(),
    )
    .unwrap();
    let after = w.run("2026-11-30", &["consumers", "roads", "--format", "json"]);
    assert_eq!(after.code(), 0, "{}", after.stderr());
    assert_eq!(after.json()["scan"]["malformed"], 0, "{}", after.stderr());
    let (mut a, mut b) = (before.json(), after.json());
    a["scan"].take();
    b["scan"].take();
    assert_eq!(a, b);
}
