//! The artifacts `andon propose`, `andon verify` and `andon verify --audit` left, recorded by the
//! one writer: proposals (with their authorization), evidence (re-checked against the tree), audits.

use std::path::PathBuf;

use super::super::book::Book;
use super::super::error::Error;
use super::super::recorded::recorded_proposal;
use super::super::verify::applied::VerifyStop;
use super::super::verify::{audit, fix};
use super::super::{proposal, surface};
use super::setup::{Plan, PlanPort, Setup};
use super::stale::{Reach, reopen_stale};
use crate::config::BlastRadius;
use crate::ledger::andon_rule::{Condition, Ruling};
use crate::ledger::{self, Event, GapState, LedgerError, Verdict, WireStatus};

/// Phase 2a: proposals written by `andon propose`, recorded by the one writer; one over the
/// authorization ceiling halts at once (condition 2, at proposal).
pub(super) fn proposals(
    setup: &Setup,
    pending: Vec<(PathBuf, Result<proposal::Proposal, Error>)>,
    book: &mut Book,
    plan: &mut Plan,
) -> Result<(), LedgerError> {
    let ceiling = setup.cfg.settings.authorization_level.value;
    for (file, p) in pending {
        let p = match p.map_err(|e| vec![e.to_string()]).and_then(|p| proposal::validate(&p).map(|_| p)) {
            Ok(p) => p,
            Err(errs) => {
                plan.notes.push(format!("{}: refused, not recorded: {}", file.display(), errs.join("; ")));
                continue;
            }
        };
        if !book.state.gaps.get(&p.gap).is_some_and(|g| g.status.takes_proposal()) {
            plan.notes.push(format!("{}: refused: gap `{}` is not open", file.display(), p.gap));
            continue;
        }
        let mut events = vec![Event::ProposalRecorded {
            gap: p.gap.clone(),
            blast_radius: p.blast_radius,
            approach: p.approach.clone(),
            reason: p.reason.clone(),
            description: p.description.clone(),
            write_set: p.write_set.clone(),
            base_commit: p.base_commit.clone().unwrap_or_else(|| "none".into()),
            proposer: p.proposer.clone(),
            judging: p.judging.clone(),
            interview: p.interview.clone(),
        }];
        if p.blast_radius > ceiling {
            // every stop writes an evidence record (R80): here, the authorization note
            let g = book.state.gaps[&p.gap].clone();
            events.push(Event::EvidenceRecorded { evidence: authorization_note(book, &g, &p, ceiling) });
            events.push(Event::Halted {
                gap: p.gap.clone(),
                condition: "authorization".into(),
                reason: format!("the proposal is {} and the ceiling is {}", p.blast_radius.name(), ceiling.name()),
            });
            plan.notes.push(format!(
                "proposal for `{}` recorded; halted: {} exceeds the ceiling {}. The proposal: {} (writes {}; blast radius {}). Two options: raise the authority for this one fix (`andon authorize {} --by WHO --reason WHY`), or skip to another gap (`andon skip {} --by WHO --reason WHY`)",
                p.gap,
                p.blast_radius.name(),
                ceiling.name(),
                crate::text::short(&p.description),
                p.write_set.join(", "),
                p.blast_radius.name(),
                p.gap,
                p.gap
            ));
        } else {
            plan.notes.push(format!("proposal for `{}` recorded ({}, {})", p.gap, p.blast_radius.name(), p.approach));
        }
        book.record(&events)?;
        plan.consumed.push(file);
    }
    Ok(())
}

/// The evidence record of a proposal halted on authorization (R80): nothing was proven; it says
/// what the proposal would do and the two ways on.
pub(super) fn authorization_note(
    book: &Book,
    g: &GapState,
    p: &proposal::Proposal,
    ceiling: BlastRadius,
) -> ledger::Evidence {
    let claim = format!(
        "halted on authorization: the proposal is {} and the ceiling is {}",
        p.blast_radius.name(),
        ceiling.name()
    );
    let detail = format!(
        "nothing was proven. The proposal: {} (writes {}; blast radius {}). A person raises the authority for this one fix (`andon authorize {}`), or skips to another gap (`andon skip {}`)",
        p.description,
        p.write_set.join(", "),
        p.blast_radius.name(),
        p.gap,
        p.gap
    );
    let mut ev = fix::evidence(
        g,
        ledger::AUTHORIZATION_NOTE,
        Verdict::Unknown,
        None,
        false,
        claim,
        detail,
        vec![],
        None,
        "none",
    );
    ev.id = book.next_evidence_id(&g.id);
    ev.radius = Some(p.blast_radius);
    ev
}

