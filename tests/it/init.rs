//! `andon init`: a commented andon.toml drawn from the stream, that `andon check` passes right
//! after, that catches the first new back-edge, and whose exceptions only shrink.

use std::path::Path;

use serde_json::Value;

use crate::support::{json, run, run_ok, write_files};

/// A repository of three languages: Python packages `core` <- `api` and two unwired ones
/// (`billing`, `report`), TypeScript packages `@shop/ui` <- `@shop/app` (which imports `left-pad`,
/// undeclared: a finding present today), and a Rust crate `engine`.
fn mixed() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("py/pyproject.toml", "[project]\nname = \"shop\"\nversion = \"0.1.0\"\ndependencies = []\n"),
            ("py/src/core/__init__.py", "def parse(text):\n    return text.split()\n"),
            ("py/src/api/__init__.py", "from core import parse\n\n\ndef run(text):\n    return parse(text)\n"),
            ("py/src/billing/__init__.py", "def bill():\n    return 1\n"),
            ("py/src/report/__init__.py", "def report():\n    return 2\n"),
            ("web/packages/ui/package.json", "{\"name\": \"@shop/ui\", \"version\": \"1.0.0\"}\n"),
            ("web/packages/ui/src/index.ts", "export function button(label: string): string {\n  return label;\n}\n"),
            (
                "web/packages/app/package.json",
                "{\"name\": \"@shop/app\", \"version\": \"1.0.0\", \"dependencies\": {\"@shop/ui\": \"1.0.0\"}}\n",
            ),
            (
                "web/packages/app/src/index.ts",
                "import { button } from \"@shop/ui\";\nimport pad from \"left-pad\";\n\nexport const page = button(pad(\"home\"));\n",
            ),
            ("rs/engine/Cargo.toml", "[package]\nname = \"engine\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            ("rs/engine/src/lib.rs", "pub fn run() -> u32 {\n    1\n}\n"),
        ],
    );
    t
}

/// `andon check --format json` on `dir`: its exit code and document.
fn check(dir: &Path) -> (Option<i32>, serde_json::Value) {
    let out = run(&["check", "--format", "json", "-q"], dir);
    (out.status.code(), json(&out))
}

/// The contracts of `andon init --format json`, as `kind: name` lines.
fn contracts(doc: &serde_json::Value) -> Vec<String> {
    doc["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{}: {}", c["kind"].as_str().unwrap(), c["name"].as_str().unwrap()))
        .collect()
}

#[test]
fn init_holds_today_refuses_to_overwrite_and_catches_a_new_back_edge() {
    let t = mixed();
    let d = t.path();
    let out = run_ok(&["init", "-q", "--format", "json"], d);
    let doc = json(&out);
    assert_eq!((doc["written"].as_bool(), doc["verdict"]["outcome"].as_str()), (Some(true), Some("written")));
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["path"], "andon.toml");
    assert_eq!(
        contracts(&doc),
        [
            "acyclic: no dependency cycle among stages",
            "layers: layers: @shop/app > @shop/ui",
            "layers: layers: api > core",
            "independence: independent: billing, report",
            "manifest: dependencies are declared and used",
            "resolves: imports resolve",
        ]
    );
    assert_eq!((doc["exceptions"].as_u64(), doc["excused"].as_u64()), (Some(1), Some(1)));
    let text = std::fs::read(d.join("andon.toml")).unwrap();
    assert_eq!(doc["text"].as_str().unwrap().as_bytes(), text.as_slice());
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("reason = \"present when andon init ran on 20"), "{text}");
    assert!(text.contains("# web/packages/app/src/index.ts:2: stage `@shop/app` imports `left-pad`"), "{text}");
    assert!(text.contains("delete that exception"), "{text}");

    let (code, report) = check(d);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["summary"]["excused"], 1);

    // a second init refuses, and leaves the file byte for byte
    let again = run(&["init", "-q"], d);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"), "{again:?}");
    assert_eq!(std::fs::read_to_string(d.join("andon.toml")).unwrap(), text);

    // the producer `core` imports its consumer `api`: a back-edge against the stream order
    write_files(d, &[("py/src/core/__init__.py", "import api\n\n\ndef parse(text):\n    return text.split()\n")]);
    let (code, report) = check(d);
    assert_eq!(code, Some(1), "{report:#}");
    // one import, one finding: at the import, listing both contracts it breaks
    let blocking: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["blocking"] == true).collect();
    assert_eq!(blocking.len(), 1, "{report:#}");
    assert_eq!(
        (blocking[0]["path"].as_str(), blocking[0]["line"].as_u64()),
        (Some("py/src/core/__init__.py"), Some(1))
    );
    let broken: Vec<&str> =
        blocking[0]["breaks"].as_array().unwrap().iter().map(|f| f["contract"].as_str().unwrap()).collect();
    assert!(broken.contains(&"layers: api > core"), "{report:#}");
    assert!(broken.contains(&"no dependency cycle among stages"), "{report:#}");
    assert_eq!(report["verdict"]["blocking"], 1);
}

