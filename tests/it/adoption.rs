//! Architecture where users have it: support directories are never stages and never capture an
//! import of the code; a stage's name does not move when a file that is not its manifest comes or
//! goes; `andon init` layers the modules inside a one-package project, and one planted back-edge
//! between two of them is one blocking finding; `andon stream --within` shows those modules.

use std::path::Path;

use serde_json::Value;

use crate::support::{json, run, write_files};

/// A one-package Python project laid out as httpx is: `_models` below `_transports` below
/// `_client`, below `_api`, with `_types` at the bottom; a test suite, examples (one of them a
/// package named as a real dependency), docs, a tooling script at the root.
fn one_package() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    one_package_at(t.path());
    t
}

fn one_package_at(d: &Path) {
    write_files(
        d,
        &[
            ("pyproject.toml", "[project]\nname = \"webby\"\nversion = \"1.0\"\ndependencies = [\"pydantic\"]\n"),
            ("webby/__init__.py", "from ._api import get\nfrom ._client import Client\n"),
            ("webby/_types.py", "Headers = dict\n"),
            ("webby/_models.py", "from ._types import Headers\n\n\nclass Request:\n    headers: Headers\n"),
            ("webby/_transports/__init__.py", "from .default import Transport\n"),
            (
                "webby/_transports/default.py",
                "from .._models import Request\n\n\nclass Transport:\n    def send(self, r: Request):\n        return r\n",
            ),
            (
                "webby/_client.py",
                "import pydantic\n\nfrom ._models import Request\nfrom ._transports import Transport\n\n\n\
                 class Client:\n    def get(self):\n        return Transport().send(Request())\n",
            ),
            ("webby/_api.py", "from ._client import Client\n\n\ndef get():\n    return Client().get()\n"),
            ("tests/test_client.py", "from webby import Client\n\n\ndef test_get():\n    Client().get()\n"),
            ("t/__init__.py", ""),
            ("t/helpers.py", "import webby\n"),
            ("examples/app.py", "import webby\n\nwebby.get()\n"),
            ("examples/pydantic/__init__.py", "import webby\n"),
            ("docs/conf.py", "project = 'webby'\n"),
            ("setup.py", "from setuptools import setup\n\nsetup()\n"),
        ],
    );
}

fn stream(d: &Path) -> Value {
    let o = run(&["stream", "--format", "json", "-q"], d);
    assert!(o.status.success(), "stream: {}", String::from_utf8_lossy(&o.stderr));
    json(&o)
}

fn names(v: &Value, list: &str, key: &str) -> Vec<String> {
    v[list].as_array().unwrap().iter().map(|x| x[key].as_str().unwrap().to_string()).collect()
}

