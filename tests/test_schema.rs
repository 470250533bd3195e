//! The JSON Schemas under `schema/`: in sync with what this build generates, accepting every
//! contract, config, registry and manifest in `tests/` and the example store, and rejecting
//! wrong ones that the parsers reject too.

use crate::common;

use std::path::{Path, PathBuf};

use common::World;
use contracts::model::{parse_config, parse_contract, KindTable, Strictness};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// TOML as an editor's TOML-to-JSON bridge sees it: dates and times become strings.
fn to_json(v: toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        toml::Value::String(s) => J::String(s),
        toml::Value::Integer(i) => J::from(i),
        toml::Value::Float(f) => J::from(f),
        toml::Value::Boolean(b) => J::Bool(b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(a) => J::Array(a.into_iter().map(to_json).collect()),
        toml::Value::Table(t) => J::Object(t.into_iter().map(|(k, v)| (k, to_json(v))).collect()),
    }
}

fn schema(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("schema").join(name))
        .unwrap_or_else(|e| panic!("schema/{name}: {e}"));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("schema/{name} compiles: {e}"))
}

fn errors(v: &jsonschema::Validator, file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let value: toml::Value =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    v.iter_errors(&to_json(value))
        .map(|e| e.to_string())
        .collect()
}

fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = crate::common::files_under(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    out.sort();
    out
}

#[test]
fn the_committed_schemas_are_what_this_build_generates() {
    let env = World::empty();
    let run = env.run_in(env.home(), &["schema"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let generated = run.json();
    let names: Vec<&String> = generated.as_object().unwrap().keys().collect();
    assert_eq!(names.len(), 8, "{names:?}");
    assert!(
        generated.get("webhook-generic.schema.json").is_some(),
        "{names:?}"
    );
    for (name, schema) in generated.as_object().unwrap() {
        let committed: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root().join("schema").join(name))
                .unwrap_or_else(|e| panic!("schema/{name} is not committed: {e}")),
        )
        .unwrap();
        assert_eq!(
            &committed, schema,
            "schema/{name} is stale: run `cargo run -- schema --out schema` and commit it"
        );
    }
}

