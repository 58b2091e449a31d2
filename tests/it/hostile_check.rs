//! `andon check` on file names that are not UTF-8: the source it reads for columns, manifest lines
//! and rule files, and the tree of a `--base` revision, keep the raw bytes of each name.
#![cfg(unix)]

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{contract_repo, git, json, run, write_files};

/// A path under `dir` whose last component is the raw bytes `name`.
fn raw(dir: &Path, name: &[u8]) -> PathBuf {
    dir.join(OsStr::from_bytes(name))
}

/// A Python project whose contract forbids `core` to import `api`, with the breach in
/// `src/app/core/leak\xff.py`; `None` when the file system refuses non-UTF-8 names.
fn leak_repo() -> Option<tempfile::TempDir> {
    let t = contract_repo();
    let d = t.path();
    fs::write(raw(&d.join("src/app/core"), b"leak\xff.py"), "x = 1\nfrom app.api import handler\n").ok()?;
    Some(t)
}

/// The findings of `andon check --format json` (with `extra` arguments), asserting its exit code.
fn findings(d: &Path, extra: &[&str], code: i32) -> Vec<Value> {
    let mut args = vec!["check", "--quiet", "--format", "json"];
    args.extend_from_slice(extra);
    let out = run(&args, d);
    assert_eq!(out.status.code(), Some(code), "{}", String::from_utf8_lossy(&out.stderr));
    json(&out)["findings"].as_array().unwrap().clone()
}

#[test]
fn a_finding_in_a_non_utf8_name_has_its_column() {
    let Some(t) = leak_repo() else {
        eprintln!("skipped: this file system refuses non-UTF-8 file names");
        return;
    };
    let all = findings(t.path(), &[], 1);
    let f = all.iter().find(|f| f["path"] == r"src/app/core/leak\xff.py").expect("the breach is found");
    assert_eq!((&f["line"], &f["col"]), (&Value::from(2), &Value::from(6)), "where `app.api` starts: {f}");
    assert_eq!(f["witness"][0]["col"], 6, "the witness hop has its column too: {f}");
}

#[test]
fn a_base_tree_keeps_non_utf8_names_apart() {
    let Some(t) = leak_repo() else {
        eprintln!("skipped: this file system refuses non-UTF-8 file names");
        return;
    };
    let d = t.path();
    git(d, &["init", "-q"]);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    // A second name that reads the same after a lossy conversion, without a breach of its own.
    fs::write(raw(&d.join("src/app/core"), b"leak\xfe.py"), "X = 1\n").unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "second name"]);
    for base in ["HEAD~1", "HEAD"] {
        let all = findings(d, &["--base", base], 1);
        let leaks: Vec<&Value> = all.iter().filter(|f| f["path"].as_str().unwrap().contains("leak")).collect();
        assert_eq!(leaks.len(), 1, "one breach, in `leak\\xff.py` (--base {base}): {leaks:?}");
        assert_eq!(leaks[0]["path"], r"src/app/core/leak\xff.py");
        assert_eq!(leaks[0]["new"], false, "the breach was there at {base}: {}", leaks[0]);
    }
}

#[test]
fn an_unused_dependency_in_a_non_utf8_directory_names_its_line() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let pkg = raw(d, b"pkg\xff");
    if fs::create_dir(&pkg).is_err() {
        eprintln!("skipped: this file system refuses non-UTF-8 file names");
        return;
    }
    write_files(
        &pkg,
        &[
            ("pyproject.toml", "[project]\nname = \"p\"\nversion = \"0.1.0\"\ndependencies = [\n  \"requests\",\n]\n"),
            ("src/p/__init__.py", "import os\n"),
        ],
    );
    write_files(
        d,
        &[("andon.toml", "[[contract]]\nname = \"declared is used\"\nkind = \"manifest\"\nchecks = [\"unused\"]\n")],
    );
    let all = findings(d, &[], 1);
    let f = all.iter().find(|f| f["message"].as_str().unwrap().contains("requests")).expect("the unused dependency");
    assert_eq!(f["path"], r"pkg\xff/pyproject.toml");
    assert_eq!(f["line"], 5, "the line that names `requests`: {f}");
}

