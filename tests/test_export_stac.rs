//! `contracts export stac`: one STAC Collection per contract line with the version extension
//! v1.2.0, validated against the STAC v1.0.0 Collection schema and the extension's schema (both
//! vendored in tests/data/stac, resolved locally), and read back with pystac. Fails loudly
//! without python3 and pystac (test.sh installs it).

use std::path::Path;

use serde_json::{json, Value};

use crate::common;
use crate::common::world::{self, World};

const REGISTRY: &str = "https://maps.example.org/registry";

/// The `$ref`s of the vendored schemas, answered from tests/data/stac and never the network.
struct Vendored;

impl jsonschema::Retrieve for Vendored {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let uri = uri.as_str();
        let rel = [
            (
                "https://schemas.stacspec.org/v1.0.0/",
                "stac/stac-spec-v1.0.0/",
            ),
            ("https://geojson.org/schema/", "stac/geojson/"),
        ]
        .iter()
        .find_map(|(url, dir)| uri.strip_prefix(url).map(|r| format!("{dir}{r}")))
        .ok_or_else(|| format!("{uri} is not vendored in tests/data/stac"))?;
        let text = std::fs::read_to_string(common::data(&rel))?;
        Ok(serde_json::from_str(&text)?)
    }
}

fn validator(rel: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(common::data(rel)).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::options()
        .with_retriever(Vendored)
        .build(&schema)
        .unwrap_or_else(|e| panic!("the schema {rel} compiles: {e}"))
}

/// `doc` asserted valid against both schemas.
fn assert_valid(doc: &Value) {
    for rel in [
        "stac/stac-spec-v1.0.0/collection-spec/json-schema/collection.json",
        "stac/version-v1.2.0/schema.json",
    ] {
        let errors: Vec<String> = validator(rel)
            .iter_errors(doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "not valid against {rel}: {errors:#?}\n{doc:#}"
        );
    }
}

