//! The fold of events into the state: [`apply`] checks one event against the state and applies
//! it, or says which rule it breaks; [`fold`] runs it over a parsed log.

use super::{
    BlastRadius, Error, Event, Evidence, GapKind, GapState, GapStatus, HumanDecision, Intent, Issue, JudgingHold,
    Location, Log, Obligation, PendingDecision, Reason, StageState, State, Verdict, Wire, WireState, WireStatus,
    Witness, andon_rule,
};

fn gap_of<'s>(state: &'s mut State, id: &str) -> Result<&'s mut GapState, Error> {
    state.gaps.get_mut(id).ok_or_else(|| Error::NoGap { gap: id.to_string() })
}

/// Applies one event to the state, or says why the state does not allow it.
pub fn apply(state: &mut State, seq: u64, e: &Event) -> Result<(), Error> {
    match e {
        // The stream and what a brief says about its stages.
        Event::StageRecorded { stage, root, confidence, source, incoming, outgoing } => {
            let s = StageState {
                root: root.clone(),
                confidence: confidence.clone(),
                source: source.clone(),
                incoming: incoming.clone(),
                outgoing: outgoing.clone(),
            };
            state.stages.insert(stage.clone(), s);
            Ok(())
        }
        Event::StageContext { stage, exit_criteria, obligations, advisory } => {
            record_context(state, stage, exit_criteria, obligations, advisory);
            Ok(())
        }
        // A gap's lifecycle.
        Event::GapOpened { gap, gap_kind, stage, wire, location, on_constraint, summary, source, estimated_radius } => {
            let g = GapState {
                id: gap.clone(),
                kind: *gap_kind,
                stage: stage.clone(),
                wire: wire.clone(),
                location: location.clone(),
                on_constraint: *on_constraint,
                summary: summary.clone(),
                source: source.clone(),
                status: GapStatus::Open,
                blast_radius: None,
                estimated_radius: *estimated_radius,
                resolved_by: None,
                opened_seq: seq,
                blocked: None,
            };
            open_gap(state, g)
        }
        Event::ProposalRecorded { gap, blast_radius, write_set, description, .. } => {
            record_proposal(state, gap, *blast_radius, write_set, description)
        }
        Event::Halted { gap, condition, .. } => halt_gap(state, gap, condition),
        Event::GapClosed { gap, evidence } => close_gap(state, gap, evidence),
        Event::GapVanished { gap, tree } => vanish_gap(state, gap, tree),
        // A person's decisions.
        Event::AuthorizationRaised { gap, diff_hash, level, by, reason, witness } => {
            raise_authority(state, decision(seq, gap, "authorize", by, reason, witness), diff_hash, *level)
        }
        Event::Overridden { gap, evidence, by, reason, witness, .. } => {
            override_evidence(state, decision(seq, gap, "override", by, reason, witness), evidence)
        }
        Event::GapDeferred { gap, by, reason, witness } => {
            set_gap_aside(state, decision(seq, gap, "defer", by, reason, witness), GapStatus::Deferred)
        }
        Event::GapSkipped { gap, by, reason, witness } => {
            set_gap_aside(state, decision(seq, gap, "skip", by, reason, witness), GapStatus::Skipped)
        }
        Event::GateConfirmed { stage, rule, by, reason, witness } => {
            confirm_gate(state, stage, rule, decision(seq, &format!("{stage}:{rule}"), "confirm", by, reason, witness))
        }
        // the chain begins: nothing changes in the state
        Event::LedgerChained { .. } => Ok(()),
        Event::InputsTaken { digests } => {
            state.taken.extend(digests.iter().cloned());
            Ok(())
        }
        Event::BaseRecorded { commit, .. } => {
            state.base = Some((seq, commit.clone()));
            Ok(())
        }
        Event::JudgingChanged { id, base, commits, files, fingerprint } => {
            state.judging = Some(JudgingHold {
                seq,
                id: id.clone(),
                base: base.clone(),
                commits: commits.clone(),
                files: files.clone(),
                fingerprint: fingerprint.clone(),
            });
            Ok(())
        }
        Event::JudgingUndone { id } => {
            if state.judging.as_ref().is_none_or(|j| j.id != *id) {
                return Err(Error::NoJudgingChange { id: id.clone() });
            }
            state.judging = None;
            Ok(())
        }
        Event::JudgingAccepted { id, base, by, reason, witness } => {
            if state.judging.as_ref().is_none_or(|j| j.id != *id) {
                return Err(Error::NoJudgingChange { id: id.clone() });
            }
            if by.trim().is_empty() {
                return Err(Error::AuthorityWithoutApprover { gap: id.clone() });
            }
            state.judging = None;
            state.base = Some((seq, base.clone()));
            decided(state, decision(seq, id, "authorize", by, reason, witness));
            Ok(())
        }
        Event::DecisionPending { gap, action, by, reason, why } => {
            state.pending_decisions.push(PendingDecision {
                seq,
                gap: gap.clone(),
                action: action.clone(),
                by: by.clone(),
                reason: reason.clone(),
                why: why.clone(),
            });
            Ok(())
        }
        // Evidence and the wires it backs.
        Event::EvidenceRecorded { evidence } => record_evidence(state, evidence),
        Event::EvidenceAudited { evidence, tool, strength, detail, .. } => {
            audit_evidence(state, evidence, tool, strength, detail)
        }
        Event::WireStatusChanged { wire, status, evidence } => change_wire_status(state, seq, wire, *status, evidence),
        // The loop's progress.
        Event::SubCycle { .. } => {
            state.sub_cycles += 1;
            Ok(())
        }
        Event::Thrashing { .. } => Ok(()),
        Event::PassClosed { pass, gap, advanced, ceiling, diff_hash, .. } => {
            close_pass(state, *pass, gap, *advanced, *ceiling, diff_hash.as_deref())
        }
        Event::CycleConverged { cycle, passes, intent, hardened, environment_blocked, .. } => {
            check_hardened(state, *cycle, *passes, *hardened)?;
            check_environment_blocked(state, *cycle, environment_blocked)?;
            converge_cycle(state, *cycle, *passes, intent.as_ref())
        }
        Event::GapRestated { gap, location, summary } => restate_gap(state, gap, location, summary),
    }
}

