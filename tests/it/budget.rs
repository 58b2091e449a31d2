//! Bounds on evaluation: the budgets of the run-time engine (rows per relation, memory estimate,
//! wall time) end a runaway query or rule contract with exit 2 naming the budget and the relation;
//! a cartesian product in a rule body is warned about; `check` costs linear time in its contracts.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{json, run, run_ok};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A small Python repository with `files` modules (each importing the next), indexed.
fn repo(files: usize) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::create_dir_all(d.join("pkg")).unwrap();
    std::fs::write(d.join("pkg/__init__.py"), "").unwrap();
    for i in 0..files {
        let next = (i + 1) % files;
        std::fs::write(d.join(format!("pkg/m{i}.py")), format!("from pkg import m{next}\n\nX{i} = m{next}\n")).unwrap();
    }
    run_ok(&["index", "-q"], d);
    t
}

/// A four-way cartesian product of `File`: (files + 1)^4 rows.
const CARTESIAN: &str = "File(a, x), File(b, y), File(c, z), File(d, w)";

/// Runs a query that must be stopped by a budget; returns its stderr.
fn stopped(dir: &Path, args: &[&str]) -> String {
    let started = Instant::now();
    let o = run(args, dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?} must stop with exit 2:\n{err}");
    assert!(started.elapsed() < Duration::from_secs(20), "{args:?} took {:?}", started.elapsed());
    assert!(o.stdout.is_empty(), "no partial answer: {}", String::from_utf8_lossy(&o.stdout));
    err
}