#[test]
fn every_real_file_validates() {
    let contract = schema("contract.schema.json");
    let mut contracts: Vec<PathBuf> = toml_files(&root().join("contracts"));
    contracts.extend(
        toml_files(&root().join("tests/fixtures/diff"))
            .into_iter()
            .filter(|p| !p.ends_with("bad-syntax.toml")),
    );
    assert!(contracts.len() >= 14, "{contracts:?}");
    let config_text = std::fs::read_to_string(root().join("contracts.toml")).unwrap();
    let custom_kinds = parse_config("contracts.toml", &config_text).unwrap().kinds;
    for f in &contracts {
        let e = errors(&contract, f);
        assert!(e.is_empty(), "{}: {e:#?}", f.display());
    }
    // The example store's contracts parse with its kinds, as the schema says they should.
    for f in toml_files(&root().join("contracts")) {
        let text = std::fs::read_to_string(&f).unwrap();
        parse_contract(
            &f.display().to_string(),
            &text,
            &custom_kinds,
            Strictness::Writing,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    for (schema_name, file) in [
        ("contracts-toml.schema.json", "contracts.toml"),
        ("consumers.schema.json", "consumers.toml"),
        (
            "release-manifest.schema.json",
            "tests/fixtures/schema/release.toml",
        ),
        (
            "waivers.schema.json",
            "tests/fixtures/schema/places.waivers.toml",
        ),
    ] {
        let e = errors(&schema(schema_name), &root().join(file));
        assert!(e.is_empty(), "{file}: {e:#?}");
    }
    contracts::release::validate::parse_manifest(
        "release.toml",
        &std::fs::read_to_string(root().join("tests/fixtures/schema/release.toml")).unwrap(),
    )
    .unwrap();
    contracts::model::waiver::parse_waivers(
        "places.waivers.toml",
        "places",
        &std::fs::read_to_string(root().join("tests/fixtures/schema/places.waivers.toml")).unwrap(),
        90,
    )
    .unwrap();
}

#[test]
fn wrong_files_are_rejected_by_the_schema_and_the_parser() {
    let dir = root().join("tests/fixtures/schema");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let kinds = KindTable::builtin();

    let typo = errors(
        &schema("contract.schema.json"),
        &dir.join("wrong-contract-typo.toml"),
    );
    assert!(typo.iter().any(|e| e.contains("valid_form")), "{typo:#?}");
    assert!(parse_contract(
        "x",
        &read("wrong-contract-typo.toml"),
        &kinds,
        Strictness::Writing
    )
    .is_err());

    let types = errors(
        &schema("contract.schema.json"),
        &dir.join("wrong-contract-types.toml"),
    );
    // One error each for the geometry name, the attribute type and the envelope's length.
    assert_eq!(types.len(), 3, "{types:#?}");
    assert!(parse_contract(
        "x",
        &read("wrong-contract-types.toml"),
        &kinds,
        Strictness::Writing
    )
    .is_err());

    let config = errors(
        &schema("contracts-toml.schema.json"),
        &dir.join("wrong-config.toml"),
    );
    assert_eq!(config.len(), 3, "tls, lookback_days, shape: {config:#?}");
    assert!(parse_config("x", &read("wrong-config.toml")).is_err());

    let consumers = errors(
        &schema("consumers.schema.json"),
        &dir.join("wrong-consumers.toml"),
    );
    assert!(!consumers.is_empty());
    assert!(contracts::consumers::parse_registry("x", &read("wrong-consumers.toml")).is_err());
    // A `uses` entry that does not start with a clause name.
    let uses = errors(
        &schema("consumers.schema.json"),
        &dir.join("wrong-consumers-uses.toml"),
    );
    assert!(!uses.is_empty());
    assert!(contracts::consumers::parse_registry("x", &read("wrong-consumers-uses.toml")).is_err());

    let release = errors(
        &schema("release-manifest.schema.json"),
        &dir.join("wrong-release.toml"),
    );
    assert_eq!(release.len(), 2, "date and metric: {release:#?}");
    assert!(
        contracts::release::validate::parse_manifest("x", &read("wrong-release.toml")).is_err()
    );
}

#[test]
fn taplo_is_pointed_at_the_schemas() {
    let taplo: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join(".taplo.toml")).unwrap()).unwrap();
    let rules = taplo["rule"].as_array().unwrap();
    for path in [
        "./schema/contract.schema.json",
        "./schema/contracts-toml.schema.json",
        "./schema/consumers.schema.json",
    ] {
        assert!(
            rules
                .iter()
                .any(|r| r["schema"]["path"].as_str() == Some(path)),
            "no rule for {path}"
        );
        assert!(root().join(path).is_file(), "{path}");
    }
}

/// The file kinds the schemas describe, each with the parser that reads it.
#[derive(Clone, Copy, Debug)]
enum FileKind {
    Contract,
    Config,
    Consumers,
    Waivers,
    Manifest,
}

impl FileKind {
    fn schema(self) -> &'static str {
        match self {
            FileKind::Contract => "contract.schema.json",
            FileKind::Config => "contracts-toml.schema.json",
            FileKind::Consumers => "consumers.schema.json",
            FileKind::Waivers => "waivers.schema.json",
            FileKind::Manifest => "release-manifest.schema.json",
        }
    }

    /// The parser's verdict: `Err` with its message when it refuses the text.
    fn parse(self, text: &str) -> Result<(), String> {
        let kinds = KindTable::builtin();
        match self {
            FileKind::Contract => parse_contract("x.toml", text, &kinds, Strictness::Writing)
                .map(drop)
                .map_err(|e| e.to_string()),
            FileKind::Config => parse_config("contracts.toml", text)
                .map(drop)
                .map_err(|e| e.to_string()),
            FileKind::Consumers => contracts::consumers::parse_registry("consumers.toml", text)
                .map(drop)
                .map_err(|e| e.to_string()),
            FileKind::Waivers => {
                contracts::model::waiver::parse_waivers("places.waivers.toml", "places", text, 90)
                    .map(drop)
                    .map_err(|e| e.to_string())
            }
            FileKind::Manifest => {
                contracts::release::validate::parse_manifest("release.toml", text)
                    .map(drop)
                    .map_err(|e| e.to_string())
            }
        }
    }
}

const CONTRACT_HEAD: &str = "dataset = \"roads\"\nversion = \"1.0.0\"\nvalid_from = 2027-01-01\n";
const CONSUMER_HEAD: &str = "[consumers.atlas]\ncontacts = [\"atlas@example.org\"]\n";
const WAIVER: &str = "[[waiver]]\nid = \"places:1:max_null_fraction.pop_est:2026-11-29\"\n\
    line = 1\nclause = \"max_null_fraction.pop_est\"\ngranted = 2026-11-29\nuntil = 2026-12-31\n\
    at = 2026-11-29T09:00:00Z\nby = \"Notifier <notifier@example.org>\"\nreason = \"outage\"\n";

