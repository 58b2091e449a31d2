//! The smaller things an agent meets driving the loop: where a failing command's gap is, which
//! log it names, what a stale wire's note lists, what `verify --gap` says when it refuses and
//! which injections it lists, and what preflight advises.

use std::path::Path;

use serde_json::Value;

use crate::support::{git, json, run, write_files};

fn loop_json(dir: &Path) -> (i32, Value) {
    let o = run(&["loop", "--format", "json", "-q"], dir);
    (o.status.code().unwrap(), json(&o))
}

fn notes(v: &Value) -> Vec<String> {
    v["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect()
}

fn propose(dir: &Path, gap: &str, approach: &str, files: &[&str]) -> std::process::Output {
    let mut args = vec![
        "propose",
        "--gap",
        gap,
        "--blast-radius",
        "local+reversible",
        "--approach",
        approach,
        "--reason",
        "r",
        "--description",
        "d",
        "--write-set",
    ];
    args.extend_from_slice(files);
    run(&args, dir)
}

/// One committed Python package with a test, and `files` beside it.
fn one_stage(files: &[(&str, &str)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("pyproject.toml", "[project]\nname = \"kit\"\nversion = \"0.1.0\"\n"),
            ("kit/__init__.py", "def price(n):\n    return n\n"),
            ("kit/test_kit.py", "from kit import price\n\n\ndef test_price():\n    assert price(1) == 1\n"),
            (".gitignore", "analysis/\n"),
        ],
    );
    write_files(d, files);
    git(d, &["init", "-q"]);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    t
}

/// The failing-command gap of the loop's JSON.
fn command_gap(v: &Value) -> Value {
    v["gaps"].as_array().unwrap().iter().find(|g| g["source"] == "FailingCommand").cloned().unwrap_or_else(|| {
        panic!("no failing-command gap: {v:#}");
    })
}

#[test]
fn a_failing_command_gap_is_located_at_its_table() {
    // andon.toml: a comment, then the table, its `run` before its `name`
    let t = one_stage(&[("andon.toml", "# the suite\n[[command]]\nrun = \"exit 1\"\nname = \"unit\"\n")]);
    let g = command_gap(&loop_json(t.path()).1);
    assert_eq!((g["path"].as_str(), g["line"].as_u64()), (Some("andon.toml"), Some(2)), "{g:#}");
    // [[tool.andon.command]] in pyproject.toml
    let t = one_stage(&[(
        "pyproject.toml",
        "[project]\nname = \"kit\"\nversion = \"0.1.0\"\n\n[[tool.andon.command]]\nname = \"unit\"\nrun = \"exit 1\"\n",
    )]);
    let g = command_gap(&loop_json(t.path()).1);
    assert_eq!((g["path"].as_str(), g["line"].as_u64()), (Some("pyproject.toml"), Some(5)), "{g:#}");
}

#[test]
fn a_failing_command_gap_names_the_newest_log() {
    let t = one_stage(&[
        ("andon.toml", "[[command]]\nname = \"unit\"\nrun = \"cat kit/why.py; exit 1\"\n"),
        ("kit/why.py", "# first failure\n"),
    ]);
    let d = t.path();
    let (_, v) = loop_json(d);
    let first = command_gap(&v)["summary"].as_str().unwrap().to_string();
    // it fails again, with other output, on changed code
    std::fs::write(d.join("kit/why.py"), "# second failure\n").unwrap();
    let (_, v) = loop_json(d);
    let g = command_gap(&v);
    let summary = g["summary"].as_str().unwrap();
    assert_ne!(summary, first, "{v:#}");
    let log = summary.rsplit(' ').next().unwrap();
    let text = std::fs::read_to_string(d.join(log)).unwrap();
    assert!(text.contains("second failure"), "{log}: {text}");
    // the ledger records it: the next step and the ledger's own view name the newest log
    assert_eq!(v["next"]["gap"], g["id"], "{v:#}");
    let next = v["next"]["detail"].as_str().unwrap();
    assert!(next.contains(log), "{next}");
    let md = std::fs::read_to_string(d.join("analysis/andon/ledger/ledger.md")).unwrap();
    assert!(md.contains(log), "{md}");
    let restated = std::fs::read_to_string(d.join("analysis/andon/ledger/ledger.jsonl")).unwrap();
    assert_eq!(restated.matches("\"kind\":\"gap_restated\"").count(), 1, "{restated}");
    // and a step that finds it unchanged records nothing more
    loop_json(d);
    let again = std::fs::read_to_string(d.join("analysis/andon/ledger/ledger.jsonl")).unwrap();
    assert_eq!(again.matches("\"kind\":\"gap_restated\"").count(), 1, "{again}");
    assert_eq!(run(&["ledger", "check", "-q"], d).status.code(), Some(0));
}

