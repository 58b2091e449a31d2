//! Ingest mode (R51–R60): with `gap_source = "ingest"` the loop takes its stream and gaps from a
//! modernization brief instead of scanning the repository. The brief's phases are the stages, in
//! its order; the wire into each phase carries its exit criteria and Behavior Contract rules (as
//! the stage's context); each work item is one gap; advisory notes are context, never gaps; a P0
//! rule below High confidence is an entry gate a person confirms before anything in that stage
//! may advance (the andon rule checks it). The constraint is the earliest phase with open work.
//! Everything after the gaps are recorded — proposals, verify, the andon rule — is the same code
//! as in self-scan mode.

use crate::facts::vocab::Confidence;
use std::path::Path;

use super::error::Error;
use super::scan::Candidate;
use crate::ingest::{Brief, LoadError, Phase};
use crate::ledger::{Event, Location, Obligation, State, Wire};
use crate::ops::{StageRow, StreamReport, WireRow};

/// The brief under `dir` (relative to `root`), or why the loop must stop.
pub fn load_brief(root: &Path, dir: &Path) -> Result<Brief, Error> {
    let at = if dir.is_absolute() { dir.to_path_buf() } else { root.join(dir) };
    crate::ingest::load(&at).map_err(|e| match e {
        LoadError::Invalid(errs) => Error::BriefInvalid { problems: errs.iter().map(|e| e.to_string()).collect() },
        absent => Error::BriefAbsent(absent),
    })
}

/// The stream the brief describes: one stage per phase, a wire from each phase to the next.
pub fn stream(brief: &Brief) -> StreamReport {
    let stages = brief
        .phases
        .iter()
        .map(|p| StageRow {
            name: p.id.clone(),
            root: String::new(),
            ecosystem: "brief".into(),
            confidence: Confidence::SelfAssessBacked,
            source: "brief".into(),
            files: p.work_items.len(),
        })
        .collect();
    let wires = brief
        .phases
        .windows(2)
        .map(|w| WireRow {
            producer: w[0].id.clone(),
            consumer: w[1].id.clone(),
            imports: 0,
            symbols: Vec::new(),
            confidence: Confidence::Brief,
            kinds: Vec::new(),
            used_for: crate::ops::WireUse::RunTime,
        })
        .collect();
    StreamReport {
        stages,
        wires,
        order: brief.phases.iter().map(|p| p.id.clone()).collect(),
        cycles: Vec::new(),
        module_cycles: Vec::new(),
        declared: None,
        support: Vec::new(),
        within: None,
    }
}

/// The context events of phases whose recorded context differs from the brief's.
pub fn context_events(brief: &Brief, state: &State) -> Vec<Event> {
    brief
        .phases
        .iter()
        .filter_map(|p| {
            let obligations: Vec<Obligation> = p
                .contract
                .iter()
                .map(|r| Obligation {
                    id: r.id.clone(),
                    rule: r.rule.clone(),
                    validation: r.validation.clone(),
                    confidence: r.confidence.name().to_string(),
                    priority: r.priority.name().to_string(),
                })
                .collect();
            let same = state.context.get(&p.id).is_some_and(|c| {
                c.exit_criteria == p.exit_criteria && c.obligations == obligations && c.advisory == p.advisory
            });
            (!same).then(|| Event::StageContext {
                stage: p.id.clone(),
                exit_criteria: p.exit_criteria.clone(),
                obligations,
                advisory: p.advisory.clone(),
            })
        })
        .collect()
}

