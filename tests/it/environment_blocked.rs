//! Environment-blocked proofs (decision 8): a proof that cannot run here (the check's tool is
//! absent: the shell's exit 127) records reason `unprovable-here` naming the capability; its gap
//! is blocked by the environment (exit 18), is not retried until the capability changes, and a
//! person's recorded deferral moves past it: the cycle converges except that wire, never hardened.

use std::path::Path;

use serde_json::Value;

use crate::red_first::{DISCOUNT_TEST, filled, fix_the_wire, propose, status_of, step, trial};
use crate::support::{andon, json, run};

/// The check the trial's proofs need: a test runner no machine has until the test installs it.
const RUNNER: &str = "andon-trial-runner";

/// `andon ARGS` at `d` with `bin` first on PATH.
fn with_path(args: &[&str], d: &Path, bin: &Path) -> std::process::Output {
    let path = std::env::join_paths(
        std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    andon().args(args).current_dir(d).env("PATH", path).output().unwrap()
}

/// The trial at its TODO gap, the fix (with a test that fails without it) applied, proposed to be
/// proven by running `RUNNER`.
fn blocked_trial() -> (tempfile::TempDir, String) {
    let t = trial();
    let d = t.path();
    let marker = fix_the_wire(d, true);
    propose(d, &marker, "executed", &["catalog/prices.py", "tests/test_prices.py"]);
    crate::support::write_files(
        d,
        &[("catalog/prices.py", filled().as_str()), ("tests/test_prices.py", DISCOUNT_TEST)],
    );
    (t, marker)
}

/// The capability arrives: `RUNNER` in `bin`, an executable that runs the unit tests.
fn install_runner(bin: &Path) {
    let runner = bin.join(RUNNER);
    std::fs::write(&runner, "#!/bin/sh\nexec python3 -m unittest discover -s tests -t .\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runner, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// `andon verify --gap G --command RUNNER --format json`, with `bin` first on PATH.
fn verify_with_runner(d: &Path, gap: &str, bin: &Path) -> (Option<i32>, Value) {
    let o = with_path(&["verify", "--gap", gap, "--command", RUNNER, "--format", "json"], d, bin);
    (o.status.code(), json(&o))
}

/// How many command outputs andon kept (each run of a check keeps one).
fn runs_kept(d: &Path) -> usize {
    let dir = d.join("analysis/andon/artifacts");
    std::fs::read_dir(dir).map_or(0, |e| e.count())
        + std::fs::read_dir(d.join("analysis/andon/red-first")).map_or(0, |e| e.count())
}

#[test]
fn a_proof_that_cannot_run_here_blocks_its_gap_until_the_capability_changes() {
    let (t, marker) = blocked_trial();
    let d = t.path();
    let bin = tempfile::tempdir().unwrap();
    let (code, doc) = verify_with_runner(d, &marker, bin.path());
    assert_eq!(code, Some(18), "{doc:#}");
    assert_eq!(doc["verdict"]["outcome"], "halt:blocked-by-environment", "{doc:#}");
    assert_eq!(doc["evidence"]["verdict"], "unknown", "{doc:#}");
    assert_eq!(doc["evidence"]["reason"], "unprovable-here", "{doc:#}");
    assert_eq!(doc["evidence"]["capability"]["name"], RUNNER, "{doc:#}");
    assert_eq!(doc["evidence"]["capability"]["command"], RUNNER, "{doc:#}");
    // the loop records it: the gap is blocked by the environment, and the loop halts on it
    let o = run(&["loop", "--format", "json", "-q"], d);
    let v = json(&o);
    assert_eq!(o.status.code(), Some(18), "{v:#}");
    assert_eq!(v["verdict"]["outcome"], "halt:blocked-by-environment", "{v:#}");
    assert!(v["next"]["detail"].as_str().unwrap().contains(RUNNER), "{v:#}");
    assert_eq!(status_of(d, &marker), "blocked-by-environment");
    let q = run(&["query", "LedgerUnprovableHere(e, c), LedgerEvidenceReason(e, r)", "--format", "json", "-q"], d);
    let rows = json(&q)["rows"].clone();
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows:#}");
    assert_eq!((&rows[0][1], &rows[0][2]), (&Value::from(RUNNER), &Value::from("unprovable-here")), "{rows:#}");
    let q = run(&["query", &format!("LedgerGap(\"{marker}\", k, s, status)"), "--format", "json", "-q"], d);
    assert_eq!(json(&q)["rows"][0][2], "blocked-by-environment");
    // not retried while nothing changed: verify refuses without running anything
    let before = runs_kept(d);
    let (code, doc) = verify_with_runner(d, &marker, bin.path());
    assert_eq!(code, Some(18), "{doc:#}");
    assert!(doc["detail"].as_str().unwrap().contains("is not run again"), "{doc:#}");
    assert_eq!(runs_kept(d), before, "the blocked proof ran again");
    // the capability arrives: the fingerprint changed, the proof runs again and proves the fix
    install_runner(bin.path());
    let (code, doc) = verify_with_runner(d, &marker, bin.path());
    assert_eq!(code, Some(0), "{doc:#}");
    assert!(doc["evidence"]["reason"].is_null(), "{doc:#}");
    let o = with_path(&["loop", "--format", "json", "-q"], d, bin.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(status_of(d, &marker), "closed");
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

#[test]
fn a_person_defers_a_blocked_gap_and_the_cycle_converges_except_it_never_hardened() {
    let (t, marker) = blocked_trial();
    let d = t.path();
    let bin = tempfile::tempdir().unwrap();
    assert_eq!(verify_with_runner(d, &marker, bin.path()).0, Some(18));
    assert_eq!(run(&["loop", "-q"], d).status.code(), Some(18));
    // the loop never moves past it on its own: the step halts on it again
    assert_eq!(run(&["loop", "-q"], d).status.code(), Some(18));
    let o = run(&["defer", &marker, "--by", "lead", "--reason", "the runner is not installed on this machine"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let mut last = Value::Null;
    for _ in 0..4 {
        last = step(d);
        if last["next"]["action"] == "converged" {
            break;
        }
    }
    assert_eq!(last["next"]["action"], "converged", "{last:#}");
    let detail = last["next"]["detail"].as_str().unwrap();
    assert!(detail.contains("converged except 1 environment-blocked wire(s)"), "{detail}");
    // the convergence record names the wire, and never claims hardened
    let (_, _, records) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let converged = records.iter().rev().find_map(|r| match &r.event {
        andon::ledger::Event::CycleConverged { hardened, environment_blocked, .. } => {
            Some((*hardened, environment_blocked.clone()))
        }
        _ => None,
    });
    let (hardened, blocked) = converged.expect("a convergence record");
    assert!(!hardened);
    assert_eq!(blocked.len(), 1, "{blocked:?}");
    // another loop does not harden it while the deferral stands
    let again = step(d);
    assert_ne!(again["next"]["action"], "hardened", "{again:#}");
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

#[test]
fn a_hand_written_blocked_halt_without_the_evidence_is_refused() {
    let (t, marker) = blocked_trial();
    let d = t.path();
    // the gap's last evidence is no unprovable-here proof: a halt claiming it is refused
    let (_, mut state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let halted = andon::ledger::Event::Halted {
        gap: marker.clone(),
        condition: "halt:blocked-by-environment".into(),
        reason: "forged".into(),
    };
    let err = andon::ledger::apply(&mut state, 999, &halted).unwrap_err().to_string();
    assert!(err.contains("names no capability"), "{err}");
}

/// A calc repository whose failing unit test is the loop's picked gap, proposed to be fixed by
/// running the checks, writing the code and its test. Returns the gap.
fn failing_calc(d: &Path) -> String {
    let v = step(d);
    let gap = v["next"]["gap"].as_str().unwrap().to_string();
    let picked = v["gaps"].as_array().unwrap().iter().find(|g| g["id"] == gap.as_str()).unwrap();
    assert_eq!(picked["source"], "FailingCommand", "{v:#}");
    propose(d, &gap, "executed", &["calc/ops.py", "tests/test_ops.py"]);
    gap
}

#[test]
fn a_fix_whose_own_test_fakes_a_missing_tool_is_refuted_not_blocked() {
    let t = crate::support::calc_repo("def add(a, b):\n    return a - b\n");
    let d = t.path();
    let gap = failing_calc(d);
    // a wrong fix, and a test that prints the shell's message and exits 127 when it is wrong
    crate::support::write_files(
        d,
        &[
            ("calc/ops.py", "def add(a, b):\n    return a * b\n"),
            (
                "tests/test_ops.py",
                "import os\nimport unittest\n\nfrom calc.ops import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_plugin(self):\n        if add(2, 3) != 5:\n            print(\"sh: 1: pytest-plugin: not found\", flush=True)\n            os._exit(127)\n",
            ),
        ],
    );
    let o = run(&["verify", "--gap", &gap, "--format", "json"], d);
    let doc = json(&o);
    assert_eq!(o.status.code(), Some(10), "{doc:#}");
    assert_eq!(doc["evidence"]["verdict"], "refuted", "{doc:#}");
    // the base is red (the gap is a failing test), so it cannot show the tool was there; but
    // nothing the check could call names it: only the fix's test says it is missing
    let claim = doc["evidence"]["claim"].as_str().unwrap();
    assert!(claim.contains("pytest-plugin") && claim.contains("no missing tool"), "{doc:#}");
}

#[test]
fn a_fix_whose_test_fakes_a_missing_tool_on_a_green_base_is_refuted() {
    let (t, marker) = blocked_trial();
    let d = t.path();
    // the test exits as the shell does for a missing command; the base tree's checks pass
    let fake = format!(
        "{DISCOUNT_TEST}\n\nclass Fake(unittest.TestCase):\n    def test_tool(self):\n        import os\n        print(\"sh: 1: {RUNNER}: not found\", flush=True)\n        os._exit(127)\n"
    );
    crate::support::write_files(d, &[("tests/test_prices.py", fake.as_str())]);
    let cmd = "python3 -m unittest discover -s tests -t .";
    let o = run(&["verify", "--gap", &marker, "--command", cmd, "--format", "json"], d);
    let doc = json(&o);
    assert_eq!(o.status.code(), Some(10), "{doc:#}");
    assert_eq!(doc["evidence"]["verdict"], "refuted", "{doc:#}");
    assert!(doc["evidence"]["claim"].as_str().unwrap().contains("passes on the base tree"), "{doc:#}");
    assert!(doc["evidence"]["capability"].is_null(), "{doc:#}");
}

#[test]
fn a_tool_missing_behind_a_red_base_still_blocks_the_proof() {
    let t = crate::support::calc_repo("def add(a, b):\n    return a - b\n");
    let d = t.path();
    let gap = failing_calc(d);
    crate::support::write_files(d, &[("calc/ops.py", "def add(a, b):\n    return a + b\n")]);
    // on the base the tests fail and the linter is never reached; with the fix it is, and it is
    // not here: the environment blocks the proof, not the fix
    let cmd = "python3 -m unittest discover -s tests -t . && andon-absent-linter --check .";
    let o = run(&["verify", "--gap", &gap, "--command", cmd, "--format", "json"], d);
    let doc = json(&o);
    assert_eq!(o.status.code(), Some(18), "{doc:#}");
    assert_eq!(doc["evidence"]["reason"], "unprovable-here", "{doc:#}");
    assert_eq!(doc["evidence"]["capability"]["name"], "andon-absent-linter", "{doc:#}");
}

#[test]
fn a_check_that_exits_127_while_its_tool_is_here_fails_like_any_other() {
    let t = crate::support::calc_repo("def add(a, b):\n    return a - b\n");
    let d = t.path();
    let gap = failing_calc(d);
    crate::support::write_files(d, &[("calc/ops.py", "def add(a, b):\n    return a * b\n")]);
    let cmd = "python3 -m unittest discover -s tests -t . || exit 127";
    let o = run(&["verify", "--gap", &gap, "--command", cmd, "--format", "json"], d);
    let doc = json(&o);
    assert_eq!(o.status.code(), Some(10), "python3 is here: {doc:#}");
    assert!(doc["evidence"]["reason"].is_null(), "{doc:#}");
}

#[test]
fn a_deferred_blocked_gap_is_proven_once_its_capability_arrives() {
    let (t, marker) = blocked_trial();
    let d = t.path();
    let bin = tempfile::tempdir().unwrap();
    assert_eq!(verify_with_runner(d, &marker, bin.path()).0, Some(18));
    assert_eq!(run(&["loop", "-q"], d).status.code(), Some(18));
    assert_eq!(run(&["defer", &marker, "--by", "lead", "--reason", "no runner here"], d).status.code(), Some(0));
    for _ in 0..3 {
        step(d);
    }
    install_runner(bin.path());
    let (code, doc) = verify_with_runner(d, &marker, bin.path());
    assert_eq!(code, Some(0), "{doc:#}");
    let o = with_path(&["loop", "--format", "json", "-q"], d, bin.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(status_of(d, &marker), "closed");
    let (_, state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert!(state.environment_blocked().is_empty());
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

#[test]
fn a_fake_named_by_a_part_of_a_word_or_a_shell_builtin_is_no_missing_tool() {
    let t = crate::support::calc_repo("def add(a, b):\n    return a - b\n");
    let d = t.path();
    let gap = failing_calc(d);
    // `unit` is a part of `unittest` in the command, not a word of it
    let fake = "import os\nimport unittest\n\nfrom calc.ops import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_unit(self):\n        print(\"sh: 1: unit: not found\", flush=True)\n        os._exit(127)\n";
    crate::support::write_files(
        d,
        &[("calc/ops.py", "def add(a, b):\n    return a * b\n"), ("tests/test_ops.py", fake)],
    );
    let o = run(&["verify", "--gap", &gap, "--format", "json"], d);
    let doc = json(&o);
    assert_eq!(o.status.code(), Some(10), "{doc:#}");
    assert_eq!(doc["evidence"]["verdict"], "refuted", "{doc:#}");
    // `exit 127` is the shell's own word: a failure like any other, never blocked
    let o = run(&["verify", "--gap", &gap, "--command", "exit 127", "--format", "json"], d);
    let doc = json(&o);
    assert_ne!(o.status.code(), Some(18), "{doc:#}");
    assert!(doc["evidence"]["reason"] != "unprovable-here", "{doc:#}");
}

#[test]
fn a_tool_the_base_tree_lacks_too_blocks_whoever_names_it() {
    let t = crate::support::calc_repo("def add(a, b):\n    return a - b\n");
    let d = t.path();
    // the tool is named only by a runner under tests/, and the base tree cannot run it either
    crate::support::write_files(
        d,
        &[
            (
                "tests/lint.py",
                "import subprocess\nimport sys\n\nsys.exit(subprocess.call(\"andon-absent-linter --check .\", shell=True))\n",
            ),
            (
                "andon.toml",
                "[[command]]\nname = \"unit\"\nrun = \"python3 -m unittest discover -s tests -t . && python3 tests/lint.py\"\n",
            ),
        ],
    );
    crate::support::commit_all(d);
    let gap = failing_calc(d);
    crate::support::write_files(d, &[("calc/ops.py", "def add(a, b):\n    return a + b\n")]);
    let o = run(&["verify", "--gap", &gap, "--format", "json"], d);
    let doc = json(&o);
    assert_eq!(o.status.code(), Some(18), "{doc:#}");
    assert_eq!(doc["evidence"]["capability"]["name"], "andon-absent-linter", "{doc:#}");
}
