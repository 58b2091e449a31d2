//! A person's decision needs a person: `authorize`, `defer`, `skip`, `override` and `confirm`
//! record only from a terminal where the gap id is typed back, with the operating-system user and
//! the terminal; from an agent's shell (no terminal), in CI or `--unattended` they are refused
//! (exit 2) and recorded as pending, never applied.

use andon::ledger;

use crate::support::{andon, at_terminal, json, run, run_piped, scratch};

/// A repository whose loop has run once: its ledger holds the picked gap.
fn looped() -> (tempfile::TempDir, String) {
    let t = scratch("py-gaps");
    let v = json(&run(&["loop", "--format", "json", "-q"], t.path()));
    let gap = v["picked"]["gap"].as_str().expect("a gap is picked").to_string();
    (t, gap)
}

fn state(dir: &std::path::Path) -> ledger::State {
    ledger::load(&dir.join("analysis/andon/ledger")).unwrap().unwrap().1
}

#[test]
fn a_decision_from_a_shell_without_a_terminal_is_refused_and_left_pending() {
    let (t, gap) = looped();
    let d = t.path();
    for action in ["defer", "skip", "authorize"] {
        let o = run_piped(&[action, &gap, "--by", "lead", "--reason", "the agent wants to finish"], d);
        assert_eq!(o.status.code(), Some(2), "{action}: {}", String::from_utf8_lossy(&o.stdout));
        assert!(String::from_utf8_lossy(&o.stdout).contains("standard input is not a terminal"));
    }
    let o = run_piped(
        &["override", &gap, "--evidence", "E1", "--basis", "stale-live-view", "--by", "lead", "--reason", "r"],
        d,
    );
    assert_eq!(o.status.code(), Some(2));
    let s = state(d);
    assert!(s.decisions.is_empty(), "no decision is applied: {:?}", s.decisions);
    assert_eq!(s.gaps[&gap].status, ledger::GapStatus::Open);
    let pending: Vec<&str> = s.pending_decisions.iter().map(|p| p.action.as_str()).collect();
    assert_eq!(pending, ["defer", "skip", "authorize", "override"]);
    // the loop does not move past the gap
    let v = json(&run(&["loop", "--format", "json", "-q"], d));
    assert_eq!(v["picked"]["gap"].as_str(), Some(gap.as_str()), "{v:#}");
}

#[test]
fn unattended_and_ci_refuse_even_at_a_terminal() {
    let (t, gap) = looped();
    let d = t.path();
    let o = at_terminal(&["skip", &gap, "--by", "lead", "--reason", "r", "--unattended"], d, &format!("{gap}\n"));
    assert_eq!(o.status.code(), Some(2));
    let o = andon()
        .args(["skip", &gap, "--by", "lead", "--reason", "r"])
        .current_dir(d)
        .env("CI", "true")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stdout).contains("CI"), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(state(d).decisions.is_empty());
}

#[test]
fn a_person_types_the_gap_back_and_the_decision_records_who_and_where() {
    let (t, gap) = looped();
    let d = t.path();
    // a wrong id typed back records nothing
    let o = at_terminal(&["skip", &gap, "--by", "lead", "--reason", "later"], d, "yes\n");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(state(d).decisions.is_empty());
    let o = at_terminal(&["skip", &gap, "--by", "lead", "--reason", "later"], d, &format!("{gap}\n"));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let s = state(d);
    let w = s.decisions[0].witness.clone().expect("the decision names who was at the terminal");
    assert!(w.terminal.starts_with("/dev/"), "{w:?}");
    assert!(!w.user.is_empty());
    assert_eq!(s.gaps[&gap].status, ledger::GapStatus::Skipped);
    let log = std::fs::read_to_string(d.join("analysis/andon/ledger/ledger.jsonl")).unwrap();
    assert!(log.contains("\"witness\":{\"user\":"), "{log}");
}

#[test]
fn a_decision_taken_later_answers_the_pending_one() {
    let (t, gap) = looped();
    let d = t.path();
    assert_eq!(run_piped(&["defer", &gap, "--by", "lead", "--reason", "r"], d).status.code(), Some(2));
    assert_eq!(state(d).pending_decisions.len(), 1);
    assert_eq!(run(&["defer", &gap, "--by", "lead", "--reason", "r"], d).status.code(), Some(0));
    assert!(state(d).pending_decisions.is_empty());
}
