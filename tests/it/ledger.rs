//! The ledger: strict records, one writer under a lock, refusals that write nothing, torn tails,
//! `andon ledger check`, and ledger facts in `andon query`.

use std::path::{Path, PathBuf};

use andon::ledger::{
    self, BlastRadius, Event, Evidence, GapKind, Header, LedgerError, Location, Verdict, Wire, WireStatus,
};

use crate::support::{json, run, scratch};

fn header() -> Header {
    Header {
        andon_ledger: ledger::FORMAT,
        andon: "0.1.0".into(),
        rules: "test".into(),
        repo: "check-py".into(),
        root_commit: None,
    }
}

fn wire() -> Wire {
    Wire { producer: "core".into(), consumer: "api".into() }
}

fn gap(id: &str) -> Event {
    Event::GapOpened {
        gap: id.into(),
        gap_kind: GapKind::Wire,
        stage: "api".into(),
        wire: Some(wire()),
        location: Location { path: "src/acme/api/routes.py".into(), line: Some(1) },
        on_constraint: true,
        summary: "the handoff is unproven".into(),
        source: "UnprovenWire".into(),
        estimated_radius: None,
    }
}

fn proposal(id: &str) -> Event {
    Event::ProposalRecorded {
        gap: id.into(),
        blast_radius: BlastRadius::LocalReversible,
        approach: "structural".into(),
        reason: "an import crosses the wire".into(),
        description: "import model from its module".into(),
        write_set: vec!["src/acme/api/routes.py".into()],
        base_commit: "0000000".into(),
        proposer: None,
        judging: Default::default(),
        interview: Vec::new(),
    }
}

fn evidence(id: &str, verdict: Verdict) -> Event {
    Event::EvidenceRecorded {
        evidence: Evidence {
            id: id.into(),
            gap: Some("G1".into()),
            wire: wire(),
            approach: "structural".into(),
            verdict,
            hold: false,
            tier: Some(1),
            artifact: None,
            claim: "api imports only what core exports".into(),
            evidence: "andon check: 0 findings".into(),
            fix: None,
            references: vec!["src/acme/api/routes.py:1".into()],
            surface: None,
            crossing: Default::default(),
            radius: None,
            tree: None,
            rung: None,
            commit: None,
            red_first: None,
            reason: None,
            capability: None,
        },
    }
}

fn pass(n: u32, gap: &str, advanced: bool, ceiling: BlastRadius, diff_hash: Option<&str>) -> Event {
    Event::PassClosed {
        pass: n,
        stage: "api".into(),
        wire: Some(wire()),
        gap: gap.into(),
        approach: "structural".into(),
        verdict: Verdict::Proven,
        advanced,
        ceiling,
        diff_hash: diff_hash.map(str::to_string),
    }
}

fn status(s: WireStatus, ev: &str) -> Event {
    Event::WireStatusChanged { wire: wire(), status: s, evidence: ev.into() }
}

/// A ledger with one gap proposed, proven and closed, and a wire that reopened once.
fn populated() -> (tempfile::TempDir, PathBuf) {
    let t = scratch("check-py");
    let dir = t.path().join("analysis/andon/ledger");
    ledger::append(&dir, &header(), &[gap("G1"), proposal("G1"), evidence("E1", Verdict::Proven)], 1).unwrap();
    ledger::append(
        &dir,
        &header(),
        &[
            status(WireStatus::Proven, "E1"),
            Event::GapClosed { gap: "G1".into(), evidence: "E1".into() },
            evidence("E2", Verdict::Refuted),
            status(WireStatus::BrokenOrUnproven, "E2"),
        ],
        2,
    )
    .unwrap();
    (t, dir)
}

fn bytes(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join(ledger::LOG_FILE)).unwrap()
}

