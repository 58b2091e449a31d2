//! The ledger (design §6; R34–R47): the state that must survive any interruption.
//!
//! - `ledger.jsonl` under `ledger_dir`: a header line (format, andon and rules versions, the
//!   repository), then one event per line. Append-only; strict typed records (required fields are
//!   non-optional, unknown fields are errors); one record is one gap; claim, evidence, fix and
//!   references are separate fields.
//! - One writer: [`append`] takes an exclusive lock, checks the whole log and the new events
//!   against it (a transition the state does not allow is refused and nothing is written), writes
//!   whole lines in one write, fsyncs, and re-renders `ledger.md` (write, fsync, rename).
//! - A torn last line (no newline) is detected and reported, never dropped or appended after.
//! - The header is written once, when the ledger is created; `ledger.md` is a view rendered from
//!   the log and that header alone (`view` says how it stands against the log): one a writer left behind the log is rendered again
//!   by [`repair`] or the next step ([`refresh_view`]).
//! - Current state is a fold of the events ([`fold`]); [`check`] validates everything and the
//!   agreement of `ledger.md` with the log; [`facts`] exports the state as relations for queries.

pub mod andon_rule;
mod render;
mod view;

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use fs4::fs_std::FileExt;
use serde::{Deserialize, Serialize};

pub use crate::config::BlastRadius;
pub use render::render;
pub use view::View;

/// The ledger format this andon writes; a newer ledger is never appended to.
pub const FORMAT: u32 = 1;
pub const LOG_FILE: &str = "ledger.jsonl";
pub const HUMAN_FILE: &str = "ledger.md";
const LOCK_FILE: &str = ".lock";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// The ledger format.
    pub andon_ledger: u32,
    /// The andon version that created the ledger.
    pub andon: String,
    /// Digest of the built-in rules that created it.
    pub rules: String,
    /// The repository the records belong to (a ledger may live outside it).
    pub repo: String,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wire {
    pub producer: String,
    pub consumer: String,
}

impl std::fmt::Display for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} -> {}", self.producer, self.consumer)
    }
}

/// Where a gap is: a repo-relative path, with a line when there is one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Location {
    pub path: String,
    pub line: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GapKind {
    Bug,
    Feature,
    Wire,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Proven,
    Refuted,
    Unproven,
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireStatus {
    #[serde(rename = "proven")]
    Proven,
    #[serde(rename = "broken/unproven")]
    BrokenOrUnproven,
    #[serde(rename = "unknown")]
    Unknown,
}

/// Why a proof is `unknown` (R88, R92, decision 8). verify's verdicts are `proven`, `refuted` or
/// `unknown`; an unknown one carries the reason, and the reason decides the halt condition (and
/// so the exit code) it stands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// The proof cannot run here: a capability it needs (a tool, an interpreter) is absent or
    /// cannot be executed. Its gap is blocked by the environment until the capability changes.
    UnprovableHere,
    /// A check ran out of its time.
    TimedOut,
    /// The proof ran but could not show the fix either way: a check did not start, no test ran,
    /// a criterion nothing backs, the checks pass while the scan still finds the gap.
    NotShown,
    /// The evidence is genuinely contested: the panel's sides leave a load-bearing criterion
    /// carried by neither (R92).
    Contested,
    /// The checks pass without the fix as well as with it: they do not discriminate (red first).
    NotDiscriminating,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::UnprovableHere => "unprovable-here",
            Reason::TimedOut => "timed-out",
            Reason::NotShown => "not-shown",
            Reason::Contested => "contested",
            Reason::NotDiscriminating => "not-discriminating",
        }
    }
}

/// The capability a proof could not run without (decision 8): its name (the executable the
/// shell could not find or execute), the check that needed it, and the fingerprint of how it
/// resolves here. The gap is not retried until the fingerprint changes (the capability was
/// installed or moved) or no check needs it any more.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capability {
    pub name: String,
    /// The check's command line.
    pub command: String,
    pub fingerprint: String,
}

/// The verdict in the spec's vocabulary (R88): `unproven` is an `unknown` the proof could not
/// show (reason `not-shown` unless it says more); a reason stays only on an unknown verdict.
pub fn spec_verdict(verdict: Verdict, reason: Option<Reason>) -> (Verdict, Option<Reason>) {
    match verdict {
        Verdict::Unproven => (Verdict::Unknown, Some(reason.unwrap_or(Reason::NotShown))),
        Verdict::Unknown => (Verdict::Unknown, reason),
        v => (v, None),
    }
}

/// One run of a check, as the evidence records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckRun {
    pub command: String,
    /// `None`: timed out, killed, or never started.
    pub exit: Option<i32>,
    pub timed_out: bool,
    /// The captured output, relative to the repository root.
    pub artifact: String,
    /// Tests the output names as failing (unittest, pytest, cargo test, node's test runners).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<String>,
}

/// Both runs of the checks of one proof (red first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedFirst {
    /// The base tree the first run used (a commit).
    pub base: String,
    /// The fix's test files laid over the base tree.
    pub overlaid: Vec<String>,
    /// Without the fix, in the copy.
    pub before: Vec<CheckRun>,
    /// With the fix, in the same copy: a check that fails here depends on where it runs.
    #[serde(default)]
    pub control: Vec<CheckRun>,
    /// With the fix, in the repository.
    pub after: Vec<CheckRun>,
    /// The tests that failed without the fix and pass with it (by name where the output names
    /// them, else the check).
    pub flipped: Vec<String>,
}

/// One interview question of a proposal (R69): a load-bearing fork the ledger and the code do not
/// answer, with the recommended answer and the answer taken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interview {
    pub question: String,
    pub recommended: String,
    pub answer: String,
}

/// The approach of the evidence record a stop on authorization writes (R80): a note of what was
/// proposed, never a proof attempt.
pub const AUTHORIZATION_NOTE: &str = "authorization";

