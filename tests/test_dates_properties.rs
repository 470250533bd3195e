//! Properties of sunsets and windows (issue 9).
//!
//! 1. No sequence of accepted `propose` (new majors) and `sunset` commands — random ones,
//!    applied through the same domain functions the commands use — yields a window outside
//!    the policy or three live lines on any day, and `check`'s replay finds nothing in it.
//! 2. Through the real binary: after random accepted commands, `status`, `show`, `consumers`
//!    and `validate` report the same effective sunset for every line, and `check` passes.

use crate::common;
use crate::common::Rows;
use common::Store;

use chrono::{Days, NaiveDate, TimeZone, Utc};
use proptest::prelude::*;

use contracts::model::config::Policy;
use contracts::model::consistency::{audit_sunsets, moves_of};
use contracts::model::history::{Entry, History, SunsetRecord};
use contracts::model::proposal::{check_recorded_sunset, check_step, check_two_live};
use contracts::model::sunset::{check_move, within_policy};
use contracts::model::window::{first_day_over_two_live, windows};
use contracts::model::{lines, parse_contract, Contract, KindTable, Strictness};

fn day(offset: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 1, 1).unwrap() + Days::new(u64::from(offset))
}

#[derive(Debug, Clone)]
enum Cmd {
    /// A new major, `after` days after the newest version's valid_from, declaring a sunset
    /// `window` days after its own valid_from.
    Propose { after: u32, window: u32 },
    /// `sunset <line> --on <on>` run on `today`; `line` picks among the existing lines.
    Sunset { line: usize, on: u32, today: u32 },
}

fn cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        (0u32..500, 1u32..500).prop_map(|(after, window)| Cmd::Propose { after, window }),
        (0usize..6, 0u32..2000, 0u32..2000).prop_map(|(line, on, today)| Cmd::Sunset {
            line,
            on,
            today
        }),
    ]
}

/// The text of roads `major`.0.0 (superseding the major before it), with no clauses: what the
/// model parses and the binary is proposed alike.
fn contract_text(major: u64, valid_from: NaiveDate, sunset: Option<NaiveDate>) -> String {
    let mut text = format!("dataset = \"roads\"\nversion = \"{major}.0.0\"\n");
    if major > 1 {
        text += &format!("supersedes = \"{}.0.0\"\n", major - 1);
    }
    text += &format!("valid_from = {valid_from}\n");
    if let Some(s) = sunset {
        text += &format!("sunset = {s}\n");
    }
    text += "[clauses]\n";
    text
}

fn contract(major: u64, valid_from: NaiveDate, sunset: Option<NaiveDate>) -> Contract {
    let text = contract_text(major, valid_from, sunset);
    parse_contract(
        "draft.toml",
        &text,
        &KindTable::builtin(),
        Strictness::Writing,
    )
    .unwrap()
}

/// The dataset as the commands leave it: contracts, and a history holding the sunset events
/// in order (change records are not needed by the sunset rules' replay beyond their order).
#[derive(Default)]
struct State {
    contracts: Vec<Contract>,
    history: History,
}

