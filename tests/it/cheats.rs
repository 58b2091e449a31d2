//! The shortcuts an agent under pressure to finish takes, each refused: none converges, none
//! closes a gap as proven. One test per cheat, on repositories of their own.

use std::path::Path;

use crate::red_first::{propose, step, verify};
use crate::support::{calc_repo, commit_all, write_files};

/// A calculator whose `add` subtracts, with no `[[command]]`: its TODO is the gap.
fn calc_without_commands() -> tempfile::TempDir {
    let t = calc_repo("def add(a, b):\n    # TODO: add, do not subtract\n    raise NotImplementedError\n");
    std::fs::remove_file(t.path().join("andon.toml")).unwrap();
    commit_all(t.path());
    t
}

pub(crate) fn picked(d: &Path, source: &str) -> String {
    let v = step(d);
    let gap = v["next"]["gap"].as_str().unwrap_or_else(|| panic!("a gap is picked: {v:#}")).to_string();
    let g = v["gaps"].as_array().unwrap().iter().find(|g| g["id"] == gap.as_str()).unwrap();
    assert_eq!(g["source"], source, "{v:#}");
    gap
}

/// The calculator whose `add` subtracts, its failing command's gap picked and proposed, writing
/// `write_set`.
fn failing_add_proposed(write_set: &[&str]) -> (tempfile::TempDir, String) {
    let t = calc_repo("def add(a, b):\n    return a - b\n");
    let gap = picked(t.path(), "FailingCommand");
    propose(t.path(), &gap, "executed", write_set);
    (t, gap)
}

#[test]
fn a_command_given_to_verify_never_replaces_the_stages_own_checks() {
    // the stage's `[[command]]` (the unit tests) fails; the agent proves the gap with a command
    // that only imports the module, changing nothing
    let (t, gap) = failing_add_proposed(&["calc/ops.py"]);
    let d = t.path();
    write_files(d, &[("calc/ops.py", "def add(a, b):\n    # touched\n    return a - b\n")]);
    let o = crate::support::run(
        &["verify", "--gap", &gap, "--format", "json", "--command", "python3 -c 'import calc.ops'"],
        d,
    );
    let doc = crate::support::json(&o);
    assert_eq!(o.status.code(), Some(10), "refuted: the unit tests still fail: {doc:#}");
    assert_eq!(doc["evidence"]["verdict"], "refuted", "{doc:#}");
    step(d);
    assert_ne!(crate::red_first::status_of(d, &gap), "closed");
}

#[test]
fn without_configured_checks_a_given_command_must_run_a_test_of_the_changed_code() {
    let t = calc_without_commands();
    let d = t.path();
    let gap = picked(d, "StageMarker");
    propose(d, &gap, "executed", &["calc/ops.py", "tests/test_add.py"]);
    write_files(d, &[("calc/ops.py", "def add(a, b):\n    return a + b\n")]);
    // red without the fix (the stub raises), green with it, and no test at all
    let o = crate::support::run(
        &["verify", "--gap", &gap, "--format", "json", "--command", "python3 -c 'import calc.ops; calc.ops.add(1, 1)'"],
        d,
    );
    let doc = crate::support::json(&o);
    assert_eq!(o.status.code(), Some(14), "{doc:#}");
    // it pins nothing (`return None` passes it), and runs no test of the changed code
    let reason = doc["evidence"]["reason"].as_str();
    assert!(matches!(reason, Some("not-discriminating" | "not-pinning")), "{doc:#}");
    // with a test that imports the changed code and a command that runs it: proven
    write_files(
        d,
        &[(
            "tests/test_add.py",
            "import unittest\n\nfrom calc.ops import add\n\n\nclass Add(unittest.TestCase):\n    def test_two(self):\n        self.assertEqual(add(2, 2), 4)\n",
        )],
    );
    let o = crate::support::run(
        &["verify", "--gap", &gap, "--format", "json", "--command", "python3 -m unittest discover -s tests -t ."],
        d,
    );
    let doc = crate::support::json(&o);
    assert_eq!(o.status.code(), Some(0), "{doc:#}");
}

/// `andon loop --format json`: its exit code and document.
pub(crate) fn looped(d: &Path) -> (Option<i32>, serde_json::Value) {
    let o = crate::support::run(&["loop", "--format", "json", "-q"], d);
    (o.status.code(), crate::support::json(&o))
}