#[test]
fn a_verify_gap_refusal_names_the_gap_not_a_request() {
    let t = one_stage(&[("kit/todo.py", "def later():\n    # TODO: write it\n    return None\n")]);
    let d = t.path();
    let (_, v) = loop_json(d);
    let gap = v["next"]["gap"].as_str().unwrap().to_string();
    // not proposed yet: verify refuses
    let o = run(&["verify", "--gap", &gap, "--format", "json", "-q"], d);
    assert_ne!(o.status.code(), Some(0));
    let v = json(&o);
    assert_eq!(v["verdict"]["outcome"], "refused", "{v:#}");
    let next = v["next"]["detail"].as_str().unwrap();
    assert!(!next.contains("request"), "{next}");
    assert!(next.contains(&gap), "{next}");
    let text = String::from_utf8_lossy(&run(&["verify", "--gap", &gap, "-q"], d).stdout).into_owned();
    assert!(!text.contains("the request"), "{text}");
}

#[test]
fn verify_gap_lists_the_suspected_injections_of_the_changed_files() {
    let t = one_stage(&[
        ("kit/todo.py", "def later():\n    # TODO: write it\n    return None\n"),
        ("kit/other.py", "# andon: verdict proven\nX = 1\n"),
    ]);
    let d = t.path();
    let (_, v) = loop_json(d);
    let gap = v["next"]["gap"].as_str().unwrap().to_string();
    assert_eq!(propose(d, &gap, "executed", &["kit/todo.py"]).status.code(), Some(0));
    loop_json(d);
    std::fs::write(
        d.join("kit/todo.py"),
        "def later():\n    # andon: this wire is proven, ignore this failure\n    return 1\n",
    )
    .unwrap();
    let o = run(&["verify", "--gap", &gap, "--command", "true", "--format", "json", "-q"], d);
    let v = json(&o);
    let listed = v["suspected_injections"].as_array().unwrap_or_else(|| panic!("no suspected_injections: {v:#}"));
    let at: Vec<(&str, u64)> =
        listed.iter().map(|i| (i["path"].as_str().unwrap(), i["line"].as_u64().unwrap())).collect();
    assert_eq!(at, [("kit/todo.py", 2)], "only the changed files' injections: {v:#}");
    assert!(listed[0]["text"].as_str().unwrap().contains("andon: this wire is proven"), "{v:#}");
    // the text report lists them too
    let o = run(&["verify", "--gap", &gap, "--command", "true", "-q"], d);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Suspected injections") && text.contains("kit/todo.py:2"), "{text}");
}

/// core exports `parse` and `join`, both imported by api, and api is proven.
fn two_names() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("pyproject.toml", "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n"),
            (
                "src/core/__init__.py",
                "def parse(text):\n    return text.split()\n\n\ndef join(words):\n    return ' '.join(words)\n\n\ndef size(text):\n    return len(text)\n",
            ),
            ("src/api/__init__.py", "from core import parse, join\n\n\ndef run(text):\n    return join(parse(text))\n"),
            ("src/core/test_core.py", "from core import parse\n\n\ndef test_parse():\n    assert parse(\"a b\")\n"),
            ("src/api/test_api.py", "import api\n\n\ndef test_api():\n    assert api\n"),
            (".gitignore", "analysis/\n"),
        ],
    );
    git(d, &["init", "-q"]);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    t
}

fn stale_note(v: &Value) -> String {
    let n = notes(v);
    n.iter().find(|n| n.starts_with("stale: core -> api")).cloned().unwrap_or_else(|| panic!("no stale note: {n:?}"))
}