impl State {
    /// Apply one command through the domain functions `propose` and `sunset` use; whether it
    /// was accepted.
    fn apply(&mut self, cmd: &Cmd, policy: &Policy) -> bool {
        let moves = moves_of(&self.history);
        match *cmd {
            Cmd::Propose { after, window } => {
                let prev = self.contracts.last();
                let major = prev.map_or(1, |p| p.version.major + 1);
                let valid_from = prev.map_or(day(0), |p| p.valid_from + Days::new(after.into()));
                let sunset = prev.map(|_| valid_from + Days::new(window.into()));
                let next = contract(major, valid_from, sunset);
                let mut ok = check_step(prev, &next, policy).refusals.is_empty();
                let mut all: Vec<&Contract> = self.contracts.iter().collect();
                if let Some(prev) = prev {
                    ok &= check_recorded_sunset(&lines(&all, &moves), prev, &next).is_none();
                }
                all.push(&next);
                ok &= check_two_live(&all, &moves).is_none();
                if ok {
                    // The order of records in the file: the version's records come now.
                    self.history
                        .order
                        .push(Entry::Change(self.history.change.len()));
                    self.history
                        .change
                        .push(contracts::model::history::ChangeRecord {
                            at: Utc.timestamp_opt(0, 0).unwrap(),
                            from: None,
                            to: next.version.to_string(),
                            clause: "*".into(),
                            kind: None,
                            direction: contracts::model::Direction::Added,
                            verdict: contracts::model::Verdict::Compatible,
                            window: None,
                            rationale: "r".into(),
                        });
                    self.contracts.push(next);
                }
                ok
            }
            Cmd::Sunset { line, on, today } => {
                let refs: Vec<&Contract> = self.contracts.iter().collect();
                let current = lines(&refs, &moves);
                let Some(target) = current.get(line) else {
                    return false;
                };
                let (major, from) = (target.major, target.sunset);
                let (on, today) = (day(on), day(today));
                if from == Some(on) {
                    return false;
                }
                if !check_move(&current, major, on, Some(today), policy).accepted(false) {
                    return false;
                }
                self.history
                    .order
                    .push(Entry::Sunset(self.history.sunset.len()));
                self.history.sunset.push(SunsetRecord {
                    at: today.and_hms_opt(12, 0, 0).unwrap().and_utc(),
                    line: major,
                    from,
                    to: on,
                    rationale: "r".into(),
                    forced: false,
                });
                true
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn accepted_commands_keep_every_window_in_policy_and_at_most_two_live(
        cmds in proptest::collection::vec(cmd(), 1..25)
    ) {
        let policy = Policy::default();
        let mut state = State::default();
        for c in &cmds {
            state.apply(c, &policy);
            let refs: Vec<&Contract> = state.contracts.iter().collect();
            let ls = lines(&refs, &moves_of(&state.history));
            for w in windows(&ls) {
                prop_assert!(within_policy(&w, &policy), "{w:?} after {cmds:?}");
            }
            prop_assert_eq!(first_day_over_two_live(&ls), None, "after {:?}", cmds);
            // check's replay of the same history finds nothing either.
            let problems = audit_sunsets(&state.contracts, &state.history, &policy);
            prop_assert!(problems.is_empty(), "{problems:?} after {cmds:?}");
        }
    }
}

// --- The same effective sunset whichever command asks, through the binary. -------------

/// A store with an empty registry and an empty log, so `consumers` has what it reads.
fn store_with_registry() -> Store {
    let s = Store::new();
    std::fs::write(s.dir.join("consumers.toml"), "").unwrap();
    s.git(&["add", "-A"]);
    s.git(&["commit", "-qm", "registry"]);
    std::fs::create_dir_all(s.dir.join("consumption")).unwrap();
    std::fs::write(s.dir.join("consumption/reads.jsonl"), "").unwrap();
    s
}

impl Store {
    /// `--format json` output with `--today`.
    fn json_on(&self, today: &str, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["--format", "json", "--today", today];
        all.extend_from_slice(args);
        let run = self.run(&all);
        assert!(run.code <= 1, "{all:?}: {}", run.stderr);
        run.json()
    }
}

fn run_case(cmds: &[Cmd]) -> Result<(), TestCaseError> {
    let s = store_with_registry();
    let mut newest: Option<(u64, NaiveDate)> = None;
    for c in cmds {
        match *c {
            Cmd::Propose { after, window } => {
                let (major, valid_from) = match newest {
                    None => (1, day(0)),
                    Some((m, v)) => (m + 1, v + Days::new(after.into())),
                };
                let sunset = newest.map(|_| valid_from + Days::new(window.into()));
                let text = contract_text(major, valid_from, sunset);
                let path = s.env.home().join("draft.toml");
                std::fs::write(&path, text).unwrap();
                let run = s.run(&["propose", path.to_str().unwrap(), "--rationale", "r"]);
                prop_assert!(run.code <= 1, "{}", run.stderr);
                if run.code == 0 {
                    newest = Some((major, valid_from));
                }
            }
            Cmd::Sunset { line, on, today } => {
                let Some((n, _)) = newest else { continue };
                let line = (line as u64 % n) + 1;
                let (on, today) = (day(on).to_string(), day(today).to_string());
                let run = s.run(&[
                    "--today",
                    &today,
                    "sunset",
                    "roads",
                    &line.to_string(),
                    "--on",
                    &on,
                    "--rationale",
                    "r",
                ]);
                prop_assert!(run.code <= 1, "{}", run.stderr);
            }
        }
    }
    let Some((n, _)) = newest else { return Ok(()) };
    let check = s.run(&["check"]);
    prop_assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    // Ask every command on the day each line opens, while it is live.
    let consumers = s.json_on("2026-01-01", &["consumers", "roads"]);
    for major in 1..=n {
        let show = s.json_on("2026-01-01", &["show", &format!("roads@{major}.0.0")]);
        let from_show = show["line_sunset"]["date"].clone();
        let from_consumers = consumers["lines"]
            .rows()
            .find(|l| l["line"] == major)
            .map(|l| l["sunset"].clone())
            .unwrap();
        prop_assert_eq!(&from_show, &from_consumers, "line {}", major);
        let opens = show["valid_from"].as_str().unwrap().to_string();
        let status = s.json_on(&opens, &["status", "roads"]);
        if let Some(row) = status.rows().find(|r| r["line"] == major) {
            prop_assert_eq!(&row["sunset"], &from_show, "status of line {}", major);
        }
    }
    Ok(())
}

proptest! {
    // Each case runs the binary a few dozen times: few cases, short sequences.
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn every_command_reports_the_same_effective_sunset(
        cmds in proptest::collection::vec(cmd(), 2..8)
    ) {
        run_case(&cmds)?;
    }
}