/// One proof attempt on one wire (R42).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    pub id: String,
    pub gap: Option<String>,
    pub wire: Wire,
    pub approach: String,
    pub verdict: Verdict,
    /// A non-overridable (tier-1) hold.
    pub hold: bool,
    /// For structural evidence: 1, 2 or 3.
    pub tier: Option<u8>,
    /// A stored artifact backing the evidence (command output, report).
    pub artifact: Option<String>,
    pub claim: String,
    pub evidence: String,
    pub fix: Option<String>,
    pub references: Vec<String>,
    /// For a proof of a wire: the fingerprint of the wire's surface it was proven on (design §3);
    /// the proof is stale when the surface changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
    /// For a proof of a wire: each name crossing it (`producer file:name`) with the digest of its
    /// contract, so a stale proof names the contracts that changed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub crossing: BTreeMap<String, String>,
    /// For a proof of an applied fix: the blast radius its actual diff rates (R75); the andon rule
    /// holds the larger of this and the proposal's against the ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radius: Option<BlastRadius>,
    /// The fingerprint of the indexed code the evidence was taken on. A proof replaces a tier-1
    /// hold only on different code (R77).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// The detection-ladder rung of the approach that produced it (R19): 1 type/schema,
    /// 2 static-structural, 3 executed-and-inspected, 4 rendered/visual, 5 judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rung: Option<u8>,
    /// For a proof of an applied fix under git: the commit object holding the tree it proved
    /// (the proposal's base plus the fix), kept under `refs/andon/proven`; once the gap closes on
    /// it, the next proposal's base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// For a proof by running checks: their runs without the fix and with it (red first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red_first: Option<RedFirst>,
    /// Why the verdict is `unknown`, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    /// For reason `unprovable-here`: the capability the proof could not run without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<Capability>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    StageRecorded {
        stage: String,
        root: String,
        confidence: String,
        source: String,
        incoming: Vec<String>,
        outgoing: Vec<String>,
    },
    GapOpened {
        gap: String,
        gap_kind: GapKind,
        stage: String,
        wire: Option<Wire>,
        location: Location,
        on_constraint: bool,
        summary: String,
        /// The fact that found it (`BrokenImport`, `UnprovenWire`, `StageMarker`, ...).
        source: String,
        /// The blast radius a fix of it is estimated to have, from where it is (the pick's rule 3).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        estimated_radius: Option<BlastRadius>,
    },
    ProposalRecorded {
        gap: String,
        blast_radius: BlastRadius,
        approach: String,
        reason: String,
        description: String,
        write_set: Vec<String>,
        base_commit: String,
        /// Who proposes and builds the fix (its provenance id): the panel refuses an against case
        /// from them (R102).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proposer: Option<String>,
        /// What defined how the fix is judged when it was proposed: a digest per part (andon's
        /// settings, a command's files, test configuration, ignore rules); verify compares.
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        judging: std::collections::BTreeMap<String, String>,
        /// The interview questions the proposal resolved (R67, R69), in the order they were asked.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        interview: Vec<Interview>,
    },
    Halted {
        gap: String,
        condition: String,
        reason: String,
    },
    /// A person (`by`, the approver) raises the authority for one gap's fix, bound to one diff.
    AuthorizationRaised {
        gap: String,
        diff_hash: String,
        level: BlastRadius,
        by: String,
        reason: String,
    },
    /// A person overrides a tier-2 contradiction, with a structured reason: the evidence, a basis
    /// from a closed list, the approver, and optionally a counter-artifact. Never a tier-1 hold.
    Overridden {
        gap: String,
        evidence: String,
        basis: OverrideBasis,
        by: String,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        artifact: Option<String>,
    },
    GapDeferred {
        gap: String,
        by: String,
        reason: String,
    },
    /// Ingest mode (R54, R56, R58): what a brief says about a stage: the exit criteria and the
    /// Behavior Contract rules the wire into it must meet, and advisory notes (context, never gaps).
    StageContext {
        stage: String,
        exit_criteria: Vec<String>,
        obligations: Vec<Obligation>,
        advisory: Vec<String>,
    },
    /// A person confirms an entry gate (a P0 rule below High confidence, R57) of a stage.
    GateConfirmed {
        stage: String,
        rule: String,
        by: String,
        reason: String,
    },
    GapSkipped {
        gap: String,
        by: String,
        reason: String,
    },
    EvidenceRecorded {
        evidence: Evidence,
    },
    /// A proof-strength audit (approach g, R99) of a recorded evidence record: added to it, never
    /// a substitute for it (the evidence, its wire and its gap are unchanged).
    EvidenceAudited {
        evidence: String,
        /// The external tool that ran, or the one that was not available.
        tool: String,
        /// `strong` (no mutant survived), `weak` (some did), `inconclusive`, `unavailable`.
        strength: String,
        detail: String,
        artifact: Option<String>,
    },
    WireStatusChanged {
        wire: Wire,
        status: WireStatus,
        evidence: String,
    },
    GapClosed {
        gap: String,
        evidence: String,
    },
    /// An open gap the scan no longer finds, with no verified fix that removed it: it is set
    /// aside as vanished, never closed as proven. `tree` is the fingerprint of the code the scan
    /// read.
    GapVanished {
        gap: String,
        tree: String,
    },
    SubCycle {
        from_stage: String,
        to_stage: String,
        reason: String,
        /// The `backtrack_depth` and `thrash_threshold` in force, so the decision can be replayed
        /// (decision 5).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        backtrack_depth: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thrash_threshold: Option<u32>,
    },
    /// A wire reopened `reopens` times, at or past the `thrash_threshold` in force: backtracking
    /// stops and it becomes the constraint.
    Thrashing {
        wire: Wire,
        reopens: u32,
        thrash_threshold: u32,
        backtrack_depth: u32,
    },
    PassClosed {
        pass: u32,
        stage: String,
        wire: Option<Wire>,
        gap: String,
        approach: String,
        verdict: Verdict,
        advanced: bool,
        /// The authorization ceiling in force, so the decision can be replayed.
        ceiling: BlastRadius,
        /// The applied diff the decision was about.
        diff_hash: Option<String>,
    },
    /// The scan finds an open gap again, told otherwise: where it is now and what it says now
    /// (a failing command's newest log, a marker moved to another line).
    GapRestated {
        gap: String,
        location: Location,
        summary: String,
    },
    CycleConverged {
        cycle: u32,
        passes: u32,
        backtracks: u32,
        proven: Vec<Wire>,
        /// The wire that limited the cycle most: reopened most often, then slowest to prove
        /// (most proof attempts); none when every wire was proven at the first attempt (R64).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        constraint: Option<String>,
        /// What the next cycle is for (R65): `harden`, `feature` or `split`, and why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        intent: Option<Intent>,
        /// `constraint`'s wire, as `andon status` reports it after the convergence.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        constraint_wire: Option<Wire>,
        /// The cycle needed no fix: no pass, no gap closed, vanished, skipped or deferred.
        #[serde(default, skip_serializing_if = "is_false")]
        hardened: bool,
        /// The wires converged past only because a person deferred a proof that cannot run here
        /// (decision 8): "converged except N environment-blocked wires", never hardened.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        environment_blocked: Vec<Wire>,
        /// The tier-2 overrides a person recorded during the cycle (decision 7): the cycle
        /// converged past these contradictions on a person's word, and says so.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        overrides: Vec<CycleOverride>,
    },
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One override of a cycle, as its convergence record names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CycleOverride {
    pub gap: String,
    pub evidence: String,
    pub basis: OverrideBasis,
    pub by: String,
}

/// Why a tier-2 contradiction may be distrusted (the closed list of requirements decision 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OverrideBasis {
    /// The live view the contradiction came from is stale.
    StaleLiveView,
    /// A known limit of the extractor: macros, dynamic dispatch, generated code.
    ExtractorLimitation,
    /// A syntax error in the file the contradiction rests on.
    ParseError,
}

impl OverrideBasis {
    pub fn name(self) -> &'static str {
        match self {
            OverrideBasis::StaleLiveView => "stale-live-view",
            OverrideBasis::ExtractorLimitation => "extractor-limitation",
            OverrideBasis::ParseError => "parse-error",
        }
    }
}

/// One Behavior Contract rule of a brief: a verification obligation of the wire into its stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Obligation {
    pub id: String,
    pub rule: String,
    pub validation: String,
    /// low, medium, high
    pub confidence: String,
    /// P0..P3
    pub priority: String,
}

impl Obligation {
    /// A P0 rule below High confidence gates the stage until a person confirms it (R57).
    pub fn is_entry_gate(&self) -> bool {
        self.priority.eq_ignore_ascii_case("P0") && !self.confidence.eq_ignore_ascii_case("high")
    }
}