#[test]
fn the_row_budget_stops_a_query_by_flag_and_by_andon_toml() {
    let t = repo(30);
    let err = stopped(t.path(), &["query", "-q", "--max-rows", "1000", CARTESIAN]);
    assert!(err.contains("row budget") && err.contains("1000"), "{err}");
    assert!(err.contains("the query's answers"), "names the relation that grew: {err}");
    assert!(err.contains("--max-rows") && err.contains("query.max_rows"), "says how to raise it: {err}");
    std::fs::write(t.path().join("andon.toml"), "[query]\nmax_rows = 500\n").unwrap();
    let err = stopped(t.path(), &["query", "-q", CARTESIAN]);
    assert!(err.contains("row budget") && err.contains("500"), "{err}");
    // the flag overrides andon.toml; a query within its budget answers
    let o = run(&["query", "-q", "--max-rows", "100000000", "File(a, x), File(b, y)"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn the_row_budget_counts_distinct_rows() {
    // 31 × 31 bindings, but only 31 distinct answers: a projection stays within a budget of 100
    let t = repo(30);
    let o = run(&["query", "-q", "--max-rows", "100", "--format", "json", "File(a, x), File(b, y), a = a"], t.path());
    assert_eq!(o.status.code(), Some(2), "the query relation has 961 rows: {}", stderr(&o));
    let rules = t.path().join("p.dl");
    std::fs::write(&rules, "Some(a) :- File(a, _), File(_, _).\n").unwrap();
    let o = run(&["query", "-q", "--max-rows", "100", "--rules", "p.dl", "--format", "json", "Some(a)"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["count"], 31);
}

/// Four `File` atoms and a comparison no row passes: every combination is visited, none derived.
const FRUITLESS: &str = "File(a, x), File(b, y), File(c, z), File(d, w), a < d, d < a";

#[test]
fn the_time_budget_stops_a_query_by_flag_and_by_andon_toml() {
    // 151^4 ≈ 520 million combinations: far more than a second's work; no row grows
    let t = repo(150);
    let err = stopped(t.path(), &["query", "-q", "--timeout", "1", FRUITLESS]);
    assert!(err.contains("time budget (1 s)") && err.contains("the query's answers"), "{err}");
    assert!(err.contains("--timeout") && err.contains("query.timeout_secs"), "{err}");
    std::fs::write(t.path().join("andon.toml"), "[query]\ntimeout_secs = 1\n").unwrap();
    let err = stopped(t.path(), &["query", "-q", FRUITLESS]);
    assert!(err.contains("time budget (1 s)"), "{err}");
}

#[test]
fn the_memory_budget_stops_a_query_by_flag_and_by_andon_toml() {
    let t = repo(30);
    let err = stopped(t.path(), &["query", "-q", "--max-rows", "0", "--max-memory", "1", CARTESIAN]);
    assert!(err.contains("memory budget") && err.contains("1 MiB"), "{err}");
    assert!(err.contains("--max-memory") && err.contains("query.max_memory_mib"), "{err}");
    std::fs::write(t.path().join("andon.toml"), "[query]\nmax_memory_mib = 1\nmax_rows = 0\n").unwrap();
    let err = stopped(t.path(), &["query", "-q", CARTESIAN]);
    assert!(err.contains("memory budget"), "{err}");
}

#[test]
fn a_bad_query_table_names_the_line() {
    let t = repo(2);
    std::fs::write(t.path().join("andon.toml"), "[query]\nmax_rows = -3\n").unwrap();
    let o = run(&["query", "-q", "File(a, x)"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("andon.toml:2") && stderr(&o).contains("max_rows"), "{}", stderr(&o));
    std::fs::write(t.path().join("andon.toml"), "[query]\nmax_row = 3\n").unwrap();
    let o = run(&["query", "-q", "File(a, x)"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("query.max_rows"), "suggests the nearest key: {}", stderr(&o));
}

#[test]
fn a_rule_contract_over_budget_fails_check_with_exit_2() {
    let t = repo(150);
    let d = t.path();
    std::fs::write(
        d.join("quads.dl"),
        ".decl Violation(path: path, line: int, message: sym)\n\
         Quad(a, b, c, e) :- File(a, _), File(b, _), File(c, _), File(e, _).\n\
         Violation(a, 1, \"quad\") :- Quad(a, _, _, _), a = \"none\".\n",
    )
    .unwrap();
    let contract = "[[contract]]\nname = \"no quads\"\nkind = \"rule\"\nrules = \"quads.dl\"\n";
    std::fs::write(d.join("andon.toml"), format!("[query]\nmax_rows = 1000\n\n{contract}")).unwrap();
    let err = stopped(d, &["check", "-q"]);
    assert!(err.contains("no quads") && err.contains("row budget (1000 rows") && err.contains("`Quad`"), "{err}");
    assert!(err.contains("note: quads.dl:2:") && err.contains("atom 2 `File(b, _)`"), "names the product: {err}");
    assert!(!err.contains("verdict pass"), "{err}");
    // the flags override andon.toml
    std::fs::write(
        d.join("quads.dl"),
        format!(".decl Violation(path: path, line: int, message: sym)\nViolation(a, 1, \"x\") :- {FRUITLESS}.\n"),
    )
    .unwrap();
    let err = stopped(d, &["check", "-q", "--max-rows", "0", "--timeout", "1"]);
    assert!(err.contains("no quads") && err.contains("time budget (1 s)") && err.contains("`Violation`"), "{err}");
}

#[test]
fn a_cartesian_product_is_warned_about_and_still_answered() {
    let t = repo(3);
    let o = run(&["query", "-q", "--format", "json", "File(a, x), Module(p, m)"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("warning:") && err.contains("cartesian product"), "{err}");
    assert!(err.contains("atom 2 `Module(p, m)`") && err.contains("query:1:13"), "names the atom and where: {err}");
    let doc = json(&o);
    let w = &doc["warnings"][0];
    assert_eq!(w["kind"], "cartesian-product", "{doc:#}");
    assert_eq!(w["rule"], "query");
    assert_eq!(w["atom"], 2);
    assert!(doc["count"].as_u64().unwrap() > 0);
    // a connected body: no warning
    let o = run(&["query", "-q", "--format", "json", "File(a, x), Module(m, a)"], t.path());
    assert!(!stderr(&o).contains("cartesian"), "{}", stderr(&o));
    assert_eq!(json(&o)["warnings"], serde_json::json!([]));
    // in a rule file: named by file and line
    std::fs::write(t.path().join("r.dl"), "\nBoth(a, b) :- File(a, _), File(b, _).\n").unwrap();
    let o = run(&["query", "-q", "--rules", "r.dl", "Both(a, b)"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("r.dl:2") && stderr(&o).contains("`File(b, _)`"), "{}", stderr(&o));
}

#[test]
fn a_file_of_unclosed_brackets_is_too_complex_in_seconds_not_minutes() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::create_dir_all(d.join("pkg")).unwrap();
    std::fs::write(d.join("pkg/__init__.py"), "from pkg.parens import x\n").unwrap();
    // 200 KB each: without the budget the Python file alone took 25 s here (100 s at 400 KB)
    std::fs::write(d.join("pkg/parens.py"), "(".repeat(200_000)).unwrap();
    std::fs::write(d.join("pkg/brackets.ts"), "[".repeat(200_000)).unwrap();
    std::fs::write(d.join("pkg/parens.rs"), "(".repeat(200_000)).unwrap();
    let t0 = Instant::now();
    let out = run_ok(&["index"], d);
    let took = t0.elapsed();
    // the budget is a few seconds of processor time a file (four times that in a debug build)
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    for f in ["pkg/parens.py", "pkg/brackets.ts", "pkg/parens.rs"] {
        assert!(said.contains(&format!("{f}:1: too complex")), "{f}: {said}");
    }
    let facts = String::from_utf8_lossy(&run_ok(&["facts", "--relation", "OpenSurface"], d).stdout).into_owned();
    assert!(facts.contains("OpenSurface(\"pkg/parens.py\", \"too-complex\")"), "{facts}");
    // what imports it is never an exact absence: its surface is open
    let open = json(&run_ok(&["query", "SurfaceOpen(t)", "--format", "json"], d));
    assert!(open["rows"].to_string().contains("pkg/parens.py"), "{open}");
    // the next run reuses what was stored: no second budget spent
    let t0 = Instant::now();
    run_ok(&["index", "-q"], d);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}

/// `andon check` on `d` with one `rule` contract of rules file `text`: its exit code, stderr, and
/// how long it took.
fn check_rule(d: &Path, text: &str) -> (Option<i32>, String, Duration) {
    std::fs::write(d.join("r.dl"), text).unwrap();
    std::fs::write(d.join("andon.toml"), "[[contract]]\nname = \"r\"\nkind = \"rule\"\nrules = \"r.dl\"\n").unwrap();
    let t0 = Instant::now();
    let out = run(&["check", "--timeout", "5", "-q"], d);
    (out.status.code(), stderr(&out), t0.elapsed())
}

#[test]
fn a_huge_rule_body_a_million_brackets_and_a_huge_query_are_refused_at_once() {
    let t = repo(3);
    let d = t.path();
    // 100,000 atoms (2 MB): over the text limit; 40,000 (0.8 MB): over the body limit
    for n in [100_000usize, 40_000] {
        let body: Vec<String> = (0..n).map(|i| format!("File(p{i}, l{i})")).collect();
        let (code, err, took) = check_rule(d, &format!("Violation(p0, 1, \"m\") :- {}.\n", body.join(", ")));
        assert_eq!(code, Some(2), "{n}: {err}");
        assert!(took < Duration::from_secs(20), "{n} atoms took {took:?}");
        assert!(
            err.contains("bytes; the rule language reads at most") || err.contains("more than 256 literals"),
            "{err}"
        );
        assert!(err.len() < 4000, "the error is short: {} bytes", err.len());
    }
    // a million unclosed brackets: a syntax error, in linear time
    let (code, err, took) = check_rule(d, &format!("Violation(x) :- {}", "(".repeat(1_000_000)));
    assert_eq!(code, Some(2), "{err}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(err.contains("r.dl:1:17"), "{err}");
    // a query of 300 atoms: refused before it is planned, the long line cut around the column
    let q: Vec<String> = (0..300).map(|i| format!("File(p{i}, l{i})")).collect();
    let out = run(&["query", &q.join(", ")], d);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("more than 256 literals") && err.contains('…') && err.len() < 1000, "{err}");
}

#[test]
fn init_and_check_on_two_thousand_unwired_packages_take_seconds() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    for i in 0..2000 {
        let dir = d.join(format!("pkgs/p{i}"));
        std::fs::create_dir_all(dir.join(format!("src/p{i}"))).unwrap();
        std::fs::write(dir.join("pyproject.toml"), format!("[project]\nname = \"p{i}\"\nversion = \"0.1.0\"\n"))
            .unwrap();
        std::fs::write(dir.join(format!("src/p{i}/__init__.py")), format!("def f{i}():\n    return {i}\n")).unwrap();
    }
    run_ok(&["index", "-q"], d);
    let t0 = Instant::now();
    run_ok(&["init", "-q"], d);
    let init = t0.elapsed();
    let toml = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    assert!(toml.contains("kind = \"independence\"") && toml.contains("kind = \"acyclic\""), "{}", &toml[..500]);
    let t0 = Instant::now();
    run_ok(&["check", "-q"], d);
    let check = t0.elapsed();
    // both were about n³: 600 s and 27 s at this size; a pass per member now, linear in the graph
    assert!(init < Duration::from_secs(60) && check < Duration::from_secs(30), "init {init:?}, check {check:?}");
    // a planted import between two of them breaks independence, once
    std::fs::write(d.join("pkgs/p7/src/p7/__init__.py"), "import p8\n\ndef f7():\n    return 7\n").unwrap();
    let out = run(&["check", "--format", "json", "-q"], d);
    assert_eq!(out.status.code(), Some(1));
    let doc = json(&out);
    let findings = doc["findings"].as_array().unwrap();
    let independence: Vec<_> =
        findings.iter().filter(|f| f["contract"].as_str().unwrap_or("").starts_with("independent")).collect();
    assert_eq!(independence.len(), 1, "{doc:#}");
}