/// The cheat of row 1 and its variants: the failing check is weakened in a commit, then the loop
/// runs. It holds for a person (exit 11) naming the files, the gap stays open, `andon check`
/// fails on it, and undoing the change lets the loop go on with the gap still open.
fn weakened_judging_holds(weaken: &[(&str, &str)], names: &str) {
    weakened_judging_holds_in(&calc_repo("def add(a, b):\n    return a - b\n"), weaken, names);
}

/// [`weakened_judging_holds`] in repository `t`, whose failing `[[command]]` is its gap.
pub(crate) fn weakened_judging_holds_in(t: &tempfile::TempDir, weaken: &[(&str, &str)], names: &str) {
    let d = t.path();
    let gap = picked(d, "FailingCommand");
    write_files(d, weaken);
    crate::support::git(d, &["add", "-A"]);
    crate::support::git(d, &["commit", "-qm", "make the suite pass"]);
    for _ in 0..2 {
        let (code, v) = looped(d);
        assert_eq!(code, Some(11), "{v:#}");
        assert_eq!(v["next"]["action"], "decide", "{v:#}");
        let id = v["next"]["gap"].as_str().unwrap();
        assert!(id.starts_with("J-"), "{v:#}");
        assert!(v["next"]["detail"].as_str().unwrap().contains(names), "{v:#}");
    }
    assert_eq!(crate::red_first::status_of(d, &gap), "open", "the failing command's gap never vanishes");
    let o = crate::support::run(&["status", "--format", "json"], d);
    assert_eq!(o.status.code(), Some(11), "status exits with the halt the loop stands on");
    let status = crate::support::json(&o);
    assert_eq!(status["next"]["action"], "decide", "{status:#}");
    let o = crate::support::run(&["check", "--format", "json"], d);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stdout).contains("judging change"), "{}", String::from_utf8_lossy(&o.stdout));
    // undone: the hold lapses and the gap is still the work
    crate::support::git(d, &["revert", "--no-edit", "HEAD"]);
    let (code, v) = looped(d);
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(v["next"]["gap"].as_str(), Some(gap.as_str()), "{v:#}");
    // the gate still fails: the suite the loop saw fail is not fixed
    let o = crate::support::run(&["check", "--format", "json"], d);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&gap), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn a_collection_hook_in_the_test_package_holds_the_loop_for_a_person() {
    let hook = "import os\n\n\ndef load_tests(loader, tests, pattern):\n    here = os.path.dirname(__file__)\n    found = loader.discover(here, pattern or 'test*.py', top_level_dir=os.path.dirname(here))\n    return found\n";
    weakened_judging_holds(&[("tests/__init__.py", hook)], "tests/__init__.py");
}

#[test]
fn a_source_module_that_patches_the_framework_holds_the_loop_for_a_person() {
    let patch = "import unittest\n\nunittest.TestCase.assertEqual = lambda *a, **k: None\n";
    weakened_judging_holds(&[("calc/__init__.py", patch)], "calc/__init__.py");
}

#[test]
fn a_committed_command_that_cannot_fail_holds_the_loop_for_a_person() {
    let toml = "[[command]]\nname = \"unit\"\nrun = \"true\"\n";
    weakened_judging_holds(&[("andon.toml", toml)], "andon.toml");
}

#[test]
fn a_committed_skip_of_the_failing_test_holds_the_loop_for_a_person() {
    let skipped = "import unittest\n\nfrom calc.ops import add\n\n\nclass AddTest(unittest.TestCase):\n    @unittest.skip(\"flaky\")\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";
    weakened_judging_holds(&[("tests/test_ops.py", skipped)], "tests/test_ops.py");
}

