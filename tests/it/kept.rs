//! Derived relations kept between runs (`.andon/derived-<view>.bin`): a run over the same facts
//! recalls them instead of deriving them again, and the answers are the same as a derivation's,
//! whatever happened to the file.

use std::path::Path;

use crate::support::*;

const STREAM_FILE: &str = ".andon/derived-stream.bin";
const SCAN_FILE: &str = ".andon/derived-loop-scan.bin";

/// Queries that read the stream's relations, alone and joined with facts from the index.
const QUERIES: &[&str] = &[
    "Wire(p, c), Stage(c, r)",
    "WireImport(p, c, f, l, t, k)",
    "Stage(s, r), !Wire(_, s)",
    "InStage(f, s), File(f, l)",
    "StreamOrder(s, n)",
    "WireSymbol(p, c, n, f, l, t), Defines(t, n, k, dl)",
    "ModuleCycle(a, b)",
];

fn query(dir: &Path, q: &str, extra: &[&str]) -> String {
    let mut args = vec!["query", q, "--no-index", "--format", "csv"];
    args.extend_from_slice(extra);
    String::from_utf8(run_ok(&args, dir).stdout).unwrap()
}

/// Every query's answer, the stream report and the kept file's bytes afterwards.
fn answers(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = QUERIES.iter().map(|q| query(dir, q, &[])).collect();
    out.push(String::from_utf8(run_ok(&["stream", ".", "--format", "json", "--quiet"], dir).stdout).unwrap());
    out
}

#[test]
fn kept_relations_answer_as_a_derivation_does_on_every_fixture() {
    for fixture in ["py-gaps", "rs-workspace", "ts-workspace", "py-src-layout", "ts-references", "rs-macros"] {
        let t = scratch(fixture);
        let d = t.path();
        run_ok(&["index", ".", "--quiet"], d);
        assert!(!d.join(STREAM_FILE).exists(), "{fixture}: indexing derives nothing");
        // each query derives (and keeps) the stream first, then recalls it
        let derived: Vec<String> = QUERIES
            .iter()
            .map(|q| {
                let _ = std::fs::remove_file(d.join(STREAM_FILE));
                query(d, q, &[])
            })
            .collect();
        assert!(d.join(STREAM_FILE).exists(), "{fixture}: a query keeps the stream");
        let recalled = answers(d);
        assert_eq!(derived[..], recalled[..QUERIES.len()], "{fixture}: recalled answers differ from derived ones");
        // --explain never takes kept relations: it walks their derivation, with the same answers
        for (q, a) in QUERIES.iter().zip(&derived) {
            let explained = run_ok(&["query", q, "--no-index", "--explain", "--format", "json"], d);
            let rows = json(&explained)["rows"].as_array().map_or(0, |r| r.len());
            assert_eq!(rows, a.lines().count().saturating_sub(1), "{fixture}: {q} explained has other rows");
        }
    }
}

#[test]
fn an_edit_derives_again_and_never_answers_from_the_old_facts() {
    let t = scratch("py-gaps");
    let d = t.path();
    run_ok(&["index", ".", "--quiet"], d);
    let before = query(d, "Wire(p, c)", &[]);
    assert!(d.join(STREAM_FILE).exists());
    // a new stage importing an existing one adds a wire
    let stages = query(d, "Stage(s, r)", &[]);
    let (stage, root) = stages.lines().nth(1).and_then(|l| l.split_once(',')).expect("a stage");
    let stage_import = stage.replace('-', "_");
    write_files(d, &[("newstage/__init__.py", format!("import {stage_import}\n"))]);
    run_ok(&["index", ".", "--quiet"], d);
    let after = query(d, "Wire(p, c)", &[]);
    let _ = std::fs::remove_file(d.join(STREAM_FILE));
    let fresh = query(d, "Wire(p, c)", &[]);
    assert_eq!(after, fresh, "after an edit the answer is a fresh derivation's ({stage} at {root})");
    assert_ne!(before, after, "the new stage's wire appears: {after}");
}

