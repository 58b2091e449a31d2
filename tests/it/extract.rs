//! What `andon facts` extracts from each fixture repository: a full snapshot per fixture
//! (`tests/fixtures/<name>/facts.expected`, rewritten with `UPDATE_EXPECT=1`), determinism across
//! thread counts, and targeted assertions on the facts each fixture exists to exercise.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{facts, fixtures, json, run, run_ok, scratch};

// ---- helpers -----------------------------------------------------------------------------------

/// Every repository fixture directory under `tests/fixtures/`, sorted.
pub(crate) fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(fixtures())
        .expect("tests/fixtures is readable")
        .map(|e| e.expect("fixture entry"))
        .filter(|e| e.file_type().expect("file type").is_dir())
        .map(|e| e.file_name().into_string().expect("UTF-8 fixture name"))
        // Data fixtures, not repositories: the ingest briefs (`src/ingest` tests load them).
        .filter(|n| !matches!(n.as_str(), "briefs" | "panel" | "evidence-input" | "evidence-output"))
        .collect();
    names.sort();
    names
}

/// `andon facts --quiet [extra…]` in `dir`: the text listing, which must succeed.
pub(crate) fn facts_text(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["facts", "--quiet"];
    args.extend_from_slice(extra);
    let out = run_ok(&args, dir);
    String::from_utf8(out.stdout).expect("facts text is UTF-8")
}

/// A short line diff: lines only in `expected`, then lines only in `actual` (as multisets).
pub(crate) fn line_diff(expected: &str, actual: &str) -> String {
    let count = |s: &str| {
        let mut m = std::collections::BTreeMap::<String, i64>::new();
        for l in s.lines() {
            *m.entry(l.to_string()).or_default() += 1;
        }
        m
    };
    let (e, a) = (count(expected), count(actual));
    let mut out = String::new();
    let mut n = 0;
    for (l, k) in &e {
        for _ in 0..(k - a.get(l).copied().unwrap_or(0)).max(0) {
            if n < 60 {
                out.push_str(&format!("- {l}\n"));
            }
            n += 1;
        }
    }
    for (l, k) in &a {
        for _ in 0..(k - e.get(l).copied().unwrap_or(0)).max(0) {
            if n < 60 {
                out.push_str(&format!("+ {l}\n"));
            }
            n += 1;
        }
    }
    if n > 60 {
        out.push_str(&format!("… {} more differing lines\n", n - 60));
    }
    if out.is_empty() && expected != actual {
        out.push_str("(same lines, different order or line endings)\n");
    }
    out
}

/// Checks the shape of a facts listing: one `Relation(…)` per line, no duplicates, each relation in
/// one block, and a final verdict line whose count is the number of facts.
fn check_listing_shape(name: &str, text: &str) -> Result<(), String> {
    let lines: Vec<&str> = text.lines().collect();
    let (last, facts) = lines.split_last().ok_or(format!("{name}: empty listing"))?;
    let want = format!("andon: verdict listed ({} facts)", facts.len());
    if *last != want {
        return Err(format!("{name}: last line is {last:?}, expected {want:?}"));
    }
    let mut seen = BTreeSet::new();
    let mut finished: BTreeSet<&str> = BTreeSet::new();
    let mut current = "";
    for l in facts {
        let rel = l.split('(').next().unwrap_or("");
        if rel.is_empty() || !rel.chars().all(|c| c.is_ascii_alphanumeric()) || !l.ends_with(')') {
            return Err(format!("{name}: not a fact line: {l:?}"));
        }
        if !seen.insert(*l) {
            return Err(format!("{name}: duplicate fact {l}"));
        }
        if rel != current {
            if finished.contains(rel) {
                return Err(format!("{name}: relation {rel} is listed in two blocks"));
            }
            if !current.is_empty() {
                finished.insert(current);
            }
            current = rel;
        }
    }
    if text.contains("facts.expected") {
        return Err(format!("{name}: the snapshot file itself was indexed"));
    }
    Ok(())
}

fn update_expect() -> bool {
    std::env::var("UPDATE_EXPECT").is_ok_and(|v| v == "1")
}

/// Indexes a scratch copy of fixture `name` and compares its facts with `facts.expected`
/// (or rewrites it under `UPDATE_EXPECT=1`). Returns a description of the mismatch.
fn snapshot_mismatch(name: &str) -> Option<String> {
    let t = scratch(name);
    let actual = facts_text(t.path(), &[]);
    if let Err(e) = check_listing_shape(name, &actual) {
        return Some(e);
    }
    let expected_path = fixtures().join(name).join("facts.expected");
    if update_expect() {
        fs::write(&expected_path, &actual).expect("write facts.expected");
        return None;
    }
    let expected = match fs::read_to_string(&expected_path) {
        Ok(s) => s,
        Err(e) => {
            return Some(format!(
                "{name}: cannot read {} ({e}); run with UPDATE_EXPECT=1 and review the result",
                expected_path.display()
            ));
        }
    };
    if expected == actual {
        None
    } else {
        Some(format!(
            "{name}: facts differ from tests/fixtures/{name}/facts.expected \
             (- expected, + actual; UPDATE_EXPECT=1 rewrites it):\n{}",
            line_diff(&expected, &actual)
        ))
    }
}

