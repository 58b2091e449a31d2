//! Macro-made names are names, and an absence is exact only where the target's surface is closed
//! (decision 9): an item-level macro, `include!`, a glob from outside the index, a module
//! `__getattr__` or a changed `__all__` opens a module's surface; a name missing there is a
//! heuristic absence whose reason travels with it (`OpenAbsence`), never a tier-1 hold.

use std::path::Path;

use serde_json::Value;

use crate::support::{andon, git, json, run_ok, scratch, three_stages, write_files};

/// The rows of `query` in the repository at `dir`, indexing it first.
fn rows(dir: &Path, query: &str) -> Vec<Vec<Value>> {
    run_ok(&["index", "-q"], dir);
    let out = run_ok(&["query", query, "--format", "json"], dir);
    json(&out)["rows"].as_array().unwrap().iter().map(|r| r.as_array().unwrap().clone()).collect()
}

/// (name, confidence) of every `BrokenImportAt` row.
fn broken(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = rows(dir, "BrokenImportAt(p, l, n, s, t, c)")
        .into_iter()
        .map(|r| (r[2].as_str().unwrap().to_string(), r[5].as_str().unwrap().to_string()))
        .collect();
    out.sort();
    out
}

/// (name, reason) of every `OpenAbsence` row.
fn open_absences(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = rows(dir, "OpenAbsence(p, l, n, t, o, r)")
        .into_iter()
        .map(|r| (r[2].as_str().unwrap().to_string(), r[5].as_str().unwrap().to_string()))
        .collect();
    out.sort();
    out
}

#[test]
fn macro_made_names_resolve_across_crates() {
    let t = scratch("rs-macros");
    let d = t.path();
    let missing: Vec<String> =
        rows(d, "MissingName(p, l, n, t)").into_iter().map(|r| r[2].as_str().unwrap().to_string()).collect();
    // derive, proc_macro and proc_macro_attribute names, `#[macro_export]` macros (in a submodule,
    // in a macro body), items of an item-level macro body and of an argument-less `macro_rules`
    // expansion, a `pub use` of proc macros, and an `include!`d module: none is missing
    assert_eq!(missing, ["Missing", "Absent"], "{missing:?}");
    let roots = rows(d, "CrateRootMacro(p, l, n, k)");
    let mut named: Vec<(String, String)> =
        roots.iter().map(|r| (r[2].as_str().unwrap().into(), r[3].as_str().unwrap().into())).collect();
    named.sort();
    assert_eq!(
        named,
        [
            ("Parser".into(), "proc_macro_derive".into()),
            ("make".into(), "proc_macro".into()),
            ("route".into(), "proc_macro_attribute".into()),
            ("shout".into(), "macro_export".into()),
            ("whisper".into(), "macro_export".into()),
        ]
    );
}

#[test]
fn a_closed_surface_keeps_the_absence_exact_and_an_open_one_makes_it_heuristic_with_its_reason() {
    let t = scratch("rs-macros");
    let d = t.path();
    assert_eq!(broken(d), [("Absent".into(), "heuristic".into()), ("Missing".into(), "exact".into())]);
    let open = open_absences(d);
    assert_eq!(open, [("Absent".into(), "item-level macro `crate_root!`".into())], "{open:?}");
    let surfaces = rows(d, "OpenSurface(p, r)");
    assert!(
        surfaces
            .iter()
            .any(|r| r[0] == "crates/generated/src/lib.rs" && r[1].as_str().unwrap().starts_with("`include!`")),
        "{surfaces:?}"
    );
}

/// A Rust workspace where `app` imports `name` from `core`, whose lib.rs is `core_lib`.
fn rust_pair(core_lib: &str, name: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("Cargo.toml", "[workspace]\nmembers = [\"core\", \"app\"]\n"),
            (
                "core/Cargo.toml",
                "[package]\nname = \"core-x\"\nversion = \"0.1.0\"\n\n[dependencies]\nlibc = \"0.2\"\n",
            ),
            ("core/src/lib.rs", core_lib),
            (
                "app/Cargo.toml",
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\ncore-x = { path = \"../core\" }\n",
            ),
            ("app/src/main.rs", &format!("use core_x::{{here, {name}}};\n\nfn main() {{ here(); }}\n")),
        ],
    );
    t
}

#[test]
fn each_rust_cause_opens_the_surface() {
    for (lib, reason) in [
        ("pub fn here() {}\n\nmake_items! { pub fn there() {} }\n", "item-level macro `make_items!`"),
        ("pub fn here() {}\n\npub use libc::*;\n", "glob import of `libc` (line 3) from the external package `libc`"),
    ] {
        let t = rust_pair(lib, "gone");
        let d = t.path();
        assert_eq!(broken(d), [("gone".into(), "heuristic".into())], "{lib}");
        assert_eq!(open_absences(d), [("gone".into(), reason.into())], "{lib}");
        // the name the macro body defines is found
        let t = rust_pair(lib, "there");
        if lib.contains("make_items") {
            assert_eq!(broken(t.path()), [], "{lib}");
        }
    }
    // a glob of an item's members (an enum's variants) brings names the index does not list
    let t = rust_pair("pub fn here() {}\npub enum Kind { Alpha, Beta }\npub use self::Kind::*;\n", "Alpha");
    assert_eq!(broken(t.path()), [("Alpha".into(), "heuristic".into())]);
    let why = open_absences(t.path());
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(why[0].1.starts_with("glob import of `self::Kind` (line 3) from `core/src/lib.rs`"), "{why:?}");
    // the control: nothing opens it
    let t = rust_pair("pub fn here() {}\n", "gone");
    assert_eq!(broken(t.path()), [("gone".into(), "exact".into())]);
    assert_eq!(open_absences(t.path()), []);
    // `include!` of text the index does not hold: nothing can be shown missing there
    let t = rust_pair("pub fn here() {}\n\ninclude!(concat!(env!(\"OUT_DIR\"), \"/x.rs\"));\n", "gone");
    assert_eq!(broken(t.path()), []);
    assert_eq!(rows(t.path(), "MissingName(p, l, n, t)"), Vec::<Vec<Value>>::new());
}