/// Restates a gap not closed: its location and summary as the scan finds it now.
fn restate_gap(state: &mut State, gap: &str, location: &Location, summary: &str) -> Result<(), Error> {
    let g = gap_of(state, gap)?;
    if g.status == GapStatus::Closed {
        return Err(Error::RestatedClosed { gap: gap.to_string() });
    }
    if location.path.trim().is_empty() || summary.trim().is_empty() {
        return Err(Error::RestatedIncomplete { gap: gap.to_string() });
    }
    g.location = location.clone();
    g.summary = summary.to_string();
    Ok(())
}

/// Replaces a stage's brief context; a confirmation stands only for a rule still worded as it was.
fn record_context(
    state: &mut State,
    stage: &str,
    exit_criteria: &[String],
    obligations: &[Obligation],
    advisory: &[String],
) {
    let c = state.context.entry(stage.to_string()).or_default();
    c.exit_criteria = exit_criteria.to_vec();
    // a confirmation was of a rule as worded then: a rewritten rule is a new gate (R57)
    let rule = |list: &[Obligation], id: &str| list.iter().find(|o| o.id == id).cloned();
    c.confirmed.retain(|id| rule(&c.obligations, id).is_some_and(|o| Some(o) == rule(obligations, id)));
    c.obligations = obligations.to_vec();
    c.advisory = advisory.to_vec();
}

/// Opens gap `g`: a new id, with a location, a summary, and a wire when it is a wire gap.
fn open_gap(state: &mut State, g: GapState) -> Result<(), Error> {
    let gap = &g.id;
    if state.gaps.contains_key(gap) {
        return Err(Error::GapAlreadyOpen { gap: gap.clone() });
    }
    if g.location.path.trim().is_empty() {
        return Err(Error::GapWithoutLocation { gap: gap.clone() });
    }
    if g.summary.trim().is_empty() {
        return Err(Error::GapWithoutSummary { gap: gap.clone() });
    }
    if g.kind == GapKind::Wire && g.wire.is_none() {
        return Err(Error::WireGapWithoutWire { gap: gap.clone() });
    }
    state.gaps.insert(g.id.clone(), g);
    Ok(())
}

