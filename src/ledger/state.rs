//! The state the events fold into (gaps, wires, stages, evidence, a person's decisions) and the
//! queries over it: a stage's lane, the wires that stand proven, the state as relation rows.

use std::collections::BTreeMap;

use super::{BlastRadius, Capability, Evidence, GapKind, Location, Obligation, Reason, Verdict, Wire, WireStatus};

/// A gap's lifecycle (R43).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GapStatus {
    Open,
    Proposed,
    HaltedAwaitingAuthorization,
    Halted,
    /// The proof cannot run here (decision 8): not retried until the capability changes; a
    /// person's recorded deferral moves past it.
    BlockedByEnvironment,
    Deferred,
    Skipped,
    Closed,
    /// The scan no longer finds it and no verified fix removed it: set aside, never proven.
    Vanished,
}

impl GapStatus {
    /// Set aside: closed, or deferred or skipped by a person. Anything else is open work (the
    /// brief's constraint, a phase's contract waiting for its work items).
    pub fn set_aside(self) -> bool {
        matches!(self, GapStatus::Closed | GapStatus::Deferred | GapStatus::Skipped | GapStatus::Vanished)
    }

    /// Finished: closed on evidence, or vanished from the scan. A gap found again after is a new
    /// generation of it.
    pub fn finished(self) -> bool {
        matches!(self, GapStatus::Closed | GapStatus::Vanished)
    }

    /// A proposal may be recorded: the gap is open, in progress, or halted (a new fix for a hold).
    pub fn takes_proposal(self) -> bool {
        matches!(
            self,
            GapStatus::Open
                | GapStatus::Proposed
                | GapStatus::HaltedAwaitingAuthorization
                | GapStatus::Halted
                | GapStatus::BlockedByEnvironment
        )
    }

