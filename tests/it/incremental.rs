//! The incremental index: after any change to the tree, `andon index` must leave exactly the facts
//! a fresh index of the same tree has, re-parsing only the files whose content changed; a corrupt
//! index is rebuilt, never trusted; concurrent runs serialise.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::extract::{facts_text, fixture_names, line_diff};
use crate::support::{andon, copy_dir, json, run, run_ok, scratch, write_files};

// ---- helpers -----------------------------------------------------------------------------------

/// `andon index --format json --quiet [extra…]`, which must succeed.
fn index(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["index", "--format", "json", "--quiet"];
    args.extend_from_slice(extra);
    let out = run_ok(&args, dir);
    json(&out)
}

/// The parts of an index report that describe the tree (not what this run did).
fn summary(v: &Value) -> Value {
    json!({
        "total": v["files"]["total"],
        "by_language": v["files"]["by_language"],
        "manifests": v["files"]["manifests"],
        "skipped": v["files"]["skipped"],
        "facts": v["facts"],
        "stages": v["stages"],
        "parse_errors": v["parse_errors"],
        "files_with_parse_errors": v["files_with_parse_errors"],
    })
}

/// Every file under `root` except the index directory, relative, sorted.
fn tree_files(root: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            if e.file_name() == ".andon" && dir == root {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                walk(root, &e.path(), out);
            } else {
                out.push(e.path().strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// A fresh index of the same tree: its report and its facts.
struct Fresh {
    report: Value,
    facts: String,
}

fn fresh(dir: &Path, extra: &[&str]) -> Fresh {
    let t = tempfile::tempdir().unwrap();
    copy_dir(dir, t.path());
    let _ = fs::remove_dir_all(t.path().join(".andon"));
    let mut args = vec!["--rebuild"];
    args.extend_from_slice(extra);
    let report = index(t.path(), &args);
    let facts = facts_text(t.path(), extra);
    Fresh { report, facts }
}

/// After an incremental run that reported `report`: the stored index is fresh, and its facts and
/// summary equal those of a fresh index of the same tree. Mismatches are appended to `failures`.
fn compare_with_fresh(dir: &Path, label: &str, report: &Value, extra: &[&str], failures: &mut Vec<String>) {
    let mut check = vec!["index", "--check", "--quiet"];
    check.extend_from_slice(extra);
    let c = run(&check, dir);
    if c.status.code() != Some(0) {
        failures.push(format!(
            "{label}: `index --check` right after an index run exits {:?}:\n{}",
            c.status.code(),
            String::from_utf8_lossy(&c.stdout)
        ));
    }
    let mut args = vec!["facts", "--quiet"];
    args.extend_from_slice(extra);
    let out = run(&args, dir);
    if !out.status.success() {
        failures.push(format!(
            "{label}: `andon facts` exits {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
        return;
    }
    let incremental = String::from_utf8(out.stdout).expect("facts text is UTF-8");
    let f = fresh(dir, extra);
    if incremental != f.facts {
        failures.push(format!(
            "{label}: facts after the incremental run differ from a fresh index (- fresh, + incremental):\n{}",
            line_diff(&f.facts, &incremental)
        ));
    }
    if summary(report) != summary(&f.report) {
        failures.push(format!(
            "{label}: summary of the incremental run\n  {}\ndiffers from a fresh index's\n  {}",
            summary(report),
            summary(&f.report)
        ));
    }
}

fn write(root: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

fn append(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    let mut bytes = fs::read(&p).unwrap_or_else(|e| panic!("{rel}: {e}"));
    bytes.extend_from_slice(text.as_bytes());
    fs::write(p, bytes).unwrap();
}

fn replace(root: &Path, rel: &str, from: &str, to: &str) {
    let p = root.join(rel);
    let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert!(text.contains(from), "{rel} does not contain {from:?}");
    fs::write(p, text.replacen(from, to, 1)).unwrap();
}

fn remove(root: &Path, rel: &str) {
    fs::remove_file(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
}

fn rename(root: &Path, from: &str, to: &str) {
    let t = root.join(to);
    fs::create_dir_all(t.parent().unwrap()).unwrap();
    fs::rename(root.join(from), t).unwrap_or_else(|e| panic!("{from} → {to}: {e}"));
}

/// Rewrites a file with its own content (a new modification time, the same bytes).
fn touch(root: &Path, rel: &str) {
    let p = root.join(rel);
    let bytes = fs::read(&p).unwrap();
    fs::write(&p, bytes).unwrap();
}

fn touch_all(root: &Path) {
    for f in tree_files(root) {
        touch(root, f.to_str().unwrap());
    }
}

/// One change to a tree and how many files the next incremental run must parse.
struct Step {
    name: &'static str,
    parsed: u64,
    apply: Box<dyn Fn(&Path)>,
}

fn step(name: &'static str, parsed: u64, apply: impl Fn(&Path) + 'static) -> Step {
    Step { name, parsed, apply: Box::new(apply) }
}

/// Indexes fixture `fixture`, then applies each step in turn; after each, an incremental run must
/// parse exactly `parsed` files and agree with a fresh index of the changed tree.
fn run_steps(fixture: &str, steps: Vec<Step>) {
    run_steps_in(&scratch(fixture), fixture, steps)
}

/// [`run_steps`] on the tree in `t`, its failures labelled `label`.
fn run_steps_in(t: &tempfile::TempDir, fixture: &str, steps: Vec<Step>) {
    let dir = t.path();
    let first = index(dir, &[]);
    let mut failures = Vec::new();
    compare_with_fresh(dir, &format!("{fixture}: first index"), &first, &[], &mut failures);
    let mut before = facts_text(dir, &[]);
    for s in steps {
        (s.apply)(dir);
        let label = format!("{fixture}: {}", s.name);
        let report = index(dir, &[]);
        if report["files"]["parsed"] != json!(s.parsed) {
            failures.push(format!(
                "{label}: the incremental run parsed {} files, expected {} (report files: {})",
                report["files"]["parsed"], s.parsed, report["files"]
            ));
        }
        compare_with_fresh(dir, &label, &report, &[], &mut failures);
        let after = facts_text(dir, &[]);
        // every step is meant to change facts, except rewriting files with their own content and
        // changes andon does not see
        if s.name.starts_with("touch") || s.name.starts_with("unseen") {
            if after != before {
                failures.push(format!("{label}: facts changed:\n{}", line_diff(&before, &after)));
            }
        } else if after == before {
            failures.push(format!("{label}: the change left every fact as it was (a no-op step?)"));
        }
        before = after;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---- change sequences, one per fixture ---------------------------------------------------------

/// 3,000 Python modules in three packages: a file table of many chunks.
fn many_modules() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for p in 0..3 {
        files.push((format!("pkg{p}/__init__.py"), String::new()));
        for m in 0..1000 {
            let other = (p + 1) % 3;
            files.push((
                format!("pkg{p}/mod{m}.py"),
                format!("from pkg{other} import mod{m}\n\n\ndef f{m}():\n    return mod{m}\n"),
            ));
        }
    }
    write_files(t.path(), &files);
    t
}

#[test]
fn a_table_of_many_chunks_changes_match_a_fresh_index() {
    let t = many_modules();
    index(t.path(), &[]);
    let table = fs::metadata(t.path().join(".andon/index.bin")).unwrap().len();
    let before = packs(t.path());
    append(t.path(), "pkg1/mod250.py", "# edited\n");
    index(t.path(), &[]);
    let after = packs(t.path());
    let new: Vec<_> = after.iter().filter(|p| !before.contains(p)).collect();
    assert_eq!(new.len(), 1, "one new pack: {after:?}");
    // the edited file's segments and one chunk (at most 512 entries), not the table of 3,000
    assert!(before[0].1 > 512 << 10 && new[0].1 < 64 << 10, "the new pack holds the change: {new:?} {before:?}");
    assert!(table < 8 << 10, "the head names chunks, not files: {table} bytes");
    run_steps_in(
        &t,
        "many modules",
        vec![
            step("edit a module in the middle", 1, |d| append(d, "pkg1/mod100.py", "\n\ndef g():\n    return 2\n")),
            step("add a module in the middle", 1, |d| write(d, "pkg1/mod1000.py", "import pkg2\n")),
            step("remove a module", 0, |d| remove(d, "pkg0/mod7.py")),
            step("rename a module", 1, |d| rename(d, "pkg2/mod3.py", "pkg2/renamed.py")),
            step("touch a module", 0, |d| touch(d, "pkg0/mod400.py")),
            step("unseen: a notes file", 0, |d| write(d, "pkg0/notes.txt", "notes\n")),
            step("add and remove in two chunks", 1, |d| {
                write(d, "pkg0/mod2000.py", "import pkg1\n");
                remove(d, "pkg2/mod999.py");
            }),
        ],
    );
}

#[test]
fn py_src_layout_changes_match_a_fresh_index() {
    run_steps(
        "py-src-layout",
        vec![
            step("touch every file", 0, touch_all),
            step("edit: define the missing name", 1, |d| {
                append(d, "src/acme_core/models.py", "\n\ndef vanished():\n    return None\n")
            }),
            // edits that give resolution the same inputs: the whole-repo facts stand, the summary
            // follows the file's parse errors
            step("edit: a comment only", 1, |d| append(d, "src/acme_core/models.py", "# a note\n")),
            step("edit: a body that does not parse", 1, |d| {
                append(d, "src/acme_core/models.py", "\n\ndef vanished():\n    return (None\n")
            }),
            step("edit: the body parses again", 1, |d| {
                replace(d, "src/acme_core/models.py", "    return (None\n", "    return None\n")
            }),
            step("edit the manifest", 1, |d| replace(d, "pyproject.toml", "\"PyYAML\"]", "\"PyYAML\", \"numpy\"]")),
            step("add a module", 1, |d| {
                write(
                    d,
                    "src/acme_core/extra.py",
                    "from .models import total, nowhere\n\n\ndef extra():\n    return total([])\n",
                )
            }),
            step("delete an imported module", 0, |d| remove(d, "src/acme_api/helpers.py")),
            step("rename an imported module", 1, |d| rename(d, "src/acme_core/models.py", "src/acme_core/orders.py")),
            step("touch one file", 0, |d| touch(d, "src/acme_api/views.py")),
            step("edit, add, delete, rename and touch at once", 3, |d| {
                append(d, "src/acme_api/views.py", "\nimport acme_core.orders\n");
                write(
                    d,
                    "tests/test_more.py",
                    "from acme_core.extra import extra\n\n\ndef test_more():\n    assert extra() == 0\n",
                );
                remove(d, "src/acme_core/__init__.py");
                rename(d, "tests/test_views.py", "tests/test_renamed.py");
                touch(d, "src/acme_api/__init__.py");
            }),
            step("restore a deleted module", 1, |d| {
                write(d, "src/acme_api/helpers.py", "import numpy\n\n\ndef fmt(x):\n    return str(x)\n")
            }),
            step("same-size edit", 1, |d| {
                // same length, different bytes
                replace(d, "src/acme_core/extra.py", "return total([])", "return total(())")
            }),
        ],
    );
}

#[test]
fn rs_workspace_changes_match_a_fresh_index() {
    run_steps(
        "rs-workspace",
        vec![
            step("touch every file", 0, touch_all),
            step("edit: define the missing item", 1, |d| {
                append(d, "crates/core/src/lib.rs", "\npub fn missing_item() {}\n")
            }),
            step("edit a manifest: declare rand", 1, |d| append(d, "crates/app/Cargo.toml", "rand = \"0.8\"\n")),
            step("add a module and declare it", 2, |d| {
                write(d, "crates/core/src/c.rs", "pub fn c() -> u8 {\n    0\n}\n");
                append(d, "crates/core/src/lib.rs", "pub mod c;\npub use c::c as see;\n");
            }),
            step("delete a module others import", 0, |d| remove(d, "crates/core/src/a.rs")),
            step("rename mod.rs to a file module", 1, |d| {
                rename(d, "crates/core/src/b/mod.rs", "crates/core/src/b.rs")
            }),
            step("edit, add, delete, rename and touch at once", 3, |d| {
                rename(d, "crates/app/src/util.rs", "crates/app/src/helpers.rs");
                replace(d, "crates/app/src/main.rs", "use self::util::*;", "use self::helpers::*;");
                replace(d, "crates/app/src/main.rs", "mod util;", "mod helpers;");
                remove(d, "crates/core/src/c.rs");
                write(d, "crates/app/src/extra.rs", "use acme_core::parse;\nuse crate::helpers::noop;\n");
                touch(d, "crates/core/Cargo.toml");
            }),
            step("edit the workspace manifest", 1, |d| {
                append(d, "Cargo.toml", "rand = \"0.8\"\n");
            }),
        ],
    );
}

#[test]
fn ts_workspace_changes_match_a_fresh_index() {
    run_steps(
        "ts-workspace",
        vec![
            step("touch every file", 0, touch_all),
            step("edit: export the missing name", 1, |d| {
                append(d, "packages/core/src/index.ts", "export { Model as Ghost } from \"./model\";\n")
            }),
            step("add the file an import names", 1, |d| {
                write(d, "packages/app/src/nope.ts", "export const gone = 1;\n")
            }),
            step("delete a directory's index file", 0, |d| remove(d, "packages/app/src/lib/index.ts")),
            step("rename a module", 1, |d| {
                rename(d, "packages/app/src/lib/format.ts", "packages/app/src/lib/formatting.ts")
            }),
            step("edit tsconfig paths", 1, |d| {
                replace(d, "tsconfig.json", "packages/app/src/lib/*", "packages/core/src/*")
            }),
            step("edit a package's main entry", 1, |d| {
                replace(d, "packages/core/package.json", "src/index.ts", "src/model.ts")
            }),
            step("edit, add, delete, rename and touch at once", 3, |d| {
                rename(d, "packages/core/src/parse.ts", "packages/core/src/parsing.ts");
                replace(d, "packages/core/src/index.ts", "\"./parse\"", "\"./parsing\"");
                remove(d, "packages/app/src/view.jsx");
                write(
                    d,
                    "packages/app/test/more.test.ts",
                    "import { format } from \"../src/main\";\n\nit(\"formats\", () => format(1));\n",
                );
                touch(d, "packages/app/package.json");
            }),
        ],
    );
}

#[test]
fn broken_changes_match_a_fresh_index() {
    run_steps(
        "broken",
        vec![
            step("touch every file", 0, touch_all),
            step("fix the syntax errors", 1, |d| {
                write(d, "pkg/syntax.py", "def ok():\n    pass\n\nimport json\nfrom os import path\nimport sys\n")
            }),
            step("fix the manifest", 1, |d| write(d, "package.json", "{ \"name\": \"broken\" }\n")),
            step("turn a file binary", 1, |d| write(d, "pkg/empty.py", b"x = 1\0\0\n")),
            step("turn the binary file into text", 1, |d| write(d, "pkg/binary.py", "x = 1\n")),
            step("add a file with invalid UTF-8", 1, |d| {
                write(d, "pkg/more.py", b"import sys\n# \xff\xfe\nimport os\n")
            }),
            step("delete the latin-1 file", 0, |d| remove(d, "pkg/latin1.py")),
            step("rename a module", 1, |d| rename(d, "web/util.ts", "web/utils.ts")),
            step("break a manifest again, add and delete at once", 2, |d| {
                write(d, "package.json", "{ \"name\": \"broken\",\n  \"dependencies\": {\n");
                write(d, "web/util.ts", "export const util = 2;\n");
                remove(d, "pkg/empty.py");
            }),
        ],
    );
}

#[test]
fn walk_changes_match_a_fresh_index() {
    run_steps(
        "py-src-layout",
        vec![
            step("a .gitignore hides a module", 0, |d| write(d, ".gitignore", "src/acme_api/helpers.py\n")),
            step("the .gitignore no longer hides it", 1, |d| write(d, ".gitignore", "# nothing\n")),
            step("a nested .ignore hides a module", 0, |d| write(d, "src/acme_core/.ignore", "models.py\n")),
            step("add a file to an existing nested directory", 1, |d| {
                write(d, "src/acme_api/new.py", "from .views import render\n")
            }),
            step("add a file in new nested directories", 1, |d| {
                write(d, "src/acme_api/sub/deeper/leaf.py", "from ...views import render\n")
            }),
            step("andon.toml excludes the tests", 0, |d| write(d, "andon.toml", "[index]\nexclude = [\"tests/**\"]\n")),
            step("andon.toml excludes nothing", 1, |d| remove(d, "andon.toml")),
            step("unseen: a file in a hidden directory", 0, |d| write(d, ".hidden/x.py", "import os\n")),
            step("unseen: a file in a vendored directory", 0, |d| {
                write(d, "node_modules/dep/index.js", "module.exports = 1;\n")
            }),
            step("unseen: a file andon does not parse", 0, |d| write(d, "src/acme_api/notes.txt", "import os\n")),
            step("remove the nested .ignore", 1, |d| remove(d, "src/acme_core/.ignore")),
            step("delete a whole directory", 0, |d| fs::remove_dir_all(d.join("src/acme_api/sub")).unwrap()),
        ],
    );
}

// ---- targeted incremental cases ----------------------------------------------------------------

#[test]
fn rewriting_a_skipped_binary_file_with_the_same_bytes_parses_nothing() {
    let t = scratch("broken");
    index(t.path(), &[]);
    touch(t.path(), "pkg/binary.py");
    let v = index(t.path(), &[]);
    assert_eq!(v["files"]["parsed"], 0, "an unchanged binary file was handled again: {}", v["files"]);
    let again = index(t.path(), &[]);
    assert_eq!(again["unchanged"], true, "{}", again["files"]);
}

#[test]
fn rewriting_a_file_over_the_size_limit_with_the_same_bytes_changes_nothing() {
    let t = scratch("py-src-layout");
    let limit = ["--max-filesize", "300"]; // views.py (569 bytes) is over it
    let first = index(t.path(), &limit);
    assert_eq!(first["files"]["skipped"], 1, "{}", first["files"]);
    touch(t.path(), "src/acme_api/views.py");
    let v = index(t.path(), &limit);
    let mut failures = Vec::new();
    if v["files"]["parsed"] != 0 {
        failures.push(format!("parsed {} files after a touch", v["files"]["parsed"]));
    }
    compare_with_fresh(t.path(), "touch of a too-large file", &v, &limit, &mut failures);
    let again = index(t.path(), &limit);
    if again["unchanged"] != true || again["files"]["parsed"] != 0 {
        failures.push(format!("the run after that is not a no-op: {}", again["files"]));
    }
    if summary(&again) != summary(&first) {
        failures.push(format!("summary drifted: {} then {}", summary(&first), summary(&again)));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn changing_the_size_limit_re_decides_which_files_are_skipped() {
    let t = scratch("py-src-layout");
    let mut failures = Vec::new();
    let v = index(t.path(), &["--max-filesize", "300"]);
    compare_with_fresh(t.path(), "limit 300", &v, &["--max-filesize", "300"], &mut failures);
    let v = index(t.path(), &[]);
    if v["files"]["parsed"] != 1 {
        failures.push(format!("raising the limit should parse views.py only: {}", v["files"]));
    }
    compare_with_fresh(t.path(), "default limit", &v, &[], &mut failures);
    let v = index(t.path(), &["--max-filesize", "100"]);
    compare_with_fresh(t.path(), "limit 100", &v, &["--max-filesize", "100"], &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_file_replaced_by_a_directory_and_back() {
    let t = scratch("py-src-layout");
    let d = t.path();
    let mut failures = Vec::new();
    index(d, &[]);
    // helpers.py becomes a package helpers/__init__.py: same module name, different file
    let text = fs::read_to_string(d.join("src/acme_api/helpers.py")).unwrap();
    remove(d, "src/acme_api/helpers.py");
    write(d, "src/acme_api/helpers/__init__.py", &text);
    let v = index(d, &[]);
    if v["files"]["parsed"] != 1 {
        failures.push(format!("parsed {} files", v["files"]["parsed"]));
    }
    compare_with_fresh(d, "module → package", &v, &[], &mut failures);
    fs::remove_dir_all(d.join("src/acme_api/helpers")).unwrap();
    write(d, "src/acme_api/helpers.py", &text);
    let v = index(d, &[]);
    compare_with_fresh(d, "package → module", &v, &[], &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---- a corrupt index ---------------------------------------------------------------------------

type Corruption = fn(&mut Vec<u8>);

fn corruptions() -> Vec<(&'static str, Corruption)> {
    vec![
        ("truncated to half", |b| b.truncate(b.len() / 2)),
        ("a byte flipped in the middle", |b| {
            let mid = b.len() / 2;
            b[mid] ^= 0x5a;
        }),
        ("a byte flipped a quarter in", |b| {
            let at = b.len() / 4;
            b[at] ^= 0x01;
        }),
        ("a byte flipped three quarters in", |b| {
            let at = b.len() * 3 / 4;
            b[at] ^= 0x80;
        }),
        ("the second-to-last byte flipped", |b| {
            let at = b.len() - 2;
            b[at] ^= 0xff;
        }),
        ("the last byte dropped", |b| {
            b.pop();
        }),
        ("a byte appended", |b| b.push(0)),
        ("emptied", |b| b.clear()),
        ("garbage", |b| *b = b"this is not an andon index at all, not even close".to_vec()),
        ("a future format version", |b| b[8] = b[8].wrapping_add(7)),
        ("a byte flipped in the preamble after the version", |b| b[20] ^= 1),
    ]
}

#[test]
fn a_corrupt_index_is_detected_and_rebuilt() {
    let mut failures = Vec::new();
    for fixture in fixture_names() {
        for (what, corrupt) in corruptions() {
            let label = format!("{fixture}: index {what}");
            let t = scratch(fixture.as_str());
            let d = t.path();
            let first = index(d, &[]);
            let n_walked = first["files"]["parsed"].clone();
            let ipath = d.join(".andon/index.bin");
            let mut bytes = fs::read(&ipath).unwrap();
            assert!(bytes.len() > 64, "{label}: index is only {} bytes", bytes.len());
            corrupt(&mut bytes);
            fs::write(&ipath, &bytes).unwrap();

            let check = run(&["index", "--check", "--format", "json"], d);
            if check.status.code() != Some(3) {
                failures.push(format!(
                    "{label}: `index --check` exits {:?}, expected 3:\n{}",
                    check.status.code(),
                    String::from_utf8_lossy(&check.stdout)
                ));
            } else if json(&check)["fresh"] != false {
                failures.push(format!("{label}: --check says fresh"));
            }

            let v = index(d, &[]);
            match v["rebuilt"].as_str() {
                Some(why)
                    if why.contains("index.bin")
                        && [
                            "corrupt",
                            "truncated",
                            "checksum",
                            "magic",
                            "format",
                            "undecodable",
                            "not an andon index",
                        ]
                        .iter()
                        .any(|w| why.contains(w)) => {}
                other => failures.push(format!("{label}: `rebuilt` is {other:?}, expected the reason")),
            }
            if v["files"]["parsed"] != n_walked {
                failures.push(format!(
                    "{label}: the rebuild parsed {} files, the first index {}",
                    v["files"]["parsed"], n_walked
                ));
            }
            compare_with_fresh(d, &label, &v, &[], &mut failures);
            // and the run after the rebuild trusts the new index
            let again = index(d, &[]);
            if again["rebuilt"] != Value::Null || again["unchanged"] != true {
                failures.push(format!(
                    "{label}: the run after the rebuild: rebuilt {} unchanged {}",
                    again["rebuilt"], again["unchanged"]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn facts_on_a_corrupt_index_rebuild_it_first() {
    let t = scratch("ts-workspace");
    let d = t.path();
    index(d, &[]);
    let ipath = d.join(".andon/index.bin");
    let mut bytes = fs::read(&ipath).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    fs::write(&ipath, &bytes).unwrap();
    let out = facts_text(d, &[]);
    let f = fresh(d, &[]);
    assert_eq!(out, f.facts, "{}", line_diff(&f.facts, &out));
}

#[test]
fn a_leftover_temporary_index_file_is_harmless() {
    let t = scratch("py-src-layout");
    let d = t.path();
    index(d, &[]);
    fs::write(d.join(".andon/index.bin.tmp.999999"), b"half-written").unwrap();
    append(d, "src/acme_core/models.py", "\nX = 1\n");
    let v = index(d, &[]);
    let mut failures = Vec::new();
    if v["rebuilt"] != Value::Null || v["files"]["parsed"] != 1 {
        failures.push(format!("rebuilt {} parsed {}", v["rebuilt"], v["files"]["parsed"]));
    }
    compare_with_fresh(d, "leftover tmp", &v, &[], &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---- concurrent runs ---------------------------------------------------------------------------

fn spawn(args: &[&str], dir: &Path) -> std::process::Child {
    andon().args(args).current_dir(dir).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("andon starts")
}

#[test]
fn concurrent_index_runs_serialise_and_agree_with_a_fresh_index() {
    let mut failures = Vec::new();
    for fixture in fixture_names() {
        let t = scratch(fixture.as_str());
        let d = t.path();
        // how many files a run that has to look at everything parses
        let n_walked = fresh(d, &[]).report["files"]["parsed"].as_u64().unwrap();
        for round in 0..3 {
            let label = format!("{fixture}: round {round}");
            match round {
                0 => {}
                // give both runs something to do: every file changes
                1 => append_newline_everywhere(d),
                _ => fs::remove_dir_all(d.join(".andon")).unwrap(),
            }
            let args = ["index", "--format", "json", "--quiet"];
            let a = spawn(&args, d);
            let b = spawn(&args, d);
            let (oa, ob) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
            let mut parsed = 0;
            for (who, o) in [("first", &oa), ("second", &ob)] {
                if !o.status.success() {
                    failures.push(format!(
                        "{label}: the {who} run exits {:?}: {}",
                        o.status.code(),
                        String::from_utf8_lossy(&o.stderr)
                    ));
                    continue;
                }
                parsed += json(o)["files"]["parsed"].as_u64().unwrap();
            }
            // one run does the work; the other waits for the lock and finds it done
            if parsed != n_walked {
                failures.push(format!("{label}: the two runs parsed {parsed} files in all, expected {n_walked}"));
            }
            let v = index(d, &[]);
            if v["unchanged"] != true {
                failures.push(format!("{label}: a third run still had work: {}", v["files"]));
            }
            compare_with_fresh(d, &label, &v, &[], &mut failures);
        }
        // a reader and a writer at once
        append_newline_everywhere(d);
        let a = spawn(&["index", "--quiet"], d);
        let f = spawn(&["facts", "--quiet"], d);
        let (oa, of) = (a.wait_with_output().unwrap(), f.wait_with_output().unwrap());
        assert!(oa.status.success() && of.status.success(), "{fixture}: index + facts at once failed");
        let listed = String::from_utf8(of.stdout).unwrap();
        let fr = fresh(d, &[]);
        if listed != fr.facts {
            failures.push(format!(
                "{fixture}: facts run concurrently with index differ from a fresh index:\n{}",
                line_diff(&fr.facts, &listed)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn append_newline_everywhere(d: &Path) {
    for f in tree_files(d) {
        let p = d.join(&f);
        let mut b = fs::read(&p).unwrap();
        b.extend_from_slice(b"\n");
        fs::write(&p, b).unwrap();
    }
}

// ---- new names: resolved again only where an import asks for them --------------------------------

/// Appends to one file per step; each step says whether the whole-repo facts must be computed
/// again (an import names what changed) or kept, and the index must equal a fresh one either way.
fn surface_steps(files: &[(&str, &str)], steps: &[(&str, &str, &str, &str)]) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(d, files);
    assert_eq!(index(d, &[])["resolution"], "computed", "a first index resolves");
    let mut failures = Vec::new();
    for (what, file, text, expected) in steps {
        append(d, file, text);
        let v = index(d, &[]);
        if v["resolution"] != *expected {
            failures.push(format!("{what}: resolution {}, expected {expected}", v["resolution"]));
        }
        compare_with_fresh(d, what, &v, &[], &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_new_python_name_resolves_again_only_where_an_import_names_it() {
    surface_steps(
        &[
            ("pyproject.toml", "[project]\nname = \"pkg\"\n"),
            ("pkg/__init__.py", ""),
            ("pkg/a.py", "from pkg.b import helper\n"),
            ("pkg/b.py", "x = 1\n"),
            ("pkg/g.py", "from pkg.d import *\n"),
            ("pkg/d.py", "y = 1\n"),
        ],
        &[
            ("a comment", "pkg/a.py", "# later\n", "kept"),
            ("a function nobody imports", "pkg/b.py", "def unused():\n    pass\n", "kept"),
            ("the name a.py imports, missing until now", "pkg/b.py", "def helper():\n    pass\n", "computed"),
            ("a name for the module a star import reads whole", "pkg/d.py", "z = 2\n", "computed"),
            ("a private name of that module (not carried by the star)", "pkg/d.py", "_w = 3\n", "kept"),
            ("a class nobody imports", "pkg/b.py", "class Widget:\n    pass\n", "kept"),
        ],
    );
}

#[test]
fn a_new_typescript_export_resolves_again_only_where_an_import_names_it() {
    surface_steps(
        &[
            ("package.json", "{ \"name\": \"web\" }\n"),
            ("src/a.ts", "import { thing } from './b';\nexport const a = thing;\n"),
            ("src/b.ts", "export const x = 1;\n"),
        ],
        &[
            ("an export nobody imports", "src/b.ts", "export const other = 2;\n", "kept"),
            ("the name a.ts imports, missing until now", "src/b.ts", "export const thing = 2;\n", "computed"),
        ],
    );
}

#[test]
fn a_new_rust_item_resolves_again_only_where_a_use_names_it() {
    surface_steps(
        &[
            ("Cargo.toml", "[package]\nname = \"k\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            ("src/lib.rs", "mod m;\nmod user;\n"),
            ("src/m.rs", "pub struct A;\n"),
            ("src/user.rs", "use crate::m::Thing;\n"),
        ],
        &[
            ("an item nobody uses", "src/m.rs", "pub struct Other;\n", "kept"),
            ("the item user.rs uses, missing until now", "src/m.rs", "pub struct Thing;\n", "computed"),
        ],
    );
}

/// `diagnostics` are the run's own: its walk's and those of the files it parsed. A run that kept
/// the whole-repo facts and one that computed them say the same of the same stored files.
#[test]
fn diagnostics_are_the_runs_own_whether_it_kept_or_computed_the_repo_facts() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("pyproject.toml", "[project]\nname = \"pkg\"\n"),
            ("pkg/__init__.py", ""),
            ("pkg/a.py", "from pkg.b import helper\n"),
            ("pkg/b.py", "x = 1\n"),
            ("pkg/blob.py", "x = 1\0\0\0binary"),
            ("other/pyproject.toml", "[project\nname=\n"),
        ],
    );
    let kinds = |v: &Value| -> Vec<String> {
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| format!("{} {}", d["path"].as_str().unwrap(), d["kind"].as_str().unwrap()))
            .collect()
    };
    let first = index(d, &[]);
    assert_eq!(kinds(&first), ["other/pyproject.toml manifest-error", "pkg/blob.py binary"]);
    append(d, "pkg/b.py", "def unused():\n    pass\n");
    let kept = index(d, &[]);
    assert_eq!(kept["resolution"], "kept");
    append(d, "pkg/b.py", "import os\n");
    let computed = index(d, &[]);
    assert_eq!(computed["resolution"], "computed");
    assert_eq!((kinds(&kept), kinds(&computed)), (vec![], vec![]), "neither run parsed a file with a diagnostic");
    append(d, "pkg/blob.py", "\0more");
    append(d, "other/pyproject.toml", "# still broken\n");
    assert_eq!(kinds(&index(d, &[])), kinds(&first), "the files parsed again report again");
}

// ---- a property: random edit sequences ---------------------------------------------------------

const FILES: &[&str] =
    &["pkg/__init__.py", "pkg/a.py", "pkg/b.py", "pkg/sub/__init__.py", "pkg/sub/c.py", "tests/test_a.py"];

const LINES: &[&str] = &[
    "import os",
    "from . import a",
    "from .b import helper, thing",
    "from pkg.a import thing",
    "import pkg.sub.c",
    "from .sub.c import *",
    "from ..outside import nothing",
    "def helper():\n    return 1",
    "thing = 1",
    "# TODO: later",
    "def broken(:",
    "import numpy",
    "x = '\0'",
    "# a note that changes no resolution input",
    "def helper():\n    return 2",
];

/// Definitions appended to a file: its surface changes and nothing else, with names other files
/// import (`helper`, `thing`, `nothing`) or that none does (`Widget`).
const APPENDED: &[&str] =
    &["def helper():\n    return 3", "thing = 2", "def nothing():\n    pass", "class Widget:\n    pass"];

#[derive(Clone, Debug)]
enum Edit {
    Write(usize, Vec<usize>),
    Append(usize, usize),
    Delete(usize),
    Rename(usize, usize),
}

fn content(lines: &[usize]) -> String {
    let mut s: String = lines.iter().map(|&i| format!("{}\n", LINES[i])).collect();
    if s.is_empty() {
        s.push('\n');
    }
    s
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    let n = FILES.len();
    prop_oneof![
        3 => (0..n, prop::collection::vec(0..LINES.len(), 0..4)).prop_map(|(f, l)| Edit::Write(f, l)),
        2 => (0..n, 0..APPENDED.len()).prop_map(|(f, l)| Edit::Append(f, l)),
        1 => (0..n).prop_map(Edit::Delete),
        1 => (0..n, 0..n).prop_map(|(a, b)| Edit::Rename(a, b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 16,
        max_shrink_iters: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_edit_sequences_match_a_fresh_index(
        initial in prop::collection::vec(prop::collection::vec(0..LINES.len(), 0..4), FILES.len()),
        edits in prop::collection::vec(edit_strategy(), 1..6),
    ) {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        write(d, "pyproject.toml", "[project]\nname = \"pkg\"\ndependencies = [\"requests\"]\n");
        let mut tree: BTreeMap<usize, String> = BTreeMap::new();
        for (i, lines) in initial.iter().enumerate() {
            let c = content(lines);
            write(d, FILES[i], &c);
            tree.insert(i, c);
        }
        index(d, &[]);
        let mut indexed = tree.clone();
        for (k, e) in edits.iter().enumerate() {
            match e {
                Edit::Write(f, lines) => {
                    let c = content(lines);
                    write(d, FILES[*f], &c);
                    tree.insert(*f, c);
                }
                Edit::Append(f, line) => {
                    if let Some(c) = tree.get_mut(f) {
                        c.push_str(APPENDED[*line]);
                        c.push('\n');
                        write(d, FILES[*f], c);
                    }
                }
                Edit::Delete(f) => {
                    if tree.remove(f).is_some() {
                        remove(d, FILES[*f]);
                    }
                }
                Edit::Rename(a, b) => {
                    if a != b && tree.contains_key(a) && !tree.contains_key(b) {
                        rename(d, FILES[*a], FILES[*b]);
                        let c = tree.remove(a).unwrap();
                        tree.insert(*b, c);
                    }
                }
            }
            let expected = tree.iter().filter(|(f, c)| indexed.get(f) != Some(c)).count() as u64;
            let v = index(d, &[]);
            let mut failures = Vec::new();
            if v["files"]["parsed"] != json!(expected) {
                failures.push(format!("parsed {} files, expected {expected}", v["files"]["parsed"]));
            }
            compare_with_fresh(d, &format!("after edit {k} ({e:?})"), &v, &[], &mut failures);
            prop_assert!(failures.is_empty(), "edits {:?}:\n{}", edits, failures.join("\n\n"));
            indexed = tree.clone();
        }
    }
}

// ---- the index on disk: a head and packs ---------------------------------------------------------

/// The packs in `.andon/`: (name, length), sorted.
fn packs(d: &Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = fs::read_dir(d.join(".andon"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.starts_with("pack-").then(|| (name, e.metadata().unwrap().len()))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_change_writes_one_new_pack_and_a_file_andon_does_not_index_writes_the_head_alone() {
    let t = scratch("py-src-layout");
    let d = t.path();
    index(d, &[]);
    let first = packs(d);
    assert_eq!(first.len(), 1, "{first:?}");
    append(d, "src/acme_core/models.py", "\nX = 1\n");
    let v = index(d, &[]);
    assert_eq!(v["files"]["parsed"], 1);
    let second = packs(d);
    assert_eq!(second.len(), 2, "the first pack stays, the change goes to a second: {second:?}");
    assert!(second.contains(&first[0]), "{second:?}");
    assert!(second[1].1 < first[0].1, "the new pack holds the change, not the repository: {second:?}");
    // a notes file in a package directory changes the walk, not a fact: no pack is written
    let head = fs::read(d.join(".andon/index.bin")).unwrap();
    write(d, "src/acme_core/notes.txt", "notes\n");
    let v = index(d, &[]);
    assert_eq!((v["files"]["parsed"].clone(), v["unchanged"].clone()), (json!(0), json!(false)));
    assert_eq!(packs(d), second, "no pack written for a file andon does not index");
    assert_ne!(fs::read(d.join(".andon/index.bin")).unwrap(), head, "the head records the new walk");
    assert_eq!(index(d, &[])["unchanged"], true, "and the run after finds nothing to do");
    let mut failures = Vec::new();
    compare_with_fresh(d, "after the notes file", &v, &[], &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn many_changes_compact_the_packs_into_one() {
    let t = scratch("py-src-layout");
    let d = t.path();
    index(d, &[]);
    let mut most = 0;
    for i in 0..20 {
        append(d, "src/acme_core/models.py", &format!("\nX{i} = {i}\n"));
        let v = index(d, &[]);
        assert_eq!(v["files"]["parsed"], 1);
        most = most.max(packs(d).len());
    }
    assert!(most <= 16, "packs are compacted before they pass 16: {most}");
    assert!(packs(d).len() < 16, "{:?}", packs(d));
    let mut failures = Vec::new();
    compare_with_fresh(d, "after 20 edits", &index(d, &[]), &[], &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_damaged_pack_is_found_by_check_and_rebuilt_by_the_next_command_that_reads_it() {
    let t = scratch("ts-workspace");
    let d = t.path();
    index(d, &[]);
    let (name, len) = packs(d).pop().unwrap();
    let p = d.join(".andon").join(&name);
    let mut bytes = fs::read(&p).unwrap();
    bytes[len as usize / 2] ^= 0xff;
    fs::write(&p, &bytes).unwrap();
    let check = run(&["index", "--check", "--format", "json"], d);
    assert_eq!(check.status.code(), Some(3), "{}", String::from_utf8_lossy(&check.stdout));
    assert!(json(&check)["reason"].as_str().unwrap().contains(&name), "the report names the pack");
    // `andon facts` finds the damage when it reads the facts, indexes again, and answers right
    let out = facts_text(d, &[]);
    assert_eq!(out, fresh(d, &[]).facts);
    assert_eq!(run(&["index", "--check", "--quiet"], d).status.code(), Some(0));
    // a truncated pack is found by the writer before it builds on it
    let (name, len) = packs(d).pop().unwrap();
    let f = fs::OpenOptions::new().write(true).open(d.join(".andon").join(&name)).unwrap();
    f.set_len(len - 1).unwrap();
    let v = index(d, &["--exclude", "nothing/**"]);
    assert!(v["rebuilt"].as_str().is_some_and(|w| w.contains(&name)), "{v:#}");
}

#[test]
fn an_index_run_killed_at_any_write_leaves_an_index_the_next_run_uses() {
    if std::process::Command::new("strace").arg("-V").output().is_err() {
        eprintln!("strace is not installed: the kill points are not exercised");
        return;
    }
    let mut failures = Vec::new();
    // the pack's fsync and rename, then the head's
    for point in ["fsync:when=1", "rename:when=1", "fsync:when=2", "rename:when=2"] {
        let t = scratch("py-src-layout");
        let d = t.path();
        index(d, &[]);
        append(d, "src/acme_core/models.py", "\nX = 1\n");
        let o = std::process::Command::new("strace")
            .args(["-f", "-o", "/dev/null", "-e", &format!("inject={point}:signal=SIGKILL")])
            .arg(env!("CARGO_BIN_EXE_andon"))
            .args(["index", "--quiet"])
            .current_dir(d)
            .output()
            .unwrap();
        if o.status.success() {
            failures.push(format!("{point}: the run was not killed"));
            continue;
        }
        let v = index(d, &[]);
        if v["rebuilt"] != Value::Null {
            failures.push(format!("{point}: the next run rebuilt ({}) instead of using the index", v["rebuilt"]));
        }
        compare_with_fresh(d, point, &v, &[], &mut failures);
        let left: Vec<String> = fs::read_dir(d.join(".andon"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().into_string().unwrap())
            .filter(|n| n.contains(".tmp."))
            .collect();
        if !left.is_empty() {
            failures.push(format!("{point}: temporaries left after the next run: {left:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// An indexed repository whose one referenced name, a detail fact (a reference) whose only bytes
/// are in a detail segment, has a bit flipped in its pack.
fn damaged_detail() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write(d, "pkg/__init__.py", "");
    write(d, "pkg/a.py", "import os\n\ndef f():\n    return zzz_called_only_here, os\n");
    index(d, &[]);
    let (name, _) = packs(d).pop().unwrap();
    let p = d.join(".andon").join(&name);
    let mut bytes = fs::read(&p).unwrap();
    let at = bytes.windows(20).position(|w| w == b"zzz_called_only_here").expect("the name is in the pack");
    assert_eq!(bytes.windows(20).filter(|w| *w == b"zzz_called_only_here").count(), 1);
    bytes[at] ^= 0x01;
    fs::write(&p, &bytes).unwrap();
    t
}

#[test]
fn a_damaged_detail_segment_is_indexed_again_by_the_next_command_that_reads_the_index() {
    let t = damaged_detail();
    let d = t.path();
    let out = run(&["facts", "--quiet"], d);
    assert!(out.status.success(), "`andon facts` indexes again: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), fresh(d, &[]).facts);
    assert_eq!(run(&["index", "--check", "--quiet"], d).status.code(), Some(0), "and the index is sound after");
}

#[test]
fn a_base_revision_whose_ignore_file_differs_is_walked_by_its_own_rules() {
    // the base revision hides a breach with `.ignore`; the change un-hides it: the breach is new
    let t = crate::support::contract_repo();
    let d = t.path();
    fs::remove_dir_all(d.join("web")).unwrap();
    write(d, "src/app/core/legacy.py", "from app.api import handler\n");
    write(d, "src/app/core/.ignore", "legacy.py\n");
    crate::support::commit_all(d);
    write(d, "src/app/core/.ignore", "# nothing hidden\n");
    crate::support::git(d, &["commit", "-qam", "un-hide legacy.py"]);
    index(d, &[]);
    let out = run(&["check", "--quiet", "--format", "json", "--base", "HEAD~1"], d);
    let v = json(&out);
    let findings: Vec<(Value, Value)> =
        v["findings"].as_array().unwrap().iter().map(|f| (f["path"].clone(), f["new"].clone())).collect();
    assert_eq!(findings, vec![(json!("src/app/core/legacy.py"), json!(true))], "{v:#}");
}

#[test]
fn a_renamed_package_root_resolves_by_its_new_name() {
    // the indexed directory holds `__init__.py`: it is a package, named by the directory
    let t = tempfile::tempdir().unwrap();
    let (old, new) = (t.path().join("mypkg"), t.path().join("renamed"));
    write(&old, "__init__.py", "from mypkg import b\nfrom renamed import b as c\n");
    write(&old, "b.py", "def f():\n    return 1\n");
    index(&old, &[]);
    fs::rename(&old, &new).unwrap();
    // an edit of a body alone: no resolution input of any file changed
    write(&new, "b.py", "def f():\n    return 2\n");
    index(&new, &[]);
    let incremental = facts_text(&new, &[]);
    index(&new, &["--rebuild"]);
    let rebuilt = facts_text(&new, &[]);
    assert_eq!(incremental, rebuilt, "{}", line_diff(&rebuilt, &incremental));
}

#[test]
fn the_remedy_index_check_gives_for_a_damaged_pack_repairs_it() {
    let t = damaged_detail();
    let d = t.path();
    let check = run(&["index", "--check", "--quiet"], d);
    assert_eq!(check.status.code(), Some(3));
    let said = String::from_utf8_lossy(&check.stdout).into_owned();
    let remedy = said.split("run `").nth(1).and_then(|r| r.split('`').next()).unwrap_or_else(|| panic!("{said}"));
    let args: Vec<&str> = remedy.split_whitespace().collect();
    assert_eq!(args[0], "andon", "{said}");
    run_ok(&args[1..], d);
    let after = run(&["index", "--check", "--quiet"], d);
    assert_eq!(after.status.code(), Some(0), "`{remedy}` left the damage: {}", String::from_utf8_lossy(&after.stdout));
}

// ---- the table's chunks: compaction, readers racing a writer, a missing pack ------------------

fn set_mtime(p: &Path, secs: u64) {
    let f = fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs)).unwrap();
}

/// `n` modules in 20 packages, module `m` in `pkg{m % 20}`.
fn chunked_modules(n: usize, body: impl Fn(usize) -> String) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, String)> = (0..20).map(|p| (format!("pkg{p}/__init__.py"), String::new())).collect();
    files.extend((1..=n).map(|m| (format!("pkg{}/m{m}.py", m % 20), body(m))));
    write_files(t.path(), &files);
    t
}

/// docs/index.md: "or at 16 packs, every live segment and chunk is copied into one new pack",
/// also when the runs change only stats (each writes a pack holding the changed chunk).
#[test]
fn touch_only_runs_keep_the_packs_at_16_or_fewer() {
    let t = chunked_modules(3000, |m| {
        format!("import os\nfrom pkg{} import m{}\ndef f{m}():\n    return {m}\n", (m + 1) % 20, m + 1)
    });
    let d = t.path();
    run_ok(&["index", "--quiet"], d);
    for i in 1..=60u64 {
        let m = (i * 53) % 3000 + 1;
        set_mtime(&d.join(format!("pkg{}/m{m}.py", m % 20)), 1_700_000_000 + i);
        run_ok(&["index", "--quiet"], d);
    }
    let p = packs(d);
    assert!(p.len() <= 16, "{} packs after 60 touch-only runs: {p:?}", p.len());
}

/// A one-line edit on a repository of many small files (where the table's chunks are most of the
/// bytes) writes the change, not every pack: chunks count as live.
#[test]
fn a_one_line_edit_on_many_small_files_does_not_rewrite_every_pack() {
    let t = chunked_modules(15_000, |_| String::new());
    let d = t.path();
    run_ok(&["index", "--quiet"], d);
    let before = packs(d);
    let total: u64 = before.iter().map(|p| p.1).sum();
    for k in 0..3 {
        let p = d.join("pkg1/m1.py");
        let mut b = fs::read(&p).unwrap();
        b.extend_from_slice(format!("x{k} = {k}\n").as_bytes());
        fs::write(&p, b).unwrap();
        run_ok(&["index", "--quiet"], d);
        let after = packs(d);
        let new: Vec<_> = after.iter().filter(|p| !before.contains(p)).cloned().collect();
        let written: u64 = new.iter().map(|p| p.1).sum();
        assert!(written < total / 4, "edit {k}: {written} bytes written of {total} (a compaction): {after:?}");
    }
}

/// A reader without the lock (`andon index --check`, `andon query --no-index`) reads the head
/// again when a writer replaced it while it read the table's chunks. The race is widened with
/// strace delaying every openat by 100 ms.
#[test]
fn a_check_racing_a_writer_is_not_stale() {
    if std::process::Command::new("strace").arg("-V").output().is_err() {
        eprintln!("strace is not installed");
        return;
    }
    let t = chunked_modules(3000, |m| format!("def f{m}():\n    return {m}\n"));
    let d = t.path().to_path_buf();
    run_ok(&["index", "--quiet"], &d);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (d, stop) = (d.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                run(&["index", "--quiet", "--rebuild"], &d);
            }
        })
    };
    let mut failures = Vec::new();
    for _ in 0..2 {
        let o = std::process::Command::new("strace")
            .args(["-f", "-o", "/dev/null", "-e", "trace=openat", "-e", "inject=openat:delay_enter=100000"])
            .arg(env!("CARGO_BIN_EXE_andon"))
            .args(["index", "--check", "--quiet"])
            .current_dir(&d)
            .output()
            .unwrap();
        if !o.status.success() {
            failures.push(format!("{:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stdout)));
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    assert!(failures.is_empty(), "an unchanged tree reported stale while a writer ran:\n{}", failures.join("\n"));
}

/// A pack that stays missing is named, not reported as a concurrent writer.
#[test]
fn a_deleted_pack_is_named_as_missing() {
    let t = chunked_modules(3000, |m| format!("def f{m}():\n    return {m}\n"));
    let d = t.path();
    run_ok(&["index", "--quiet"], d);
    set_mtime(&d.join("pkg7/m7.py"), 1_700_000_000);
    run_ok(&["index", "--quiet"], d);
    let (chunk_only, _) = packs(d).pop().unwrap();
    fs::remove_file(d.join(".andon").join(&chunk_only)).unwrap();
    let check = run(&["index", "--check"], d);
    let text = String::from_utf8_lossy(&check.stdout).to_string() + &String::from_utf8_lossy(&check.stderr);
    assert!(text.contains(&chunk_only) && !text.contains("run again"), "--check: {text}");
}
