//! Red first: a proof by the stage's checks must discriminate. verify runs them on the base tree
//! (the tree the loop last proved) with the fix's test files laid over it, then on the fixed tree;
//! a check that passes both ways proves nothing, one that fails both ways refutes.

use std::path::Path;

use serde_json::Value;

use crate::support::{commit_all, json, run, run_ok, write_files};

pub(crate) const PRICES: &str = "PRICES = {\"apple\": 3, \"pear\": 4}\n\n\ndef price_of(name):\n    return PRICES[name]\n\n\n\
                      def discount(amount, percent):\n    # TODO: apply the percentage discount\n    raise NotImplementedError\n";
const TOTAL: &str = "\n\ndef total_of(names):\n    return sum(price_of(n) for n in names)\n";
const INIT_FIXED: &str = "\"\"\"Product catalog.\"\"\"\nfrom catalog.prices import price_of, total_of\n\n__all__ = [\"price_of\", \"total_of\"]\n";
pub(crate) const DISCOUNT_TEST: &str = "import unittest\n\nfrom catalog.prices import discount\n\n\n\
                             class DiscountTest(unittest.TestCase):\n    def test_discount(self):\n        self.assertEqual(discount(200, 10), 180)\n";

/// Two packages (a broken import across the wire, a TODO stub in `catalog`), and the unit tests
/// as the stages' `[[command]]`: they fail until `catalog` exports `total_of`.
pub(crate) fn trial() -> tempfile::TempDir {
    let t = crate::support::shop_trial();
    write_files(
        t.path(),
        &[
            (
                "andon.toml",
                "[[command]]\nname = \"unit\"\nrun = \"python3 -m unittest discover -s tests -t .\"\nstages = [\"catalog\", \"shop\"]\n",
            ),
            (".gitignore", "analysis/\n.andon/\n__pycache__/\n"),
        ],
    );
    commit_all(t.path());
    t
}

/// One `andon loop --format json`.
pub(crate) fn step(d: &Path) -> Value {
    json(&run(&["loop", "--format", "json", "-q"], d))
}

/// Proposes a fix of `gap` by `approach` writing `files`, and lets the loop record it.
pub(crate) fn propose(d: &Path, gap: &str, approach: &str, files: &[&str]) {
    let mut args = vec!["propose", "--gap", gap, "--blast-radius", "local+reversible", "--approach", approach];
    args.extend(["--reason", "the trial", "--description", "the fix", "--write-set"]);
    args.extend(files);
    run_ok(&args, d);
    step(d);
}

/// `andon verify --gap G --format json`: its exit code and document.
pub(crate) fn verify(d: &Path, gap: &str) -> (Option<i32>, Value) {
    let o = run(&["verify", "--gap", gap, "--format", "json"], d);
    (o.status.code(), json(&o))
}

/// Fixes the broken import (structurally) and proves it; `commit` says whether the fix is
/// committed (else it lives in the tree the loop proved). Returns the marker gap's id, which the
/// loop picks next.
pub(crate) fn fix_the_wire(d: &Path, commit: bool) -> String {
    let v = step(d);
    let wire = v["next"]["gap"].as_str().unwrap().to_string();
    assert!(v["gaps"].as_array().unwrap().iter().any(|g| g["id"] == wire.as_str() && g["source"] == "BrokenImport"));
    propose(d, &wire, "structural", &["catalog/prices.py", "catalog/__init__.py"]);
    write_files(d, &[("catalog/prices.py", format!("{PRICES}{TOTAL}").as_str()), ("catalog/__init__.py", INIT_FIXED)]);
    if commit {
        commit_all(d);
    }
    let (code, doc) = verify(d, &wire);
    assert_eq!(code, Some(0), "{doc:#}");
    let v = step(d);
    let next = v["next"]["gap"].as_str().unwrap_or_default().to_string();
    let g = v["gaps"].as_array().unwrap().iter().find(|g| g["id"] == next.as_str());
    assert_eq!(g.map(|g| g["source"].clone()), Some(Value::from("StageMarker")), "{v:#}");
    next
}

/// The TODO filled in.
pub(crate) fn filled() -> String {
    format!("{PRICES}{TOTAL}").replace(
        "    # TODO: apply the percentage discount\n    raise NotImplementedError\n",
        "    return amount * (100 - percent) / 100\n",
    )
}