    /// In progress: proposed, or halted on a condition (awaiting authority, the proof, or the
    /// environment). It is finished before another gap is picked.
    pub fn in_progress(self) -> bool {
        matches!(
            self,
            GapStatus::Proposed
                | GapStatus::HaltedAwaitingAuthorization
                | GapStatus::Halted
                | GapStatus::BlockedByEnvironment
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            GapStatus::Open => "open",
            GapStatus::Proposed => "proposed",
            GapStatus::HaltedAwaitingAuthorization => "halted-awaiting-authorization",
            GapStatus::Halted => "halted",
            GapStatus::BlockedByEnvironment => "blocked-by-environment",
            GapStatus::Deferred => "deferred",
            GapStatus::Skipped => "skipped",
            GapStatus::Closed => "closed",
            GapStatus::Vanished => "vanished",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GapState {
    pub id: String,
    pub kind: GapKind,
    pub stage: String,
    pub wire: Option<Wire>,
    pub location: Location,
    pub on_constraint: bool,
    pub summary: String,
    pub source: String,
    pub status: GapStatus,
    pub blast_radius: Option<BlastRadius>,
    /// The blast radius a fix is estimated to have, as recorded when the gap opened.
    pub estimated_radius: Option<BlastRadius>,
    /// The evidence that closed it.
    pub resolved_by: Option<String>,
    pub opened_seq: u64,
    /// The capability its last proof could not run without, while it is blocked by the
    /// environment or deferred from there (decision 8).
    pub blocked: Option<Capability>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireState {
    pub status: WireStatus,
    pub evidence: String,
    /// How many times the wire went from proven back to broken/unproven.
    pub reopened: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageState {
    pub root: String,
    pub confidence: String,
    pub source: String,
    pub incoming: Vec<String>,
    pub outgoing: Vec<String>,
}

/// The state the events fold into: everything is derived from the log alone (R36).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    pub stages: BTreeMap<String, StageState>,
    pub gaps: BTreeMap<String, GapState>,
    pub evidence: BTreeMap<String, Evidence>,
    pub wires: BTreeMap<Wire, WireState>,
    /// Evidence ids per gap, in record order.
    pub gap_evidence: BTreeMap<String, Vec<String>>,
    /// Authority raised per gap: (diff hash, level).
    pub authority: BTreeMap<String, Vec<(String, BlastRadius)>>,
    /// Tier-2 evidence overridden per gap.
    pub overrides: BTreeMap<String, Vec<String>>,
    /// Every person's decision, in record order (authority, override, deferral, skip, confirm).
    pub decisions: Vec<HumanDecision>,
    /// Decisions asked for where no person could give them, not answered since.
    pub pending_decisions: Vec<PendingDecision>,
    /// The base recorded last (first seen, moved past judging-free commits, or accepted by a
    /// person): (its record's seq, the commit). A proof recorded after it is newer.
    pub base: Option<(u64, String)>,
    /// A judging change the loop holds on until a person accepts it.
    pub judging: Option<JudgingHold>,
    /// Ingest mode: what the brief says about each stage.
    pub context: BTreeMap<String, StageContextState>,
    /// Proof-strength audits per evidence id: (tool, strength, detail), in record order.
    pub audits: BTreeMap<String, Vec<(String, String, String)>>,
    pub passes: u32,
    /// `passes` when the last cycle converged.
    pub passes_at_convergence: u32,
    pub cycles: u32,
    /// Sub-cycles: backtracks to an earlier stage.
    pub sub_cycles: u32,
    /// Gaps closed or vanished since the last cycle converged: such a cycle is not hardened.
    pub settled_since_convergence: u32,
    /// The digests of every input file the loop took in ([`crate::ledger::Event::InputsTaken`]).
    pub taken: std::collections::BTreeSet<String>,
}

impl State {
    /// A stage's lane (R39, decision 4), derived from the one stored vocabulary, the detection
    /// ladder: `slow` when a proof about the stage (of its gaps, or of its outgoing wires) needed
    /// rung 4 or 5 (rendered, judged), else `fast` when one needed rungs 1–3; none before any
    /// proof. The approaches that merely could not run add nothing.
    pub fn stage_lane(&self, stage: &str) -> Option<&'static str> {
        let of_stage = |e: &&Evidence| {
            e.wire.producer == stage || e.gap.as_ref().and_then(|g| self.gaps.get(g)).is_some_and(|g| g.stage == stage)
        };
        let rung = self
            .evidence
            .values()
            .filter(of_stage)
            .filter(|e| e.verdict != Verdict::Unknown)
            .filter_map(|e| e.rung)
            .max()?;
        Some(if rung >= 4 { "slow" } else { "fast" })
    }

    /// Gaps a person deferred or skipped while their proof could not run here (decision 8), with
    /// the wire each leaves unproven (a gap inside a stage: the stage's own wire).
    pub fn environment_blocked(&self) -> Vec<(&GapState, Wire)> {
        self.gaps
            .values()
            .filter(|g| g.blocked.is_some() && matches!(g.status, GapStatus::Deferred | GapStatus::Skipped))
            .map(|g| {
                let own = || Wire { producer: g.stage.clone(), consumer: g.stage.clone() };
                (g, g.wire.clone().unwrap_or_else(own))
            })
            .collect()
    }
}

/// A stage's brief context and which entry gates a person confirmed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageContextState {
    pub exit_criteria: Vec<String>,
    pub obligations: Vec<Obligation>,
    pub advisory: Vec<String>,
    pub confirmed: Vec<String>,
}

impl StageContextState {
    /// Entry gates not yet confirmed.
    pub fn open_gates(&self) -> Vec<&Obligation> {
        self.obligations.iter().filter(|o| o.is_entry_gate() && !self.confirmed.contains(&o.id)).collect()
    }
}

/// A person's decision as the ledger recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HumanDecision {
    pub seq: u64,
    pub gap: String,
    /// `authorize`, `override`, `defer`, `skip`.
    pub action: &'static str,
    pub by: String,
    pub reason: String,
    /// Who was at the terminal (absent on records from before andon asked).
    pub witness: Option<super::Witness>,
}

/// A person's decision asked for where no person could give it, still waiting for one: a
/// decision of the same action on the same gap, taken at a terminal, answers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingDecision {
    pub seq: u64,
    pub gap: String,
    pub action: String,
    pub by: String,
    pub reason: String,
    pub why: String,
}

