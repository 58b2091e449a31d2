//! One agenda from the ledger: `andon status` and `andon loop` name the same next step and
//! constraint after every step of a run, `andon propose` refuses any gap but the loop's pick, a gap
//! gone from the scan is closed by the fix that removed it or set aside as vanished, and a wire's
//! status says whether anything on it is broken.

use serde_json::Value;

use crate::support::{git, json, run, shop_trial as trial, write_files};
use andon::ledger::{self, BlastRadius, Event, Evidence, GapKind, Header, LedgerError, Location, Verdict, Wire};

/// The `next` (action, gap) and `constraint` (producer, consumer) of a loop or status document.
fn agenda(v: &Value) -> (Value, Value, Value, Value) {
    (
        v["next"]["action"].clone(),
        v["next"]["gap"].clone(),
        v["constraint"]["producer"].clone(),
        v["constraint"]["consumer"].clone(),
    )
}

/// `andon status` names what the last `andon loop` named.
fn agrees(d: &std::path::Path, last_loop: &Value, after: &str) {
    let status = json(&run(&["status", "--format", "json"], d));
    assert_eq!(agenda(&status), agenda(last_loop), "after {after}: status {status:#}\nloop {last_loop:#}");
}

/// One `andon loop --format json`, and that status agrees with it.
fn step(d: &std::path::Path) -> Value {
    let o = run(&["loop", "--format", "json", "-q"], d);
    let v = json(&o);
    agrees(d, &v, "andon loop");
    v
}

/// The gap `id` as the loop last listed it.
fn summary(v: &Value, id: &str) -> String {
    let gaps = v["gaps"].as_array().unwrap();
    let g = gaps.iter().find(|g| g["id"] == id).unwrap_or_else(|| panic!("{id} not listed: {v:#}"));
    g["summary"].as_str().unwrap().to_string()
}

/// The fix of a picked gap of the trial: (approach, write-set, files written).
fn fix_of(summary: &str) -> (&'static str, Vec<&'static str>, Vec<(&'static str, &'static str)>) {
    if summary.contains("`total_of`") {
        let prices = "PRICES = {\"apple\": 3, \"pear\": 4}\n\n\ndef price_of(name):\n    return PRICES[name]\n\n\n\
                      def discount(amount, percent):\n    # TODO: apply the percentage discount\n    raise NotImplementedError\n\n\n\
                      def total_of(names):\n    return sum(price_of(n) for n in names)\n";
        let init = "\"\"\"Product catalog.\"\"\"\nfrom catalog.prices import price_of, total_of\n\n__all__ = [\"price_of\", \"total_of\"]\n";
        (
            "structural",
            vec!["catalog/prices.py", "catalog/__init__.py"],
            vec![("catalog/prices.py", prices), ("catalog/__init__.py", init)],
        )
    } else if summary.contains("marker") {
        let prices = "PRICES = {\"apple\": 3, \"pear\": 4}\n\n\ndef price_of(name):\n    return PRICES[name]\n\n\n\
                      def discount(amount, percent):\n    return amount * (100 - percent) / 100\n\n\n\
                      def total_of(names):\n    return sum(price_of(n) for n in names)\n";
        // with a test that fails without the fix (red first)
        let test = "import unittest\n\nfrom catalog.prices import discount\n\n\nclass DiscountTest(unittest.TestCase):\n\
                    \x20   def test_discount(self):\n        self.assertEqual(discount(200, 10), 180)\n";
        (
            "executed",
            vec!["catalog/prices.py", "tests/test_prices.py"],
            vec![("catalog/prices.py", prices), ("tests/test_prices.py", test)],
        )
    } else if summary.contains("has no tests") {
        let test = "from catalog.prices import price_of\n\n\ndef test_price():\n    assert price_of(\"apple\") == 3\n";
        ("executed", vec!["catalog/test_prices.py"], vec![("catalog/test_prices.py", test)])
    } else {
        panic!("the trial has no fix for: {summary}")
    }
}