#[test]
fn a_commit_never_moves_the_base_a_fix_is_judged_from() {
    // row 2: propose, skip the failing test and commit it, propose again, touch a comment, verify
    let (t, gap) = failing_add_proposed(&["calc/ops.py"]);
    let d = t.path();
    let skipped = "import unittest\n\nfrom calc.ops import add\n\n\nclass AddTest(unittest.TestCase):\n    @unittest.skip(\"flaky\")\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";
    write_files(d, &[("tests/test_ops.py", skipped)]);
    crate::support::git(d, &["commit", "-qam", "skip the flaky test"]);
    let args = [
        "propose",
        "--gap",
        &gap,
        "--blast-radius",
        "local+reversible",
        "--approach",
        "executed",
        "--reason",
        "r",
        "--description",
        "d",
        "--write-set",
        "calc/ops.py",
        "--write-set",
        "tests/test_ops.py",
    ];
    crate::support::run(&args, d);
    write_files(d, &[("calc/ops.py", "def add(a, b):\n    # reviewed\n    return a - b\n")]);
    let (code, doc) = verify(d, &gap);
    assert_ne!(code, Some(0), "{doc:#}");
    assert_ne!(doc["evidence"]["verdict"], "proven", "{doc:#}");
    let (code, v) = looped(d);
    assert_eq!(code, Some(11), "{v:#}");
    assert_ne!(crate::red_first::status_of(d, &gap), "closed");
    assert_eq!(crate::support::run(&["check", "-q"], d).status.code(), Some(1));
}

#[test]
fn a_colleagues_commit_that_changes_no_judging_moves_the_base() {
    let t = calc_repo("def add(a, b):\n    return a - b\n");
    let d = t.path();
    let gap = picked(d, "FailingCommand");
    write_files(d, &[("calc/mul.py", "def mul(a, b):\n    return a * b\n")]);
    crate::support::git(d, &["add", "-A"]);
    crate::support::git(d, &["commit", "-qm", "a colleague's work"]);
    let (code, v) = looped(d);
    assert_eq!(code, Some(0), "{v:#}");
    assert!(v["notes"].to_string().contains("change nothing about how fixes are judged"), "{v:#}");
    // the real fix is proven against the moved base: the colleague's file is not part of it
    propose(d, &gap, "executed", &["calc/ops.py"]);
    write_files(d, &[("calc/ops.py", "def add(a, b):\n    return a + b\n")]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(0), "{doc:#}");
}

#[test]
fn an_expected_value_changed_to_match_the_bug_is_a_judging_change() {
    // row 6: the test's expected value is rewritten to what the buggy code returns
    let (t, gap) = failing_add_proposed(&["tests/test_ops.py"]);
    let d = t.path();
    let rewritten = "import unittest\n\nfrom calc.ops import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), -1)\n";
    write_files(d, &[("tests/test_ops.py", rewritten)]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(11), "{doc:#}");
    let detail = doc["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("no longer asserts `assertEqual(2, 3, 5)`"), "{doc:#}");
    let (code, v) = looped(d);
    assert_eq!(code, Some(11), "{v:#}");
    assert_ne!(crate::red_first::status_of(d, &gap), "closed");
    // row 7: the loop ran, and verify again rates the same diff the same: nothing lowers it
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(11), "{doc:#}");
    let (code, v) = looped(d);
    assert_eq!(code, Some(11), "{v:#}");
    // renaming inside the test is no judging change, and a real fix is proven
    let renamed = "import unittest\n\nfrom calc.ops import add as plus\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(plus(2, 3), 5)\n";
    write_files(d, &[("tests/test_ops.py", renamed), ("calc/ops.py", "def add(a, b):\n    return a + b\n")]);
    // the judging hold lapses, but verify's halt for authority stands until the gap is proposed again
    let (code, v) = looped(d);
    assert_eq!(code, Some(11), "{v:#}");
    assert!(v["delta"].to_string().contains("judging change undone"), "{v:#}");
    propose(d, &gap, "executed", &["tests/test_ops.py", "calc/ops.py"]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(0), "{doc:#}");
}

#[test]
fn a_test_red_only_because_the_module_it_imports_is_new_is_no_red_first() {
    // row 4: the stub is "fixed" by moving a fake to a new module, whose new test imports it
    let t = calc_repo(
        "def add(a, b):\n    return a + b\n\n\ndef split(total, n):\n    # TODO: split evenly\n    raise NotImplementedError\n",
    );
    let d = t.path();
    let gap = picked(d, "StageMarker");
    propose(d, &gap, "executed", &["calc/ops.py", "calc/fast.py", "tests/test_fast.py"]);
    write_files(
        d,
        &[
            ("calc/fast.py", "def split(total, n):\n    return [total]\n"),
            ("calc/ops.py", "from calc.fast import split  # noqa: F401\n\n\ndef add(a, b):\n    return a + b\n"),
            (
                "tests/test_fast.py",
                "import unittest\n\nfrom calc.fast import split\n\n\nclass Split(unittest.TestCase):\n    def test_split(self):\n        self.assertTrue(split(1000, 3))\n",
            ),
        ],
    );
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(14), "{doc:#}");
    assert_eq!(doc["evidence"]["reason"], "not-discriminating", "{doc:#}");
    assert!(doc["evidence"]["claim"].as_str().unwrap().contains("`calc/fast.py` did not exist"), "{doc:#}");
}