/// The gaps of one phase: one per work item, of the kind its tag gives (R55). A wire gap is
/// about the phase's wire; its proof does not prove the wire (only the phase contract does).
pub fn candidates(brief: &Brief, phase: &Phase) -> Vec<Candidate> {
    let wire = phase_wire(brief, phase);
    let mut out: Vec<Candidate> = phase
        .work_items
        .iter()
        .filter_map(|w| {
            let kind = w.kind().ok()?.gap_kind();
            let letter = super::scan::kind_letter(kind);
            Some(Candidate {
                id: format!("{letter}-{}", super::scan::short_hash(&["WorkItem", &phase.id, &w.id])),
                kind,
                stage: phase.id.clone(),
                wire: (kind == crate::ledger::GapKind::Wire).then(|| wire.clone()),
                location: Location { path: w.path.clone(), line: w.line },
                summary: format!("{} ({}, {}; fix owner: {})", w.title, w.id, w.tag, w.owner),
                source: "WorkItem",
            })
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// The wire a phase's contract is on: the handoff out of the phase into the next one (a wire of
/// the phase to itself for the last phase). Its exit criteria can only be checked once its work is
/// done, and proving them is what moves the stream into the next stage; so each phase has a wire
/// of its own and one phase's proof never stands for another's (R54).
pub fn phase_wire(brief: &Brief, phase: &Phase) -> Wire {
    let at = brief.phases.iter().position(|p| p.id == phase.id).unwrap_or(0);
    let next = brief.phases.get(at + 1).unwrap_or(phase);
    Wire { producer: phase.id.clone(), consumer: next.id.clone() }
}

/// The gap of a phase's contract (R54, R56): its exit criteria and Behavior Contract rules are the
/// obligations verify proves once the phase's work is done; `brief_md` is the brief's Markdown
/// path relative to the repository, where the phase heading is.
pub fn contract_candidate(brief: &Brief, phase: &Phase, brief_md: &str) -> Option<Candidate> {
    if phase.exit_criteria.is_empty() && phase.contract.is_empty() {
        return None;
    }
    let wire = phase_wire(brief, phase);
    Some(Candidate {
        id: format!("W-{}", super::scan::short_hash(&["PhaseContract", &phase.id])),
        kind: crate::ledger::GapKind::Wire,
        stage: phase.id.clone(),
        summary: format!(
            "the contract of {wire} ({} exit criteria, {} Behavior Contract rules) has no proof",
            phase.exit_criteria.len(),
            phase.contract.len()
        ),
        wire: Some(wire),
        location: Location { path: brief_md.to_string(), line: Some(phase.line) },
        source: "PhaseContract",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief() -> Brief {
        load_brief(Path::new(env!("CARGO_MANIFEST_DIR")), Path::new("tests/fixtures/briefs/valid")).unwrap()
    }

    #[test]
    fn each_phase_contract_is_on_a_wire_of_its_own() {
        let b = brief();
        let wires: Vec<String> = b.phases.iter().map(|p| phase_wire(&b, p).to_string()).collect();
        assert_eq!(wires, ["P1 -> P2", "P2 -> P3", "P3 -> P3"]);
    }

    #[test]
    fn phases_are_stages_in_the_briefs_order_with_a_wire_between_neighbours() {
        let b = brief();
        let s = stream(&b);
        assert_eq!(s.order, b.phases.iter().map(|p| p.id.clone()).collect::<Vec<_>>());
        assert_eq!(s.wires.len(), b.phases.len() - 1);
        assert_eq!(
            (s.wires[0].producer.as_str(), s.wires[0].consumer.as_str()),
            (s.order[0].as_str(), s.order[1].as_str())
        );
    }

    #[test]
    fn every_work_item_is_one_gap_with_its_location_and_owner() {
        let b = brief();
        for p in &b.phases {
            let c = candidates(&b, p);
            assert_eq!(c.len(), p.work_items.len());
            for (g, w) in c.iter().zip({
                let mut items = p.work_items.clone();
                items.sort_by_key(|w| {
                    let k = w.kind().unwrap().gap_kind();
                    format!(
                        "{}-{}",
                        super::super::scan::kind_letter(k),
                        super::super::scan::short_hash(&["WorkItem", &p.id, &w.id])
                    )
                });
                items
            }) {
                assert_eq!(g.location.path, w.path);
                assert!(g.summary.contains(&w.owner) && g.summary.contains(&w.tag), "{}", g.summary);
                assert_eq!(g.kind, w.kind().unwrap().gap_kind());
                assert_eq!(g.wire.is_some(), g.kind == crate::ledger::GapKind::Wire);
            }
        }
    }

    #[test]
    fn an_absent_brief_stops_and_names_the_producer() {
        let e = load_brief(Path::new(env!("CARGO_MANIFEST_DIR")), Path::new("tests/fixtures/briefs/absent"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(crate::ingest::PRODUCER) && e.contains("does not fall back to scanning"), "{e}");
    }
}
