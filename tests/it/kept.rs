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
            let explained = json(&run_ok(&["query", q, "--no-index", "--explain", "--format", "json"], d));
            let mut rows: Vec<String> = explained["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    r.as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.to_string().trim_matches('"').to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect();
            let mut want: Vec<String> = a.lines().skip(1).map(str::to_string).collect();
            rows.sort();
            want.sort();
            assert_eq!(rows, want, "{fixture}: {q} explained has other rows");
        }
    }
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

#[test]
fn a_rule_file_named_like_a_built_in_one_is_evaluated_with_its_rules() {
    // a user's `rules/stream.dl` is not the built-in file of that name
    let t = scratch("py-gaps");
    let d = t.path();
    run_ok(&["index", ".", "--quiet"], d);
    let plain = query(d, "Wire(p, c)", &[]);
    assert!(d.join(STREAM_FILE).exists());
    write_files(d, &[("rules/stream.dl", "Wire(\"made-up\", s) :- Stage(s, _).\n")]);
    let with_rule = query(d, "Wire(p, c)", &["--rules", "rules/stream.dl"]);
    assert!(with_rule.contains("made-up,"), "the rule's rows are there:\n{with_rule}");
    assert_eq!(query(d, "Wire(p, c)", &[]), plain);
}

#[test]
fn the_command_line_answers_from_what_is_kept_for_these_facts() {
    // a row kept under the index's stamp (planted here through the library) is what the query,
    // `andon stream` and the loop read: they recall, not derive; after an edit they derive again
    let t = scratch("rs-workspace");
    let d = t.path();
    run_ok(&["index", ".", "--quiet"], d);
    let idx = andon::index::load(d).unwrap().unwrap();
    let prog = andon::datalog::builtin_program();
    let view = &andon::datalog::kept::STREAM;
    let mut store = andon::datalog::kept::derive(&prog, &idx, view, false, andon::datalog::Budget::UNLIMITED).unwrap();
    let wire = prog.relation("Wire").unwrap();
    let stage = store.syms.str(store.rels[prog.relation("Stage").unwrap()].iter().next().unwrap()[0]).to_string();
    let (a, b) = (store.syms.intern("planted"), store.syms.intern(&stage));
    store.rels[wire].data.extend([a, b]);
    store.rels[wire].normalize();
    andon::datalog::kept::keep(&prog, &idx.stamp, view, &store);
    assert!(query(d, "Wire(p, c)", &[]).contains(&format!("planted,{stage}")), "the query recalls");
    let stream = run_ok(&["stream", ".", "--format", "json", "--quiet"], d);
    assert!(String::from_utf8_lossy(&stream.stdout).contains("planted"), "andon stream recalls");
    write_files(d, &[("notes.rs", "pub fn noted() {}\n")]);
    run_ok(&["index", ".", "--quiet"], d);
    assert!(!query(d, "Wire(p, c)", &[]).contains("planted"), "other facts: derived again");
}

/// Indexes `fixture`, answers `q` (keeping the stream), applies `edit` and indexes again: the
/// answer after the edit must be a fresh derivation's and differ from the one before. Returns the
/// answer after.
fn edit_derives_again(fixture: &str, q: &str, edit: impl Fn(&Path)) -> String {
    let t = scratch(fixture);
    let d = t.path();
    run_ok(&["index", ".", "--quiet"], d);
    let before = query(d, q, &[]);
    assert!(d.join(STREAM_FILE).exists());
    edit(d);
    run_ok(&["index", ".", "--quiet"], d);
    let after = query(d, q, &[]);
    std::fs::remove_file(d.join(STREAM_FILE)).unwrap();
    assert_eq!(after, query(d, q, &[]), "{fixture}: after an edit the answer is a fresh derivation's");
    assert_ne!(before, after, "{fixture}: the edit changes the answer");
    after
}

#[test]
fn an_edit_derives_again_and_never_answers_from_the_old_facts() {
    // a new stage importing an existing one adds a wire
    let after = edit_derives_again("py-gaps", "Wire(p, c)", |d| {
        let stages = query(d, "Stage(s, r)", &[]);
        let (stage, _) = stages.lines().nth(1).and_then(|l| l.split_once(',')).expect("a stage");
        write_files(d, &[("newstage/__init__.py", format!("import {}\n", stage.replace('-', "_")))]);
    });
    assert!(after.contains(",newstage"), "{after}");
}

#[test]
fn an_edit_inside_an_existing_file_derives_again() {
    // the same paths, other facts: the key covers every segment's checksum
    edit_derives_again("py-gaps", "WireImport(p, c, f, l, t, k)", |d| {
        let init = d.join("src/orders/__init__.py");
        let text = std::fs::read_to_string(&init).unwrap();
        std::fs::write(&init, format!("{text}from billing.invoice import invoice_for\n")).unwrap();
    });
}

#[test]
fn an_edit_that_leaves_the_whole_repo_facts_derives_again() {
    // a qualified path in a function body changes the file's detail facts alone (resolution and
    // stages stand): the key still changes, and the new reference carries the wire
    let after = edit_derives_again("rs-workspace", "WireReference(p, c, f, l)", |d| {
        write_files(
            d,
            &[("crates/app/src/util.rs", "/* FIXME: remove */\npub fn noop() { acme_core::a::thing(); }\n")],
        );
    });
    assert!(after.contains("crates/app/src/util.rs,2"), "the new reference: {after}");
}