/// Every bound a parser applies without the store (no policy, no CRS, no other file): a file
/// it refuses for one of them, the schema refuses too, so an editor flags it before `propose`
/// or `check`. Each case is also checked to be refused by the parser, so a stale case fails.
#[test]
fn the_schema_refuses_every_static_bound_the_parser_refuses() {
    use FileKind::*;
    let contract = |clauses: &str| format!("{CONTRACT_HEAD}\n[clauses]\n{clauses}\n");
    let source = |table: &str| format!("[[consumption.source]]\n{table}\n");
    let consumer = |extra: &str| format!("{CONSUMER_HEAD}{extra}\n");
    let waiver = |from: &str, to: &str| WAIVER.replace(from, to);
    let cases: Vec<(FileKind, &str, String)> = vec![
        // Contracts: clause values.
        (Contract, "a null fraction above 1", contract("max_null_fraction = { pop_est = 1.5 }")),
        (Contract, "an overall null fraction below 0", contract("max_null_fraction = -0.1")),
        (Contract, "an imputed fraction above 1", contract("max_imputed_fraction = 2.0")),
        (Contract, "a negative tolerance", contract("metric_tolerances = { positional_rmse_m = -1.0 }")),
        (Contract, "a metric fraction above 1", contract("metric_tolerances = { invalid_geometry_fraction = 1.2 }")),
        (Contract, "an envelope of three numbers", contract("envelope = [0.0, 1.0, 2.0]")),
        (Contract, "an envelope of strings", contract("envelope = [\"0\", \"1\", \"2\", \"3\"]")),
        (Contract, "a geometry type listed twice", contract("permitted_geometry = [\"Point\", \"Point\"]")),
        (Contract, "an unknown geometry type", contract("permitted_geometry = [\"Blob\"]")),
        (Contract, "an unknown emitted geometry type", contract("emitted_geometry = [\"Blob\"]")),
        (Contract, "a CRS listed twice", contract("permitted_crs = [\"EPSG:4326\", \"EPSG:4326\"]")),
        (Contract, "a format listed twice", contract("supported_output_formats = [\"gpkg\", \"gpkg\"]")),
        (Contract, "an unknown attribute type", contract("required_attributes = { id = \"integer\" }")),
        (Contract, "an unknown optional attribute type", contract("optional_attributes = { id = \"integer\" }")),
        (Contract, "a meaning that is not text", contract("attribute_semantics = { id = 1 }")),
        (Contract, "an unknown dimension", contract("dimensions = [\"XYW\"]")),
        // Contracts: the head.
        (Contract, "a version that is not semver", CONTRACT_HEAD.replace("1.0.0", "1.0")),
        (Contract, "a supersedes that is not semver", format!("{}supersedes = \"0.9\"\n", CONTRACT_HEAD.replace("1.0.0", "1.1.0"))),
        (Contract, "a bad dataset name", CONTRACT_HEAD.replace("roads", "Roads")),
        (Contract, "a quoted day", CONTRACT_HEAD.replace("2027-01-01", "\"15/01/2027\"")),
        (Contract, "a sunset that is no date", format!("{CONTRACT_HEAD}sunset = \"soon\"\n")),
        (Contract, "a clause listed twice in advisory", format!("{CONTRACT_HEAD}advisory = [\"crs\", \"crs\"]\n\n[clauses]\ncrs = \"EPSG:4326\"\n")),
        (Contract, "an unknown key", format!("{CONTRACT_HEAD}valid_form = 2027-01-01\n")),
        // contracts.toml: policy, notify, consumption.
        (Config, "a negative minimum window", "[policy]\nmin_window_days = -1\n".into()),
        (Config, "a negative waiver length", "[policy]\nmax_waiver_days = -1\n".into()),
        (Config, "an unknown new_clauses", "[policy]\nnew_clauses = \"sometimes\"\n".into()),
        (Config, "a negative milestone", "[notify]\ndays_before = [30, -1]\n".into()),
        (Config, "overdue reminders every 0 days", "[notify]\noverdue_every_days = 0\n".into()),
        (Config, "a negative claim staleness", "[notify]\nclaim_stale_minutes = -1\n".into()),
        (Config, "a webhook timeout of 0", "[notify]\nwebhook_timeout_seconds = 0\n".into()),
        (Config, "a webhook timeout above 300", "[notify]\nwebhook_timeout_seconds = 301\n".into()),
        (Config, "a registry URL that is not http(s) or file", "[notify]\nregistry_url = \"ftp://example.org\"\n".into()),
        (Config, "a registry URL with a space", "[notify]\nregistry_url = \"https://example.org/a b\"\n".into()),
        (Config, "an unknown TLS mode", "[smtp]\ntls = \"ssl\"\n".into()),
        (Config, "an SMTP port above 65535", "[smtp]\nport = 70000\n".into()),
        (Config, "a lookback of 0 days", "[consumption]\nlookback_days = 0\n".into()),
        (Config, "stale after 0 days", "[consumption]\nstale_after_days = 0\n".into()),
        (Config, "min_reads 0", "[consumption]\nmin_reads = 0\n".into()),
        (Config, "min_days 0", "[consumption]\nmin_days = 0\n".into()),
        (Config, "a negative same_read_seconds", "[consumption]\nsame_read_seconds = -1\n".into()),
        // contracts.toml: custom kinds.
        (Config, "an unknown kind", "[kinds.colour]\nkind = \"growing\"\nshape = \"value\"\n".into()),
        (Config, "a shape a custom clause cannot have", "[kinds.colour]\nkind = \"fixed\"\nshape = \"meanings\"\n".into()),
        (Config, "a custom clause named like a built-in", "[kinds.envelope]\nkind = \"fixed\"\nshape = \"value\"\n".into()),
        (Config, "a custom clause name that is not a clause name", "[kinds.Colour]\nkind = \"fixed\"\nshape = \"value\"\n".into()),
        // contracts.toml: consumption sources.
        (Config, "an empty source path", source("path = \"\"")),
        (Config, "a blank source path", source("path = \"  \"")),
        (Config, "a URL of another scheme", source("path = \"ftp://logs/*.jsonl\"")),
        (Config, "an object URL whose name implies no format", source("path = \"s3://logs/reads/*\"")),
        (Config, "an unknown log format", source("path = \"logs/*.log\"\nformat = \"xml\"")),
        (Config, "a constant dataset that is not a name", source("path = \"logs/*.jsonl\"\ndataset = \"Roads\"")),
        (Config, "a constant contract that is not semver", source("path = \"logs/*.jsonl\"\ncontract = \"1.0\"")),
        (Config, "an unknown field slot", source("path = \"logs/*.jsonl\"\nfields = { who = \"user\" }")),
        (Config, "an empty field name", source("path = \"logs/*.jsonl\"\nfields = { consumer = \"\" }")),
        (Config, "a field name with an empty key", source("path = \"logs/*.jsonl\"\nfields = { consumer = \"a..b\" }")),
        (Config, "an unknown time unit", source("path = \"logs/*.jsonl\"\nfields = { at = { name = \"t\", unit = \"us\" } }")),
        (Config, "fields on a read summary", source("path = \"logs/*.csv\"\nformat = \"summary\"\nfields = { consumer = \"who\" }")),
        (Config, "a principal on a log of reads", source("path = \"logs/*.jsonl\"\nprincipal = \"requester\"")),
        (Config, "same_read_seconds on a log of reads", source("path = \"logs/*.jsonl\"\nsame_read_seconds = 5")),
        (Config, "match on a log of reads", source("path = \"logs/*.jsonl\"\nmatch = \"{dataset}/{contract}/*\"")),
        (Config, "an access log without match", source("path = \"logs/*.log\"\nformat = \"s3-access\"")),
        (Config, "an empty match list", source("path = \"logs/*.log\"\nformat = \"s3-access\"\nmatch = []")),
        (Config, "a negative source same_read_seconds", source("path = \"logs/*.log\"\nformat = \"s3-access\"\nmatch = \"{dataset}/{contract}/*\"\nsame_read_seconds = -1")),
        (Config, "a pattern on an S3 access log", source("path = \"logs/*.log\"\nformat = \"s3-access\"\nmatch = \"{dataset}/{contract}/*\"\npattern = \"%h %u\"")),
        (Config, "an empty pattern", source("path = \"logs/*.log\"\nformat = \"combined\"\nmatch = \"/{dataset}/{contract}/*\"\npattern = \" \"")),
        // consumers.toml.
        (Consumers, "a consumer name with a space", "[consumers.\"flood model\"]\ncontacts = [\"a@example.org\"]\n".into()),
        (Consumers, "no contact", "[consumers.atlas]\ncontacts = []\n".into()),
        (
            Consumers,
            "two mailboxes in one contact",
            "[consumers.atlas]\ncontacts = [\"a@example.org, b@example.org\"]\n".into(),
        ),
        (
            Consumers,
            "a control character in a contact",
            "[consumers.atlas]\ncontacts = [\"Atlas\\tTeam <a@example.org>\"]\n".into(),
        ),
        (Consumers, "an unknown consumer kind", consumer("kind = \"robot\"")),
        (Consumers, "a dataset that is not a name", consumer("[consumers.atlas.datasets.Roads]")),
        (Consumers, "a uses entry that is no clause", consumer("[consumers.atlas.datasets.roads]\nuses = [\"Crs\"]")),
        (Consumers, "a uses entry with an empty key", consumer("[consumers.atlas.datasets.roads]\nuses = [\"crs.\"]")),
        (Consumers, "a uses entry listed twice", consumer("[consumers.atlas.datasets.roads]\nuses = [\"crs\", \"crs\"]")),
        (Consumers, "an empty identity", consumer("identities = [\"\"]")),
        (Consumers, "a blank identity", consumer("identities = [\" \"]")),
        (Consumers, "an identity listed twice", consumer("identities = [\"ci\", \"ci\"]")),
        (Consumers, "an unknown webhook kind", consumer("webhooks = [{ kind = \"discord\", url_env = \"HOOK\" }]")),
        (Consumers, "a url_env that is no variable name", consumer("webhooks = [{ kind = \"slack\", url_env = \"1HOOK\" }]")),
        (Consumers, "a webhook name with a dot", consumer("webhooks = [{ kind = \"slack\", url_env = \"HOOK\", name = \"a.b\" }]")),
        (Consumers, "a generic webhook without secret_env", consumer("webhooks = [{ kind = \"generic\", url_env = \"HOOK\" }]")),
        (Consumers, "a secret_env that is no variable name", consumer("webhooks = [{ kind = \"generic\", url_env = \"HOOK\", secret_env = \"my secret\" }]")),
        (Consumers, "a secret_env on a Slack webhook", consumer("webhooks = [{ kind = \"slack\", url_env = \"HOOK\", secret_env = \"SECRET\" }]")),
        // Waivers.
        (Waivers, "a clause key that is no clause", waiver("\"max_null_fraction.pop_est\"\n", "\"Nulls\"\n")),
        (Waivers, "a rule of the history waived", waiver("\"max_null_fraction.pop_est\"\n", "\"bump\"\n")),
        (Waivers, "a window waived", waiver("\"max_null_fraction.pop_est\"\n", "\"min_window_days\"\n")),
        (Waivers, "an id of the wrong shape", waiver("\"places:1:max_null_fraction.pop_est:2026-11-29\"", "\"w1\"")),
        (Waivers, "a negative line", waiver("line = 1", "line = -1")),
        (Waivers, "a day for an instant", waiver("at = 2026-11-29T09:00:00Z", "at = 2026-11-29")),
        (Waivers, "an instant for a day", waiver("until = 2026-12-31", "until = 2026-12-31T00:00:00Z")),
        // Release manifests.
        (Manifest, "a date that is no date", "date = \"last week\"\n".into()),
        (Manifest, "a metric that is no number", "[metrics]\npositional_rmse_m = \"small\"\n".into()),
    ];
    let mut accepted = Vec::new();
    for (kind, what, text) in &cases {
        assert!(
            kind.parse(text).is_err(),
            "the {kind:?} parser accepts {what}:\n{text}"
        );
        let value: toml::Value =
            toml::from_str(text).unwrap_or_else(|e| panic!("{what}: not TOML: {e}"));
        if schema(kind.schema())
            .iter_errors(&to_json(value))
            .next()
            .is_none()
        {
            accepted.push(format!("{kind:?}: {what}"));
        }
    }
    assert!(
        accepted.is_empty(),
        "the schema accepts what the parser refuses:\n{}",
        accepted.join("\n")
    );
    // The bases are valid, so each refusal above is the case's own.
    for (kind, base) in [
        (Contract, CONTRACT_HEAD.to_string()),
        (Consumers, CONSUMER_HEAD.to_string()),
        (Waivers, WAIVER.to_string()),
    ] {
        kind.parse(&base)
            .unwrap_or_else(|e| panic!("{kind:?} base: {e}"));
        let value: toml::Value = toml::from_str(&base).unwrap();
        let e: Vec<String> = schema(kind.schema())
            .iter_errors(&to_json(value))
            .map(|e| e.to_string())
            .collect();
        assert!(e.is_empty(), "{kind:?} base: {e:#?}");
    }
}

