//! A request's obligations (R109, R111): the contract and each rule routed by the normal table,
//! proven one by one, and the andon rule deciding the request from their results.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::super::super::error::Error;
use super::super::proof::{Inputs, Proof, ProofTarget, RequestRule, Routing};
use super::super::{prove, routing};
use super::parse::{Request, WireRef};
use crate::config::Config;
use crate::evidence::route::{self, Approach, Object, Subject};
use crate::index::Index;
use crate::ingest::{Priority, RuleConfidence};
use crate::ledger::Verdict;

/// One obligation's proof.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObligationResult {
    /// `contract` for the request's own obligation, else the rule id.
    pub id: String,
    pub text: String,
    pub validation: Option<String>,
    pub priority: Option<String>,
    pub confidence: Option<String>,
    /// A P0 rule below High confidence: a blocking entry gate a person must confirm (R57).
    pub entry_gate: bool,
    pub routing: Routing,
    pub verdict: Verdict,
    /// Why the verdict is `unknown`, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<crate::ledger::Reason>,
    /// For reason `unprovable-here`: the capability the proof could not run without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capability: Option<crate::ledger::Capability>,
    pub tier: Option<u8>,
    pub hold: bool,
    pub claim: String,
    pub evidence: String,
    pub references: Vec<String>,
    pub artifact: Option<String>,
}

/// Every obligation of the request, each routed on its own: the wire itself (for a cross-stage
/// move), the contract, then each Behavior Contract rule.
pub(super) fn obligations_of(req: &Request, has_checks: bool) -> Vec<RoutedObligation> {
    let main = contract_subject(req, has_checks);
    let mut subjects: Vec<RoutedObligation> = Vec::new();
    // a cross-stage move also owes the wire itself: every import across it still resolves
    if let WireRef::Stages { from, to } = &req.wire {
        subjects.push((
            "wire".into(),
            format!("every import across {from} -> {to} resolves to what the producer defines; no stub crosses it"),
            None,
            Subject { has_checks, ..Subject::default() }.with(Object::Structure, "the change moves code across stages"),
        ));
    }
    subjects.push(("contract".into(), req.obligation.clone(), None, main));
    for r in &req.rules {
        subjects.push((r.id.clone(), r.rule.clone(), Some(r.clone()), rule_subject(r, has_checks)));
    }
    subjects
}

/// What routing knows of the request's own obligation: its declared `kind`, else what its
/// site, crossing contract and text name, else it is about behaviour.
fn contract_subject(req: &Request, has_checks: bool) -> Subject {
    let mut main = Subject { has_checks, ..Subject::default() };
    for k in &req.kinds {
        main = main.with(*k, "the request's `kind`");
    }
    if !req.kinds.is_empty() {
        return main;
    }
    if let WireRef::Site { path, crossing, .. } = &req.wire {
        if let Some(o) = route::object_of_path(path) {
            main = main.with(o.0, o.1);
        }
        for o in route::objects_in(crossing.as_deref().unwrap_or("")) {
            main = main.with(o.0, format!("the crossing contract: {}", o.1));
        }
    }
    for o in route::objects_in(&req.obligation) {
        main = main.with(o.0, format!("the obligation: {}", o.1));
    }
    if main.objects.is_empty() {
        main = main.with(Object::Behavior, "the obligation is about what the code does");
    }
    main
}

/// One obligation to prove: its id (`contract` for the main one), text, rule (for an imported
/// Behavior Contract rule) and what routing knows of it.
pub type RoutedObligation = (String, String, Option<RequestRule>, Subject);

/// What routing knows of a Behavior Contract rule: its validation strategy names the object, else
/// its text, else it is about behaviour.
pub fn rule_subject(r: &RequestRule, has_checks: bool) -> Subject {
    let mut s = Subject { has_checks, ..Subject::default() };
    for o in route::objects_in(&r.validation) {
        s = s.with(o.0, format!("its validation: {}", o.1));
    }
    if s.objects.is_empty() {
        for o in route::objects_in(&r.rule) {
            s = s.with(o.0, format!("the rule: {}", o.1));
        }
    }
    if s.objects.is_empty() {
        s = s.with(Object::Behavior, "the rule is about what the code does");
    }
    s
}

/// The appeal to a person's authority in an obligation's text or its rule, if any (R105).
fn appeal(text: &str, rule: &Option<RequestRule>) -> Option<String> {
    std::iter::once(text)
        .chain(rule.iter().flat_map(|r| [r.rule.as_str(), r.validation.as_str()]))
        .find_map(crate::panel::appeals_to_authority)
}