/// Phase 2b: evidence artifacts from `andon verify` (the loop's half of verify): the evidence,
/// the wire's status, the gap's closing, and the pass with the andon rule's decision.
pub(super) fn evidence(
    setup: &Setup,
    pending: Vec<(PathBuf, Result<fix::VerifyOutcome, Error>)>,
    book: &mut Book,
    repo: &mut dyn PlanPort,
    plan: &mut Plan,
) -> Result<(), LedgerError> {
    for (file, outcome) in pending {
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                plan.notes.push(format!("{}: not recorded: {e}", file.display()));
                continue;
            }
        };
        let Some(g) = book.state.gaps.get(&outcome.gap).cloned() else {
            plan.notes.push(format!("{}: not recorded: no gap `{}`", file.display(), outcome.gap));
            continue;
        };
        let refused = if !super::super::verify::applied::verifiable(&g) {
            Some(format!("gap `{}` is {}", g.id, g.status.name()))
        } else {
            match still_applied(book, repo, &g, &outcome)? {
                Ok(radius) => {
                    record_proof(setup, book, repo, &g, &outcome, radius, &mut plan.notes)?.err().map(|e| e.to_string())
                }
                Err(m) => Some(m.to_string()),
            }
        };
        if let Some(m) = refused {
            plan.notes.push(format!("{}: not recorded: {m}", file.display()));
        }
        plan.consumed.push(file);
    }
    Ok(())
}

/// What verify saw must still be the working tree: the same change, in scope, re-rated here.
/// Returns the blast radius to record, or why the evidence is not recorded.
pub(super) fn still_applied(
    book: &Book,
    repo: &dyn PlanPort,
    g: &GapState,
    outcome: &fix::VerifyOutcome,
) -> Result<Result<BlastRadius, Error>, LedgerError> {
    let Some((base, write_set, _, _)) = recorded_proposal(&book.records, &g.id).filter(|p| p.0 != "none") else {
        return Ok(Ok(outcome.rerated));
    };
    Ok(match repo.applied_change(&base, &write_set) {
        Ok(Ok((c, r, _))) if c.hash == outcome.change.hash => {
            let surface = repo.surface_changed(&book.state).map_err(|e| LedgerError::Io(e.to_string()))?;
            Ok(if surface { r.max(BlastRadius::HardToReverse) } else { r })
        }
        Ok(Ok(_)) => Err(Error::ChangedSinceVerify),
        Ok(Err(VerifyStop::Scope(files))) => Err(Error::OutsideWriteSet { files }),
        Ok(Err(_)) => Err(Error::Uncheckable),
        Err(m) => Err(m),
    })
}

