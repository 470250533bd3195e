//! The access-log reader against the bench generator's own count: a day of S3 access-log
//! objects written by bench/gen_access_logs.py (ranged bursts, second opens, polls, noise,
//! objects delivered out of order, records hours late), read in the order of the object
//! names as a listing gives them, must count exactly the reads the generator counted on
//! the requests in time order.

use std::path::Path;
use std::process::Command;

use contracts::consumers::access::{AccessKeys, AccessLog, AccessScan};
use contracts_scan::LogFormat;

fn generate(dir: &Path) -> serde_json::Value {
    let truth = dir.join("truth.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/gen_access_logs.py");
    let status = Command::new("python3")
        .arg(script)
        .arg(dir.join("out"))
        .args([
            "--requests",
            "40000",
            "--days",
            "1",
            "--consumers",
            "300",
            "--truth",
        ])
        .arg(&truth)
        .status()
        .expect("python3 runs the generator");
    assert!(status.success());
    serde_json::from_str(&std::fs::read_to_string(truth).unwrap()).unwrap()
}

#[test]
fn a_day_of_generated_s3_logs_gives_the_generators_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let truth = generate(tmp.path());
    let files = generated_files(tmp.path(), &truth);
    let inputs = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert_reads_are_the_truth(inputs, &truth);
}

/// The same day as one file of megabytes, which is read in blocks on every core (a file of
/// 1 MiB or more is): the reads are the generator's all the same.
#[test]
fn the_day_as_one_large_file_read_on_every_core_gives_the_same_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let truth = generate(tmp.path());
    let files = generated_files(tmp.path(), &truth);
    let one: Vec<u8> = files
        .iter()
        .flat_map(|f| std::fs::read(f).unwrap())
        .collect();
    assert!(one.len() > 4 << 20, "{} bytes", one.len());
    assert_reads_are_the_truth(vec![one], &truth);
}

/// The generated objects, in the order of their names (a listing's).
fn generated_files(dir: &Path, truth: &serde_json::Value) -> Vec<std::path::PathBuf> {
    let mut files = std::fs::read_dir(dir.join("out/logs/access"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect::<Vec<_>>();
    files.sort();
    assert_eq!(files.len() as u64, truth["objects"].as_u64().unwrap());
    files
}

/// Read `inputs` in turn through one scan: its lines, requests, reads and reads per version
/// are the generator's.
fn assert_reads_are_the_truth(inputs: Vec<Vec<u8>>, truth: &serde_json::Value) {
    let keys = AccessKeys {
        templates: vec!["/datasets/{dataset}/v{contract}/**"],
        same_read_seconds: 60,
        ..AccessKeys::default()
    };
    let log = AccessLog::compile(LogFormat::S3Access, &keys).unwrap();
    let mut scan = AccessScan::new(&log);
    let mut by_version = std::collections::BTreeMap::<String, u64>::new();
    let mut count = |r: contracts::consumers::access::Read| {
        *by_version
            .entry(format!("{} {}", r.reader.dataset, r.reader.contract))
            .or_default() += 1;
    };
    for (i, input) in inputs.iter().enumerate() {
        scan.feed(&input[..], &mut count, |e| panic!("input {i}: {e:?}"))
            .unwrap();
    }
    let stats = scan.finish(&mut count);
    assert_eq!(stats.lines, truth["requests"].as_u64().unwrap());
    assert_eq!(stats.requests, truth["counted"].as_u64().unwrap());
    assert_eq!(stats.reads, truth["reads"].as_u64().unwrap());
    let expected = truth["by_version"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect::<std::collections::BTreeMap<_, _>>();
    assert_eq!(by_version, expected);
    // The noise is there, and counted apart.
    assert!(stats.not_read.method > 0 && stats.not_read.status > 0 && stats.not_read.unmatched > 0);
}

/// A combined (nginx/Apache) access-log line of `GET path` at 27/Nov/2026 `time` with `status`.
fn combined(time: &str, path: &str, status: &str) -> String {
    format!(
        "10.0.0.7 - flood [27/Nov/2026:{time} +0000] \"GET {path} HTTP/1.1\" {status} 1024 \"-\" \
         \"GDAL/3.9\"\n"
    )
}

#[test]
fn a_combined_line_whose_status_is_absent_is_a_non_read_not_a_malformed_line() {
    use crate::common::world::{self, World};
    use crate::common::Rows;

    let w = World::new(world::closed_port());
    w.read_only_sources(
        "[[consumption.source]]\npath = \"consumption/web/*.log\"\nformat = \"combined\"\n\
         match = [\"/datasets/{dataset}/v{contract}/*.parquet\"]\n",
    );
    let v1 = "/datasets/roads/v1.1.0/part-0.parquet";
    let mut log = String::new();
    log += &combined("09:00:00", v1, "200");
    // nginx and Apache write `-` where no status was sent (a client that went away first).
    log += &combined("10:00:00", v1, "-");
    log += &combined("11:00:00", v1, "404");
    // A line no format reads: the one malformed line of the file.
    log += "this is not an access-log line\n";
    std::fs::create_dir_all(w.root().join("consumption/web")).unwrap();
    std::fs::write(w.root().join("consumption/web/access.log"), log).unwrap();

    let run = w.consumers_json("2026-11-29");
    let j = run.json();
    assert_eq!(j["scan"]["malformed"], 1, "{j:#}");
    let sources = j["scan"]["sources"].rows().collect::<Vec<_>>();
    assert_eq!(sources.len(), 1, "{j:#}");
    let web = sources[0];
    // Four lines: one malformed, three requests, of which one is a read.
    assert_eq!(web["lines"], 4, "{web:#}");
    assert_eq!(web["malformed"], 1, "{web:#}");
    assert_eq!(web["reads"], 1, "{web:#}");
    assert_eq!(web["not_read"]["status"], 2, "{web:#}");
}