/// The gap's status in the ledger.
pub(crate) fn status_of(d: &Path, gap: &str) -> String {
    let (_, state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    state.gaps[gap].status.name().to_string()
}

#[test]
fn a_todo_fixed_without_a_test_that_fails_without_it_is_not_proven() {
    let t = trial();
    let d = t.path();
    let marker = fix_the_wire(d, true);
    propose(d, &marker, "executed", &["catalog/prices.py", "tests/test_prices.py"]);
    write_files(d, &[("catalog/prices.py", filled().as_str())]);
    let (code, doc) = verify(d, &marker);
    assert_eq!(code, Some(14), "unknown, as every unknown obligation: {doc:#}");
    assert_eq!(doc["evidence"]["verdict"], "unknown", "{doc:#}");
    assert_eq!(doc["evidence"]["claim"], "the check passes without the fix: add a test that fails without it");
    let red = &doc["evidence"]["red_first"];
    assert_eq!(red["before"][0]["exit"], 0, "{red:#}");
    assert_eq!(red["after"][0]["exit"], 0, "{red:#}");
    assert_eq!(red["flipped"], serde_json::json!([]));
    step(d);
    assert_ne!(status_of(d, &marker), "closed", "the gap stays open");
}

#[test]
fn the_same_fix_with_a_test_that_fails_without_it_is_proven_and_names_the_test() {
    let t = trial();
    let d = t.path();
    let marker = fix_the_wire(d, true);
    propose(d, &marker, "executed", &["catalog/prices.py", "tests/test_prices.py"]);
    write_files(d, &[("catalog/prices.py", filled().as_str()), ("tests/test_prices.py", DISCOUNT_TEST)]);
    let (code, doc) = verify(d, &marker);
    assert_eq!(code, Some(0), "{doc:#}");
    let red = &doc["evidence"]["red_first"];
    assert_eq!(red["overlaid"], serde_json::json!(["tests/test_prices.py"]), "{red:#}");
    assert_eq!(red["before"][0]["exit"], 1, "{red:#}");
    assert_eq!(red["after"][0]["exit"], 0, "{red:#}");
    let flipped: Vec<&str> = red["flipped"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert!(flipped.iter().any(|f| f.starts_with("test_discount")), "{red:#}");
    // the scratch tree is gone, and the base run's output is kept under the output directory
    let artifact = red["before"][0]["artifact"].as_str().unwrap();
    assert!(artifact.starts_with("analysis/andon/"), "{artifact}");
    assert!(d.join(artifact).is_file(), "{artifact}");
    step(d);
    assert_eq!(status_of(d, &marker), "closed");
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

#[test]
fn the_base_is_the_tree_the_loop_proved_so_an_earlier_unfixed_bug_does_not_look_red() {
    // the wire's fix is proven but not committed: at HEAD the cart's test still fails, and a
    // check run there would be red for any later fix
    let t = trial();
    let d = t.path();
    let marker = fix_the_wire(d, false);
    propose(d, &marker, "executed", &["catalog/prices.py", "tests/test_prices.py"]);
    write_files(d, &[("catalog/prices.py", filled().as_str())]);
    let (code, doc) = verify(d, &marker);
    assert_eq!(code, Some(14), "{doc:#}");
    let red = &doc["evidence"]["red_first"];
    assert_eq!(red["before"][0]["exit"], 0, "the base has the proven wire fix: {red:#}");
    assert_ne!(red["base"], Value::from(String::from_utf8(git_out(d, &["rev-parse", "HEAD"])).unwrap().trim()));
}

#[test]
fn a_test_that_fails_with_the_fix_too_refutes() {
    let t = trial();
    let d = t.path();
    let marker = fix_the_wire(d, true);
    propose(d, &marker, "executed", &["catalog/prices.py", "tests/test_prices.py"]);
    let wrong = DISCOUNT_TEST.replace("180", "170");
    write_files(d, &[("catalog/prices.py", filled().as_str()), ("tests/test_prices.py", wrong.as_str())]);
    let (code, doc) = verify(d, &marker);
    assert_eq!(code, Some(10), "{doc:#}");
    assert_eq!(doc["evidence"]["verdict"], "refuted");
    assert_eq!(doc["evidence"]["red_first"]["before"][0]["exit"], 1);
}

#[test]
fn a_failing_command_is_red_at_the_base_by_definition() {
    // one package, a logic bug, and its failing unit test as the command: the fix needs no new test
    let t = crate::support::calc_repo("def add(a, b):\n    return a - b\n");
    let d = t.path();
    let v = step(d);
    let gap = v["next"]["gap"].as_str().unwrap().to_string();
    let picked = v["gaps"].as_array().unwrap().iter().find(|g| g["id"] == gap.as_str()).unwrap();
    assert_eq!(picked["source"], "FailingCommand", "{v:#}");
    propose(d, &gap, "executed", &["calc/ops.py"]);
    write_files(d, &[("calc/ops.py", "def add(a, b):\n    return a + b\n")]);
    let (code, doc) = verify(d, &gap);
    let log = |k: &str| {
        let a = doc["evidence"]["red_first"][k][0]["artifact"].as_str().unwrap_or_default().to_string();
        std::fs::read_to_string(d.join(&a)).unwrap_or_default()
    };
    assert_eq!(code, Some(0), "{doc:#}\ncontrol:\n{}\nbefore:\n{}", log("control"), log("before"));
    let red = &doc["evidence"]["red_first"];
    assert_eq!(red["overlaid"], serde_json::json!([]), "no test file changed: {red:#}");
    assert_eq!(red["before"][0]["exit"], 1, "{red:#}");
    let flipped: Vec<&str> = red["flipped"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert!(flipped.iter().any(|f| f.starts_with("test_add")), "{red:#}");
}

/// git's stdout at `d`.
fn git_out(d: &Path, args: &[&str]) -> Vec<u8> {
    std::process::Command::new("git").arg("-C").arg(d).args(args).output().unwrap().stdout
}

#[test]
fn a_check_that_tells_the_copy_from_the_repository_proves_nothing() {
    // `.git` is missing from the copy: red without the fix there, and red with it too (the control)
    let t = trial();
    let d = t.path();
    let marker = fix_the_wire(d, true);
    propose(d, &marker, "executed", &["catalog/prices.py", "tests/test_prices.py"]);
    write_files(d, &[("catalog/prices.py", filled().as_str())]);
    let o = run(&["verify", "--gap", &marker, "--command", "test -d .git", "--format", "json"], d);
    let doc = json(&o);
    assert_eq!(o.status.code(), Some(14), "{doc:#}");
    assert!(doc["evidence"]["claim"].as_str().unwrap().contains("depend on where they run"), "{doc:#}");
    let red = &doc["evidence"]["red_first"];
    // the given check runs beside the stage's own (`unit`), never instead of it
    let given = |k: &str| {
        let runs = red[k].as_array().unwrap();
        assert!(runs.iter().any(|r| r["command"] != "test -d .git"), "the configured check ran too: {red:#}");
        runs.iter().find(|r| r["command"] == "test -d .git").unwrap()["exit"].clone()
    };
    assert_ne!(given("before"), 0, "{red:#}");
    assert_ne!(given("control"), 0, "{red:#}");
}

#[test]
fn ignored_directories_are_linked_by_absolute_path() {
    // run from inside the repository (a relative root), with an ignored directory the check needs
    let t = trial();
    let d = t.path();
    let toml = "[[command]]\nname = \"unit\"\nrun = \"test -e build/marker && python3 -m unittest discover -s tests -t .\"\nstages = [\"catalog\", \"shop\"]\n";
    write_files(
        d,
        &[("andon.toml", toml), (".gitignore", "analysis/\n.andon/\n__pycache__/\nbuild/\n"), ("build/marker", "x")],
    );
    commit_all(d);
    let marker = fix_the_wire(d, true);
    propose(d, &marker, "executed", &["catalog/prices.py", "tests/test_prices.py"]);
    write_files(d, &[("catalog/prices.py", filled().as_str())]);
    // no test that fails without the fix: the run without it passes (build/ is there, not a link to itself)
    let (code, doc) = verify(d, &marker);
    assert_eq!(code, Some(14), "{doc:#}");
    assert_eq!(doc["evidence"]["red_first"]["before"][0]["exit"], 0, "{doc:#}");
}

#[test]
fn a_deleted_test_file_is_deleted_from_the_copy_too() {
    let t = trial();
    let d = t.path();
    let marker = fix_the_wire(d, true);
    // a test of the discount that no configured command runs (the discovery pattern is `test*.py`)
    write_files(d, &[("tests/check_prices.py", DISCOUNT_TEST)]);
    commit_all(d);
    step(d);
    propose(d, &marker, "executed", &["catalog/prices.py", "tests/check_prices.py"]);
    // the fix fills the stub in and deletes that test
    write_files(d, &[("catalog/prices.py", filled().as_str())]);
    std::fs::remove_file(d.join("tests/check_prices.py")).unwrap();
    let o = run(&["authorize", &marker, "--by", "lead", "--reason", "the test goes"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    // a check that runs the test where it exists: were the deletion not in the copy, it would be red
    let check = "test ! -e tests/check_prices.py || python3 -m unittest tests.check_prices";
    let o = run(&["verify", "--gap", &marker, "--command", check, "--format", "json"], d);
    let doc = json(&o);
    let red = &doc["evidence"]["red_first"];
    assert_eq!(red["overlaid"], serde_json::json!(["tests/check_prices.py"]), "{doc:#}");
    assert_eq!(red["before"][0]["exit"], 0, "the deleted test does not run without the fix: {doc:#}");
    assert_eq!(o.status.code(), Some(14), "{doc:#}");
}