#[track_caller]
fn assert_snapshot(name: &str) {
    if let Some(m) = snapshot_mismatch(name) {
        panic!("{m}");
    }
}

/// Rows of `rows` that agree with every key of the object `pattern`.
fn matching<'a>(rows: &'a [Value], pattern: &Value) -> Vec<&'a Value> {
    let pat = pattern.as_object().expect("pattern is an object");
    rows.iter().filter(|r| pat.iter().all(|(k, v)| r.get(k) == Some(v))).collect()
}

/// The rows that share `pattern`'s path (for failure messages).
fn context(rows: &[Value], pattern: &Value) -> String {
    let near: Vec<String> = match pattern.get("path") {
        Some(p) => rows.iter().filter(|r| r.get("path") == Some(p)).map(|r| r.to_string()).collect(),
        None => rows.iter().map(|r| r.to_string()).collect(),
    };
    near.join("\n  ")
}

#[track_caller]
fn assert_has(rows: &[Value], pattern: Value) {
    assert!(
        !matching(rows, &pattern).is_empty(),
        "no fact matches {pattern}; facts of that file:\n  {}",
        context(rows, &pattern)
    );
}

#[track_caller]
fn assert_lacks(rows: &[Value], pattern: Value) {
    let hits = matching(rows, &pattern);
    assert!(hits.is_empty(), "unexpected fact(s) matching {pattern}: {hits:?}");
}

/// The kinds recorded for the import of `spec` at `path`:`line`.
fn kinds(imports: &[Value], path: &str, line: u64, spec: &str) -> BTreeSet<String> {
    matching(imports, &json!({"path": path, "line": line, "spec": spec}))
        .iter()
        .map(|r| r["kind"].as_str().unwrap().to_string())
        .collect()
}

#[track_caller]
fn assert_kind(imports: &[Value], path: &str, line: u64, spec: &str, kind: &str) {
    let k = kinds(imports, path, line, spec);
    assert!(k.contains(kind), "import of {spec} at {path}:{line} should have kind {kind}, has {k:?}");
}