/// The next cycle's intent, recorded when a cycle converges (R65).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intent {
    /// `harden` (wires were unstable), `feature` (wires green, nothing pending) or `split` (the
    /// slow lane has not passed on this tree while the fast lane has).
    pub next: String,
    pub because: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// 1, 2, 3, ... in file order.
    pub seq: u64,
    /// Seconds since the Unix epoch.
    pub at: u64,
    pub event: Event,
    /// How many records follow this one in the same write (0, and omitted, on a write's last
    /// record): a write cut short after a whole line is detected as an incomplete write.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

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
    /// Ingest mode: what the brief says about each stage.
    pub context: BTreeMap<String, StageContextState>,
    /// Proof-strength audits per evidence id: (tool, strength, detail), in record order.
    pub audits: BTreeMap<String, Vec<(String, String, String)>>,
    pub passes: u32,
    /// `passes` when the last cycle converged.
    pub passes_at_convergence: u32,
    pub cycles: u32,
    pub backtracks: u32,
    /// Gaps closed or vanished since the last cycle converged: such a cycle is not hardened.
    pub settled_since_convergence: u32,
}

impl Evidence {
    /// Whether it is an attempt to prove (every record but an authorization note).
    pub fn is_proof_attempt(&self) -> bool {
        self.approach != AUTHORIZATION_NOTE
    }
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
}

/// A problem with the ledger: the line it is on (1 is the header) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    pub line: u64,
    pub message: String,
}

#[derive(Debug)]
pub enum LedgerError {
    Io(String),
    /// The log breaks the ledger's rules; nothing may act on it.
    Invalid(Vec<Issue>),
    /// A new event the state does not allow; nothing was written.
    Refused(String),
}

impl std::fmt::Display for LedgerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LedgerError::Io(m) | LedgerError::Refused(m) => write!(f, "{m}"),
            LedgerError::Invalid(issues) => {
                let first = issues.first().map(|i| format!("line {}: {}", i.line, i.message)).unwrap_or_default();
                write!(
                    f,
                    "the ledger is invalid ({} problem(s); first: {first}); run `andon ledger check`",
                    issues.len()
                )
            }
        }
    }
}

fn gap_of<'s>(state: &'s mut State, id: &str) -> Result<&'s mut GapState, String> {
    state.gaps.get_mut(id).ok_or_else(|| format!("no gap `{id}` was opened"))
}