/// Every `[notify]` key the parser takes, set at once: the parser accepts the file and so must
/// the schema (`claim_stale_minutes` was missing from it, so an editor flagged a valid key).
#[test]
fn every_notify_key_the_parser_takes_is_in_the_schema() {
    let text = r#"
[notify]
days_before = [30, 7]
overdue_every_days = 7
from = "Data Platform <data-platform@example.org>"
registry_url = "https://registry.example.org"
claim_stale_minutes = 30
webhook_timeout_seconds = 5
announce = false
ca_file = "certs/receivers.pem"

[smtp]
host = "127.0.0.1"
port = 2525
tls = "none"
ca_file = "certs/relay.pem"
"#;
    parse_config("contracts.toml", text).unwrap_or_else(|e| panic!("the parser: {e}"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("contracts.toml");
    std::fs::write(&file, text).unwrap();
    let e = errors(&schema("contracts-toml.schema.json"), &file);
    assert!(
        e.is_empty(),
        "the schema refuses what the parser takes: {e:#?}"
    );
}

/// The keys a parser's table takes, from its own refusal of a key it does not know: serde
/// names every field it expects (`unknown field `zz`, expected one of `a`, `b``), and so do
/// the tables it reads by hand (`expected at, consumer, dataset or contract`).
fn parser_keys(what: &str, refusal: Result<(), String>) -> std::collections::BTreeSet<String> {
    let message = refusal.expect_err(what);
    let (_, expected) = message
        .split_once("expected")
        .unwrap_or_else(|| panic!("{what}: no list of keys in {message:?}"));
    // The first line, up to a closing parenthesis: `one of `a`, `b``, `a or b`.
    let list = expected.lines().next().unwrap_or_default();
    let list = list.split(')').next().unwrap_or_default();
    let keys: std::collections::BTreeSet<String> = list
        .split([',', ' '])
        .map(|w| w.trim_matches('`'))
        .filter(|w| !w.is_empty() && !["one", "of", "or", "and"].contains(w))
        .map(str::to_string)
        .collect();
    assert!(!keys.is_empty(), "{what}: {message}");
    keys
}

/// The keys a schema gives the table at `path` (property names; `*` steps into a map's values
/// or an array's items), following `$ref`s and the non-null branch of an option.
fn schema_keys(file: &str, path: &[&str]) -> std::collections::BTreeSet<String> {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("schema").join(file)).unwrap())
            .unwrap();
    fn resolve<'a>(
        doc: &'a serde_json::Value,
        mut node: &'a serde_json::Value,
    ) -> &'a serde_json::Value {
        loop {
            if let Some(r) = node.get("$ref").and_then(|r| r.as_str()) {
                node = &doc["$defs"][r.strip_prefix("#/$defs/").unwrap()];
            } else if let Some(branches) = node.get("anyOf").and_then(|b| b.as_array()) {
                match branches
                    .iter()
                    .find(|b| b.get("type") != Some(&"null".into()))
                {
                    Some(b) if node.get("properties").is_none() => node = b,
                    _ => return node,
                }
            } else {
                return node;
            }
        }
    }
    let mut node = resolve(&doc, &doc);
    for step in path {
        node = match *step {
            "*" => node
                .get("additionalProperties")
                .or_else(|| node.get("items"))
                .unwrap_or_else(|| panic!("{file} {path:?}: no map or list at {step}")),
            key => node
                .get("properties")
                .and_then(|p| p.get(key))
                .unwrap_or_else(|| panic!("{file} {path:?}: no `{key}`")),
        };
        node = resolve(&doc, node);
    }
    node.get("properties")
        .and_then(|p| p.as_object())
        .unwrap_or_else(|| panic!("{file} {path:?}: no properties"))
        .keys()
        .cloned()
        .collect()
}

