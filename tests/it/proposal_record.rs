//! The proposal's record (R67, R69, R74, R125): an interview of load-bearing forks recorded with
//! the proposal, never a confirmation for a local+reversible change; a human report beside the
//! JSON of each proposal and each verification; an authorization halt that shows the proposal
//! and the two ways on.

use std::path::Path;

use serde_json::json;

use crate::support::{commit_all, json, run, shop_trial};

/// `andon propose --json -` with `doc` on standard input.
fn propose_json(d: &Path, doc: &serde_json::Value) -> std::process::Output {
    use std::io::Write;
    let mut child = crate::support::andon()
        .args(["propose", "--json", "-", "--format", "json"])
        .current_dir(d)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(doc.to_string().as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The trial after one loop step, and the gap it picked (the broken import).
fn picked() -> (tempfile::TempDir, String) {
    let t = shop_trial();
    let v = json(&run(&["loop", "--format", "json", "-q"], t.path()));
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    (t, gap)
}

fn proposal(gap: &str, radius: &str, question: &str) -> serde_json::Value {
    json!({ "gap": gap, "blast_radius": radius, "approach": "structural", "reason": "the export resolves the import",
            "description": "define and export total_of", "write_set": ["catalog/prices.py", "catalog/__init__.py"],
            "interview": [{ "question": question, "recommended": "names", "answer": "names" }] })
}

#[test]
fn a_local_change_never_asks_for_a_confirmation() {
    let (t, gap) = picked();
    let d = t.path();
    let o = propose_json(d, &proposal(&gap, "local+reversible", "Should I proceed with the change?"));
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    let v = json(&o);
    assert!(v["problems"][0].as_str().unwrap().contains("asks for a confirmation"), "{v:#}");
    assert!(!d.join(format!("analysis/andon/proposals/{gap}.json")).exists(), "nothing written");
    // a change above local+reversible may be confirmed
    let o = propose_json(d, &proposal(&gap, "hard-to-reverse", "Should I proceed with the change?"));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn the_interview_is_recorded_and_each_step_writes_its_human_report() {
    let (t, gap) = picked();
    let d = t.path();
    let o = propose_json(d, &proposal(&gap, "local+reversible", "Does total_of take names or items?"));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let report = std::fs::read_to_string(d.join(format!("analysis/andon/proposals/{gap}.md"))).unwrap();
    assert!(report.contains("names or items") && report.contains("`catalog/prices.py`"), "{report}");
    run(&["loop", "-q"], d);
    let (_, _, records) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let interview = records.iter().find_map(|r| match &r.event {
        andon::ledger::Event::ProposalRecorded { gap: g, interview, .. } if *g == gap => Some(interview.clone()),
        _ => None,
    });
    let interview = interview.expect("the proposal is recorded");
    assert_eq!(interview.len(), 1);
    assert_eq!(interview[0].recommended, "names");
    // the fix, verified: the evidence's human report beside its JSON
    crate::support::fix_the_trial_import(d);
    commit_all(d);
    let o = run(&["verify", "--gap", &gap, "-q"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let evidence = std::fs::read_to_string(d.join(format!("analysis/andon/evidence/{gap}.md"))).unwrap();
    assert!(evidence.contains("**Verdict:** proven") && evidence.contains("`catalog/prices.py`"), "{evidence}");
    // its JSON went into the ledger as verify recorded it: no file waits for the loop
    assert!(!d.join(format!("analysis/andon/evidence/{gap}.json")).exists());
    let (_, state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert!(state.gap_evidence.get(&gap).is_some_and(|e| !e.is_empty()));
}

#[test]
fn an_authorization_halt_shows_the_proposal_and_both_ways_on() {
    let (t, gap) = picked();
    let d = t.path();
    let o = propose_json(d, &proposal(&gap, "hard-to-reverse", "Does total_of take names or items?"));
    assert_eq!(o.status.code(), Some(0));
    let o = run(&["loop"], d);
    assert_eq!(o.status.code(), Some(11));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    for want in [
        "define and export total_of",
        "catalog/prices.py, catalog/__init__.py",
        "blast radius hard-to-reverse",
        &format!("andon authorize {gap}"),
        &format!("andon skip {gap}"),
    ] {
        assert!(text.contains(want), "`{want}` missing from:\n{text}");
    }
    // the stop wrote an evidence record (R80): the authorization note, proving nothing
    let (_, state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let last = state.gap_evidence[&gap].last().map(|id| state.evidence[id].clone()).expect("an evidence record");
    assert_eq!((last.approach.as_str(), last.verdict), ("authorization", andon::ledger::Verdict::Unknown));
    assert!(last.claim.contains("hard-to-reverse") && last.evidence.contains("define and export total_of"), "{last:?}");
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

/// How many `proposal_recorded` records the ledger of `d` holds.
fn proposals_recorded(d: &Path) -> usize {
    let (_, _, records) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    records.iter().filter(|r| matches!(r.event, andon::ledger::Event::ProposalRecorded { .. })).count()
}

#[test]
fn a_proposal_left_behind_by_a_run_killed_after_its_write_is_never_recorded_twice() {
    let (t, gap) = picked();
    let d = t.path();
    let o = propose_json(d, &proposal(&gap, "local+reversible", "Does total_of take names or items?"));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let file = d.join(format!("analysis/andon/proposals/{gap}.json"));
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(run(&["loop", "-q"], d).status.code(), Some(0));
    assert_eq!(proposals_recorded(d), 1);
    assert!(!file.exists(), "taken in and removed");
    // the run was killed between its write and the removal: the file is back as it was read
    std::fs::write(&file, &bytes).unwrap();
    let o = run(&["loop", "--format", "json", "-q"], d);
    assert_eq!(proposals_recorded(d), 1, "recorded once: {}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stdout).contains("already taken in"), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(!file.exists(), "removed");
    let lc = run(&["ledger", "check"], d);
    assert_eq!(lc.status.code(), Some(0), "{}", String::from_utf8_lossy(&lc.stdout));
}

#[test]
fn a_run_killed_by_the_kernel_right_after_its_write_records_its_step_once() {
    if !crate::support::strace_works() {
        return;
    }
    let (t, gap) = picked();
    let d = t.path();
    let o = propose_json(d, &proposal(&gap, "local+reversible", "Does total_of take names or items?"));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let file = d.join(format!("analysis/andon/proposals/{gap}.json"));
    // SIGKILL at the removal of the proposal, which comes after the ledger's append
    let killed = std::process::Command::new("strace")
        .args(["-f", "-q", "-o", "/dev/null", "-P"])
        .arg(format!("./analysis/andon/proposals/{gap}.json"))
        .args(["-e", "trace=unlink,unlinkat", "-e", "inject=unlink,unlinkat:signal=SIGKILL"])
        .arg(env!("CARGO_BIN_EXE_andon"))
        .args(["loop", "-q"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(!killed.status.success(), "the run was killed");
    assert!(file.exists(), "the run died before it removed its input");
    assert_eq!(proposals_recorded(d), 1, "the write landed");
    run(&["loop", "-q"], d);
    assert_eq!(proposals_recorded(d), 1, "and is not repeated");
    assert!(!file.exists());
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

/// A shop trial in `dir` whose ledger is in the shared `ledger` directory under `id`.
fn shared_trial(ledger: &Path, id: &str) -> tempfile::TempDir {
    let t = crate::support::shop_trial();
    let toml = std::fs::read_to_string(t.path().join("andon.toml")).unwrap();
    std::fs::write(
        t.path().join("andon.toml"),
        format!("ledger_dir = \"{}\"\nrepo_id = \"{id}\"\n{toml}", ledger.display()),
    )
    .unwrap();
    commit_all(t.path());
    t
}

/// The shop trial in `d` proven by the loop: loop, propose, fix, commit, verify, loop.
fn proves_the_trial(d: &Path) {
    let v = json(&run(&["loop", "--format", "json", "-q"], d));
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    let o = propose_json(d, &proposal(&gap, "local+reversible", "Does total_of take names or items?"));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    run(&["loop", "-q"], d);
    crate::support::fix_the_trial_import(d);
    commit_all(d);
    assert_eq!(run(&["verify", "--gap", &gap, "-q"], d).status.code(), Some(0));
    run(&["loop", "-q"], d);
}

#[test]
fn records_copied_from_a_siblings_log_in_a_shared_ledger_dir_never_pass() {
    let shared = tempfile::tempdir().unwrap();
    let (a, b) = (shared_trial(shared.path(), "a"), shared_trial(shared.path(), "b"));
    // the sibling proves the wire: loop, propose, fix, verify, loop
    proves_the_trial(b.path());
    // this repository saw the broken import
    run(&["loop", "-q"], a.path());
    let blocked = run(&["check", "-q"], a.path());
    assert_eq!(blocked.status.code(), Some(1), "{}", String::from_utf8_lossy(&blocked.stdout));
    let (log_a, log_b) = (shared.path().join("a/ledger.jsonl"), shared.path().join("b/ledger.jsonl"));
    let (text_a, text_b) = (std::fs::read_to_string(&log_a).unwrap(), std::fs::read_to_string(&log_b).unwrap());
    let mine = text_a.lines().count();
    // the sibling's records past what this log holds, copied onto it
    let copied: Vec<&str> = text_b.lines().skip(mine).collect();
    assert!(copied.len() >= 4, "{copied:?}");
    for n in [copied.len(), 5.min(copied.len()), 4] {
        std::fs::write(&log_a, format!("{text_a}{}\n", copied[..n].join("\n"))).unwrap();
        let _ = run(&["ledger", "repair"], a.path());
        let lc = run(&["ledger", "check"], a.path());
        assert_eq!(lc.status.code(), Some(1), "{n} copied: {}", String::from_utf8_lossy(&lc.stdout));
        let ck = run(&["check", "-q"], a.path());
        assert_eq!(ck.status.code(), Some(1), "{n} copied: {}", String::from_utf8_lossy(&ck.stdout));
        let st = run(&["status", "--format", "json", "-q"], a.path());
        assert!(!String::from_utf8_lossy(&st.stdout).contains("\"proven\""), "{n} copied: status shows no proof");
        std::fs::write(&log_a, &text_a).unwrap();
    }
}

#[test]
fn a_siblings_whole_log_copied_over_this_one_names_commits_this_repository_never_had() {
    let (a, b) = (shop_trial(), shop_trial());
    // the sibling is another repository: its history differs from the first commit on
    crate::support::git(b.path(), &["commit", "--amend", "-qm", "the sibling"]);
    proves_the_trial(b.path());
    run(&["loop", "-q"], a.path());
    assert_eq!(run(&["check", "-q"], a.path()).status.code(), Some(1), "blocked before the copy");
    // the sibling's log and view, whole, over this one's; no ref vouches here (a fresh clone)
    for f in ["ledger.jsonl", "ledger.md"] {
        let from = b.path().join("analysis/andon/ledger").join(f);
        std::fs::copy(from, a.path().join("analysis/andon/ledger").join(f)).unwrap();
    }
    crate::support::git(a.path(), &["update-ref", "-d", "refs/andon/ledger"]);
    let lc = run(&["ledger", "check"], a.path());
    let said = String::from_utf8_lossy(&lc.stdout).into_owned();
    assert_eq!(lc.status.code(), Some(1), "{said}");
    assert!(said.contains("another repository's log"), "{said}");
    let ck = run(&["check", "-q"], a.path());
    assert_eq!(ck.status.code(), Some(1), "{}", String::from_utf8_lossy(&ck.stdout));
    assert!(String::from_utf8_lossy(&ck.stdout).contains("another repository's log"));
    // the sibling's own log stands in its own repository
    assert_eq!(run(&["ledger", "check"], b.path()).status.code(), Some(0));
    // a log that names no root commit (an older ledger, or one whose header was rewritten and its
    // links computed again) is judged by its records' base commits, which this history lacks
    let log = a.path().join("analysis/andon/ledger/ledger.jsonl");
    let parsed = andon::ledger::parse(&std::fs::read_to_string(&log).unwrap());
    let header = andon::ledger::Header { root_commit: None, ..parsed.header.unwrap() };
    let mut text = format!("{}\n", serde_json::to_string(&header).unwrap());
    let mut links = andon::ledger::chain::Chain::new(&header);
    for (_, mut r) in parsed.records {
        r.prev = Some(links.link());
        links.push(&r);
        text.push_str(&format!("{}\n", serde_json::to_string(&r).unwrap()));
    }
    std::fs::write(&log, &text).unwrap();
    // and its view rendered again, as andon would
    let rewritten = andon::ledger::parse(&text);
    let (state, _) = andon::ledger::fold(&rewritten);
    let records: Vec<andon::ledger::Record> = rewritten.records.into_iter().map(|(_, r)| r).collect();
    std::fs::write(a.path().join("analysis/andon/ledger/ledger.md"), andon::ledger::render(&header, &state, &records))
        .unwrap();
    let lc = run(&["ledger", "check"], a.path());
    let said = String::from_utf8_lossy(&lc.stdout);
    assert_eq!(lc.status.code(), Some(1), "{said}");
    assert!(said.contains("not in this repository's history"), "{said}");
    assert_eq!(run(&["check", "-q"], a.path()).status.code(), Some(1));
}