/// Applies one event to the state, or says why the state does not allow it.
pub fn apply(state: &mut State, seq: u64, e: &Event) -> Result<(), String> {
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
        Event::AuthorizationRaised { gap, diff_hash, level, by, reason } => {
            raise_authority(state, decision(seq, gap, "authorize", by, reason), diff_hash, *level)
        }
        Event::Overridden { gap, evidence, by, reason, .. } => {
            override_evidence(state, decision(seq, gap, "override", by, reason), evidence)
        }
        Event::GapDeferred { gap, by, reason } => {
            set_gap_aside(state, decision(seq, gap, "defer", by, reason), GapStatus::Deferred)
        }
        Event::GapSkipped { gap, by, reason } => {
            set_gap_aside(state, decision(seq, gap, "skip", by, reason), GapStatus::Skipped)
        }
        Event::GateConfirmed { stage, rule, by, reason } => {
            confirm_gate(state, stage, rule, decision(seq, &format!("{stage}:{rule}"), "confirm", by, reason))
        }
        // Evidence and the wires it backs.
        Event::EvidenceRecorded { evidence } => record_evidence(state, evidence),
        Event::EvidenceAudited { evidence, tool, strength, detail, .. } => {
            audit_evidence(state, evidence, tool, strength, detail)
        }
        Event::WireStatusChanged { wire, status, evidence } => change_wire_status(state, seq, wire, *status, evidence),
        // The loop's progress.
        Event::SubCycle { .. } => {
            state.backtracks += 1;
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
fn restate_gap(state: &mut State, gap: &str, location: &Location, summary: &str) -> Result<(), String> {
    let g = gap_of(state, gap)?;
    if g.status == GapStatus::Closed {
        return Err(format!("gap `{gap}` is closed; a gap found again opens anew"));
    }
    if location.path.trim().is_empty() || summary.trim().is_empty() {
        return Err(format!("gap `{gap}` is restated without a location or a summary"));
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
fn open_gap(state: &mut State, g: GapState) -> Result<(), String> {
    let gap = &g.id;
    if state.gaps.contains_key(gap) {
        return Err(format!("gap `{gap}` is already open"));
    }
    if g.location.path.trim().is_empty() {
        return Err(format!("gap `{gap}` has no location; a gap needs a concrete file (and line)"));
    }
    if g.summary.trim().is_empty() {
        return Err(format!("gap `{gap}` has no summary"));
    }
    if g.kind == GapKind::Wire && g.wire.is_none() {
        return Err(format!("wire gap `{gap}` names no wire"));
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
) -> Result<(), String> {
    let g = gap_of(state, gap)?;
    if !g.status.takes_proposal() {
        return Err(format!("gap `{gap}` is {} and takes no proposal", g.status.name()));
    }
    if write_set.is_empty() || description.trim().is_empty() {
        return Err(format!("the proposal for `{gap}` needs a description and a declared write-set"));
    }
    g.status = GapStatus::Proposed;
    g.blast_radius = Some(blast_radius);
    g.blocked = None;
    Ok(())
}

/// Halts a gap not closed: awaiting authorization (which needs a proposal), blocked by the
/// environment (which needs its last evidence to say so), or on any other condition.
fn halt_gap(state: &mut State, gap: &str, condition: &str) -> Result<(), String> {
    let latest = state.gap_evidence.get(gap).and_then(|ids| ids.last()).and_then(|id| state.evidence.get(id)).cloned();
    let g = gap_of(state, gap)?;
    if g.status.finished() {
        return Err(format!("gap `{gap}` is {}", g.status.name()));
    }
    g.blocked = None;
    g.status = if condition == andon_rule::Condition::BlockedByEnvironment.token() {
        let cap = latest.filter(|e| e.reason == Some(Reason::UnprovableHere)).and_then(|e| e.capability);
        let Some(cap) = cap else {
            return Err(format!(
                "gap `{gap}` halts blocked by the environment, but its last evidence names no capability it could not run without"
            ));
        };
        g.blocked = Some(cap);
        GapStatus::BlockedByEnvironment
    } else if condition == "authorization" {
        if g.blast_radius.is_none() {
            return Err(format!("gap `{gap}` halts on authorization without a proposal's blast radius"));
        }
        GapStatus::HaltedAwaitingAuthorization
    } else {
        GapStatus::Halted
    };
    Ok(())
}

/// Refuses to close a gap whose last other evidence is a tier-1 hold, unless `evidence` is about
/// changed code.
fn check_gap_hold(state: &State, gap: &str, evidence: &str) -> Result<(), String> {
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
        return Err(format!("gap `{gap}` stands on a tier-1 hold; evidence `{evidence}` is not about changed code"));
    }
    Ok(())
}

/// Closes a gap on recorded evidence that proves it (or an overridden tier-2 contradiction).
fn close_gap(state: &mut State, gap: &str, evidence: &str) -> Result<(), String> {
    let ev = state.evidence.get(evidence).cloned();
    let was_overridden = state.overrides.get(gap).is_some_and(|o| o.iter().any(|id| id == evidence));
    let by_fix = ev.as_ref().is_some_and(|e| removed_by_fix(state, gap, e));
    // a gap whose last evidence is a tier-1 hold closes only on evidence about changed code
    check_gap_hold(state, gap, evidence)?;
    let g = gap_of(state, gap)?;
    if g.status.finished() {
        return Err(format!("gap `{gap}` is already {}", g.status.name()));
    }
    let ev = ev.ok_or_else(|| format!("gap `{gap}` closes on evidence `{evidence}`, which was never recorded"))?;
    let overridden = ev.verdict == Verdict::Refuted && ev.tier == Some(2) && was_overridden;
    if ev.verdict != Verdict::Proven && !overridden {
        return Err(format!("gap `{gap}` closes on evidence `{evidence}`, which does not prove it"));
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
        return Err(format!(
            "gap `{gap}` closes without a proposal's blast radius, and `{evidence}` is not the proof of a verified fix of another gap"
        ));
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
fn vanish_gap(state: &mut State, gap: &str, tree: &str) -> Result<(), String> {
    let g = gap_of(state, gap)?;
    if g.status != GapStatus::Open {
        return Err(format!("gap `{gap}` is {}: only an open gap vanishes from the scan", g.status.name()));
    }
    if tree.trim().is_empty() {
        return Err(format!("gap `{gap}` vanishes from no scanned tree"));
    }
    g.status = GapStatus::Vanished;
    state.settled_since_convergence += 1;
    Ok(())
}

/// A cycle names exactly the wires it converged past on a person's deferral of a proof that
/// could not run here: none made up, none hidden.
fn check_environment_blocked(state: &State, cycle: u32, claimed: &[Wire]) -> Result<(), String> {
    let mut actual: Vec<Wire> = state.environment_blocked().into_iter().map(|(_, w)| w).collect();
    actual.sort();
    actual.dedup();
    let mut claimed = claimed.to_vec();
    claimed.sort();
    claimed.dedup();
    if claimed != actual {
        let names = |ws: &[Wire]| ws.iter().map(Wire::to_string).collect::<Vec<_>>().join(", ");
        return Err(format!(
            "cycle {cycle} names environment-blocked wires [{}], but the deferred gaps whose proofs could not run here are on [{}]",
            names(&claimed),
            names(&actual)
        ));
    }
    Ok(())
}

/// A cycle claims `hardened` only when it needed nothing: no pass since the last convergence,
/// no gap closed or vanished since, none skipped or deferred.
fn check_hardened(state: &State, cycle: u32, passes: u32, hardened: bool) -> Result<(), String> {
    if !hardened {
        return Ok(());
    }
    let set_aside = state.gaps.values().any(|g| matches!(g.status, GapStatus::Skipped | GapStatus::Deferred));
    if passes > 0 || state.passes != state.passes_at_convergence || state.settled_since_convergence > 0 || set_aside {
        return Err(format!(
            "cycle {cycle} claims to be hardened, but it had passes, settled gaps, or gaps a person set aside"
        ));
    }
    Ok(())
}

/// A person's decision `action` on `gap`, as the state records it.
fn decision(seq: u64, gap: &str, action: &'static str, by: &str, reason: &str) -> HumanDecision {
    HumanDecision { seq, gap: gap.to_string(), action, by: by.to_string(), reason: reason.to_string() }
}

/// Raises the authority for a halted or proposed gap's fix, bound to one diff (`d` names who and why).
fn raise_authority(state: &mut State, d: HumanDecision, diff_hash: &str, level: BlastRadius) -> Result<(), String> {
    let gap = &d.gap;
    if d.by.trim().is_empty() {
        return Err(format!("authority for `{gap}` names who approved it"));
    }
    let g = gap_of(state, gap)?;
    if !matches!(g.status, GapStatus::HaltedAwaitingAuthorization | GapStatus::Proposed) {
        return Err(format!("gap `{gap}` is not halted awaiting authorization, nor proposed"));
    }
    if diff_hash.trim().is_empty() || d.reason.trim().is_empty() {
        return Err(format!("authority for `{gap}` binds to one diff (its hash) and needs a reason"));
    }
    g.status = GapStatus::Proposed;
    state.authority.entry(gap.clone()).or_default().push((diff_hash.to_string(), level));
    state.decisions.push(d);
    Ok(())
}

/// Overrides a tier-2 contradiction about the gap (never a tier-1 hold); `d` names who and why.
fn override_evidence(state: &mut State, d: HumanDecision, evidence: &str) -> Result<(), String> {
    let gap = &d.gap;
    gap_of(state, gap)?;
    let e = state.evidence.get(evidence).ok_or_else(|| format!("no evidence `{evidence}` to override"))?;
    if e.hold || e.tier == Some(1) {
        return Err(format!("evidence `{evidence}` is a tier-1 hold: no override or adjudication clears it"));
    }
    if e.tier != Some(2) || e.verdict != Verdict::Refuted {
        return Err(format!("only a tier-2 contradiction can be overridden; `{evidence}` is not one"));
    }
    if e.gap.as_deref() != Some(gap.as_str()) {
        return Err(format!("evidence `{evidence}` is not about gap `{gap}`"));
    }
    if d.by.trim().is_empty() || d.reason.trim().is_empty() {
        return Err(format!("an override of `{evidence}` names who decided and why"));
    }
    state.overrides.entry(gap.clone()).or_default().push(evidence.to_string());
    state.decisions.push(d);
    Ok(())
}

/// Defers or skips (`status`) a gap not closed; `d` names who and why.
fn set_gap_aside(state: &mut State, d: HumanDecision, status: GapStatus) -> Result<(), String> {
    let gap = &d.gap;
    if d.by.trim().is_empty() {
        return Err(format!("deferring or skipping `{gap}` names who decided"));
    }
    let g = gap_of(state, gap)?;
    if g.status.finished() {
        return Err(format!("gap `{gap}` is {}", g.status.name()));
    }
    if d.reason.trim().is_empty() {
        return Err(format!("deferring or skipping `{gap}` needs a reason"));
    }
    g.status = status;
    state.decisions.push(d);
    Ok(())
}

/// Confirms an entry gate `rule` of a stage with brief context; `d` names who and why.
fn confirm_gate(state: &mut State, stage: &str, rule: &str, d: HumanDecision) -> Result<(), String> {
    if d.by.trim().is_empty() || d.reason.trim().is_empty() {
        return Err(format!("confirming `{rule}` of stage `{stage}` names who decided and why"));
    }
    let c = state.context.get_mut(stage).ok_or_else(|| format!("stage `{stage}` has no brief context"))?;
    if !c.obligations.iter().any(|o| o.id == rule && o.is_entry_gate()) {
        return Err(format!("`{rule}` is not an entry gate of stage `{stage}`"));
    }
    if !c.confirmed.iter().any(|id| id == rule) {
        c.confirmed.push(rule.to_string());
    }
    state.decisions.push(d);
    Ok(())
}

/// Records new evidence: a new id, about an opened gap if any, a valid tier, never both hold and proof.
fn record_evidence(state: &mut State, evidence: &Evidence) -> Result<(), String> {
    if state.evidence.contains_key(&evidence.id) {
        return Err(format!("evidence `{}` is already recorded", evidence.id));
    }
    if let Some(g) = &evidence.gap
        && !state.gaps.contains_key(g)
    {
        return Err(format!("evidence `{}` names gap `{g}`, which was never opened", evidence.id));
    }
    if evidence.tier.is_some_and(|t| !(1..=3).contains(&t)) {
        return Err(format!("evidence `{}` has tier {:?}; tiers are 1, 2, 3", evidence.id, evidence.tier));
    }
    if evidence.hold && evidence.verdict == Verdict::Proven {
        return Err(format!("evidence `{}` both holds and proves", evidence.id));
    }
    if let Some(g) = &evidence.gap {
        state.gap_evidence.entry(g.clone()).or_default().push(evidence.id.clone());
    }
    state.evidence.insert(evidence.id.clone(), evidence.clone());
    Ok(())
}

/// Adds a proof-strength audit to recorded evidence.
fn audit_evidence(state: &mut State, evidence: &str, tool: &str, strength: &str, detail: &str) -> Result<(), String> {
    if !state.evidence.contains_key(evidence) {
        return Err(format!("an audit of evidence `{evidence}`, which is not recorded"));
    }
    if !matches!(strength, "strong" | "weak" | "inconclusive" | "unavailable") {
        return Err(format!("an audit of `{evidence}` with strength `{strength}`"));
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
fn check_wire_hold(state: &State, wire: &Wire, status: WireStatus, ev: &Evidence) -> Result<(), String> {
    if let Some(ws) = state.wires.get(wire)
        && let Some(h) = state.evidence.get(&ws.evidence).filter(|h| h.hold)
    {
        let on_changed_code = status == WireStatus::Proven && ev.tree.is_some() && ev.tree != h.tree;
        if !ev.hold && !on_changed_code {
            return Err(format!(
                "wire {wire} stands on tier-1 hold `{}`; only a proof on changed code replaces it",
                ws.evidence
            ));
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
) -> Result<(), String> {
    // R14: a wire's status changes only through a recorded evidence record.
    let ev = state
        .evidence
        .get(evidence)
        .ok_or_else(|| format!("wire {wire} changes status on evidence `{evidence}`, which was never recorded"))?;
    if &ev.wire != wire {
        return Err(format!("evidence `{evidence}` is about {}, not {wire}", ev.wire));
    }
    if !backs(state, ev, evidence, status) {
        return Err(format!("evidence `{evidence}` ({:?}) does not back status {status:?} of {wire}", ev.verdict));
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
) -> Result<(), String> {
    if !state.gaps.contains_key(gap) {
        return Err(format!("pass {pass} closes on gap `{gap}`, which was never opened"));
    }
    if pass != state.passes + 1 {
        return Err(format!("pass {pass} closes after pass {}", state.passes));
    }
    // Every advance goes through the andon rule.
    if advanced && let andon_rule::Ruling::Halt(c, why) = andon_rule::rule_on(state, gap, ceiling, diff_hash) {
        return Err(format!("pass {pass} claims an advance the andon rule forbids ({}: {why})", c.token()));
    }
    state.passes = pass;
    Ok(())
}

/// Converges the next cycle, with no more passes than the history has and a known intent.
fn converge_cycle(state: &mut State, cycle: u32, passes: u32, intent: Option<&Intent>) -> Result<(), String> {
    if intent.is_some_and(|i| !matches!(i.next.as_str(), "harden" | "feature" | "split")) {
        return Err(format!("cycle {cycle}: intent must be harden, feature or split"));
    }
    if cycle != state.cycles + 1 {
        return Err(format!("cycle {cycle} converges after cycle {}", state.cycles));
    }
    if passes > state.passes {
        return Err(format!("cycle {cycle} claims {passes} passes; the history has {}", state.passes));
    }
    state.cycles = cycle;
    state.passes_at_convergence = state.passes;
    state.settled_since_convergence = 0;
    Ok(())
}

/// The parsed log: header, records (with their line numbers), and every problem found.
pub struct Log {
    pub header: Option<Header>,
    pub records: Vec<(u64, Record)>,
    pub issues: Vec<Issue>,
    /// The first line of an interrupted write: a last line without a newline, or whole lines of
    /// a write whose last record is missing. `andon ledger repair` sets it aside.
    pub torn: Option<u64>,
}

/// Reads and strictly parses `ledger.jsonl` text.
pub fn parse(text: &str) -> Log {
    parse_bytes(text.as_bytes())
}

/// Reads and strictly parses the bytes of `ledger.jsonl`: a line that is not UTF-8 is a problem
/// on its line, as a line that is not a record is.
pub fn parse_bytes(bytes: &[u8]) -> Log {
    let mut log = Log { header: None, records: Vec::new(), issues: Vec::new(), torn: None };
    let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        lines.pop();
    }
    let n_lines = lines.len() as u64;
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        log.torn = Some(n_lines);
        log.issues.push(Issue {
            line: n_lines,
            message: "the last line is torn (no newline: a write was interrupted); it is not read, and nothing is appended until `andon ledger repair` sets it aside".into(),
        });
    }
    for (i, raw) in lines.iter().enumerate() {
        let n = i as u64 + 1;
        if log.torn == Some(n) {
            break;
        }
        let line = match std::str::from_utf8(raw.strip_suffix(b"\r").unwrap_or(raw)) {
            Ok(l) => l,
            Err(e) => {
                log.issues.push(Issue {
                    line: n,
                    message: format!(
                        "not valid UTF-8 (byte {} of the line): the file was edited or damaged",
                        e.valid_up_to() + 1
                    ),
                });
                continue;
            }
        };
        if n == 1 {
            match serde_json::from_str::<Header>(line) {
                Ok(h) => log.header = Some(h),
                Err(e) => log.issues.push(Issue { line: 1, message: format!("bad header: {e}") }),
            }
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(r) => log.records.push((n, r)),
            Err(e) => log.issues.push(Issue { line: n, message: format!("bad record: {e}") }),
        }
    }
    check_writes(&mut log);
    if bytes.is_empty() {
        log.issues.push(Issue { line: 1, message: "the ledger is empty: it has no header".into() });
    }
    log
}

/// Writes: a record with `more = k` is followed by k records counting down to 0. A write whose
/// last record is missing is interrupted: `torn` moves to its first line.
fn check_writes(log: &mut Log) {
    let mut open: Option<(u64, u32)> = None; // (first line of the write, records still expected)
    for (n, r) in &log.records {
        match open {
            Some((first, k)) if r.more + 1 != k => {
                log.issues.push(Issue {
                    line: *n,
                    message: format!(
                        "the write that starts on line {first} is broken: a record is missing or out of place"
                    ),
                });
                open = None;
            }
            Some((first, _)) if r.more > 0 => open = Some((first, r.more)),
            Some(_) => open = None,
            None if r.more > 0 => open = Some((*n, r.more)),
            None => {}
        }
    }
    if let Some((first, k)) = open {
        let start = log.torn.map_or(first, |t| t.min(first));
        log.torn = Some(start);
        log.issues.push(Issue {
            line: first,
            message: format!("the write that starts here is incomplete ({k} record(s) missing: it was interrupted); nothing is appended until `andon ledger repair` sets it aside"),
        });
    }
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
            issues.push(Issue { line: *line, message: m });
        }
    }
    (state, issues)
}

fn io_err(p: &Path) -> impl Fn(std::io::Error) -> LedgerError + '_ {
    move |e| LedgerError::Io(format!("{}: {e}", p.display()))
}

/// The bytes of the log in `dir`; `None` when there is none.
fn read_log(dir: &Path) -> Result<Option<Vec<u8>>, LedgerError> {
    let path = dir.join(LOG_FILE);
    match fs::read(&path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(&path)(e)),
    }
}

/// The state the parsed log folds into and every problem of it (its lines, its writes, its
/// records' rules, a newer format), sorted by line.
fn examine(log: &Log) -> (State, Vec<Issue>) {
    let (state, mut issues) = fold(log);
    issues.extend(log.issues.iter().cloned());
    if let Some(h) = &log.header
        && h.andon_ledger > FORMAT
    {
        issues.push(Issue {
            line: 1,
            message: format!("ledger format {} is newer than this andon's ({FORMAT}); upgrade andon", h.andon_ledger),
        });
    }
    issues.sort_by_key(|i| i.line);
    (state, issues)
}

/// The log as it stands before an interrupted write (the whole log when there is none): the
/// state those records fold into, the problems among them, and the records.
fn before_cut(log: &Log) -> (State, Vec<Issue>, Vec<Record>) {
    let cut = log.torn.unwrap_or(u64::MAX);
    let kept = Log {
        header: log.header.clone(),
        records: log.records.iter().filter(|(n, _)| *n < cut).cloned().collect(),
        issues: log.issues.iter().filter(|i| i.line < cut).cloned().collect(),
        torn: None,
    };
    let (state, issues) = examine(&kept);
    (state, issues, kept.records.into_iter().map(|(_, r)| r).collect())
}

/// Reads the ledger in `dir`: None when there is none; the state when it is valid.
pub fn load(dir: &Path) -> Result<Option<(Header, State, Vec<Record>)>, LedgerError> {
    let Some(bytes) = read_log(dir)? else { return Ok(None) };
    let log = parse_bytes(&bytes);
    let (state, issues) = examine(&log);
    match (issues.is_empty(), log.header) {
        (true, Some(h)) => Ok(Some((h, state, log.records.into_iter().map(|(_, r)| r).collect()))),
        _ => Err(LedgerError::Invalid(issues)),
    }
}

/// `ledger.md` as the log in `dir` renders it now: None when there is no ledger.
pub fn rendered(dir: &Path) -> Result<Option<String>, LedgerError> {
    Ok(load(dir)?.map(|(h, state, records)| render::render(&h, &state, &records)))
}

/// Takes the ledger's exclusive lock in `dir`, held until the returned file is dropped.
fn lock(dir: &Path) -> Result<fs::File, LedgerError> {
    let lock_path = dir.join(LOCK_FILE);
    let lock =
        OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).map_err(io_err(&lock_path))?;
    lock.lock_exclusive().map_err(io_err(&lock_path))?;
    Ok(lock)
}

/// Appends `events` under the exclusive lock, creating the ledger with `header` when there is
/// none (an existing ledger keeps the header it was created with, and its view is rendered from
/// it). The whole log is checked first and every new event against the state; a refused event
/// writes nothing. Returns the records written.
pub fn append(dir: &Path, header: &Header, events: &[Event], now: u64) -> Result<Vec<Record>, LedgerError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let lock = lock(dir)?;
    view::remove_dead_temporaries(dir);
    let path = dir.join(LOG_FILE);
    let (recorded, mut state, mut records) = match load(dir)? {
        Some((h, state, records)) => (Some(h), state, records),
        None => (None, State::default(), Vec::new()),
    };
    if let Some(h) = &recorded {
        refuse_a_view_that_differs(dir, h, &state, &records)?;
    }
    let mut seq = records.len() as u64;
    let mut text = String::new();
    if recorded.is_none() {
        text.push_str(&serde_json::to_string(header).expect("header serializes"));
        text.push('\n');
    }
    let mut written = Vec::new();
    for (i, e) in events.iter().enumerate() {
        seq += 1;
        apply(&mut state, seq, e).map_err(|m| LedgerError::Refused(format!("refused, nothing written: {m}")))?;
        let r = Record { seq, at: now, event: e.clone(), more: (events.len() - 1 - i) as u32 };
        text.push_str(&serde_json::to_string(&r).expect("record serializes"));
        text.push('\n');
        written.push(r);
    }
    if recorded.is_none() {
        // a new ledger appears whole (header and first write) or not at all
        write_atomic(dir, &path, text.as_bytes())?;
    } else {
        let mut f = OpenOptions::new().append(true).open(&path).map_err(io_err(&path))?;
        f.write_all(text.as_bytes()).and_then(|_| f.sync_all()).map_err(io_err(&path))?;
    }
    records.extend(written.iter().cloned());
    write_human(dir, &render(recorded.as_ref().unwrap_or(header), &state, &records)).map_err(|e| {
        LedgerError::Io(format!(
            "the records were written to {LOG_FILE}, but {HUMAN_FILE} could not be rendered ({e}); the next write renders it again"
        ))
    })?;
    drop(lock);
    Ok(written)
}

/// Refuses to write while `ledger.md` differs from the log's rendering (and is no earlier one):
/// the log or the view was edited by hand, and a write would render the view again and erase the
/// only trace of the edit. A view that is behind or missing is rendered by the write.
fn refuse_a_view_that_differs(dir: &Path, h: &Header, state: &State, records: &[Record]) -> Result<(), LedgerError> {
    match view::stand(read_view(dir)?.as_deref(), h, state, records) {
        View::Differs { line } => Err(LedgerError::Refused(format!(
            "refused, nothing written: {HUMAN_FILE} differs from {LOG_FILE} at its line {line}, and it is no earlier \
             rendering of the log: one of them was edited by hand; run `andon ledger check`, then restore the edited \
             file (or remove {HUMAN_FILE} if only the view was edited)"
        ))),
        _ => Ok(()),
    }
}

/// Writes `path` whole and durably ([`crate::text::write_durable`]).
fn write_atomic(_dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), LedgerError> {
    crate::text::write_durable(path, bytes).map_err(io_err(path))
}

/// Under the exclusive lock: renders `ledger.md` again when it is behind the log or missing (a
/// writer was stopped between the two), and removes the temporary files of dead writers. A view
/// that differs otherwise is left for `andon ledger check` to report. Returns how the view stood
/// when it was rendered again; an invalid log is refused, as by [`load`].
pub fn refresh_view(dir: &Path) -> Result<Option<View>, LedgerError> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let lock = lock(dir)?;
    view::remove_dead_temporaries(dir);
    let Some((header, state, records)) = load(dir)? else { return Ok(None) };
    let have = read_view(dir)?;
    // a view that shows the last record is not behind: nothing to render (the common case)
    if have.as_deref().and_then(view::last_shown).is_some_and(|n| Some(n) == records.last().map(|r| r.seq)) {
        return Ok(None);
    }
    let stood = view::stand(have.as_deref(), &header, &state, &records);
    if !stood.renders_again() {
        return Ok(None);
    }
    write_human(dir, &render(&header, &state, &records))?;
    drop(lock);
    Ok(Some(stood))
}

/// An interrupted write `repair` set aside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAside {
    /// Lines set aside (first, last), counting the header as line 1.
    pub lines: (u64, u64),
    /// Where they were kept.
    pub kept_in: PathBuf,
}

/// What `repair` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repaired {
    /// The interrupted last write, set aside.
    pub set_aside: Option<SetAside>,
    /// How `ledger.md` stood (behind the log, or missing) before it was rendered again.
    pub view: Option<View>,
    /// Temporary files of dead writers, removed.
    pub removed: Vec<PathBuf>,
}

