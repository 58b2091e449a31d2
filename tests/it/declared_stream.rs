//! A declared stream overrides detection verbatim (R32): `[stream]` in the settings or
//! `--stream FILE`, its stages and wires used exactly as declared (names, order, wires, labelled
//! `declared`), files outside every root in no stage, an import across stages the declaration
//! lacks a finding, and a malformed declaration a configuration error with its line.

use std::path::Path;

use serde_json::Value;

use crate::support::{json, run, write_files};

const BACK_FRONT: &str = "[stream]\n\n[[stream.stage]]\nname = \"back\"\nroot = \"crates\"\n\n[[stream.stage]]\nname = \"front\"\nroot = \"web\"\n\n[[stream.wire]]\nproducer = \"back\"\nconsumer = \"front\"\n";

/// Rust crates, a TypeScript package and a Python tool: three ecosystems, no import between them.
fn polyglot() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("crates/core/Cargo.toml", "[package]\nname = \"core\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            ("crates/core/src/lib.rs", "pub fn parse(s: &str) -> usize {\n    s.len()\n}\n"),
            ("crates/cli/Cargo.toml", "[package]\nname = \"cli\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            ("crates/cli/src/main.rs", "fn main() {}\n"),
            ("web/package.json", "{\"name\": \"web\", \"version\": \"1.0.0\"}\n"),
            ("web/src/index.ts", "export function show(x: number): string {\n  return String(x);\n}\n"),
            ("tools/gen.py", "import os\n"),
        ],
    );
    t
}

