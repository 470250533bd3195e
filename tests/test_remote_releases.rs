//! Releases in object storage, against a real S3-compatible server on loopback (moto): the
//! profile of an object equals the profile of the same local file, a Parquet profile reads
//! the footer and the column chunks it needs, prefixes and globs are one release, failures
//! are classified, and credentials never reach the terminal.

use crate::common;
use crate::common::data;
use crate::common::remote_support;
use crate::common::Rows;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use common::{Run, World};
use remote_support::{tree, Moto, BUCKET};
use serde_json::Value;

fn run(env: &World, moto: Option<&Moto>, args: &[&str]) -> Run {
    let mut c = env.command(env.home());
    if let Some(m) = moto {
        m.env(&mut c);
    }
    let out = c.args(args).output().expect("binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A profile without its `files` (the one field that names where the data was read from).
fn without_files(mut v: Value) -> (Value, Value) {
    let files = v
        .as_object_mut()
        .and_then(|o| o.remove("files"))
        .unwrap_or(Value::Null);
    (v, files)
}

fn local_profile(env: &World, path: &Path) -> Value {
    let r = run(
        env,
        None,
        &["--format", "json", "profile", path.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    without_files(r.json()).0
}

/// `read N of M bytes (…) of URL in R requests`, the line `--verbose` prints per object.
fn read_line(stderr: &str, url: &str) -> (u64, u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("read ") && l.contains(&format!(" of {url} in ")))
        .unwrap_or_else(|| panic!("no read line for {url} in:\n{stderr}"));
    let w: Vec<&str> = line.split_whitespace().collect();
    let n = |i: usize| w[i].parse::<u64>().unwrap_or_else(|_| panic!("{line}"));
    (n(1), n(3), n(w.len() - 2))
}

#[test]
fn the_profile_of_an_object_equals_the_profile_of_the_local_file_in_every_format() {
    let moto = Moto::start();
    let env = World::empty();
    let files = [
        "naturalearth/countries.parquet",
        "naturalearth/countries.fgb",
        "naturalearth/countries.geojson",
        "naturalearth/countries.gpkg",
        "naturalearth/countries.shp",
        "made/cities_rowgroups.parquet",
        "made/typed_nulls.parquet",
        "made/typed_nulls.fgb",
        "made/null_geom.fgb",
    ];
    let mut uploads: Vec<(String, PathBuf)> =
        files.iter().map(|f| (f.to_string(), data(f))).collect();
    for ext in ["shx", "dbf", "prj", "cpg"] {
        let f = format!("naturalearth/countries.{ext}");
        uploads.push((f.clone(), data(&f)));
    }
    let refs: Vec<(String, &Path)> = uploads
        .iter()
        .map(|(k, p)| (k.clone(), p.as_path()))
        .collect();
    moto.upload(&refs);
    for f in files {
        let url = format!("s3://{BUCKET}/{f}");
        let r = run(&env, Some(&moto), &["--format", "json", "profile", &url]);
        assert_eq!(r.code, 0, "{url}: {}", r.stderr);
        let (remote, listed) = without_files(r.json());
        assert_eq!(listed, serde_json::json!([url]), "{url}");
        assert_eq!(remote, local_profile(&env, &data(f)), "{url}");
    }
}

#[test]
fn a_parquet_profile_reads_the_footer_and_the_geometry_column_chunk_only() {
    let moto = Moto::start();
    let env = World::empty();
    let path = data("naturalearth/countries.parquet");
    moto.upload(&[
        ("countries.parquet".into(), &path),
        ("countries.fgb".into(), &data("naturalearth/countries.fgb")),
    ]);
    let url = format!("s3://{BUCKET}/countries.parquet");
    let r = run(
        &env,
        Some(&moto),
        &["--format", "json", "profile", "--verbose", &url],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (read, size, requests) = read_line(&r.stderr, &url);
    assert_eq!(size, std::fs::metadata(&path).unwrap().len());
    // Worked out from `pyarrow.parquet.ParquetFile(...).metadata`: every attribute's row
    // group statistics state its null count, so only the geometry column chunk is decoded
    // (total_compressed_size 173286, the last chunk before the footer); the footer is 9587
    // bytes (serialized_size) plus its length and magic (8); the leading magic is 4 bytes.
    // The 64 KiB tail prefetch lies inside the chunk and the footer, so nothing is read twice.
    assert_eq!(read, 4 + 173_286 + 9_587 + 8, "{}", r.stderr);
    assert!(read < size);
    // The leading magic, the tail with the footer, the rest of the geometry chunk.
    assert_eq!(requests, 3, "{}", r.stderr);
    // The total line, printed without --verbose too.
    let quiet = run(&env, Some(&moto), &["profile", &url]);
    assert!(
        quiet
            .stderr
            .contains(&format!("read {read} of {size} bytes")),
        "{}",
        quiet.stderr
    );

    // FlatGeobuf in large sequential ranges: the whole 206 KiB file in one request.
    let fgb = format!("s3://{BUCKET}/countries.fgb");
    let r = run(&env, Some(&moto), &["profile", "--verbose", &fgb]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(read_line(&r.stderr, &fgb), (211_216, 211_216, 1));
}

#[test]
fn a_prefix_a_folder_and_a_glob_of_hive_partitions_are_one_release() {
    let moto = Moto::start();
    let env = World::empty();
    let parts = tree(&data("partitions/countries_hive"), "countries/");
    assert!(parts.iter().any(|(k, _)| k == "countries/_SUCCESS"));
    let refs: Vec<(String, &Path)> = parts
        .iter()
        .map(|(k, p)| (k.clone(), p.as_path()))
        .collect();
    moto.upload(&refs);
    let whole = local_profile(&env, &data("naturalearth/countries.parquet"));
    for arg in [
        format!("s3://{BUCKET}/countries/"),
        format!("s3://{BUCKET}/countries"),
        format!("s3://{BUCKET}/countries/continent=*/*.parquet"),
        format!("s3://{BUCKET}/**/part-0.parquet"),
    ] {
        let r = run(&env, Some(&moto), &["--format", "json", "profile", &arg]);
        assert_eq!(r.code, 0, "{arg}: {}", r.stderr);
        let (merged, files) = without_files(r.json());
        let files: Vec<&str> = files.rows().map(|f| f.as_str().unwrap()).collect();
        assert_eq!(files.len(), 8, "{arg}: {files:?}");
        assert!(files
            .iter()
            .all(|f| f.starts_with(&format!("s3://{BUCKET}/countries/continent="))));
        assert_eq!(merged, whole, "{arg}");
        r.assert_stderr_has("of 8 objects");
    }
    let r = run(
        &env,
        Some(&moto),
        &["profile", &format!("s3://{BUCKET}/countries/*.fgb")],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    r.assert_stderr_has("matches no data file");
}

#[test]
fn an_http_url_is_read_by_range_and_cannot_be_listed() {
    let moto = Moto::start();
    let env = World::empty();
    let path = data("naturalearth/countries.parquet");
    // A public object: moto serves it to anonymous requests, a plain web server here.
    moto.upload_public("pub/countries.parquet", &path);
    let url = format!("{}/{BUCKET}/pub/countries.parquet", moto.endpoint());
    let r = run(
        &env,
        None,
        &["--format", "json", "profile", "--verbose", &url],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (remote, files) = without_files(r.json());
    assert_eq!(files, serde_json::json!([url]));
    assert_eq!(remote, local_profile(&env, &path));
    let (read, size, _) = read_line(&r.stderr, &url);
    assert!(read < size, "{}", r.stderr);

    let r = run(
        &env,
        None,
        &["profile", &format!("{}/{BUCKET}/pub/", moto.endpoint())],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    r.assert_stderr_has("names one object");
}

#[test]
fn a_missing_object_is_bad_input_and_an_unreachable_store_the_environment() {
    let moto = Moto::start();
    let env = World::empty();
    let r = run(
        &env,
        Some(&moto),
        &["profile", &format!("s3://{BUCKET}/nothing/here.parquet")],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    r.assert_stderr_has(&format!("s3://{BUCKET}/nothing/here.parquet"));
    let r = run(
        &env,
        Some(&moto),
        &["profile", "s3://no-such-bucket/a.parquet"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = run(
        &env,
        Some(&moto),
        &["profile", "ftp://example.org/a.parquet"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    r.assert_stderr_has("unsupported URL scheme");

    // Nothing listens on a port just freed: connection refused, after the bounded retries.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut c = env.command(env.home());
    moto.env(&mut c);
    let out = c
        .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{closed}"))
        .args(["profile", &format!("s3://{BUCKET}/a.parquet")])
        .output()
        .unwrap();
    common::assert_exit(&out, 3, "");
}

/// The one fake here: a server that answers every request 403 with the request's headers in
/// the body, as a misconfigured proxy does — the fault that would print the credentials.
#[test]
fn credentials_never_reach_the_terminal() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(64) {
            let Ok(mut s) = stream else { continue };
            let mut head = String::new();
            let mut r = BufReader::new(s.try_clone().unwrap());
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let body = format!(
                "<Error><Code>AccessDenied</Code><Echo>{}</Echo></Error>",
                head.replace("\r\n", " | ")
            );
            let _ = write!(
                s,
                "HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let env = World::empty();
    let key_id = "AKIASECRETKEYID77777";
    let secret = "wJalrXUtnFEMI-secret-value-9999";
    let token = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN123456";
    for arg in [
        format!("s3://{BUCKET}/a.parquet"),
        format!("s3://{BUCKET}/prefix/"),
    ] {
        let out = env
            .command(env.home())
            .env("AWS_ACCESS_KEY_ID", key_id)
            .env("AWS_SECRET_ACCESS_KEY", secret)
            .env("AWS_SESSION_TOKEN", token)
            .env("AWS_DEFAULT_REGION", "us-east-1")
            .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
            .env("AWS_ALLOW_HTTP", "true")
            .args(["profile", "--verbose", &arg])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(stderr.contains("refused the credentials"), "{stderr}");
        for s in [key_id, secret, token] {
            assert!(
                !stderr.contains(s) && !stdout.contains(s),
                "{s} printed:\n{stderr}"
            );
        }
        // The listing's reply echoes the signed headers: the proof the fault was injected.
        if arg.ends_with('/') {
            assert!(stderr.contains("Credential=***"), "{stderr}");
        }
    }
}

#[test]
fn validate_checks_a_partitioned_release_in_object_storage() {
    let moto = Moto::start();
    let parts = tree(&data("partitions/countries_hive"), "world/2026-11/");
    let refs: Vec<(String, &Path)> = parts
        .iter()
        .map(|(k, p)| (k.clone(), p.as_path()))
        .collect();
    moto.upload(&refs);
    let env = World::empty();
    // What the countries satisfy, then a crs they do not.
    let store = common::world_store(&env);
    let url = format!("s3://{BUCKET}/world/2026-11/");
    let validate = || {
        let mut c = env.command(&store);
        moto.env(&mut c);
        let out = c.args(common::VALIDATE_WORLD).arg(&url).output().unwrap();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), report)
    };
    let (code, report) = validate();
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["profile"]["feature_count"], 177, "{report}");

    common::world_crs(&env, &store, "EPSG:3857", "a crs the release does not have");
    let (code, report) = validate();
    assert_eq!(code, Some(1), "{report}");
}

/// gs:// and az:// reach their stores' builders, which read the environment: without an
/// account or with a broken key file they stop before any request (no network is needed).
#[test]
fn gs_and_az_urls_use_their_clouds_environment() {
    let env = World::empty();
    let key = env.home().join("service-account.json");
    std::fs::write(&key, "{\"type\": \"service_account\"}").unwrap();
    let out = env
        .command(env.home())
        .env("GOOGLE_SERVICE_ACCOUNT", &key)
        .args(["profile", "gs://bucket/roads.parquet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("gs://bucket/roads.parquet") && stderr.contains("service account"),
        "{stderr}"
    );
    let out = env
        .command(env.home())
        .args(["profile", "az://container/roads.fgb"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("Account must be specified"), "{stderr}");
}
