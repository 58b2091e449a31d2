//! A wire's proof holds only while what crosses it stands: a name that stops resolving across a
//! proven wire makes its proof stale, and an open gap across a wire keeps it from showing proven.

use std::path::Path;

use serde_json::Value;

use crate::support::{andon, git, json, run, write_files};

/// Two packages, `inventory` -> `orders`, where `orders` imports a `restock` that `inventory`
/// does not define yet; committed.
fn depot() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"depot\"\nversion = \"0.1.0\"\n"),
            ("inventory/__init__.py", "from inventory.stock import level\n\n__all__ = [\"level\"]\n"),
            ("inventory/stock.py", "STOCK = {\"bolt\": 5}\n\n\ndef level(item):\n    return STOCK[item]\n"),
            ("orders/__init__.py", ""),
            (
                "orders/ship.py",
                "from inventory import level, restock\n\n\ndef can_ship(item, n):\n    return level(item) >= n\n",
            ),
            (".gitignore", "analysis/\n.andon/\n"),
        ],
    );
    git(t.path(), &["init", "-q"]);
    git(t.path(), &["add", "-A"]);
    git(t.path(), &["commit", "-qm", "base"]);
    t
}

/// The fix of the broken import: `inventory` defines and exports `restock`.
const FIX: &[(&str, &str)] = &[
    ("inventory/__init__.py", "from inventory.stock import level, restock\n\n__all__ = [\"level\", \"restock\"]\n"),
    (
        "inventory/stock.py",
        "STOCK = {\"bolt\": 5}\n\n\ndef level(item):\n    return STOCK[item]\n\n\n\
         def restock(item, n):\n    STOCK[item] = STOCK.get(item, 0) + n\n",
    ),
];

fn loop_json(d: &Path) -> Value {
    json(&run(&["loop", "--format", "json", "-q"], d))
}

/// The status of the wire `inventory -> orders` as `andon status --format json` shows it.
fn board_wire(d: &Path) -> (Value, Value) {
    let v = json(&run(&["status", "--format", "json", "-q"], d));
    let wire = v["stages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["wires"].as_array().unwrap().iter())
        .find(|w| w["producer"] == "inventory" && w["consumer"] == "orders")
        .cloned()
        .unwrap_or(Value::Null);
    (wire["status"].clone(), v["constraint"].clone())
}

/// The status of the wire `inventory -> orders` as the text of the next `andon loop` shows it.
fn loop_wire(d: &Path) -> String {
    let o = run(&["loop"], d);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let line = text.lines().find_map(|l| l.trim().strip_prefix("inventory -> orders: "));
    line.unwrap_or_else(|| panic!("the loop shows the wire: {text}")).to_string()
}

/// The open gap whose summary names `name`.
fn gap_naming(v: &Value, name: &str) -> Option<String> {
    v["gaps"]
        .as_array()?
        .iter()
        .find(|g| g["source"] == "BrokenImport" && g["summary"].as_str().is_some_and(|s| s.contains(name)))
        .map(|g| g["id"].as_str().unwrap().to_string())
}

/// Proposes, applies and verifies the fix `files` of the broken import of `name`, the loop's pick,
/// and runs the loop on: the fix stays local and reversible, with no commit.
fn fix_broken(d: &Path, name: &str, files: &[(&str, &str)]) {
    let v = loop_json(d);
    let id = gap_naming(&v, name).unwrap_or_else(|| panic!("the broken import is a gap: {v:#}"));
    assert_eq!(v["next"]["gap"].as_str(), Some(id.as_str()), "{v:#}");
    let mut args = vec!["propose", "--gap", &id, "--blast-radius", "local+reversible", "--approach", "structural"];
    args.extend(["--reason", "r", "--description", "d", "-q"]);
    for (f, _) in files {
        args.extend(["--write-set", f]);
    }
    let o = run(&args, d);
    assert!(o.status.success(), "propose: {}", String::from_utf8_lossy(&o.stdout));
    run(&["loop", "-q"], d);
    write_files(d, files);
    let o = andon().args(["verify", "--gap", &id, "--format", "json", "-q"]).current_dir(d).output().unwrap();
    let out = json(&o);
    assert_eq!(o.status.code(), Some(0), "verify: {out:#}");
    assert_eq!(out["diff"]["rerated"].as_str(), Some("local+reversible"), "{out:#}");
    run(&["loop", "-q"], d);
}

/// Fixes the broken `restock`: the wire is proven.
fn prove_the_wire(d: &Path) {
    fix_broken(d, "`restock`", FIX);
    assert_eq!(board_wire(d).0, "proven");
}

#[test]
fn undoing_a_proven_fix_makes_the_wire_proof_stale() {
    let t = depot();
    let d = t.path();
    prove_the_wire(d);
    // the proven fix is undone: `restock` no longer crosses the wire
    git(d, &["checkout", "-q", "--", "."]);
    let v = loop_json(d);
    assert!(gap_naming(&v, "`restock`").is_some(), "the broken import reopens: {v:#}");
    assert!(v["notes"].to_string().contains("inventory/__init__.py:restock"), "a stale note names it: {v:#}");
    assert_eq!(loop_wire(d), "broken/unproven");
    let (status, constraint) = board_wire(d);
    assert_ne!(status, "proven");
    assert_eq!(
        (&constraint["producer"], &constraint["consumer"]),
        (&v["constraint"]["producer"], &v["constraint"]["consumer"])
    );
    assert_eq!(constraint["producer"], "inventory", "{constraint:#}");
}

#[test]
fn a_new_broken_import_across_a_proven_wire_keeps_it_from_showing_proven() {
    let t = depot();
    let d = t.path();
    prove_the_wire(d);
    // a name that never resolved is no part of what crosses: the proof's surface is unchanged,
    // but the wire has an open gap
    write_files(
        d,
        &[(
            "orders/ship.py",
            "from inventory import level, restock, reserve\n\n\ndef can_ship(item, n):\n    return level(item) >= n\n",
        )],
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "reserve"]);
    let v = loop_json(d);
    assert!(gap_naming(&v, "`reserve`").is_some(), "{v:#}");
    assert_eq!(loop_wire(d), "broken/unproven");
    let (status, constraint) = board_wire(d);
    assert_eq!(status, "broken/unproven");
    assert_eq!(constraint["producer"], "inventory", "{constraint:#}");
    let status = run(&["status"], d);
    assert!(!String::from_utf8_lossy(&status.stdout).contains("every wire is proven"));
    // its fix adds the name to the wire, which was not standing proven: local, and proves it
    fix_broken(
        d,
        "`reserve`",
        &[(
            "inventory/__init__.py",
            "from inventory.stock import level, restock\n\n__all__ = [\"level\", \"restock\", \"reserve\"]\n\n\n\
             def reserve(item, n):\n    return n\n",
        )],
    );
    assert_eq!(board_wire(d).0, "proven");
}

