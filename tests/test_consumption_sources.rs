//! `[[consumption.source]]` end to end: logs written the way platforms export them (other
//! field names, nested objects, constants, epoch times, offsets, another column order),
//! principals mapped to consumers through `identities`, and the configuration refused or
//! reported where it is wrong.

use crate::common::world;
use crate::common::Rows;

use world::World;

/// (consumer, status, version, last read) of each standing, sorted.
fn standings(run: &world::Run) -> Vec<(String, String, Option<String>, Option<String>)> {
    let mut out = world::standings(run, |c| {
        (
            c["consumer"].as_str().unwrap().to_string(),
            c["status"].as_str().unwrap().to_string(),
            world::text(c, "version"),
            world::text(c, "last_read"),
        )
    });
    out.sort();
    out
}

fn row(
    c: &str,
    s: &str,
    v: Option<&str>,
    at: Option<&str>,
) -> (String, String, Option<String>, Option<String>) {
    (
        c.to_string(),
        s.to_string(),
        v.map(str::to_string),
        at.map(str::to_string),
    )
}

/// A store whose only consumption source is `table` (the world's own logs are not read).
fn world_with(table: &str) -> World {
    let w = World::new(25);
    w.read_only_sources(table);
    w
}

#[test]
fn json_dumps_lines_with_nested_fields_milliseconds_and_a_constant_dataset() {
    let w = world_with(
        r#"[[consumption.source]]
path = "consumption/platform/*.jsonl"
dataset = "roads"
fields = { at = { name = "ts", unit = "ms" }, consumer = "client.id", contract = "request.version" }
"#,
    );
    // Python's json.dumps: spaces after separators, other keys first, a nested object, a
    // number and a string the scan does not need, an escape in a skipped value.
    let ms = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .timestamp_millis()
    };
    let lines = [
        format!(
            r#"{{"status": 200, "client": {{"id": "flood-model", "ip": "10.0.0.1"}}, "ts": {}, "request": {{"path": "/roads/\"v1\"", "version": "1.1.0"}}}}"#,
            ms("2026-11-28T03:00:00.125Z")
        ),
        format!(
            r#"{{"ts": {}, "request": {{"version": "1.1.0"}}, "client": {{"id": "router"}}, "bytes": 1.5e3}}"#,
            ms("2026-11-20T03:00:00Z")
        ),
        format!(
            r#"{{"request": {{"version": "2.0.0", "hdr": [1, {{"a": null}}, true]}}, "client": {{"name": "x", "id": "router"}}, "ts": {}}}"#,
            ms("2026-11-25T03:00:00Z")
        ),
        // A read after --today, and a line whose `ts` is text: counted as malformed.
        format!(
            r#"{{"ts": {}, "client": {{"id": "atlas"}}, "request": {{"version": "2.0.0"}}}}"#,
            ms("2027-03-01T03:00:00Z")
        ),
        r#"{"ts": "2026-11-27T03:00:00Z", "client": {"id": "atlas"}, "request": {"version": "1.1.0"}}"#.to_string(),
    ];
    w.write(
        "consumption/platform/reads.jsonl",
        &(lines.join("\n") + "\n"),
    );
    let run = w.consumers_json("2026-11-29");
    assert_eq!(
        standings(&run),
        vec![
            row("archive", "silent", None, None),
            row("atlas", "silent", None, None),
            row(
                "flood-model",
                "still-on",
                Some("1.1.0"),
                Some("2026-11-28T03:00:00.125Z")
            ),
            row(
                "router",
                "migrated",
                Some("2.0.0"),
                Some("2026-11-25T03:00:00Z")
            ),
        ]
    );
    let json = run.json();
    assert_eq!(json["scan"]["after_today"], 1);
    assert_eq!(json["scan"]["malformed"], 1);
    let err = run.stderr();
    assert!(
        err.contains("consumption/platform/reads.jsonl:5: `at` (field `ts`) is not a number"),
        "{err}"
    );
}

