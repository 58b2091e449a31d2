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
/// `sphinx` may mean either, so a name missing there is no exact contradiction. An import of
/// the project's own package from the same place still is.
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
    assert_eq!(broken_confidences(t.path(), "addnodes"), ["heuristic"]);
    assert_eq!(broken_confidences(t.path(), "gone"), ["exact"]);
}