/// `andon stream --format json` with `args`.
fn stream(d: &Path, args: &[&str]) -> Value {
    let mut a = vec!["stream", "--format", "json", "-q"];
    a.extend(args);
    let o = run(&a, d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    json(&o)
}

fn stage_names(v: &Value) -> Vec<String> {
    v["stages"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_string()).collect()
}

fn wires(v: &Value) -> Vec<(String, String)> {
    let w = v["wires"].as_array().unwrap();
    w.iter().map(|w| (w["producer"].as_str().unwrap().into(), w["consumer"].as_str().unwrap().into())).collect()
}

#[test]
fn the_declared_stages_and_wires_are_the_stream_exactly() {
    let t = polyglot();
    let d = t.path();
    // detected, the crates are two stages and nothing joins them to the web package
    let detected = stream(d, &[]);
    assert!(stage_names(&detected).contains(&"core".to_string()), "{detected:#}");
    write_files(d, &[("andon.toml", BACK_FRONT)]);
    let v = stream(d, &[]);
    assert_eq!(stage_names(&v), ["back", "front"], "{v:#}");
    assert_eq!(wires(&v), [("back".to_string(), "front".to_string())], "declared, though no import joins them");
    for s in v["stages"].as_array().unwrap() {
        assert_eq!(s["confidence"], "declared", "{s:#}");
    }
    assert_eq!(v["wires"][0]["confidence"], "declared");
    assert_eq!(v["stages"][0]["root"], "crates");
    assert_eq!(v["stages"][0]["files"], 2, "both crates' sources: {v:#}");
    // no directory stage: the tool is in no stage, and listed
    assert_eq!(v["declared"]["outside"], serde_json::json!(["tools/gen.py"]), "{v:#}");
    assert_eq!(v["order"], serde_json::json!(["back", "front"]));
}

#[test]
fn the_declaration_order_is_kept_and_a_stream_file_overrides_the_settings() {
    let t = polyglot();
    let d = t.path();
    write_files(d, &[("andon.toml", BACK_FRONT)]);
    let file = d.join("other-stream.toml");
    std::fs::write(
        &file,
        "[[stream.stage]]\nname = \"zz-web\"\nroot = \"web\"\n\n[[stream.stage]]\nname = \"aa-tools\"\nroot = \"tools\"\n",
    )
    .unwrap();
    let v = stream(d, &["--stream", file.to_str().unwrap()]);
    assert_eq!(stage_names(&v), ["zz-web", "aa-tools"], "{v:#}");
    assert_eq!(wires(&v), Vec::<(String, String)>::new());
    // without the flag the settings' declaration stands again
    assert_eq!(stage_names(&stream(d, &[])), ["back", "front"]);
}

#[test]
fn an_import_across_stages_the_declaration_lacks_is_a_finding_not_a_wire() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("zeta/__init__.py", "def f():\n    return 1\n"),
            ("alpha/__init__.py", "from zeta import f\n"),
            (
                "andon.toml",
                "[stream]\n[[stream.stage]]\nname = \"zeta\"\nroot = \"zeta\"\n[[stream.stage]]\nname = \"alpha\"\nroot = \"alpha\"\n",
            ),
        ],
    );
    let v = stream(d, &[]);
    assert!(wires(&v).is_empty(), "{v:#}");
    let undeclared = &v["declared"]["undeclared_imports"];
    assert_eq!(undeclared[0]["path"], "alpha/__init__.py", "{v:#}");
    assert_eq!((undeclared[0]["producer"].as_str(), undeclared[0]["consumer"].as_str()), (Some("zeta"), Some("alpha")));
    let o = run(&["check", "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    let c = json(&o);
    assert_eq!(c["findings"][0]["contract"], "(stream)", "{c:#}");
    assert_eq!(c["findings"][0]["path"], "alpha/__init__.py");
    // the loop opens a gap for it in the importing stage
    let mut gaps = Vec::new();
    for _ in 0..3 {
        let v = json(&run(&["loop", "--format", "json", "-q"], d));
        gaps.extend(v["gaps"].as_array().unwrap().iter().cloned());
        if let Some(g) = v["picked"]["gap"].as_str().filter(|_| v["next"]["action"] == "propose") {
            run(&["skip", g, "--by", "lead", "--reason", "not this test"], d);
        }
    }
    let undeclared = gaps.iter().find(|g| g["source"] == "UndeclaredWireImport").unwrap_or_else(|| panic!("{gaps:#?}"));
    assert_eq!((undeclared["stage"].as_str(), undeclared["path"].as_str()), (Some("alpha"), Some("alpha/__init__.py")));
    std::fs::remove_dir_all(d.join("analysis")).unwrap();
    // declared, the wire carries the import and the check passes
    let toml = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    std::fs::write(d.join("andon.toml"), format!("{toml}[[stream.wire]]\nproducer = \"zeta\"\nconsumer = \"alpha\"\n"))
        .unwrap();
    let v = stream(d, &[]);
    assert_eq!(v["wires"][0]["imports"], 1, "{v:#}");
    assert_eq!(run(&["check", "-q"], d).status.code(), Some(0));
}

#[test]
fn a_malformed_declaration_is_a_configuration_error_with_its_line() {
    let t = polyglot();
    let d = t.path();
    let cases = [
        (format!("{BACK_FRONT}\n[[stream.wire]]\nproducer = \"back\"\nconsumer = \"mobile\"\n"), 16, "unknown stage `mobile`"),
        (
            "[stream]\n[[stream.stage]]\nname = \"back\"\nroot = \"crates\"\n[[stream.stage]]\nname = \"core\"\nroot = \"crates/core\"\n".to_string(),
            6,
            "overlaps stage `back`",
        ),
        ("[stream]\n[[stream.stage]]\nname = \"up\"\nroot = \"../elsewhere\"\n".to_string(), 4, "must not contain `..`"),
        ("[stream]\n[[stream.stage]]\nname = \"back\"\nroot = \"crates\"\nowner = \"me\"\n".to_string(), 5, "unknown key"),
        ("[stream]\n[[stream.stage]]\nname = \"ghost\"\nroot = \"nowhere\"\n".to_string(), 3, "is not a directory"),
    ];
    for (toml, line, what) in cases {
        std::fs::write(d.join("andon.toml"), &toml).unwrap();
        let o = run(&["stream", "-q"], d);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{toml}\n{err}");
        assert!(err.contains(&format!("andon.toml:{line}:")) && err.contains(what), "{toml}\n{err}");
    }
}

#[test]
fn the_loop_walks_the_declared_stream() {
    let t = polyglot();
    let d = t.path();
    write_files(d, &[("andon.toml", BACK_FRONT), (".gitignore", "analysis/\n")]);
    crate::support::git(d, &["init", "-q"]);
    crate::support::commit_all(d);
    let v = json(&run(&["loop", "--format", "json", "-q"], d));
    assert_eq!(stage_names(&v["stream"]), ["back", "front"], "{v:#}");
    assert_eq!(wires(&v["stream"]), [("back".to_string(), "front".to_string())]);
    assert_eq!(v["stream"]["stages"][0]["confidence"], "declared");
    // no import carries the declared wire: the loop does not prove it from nothing
    let mut last = v;
    for _ in 0..6 {
        let wire = last["ledger"]["wires"].as_array().unwrap().iter().find(|w| w["producer"] == "back").cloned();
        if wire.is_some_and(|w| w["status"] != "unproven" && w["status"] != "broken/unproven") {
            break;
        }
        let gap = last["picked"]["gap"].as_str().unwrap_or_default().to_string();
        if gap.is_empty() || last["next"]["action"] != "propose" {
            break;
        }
        // set aside what is not the wire
        let is_wire =
            last["gaps"].as_array().unwrap().iter().any(|g| g["id"] == gap.as_str() && g["source"] == "UnprovenWire");
        if is_wire {
            break;
        }
        run(&["skip", &gap, "--by", "lead", "--reason", "not this test"], d);
        last = json(&run(&["loop", "--format", "json", "-q"], d));
    }
    let (_, state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let w = andon::ledger::Wire { producer: "back".into(), consumer: "front".into() };
    assert_ne!(state.wires.get(&w).map(|s| s.status), Some(andon::ledger::WireStatus::Proven), "{last:#}");
    let proofs: Vec<_> = state.evidence.values().filter(|e| e.wire == w).collect();
    assert!(proofs.iter().all(|e| e.verdict != andon::ledger::Verdict::Proven), "{proofs:?}");
    assert!(
        proofs.iter().any(|e| e.claim.contains("no import carries it")),
        "the loop tried and said why: {proofs:?}\n{last:#}"
    );
}

#[test]
fn a_stored_index_of_another_declaration_is_stale_and_base_findings_are_not_new() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let declared = "[stream]\n[[stream.stage]]\nname = \"zeta\"\nroot = \"zeta\"\n[[stream.stage]]\nname = \"alpha\"\nroot = \"alpha\"\n";
    write_files(
        d,
        &[
            ("zeta/__init__.py", "def f():\n    return 1\n"),
            ("alpha/__init__.py", "from zeta import f\n"),
            ("andon.toml", declared),
            (".gitignore", ".andon/\n"),
        ],
    );
    crate::support::git(d, &["init", "-q"]);
    crate::support::commit_all(d);
    assert_eq!(run(&["index", "-q"], d).status.code(), Some(0));
    // the finding was there at the base: not new
    let o = run(&["check", "--base", "HEAD", "--format", "json", "-q"], d);
    let c = json(&o);
    assert_eq!(o.status.code(), Some(1), "{c:#}");
    assert_eq!(c["findings"][0]["new"], false, "{c:#}");
    // an index written under the settings' declaration is stale for another one
    let other = d.join("other.toml");
    std::fs::write(&other, "[[stream.stage]]\nname = \"all\"\nroot = \"zeta\"\n").unwrap();
    let o = run(&["check", "--no-index", "--stream", other.to_str().unwrap(), "-q"], d);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    // a root that is the filesystem's is refused
    std::fs::write(d.join("andon.toml"), "[stream]\n[[stream.stage]]\nname = \"all\"\nroot = \"/\"\n").unwrap();
    assert_eq!(run(&["stream", "-q"], d).status.code(), Some(2));
}

/// Two Python packages no import joins, declared as `back` -> `front`, with the unit tests as
/// their check; committed.
fn declared_python() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let settings = BACK_FRONT.replace("\"crates\"", "\"back\"").replace("\"web\"", "\"front\"")
        + "\n[[command]]\nname = \"unit\"\nrun = \"python3 -m unittest discover -s tests -t .\"\n";
    write_files(
        d,
        &[
            ("andon.toml", settings.as_str()),
            ("back/__init__.py", "def total(xs):\n    return sum(xs)\n"),
            ("front/__init__.py", "def show(n):\n    return f\"total: {n}\"\n"),
            ("tests/__init__.py", ""),
            (
                "tests/test_back.py",
                "import unittest\n\nfrom back import total\n\n\nclass T(unittest.TestCase):\n    def test_total(self):\n        self.assertEqual(total([1, 2]), 3)\n",
            ),
            (".gitignore", "analysis/\n.andon/\n__pycache__/\n"),
        ],
    );
    crate::support::git(d, &["init", "-q"]);
    crate::support::commit_all(d);
    t
}

