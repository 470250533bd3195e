//! The integration tests, one module per command or subject, in one binary (as jj's
//! `cli/tests/runner.rs`): the crate is linked into one test program, not one per file.
//!
//! The shared harness is one tree, `common/`: the hermetic environment with the checks of a
//! child process and of a JSON report (`process.rs`, `json.rs`, re-exported by `common`), and
//! as its submodules the hand-laid store worlds (`common::world`), the output checks
//! (`common::look`) and the SMTP, webhook and object-store servers
//! (`common::notify_support`, `common::webhook`, `common::remote_support`). A new test file is a `mod` line here;
//! `every_test_file_is_in_the_runner` fails on a `tests/*.rs` file this list forgets.

mod common;

mod test_access_logs;
mod test_action;
mod test_announcement;
mod test_attribute_evidence;
mod test_blind_sources;
mod test_can_remove;
mod test_can_retire;
mod test_cdn_and_web_logs;
mod test_check_findings;
mod test_ci_output;
mod test_closed_pipe;
mod test_completions;
mod test_consumers;
mod test_consumption_sources;
mod test_corpus;
mod test_dask_example;
mod test_dates;
mod test_dates_consumers;
mod test_dates_properties;
mod test_deprecation;
mod test_diff;
mod test_doc_examples;
mod test_doc_help;
mod test_envelopes;
mod test_export_odcs;
mod test_export_odcs_graded;
mod test_export_stac;
mod test_file_circles;
mod test_first_steps;
mod test_fuzz_gpkg_parquet;
mod test_geoparquet_metadata;
mod test_impact;
mod test_import_odcs;
mod test_mutation;
mod test_no_html_in_cli;
mod test_notice;
mod test_notify_channels;
mod test_notify_crash;
mod test_notify_deprecation;
mod test_notify_e2e;
mod test_notify_faults;
mod test_notify_milestones;
mod test_notify_preview;
mod test_notify_tls;
mod test_notify_told;
mod test_notify_webhook_faults;
mod test_notify_webhooks;
mod test_parse;
mod test_partitions;
mod test_pgaudit;
mod test_postgis;
mod test_postgis_guide;
mod test_postgis_parity;
mod test_postgis_server;
mod test_postgis_tls;
mod test_pr_comment;
mod test_properties;
mod test_regressions;
mod test_release_gpkg_parquet;
mod test_release_merge;
mod test_release_profile;
mod test_release_validate;
mod test_remote_logs;
mod test_remote_releases;
mod test_review;
mod test_rules;
mod test_schema;
mod test_site;
mod test_snapshots;
mod test_store;
mod test_store_faults;
mod test_summaries;
mod test_terminal;
mod test_timeline;
mod test_trailing_spaces;
mod test_waivers;
mod test_warehouse_sources;
mod test_webhook_payloads;

/// The files that are not modules of this runner: the runner itself, and the tests that need a
/// process of their own (declared as their own `[[test]]` in Cargo.toml).
const OWN_PROCESS: &[&str] = &["runner", "store_git"];

#[test]
fn every_test_file_is_in_the_runner() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let runner = std::fs::read_to_string(dir.join("runner.rs")).expect("runner.rs");
    let manifest = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"),
    )
    .expect("Cargo.toml");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("name")
            .to_string();
        if OWN_PROCESS.contains(&stem.as_str()) {
            assert!(
                manifest.contains(&format!("path = \"tests/{stem}.rs\"")),
                "tests/{stem}.rs runs in its own process but has no [[test]] in Cargo.toml"
            );
            continue;
        }
        if !runner.lines().any(|l| l.trim() == format!("mod {stem};")) {
            missing.push(stem);
        }
    }
    assert!(
        missing.is_empty(),
        "tests/*.rs files the runner does not include: {missing:?}"
    );
}