/// Records one verified proof of gap `g`: the evidence (a wire gap re-checked on the fresh
/// index first), the wire's status, the andon rule's decision, the pass, and the proofs the fix
/// made stale. `Err` inside is why it was not recorded.
pub(super) fn record_proof(
    setup: &Setup,
    book: &mut Book,
    repo: &dyn PlanPort,
    g: &GapState,
    outcome: &fix::VerifyOutcome,
    radius: BlastRadius,
    notes: &mut Vec<String>,
) -> Result<Result<(), Error>, LedgerError> {
    let mut ev = outcome.evidence.clone();
    ev.id = book.next_evidence_id(&g.id);
    // Whatever approach proved it, a wire gap is re-checked on the fresh index: a contradiction
    // across the wire (a tier-1 hold, or a tier-2 refutation only an override clears) outranks
    // any other proof.
    if g.wire.is_some() {
        let (verdict, tier, hold, claim, refs) = repo.structural(g).map_err(|e| LedgerError::Io(e.to_string()))?;
        // the index that cannot decide (a declared wire no import carries) contradicts nothing:
        // the verdict of the checks stands; a refutation or a hold replaces it
        let silent = ledger::spec_verdict(verdict, None).0 == Verdict::Unknown && !hold;
        if silent {
            ev.references.push(format!("the fresh index alone: {claim}"));
        } else if verdict != Verdict::Proven {
            let detail = "the fresh index".into();
            ev = fix::evidence(g, "structural", verdict, tier, hold, claim, detail, refs, None, "00000000");
            ev.id = book.next_evidence_id(&g.id);
        }
    } else if ev.verdict == Verdict::Proven && still_found(book, repo, g) {
        // the checks pass, but the fact the gap stands on is still in the code: nothing was fixed
        ev.verdict = Verdict::Unknown;
        ev.reason = Some(ledger::Reason::NotShown);
        ev.claim = format!("the checks pass, but the scan still finds the gap: {}", g.summary);
        ev.commit = None;
    }
    ev.tree = Some(setup.tree.to_string());
    ev.radius = Some(radius);
    if ev.verdict == Verdict::Proven && g.wire.is_some() {
        surface::stamp(&mut ev, g.wire.as_ref().and_then(|w| setup.surfaces.get(w)));
    }
    let mut events = vec![Event::EvidenceRecorded { evidence: ev.clone() }];
    // a brief's work item is about its phase's wire, but only the phase contract proves it
    if let Some(w) = g.wire.as_ref().filter(|_| g.source != "WorkItem") {
        let status = wire_status(ev.verdict);
        let state = &book.state;
        let held = state.wires.get(w).is_some_and(|ws| state.evidence.get(&ws.evidence).is_some_and(|e| e.hold));
        // a standing hold is replaced only by a proof (or by a new hold)
        if !held || status == WireStatus::Proven || ev.hold {
            events.push(Event::WireStatusChanged { wire: ev.wire.clone(), status, evidence: ev.id.clone() });
        }
    }
    // decide on the state as it will be after the evidence
    let after = match book.after(&events) {
        Ok(a) => a,
        Err(m) => return Ok(Err(m)),
    };
    let ceiling = setup.cfg.settings.authorization_level.value;
    let decision = ledger::andon_rule::rule_on(&after, &g.id, ceiling, Some(&outcome.change.hash));
    let advanced = decision == Ruling::Advance;
    if advanced && ev.verdict == Verdict::Proven {
        events.push(Event::GapClosed { gap: g.id.clone(), evidence: ev.id.clone() });
    }
    if let Ruling::Halt(c, why) = &decision {
        let condition =
            if *c == Condition::Authorization { "authorization".to_string() } else { c.token().to_string() };
        events.push(Event::Halted { gap: g.id.clone(), condition, reason: why.clone() });
        notes.push(format!("gap `{}`: {} ({why})", g.id, c.token()));
    } else {
        notes.push(format!("gap `{}`: proven by {}; the cursor advances", g.id, ev.approach));
    }
    events.push(Event::PassClosed {
        pass: book.state.passes + 1,
        stage: g.stage.clone(),
        wire: g.wire.clone(),
        gap: g.id.clone(),
        approach: ev.approach.clone(),
        verdict: ev.verdict,
        advanced,
        ceiling,
        diff_hash: Some(outcome.change.hash.clone()),
    });
    if advanced {
        let settings = &setup.cfg.settings;
        let reach =
            Reach { fixed: Some(g), depth: settings.backtrack_depth.value, thrash: settings.thrash_threshold.value };
        events.extend(reopen_stale(&after, setup.stream, setup.surfaces, &reach, notes));
    }
    book.record(&events)?;
    Ok(Ok(()))
}

/// Does the scan of the gap's stage, on the fresh index, still find gap `g` (the same fact, by
/// its id)? A failing command is judged by its run, not by the scan.
pub(super) fn still_found(book: &Book, repo: &dyn PlanPort, g: &GapState) -> bool {
    let id = g.id.split('.').next().unwrap_or(&g.id);
    g.source != "FailingCommand" && repo.scan(&book.state, &g.stage).iter().any(|c| c.id == id)
}

/// The wire status a verdict gives.
pub(super) fn wire_status(v: Verdict) -> WireStatus {
    match v {
        Verdict::Proven => WireStatus::Proven,
        Verdict::Unknown => WireStatus::Unknown,
        _ => WireStatus::BrokenOrUnproven,
    }
}

/// Phase 2c: proof-strength audits, each added to the evidence it audits (R99).
pub(super) fn audits(
    pending: Vec<(PathBuf, Result<audit::AuditOutcome, Error>)>,
    book: &mut Book,
    plan: &mut Plan,
) -> Result<(), LedgerError> {
    for (file, outcome) in pending {
        let a = match outcome {
            Err(e) => {
                plan.notes.push(format!("{}: not recorded: {e}", file.display()));
                continue;
            }
            Ok(a) => a,
        };
        if !book.state.evidence.contains_key(&a.evidence) {
            plan.notes.push(format!("{}: not recorded: no evidence `{}`", file.display(), a.evidence));
        } else {
            book.record(&[Event::EvidenceAudited {
                evidence: a.evidence.clone(),
                tool: a.tool.clone(),
                strength: a.strength.clone(),
                detail: a.detail.clone(),
                artifact: a.artifact.clone(),
            }])?;
            plan.notes.push(format!("evidence `{}` audited by {}: {} ({})", a.evidence, a.tool, a.strength, a.detail));
        }
        plan.consumed.push(file);
    }
    Ok(())
}