#[test]
fn rfc3339_with_fractions_and_offsets_keeps_the_instant_and_the_tie_rule() {
    let w = world_with(
        r#"[[consumption.source]]
path = "consumption/platform/*.jsonl"
fields = { at = "time", consumer = ["user.name"], dataset = "layer", contract = "v" }
"#,
    );
    // `user.name` is one key with a dot in it. flood-model reads the same instant twice,
    // written with two offsets: the later offset wins the tie (as with `...Z` text).
    w.write(
        "consumption/platform/reads.jsonl",
        concat!(
            r#"{"v":"1.1.0","layer":"roads","time":"2026-11-28T05:00:00.5+02:00","user.name":"flood-model"}"#, "\n",
            r#"{"user.name":"flood-model","time":"2026-11-28T03:00:00.500000Z","v":"1.1.0","layer":"roads"}"#, "\n",
            // 23:30 on the 29th at -01:00 is the 30th in UTC: after --today.
            r#"{"user.name":"atlas","time":"2026-11-29T23:30:00-01:00","v":"2.0.0","layer":"roads"}"#, "\n",
            // 00:30 on the 30th at +01:00 is the 29th in UTC: inside.
            r#"{"user.name":"atlas","time":"2026-11-30T00:30:00.123456789+01:00","v":"1.1.0","layer":"roads"}"#, "\n",
            r#"{"user":{"name":"router"},"time":"2026-11-28T03:00:00Z","v":"1.1.0","layer":"roads"}"#, "\n",
        ),
    );
    let run = w.consumers_json("2026-11-29");
    assert_eq!(
        standings(&run),
        vec![
            row("archive", "silent", None, None),
            row(
                "atlas",
                "still-on",
                Some("1.1.0"),
                Some("2026-11-30T00:30:00.123456789+01:00")
            ),
            row(
                "flood-model",
                "still-on",
                Some("1.1.0"),
                Some("2026-11-28T05:00:00.500+02:00")
            ),
            row("router", "silent", None, None),
        ]
    );
    let json = run.json();
    assert_eq!(json["scan"]["after_today"], 1);
    // The nested `user` object has no key `user.name`.
    assert_eq!(json["scan"]["malformed"], 1);
    run.assert_stderr_has(
        "reads.jsonl:5: not a JSON read record: no field `consumer` (field `[\"user.name\"]`)",
    );
}

#[test]
fn csv_columns_in_another_order_with_epoch_seconds_and_a_constant_contract() {
    let w = world_with(
        r#"[[consumption.source]]
path = "consumption/export/*.csv"
contract = "1.1.0"
fields = { at = { name = "epoch", unit = "s" }, consumer = "client_id", dataset = "layer" }

[[consumption.source]]
path = "consumption/export/v2/*.csv.gz"
contract = "2.0.0"
dataset = "roads"
fields = { at = "when", consumer = "principal" }
"#,
    );
    let secs = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap().timestamp();
    w.write(
        "consumption/export/reads.csv",
        &format!(
            "bytes,status,layer,client_id,agent,epoch,region\n\
             10,200,roads,flood-model,\"curl/8, x\",{},eu\n\
             10,200,rivers,atlas,gdal,{},eu\n\
             10,200,roads,atlas,gdal,{}.75,eu\n\
             10,200,roads,router,gdal,yesterday,eu\n",
            secs("2026-11-28T03:00:00Z"),
            secs("2026-11-28T03:00:00Z"),
            secs("2026-11-27T03:00:00Z"),
        ),
    );
    let gz = {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"when,principal\n2026-11-28T04:00:00+01:00,router\n")
            .unwrap();
        e.finish().unwrap()
    };
    std::fs::create_dir_all(w.root().join("consumption/export/v2")).unwrap();
    std::fs::write(w.root().join("consumption/export/v2/a.csv.gz"), gz).unwrap();
    let run = w.consumers_json("2026-11-29");
    assert_eq!(
        standings(&run),
        vec![
            row("archive", "silent", None, None),
            row(
                "atlas",
                "still-on",
                Some("1.1.0"),
                Some("2026-11-27T03:00:00.750Z")
            ),
            row(
                "flood-model",
                "still-on",
                Some("1.1.0"),
                Some("2026-11-28T03:00:00Z")
            ),
            row(
                "router",
                "current",
                Some("2.0.0"),
                Some("2026-11-28T04:00:00+01:00")
            ),
        ]
    );
    assert_eq!(run.json()["scan"]["malformed"], 1);
    run.assert_stderr_has(
        "consumption/export/reads.csv:5: `at` (field `epoch`) \"yesterday\" is not a number",
    );
}