#[test]
fn a_declared_wire_is_proven_by_a_test_that_carries_a_value_across_it() {
    let t = declared_python();
    let d = t.path();
    let v = json(&run(&["loop", "--format", "json", "-q"], d));
    assert_eq!(v["next"]["action"], "propose", "{v:#}");
    let gap = v["next"]["gap"].as_str().unwrap().to_string();
    crate::red_first::propose(d, &gap, "executed", &["tests/test_handoff.py", "tests/handoff_check.py"]);
    // a passing test of one end only proves the stage, not the handoff
    let one_end = "import unittest\n\nfrom back import total\n\n\nclass H(unittest.TestCase):\n    def test_handoff(self):\n        self.assertEqual(total([1, 2]), 3)\n";
    write_files(d, &[("tests/test_handoff.py", one_end)]);
    let (code, doc) = crate::red_first::verify(d, &gap);
    assert_eq!(code, Some(14), "{doc:#}");
    assert_eq!(doc["evidence"]["reason"], "not-discriminating", "{doc:#}");
    assert!(doc["evidence"]["claim"].as_str().unwrap().contains("imports from both"), "{doc:#}");
    run(&["loop", "-q"], d);
    // a test that carries a value from one end to the other proves it
    let across = "import unittest\n\nfrom back import total\nfrom front import show\n\n\nclass H(unittest.TestCase):\n    def test_handoff(self):\n        self.assertEqual(show(total([1, 2])), \"total: 3\")\n";
    // a test the checks never collect (unittest discovers `test*.py`) shows nothing
    std::fs::remove_file(d.join("tests/test_handoff.py")).unwrap();
    write_files(d, &[("tests/handoff_check.py", across)]);
    let (code, doc) = crate::red_first::verify(d, &gap);
    assert_eq!(code, Some(14), "{doc:#}");
    assert!(doc["evidence"]["claim"].as_str().unwrap().contains("they never run it"), "{doc:#}");
    run(&["loop", "-q"], d);
    std::fs::remove_file(d.join("tests/handoff_check.py")).unwrap();
    write_files(d, &[("tests/test_handoff.py", across)]);
    // a command given to verify adds a check beside the repository's own, never replaces them
    let o = run(&["verify", "--gap", &gap, "--command", "false", "--format", "json"], d);
    assert_eq!(o.status.code(), Some(10), "{}", String::from_utf8_lossy(&o.stdout));
    run(&["loop", "-q"], d);
    let (code, doc) = crate::red_first::verify(d, &gap);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["evidence"]["verdict"], "proven", "{doc:#}");
    let v = json(&run(&["loop", "--format", "json", "-q"], d));
    let wire = v["ledger"]["wires"].as_array().unwrap().iter().find(|w| w["producer"] == "back").cloned();
    assert_eq!(wire.map(|w| w["status"].clone()), Some(Value::from("proven")), "{v:#}");
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}
