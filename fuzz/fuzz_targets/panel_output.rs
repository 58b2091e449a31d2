//! One panel role output as andon reads it (`panel::parse_output`); when it parses, it is checked
//! and judged against a fixed input (`validate`, `rerun` through a deterministic runner, `judge`
//! with and without a tier-1 hold) three ways: alone, in place of the fixture output of its role
//! (bound to the real packet hash, so the checks past the hash run too), and next to the whole
//! fixture panel as a second output of its role. Judging never panics, and `docs/panel.md`'s
//! promises hold: a tier-1 hold is never cleared, a proven verdict needs every output accepted and
//! every criterion passed (or a non-load-bearing `neither`), and no reason carries a line break or
//! a bidirectional control.
#![no_main]

use std::path::Path;

use andon::ledger::{Verdict, Wire};
use andon::panel::{self, Criterion, ObjectiveCheck, Outcome, PanelInput, Role, RoleOutput};
use libfuzzer_sys::fuzz_target;

/// The fixture outputs of `tests/fixtures/panel`, in role order.
const FIXTURES: [&[u8]; 4] = [
    include_bytes!("../../tests/fixtures/panel/for.json"),
    include_bytes!("../../tests/fixtures/panel/against.json"),
    include_bytes!("../../tests/fixtures/panel/evidence.json"),
    include_bytes!("../../tests/fixtures/panel/adjudicator.json"),
];

/// The input the panel unit tests use: two criteria, one load-bearing, one quoted repository line.
fn input() -> PanelInput {
    let c = |id: &str, text: &str, load_bearing, check, command: Option<&str>| Criterion {
        id: id.into(),
        text: text.into(),
        load_bearing,
        check,
        command: command.map(Into::into),
    };
    PanelInput {
        wire: Wire { producer: "codec".into(), consumer: "store".into() },
        gap: "G-7".into(),
        claim: "Records survive the codec -> store handoff".into(),
        criteria: vec![
            c("c1", "Round-trips records", true, ObjectiveCheck::TestResult, Some("cargo test wire_roundtrip")),
            c("c2", "Keeps key order", false, ObjectiveCheck::Invariant, None),
        ],
        diff: "--- a/src/codec.rs\n+++ b/src/codec.rs\n+    flush(&mut out);".into(),
        proposer: "agent-fixer".into(),
        for_case: Some("the flush closes the gap".into()),
        prior_verdicts: vec!["refuted".into()],
        proposer_reasoning: Some("flush was missing".into()),
        repo_text: vec![("src/codec.rs:40".into(), "fn flush(out: &mut Vec<u8>)".into())],
    }
}

/// A command that names `trailing` cannot be run; one ending in a digit exits with it; any other
/// exits 0.
fn runner(_: &Path, cmd: &str) -> Option<i32> {
    if cmd.contains("trailing") {
        return None;
    }
    Some(cmd.chars().last().and_then(|c| c.to_digit(10)).map_or(0, |d| d as i32))
}

/// Binds every output to the hash of its real packet, as a well-behaved role would.
fn bind(inp: &PanelInput, outs: &mut [RoleOutput]) {
    let first = panel::packets(inp, &[]);
    for o in outs.iter_mut().filter(|o| matches!(o.role, Role::For | Role::Against)) {
        o.packet_hash = first[o.role as usize].hash.clone();
    }
    let evidence = panel::packets(inp, outs)[2].hash.clone();
    outs.iter_mut().filter(|o| o.role == Role::Evidence).for_each(|o| o.packet_hash = evidence.clone());
    let adj = panel::adjudicator_packet(inp, outs).hash;
    outs.iter_mut().filter(|o| o.role == Role::Adjudicator).for_each(|o| o.packet_hash = adj.clone());
}

fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn judge_all(inp: &PanelInput, outs: &[RoleOutput]) {
    let accepted = panel::validate(inp, outs);
    assert_eq!(accepted.len(), outs.len(), "one validation per output");
    let checks = outs.iter().find(|o| o.role == Role::Evidence).map_or(&[][..], |o| &o.checks);
    let rerun = panel::rerun(Path::new("/repo"), checks, &runner);
    assert_eq!(rerun.len(), checks.len(), "one re-run per check");
    for hold in [false, true] {
        let j = panel::judge(inp, outs, &rerun, hold);
        assert_eq!(j.per_criterion.len(), inp.criteria.len(), "one outcome per criterion");
        if hold {
            assert_ne!(j.verdict, Verdict::Proven, "a tier-1 hold was cleared");
        }
        if j.verdict == Verdict::Proven {
            assert!(accepted.iter().all(Result::is_ok), "proven with a refused output");
            let blocking = |(id, o, _): &(String, Outcome, String)| match o {
                Outcome::Pass => false,
                Outcome::Neither => inp.criteria.iter().any(|c| &c.id == id && c.load_bearing),
                _ => true,
            };
            assert!(!j.per_criterion.iter().any(blocking), "proven past a blocking criterion: {j:?}");
        }
        let texts = j.reasons.iter().chain(j.per_criterion.iter().map(|p| &p.2));
        for t in texts {
            assert!(!t.chars().any(unsafe_char), "an unescaped control or bidi character in {t:?}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(o) = panel::parse_output(data) else { return };
    let inp = input();
    judge_all(&inp, std::slice::from_ref(&o));

    let fixtures: Vec<RoleOutput> =
        FIXTURES.iter().map(|b| panel::parse_output(b).expect("a fixture output parses")).collect();
    let mut replaced = fixtures.clone();
    replaced[o.role as usize] = o.clone();
    bind(&inp, &mut replaced);
    judge_all(&inp, &replaced);

    let mut doubled = fixtures;
    bind(&inp, &mut doubled);
    doubled.push(o);
    judge_all(&inp, &doubled);
});