#[test]
fn a_parquet_log_with_other_column_names_and_a_timestamp() {
    use arrow_array::types::TimestampMillisecondType;
    use arrow_array::{ArrayRef, PrimitiveArray, RecordBatch, StringArray};
    use std::sync::Arc;
    let w = world_with(
        r#"[[consumption.source]]
path = "consumption/lake/*.parquet"
dataset = "roads"
fields = { at = "event_time", consumer = "principal", contract = "schema_version" }
"#,
    );
    let ms = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .timestamp_millis()
    };
    let strings = |v: &[&str]| Arc::new(StringArray::from(v.to_vec())) as ArrayRef;
    let batch = RecordBatch::try_from_iter([
        ("bytes", strings(&["1", "2", "3"])),
        ("principal", strings(&["flood-model", "router", "atlas"])),
        (
            "event_time",
            Arc::new(
                PrimitiveArray::<TimestampMillisecondType>::from(vec![
                    ms("2026-11-28T03:00:00.250Z"),
                    ms("2026-11-25T03:00:00Z"),
                    ms("2027-03-01T00:00:00Z"),
                ])
                .with_timezone("UTC"),
            ) as ArrayRef,
        ),
        ("schema_version", strings(&["1.1.0", "2.0.0", "2.0.0"])),
    ])
    .unwrap();
    std::fs::create_dir_all(w.root().join("consumption/lake")).unwrap();
    let file = std::fs::File::create(w.root().join("consumption/lake/part-0.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    // A second file of the lake without the version column: both walks skip it, say so,
    // and answer from the first. The day-by-day walk (`timeline`) used to stop on it with
    // exit 3 while `consumers` answered.
    let broken = RecordBatch::try_from_iter([
        ("principal", strings(&["atlas"])),
        (
            "event_time",
            Arc::new(
                PrimitiveArray::<TimestampMillisecondType>::from(vec![ms("2026-11-28T05:00:00Z")])
                    .with_timezone("UTC"),
            ) as ArrayRef,
        ),
    ])
    .unwrap();
    let file = std::fs::File::create(w.root().join("consumption/lake/part-1.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, broken.schema(), None).unwrap();
    writer.write(&broken).unwrap();
    writer.close().unwrap();
    let skipped =
        "consumption/lake/part-1.parquet: cannot be read to its end: no column `schema_version`";
    let timeline = w.run("2026-11-29", &["--format", "json", "timeline", "roads"]);
    timeline.assert_code(0);
    timeline.assert_stderr_has(&format!("warning: {skipped}"));
    let run = w.consumers_json("2026-11-29");
    run.assert_stderr_has(skipped);
    assert_eq!(
        standings(&run),
        vec![
            row("archive", "silent", None, None),
            row("atlas", "silent", None, None),
            row(
                "flood-model",
                "still-on",
                Some("1.1.0"),
                Some("2026-11-28T03:00:00.250Z")
            ),
            row(
                "router",
                "current",
                Some("2.0.0"),
                Some("2026-11-25T03:00:00Z")
            ),
        ]
    );
    assert_eq!(run.json()["scan"]["after_today"], 1);
}

#[test]
fn identities_map_principals_to_consumers_and_unclaimed_principals_stay_unknown() {
    let w = world_with(
        r#"[[consumption.source]]
path = "consumption/platform/*.jsonl"
dataset = "roads"
fields = { consumer = "principal" }
"#,
    );
    w.append(
        "consumers.toml",
        "\n[consumers.hydrology-batch]\ncontacts = [\"batch@example.org\"]\n\
         identities = [\"arn:aws:sts::123456789012:assumed-role/flood-model/*\", \"key:7f3a9c\"]\n",
    );
    w.write(
        "consumption/platform/reads.jsonl",
        concat!(
            r#"{"at":"2026-11-20T03:00:00Z","principal":"arn:aws:sts::123456789012:assumed-role/flood-model/session-1","contract":"1.1.0"}"#, "\n",
            r#"{"at":"2026-11-26T03:00:00Z","principal":"key:7f3a9c","contract":"2.0.0"}"#, "\n",
            r#"{"at":"2026-11-27T03:00:00Z","principal":"atlas","contract":"1.1.0"}"#, "\n",
            r#"{"at":"2026-11-28T03:00:00Z","principal":"arn:aws:sts::123456789012:assumed-role/other-team/s","contract":"1.0.0"}"#, "\n",
            r#"{"at":"2026-11-28T04:00:00Z","principal":"arn:aws:sts::123456789012:assumed-role/other-team/s","contract":"1.1.0"}"#, "\n",
        ),
    );
    let run = w.consumers_json("2026-11-29");
    let got = standings(&run);
    assert!(
        got.contains(&row(
            "hydrology-batch",
            "migrated",
            Some("2.0.0"),
            Some("2026-11-26T03:00:00Z")
        )),
        "{got:?}"
    );
    assert!(got.contains(&row(
        "atlas",
        "still-on",
        Some("1.1.0"),
        Some("2026-11-27T03:00:00Z")
    )));
    let other = "arn:aws:sts::123456789012:assumed-role/other-team/s";
    assert!(
        got.contains(&row(
            other,
            "unknown",
            Some("1.1.0"),
            Some("2026-11-28T04:00:00Z")
        )),
        "{got:?}"
    );
    let json = run.json();
    let unknown = json["consumers"]
        .rows()
        .find(|c| c["consumer"] == other)
        .unwrap();
    assert_eq!(unknown["reads"], 2);
    // No principal of hydrology-batch is listed as a reader of its own.
    assert!(!got.iter().any(|r| r.0.starts_with("key:")), "{got:?}");
}

#[test]
fn check_reports_identities_claimed_twice_and_files_matched_by_two_sources() {
    let w = World::new(25);
    w.write(
        "contracts.toml",
        &format!(
            "{}\n[[consumption.source]]\npath = \"consumption/*.jsonl\"\ndataset = \"roads\"\n",
            world::config(25)
        ),
    );
    w.append(
        "consumers.toml",
        "\n[consumers.batch]\ncontacts = [\"batch@example.org\"]\nidentities = [\"role/*\"]\n\
         \n[consumers.batch-two]\ncontacts = [\"two@example.org\"]\nidentities = [\"role/nightly\"]\n",
    );
    let run = w.run("2026-11-29", &["--format", "json", "check"]);
    run.assert_code(1);
    let json = run.json();
    let findings: Vec<(String, Option<u64>, String)> = json["findings"]
        .rows()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["line"].as_u64(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let text = world::config(25);
    let source_line = text.lines().count() as u64 + 3;
    assert!(
        findings.iter().any(|(f, l, m)| f == "contracts.toml"
            && *l == Some(source_line)
            && m.contains("consumption log consumption/reads.jsonl is matched by")),
        "{findings:?}"
    );
    let registry = w.read("consumers.toml").unwrap();
    let nightly = registry
        .lines()
        .position(|l| l.contains("role/nightly"))
        .unwrap() as u64
        + 1;
    assert!(
        findings.iter().any(|(f, l, m)| f == "consumers.toml"
            && *l == Some(nightly)
            && m.contains("\"role/nightly\" is also claimed by consumer `batch`")),
        "{findings:?}"
    );
    // The scan reads the shared file once and says which principal is ambiguous.
    w.append(
        "consumption/reads.jsonl",
        "{\"at\":\"2026-11-28T03:00:00Z\",\"consumer\":\"role/nightly\",\"dataset\":\"roads\",\"contract\":\"1.1.0\"}\n",
    );
    let run = w.consumers_json("2026-11-29");
    run.assert_stderr_has(
        "principal \"role/nightly\" matches the identities of several consumers (batch, batch-two)",
    );
    // Five lines and the new one in the shared file, read once; three in platform.csv.
    assert_eq!(run.json()["scan"]["lines"], 9);
}

#[test]
fn bad_source_tables_are_refused_with_their_place() {
    for (table, says) in [
        (
            "path = \"a/*.jsonl\"\nformt = \"csv\"\n",
            "unknown field `formt`",
        ),
        (
            "path = \"a/*.jsonl\"\nformat = \"xml\"\n",
            "format \"xml\" is not one of",
        ),
        (
            "path = \"a/*.jsonl\"\nfields = { at = { name = \"ts\", unit = \"h\" } }\n",
            "fields.at: unit",
        ),
        (
            "path = \"a/*.jsonl\"\nfields = { user = \"u\" }\n",
            "unknown key `user`",
        ),
        (
            "path = \"a/*.jsonl\"\nfields = { consumer = \"a..b\" }\n",
            "no empty key",
        ),
        (
            "path = \"a/*.jsonl\"\ndataset = \"roads\"\nfields = { dataset = \"d\" }\n",
            "name one",
        ),
        (
            "path = \"a/*.jsonl\"\ncontract = \"two\"\n",
            "not a semantic version",
        ),
        (
            "path = \"a/*.jsonl\"\nprincipal = \"user\"\n",
            "applies to access logs",
        ),
        (
            "path = \"a/*.log\"\nformat = \"s3-access\"\n",
            "needs `match` templates",
        ),
        (
            "path = \"a/*.log\"\nformat = \"combined\"\nmatch = \"/d/{dataset}/{version}\"\n",
            "is not a placeholder",
        ),
        ("path = \"ftp://x/a.jsonl\"\n", "a URL must be"),
        ("path = \"s3://bucket/logs/\"\n", "needs a `format`"),
    ] {
        let w = World::new(25);
        w.write(
            "contracts.toml",
            &format!("{}\n[[consumption.source]]\n{table}", world::config(25)),
        );
        let run = w.run("2026-11-29", &["consumers", "roads"]);
        run.assert_code(2);
        let err = run.stderr();
        assert!(err.contains(says), "{table}: {err}");
        // The table starts two lines after the world's config; its keys follow.
        let first = world::config(25).lines().count() + 2;
        assert!(
            (first..first + 4).any(|l| err.contains(&format!("contracts.toml:{l}:"))),
            "{table}: no place in {err}"
        );
    }
}

#[test]
fn an_s3_access_log_gives_one_read_per_burst_through_identities() {
    let w = World::new(25);
    let config = world::config(25)
        .replace(
            "sources = [\"consumption/*.jsonl\", \"consumption/*.csv\"]\n",
            "",
        )
        .replace(
            "lookback_days = 365\n",
            "lookback_days = 365\nsame_read_seconds = 30\n",
        );
    w.write(
        "contracts.toml",
        &format!(
            r#"{config}
[[consumption.source]]
path = "consumption/s3/*"
format = "s3-access"
match = ["datasets/{{dataset}}/v{{contract}}/*.parquet"]
same_read_seconds = 120
"#
        ),
    );
    w.append(
        "consumers.toml",
        "\n[consumers.hydrology-batch]\ncontacts = [\"batch@example.org\"]\n\
         identities = [\"arn:aws:sts::123456789012:assumed-role/flood-model/*\"]\n",
    );
    let role = "arn:aws:sts::123456789012:assumed-role/flood-model/i-0abc";
    let v1 = "datasets/roads/v1.1.0/part-00000.parquet";
    let v2 = "datasets/roads/v2.0.0/part-00000.parquet";
    let mut first = String::new();
    // GDAL opening a GeoParquet file: a HEAD, then ranged GETs within seconds: one read.
    first += &world::s3_line(
        "27/Nov/2026:10:00:00",
        role,
        "REST.HEAD.OBJECT",
        v1,
        200,
        "-",
    );
    first += &world::s3_line(
        "27/Nov/2026:10:00:01",
        role,
        "REST.GET.OBJECT",
        v1,
        206,
        "65536",
    );
    first += &world::s3_line(
        "27/Nov/2026:10:00:02",
        role,
        "REST.GET.OBJECT",
        v1,
        206,
        "1048576",
    );
    // A listing and a failed read are no reads; a key no template matches is none either.
    first += &world::s3_line(
        "27/Nov/2026:10:05:00",
        role,
        "REST.GET.BUCKET",
        "-",
        200,
        "512",
    );
    first += &world::s3_line(
        "27/Nov/2026:10:06:00",
        role,
        "REST.GET.OBJECT",
        v2,
        403,
        "243",
    );
    first += &world::s3_line(
        "27/Nov/2026:10:07:00",
        role,
        "REST.GET.OBJECT",
        "README.md",
        200,
        "10",
    );
    // An anonymous reader of line 1, and a line cut short.
    first += &world::s3_line(
        "27/Nov/2026:11:00:00",
        "-",
        "REST.GET.OBJECT",
        v1,
        200,
        "100",
    );
    first += "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be open-data [27/Nov/2026:11:30:00 +0000] 192.0.2.1\n";
    // The next delivered object: the role moves to 2.0.0 the day after.
    let second = world::s3_line(
        "28/Nov/2026:09:00:00",
        role,
        "REST.GET.OBJECT",
        v2,
        200,
        "4096",
    );
    std::fs::create_dir_all(w.root().join("consumption/s3")).unwrap();
    std::fs::write(
        w.root()
            .join("consumption/s3/2026-11-27-10-15-00-5A1B2C3D4E5F6A7B"),
        first,
    )
    .unwrap();
    std::fs::write(
        w.root()
            .join("consumption/s3/2026-11-28-09-10-00-6B2C3D4E5F6A7B8C"),
        second,
    )
    .unwrap();
    let run = w.consumers_json("2026-11-29");
    let got = standings(&run);
    assert!(
        got.contains(&row(
            "hydrology-batch",
            "migrated",
            Some("2.0.0"),
            Some("2026-11-28T09:00:00Z")
        )),
        "{got:?}"
    );
    assert!(
        got.contains(&row(
            "anonymous",
            "unknown",
            Some("1.1.0"),
            Some("2026-11-27T11:00:00Z")
        )),
        "{got:?}"
    );
    let json = run.json();
    let batch = json["consumers"]
        .rows()
        .find(|c| c["consumer"] == "hydrology-batch")
        .unwrap();
    // The burst of three requests is one read; the 2.0.0 read is the second.
    assert_eq!(batch["reads"], 2, "{json}");
    // The cut line is reported with its file and line number.
    run.assert_stderr_has("2026-11-27-10-15-00-5A1B2C3D4E5F6A7B:8:");
}

/// The same 12,000 reads (over ten blocks of the scan) written in five layouts — Python's
/// `json.dumps` with extra fields, a nested consumer, the minified default, a mix of key orders,
/// spacing, escapes, tabs and CRLF line by line, and a CSV of seven columns in another order —
/// give one answer, and the reads and newest versions a count of the written reads gives.
#[test]
fn the_same_reads_in_every_layout_give_one_answer() {
    let mut rng = crate::common::Rng(0x5eed_1a70);
    let names: Vec<String> = ["flood-model", "atlas", "router", "archive", "ghost"]
        .iter()
        .map(|s| s.to_string())
        .chain((0..40).map(|k| format!("reader-{k:02}")))
        .collect();
    let offsets = ["Z", "+02:00", "-05:30"];
    let versions = ["1.0.0", "1.1.0", "2.0.0"];
    // (consumer, dataset, at as written, contract, instant in seconds): every instant apart,
    // so the newest read of a consumer is plain to count; some after --today.
    let base = chrono::DateTime::parse_from_rfc3339("2026-11-01T00:00:00Z").unwrap();
    let reads: Vec<(String, &str, String, &str, i64)> = (0..12_000)
        .map(|i| {
            let t = base + chrono::Duration::seconds(i * 211 + rng.below(200));
            let offset = offsets[rng.below(3)];
            let zone = chrono::FixedOffset::east_opt(match offset {
                "+02:00" => 7200,
                "-05:30" => -19800,
                _ => 0,
            })
            .unwrap();
            let ms = rng.below(1000);
            let text = format!(
                "{}.{ms:03}{offset}",
                t.with_timezone(&zone).format("%Y-%m-%dT%H:%M:%S")
            );
            let dataset = if rng.below(10) == 0 {
                "rivers"
            } else {
                "roads"
            };
            let consumer = names[rng.below(names.len())].clone();
            (
                consumer,
                dataset,
                text,
                versions[rng.below(3)],
                t.timestamp(),
            )
        })
        .collect();
    let today = "2026-11-29";
    let end = chrono::DateTime::parse_from_rfc3339("2026-11-30T00:00:00Z")
        .unwrap()
        .timestamp();
    let mut newest: std::collections::BTreeMap<&str, (i64, &str)> = Default::default();
    let mut counted = 0;
    for (c, d, _, v, t) in &reads {
        if *d == "roads" && *t < end {
            counted += 1;
            let e = newest.entry(c.as_str()).or_insert((*t, v));
            if *t > e.0 {
                *e = (*t, v);
            }
        }
    }

    let escaped = |s: &str| {
        s.chars()
            .map(|c| format!("\\u{:04x}", c as u32))
            .collect::<String>()
    };
    let mut layouts: Vec<(&str, &str, String)> = Vec::new();
    let mut text = String::new();
    for (c, d, at, v, _) in &reads {
        text += &format!(
            "{{\"consumer\": \"{c}\", \"dataset\": \"{d}\", \"at\": \"{at}\", \"contract\": \"{v}\", \"agent\": \"GDAL/3.8.4\", \"bytes\": {}}}\n",
            at.len() * 37
        );
    }
    layouts.push(("dumps.jsonl", "", text));
    let mut text = String::new();
    for (c, d, at, v, _) in &reads {
        text += &format!(
            "{{\"contract\": \"{v}\", \"client\": {{\"id\": \"{c}\", \"ip\": \"10.0.0.1\"}}, \"at\": \"{at}\", \"status\": 200, \"dataset\": \"{d}\"}}\n"
        );
    }
    layouts.push((
        "nested.jsonl",
        "fields = { consumer = \"client.id\" }\n",
        text,
    ));
    let mut text = String::new();
    for (c, d, at, v, _) in &reads {
        text += &format!(
            "{{\"at\":\"{at}\",\"consumer\":\"{c}\",\"dataset\":\"{d}\",\"contract\":\"{v}\"}}\n"
        );
    }
    layouts.push(("minified.jsonl", "", text));
    let mut text = String::new();
    for (c, d, at, v, _) in &reads {
        let consumer = if rng.below(20) == 0 {
            escaped(c)
        } else {
            c.clone()
        };
        let mut members = [
            format!("\"at\":\"{at}\""),
            format!("\"consumer\":\"{consumer}\""),
            format!("\"dataset\":\"{d}\""),
            format!("\"contract\":\"{v}\""),
            "\"x\":{\"at\":[1,2.5e3,null],\"consumer\":\"nobody\"}".to_string(),
        ];
        for k in (1..members.len()).rev() {
            members.swap(k, rng.below(k + 1));
        }
        let gap = [",", ", ", ",  ", ",\t"][rng.below(4)];
        let eol = if rng.below(10) == 0 { "\r\n" } else { "\n" };
        text += &format!("{{{}}}{eol}", members.join(gap));
    }
    layouts.push(("mixed.jsonl", "", text));
    let mut text = "status,bytes,contract,agent,at,dataset,consumer\n".to_string();
    for (c, d, at, v, _) in &reads {
        text += &format!("200,{},{v},QGIS/3.34,{at},{d},{c}\n", at.len());
    }
    layouts.push(("columns.csv", "", text));

    let mut answers = Vec::new();
    for (file, mapping, text) in &layouts {
        let w = world_with(&format!(
            "[[consumption.source]]\npath = \"consumption/layouts/{file}\"\n{mapping}"
        ));
        w.write(&format!("consumption/layouts/{file}"), text);
        let run = w.consumers_json(today);
        let json = run.json();
        assert_eq!(json["scan"]["malformed"], 0, "{file}: {}", run.stderr());
        assert_eq!(json["scan"]["reads"], counted, "{file}");
        let mut got: Vec<(String, Option<String>, Option<String>)> = json["consumers"]
            .rows()
            .map(|c| {
                (
                    c["consumer"].as_str().unwrap().to_string(),
                    world::text(c, "version"),
                    world::text(c, "last_read"),
                )
            })
            .collect();
        got.sort();
        // The newest version of each consumer with a read, as the written reads say.
        let versions: Vec<(String, String)> = got
            .iter()
            .filter_map(|(c, v, _)| Some((c.clone(), v.clone()?)))
            .collect();
        let want: Vec<(String, String)> = newest
            .iter()
            .map(|(c, (_, v))| (c.to_string(), v.to_string()))
            .collect();
        assert_eq!(versions, want, "{file}");
        answers.push((file, got));
    }
    for (file, got) in &answers[1..] {
        assert_eq!(got, &answers[0].1, "{file} against {}", answers[0].0);
    }
}

/// Settings an access log's format cannot read are refused when `contracts.toml` is read, by
/// `check` as by every command, each at its key and all at once. They were found only once a
/// command read the logs, as "cannot be read yet by this build", and `check` passed them.
#[test]
fn access_log_settings_the_format_cannot_read_are_refused_by_check_at_their_keys() {
    let w = World::new(25);
    let tables = "[[consumption.source]]\npath = \"s3/*\"\nformat = \"s3-access\"\n\
                  match = \"/d/{dataset}/{contract}/**\"\nprincipal = \"requestor\"\n\n\
                  [[consumption.source]]\npath = \"web/*.log\"\nformat = \"combined\"\n\
                  match = \"/d/{dataset}/{contract}/**\"\n\
                  pattern = '$remote_addr \"$request\" $status'\n";
    // `check` reports them as findings (exit 1); a command refuses to run (exit 2).
    w.assert_sources_refused(tables, |config| {
        vec![
            format!(
                "contracts.toml:{}:13",
                world::line_of(config, "principal = ")
            ),
            "\"requestor\"".to_string(),
            format!("contracts.toml:{}:11", world::line_of(config, "pattern = ")),
            "no time".to_string(),
        ]
    });
}
