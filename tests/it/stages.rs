//! A directory of test files only is no stage: it has no wire, its files are in no stage, and its
//! imports are test evidence for the stages they reach. A fix that adds a test of its own stage
//! stays in that stage.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{andon, git, json, run, write_files};

/// Two packages, `catalog` -> `shop`, with a broken import across the wire, a stub in `catalog`,
/// a `tests/` package testing `shop`, and a configured check; committed.
fn shop() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("pyproject.toml", "[project]\nname = \"shopkit\"\nversion = \"0.1.0\"\n"),
            // the discount's test, once a fix brings it: red without the fix, green with it
            (
                "andon.toml",
                "[[command]]\nname = \"unit\"\nrun = \"[ ! -e tests/test_discount.py ] || python3 -m unittest tests.test_discount\"\nstages = [\"catalog\", \"shop\"]\n",
            ),
            (".gitignore", "analysis/\n.andon/\n__pycache__/\n"),
            ("catalog/__init__.py", "from catalog.prices import price_of\n\n__all__ = [\"price_of\"]\n"),
            (
                "catalog/prices.py",
                "PRICES = {\"apple\": 3}\n\n\ndef price_of(name):\n    return PRICES[name]\n\n\n\
                 def discount(amount, percent):\n    raise NotImplementedError\n",
            ),
            ("shop/__init__.py", "\"\"\"The shop.\"\"\"\n"),
            (
                "shop/cart.py",
                "from catalog import price_of, total_of\n\n\ndef cart_total(items):\n    return total_of(items)\n",
            ),
            ("tests/__init__.py", ""),
            (
                "tests/test_cart.py",
                "import unittest\n\nfrom shop.cart import cart_total\n\n\nclass CartTest(unittest.TestCase):\n\
                 \x20   def test_total(self):\n        self.assertEqual(cart_total([\"apple\"]), 3)\n",
            ),
        ],
    );
    git(d, &["init", "-q"]);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    t
}

/// The rows of a query, each as its column values.
fn query(d: &Path, body: &str) -> Vec<Vec<String>> {
    let o = run(&["query", body, "--format", "json", "-q"], d);
    assert!(o.status.success(), "query {body}: {}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    let rows = v["rows"].as_array().unwrap();
    let cell = |c: &Value| c.as_str().map_or_else(|| c.to_string(), str::to_string);
    rows.iter().map(|r| r.as_array().unwrap().iter().map(cell).collect()).collect()
}

fn loop_json(d: &Path) -> Value {
    json(&run(&["loop", "--format", "json", "-q"], d))
}

#[test]
fn a_test_only_package_is_no_stage_and_has_no_wire() {
    let t = shop();
    let d = t.path();
    let v = json(&run(&["stream", "--format", "json", "-q"], d));
    let names: Vec<&str> = v["stages"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["catalog", "shop"], "{v:#}");
    let wires: Vec<(&str, &str)> = v["wires"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["producer"].as_str().unwrap(), w["consumer"].as_str().unwrap()))
        .collect();
    assert_eq!(wires, [("catalog", "shop")], "{v:#}");
    // the test files are in no stage, and the query language names them
    assert!(query(d, "InStage(p, s)").iter().all(|r| !r[0].starts_with("tests/")));
    assert_eq!(query(d, "StagelessTest(p)"), [["tests/__init__.py"], ["tests/test_cart.py"]]);
    // nothing downstream trips on a file in no stage
    for format in ["dot", "mermaid", "text"] {
        let o = run(&["stream", "--format", format, "-q"], d);
        assert!(o.status.success(), "{format}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let o = run(&["why", "tests/test_cart.py", "catalog/__init__.py", "--format", "json", "-q"], d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // a contract selects test files by path, with or without a stage
    let contract = "[[contract]]\nname = \"tests stay off the shop\"\nkind = \"forbidden\"\n\
                    from = [\"tests/**\"]\nto = [\"shop/**\"]\n";
    write_files(d, &[("andon.toml", contract)]);
    let o = run(&["check", "--format", "json", "-q"], d);
    let v = json(&o);
    assert_eq!(o.status.code(), Some(1), "{v:#}");
    assert!(v.to_string().contains("tests/test_cart.py"), "{v:#}");
}

#[test]
fn test_files_outside_every_package_and_a_packages_own_test_directory_are_support() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            // a namespace package with a test directory beside its code
            ("toolkit/run.py", "def main():\n    return 1\n"),
            ("toolkit/tests/test_run.py", "from toolkit.run import main\n"),
            // outside every package, a TypeScript `__tests__` directory joins no directory stage
            ("web/__tests__/a.test.ts", "import { x } from '../lib';\n"),
            ("web/lib.ts", "export const x = 1;\n"),
            // a crate's own `tests/` is support
            ("crates/core/Cargo.toml", "[package]\nname = \"core\"\nversion = \"0.1.0\"\n"),
            ("crates/core/src/lib.rs", "pub fn f() {}\n"),
            ("crates/core/tests/it.rs", "#[test]\nfn t() { core::f(); }\n"),
            // a crate of tests only is no stage
            ("crates/it/Cargo.toml", "[package]\nname = \"it\"\nversion = \"0.1.0\"\n"),
            ("crates/it/tests/all.rs", "#[test]\nfn t() {}\n"),
        ],
    );
    let stages = query(d, "Stage(s, r)");
    let names: Vec<&str> = stages.iter().map(|r| r[0].as_str()).collect();
    assert!(names.contains(&"core") && !names.contains(&"it"), "{stages:?}");
    assert!(stages.contains(&vec!["web".to_string(), "web".to_string()]), "the directory stage: {stages:?}");
    let in_stage = query(d, "InStage(p, s)");
    let staged: Vec<&str> = in_stage.iter().map(|r| r[0].as_str()).collect();
    for p in ["toolkit/run.py", "web/lib.ts", "crates/core/src/lib.rs"] {
        assert!(staged.contains(&p), "{p} has a stage: {in_stage:?}");
    }
    // test directories are support: in no stage, the test evidence of what they import
    for p in
        ["web/__tests__/a.test.ts", "crates/it/tests/all.rs", "crates/core/tests/it.rs", "toolkit/tests/test_run.py"]
    {
        assert!(!staged.contains(&p), "{p} is in no stage: {in_stage:?}");
    }
}