#[test]
fn a_new_wire_between_unwired_stages_breaks_their_independence() {
    let t = mixed();
    let d = t.path();
    run_ok(&["init", "-q"], d);
    write_files(
        d,
        &[("py/src/billing/__init__.py", "from report import report\n\n\ndef bill():\n    return report()\n")],
    );
    let (code, report) = check(d);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(report["findings"][0]["contract"], "independent: billing, report", "{report:#}");
}

#[test]
fn fixing_a_finding_present_at_init_asks_for_its_exception_to_go() {
    let t = mixed();
    let d = t.path();
    run_ok(&["init", "-q"], d);
    write_files(
        d,
        &[(
            "web/packages/app/src/index.ts",
            "import { button } from \"@shop/ui\";\n\nexport const page = button(\"home\");\n",
        )],
    );
    let out = run(&["check", "-q"], d);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("to `package:left-pad`") && said.contains("remove this exception"), "{said}");
    assert!(said.contains("`package:left-pad` names no package of the index"), "{said}");
}

#[test]
fn an_exception_glob_that_does_not_parse_is_a_configuration_error() {
    let t = mixed();
    let d = t.path();
    run_ok(&["init", "-q"], d);
    let text = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    std::fs::write(d.join("andon.toml"), text.replace("to = \"package:left-pad\"", "to = \"path:web/[x\"")).unwrap();
    let out = run(&["check", "-q"], d);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a valid glob"), "{out:?}");
}

#[test]
fn print_writes_the_text_and_nothing_else() {
    let t = mixed();
    let d = t.path();
    let out = run_ok(&["init", "--print"], d);
    assert!(!d.join("andon.toml").exists());
    assert!(String::from_utf8_lossy(&out.stderr).contains("andon: verdict printed"), "{out:?}");
    let printed = out.stdout.clone();
    assert!(printed.starts_with(b"# The architecture `andon check` holds"));
    let doc = json(&run_ok(&["init", "--print", "--format", "json", "-q"], d));
    assert_eq!((doc["written"].as_bool(), doc["verdict"]["outcome"].as_str()), (Some(false), Some("printed")));
    assert!(!d.join("andon.toml").exists());
    // what it prints is what init writes
    run_ok(&["init", "-q"], d);
    assert_eq!(std::fs::read(d.join("andon.toml")).unwrap(), printed);
}

#[test]
fn a_cycle_present_at_init_is_excused_until_it_is_broken() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    // `alpha` leans on `beta` (two imports); `beta` reaches back once: the weaker direction
    let alpha = "from beta import b\nfrom beta import c\n\n\ndef a():\n    return b() + c()\n";
    write_files(
        d,
        &[
            ("pyproject.toml", "[project]\nname = \"loop\"\nversion = \"0.1.0\"\n"),
            ("src/alpha/__init__.py", alpha),
            ("src/beta/__init__.py", "def b():\n    from alpha import a\n    return a()\n\n\ndef c():\n    return 1\n"),
            ("src/gamma/__init__.py", "from alpha import a\n"),
        ],
    );
    let doc = json(&run_ok(&["init", "-q", "--format", "json"], d));
    let acyclic = &doc["contracts"][0];
    assert_eq!((acyclic["kind"].as_str(), acyclic["exceptions"].as_u64()), (Some("acyclic"), Some(1)), "{doc:#}");
    let text = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    assert!(text.contains("{ from = \"stage:beta\", to = \"stage:alpha\""), "{text}");
    assert!(
        text.contains("stage `beta` depends on stage `alpha` (1 import; it imports `alpha`), closing a cycle"),
        "{text}"
    );
    assert!(text.contains("# - stages alpha, beta form a cycle"), "{text}");
    let (code, report) = check(d);
    assert_eq!(code, Some(0), "{report:#}");
    // the cycle is broken (the dependency the exception allows stays, on no cycle now): the
    // exception excuses nothing
    write_files(d, &[("src/alpha/__init__.py", "def a():\n    return 1\n")]);
    let (code, report) = check(d);
    assert_eq!(code, Some(2), "{report:#}");
    let stale = &report["stale_exceptions"][0];
    assert_eq!((stale["from"].as_str(), stale["to"].as_str()), (Some("stage:beta"), Some("stage:alpha")), "{report:#}");
    // once it is deleted, the cycle cannot come back unseen
    let kept: Vec<&str> =
        text.lines().filter(|l| !l.contains("stage:beta\", to") && !l.contains("closing a cycle")).collect();
    std::fs::write(d.join("andon.toml"), kept.join("\n")).unwrap();
    assert_eq!(check(d).0, Some(0));
    write_files(d, &[("src/alpha/__init__.py", alpha)]);
    let (code, report) = check(d);
    assert_eq!(code, Some(1), "{report:#}");
}