#[test]
fn each_python_cause_opens_the_surface() {
    for (core, reason) in [
        (
            "def parse(text):\n    return text\n\n\ndef __getattr__(name):\n    return name\n",
            "module-level `__getattr__` at line 5",
        ),
        (
            "def parse(text):\n    return text\n\n\n__all__ = [\"parse\"]\n__all__ += [\"other\"]\n",
            "`__all__` is changed at line 6",
        ),
        (
            "def parse(text):\n    return text\n\n\n__all__ = [\"parse\"]\n__all__.extend([\"other\"])\n",
            "`__all__` is changed at line 6",
        ),
        (
            "import os\n\n\ndef parse(text):\n    return text\n\n\n__all__ = [\"parse\"] + os.__all__\n",
            "`__all__` is computed at line 8",
        ),
        (
            "from os.path import *\n\n\ndef parse(text):\n    return text\n",
            "glob import of `os.path` (line 1) from the external package `os`",
        ),
    ] {
        let t = three_stages();
        let d = t.path();
        std::fs::write(d.join("src/core/__init__.py"), core).unwrap();
        assert_eq!(broken(d), [("missing_name".into(), "heuristic".into())], "{core}");
        assert_eq!(open_absences(d), [("missing_name".into(), reason.into())], "{core}");
    }
    // a star import of a repo module is followed: what it brings in is found, the rest is exact
    let t = three_stages();
    let d = t.path();
    write_files(
        d,
        &[
            ("src/core/__init__.py", "from core.impl import *\n"),
            ("src/core/impl.py", "def parse(text):\n    return text\n"),
        ],
    );
    assert_eq!(broken(d), [("missing_name".into(), "exact".into())]);
}

#[test]
fn a_typescript_export_star_from_outside_opens_the_surface() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let core = "export const here = 1;\nexport * from \"zod\";\nexport * from \"./nowhere\";\n";
    write_files(
        d,
        &[
            ("package.json", "{\"private\": true, \"workspaces\": [\"packages/*\"]}\n"),
            (
                "packages/core/package.json",
                "{\"name\": \"@acme/core\", \"main\": \"src/index.ts\", \"dependencies\": {\"zod\": \"3\"}}\n",
            ),
            ("packages/core/src/index.ts", core),
            ("packages/app/package.json", "{\"name\": \"@acme/app\", \"dependencies\": {\"@acme/core\": \"*\"}}\n"),
            ("packages/app/src/main.ts", "import { here, gone } from \"@acme/core\";\nconsole.log(here, gone);\n"),
        ],
    );
    assert_eq!(broken(d), [("gone".into(), "heuristic".into())]);
    let reasons: Vec<String> = open_absences(d).into_iter().map(|(_, r)| r).collect();
    assert_eq!(
        reasons,
        [
            "glob import of `./nowhere` (line 3) from an unresolved module",
            "glob import of `zod` (line 2) from the external package `zod`",
        ]
    );
}

/// `andon verify --request` over the wire `core -> api` after `core` is rewritten as `core_text`:
/// (exit code, the wire obligation).
fn verify_wire(core_text: &str) -> (i32, Value) {
    let t = three_stages();
    let d = t.path();
    std::fs::write(d.join("src/core/__init__.py"), core_text).unwrap();
    git(d, &["add", "-A", "--intent-to-add"]);
    let diff = std::process::Command::new("git").args(["diff"]).current_dir(d).output().unwrap().stdout;
    let request = serde_json::json!({
        "wire": "core -> api",
        "contract": { "obligation": "behavior is unchanged", "kind": "behavior" },
        "fixDiff": { "files": [], "diff": String::from_utf8(diff).unwrap() },
    });
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("request.json");
    std::fs::write(&file, serde_json::to_vec(&request).unwrap()).unwrap();
    let o = andon()
        .args(["verify", "--request", file.to_str().unwrap(), "--format", "json", "-q"])
        .arg(d)
        .output()
        .unwrap();
    let v = json(&o);
    let wire = v["obligations"].as_array().unwrap().iter().find(|o| o["id"] == "wire").cloned().unwrap_or(Value::Null);
    (o.status.code().unwrap(), serde_json::json!({ "report": v, "wire": wire }))
}

#[test]
fn the_stop_rule_fires_on_a_closed_module_and_not_on_an_open_one() {
    // closed: `missing_name` is absent from `core`, exactly: a tier-1 hold
    let (code, v) = verify_wire("def parse(text):\n    return text.split()\n\n\ndef helper():\n    return 1\n");
    assert_eq!(code, 12, "{v:#}");
    assert_eq!(v["report"]["verdict"]["outcome"], "halt:tier1-hold", "{v:#}");
    assert_eq!(v["wire"]["tier"], 1, "{v:#}");
    // open: `core` answers any name through `__getattr__`: refuted at tier 2, and the claim says why
    let (code, v) =
        verify_wire("def parse(text):\n    return text.split()\n\n\ndef __getattr__(name):\n    return name\n");
    assert_ne!(code, 12, "{v:#}");
    assert_eq!(v["wire"]["tier"], 2, "{v:#}");
    let claim = v["wire"]["claim"].as_str().unwrap_or_default().to_string();
    assert!(claim.contains("tier 2, not 1") && claim.contains("module-level `__getattr__`"), "{v:#}");
}