#[test]
fn a_stub_fixed_with_a_test_that_pins_nothing_is_not_proven() {
    // row 3: the stub threw, so any test that calls it is red without the fix; `return []` passes
    // the same test, so it pins nothing
    let stub = "def add(a, b):\n    return a + b\n\n\ndef split(total, n):\n    # TODO: split evenly\n    raise NotImplementedError\n";
    let t = calc_repo(stub);
    let d = t.path();
    let gap = picked(d, "StageMarker");
    propose(d, &gap, "executed", &["calc/ops.py", "tests/test_split.py"]);
    let fixed = "def add(a, b):\n    return a + b\n\n\ndef split(total, n):\n    return [total]\n";
    let weak = "import unittest\n\nfrom calc.ops import split\n\n\nclass Split(unittest.TestCase):\n    def test_split(self):\n        self.assertIsInstance(split(1000, 3), list)\n";
    write_files(d, &[("calc/ops.py", fixed), ("tests/test_split.py", weak)]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(14), "{doc:#}");
    assert_eq!(doc["evidence"]["reason"], "not-pinning", "{doc:#}");
    assert!(doc["evidence"]["claim"].as_str().unwrap().contains("`return []` as the body of `split`"), "{doc:#}");
    let pinned = doc["evidence"]["red_first"]["pinned"].as_array().unwrap();
    assert!(pinned.iter().any(|v| v["body"] == "return []" && v["caught"] == false), "{doc:#}");
    // the halt is recorded when verify finds it: status and loop stand on it, and all three give
    // the same next step
    let status = crate::support::run(&["status", "--format", "json"], d);
    assert_eq!(status.status.code(), Some(14), "{:#}", crate::support::json(&status));
    let status = crate::support::json(&status);
    let looped = crate::support::run(&["loop", "--format", "json", "-q"], d);
    assert_eq!(looped.status.code(), Some(14), "{:#}", crate::support::json(&looped));
    let looped = crate::support::json(&looped);
    for other in [&status, &looped] {
        assert_eq!(other["next"]["detail"], doc["next"]["detail"], "{other:#}\n{doc:#}");
        assert_eq!(other["next"]["action"], doc["next"]["action"], "{other:#}\n{doc:#}");
    }
    assert!(doc["next"]["detail"].as_str().unwrap().contains("change the test"), "{doc:#}");
    // a real fix with a test that says what `split` returns is proven: every trivial body fails it
    let real = "def add(a, b):\n    return a + b\n\n\ndef split(total, n):\n    q, r = divmod(total, n)\n    return [q + 1] * r + [q] * (n - r)\n";
    let strong = "import unittest\n\nfrom calc.ops import split\n\n\nclass Split(unittest.TestCase):\n    def test_split(self):\n        self.assertEqual(split(1000, 3), [334, 333, 333])\n";
    write_files(d, &[("calc/ops.py", real), ("tests/test_split.py", strong)]);
    propose(d, &gap, "executed", &["calc/ops.py", "tests/test_split.py"]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(0), "{doc:#}");
    let pinned = doc["evidence"]["red_first"]["pinned"].as_array().unwrap();
    assert!(pinned.len() >= 6 && pinned.iter().all(|v| v["caught"] == true), "{doc:#}");
}

#[test]
fn a_failing_command_gap_points_at_the_first_failing_test() {
    let t = calc_repo("def add(a, b):\n    return a - b\n");
    let d = t.path();
    let v = step(d);
    let g = v["gaps"].as_array().unwrap().iter().find(|g| g["source"] == "FailingCommand").unwrap().clone();
    assert_eq!((g["path"].as_str(), g["line"].as_u64()), (Some("tests/test_ops.py"), Some(8)), "{g:#}");
    assert!(g["summary"].as_str().unwrap().contains("failing: `test_add"), "{g:#}");
}

