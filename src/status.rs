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
    let threshold = threshold as usize;
    // Stream order over the recorded stages: producers before their consumers.
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
    let position = |s: &str| order.iter().position(|x| x == s).unwrap_or(usize::MAX);

    let line = |w: &Wire| {
        let st = state.wires.get(w);
        WireLine {
            wire: w.clone(),
            status: st.map(|s| status_name(s.status)).unwrap_or("broken/unproven"),
            evidence: st.map(|s| s.evidence.clone()),
            reopened: st.map(|s| s.reopened.len()).unwrap_or(0),
        }
    };
    let stages: Vec<StageLine> = order
        .iter()
        .map(|name| {
            let s = &state.stages[name];
            StageLine {
                name: name.clone(),
                confidence: s.confidence.clone(),
                source: s.source.clone(),
                wires: wires.iter().filter(|w| &w.producer == name).map(line).collect(),
                advisory: state.context.get(name).map(|c| c.advisory.clone()).unwrap_or_default(),
                open_gates: state
                    .context
                    .get(name)
                    .map(|c| c.open_gates().iter().map(|o| o.id.clone()).collect())
                    .unwrap_or_default(),
            }
        })
        .collect();

    // Standing holds: wires whose current evidence is a non-overridable hold.
    let holds: Vec<Hold> = state
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
        .collect();

    // The constraint: a thrashing wire first, then the unproven wire blocking the most stages
    // downstream, then stream order.
    // The stages a wire's consumer holds up: itself and everything downstream of it.
    let downstream = |stage: &str| {
        let mut seen: BTreeSet<&str> = BTreeSet::from([stage]);
        let mut stack = vec![stage];
        while let Some(s) = stack.pop() {
            for w in wires.iter().filter(|w| w.producer == s) {
                if seen.insert(w.consumer.as_str()) {
                    stack.push(w.consumer.as_str());
                }
            }
        }
        seen.len() - 1
    };
    let key = |w: &Wire| (position(&w.producer), position(&w.consumer), w.clone());
    let thrash = state
        .wires
        .iter()
        .filter(|(_, s)| s.reopened.len() >= threshold)
        .max_by(|a, b| a.1.reopened.len().cmp(&b.1.reopened.len()).then_with(|| key(b.0).cmp(&key(a.0))));
    // In ingest mode the constraint is the brief's own: the earliest phase with open work (R59).
    let open = |stage: &str| {
        state.stages.get(stage).is_some_and(|s| s.source == "brief")
            && state.gaps.values().any(|g| g.stage == stage && !g.status.set_aside())
    };
    let constraint = if ingest {
        order.iter().find(|s| open(s)).map(|stage| Constraint {
            // the phase's own wire, out of it (its contract's, `cycle::ingest::phase_wire`)
            wire: wires
                .iter()
                .find(|w| &w.producer == stage && state.stages.get(&w.consumer).is_some_and(|s| s.source == "brief"))
                .cloned()
                .unwrap_or(Wire { producer: stage.clone(), consumer: stage.clone() }),
            rule: "brief-order",
            detail: format!("`{stage}` is the earliest phase of the brief with open work"),
        })
    } else if let Some((w, s)) = thrash {
        Some(Constraint {
            wire: w.clone(),
            rule: "thrash",
            detail: format!("reopened {} times (threshold {threshold})", s.reopened.len()),
        })
    } else {
        let unproven: Vec<&Wire> =
            wires.iter().filter(|w| state.wires.get(*w).is_none_or(|s| s.status != WireStatus::Proven)).collect();
        let most = unproven.iter().map(|w| 1 + downstream(&w.consumer)).max();
        let tied: Vec<&&Wire> = unproven.iter().filter(|w| Some(1 + downstream(&w.consumer)) == most).collect();
        tied.into_iter().min_by_key(|w| key(w)).map(|w| {
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
    };

    let mut gaps_by_status = BTreeMap::new();
    let mut open_by_kind = BTreeMap::new();
    let mut open_by_radius = BTreeMap::new();
    for g in state.gaps.values() {
        *gaps_by_status.entry(g.status.name()).or_default() += 1;
        if g.status != GapStatus::Closed {
            let kind = match g.kind {
                crate::ledger::GapKind::Bug => "bug",
                crate::ledger::GapKind::Feature => "feature",
                crate::ledger::GapKind::Wire => "wire",
            };
            *open_by_kind.entry(kind).or_default() += 1;
            *open_by_radius.entry(g.blast_radius.map(|b| b.name()).unwrap_or("unproposed")).or_default() += 1;
        }
    }
    let mut approaches = BTreeMap::new();
    for e in state.evidence.values() {
        *approaches.entry(e.approach.clone()).or_default() += 1;
    }

    let first = |st: GapStatus| state.gaps.values().find(|g| g.status == st);
    let step = |action: &'static str, gap: Option<&str>, detail: String| NextStep {
        action,
        gap: gap.map(str::to_string),
        detail,
    };
    let next = if let Some(h) = holds.first() {
        step(
            "fix-the-code",
            None,
            format!(
                "resolve the tier-1 hold on {}: change the code (or the contract) and re-run `andon loop`; no command or override clears it",
                h.wire
            ),
        )
    } else if let Some((stage, gates)) = constraint
        .as_ref()
        .filter(|_| ingest)
        .and_then(|c| Some((&c.wire.producer, state.context.get(&c.wire.producer)?.open_gates())))
        .filter(|(_, g)| !g.is_empty())
    {
        let ids: Vec<String> =
            gates.iter().map(|o| format!("`{}` ({}, {} confidence)", o.id, o.priority, o.confidence)).collect();
        step(
            "confirm",
            None,
            format!(
                "a person confirms the entry gate(s) of `{stage}` before any work there: {}; `andon confirm {stage} --rule {} --by NAME --reason WHY`",
                ids.join(", "),
                gates[0].id
            ),
        )
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
    } else if let Some(c) = &constraint {
        step("loop", None, format!("run `andon loop`: it works on the constraint {} ({})", c.wire, c.detail))
    } else {
        step("loop", None, "every wire is proven: run `andon loop` to start a new cycle".to_string())
    };
    Board {
        holds,
        stages,
        passes: state.passes,
        cycles: state.cycles,
        sub_cycles: state.backtracks,
        constraint,
        gaps_by_status,
        open_by_kind,
        open_by_radius,
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