/// Records a proposal for a gap that takes one: it is proposed, at the proposal's blast radius.
fn record_proposal(
    state: &mut State,
    gap: &str,
    blast_radius: BlastRadius,
    write_set: &[String],
    description: &str,
) -> Result<(), Error> {
    let g = gap_of(state, gap)?;
    if !g.status.takes_proposal() {
        return Err(Error::TakesNoProposal { gap: gap.to_string(), status: g.status });
    }
    if write_set.is_empty() || description.trim().is_empty() {
        return Err(Error::ProposalIncomplete { gap: gap.to_string() });
    }
    g.status = GapStatus::Proposed;
    g.blast_radius = Some(blast_radius);
    g.blocked = None;
    Ok(())
}

/// Halts a gap not closed: awaiting authorization (which needs a proposal), blocked by the
/// environment (which needs its last evidence to say so), or on any other condition.
fn halt_gap(state: &mut State, gap: &str, condition: &str) -> Result<(), Error> {
    let latest = state.gap_evidence.get(gap).and_then(|ids| ids.last()).and_then(|id| state.evidence.get(id)).cloned();
    let g = gap_of(state, gap)?;
    if g.status.finished() {
        return Err(Error::GapFinished { gap: gap.to_string(), status: g.status });
    }
    g.blocked = None;
    g.status = if condition == andon_rule::Condition::BlockedByEnvironment.token() {
        let cap = latest.filter(|e| e.reason == Some(Reason::UnprovableHere)).and_then(|e| e.capability);
        let Some(cap) = cap else {
            return Err(Error::HaltWithoutCapability { gap: gap.to_string() });
        };
        g.blocked = Some(cap);
        GapStatus::BlockedByEnvironment
    } else if condition == "authorization" {
        if g.blast_radius.is_none() {
            return Err(Error::HaltWithoutProposal { gap: gap.to_string() });
        }
        GapStatus::HaltedAwaitingAuthorization
    } else {
        GapStatus::Halted
    };
    Ok(())
}

/// Refuses to close a gap whose last other evidence is a tier-1 hold, unless `evidence` is about
/// changed code.
fn check_gap_hold(state: &State, gap: &str, evidence: &str) -> Result<(), Error> {
    let ev = state.evidence.get(evidence);
    let held = state
        .gap_evidence
        .get(gap)
        .and_then(|ids| ids.iter().rev().find(|id| *id != evidence))
        .and_then(|id| state.evidence.get(id))
        .filter(|h| h.hold)
        .map(|h| h.tree.clone());
    if let Some(hold_tree) = held
        && (ev.is_none_or(|e| e.tree.is_none() || e.tree == hold_tree))
    {
        return Err(Error::GapOnHold { gap: gap.to_string(), evidence: evidence.to_string() });
    }
    Ok(())
}

/// Closes a gap on recorded evidence that proves it (or an overridden tier-2 contradiction).
fn close_gap(state: &mut State, gap: &str, evidence: &str) -> Result<(), Error> {
    let ev = state.evidence.get(evidence).cloned();
    let was_overridden = state.overrides.get(gap).is_some_and(|o| o.iter().any(|id| id == evidence));
    let by_fix = ev.as_ref().is_some_and(|e| removed_by_fix(state, gap, e));
    // a gap whose last evidence is a tier-1 hold closes only on evidence about changed code
    check_gap_hold(state, gap, evidence)?;
    let g = gap_of(state, gap)?;
    if g.status.finished() {
        return Err(Error::AlreadyFinished { gap: gap.to_string(), status: g.status });
    }
    let ev = ev.ok_or_else(|| Error::ClosedOnUnrecorded { gap: gap.to_string(), evidence: evidence.to_string() })?;
    let overridden = ev.verdict == Verdict::Refuted && ev.tier == Some(2) && was_overridden;
    if ev.verdict != Verdict::Proven && !overridden {
        return Err(Error::ClosedWithoutProof { gap: gap.to_string(), evidence: evidence.to_string() });
    }
    // A proof of the wire itself closes its wire gaps (nothing was changed); anything
    // else closes only after a proposal, or on the proof of the verified fix that removed it.
    let wire_proof = g.kind == GapKind::Wire && g.wire.as_ref() == Some(&ev.wire);
    // A ledger written before `gap_vanished` closed an open gap the scan no longer found on
    // evidence about itself, with no fix: it reads as what it was, vanished, never as proven.
    let legacy_gone = g.status == GapStatus::Open && ev.gap.as_deref() == Some(gap) && ev.radius.is_none();
    if g.blast_radius.is_none() && !wire_proof && !by_fix && legacy_gone {
        g.status = GapStatus::Vanished;
        state.settled_since_convergence += 1;
        return Ok(());
    }
    if g.blast_radius.is_none() && !wire_proof && !by_fix {
        return Err(Error::ClosedWithoutProposal { gap: gap.to_string(), evidence: evidence.to_string() });
    }
    g.status = GapStatus::Closed;
    g.resolved_by = Some(evidence.to_string());
    state.settled_since_convergence += 1;
    Ok(())
}