#[test]
fn a_stageless_test_is_test_evidence_for_the_stage_it_imports() {
    let t = shop();
    let d = t.path();
    // `tests/test_cart.py` imports `shop`, and `catalog` runs under those tests through `shop`
    assert_eq!(query(d, "StageTested(s)"), [["catalog"], ["shop"]]);
    assert!(query(d, "UntestedStage(s, p)").is_empty());
    // without the shop's test, nothing tests either; a test of `catalog` tests `catalog` only
    std::fs::remove_file(d.join("tests/test_cart.py")).unwrap();
    assert!(query(d, "StageTested(s)").is_empty());
    write_files(
        d,
        &[("tests/test_prices.py", "from catalog.prices import price_of\n\n\ndef test_p():\n    assert price_of\n")],
    );
    assert_eq!(query(d, "StageTested(s)"), [["catalog"]]);
    assert!(query(d, "UntestedStage(s, p)").iter().all(|r| r[0] == "shop"));
    write_files(d, &[("tests/test_cart.py", "import unittest\n\nfrom shop.cart import cart_total\n")]);
    assert_eq!(query(d, "StageTested(s)"), [["catalog"], ["shop"]]);
    assert_eq!(
        query(d, "TestImport(s, p, l, t, c)"),
        [
            ["catalog", "tests/test_prices.py", "1", "catalog/prices.py", "exact"],
            ["shop", "tests/test_cart.py", "3", "shop/cart.py", "exact"]
        ]
    );
}

#[test]
fn a_broken_import_in_a_stageless_test_is_a_gap_of_its_stage_and_its_markers_are_none() {
    let t = shop();
    let d = t.path();
    write_files(
        d,
        &[(
            "tests/test_prices.py",
            "from catalog.prices import price_of, rebate\n\n\ndef test_p():\n    # TODO: test rebate\n    assert price_of\n",
        )],
    );
    let v = loop_json(d);
    let gaps = v["gaps"].as_array().unwrap();
    let test_gaps: Vec<&Value> = gaps.iter().filter(|g| g["path"] == "tests/test_prices.py").collect();
    assert_eq!(test_gaps.len(), 1, "the broken import is one gap, the TODO none: {gaps:#?}");
    let g = test_gaps[0];
    assert_eq!(
        (g["kind"].as_str(), g["stage"].as_str(), g["source"].as_str()),
        (Some("bug"), Some("catalog"), Some("BrokenImport"))
    );
    assert!(g["wire"].is_null() && g["summary"].as_str().unwrap().contains("`rebate`"), "{g:#}");
    // no gap names a wire to a stage that does not exist
    assert!(gaps.iter().all(|g| g["wire"].is_null() || g["wire"]["consumer"] != ""), "{gaps:#?}");
    assert_eq!(query(d, "Marker(p, l, k)").iter().filter(|r| r[0].starts_with("tests/")).count(), 1);
    assert!(query(d, "StageMarker(s, p, l, k)").iter().all(|r| !r[1].starts_with("tests/")));
}

