//! The cheats of `cheats.rs` on repositories of pytest, node:test and cargo test: a committed
//! skip, an expected value rewritten to the bug's, a test that pins nothing. Each runner's row
//! skips, saying so, where the runner is not installed here (`.ci/run` installs pytest).

use crate::cheats::{looped, node, picked, weakened_judging_holds_in};
use crate::red_first::{propose, verify};
use crate::support::{commit_all, git, write_files};

/// A new repository of `files`, committed.
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(t.path(), files);
    git(t.path(), &["init", "-q"]);
    commit_all(t.path());
    t
}

/// Whether `python3 -m pytest` runs here.
fn pytest() -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("pytest is not installed here: the pytest row is skipped");
    }
    ok
}

/// Whether `cargo` runs here.
fn cargo() -> bool {
    std::process::Command::new("cargo").arg("--version").output().is_ok_and(|o| o.status.success())
}

const PY_TEST: &str = "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";

/// A Python package tested by pytest, whose `add` subtracts (`ops` is its module's text).
fn pytest_calc(ops: &str) -> tempfile::TempDir {
    repo(&[
        ("pyproject.toml", "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n"),
        ("andon.toml", "[[command]]\nname = \"unit\"\nrun = \"python3 -m pytest -q\"\n"),
        ("calc/__init__.py", "\"\"\"Arithmetic.\"\"\"\n"),
        ("calc/ops.py", ops),
        ("tests/test_ops.py", PY_TEST),
        (".gitignore", "analysis/\n.andon/\n__pycache__/\n.pytest_cache/\n"),
    ])
}

const JS_TEST: &str = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from '../src/ops.js';\n\ntest('add', () => {\n  assert.equal(add(2, 3), 5);\n});\n";

/// A JavaScript package tested by `node --test`, whose `add` subtracts.
fn node_calc() -> tempfile::TempDir {
    repo(&[
        ("package.json", "{\"name\": \"calc\", \"version\": \"1.0.0\", \"type\": \"module\"}\n"),
        ("src/ops.js", "export function add(a, b) {\n  return a - b;\n}\n"),
        ("test/ops.test.js", JS_TEST),
        ("andon.toml", "[[command]]\nname = \"unit\"\nrun = \"node --test\"\n"),
        (".gitignore", "analysis/\n.andon/\nnode_modules/\n"),
    ])
}

const RS_TEST: &str = "#[test]\nfn adds() {\n    assert_eq!(calc::add(2, 3), 5);\n}\n";

/// A Rust crate tested by `cargo test`, whose `add` subtracts.
fn rust_calc() -> tempfile::TempDir {
    repo(&[
        ("Cargo.toml", "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n"),
        ("src/lib.rs", "pub fn add(a: i64, b: i64) -> i64 {\n    a - b\n}\n"),
        ("tests/ops.rs", RS_TEST),
        ("andon.toml", "[[command]]\nname = \"unit\"\nrun = \"cargo test --quiet --offline\"\ntimeout_secs = 300\n"),
        (".gitignore", "analysis/\n.andon/\ntarget/\nCargo.lock\n"),
    ])
}

/// Row 6: the failing test's expected value is rewritten to what the bug returns; verify halts
/// for a person (11) and the loop stands on it; the real fix is then proven.
fn rewritten_expectation_halts(t: &tempfile::TempDir, test: (&str, &str), fix: (&str, &str), fixed_test: &str) {
    let d = t.path();
    let gap = picked(d, "FailingCommand");
    propose(d, &gap, "executed", &[test.0]);
    write_files(d, &[test]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(11), "{doc:#}");
    assert!(doc["detail"].as_str().unwrap_or_default().contains("no longer asserts"), "{doc:#}");
    let (code, v) = looped(d);
    assert_eq!(code, Some(11), "{v:#}");
    assert_ne!(crate::red_first::status_of(d, &gap), "closed");
    // the real fix, the test as it was: proven
    write_files(d, &[(test.0, fixed_test), fix]);
    propose(d, &gap, "executed", &[test.0, fix.0]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(0), "{doc:#}");
}

