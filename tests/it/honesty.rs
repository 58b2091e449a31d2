//! The loop as an agent drives it: no fix proves itself by weakening its proof, a proven fix need
//! not be committed before the next gap, and every halt an agent can reach has one way on.

use std::path::Path;

use serde_json::Value;

use crate::support::{commit_all, json, run, write_files};

const PRICES: &str = "PRICES = {\"apple\": 3, \"pear\": 4}\n\n\ndef price_of(name):\n    return PRICES[name]\n";
const PRICE_TEST: &str = "import unittest\n\nfrom catalog.prices import price_of\n\n\nclass PriceTest(unittest.TestCase):\n    def test_price(self):\n        self.assertEqual(price_of(\"apple\"), 3)\n";
const COMMAND: &str = "[[command]]\nname = \"unit\"\nrun = \"python3 -m unittest discover -s . -p test_*.py -t .\"\n";

/// Two packages, `catalog` and `shop`, each with its unit tests, and `extra` files on top,
/// committed: the loop's command runs every test.
fn shop(toml: &str, extra: &[(&str, &str)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let mut files: Vec<(&str, &str)> = vec![
        ("andon.toml", toml),
        ("pyproject.toml", "[project]\nname = \"shopkit\"\nversion = \"0.1.0\"\n"),
        ("catalog/__init__.py", "from catalog.prices import price_of\n\n__all__ = [\"price_of\"]\n"),
        ("catalog/prices.py", PRICES),
        ("catalog/test_prices.py", PRICE_TEST),
        ("shop/__init__.py", ""),
        (
            "shop/cart.py",
            "from catalog import price_of\n\n\ndef cart_total(items):\n    return sum(price_of(i) for i in items)\n",
        ),
        (
            "shop/test_cart.py",
            "import unittest\n\nfrom shop.cart import cart_total\n\n\nclass CartTest(unittest.TestCase):\n    def test_total(self):\n        self.assertEqual(cart_total([\"apple\", \"pear\"]), 7)\n",
        ),
    ];
    files.retain(|(p, _)| !extra.iter().any(|(e, _)| e == p));
    files.extend_from_slice(extra);
    write_files(t.path(), &files);
    commit_all(t.path());
    t
}

/// `andon loop --format json`, and its exit code.
fn step(d: &Path) -> (i32, Value) {
    let o = run(&["loop", "--format", "json", "-q"], d);
    (o.status.code().unwrap(), json(&o))
}

/// The picked gap whose summary contains `what`, after a loop step that asks for a proposal.
fn picked(d: &Path, what: &str) -> String {
    let (_, v) = step(d);
    assert_eq!(v["next"]["action"], "propose", "{v:#}");
    let gap = v["next"]["gap"].as_str().unwrap().to_string();
    let summary = v["gaps"].as_array().unwrap().iter().find(|g| g["id"] == gap.as_str()).unwrap()["summary"].clone();
    assert!(summary.as_str().unwrap().contains(what), "picked {gap}: {summary} (wanted: {what})");
    gap
}

/// Proposes a local fix of `gap` writing `files`, and records it with a loop step.
fn propose(d: &Path, gap: &str, approach: &str, files: &[&str]) -> Value {
    let o = propose_args(d, gap, approach, &["--write-set"], files);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let (_, v) = step(d);
    assert_eq!(v["next"]["action"], "apply-and-verify", "{v:#}");
    json(&o)
}

/// `andon propose --format json` of a local fix of `gap`: `flag` is put before each of `files`
/// (`["--write-set"]`), or before the first only (`[]` after one `--write-set` in `files`).
fn propose_args(d: &Path, gap: &str, approach: &str, flag: &[&str], files: &[&str]) -> std::process::Output {
    let mut args = vec!["propose", "--gap", gap, "--blast-radius", "local+reversible", "--approach", approach];
    args.extend(["--reason", "the checks show it", "--description", "the fix", "--format", "json", "-q"]);
    for f in files {
        args.extend(flag);
        args.push(f);
    }
    run(&args, d)
}

/// `andon verify --gap G --format json` and its exit code.
fn verify(d: &Path, gap: &str) -> (i32, Value) {
    let o = run(&["verify", "--gap", gap, "--format", "json", "-q"], d);
    (o.status.code().unwrap(), json(&o))
}

fn head(d: &Path) -> String {
    let o = std::process::Command::new("git").args(["rev-parse", "HEAD"]).current_dir(d).output().unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn write(d: &Path, path: &str, text: &str) {
    std::fs::write(d.join(path), text).unwrap();
}

#[test]
fn three_fixes_in_a_row_without_a_commit() {
    let cart = "from catalog import price_of, total_of\n\n\ndef cart_total(items):\n    return total_of(items)\n\n\ndef checkout(items):\n    # TODO: charge the cart\n    raise NotImplementedError\n";
    let stub = format!(
        "{PRICES}\n\ndef discount(amount, percent):\n    # TODO: apply the percentage discount\n    raise NotImplementedError\n"
    );
    let t = shop(COMMAND, &[("shop/cart.py", cart), ("catalog/prices.py", &stub)]);
    let d = t.path();
    let first = head(d);
    // 1. the broken import across the wire
    let gap = picked(d, "`total_of` is imported");
    let p = propose(d, &gap, "structural", &["catalog/__init__.py", "catalog/prices.py"]);
    assert_eq!(p["base_commit"], first.as_str());
    let with_total = format!("{stub}\n\ndef total_of(names):\n    return sum(price_of(n) for n in names)\n");
    write(d, "catalog/prices.py", &with_total);
    write(
        d,
        "catalog/__init__.py",
        "from catalog.prices import price_of, total_of\n\n__all__ = [\"price_of\", \"total_of\"]\n",
    );
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 0, "{v:#}");
    // 2. the stub, with a unit test for it
    let gap = picked(d, "NotImplementedError");
    let p = propose(d, &gap, "executed", &["catalog/prices.py", "catalog/test_prices.py"]);
    let second = p["base_commit"].as_str().unwrap().to_string();
    assert_ne!(second, first, "the next proposal's base is the tree the loop proved, not HEAD");
    write(
        d,
        "catalog/prices.py",
        &with_total.replace(
            "    # TODO: apply the percentage discount\n    raise NotImplementedError\n",
            "    return amount * (100 - percent) / 100\n",
        ),
    );
    write(
        d,
        "catalog/test_prices.py",
        &format!(
            "{PRICE_TEST}\n    def test_discount(self):\n        from catalog.prices import discount\n        self.assertEqual(discount(200, 10), 180)\n"
        ),
    );
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 0, "{v:#}");
    // the scope and the blast radius count only the new change
    let files: Vec<&str> = v["diff"]["files"].as_array().unwrap().iter().map(|f| f[1].as_str().unwrap()).collect();
    assert_eq!(files, ["catalog/prices.py", "catalog/test_prices.py"], "{v:#}");
    // 3. the second stub, with a test of it (red first: one that fails without the fix)
    let gap = picked(d, "NotImplementedError");
    let p = propose(d, &gap, "executed", &["shop/cart.py", "shop/test_cart.py"]);
    assert_ne!(p["base_commit"].as_str().unwrap(), second);
    write(
        d,
        "shop/cart.py",
        &cart.replace("    # TODO: charge the cart\n    raise NotImplementedError\n", "    return cart_total(items)\n"),
    );
    let cart_test = std::fs::read_to_string(d.join("shop/test_cart.py")).unwrap();
    write(
        d,
        "shop/test_cart.py",
        &format!(
            "{cart_test}\n    def test_checkout(self):\n        from shop.cart import checkout\n        self.assertEqual(checkout([\"apple\"]), 3)\n"
        ),
    );
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 0, "{v:#}");
    let (_, v) = step(d);
    let (_, v) = if v["verdict"]["outcome"] == "converged" { (0, v) } else { step(d) };
    assert!(matches!(v["verdict"]["outcome"].as_str(), Some("converged" | "clear" | "hardened")), "{v:#}");
    assert_eq!(head(d), first, "nothing was committed");
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