/// Every table of every file: the keys its parser takes are the keys its schema describes,
/// no more and no fewer. The parser's keys come from the parser itself (its refusal of an
/// unknown key), so a key added to a raw type and not to the schema fails here, as does a key
/// left in the schema after the parser dropped it.
#[test]
fn the_schemas_have_exactly_the_keys_the_parsers_take() {
    use FileKind::*;
    let unknown = "zz_not_a_key = 1\n";
    let levels: Vec<(FileKind, &str, Vec<&str>)> = vec![
        (Contract, "", vec![]),
        (Config, "", vec![]),
        (Config, "[store]\n", vec!["store"]),
        (Config, "[policy]\n", vec!["policy"]),
        (Config, "[kinds.colour]\n", vec!["kinds", "*"]),
        (Config, "[notify]\n", vec!["notify"]),
        (Config, "[smtp]\n", vec!["smtp"]),
        (Config, "[consumption]\n", vec!["consumption"]),
        (
            Config,
            "[[consumption.source]]\n",
            vec!["consumption", "source", "*"],
        ),
        (Consumers, "", vec![]),
        (Consumers, "[consumers.atlas]\n", vec!["consumers", "*"]),
        (
            Consumers,
            "[consumers.atlas.datasets.roads]\n",
            vec!["consumers", "*", "datasets", "*"],
        ),
        (
            Consumers,
            "[[consumers.atlas.webhooks]]\n",
            vec!["consumers", "*", "webhooks", "*"],
        ),
        (Waivers, "", vec![]),
        (Waivers, "[[waiver]]\n", vec!["waiver", "*"]),
        (Waivers, "[[unwaive]]\n", vec!["unwaive", "*"]),
        (Manifest, "", vec![]),
    ];
    let mut wrong = Vec::new();
    for (kind, table, path) in &levels {
        let what = format!("{kind:?} {table:?}");
        let parser = parser_keys(&what, kind.parse(&format!("{table}{unknown}")));
        let schema = schema_keys(kind.schema(), path);
        let missing: Vec<&String> = parser.difference(&schema).collect();
        let extra: Vec<&String> = schema.difference(&parser).collect();
        if !missing.is_empty() || !extra.is_empty() {
            wrong.push(format!(
                "{what}: the schema lacks {missing:?} and has {extra:?} the parser refuses"
            ));
        }
    }
    // The fields of a source, which the parser reads by hand.
    let fields = FileKind::Config.parse(
        "[[consumption.source]]\npath = \"logs/*.jsonl\"\nfields = { zz_not_a_key = \"x\" }\n",
    );
    let parser = parser_keys("fields", fields);
    let schema = schema_keys(
        FileKind::Config.schema(),
        &["consumption", "source", "*", "fields"],
    );
    if parser != schema {
        wrong.push(format!(
            "fields: the parser takes {parser:?}, the schema {schema:?}"
        ));
    }
    // The clauses a contract may have without `[kinds]`: the built-in ones.
    let builtin: std::collections::BTreeSet<String> = contracts::model::BUILTIN
        .iter()
        .map(|b| b.name.to_string())
        .collect();
    let clauses = schema_keys(FileKind::Contract.schema(), &["clauses"]);
    if builtin != clauses {
        wrong.push(format!(
            "clauses: built in {builtin:?}, in the schema {clauses:?}"
        ));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every `description` of a property named `sunset` in `value`, with its JSON path.
fn sunset_descriptions(value: &serde_json::Value, path: &str, out: &mut Vec<(String, String)>) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let here = format!("{path}/{k}");
                if k == "sunset" {
                    if let Some(d) = v.get("description").and_then(|d| d.as_str()) {
                        out.push((here.clone(), d.to_string()));
                    }
                }
                sunset_descriptions(v, &here, out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                sunset_descriptions(v, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_schema_says_the_sunset_is_the_first_day_the_old_line_is_gone() {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root().join("schema")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        sunset_descriptions(&v, &name, &mut found);
    }
    assert!(
        found
            .iter()
            .any(|(p, _)| p.starts_with("webhook-generic.schema.json")),
        "the webhook body's sunset has a description: {found:?}"
    );
    // A receiver that takes the sunset for the line's last day retires it a day late.
    for (path, description) in &found {
        assert!(
            description.contains("first day") && description.contains("day before"),
            "{path}: {description:?} must say the sunset is the first day the line is no longer \
             live and its last day the day before"
        );
        assert!(
            !description.contains("last day of"),
            "{path}: {description:?}"
        );
    }
}