/// The fix of a gap by its source: what it writes and the files' new text.
fn fix_of(gap: &Value) -> Vec<(&'static str, &'static str)> {
    let summary = gap["summary"].as_str().unwrap_or_default();
    match gap["source"].as_str().unwrap_or_default() {
        "BrokenImport" => vec![(
            "catalog/__init__.py",
            "from catalog.prices import price_of\n\n__all__ = [\"price_of\", \"total_of\"]\n\n\n\
             def total_of(items):\n    return sum(price_of(i) for i in items)\n",
        )],
        "MissingTests" => vec![(
            "tests/test_prices.py",
            "import unittest\n\nfrom catalog.prices import price_of\n\n\nclass PriceTest(unittest.TestCase):\n\
             \x20   def test_price(self):\n        self.assertEqual(price_of(\"apple\"), 3)\n",
        )],
        "StageMarker" if summary.contains("NotImplementedError") => vec![
            (
                "catalog/prices.py",
                "PRICES = {\"apple\": 3}\n\n\ndef price_of(name):\n    return PRICES[name]\n\n\n\
                 def discount(amount, percent):\n    return amount * (100 - percent) / 100\n",
            ),
            (
                "tests/test_discount.py",
                "import unittest\n\nfrom catalog.prices import discount\n\n\nclass DiscountTest(unittest.TestCase):\n\
                 \x20   def test_discount(self):\n        self.assertEqual(discount(100, 10), 90)\n",
            ),
        ],
        other => panic!("no fix for a `{other}` gap: {gap:#}"),
    }
}

#[test]
fn a_fix_that_adds_a_test_of_its_stage_stays_in_it_and_never_halts_on_authorization() {
    let t = shop();
    let d = t.path();
    let mut fixed: Vec<String> = Vec::new();
    for _ in 0..12 {
        let v = loop_json(d);
        if v["next"]["action"] != "propose" {
            assert!(matches!(v["verdict"]["outcome"].as_str(), Some("converged" | "hardened")), "{v:#}");
            break;
        }
        let id = v["next"]["gap"].as_str().unwrap().to_string();
        let gap = v["gaps"].as_array().unwrap().iter().find(|g| g["id"] == id.as_str()).unwrap().clone();
        let files = fix_of(&gap);
        let mut args = vec!["propose", "--gap", &id, "--blast-radius", "local+reversible", "--approach"];
        args.push(if gap["source"] == "BrokenImport" { "structural" } else { "executed" });
        args.extend(["--reason", "r", "--description", "d", "-q"]);
        for (f, _) in &files {
            args.extend(["--write-set", f]);
        }
        let o = run(&args, d);
        assert!(o.status.success(), "propose {id}: {}", String::from_utf8_lossy(&o.stdout));
        run(&["loop", "-q"], d);
        write_files(d, &files);
        let o = andon().args(["verify", "--gap", &id, "--format", "json", "-q"]).current_dir(d).output().unwrap();
        let out = json(&o);
        assert_eq!(o.status.code(), Some(0), "verify {id} ({}): {out:#}", gap["summary"]);
        assert_eq!(out["diff"]["rerated"].as_str(), Some("local+reversible"), "{out:#}");
        run(&["loop", "-q"], d);
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", &format!("fix {id}")]);
        fixed.push(gap["source"].as_str().unwrap().to_string());
    }
    // the stub's fix, which adds a test to `tests/`, was one of them
    assert!(fixed.iter().any(|s| s == "StageMarker"), "{fixed:?}");
    let v = json(&run(&["stream", "--format", "json", "-q"], d));
    assert_eq!(v["verdict"]["stages"], json!(2), "{v:#}");
}

