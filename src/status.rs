//! `andon status` (R114–R116): the read-only board, derived from the ledger alone. Standing tier-1
//! holds first; every stage and wire with its status; counters; the constraint and the rule that
//! chose it; open gaps by kind and blast radius; the proof approaches used; exactly one next step.
//! Beside the board, the suspected injections of the stored index (R123), which change none of it.

use std::collections::{BTreeMap, BTreeSet};

use crate::ledger::{GapStatus, State, Wire, WireStatus};

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
            Err(why) => Injections::Unreadable(why),
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
    /// proven, broken/unproven, unknown
    pub status: &'static str,
    /// The evidence behind the status (None: never examined, so unproven).
    pub evidence: Option<String>,
    pub reopened: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageLine {
    pub name: String,
    pub confidence: String,
    pub source: String,
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
    /// Proof-strength audits: (evidence, tool, strength, detail).
    pub audits: Vec<(String, String, String, String)>,
    pub next: NextStep,
}

/// The one recommended next step: an action (`fix-the-code`, `decide`, `apply-and-verify`,
/// `loop`), the gap it is about, and what to do in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextStep {
    pub action: &'static str,
    pub gap: Option<String>,
    pub detail: String,
}

fn status_name(s: WireStatus) -> &'static str {
    match s {
        WireStatus::Proven => "proven",
        WireStatus::BrokenOrUnproven => "broken/unproven",
        WireStatus::Unknown => "unknown",
    }
}

/// The board; a wire reopened `thrash` times or more is thrashing and becomes the constraint
/// (design §3).
/// `ingest`: the configuration takes the stream from a brief (its constraint is the brief's, over
/// the brief's stages only, whatever else an earlier self-scan left in the ledger).
pub fn board(state: &State, threshold: u32, ingest: bool) -> Board {
    let stream = Stream::of(state);
    let stages = stage_lines(state, &stream);
    let holds = holds(state);
    let constraint = if ingest {
        brief_constraint(state, &stream)
    } else {
        thrash_constraint(state, &stream, threshold as usize).or_else(|| most_blocked_constraint(state, &stream))
    };
    let gaps = GapCounts::of(state);
    let mut approaches = BTreeMap::new();
    for e in state.evidence.values() {
        *approaches.entry(e.approach.clone()).or_default() += 1;
    }
    let next = next_step(state, &holds, constraint.as_ref(), ingest);
    Board {
        holds,
        stages,
        passes: state.passes,
        cycles: state.cycles,
        sub_cycles: state.backtracks,
        constraint,
        gaps_by_status: gaps.by_status,
        open_by_kind: gaps.open_by_kind,
        open_by_radius: gaps.open_by_radius,
        approaches,
        decisions: state.decisions.clone(),
        audits: state
            .audits
            .iter()
            .flat_map(|(e, v)| v.iter().map(move |(t, s, d)| (e.clone(), t.clone(), s.clone(), d.clone())))
            .collect(),
        next,
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
            status: st.map(|s| status_name(s.status)).unwrap_or("broken/unproven"),
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

/// In ingest mode the constraint is the brief's own: the earliest phase with open work (R59).
fn brief_constraint(state: &State, stream: &Stream) -> Option<Constraint> {
    let open = |stage: &str| {
        state.stages.get(stage).is_some_and(|s| s.source == "brief")
            && state.gaps.values().any(|g| g.stage == stage && !g.status.set_aside())
    };
    stream.order.iter().find(|s| open(s)).map(|stage| Constraint {
        // the phase's own wire, out of it (its contract's, `andon_loop::ingest::phase_wire`)
        wire: stream
            .wires
            .iter()
            .find(|w| &w.producer == stage && state.stages.get(&w.consumer).is_some_and(|s| s.source == "brief"))
            .cloned()
            .unwrap_or(Wire { producer: stage.clone(), consumer: stage.clone() }),
        rule: "brief-order",
        detail: format!("`{stage}` is the earliest phase of the brief with open work"),
    })
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
    let unproven: Vec<&Wire> =
        stream.wires.iter().filter(|w| state.wires.get(*w).is_none_or(|s| s.status != WireStatus::Proven)).collect();
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
            if g.status != GapStatus::Closed {
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

/// A next step about `gap`, if any.
fn step(action: &'static str, gap: Option<&str>, detail: String) -> NextStep {
    NextStep { action, gap: gap.map(str::to_string), detail }
}

/// The one next step: clear a standing hold, confirm the constraint's entry gates, decide a halted
/// gap, apply a proposal, or loop.
fn next_step(state: &State, holds: &[Hold], constraint: Option<&Constraint>, ingest: bool) -> NextStep {
    let first = |st: GapStatus| state.gaps.values().find(|g| g.status == st);
    if let Some(h) = holds.first() {
        step(
            "fix-the-code",
            None,
            format!(
                "resolve the tier-1 hold on {}: change the code (or the contract) and re-run `andon loop`; no command or override clears it",
                h.wire
            ),
        )
    } else if let Some(s) = constraint.filter(|_| ingest).and_then(|c| gate_step(state, c)) {
        s
    } else if let Some(g) = first(GapStatus::HaltedAwaitingAuthorization) {
        step(
            "decide",
            Some(&g.id),
            format!("a person decides gap `{}`: raise the authority for this fix, or defer or skip it", g.id),
        )
    } else if let Some(g) = first(GapStatus::Proposed) {
        step(
            "apply-and-verify",
            Some(&g.id),
            format!("apply the proposal for gap `{}` with your own tools, then verify it", g.id),
        )
    } else if let Some(c) = constraint {
        step("loop", None, format!("run `andon loop`: it works on the constraint {} ({})", c.wire, c.detail))
    } else {
        step("loop", None, "every wire is proven: run `andon loop` to start a new cycle".to_string())
    }
}

/// The step that confirms the entry gates of the constraint's stage, when any is open.
fn gate_step(state: &State, c: &Constraint) -> Option<NextStep> {
    let stage = &c.wire.producer;
    let gates = state.context.get(stage)?.open_gates();
    if gates.is_empty() {
        return None;
    }
    let ids: Vec<String> =
        gates.iter().map(|o| format!("`{}` ({}, {} confidence)", o.id, o.priority, o.confidence)).collect();
    Some(step(
        "confirm",
        None,
        format!(
            "a person confirms the entry gate(s) of `{stage}` before any work there: {}; `andon confirm {stage} --rule {} --by NAME --reason WHY`",
            ids.join(", "),
            gates[0].id
        ),
    ))
}