#[test]
fn a_written_ledger_checks_and_renders() {
    let (t, dir) = populated();
    let text = String::from_utf8(bytes(&dir)).unwrap();
    assert!(text.starts_with("{\"andon_ledger\":2,"), "{text}");
    assert_eq!(text.lines().count(), 8, "a header and seven events, one per line");
    let o = run(&["ledger", "check", "--format", "json"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let v = json(&o);
    assert_eq!(v["verdict"]["outcome"], "valid");
    assert_eq!(v["state"]["gaps"], 1);
    let md = std::fs::read_to_string(dir.join(ledger::HUMAN_FILE)).unwrap();
    assert!(md.contains("| G1 | Wire | api | src/acme/api/routes.py:1 | closed | local+reversible | E1 |"), "{md}");
    // replay is deterministic and needs nothing but the log
    let a = ledger::load(&dir).unwrap().unwrap();
    let b = ledger::load(&dir).unwrap().unwrap();
    assert_eq!(a, b);
    assert_eq!(a.1.wires[&wire()].reopened, vec![7]);
}

#[test]
fn refused_events_write_nothing() {
    let (_t, dir) = populated();
    let before = bytes(&dir);
    let md_before = std::fs::read(dir.join(ledger::HUMAN_FILE)).unwrap();
    let refusals: Vec<(Vec<Event>, &str)> = vec![
        // R14: no wire status without a recorded evidence record
        (vec![status(WireStatus::Proven, "E9")], "never recorded"),
        // a status the evidence does not back
        (vec![status(WireStatus::Proven, "E2")], "does not back"),
        // a pass that skips the count
        (vec![pass(3, "G1", true, BlastRadius::LocalReversible, None)], "closes after pass 0"),
        // closing on evidence that does not prove
        (
            vec![gap("G2"), proposal("G2"), Event::GapClosed { gap: "G2".into(), evidence: "E2".into() }],
            "does not prove",
        ),
        // closing a gap that is not about the wire without a proposal (no blast radius)
        (
            vec![
                Event::GapOpened {
                    gap: "G3".into(),
                    gap_kind: GapKind::Bug,
                    stage: "api".into(),
                    wire: None,
                    location: Location { path: "src/acme/api/routes.py".into(), line: Some(1) },
                    on_constraint: false,
                    summary: "a bug".into(),
                    source: "StageMarker".into(),
                    estimated_radius: None,
                },
                Event::GapClosed { gap: "G3".into(), evidence: "E1".into() },
            ],
            "without a proposal",
        ),
        // a proposal without a declared write-set
        (
            vec![
                gap("G4"),
                Event::ProposalRecorded {
                    gap: "G4".into(),
                    blast_radius: BlastRadius::LocalReversible,
                    approach: "structural".into(),
                    reason: "r".into(),
                    description: "d".into(),
                    write_set: vec![],
                    base_commit: "0".into(),
                    proposer: None,
                    judging: Default::default(),
                    interview: Vec::new(),
                },
            ],
            "write-set",
        ),
        // a gap without a location
        (
            vec![Event::GapOpened {
                gap: "G5".into(),
                gap_kind: GapKind::Bug,
                stage: "api".into(),
                wire: None,
                location: Location { path: " ".into(), line: None },
                on_constraint: false,
                summary: "s".into(),
                source: "StageMarker".into(),
                estimated_radius: None,
            }],
            "no location",
        ),
        // authority raised for a gap that is not halted on authorization
        (
            vec![Event::AuthorizationRaised {
                gap: "G1".into(),
                by: "lead".into(),
                diff_hash: "h".into(),
                level: BlastRadius::HardToReverse,
                reason: "r".into(),
                witness: None,
            }],
            "not halted awaiting authorization",
        ),
    ];
    for (events, want) in refusals {
        match ledger::append(&dir, &header(), &events, 3) {
            Err(LedgerError::Refused(m)) => assert!(m.contains(want), "{m}"),
            other => panic!("{events:?} was not refused: {other:?}"),
        }
        assert_eq!(bytes(&dir), before, "a refusal leaves the ledger byte-identical");
        assert_eq!(std::fs::read(dir.join(ledger::HUMAN_FILE)).unwrap(), md_before);
    }
}

#[test]
fn hand_edits_are_caught_and_nothing_acts_on_them() {
    let (t, dir) = populated();
    let good = String::from_utf8(bytes(&dir)).unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (",\"blast_radius\":\"local+reversible\"", "", "ledger.jsonl:3: bad record: missing field `blast_radius`"),
        (
            "\"gap_kind\":\"wire\"",
            "\"gap_kind\":\"wire,bug\"",
            "ledger.jsonl:2: bad record: unknown variant `wire,bug`",
        ),
        ("\"on_constraint\":true", "\"on_constraint\":true,\"note\":\"ignore this failure\"", "unknown field `note`"),
        ("\"seq\":2,", "\"seq\":9,", "seq 9 where 2 was expected"),
    ];
    for (from, to, want) in cases {
        assert!(good.contains(from), "{from}");
        std::fs::write(dir.join(ledger::LOG_FILE), good.replacen(from, to, 1)).unwrap();
        let o = run(&["ledger", "check"], t.path());
        assert_eq!(o.status.code(), Some(1), "{from}");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains(want), "{from}: {out}");
        assert!(out.contains("andon: verdict invalid"), "{out}");
        assert!(matches!(ledger::load(&dir), Err(LedgerError::Invalid(_))));
        assert!(matches!(ledger::append(&dir, &header(), &[gap("G9")], 9), Err(LedgerError::Invalid(_))));
        // a query over ledger relations refuses the invalid ledger
        let o = run(&["query", "LedgerGap(g, k, s, st)", "-q"], t.path());
        assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
        assert!(String::from_utf8_lossy(&o.stderr).contains("the ledger is invalid"));
    }
    // the rendering is checked against the log
    std::fs::write(dir.join(ledger::LOG_FILE), &good).unwrap();
    let md = std::fs::read_to_string(dir.join(ledger::HUMAN_FILE)).unwrap();
    std::fs::write(dir.join(ledger::HUMAN_FILE), md.replace("| closed |", "| open |")).unwrap();
    let o = run(&["ledger", "check"], t.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("ledger.md: ledger.md disagrees with the log"));
}

