//! Proofs gone stale: a wire whose surface changed since its proof, and every wire downstream of
//! it, is reopened (R82).

use std::collections::BTreeMap;

use super::super::book::Book;
use super::super::surface;
use super::setup::Setup;
use crate::ledger::{self, Event, GapState, LedgerError, State, Verdict, Wire, WireStatus};
use crate::ops::StreamReport;

/// Phase 3: proofs whose surface changed since (edits made outside the loop) are stale.
pub(super) fn stale(setup: &Setup, book: &mut Book, notes: &mut Vec<String>) -> Result<(), LedgerError> {
    let reach = Reach { fixed: None, depth: 0, thrash: setup.cfg.settings.thrash_threshold.value };
    let events = reopen_stale(&book.state, setup.stream, setup.surfaces, &reach, notes);
    book.record(&events)
}

/// Where a stale proof sends the cursor: the gap whose fix changed the surface (none for edits
/// made outside the loop), how many stages upstream of its stage a sub-cycle reaches, and the
/// reopen count at which a wire thrashes.
pub(super) struct Reach<'g> {
    pub(super) fixed: Option<&'g GapState>,
    pub(super) depth: u32,
    pub(super) thrash: u32,
}

/// The stages within `depth` hops upstream of the fixed gap's stage (the stage itself at 0).
pub(super) fn upstream(stream: &StreamReport, reach: &Reach) -> BTreeMap<String, u32> {
    let mut out: BTreeMap<String, u32> = BTreeMap::new();
    let Some(g) = reach.fixed else { return out };
    out.insert(g.stage.clone(), 0);
    let mut frontier = vec![g.stage.clone()];
    for d in 1..reach.depth {
        let mut next = Vec::new();
        for s in &frontier {
            for w in stream.wires.iter().filter(|w| &w.consumer == s) {
                if !out.contains_key(&w.producer) {
                    out.insert(w.producer.clone(), d);
                    next.push(w.producer.clone());
                }
            }
        }
        frontier = next;
    }
    out
}

/// Reopens every proven wire whose surface changed since its proof (R82): the proof
/// is stale, so the wire gets an `unproven` evidence record naming what crosses it now. When the
/// change is the fix for `reach.fixed` and the wire lies within `reach.depth` stages upstream of
/// the fixed stage (or leaves it), this is a sub-cycle: the cursor goes back to re-prove it. A
/// wire that has reopened `reach.thrash` times stops the backtracking: it is the stream's
/// constraint, and the escalation is said (R83).
pub(super) fn reopen_stale(
    state: &State,
    stream: &StreamReport,
    surfaces: &BTreeMap<Wire, surface::WireSurface>,
    reach: &Reach,
    notes: &mut Vec<String>,
) -> Vec<Event> {
    let upstream = upstream(stream, reach);
    let (fixed, thrash) = (reach.fixed, reach.thrash);
    let mut out = Vec::new();
    let mut k = state.evidence.len();
    for w in &stream.wires {
        let wire = Wire { producer: w.producer.clone(), consumer: w.consumer.clone() };
        let Some(ws) = state.wires.get(&wire).filter(|s| s.status == WireStatus::Proven) else { continue };
        let Some(proven) = state.evidence.get(&ws.evidence) else { continue };
        let Some(proof) = proven.surface.as_deref() else { continue };
        let Some(now) = surfaces.get(&wire) else { continue };
        if now.fingerprint == proof || fixed.is_some_and(|g| g.wire.as_ref() == Some(&wire)) {
            continue;
        }
        k += 1;
        let id = format!("E-stale-{k}");
        let crossing = surface::what_changed(&proven.crossing, now);
        out.push(Event::EvidenceRecorded { evidence: stale_evidence(&id, &wire, proven, now, fixed) });
        // reopened: nothing is known of it until it is proven again (R82)
        out.push(Event::WireStatusChanged { wire: wire.clone(), status: WireStatus::Unknown, evidence: id });
        let reopens = ws.reopened.len() as u32 + 1;
        let backtrack = fixed.filter(|g| upstream.contains_key(&w.consumer) || w.producer == g.stage);
        if reopens >= thrash {
            out.push(Event::Thrashing {
                wire: wire.clone(),
                reopens,
                thrash_threshold: thrash,
                backtrack_depth: reach.depth,
            });
            notes.push(format!(
                "thrash: {wire} has reopened {reopens} times (threshold {thrash}); backtracking stops and it is the stream's constraint: find why its surface keeps changing"
            ));
        } else if let Some(g) = backtrack {
            out.push(Event::SubCycle {
                from_stage: g.stage.clone(),
                to_stage: w.producer.clone(),
                reason: format!("{wire}: its surface changed ({crossing})"),
                backtrack_depth: Some(reach.depth),
                thrash_threshold: Some(thrash),
            });
            notes.push(format!("sub-cycle: {wire} reopened, its surface changed ({crossing})"));
        } else {
            notes.push(format!("stale: {wire} reopened, its surface changed since its proof ({crossing})"));
        }
    }
    out
}

/// The `unproven` evidence that a wire's proof `proven` went stale: its surface is now `now`; the
/// references are the names whose contract changed, came or went.
pub(super) fn stale_evidence(
    id: &str,
    wire: &Wire,
    proven: &ledger::Evidence,
    now: &surface::WireSurface,
    fixed: Option<&GapState>,
) -> ledger::Evidence {
    let proof = proven.surface.as_deref().unwrap_or_default();
    let changed = surface::Delta::of(&proven.crossing, now).names();
    ledger::Evidence {
        id: id.to_string(),
        gap: None,
        wire: wire.clone(),
        approach: "structural".into(),
        verdict: Verdict::Unknown,
        hold: false,
        tier: None,
        artifact: None,
        claim: match fixed {
            Some(g) => format!("the fix for `{}` changed the surface {wire} was proven on; its proof is stale", g.id),
            None => format!("the surface {wire} was proven on has changed; its proof is stale"),
        },
        evidence: format!(
            "surface {proof} is now {}: {}",
            now.fingerprint,
            surface::what_changed(&proven.crossing, now)
        ),
        fix: None,
        references: if proven.crossing.is_empty() { now.names.clone() } else { changed },
        surface: Some(now.fingerprint.clone()),
        crossing: Default::default(),
        radius: None,
        tree: None,
        rung: Some(2),
        commit: None,
        red_first: None,
        reason: None,
        capability: None,
    }
}
