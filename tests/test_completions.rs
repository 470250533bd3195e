//! `contracts completions SHELL` and `contracts man`, generated from the clap definitions.

use crate::common;

use std::process::Command;

use common::World;

fn run(args: &[&str]) -> common::Run {
    let env = World::empty();
    let r = env.run_in(env.home(), args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r
}

#[test]
fn bash_completes_subcommands_and_flags() {
    let script = run(&["completions", "bash"]).stdout;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("contracts.bash");
    std::fs::write(&path, &script).unwrap();
    // Source the script and ask it, as bash would on <TAB>, to complete `contracts ti` and
    // `contracts --color a`.
    // bash calls the function with the command, the word being completed and the one before.
    let ask = |words: &str, cword: usize| {
        let list: Vec<&str> = words.split(' ').collect();
        let (cur, prev) = (list[cword], list[cword - 1]);
        let out = common::run_ok(
            Command::new("bash").arg("-c").arg(format!(
                "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{words}'; \
                 COMP_POINT=${{#COMP_LINE}}; _contracts contracts {cur} {prev}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                path.display()
            )),
            "bash",
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let got = ask("contracts ti", 1);
    assert_eq!(got.lines().collect::<Vec<_>>(), ["timeline"], "{got}");
    let got = ask("contracts --color a", 2);
    assert!(
        got.lines().any(|l| l == "always") && got.lines().any(|l| l == "auto"),
        "{got}"
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let s = run(&["completions", shell]).stdout;
        assert!(
            s.contains("timeline") && s.contains("site"),
            "{shell}:\n{s}"
        );
    }
    let bad = World::empty();
    assert_eq!(bad.run_in(bad.home(), &["completions", "tcsh"]).code, 2);
}

#[test]
fn the_man_page_is_roff_naming_every_command() {
    let man = run(&["man"]).stdout;
    assert!(man.contains(".TH contracts 1"), "{man}");
    for cmd in [
        "propose",
        "timeline",
        "site",
        "completions",
        "man",
        "validate",
    ] {
        assert!(man.contains(cmd), "no {cmd} in the man page");
    }
}

#[test]
fn man_out_writes_a_page_per_subcommand() {
    let env = World::empty();
    let dir = env.home().join("man");
    let r = env.run_in(env.home(), &["man", "--out", dir.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = std::fs::read_to_string(dir.join("contracts-timeline.1")).unwrap();
    assert!(page.contains(".TH contracts-timeline 1"), "{page}");
    assert!(page.contains("\\-\\-out"), "the page lists --out: {page}");
    assert!(dir.join("contracts.1").is_file());
    assert!(dir.join("contracts-propose.1").is_file());
}