#[test]
fn a_damaged_kept_file_is_derived_again_and_replaced() {
    let t = scratch("rs-workspace");
    let d = t.path();
    run_ok(&["index", ".", "--quiet"], d);
    let good = answers(d);
    let kept = std::fs::read(d.join(STREAM_FILE)).unwrap();
    let mut flipped = kept.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("a flipped byte", flipped),
        ("truncated", kept[..kept.len() / 3].to_vec()),
        ("empty", Vec::new()),
        ("another file", b"ANDONDRV not a kept view at all".to_vec()),
    ];
    for (what, bytes) in cases {
        std::fs::write(d.join(STREAM_FILE), &bytes).unwrap();
        assert_eq!(answers(d), good, "{what}: the answers are a derivation's");
        assert_eq!(std::fs::read(d.join(STREAM_FILE)).unwrap(), kept, "{what}: the kept file is written again");
    }
    // a directory where the file goes: nothing is kept, the answers stand
    std::fs::remove_file(d.join(STREAM_FILE)).unwrap();
    std::fs::create_dir(d.join(STREAM_FILE)).unwrap();
    assert_eq!(answers(d), good, "a directory in the kept file's place");
}

#[test]
fn kept_rows_of_another_index_are_not_taken() {
    // two repositories with other facts: one's kept file copied into the other is not its own
    let (a, b) = (scratch("py-gaps"), scratch("ts-workspace"));
    for t in [&a, &b] {
        run_ok(&["index", ".", "--quiet"], t.path());
    }
    let own = query(b.path(), "Wire(p, c), Stage(c, r)", &[]);
    let _ = query(a.path(), "Wire(p, c), Stage(c, r)", &[]);
    std::fs::copy(a.path().join(STREAM_FILE), b.path().join(STREAM_FILE)).unwrap();
    assert_eq!(query(b.path(), "Wire(p, c), Stage(c, r)", &[]), own);
}

#[test]
fn a_rule_file_that_adds_to_a_kept_relation_is_evaluated_with_it() {
    let t = scratch("py-gaps");
    let d = t.path();
    run_ok(&["index", ".", "--quiet"], d);
    let plain = query(d, "Wire(p, c)", &[]);
    assert!(d.join(STREAM_FILE).exists());
    std::fs::write(d.join("extra.dl"), "Wire(\"made-up\", s) :- Stage(s, _).\n").unwrap();
    let with_rule = query(d, "Wire(p, c)", &["--rules", "extra.dl"]);
    assert!(with_rule.contains("made-up,"), "the rule's rows are there:\n{with_rule}");
    for line in plain.lines() {
        assert!(with_rule.lines().any(|l| l == line), "the built-in rows are there too: {line}");
    }
    // and the kept file still holds the built-in rows alone
    assert_eq!(query(d, "Wire(p, c)", &[]), plain);
}

#[test]
fn a_second_loop_recalls_what_the_first_derived_and_says_the_same() {
    let t = three_stages();
    let d = t.path();
    let first = run_ok(&["loop", "--format", "json"], d);
    assert!(d.join(SCAN_FILE).exists() && d.join(STREAM_FILE).exists(), "the loop keeps its views");
    // nothing changed: a second step recalls both views; with them removed it derives again
    let recalled = run(&["loop", "--format", "json"], d);
    for f in [SCAN_FILE, STREAM_FILE] {
        std::fs::remove_file(d.join(f)).unwrap();
    }
    let derived = run(&["loop", "--format", "json"], d);
    let view = |o: &std::process::Output| {
        let mut v = json(o);
        v.as_object_mut().unwrap().remove("delta");
        v.as_object_mut().unwrap().remove("ledger_seq");
        v.as_object_mut().unwrap().remove("recorded");
        v.as_object_mut().unwrap().remove("stream_changed");
        v
    };
    assert_eq!(recalled.status.code(), derived.status.code());
    assert_eq!(view(&recalled), view(&derived), "a recalled scan finds what a derived one finds");
    assert!(json(&first)["gaps"].as_array().is_some_and(|g| !g.is_empty()), "the fixture has gaps to find");
}

#[test]
fn preflight_reads_kept_relations_but_writes_none() {
    let t = three_stages();
    let d = t.path();
    run_ok(&["index", ".", "--quiet"], d);
    let _ = run(&["preflight", "--format", "json"], d);
    assert!(!d.join(STREAM_FILE).exists(), "preflight wrote a kept view");
}