/// A scratch copy of a fixture, indexed once.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new(fixture: &str) -> Repo {
        let dir = scratch(fixture);
        let out = run(&["index", "--quiet"], dir.path());
        assert!(out.status.success(), "index of {fixture} failed: {}", String::from_utf8_lossy(&out.stderr));
        Repo { dir }
    }

    fn rel(&self, relation: &str) -> Vec<Value> {
        facts(self.dir.path(), relation)
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

// ---- snapshots ---------------------------------------------------------------------------------

#[test]
fn every_fixture_matches_its_facts_snapshot() {
    let names = fixture_names();
    assert!(names.len() >= 4, "fixtures not found under {}: {names:?}", fixtures().display());
    let failures: Vec<String> = names.iter().filter_map(|n| snapshot_mismatch(n)).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn snapshot_py_src_layout() {
    assert_snapshot("py-src-layout");
}

#[test]
fn snapshot_rs_workspace() {
    assert_snapshot("rs-workspace");
}

#[test]
fn snapshot_ts_workspace() {
    assert_snapshot("ts-workspace");
}

#[test]
fn snapshot_broken() {
    assert_snapshot("broken");
}

#[test]
fn facts_do_not_depend_on_the_thread_count() {
    let mut failures = Vec::new();
    for name in fixture_names() {
        let t = scratch(name.as_str());
        let mut listings: Vec<(String, String, Value)> = Vec::new();
        for threads in ["1", "4", "1", "8"] {
            let out = run(&["index", "--rebuild", "-j", threads, "--format", "json", "--quiet"], t.path());
            assert!(
                out.status.success(),
                "{name}: index -j {threads} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v = json(&out);
            let summary = json!({
                "files": v["files"]["total"], "by_language": v["files"]["by_language"],
                "manifests": v["files"]["manifests"], "skipped": v["files"]["skipped"],
                "facts": v["facts"], "stages": v["stages"], "parse_errors": v["parse_errors"],
                "files_with_parse_errors": v["files_with_parse_errors"],
            });
            let text = facts_text(t.path(), &["-j", threads]);
            listings.push((threads.to_string(), text, summary));
        }
        let (t0, first, s0) = &listings[0];
        for (tn, text, s) in &listings[1..] {
            if text != first {
                failures.push(format!("{name}: facts with -j {tn} differ from -j {t0}:\n{}", line_diff(first, text)));
            }
            if s != s0 {
                failures.push(format!("{name}: index summary with -j {tn} is {s}, with -j {t0} {s0}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn facts_do_not_depend_on_where_the_repository_lives() {
    for name in fixture_names() {
        let a = scratch(name.as_str());
        let b = tempfile::tempdir().unwrap();
        let nested = b.path().join("some where").join("deeper");
        crate::support::copy_dir(&fixtures().join(&name), &nested);
        let here = facts_text(a.path(), &[]);
        // facts of a repository addressed by a path argument, from another working directory
        let there = facts_text(b.path(), &[nested.to_str().unwrap()]);
        assert_eq!(here, there, "{name}:\n{}", line_diff(&here, &there));
    }
}

// ---- py-src-layout -----------------------------------------------------------------------------

#[test]
fn py_src_layout_has_one_stage_per_top_level_package() {
    let r = Repo::new("py-src-layout");
    let stages = r.rel("Stage");
    assert_has(&stages, json!({"stage": "acme_core", "root": "src/acme_core"}));
    assert_has(&stages, json!({"stage": "acme_api", "root": "src/acme_api"}));
    let manifests = r.rel("StageManifest");
    for s in ["acme_core", "acme_api"] {
        assert_has(&manifests, json!({"stage": s, "manifest": "pyproject.toml"}));
    }
    let info = r.rel("StageInfo");
    for s in ["acme_core", "acme_api"] {
        assert_has(&info, json!({"stage": s, "ecosystem": "python", "confidence": "heuristic"}));
    }
    let in_stage = r.rel("InStage");
    for (p, s) in [
        ("src/acme_api/__init__.py", "acme_api"),
        ("src/acme_api/helpers.py", "acme_api"),
        ("src/acme_api/views.py", "acme_api"),
        ("src/acme_core/__init__.py", "acme_core"),
        ("src/acme_core/models.py", "acme_core"),
    ] {
        assert_has(&in_stage, json!({"path": p, "stage": s}));
    }
    // every source file is in exactly one stage, but a test file of the test-only `tests/`, in none
    for f in r.rel("File") {
        let n = matching(&in_stage, &json!({"path": f["path"]})).len();
        let want = usize::from(f["path"] != "tests/test_views.py");
        assert_eq!(n, want, "{} is in {n} stages", f["path"]);
    }
    assert!(!r.rel("Stage").iter().any(|s| s["stage"] == "tests"), "a test-only directory is no stage");
    assert_has(&r.rel("SourceRoot"), json!({"root": "src"}));
    let modules = r.rel("Module");
    assert_has(&modules, json!({"path": "src/acme_api/views.py", "module": "acme_api.views"}));
    assert_has(&modules, json!({"path": "src/acme_core/__init__.py", "module": "acme_core"}));
    assert_has(&modules, json!({"path": "src/acme_core/models.py", "module": "acme_core.models"}));
    let m = r.rel("Manifest");
    assert_has(&m, json!({"path": "pyproject.toml", "ecosystem": "python", "name": "acme"}));
    let deps = r.rel("DeclaresDependency");
    assert_has(&deps, json!({"path": "pyproject.toml", "dependency": "requests", "kind": "normal"}));
    assert_has(&deps, json!({"path": "pyproject.toml", "dependency": "PyYAML", "kind": "normal"}));
    assert_has(&deps, json!({"path": "pyproject.toml", "dependency": "pytest"}));
}

#[test]
fn py_src_layout_import_kinds() {
    let r = Repo::new("py-src-layout");
    let views = "src/acme_api/views.py";
    let imports = r.rel("Import");
    assert_kind(&imports, views, 14, "acme_core.models", "type_checking");
    assert_kind(&imports, views, 16, "acme_core.models", "dynamic");
    assert_kind(&imports, views, 17, "<dynamic>", "dynamic");
    assert_kind(&imports, views, 10, ".helpers", "wildcard");
    assert_kind(&imports, "tests/test_views.py", 1, "acme_api.views", "test");
    // plain imports carry no qualifier
    for (line, spec) in [(1, "os.path"), (5, "requests"), (7, "acme_core"), (8, "acme_core.models")] {
        let k = kinds(&imports, views, line, spec);
        assert_eq!(k, BTreeSet::from(["static".to_string()]), "{spec} at line {line}");
    }
    // a runtime import is not a TYPE_CHECKING one, and vice versa
    assert!(!kinds(&imports, views, 14, "acme_core.models").contains("dynamic"));
    let names = r.rel("ImportedName");
    assert_has(
        &names,
        json!({"path": views, "line": 14, "spec": "acme_core.models", "name": "Order", "alias": "TypedOrder"}),
    );
    assert_has(&names, json!({"path": views, "line": 9, "spec": ".", "name": "helpers", "alias": "helpers"}));
}

#[test]
fn py_src_layout_resolution() {
    let r = Repo::new("py-src-layout");
    let views = "src/acme_api/views.py";
    let resolves = r.rel("Resolves");
    for (path, line, target) in [
        (views, 7, "src/acme_core/__init__.py"),
        (views, 8, "src/acme_core/models.py"),
        (views, 9, "src/acme_api/helpers.py"),
        (views, 10, "src/acme_api/helpers.py"),
        (views, 14, "src/acme_core/models.py"),
        (views, 16, "src/acme_core/models.py"),
        ("src/acme_core/__init__.py", 2, "src/acme_core/models.py"),
        ("tests/test_views.py", 1, "src/acme_api/views.py"),
    ] {
        assert_has(&resolves, json!({"path": path, "line": line, "target": target, "confidence": "exact"}));
    }
    let res = r.rel("ImportResolution");
    assert_has(&res, json!({"path": views, "line": 11, "spec": "..outside", "confidence": "unresolved"}));
    assert_has(&res, json!({"path": views, "line": 17, "spec": "<dynamic>", "confidence": "unresolved"}));
    assert_has(
        &res,
        json!({"path": "src/acme_api/helpers.py", "line": 1, "spec": "numpy", "confidence": "unresolved"}),
    );
    let unresolved = r.rel("Unresolved");
    for (path, line, spec) in
        [(views, 11, "..outside"), (views, 17, "<dynamic>"), ("src/acme_api/helpers.py", 1, "numpy")]
    {
        assert_has(&unresolved, json!({"path": path, "line": line, "spec": spec}));
    }
    // every import has exactly one resolution
    let imports = r.rel("Import");
    let keys: BTreeSet<(String, u64, String)> = imports
        .iter()
        .map(|i| (i["path"].as_str().unwrap().into(), i["line"].as_u64().unwrap(), i["spec"].as_str().unwrap().into()))
        .collect();
    for (p, l, s) in &keys {
        let n = matching(&res, &json!({"path": p, "line": l, "spec": s})).len();
        assert_eq!(n, 1, "{p}:{l} {s} has {n} resolutions");
    }
    let ext = r.rel("ResolvesExternal");
    assert_has(&ext, json!({"path": views, "line": 5, "package": "requests"}));
    assert_has(&ext, json!({"path": views, "line": 6})); // `yaml` from the declared PyYAML
    assert_has(&ext, json!({"path": views, "line": 1, "package": "os"}));
    assert_lacks(&ext, json!({"path": "src/acme_api/helpers.py", "line": 1}));
    // the names of `from acme_core.models import refund, vanished`: only `vanished` is missing
    let missing = r.rel("MissingName");
    assert_eq!(
        missing,
        vec![
            json!({"relation": "MissingName", "path": views, "line": 8, "name": "vanished", "target": "src/acme_core/models.py"})
        ],
        "Order and total come through acme_core/__init__.py, refund is defined"
    );
}

#[test]
fn py_src_layout_markers_tests_and_suspected_injection() {
    let r = Repo::new("py-src-layout");
    let views = "src/acme_api/views.py";
    let inj = r.rel("SuspectedInjection");
    let hits = matching(&inj, &json!({"path": views, "line": 22}));
    assert_eq!(hits.len(), 1, "{inj:?}");
    assert!(hits[0]["text"].as_str().unwrap().contains("andon: this wire is proven"));
    assert_eq!(inj.len(), 1, "only the comment that addresses the tool: {inj:?}");
    let markers = r.rel("Marker");
    assert_has(&markers, json!({"path": views, "line": 21, "kind": "TODO"}));
    assert_has(&markers, json!({"path": "src/acme_api/helpers.py", "line": 5, "kind": "FIXME"}));
    assert_has(&markers, json!({"path": "src/acme_core/models.py", "line": 14, "kind": "NotImplementedError"}));
    let stubs = r.rel("StubBody");
    assert_has(
        &stubs,
        json!({"path": "src/acme_core/models.py", "name": "refund", "line": 13, "kind": "not-implemented"}),
    );
    assert_has(&stubs, json!({"path": views, "name": "later", "line": 26, "kind": "ellipsis"}));
    assert_lacks(&stubs, json!({"name": "total"}));
    let test_files: Vec<Value> = r.rel("TestFile").into_iter().map(|f| f["path"].clone()).collect();
    assert_eq!(test_files, vec![json!("tests/test_views.py")]);
    let tests = r.rel("TestDef");
    assert_has(&tests, json!({"path": "tests/test_views.py", "name": "test_render", "line": 4}));
    assert_eq!(tests.len(), 1, "{tests:?}");
    let defs = r.rel("Defines");
    assert_has(&defs, json!({"path": "src/acme_core/models.py", "name": "Order", "kind": "class", "line": 5}));
    assert_has(&defs, json!({"path": views, "name": "render", "kind": "function", "line": 20}));
    let exports = r.rel("Exports");
    assert_has(&exports, json!({"path": "src/acme_core/__init__.py", "name": "Order"}));
    assert_has(&exports, json!({"path": "src/acme_core/__init__.py", "name": "total"}));
    assert_lacks(&exports, json!({"path": "src/acme_core/models.py", "name": "_private_helper"}));
}

// ---- rs-workspace ------------------------------------------------------------------------------

#[test]
fn rs_workspace_stages_and_manifests() {
    let r = Repo::new("rs-workspace");
    let stages = r.rel("Stage");
    assert_has(&stages, json!({"stage": "acme-core", "root": "crates/core"}));
    assert_has(&stages, json!({"stage": "acme-app", "root": "crates/app"}));
    assert_eq!(stages.len(), 2, "{stages:?}");
    let sm = r.rel("StageManifest");
    assert_has(&sm, json!({"stage": "acme-core", "manifest": "crates/core/Cargo.toml"}));
    assert_has(&sm, json!({"stage": "acme-app", "manifest": "crates/app/Cargo.toml"}));
    let in_stage = r.rel("InStage");
    for (p, s) in [
        ("crates/app/src/main.rs", "acme-app"),
        ("crates/app/src/util.rs", "acme-app"),
        ("crates/core/src/lib.rs", "acme-core"),
        ("crates/core/src/a.rs", "acme-core"),
        ("crates/core/src/b/mod.rs", "acme-core"),
    ] {
        assert_has(&in_stage, json!({"path": p, "stage": s}));
    }
    let modules = r.rel("Module");
    assert_has(&modules, json!({"path": "crates/core/src/lib.rs", "module": "crate"}));
    assert_has(&modules, json!({"path": "crates/core/src/b/mod.rs", "module": "crate::b"}));
    assert_has(&modules, json!({"path": "crates/app/src/util.rs", "module": "crate::util"}));
    let names = r.rel("ImportName");
    assert_has(&names, json!({"path": "crates/core/Cargo.toml", "name": "acme-core", "import_name": "acme_core"}));
    let dp = r.rel("DependencyPath");
    assert_has(&dp, json!({"path": "crates/app/Cargo.toml", "dependency": "acme-core", "target": "crates/core"}));
    assert_has(&r.rel("WorkspaceMember"), json!({"path": "Cargo.toml", "member": "crates/*"}));
}

#[test]
fn rs_workspace_manifest_entries_are_the_targets_a_manifest_names() {
    // Cargo's implicit targets (src/lib.rs, src/main.rs, build.rs) are not named by the manifests,
    // and crates/app has no lib.rs, crates/core no main.rs, neither a build script: no entry may
    // point at a file that is not there.
    let r = Repo::new("rs-workspace");
    let entries = r.rel("ManifestEntry");
    let missing: Vec<&Value> =
        entries.iter().filter(|e| !r.path().join(e["entry"].as_str().unwrap()).is_file()).collect();
    assert!(missing.is_empty(), "ManifestEntry facts for files that do not exist: {missing:?}");
    // targets a manifest does name are entries, relative to the repository
    fs::write(
        r.path().join("crates/app/Cargo.toml"),
        "[package]\nname = \"acme-app\"\nbuild = \"gen.rs\"\n\n[lib]\npath = \"src/util.rs\"\n\n\
         [[bin]]\nname = \"app\"\npath = \"src/main.rs\"\n\n[dependencies]\nacme-core = { path = \"../core\" }\n",
    )
    .unwrap();
    let entries = r.rel("ManifestEntry");
    for (kind, entry) in
        [("lib", "crates/app/src/util.rs"), ("bin", "crates/app/src/main.rs"), ("build", "crates/app/gen.rs")]
    {
        assert_has(&entries, json!({"path": "crates/app/Cargo.toml", "kind": kind, "entry": entry}));
    }
    assert_lacks(&entries, json!({"path": "crates/core/Cargo.toml"}));
}

#[test]
fn rs_workspace_imports_and_resolution() {
    let r = Repo::new("rs-workspace");
    let main = "crates/app/src/main.rs";
    let imports = r.rel("Import");
    assert_kind(&imports, "crates/core/src/lib.rs", 5, "b::helper", "re_export");
    assert_kind(&imports, "crates/core/src/lib.rs", 6, "crate::a::Thing", "re_export");
    assert_kind(&imports, main, 18, "acme_core::later", "test");
    assert_kind(&imports, main, 17, "super", "test");
    assert_kind(&imports, main, 17, "super", "wildcard");
    assert_kind(&imports, main, 6, "self::util", "wildcard");
    for (line, spec) in [(1, "acme_core::parse"), (2, "acme_core::a::Thing"), (5, "rand::Rng")] {
        let k = kinds(&imports, main, line, spec);
        assert!(!k.contains("test") && !k.contains("re_export"), "{spec}: {k:?}");
        assert!(!k.is_empty(), "{spec} not imported");
    }
    let within = r.rel("ImportWithin");
    assert_has(&within, json!({"path": main, "line": 17, "within": "tests"}));
    assert_has(&within, json!({"path": main, "line": 18, "within": "tests"}));
    assert_lacks(&within, json!({"path": main, "line": 1}));

    let resolves = r.rel("Resolves");
    for (path, line, target) in [
        (main, 1, "crates/core/src/lib.rs"),
        (main, 2, "crates/core/src/a.rs"),
        (main, 6, "crates/app/src/util.rs"),
        (main, 17, "crates/app/src/main.rs"),
        (main, 18, "crates/core/src/lib.rs"),
        ("crates/core/src/a.rs", 2, "crates/core/src/b/mod.rs"),
        ("crates/core/src/lib.rs", 5, "crates/core/src/b/mod.rs"),
        ("crates/core/src/lib.rs", 6, "crates/core/src/a.rs"),
    ] {
        assert_has(&resolves, json!({"path": path, "line": line, "target": target, "confidence": "exact"}));
    }
    // `use super::b::{self, helper as h};`
    let res = r.rel("ImportResolution");
    assert_has(&res, json!({"path": "crates/core/src/a.rs", "line": 2, "spec": "super::b", "confidence": "exact"}));
    assert_has(
        &res,
        json!({"path": "crates/core/src/a.rs", "line": 2, "spec": "super::b::helper", "confidence": "exact"}),
    );
    let names = r.rel("ImportedName");
    assert_has(
        &names,
        json!({"path": "crates/core/src/a.rs", "line": 2, "spec": "super::b::helper", "name": "helper", "alias": "h"}),
    );
    assert_has(&names, json!({"path": "crates/core/src/lib.rs", "line": 6, "name": "Thing", "alias": "Renamed"}));
    // rand is not declared anywhere; serde is (through the workspace); std is the standard library
    assert_has(&res, json!({"path": main, "line": 5, "spec": "rand::Rng", "confidence": "unresolved"}));
    assert_has(&r.rel("Unresolved"), json!({"path": main, "line": 5, "spec": "rand::Rng"}));
    let ext = r.rel("ResolvesExternal");
    assert_lacks(&ext, json!({"path": main, "line": 5}));
    assert_lacks(&resolves, json!({"path": main, "line": 5}));
    assert_has(&ext, json!({"path": "crates/core/src/a.rs", "line": 1, "package": "serde", "confidence": "exact"}));
    assert_has(&ext, json!({"path": main, "line": 4, "package": "std"}));
    // `acme_core::missing_item` names nothing in crates/core/src/lib.rs (which has no glob imports)
    let missing = r.rel("MissingName");
    assert_eq!(
        missing,
        vec![
            json!({"relation": "MissingName", "path": main, "line": 3, "name": "missing_item", "target": "crates/core/src/lib.rs"})
        ]
    );
}

#[test]
fn rs_workspace_definitions_markers_and_tests() {
    let r = Repo::new("rs-workspace");
    let markers = r.rel("Marker");
    assert_has(&markers, json!({"path": "crates/core/src/lib.rs", "line": 13, "kind": "todo!"}));
    assert_has(&markers, json!({"path": "crates/core/src/b/mod.rs", "line": 9, "kind": "unimplemented!"}));
    assert_has(&markers, json!({"path": "crates/core/src/b/mod.rs", "line": 8, "kind": "XXX"}));
    assert_has(&markers, json!({"path": "crates/app/src/util.rs", "line": 1, "kind": "FIXME"}));
    let stubs = r.rel("StubBody");
    assert_has(&stubs, json!({"path": "crates/core/src/lib.rs", "name": "later", "line": 12, "kind": "todo"}));
    assert_has(
        &stubs,
        json!({"path": "crates/core/src/b/mod.rs", "name": "helper", "line": 7, "kind": "unimplemented"}),
    );
    assert_lacks(&stubs, json!({"name": "parse"}));
    let tests = r.rel("TestDef");
    assert_eq!(
        tests,
        vec![json!({"relation": "TestDef", "path": "crates/app/src/main.rs", "name": "parses", "line": 21})]
    );
    let vis = r.rel("Visibility");
    assert_has(&vis, json!({"path": "crates/core/src/a.rs", "name": "internal", "visibility": "pub(crate)"}));
    assert_has(&vis, json!({"path": "crates/core/src/lib.rs", "name": "b", "visibility": "private"}));
    assert_has(&vis, json!({"path": "crates/core/src/lib.rs", "name": "parse", "visibility": "pub"}));
    let exports = r.rel("Exports");
    for n in ["parse", "later", "a", "helper", "Renamed"] {
        assert_has(&exports, json!({"path": "crates/core/src/lib.rs", "name": n}));
    }
    assert_lacks(&exports, json!({"path": "crates/core/src/lib.rs", "name": "b"}));
    let mods = r.rel("ModDecl");
    assert_has(&mods, json!({"path": "crates/core/src/lib.rs", "line": 3, "name": "b", "within": ""}));
    assert_has(&mods, json!({"path": "crates/app/src/main.rs", "line": 8, "name": "util", "within": ""}));
}

// ---- ts-workspace ------------------------------------------------------------------------------

#[test]
fn ts_workspace_import_kinds() {
    let r = Repo::new("ts-workspace");
    let main = "packages/app/src/main.ts";
    let index = "packages/core/src/index.ts";
    let imports = r.rel("Import");
    assert_kind(&imports, main, 2, "@acme/core", "type_only");
    assert_kind(&imports, "packages/app/src/broken.ts", 1, "./lib/format", "type_only");
    assert_kind(&imports, main, 10, "./lib/format", "re_export");
    assert_kind(&imports, index, 1, "./model", "re_export");
    assert_kind(&imports, index, 1, "./model", "wildcard");
    assert_kind(&imports, index, 2, "./parse", "re_export");
    assert_kind(&imports, index, 3, "./model", "re_export");
    assert_kind(&imports, index, 3, "./model", "type_only");
    assert_kind(&imports, main, 12, "./lib/format", "dynamic");
    assert_kind(&imports, main, 14, "<dynamic>", "dynamic");
    assert_kind(&imports, "packages/app/test/main.test.ts", 1, "../src/main", "test");
    let k = kinds(&imports, main, 1, "@acme/core");
    assert!(!k.contains("type_only") && !k.contains("dynamic") && !k.is_empty(), "{k:?}");
    assert!(!kinds(&imports, index, 2, "./parse").contains("wildcard"));
    let names = r.rel("ImportedName");
    assert_has(&names, json!({"path": main, "line": 10, "spec": "./lib/format", "name": "fmt", "alias": "format"}));
    assert_has(&names, json!({"path": index, "line": 2, "spec": "./parse", "name": "parse", "alias": "parseInput"}));
    let exports = r.rel("Exports");
    assert_has(&exports, json!({"path": main, "name": "format"}));
    assert_has(&exports, json!({"path": index, "name": "parseInput"}));
}

#[test]
fn ts_workspace_export_star_puts_names_on_the_public_surface() {
    // packages/core/src/index.ts: `export * from "./model"` re-exports Model, schema and Shape
    // (not a default export); Exports is "defined there and visible, or re-exported".
    let r = Repo::new("ts-workspace");
    let index = "packages/core/src/index.ts";
    let mut surface: Vec<String> = matching(&r.rel("Exports"), &json!({"path": index}))
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    surface.sort();
    assert_eq!(surface, vec!["Model", "Shape", "parseInput", "schema"]);
}

#[test]
fn ts_workspace_resolution() {
    let r = Repo::new("ts-workspace");
    let main = "packages/app/src/main.ts";
    let resolves = r.rel("Resolves");
    for (path, line, target) in [
        // workspace package, through its package.json "main"
        (main, 1, "packages/core/src/index.ts"),
        (main, 2, "packages/core/src/index.ts"),
        // a directory import finds its index file
        (main, 6, "packages/app/src/lib/index.ts"),
        // tsconfig paths
        (main, 7, "packages/app/src/lib/format.ts"),
        (main, 10, "packages/app/src/lib/format.ts"),
        (main, 12, "packages/app/src/lib/format.ts"),
        // `.js` in the specifier names the `.ts` source
        (main, 13, "packages/app/src/lib/format.ts"),
        ("packages/app/src/view.jsx", 1, main),
        ("packages/app/test/main.test.ts", 1, main),
        ("packages/core/src/index.ts", 1, "packages/core/src/model.ts"),
        ("packages/core/src/index.ts", 2, "packages/core/src/parse.ts"),
    ] {
        assert_has(&resolves, json!({"path": path, "line": line, "target": target, "confidence": "exact"}));
    }
    let unresolved = r.rel("Unresolved");
    for (line, spec) in [(8, "./nope"), (9, "left-pad"), (14, "<dynamic>")] {
        assert_has(&unresolved, json!({"path": main, "line": line, "spec": spec}));
    }
    let ext = r.rel("ResolvesExternal");
    assert_has(&ext, json!({"path": main, "line": 5, "package": "react"}));
    assert_has(&ext, json!({"path": main, "line": 3, "package": "node:path"}));
    assert_has(&ext, json!({"path": "packages/core/src/model.ts", "line": 1, "package": "zod"}));
    assert_lacks(&ext, json!({"path": main, "line": 1}));
    // Model comes through `export *`, parseInput through `export { parse as parseInput }`,
    // Shape through `export type`; Ghost is exported by nothing in the chain
    let missing = r.rel("MissingName");
    assert_eq!(
        missing,
        vec![
            json!({"relation": "MissingName", "path": main, "line": 1, "name": "Ghost", "target": "packages/core/src/index.ts"})
        ]
    );
    let tp = r.rel("TsPath");
    assert_has(&tp, json!({"path": "tsconfig.json", "pattern": "@lib/*", "target": "packages/app/src/lib/*"}));
    let me = r.rel("ManifestEntry");
    assert_has(
        &me,
        json!({"path": "packages/core/package.json", "kind": "main", "entry": "packages/core/src/index.ts"}),
    );
}

#[test]
fn ts_workspace_stages_markers_and_tests() {
    let r = Repo::new("ts-workspace");
    let stages = r.rel("Stage");
    assert_has(&stages, json!({"stage": "@acme/core", "root": "packages/core"}));
    assert_has(&stages, json!({"stage": "@acme/app", "root": "packages/app"}));
    let in_stage = r.rel("InStage");
    // the package's own test directory is support, whose imports are the package's test evidence
    assert_has(&r.rel("InSupport"), json!({"path": "packages/app/test/main.test.ts", "dir": "packages/app/test"}));
    assert_has(&in_stage, json!({"path": "packages/core/src/parse.ts", "stage": "@acme/core"}));
    let files = r.rel("File");
    assert_has(&files, json!({"path": "packages/app/src/view.jsx", "lang": "javascript"}));
    assert_has(&files, json!({"path": "packages/app/src/main.ts", "lang": "typescript"}));
    let markers = r.rel("Marker");
    assert_has(&markers, json!({"path": "packages/core/src/model.ts", "line": 11, "kind": "not-implemented-throw"}));
    assert_has(&markers, json!({"path": "packages/app/src/main.ts", "line": 17, "kind": "TODO"}));
    assert_has(
        &r.rel("StubBody"),
        json!({"path": "packages/core/src/model.ts", "name": "area", "kind": "not-implemented"}),
    );
    let tests = r.rel("TestDef");
    assert_eq!(
        tests,
        vec![json!({"relation": "TestDef", "path": "packages/app/test/main.test.ts", "name": "runs", "line": 3})]
    );
    let tf: Vec<Value> = r.rel("TestFile").into_iter().map(|f| f["path"].clone()).collect();
    assert_eq!(tf, vec![json!("packages/app/test/main.test.ts")]);
    let vis = r.rel("Visibility");
    assert_has(&vis, json!({"path": "packages/core/src/parse.ts", "name": "unused", "visibility": "default"}));
    assert_has(&vis, json!({"path": "packages/core/src/model.ts", "name": "Model", "visibility": "exported"}));
    // the tsconfig is JSONC (comments, trailing commas): it parses
    assert!(r.rel("ManifestError").is_empty());
}

// ---- broken ------------------------------------------------------------------------------------

#[test]
fn broken_input_becomes_facts() {
    let t = scratch("broken");
    let out = run(&["index", "--format", "json", "--quiet"], t.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out);
    let r = Repo { dir: t };

    let skipped = r.rel("Skipped");
    assert_eq!(skipped, vec![json!({"relation": "Skipped", "path": "pkg/binary.py", "reason": "binary"})]);
    let files = r.rel("File");
    assert_lacks(&files, json!({"path": "pkg/binary.py"}));
    assert_has(&files, json!({"path": "pkg/empty.py", "lang": "python"}));
    assert_has(&files, json!({"path": "pkg/latin1.py", "lang": "python"}));

    let errors = r.rel("ParseError");
    assert_has(&errors, json!({"path": "pkg/syntax.py", "line": 1}));
    assert_has(&errors, json!({"path": "web/broken.ts", "line": 2}));
    // invalid UTF-8 is reported at the line of the first bad byte, and the file is still parsed
    assert_has(&errors, json!({"path": "pkg/latin1.py", "line": 1, "kind": "invalid-utf8"}));
    assert_eq!(matching(&errors, &json!({"path": "pkg/latin1.py"})).len(), 1, "{errors:?}");
    let imports = r.rel("Import");
    assert_has(&imports, json!({"path": "pkg/latin1.py", "line": 2, "spec": "os"}));
    assert_lacks(&imports, json!({"path": "pkg/empty.py"}));
    // imports after the syntax errors are found
    assert_has(&imports, json!({"path": "pkg/syntax.py", "line": 4, "spec": "json"}));
    assert_has(&imports, json!({"path": "pkg/syntax.py", "line": 6, "spec": "sys"}));
    assert_has(&imports, json!({"path": "web/broken.ts", "line": 3, "spec": "./format"}));
    assert_has(&r.rel("Resolves"), json!({"path": "web/broken.ts", "line": 1, "target": "web/util.ts"}));

    let merr = r.rel("ManifestError");
    assert_eq!(merr.len(), 1, "{merr:?}");
    assert_has(&merr, json!({"path": "package.json", "line": 3}));
    assert_has(&r.rel("Manifest"), json!({"path": "package.json", "ecosystem": "npm", "name": ""}));

    // the report agrees with the facts
    assert_eq!(v["files"]["skipped"], 1);
    assert_eq!(v["parse_errors"].as_u64().unwrap(), errors.len() as u64);
    let with_errors: BTreeSet<&str> = errors.iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(v["files_with_parse_errors"].as_u64().unwrap(), with_errors.len() as u64);
    let diags = v["diagnostics"].as_array().unwrap();
    let has_diag = |path: &str, kind: &str| diags.iter().any(|d| d["path"] == path && d["kind"] == kind);
    assert!(has_diag("pkg/binary.py", "binary"), "{diags:?}");
    assert!(has_diag("package.json", "manifest-error"), "{diags:?}");
    assert!(
        diags.iter().any(|d| d["path"] == "pkg/latin1.py" && d["kind"] == "invalid-utf8" && d["line"] == 1),
        "{diags:?}"
    );
}

#[test]
fn broken_from_import_binds_only_the_names_it_lists() {
    // pkg/syntax.py line 5 is `from os import (path,` (unclosed) and line 6 is `import sys`:
    // `sys` is a module imported on line 6, not a name imported from `os` on line 5. (Whether the
    // unclosed statement still records `path` is left open.)
    let r = Repo::new("broken");
    let names = r.rel("ImportedName");
    assert_lacks(&names, json!({"path": "pkg/syntax.py", "line": 5, "name": "sys"}));
    assert_lacks(&names, json!({"path": "pkg/syntax.py", "spec": "os", "name": "sys"}));
    assert_has(&r.rel("ImportRecovered"), json!({"path": "pkg/syntax.py", "line": 6, "spec": "sys"}));
}
