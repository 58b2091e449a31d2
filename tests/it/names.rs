//! Name-level facts on code shaped like real projects: an absence claim is exact (tier 1) only
//! where the resolution that makes it is sure.

use crate::support::{json, run_ok, write_files};

/// The confidences of `BrokenImportAt` rows naming `name`.
fn broken_confidences(dir: &std::path::Path, name: &str) -> Vec<String> {
    let q = format!("BrokenImportAt(p, l, \"{name}\", s, t, c)");
    let out = run_ok(&["query", "-q", &q, "--format", "json"], dir);
    let v = json(&out);
    let col = v["columns"].as_array().unwrap().iter().position(|c| c == "c").unwrap();
    v["rows"].as_array().unwrap().iter().map(|r| r[col].as_str().unwrap().to_string()).collect()
}

/// `docs/conf.py` imports the installed `sphinx`; the repository also has a `tests/sphinx/`
/// package, importable only when `tests/` is put on the path (as a test runner does). The name
/// `sphinx` may mean either, so its resolution is heuristic, and a name missing there is no exact
/// contradiction (`tests/` holds test code only: no stage, so no wire claims it at all). An import
/// of the project's own package from the same place still is.
#[test]
fn a_module_found_only_under_another_packages_parent_is_not_an_exact_target() {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"proj\"\nversion = \"1\"\n"),
            ("proj/__init__.py", "def real():\n    pass\n"),
            ("tests/sphinx/__init__.py", "x = 1\n"),
            ("tests/sphinx/test_a.py", "from proj import real\n"),
            ("docs/conf.py", "from sphinx import addnodes\nfrom proj import gone\n"),
        ],
    );
    run_ok(&["index", "-q"], t.path());
    assert!(broken_confidences(t.path(), "addnodes").is_empty());
    let q = "Resolves(\"docs/conf.py\", 1, \"tests/sphinx/__init__.py\", c)";
    assert_eq!(
        json(&run_ok(&["query", "-q", q, "--format", "json"], t.path()))["rows"],
        serde_json::json!([["heuristic"]])
    );
    assert_eq!(broken_confidences(t.path(), "gone"), ["exact"]);
}

/// A package indexed from a directory of another name (a copy, a checkout under any name) is
/// named by its own absolute imports, so they resolve into it and a subclass's override is seen.
#[test]
fn a_package_copied_under_another_name_is_named_by_its_own_imports() {
    for dir in ["copy-7", "other"] {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join(dir);
        write_files(
            &root,
            &[
                ("__init__.py", ""),
                ("db/__init__.py", ""),
                ("db/base.py", "class Base:\n    def run(self):\n        raise NotImplementedError\n"),
                (
                    "core/__init__.py",
                    "from myproj.db.base import Base\nfrom myproj.db import base\nimport myproj.core.x\n\nclass Impl(Base):\n    def run(self):\n        return 1\n",
                ),
                ("core/x.py", "y = 1\n"),
            ],
        );
        run_ok(&["index", "-q"], &root);
        let out = run_ok(&["query", "-q", "Module(\"db/base.py\", m)", "--format", "json"], &root);
        assert_eq!(json(&out)["rows"], serde_json::json!([["myproj.db.base"]]), "{dir}");
        let out = run_ok(&["query", "-q", "Overridden(p, c, n)", "--format", "json"], &root);
        assert_eq!(json(&out)["rows"], serde_json::json!([["db/base.py", "Base", "run"]]), "{dir}");
    }
    // with no imports of its own that say otherwise, the directory's name stays the package's
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("plain");
    write_files(&root, &[("__init__.py", ""), ("a.py", "import os\n")]);
    run_ok(&["index", "-q"], &root);
    let out = run_ok(&["query", "-q", "Module(\"a.py\", m)", "--format", "json"], &root);
    assert_eq!(json(&out)["rows"], serde_json::json!([["plain.a"]]));
}