#[test]
fn a_request_that_adds_a_test_of_the_wire_is_in_scope_and_a_test_of_another_stage_is_not() {
    let t = shop();
    let d = t.path();
    write_files(
        d,
        &[
            ("cli/__init__.py", "from shop.cart import cart_total\n"),
            ("tests/test_cli.py", "import cli\n\n\ndef test_cli():\n    assert cli\n"),
        ],
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "cli"]);
    let verify = |files: &[(&str, &str)]| -> Value {
        write_files(d, files);
        git(d, &["add", "-A", "--intent-to-add"]);
        let diff = std::process::Command::new("git").args(["diff"]).current_dir(d).output().unwrap();
        let request = json!({ "wire": "catalog -> shop", "contract": "the price of an item is unchanged",
                              "fixDiff": { "files": [], "diff": String::from_utf8(diff.stdout).unwrap() } });
        let scratch = tempfile::tempdir().unwrap();
        let file = scratch.path().join("request.json");
        std::fs::write(&file, serde_json::to_vec(&request).unwrap()).unwrap();
        let o = andon().args(["verify", "--request", file.to_str().unwrap(), "--format", "json", "-q"]).arg(d).output();
        git(d, &["checkout", "-q", "--", "."]);
        git(d, &["clean", "-qfd"]);
        json(&o.unwrap())
    };
    let in_scope = verify(&[(
        "tests/test_prices.py",
        "from catalog.prices import price_of\n\n\ndef test_p():\n    assert price_of(\"apple\") == 3\n",
    )]);
    assert_ne!(in_scope["verdict"]["outcome"], "refused:scope", "{in_scope:#}");
    let outside = verify(&[("tests/test_cli.py", "import cli\n\n\ndef test_cli():\n    assert cli is not None\n")]);
    assert_eq!(outside["verdict"]["outcome"], "refused:scope", "{outside:#}");
    assert_eq!(outside["outside_scope"], json!(["tests/test_cli.py (a test of stage `cli`)"]), "{outside:#}");
}

/// A repository whose production packages are named like test directories (`testing`, `benches`,
/// `load_tests`, `test`), beside a `tests/` package and a namespace package of test files only.
fn test_named_packages() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"kit\"\nversion = \"0.1.0\"\n"),
            (
                "app/__init__.py",
                "from testing import make_fixture, nope\nfrom test import helper\n\n\n\
                 def run():\n    return make_fixture(helper())\n",
            ),
            ("testing/__init__.py", "def make_fixture(x):\n    return {\"x\": x}\n"),
            ("test/__init__.py", "def helper():\n    return 1\n"),
            ("benches/__init__.py", "def bench():\n    return 2\n"),
            ("load_tests/__init__.py", "def load():\n    return 3\n"),
            ("tests/__init__.py", ""),
            ("tests/test_app.py", "from app import run\n\n\ndef test_run():\n    assert run()\n"),
            ("checks/test_probe.py", "from benches import bench\n\n\ndef test_bench():\n    assert bench()\n"),
        ],
    );
    t
}

#[test]
fn a_package_named_like_a_test_directory_is_a_stage_unless_it_is_clearly_tests() {
    let t = test_named_packages();
    let d = t.path();
    let stages = query(d, "Stage(s, r)");
    let names: Vec<&str> = stages.iter().map(|r| r[0].as_str()).collect();
    // `testing`, `benches` and `load_tests` are production by their names; `test` is a test
    // directory's name, but production code imports it
    assert_eq!(names, ["app", "benches", "load_tests", "test", "testing"], "{stages:?}");
    // the files stay test files by their paths, as before
    let test_files: Vec<String> = query(d, "TestFile(p)").into_iter().map(|r| r[0].clone()).collect();
    assert!(test_files.contains(&"testing/__init__.py".to_string()), "{test_files:?}");
    // a `tests/` package and a package of test files by name are no stage
    assert_eq!(query(d, "StagelessTest(p)"), [["checks/test_probe.py"], ["tests/__init__.py"], ["tests/test_app.py"]]);
    let v = loop_json(d);
    let gaps = v["gaps"].as_array().unwrap();
    let broken: Vec<&Value> = gaps.iter().filter(|g| g["source"] == "BrokenImport").collect();
    assert_eq!(broken.len(), 1, "{v:#}");
    assert!(broken[0]["summary"].as_str().unwrap().contains("`nope`"), "{v:#}");
    assert_eq!(broken[0]["wire"], json!({"producer": "testing", "consumer": "app"}), "{v:#}");
}

#[test]
fn a_test_directory_stays_no_stage_when_only_tests_import_it() {
    let t = test_named_packages();
    let d = t.path();
    // without the production import, `test` is a test directory again
    write_files(
        d,
        &[("app/__init__.py", "from testing import make_fixture\n\n\ndef run():\n    return make_fixture(1)\n")],
    );
    write_files(
        d,
        &[(
            "tests/test_app.py",
            "from test import helper\nfrom app import run\n\n\ndef test_run():\n    assert run() and helper()\n",
        )],
    );
    let names: Vec<String> = query(d, "Stage(s, r)").into_iter().map(|r| r[0].clone()).collect();
    assert_eq!(names, ["app", "benches", "load_tests", "testing"]);
}