/// Whether `ev` is the proof of a verified fix of another gap, closed on it, that removed the
/// open gap `gap` (a gap the scan no longer finds once the fix is in).
fn removed_by_fix(state: &State, gap: &str, ev: &Evidence) -> bool {
    let fixed = ev.gap.as_deref().filter(|f| *f != gap).and_then(|f| state.gaps.get(f));
    ev.verdict == Verdict::Proven
        && ev.radius.is_some()
        && fixed.is_some_and(|f| f.status == GapStatus::Closed && f.resolved_by.as_deref() == Some(ev.id.as_str()))
        && state.gaps.get(gap).is_some_and(|g| g.status == GapStatus::Open)
}

/// Sets an open gap aside as vanished: the scan of `tree` no longer finds it, and nothing proved
/// it fixed.
fn vanish_gap(state: &mut State, gap: &str, tree: &str) -> Result<(), Error> {
    let g = gap_of(state, gap)?;
    if g.status != GapStatus::Open {
        return Err(Error::VanishedNotOpen { gap: gap.to_string(), status: g.status });
    }
    if tree.trim().is_empty() {
        return Err(Error::VanishedFromNoTree { gap: gap.to_string() });
    }
    g.status = GapStatus::Vanished;
    state.settled_since_convergence += 1;
    Ok(())
}

/// A cycle names exactly the wires it converged past on a person's deferral of a proof that
/// could not run here: none made up, none hidden.
fn check_environment_blocked(state: &State, cycle: u32, claimed: &[Wire]) -> Result<(), Error> {
    let mut actual: Vec<Wire> = state.environment_blocked().into_iter().map(|(_, w)| w).collect();
    actual.sort();
    actual.dedup();
    let mut claimed = claimed.to_vec();
    claimed.sort();
    claimed.dedup();
    if claimed != actual {
        return Err(Error::EnvironmentBlockedMismatch { cycle, claimed, actual });
    }
    Ok(())
}

/// A cycle claims `hardened` only when it needed nothing: no pass since the last convergence,
/// no gap closed or vanished since, none skipped or deferred.
fn check_hardened(state: &State, cycle: u32, passes: u32, hardened: bool) -> Result<(), Error> {
    if !hardened {
        return Ok(());
    }
    let set_aside = state.gaps.values().any(|g| matches!(g.status, GapStatus::Skipped | GapStatus::Deferred));
    if passes > 0 || state.passes != state.passes_at_convergence || state.settled_since_convergence > 0 || set_aside {
        return Err(Error::FalselyHardened { cycle });
    }
    Ok(())
}

/// A person's decision `action` on `gap`, as the state records it.
/// Records a person's decision; it answers a pending one of the same action on the same gap.
fn decided(state: &mut State, d: HumanDecision) {
    state.pending_decisions.retain(|p| !(p.gap == d.gap && p.action == d.action));
    state.decisions.push(d);
}

fn decision(
    seq: u64,
    gap: &str,
    action: &'static str,
    by: &str,
    reason: &str,
    witness: &Option<Witness>,
) -> HumanDecision {
    HumanDecision {
        seq,
        gap: gap.to_string(),
        action,
        by: by.to_string(),
        reason: reason.to_string(),
        witness: witness.clone(),
    }
}

/// Raises the authority for a halted or proposed gap's fix, bound to one diff (`d` names who and why).
fn raise_authority(state: &mut State, d: HumanDecision, diff_hash: &str, level: BlastRadius) -> Result<(), Error> {
    let gap = &d.gap;
    if d.by.trim().is_empty() {
        return Err(Error::AuthorityWithoutApprover { gap: gap.clone() });
    }
    let g = gap_of(state, gap)?;
    if !matches!(g.status, GapStatus::HaltedAwaitingAuthorization | GapStatus::Proposed) {
        return Err(Error::NotAwaitingAuthority { gap: gap.clone() });
    }
    if diff_hash.trim().is_empty() || d.reason.trim().is_empty() {
        return Err(Error::AuthorityUnbound { gap: gap.clone() });
    }
    g.status = GapStatus::Proposed;
    state.authority.entry(gap.clone()).or_default().push((diff_hash.to_string(), level));
    decided(state, d);
    Ok(())
}

