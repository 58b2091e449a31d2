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

/// The notes of the first `andon loop --format json` step in `dir` that list advisory markers.
fn advisory_notes(v: &serde_json::Value) -> Vec<String> {
    v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .filter(|n| n.starts_with("advisory, not a gap:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_refusal_by_design_is_advisory_and_a_quoted_or_placeholder_marker_is_none() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("pyproject.toml", "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n"),
            (
                "src/core/__init__.py",
                "def delete():\n    raise NotImplementedError(\"RequestSite cannot be deleted.\")\n\n\n\
                 def reverse():\n    raise NotImplementedError(\n        \"Reversing this migration is not supported\"\n    )\n\n\n\
                 def later():\n    raise NotImplementedError(\"auth-int support is not yet implemented\")\n\n\n\
                 def wanted():\n    # TODO: support it\n    raise NotImplementedError(\"not supported\")\n\n\n\
                 # implement clean_XXX(), where XXX is the field name\n\
                 # replace \"TODO\" with the name\n\
                 x = 1  # XXX compat\n",
            ),
            ("src/core/test_core.py", "from core import x\n\n\ndef test_x():\n    assert x == 1\n"),
            ("src/api/__init__.py", "from core import delete, later\n\n\ndef run():\n    return delete(), later()\n"),
        ],
    );
    commit_all(d);
    let want: BTreeSet<(String, u64, String)> = [
        (12, "NotImplementedError"), // not yet: unfinished work
        (16, "TODO"),                // the wish above a refusal by design stands alone
        (22, "XXX"),                 // a comment after code, opened by the marker
    ]
    .into_iter()
    .map(|(l, k)| ("src/core/__init__.py".to_string(), l, format!("{k} marker")))
    .collect();
    let o = run(&["loop", "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    let core_gaps: BTreeSet<(String, u64, String)> = v["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["source"] == "StageMarker" && g["stage"] == "core")
        .map(|g| {
            (
                g["path"].as_str().unwrap().to_string(),
                g["line"].as_u64().unwrap(),
                g["summary"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // the derived relations say the same
    let rows = json(&run_ok(&["query", "--format", "json", "-q", "StageMarker(s, p, l, k)"], d));
    let markers: BTreeSet<(String, u64, String)> = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (r[1].as_str().unwrap().to_string(), r[2].as_u64().unwrap(), format!("{} marker", r[3].as_str().unwrap()))
        })
        .collect();
    assert_eq!(markers, want);
    assert_eq!(v["cursor"], "core", "{v:#}");
    {
        assert_eq!(core_gaps, want, "{v:#}");
        let listed = advisory_notes(&v);
        assert_eq!(listed.len(), 3, "{listed:?}");
        assert!(
            listed[0].contains("src/core/__init__.py:2: NotImplementedError whose message says \"cannot\""),
            "{listed:?}"
        );
    }
    // listed: the advisory markers, each with the words that make it one
    let rows = json(&run_ok(&["query", "--format", "json", "-q", "AdvisoryMarker(s, p, l, k, w)"], d));
    let advisory: Vec<(u64, String)> = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[2].as_u64().unwrap(), r[4].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        advisory,
        [(2, "cannot".to_string()), (6, "not supported".to_string()), (17, "not supported".to_string())]
    );
    // a stub refused by design crosses a wire as no stub; one still to come does
    let rows = json(&run_ok(&["query", "--format", "json", "-q", "StubHandoff(p, c, n, t, l, k, x)"], d));
    let handed: Vec<&str> = rows["rows"].as_array().unwrap().iter().map(|r| r[2].as_str().unwrap()).collect();
    assert_eq!(handed, ["later"]);
}

#[test]
fn rust_and_typescript_refusals_by_design_are_advisory() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("Cargo.toml", "[package]\nname = \"r\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            (
                "src/lib.rs",
                "pub fn a() {\n    unimplemented!(\"seeking is not supported on pipes\")\n}\n\n\
                 pub fn b() {\n    todo!(\"write the parser\")\n}\n\n\
                 pub fn c() {\n    todo!()\n}\n\n\
                 /// assert_eq!(render(\"TODO\"), 1);\npub fn render() {}\n",
            ),
            ("package.json", "{\"name\": \"w\", \"version\": \"1.0.0\"}\n"),
            (
                "web/index.ts",
                "export function undo(): void {\n  throw new Error(\"not implemented: this step is irreversible\");\n}\n\
                 export function redo(): void {\n  throw new Error(\"not implemented\");\n}\n",
            ),
        ],
    );
    let rows = json(&run_ok(&["query", "--format", "json", "-q", "StageMarker(s, p, l, k)"], d));
    let mut gaps: Vec<(String, u64)> = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[1].as_str().unwrap().to_string(), r[2].as_u64().unwrap()))
        .collect();
    gaps.sort();
    assert_eq!(
        gaps,
        [("src/lib.rs".to_string(), 6), ("src/lib.rs".to_string(), 10), ("web/index.ts".to_string(), 5)],
        "{rows:#}"
    );
    let rows = json(&run_ok(&["query", "--format", "json", "-q", "AdvisoryMarker(s, p, l, k, w)"], d));
    let mut advisory: Vec<(String, u64, String)> = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[1].as_str().unwrap().to_string(), r[2].as_u64().unwrap(), r[4].as_str().unwrap().to_string()))
        .collect();
    advisory.sort();
    assert_eq!(
        advisory,
        [
            ("src/lib.rs".to_string(), 2, "not supported".to_string()),
            ("web/index.ts".to_string(), 2, "irreversible".to_string())
        ]
    );
}