impl Repaired {
    /// Anything was repaired.
    pub fn changed(&self) -> bool {
        self.set_aside.is_some() || self.view.is_some() || !self.removed.is_empty()
    }
}

/// Under the exclusive lock, repairs what an interrupted writer leaves and nothing else: an
/// interrupted last write (a torn last line, or whole lines of a write whose last record is
/// missing) is copied to `ledger.torn-<at>.jsonl` beside the log, fsynced, and only then cut from
/// it, and the view rendered again; a `ledger.md` behind the log or missing is rendered again;
/// temporary files of dead writers are removed. A ledger with any other problem (a hand edit of
/// the log, or a view that is no rendering of a whole log) is refused and left unchanged, because
/// only a person can say what an edit meant.
/// With no log, only the temporaries of dead writers are removed (a ledger being created whole
/// when its writer was stopped).
pub fn repair(dir: &Path, now: u64) -> Result<Repaired, LedgerError> {
    if !dir.is_dir() {
        return Ok(Repaired::default());
    }
    let lock = lock(dir)?;
    let path = dir.join(LOG_FILE);
    let Some(bytes) = read_log(dir)? else {
        return Ok(Repaired { removed: view::remove_dead_temporaries(dir), ..Repaired::default() });
    };
    let log = parse_bytes(&bytes);
    let (header, state, records) = repairable(&log)?;
    let stood = view::stand(read_view(dir)?.as_deref(), &header, &state, &records);
    // a view beside an interrupted write is rendered again whatever it shows; beside a whole log,
    // one that is no earlier rendering of it says the log or the view was edited
    if let (View::Differs { line }, None) = (&stood, log.torn) {
        return Err(LedgerError::Refused(format!(
            "not repaired: {}; if the log is right as it is (only {HUMAN_FILE} was edited, or the log was restored), delete {HUMAN_FILE} and run `andon ledger repair` again, else restore {LOG_FILE} from a copy or version control",
            view_differs(*line, &records, &header, &state)
        )));
    }
    let mut done = Repaired { removed: view::remove_dead_temporaries(dir), ..Repaired::default() };
    if let Some(cut) = log.torn {
        let offset = line_start(&bytes, cut);
        let last = bytes.split_inclusive(|b| *b == b'\n').count() as u64;
        let aside = dir.join(format!("ledger.torn-{now}.jsonl"));
        write_atomic(dir, &aside, &bytes[offset..])?;
        let f = OpenOptions::new().write(true).open(&path).map_err(io_err(&path))?;
        f.set_len(offset as u64).and_then(|_| f.sync_all()).map_err(io_err(&path))?;
        done.set_aside = Some(SetAside { lines: (cut, last), kept_in: aside });
    }
    if done.set_aside.is_some() || stood.renders_again() {
        write_human(dir, &render(&header, &state, &records))?;
        done.view = stood.renders_again().then_some(stood);
    }
    drop(lock);
    Ok(done)
}