#[test]
fn a_torn_last_line_is_reported_and_blocks_appends() {
    let (t, dir) = populated();
    let mut torn = bytes(&dir);
    torn.extend_from_slice(b"{\"seq\":8,\"at\":3,\"event\":{\"kind\":\"gap_op");
    std::fs::write(dir.join(ledger::LOG_FILE), &torn).unwrap();
    let o = run(&["ledger", "check"], t.path());
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("ledger.jsonl:9: the last line is torn"), "{out}");
    assert!(matches!(ledger::append(&dir, &header(), &[gap("G9")], 9), Err(LedgerError::Invalid(_))));
    assert_eq!(bytes(&dir), torn, "never dropped, never appended after");
}

#[test]
fn repair_sets_a_torn_line_aside_and_keeps_its_bytes() {
    let (t, dir) = populated();
    let whole = bytes(&dir);
    let tail = b"{\"seq\":8,\"at\":3,\"event\":{\"kind\":\"gap_op";
    let mut torn = whole.clone();
    torn.extend_from_slice(tail);
    std::fs::write(dir.join(ledger::LOG_FILE), &torn).unwrap();
    let o = run(&["ledger", "repair", "--format", "json"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let v = json(&o);
    assert_eq!(v["verdict"]["outcome"], "repaired");
    assert_eq!(v["next"]["action"], "loop");
    assert_eq!((v["set_aside"]["first_line"].as_u64(), v["set_aside"]["last_line"].as_u64()), (Some(9), Some(9)));
    let kept = t.path().join(v["set_aside"]["kept_in"].as_str().unwrap());
    assert_eq!(std::fs::read(kept).unwrap(), tail, "nothing is lost");
    assert_eq!(bytes(&dir), whole);
    assert_eq!(run(&["ledger", "check"], t.path()).status.code(), Some(0));
    ledger::append(&dir, &header(), &[gap("G9")], 9).expect("appends go on after the repair");
    let o = run(&["ledger", "repair"], t.path());
    assert!(String::from_utf8_lossy(&o.stdout).contains("andon: verdict unchanged"));
}

#[test]
fn a_write_cut_short_between_whole_lines_is_detected_and_repaired() {
    let (t, dir) = populated();
    let text = String::from_utf8(bytes(&dir)).unwrap();
    // the second write had four records; drop its last two whole lines
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8);
    let cut: String = lines[..6].iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join(ledger::LOG_FILE), &cut).unwrap();
    let o = run(&["ledger", "check"], t.path());
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("ledger.jsonl:5: the write that starts here is incomplete (2 record(s) missing"), "{out}");
    assert!(matches!(ledger::append(&dir, &header(), &[gap("G9")], 9), Err(LedgerError::Invalid(_))));
    let o = run(&["ledger", "repair", "--format", "json"], t.path());
    assert_eq!(json(&o)["set_aside"]["first_line"], 5, "the whole interrupted write, not just its tail");
    let first: String = lines[..4].iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(String::from_utf8(bytes(&dir)).unwrap(), first);
    assert_eq!(ledger::check(&dir).unwrap().0, vec![]);
}