#[test]
fn one_stage_and_no_stage_hold_too() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"solo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\"\n",
            ),
            ("src/lib.rs", "pub fn f() {}\n"),
        ],
    );
    let doc = json(&run_ok(&["init", "-q", "--format", "json"], d));
    assert_eq!(
        contracts(&doc),
        [
            "acyclic: no dependency cycle among stages",
            "manifest: dependencies are declared and used",
            "resolves: imports resolve"
        ]
    );
    assert_eq!(doc["exceptions"], 1, "serde is declared and unused: {doc:#}");
    assert_eq!(check(d).0, Some(0));

    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(d, &[("README.md", "nothing to parse\n")]);
    let doc = json(&run_ok(&["init", "-q", "--format", "json"], d));
    assert_eq!(doc["stages"], 0);
    assert_eq!(contracts(&doc), ["acyclic: no dependency cycle among stages"]);
    assert!(doc["notes"][0].as_str().unwrap().contains("no `manifest` contract"), "{doc:#}");
    assert_eq!(check(d).0, Some(0));
}

#[test]
fn stage_names_are_quoted_as_toml_strings() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let name = "we\\\"ird\\\\ui\\n#1";
    write_files(
        d,
        &[
            ("a/package.json", format!("{{\"name\": \"{name}\", \"version\": \"1.0.0\"}}\n")),
            ("a/src/index.ts", "export const x = 1;\n".to_string()),
            ("b/package.json", "{\"name\": \"app\", \"version\": \"1.0.0\"}\n".to_string()),
            ("b/src/index.ts", "import { x } from \"../../a/src/index\";\nexport const y = x;\n".to_string()),
        ],
    );
    let doc = json(&run_ok(&["init", "-q", "--format", "json"], d));
    let layers = &doc["contracts"][1];
    assert_eq!(layers["layers"][1][0], "stage:we\"ird\\ui\n#1", "{doc:#}");
    let text = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    assert!(text.contains("\"stage:we\\\"ird\\\\ui\\u000a#1\""), "{text}");
    let (code, report) = check(d);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["contracts"][1]["status"], "kept");
}

#[test]
fn settings_already_there_are_never_replaced() {
    let t = mixed();
    let d = t.path();
    write_files(
        d,
        &[("pyproject.toml", "[project]\nname = \"x\"\n\n[[tool.andon.contract]]\nname = \"c\"\nkind = \"acyclic\"\n")],
    );
    let out = run(&["init", "-q"], d);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[tool.andon]"), "{out:?}");
    assert!(!d.join("andon.toml").exists());
    // a link named andon.toml, even a dangling one, is left as it is
    std::fs::remove_file(d.join("pyproject.toml")).unwrap();
    std::os::unix::fs::symlink("elsewhere.toml", d.join("andon.toml")).unwrap();
    assert_eq!(run(&["init", "-q"], d).status.code(), Some(2));
    assert!(!d.join("elsewhere.toml").exists());
    assert_eq!(std::fs::read_link(d.join("andon.toml")).unwrap(), Path::new("elsewhere.toml"));
}

#[test]
fn a_stage_named_with_space_around_it_keeps_the_acyclic_contract_and_a_cycle_through_it_fails() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("a/package.json", r#"{"name": " alpha ", "version": "1.0.0", "main": "index.js"}"#),
            ("a/index.js", "export function f() {}\n"),
            ("b/package.json", r#"{"name": "beta", "version": "1.0.0", "dependencies": {" alpha ": "1"}}"#),
            ("b/index.js", "import { f } from \" alpha \";\nexport const g = f;\n"),
        ],
    );
    let out = run_ok(&["init", "--format", "json", "-q"], d);
    let doc = json(&out);
    let text = doc.to_string();
    assert!(text.contains("\"acyclic\""), "the acyclic contract is kept: {doc}");
    assert!(!text.contains("left out"), "no contract is left out: {doc}");
    let (code, _) = check(d);
    assert_eq!(code, Some(0), "init holds today");
    std::fs::write(d.join("a/cycle.js"), "import { g } from \"beta\";\nexport const h = g;\n").unwrap();
    let (code, doc) = check(d);
    assert_eq!(code, Some(1), "a cycle through the spaced stage breaks acyclic: {doc}");
    assert!(doc.to_string().contains("no dependency cycle among stages"), "{doc}");
}
