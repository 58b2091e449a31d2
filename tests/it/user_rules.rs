//! User rule files without `.decl`: their relations' column types are inferred from their rules,
//! through every path a rules file takes (`andon query --rules`, `--explain`, `--schema`, a `rule`
//! contract of `andon check`); a conflict is an error with `file:line` and exit 2, never a panic.

use std::path::Path;

use serde_json::Value;

use crate::support::{json, run, write_files};

/// A repository with a marker far down a file: its line is a number larger than the count of
/// interned strings, which a line read as a string would index past.
fn marked_repo() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let mut body = String::from("def f():\n    return 1\n# TODO: first\n");
    for i in 0..3000 {
        body.push_str(&format!("x{i} = {i}\n"));
    }
    body.push_str("# FIXME: last\n");
    write_files(t.path(), &[("src/a.py", body.as_str())]);
    t
}

fn code_of(o: &std::process::Output) -> Option<i32> {
    o.status.code()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn query_json(d: &Path, args: &[&str]) -> Value {
    let mut all = vec!["query", "--format", "json"];
    all.extend_from_slice(args);
    let o = run(&all, d);
    assert_eq!(code_of(&o), Some(0), "{args:?}: {}", stderr(&o));
    json(&o)
}

#[test]
fn an_undeclared_relation_takes_its_column_types_from_its_rules() {
    let t = marked_repo();
    let d = t.path();
    // a relation read by the query (and by another undeclared relation) before its rule
    std::fs::write(
        d.join("lines.dl"),
        "Late(p, l) :- At(p, l), l > 100.\nAt(p, l) :- Marker(p, l, _).\nChain(l) :- Marker(_, w, _), z = w, y = z, l = y.\n",
    )
    .unwrap();
    let doc = query_json(d, &["--rules", "lines.dl", "At(p, l)"]);
    assert_eq!(doc["rows"], serde_json::json!([["src/a.py", 3], ["src/a.py", 3004]]), "{doc:#}");
    let doc = query_json(d, &["--rules", "lines.dl", "Late(p, l)"]);
    assert_eq!(doc["rows"], serde_json::json!([["src/a.py", 3004]]), "{doc:#}");
    // an int compares as a number, not as text ("3004" < "400" as strings)
    let doc = query_json(d, &["--rules", "lines.dl", "At(p, l), l > 400"]);
    assert_eq!(doc["rows"], serde_json::json!([["src/a.py", 3004]]), "{doc:#}");
    // a chain of equalities of any length carries the type
    let doc = query_json(d, &["--rules", "lines.dl", "Chain(l)"]);
    assert_eq!(doc["rows"], serde_json::json!([[3], [3004]]), "{doc:#}");
    let o = run(&["query", "--rules", "lines.dl", "--explain", "Late(p, l)"], d);
    assert_eq!(code_of(&o), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Marker(\"src/a.py\", 3004, \"FIXME\")"));
    let o = run(&["query", "--rules", "lines.dl", "--schema"], d);
    assert!(String::from_utf8_lossy(&o.stdout).contains("At(p: path, l: int)"), "{}", stderr(&o));
}

#[test]
fn an_undeclared_relation_given_two_types_is_refused_at_its_line() {
    let t = marked_repo();
    let d = t.path();
    for (text, at, says) in [
        (
            "Mixed(x) :- File(x, _).\nMixed(x) :- Marker(_, x, _).\n",
            "mixed.dl:2:7",
            "`x` is an int, but column `x` of `Mixed` is a path",
        ),
        ("Mixed(1).\nMixed(\"a\").\n", "mixed.dl:2:7", "column 1 of `Mixed` is an int"),
        (
            "Two(p, l) :- Marker(p, l, _).\nUse(p) :- Two(p, p).\n",
            "mixed.dl:2:18",
            "`p` is used as a path and as an int",
        ),
    ] {
        std::fs::write(d.join("mixed.dl"), text).unwrap();
        let o = run(&["query", "--rules", "mixed.dl", "File(p, _)"], d);
        assert_eq!(code_of(&o), Some(2), "{text:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(at) && e.contains(says), "{text:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn a_rule_contract_without_decl_points_at_real_lines() {
    let t = marked_repo();
    let d = t.path();
    write_files(
        d,
        &[
            ("markers.dl", "Violation(p, l) :- Marker(p, l, _).\n"),
            // no path column: the finding is at the rules file, on the line that derives Violation
            ("functions.dl", "// the functions\n\nViolation(n) :- Defines(_, n, \"function\", _).\n"),
            // an int after the path that is no line of the file: part of the message, at line 1
            ("counts.dl", "Violation(p, n) :- File(p, _), n = 5000.\n"),
            (
                "andon.toml",
                "[[contract]]\nname = \"no markers\"\nkind = \"rule\"\nrules = \"markers.dl\"\n\n\
                 [[contract]]\nname = \"no functions\"\nkind = \"rule\"\nrules = \"functions.dl\"\n\n\
                 [[contract]]\nname = \"counts\"\nkind = \"rule\"\nrules = \"counts.dl\"\n",
            ),
        ],
    );
    let o = run(&["check", "--format", "json", "-q"], d);
    assert_eq!(code_of(&o), Some(1), "{}", stderr(&o));
    let doc = json(&o);
    let mut at: Vec<(String, String, u64, String)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["contract"].as_str().unwrap().to_string(),
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    at.sort();
    let places: Vec<(&str, &str, u64)> = at.iter().map(|(c, p, l, _)| (c.as_str(), p.as_str(), *l)).collect();
    assert_eq!(
        places,
        [
            ("counts", "src/a.py", 1),
            ("no functions", "functions.dl", 3),
            ("no markers", "src/a.py", 3),
            ("no markers", "src/a.py", 3004),
        ],
        "{doc:#}"
    );
    assert!(at[0].3.contains("n=5000"), "{:?}", at[0]);
    assert!(at[1].3.contains("n=f"), "{:?}", at[1]);
}