#[test]
fn repair_refuses_a_hand_edited_ledger_and_changes_nothing() {
    let (t, dir) = populated();
    let text = String::from_utf8(bytes(&dir)).unwrap().replace("\"local+reversible\"", "\"sideways\"");
    let mut edited = text.into_bytes();
    edited.extend_from_slice(b"{\"seq\":9");
    std::fs::write(dir.join(ledger::LOG_FILE), &edited).unwrap();
    let o = run(&["ledger", "repair"], t.path());
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("andon: verdict refused (not repaired: line 3:"), "{out}");
    assert_eq!(bytes(&dir), edited);
}

#[test]
fn concurrent_writers_take_turns() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ledger");
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    ledger::append(&dir, &header(), &[gap(&format!("W{w}-{i}"))], 1).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let (_, state, records) = ledger::load(&dir).unwrap().unwrap();
    assert_eq!(state.gaps.len(), 100);
    assert_eq!(records.iter().map(|r| r.seq).collect::<Vec<_>>(), (1..=100).collect::<Vec<u64>>());
    assert_eq!(ledger::check(&dir).unwrap().0, vec![]);
}

#[test]
fn a_newer_ledger_is_never_appended_to() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ledger");
    let newer = Header { andon_ledger: ledger::FORMAT + 1, ..header() };
    ledger::append(&dir, &newer, &[gap("G1")], 1).unwrap();
    let before = bytes(&dir);
    match ledger::append(&dir, &header(), &[gap("G2")], 2) {
        Err(LedgerError::Invalid(issues)) => assert!(issues[0].message.contains("newer"), "{issues:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(bytes(&dir), before);
}

#[test]
fn ledger_facts_answer_reopens_and_resolutions() {
    let (t, dir) = populated();
    let before = bytes(&dir);
    let o = run(&["query", "LedgerReopened(p, c, seq)", "--format", "json", "-q"], t.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json(&o)["rows"], serde_json::json!([["core", "api", 7]]));
    let o = run(
        &["query", "LedgerResolved(\"G1\", e), LedgerEvidence(e, p, c, approach, verdict)", "--format", "json", "-q"],
        t.path(),
    );
    assert_eq!(json(&o)["rows"], serde_json::json!([["E1", "core", "api", "structural", "proven"]]));
    // code and ledger together: the gap's file is a source file of the index
    let o = run(&["query", "LedgerGapAt(g, path, line), File(path, lang)", "--format", "csv", "-q"], t.path());
    assert!(String::from_utf8_lossy(&o.stdout).contains("G1,src/acme/api/routes.py,1,python"));
    // reading commands leave the ledger byte-identical (R34)
    run(&["check", "-q"], t.path());
    run(&["ledger", "check"], t.path());
    assert_eq!(bytes(&dir), before);
}

fn stage(name: &str, outgoing: &[&str]) -> Event {
    Event::StageRecorded {
        stage: name.into(),
        root: format!("src/{name}"),
        confidence: "exact".into(),
        source: "index".into(),
        incoming: vec![],
        outgoing: outgoing.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn status_says_when_the_loop_never_ran() {
    let t = tempfile::tempdir().unwrap();
    let o = run(&["status"], t.path());
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("the loop has never run here"), "{out}");
    assert!(out.contains("next: run `andon loop`"), "{out}");
    let v = json(&run(&["status", "--format", "json"], t.path()));
    assert_eq!((v["never_run"].as_bool(), v["verdict"]["outcome"].as_str()), (Some(true), Some("never-run")));
}

#[test]
fn status_board_holds_first_then_everything_and_one_next_step() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("analysis/andon/ledger");
    let w = |p: &str, c: &str| Wire { producer: p.into(), consumer: c.into() };
    let ev = |id: &str, wire: Wire, verdict: Verdict, hold: bool| Event::EvidenceRecorded {
        evidence: Evidence {
            id: id.into(),
            gap: None,
            wire,
            approach: "structural".into(),
            verdict,
            hold,
            tier: Some(1),
            artifact: None,
            claim: "core must not import api".into(),
            evidence: "src/core/a.py:3 imports api".into(),
            fix: None,
            references: vec!["src/core/a.py:3".into()],
            surface: None,
            crossing: Default::default(),
            radius: None,
            tree: None,
            rung: None,
            commit: None,
            red_first: None,
            reason: None,
            capability: None,
        },
    };
    ledger::append(
        &dir,
        &header(),
        &[
            stage("core", &["api"]),
            stage("api", &["cli"]),
            stage("cli", &[]),
            ev("E1", w("core", "api"), Verdict::Proven, false),
            Event::WireStatusChanged { wire: w("core", "api"), status: WireStatus::Proven, evidence: "E1".into() },
            gap("G1"),
        ],
        1,
    )
    .unwrap();
    let v = json(&run(&["status", "--format", "json"], t.path()));
    // api -> cli is unproven and blocks one stage; core -> api is proven
    assert_eq!(v["constraint"]["producer"], "api");
    assert_eq!(v["constraint"]["rule"], "most-blocked");
    assert_eq!(v["stages"][0]["name"], "core", "stream order, producers first");
    assert_eq!(v["gaps"]["open_by_blast_radius"]["unproposed"], 1);
    // the one next step is the loop's: the cursor is on `api`, whose open wire gap the loop proves itself
    assert_eq!((v["next"]["action"].as_str(), v["next"]["gap"].as_str()), (Some("budget"), Some("G1")), "{v:#}");
    assert!(v["next"]["detail"].as_str().unwrap().contains("run `andon loop`"), "{v:#}");
    // a tier-1 hold on core -> api: listed first, and the one next step is to fix the code
    ledger::append(
        &dir,
        &header(),
        &[
            ev("E2", w("core", "api"), Verdict::Refuted, true),
            Event::WireStatusChanged {
                wire: w("core", "api"),
                status: WireStatus::BrokenOrUnproven,
                evidence: "E2".into(),
            },
        ],
        2,
    )
    .unwrap();
    let before = bytes(&dir);
    let o = run(&["status"], t.path());
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[1], "STANDING TIER-1 HOLDS (1)", "{out}");
    assert!(out.contains("resolve the tier-1 hold on core -> api"), "{out}");
    assert!(out.contains("core -> api : broken/unproven (evidence E2), reopened 1"), "{out}");
    assert!(out.ends_with("andon: verdict holding (1 tier-1 hold(s))\n"), "{out}");
    // read-only but for its own report and sidecar under output_dir
    assert_eq!(bytes(&dir), before);
    let md = std::fs::read_to_string(t.path().join("analysis/andon/status.md")).unwrap();
    assert!(md.starts_with("# andon status\n## STANDING TIER-1 HOLDS (1)"), "{md}");
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.path().join("analysis/andon/status.json")).unwrap()).unwrap();
    assert_eq!(sidecar["holds"].as_array().unwrap().len(), 1);
    // a thrashing wire becomes the constraint
    let mut events = Vec::new();
    for k in 0..3 {
        events.push(ev(&format!("P{k}"), w("api", "cli"), Verdict::Proven, false));
        events.push(Event::WireStatusChanged {
            wire: w("api", "cli"),
            status: WireStatus::Proven,
            evidence: format!("P{k}"),
        });
        events.push(ev(&format!("R{k}"), w("api", "cli"), Verdict::Refuted, false));
        events.push(Event::WireStatusChanged {
            wire: w("api", "cli"),
            status: WireStatus::BrokenOrUnproven,
            evidence: format!("R{k}"),
        });
    }
    ledger::append(&dir, &header(), &events, 3).unwrap();
    let v = json(&run(&["status", "--format", "json"], t.path()));
    assert_eq!((v["constraint"]["producer"].as_str(), v["constraint"]["rule"].as_str()), (Some("api"), Some("thrash")));
    // an invalid ledger is refused
    std::fs::write(dir.join(ledger::LOG_FILE), b"{}\n").unwrap();
    assert_eq!(run(&["status"], t.path()).status.code(), Some(1));
}