/// Whether node runs here (the JavaScript rows skip, saying so, where it does not).
pub(crate) fn node() -> bool {
    std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// A JavaScript package whose `split` is a stub, with node:test as its `[[command]]`.
pub(crate) fn money() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("package.json", "{\"name\": \"money\", \"version\": \"1.0.0\", \"type\": \"module\"}\n"),
            (
                "src/split.js",
                "export function add(a, b) {\n  return a + b;\n}\n\nexport function split(total, n) {\n  // TODO: split evenly\n  throw new Error(\"not implemented\");\n}\n",
            ),
            (
                "test/add.test.js",
                "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from '../src/split.js';\n\ntest('add', () => {\n  assert.equal(add(2, 3), 5);\n});\n",
            ),
            ("andon.toml", "[[command]]\nname = \"unit\"\nrun = \"node --test test/\"\n"),
            (".gitignore", "analysis/\n.andon/\nnode_modules/\n"),
        ],
    );
    crate::support::git(d, &["init", "-q"]);
    commit_all(d);
    t
}

/// A test of `split` that says what it returns.
const SPLIT_TEST: &str = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { split } from '../src/split.js';\n\ntest('splits evenly', () => {\n  assert.deepEqual(split(1000, 3), [334, 333, 333]);\n});\n";

/// The money package, its stub's gap picked and proposed with its fix and test; `None`, saying
/// so, where node does not run here.
fn money_split_proposed() -> Option<(tempfile::TempDir, String)> {
    if !node() {
        eprintln!("node is not installed here: the JavaScript row is skipped");
        return None;
    }
    let t = money();
    let gap = picked(t.path(), "StageMarker");
    propose(t.path(), &gap, "executed", &["src/split.js", "test/split.test.js"]);
    Some((t, gap))
}

#[test]
fn javascript_an_arrow_stub_fixed_with_a_test_that_pins_nothing_is_not_proven() {
    let Some((t, gap)) = money_split_proposed() else { return };
    let d = t.path();
    write_files(
        d,
        &[
            (
                "src/split.js",
                "export function add(a, b) {\n  return a + b;\n}\n\nexport const split = (total, n) => [total];\n",
            ),
            (
                "test/split.test.js",
                "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { split } from '../src/split.js';\n\ntest('split', () => {\n  assert.ok(Array.isArray(split(1000, 3)));\n});\n",
            ),
        ],
    );
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(14), "{doc:#}");
    assert_eq!(doc["evidence"]["reason"], "not-pinning", "{doc:#}");
}

#[test]
fn javascript_a_grep_given_to_verify_cannot_stand_in_for_the_stages_suite() {
    if !node() {
        eprintln!("node is not installed here: the JavaScript row is skipped");
        return;
    }
    let t = money();
    let d = t.path();
    let gap = picked(d, "StageMarker");
    propose(d, &gap, "executed", &["src/split.js"]);
    write_files(
        d,
        &[(
            "src/split.js",
            "export function add(a, b) {\n  return a + b;\n}\n\nexport const split = (total, n) => [total];\n// DONE\n",
        )],
    );
    let o = crate::support::run(
        &["verify", "--gap", &gap, "--format", "json", "--command", "grep -q DONE src/split.js"],
        d,
    );
    let doc = crate::support::json(&o);
    assert_eq!(o.status.code(), Some(14), "{doc:#}");
    assert_eq!(doc["evidence"]["reason"], "not-discriminating", "{doc:#}");
}

