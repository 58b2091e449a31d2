//! What the ledger recorded for a gap: its proposal (base, write-set, approach, radius), how its
//! fix is judged, who proposed it, and the trees the loop proved.

use crate::config::BlastRadius;
use crate::ledger::{self, Event, State};

/// The trees of the gaps closed on a proof of an applied fix, newest first.
pub(crate) fn proven_trees(state: &State, records: &[ledger::Record]) -> Vec<String> {
    records
        .iter()
        .rev()
        .filter_map(|r| match &r.event {
            Event::GapClosed { evidence, .. } => state.evidence.get(evidence)?.commit.clone(),
            _ => None,
        })
        .collect()
}

/// The proposal recorded for `gap`: (base commit, write-set, approach, blast radius).
pub(crate) fn recorded_proposal(
    records: &[ledger::Record],
    gap: &str,
) -> Option<(String, Vec<String>, String, BlastRadius)> {
    records.iter().rev().find_map(|r| match &r.event {
        Event::ProposalRecorded { gap: g, base_commit, write_set, approach, blast_radius, .. } if g == gap => {
            Some((base_commit.clone(), write_set.clone(), approach.clone(), *blast_radius))
        }
        _ => None,
    })
}

/// What the proposal recorded for `gap` found to define how its fix is judged.
pub(crate) fn recorded_judging(records: &[ledger::Record], gap: &str) -> super::verify::judged::Judging {
    records
        .iter()
        .rev()
        .find_map(|r| match &r.event {
            Event::ProposalRecorded { gap: g, judging, .. } if g == gap => Some(judging.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// Who the proposal recorded for `gap` names as its proposer, if anyone.
pub(crate) fn recorded_proposer(records: &[ledger::Record], gap: &str) -> Option<String> {
    records.iter().rev().find_map(|r| match &r.event {
        Event::ProposalRecorded { gap: g, proposer, .. } if g == gap => Some(proposer.clone()),
        _ => None,
    })?
}
