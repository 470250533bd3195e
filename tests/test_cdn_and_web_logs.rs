//! CloudFront standard logs and the nginx/Apache `combined` format end to end, as
//! `test_consumption_sources.rs` runs S3 access logs: logs written here line by line in each
//! format's documented field order, read by the real binary through `[[consumption.source]]`
//! tables, the standings, read counts and per-source counts (`scan.sources`) checked against
//! what the lines say.
//!
//! Field lists: CloudFront's from AWS's "Standard logging (access logs)" reference, log file
//! fields 1-33 (docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/
//! standard-logs-reference.html); `combined` is nginx's predefined `log_format combined`
//! (nginx.org/en/docs/http/ngx_http_log_module.html#log_format), which Apache's `combined`
//! `LogFormat` writes too.

use std::io::Write;

use crate::common::world;
use crate::common::Rows;

use world::World;

const TODAY: &str = "2026-11-29";
const V1: &str = "/datasets/roads/v1.1.0/part-00000.parquet";
const V2: &str = "/datasets/roads/v2.0.0/part-00000.parquet";

/// The `#Version` and `#Fields` header CloudFront writes at the top of each standard log.
const CF_HEADER: &str = "#Version: 1.0\n#Fields: date time x-edge-location sc-bytes c-ip \
     cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query \
     cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes \
     time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type \
     cs-protocol-version fle-status fle-encrypted-fields c-port time-to-first-byte \
     x-edge-detailed-result-type sc-content-type sc-content-len sc-range-start sc-range-end\n";

/// One CloudFront request line: the 33 fields of the header, tab-separated, the user agent
/// URL-encoded as CloudFront writes it.
fn cf_line(at: &str, ip: &str, method: &str, stem: &str, status: u16) -> String {
    let (date, time) = at.split_once(' ').unwrap();
    let status = status.to_string();
    let fields = [
        date,
        time,
        "FRA56-P1",
        "16781",
        ip,
        method,
        "d111111abcdef8.cloudfront.net",
        stem,
        &status,
        "-",
        "GDAL/3.8.4%20(Linux%20x86_64)",
        "-",
        "-",
        "Miss",
        "SOX4xwn4XV6Q4rgb7XiVGOHms_BGlTAC4KyHmureZmBNrjGdRLiNIQ==",
        "data.example.org",
        "https",
        "212",
        "0.004",
        "-",
        "TLSv1.3",
        "TLS_AES_128_GCM_SHA256",
        "Miss",
        "HTTP/2.0",
        "-",
        "-",
        "53422",
        "0.004",
        "Miss",
        "application/vnd.apache.parquet",
        "16384",
        "0",
        "16383",
    ];
    assert_eq!(fields.len(), 33, "the documented legacy field count");
    fields.join("\t") + "\n"
}

/// One line of nginx's `combined` format: `$remote_addr - $remote_user [$time_local]
/// "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`.
fn combined_line(addr: &str, user: &str, time: &str, request: &str, status: u16) -> String {
    format!(
        "{addr} - {user} [{time}] \"{request}\" {status} 4096 \"-\" \"GDAL/3.8.4 (Linux x86_64)\"\n"
    )
}

fn gzip(text: &str) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