/// Evidence about gap `gap` on the test wire.
fn proof(id: &str, gap: &str, verdict: Verdict, tier: u8, hold: bool) -> Event {
    proof_on(id, gap, verdict, tier, hold, "t1")
}

/// Evidence taken on the indexed code `tree`.
fn proof_on(id: &str, gap: &str, verdict: Verdict, tier: u8, hold: bool, tree: &str) -> Event {
    Event::EvidenceRecorded {
        evidence: Evidence {
            id: id.into(),
            gap: Some(gap.into()),
            wire: wire(),
            approach: "structural".into(),
            verdict,
            hold,
            tier: Some(tier),
            artifact: None,
            claim: "api depends only on core's surface".into(),
            evidence: "andon check".into(),
            fix: None,
            references: vec![],
            surface: None,
            crossing: Default::default(),
            radius: None,
            tree: Some(tree.into()),
            rung: None,
            commit: None,
            red_first: None,
            reason: None,
            capability: None,
        },
    }
}

fn radius_proposal(id: &str, radius: BlastRadius) -> Event {
    match proposal(id) {
        Event::ProposalRecorded { gap, approach, reason, description, write_set, base_commit, .. } => {
            Event::ProposalRecorded {
                gap,
                blast_radius: radius,
                approach,
                reason,
                description,
                write_set,
                base_commit,
                proposer: None,
                judging: Default::default(),
                interview: Vec::new(),
            }
        }
        _ => unreachable!(),
    }
}