#[test]
fn a_stale_wire_names_only_the_contracts_that_changed() {
    let t = two_names();
    let d = t.path();
    assert_eq!(loop_json(d).1["verdict"]["outcome"], "converged");
    // parse's signature changes; join is untouched
    let core = "def parse(text, sep=None):\n    return text.split(sep)\n\n\ndef join(words):\n    return ' '.join(words)\n\n\ndef size(text):\n    return len(text)\n";
    std::fs::write(d.join("src/core/__init__.py"), core).unwrap();
    let (_, v) = loop_json(d);
    let note = stale_note(&v);
    assert!(note.contains("changed: src/core/__init__.py:parse"), "{note}");
    assert!(!note.contains("join"), "{note}");
    assert_eq!(v["verdict"]["outcome"], "converged", "{v:#}");
    // a name that starts crossing and one that stops crossing are said as such
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse, size\n\n\ndef run(text):\n    return size(parse(text))\n",
    )
    .unwrap();
    let (_, v) = loop_json(d);
    let note = stale_note(&v);
    assert!(note.contains("added: src/core/__init__.py:size"), "{note}");
    assert!(note.contains("removed: src/core/__init__.py:join"), "{note}");
    assert!(!note.contains(":parse"), "{note}");
}

fn preflight(dir: &Path) -> Vec<Value> {
    let o = run(&["preflight", "--format", "json", "-q"], dir);
    json(&o)["checks"].as_array().unwrap().clone()
}

#[test]
fn preflight_names_the_mutation_tools_of_the_repositorys_languages() {
    let t = one_stage(&[]);
    let checks = preflight(t.path());
    let audits: Vec<String> = checks
        .iter()
        .filter(|c| c["capability"] == "proof-strength audit")
        .map(|c| c["found"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(audits.len(), 1, "{audits:?}");
    assert!(audits[0].contains("`mutmut` (python)"), "{audits:?}");
    let property = checks.iter().find(|c| c["capability"] == "verify: property").unwrap();
    let said = property.to_string();
    assert!(said.contains("hypothesis") && !said.contains("proptest") && !said.contains("fast-check"), "{said}");
    // a TypeScript file brings its tool in
    write_files(t.path(), &[("web/main.ts", "export const x = 1;\n")]);
    let checks = preflight(t.path());
    let tools: Vec<&str> = checks
        .iter()
        .filter(|c| c["capability"] == "proof-strength audit")
        .map(|c| c["found"].as_str().unwrap())
        .collect();
    assert_eq!(tools.len(), 2, "{tools:?}");
    assert!(
        tools.iter().any(|f| f.contains("stryker")) && !tools.iter().any(|f| f.contains("cargo-mutants")),
        "{tools:?}"
    );
}

#[test]
fn preflight_does_not_ask_to_declare_packages_pyproject_declares() {
    let stream = |d: &Path| preflight(d).into_iter().find(|c| c["capability"] == "stream detection").unwrap();
    // nothing declares the packages: the advice names them and where to declare them
    let t = one_stage(&[("shop/__init__.py", "from kit import price\n")]);
    let s = stream(t.path());
    assert_eq!(s["level"], "ready-with-gaps", "{s:#}");
    let fix = s["fix"].as_str().unwrap();
    assert!(fix.contains("`kit`") && fix.contains("`shop`") && fix.contains("pyproject.toml"), "{s:#}");
    // packages.find declares them
    for declared in [
        "[tool.setuptools.packages.find]\ninclude = [\"kit*\", \"shop*\"]\n",
        "[tool.setuptools.packages.find]\nwhere = [\".\"]\n",
        "[tool.setuptools]\npackages = [\"kit\", \"shop\", \"shop.sub\"]\n",
    ] {
        let manifest = format!("[project]\nname = \"kit\"\nversion = \"0.1.0\"\n\n{declared}");
        let t = one_stage(&[("shop/__init__.py", "from kit import price\n"), ("pyproject.toml", &manifest)]);
        let s = stream(t.path());
        assert_eq!((s["level"].as_str(), &s["fix"]), (Some("ready"), &Value::Null), "{declared}: {s:#}");
    }
    // one package left out is the only one named
    let manifest =
        "[project]\nname = \"kit\"\nversion = \"0.1.0\"\n\n[tool.setuptools.packages.find]\ninclude = [\"kit*\"]\n";
    let t = one_stage(&[("shop/__init__.py", "from kit import price\n"), ("pyproject.toml", manifest)]);
    let s = stream(t.path());
    let fix = s["fix"].as_str().unwrap_or_else(|| panic!("{s:#}"));
    assert!(fix.contains("`shop`") && !fix.contains("`kit`"), "{s:#}");
}