fn put(w: &World, rel: &str, bytes: &[u8]) {
    let p = w.root().join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// (consumer, status, version, last read, reads) of each standing, sorted.
type Standing = (String, String, Option<String>, Option<String>, u64);

fn standings(run: &world::Run) -> Vec<Standing> {
    let mut out = world::standings(run, |c| {
        (
            c["consumer"].as_str().unwrap().to_string(),
            c["status"].as_str().unwrap().to_string(),
            world::text(c, "version"),
            world::text(c, "last_read"),
            c["reads"].as_u64().unwrap_or(0),
        )
    });
    out.sort();
    out
}

fn row(c: &str, s: &str, v: Option<&str>, at: Option<&str>, reads: u64) -> Standing {
    (
        c.to_string(),
        s.to_string(),
        v.map(str::to_string),
        at.map(str::to_string),
        reads,
    )
}

/// (consumer, status, version, reads) of a list of standings in a `can-retire` report.
fn readers(list: &serde_json::Value) -> Vec<(String, String, String, u64)> {
    list.rows()
        .map(|s| {
            let text = |k: &str| s[k].as_str().unwrap_or_default().to_string();
            (
                text("consumer"),
                text("status"),
                text("version"),
                s["reads"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// What `scan.sources` says of the source `path`: (files, lines, requests, reads,
/// same_read, not_read method, status, unmatched).
fn source_counts(run: &world::Run, path: &str) -> [u64; 8] {
    let json = run.json();
    let s = json["scan"]["sources"]
        .rows()
        .find(|s| s["source"] == path)
        .unwrap_or_else(|| panic!("no source {path} in {json:#}"))
        .clone();
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or_else(|| panic!("{s:#}"));
    [
        n(&s["files"]),
        n(&s["lines"]),
        n(&s["requests"]),
        n(&s["reads"]),
        n(&s["same_read"]),
        n(&s["not_read"]["method"]),
        n(&s["not_read"]["status"]),
        n(&s["not_read"]["unmatched"]),
    ]
}

#[test]
fn a_gzipped_cloudfront_log_gives_one_read_per_burst_by_client_address() {
    let w = World::new(25);
    w.read_only_sources(
        "[[consumption.source]]\npath = \"consumption/cf/*.gz\"\nformat = \"cloudfront\"\n\
         match = [\"/datasets/{dataset}/v{contract}/*.parquet\"]\n",
    );
    // No `principal`: CloudFront's default, the client address `c-ip`.
    let hydro = "2001:db8::44";
    let stranger = "198.51.100.23";
    w.append(
        "consumers.toml",
        &format!(
            "\n[consumers.hydrology-batch]\ncontacts = [\"batch@example.org\"]\n\
             identities = [\"{hydro}\"]\n"
        ),
    );
    let mut first = CF_HEADER.to_string();
    // A HEAD and two ranged GETs within two seconds: one read (the default 60 s window).
    first += &cf_line("2026-11-27 10:00:00", hydro, "GET", V1, 206);
    first += &cf_line("2026-11-27 10:00:01", hydro, "GET", V1, 206);
    first += &cf_line("2026-11-27 10:00:02", hydro, "HEAD", V1, 200);
    // Not reads: a POST (method), a refused GET (status), a page no template maps (unmatched).
    first += &cf_line("2026-11-27 10:05:00", hydro, "POST", V1, 200);
    first += &cf_line("2026-11-27 10:06:00", hydro, "GET", V2, 403);
    first += &cf_line("2026-11-27 10:07:00", hydro, "GET", "/index.html", 200);
    // An address nobody claims; then hydro again two hours on: a read of its own.
    first += &cf_line("2026-11-27 11:00:00", stranger, "GET", V1, 200);
    first += &cf_line("2026-11-27 12:00:00", hydro, "GET", V1, 200);
    // The next hour's file, under its own header: hydro moves to 2.0.0.
    let second = CF_HEADER.to_string() + &cf_line("2026-11-28 09:00:00", hydro, "GET", V2, 200);
    put(
        &w,
        "consumption/cf/E2EXAMPLE.2026-11-27-10.a1b2c3d4.gz",
        &gzip(&first),
    );
    put(
        &w,
        "consumption/cf/E2EXAMPLE.2026-11-28-09.b2c3d4e5.gz",
        &gzip(&second),
    );

    let run = w.consumers_json(TODAY);
    assert_eq!(
        standings(&run),
        vec![
            row(
                stranger,
                "unknown",
                Some("1.1.0"),
                Some("2026-11-27T11:00:00Z"),
                1
            ),
            row("archive", "silent", None, None, 0),
            row("atlas", "silent", None, None, 0),
            row("flood-model", "silent", None, None, 0),
            row(
                "hydrology-batch",
                "migrated",
                Some("2.0.0"),
                Some("2026-11-28T09:00:00Z"),
                3
            ),
            row("router", "silent", None, None, 0),
        ]
    );
    // 2 files; 9 request lines (headers are not requests); 6 requests that count, making 4
    // reads (the burst of three, the stranger's, hydro's two later ones), 2 of them
    // continuing the burst; one not-read of each reason.
    assert_eq!(
        source_counts(&run, "consumption/cf/*.gz"),
        [2, 9, 6, 4, 2, 1, 1, 1]
    );
    assert_eq!(run.json()["scan"]["malformed"], 0, "{}", run.stderr());

    // Line 1's only registered reader moved on the 28th; the address nobody claims still
    // reads it, but an unknown reader does not hold a line: it can retire, since the 28th.
    let gate = w.can_retire_line_1_json(TODAY);
    gate.assert_code(0);
    gate.assert_stderr_has(&format!(
        "`{stranger}` reads line 1 of roads but is not in consumers.toml"
    ));
    let j = gate.json();
    assert_eq!(j["can_retire"], true, "{j:#}");
    assert_eq!(j["since"], "2026-11-28", "{j:#}");
    assert_eq!(j["holders"], serde_json::json!([]), "{j:#}");
    assert_eq!(
        readers(&j["not_holding"]),
        vec![(
            stranger.to_string(),
            "unknown".to_string(),
            "1.1.0".to_string(),
            1
        )],
        "{j:#}"
    );
}

#[test]
fn nginx_combined_and_a_custom_pattern_with_an_appended_key_read_side_by_side() {
    let w = World::new(25);
    // The combined pattern with `"$http_x_api_key"` appended, the key as principal.
    let pattern = "$remote_addr - $remote_user [$time_local] \"$request\" $status \
                   $body_bytes_sent \"$http_referer\" \"$http_user_agent\" \"$http_x_api_key\"";
    w.read_only_sources(&format!(
        "[[consumption.source]]\npath = \"consumption/nginx/access.log*\"\nformat = \"combined\"\n\
         match = [\"/datasets/{{dataset}}/v{{contract}}/*.parquet\"]\n\n\
         [[consumption.source]]\npath = \"consumption/api/access.log*\"\nformat = \"combined\"\n\
         pattern = '{pattern}'\nprincipal = \"http_x_api_key\"\n\
         match = [\"/files/{{dataset}}-{{contract}}.parquet\"]\n"
    ));
    w.append(
        "consumers.toml",
        "\n[consumers.census-joins]\ncontacts = [\"stats@example.org\"]\n\
         identities = [\"census-bot\"]\n",
    );
    // atlas (registered by the world) is known by its API key.
    let consumers = w.read("consumers.toml").unwrap().replace(
        "contacts = [\"atlas@example.org\"]",
        "contacts = [\"atlas@example.org\"]\nidentities = [\"k-atlas-7f3a\"]",
    );
    w.write("consumers.toml", &consumers);

    // nginx's combined format; the principal is `$remote_user` (basic auth), `-` anonymous.
    let day = |t: &str| format!("27/Nov/2026:{t} +0100");
    let get = |p: &str| format!("GET {p} HTTP/1.1");
    let mut nginx = String::new();
    nginx += &combined_line("192.0.2.10", "census-bot", &day("10:00:00"), &get(V1), 206);
    nginx += &combined_line("192.0.2.10", "census-bot", &day("10:00:01"), &get(V1), 206);
    // Half an hour later: a second read.
    nginx += &combined_line("192.0.2.10", "census-bot", &day("10:30:00"), &get(V1), 200);
    nginx += &combined_line("198.51.100.4", "-", &day("11:00:00"), &get(V2), 200);
    let post = format!("POST {V1} HTTP/1.1");
    nginx += &combined_line("192.0.2.10", "census-bot", &day("11:10:00"), &post, 405);
    nginx += &combined_line("192.0.2.10", "census-bot", &day("11:20:00"), &get(V1), 401);
    nginx += &combined_line(
        "192.0.2.10",
        "census-bot",
        &day("11:30:00"),
        &get("/robots.txt"),
        200,
    );
    put(&w, "consumption/nginx/access.log", nginx.as_bytes());

    // The custom format: the combined fields, the key, and a further field no pattern names.
    let api = |time: &str, request: &str, status: u16, key: &str| {
        combined_line(
            "203.0.113.9",
            "-",
            &format!("28/Nov/2026:{time} -0500"),
            request,
            status,
        )
        .replace('\n', &format!(" \"{key}\" rt=0.012\n"))
    };
    let v2 = "/files/roads-2.0.0.parquet";
    let mut log = String::new();
    log += &api("09:00:00", &get(v2), 200, "k-atlas-7f3a");
    log += &api(
        "09:00:30",
        &format!("HEAD {v2} HTTP/1.1"),
        200,
        "k-atlas-7f3a",
    );
    log += &api(
        "09:10:00",
        &get("/files/roads-1.1.0.parquet"),
        200,
        "k-unknown-99",
    );
    log += &api(
        "09:20:00",
        &format!("DELETE {v2} HTTP/1.1"),
        204,
        "k-atlas-7f3a",
    );
    log += &api("09:30:00", &get(v2), 500, "k-atlas-7f3a");
    log += &api("09:40:00", &get("/files/readme.txt"), 200, "k-atlas-7f3a");
    put(&w, "consumption/api/access.log.1.gz", &gzip(&log));

    let run = w.consumers_json(TODAY);
    assert_eq!(
        standings(&run),
        vec![
            row(
                "anonymous",
                "unknown",
                Some("2.0.0"),
                Some("2026-11-27T11:00:00+01:00"),
                1
            ),
            row("archive", "silent", None, None, 0),
            row(
                "atlas",
                "current",
                Some("2.0.0"),
                Some("2026-11-28T09:00:30-05:00"),
                1
            ),
            row(
                "census-joins",
                "still-on",
                Some("1.1.0"),
                Some("2026-11-27T10:30:00+01:00"),
                2
            ),
            row("flood-model", "silent", None, None, 0),
            row(
                "k-unknown-99",
                "unknown",
                Some("1.1.0"),
                Some("2026-11-28T09:10:00-05:00"),
                1
            ),
            row("router", "silent", None, None, 0),
        ]
    );
    // nginx: 7 lines; 4 requests count, making 3 reads (census-bot's burst of two and its
    // read half an hour on, the anonymous one), 1 continuing a read; a POST, a 401, robots.txt.
    assert_eq!(
        source_counts(&run, "consumption/nginx/access.log*"),
        [1, 7, 4, 3, 1, 1, 1, 1]
    );
    // The custom format: 6 lines; atlas's GET and HEAD 30 s apart (one read) and the unknown
    // key's read; a DELETE, a 500, a path no template maps.
    assert_eq!(
        source_counts(&run, "consumption/api/access.log*"),
        [1, 6, 3, 2, 1, 1, 1, 1]
    );
    assert_eq!(run.json()["scan"]["malformed"], 0, "{}", run.stderr());

    // census-joins holds line 1; the unknown key reads it too but holds nothing.
    let gate = w.can_retire_line_1_json(TODAY);
    gate.assert_code(1);
    let j = gate.json();
    assert_eq!(j["can_retire"], false, "{j:#}");
    assert_eq!(
        world::counted(&j["holders"]),
        vec![world::counted_row("census-joins", "still-on", 2, 1)],
        "{j:#}"
    );
    assert_eq!(
        readers(&j["not_holding"]),
        vec![(
            "k-unknown-99".to_string(),
            "unknown".to_string(),
            "1.1.0".to_string(),
            1
        )],
        "{j:#}"
    );
}