/// A repository whose one gap is its failing unit test: `price_of` doubles every price.
fn failing(toml: &str) -> tempfile::TempDir {
    shop(toml, &[("catalog/prices.py", &PRICES.replace("return PRICES[name]", "return 2 * PRICES[name]"))])
}

#[test]
fn a_fix_that_weakens_its_command_is_not_proven_without_a_person() {
    // the ceiling is high: only the rule about how a fix is judged stops it
    let toml = format!("authorization_level = \"shared-state-visible\"\n\n{COMMAND}");
    let t = failing(&toml);
    let d = t.path();
    let gap = picked(d, "command `unit`");
    propose(d, &gap, "executed", &["andon.toml"]);
    write(d, "andon.toml", &toml.replace("python3 -m unittest discover -s . -p test_*.py -t .", "true"));
    let (code, v) = verify(d, &gap);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (11, Some("halt:authorization")), "{v:#}");
    let detail = v["detail"].as_str().unwrap();
    assert!(detail.contains("`andon.toml`") && detail.contains("how a gap is proven"), "{detail}");
    assert!(v["next"]["detail"].as_str().unwrap().contains(&format!("andon authorize {gap}")), "{v:#}");
    // the loop records no proof: it holds on the judging change, the gap stays in progress
    let (code, v) = step(d);
    assert_eq!(code, 11, "{v:#}");
    assert!(v["next"]["gap"].as_str().unwrap().starts_with("J-"), "{v:#}");
    let (_, state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert_ne!(state.gaps[&gap].status, andon::ledger::GapStatus::Closed);
    // a person decides: authority bound to this diff lets it through, and the evidence says so
    let o = run(&["authorize", &gap, "--by", "lead", "--reason", "the suite moves"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    // authority covers the diff, not the proof: a command weakened to pass without the fix
    // proves nothing (red first)
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 14, "{v:#}");
    assert_eq!(v["evidence"]["claim"], "the check passes without the fix: add a test that fails without it");
    assert!(v["evidence"]["evidence"].as_str().unwrap().contains("a person authorized this diff"), "{v:#}");
}

#[test]
fn a_fix_that_removes_or_skips_a_test_rates_hard_to_reverse() {
    let t = failing(COMMAND);
    let d = t.path();
    let gap = picked(d, "command `unit`");
    propose(d, &gap, "executed", &["catalog/test_prices.py"]);
    write(
        d,
        "catalog/test_prices.py",
        &PRICE_TEST.replace("    def test_price(self):", "    @unittest.skip(\"later\")\n    def test_price(self):"),
    );
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 11, "{v:#}");
    let detail = v["detail"].as_str().unwrap();
    assert!(
        detail.contains("hard-to-reverse") && detail.contains("test `test_price` skipped by `@unittest.skip`"),
        "{detail}"
    );
    // removed: the same
    write(d, "catalog/test_prices.py", "import unittest\n");
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 11, "{v:#}");
    assert!(v["detail"].as_str().unwrap().contains("test `test_price` removed"), "{v:#}");
    // the standalone request path refuses the settings by the same rule
    write(d, "catalog/test_prices.py", PRICE_TEST);
    write(d, "andon.toml", &COMMAND.replace("python3 -m unittest discover -s . -p test_*.py -t .", "true"));
    let o = std::process::Command::new("git").args(["diff"]).current_dir(d).output().unwrap();
    let req = serde_json::json!({ "wire": "catalog/prices.py", "contract": "same", "fixDiff": String::from_utf8_lossy(&o.stdout) });
    let file = d.join("analysis/request.json");
    std::fs::write(&file, serde_json::to_vec(&req).unwrap()).unwrap();
    let o = run(&["verify", "--request", file.to_str().unwrap(), "--format", "json", "-q"], d);
    let v = json(&o);
    assert_eq!(o.status.code(), Some(1), "{v:#}");
    assert!(v["outside_scope"].as_array().unwrap().iter().any(|p| p == "andon.toml"), "{v:#}");
}