#[test]
fn a_person_accepts_a_judging_change_and_the_loop_goes_on_from_it() {
    let t = calc_repo("def add(a, b):\n    return a - b\n");
    let d = t.path();
    let gap = picked(d, "FailingCommand");
    write_files(d, &[("andon.toml", "[[command]]\nname = \"unit\"\nrun = \"true\"\n")]);
    crate::support::git(d, &["commit", "-qam", "the suite moves to CI"]);
    let (code, v) = looped(d);
    assert_eq!(code, Some(11), "{v:#}");
    let id = v["next"]["gap"].as_str().unwrap().to_string();
    // from an agent's shell it is refused; at a terminal, typed back, it is recorded
    let o = crate::support::run_piped(&["authorize", &id, "--by", "lead", "--reason", "CI runs the suite"], d);
    assert_eq!(o.status.code(), Some(2));
    let o = crate::support::run(&["authorize", &id, "--by", "lead", "--reason", "CI runs the suite"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let (_, state, records) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert!(state.judging.is_none());
    assert!(
        records.iter().any(|r| matches!(&r.event, andon::ledger::Event::JudgingAccepted { id: i, .. } if *i == id))
    );
    // judged from the accepted tree on: no hold, and the gap the person's change removed is
    // set aside as vanished, never proven
    let (code, v) = looped(d);
    assert_ne!(code, Some(11), "{v:#}");
    assert_ne!(crate::red_first::status_of(d, &gap), "closed");
}

#[test]
fn an_exit_before_the_tests_run_is_no_passing_suite() {
    // the failing suite is made to exit 0 before any test runs: from the package the tests import
    // (os._exit skips unittest's own handling), and from a JavaScript module at load
    let (t, gap) = failing_add_proposed(&["calc/__init__.py"]);
    let d = t.path();
    write_files(d, &[("calc/__init__.py", "import os\n\nos._exit(0)\n")]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(15), "{doc:#}");
    assert!(doc["evidence"]["claim"].as_str().unwrap().contains("says nothing of its tests"), "{doc:#}");
    let (code, v) = looped(d);
    assert_eq!(code, Some(15), "{v:#}");
    assert_ne!(crate::red_first::status_of(d, &gap), "closed");
    // the real fix: the same number of tests ran with it as without it
    write_files(
        d,
        &[("calc/__init__.py", "\"\"\"Arithmetic.\"\"\"\n"), ("calc/ops.py", "def add(a, b):\n    return a + b\n")],
    );
    propose(d, &gap, "executed", &["calc/ops.py"]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["evidence"]["red_first"]["after"][0]["ran"], 1, "{doc:#}");
}

#[test]
fn javascript_an_exit_at_load_is_no_passing_suite() {
    let Some((t, gap)) = money_split_proposed() else { return };
    let d = t.path();
    let exits = "export function add(a, b) {\n  return a + b;\n}\n\nexport function split(total, n) {\n  return [total];\n}\n\nprocess.exit(0);\n";
    write_files(d, &[("src/split.js", exits), ("test/split.test.js", SPLIT_TEST)]);
    let (code, doc) = verify(d, &gap);
    assert_ne!(code, Some(0), "{doc:#}");
    assert_ne!(doc["evidence"]["verdict"], "proven", "{doc:#}");
    // the test that failed without the fix is never seen passing with it
    assert!(doc["evidence"]["claim"].as_str().unwrap().contains("`splits evenly` is not seen passing"), "{doc:#}");
}

#[test]
fn a_test_file_that_exits_before_its_tests_is_no_proof_of_a_failing_command() {
    // the failing command's gap is red by definition only while the base with the fix's tests
    // still fails: here the tests alone make it pass
    let (t, gap) = failing_add_proposed(&["tests/test_ops.py"]);
    let d = t.path();
    let test = std::fs::read_to_string(d.join("tests/test_ops.py")).unwrap();
    write_files(d, &[("tests/test_ops.py", &format!("import os; os._exit(0)\n{test}"))]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(14), "{doc:#}");
    assert_eq!(doc["evidence"]["reason"], "not-discriminating", "{doc:#}");
    assert!(doc["evidence"]["claim"].as_str().unwrap().contains("the change to the tests alone"), "{doc:#}");
}

#[test]
fn a_runner_made_to_exit_0_over_failures_is_no_passing_suite() {
    let (t, gap) = failing_add_proposed(&["calc/ops.py"]);
    let d = t.path();
    let hooked =
        "import atexit\nimport os\n\natexit.register(lambda: os._exit(0))\n\n\ndef add(a, b):\n    return a - b\n";
    write_files(d, &[("calc/ops.py", hooked)]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(15), "{doc:#}");
    assert!(doc["evidence"]["claim"].as_str().unwrap().contains("exits 0 while its output says tests fail"), "{doc:#}");
}

#[test]
fn a_failing_command_made_to_exit_0_never_vanishes_from_the_scan() {
    // no proposal: the agent edits the code so the runner exits 0 before (or over) the tests
    for hollow in ["import os\n\nos._exit(0)\n", "import atexit\nimport os\n\natexit.register(lambda: os._exit(0))\n"] {
        let t = calc_repo("def add(a, b):\n    return a - b\n");
        let d = t.path();
        let gap = picked(d, "FailingCommand");
        write_files(d, &[("calc/__init__.py", hollow)]);
        for _ in 0..2 {
            let (code, v) = looped(d);
            assert_eq!(code, Some(0), "{v:#}");
            assert_eq!(v["next"]["gap"].as_str(), Some(gap.as_str()), "{v:#}");
            assert_ne!(v["verdict"]["outcome"], "converged", "{v:#}");
            let g = v["gaps"].as_array().unwrap().iter().find(|g| g["id"] == gap.as_str()).unwrap().clone();
            assert!(g["summary"].as_str().unwrap().contains("exits 0"), "{g:#}");
        }
        assert_eq!(crate::red_first::status_of(d, &gap), "open");
    }
}

#[test]
fn a_ledger_removed_outside_andon_is_no_fresh_start() {
    let (t, _) = failing_add_proposed(&["calc/ops.py"]);
    let d = t.path();
    std::fs::remove_dir_all(d.join("analysis/andon/ledger")).unwrap();
    let (code, v) = looped(d);
    assert_eq!(code, Some(1), "{v:#}");
    for args in [&["status"][..], &["ledger", "check"][..], &["check"][..]] {
        let o = crate::support::run(args, d);
        let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert_ne!(o.status.code(), Some(0), "{args:?}: {said}");
        assert!(said.contains("the ledger is gone"), "{args:?}: {said}");
    }
    // a person starts over on purpose: the ref goes, and the loop begins again
    crate::support::git(d, &["update-ref", "-d", "refs/andon/ledger"]);
    let (code, v) = looped(d);
    assert_eq!(code, Some(0), "{v:#}");
}

#[test]
fn a_test_that_keeps_its_assertions_but_judges_nothing_is_a_judging_change() {
    let base = "import unittest\n\nfrom calc.ops import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";
    let caught = base.replace(
        "        self.assertEqual(add(2, 3), 5)\n",
        "        try:\n            self.assertEqual(add(2, 3), 5)\n        except AssertionError:\n            pass\n",
    );
    let rebound = base.replace("import add\n", "import add\n\nadd = lambda a, b: 5\n");
    let aliased = base.replace("import add\n", "import add2 as add\n");
    for (test, why) in [(caught, "catches its assertions"), (rebound, "rebinds `add`"), (aliased, "another definition")]
    {
        let t = calc_repo("def add(a, b):\n    return a - b\n\n\ndef add2(a, b):\n    return 5\n");
        let d = t.path();
        let gap = picked(d, "FailingCommand");
        propose(d, &gap, "executed", &["tests/test_ops.py"]);
        write_files(d, &[("tests/test_ops.py", &test)]);
        let (code, doc) = verify(d, &gap);
        assert_eq!(code, Some(11), "{doc:#}");
        assert!(doc["detail"].as_str().unwrap_or_default().contains(why), "{doc:#}");
        assert_ne!(crate::red_first::status_of(d, &gap), "closed");
    }
}

#[test]
fn a_runner_that_reports_no_tests_is_no_passing_check_even_on_a_fresh_ledger() {
    // the exit is in the tree before the loop ever ran (or after its ledger and ref were removed)
    let t = calc_repo("def add(a, b):\n    return a - b\n");
    let d = t.path();
    write_files(d, &[("calc/__init__.py", "import os\n\nos._exit(0)\n")]);
    commit_all(d);
    let (code, v) = looped(d);
    assert_eq!(code, Some(0), "{v:#}");
    let g = v["gaps"].as_array().unwrap().iter().find(|g| g["source"] == "FailingCommand").cloned();
    let g = g.unwrap_or_else(|| panic!("the command's exit 0 without tests is a gap: {v:#}"));
    assert!(g["summary"].as_str().unwrap().contains("reports no tests ran"), "{g:#}");
}

#[test]
fn tests_skipped_from_the_source_are_tests_that_did_not_run() {
    let (t, gap) = failing_add_proposed(&["calc/ops.py"]);
    let d = t.path();
    let skips = "from unittest import TestCase as _K\n\n_K.assertEqual = lambda self, *a, **k: self.skipTest(\"later\")\n\n\ndef add(a, b):\n    return a - b\n";
    write_files(d, &[("calc/ops.py", skips)]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(15), "{doc:#}");
    assert!(doc["evidence"]["claim"].as_str().unwrap().contains("ran 0 test(s) and without it 1"), "{doc:#}");
}

#[test]
fn a_fix_that_disarms_the_test_framework_under_any_spelling_proves_nothing() {
    // spellings no reading of the diff knows: an alias, getattr, a setattr over lines
    let patches = [
        "from unittest import TestCase as _K\n\n_K.assertEqual = lambda *a, **k: None\n",
        "import unittest\n\ngetattr(unittest, \"TestCase\").assertEqual = lambda *a, **k: None\n",
        "import unittest\n\nsetattr(\n    unittest.TestCase, \"assertEqual\", lambda *a, **k: None\n)\n",
    ];
    for patch in patches {
        let (t, gap) = failing_add_proposed(&["calc/ops.py"]);
        let d = t.path();
        write_files(d, &[("calc/ops.py", &format!("{patch}\n\ndef add(a, b):\n    return a - b\n"))]);
        let (code, doc) = verify(d, &gap);
        assert_ne!(code, Some(0), "{patch}: {doc:#}");
        assert_ne!(crate::red_first::status_of(d, &gap), "closed", "{patch}");
    }
    // and a real fix passes the canary: it fails there as it must
    let (t, gap) = failing_add_proposed(&["calc/ops.py"]);
    let d = t.path();
    write_files(d, &[("calc/ops.py", "def add(a, b):\n    return a + b\n")]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(0), "{doc:#}");
}

#[test]
fn javascript_a_fix_that_overwrites_the_assert_module_proves_nothing() {
    let Some((t, gap)) = money_split_proposed() else { return };
    let d = t.path();
    let patched = "import assert from 'node:assert/strict';\n\nassert.deepEqual = () => {};\nconst a_ = assert;\na_.equal = () => {};\n\nexport function add(a, b) {\n  return a + b;\n}\n\nexport function split(total, n) {\n  return [total];\n}\n";
    write_files(d, &[("src/split.js", patched), ("test/split.test.js", SPLIT_TEST)]);
    let (code, doc) = verify(d, &gap);
    assert_ne!(code, Some(0), "{doc:#}");
    assert_ne!(doc["evidence"]["verdict"], "proven", "{doc:#}");
}

#[test]
fn a_test_moved_off_the_code_it_judged_is_a_judging_change_and_a_rename_only_a_deletion() {
    let test = "import unittest\n\nfrom calc.ops import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";
    // `add` stays as it was; a new `add2` is what the test calls now
    let (t, gap) = failing_add_proposed(&["calc/ops.py", "tests/test_ops.py"]);
    let d = t.path();
    write_files(
        d,
        &[
            ("calc/ops.py", "def add(a, b):\n    return a - b\n\n\ndef add2(a, b):\n    return a + b\n"),
            ("tests/test_ops.py", &test.replace("add", "add2").replace("AddTest", "AddTest")),
        ],
    );
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(11), "{doc:#}");
    assert!(doc["detail"].as_str().unwrap_or_default().contains("no longer calls `add`"), "{doc:#}");
    // renamed (and fixed): `add` is gone from its module
    let (t, gap) = failing_add_proposed(&["calc/ops.py", "tests/test_ops.py"]);
    let d = t.path();
    write_files(
        d,
        &[
            ("calc/ops.py", "def plus(a, b):\n    return a + b\n"),
            ("tests/test_ops.py", &test.replace("add(", "plus(").replace("import add", "import plus")),
        ],
    );
    // a rename deletes a public function (rated for a person), but rewrites no judging
    let (code, doc) = verify(d, &gap);
    let detail = doc["detail"].as_str().unwrap_or_default();
    assert_eq!(code, Some(11), "{doc:#}");
    assert!(detail.contains("deletes public function `add`") && !detail.contains("no longer calls"), "{doc:#}");
}
