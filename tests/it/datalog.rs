//! The Datalog layer: expected derivations per fixture (`tests/fixtures/<name>/derived.expected`,
//! rewritten with `UPDATE_EXPECT=1`), the two engines held to one answer on every fixture and on
//! generated fact sets, and the query/stream/why commands end to end.

use std::fs;
use std::path::Path;

use andon::datalog::{self, Store, explain};
use andon::dialect::{Program, RelKind};
use proptest::prelude::*;

use crate::support::{json, run, run_ok, scratch};

const FIXTURES: &[&str] = &[
    "broken",
    "py-gaps",
    "py-src-layout",
    "py-stubs",
    "rs-macros",
    "rs-stubs",
    "rs-targets",
    "rs-workspace",
    "ts-stubs",
    "ts-workspace",
];

/// Indexes fixture `name` in a scratch directory and loads every base relation.
fn loaded(name: &str) -> (tempfile::TempDir, Program, Store) {
    let t = scratch(name);
    run_ok(&["index", "--quiet"], t.path());
    let idx = andon::index::load(t.path()).expect("index loads").expect("index exists");
    let prog = datalog::builtin_program();
    let store = datalog::load(&prog, &idx, None).expect("facts load");
    (t, prog, store)
}

/// Every derived and computed relation, rendered and sorted.
fn derived_text(prog: &Program, store: &Store) -> String {
    let mut out = String::new();
    for (i, r) in prog.rels.iter().enumerate() {
        if r.kind == RelKind::Base {
            continue;
        }
        for row in store.sorted_rows(prog, i) {
            out.push_str(&explain::render(prog, store, i, row));
            out.push('\n');
        }
    }
    out
}

/// Names the derived relations whose rows differ between two stores over the same strings.
fn differences(prog: &Program, a: &Store, b: &Store) -> Vec<String> {
    prog.rels
        .iter()
        .enumerate()
        .filter(|(i, r)| r.kind != RelKind::Base && a.rels[*i] != b.rels[*i])
        .map(|(i, r)| format!("{} (compiled {} rows, run-time {} rows)", r.name, a.rels[i].len(), b.rels[i].len()))
        .collect()
}