/// What crosses a wire is followed through a re-export to its definition: a signature changed in
/// `inventory/stock.py`, behind `inventory/__init__.py`'s `from inventory.stock import level`,
/// makes the proof stale; a change inside the body does not.
#[test]
fn a_signature_changed_behind_a_re_export_reopens_the_proven_wire() {
    let t = depot();
    let d = t.path();
    prove_the_wire(d);
    let stock = std::fs::read_to_string(d.join("inventory/stock.py")).unwrap();
    // a body edit: what crosses is the same
    write_files(d, &[("inventory/stock.py", &stock.replace("return STOCK[item]", "return STOCK.get(item, 0)"))]);
    loop_json(d);
    assert_eq!(board_wire(d).0, "proven");
    // the signature behind the re-export changes
    write_files(d, &[("inventory/stock.py", &stock.replace("def level(item):", "def level(item, warehouse):"))]);
    let v = loop_json(d);
    assert!(v["notes"].to_string().contains("inventory/__init__.py:level"), "a stale note names it: {v:#}");
    assert_ne!(board_wire(d).0, "proven");
}

/// A decorator that decides what a call across the wire takes, added behind the re-export: the
/// proof is stale, and structure cannot prove the wire again (the call is not structure's to
/// judge); so do a rebinding of the name and a second definition of it.
#[test]
fn a_call_structure_cannot_judge_keeps_the_reopened_wire_from_a_structural_proof() {
    for stock in [
        "STOCK = {\"bolt\": 5}\n\n\ndef twice(fn):\n    return lambda item, where: fn(item)\n\n\n@twice\ndef level(item):\n    return STOCK[item]\n\n\n\
         def restock(item, n):\n    STOCK[item] = STOCK.get(item, 0) + n\n",
        "STOCK = {\"bolt\": 5}\n\n\ndef level(item):\n    return STOCK[item]\n\n\nlevel = lambda item, where: 0\n\n\n\
         def restock(item, n):\n    STOCK[item] = STOCK.get(item, 0) + n\n",
        "STOCK = {\"bolt\": 5}\n\n\ndef level(item):\n    return STOCK[item]\n\n\ndef level(item, where):\n    return 0\n\n\n\
         def restock(item, n):\n    STOCK[item] = STOCK.get(item, 0) + n\n",
    ] {
        let t = depot();
        let d = t.path();
        prove_the_wire(d);
        write_files(d, &[("inventory/stock.py", stock)]);
        loop_json(d);
        assert_ne!(board_wire(d).0, "proven", "{stock}");
    }
}