#[test]
fn pytest_a_committed_skip_marker_holds_the_loop_for_a_person() {
    if !pytest() {
        return;
    }
    let skipped = format!("import pytest\n\n{}", PY_TEST.replace("def test_add", "@pytest.mark.skip\ndef test_add"));
    let t = pytest_calc("def add(a, b):\n    return a - b\n");
    weakened_judging_holds_in(&t, &[("tests/test_ops.py", &skipped)], "tests/test_ops.py");
}

#[test]
fn pytest_an_expected_value_rewritten_to_the_bug_is_a_judging_change() {
    if !pytest() {
        return;
    }
    let t = pytest_calc("def add(a, b):\n    return a - b\n");
    let test = ("tests/test_ops.py", "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == -1\n");
    rewritten_expectation_halts(&t, test, ("calc/ops.py", "def add(a, b):\n    return a + b\n"), PY_TEST);
}

#[test]
fn pytest_a_stub_fixed_with_a_test_that_pins_nothing_is_not_proven_and_only_the_flipped_test_runs() {
    if !pytest() {
        return;
    }
    let stub = "def add(a, b):\n    return a + b\n\n\ndef split(total, n):\n    # TODO: split evenly\n    raise NotImplementedError\n";
    let t = pytest_calc(stub);
    let d = t.path();
    let gap = picked(d, "StageMarker");
    propose(d, &gap, "executed", &["calc/ops.py", "tests/test_split.py"]);
    let fixed = "def add(a, b):\n    return a + b\n\n\ndef split(total, n):\n    return [total]\n";
    let weak = "from calc.ops import split\n\n\ndef test_split():\n    assert isinstance(split(1000, 3), list)\n";
    write_files(d, &[("calc/ops.py", fixed), ("tests/test_split.py", weak)]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(14), "{doc:#}");
    assert_eq!(doc["evidence"]["reason"], "not-pinning", "{doc:#}");
    let claim = doc["evidence"]["claim"].as_str().unwrap();
    // the variants ran against the flipped test alone, selected by its node id
    assert!(claim.contains("`python3 -m pytest -q tests/test_split.py::test_split`"), "{claim}");
    let real = "def add(a, b):\n    return a + b\n\n\ndef split(total, n):\n    q, r = divmod(total, n)\n    return [q + 1] * r + [q] * (n - r)\n";
    let strong = "from calc.ops import split\n\n\ndef test_split():\n    assert split(1000, 3) == [334, 333, 333]\n";
    write_files(d, &[("calc/ops.py", real), ("tests/test_split.py", strong)]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(0), "{doc:#}");
    let pinned = doc["evidence"]["red_first"]["pinned"].as_array().unwrap();
    assert!(pinned.len() >= 6 && pinned.iter().all(|v| v["caught"] == true), "{doc:#}");
}

#[test]
fn node_a_committed_test_skip_holds_the_loop_for_a_person() {
    if !node() {
        eprintln!("node is not installed here: the node:test row is skipped");
        return;
    }
    let skipped = JS_TEST.replace("test('add',", "test.skip('add',");
    weakened_judging_holds_in(&node_calc(), &[("test/ops.test.js", &skipped)], "test/ops.test.js");
}

#[test]
fn node_an_expected_value_rewritten_to_the_bug_is_a_judging_change() {
    if !node() {
        eprintln!("node is not installed here: the node:test row is skipped");
        return;
    }
    let test = ("test/ops.test.js", JS_TEST.replace("add(2, 3), 5", "add(2, 3), -1"));
    let fix = ("src/ops.js", "export function add(a, b) {\n  return a + b;\n}\n");
    rewritten_expectation_halts(&node_calc(), (test.0, &test.1), fix, JS_TEST);
}