/// Overrides a tier-2 contradiction about the gap (never a tier-1 hold); `d` names who and why.
fn override_evidence(state: &mut State, d: HumanDecision, evidence: &str) -> Result<(), Error> {
    let gap = &d.gap;
    gap_of(state, gap)?;
    let e =
        state.evidence.get(evidence).ok_or_else(|| Error::NoEvidenceToOverride { evidence: evidence.to_string() })?;
    if e.hold || e.tier == Some(1) {
        return Err(Error::OverrideOfHold { evidence: evidence.to_string() });
    }
    if e.tier != Some(2) || e.verdict != Verdict::Refuted {
        return Err(Error::NotTier2Contradiction { evidence: evidence.to_string() });
    }
    if e.gap.as_deref() != Some(gap.as_str()) {
        return Err(Error::EvidenceNotAboutGap { evidence: evidence.to_string(), gap: gap.clone() });
    }
    if d.by.trim().is_empty() || d.reason.trim().is_empty() {
        return Err(Error::OverrideWithoutReason { evidence: evidence.to_string() });
    }
    state.overrides.entry(gap.clone()).or_default().push(evidence.to_string());
    decided(state, d);
    Ok(())
}

/// Defers or skips (`status`) a gap not closed; `d` names who and why.
fn set_gap_aside(state: &mut State, d: HumanDecision, status: GapStatus) -> Result<(), Error> {
    let gap = &d.gap;
    if d.by.trim().is_empty() {
        return Err(Error::SetAsideWithoutWho { gap: gap.clone() });
    }
    let g = gap_of(state, gap)?;
    if g.status.finished() {
        return Err(Error::GapFinished { gap: gap.clone(), status: g.status });
    }
    if d.reason.trim().is_empty() {
        return Err(Error::SetAsideWithoutReason { gap: gap.clone() });
    }
    g.status = status;
    decided(state, d);
    Ok(())
}

/// Confirms an entry gate `rule` of a stage with brief context; `d` names who and why.
fn confirm_gate(state: &mut State, stage: &str, rule: &str, d: HumanDecision) -> Result<(), Error> {
    if d.by.trim().is_empty() || d.reason.trim().is_empty() {
        return Err(Error::ConfirmWithoutReason { stage: stage.to_string(), rule: rule.to_string() });
    }
    let c = state.context.get_mut(stage).ok_or_else(|| Error::NoBriefContext { stage: stage.to_string() })?;
    if !c.obligations.iter().any(|o| o.id == rule && o.is_entry_gate()) {
        return Err(Error::NotEntryGate { stage: stage.to_string(), rule: rule.to_string() });
    }
    if !c.confirmed.iter().any(|id| id == rule) {
        c.confirmed.push(rule.to_string());
    }
    decided(state, d);
    Ok(())
}

/// Records new evidence: a new id, about an opened gap if any, a valid tier, never both hold and proof.
fn record_evidence(state: &mut State, evidence: &Evidence) -> Result<(), Error> {
    if state.evidence.contains_key(&evidence.id) {
        return Err(Error::EvidenceAlreadyRecorded { evidence: evidence.id.clone() });
    }
    if let Some(g) = &evidence.gap
        && !state.gaps.contains_key(g)
    {
        return Err(Error::EvidenceOfUnopenedGap { evidence: evidence.id.clone(), gap: g.clone() });
    }
    if evidence.tier.is_some_and(|t| !(1..=3).contains(&t)) {
        return Err(Error::BadTier { evidence: evidence.id.clone(), tier: evidence.tier });
    }
    if evidence.hold && evidence.verdict == Verdict::Proven {
        return Err(Error::HoldsAndProves { evidence: evidence.id.clone() });
    }
    if let Some(g) = &evidence.gap {
        state.gap_evidence.entry(g.clone()).or_default().push(evidence.id.clone());
    }
    state.evidence.insert(evidence.id.clone(), evidence.clone());
    Ok(())
}