#[test]
fn tests_examples_docs_and_tooling_are_support_and_capture_no_import() {
    let t = one_package();
    let v = stream(t.path());
    assert_eq!(names(&v, "stages", "name"), ["webby"], "{v:#}");
    let support: Vec<(String, String)> = v["support"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["dir"].as_str().unwrap().to_string(), s["role"].as_str().unwrap().to_string()))
        .collect();
    for (dir, role) in [("docs", "docs"), ("examples", "example"), ("setup.py", "tooling"), ("t", "test")] {
        assert!(support.contains(&(dir.to_string(), role.to_string())), "{dir} is {role} support: {support:?}");
    }
    assert!(v["wires"].as_array().unwrap().is_empty(), "support carries no wire: {v:#}");
    // `import pydantic` in the package is the dependency, not `examples/pydantic/`
    let o = run(&["query", "-q", "--format", "json", "Resolves(\"webby/_client.py\", l, t, c)"], t.path());
    let rows = json(&o)["rows"].as_array().unwrap().clone();
    assert!(rows.iter().all(|r| !r[1].as_str().unwrap_or("").starts_with("examples/")), "{rows:?}");
    let o = run(&["query", "-q", "--format", "json", "ResolvesExternal(\"webby/_client.py\", l, p, c)"], t.path());
    assert!(json(&o)["rows"].to_string().contains("pydantic"), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn an_index_setting_makes_a_support_directory_code() {
    let t = one_package();
    write_files(t.path(), &[("andon.toml", "[index]\nstage_dirs = [\"examples\"]\n")]);
    let v = stream(t.path());
    let stages = names(&v, "stages", "name");
    assert!(stages.iter().any(|s| s.starts_with("pydantic") || s == "examples"), "{stages:?}");
    assert!(!names(&v, "support", "dir").contains(&"examples".to_string()), "{v:#}");
}

#[test]
fn a_new_root_script_or_module_renames_no_stage() {
    let t = tempfile::tempdir().unwrap();
    // the checkout is named as the package is, as a clone of the project would be
    let d = t.path().join("webby");
    one_package_at(&d);
    let before = names(&stream(&d), "stages", "name");
    assert_eq!(before, ["webby"]);
    let o = run(&["init", "-q"], &d);
    assert!(o.status.success(), "init: {}", String::from_utf8_lossy(&o.stderr));
    for (file, text) in [("noxfile.py", "import nox\n"), ("webby_cli.py", "import webby\n"), ("tasks.py", "x = 1\n")] {
        write_files(&d, &[(file, text)]);
        // the package keeps its name; a new root module goes by its own
        let v = stream(&d);
        let package = v["stages"].as_array().unwrap().iter().find(|s| s["name"] == "webby");
        assert_eq!(package.map(|s| s["root"].clone()), Some(Value::from("webby")), "{file}: {v:#}");
        let o = run(&["check", "-q"], &d);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", String::from_utf8_lossy(&o.stdout));
    }
}

#[test]
fn init_layers_the_modules_of_one_package_and_a_back_edge_is_one_finding() {
    let t = one_package();
    let d = t.path();
    let o = run(&["init", "-q"], d);
    assert!(o.status.success(), "init: {}", String::from_utf8_lossy(&o.stderr));
    let toml = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    let layers = toml.split("[[contract]]").find(|c| c.contains("kind = \"layers\"")).expect(&toml);
    let at = |p: &str| layers.find(&format!("\"path:webby/{p}\"")).unwrap_or_else(|| panic!("{p} in {layers}"));
    assert!(at("_api.py") < at("_client.py") && at("_client.py") < at("_transports"), "{layers}");
    assert!(at("_transports") < at("_models.py") && at("_models.py") < at("_types.py"), "{layers}");
    assert_eq!(run(&["check", "-q"], d).status.code(), Some(0));
    // the bottom module imports the top one
    write_files(d, &[("webby/_types.py", "Headers = dict\n\nfrom ._api import get\n")]);
    let o = run(&["check", "-q", "--format", "json"], d);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    let v = json(&o);
    let blocking: Vec<&Value> =
        v["findings"].as_array().unwrap().iter().filter(|f| f["blocking"].as_bool() == Some(true)).collect();
    assert_eq!(blocking.len(), 1, "{:#}", v["findings"]);
    assert_eq!(blocking[0]["path"], "webby/_types.py");
}

#[test]
fn stream_within_shows_the_modules_of_a_stage_and_their_layers() {
    let t = one_package();
    let o = run(&["stream", "--within", "webby", "--format", "json", "-q"], t.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    let w = &v["within"];
    assert_eq!(w["stage"], "webby");
    assert_eq!(w["base"], "webby");
    let layers: Vec<Vec<String>> = serde_json::from_value(w["layers"].clone()).unwrap();
    assert_eq!(layers.first().unwrap(), &["_api"], "{w:#}");
    assert_eq!(layers.last().unwrap(), &["_types"], "{w:#}");
    assert!(w["imports"].as_array().unwrap().iter().any(|i| i["from"] == "_client" && i["to"] == "_transports"));
    let text = run(&["stream", "--within", "webby", "-q"], t.path());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("layers, top first: _api > _client > _transports > _models > _types"), "{text}");
    // a stage that is not there is an error naming the nearest
    let o = run(&["stream", "--within", "weby", "-q"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("did you mean `webby`?"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A dev-dependency that only an example uses is used: support's imports count as its manifest's
/// usage, though support is no stage.
#[test]
fn a_dependency_only_support_imports_is_used() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"walker\"\nversion = \"0.1.0\"\n\n[dev-dependencies]\nwalkdir = \"2\"\ntermcolor = \"1\"\n",
            ),
            ("src/lib.rs", "pub fn walk() {}\n"),
            (
                "examples/list.rs",
                "use walkdir::WalkDir;\n\nfn main() { let _ = WalkDir::new(\".\"); walker::walk(); }\n",
            ),
            ("andon.toml", "[[contract]]\nname = \"deps\"\nkind = \"manifest\"\n"),
        ],
    );
    let o = run(&["check", "-q", "--format", "json"], d);
    let v = json(&o);
    let messages: Vec<String> =
        v["findings"].as_array().unwrap().iter().map(|f| f["message"].as_str().unwrap().to_string()).collect();
    assert!(messages.iter().all(|m| !m.contains("`walkdir`")), "{messages:?}");
    // one no code or support imports is still unused
    assert!(messages.iter().any(|m| m.contains("`termcolor`")), "{messages:?}");
    let support = names(&stream(d), "support", "dir");
    assert_eq!(support, ["examples"]);
}

#[test]
fn a_new_root_module_takes_no_manifest_finding_from_the_package() {
    // rich 13.9.4: init excuses a declared dependency no code imports, as `from = "stage:rich"`;
    // a root `cli.py` is a stage of its own, shallower than `rich/`, and must not become the
    // manifest's owner, which would make that exception stale (exit 2) and the finding new
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("checkout");
    one_package_at(&d);
    write_files(
        &d,
        &[(
            "pyproject.toml",
            "[project]\nname = \"webby\"\nversion = \"1.0\"\ndependencies = [\"pydantic\", \"idna\"]\n",
        )],
    );
    let o = run(&["init", "-q"], &d);
    assert!(o.status.success(), "init: {}", String::from_utf8_lossy(&o.stderr));
    let toml = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    assert!(toml.contains("from = \"stage:webby\", to = \"package:idna\""), "{toml}");
    for (file, text) in [("cli.py", "import os\n"), ("zzz/__init__.py", "x = 1\n"), ("aaa/__init__.py", "x = 1\n")] {
        write_files(&d, &[(file, text)]);
        let o = run(&["check", "-q"], &d);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", String::from_utf8_lossy(&o.stdout));
    }
}

#[test]
fn a_build_backend_hook_is_tooling_not_a_stage() {
    // fastapi 0.115.5 ships `pdm_build.py` at its root: a build hook, not a second stage `fastapi@.`
    let t = one_package();
    write_files(t.path(), &[("pdm_build.py", "def pdm_build_initialize(context):\n    pass\n")]);
    let v = stream(t.path());
    assert_eq!(names(&v, "stages", "name"), ["webby"], "{v:#}");
    assert!(names(&v, "support", "dir").contains(&"pdm_build.py".to_string()), "{v:#}");
}

/// The report opens each stage to its modules, layer by layer (what `stream --within` shows).
#[test]
fn the_report_opens_a_stage_to_its_modules() {
    let t = one_package();
    let o = run(&["report", "-q", "-o", "r.html"], t.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(t.path().join("r.html")).unwrap();
    let at = page.find("<details class=\"within\" data-stage=\"webby\">").expect("the stage opens");
    let inside = &page[at..at + page[at..].find("</details>").unwrap()];
    assert!(inside.contains("5 layers"), "{inside}");
    let li = |m: &str| inside.find(&format!("<li>{m}</li>")).unwrap_or_else(|| panic!("{m} in {inside}"));
    assert!(li("_api") < li("_client") && li("_client") < li("_transports") && li("_models") < li("_types"));
    assert!(inside.contains("_client → _transports"), "{inside}");
}

/// A contract naming a stage that is gone (its manifest removed) or renamed cannot be judged: a
/// finding of the configuration naming the contract (exit 2), with the old and new name where it
/// was renamed, while the other contracts are judged.
#[test]
fn a_contract_naming_a_stage_that_is_gone_or_renamed_is_one_unjudged_contract() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("crates/a/Cargo.toml", "[package]\nname = \"alpha\"\nversion = \"0.1.0\"\n"),
            ("crates/a/src/lib.rs", "pub fn f() {}\n"),
            (
                "crates/b/Cargo.toml",
                "[package]\nname = \"beta\"\nversion = \"0.1.0\"\n\n[dependencies]\nalpha = { path = \"../a\" }\n",
            ),
            ("crates/b/src/lib.rs", "pub fn g() { alpha::f() }\n"),
            (
                "andon.toml",
                "[[contract]]\nname = \"order\"\nkind = \"layers\"\nlayers = [\"stage:beta\", \"stage:alpha\"]\n\n\
                 [[contract]]\nname = \"old name\"\nkind = \"forbidden\"\nfrom = \"stage:alpha@crates/a\"\nto = \"stage:beta\"\n\n\
                 [[contract]]\nname = \"no cycle\"\nkind = \"acyclic\"\n",
            ),
        ],
    );
    let o = run(&["check", "-q", "--format", "json"], d);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
    let v = json(&o);
    let unjudged = v["unjudged"].as_array().unwrap();
    assert_eq!(unjudged.len(), 1, "{v:#}");
    assert_eq!(unjudged[0]["contract"], "old name");
    assert!(unjudged[0]["message"].as_str().unwrap().contains("it is `alpha` now"), "{v:#}");
    // the others were judged
    assert_eq!(v["contracts"].as_array().unwrap().len(), 2, "{v:#}");
    // the manifest of `beta` removed: `order` cannot be judged, and says so by name
    std::fs::remove_file(d.join("crates/b/Cargo.toml")).unwrap();
    let o = run(&["check", "-q"], d);
    assert_eq!(o.status.code(), Some(2));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("andon.toml:4:1: order: cannot be judged"), "{text}");
    assert!(text.contains("stage:beta"), "{text}");
}
