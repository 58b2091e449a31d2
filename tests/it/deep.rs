//! Deep nesting: a file nested past the extraction depth is indexed in bounded time, without
//! overflowing a stack; it gets a `too-deep` diagnostic and parse error, and its imports drop to
//! tier 2 as a syntax error's do.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{facts, json, run, run_ok};

const CONTRACT: &str = "[[contract]]\nname = \"core stays independent of api\"\nkind = \"forbidden\"\n\
                        from = [\"src/core/**\", \"web/core/**\"]\nto = [\"src/api/**\", \"web/api/**\"]\n";

/// Writes `files` (path, text) under a fresh temporary directory.
fn repo(files: &[(&str, String)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for (f, text) in files {
        let p = t.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    t
}

/// Python and TypeScript stages where core imports api (breaking the contract), from a file with
/// an expression or block nested `depth` times after the import.
fn layered(depth: usize) -> tempfile::TempDir {
    repo(&[
        ("andon.toml", CONTRACT.to_string()),
        ("pyproject.toml", "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n".to_string()),
        ("src/api/__init__.py", "def run():\n    return 1\n".to_string()),
        ("src/core/__init__.py", format!("from api import run\n\nx = {}{}\n", "run(".repeat(depth), ")".repeat(depth))),
        ("web/api/b.ts", "export const run = 1;\n".to_string()),
        (
            "web/core/a.ts",
            format!("import {{ run }} from \"../api/b\";\n{}{}", "if (run) {\n".repeat(depth), "}\n".repeat(depth)),
        ),
    ])
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The tier of each finding of `andon check`, by path.
fn tiers(dir: &Path) -> Vec<(String, u64)> {
    let doc: Value = json(&run(&["check", "--format", "json", "-q"], dir));
    let mut t: Vec<(String, u64)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_string(), f["tier"].as_u64().unwrap()))
        .collect();
    t.sort();
    t
}

/// `(path, kind)` of every `ParseError` fact.
fn parse_errors(dir: &Path) -> Vec<(String, String)> {
    let rows = facts(dir, "ParseError");
    rows.iter().map(|r| (r["path"].as_str().unwrap().to_string(), r["kind"].as_str().unwrap().to_string())).collect()
}

#[test]
fn a_file_nested_past_the_limit_is_reported_and_its_imports_drop_to_tier_two() {
    // 520 nested calls or `if` blocks: syntax trees about 1,040 deep, just past the limit of 1,000
    let t = layered(520);
    let out = stdout(&run_ok(&["index"], t.path()));
    for at in ["src/core/__init__.py:3", "web/core/a.ts:501"] {
        let want = format!("warning: {at}: too deeply nested: facts below depth 1000 omitted");
        assert!(out.contains(&want), "{want}\n{out}");
    }
    let too_deep = [("src/core/__init__.py", "too-deep"), ("web/core/a.ts", "too-deep")];
    let want: Vec<(String, String)> = too_deep.iter().map(|(p, k)| (p.to_string(), k.to_string())).collect();
    assert_eq!(parse_errors(t.path()), want);
    // the import above the nesting is still read, but rests on a tree that was not read whole
    let want = vec![("src/core/__init__.py".to_string(), 2), ("web/core/a.ts".to_string(), 2)];
    assert_eq!(tiers(t.path()), want);
}

#[test]
fn a_file_nested_within_the_limit_keeps_tier_one() {
    let t = layered(400);
    let out = stdout(&run_ok(&["index"], t.path()));
    assert!(!out.contains("too deeply nested"), "{out}");
    assert_eq!(parse_errors(t.path()), vec![]);
    let want = vec![("src/core/__init__.py".to_string(), 1), ("web/core/a.ts".to_string(), 1)];
    assert_eq!(tiers(t.path()), want);
}

/// The sizes of the issue: a 100,000-deep Python call and 40,000 nested TypeScript blocks.
#[test]
fn the_deepest_files_index_in_seconds() {
    let n = 100_000;
    let t = repo(&[
        ("a.py", format!("import os\nx = {}{}\n", "f(".repeat(n), ")".repeat(n))),
        ("b.ts", format!("import {{ x }} from \"./c\";\n{}{}\n", "if (a) {".repeat(40_000), "}".repeat(40_000))),
        ("c.ts", "export const x = 1;\n".to_string()),
    ]);
    let t0 = Instant::now();
    let out = stdout(&run_ok(&["index"], t.path()));
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    assert!(out.contains("warning: a.py:2: too deeply nested") && out.contains("warning: b.ts:2: too deeply nested"));
}

/// Rust nests without limit in blocks, macro token trees, paths and use lists; each used to be read
/// by a walk that recursed once per level.
#[test]
fn deep_rust_neither_overflows_a_stack_nor_hangs() {
    let n = 100_000;
    let t = repo(&[
        ("blocks.rs", format!("use std::fmt;\nfn f() {{{}{}}}\n", "{".repeat(n), "}".repeat(n))),
        ("tokens.rs", format!("fn f() {{ m!({}{}); }}\n", "(".repeat(n), ")".repeat(n))),
        ("path.rs", format!("fn f() {{ x = crate::{}b; }}\n", "a::".repeat(n))),
        ("uses.rs", format!("use a::{}c{};\n", "{b::".repeat(n), "}".repeat(n))),
    ]);
    let t0 = Instant::now();
    let out = stdout(&run_ok(&["index"], t.path()));
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    let mut deep: Vec<String> = parse_errors(t.path()).into_iter().filter(|e| e.1 == "too-deep").map(|e| e.0).collect();
    deep.sort();
    assert_eq!(deep, ["blocks.rs", "path.rs", "tokens.rs", "uses.rs"], "{out}");
    // a path or use list is still read whole, in a loop
    let imports = facts(t.path(), "Import");
    let spec = |p: &str| imports.iter().find(|r| r["path"] == p).map(|r| r["spec"].as_str().unwrap().len());
    assert_eq!(spec("path.rs"), Some("crate::".len() + "a::".len() * n + 1));
    assert_eq!(spec("uses.rs"), Some("a::".len() + "b::".len() * n + 1));
}
