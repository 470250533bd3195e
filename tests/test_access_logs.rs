//! The access-log reader against the bench generator's own count: a day of S3 access-log
//! objects written by bench/gen_access_logs.py (ranged bursts, second opens, polls, noise,
//! objects delivered out of order, records hours late), read in the order of the object
//! names as a listing gives them, must count exactly the reads the generator counted on
//! the requests in time order.

use std::path::Path;
use std::process::Command;

use contracts::consumers::access::{AccessFormat, AccessLog, AccessScan, AccessSpec};

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
    let mut files = std::fs::read_dir(tmp.path().join("out/logs/access"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect::<Vec<_>>();
    files.sort();
    assert_eq!(files.len() as u64, truth["objects"].as_u64().unwrap());
    let log = AccessLog::new(&AccessSpec {
        templates: vec!["/datasets/{dataset}/v{contract}/**".into()],
        ..AccessSpec::new(AccessFormat::S3Access)
    })
    .unwrap();
    let mut scan = AccessScan::new(&log);
    let mut by_version = std::collections::BTreeMap::<String, u64>::new();
    let mut count = |r: contracts::consumers::access::Read| {
        *by_version
            .entry(format!("{} {}", r.reader.dataset, r.reader.contract))
            .or_default() += 1;
    };
    for f in &files {
        let input = std::io::BufReader::new(std::fs::File::open(f).unwrap());
        scan.feed(input, &mut count, |e| panic!("{}: {e:?}", f.display()))
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
