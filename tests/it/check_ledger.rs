//! `andon check` and the ledger (decision 13): where the repository has a ledger, `check` also
//! fails (exit 1, a finding per problem) on its integrity problems and on a wire that regressed
//! from proven; with a ledger and no contract it judges the ledger alone. Without a ledger nothing
//! changes.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use crate::support::{clean_three_stages, git, json, run, shop_trial};

const LOG: &str = "analysis/andon/ledger/ledger.jsonl";

/// `andon check --format json`: exit code and document.
fn check(d: &Path) -> (Option<i32>, Value) {
    let o = run(&["check", "--format", "json", "-q"], d);
    (o.status.code(), json(&o))
}

/// The findings of the ledger in a check document.
fn ledger_findings(v: &Value) -> Vec<Value> {
    v["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "ledger" && !is_hold(f)).cloned().collect()
}

fn is_hold(f: &Value) -> bool {
    f["message"].as_str().is_some_and(|m| m.starts_with("tier-1 hold"))
}

/// The loop's standing tier-1 holds among the findings: (path, line, tier).
fn holds(v: &Value) -> Vec<(String, u64, u64)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "ledger" && is_hold(f))
        .map(|f| (f["path"].as_str().unwrap().to_string(), f["line"].as_u64().unwrap(), f["tier"].as_u64().unwrap()))
        .collect()
}

/// Appends a half-written record to the ledger: the write of a killed writer.
fn tear(d: &Path) {
    let mut f = std::fs::OpenOptions::new().append(true).open(d.join(LOG)).unwrap();
    f.write_all(b"{\"seq\": 99, \"event\": {\"Pass").unwrap();
}

#[test]
fn without_a_ledger_and_contracts_check_still_refuses_to_run() {
    let t = shop_trial();
    let o = run(&["check", "-q"], t.path());
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_ledger_and_no_contract_is_judged_alone_and_a_torn_last_line_fails() {
    let t = shop_trial();
    let d = t.path();
    run(&["loop", "-q"], d);
    // an intact ledger: its one finding is the failing `[[command]]` the loop saw (the trial's)
    let (code, v) = check(d);
    assert_eq!(code, Some(1), "{v:#}");
    let found = ledger_findings(&v);
    assert_eq!(found.len(), 1, "{v:#}");
    assert!(found[0]["message"].as_str().unwrap().contains("the loop saw it fail"), "{v:#}");
    // the trial's broken import is the loop's standing tier-1 hold: it fails the gate too
    assert!(holds(&v).iter().all(|h| h.2 == 1) && !holds(&v).is_empty(), "{v:#}");
    tear(d);
    let (code, v) = check(d);
    assert_eq!(code, Some(1), "{v:#}");
    let found = ledger_findings(&v);
    assert_eq!(found.len(), 1, "{v:#}");
    assert_eq!(found[0]["path"], LOG);
    assert!(found[0]["message"].as_str().unwrap().contains("torn"), "{v:#}");
    assert!(found[0]["line"].as_u64().unwrap() > 1);
    // SARIF carries it under its own rule
    let o = run(&["check", "--format", "sarif", "-q"], d);
    assert_eq!(o.status.code(), Some(1));
    let sarif = json(&o);
    let results: Vec<&Value> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["message"]["text"].as_str().unwrap().contains("tier-1 hold"))
        .collect();
    assert_eq!(results.len(), 1, "{sarif:#}");
    let index = results[0]["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(sarif["runs"][0]["tool"]["driver"]["rules"][index]["name"], "ledger", "{sarif:#}");
    // set aside by repair, the ledger is intact again: only the failing command remains
    assert_eq!(run(&["ledger", "repair"], d).status.code(), Some(0));
    let (_, v) = check(d);
    let found = ledger_findings(&v);
    assert!(found.len() == 1 && found[0]["message"].as_str().unwrap().contains("the loop saw it fail"), "{v:#}");
}

#[test]
fn with_contracts_the_ledger_is_judged_beside_them() {
    let t = clean_three_stages(
        "[[contract]]\nname = \"no-cli-in-core\"\nkind = \"forbidden\"\nfrom = [\"core\"]\nto = [\"cli\"]\n",
    );
    let d = t.path();
    run(&["loop", "-q"], d);
    let (code, v) = check(d);
    assert_eq!(code, Some(0), "{v:#}");
    let names: Vec<&str> = v["contracts"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["no-cli-in-core", "(ledger)"], "{v:#}");
    tear(d);
    let (code, v) = check(d);
    assert_eq!(code, Some(1), "{v:#}");
    assert_eq!(ledger_findings(&v).len(), 1);
}

#[test]
fn a_wire_that_regressed_from_proven_fails_check() {
    let t = clean_three_stages("");
    let d = t.path();
    let v = json(&run(&["loop", "--format", "json", "-q"], d));
    assert_eq!(v["verdict"]["outcome"], "converged", "{v:#}");
    assert_eq!(check(d).0, Some(0));
    // api now imports a name core lacks: the proven wire core -> api is broken
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse, gone\n\n\ndef run(text):\n    return parse(text), gone\n",
    )
    .unwrap();
    run(&["loop", "-q"], d);
    let (code, v) = check(d);
    assert_eq!(code, Some(1), "{v:#}");
    let found = ledger_findings(&v);
    assert_eq!(found.len(), 1, "{v:#}");
    assert!(found[0]["message"].as_str().unwrap().contains("wire core -> api regressed from proven"), "{v:#}");
    // and the loop's tier-1 hold on the missing name fails it too (decision 13), even with no contract
    assert_eq!(holds(&v), [("src/api/__init__.py".to_string(), 1, 1)], "{v:#}");
    // with --base, a hold blocks only a change that touches its paths
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "broken api"]);
    let base = run(&["check", "-q", "--format", "json", "--base", "HEAD"], d);
    assert!(holds(&json(&base)).is_empty(), "{}", String::from_utf8_lossy(&base.stdout));
    std::fs::write(d.join("src/core/extra.py"), "X = 1\n").unwrap();
    let base = run(&["check", "-q", "--format", "json", "--base", "HEAD"], d);
    assert!(holds(&json(&base)).is_empty(), "an unrelated change");
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse, gone\n\n\ndef run(text):\n    return parse(text)\n",
    )
    .unwrap();
    let base = run(&["check", "-q", "--format", "json", "--base", "HEAD"], d);
    assert_eq!(base.status.code(), Some(1));
    assert_eq!(holds(&json(&base)), [("src/api/__init__.py".to_string(), 1, 1)]);
}

#[test]
fn an_edited_record_that_still_parses_fails_check_and_a_directory_in_the_log_s_place_too() {
    let t = shop_trial();
    let d = t.path();
    run(&["loop", "-q"], d);
    let log = std::fs::read_to_string(d.join(LOG)).unwrap();
    assert!(log.contains("\"catalog\""));
    std::fs::write(d.join(LOG), log.replacen("\"catalog\"", "\"katalog\"", 1)).unwrap();
    let (code, v) = check(d);
    assert_eq!(code, Some(1), "an edit the view disagrees with: {v:#}");
    assert!(!ledger_findings(&v).is_empty());
    std::fs::remove_file(d.join(LOG)).unwrap();
    std::fs::create_dir(d.join(LOG)).unwrap();
    let (code, v) = check(d);
    assert_eq!(code, Some(1), "{v:#}");
}