#[test]
fn status_and_the_loop_agree_after_every_step_of_a_whole_run() {
    let t = trial();
    let d = t.path();
    let mut v = step(d);
    let (first, first_constraint) = (v["next"]["gap"].clone(), v["constraint"].clone());
    assert!(!first_constraint.is_null(), "the broken wire is the constraint: {v:#}");
    let mut fixes = 0;
    while !matches!(v["next"]["action"].as_str(), Some("converged" | "hardened")) {
        assert_eq!(v["next"]["action"], "propose", "{v:#}");
        let gap = v["next"]["gap"].as_str().unwrap().to_string();
        let (approach, write_set, files) = fix_of(&summary(&v, &gap));
        let mut args = vec!["propose", "--gap", &gap, "--blast-radius", "local+reversible", "--approach", approach];
        args.extend(["--reason", "the trial", "--description", "the fix"]);
        for f in &write_set {
            args.extend(["--write-set", f]);
        }
        let o = run(&args, d);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
        agrees(d, &v, "andon propose");
        v = step(d);
        assert_eq!(
            (v["next"]["action"].as_str(), v["next"]["gap"].as_str()),
            (Some("apply-and-verify"), Some(gap.as_str()))
        );
        write_files(d, &files);
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "fix"]);
        agrees(d, &v, "the fix");
        let o = run(&["verify", "--gap", &gap, "--format", "json"], d);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
        // verify recorded the proof: the next loop says what status says now
        v = step(d);
        fixes += 1;
        assert!(fixes < 8, "the run does not converge: {v:#}");
    }
    assert_eq!(v["next"]["action"], "converged", "{v:#}");
    let v = step(d);
    assert_eq!(v["verdict"]["outcome"], "hardened", "{v:#}");
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
    // closing means proven: the failing command closed on the broken import's fix, the TODO on
    // the stub's, and nothing vanished
    let (_, state, _) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let first = &state.gaps[first.as_str().unwrap()];
    let command = state.gaps.values().find(|g| g.source == "FailingCommand").expect("the failing command's gap");
    assert_eq!(command.resolved_by, first.resolved_by, "{command:?}");
    assert!(state.gaps.values().all(|g| g.status == ledger::GapStatus::Closed), "{:?}", state.gaps);
    let status = json(&run(&["status", "--format", "json"], d));
    assert_eq!(status["vanished"], serde_json::json!([]));
}