/// Adds a proof-strength audit to recorded evidence.
fn audit_evidence(state: &mut State, evidence: &str, tool: &str, strength: &str, detail: &str) -> Result<(), Error> {
    if !state.evidence.contains_key(evidence) {
        return Err(Error::AuditOfUnrecorded { evidence: evidence.to_string() });
    }
    if !matches!(strength, "strong" | "weak" | "inconclusive" | "unavailable") {
        return Err(Error::BadAuditStrength { evidence: evidence.to_string(), strength: strength.to_string() });
    }
    state.audits.entry(evidence.to_string()).or_default().push((
        tool.to_string(),
        strength.to_string(),
        detail.to_string(),
    ));
    Ok(())
}

/// Whether `ev` (recorded as `evidence`) backs wire status `status`: a proof (or an overridden
/// tier-2 contradiction) backs proven, a refutation or no proof broken/unproven.
fn backs(state: &State, ev: &Evidence, evidence: &str, status: WireStatus) -> bool {
    let overridden = ev.verdict == Verdict::Refuted
        && ev.tier == Some(2)
        && state.overrides.values().any(|ids| ids.iter().any(|id| id == evidence));
    match status {
        WireStatus::Proven => ev.verdict == Verdict::Proven || overridden,
        WireStatus::BrokenOrUnproven => matches!(ev.verdict, Verdict::Refuted | Verdict::Unproven),
        WireStatus::Unknown => ev.verdict == Verdict::Unknown,
    }
}

/// Refuses to move a wire off a tier-1 hold, except to another hold or to a proof on changed code.
fn check_wire_hold(state: &State, wire: &Wire, status: WireStatus, ev: &Evidence) -> Result<(), Error> {
    if let Some(ws) = state.wires.get(wire)
        && let Some(h) = state.evidence.get(&ws.evidence).filter(|h| h.hold)
    {
        let on_changed_code = status == WireStatus::Proven && ev.tree.is_some() && ev.tree != h.tree;
        if !ev.hold && !on_changed_code {
            return Err(Error::WireOnHold { wire: wire.clone(), hold: ws.evidence.clone() });
        }
    }
    Ok(())
}

/// Changes a wire's status on recorded evidence about it that backs the status, counting reopenings.
fn change_wire_status(
    state: &mut State,
    seq: u64,
    wire: &Wire,
    status: WireStatus,
    evidence: &str,
) -> Result<(), Error> {
    // R14: a wire's status changes only through a recorded evidence record.
    let ev = state
        .evidence
        .get(evidence)
        .ok_or_else(|| Error::WireOnUnrecorded { wire: wire.clone(), evidence: evidence.to_string() })?;
    if &ev.wire != wire {
        return Err(Error::EvidenceOfOtherWire {
            evidence: evidence.to_string(),
            about: ev.wire.clone(),
            wire: wire.clone(),
        });
    }
    if !backs(state, ev, evidence, status) {
        return Err(Error::EvidenceDoesNotBack {
            evidence: evidence.to_string(),
            verdict: ev.verdict,
            status,
            wire: wire.clone(),
        });
    }
    check_wire_hold(state, wire, status, ev)?;
    let entry = state.wires.entry(wire.clone()).or_insert(WireState {
        status,
        evidence: evidence.to_string(),
        reopened: Vec::new(),
    });
    if entry.status == WireStatus::Proven && status != WireStatus::Proven {
        entry.reopened.push(seq);
    }
    entry.status = status;
    entry.evidence = evidence.to_string();
    Ok(())
}

/// Closes the next pass on an opened gap; an advance must be one the andon rule allows.
fn close_pass(
    state: &mut State,
    pass: u32,
    gap: &str,
    advanced: bool,
    ceiling: BlastRadius,
    diff_hash: Option<&str>,
) -> Result<(), Error> {
    if !state.gaps.contains_key(gap) {
        return Err(Error::PassOnUnopenedGap { pass, gap: gap.to_string() });
    }
    if pass != state.passes + 1 {
        return Err(Error::PassOutOfOrder { pass, last: state.passes });
    }
    // Every advance goes through the andon rule.
    if advanced && let andon_rule::Ruling::Halt(c, why) = andon_rule::rule_on(state, gap, ceiling, diff_hash) {
        return Err(Error::AdvanceForbidden { pass, condition: c, why });
    }
    state.passes = pass;
    Ok(())
}

