//! Stubs are stubs, abstract methods are not: the loop's first step opens a gap for each real stub
//! (a function, or a method nobody overrides), none for a method meant to be overridden (overridden
//! in the repository, abstract, or of an abstract class), and one gap for a marker comment and the
//! stub it sits on. Inheritance is queryable.

use std::collections::BTreeSet;

use crate::support::{commit_all, json, run, run_ok, scratch, write_files};

/// The marker gaps of the first `andon loop --format json` step in `dir`: (path, line, summary).
pub(crate) fn marker_gaps(dir: &std::path::Path) -> BTreeSet<(String, u64, String)> {
    let o = run(&["loop", "--format", "json", "-q"], dir);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    v["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["source"] == "StageMarker")
        .map(|g| {
            let s = |k: &str| g[k].as_str().unwrap().to_string();
            (s("path"), g["line"].as_u64().unwrap(), s("summary"))
        })
        .collect()
}

fn gaps(rows: &[(&str, u64, &str)]) -> BTreeSet<(String, u64, String)> {
    rows.iter().map(|(p, l, k)| (p.to_string(), *l, format!("{k} marker"))).collect()
}

#[test]
fn python_loop_opens_gaps_only_for_real_stubs() {
    let t = scratch("py-stubs");
    commit_all(t.path());
    let b = "src/shapes/base.py";
    // Not gaps: `area`, `volume` and `label` are overridden (through a re-export, a subclass of a
    // subclass, a qualified base); `draw`, `size` and `meta` belong to an ABC, a Protocol and a class
    // with metaclass ABCMeta; `one` and `two` are decorated abstract. The comment markers on
    // `perimeter`, `helper`, `guarded` and `inline` are their stubs' gaps.
    let want = gaps(&[
        (b, 18, "NotImplementedError"), // perimeter, with its TODO
        (b, 22, "NotImplementedError"), // describe: a method nobody overrides
        (b, 51, "NotImplementedError"), // module_level
        (b, 56, "NotImplementedError"), // helper, with the TODO above it
        (b, 63, "NotImplementedError"), // guarded, with the FIXME above the raise
        (b, 67, "NotImplementedError"), // inline, with the XXX on its line
    ]);
    assert_eq!(marker_gaps(t.path()), want);
}

#[test]
fn typescript_loop_opens_gaps_only_for_real_stubs() {
    let t = scratch("ts-stubs");
    commit_all(t.path());
    // Not gaps: `Shape.describe` (an abstract class), `Base.run` (overridden by `Impl`); the TODO on
    // `Base.stop` is its stub's gap.
    let want = gaps(&[("src/base.ts", 14, "not-implemented-throw"), ("src/base.ts", 27, "not-implemented-throw")]);
    assert_eq!(marker_gaps(t.path()), want);
}

#[test]
fn rust_loop_opens_gaps_only_for_stubs_no_implementor_overrides() {
    let t = scratch("rs-stubs");
    commit_all(t.path());
    // Not gaps: `Shape::area` (Square overrides it) and `Shape::corners` (Circle's impl names the
    // trait by its path); the TODO on `later` is its stub's gap.
    let want = gaps(&[("src/lib.rs", 6, "todo!"), ("src/shapes.rs", 11, "todo!")]);
    assert_eq!(marker_gaps(t.path()), want);
}

#[test]
fn a_method_never_crosses_a_wire_as_a_stub() {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n"),
            (
                "src/core/__init__.py",
                "def area():\n    return 1\n\n\nclass Shape:\n    def area(self):\n        raise NotImplementedError\n\n\n\
                 def later():\n    raise NotImplementedError\n",
            ),
            ("src/api/__init__.py", "from core import area, later\n\n\ndef run():\n    return area(), later()\n"),
        ],
    );
    let rows = json(&run_ok(&["query", "--format", "json", "-q", "StubHandoff(p, c, n, t, l, k, x)"], t.path()));
    let handed: Vec<(String, u64)> = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[2].as_str().unwrap().to_string(), r[4].as_u64().unwrap()))
        .collect();
    // `area` is imported; the stub at line 6 is the method `Shape.area`, which no import names
    assert_eq!(handed, vec![("later".to_string(), 10)]);
}

#[test]
fn inheritance_is_queryable_and_transitive() {
    let t = scratch("py-stubs");
    // the closure, as docs/query.md writes it
    let rules = t.path().join("subclass.dl");
    std::fs::write(
        &rules,
        ".decl SubclassOf(path: path, class: sym, base_path: path, base_class: sym)\n\
         SubclassOf(p, c, bp, b) :- BaseDefinition(p, c, bp, b).\n\
         SubclassOf(p, c, bp, b) :- SubclassOf(p, c, mp, m), BaseDefinition(mp, m, bp, b).\n",
    )
    .unwrap();
    let q = ["query", "--format", "json", "-q", "--rules", "subclass.dl", "SubclassOf(p, c, bp, \"Shape\")"];
    let rows = json(&run_ok(&q, t.path()));
    let subclasses: BTreeSet<String> =
        rows["rows"].as_array().unwrap().iter().map(|r| r[1].as_str().unwrap().to_string()).collect();
    let want: BTreeSet<String> = ["Cube", "Square", "Tagged"].iter().map(|s| s.to_string()).collect();
    assert_eq!(subclasses, want);
}
