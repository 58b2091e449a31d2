//! What the ledger recorded for a gap: its proposal (base, write-set, approach, radius), how its
//! fix is judged, who proposed it.

use crate::config::BlastRadius;
use crate::ledger::{self, Event};

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