/// The ledger `repair` would leave (header, state, records), or why it is refused: a problem
/// anywhere before the interrupted write, or a torn header.
fn repairable(log: &Log) -> Result<(Header, State, Vec<Record>), LedgerError> {
    let (state, mut issues, records) = before_cut(log);
    if log.torn.is_some_and(|cut| cut <= 1) {
        issues.insert(
            0,
            Issue {
                line: 1,
                message: "the header itself is torn: remove the ledger and run `andon loop` again".into(),
            },
        );
    }
    match (issues.first(), &log.header) {
        (None, Some(h)) => Ok((h.clone(), state, records)),
        (first, _) => {
            let i = first.cloned().unwrap_or(Issue { line: 1, message: "no header".into() });
            Err(LedgerError::Refused(format!(
                "not repaired: line {}: {}; only an interrupted last write is repaired; restore {LOG_FILE} from a copy or version control",
                i.line, i.message
            )))
        }
    }
}

/// The byte offset at which line `line` (1-based) of `bytes` starts.
fn line_start(bytes: &[u8], line: u64) -> usize {
    if line <= 1 {
        return 0;
    }
    bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(line as usize - 2).map_or(bytes.len(), |(i, _)| i + 1)
}

/// Where a view that differs from the log's rendering first does: its line, and the log's line
/// when that line of the rendering is a record's history line.
fn view_differs(line: u64, records: &[Record], header: &Header, state: &State) -> String {
    let want = render(header, state, records);
    let seq = want
        .lines()
        .nth(line as usize - 1)
        .and_then(|l| l.split_once(". "))
        .and_then(|(n, _)| n.parse::<u64>().ok())
        .filter(|s| records.iter().any(|r| r.seq == *s));
    match seq {
        Some(s) => format!(
            "{HUMAN_FILE} disagrees with the log at its line {line}, which shows the record on line {} of {LOG_FILE}",
            s + 1
        ),
        None => format!("{HUMAN_FILE} disagrees with the log at its line {line}"),
    }
}

