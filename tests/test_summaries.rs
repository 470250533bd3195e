//! Read summaries (issue 19): the daily counts of the retirement thresholds read every log
//! the scan reads, under the consumer each principal is; `consumption summarize` folds a log
//! into rows of (day, consumer, dataset, contract) that every command reads as it reads the
//! log, and the summary of summaries is the summary of the whole.

use crate::common::world;

use std::io::Write;

use world::{counted_row as row, World};

/// The thresholds world with atlas known also by the principals `key:atlas-*`.
fn with_atlas_keys(w: &World) {
    world::with_thresholds(w, "identities = [\"key:atlas-*\"]");
}

/// `text` gzipped.
fn gzip(text: &str) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

/// (consumer, status, reads, days) of the holders `can-retire roads 1` names on 2026-11-29.
fn holders(w: &World) -> Vec<(String, String, u64, u64)> {
    let run = w.can_retire_line_1_json("2026-11-29");
    world::counted(&run.json()["holders"])
}

const ATLAS_TWO_DAYS: &str = concat!(
    r#"{"at":"2026-11-27T05:00:00Z","consumer":"atlas","dataset":"roads","contract":"1.1.0"}"#,
    "\n",
    r#"{"at":"2026-11-28T05:00:00Z","consumer":"atlas","dataset":"roads","contract":"1.1.0"}"#,
    "\n",
);

#[test]
fn a_gzipped_log_counts_toward_the_thresholds() {
    let w = World::new(world::closed_port());
    with_atlas_keys(&w);
    let config = w.read("contracts.toml").unwrap().replace(
        "sources = [\"consumption/*.jsonl\", \"consumption/*.csv\"]",
        "sources = [\"consumption/*.jsonl\", \"consumption/*.csv\", \"consumption/*.jsonl.gz\"]",
    );
    w.write("contracts.toml", &config);
    std::fs::write(
        w.root().join("consumption/more.jsonl.gz"),
        gzip(ATLAS_TWO_DAYS),
    )
    .unwrap();
    // atlas: its read of 2026-11-27 in platform.csv and the two gzipped ones, on two days.
    assert_eq!(holders(&w), vec![row("atlas", "still-on", 3, 2)]);
}

#[test]
fn reads_under_an_identity_count_toward_the_consumers_thresholds() {
    let w = World::new(world::closed_port());
    with_atlas_keys(&w);
    w.write(
        "consumption/keys.jsonl",
        &ATLAS_TWO_DAYS.replace("\"atlas\"", "\"key:atlas-7\""),
    );
    assert_eq!(holders(&w), vec![row("atlas", "still-on", 3, 2)]);
}

/// The scan's own counts (files, lines, reads outside the days) differ between a log and its
/// summary; the answers do not.
fn without_scan_stats(mut v: serde_json::Value) -> serde_json::Value {
    match &mut v {
        serde_json::Value::Object(m) => {
            m.remove("scan");
            for x in m.values_mut() {
                *x = without_scan_stats(x.take());
            }
        }
        serde_json::Value::Array(a) => {
            for x in a.iter_mut() {
                *x = without_scan_stats(x.take());
            }
        }
        _ => {}
    }
    v
}

/// Every answer that reads the record, on `today`.
fn answers(w: &World, today: &str) -> Vec<(String, i32, serde_json::Value)> {
    answers_env(w, today, &[])
}

/// [`answers`], the binary given `env` besides the world's own.
fn answers_env(
    w: &World,
    today: &str,
    env: &[(&str, &str)],
) -> Vec<(String, i32, serde_json::Value)> {
    let asks: [&[&str]; 7] = [
        &["consumers", "roads"],
        &["consumers", "rivers"],
        &["can-retire", "roads", "1"],
        &["can-retire", "rivers", "1", "--no-successor"],
        &["notify", "--dry-run"],
        &["timeline", "roads"],
        &["status"],
    ];
    asks.iter()
        .map(|a| {
            let mut args = vec!["--format", "json"];
            args.extend_from_slice(a);
            let run = w.run_env(today, &args, env);
            assert!(
                !run.stdout().is_empty(),
                "{}: {}",
                a.join(" "),
                run.stderr()
            );
            (a.join(" "), run.code(), without_scan_stats(run.json()))
        })
        .collect()
}