#[test]
fn a_refuted_fix_is_changed_and_verified_again() {
    let t = failing(COMMAND);
    let d = t.path();
    let gap = picked(d, "command `unit`");
    propose(d, &gap, "executed", &["catalog/prices.py"]);
    write(d, "catalog/prices.py", &PRICES.replace("return PRICES[name]", "return 3 * PRICES[name]"));
    let (code, v) = verify(d, &gap);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (10, Some("halt:refuted")), "{v:#}");
    assert!(v["next"]["detail"].as_str().unwrap().contains(&format!("andon verify --gap {gap}")), "{v:#}");
    // a refutation is recorded when verify finds it: status stands on it before any loop runs
    let o = run(&["status", "--format", "json"], d);
    assert_eq!(o.status.code(), Some(10), "{:#}", json(&o));
    let (code, v) = step(d);
    assert_eq!((code, v["next"]["action"].as_str()), (10, Some("fix-the-code")), "{v:#}");
    assert!(v["next"]["detail"].as_str().unwrap().contains(&format!("`andon verify --gap {gap}`")), "{v:#}");
    // the step the message names works: change the fix, verify again, the loop closes the gap
    write(d, "catalog/prices.py", PRICES);
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 0, "{v:#}");
    let (code, v) = step(d);
    assert_eq!(code, 0, "{v:#}");
    let (_, state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert_eq!(state.gaps[&gap].status, andon::ledger::GapStatus::Closed);
}