/// Routes every obligation on its own and runs each approach once for all that route to it; the
/// panel judges, as its criteria, every obligation routed to it.
#[allow(clippy::too_many_arguments)]
pub fn prove_all(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    subjects: Vec<RoutedObligation>,
    mut target: ProofTarget,
    checks: &[crate::andon_loop::commands::CommandSpec],
    inputs: &Inputs,
    hash: &str,
) -> Result<Vec<ObligationResult>, Error> {
    let routes = routing::route_all(&subjects.iter().map(|(_, _, _, s)| s).collect::<Vec<_>>(), inputs.chosen)?;
    target.criteria = subjects
        .iter()
        .zip(&routes)
        .filter(|((_, text, rule, _), r)| r.approach == Some(Approach::Adversarial) && appeal(text, rule).is_none())
        .map(|((id, text, rule, _), _)| {
            prove::criterion(id, text, rule.as_ref().is_none_or(|r| r.priority <= Priority::P1), checks)
        })
        .collect();
    let mut ran: BTreeMap<Approach, Proof> = BTreeMap::new();
    let mut obligations = Vec::new();
    for ((id, text, rule, _), route) in subjects.into_iter().zip(routes) {
        // a criterion resting on a person's say-so is rejected whatever approach it routes to (R105)
        let proof = match (appeal(&text, &rule), route.approach) {
            (Some(p), _) => Proof {
                verdict: Verdict::Unknown,
                tier: None,
                hold: false,
                claim: format!(
                    "rejected: it appeals to a person's authority (`{}`), which proves nothing; restate it as an objective check (R105)",
                    crate::text::short(&p)
                ),
                detail: "not run: a person's say-so is no evidence".into(),
                references: Vec::new(),
                artifact: None,
                per_criterion: Vec::new(),
                reason: None,
                capability: None,
            },
            (None, None) => routing::tie(&route),
            (None, Some(a)) => match ran.get(&a) {
                Some(p) => p.clone(),
                None => {
                    let mut p = prove::run(a, root, cfg, idx, &target, inputs, hash)?;
                    if let Some(scratch) = &inputs.artifacts {
                        // a scratch directory, removed when the request ends: nothing to point at
                        p.artifact = None;
                        p.references.retain(|r| !r.starts_with(&*scratch.to_string_lossy()));
                    }
                    ran.insert(a, p.clone());
                    p
                }
            },
        };
        // the panel judged each obligation as a criterion of its own: its verdict is that one's
        let mut proof = proof;
        if let Some((_, v, why)) = proof.per_criterion.iter().find(|(c, _, _)| *c == id).cloned() {
            proof.verdict = v;
            proof.detail = format!("{}: {why} (the panel: {})", id, proof.detail);
        }
        let (verdict, reason) = crate::ledger::spec_verdict(proof.verdict, proof.reason);
        let capability = proof.capability.filter(|_| reason == Some(crate::ledger::Reason::UnprovableHere));
        obligations.push(ObligationResult {
            id,
            text,
            validation: rule.as_ref().map(|r| r.validation.clone()),
            priority: rule.as_ref().map(|r| r.priority.name().to_string()),
            confidence: rule.as_ref().map(|r| r.confidence.name().to_string()),
            entry_gate: rule
                .as_ref()
                .is_some_and(|r| r.priority == Priority::P0 && r.confidence < RuleConfidence::High),
            routing: routing::routing_record(&route, None),
            verdict,
            reason,
            capability,
            tier: proof.tier,
            hold: proof.hold,
            claim: proof.claim,
            evidence: proof.detail,
            references: proof.references,
            artifact: proof.artifact,
        });
    }
    Ok(obligations)
}

/// The andon rule over a request's obligations: the condition it halts on (None: proven) and
/// every reason, worst first.
pub fn judge(
    obligations: &[ObligationResult],
    holds: &[String],
) -> (Vec<String>, Option<crate::ledger::andon_rule::Condition>) {
    use crate::ledger::andon_rule::Condition;
    let mut unmet = Vec::new();
    let mut worst: Option<(u8, Condition)> = None;
    let mut note = |rank: u8, c: Condition, why: String, unmet: &mut Vec<String>| {
        unmet.push(why);
        if worst.is_none_or(|(r, _)| rank < r) {
            worst = Some((rank, c));
        }
    };
    if !holds.is_empty() {
        note(0, Condition::Tier1Hold, format!("tier-1 contradiction: {}", holds[0]), &mut unmet);
    }
    for o in obligations {
        let p0 = if o.priority.as_deref() == Some("P0") { " (P0 blocking rule)" } else { "" };
        let name = match o.id.as_str() {
            "contract" => "the contract".to_string(),
            "wire" if o.priority.is_none() => "the wire".to_string(),
            id => format!("rule `{id}`{p0}"),
        };
        if o.entry_gate {
            note(
                3,
                Condition::EntryGate,
                format!("{name} is P0 below High confidence: an entry gate a person confirms before code changes"),
                &mut unmet,
            );
        }
        match o.verdict {
            Verdict::Proven => {}
            Verdict::Refuted if o.hold => note(0, Condition::Tier1Hold, format!("{name}: {}", o.claim), &mut unmet),
            Verdict::Refuted if o.tier == Some(2) => {
                note(2, Condition::Tier2Hold, format!("{name} refuted (tier 2): {}", o.claim), &mut unmet)
            }
            Verdict::Refuted if o.tier.is_some() => {
                note(1, Condition::Refuted, format!("{name} refuted: {}", o.claim), &mut unmet)
            }
            // what the check showed, not what it was to show
            Verdict::Refuted => note(1, Condition::Refuted, format!("{name} refuted: {}", o.evidence), &mut unmet),
            Verdict::Unknown if o.routing.approach.is_none() => {
                note(4, Condition::NeedsHuman, format!("{name}: {}", o.claim), &mut unmet)
            }
            Verdict::Unknown => match Condition::of_unknown(o.reason) {
                Condition::Unproven => {
                    let why = o.reason.map_or("unproven", |r| r.name());
                    note(6, Condition::Unproven, format!("{name} unknown ({why}): {}", o.evidence), &mut unmet)
                }
                c => note(5, c, format!("{name} unknown: {}", o.claim), &mut unmet),
            },
            Verdict::Unproven => note(6, Condition::Unproven, format!("{name} unproven: {}", o.evidence), &mut unmet),
        }
    }
    (unmet, worst.map(|(_, c)| c))
}