/// The world's logs, more reads under identities and offsets other than UTC, and thresholds.
fn busy_world() -> World {
    let w = World::new(world::closed_port());
    with_atlas_keys(&w);
    w.write(
        "consumption/keys.jsonl",
        &ATLAS_TWO_DAYS.replace("\"atlas\"", "\"key:atlas-7\""),
    );
    w.write(
        "consumption/offsets.jsonl",
        concat!(
            // One instant three ways, and router back on line 1 at it: the tie rule decides.
            r#"{"at":"2026-11-28T23:30:00-01:00","consumer":"router","dataset":"roads","contract":"1.1.0"}"#, "\n",
            r#"{"at":"2026-11-29T00:30:00Z","consumer":"router","dataset":"roads","contract":"2.0.0"}"#, "\n",
            r#"{"at":"2026-11-29T02:30:00+02:00","consumer":"router","dataset":"roads","contract":"1.0.0"}"#, "\n",
            r#"{"at":"2026-11-27T09:00:00+05:30","consumer":"archive","dataset":"rivers","contract":"1.0.0"}"#, "\n",
            r#"{"at":"2026-11-27T10:00:00Z","consumer":"key:stranger","dataset":"roads","contract":"1.1.0"}"#, "\n",
            r#"{"at":"2026-11-27T10:00:00Z","consumer":"","dataset":"roads","contract":"1.1.0"}"#, "\n",
        ),
    );
    w.write(
        "contracts/rivers/1.0.0.toml",
        "dataset = \"rivers\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
         [clauses]\ncrs = \"EPSG:4326\"\n",
    );
    w
}

/// The store reads only `summary` from now on, as a read summary.
fn read_the_summary_only(w: &World) {
    w.read_only_sources(
        "[[consumption.source]]\npath = \"consumption/summary/*\"\nformat = \"summary\"\n",
    );
}

/// `consumption summarize --out consumption/summary/<name>` on the busy world, then every
/// answer from the summary alone is the answer from the log; returns the world, reading only
/// the summary, and the log's summary as JSON Lines (`--out -`).
fn every_answer_from_a_summary_named(name: &str) -> (World, String) {
    let w = busy_world();
    let days = ["2026-11-28", "2026-11-29", "2027-01-20", "2027-03-05"];
    let raw: Vec<_> = days.iter().map(|d| answers(&w, d)).collect();
    let jsonl = w.run("2026-11-29", &["consumption", "summarize", "--out", "-"]);
    jsonl.assert_code(0);
    std::fs::create_dir_all(w.root().join("consumption/summary")).unwrap();
    let out = format!("consumption/summary/{name}");
    let run = w.run("2026-11-29", &["consumption", "summarize", "--out", &out]);
    run.assert_code(0);
    // The empty consumer is reported and left out.
    run.assert_stderr_has("`consumer` is empty");
    read_the_summary_only(&w);
    let from_summary: Vec<_> = days.iter().map(|d| answers(&w, d)).collect();
    for (r, s) in raw.iter().flatten().zip(from_summary.iter().flatten()) {
        assert_eq!(r, s);
    }
    assert_eq!(raw.len(), from_summary.len());
    // The answers came from the summary: without it, they are others.
    let kept = std::fs::read(w.root().join(&out)).unwrap();
    std::fs::remove_file(w.root().join(&out)).unwrap();
    assert_ne!(answers(&w, days[1]), from_summary[1]);
    std::fs::write(w.root().join(&out), kept).unwrap();
    (w, jsonl.stdout())
}

#[test]
fn every_answer_from_the_summary_is_the_answer_from_the_log() {
    let (w, jsonl) = every_answer_from_a_summary_named("all");
    assert_eq!(w.read("consumption/summary/all").unwrap(), jsonl);
}