#[test]
fn a_tier1_hold_is_cleared_by_changed_code_and_verify_again() {
    let cart = "from catalog import price_of, total_of\n\n\ndef cart_total(items):\n    return total_of(items)\n";
    let t = shop(COMMAND, &[("shop/cart.py", cart)]);
    let d = t.path();
    let gap = picked(d, "`total_of` is imported");
    propose(d, &gap, "structural", &["catalog/__init__.py", "catalog/prices.py"]);
    // a fix that defines the name but does not export it: the import still breaks
    let with_total = format!("{PRICES}\n\ndef total_of(names):\n    return sum(price_of(n) for n in names)\n");
    write(d, "catalog/prices.py", &with_total);
    let (code, v) = verify(d, &gap);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (12, Some("halt:tier1-hold")), "{v:#}");
    // recorded when verify finds it: status stands on it before any loop runs
    assert_eq!(run(&["status", "--format", "json"], d).status.code(), Some(12));
    let (code, _) = step(d);
    assert_eq!(code, 12);
    write(
        d,
        "catalog/__init__.py",
        "from catalog.prices import price_of, total_of\n\n__all__ = [\"price_of\", \"total_of\"]\n",
    );
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 0, "{v:#}");
    let (code, v) = step(d);
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn an_unproven_fix_is_changed_and_verified_again() {
    // the check times out: nothing is proven (exit 15) until the fix makes it finish
    let toml = COMMAND.replace("-t .\"\n", "-t .\"\ntimeout_secs = 2\n");
    let slow = PRICES.replace("def price_of(name):\n", "def price_of(name):\n    import time\n    time.sleep(30)\n");
    let t = shop(&toml, &[("catalog/prices.py", &slow)]);
    let d = t.path();
    let gap = picked(d, "command `unit`");
    propose(d, &gap, "executed", &["catalog/prices.py"]);
    write(d, "catalog/prices.py", &slow.replace("time.sleep(30)", "time.sleep(20)"));
    let (code, v) = verify(d, &gap);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (15, Some("halt:unproven")), "{v:#}");
    let (code, _) = step(d);
    assert_eq!(code, 15);
    write(d, "catalog/prices.py", PRICES);
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 0, "{v:#}");
    let (code, v) = step(d);
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn a_tier2_hold_is_cleared_by_changed_code_and_verify_again() {
    // a stub crossing the wire contradicts it at tier 2 (a stub is no exact fact)
    let stub = format!("{PRICES}\n\ndef discount(amount, percent):\n    raise NotImplementedError\n");
    let cart = "from catalog import price_of\nfrom catalog.prices import discount\n\n\ndef cart_total(items):\n    return discount(sum(price_of(i) for i in items), 0)\n";
    let t = shop(COMMAND, &[("catalog/prices.py", &stub), ("shop/cart.py", cart)]);
    let d = t.path();
    let gap = picked(d, "stub");
    propose(d, &gap, "structural", &["catalog/prices.py"]);
    // a change that leaves the stub (and the signature) as it was
    write(
        d,
        "catalog/prices.py",
        &stub.replace("    raise NotImplementedError", "    \"\"\"Later.\"\"\"\n    raise NotImplementedError"),
    );
    let (code, v) = verify(d, &gap);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (13, Some("halt:tier2-hold")), "{v:#}");
    let (code, v) = step(d);
    assert_eq!(code, 13, "{v:#}");
    assert!(v["next"]["detail"].as_str().unwrap().contains(&format!("`andon verify --gap {gap}`")), "{v:#}");
    write(
        d,
        "catalog/prices.py",
        &stub.replace("    raise NotImplementedError\n", "    return amount * (100 - percent) / 100\n"),
    );
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 0, "{v:#}");
    let (code, v) = step(d);
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn a_structural_fix_that_also_rewrites_the_command_needs_a_person() {
    // fixing the import and silencing the suite in one diff: the structural proof would pass and
    // the command's gap would vanish with it, so no approach rests on such a diff without a person
    let toml = format!("authorization_level = \"shared-state-visible\"\n\n{COMMAND}");
    let cart = "from catalog import price_of, total_of\n\n\ndef cart_total(items):\n    return total_of(items)\n";
    let t = shop(&toml, &[("shop/cart.py", cart)]);
    let d = t.path();
    let gap = picked(d, "`total_of` is imported");
    propose(d, &gap, "structural", &["catalog/__init__.py", "catalog/prices.py", "andon.toml"]);
    write(d, "catalog/prices.py", &format!("{PRICES}\n\ndef total_of(names):\n    return 0\n"));
    write(
        d,
        "catalog/__init__.py",
        "from catalog.prices import price_of, total_of\n\n__all__ = [\"price_of\", \"total_of\"]\n",
    );
    write(d, "andon.toml", &toml.replace("python3 -m unittest discover -s . -p test_*.py -t .", "true"));
    let (code, v) = verify(d, &gap);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (11, Some("halt:authorization")), "{v:#}");
    assert!(v["detail"].as_str().unwrap().contains("`andon.toml`"), "{v:#}");
}