/// A judging change waiting for a person (see `Event::JudgingChanged`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JudgingHold {
    pub seq: u64,
    pub id: String,
    pub base: String,
    pub commits: Vec<String>,
    pub files: Vec<super::JudgedFile>,
    pub fingerprint: String,
}

/// The ledger state as relation rows for queries: (relation name, rendered row).
pub fn facts(state: &State) -> Vec<(&'static str, Vec<String>)> {
    let mut out = Vec::new();
    for g in state.gaps.values() {
        out.push(("LedgerGap", vec![g.id.clone(), g.kind.as_str().into(), g.stage.clone(), g.status.name().into()]));
        out.push((
            "LedgerGapAt",
            vec![g.id.clone(), g.location.path.clone(), g.location.line.unwrap_or(0).to_string()],
        ));
        if let Some(e) = &g.resolved_by {
            out.push(("LedgerResolved", vec![g.id.clone(), e.clone()]));
        }
        if let Some(w) = &g.wire {
            out.push(("LedgerGapWire", vec![g.id.clone(), w.producer.clone(), w.consumer.clone()]));
        }
        if g.on_constraint {
            out.push(("LedgerGapOnConstraint", vec![g.id.clone()]));
        }
        if let Some(r) = g.blast_radius {
            out.push(("LedgerGapRadius", vec![g.id.clone(), r.as_str().into()]));
        }
    }
    for (name, st) in &state.stages {
        out.push(("LedgerStage", vec![name.clone(), st.root.clone(), st.confidence.clone(), st.source.clone()]));
        if let Some(lane) = state.stage_lane(name) {
            out.push(("LedgerStageLane", vec![name.clone(), lane.into()]));
        }
    }
    for e in state.evidence.values() {
        out.push((
            "LedgerEvidence",
            vec![
                e.id.clone(),
                e.wire.producer.clone(),
                e.wire.consumer.clone(),
                e.approach.clone(),
                e.verdict.to_string(),
            ],
        ));
        if let Some(r) = e.reason {
            out.push(("LedgerEvidenceReason", vec![e.id.clone(), r.name().into()]));
        }
        if let Some(c) = e.capability.as_ref().filter(|_| e.reason == Some(Reason::UnprovableHere)) {
            out.push(("LedgerUnprovableHere", vec![e.id.clone(), c.name.clone()]));
        }
    }
    for (w, s) in &state.wires {
        out.push(("LedgerWire", vec![w.producer.clone(), w.consumer.clone(), s.status.to_string()]));
        for seq in &s.reopened {
            out.push(("LedgerReopened", vec![w.producer.clone(), w.consumer.clone(), seq.to_string()]));
        }
    }
    out
}

/// Whether a gap not set aside says something across `wire` is broken (a wire gap other than its
/// missing proof, such as an import of a name the producer does not define).
pub fn broken_gap_across(state: &State, wire: &Wire) -> bool {
    state.gaps.values().any(|g| {
        g.wire.as_ref() == Some(wire) && g.kind == GapKind::Wire && g.source != "UnprovenWire" && !g.status.set_aside()
    })
}

/// Whether `wire` stands proven: its status is proven and no open gap across it says otherwise.
/// The constraint, the cursor and convergence read a wire through it.
pub fn stands_proven(state: &State, wire: &Wire) -> bool {
    state.wires.get(wire).is_some_and(|ws| ws.status == WireStatus::Proven) && !broken_gap_across(state, wire)
}