#[test]
fn a_rules_file_with_a_non_utf8_name_is_read() {
    let Some(t) = leak_repo() else {
        eprintln!("skipped: this file system refuses non-UTF-8 file names");
        return;
    };
    let d = t.path();
    fs::write(
        raw(d, b"rules\xff.dl"),
        ".decl Violation(path: path, line: int, message: sym)\nViolation(p, 1, \"a file\") :- File(p, _).\n",
    )
    .unwrap();
    // TOML reads `\\` as one backslash: the setting is the name in its escaped text form.
    write_files(
        d,
        &[("andon.toml", "[[contract]]\nname = \"no files\"\nkind = \"rule\"\nrules = \"rules\\\\xff.dl\"\n")],
    );
    let all = findings(d, &[], 1);
    assert!(all.iter().any(|f| f["contract"] == "no files"), "the rules file is read: {all:?}");
}

#[test]
fn a_fifo_as_the_rules_file_hangs_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[("a.py", "x = 1\n"), ("andon.toml", "[[contract]]\nname = \"r\"\nkind = \"rule\"\nrules = \"rules.dl\"\n")],
    );
    if !std::process::Command::new("mkfifo").arg(d.join("rules.dl")).status().is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let mut child = crate::support::andon()
        .args(["check", "--quiet"])
        .current_dir(d)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() && t0.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if child.try_wait().unwrap().is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("check does not hang on a FIFO rules file");
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a rules file that is no regular file is a config error:\n{err}");
    assert!(err.contains("rules.dl") && err.contains("not a regular file"), "the error names the file and why: {err}");
}

#[test]
fn an_import_spelled_with_string_escapes_is_the_module_it_loads() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("src/api/index.ts", "export const secret = 1;\n"),
            ("src/core/index.ts", "import { secret } from \"../\\u0061pi/index\";\nexport const s = secret;\n"),
            ("src/core/other.ts", "const m = require('../\\x61pi/index');\nexport { m };\n"),
            ("app/__init__.py", ""),
            ("lib/__init__.py", "import importlib\nm = importlib.import_module(\"\\x61pp\")\n"),
            (
                "andon.toml",
                "[[contract]]\nname = \"c\"\nkind = \"forbidden\"\nfrom = [\"src/core/**\", \"lib/**\"]\nto = [\"src/api/**\", \"app/**\"]\n",
            ),
        ],
    );
    let paths: Vec<String> = findings(d, &[], 1).iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
    for p in ["src/core/index.ts", "src/core/other.ts", "lib/__init__.py"] {
        assert!(paths.iter().any(|x| x == p), "no finding at {p}: {paths:?}");
    }
}

#[test]
fn an_output_file_behind_a_link_is_written_through_not_replaced() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(d, &[("app/__init__.py", ""), ("andon.toml", "[[contract]]\nname = \"c\"\nkind = \"acyclic\"\n")]);
    fs::write(d.join("target.txt"), "old\n").unwrap();
    std::os::unix::fs::symlink(d.join("target.txt"), d.join("report.json")).unwrap();
    let o = run(&["check", "-q", "--format", "json", "-o", "report.json"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(fs::symlink_metadata(d.join("report.json")).unwrap().file_type().is_symlink());
    let written: Value = serde_json::from_str(&fs::read_to_string(d.join("target.txt")).unwrap()).unwrap();
    assert_eq!(written["verdict"]["outcome"], "pass");
}

#[test]
fn a_source_file_too_large_to_parse_is_named_not_passed_over() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("src/api/__init__.py", ""),
            ("src/core/util.py", "x = 1\n"),
            (
                "andon.toml",
                "[[contract]]\nname = \"c\"\nkind = \"forbidden\"\nfrom = [\"src/core/**\"]\nto = [\"src/api/**\"]\n",
            ),
        ],
    );
    fs::write(d.join("src/core/__init__.py"), format!("import src.api\n{}\n", "#".repeat(4_300_000))).unwrap();
    let o = run(&["check", "-q"], d);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("note: src/core/__init__.py was not analysed (too-large)"), "{out}");
    let doc = findings_doc(d);
    assert_eq!(doc["unanalysed"][0]["path"], "src/core/__init__.py", "{doc:#}");
    assert_eq!(doc["unanalysed"][0]["reason"], "too-large");
}

fn findings_doc(d: &Path) -> Value {
    json(&run(&["check", "-q", "--format", "json"], d))
}