fn write_human(dir: &Path, text: &str) -> Result<(), LedgerError> {
    write_atomic(dir, &dir.join(HUMAN_FILE), text.as_bytes())
}

/// The text of `ledger.md` in `dir` (bytes that are not UTF-8 are replaced, so they differ);
/// `None` when there is none.
fn read_view(dir: &Path) -> Result<Option<String>, LedgerError> {
    let path = dir.join(HUMAN_FILE);
    match fs::read(&path) {
        Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(&path)(e)),
    }
}

/// What `andon ledger check` finds: every problem (line 0 is `ledger.md`), the state when there
/// is none, and how `ledger.md` stands against the log (when the log has a header).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspection {
    pub issues: Vec<Issue>,
    pub state: Option<State>,
    pub view: Option<View>,
}

impl Inspection {
    /// The log is valid and only its view lags (behind or missing): `andon ledger repair` or the
    /// next `andon loop` renders it again.
    pub fn stale(&self) -> bool {
        self.view.as_ref().is_some_and(View::renders_again) && self.issues.iter().all(|i| i.line == 0)
    }
}

/// Every problem of the ledger in `dir`: the log's format and rules, and whether `ledger.md`
/// agrees with it. Err when there is no ledger.
pub fn check(dir: &Path) -> Result<(Vec<Issue>, Option<State>), LedgerError> {
    inspect(dir).map(|i| (i.issues, i.state))
}

/// The problems of the log itself, without how `ledger.md` stands against it, and its state
/// when it has none.
pub fn log_problems(dir: &Path) -> Result<(Vec<Issue>, Option<State>), LedgerError> {
    let mut i = inspect(dir)?;
    // a view behind its log or missing is a stopped writer's, rendered again by the next loop; a
    // view that disagrees with the log says the log was edited
    if matches!(i.view, Some(View::Behind { .. } | View::Missing)) {
        i.issues.pop();
    }
    let state = if i.issues.is_empty() { i.state } else { None };
    Ok((i.issues, state))
}