#[test]
fn a_proposal_for_another_gap_than_the_picked_one_is_refused_until_a_person_sets_it_aside() {
    let t = trial();
    let d = t.path();
    let v = step(d);
    let picked = v["next"]["gap"].as_str().unwrap().to_string();
    let other = v["gaps"].as_array().unwrap().iter().map(|g| g["id"].as_str().unwrap()).find(|g| *g != picked).unwrap();
    let propose = |gap: &str| {
        run(
            &["propose", "--gap", gap, "--blast-radius", "local+reversible", "--approach", "executed", "--reason", "r"]
                .into_iter()
                .chain(["--description", "d", "--write-set", "catalog/prices.py", "--format", "json"])
                .collect::<Vec<_>>(),
            d,
        )
    };
    let o = propose(other);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
    let r = json(&o);
    assert_eq!(r["picked"], picked.as_str(), "{r:#}");
    assert!(r["problems"][0].as_str().unwrap().contains(&format!("the loop works on gap `{picked}`")), "{r:#}");
    assert!(!d.join(format!("analysis/andon/proposals/{other}.json")).exists(), "nothing written");
    // in progress, it is still the pick
    assert_eq!(propose(&picked).status.code(), Some(0));
    step(d);
    assert_eq!(propose(other).status.code(), Some(2));
    // a person skips it: the loop picks another anyway, and a proposal for that one is taken
    let o = run(&["skip", &picked, "--by", "lead", "--reason", "later"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let status = json(&run(&["status", "--format", "json"], d));
    let next = status["next"]["gap"].as_str().unwrap().to_string();
    assert_ne!(next, picked);
    let refused =
        v["gaps"].as_array().unwrap().iter().map(|g| g["id"].as_str().unwrap()).find(|g| *g != picked && *g != next);
    if let Some(g) = refused {
        assert_eq!(propose(g).status.code(), Some(2), "{g} is not the pick");
    }
    assert_eq!(propose(&next).status.code(), Some(0), "{status:#}");
    let v = step(d);
    assert_eq!(v["next"]["gap"], next.as_str(), "{v:#}");
}

#[test]
fn a_wire_with_nothing_broken_and_no_proof_yet_is_unproven() {
    let t = crate::support::three_stages();
    let d = t.path();
    // core -> api has a broken import; api -> cli has nothing broken and no proof yet
    let v = json(&run(&["loop", "--max-passes", "0", "--format", "json", "-q"], d));
    let wires: Vec<(String, String)> = v["ledger"]["wires"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                format!("{} -> {}", w["producer"].as_str().unwrap(), w["consumer"].as_str().unwrap()),
                w["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(wires.contains(&("core -> api".into(), "broken/unproven".into())), "{wires:?}");
    assert!(wires.contains(&("api -> cli".into(), "unproven".into())), "{wires:?}");
    let status = String::from_utf8_lossy(&run(&["status"], d).stdout).into_owned();
    assert!(status.contains("api -> cli : unproven (no evidence)"), "{status}");
    assert!(status.contains("core -> api : broken/unproven (no evidence)"), "{status}");
}

fn header() -> Header {
    Header { andon_ledger: 1, andon: "0".into(), rules: "r".into(), repo: "x".into(), root_commit: None }
}

fn opened(id: &str, kind: GapKind, wire: Option<Wire>, path: &str) -> Event {
    Event::GapOpened {
        gap: id.into(),
        gap_kind: kind,
        stage: "core".into(),
        wire,
        location: Location { path: path.into(), line: Some(1) },
        on_constraint: false,
        summary: "a gap".into(),
        source: "StageMarker".into(),
        estimated_radius: Some(BlastRadius::LocalReversible),
    }
}

fn proof(id: &str, gap: &str, radius: Option<BlastRadius>) -> Event {
    Event::EvidenceRecorded {
        evidence: Evidence {
            id: id.into(),
            gap: Some(gap.into()),
            wire: Wire { producer: "core".into(), consumer: "core".into() },
            approach: "executed".into(),
            verdict: Verdict::Proven,
            hold: false,
            tier: None,
            artifact: None,
            claim: "the fix holds".into(),
            evidence: "exit 0".into(),
            fix: None,
            references: Vec::new(),
            surface: None,
            radius,
            tree: Some("t1".into()),
            rung: Some(3),
            commit: None,
            red_first: None,
            reason: None,
            capability: None,
            crossing: Default::default(),
        },
    }
}

fn proposal(gap: &str) -> Event {
    Event::ProposalRecorded {
        gap: gap.into(),
        blast_radius: BlastRadius::LocalReversible,
        approach: "executed".into(),
        reason: "r".into(),
        description: "d".into(),
        write_set: vec!["src/core/a.py".into()],
        base_commit: "0".into(),
        proposer: None,
        judging: Default::default(),
        interview: Vec::new(),
    }
}

fn closed(gap: &str, evidence: &str) -> Event {
    Event::GapClosed { gap: gap.into(), evidence: evidence.into() }
}

fn converged(cycle: u32, passes: u32, hardened: bool) -> Event {
    Event::CycleConverged {
        cycle,
        passes,
        sub_cycles: 0,
        proven: Vec::new(),
        constraint: None,
        intent: None,
        constraint_wire: None,
        hardened,
        environment_blocked: Vec::new(),
        overrides: Vec::new(),
    }
}

#[test]
fn the_ledger_takes_vanished_gaps_fixes_that_remove_gaps_and_hardening_and_refuses_forged_ones() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("analysis/andon/ledger");
    let vanished = |gap: &str| Event::GapVanished { gap: gap.into(), tree: "t1".into() };
    // G1 is fixed and proven; G2, in the file the fix wrote, closes on that proof; G3 vanishes
    let good = vec![
        opened("G1", GapKind::Bug, None, "src/core/a.py"),
        opened("G2", GapKind::Feature, None, "src/core/a.py"),
        opened("G3", GapKind::Feature, None, "src/core/b.py"),
        proposal("G1"),
        proof("E1", "G1", Some(BlastRadius::LocalReversible)),
        closed("G1", "E1"),
        closed("G2", "E1"),
        vanished("G3"),
        converged(1, 0, false),
        converged(2, 0, true),
    ];
    ledger::append(&dir, &header(), &good, 1).expect("every record is a transition the ledger takes");
    let o = run(&["ledger", "check"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let (_, state, _) = ledger::load(&dir).unwrap().unwrap();
    assert_eq!(state.gaps["G3"].status, ledger::GapStatus::Vanished);
    assert_eq!(state.gaps["G2"].resolved_by.as_deref(), Some("E1"));
    let before = std::fs::read(dir.join(ledger::LOG_FILE)).unwrap();
    // a gap closing on its own evidence with no proposal is what a vanished gap once was: an older
    // ledger keeps loading, and the gap reads as vanished, never as proven
    let legacy = t.path().join("legacy");
    let old = vec![opened("G4", GapKind::Feature, None, "src/core/c.py"), proof("E4", "G4", None), closed("G4", "E4")];
    ledger::append(&legacy, &header(), &old, 1).expect("an older ledger's record");
    assert_eq!(ledger::load(&legacy).unwrap().unwrap().1.gaps["G4"].status, ledger::GapStatus::Vanished);
    let forged: Vec<(Vec<Event>, &str)> = vec![
        // another gap's evidence that proves no applied fix
        (
            vec![
                opened("G4", GapKind::Feature, None, "src/core/c.py"),
                opened("G5", GapKind::Feature, None, "src/core/c.py"),
                proof("E5", "G4", None),
                closed("G5", "E5"),
            ],
            "is not the proof of a verified fix",
        ),
        // a fix's proof its own gap was never closed on
        (
            vec![
                opened("G6", GapKind::Bug, None, "src/core/d.py"),
                opened("G7", GapKind::Bug, None, "src/core/d.py"),
                proposal("G6"),
                proof("E6", "G6", Some(BlastRadius::LocalReversible)),
                closed("G7", "E6"),
            ],
            "is not the proof of a verified fix",
        ),
        // a closed or vanished gap does not vanish, nor close again
        (vec![vanished("G1")], "only an open gap vanishes"),
        (vec![closed("G3", "E1")], "is already vanished"),
        // hardening claimed by a cycle that settled a gap
        (
            vec![opened("G8", GapKind::Feature, None, "src/core/e.py"), vanished("G8"), converged(3, 0, true)],
            "claims to be hardened",
        ),
    ];
    for (events, want) in forged {
        match ledger::append(&dir, &header(), &events, 2) {
            Err(LedgerError::Refused(m)) => assert!(m.contains(want), "{want}: {m}"),
            other => panic!("{events:?} was taken: {other:?}"),
        }
        assert_eq!(std::fs::read(dir.join(ledger::LOG_FILE)).unwrap(), before);
    }
    // the same forgery written by hand is caught by `andon ledger check`
    let text = String::from_utf8(before).unwrap();
    let hand = format!("{text}{}\n", r#"{"seq":11,"at":3,"event":{"kind":"gap_vanished","gap":"G1","tree":"t1"}}"#);
    std::fs::write(dir.join(ledger::LOG_FILE), hand).unwrap();
    let o = run(&["ledger", "check"], t.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("only an open gap vanishes"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn a_failing_command_redefined_beside_a_verified_fix_vanishes_rather_than_closing_on_that_fix() {
    let t = trial();
    let d = t.path();
    let v = step(d);
    let wire = v["next"]["gap"].as_str().unwrap().to_string();
    assert!(summary(&v, &wire).contains("`total_of`"), "{v:#}");
    let (approach, mut write_set, files) = fix_of(&summary(&v, &wire));
    write_set.push("andon.toml");
    let mut args = vec!["propose", "--gap", &wire, "--blast-radius", "local+reversible", "--approach", approach];
    args.extend(["--reason", "r", "--description", "d"]);
    for f in &write_set {
        args.extend(["--write-set", f]);
    }
    assert_eq!(run(&args, d).status.code(), Some(0));
    step(d);
    // the real fix, and the failing command weakened beside it
    write_files(d, &files);
    let toml = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    let weakened = toml.replace("grep -q 'def total_of' catalog/prices.py &&", "true &&");
    assert_ne!(weakened, toml);
    std::fs::write(d.join("andon.toml"), weakened).unwrap();
    // verify refuses a fix that rewrites its judge; a person may still let it through
    let o = run(&["verify", "--gap", &wire, "--format", "json"], d);
    assert_eq!(o.status.code(), Some(11), "{}", String::from_utf8_lossy(&o.stdout));
    let o = run(&["authorize", &wire, "--by", "lead", "--reason", "the command moves"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let o = run(&["verify", "--gap", &wire, "--format", "json"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    step(d);
    let (_, state, _) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert_eq!(state.gaps[&wire].status, ledger::GapStatus::Closed);
    let command = state.gaps.values().find(|g| g.source == "FailingCommand").unwrap();
    assert_eq!(command.status, ledger::GapStatus::Vanished, "{command:?}");
    assert_eq!(command.resolved_by, None);
}