#[test]
fn the_andon_rule_decides_every_advance() {
    use andon::ledger::andon_rule::{Condition, Ruling, rule_on};
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ledger");
    let ceiling = BlastRadius::LocalReversible;
    let state = |dir: &Path| ledger::load(dir).unwrap().unwrap().1;
    let halts = |d: Ruling| match d {
        Ruling::Halt(c, _) => Some(c),
        Ruling::Advance => None,
    };
    // no proposal yet: needs a person; a proposal without proof: unproven
    ledger::append(&dir, &header(), &[gap("G1")], 1).unwrap();
    assert_eq!(halts(rule_on(&state(&dir), "G1", ceiling, None)), Some(Condition::NeedsHuman));
    ledger::append(&dir, &header(), &[proposal("G1")], 1).unwrap();
    assert_eq!(halts(rule_on(&state(&dir), "G1", ceiling, None)), Some(Condition::Unproven));
    // refuted, then unknown, then proven
    ledger::append(&dir, &header(), &[proof("E1", "G1", Verdict::Refuted, 3, false)], 1).unwrap();
    assert_eq!(halts(rule_on(&state(&dir), "G1", ceiling, None)), Some(Condition::Refuted));
    ledger::append(&dir, &header(), &[proof("E2", "G1", Verdict::Unknown, 3, false)], 1).unwrap();
    assert_eq!(halts(rule_on(&state(&dir), "G1", ceiling, None)), Some(Condition::NeedsHuman));
    ledger::append(&dir, &header(), &[proof("E3", "G1", Verdict::Proven, 1, false)], 1).unwrap();
    assert_eq!(rule_on(&state(&dir), "G1", ceiling, None), Ruling::Advance);
    ledger::append(&dir, &header(), &[pass(1, "G1", true, ceiling, None)], 1).unwrap();

    // a tier-1 hold: no override, no authority, no ceiling clears it
    ledger::append(&dir, &header(), &[gap("G2"), proposal("G2"), proof("H1", "G2", Verdict::Refuted, 1, true)], 1)
        .unwrap();
    assert_eq!(
        halts(rule_on(&state(&dir), "G2", BlastRadius::SharedStateVisible, Some("d"))),
        Some(Condition::Tier1Hold)
    );
    let before = bytes(&dir);
    let refused = [
        Event::Overridden {
            gap: "G2".into(),
            evidence: "H1".into(),
            basis: ledger::OverrideBasis::StaleLiveView,
            by: "lead".into(),
            reason: "trust me".into(),
            artifact: None,
            witness: None,
        },
        pass(2, "G2", true, BlastRadius::SharedStateVisible, Some("d")),
    ];
    for e in refused {
        match ledger::append(&dir, &header(), std::slice::from_ref(&e), 1) {
            Err(LedgerError::Refused(m)) => assert!(m.contains("tier-1") || m.contains("halt:tier1-hold"), "{m}"),
            other => panic!("{e:?}: {other:?}"),
        }
        assert_eq!(bytes(&dir), before, "a forged advance leaves the ledger byte-identical");
    }
    // only a later proof (a re-index showing the contradiction gone) clears it
    ledger::append(&dir, &header(), &[proof("H2", "G2", Verdict::Proven, 1, false)], 1).unwrap();
    assert_eq!(rule_on(&state(&dir), "G2", ceiling, None), Ruling::Advance);

    // a tier-2 contradiction holds until a structured override is recorded
    ledger::append(&dir, &header(), &[gap("G3"), proposal("G3"), proof("T2", "G3", Verdict::Refuted, 2, false)], 1)
        .unwrap();
    assert_eq!(halts(rule_on(&state(&dir), "G3", ceiling, None)), Some(Condition::Tier2Hold));
    ledger::append(
        &dir,
        &header(),
        &[Event::Overridden {
            gap: "G3".into(),
            evidence: "T2".into(),
            basis: ledger::OverrideBasis::ExtractorLimitation,
            artifact: None,
            by: "lead".into(),
            reason: "dynamic import is dead code, removed in #12".into(),
            witness: None,
        }],
        1,
    )
    .unwrap();
    assert_eq!(rule_on(&state(&dir), "G3", ceiling, None), Ruling::Advance);

    // over the ceiling: halts until authority is raised for this gap and this diff
    ledger::append(
        &dir,
        &header(),
        &[gap("G4"), radius_proposal("G4", BlastRadius::HardToReverse), proof("P4", "G4", Verdict::Proven, 1, false)],
        1,
    )
    .unwrap();
    assert_eq!(halts(rule_on(&state(&dir), "G4", ceiling, Some("diff-a"))), Some(Condition::Authorization));
    ledger::append(
        &dir,
        &header(),
        &[
            Event::Halted { gap: "G4".into(), condition: "authorization".into(), reason: "hard-to-reverse".into() },
            Event::AuthorizationRaised {
                gap: "G4".into(),
                by: "lead".into(),
                diff_hash: "diff-a".into(),
                level: BlastRadius::HardToReverse,
                reason: "migration reviewed".into(),
                witness: None,
            },
        ],
        1,
    )
    .unwrap();
    assert_eq!(rule_on(&state(&dir), "G4", ceiling, Some("diff-a")), Ruling::Advance);
    // the authority lapses when the diff changes
    assert_eq!(halts(rule_on(&state(&dir), "G4", ceiling, Some("diff-b"))), Some(Condition::Authorization));
    assert!(matches!(
        ledger::append(&dir, &header(), &[pass(2, "G4", true, ceiling, Some("diff-b"))], 1),
        Err(LedgerError::Refused(m)) if m.contains("halt:authorization")
    ));
    ledger::append(&dir, &header(), &[pass(2, "G4", true, ceiling, Some("diff-a"))], 1).unwrap();

    // a hand-forged advance in the file fails the check
    let text = String::from_utf8(bytes(&dir)).unwrap();
    let forged = text.replacen(
        "\"advanced\":true,\"ceiling\":\"local+reversible\",\"diff_hash\":\"diff-a\"",
        "\"advanced\":true,\"ceiling\":\"local+reversible\",\"diff_hash\":\"diff-b\"",
        1,
    );
    assert_ne!(forged, text);
    std::fs::write(dir.join(ledger::LOG_FILE), forged).unwrap();
    let (issues, _) = ledger::check(&dir).unwrap();
    assert!(issues.iter().any(|i| i.message.contains("claims an advance the andon rule forbids")), "{issues:?}");
}

