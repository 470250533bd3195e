//! A store made by `contracts init` in a test's own HOME, and the draft contracts the store
//! tests propose to it. Each test file adds the steps only it needs in its own `impl Store`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{git_as, Run, World};

/// The clauses of a first roads contract: one of each kind the drafts below change.
pub const CLAUSES: &str = r#"crs = "EPSG:4326"
envelope = [-10.0, 40.0, 10.0, 60.0]
permitted_geometry = ["LineString"]
required_attributes = { id = "int64" }
metric_tolerances = { positional_rmse_m = 2.0 }
"#;

/// `world` 1.0.0 with `crs`: the clauses the Natural Earth countries satisfy with
/// `EPSG:4326` (see tests/test_release_validate.rs).
fn world_contract(crs: &str) -> String {
    format!(
        "dataset = \"world\"\nversion = \"1.0.0\"\nvalid_from = 2026-01-01\n[clauses]\ncrs = \"{crs}\"\nenvelope = [-180.0, -90.0, 180.0, 90.0]\nrequired_attributes = {{ name = \"string\", continent = \"string\" }}\nmax_null_fraction = 0.0\n"
    )
}

/// A store written by hand in `env`'s HOME (`store/`), committed: an empty `contracts.toml`
/// and `world` 1.0.0, which the countries satisfy. For the tests that validate the countries
/// read from elsewhere (a PostGIS table, object storage).
pub fn world_store(env: &World) -> PathBuf {
    world_store_with(env, &world_contract("EPSG:4326"))
}

/// [`world_store`] with `contract` as the text of `world` 1.0.0.
pub fn world_store_with(env: &World, contract: &str) -> PathBuf {
    let store = env.home().join("store");
    std::fs::create_dir_all(store.join("contracts/world")).unwrap();
    std::fs::write(store.join("contracts.toml"), "").unwrap();
    std::fs::write(store.join(WORLD), contract).unwrap();
    let git = |args: &[&str]| git_as(&store, env.home(), FIXTURE, args);
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "fixture"]);
    store
}

/// Commit `world` 1.0.0 of [`world_store`] again with `crs`, saying `why`.
pub fn world_crs(env: &World, store: &Path, crs: &str, why: &str) {
    std::fs::write(store.join(WORLD), world_contract(crs)).unwrap();
    git_as(store, env.home(), FIXTURE, &["commit", "-q", "-am", why]);
}

/// `validate world` on 2026-03-01 as JSON: the start of the command line that checks a
/// release against [`world_store`]; the release follows.
pub const VALIDATE_WORLD: [&str; 6] = [
    "--format",
    "json",
    "--today",
    "2026-03-01",
    "validate",
    "world",
];

/// The contract file of [`world_store`], and who commits the fixture.
const WORLD: &str = "contracts/world/1.0.0.toml";
const FIXTURE: (&str, &str) = ("Fixture", "fixture@example.org");

/// A draft contract's text.
pub fn draft(
    dataset: &str,
    version: &str,
    supersedes: Option<&str>,
    valid_from: &str,
    sunset: Option<&str>,
    advisory: &[&str],
    clauses: &str,
) -> String {
    let mut t = format!("dataset = \"{dataset}\"\nversion = \"{version}\"\n");
    if let Some(s) = supersedes {
        t += &format!("supersedes = \"{s}\"\n");
    }
    t += &format!("valid_from = {valid_from}\n");
    if let Some(s) = sunset {
        t += &format!("sunset = {s}\n");
    }
    if !advisory.is_empty() {
        let list: Vec<String> = advisory.iter().map(|a| format!("\"{a}\"")).collect();
        t += &format!("advisory = [{}]\n", list.join(", "));
    }
    t + "\n[clauses]\n" + clauses
}

/// A roads draft with no advisory clause: the [`draft`] most store tests propose, short
/// enough to read on one line.
pub fn roads(
    version: &str,
    supersedes: Option<&str>,
    valid_from: &str,
    sunset: Option<&str>,
    clauses: &str,
) -> String {
    draft(
        "roads",
        version,
        supersedes,
        valid_from,
        sunset,
        &[],
        clauses,
    )
}

/// Who edits the store by hand in the tampering tests.
const EDITOR: (&str, &str) = ("Mallory Editor", "mallory@example.org");

pub struct Store {
    pub env: World,
    pub dir: PathBuf,
}

impl Store {
    /// A new store at `$HOME/store`.
    pub fn new() -> Store {
        let env = World::empty();
        let dir = env.home().join("store");
        let run = env.run_in(env.home(), &["init", dir.to_str().unwrap()]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        Store { env, dir }
    }

    /// Another checkout's view of the same test environment.
    pub fn at(env: World, dir: PathBuf) -> Store {
        Store { env, dir }
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.env.command(&self.dir);
        c.args(args);
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.env.run_in(&self.dir, args)
    }

    /// [`Store::run`] with extra environment variables.
    pub fn run_env(&self, env: &[(&str, &str)], args: &[&str]) -> Run {
        let mut c = self.cmd(args);
        for (k, v) in env {
            c.env(k, v);
        }
        Run::of(c.output().unwrap())
    }

    /// `--format json` output of a command that exits 0 or 1.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["--format", "json"];
        all.extend_from_slice(args);
        let run = self.run(&all);
        assert!(run.code <= 1, "{args:?}: {}\n{}", run.stdout, run.stderr);
        run.json()
    }

    /// Write `text` to `$HOME/name` (outside the store) and return its path.
    pub fn write(&self, name: &str, text: &str) -> String {
        let p = self.env.home().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }

    pub fn propose(&self, text: &str, rationale: &str) -> Run {
        let path = self.write("draft.toml", text);
        self.run(&["propose", &path, "--rationale", rationale])
    }

    pub fn propose_ok(&self, text: &str, rationale: &str) {
        let run = self.propose(text, rationale);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    }

    /// `sunset roads LINE --on ON --rationale RATIONALE` and `extra` (`--force`, ...).
    pub fn sunset_roads(&self, line: &str, on: &str, rationale: &str, extra: &[&str]) -> Run {
        let mut args = vec![
            "sunset",
            "roads",
            line,
            "--on",
            on,
            "--rationale",
            rationale,
        ];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    /// git in the store, as a person editing it by hand.
    pub fn git(&self, args: &[&str]) -> String {
        git_as(&self.dir, self.env.home(), EDITOR, args)
    }

    /// Commit `text` at `rel` (relative to the store) with plain git, as a hand edit would.
    pub fn commit_file(&self, rel: &str, text: &[u8]) {
        let p = self.dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        self.git(&["add", "-A"]);
        self.git(&["commit", "-qm", &format!("edit {rel}")]);
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    pub fn assert_clean(&self) {
        let status = self.git(&["status", "--porcelain"]);
        assert!(status.is_empty(), "work tree not clean:\n{status}");
    }

    /// Assert that `check` exits 0, showing what it said when it does not.
    pub fn assert_check_passes(&self) {
        let run = self.run(&["check"]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    }

    /// The findings of `check`, which must find something.
    pub fn findings(&self) -> Vec<serde_json::Value> {
        let run = self.run(&["--format", "json", "check"]);
        assert_eq!(run.code, 1, "check should find something:\n{}", run.stdout);
        run.json()["findings"].as_array().unwrap().clone()
    }
}