#[test]
fn every_answer_from_a_parquet_summary_is_the_answer_from_the_log() {
    let (w, jsonl) = every_answer_from_a_summary_named("all.parquet");
    let bytes = std::fs::read(w.root().join("consumption/summary/all.parquet")).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    // Nothing is left beside it.
    let names: Vec<_> = std::fs::read_dir(w.root().join("consumption/summary"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["all.parquet"]);
    // Its rows are the JSON Lines summary's of the log, row for row: summarized again, the
    // same text.
    let again = summarize_summaries(&w, &["consumption/summary/all.parquet"]);
    again.assert_code(0);
    assert_eq!(again.stdout(), jsonl);
    assert!(jsonl.contains(r#""last_at":"2026-11-28T23:30:00-01:00""#));
}

#[test]
fn a_parquet_summary_in_object_storage_gives_the_answers_of_the_local_one() {
    use crate::common::remote_support::{Moto, BUCKET, KEY_ID, SECRET};
    let (w, _) = every_answer_from_a_summary_named("all.parquet");
    let local: Vec<_> = ["2026-11-29", "2027-01-20"]
        .iter()
        .map(|d| answers(&w, d))
        .collect();
    let moto = Moto::start();
    let file = w.root().join("consumption/summary/all.parquet");
    moto.upload(&[("summary/all.parquet".to_string(), file.as_path())]);
    std::fs::remove_file(&file).unwrap();
    let config = w.read("contracts.toml").unwrap().replace(
        "path = \"consumption/summary/*\"\n",
        &format!("path = \"s3://{BUCKET}/summary/*.parquet\"\n"),
    );
    w.write("contracts.toml", &config);
    let endpoint = moto.endpoint();
    let env = [
        ("AWS_ACCESS_KEY_ID", KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", SECRET),
        ("AWS_DEFAULT_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    let remote: Vec<_> = ["2026-11-29", "2027-01-20"]
        .iter()
        .map(|d| answers_env(&w, d, &env))
        .collect();
    assert_eq!(remote, local);
    // Read from the bucket: the scan says so.
    let run = w.run_env("2026-11-29", &["consumers", "roads"], &env);
    run.assert_code(0);
    run.assert_stderr_has("1 object(s) listed, 1 read");
}

/// `consumption summarize --input-format summary FILES --out -` on 2026-11-29: summaries
/// summarized again, to stdout.
fn summarize_summaries(w: &World, files: &[&str]) -> world::Run {
    let mut args = vec!["consumption", "summarize", "--input-format", "summary"];
    args.extend_from_slice(files);
    args.extend(["--out", "-"]);
    w.run("2026-11-29", &args)
}

/// A Parquet summary at `rel` written with the arrow writer: `columns` in the order given.
fn write_parquet(w: &World, rel: &str, columns: Vec<(&str, arrow_array::ArrayRef)>) {
    let batch = arrow_array::RecordBatch::try_from_iter(columns).unwrap();
    let path = w.root().join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

fn strings(v: &[Option<&str>]) -> arrow_array::ArrayRef {
    std::sync::Arc::new(arrow_array::StringArray::from(v.to_vec()))
}

#[test]
fn a_malformed_parquet_summary_row_is_reported_with_its_row_number() {
    use arrow_array::{ArrayRef, BooleanArray, Int32Array};
    use std::sync::Arc;
    let w = World::new(world::closed_port());
    read_the_summary_only(&w);
    let day = "2026-11-28";
    let ok = Some("2026-11-28T03:00:00Z");
    // Columns in another order than the store writes, `day` as text, `reads` an INT32, and a
    // column the store does not read.
    write_parquet(
        &w,
        "consumption/summary/engine.parquet",
        vec![
            (
                "registered",
                Arc::new(BooleanArray::from(vec![false; 5])) as ArrayRef,
            ),
            (
                "last_at",
                strings(&[
                    ok,
                    Some("2026-11-29T01:00:00+02:00"),
                    ok,
                    ok,
                    Some("2026-11-28T09:00:00+05:00"),
                ]),
            ),
            ("bytes", strings(&[Some("1"); 5])),
            ("dataset", strings(&[Some("roads"); 5])),
            (
                "consumer",
                strings(&[
                    Some("router"),
                    Some("atlas"),
                    Some("atlas"),
                    None,
                    Some("flood-model"),
                ]),
            ),
            ("contract", strings(&[Some("1.1.0"); 5])),
            (
                "reads",
                Arc::new(Int32Array::from(vec![2, 1, 0, 1, 4])) as ArrayRef,
            ),
            ("day", strings(&[Some(day); 5])),
            (
                "first_at",
                strings(&[
                    ok,
                    Some("2026-11-28T01:00:00Z"),
                    ok,
                    ok,
                    Some("2026-11-28T10:00:00+05:00"),
                ]),
            ),
        ],
    );
    let run = w.consumers_json("2026-11-29");
    // Row 2 is well formed: its last read, written 2026-11-29T01:00+02:00, is 23:00Z on
    // its UTC day.
    run.assert_stderr_has("consumption/summary/engine.parquet:3: `reads` is 0");
    run.assert_stderr_has("consumption/summary/engine.parquet:4: `consumer` is null");
    run.assert_stderr_has("consumption/summary/engine.parquet:5: `first_at` is after `last_at`");
    assert_eq!(run.json()["scan"]["malformed"], 3);
    // Rows 1 and 2 are read: router's and atlas's newest reads.
    let last = |name: &str| {
        run.json()["consumers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["consumer"] == name)
            .map(|c| c["last_read"].clone())
    };
    assert_eq!(
        last("router"),
        Some(serde_json::json!("2026-11-28T03:00:00Z"))
    );
    assert_eq!(
        last("atlas"),
        Some(serde_json::json!("2026-11-29T01:00:00+02:00"))
    );
    // The day-by-day walk reports them alike.
    let summarize = summarize_summaries(&w, &["consumption/summary/engine.parquet"]);
    summarize.assert_code(0);
    summarize.assert_stderr_has("engine.parquet:3: `reads` is 0");
    summarize.assert_stderr_has("engine.parquet:5: `first_at` is after `last_at`");
    assert_eq!(
        summarize.stdout().lines().count(),
        2,
        "{}",
        summarize.stdout()
    );
}

#[test]
fn a_parquet_summary_without_a_column_or_with_one_of_another_type_is_skipped_naming_it() {
    use arrow_array::{ArrayRef, BooleanArray, Int64Array};
    use std::sync::Arc;
    let w = World::new(world::closed_port());
    read_the_summary_only(&w);
    let one = |v: &str| strings(&[Some(v)]);
    let mut columns: Vec<(&str, ArrayRef)> = vec![
        ("day", one("2026-11-28")),
        ("consumer", one("router")),
        ("dataset", one("roads")),
        ("contract", one("1.1.0")),
        ("reads", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("first_at", one("2026-11-28T03:00:00Z")),
        ("last_at", one("2026-11-28T03:00:00Z")),
        (
            "registered",
            Arc::new(BooleanArray::from(vec![true])) as ArrayRef,
        ),
    ];
    write_parquet(&w, "consumption/summary/good.parquet", columns.clone());
    columns.pop();
    write_parquet(
        &w,
        "consumption/summary/no-registered.parquet",
        columns.clone(),
    );
    columns.push((
        "registered",
        Arc::new(BooleanArray::from(vec![true])) as ArrayRef,
    ));
    columns[4] = ("reads", one("1"));
    write_parquet(&w, "consumption/summary/text-reads.parquet", columns);
    let run = w.consumers_json("2026-11-29");
    run.assert_stderr_has(
        "no-registered.parquet: cannot be read to its end: no column `registered`",
    );
    run.assert_stderr_has("text-reads.parquet: cannot be read to its end: column `reads` is Utf8, expected an integer");
    // The good file is read.
    assert!(
        run.stdout().contains("2026-11-28T03:00:00Z"),
        "{}",
        run.stdout()
    );
    // The day-by-day walk skips it too, and says so: the commands that count day by day
    // answer from the good file.
    let timeline = w.run("2026-11-29", &["--format", "json", "timeline", "roads"]);
    timeline.assert_code(0);
    timeline.assert_stderr_has(
        "warning: consumption/summary/no-registered.parquet: cannot be read to its end: no column `registered`",
    );
    w.run("2026-11-29", &["can-retire", "roads", "1"])
        .assert_code(1);
    let summarize = summarize_summaries(
        &w,
        &[
            "consumption/summary/good.parquet",
            "consumption/summary/text-reads.parquet",
        ],
    );
    summarize.assert_code(0);
    summarize.assert_stderr_has(
        "warning: consumption/summary/text-reads.parquet: cannot be read to its end: column `reads` is Utf8, expected an integer; the file is skipped",
    );
    assert_eq!(
        summarize.stdout().lines().count(),
        1,
        "{}",
        summarize.stdout()
    );
}

#[test]
fn summarize_writes_rows_of_day_consumer_dataset_and_contract() {
    let w = busy_world();
    let run = w.run("2026-11-29", &["consumption", "summarize", "--out", "-"]);
    run.assert_code(0);
    let rows: Vec<serde_json::Value> = run
        .stdout()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let find = |day: &str, consumer: &str, dataset: &str, contract: &str| {
        rows.iter()
            .find(|r| {
                r["day"] == day
                    && r["consumer"] == consumer
                    && r["dataset"] == dataset
                    && r["contract"] == contract
            })
            .unwrap_or_else(|| panic!("no row {day} {consumer} {dataset} {contract}: {rows:#?}"))
    };
    // atlas on 2026-11-27: platform.csv at 03:00Z and keys.jsonl (as key:atlas-7) at 05:00Z.
    let atlas = find("2026-11-27", "atlas", "roads", "1.1.0");
    assert_eq!(atlas["reads"], 2);
    assert_eq!(atlas["first_at"], "2026-11-27T03:00:00Z");
    assert_eq!(atlas["last_at"], "2026-11-27T05:00:00Z");
    assert_eq!(atlas["registered"], true);
    // 2026-11-28T23:30-01:00 is on the UTC day 2026-11-29, and keeps its offset.
    let router = find("2026-11-29", "router", "roads", "1.1.0");
    assert_eq!(router["last_at"], "2026-11-28T23:30:00-01:00");
    // archive's read at 09:00+05:30 is 03:30Z on the 27th.
    assert_eq!(
        find("2026-11-27", "archive", "rivers", "1.0.0")["first_at"],
        "2026-11-27T09:00:00+05:30"
    );
    // An unclaimed principal keeps its name.
    assert_eq!(
        find("2026-11-27", "key:stranger", "roads", "1.1.0")["registered"],
        false
    );
    assert_eq!(
        find("2026-11-26", "ghost", "roads", "1.0.0")["registered"],
        false
    );
    assert!(rows.iter().all(|r| r["consumer"] != "key:atlas-7"));
    // Given files instead of the sources, and a summary summarized again: the same text.
    std::fs::write(w.root().join("s1"), run.stdout()).unwrap();
    let again = summarize_summaries(&w, &["s1"]);
    again.assert_code(0);
    assert_eq!(again.stdout(), run.stdout());
}

/// The world's reads, and more, as a log partitioned by day and gzipped, read by one source.
fn partitioned_world() -> World {
    let w = busy_world();
    let mut by_day: std::collections::BTreeMap<String, String> = Default::default();
    let mut lines: Vec<String> = Vec::new();
    for f in ["reads.jsonl", "keys.jsonl", "offsets.jsonl"] {
        lines.extend(
            w.read(&format!("consumption/{f}"))
                .unwrap()
                .lines()
                .map(str::to_string),
        );
    }
    for row in w.read("consumption/platform.csv").unwrap().lines().skip(1) {
        let c: Vec<&str> = row.split(',').collect();
        lines.push(format!(
            "{{\"at\":\"{}\",\"consumer\":\"{}\",\"dataset\":\"{}\",\"contract\":\"{}\"}}",
            c[0], c[1], c[2], c[3]
        ));
    }
    for l in lines {
        let day = l.split("\"at\":\"").nth(1).unwrap()[..10].to_string();
        by_day.entry(day).or_default().push_str(&format!("{l}\n"));
    }
    for (day, text) in &by_day {
        let dir = w.root().join(format!("consumption/log/day={day}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("part-0.jsonl.gz"), gzip(text)).unwrap();
    }
    w.read_only_sources("[[consumption.source]]\npath = \"consumption/log/*/*.jsonl.gz\"\n");
    w
}

/// Run `engine` on the partitioned world (it writes `consumption/summary/all` from
/// `consumption/log/*/*.jsonl.gz`); its summary, read back by the store, is the store's own
/// summary of the log, and every answer from it is the answer from the log.
fn an_engine_summarizes_to_the_same_answers(engine: &dyn Fn(&World)) {
    an_engine_summarizes_to_the_same_answers_in(&|w| {
        engine(w);
        "consumption/summary/all".to_string()
    });
}

/// [`an_engine_summarizes_to_the_same_answers`], the engine writing the file whose path it
/// returns (the only file in `consumption/summary`).
fn an_engine_summarizes_to_the_same_answers_in(engine: &dyn Fn(&World) -> String) {
    let w = partitioned_world();
    let days = ["2026-11-29", "2027-03-05"];
    let raw: Vec<_> = days.iter().map(|d| answers(&w, d)).collect();
    std::fs::create_dir_all(w.root().join("consumption/summary")).unwrap();
    let written = engine(&w);
    // (`registered` and the spelling of UTC are the store's to set.)
    let ours = w.run("2026-11-29", &["consumption", "summarize", "--out", "-"]);
    ours.assert_code(0);
    let theirs = summarize_summaries(&w, &[&written]);
    theirs.assert_code(0);
    assert_eq!(theirs.stdout(), ours.stdout());
    let config = w.read("contracts.toml").unwrap().replace(
        "path = \"consumption/log/*/*.jsonl.gz\"\n",
        "path = \"consumption/summary/*\"\nformat = \"summary\"\n",
    );
    w.write("contracts.toml", &config);
    let from_summary: Vec<_> = days.iter().map(|d| answers(&w, d)).collect();
    for (r, s) in raw.iter().flatten().zip(from_summary.iter().flatten()) {
        assert_eq!(r, s);
    }
    assert_eq!(raw.len(), from_summary.len());
}

fn example(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn python_has(module: &str) {
    let check = std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output();
    assert!(
        check.is_ok_and(|o| o.status.success()),
        "the Python package {module} is missing: this test runs an example with it (pinned in .ci/run)"
    );
}

/// Run examples/duckdb/summarize.sql with DuckDB, as its header says, writing `out`.
fn duckdb_summarizes_to(w: &World, out: &str) {
    let run = std::process::Command::new("python3")
        .args([
            "-c",
            "import duckdb, sys\n\
             con = duckdb.connect()\n\
             con.execute(\"SET VARIABLE log = 'consumption/log/*/*.jsonl.gz'\")\n\
             con.execute(\"SET VARIABLE out = '\" + sys.argv[2] + \"'\")\n\
             con.execute(open(sys.argv[1]).read())\n",
        ])
        .arg(example("examples/duckdb/summarize.sql"))
        .arg(out)
        .current_dir(w.root())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn the_duckdb_example_summarizes_a_partitioned_log_to_the_same_answers() {
    python_has("duckdb");
    an_engine_summarizes_to_the_same_answers(&|w| {
        duckdb_summarizes_to(w, "consumption/summary/all");
    });
}

#[test]
fn the_duckdb_example_writes_a_parquet_summary_to_the_same_answers() {
    python_has("duckdb");
    an_engine_summarizes_to_the_same_answers_in(&|w| {
        let out = "consumption/summary/all.parquet";
        duckdb_summarizes_to(w, out);
        // DuckDB's own Parquet: `day` as text, `reads` an INT64, not the store's writer.
        let bytes = std::fs::read(w.root().join(out)).unwrap();
        assert!(bytes.starts_with(b"PAR1"), "DuckDB wrote no Parquet file");
        out.to_string()
    });
}

#[test]
fn the_dask_example_summarizes_a_partitioned_log_to_the_same_answers() {
    python_has("dask, distributed");
    an_engine_summarizes_to_the_same_answers(&|w| {
        let run = std::process::Command::new("python3")
            .arg(example("examples/dask/summarize_reads.py"))
            .args(["--local-workers", "2", "--out", "consumption/summary/all"])
            .arg("consumption/log/*/*.jsonl.gz")
            .current_dir(w.root())
            .env("HOME", w.home.path())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{stderr}");
        // busy_world's one line with an empty consumer.
        assert!(stderr.contains("1 line(s) left out"), "{stderr}");
    });
}

#[test]
fn a_summary_source_refuses_a_fields_mapping() {
    let w = World::new(world::closed_port());
    let table = "[[consumption.source]]\npath = \"consumption/summary/*\"\nformat = \"summary\"\n\
                 fields = { consumer = \"who\" }\n";
    let config = w.read("contracts.toml").unwrap();
    w.write("contracts.toml", &format!("{config}\n{table}"));
    let run = w.run("2026-11-29", &["consumers", "roads"]);
    run.assert_code(2);
    run.assert_stderr_has("a read summary has fixed fields");
}

#[test]
fn an_access_log_summarizes_to_the_same_answers() {
    let w = World::new(world::closed_port());
    with_atlas_keys(&w);
    w.write(
        "contracts/rivers/1.0.0.toml",
        "dataset = \"rivers\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n\
         [clauses]\ncrs = \"EPSG:4326\"\n",
    );
    w.read_only_sources(
        "[[consumption.source]]\npath = \"consumption/s3/*\"\nformat = \"s3-access\"\n\
         match = [\"datasets/{dataset}/v{contract}/*.parquet\"]\nsame_read_seconds = 120\n",
    );
    let v1 = "datasets/roads/v1.1.0/part-00000.parquet";
    let v2 = "datasets/roads/v2.0.0/part-00000.parquet";
    let mut a = String::new();
    // atlas (through its identity) opens line 1 twice on the 27th (two bursts) and once on
    // the 28th; router reads line 2; an anonymous reader reads line 1.
    for t in [
        "27/Nov/2026:10:00:00",
        "27/Nov/2026:10:00:01",
        "27/Nov/2026:15:00:00",
    ] {
        a += &world::s3_line(t, "key:atlas-3", "REST.GET.OBJECT", v1, 206, "65536");
    }
    a += &world::s3_line(
        "28/Nov/2026:08:00:00",
        "key:atlas-3",
        "REST.GET.OBJECT",
        v1,
        200,
        "9",
    );
    a += &world::s3_line(
        "28/Nov/2026:09:00:00",
        "router",
        "REST.GET.OBJECT",
        v2,
        200,
        "9",
    );
    a += &world::s3_line("28/Nov/2026:09:30:00", "-", "REST.GET.OBJECT", v1, 200, "9");
    w.write("consumption/s3/2026-11-28-00", &a);
    let days = ["2026-11-29"];
    let raw: Vec<_> = days.iter().map(|d| answers(&w, d)).collect();
    std::fs::create_dir_all(w.root().join("consumption/summary")).unwrap();
    w.run(
        "2026-11-29",
        &[
            "consumption",
            "summarize",
            "--out",
            "consumption/summary/all",
        ],
    )
    .assert_code(0);
    let summary = w.read("consumption/summary/all").unwrap();
    // Two bursts on the 27th, one on the 28th, under atlas.
    assert!(
        summary.contains(r#""day":"2026-11-27","consumer":"atlas","dataset":"roads","contract":"1.1.0","reads":2"#),
        "{summary}"
    );
    let config = w.read("contracts.toml").unwrap().replace(
        "path = \"consumption/s3/*\"\nformat = \"s3-access\"\n\
         match = [\"datasets/{dataset}/v{contract}/*.parquet\"]\nsame_read_seconds = 120\n",
        "path = \"consumption/summary/*\"\nformat = \"summary\"\n",
    );
    w.write("contracts.toml", &config);
    let from_summary: Vec<_> = days.iter().map(|d| answers(&w, d)).collect();
    for (r, s) in raw.iter().flatten().zip(from_summary.iter().flatten()) {
        assert_eq!(r, s);
    }
    assert!(w
        .read("contracts.toml")
        .unwrap()
        .contains("format = \"summary\""));
}

#[test]
fn read_counts_past_the_largest_integer_stop_there_instead_of_wrapping() {
    // Two summaries of the same consumer and day, each with the largest count a row can hold:
    // the sum is held at that count (a debug build panicked on the overflow, a release build
    // wrapped it to a small number), by the newest-read scan, the day-by-day counts and a
    // summary of the summaries.
    let w = World::new(world::closed_port());
    read_the_summary_only(&w);
    let max = u64::MAX;
    let row = |at: &str| {
        format!(
            r#"{{"day":"2026-11-28","consumer":"router","dataset":"roads","contract":"1.1.0","reads":{max},"first_at":"{at}","last_at":"{at}","registered":true}}"#
        )
    };
    w.write(
        "consumption/summary/a",
        &format!("{}\n", row("2026-11-28T03:00:00Z")),
    );
    w.write(
        "consumption/summary/b",
        &format!("{}\n", row("2026-11-28T04:00:00Z")),
    );
    let run = w.consumers_json("2026-11-29");
    run.assert_code(0);
    let router = run.json()["consumers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["consumer"] == "router")
        .cloned()
        .unwrap_or_else(|| panic!("{}", run.stdout()));
    assert_eq!(router["reads"], max, "{router:#}");
    assert_eq!(run.json()["scan"]["reads"], max);
    w.run("2026-11-29", &["--format", "json", "timeline", "roads"])
        .assert_code(0);
    let summarize = w.run("2026-11-29", &["consumption", "summarize", "--out", "-"]);
    summarize.assert_code(0);
    assert!(
        summarize.stdout().contains(&format!(r#""reads":{max}"#)),
        "{}",
        summarize.stdout()
    );
}