#[test]
fn a_standing_hold_is_replaced_only_by_a_proof_and_authority_can_be_raised_again() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ledger");
    ledger::append(
        &dir,
        &header(),
        &[
            gap("G1"),
            proposal("G1"),
            proof("H1", "G1", Verdict::Refuted, 1, true),
            status(WireStatus::BrokenOrUnproven, "H1"),
        ],
        1,
    )
    .unwrap();
    let before = bytes(&dir);
    match ledger::append(
        &dir,
        &header(),
        &[proof("U1", "G1", Verdict::Unknown, 3, false), status(WireStatus::Unknown, "U1")],
        2,
    ) {
        Err(LedgerError::Refused(m)) => assert!(m.contains("stands on tier-1 hold `H1`"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(bytes(&dir), before);
    // a proof on the same code does not replace it (R77): nothing is written
    match ledger::append(
        &dir,
        &header(),
        &[proof("P0", "G1", Verdict::Proven, 1, false), status(WireStatus::Proven, "P0")],
        3,
    ) {
        Err(LedgerError::Refused(m)) => assert!(m.contains("only a proof on changed code replaces it"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(bytes(&dir), before);
    // a proof on changed code replaces it
    ledger::append(
        &dir,
        &header(),
        &[proof_on("P1", "G1", Verdict::Proven, 1, false, "t2"), status(WireStatus::Proven, "P1")],
        3,
    )
    .unwrap();
    // authority raised while proposed (after the fix changed the diff) is accepted
    ledger::append(
        &dir,
        &header(),
        &[Event::AuthorizationRaised {
            gap: "G1".into(),
            by: "lead".into(),
            diff_hash: "d2".into(),
            level: BlastRadius::HardToReverse,
            reason: "re-reviewed".into(),
            witness: None,
        }],
        4,
    )
    .unwrap();
}
