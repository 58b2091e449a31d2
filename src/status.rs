//! `andon status` (R114–R116): the read-only board, derived from the ledger alone. Standing tier-1
//! holds first; every stage and wire with its status; counters; the constraint and the rule that
//! chose it; open gaps by kind and blast radius; the proof approaches used; exactly one next step.
//! Beside the board, the suspected injections of the stored index (R123), which change none of it.

use std::collections::{BTreeMap, BTreeSet};

mod next;

use next::{entry_gate, next_for};
pub use next::{needs_input_next, next_of_gap, recorded_halt, undecided_next};

use crate::ledger::andon_rule::Condition;
use crate::ledger::{BlastRadius, Event, GapKind, GapState, GapStatus, Record, State, Verdict, Wire, WireStatus};

/// The suspected injections (R123) status lists: those of the stored index, as the last `andon
/// index`, `check` or `loop` left it. Status reads the index and never updates it (R114: no scan,
/// no write but its own report).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Injections {
    /// No index yet.
    NoIndex,
    /// The stored index cannot be read, and why.
    Unreadable(String),
    /// Sorted by path, line and text.
    Listed(Vec<crate::ops::Injection>),
}

impl Injections {
    /// Reads the stored index of `root` (read-only, no lock, no walk).
    pub fn of_stored_index(root: &std::path::Path) -> Injections {
        match crate::index::load(root) {
            Ok(Some(idx)) => Injections::Listed(crate::ops::suspected_injections(&idx)),
            Ok(None) => Injections::NoIndex,
            Err(why) => Injections::Unreadable(why.to_string()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    pub wire: Wire,
    pub evidence: String,
    pub claim: String,
    pub references: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireLine {
    pub wire: Wire,
    /// Its status on the board ([`board_status`]).
    pub status: BoardStatus,
    /// The evidence behind the status (None: never examined, so unproven).
    pub evidence: Option<String>,
    pub reopened: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageLine {
    pub name: String,
    pub confidence: String,
    pub source: String,
    /// `fast` or `slow`, once a proof about the stage says ([`State::stage_lane`]).
    pub lane: Option<&'static str>,
    pub wires: Vec<WireLine>,
    /// Ingest mode: the brief's advisory notes for the stage (context, never gaps, R58).
    pub advisory: Vec<String>,
    /// Ingest mode: entry gates of the stage no person confirmed yet (R57).
    pub open_gates: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
    pub wire: Wire,
    /// The rule that chose it: `thrash`, `most-blocked`, `stream-order`.
    pub rule: &'static str,
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    pub holds: Vec<Hold>,
    /// In stream order (producers first).
    pub stages: Vec<StageLine>,
    pub passes: u32,
    pub cycles: u32,
    pub sub_cycles: u32,
    pub constraint: Option<Constraint>,
    /// Gaps by lifecycle status (every status, closed included).
    pub gaps_by_status: BTreeMap<&'static str, usize>,
    /// Gaps not closed, by kind and by blast radius (`unproposed` before a proposal).
    pub open_by_kind: BTreeMap<&'static str, usize>,
    pub open_by_radius: BTreeMap<&'static str, usize>,
    pub approaches: BTreeMap<String, usize>,
    /// Every person's decision, in record order.
    pub decisions: Vec<crate::ledger::HumanDecision>,
    /// Decisions asked for where no person could give them (no terminal, CI, `--unattended`).
    pub pending_decisions: Vec<crate::ledger::PendingDecision>,
    /// Proof-strength audits: (evidence, tool, strength, detail).
    pub audits: Vec<(String, String, String, String)>,
    /// Gaps the scan no longer found without a verified fix: set aside, never proven.
    pub vanished: Vec<GapState>,
    /// What the loop works on next, exactly as `andon loop` reported it ([`agenda`]).
    pub next: Next,
    /// The halt the loop stands on, as `andon loop` would report it: `andon status` exits with
    /// its code.
    pub halt: Option<Condition>,
}

/// The board from the ledger's state and records (see [`agenda`] for `opts`).
pub fn board(state: &State, records: &[Record], opts: Options) -> Board {
    let stream = Stream::of(state);
    let stages = stage_lines(state, &stream);
    let holds = holds(state);
    let Agenda { constraint, next, picked, .. } = agenda(state, records, opts);
    let halt = standing_halt(state, records, picked.as_ref().map(|(id, _)| id.as_str()), &next);
    let gaps = GapCounts::of(state);
    let mut approaches = BTreeMap::new();
    for e in state.evidence.values().filter(|e| e.is_proof_attempt()) {
        *approaches.entry(e.approach.clone()).or_default() += 1;
    }
    let vanished = state.gaps.values().filter(|g| g.status == GapStatus::Vanished).cloned().collect();
    Board {
        holds,
        stages,
        passes: state.passes,
        cycles: state.cycles,
        sub_cycles: state.sub_cycles,
        constraint,
        gaps_by_status: gaps.by_status,
        open_by_kind: gaps.open_by_kind,
        open_by_radius: gaps.open_by_radius,
        approaches,
        decisions: state.decisions.clone(),
        pending_decisions: state.pending_decisions.clone(),
        audits: state
            .audits
            .iter()
            .flat_map(|(e, v)| v.iter().map(move |(t, s, d)| (e.clone(), t.clone(), s.clone(), d.clone())))
            .collect(),
        vanished,
        next,
        halt,
    }
}

/// The recorded stages and their wires, in stream order.
struct Stream {
    /// Every wire with a status, and every stage's outgoing wire.
    wires: BTreeSet<Wire>,
    /// Stream order over the recorded stages: producers before their consumers.
    order: Vec<String>,
}

impl Stream {
    /// Collects the wires and orders the stages by them.
    fn of(state: &State) -> Stream {
        let names: Vec<&String> = state.stages.keys().collect();
        let id = |n: &str| names.iter().position(|x| x.as_str() == n);
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut wires: BTreeSet<Wire> = state.wires.keys().cloned().collect();
        for (p, s) in &state.stages {
            for c in &s.outgoing {
                wires.insert(Wire { producer: p.clone(), consumer: c.clone() });
            }
        }
        for w in &wires {
            if let (Some(a), Some(b)) = (id(&w.producer), id(&w.consumer)) {
                edges.push((a as u32, b as u32));
            }
        }
        let nodes: Vec<u32> = (0..names.len() as u32).collect();
        let order: Vec<String> = crate::datalog::graph::condensed_order(&nodes, &edges, |n| names[n as usize].clone())
            .into_iter()
            .flatten()
            .map(|n| names[n as usize].clone())
            .collect();
        Stream { wires, order }
    }

    /// The stages the loop works, in stream order: every recorded stage, or in ingest mode the
    /// brief's only.
    fn worked(&self, state: &State, ingest: bool) -> Vec<String> {
        let brief = |s: &str| state.stages.get(s).is_some_and(|x| x.source == "brief");
        self.order.iter().filter(|s| !ingest || brief(s)).cloned().collect()
    }

    /// A stage's place in stream order (unrecorded stages last).
    fn position(&self, s: &str) -> usize {
        self.order.iter().position(|x| x == s).unwrap_or(usize::MAX)
    }

    /// How many stages a wire into `stage` holds up downstream of it (itself not counted).
    fn downstream(&self, stage: &str) -> usize {
        let mut seen: BTreeSet<&str> = BTreeSet::from([stage]);
        let mut stack = vec![stage];
        while let Some(s) = stack.pop() {
            for w in self.wires.iter().filter(|w| w.producer == s) {
                if seen.insert(w.consumer.as_str()) {
                    stack.push(w.consumer.as_str());
                }
            }
        }
        seen.len() - 1
    }

    /// The sort key of a wire in stream order.
    fn key(&self, w: &Wire) -> (usize, usize, Wire) {
        (self.position(&w.producer), self.position(&w.consumer), w.clone())
    }
}

/// Every stage in stream order, with its outgoing wires and its brief context.
fn stage_lines(state: &State, stream: &Stream) -> Vec<StageLine> {
    let line = |w: &Wire| {
        let st = state.wires.get(w);
        WireLine {
            wire: w.clone(),
            status: board_status(state, w),
            evidence: st.map(|s| s.evidence.clone()),
            reopened: st.map(|s| s.reopened.len()).unwrap_or(0),
        }
    };
    stream
        .order
        .iter()
        .map(|name| {
            let s = &state.stages[name];
            StageLine {
                name: name.clone(),
                confidence: s.confidence.clone(),
                source: s.source.clone(),
                lane: state.stage_lane(name),
                wires: stream.wires.iter().filter(|w| &w.producer == name).map(line).collect(),
                advisory: state.context.get(name).map(|c| c.advisory.clone()).unwrap_or_default(),
                open_gates: state
                    .context
                    .get(name)
                    .map(|c| c.open_gates().iter().map(|o| o.id.clone()).collect())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// Standing holds: wires whose current evidence is a non-overridable hold.
fn holds(state: &State) -> Vec<Hold> {
    state
        .wires
        .iter()
        .filter_map(|(w, s)| {
            let e = state.evidence.get(&s.evidence)?;
            e.hold.then(|| Hold {
                wire: w.clone(),
                evidence: e.id.clone(),
                claim: e.claim.clone(),
                references: e.references.clone(),
            })
        })
        .collect()
}

/// A thrashing wire (reopened `threshold` times or more): the most reopened, then stream order.
fn thrash_constraint(state: &State, stream: &Stream, threshold: usize) -> Option<Constraint> {
    let (w, s) = state.wires.iter().filter(|(_, s)| s.reopened.len() >= threshold).max_by(|a, b| {
        a.1.reopened.len().cmp(&b.1.reopened.len()).then_with(|| stream.key(b.0).cmp(&stream.key(a.0)))
    })?;
    Some(Constraint {
        wire: w.clone(),
        rule: "thrash",
        detail: format!("reopened {} times (threshold {threshold})", s.reopened.len()),
    })
}

/// The unproven wire blocking the most stages downstream, stream order breaking a tie.
fn most_blocked_constraint(state: &State, stream: &Stream) -> Option<Constraint> {
    let downstream = |stage: &str| stream.downstream(stage);
    let unproven: Vec<&Wire> = stream.wires.iter().filter(|w| !behind(state, w)).collect();
    let most = unproven.iter().map(|w| 1 + downstream(&w.consumer)).max();
    let tied: Vec<&&Wire> = unproven.iter().filter(|w| Some(1 + downstream(&w.consumer)) == most).collect();
    tied.into_iter().min_by_key(|w| stream.key(w)).map(|w| {
        let n = 1 + downstream(&w.consumer);
        Constraint {
            wire: (*w).clone(),
            rule: if unproven.iter().filter(|x| 1 + downstream(&x.consumer) == n).count() > 1 {
                "stream-order"
            } else {
                "most-blocked"
            },
            detail: format!("unproven; blocks {n} stage{} downstream", if n == 1 { "" } else { "s" }),
        }
    })
}

/// Gaps counted by lifecycle status, and those not closed by kind and by blast radius.
struct GapCounts {
    by_status: BTreeMap<&'static str, usize>,
    open_by_kind: BTreeMap<&'static str, usize>,
    open_by_radius: BTreeMap<&'static str, usize>,
}

impl GapCounts {
    /// Counts every gap of the state.
    fn of(state: &State) -> GapCounts {
        let mut c =
            GapCounts { by_status: BTreeMap::new(), open_by_kind: BTreeMap::new(), open_by_radius: BTreeMap::new() };
        for g in state.gaps.values() {
            *c.by_status.entry(g.status.name()).or_default() += 1;
            if !g.status.finished() {
                let kind = match g.kind {
                    crate::ledger::GapKind::Bug => "bug",
                    crate::ledger::GapKind::Feature => "feature",
                    crate::ledger::GapKind::Wire => "wire",
                };
                *c.open_by_kind.entry(kind).or_default() += 1;
                *c.open_by_radius.entry(g.blast_radius.map(|b| b.name()).unwrap_or("unproposed")).or_default() += 1;
            }
        }
        c
    }
}

/// What the person or agent driving the loop does next: the `next.action` token of every report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Action {
    /// Propose a fix for the picked gap.
    Propose,
    /// Apply the proposed fix, then verify it.
    ApplyAndVerify,
    /// A person decides (authority, a tier-2 override, deferral, skipping, a thrashing wire).
    Decide,
    /// The code contradicts the wire or the fix: change the code.
    FixTheCode,
    /// A person confirms an entry gate before the stage's work starts (ingest mode).
    Confirm,
    /// The loop spent its pass budget.
    Budget,
    /// The cycle converged.
    Converged,
    /// A cycle converged without a single fix.
    Hardened,
    /// Nothing the loop can do.
    #[default]
    None,
}

impl Action {
    /// The token reports print.
    pub fn token(self) -> &'static str {
        match self {
            Action::Propose => "propose",
            Action::ApplyAndVerify => "apply-and-verify",
            Action::Decide => "decide",
            Action::FixTheCode => "fix-the-code",
            Action::Confirm => "confirm",
            Action::Budget => "budget",
            Action::Converged => "converged",
            Action::Hardened => "hardened",
            Action::None => "none",
        }
    }
}

/// What the person or agent driving the loop does next, about which gap, and why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Next {
    pub action: Action,
    pub gap: Option<String>,
    pub detail: String,
}

/// How the agenda reads the ledger: the reopen count at which a wire thrashes, and whether the
/// stream is a brief's (ingest mode: its constraint is the brief's, over the brief's stages only,
/// whatever else an earlier self-scan left in the ledger).
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub thrash: u32,
    pub ingest: bool,
}

/// What the loop works on, derived from the ledger alone: `andon loop` picks by it after its scan
/// and reports it, `andon status` shows it, and `andon propose` refuses any other gap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Agenda {
    pub constraint: Option<Constraint>,
    /// The stage the loop works in (R37).
    pub cursor: Option<String>,
    /// The gap worked on and the rule that picked it.
    pub picked: Option<(String, String)>,
    pub next: Next,
}

/// The agenda of the ledger's state: the constraint, the cursor, the picked gap and the one next
/// step. The one function behind the loop's pick, `andon status` and `andon propose`.
pub fn agenda(state: &State, records: &[Record], opts: Options) -> Agenda {
    let stream = Stream::of(state);
    let cursor = cursor(state, &stream, opts.ingest);
    let constraint = if opts.ingest {
        cursor.as_deref().map(|c| brief_constraint(state, &stream, c))
    } else {
        constraint(state, records, &stream, opts.thrash)
    };
    let picked = cursor.as_deref().and_then(|c| pick(state, c, constraint.as_ref()));
    // a judging change waiting for a person holds everything else
    if let Some(j) = &state.judging {
        let next = Next { action: Action::Decide, gap: Some(j.id.clone()), detail: judging_detail(j) };
        return Agenda { constraint, cursor, picked, next };
    }
    let next = match &picked {
        Some((id, _)) => next_for(state, records, &state.gaps[id], opts.thrash),
        None => settled(state, records, &stream, opts.ingest),
    };
    Agenda { constraint, cursor, picked, next }
}

/// The halt the loop stands on: a judging change waiting for a person, an entry gate, or the
/// condition the picked gap stands halted on.
pub fn standing_halt(state: &State, records: &[Record], picked: Option<&str>, next: &Next) -> Option<Condition> {
    if state.judging.is_some() {
        return Some(Condition::Authorization);
    }
    if next.action == Action::Confirm {
        return Some(Condition::EntryGate);
    }
    gap_halt(state, records, picked?)
}

/// The condition gap `id` stands halted on, by its status (and, halted, its recorded halt).
pub fn gap_halt(state: &State, records: &[Record], id: &str) -> Option<Condition> {
    match state.gaps.get(id)?.status {
        GapStatus::HaltedAwaitingAuthorization => Some(Condition::Authorization),
        GapStatus::BlockedByEnvironment => Some(Condition::BlockedByEnvironment),
        GapStatus::Halted => recorded_halt(records, id).and_then(|(c, _)| c),
        _ => None,
    }
}

/// What a person does about a judging change the loop holds on.
pub fn judging_detail(j: &crate::ledger::JudgingHold) -> String {
    let files: Vec<String> = j.files.iter().map(|f| format!("`{}` {}", f.path, f.why)).collect();
    let commits = if j.commits.is_empty() { String::new() } else { format!(" (commits {})", j.commits.join("; ")) };
    format!(
        "halt:authorization: how fixes are judged changed since `{}`{commits}: {}; a person accepts it with `andon authorize {} --by <name> --reason <why>` (at a terminal), or the change is undone",
        &j.base[..j.base.len().min(12)],
        files.join("; "),
        j.id
    )
}

/// The constraint outside ingest mode: a thrashing wire, else the unproven wire blocking the most
/// stages, else the wire the last convergence recorded as limiting its cycle.
fn constraint(state: &State, records: &[Record], stream: &Stream, thrash: u32) -> Option<Constraint> {
    thrash_constraint(state, stream, thrash as usize)
        .or_else(|| most_blocked_constraint(state, stream))
        .or_else(|| converged_constraint(records))
}

/// The constraint the last convergence recorded (R64), with its wire.
fn converged_constraint(records: &[Record]) -> Option<Constraint> {
    let (cycle, text, wire) = records.iter().rev().find_map(|r| match &r.event {
        Event::CycleConverged { cycle, constraint, constraint_wire, .. } => {
            Some((*cycle, constraint.clone(), constraint_wire.clone()))
        }
        _ => None,
    })?;
    let text = text?;
    // a ledger written before the wire was recorded names it first: `producer -> consumer (…)`
    let wire = wire.or_else(|| {
        let (p, rest) = text.split_once(" -> ")?;
        let c = rest.split(" (").next()?;
        Some(Wire { producer: p.to_string(), consumer: c.to_string() })
    })?;
    Some(Constraint { wire, rule: "last-cycle", detail: format!("the wire that limited cycle {cycle} most: {text}") })
}

/// In ingest mode the constraint is the brief's own: the phase the cursor stands on, the earliest
/// with open work (R59), on the phase's own wire into the next phase of the brief.
fn brief_constraint(state: &State, stream: &Stream, stage: &str) -> Constraint {
    let brief = |s: &str| state.stages.get(s).is_some_and(|x| x.source == "brief");
    Constraint {
        wire: stream
            .wires
            .iter()
            .find(|w| w.producer == stage && brief(&w.consumer))
            .cloned()
            .unwrap_or(Wire { producer: stage.to_string(), consumer: stage.to_string() }),
        rule: "brief-order",
        detail: format!("`{stage}` is the earliest phase of the brief with open work"),
    }
}

/// A gap in progress: proposed, or halted (awaiting authority or on a condition). It is finished
/// before another is picked.
pub fn in_progress(state: &State) -> Option<&GapState> {
    state.gaps.values().find(|g| g.status.in_progress())
}

/// The cursor (R37): the stage of a gap in progress, else the first stage in stream order with an
/// outgoing wire that is not proven, else the first stage with open gaps. In ingest mode the
/// phases' wires are not proven by the loop: the cursor is the earliest phase with open work (R59).
fn cursor(state: &State, stream: &Stream, ingest: bool) -> Option<String> {
    held_cursor(state, stream, ingest).or_else(|| stream.worked(state, ingest).into_iter().find(|s| open_in(state, s)))
}

/// Is the loop past wire `w`: it stands proven, or a person deferred its proof because it cannot
/// run here (decision 8: excepted, never proven).
fn behind(state: &State, w: &Wire) -> bool {
    stands_proven(state, w) || state.environment_blocked().iter().any(|(_, b)| b == w)
}

/// The cursor when the ledger fixes it whatever a scan finds: the stage of a gap in progress,
/// else (outside ingest mode) the first stage in stream order with an outgoing wire not proven.
fn held_cursor(state: &State, stream: &Stream, ingest: bool) -> Option<String> {
    if let Some(g) = in_progress(state) {
        return Some(g.stage.clone());
    }
    let unproven = |s: &str| stream.wires.iter().any(|w| w.producer == s && !behind(state, w));
    if ingest {
        return None;
    }
    stream.worked(state, ingest).into_iter().find(|s| unproven(s))
}

/// Where the loop's scan goes, as the agenda reads the ledger: the held cursor ([`cursor`]'s
/// first two rules) alone, or else every worked stage in stream order, the first with open gaps
/// after its scan being the cursor.
pub fn scan_order(state: &State, ingest: bool) -> Result<String, Vec<String>> {
    let stream = Stream::of(state);
    held_cursor(state, &stream, ingest).ok_or_else(|| stream.worked(state, ingest))
}

/// Whether the ledger has an open gap in `stage`.
pub fn open_in(state: &State, stage: &str) -> bool {
    state.gaps.values().any(|g| g.stage == stage && g.status == GapStatus::Open)
}

/// A gap is on the constraint when it is about the constraint's wire or lies in its producer stage.
pub fn on_constraint(constraint: Option<&Constraint>, stage: &str, wire: Option<&Wire>) -> bool {
    constraint.is_some_and(|k| Some(&k.wire) == wire || k.wire.producer == stage)
}

/// The blast radius a fix of `g` is estimated to have, as recorded when it opened; a gap recorded
/// without one is estimated from its place (CI configuration, an unproven wire).
pub fn estimated_radius(g: &GapState) -> BlastRadius {
    g.estimated_radius.unwrap_or_else(|| {
        let p = g.location.path.as_str();
        if p.starts_with(".github/") || p.starts_with(".gitlab") || p.starts_with(".ci/") {
            BlastRadius::SharedStateVisible
        } else if g.kind == GapKind::Wire && g.source == "UnprovenWire" {
            BlastRadius::HardToReverse
        } else {
            BlastRadius::LocalReversible
        }
    })
}

/// The gap to work on in `stage`: a gap in progress is finished before another is picked; else
/// the pick order (R61–R65) among the stage's open gaps: on the constraint as it is now (R63),
/// then wire before bug before feature, then the smallest estimated blast radius, then the id.
/// Returns the gap and the rule that decided.
fn pick(state: &State, stage: &str, constraint: Option<&Constraint>) -> Option<(String, String)> {
    if let Some(g) = in_progress(state) {
        return Some((g.id.clone(), "in progress: a gap is finished before another is picked".into()));
    }
    let kind_rank = |k: GapKind| match k {
        GapKind::Wire => 0,
        GapKind::Bug => 1,
        GapKind::Feature => 2,
    };
    let key = |g: &GapState| {
        (!on_constraint(constraint, &g.stage, g.wire.as_ref()), kind_rank(g.kind), estimated_radius(g), g.id.clone())
    };
    let mut open: Vec<&GapState> =
        state.gaps.values().filter(|g| g.stage == stage && g.status == GapStatus::Open).collect();
    open.sort_by_key(|g| key(g));
    let first = *open.first()?;
    let rule = match open.get(1) {
        None => "the only open gap".to_string(),
        Some(second) => {
            let (a, b) = (key(first), key(second));
            if a.0 != b.0 {
                "rule 1: it is on the constraint".into()
            } else if a.1 != b.1 {
                format!("rule 2: a {:?} gap comes before a {:?} gap", first.kind, second.kind).to_lowercase()
            } else if a.2 != b.2 {
                format!("rule 3: smallest estimated blast radius ({})", a.2.name())
            } else {
                "rule 4: stable tie-break by id".into()
            }
        }
    };
    Some((first.id.clone(), rule))
}

/// Whether the loop proves the picked gap `g` itself: an open wire with no proof, which needs no
/// change (one pass per wire), unless it thrashes or its stage awaits an entry gate.
pub fn proven_by_the_loop(state: &State, g: &GapState, thrash: u32) -> bool {
    g.status == GapStatus::Open
        && g.source == "UnprovenWire"
        && g.wire.as_ref().is_some_and(|w| state.wires.get(w).is_none_or(|ws| (ws.reopened.len() as u32) < thrash))
        && entry_gate(state, g).is_none()
}

/// Nothing to pick: some wire is still not proven (nothing the loop can do), or the cycle
/// converged, as its last convergence record says (hardened when it needed nothing).
fn settled(state: &State, records: &[Record], stream: &Stream, ingest: bool) -> Next {
    let blocked: Vec<Wire> = state.environment_blocked().into_iter().map(|(_, w)| w).collect();
    let all_proven = stream.wires.iter().all(|w| behind(state, w));
    if !all_proven {
        if let Some((w, _)) =
            state.wires.iter().find(|(_, ws)| state.evidence.get(&ws.evidence).is_some_and(|e| e.hold))
        {
            let detail = format!(
                "resolve the tier-1 hold on {w}: change the code (or the contract) and re-run `andon loop`; no command or override clears it"
            );
            return Next { action: Action::FixTheCode, gap: None, detail };
        }
        let detail = if ingest {
            "every work item of the brief is settled; the phases' wires and their Behavior Contract obligations are not proven by the loop in this version".into()
        } else {
            "no open gap the scan can see, but some wire is not proven".into()
        };
        return Next { action: Action::None, gap: None, detail };
    }
    let mut convergences = records.iter().rev().filter_map(|r| match &r.event {
        Event::CycleConverged { passes, hardened, .. } => Some((r.seq, *passes, *hardened)),
        _ => None,
    });
    let last = convergences.next();
    if last.is_some_and(|(_, _, hardened)| hardened) {
        return Next {
            action: Action::Hardened,
            gap: None,
            detail: "a cycle converged without a single fix: the stream is hardened".into(),
        };
    }
    let (end, passes) = last.map_or((u64::MAX, 0), |(seq, passes, _)| (seq, passes));
    let start = convergences.next().map_or(0, |(seq, ..)| seq);
    let vanished =
        records.iter().filter(|r| r.seq > start && r.seq < end && matches!(r.event, Event::GapVanished { .. })).count();
    let set_aside =
        state.gaps.values().filter(|g| matches!(g.status, GapStatus::Skipped | GapStatus::Deferred)).count();
    let detail = if !blocked.is_empty() {
        let mut wires: Vec<String> = state
            .environment_blocked()
            .iter()
            .map(|(g, w)| match (&g.wire, &g.blocked) {
                (Some(_), Some(c)) => format!("{w} (gap `{}`, `{}`)", g.id, c.name),
                (None, Some(c)) => format!("stage `{}` (gap `{}`, `{}`)", g.stage, g.id, c.name),
                _ => w.to_string(),
            })
            .collect();
        wires.sort();
        wires.dedup();
        format!(
            "converged except {} environment-blocked wire(s): {}; a person deferred them because their proofs could not run here. Never hardened while they stand: once the capability is here, `andon verify --gap G` proves each",
            wires.len(),
            wires.join(", ")
        )
    } else if set_aside > 0 {
        format!(
            "the cycle converged after {passes} pass(es), except {set_aside} gap(s) skipped or deferred by a person; it cannot be hardened while they stand"
        )
    } else if vanished > 0 {
        format!(
            "the cycle converged after {passes} pass(es); {vanished} gap(s) vanished from the scan without a proof (`andon status` lists them): run `andon loop` again to confirm it is hardened"
        )
    } else {
        format!("the cycle converged after {passes} pass(es): run `andon loop` again to confirm it is hardened")
    };
    Next { action: Action::Converged, gap: None, detail }
}

/// How a wire stands, in words: `proven`, `broken/unproven` when a refutation or an open gap
/// across it says something is broken, `unknown` (reopened, or a proof that could not decide),
/// else `unproven` (nothing broken, no proof yet). A proven or reopened wire with an open gap
/// across it shows `broken/unproven`: what the gap says is known.
pub fn wire_status_name(state: &State, wire: &Wire) -> &'static str {
    board_status(state, wire).as_str()
}

/// A wire's status on the board: the ledger's three, with a wire never proven nor refuted set
/// apart as `unproven`. Ordered from best to worst: a stage shows the worst of its wires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BoardStatus {
    Proven,
    Unknown,
    Unproven,
    BrokenOrUnproven,
}

impl BoardStatus {
    /// Its token in the board's text and JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            BoardStatus::Proven => "proven",
            BoardStatus::Unknown => "unknown",
            BoardStatus::Unproven => "unproven",
            BoardStatus::BrokenOrUnproven => "broken/unproven",
        }
    }

    /// The CSS class the HTML report draws it with.
    pub const fn css_class(self) -> &'static str {
        match self {
            BoardStatus::BrokenOrUnproven => "broken",
            s => s.as_str(),
        }
    }
}

impl std::fmt::Display for BoardStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for BoardStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The board status of `wire` in `state`.
pub fn board_status(state: &State, wire: &Wire) -> BoardStatus {
    let ws = state.wires.get(wire);
    let broken_gap = broken_gap_across(state, wire);
    match ws.map(|s| s.status) {
        Some(WireStatus::Proven) if !broken_gap => return BoardStatus::Proven,
        Some(WireStatus::Unknown) if !broken_gap => return BoardStatus::Unknown,
        _ => {}
    }
    let refuted = ws.and_then(|s| state.evidence.get(&s.evidence)).is_some_and(|e| e.verdict == Verdict::Refuted);
    if refuted || broken_gap { BoardStatus::BrokenOrUnproven } else { BoardStatus::Unproven }
}

pub use crate::ledger::{broken_gap_across, stands_proven};
