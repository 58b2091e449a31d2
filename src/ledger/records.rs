//! The strict typed records of the log: its header, the events one per line, and the evidence,
//! wire and gap values they carry, with their serde form (unknown fields are errors).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::BlastRadius;

/// The ledger format this andon writes; a newer ledger is never appended to. Format 2 links
/// every record to the log before it ([`super::chain`]); a format-1 ledger is linked from a
/// `ledger_chained` record on, written by the first append of this andon.
pub const FORMAT: u32 = 2;

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
    /// The root commit of the repository that created the ledger, where it had one: a log copied
    /// from another repository names another root ([`super::chain::foreign`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_commit: Option<String>,
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

/// A gap's kind, a proof's verdict and a wire's status are the schema's vocabularies
/// (`rules/schema.dl`), written in the log as their tokens.
pub use crate::facts::vocab::{GapKind, Verdict, WireStatus};

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
    /// The checks pass with a trivial body in place of a function the fix changed: they do not
    /// pin what it does.
    NotPinning,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::UnprovableHere => "unprovable-here",
            Reason::TimedOut => "timed-out",
            Reason::NotShown => "not-shown",
            Reason::Contested => "contested",
            Reason::NotDiscriminating => "not-discriminating",
            Reason::NotPinning => "not-pinning",
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

/// A file whose change alters how fixes are judged, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgedFile {
    pub path: String,
    pub why: String,
}

/// Who stood behind a person's decision: the operating-system user and the terminal the gap id
/// was typed back on. An agent's shell has no terminal, so it cannot stand in for a person.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Witness {
    pub user: String,
    pub terminal: String,
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
    /// How many tests the output says ran, skipped ones not counted (`None`: it does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran: Option<u64>,
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
    /// The trivial variants of the changed functions the checks ran against ([pinning]).
    ///
    /// [pinning]: crate::andon_loop::verify::pin
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pinned: Vec<PinVariant>,
    /// Changed files whose functions could not be pinned here (Rust, without a mutation tool).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_pinned_here: Vec<String>,
}

/// One trivial variant of a changed function, and whether the checks caught it (failed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinVariant {
    pub function: String,
    pub file: String,
    /// The body put in its place (`return []`).
    pub body: String,
    pub caught: bool,
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
    /// For a proof of a wire: the fingerprint of the wire's surface it was proven on;
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
        /// Who was at the terminal (absent on records from before andon asked).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        witness: Option<Witness>,
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
        /// Who was at the terminal (absent on records from before andon asked).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        witness: Option<Witness>,
    },
    GapDeferred {
        gap: String,
        by: String,
        reason: String,
        /// Who was at the terminal (absent on records from before andon asked).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        witness: Option<Witness>,
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
        /// Who was at the terminal (absent on records from before andon asked).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        witness: Option<Witness>,
    },
    GapSkipped {
        gap: String,
        by: String,
        reason: String,
        /// Who was at the terminal (absent on records from before andon asked).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        witness: Option<Witness>,
    },
    /// A person's decision asked for where no person could give it (standard input not a
    /// terminal, CI, `--unattended`): kept so a person sees what waits for them, never applied.
    DecisionPending {
        /// The gap (a stage for `confirm`).
        gap: String,
        /// `authorize`, `override`, `defer`, `skip` or `confirm`.
        action: String,
        by: String,
        reason: String,
        /// Why it could not be taken.
        why: String,
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
        /// The sub-cycles (backtracks to an earlier stage) of the cycle; `backtracks` in the log.
        #[serde(rename = "backtracks")]
        sub_cycles: u32,
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
    /// The tree fixes are judged from, when no proof moved it: the tree the loop first saw, or
    /// HEAD after commits that change nothing about how fixes are judged. A proof the loop records
    /// (a gap closed on a verified fix) moves it too; a commit never does by itself.
    BaseRecorded {
        commit: String,
        why: String,
    },
    /// Since the base, the working tree (commits included) changes how fixes are judged: a
    /// `[[command]]`, a runner's configuration, a test removed or skipped. The loop holds until a
    /// person accepts it (`andon authorize` with its id) or it is undone.
    JudgingChanged {
        /// `J-` and the first hex digits of `fingerprint`.
        id: String,
        base: String,
        /// The commits since the base, `short-id subject`.
        commits: Vec<String>,
        /// Each file that changes the judging, with why.
        files: Vec<JudgedFile>,
        /// The judging change's digest: the same change keeps its id.
        fingerprint: String,
    },
    /// A judging change held for a person is undone (the files are as the base has them again).
    JudgingUndone {
        id: String,
    },
    /// A person accepts a judging change: fixes are judged from `base` (the working tree they
    /// accepted, kept as a commit) on.
    JudgingAccepted {
        id: String,
        base: String,
        by: String,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        witness: Option<Witness>,
    },
    /// A ledger written before records were linked is linked from here on: this record's link
    /// covers every record before it (`unlinked` of them), and every later record carries one.
    LedgerChained {
        unlinked: u64,
    },
    /// The input files the records of this write were planned from (proposals, proofs, audits),
    /// each by the digest of its bytes ([`super::chain::input_digest`]): recorded in the same
    /// write, so an input is taken once even when the run that took it was killed before it
    /// removed the file.
    InputsTaken {
        digests: Vec<String>,
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
    /// The digest of the log before this record (its header and every record up to it, each in
    /// its canonical form, `sha256:` and hex): the link to the one before it ([`super::chain`]).
    /// Absent only on records of a ledger written before records were linked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Evidence {
    /// Whether it is an attempt to prove (every record but an authorization note).
    pub fn is_proof_attempt(&self) -> bool {
        self.approach != AUTHORIZATION_NOTE
    }
}