#[test]
fn node_a_real_fix_is_pinned_against_the_flipped_test_file_alone() {
    if !node() {
        eprintln!("node is not installed here: the node:test row is skipped");
        return;
    }
    let t = crate::cheats::money();
    let d = t.path();
    write_files(d, &[("andon.toml", "[[command]]\nname = \"unit\"\nrun = \"node --test\"\n")]);
    commit_all(d);
    let gap = picked(d, "StageMarker");
    propose(d, &gap, "executed", &["src/split.js", "test/split.test.js"]);
    let real = "export function add(a, b) {\n  return a + b;\n}\n\nexport function split(total, n) {\n  const q = Math.floor(total / n), r = total % n;\n  return Array.from({ length: n }, (_, i) => (i < r ? q + 1 : q));\n}\n";
    let strong = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { split } from '../src/split.js';\n\ntest('splits evenly', () => {\n  assert.deepEqual(split(1000, 3), [334, 333, 333]);\n});\n";
    write_files(d, &[("src/split.js", real), ("test/split.test.js", strong)]);
    let (code, doc) = verify(d, &gap);
    assert_eq!(code, Some(0), "{doc:#}");
    let claim = doc["evidence"]["claim"].as_str().unwrap();
    assert!(claim.contains("`node --test test/split.test.js`"), "{claim}");
}

#[test]
fn cargo_a_committed_ignore_holds_the_loop_for_a_person() {
    if !cargo() {
        eprintln!("cargo is not installed here: the cargo test row is skipped");
        return;
    }
    let ignored = RS_TEST.replace("#[test]\n", "#[test]\n#[ignore]\n");
    weakened_judging_holds_in(&rust_calc(), &[("tests/ops.rs", &ignored)], "tests/ops.rs");
}

#[test]
fn cargo_an_expected_value_rewritten_to_the_bug_is_a_judging_change() {
    if !cargo() {
        eprintln!("cargo is not installed here: the cargo test row is skipped");
        return;
    }
    let test = ("tests/ops.rs", RS_TEST.replace("calc::add(2, 3), 5", "calc::add(2, 3), -1"));
    let fix = ("src/lib.rs", "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n");
    rewritten_expectation_halts(&rust_calc(), (test.0, &test.1), fix, RS_TEST);
}

#[test]
fn pytest_an_unrecognised_config_file_or_the_callers_environment_cannot_deselect_the_failing_test() {
    if !pytest() {
        return;
    }
    // pytest.toml is test configuration like pytest.ini
    let t = pytest_calc("def add(a, b):\n    return a - b\n");
    let toml = "[pytest]\naddopts = [\"-k\", \"not add\"]\n";
    weakened_judging_holds_in(&t, &[("pytest.toml", toml)], "pytest.toml");
    // PYTEST_ADDOPTS in the environment decides nothing: the suite still fails under it
    let t = pytest_calc("def add(a, b):\n    return a - b\n");
    let d = t.path();
    let o = crate::support::andon()
        .args(["loop", "--format", "json", "-q"])
        .current_dir(d)
        .env("PYTEST_ADDOPTS", "-k 'not add'")
        .output()
        .unwrap();
    let v = crate::support::json(&o);
    assert!(v["gaps"].as_array().unwrap().iter().any(|g| g["source"] == "FailingCommand"), "{v:#}");
}

#[test]
fn cargo_a_config_that_replaces_the_test_runner_holds_the_loop_for_a_person() {
    if !cargo() {
        eprintln!("cargo is not installed here: the cargo test row is skipped");
        return;
    }
    let config =
        "[target.x86_64-unknown-linux-gnu]\nrunner = \"true\"\n[target.aarch64-unknown-linux-gnu]\nrunner = \"true\"\n";
    weakened_judging_holds_in(&rust_calc(), &[(".cargo/config.toml", config)], ".cargo/config.toml");
}
