//! One stage and no wire (R31): the stream is valid, and the stage's public API is its
//! wire-equivalent contract. The loop proves it as the stage's own wire; a change of the API makes
//! the proof stale and reopens it, as a wire's surface does; the first converged cycle is not
//! hardened until the contract is proven.

use std::path::Path;

use serde_json::Value;

use crate::support::{calc_repo, json, run, write_files};

/// `andon loop --format json` until it converges or hardens (at most `n` steps): every step.
fn loop_until_settled(d: &Path, n: usize) -> Vec<Value> {
    let mut steps = Vec::new();
    for _ in 0..n {
        let o = run(&["loop", "--format", "json", "-q"], d);
        let v = json(&o);
        let done = matches!(v["next"]["action"].as_str(), Some("converged" | "hardened"));
        steps.push(v);
        if done {
            break;
        }
    }
    steps
}

/// The evidence records of the ledger about wire `calc -> calc`.
fn own_wire_proofs(d: &Path) -> Vec<andon::ledger::Evidence> {
    let (_, state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    // the proofs (a stale proof's marker names no gap)
    let own = |e: &&andon::ledger::Evidence| e.gap.is_some() && e.wire.producer == "calc" && e.wire.consumer == "calc";
    state.evidence.values().filter(own).cloned().collect()
}

#[test]
fn a_lone_stage_is_valid_and_its_public_api_is_a_contract_the_loop_proves() {
    let t = calc_repo("def add(a, b):\n    return a + b\n");
    let d = t.path();
    // the stream: one stage, no wire, a success
    let o = run(&["stream", "--format", "json"], d);
    assert_eq!(o.status.code(), Some(0));
    let s = json(&o);
    assert_eq!(s["stages"].as_array().unwrap().len(), 1, "{s:#}");
    assert_eq!(s["wires"], serde_json::json!([]), "no wire is invented: {s:#}");
    // the loop proves the stage's contract itself, and the first cycle is not hardened
    let steps = loop_until_settled(d, 4);
    let (_, _, records) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let opened = records.iter().find_map(|r| match &r.event {
        andon::ledger::Event::GapOpened { source, summary, wire, .. } if source == "UnprovenWire" => {
            Some((summary.clone(), wire.clone()))
        }
        _ => None,
    });
    let (summary, wire) = opened.expect("the stage's contract is a gap to prove");
    assert!(summary.contains("public API"), "{summary}");
    assert_eq!(wire.map(|w| (w.producer, w.consumer)), Some(("calc".into(), "calc".into())));
    let last = steps.last().unwrap();
    assert_eq!(last["next"]["action"], "converged", "{last:#}");
    let proofs = own_wire_proofs(d);
    assert_eq!(proofs.len(), 1, "{proofs:?}");
    assert_eq!(proofs[0].verdict, andon::ledger::Verdict::Proven);
    assert!(proofs[0].crossing.keys().any(|k| k.ends_with("calc/ops.py:add")), "the API is its surface: {proofs:?}");
    assert!(proofs[0].crossing.keys().all(|k| !k.starts_with("tests/")), "tests are not the API: {proofs:?}");
    // the stage's lane, from the rung of its proof (a structural proof: the fast lane)
    let q = run(&["query", "LedgerStageLane(s, lane)", "--format", "json", "-q"], d);
    assert_eq!(json(&q)["rows"], serde_json::json!([["calc", "fast"]]), "{}", String::from_utf8_lossy(&q.stdout));
    let status = json(&run(&["status", "--format", "json"], d));
    assert_eq!(status["stages"][0]["lane"], "fast", "{status:#}");
    // nothing changed: the next cycle hardens
    let again = loop_until_settled(d, 2);
    assert_eq!(again.last().unwrap()["next"]["action"], "hardened", "{:#}", again.last().unwrap());
}

#[test]
fn a_changed_public_api_reopens_the_lone_stage_contract() {
    let t = calc_repo("def add(a, b):\n    return a + b\n");
    let d = t.path();
    loop_until_settled(d, 4);
    assert_eq!(loop_until_settled(d, 2).last().unwrap()["next"]["action"], "hardened");
    // a body edit keeps the contract
    write_files(d, &[("calc/ops.py", "def add(a, b):\n    return b + a\n")]);
    let body = loop_until_settled(d, 2);
    assert_eq!(body.last().unwrap()["next"]["action"], "hardened", "{:#}", body.last().unwrap());
    assert_eq!(own_wire_proofs(d).len(), 1);
    // a signature change is a new contract: the proof is stale, the wire is proven again, and
    // that cycle is not hardened
    write_files(d, &[("calc/ops.py", "def add(a, b, c=0):\n    return a + b + c\n")]);
    let steps = loop_until_settled(d, 4);
    let reopened =
        steps.iter().any(|v| v["delta"].to_string().contains("unknown") || v["notes"].to_string().contains("stale"));
    assert!(reopened, "{steps:#?}");
    assert_eq!(steps.last().unwrap()["next"]["action"], "converged", "{:#}", steps.last().unwrap());
    let proofs = own_wire_proofs(d);
    assert_eq!(proofs.len(), 2, "proven again on the new API: {proofs:?}");
    assert_ne!(proofs[0].surface, proofs[1].surface);
}

#[test]
fn an_import_of_a_missing_name_inside_the_lone_stage_refutes_its_contract() {
    let t = calc_repo("def add(a, b):\n    return a + b\n");
    let d = t.path();
    write_files(d, &[("calc/extra.py", "from calc.ops import add, subtract\n")]);
    crate::support::commit_all(d);
    let steps = loop_until_settled(d, 3);
    let last = steps.last().unwrap();
    assert_ne!(last["next"]["action"], "converged", "{last:#}");
    assert_ne!(last["next"]["action"], "hardened", "{last:#}");
    let proofs = own_wire_proofs(d);
    let refuted = proofs.iter().find(|e| e.verdict == andon::ledger::Verdict::Refuted);
    let refuted = refuted.unwrap_or_else(|| panic!("{proofs:?}"));
    assert_eq!(refuted.tier, Some(2));
    assert!(refuted.references.iter().any(|r| r.contains("`subtract`")), "{refuted:?}");
    // no fix was proposed: the next step is to change the code, or a person overrides it
    let detail = last["next"]["detail"].as_str().unwrap();
    assert!(detail.contains("change the code") && detail.contains("extractor-limitation"), "{last:#}");
}