/// [`check`], with how `ledger.md` stands against the log. The view is compared only with a log
/// that has no problem: an edited or unreadable record is reported on its own line, and `repair`
/// renders the view again when it sets an interrupted write aside.
pub fn inspect(dir: &Path) -> Result<Inspection, LedgerError> {
    let path = dir.join(LOG_FILE);
    let bytes = fs::read(&path).map_err(io_err(&path))?;
    let log = parse_bytes(&bytes);
    let (state, mut issues) = examine(&log);
    let view = match log.header.as_ref().filter(|_| issues.is_empty()) {
        Some(h) => {
            let records: Vec<Record> = log.records.iter().map(|(_, r)| r.clone()).collect();
            Some(view::stand(read_view(dir)?.as_deref(), h, &state, &records))
        }
        None => None,
    };
    if let Some(m) = view.as_ref().and_then(view_issue) {
        issues.push(Issue { line: 0, message: m });
    }
    let state = issues.is_empty().then_some(state);
    Ok(Inspection { issues, state, view })
}

/// The problem a view that is not the log's rendering is, in words, with what to do.
fn view_issue(v: &View) -> Option<String> {
    match v {
        View::Current => None,
        View::Behind { shown, total } => Some(format!(
            "{HUMAN_FILE} is behind the log: it shows {shown} of its {total} records (a writer was stopped after the log's append and before the view's); `andon ledger repair` or the next `andon loop` renders it again"
        )),
        View::Missing => Some(format!(
            "{HUMAN_FILE} is missing; `andon ledger repair` or the next `andon loop` renders it from the log"
        )),
        View::Differs { line } => Some(format!(
            "{HUMAN_FILE} disagrees with the log at its line {line}; it is rendered from the log, never edited: if the log is right as it is, delete {HUMAN_FILE} and run `andon ledger repair`, else restore {LOG_FILE} from a copy or version control"
        )),
    }
}

/// The ledger state as relation rows for queries: (relation name, rendered row).
pub fn facts(state: &State) -> Vec<(&'static str, Vec<String>)> {
    let mut out = Vec::new();
    for g in state.gaps.values() {
        let kind = match g.kind {
            GapKind::Bug => "bug",
            GapKind::Feature => "feature",
            GapKind::Wire => "wire",
        };
        out.push(("LedgerGap", vec![g.id.clone(), kind.into(), g.stage.clone(), g.status.name().into()]));
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
            out.push(("LedgerGapRadius", vec![g.id.clone(), r.name().into()]));
        }
    }
    for (name, st) in &state.stages {
        out.push(("LedgerStage", vec![name.clone(), st.root.clone(), st.confidence.clone(), st.source.clone()]));
        if let Some(lane) = state.stage_lane(name) {
            out.push(("LedgerStageLane", vec![name.clone(), lane.into()]));
        }
    }
    for e in state.evidence.values() {
        let verdict =
            serde_json::to_value(e.verdict).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        out.push((
            "LedgerEvidence",
            vec![e.id.clone(), e.wire.producer.clone(), e.wire.consumer.clone(), e.approach.clone(), verdict],
        ));
        if let Some(r) = e.reason {
            out.push(("LedgerEvidenceReason", vec![e.id.clone(), r.name().into()]));
        }
        if let Some(c) = e.capability.as_ref().filter(|_| e.reason == Some(Reason::UnprovableHere)) {
            out.push(("LedgerUnprovableHere", vec![e.id.clone(), c.name.clone()]));
        }
    }
    for (w, s) in &state.wires {
        let status =
            serde_json::to_value(s.status).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        out.push(("LedgerWire", vec![w.producer.clone(), w.consumer.clone(), status]));
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

/// Where the ledger of a repository lives (`ledger_dir`, relative to the repository unless absolute).
///
/// A `ledger_dir` outside the repository may be shared by several repositories (R5): each one's
/// records go to its own log, in the subdirectory named by its identity ([`repo_identity`]), never
/// by its directory's name. Only a repository with no identity (no `repo_id`, no commit) keeps
/// its log in the shared directory itself, guarded by the log's recorded repository.
pub fn dir_of(root: &Path, settings: &crate::config::Settings) -> PathBuf {
    let d = &settings.ledger_dir.value;
    let dir = if d.is_absolute() { d.clone() } else { root.join(d) };
    if !outside(root, &dir) {
        return dir;
    }
    match repo_identity(root, &settings.repo_id.value) {
        Some(id) => dir.join(id),
        None => dir,
    }
}

/// Is `dir` outside the repository at `root` (compared without following links that may not
/// exist yet: `..` and `.` resolved in place, the root's own links resolved)?
pub fn outside(root: &Path, dir: &Path) -> bool {
    let lexical = |p: &Path| -> PathBuf {
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    };
    let absolute =
        |p: &Path| if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(p) };
    let root_real = fs::canonicalize(root).unwrap_or_else(|_| lexical(&absolute(root)));
    let dir = lexical(&absolute(dir));
    // the directory's nearest existing ancestor, with its links resolved
    let mut existing = dir.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent().map(Path::to_path_buf)) {
            (Some(n), Some(p)) => {
                rest.push(n);
                existing = p;
            }
            _ => break,
        }
    }
    let mut real = fs::canonicalize(&existing).unwrap_or(existing);
    real.extend(rest.iter().rev());
    // where it really is: a link inside the repository to a shared directory is outside it
    !real.starts_with(&root_real)
}

/// The repository's stable identity: the `repo_id` setting, else its root commit (the oldest
/// commit with no parent, the smallest when several). `None` without either.
pub fn repo_identity(root: &Path, repo_id: &str) -> Option<String> {
    if !repo_id.is_empty() {
        return Some(repo_id.to_string());
    }
    static KNOWN: std::sync::Mutex<Vec<(PathBuf, Option<String>)>> = std::sync::Mutex::new(Vec::new());
    let key = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, id)) = known.iter().find(|(k, _)| *k == key) {
        return id.clone();
    }
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-list", "--max-parents=0", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    let id = out.and_then(|o| {
        String::from_utf8(o.stdout).ok()?.lines().map(str::trim).filter(|l| !l.is_empty()).min().map(str::to_string)
    });
    known.push((key, id.clone()));
    id
}

#[cfg(test)]
mod tests {
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
        events.iter().enumerate().find_map(|(i, e)| apply(&mut state, i as u64 + 1, e).err())
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
                    backtracks: 0,
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
                    backtracks: 0,
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
        let confirm =
            Event::GateConfirmed { stage: "P2".into(), rule: "BC-1".into(), by: "lead".into(), reason: "ok".into() };
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
        assert!(apply(&mut state, 3, &restate(" ")).unwrap_err().contains("without a location or a summary"));
        let missing = Event::GapRestated { gap: "B-2".into(), location: at(1), summary: "x".into() };
        assert!(apply(&mut state, 3, &missing).unwrap_err().contains("no gap `B-2`"));
        state.gaps.get_mut("B-1").unwrap().status = GapStatus::Closed;
        assert!(apply(&mut state, 3, &restate("again")).unwrap_err().contains("is closed"));
    }
}