/// Converges the next cycle, with no more passes than the history has and a known intent.
fn converge_cycle(state: &mut State, cycle: u32, passes: u32, intent: Option<&Intent>) -> Result<(), Error> {
    if intent.is_some_and(|i| !matches!(i.next.as_str(), "harden" | "feature" | "split")) {
        return Err(Error::UnknownIntent { cycle });
    }
    if cycle != state.cycles + 1 {
        return Err(Error::CycleOutOfOrder { cycle, last: state.cycles });
    }
    if passes > state.passes {
        return Err(Error::TooManyPasses { cycle, passes, history: state.passes });
    }
    state.cycles = cycle;
    state.passes_at_convergence = state.passes;
    state.settled_since_convergence = 0;
    Ok(())
}

/// Folds parsed records into the state, collecting every rule a record breaks.
pub fn fold(log: &Log) -> (State, Vec<Issue>) {
    let mut state = State::default();
    let mut issues = Vec::new();
    let mut expect = 1;
    for (line, r) in &log.records {
        if r.seq != expect {
            issues.push(Issue { line: *line, message: format!("seq {} where {expect} was expected", r.seq) });
        }
        expect = r.seq.saturating_add(1);
        if let Err(m) = apply(&mut state, r.seq, &r.event) {
            issues.push(Issue { line: *line, message: m.to_string() });
        }
    }
    (state, issues)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// A gap opened event: a wire gap across `core -> api` when `wire`, else a bug in `core`.
    fn opened(id: &str, wire: bool) -> Event {
        Event::GapOpened {
            gap: id.into(),
            gap_kind: if wire { GapKind::Wire } else { GapKind::Bug },
            stage: "core".into(),
            wire: wire.then(|| Wire { producer: "core".into(), consumer: "api".into() }),
            location: Location { path: "core/x.py".into(), line: Some(1) },
            on_constraint: false,
            summary: "s".into(),
            source: "BrokenImport".into(),
            estimated_radius: None,
        }
    }

    /// Evidence `id` about `core -> api` for gap `gap`.
    fn evidence(id: &str, gap: &str, verdict: Verdict, hold: bool, tier: Option<u8>) -> Event {
        Event::EvidenceRecorded {
            evidence: Evidence {
                id: id.into(),
                gap: Some(gap.into()),
                wire: Wire { producer: "core".into(), consumer: "api".into() },
                approach: "structural".into(),
                verdict,
                hold,
                tier,
                artifact: None,
                claim: "c".into(),
                evidence: "e".into(),
                fix: None,
                references: Vec::new(),
                surface: None,
                crossing: BTreeMap::new(),
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

    /// Applies `events` in order from an empty state: the first refusal, if any.
    fn refusal(events: &[Event]) -> Option<String> {
        let mut state = State::default();
        events.iter().enumerate().find_map(|(i, e)| apply(&mut state, i as u64 + 1, e).err().map(|e| e.to_string()))
    }

    #[test]
    fn every_refusal_of_apply_fires() {
        let cases: Vec<(Vec<Event>, &str)> = vec![
            (vec![opened("G1", false), opened("G1", false)], "gap `G1` is already open"),
            (
                vec![match opened("W1", true) {
                    Event::GapOpened { gap, gap_kind, stage, location, on_constraint, summary, source, .. } => {
                        let (wire, estimated_radius) = (None, None);
                        Event::GapOpened {
                            gap,
                            gap_kind,
                            stage,
                            wire,
                            location,
                            on_constraint,
                            summary,
                            source,
                            estimated_radius,
                        }
                    }
                    other => other,
                }],
                "wire gap `W1` names no wire",
            ),
            (vec![opened("G1", false), evidence("E1", "G1", Verdict::Proven, true, Some(1))], "both holds and proves"),
            (vec![opened("G1", false), evidence("E1", "G1", Verdict::Refuted, false, Some(4))], "tiers are 1, 2, 3"),
            (
                vec![Event::CycleConverged {
                    cycle: 2,
                    passes: 0,
                    sub_cycles: 0,
                    proven: Vec::new(),
                    constraint: None,
                    intent: None,
                    constraint_wire: None,
                    hardened: false,
                    environment_blocked: Vec::new(),
                    overrides: Vec::new(),
                }],
                "cycle 2 converges after cycle 0",
            ),
            (
                vec![Event::CycleConverged {
                    cycle: 1,
                    passes: 0,
                    sub_cycles: 0,
                    proven: Vec::new(),
                    constraint: None,
                    intent: None,
                    constraint_wire: None,
                    hardened: false,
                    environment_blocked: vec![Wire { producer: "nowhere".into(), consumer: "ghost".into() }],
                    overrides: Vec::new(),
                }],
                "names environment-blocked wires [nowhere -> ghost]",
            ),
            (
                vec![
                    opened("W1", true),
                    evidence("E1", "W1", Verdict::Proven, false, Some(1)),
                    Event::GapClosed { gap: "W1".into(), evidence: "E1".into() },
                    Event::GapClosed { gap: "W1".into(), evidence: "E1".into() },
                ],
                "gap `W1` is already closed",
            ),
        ];
        for (events, want) in cases {
            let got = refusal(&events).unwrap_or_default();
            assert!(got.contains(want), "expected a refusal containing {want:?}, got {got:?}");
        }
    }

    fn context(confidence: &str, rule: &str) -> Event {
        Event::StageContext {
            stage: "P2".into(),
            exit_criteria: Vec::new(),
            obligations: vec![Obligation {
                id: "BC-1".into(),
                rule: rule.into(),
                validation: "v".into(),
                confidence: confidence.into(),
                priority: "P0".into(),
            }],
            advisory: Vec::new(),
        }
    }

    #[test]
    fn a_confirmation_stands_for_the_rule_as_worded_when_it_was_given() {
        let mut state = State::default();
        let confirm = Event::GateConfirmed {
            stage: "P2".into(),
            rule: "BC-1".into(),
            by: "lead".into(),
            reason: "ok".into(),
            witness: None,
        };
        apply(&mut state, 1, &context("Medium", "writes commit first")).unwrap();
        assert_eq!(state.context["P2"].open_gates().len(), 1);
        apply(&mut state, 2, &confirm).unwrap();
        assert!(state.context["P2"].open_gates().is_empty());
        // the same rule again (an unrelated change elsewhere in the brief): still confirmed
        apply(&mut state, 3, &context("Medium", "writes commit first")).unwrap();
        assert!(state.context["P2"].open_gates().is_empty());
        // rewritten, or its confidence changed: the gate is open again
        apply(&mut state, 4, &context("Low", "writes commit first")).unwrap();
        assert_eq!(state.context["P2"].open_gates().len(), 1);
        apply(&mut state, 5, &confirm).unwrap();
        apply(&mut state, 6, &context("Low", "every write is durable")).unwrap();
        assert_eq!(state.context["P2"].open_gates().len(), 1);
    }

    #[test]
    fn a_gap_is_restated_while_it_is_not_closed() {
        let mut state = State::default();
        let at = |line| Location { path: "andon.toml".into(), line: Some(line) };
        let opened = Event::GapOpened {
            gap: "B-1".into(),
            gap_kind: GapKind::Bug,
            stage: "core".into(),
            wire: None,
            location: at(1),
            on_constraint: false,
            summary: "command `t` exits 1; its output is in a.log".into(),
            source: "FailingCommand".into(),
            estimated_radius: None,
        };
        apply(&mut state, 1, &opened).unwrap();
        let restate =
            |summary: &str| Event::GapRestated { gap: "B-1".into(), location: at(3), summary: summary.into() };
        apply(&mut state, 2, &restate("command `t` exits 2; its output is in b.log")).unwrap();
        let g = &state.gaps["B-1"];
        assert_eq!((g.location.line, g.summary.as_str()), (Some(3), "command `t` exits 2; its output is in b.log"));
        assert_eq!(g.status, GapStatus::Open);
        assert!(
            apply(&mut state, 3, &restate(" ")).unwrap_err().to_string().contains("without a location or a summary")
        );
        let missing = Event::GapRestated { gap: "B-2".into(), location: at(1), summary: "x".into() };
        assert!(apply(&mut state, 3, &missing).unwrap_err().to_string().contains("no gap `B-2`"));
        state.gaps.get_mut("B-1").unwrap().status = GapStatus::Closed;
        assert!(apply(&mut state, 3, &restate("again")).unwrap_err().to_string().contains("is closed"));
    }
}