#[test]
fn a_write_set_takes_several_files_after_one_flag() {
    let t = failing(COMMAND);
    let d = t.path();
    let gap = picked(d, "command `unit`");
    // one flag, two files
    let o = propose_args(d, &gap, "executed", &[], &["--write-set", "catalog/prices.py", "catalog/test_prices.py"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let p: Value =
        serde_json::from_slice(&std::fs::read(d.join("analysis/andon/proposals").join(format!("{gap}.json"))).unwrap())
            .unwrap();
    assert_eq!(p["write_set"], serde_json::json!(["catalog/prices.py", "catalog/test_prices.py"]));
}

#[test]
fn an_approach_that_needs_input_says_so_and_how_to_go_on() {
    // no configured check: a stub's proof falls to the adversarial panel, which needs its directory
    let stub = format!(
        "{PRICES}\n\ndef discount(amount, percent):\n    # TODO: apply the discount\n    raise NotImplementedError\n"
    );
    let t = shop("", &[("catalog/prices.py", &stub)]);
    let d = t.path();
    let gap = picked(d, "NotImplementedError");
    propose(d, &gap, "executed", &["catalog/prices.py"]);
    write(
        d,
        "catalog/prices.py",
        &stub.replace("    # TODO: apply the discount\n    raise NotImplementedError\n", "    return amount\n"),
    );
    let (code, v) = verify(d, &gap);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (14, Some("halt:needs-human")), "{v:#}");
    let next = v["next"]["detail"].as_str().unwrap();
    assert!(
        next.contains("give the approach what it asks for") && next.contains(&format!("andon verify --gap {gap}")),
        "{next}"
    );
    assert!(v["detail"].as_str().unwrap().contains("--panel DIR"), "{v:#}");
}

#[test]
fn what_the_diff_cannot_show_is_compared_with_the_proposal() {
    // a test configuration git ignores (a self-ignoring .gitignore), and a rule in .git/info/exclude
    for hide in ["tests-gitignore", "info-exclude"] {
        let t = failing(COMMAND);
        let d = t.path();
        let gap = picked(d, "command `unit`");
        propose(d, &gap, "executed", &["catalog/prices.py"]);
        write(
            d,
            "catalog/prices.py",
            &format!("{}# done\n", PRICES.replace("return PRICES[name]", "return 2 * PRICES[name]")),
        );
        match hide {
            "tests-gitignore" => {
                write(d, "catalog/.gitignore", ".gitignore\nconftest.py\n");
                write(d, "catalog/conftest.py", "import pytest\n");
            }
            _ => {
                let exclude = d.join(".git/info/exclude");
                let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
                text.push_str("catalog/test_prices.py\n");
                std::fs::write(&exclude, text).unwrap();
            }
        }
        let (code, v) = verify(d, &gap);
        assert_eq!((code, v["verdict"]["outcome"].as_str()), (11, Some("halt:authorization")), "{hide}: {v:#}");
        assert!(v["detail"].as_str().unwrap().contains("changed since the proposal"), "{hide}: {v:#}");
    }
}

#[test]
fn without_git_the_settings_are_compared_with_the_proposal() {
    let t = failing(COMMAND);
    let d = t.path();
    std::fs::remove_dir_all(d.join(".git")).unwrap();
    let gap = picked(d, "command `unit`");
    propose(d, &gap, "executed", &["catalog/prices.py"]);
    write(d, "catalog/prices.py", &format!("{PRICES}# fixed\n"));
    write(d, "andon.toml", &COMMAND.replace("python3 -m unittest discover -s . -p test_*.py -t .", "true"));
    // the diff handed in leaves andon.toml out: without git nothing else shows the edit
    let diff = "--- a/catalog/prices.py\n+++ b/catalog/prices.py\n@@ -4,2 +4,3 @@\n def price_of(name):\n-    return 2 * PRICES[name]\n+    return PRICES[name]\n+# fixed\n";
    write(d, "fix.diff", diff);
    let o = run(&["verify", "--gap", &gap, "--diff", "fix.diff", "--format", "json", "-q"], d);
    let v = json(&o);
    assert_eq!((o.status.code(), v["verdict"]["outcome"].as_str()), (Some(11), Some("halt:authorization")), "{v:#}");
    assert!(v["detail"].as_str().unwrap().contains("`andon.toml`"), "{v:#}");
}

#[test]
fn a_proven_fix_undone_is_no_base_for_the_next_proposal() {
    let cart = "from catalog import price_of, total_of\n\n\ndef cart_total(items):\n    return total_of(items)\n";
    let t = shop(COMMAND, &[("shop/cart.py", cart)]);
    let d = t.path();
    let first = head(d);
    let gap = picked(d, "`total_of` is imported");
    propose(d, &gap, "structural", &["catalog/__init__.py", "catalog/prices.py"]);
    let fix = |d: &Path| {
        write(
            d,
            "catalog/prices.py",
            &format!("{PRICES}\n\ndef total_of(names):\n    return sum(price_of(n) for n in names)\n"),
        );
        write(
            d,
            "catalog/__init__.py",
            "from catalog.prices import price_of, total_of\n\n__all__ = [\"price_of\", \"total_of\"]\n",
        );
    };
    fix(d);
    assert_eq!(verify(d, &gap).0, 0);
    step(d);
    // the proven fix is undone (a reset): the broken import is back, and its gap with it
    let o = std::process::Command::new("git").args(["checkout", "--", "catalog"]).current_dir(d).output().unwrap();
    assert!(o.status.success());
    let again = picked(d, "`total_of` is imported");
    let p = propose(d, &again, "structural", &["catalog/__init__.py", "catalog/prices.py"]);
    assert_eq!(p["base_commit"], first.as_str(), "the undone proof is no base: {p:#}");
    fix(d);
    let (code, v) = verify(d, &again);
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn a_fix_whose_checks_pass_but_leaves_the_gap_in_the_code_is_not_closed() {
    let stub = format!("{PRICES}\n\ndef discount(amount, percent):\n    raise NotImplementedError\n");
    let t = shop(COMMAND, &[("catalog/prices.py", &stub)]);
    let d = t.path();
    let gap = picked(d, "NotImplementedError");
    propose(d, &gap, "executed", &["catalog/prices.py", "catalog/test_prices.py"]);
    // a comment: the suite passes with and without it, which proves nothing
    write(d, "catalog/prices.py", &format!("{stub}# later\n"));
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 14, "{v:#}");
    assert_eq!(v["evidence"]["claim"], "the check passes without the fix: add a test that fails without it");
    step(d);
    // a new function and its test: red without it, green with it, and the stub stays
    write(d, "catalog/prices.py", &format!("{stub}\n\ndef half(amount):\n    return amount / 2\n"));
    let half_test =
        "\n    def test_half(self):\n        from catalog.prices import half\n        self.assertEqual(half(4), 2)\n";
    write(d, "catalog/test_prices.py", &format!("{PRICE_TEST}{half_test}"));
    // the checks discriminate, but the scan still finds the gap: verify records it unproven
    let (code, v) = verify(d, &gap);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (15, Some("halt:unproven")), "{v:#}");
    let (code, v) = step(d);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (15, Some("halt:unproven")), "{v:#}");
    let (_, state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert_ne!(state.gaps[&gap].status, andon::ledger::GapStatus::Closed);
    // the real fix, with its test, closes it
    write(
        d,
        "catalog/prices.py",
        &stub.replace("    raise NotImplementedError\n", "    return amount * (100 - percent) / 100\n"),
    );
    let discount_test = "\n    def test_discount(self):\n        from catalog.prices import discount\n        self.assertEqual(discount(200, 10), 180)\n";
    write(d, "catalog/test_prices.py", &format!("{PRICE_TEST}{discount_test}"));
    let (code, v) = verify(d, &gap);
    assert_eq!(code, 0, "{v:#}");
    let (code, v) = step(d);
    assert_eq!(code, 0, "{v:#}");
    let (_, state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert_eq!(state.gaps[&gap].status, andon::ledger::GapStatus::Closed);
}

#[test]
fn a_write_set_never_names_andons_own_state() {
    let t = failing(COMMAND);
    let d = t.path();
    let gap = picked(d, "command `unit`");
    for own in ["analysis/andon/ledger/ledger.jsonl", ".andon/index.bin"] {
        let o = propose_args(d, &gap, "executed", &["--write-set"], &[own]);
        let v = json(&o);
        assert_eq!(o.status.code(), Some(1), "{v:#}");
        assert!(
            v["problems"].as_array().unwrap().iter().any(|p| p.as_str().unwrap().contains("andon's own state")),
            "{v:#}"
        );
    }
}