#[test]
fn derivations_match_the_expected_snapshots() {
    let update = std::env::var("UPDATE_EXPECT").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    for name in FIXTURES {
        let (_t, prog, mut store) = loaded(name);
        datalog::run_compiled(&prog, &mut store, None);
        let actual = derived_text(&prog, &store);
        let path = crate::support::fixtures().join(name).join("derived.expected");
        if update {
            fs::write(&path, &actual).unwrap();
            continue;
        }
        let expected = fs::read_to_string(&path).unwrap_or_default();
        if expected != actual {
            failures
                .push(format!("{name}: derived.expected differs (UPDATE_EXPECT=1 rewrites it)\n--- actual:\n{actual}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn both_engines_derive_the_same_relations_on_every_fixture() {
    for name in FIXTURES {
        let (_t, prog, store) = loaded(name);
        let mut compiled = store.clone();
        datalog::run_compiled(&prog, &mut compiled, None);
        let mut runtime = store;
        datalog::run_runtime(&prog, &mut runtime, None);
        let diff = differences(&prog, &compiled, &runtime);
        assert!(diff.is_empty(), "{name}: the engines disagree on {diff:?}");
        // And the fixture exercises the rules: something beyond stages is derived.
        let wires = prog.relation("WireImport").unwrap();
        if !matches!(*name, "broken" | "rs-targets" | "py-stubs" | "rs-stubs" | "ts-stubs") {
            assert!(!compiled.rels[wires].is_empty(), "{name}: no wire imports derived");
        }
    }
}

#[test]
fn the_gap_fixture_fires_every_gap_candidate() {
    let (_t, prog, mut store) = loaded("py-gaps");
    datalog::run_compiled(&prog, &mut store, None);
    let text = derived_text(&prog, &store);
    for expected in [
        r#"BrokenImport("src/billing/invoice.py", 2, "vanished", "orders")"#,
        r#"UndeclaredDependency("orders", "toml")"#,
        r#"UnusedDependency("billing", "requests")"#,
        r#"StubHandoff("orders", "billing", "refund", "src/orders/model.py", 11, "not-implemented", "exact")"#,
        r#"StageMarker("billing", "src/billing/invoice.py", 3, "TODO")"#,
        r#"SameCycle("billing", "orders")"#,
        r#"StageCycle(0, "billing")"#,
        r#"ModuleCycle(0, "src/billing/invoice.py")"#,
        r#"WireConfidence("billing", "orders", "exact")"#,
    ] {
        assert!(text.contains(expected), "missing {expected} in\n{text}");
    }
    // Declared and used dependencies are not reported: yaml (PyYAML) and attr (attrs).
    assert!(!text.contains(r#"UnusedDependency("orders", "PyYAML")"#), "{text}");
    assert!(!text.contains(r#"UnusedDependency("billing", "attrs")"#), "{text}");
    assert!(!text.contains(r#"UndeclaredDependency("orders", "yaml")"#), "{text}");
}

// ---- generated fact sets -----------------------------------------------------------------------

/// Base relations the built-in rules read, filled with random rows over small value pools so joins
/// and negations hit.
fn generated(prog: &Program, rows: &[(usize, Vec<u8>)]) -> Store {
    let mut store = Store::new(prog, andon::facts::CONSTANTS);
    let pool: Vec<u32> = {
        let mut p: Vec<u32> = (0..6).map(|i| store.syms.intern(&format!("v{i}"))).collect();
        for c in ["exact", "heuristic", "normal", "dev", "cargo", "npm", "python", "tsconfig", "static", "todo"] {
            p.push(store.syms.intern(c));
        }
        p
    };
    let read: Vec<usize> = (0..prog.rels.len()).filter(|&i| prog.rels[i].kind == RelKind::Base).collect();
    for (sel, vals) in rows {
        let rel = read[sel % read.len()];
        let cols = &prog.rels[rel].columns;
        let row: Vec<u32> = cols
            .iter()
            .enumerate()
            .map(|(k, (_, t))| {
                let v = vals.get(k).copied().unwrap_or(0) as usize;
                if *t == andon::dialect::Ty::Int { (v % 4) as u32 } else { pool[v % pool.len()] }
            })
            .collect();
        store.rels[rel].data.extend(row);
    }
    for r in &mut store.rels {
        r.normalize();
    }
    store
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]
    #[test]
    fn both_engines_agree_on_generated_facts(
        rows in proptest::collection::vec((0usize..64, proptest::collection::vec(0u8..40, 6)), 0..400)
    ) {
        let prog = datalog::builtin_program();
        let base = generated(&prog, &rows);
        let mut compiled = base.clone();
        datalog::run_compiled(&prog, &mut compiled, None);
        let mut runtime = base;
        datalog::run_runtime(&prog, &mut runtime, None);
        let diff = differences(&prog, &compiled, &runtime);
        prop_assert!(diff.is_empty(), "the engines disagree on {:?}", diff);
    }
}

// ---- the commands ------------------------------------------------------------------------------

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn query_json_has_columns_and_sorted_rows_of_names_and_paths() {
    let t = scratch("rs-workspace");
    let out = run_ok(&["query", ".", "Wire(producer, consumer), Stage(consumer, root)", "--format", "json"], t.path());
    let v = json(&out);
    assert_eq!(v["columns"], serde_json::json!(["producer", "consumer", "root"]));
    assert_eq!(v["rows"], serde_json::json!([["acme-core", "acme-app", "crates/app"]]));
    assert_eq!(v["schema_version"], 1);
    // Integers stay numbers; rows are sorted by value, not by id.
    let out = run_ok(
        &["query", "Import(path, line, spec, \"static\"), path = \"crates/app/src/main.rs\"", "--format", "json"],
        t.path(),
    );
    let rows = json(&out)["rows"].as_array().unwrap().clone();
    assert!(rows.len() >= 2, "{rows:?}");
    assert!(rows.iter().all(|r| r[1].is_u64()), "{rows:?}");
    let lines: Vec<u64> = rows.iter().map(|r| r[1].as_u64().unwrap()).collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
}

#[test]
fn query_supports_negation_comparison_and_csv() {
    let t = scratch("py-gaps");
    // Stages with no outgoing wire that are still imported by nobody else: none here (a cycle).
    let out = run_ok(&["query", "Stage(s, _), !Wire(s, _)", "--format", "csv"], t.path());
    assert_eq!(stdout(&out), "s\n");
    let out = run_ok(&["query", "Defines(p, n, k, line), line >= 7, k != \"method\"", "--format", "csv"], t.path());
    let text = stdout(&out);
    assert!(text.starts_with("p,n,k,line\n"), "{text}");
    assert_eq!(text, "p,n,k,line\nsrc/orders/model.py,refund,function,11\n");
    // Without the kind filter the method `total` (line 7) is there too.
    let out = run_ok(&["query", "Defines(p, n, k, line), line >= 7", "--format", "csv"], t.path());
    assert!(stdout(&out).contains("src/orders/model.py,total,method,7\n"), "{}", stdout(&out));
    // `x = <bound>` binds a new variable; a constant on the right works too.
    let out = run_ok(&["query", "Stage(s, r), x = s, y = 7, y > 6", "--format", "csv"], t.path());
    assert_eq!(stdout(&out), "s,r,x,y\nbilling,src/billing,billing,7\norders,src/orders,orders,7\n");
    // Strings compare by text, not by id.
    let out = run_ok(&["query", "Stage(s, _), s < \"c\"", "--format", "csv"], t.path());
    assert_eq!(stdout(&out), "s\nbilling\n");
}

#[test]
fn user_rules_add_relations_and_recursion() {
    let t = scratch("py-gaps");
    let rules = t.path().join("mine.dl");
    fs::write(
        &rules,
        "// files that reach each other through imports\nDepends(a, b) :- ModuleEdge(a, b).\nDepends(a, c) :- Depends(a, b), ModuleEdge(b, c).\n",
    )
    .unwrap();
    let out = run_ok(&["query", "--rules", "mine.dl", "Depends(a, a)", "--format", "json"], t.path());
    let v = json(&out);
    assert_eq!(v["rows"], serde_json::json!([["src/billing/invoice.py"], ["src/orders/model.py"]]));
    // The schema lists user relations next to the built-in ones.
    let out = run_ok(&["query", "--rules", "mine.dl", "--schema", "--format", "json"], t.path());
    let names: Vec<String> =
        json(&out)["relations"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap().to_string()).collect();
    for required in [
        "File",
        "Stage",
        "InStage",
        "Defines",
        "Import",
        "Resolves",
        "Marker",
        "Wire",
        "Reaches",
        "BrokenImport",
        "UnusedDependency",
        "Depends",
    ] {
        assert!(names.iter().any(|n| n == required), "--schema lacks {required}");
    }
}

/// Runs a query expected to be refused with exit 2; returns stderr.
fn refused(dir: &Path, args: &[&str]) -> String {
    let out = run(args, dir);
    assert_eq!(out.status.code(), Some(2), "{args:?} should exit 2:\n{}\n{}", stdout(&out), stderr(&out));
    stderr(&out)
}

#[test]
fn query_errors_point_at_line_and_column_and_exit_2() {
    let t = scratch("rs-workspace");
    let d = t.path();
    let e = refused(d, &["query", "Wier(p, c)"]);
    assert!(e.contains("query:1:1: unknown relation `Wier`; did you mean `Wire`?"), "{e}");
    let e = refused(d, &["query", "Wire(p, c, x)"]);
    assert!(e.contains("query:1:1: `Wire` takes 2 arguments (producer: sym, consumer: sym), not 3"), "{e}");
    let e = refused(d, &["query", "Wire(p, c), x != p"]);
    assert!(e.contains("query:1:13: variable `x` is not bound"), "{e}");
    let e = refused(d, &["query", "Wire(p c)"]);
    assert!(e.contains("query:1:8: expected `,` or `)`"), "{e}");
    let e = refused(d, &["query", "Import(p, \"one\", s, k)"]);
    assert!(e.contains("query:1:11: column `line` of `Import` is an int"), "{e}");
    let e = refused(d, &["query", "Wire(p, c), p < 3"]);
    assert!(e.contains("cannot compare a sym with an int"), "{e}");
    fs::write(d.join("bad.dl"), "Win(x) :- Stage(x, _), !Lose(x).\nLose(x) :- Stage(x, _), !Win(x).\n").unwrap();
    let e = refused(d, &["query", "--rules", "bad.dl", "Win(x)"]);
    assert!(e.contains("bad.dl:") && e.contains("unstratifiable negation"), "{e}");
    fs::write(d.join("typo.dl"), "\nMine(x) :- Stag(x, _).\n").unwrap();
    let e = refused(d, &["query", "--rules", "typo.dl", "Mine(x)"]);
    assert!(e.contains("typo.dl:2:12: unknown relation `Stag`; did you mean `Stage`?"), "{e}");
    fs::write(d.join("base.dl"), "File(\"x\", \"rust\").\n").unwrap();
    let e = refused(d, &["query", "--rules", "base.dl", "File(x, _)"]);
    assert!(e.contains("base.dl:1:1: `File` is a base relation"), "{e}");
    let e = refused(d, &["query", "--rules", "missing.dl", "File(x, _)"]);
    assert!(e.contains("missing.dl: cannot read rules"), "{e}");
}

#[test]
fn explain_shows_one_derivation_down_to_facts() {
    let t = scratch("rs-workspace");
    let out = run_ok(&["query", "Reaches(p, c)", "--explain"], t.path());
    let text = stdout(&out);
    assert!(text.contains("[rule rules/stream.dl:"), "{text}");
    assert!(text.contains("Resolves(\"crates/app/src/main.rs\""), "{text}");
    assert!(text.contains("[fact]"), "{text}");
    let out = run_ok(&["query", "Reaches(p, c)", "--explain", "--format", "json"], t.path());
    let v = json(&out);
    let ex = &v["explanations"][0];
    assert_eq!(ex["by"], "rule");
    // Down to base facts: some leaf is a fact.
    let s = ex.to_string();
    assert!(s.contains("\"by\":\"fact\""), "{s}");
}

#[test]
fn explain_of_recursive_facts_is_well_founded() {
    let t = scratch("py-gaps");
    let out = run_ok(&["query", "Reaches(a, a)", "--explain", "--format", "json"], t.path());
    let v = json(&out);
    assert_eq!(v["rows"].as_array().unwrap().len(), 2);
    for ex in v["explanations"].as_array().unwrap() {
        assert!(!ex.to_string().contains("elided"), "{ex}");
    }
}

#[test]
fn stream_json_lists_stages_wires_order_and_cycles() {
    let t = scratch("py-gaps");
    let v = json(&run_ok(&["stream", "--format", "json"], t.path()));
    let stages: Vec<&str> = v["stages"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(stages, ["billing", "orders"]);
    assert_eq!(v["stages"][0]["root"], "src/billing");
    let wires = v["wires"].as_array().unwrap();
    assert_eq!(wires.len(), 2);
    assert_eq!(wires[1]["producer"], "orders");
    assert_eq!(wires[1]["consumer"], "billing");
    assert_eq!(wires[1]["imports"], 1);
    assert_eq!(wires[1]["symbols"], serde_json::json!(["Order", "refund", "vanished"]));
    assert_eq!(v["order"], serde_json::json!(["billing", "orders"]));
    assert_eq!(v["cycles"], serde_json::json!([["billing", "orders"]]));

    let t = scratch("py-src-layout");
    let v = json(&run_ok(&["stream", "--format", "json"], t.path()));
    // `tests/` holds test files only: no stage
    assert_eq!(v["order"], serde_json::json!(["acme_core", "acme_api"]));
    assert_eq!(v["cycles"], serde_json::json!([]));
}

#[test]
fn stream_renders_dot_and_mermaid() {
    let t = scratch("ts-workspace");
    let dot = stdout(&run_ok(&["stream", "--format", "dot"], t.path()));
    assert!(dot.starts_with("digraph stream {"), "{dot}");
    assert!(dot.contains("\"@acme/core\" -> \"@acme/app\" [label=\"2\"]"), "{dot}");
    let mm = stdout(&run_ok(&["stream", "--format", "mermaid"], t.path()));
    assert!(mm.starts_with("flowchart LR\n"), "{mm}");
    assert!(mm.contains("s0[\"@acme/core\"]") && mm.contains("s0 -->|2| s1"), "{mm}");
}

#[test]
fn why_prints_the_shortest_chain_hop_by_hop() {
    let t = scratch("py-src-layout");
    let out = run_ok(&["why", "tests", "acme_core"], t.path());
    let text = stdout(&out);
    // `tests/` holds test files only: no stage, but a directory `why` still walks
    assert!(text.contains("tests (directory) depends on acme_core (stage) in 2 hops"), "{text}");
    assert!(text.lines().filter(|l| l.starts_with("  ") && l.contains(".py:")).count() == 2, "{text}");
    let v = json(&run_ok(&["why", ".", "tests", "acme_core", "--format", "json"], t.path()));
    assert_eq!(v["found"], true);
    let hops = v["hops"].as_array().unwrap();
    assert_eq!(hops.len(), 2);
    assert!(hops[0]["path"].as_str().unwrap().starts_with("tests/"));
    assert!(hops[0]["line"].as_u64().unwrap() > 0);
    // No chain the other way: exit 1.
    let out = run(&["why", "acme_core", "tests"], t.path());
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("no chain"));
    // Unknown names: exit 2 with a suggestion.
    let out = run(&["why", "acme_cor", "tests"], t.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("did you mean `acme_core`?"), "{}", stderr(&out));
}

#[test]
fn query_no_index_refuses_a_stale_index_with_exit_3() {
    let t = scratch("rs-workspace");
    let out = run(&["query", "--no-index", "File(p, _)"], t.path());
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    run_ok(&["index", "--quiet"], t.path());
    run_ok(&["query", "--no-index", "File(p, _)"], t.path());
    fs::write(t.path().join("crates/core/src/new.rs"), "pub fn x() {}\n").unwrap();
    let out = run(&["query", "--no-index", "File(p, _)"], t.path());
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("stale"), "{}", stderr(&out));
}