/// What pystac reads from the Collection at `path`: its id, the extension's fields through
/// pystac's own VersionExtension, and every link as (rel, href as written) but the `self` and
/// `root` links pystac adds on reading a file (the export writes neither: [`read`] checks).
fn pystac_reads(path: &Path) -> Value {
    let script = r#"
import json, sys, pystac
from pystac.extensions.version import VersionExtension
c = pystac.Collection.from_file(sys.argv[1])
assert VersionExtension.has_extension(c), "the version extension is not declared"
v = VersionExtension.ext(c)
json.dump({
    "id": c.id,
    "version": v.version,
    "deprecated": v.deprecated,
    "links": sorted([l.rel, l.get_href(transform_href=False)] for l in c.links
                    if l.rel not in ("self", "root")),
}, sys.stdout)
"#;
    let out = common::python3_with_stdin(&["-c", script, path.to_str().unwrap()], "")
        .unwrap_or_else(|e| panic!("PYTHON3 IS MISSING ({e}): this test reads STAC with pystac"));
    assert!(
        out.status.success(),
        "pystac could not read {} (is pystac installed? test.sh pins it): {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What pystac read asserted: the version, whether deprecated, and the links.
fn assert_version(read: &Value, (version, deprecated): (&str, bool), links: Value) {
    assert_eq!(read["version"], version);
    assert_eq!(read["deprecated"], deprecated);
    assert_eq!(read["links"], links);
}

/// The Collection at `path` as written, which has no `self` or `root` link.
fn read(path: &Path) -> Value {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let rels: Vec<&Value> = doc["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["rel"])
        .collect();
    assert!(
        !rels.contains(&&json!("self")) && !rels.contains(&&json!("root")),
        "{doc:#}"
    );
    doc
}

fn with_registry(w: &World) {
    w.write(
        "contracts.toml",
        &world::config(0).replace(
            "[notify]\n",
            &format!("[notify]\nregistry_url = \"{REGISTRY}/\"\n"),
        ),
    );
}

#[test]
fn each_line_is_a_valid_collection_with_its_version_links() {
    let w = World::new(0);
    with_registry(&w);
    // Line 2 opened on 2026-11-01; line 1 is in its window until the sunset.
    let run = w.run(
        "2026-12-06",
        &["export", "stac", "roads", "--out-dir", "stac"],
    );
    run.assert_code(0);
    let dir = w.root().join("stac");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["roads-v1.json", "roads-v2.json"]);

    let old = read(&dir.join("roads-v1.json"));
    let new = read(&dir.join("roads-v2.json"));
    assert_valid(&old);
    assert_valid(&new);
    assert_eq!(old["type"], "Collection");
    assert_eq!(old["id"], "roads-v1");
    // The temporal extent is the line's life: opened 2026-01-01, sunset as declared by 2.0.0.
    assert_eq!(
        old["extent"]["temporal"]["interval"],
        json!([[
            "2026-01-01T00:00:00Z",
            format!("{}T00:00:00Z", world::SUNSET)
        ]])
    );
    assert_eq!(
        new["extent"]["temporal"]["interval"],
        json!([["2026-11-01T00:00:00Z", null]])
    );

    let history = format!("{REGISTRY}/roads.html");
    let old_read = pystac_reads(&dir.join("roads-v1.json"));
    assert_eq!(old_read["id"], "roads-v1");
    assert_version(
        &old_read,
        ("1.1.0", true),
        json!([
            ["latest-version", "./roads-v2.json"],
            ["successor-version", "./roads-v2.json"],
            ["version-history", history],
        ]),
    );
    assert_version(
        &pystac_reads(&dir.join("roads-v2.json")),
        ("2.0.0", false),
        json!([
            ["predecessor-version", "./roads-v1.json"],
            ["version-history", history],
        ]),
    );
}

#[test]
fn an_old_line_is_not_deprecated_before_its_successor_is_live() {
    let w = World::new(0);
    let run = w.run(
        "2026-10-01",
        &["export", "stac", "roads", "--out-dir", "stac"],
    );
    run.assert_code(0);
    let dir = w.root().join("stac");
    for f in ["roads-v1.json", "roads-v2.json"] {
        assert_valid(&read(&dir.join(f)));
    }
    let old = pystac_reads(&dir.join("roads-v1.json"));
    assert_eq!(old["deprecated"], false);
    // Line 2 is upcoming: a successor already, not the latest; no registry, no history link.
    assert_eq!(
        old["links"],
        json!([["successor-version", "./roads-v2.json"]])
    );
}

#[test]
fn an_existing_collection_keeps_its_fields_and_a_second_run_changes_nothing() {
    let w = World::new(0);
    let mine = json!({
        "type": "Collection",
        "stac_version": "1.0.0",
        "stac_extensions": ["https://stac-extensions.github.io/scientific/v1.0.0/schema.json"],
        "id": "roads-v1",
        "title": "Roads, first edition",
        "description": "Our own words",
        "license": "CC-BY-4.0",
        "keywords": ["roads"],
        "extent": {
            "spatial": {"bbox": [[-8.0, 49.0, 2.0, 61.0]]},
            "temporal": {"interval": [["2020-01-01T00:00:00Z", null]]}
        },
        "links": [
            {"rel": "license", "href": "https://example.org/licence"},
            {"rel": "successor-version", "href": "./elsewhere.json"}
        ],
        "sci:doi": "10.0000/roads"
    });
    w.write(
        "stac/roads-v1.json",
        &serde_json::to_string_pretty(&mine).unwrap(),
    );
    w.run(
        "2026-12-06",
        &["export", "stac", "roads", "--out-dir", "stac"],
    )
    .assert_code(0);
    let path = w.root().join("stac/roads-v1.json");
    let got = read(&path);
    assert_valid(&got);
    for key in [
        "title",
        "description",
        "license",
        "keywords",
        "extent",
        "sci:doi",
    ] {
        assert_eq!(got[key], mine[key], "{key} is the publisher's");
    }
    assert_eq!(
        got["stac_extensions"],
        json!([
            "https://stac-extensions.github.io/scientific/v1.0.0/schema.json",
            "https://stac-extensions.github.io/version/v1.2.0/schema.json"
        ])
    );
    assert_eq!(got["version"], "1.1.0");
    assert_eq!(got["deprecated"], true);
    // Its own link kept, the stale successor replaced by the tool's.
    assert_eq!(
        pystac_reads(&path)["links"],
        json!([
            ["latest-version", "./roads-v2.json"],
            ["license", "https://example.org/licence"],
            ["successor-version", "./roads-v2.json"],
        ])
    );

    let before: Vec<(Vec<u8>, std::time::SystemTime)> = ["roads-v1.json", "roads-v2.json"]
        .iter()
        .map(|f| {
            let p = w.root().join("stac").join(f);
            (
                std::fs::read(&p).unwrap(),
                std::fs::metadata(&p).unwrap().modified().unwrap(),
            )
        })
        .collect();
    w.run(
        "2026-12-06",
        &["export", "stac", "roads", "--out-dir", "stac"],
    )
    .assert_code(0);
    for (f, (bytes, mtime)) in ["roads-v1.json", "roads-v2.json"].iter().zip(before) {
        let p = w.root().join("stac").join(f);
        assert_eq!(std::fs::read(&p).unwrap(), bytes, "{f} rewritten");
        assert_eq!(
            std::fs::metadata(&p).unwrap().modified().unwrap(),
            mtime,
            "{f} touched"
        );
    }
}

#[test]
fn a_geographic_envelope_is_the_spatial_extent() {
    let w = World::new(0);
    // The extent is the line's newest version's envelope, when it is in longitude and latitude.
    w.write(
        "contracts/roads/1.1.0.toml",
        "dataset = \"roads\"\nversion = \"1.1.0\"\nsupersedes = \"1.0.0\"\n\
         valid_from = 2026-03-01\n[clauses]\ncrs = \"EPSG:4326\"\n\
         envelope = [-8.5, 49.5, 2.0, 61.0]\n",
    );
    w.run(
        "2026-12-06",
        &["export", "stac", "roads", "--out-dir", "stac"],
    )
    .assert_code(0);
    let dir = w.root().join("stac");
    let one = read(&dir.join("roads-v1.json"));
    assert_valid(&one);
    assert_eq!(
        one["extent"]["spatial"]["bbox"],
        json!([[-8.5, 49.5, 2.0, 61.0]])
    );
    // Line 2 is in British National Grid with no envelope: the whole world.
    let two = read(&dir.join("roads-v2.json"));
    assert_eq!(
        two["extent"]["spatial"]["bbox"],
        json!([[-180.0, -90.0, 180.0, 90.0]])
    );
}

#[test]
fn a_file_that_is_not_a_collection_is_refused_and_left_alone() {
    let w = World::new(0);
    w.write("stac/roads-v1.json", "[\"not\", \"a collection\"]\n");
    let run = w.run(
        "2026-12-06",
        &["export", "stac", "roads", "--out-dir", "stac"],
    );
    run.assert_code(2);
    assert!(run.stderr().contains("roads-v1.json"), "{}", run.stderr());
    assert_eq!(
        w.read("stac/roads-v1.json").unwrap(),
        "[\"not\", \"a collection\"]\n"
    );
}
