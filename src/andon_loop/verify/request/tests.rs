//! Tests of the request: its parsing and the andon rule deciding it.

use super::super::proof::Routing;
use super::*;
use crate::evidence::route::Object;
use crate::ingest::RuleConfidence;

#[test]
fn the_three_shapes_of_each_field_parse() {
    let r = parse(r#"{"wire": "core -> api", "contract": "behavior is unchanged across the move", "fixDiff": "--- a/x\n+++ b/x\n"}"#)
        .unwrap();
    assert_eq!(r.wire, WireRef::Stages { from: "core".into(), to: "api".into() });
    let r = parse(
        r#"{"wire": {"path": "src/a.py", "line": 3, "crossing": "def f(x)"},
            "contract": {"obligation": "the rewrite is behavior-preserving", "kind": "invariant",
                         "rules": [{"id": "BC-1", "rule": "totals match", "validation": "property test", "priority": "P0", "confidence": "medium"}]},
            "fixDiff": {"files": ["src/a.py"], "diff": "--- a/src/a.py\n+++ b/src/a.py\n"}}"#,
    )
    .unwrap();
    assert_eq!(r.wire, WireRef::Site { path: "src/a.py".into(), line: Some(3), crossing: Some("def f(x)".into()) });
    assert_eq!(r.kinds, vec![Object::Invariant]);
    assert_eq!(r.rules[0].confidence, RuleConfidence::Medium);
    assert_eq!(r.files, vec!["src/a.py".to_string()]);
    let r = parse(r#"{"wire": "src/a.py:12", "contract": "x", "fix_diff": "d"}"#).unwrap();
    assert_eq!(r.wire, WireRef::Site { path: "src/a.py".into(), line: Some(12), crossing: None });
}

#[test]
fn bad_requests_name_every_problem() {
    let e = parse(r#"{"wire": "/etc/passwd:1", "contract": {"rules": [{"id": "R", "rule": "r", "validation": "v", "priority": "p0", "confidence": "High"}]}, "fixDif": "x"}"#)
        .unwrap_err();
    let all = e.join("\n");
    assert!(all.contains("`fixDif`: unknown key (did you mean `fixDiff`?)"), "{all}");
    assert!(all.contains("relative path"), "{all}");
    assert!(all.contains("`fixDiff` is missing"), "{all}");
    assert!(all.contains(".rules[0]"), "{all}");
    let e = parse(r#"{"wire": "a -> b", "contract": "c", "fixDiff": {"files": ["x"], "diff": "  "}}"#).unwrap_err();
    assert!(e[0].contains("without the applied diff is refused"), "{e:?}");
    assert!(parse("[1]").is_err());
    assert!(parse("{").unwrap_err()[0].starts_with("line 1, column"));
}

fn ob(id: &str, verdict: Verdict, priority: Option<&str>, gate: bool) -> ObligationResult {
    ObligationResult {
        id: id.into(),
        text: String::new(),
        validation: None,
        priority: priority.map(str::to_string),
        confidence: None,
        entry_gate: gate,
        routing: Routing {
            approach: Some("executed".into()),
            family: None,
            rung: Some(3),
            candidates: vec![],
            why: vec![],
            disagreement: None,
        },
        verdict,
        reason: None,
        capability: None,
        tier: None,
        hold: false,
        claim: "c".into(),
        evidence: String::new(),
        references: vec![],
        artifact: None,
    }
}

#[test]
fn the_andon_rule_decides_the_request() {
    use crate::ledger::andon_rule::Condition;
    let proven = ob("contract", Verdict::Proven, None, false);
    assert_eq!(judge(std::slice::from_ref(&proven), &[]).1, None);
    // a refutation anywhere, a tier-1 hold, an unmet P0 rule, an entry gate: never proven
    assert_eq!(judge(&[proven.clone(), ob("R", Verdict::Refuted, Some("P2"), false)], &[]).1, Some(Condition::Refuted));
    assert_eq!(judge(std::slice::from_ref(&proven), &["x".into()]).1, Some(Condition::Tier1Hold));
    let (unmet, c) = judge(&[proven.clone(), ob("BC-1", Verdict::Unproven, Some("P0"), false)], &[]);
    assert_eq!(c, Some(Condition::Unproven));
    assert!(unmet[0].contains("P0 blocking rule"), "{unmet:?}");
    assert_eq!(judge(&[proven.clone(), ob("G", Verdict::Proven, Some("P0"), true)], &[]).1, Some(Condition::EntryGate));
    // the worst wins: a hold over a refutation
    assert_eq!(judge(&[ob("R", Verdict::Refuted, None, false)], &["x".into()]).1, Some(Condition::Tier1Hold));
}
