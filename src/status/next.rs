//! The next step for a picked gap, by its status and, when halted, by the condition it was
//! halted on: the one text `loop`, `status` and `verify` give.

use super::{Action, Next};
use crate::ledger::andon_rule::Condition;
use crate::ledger::{Event, GapState, GapStatus, Record, State};

/// What is next for the picked gap `g`.
pub(super) fn next_for(state: &State, records: &[Record], g: &GapState, thrash: u32) -> Next {
    if let Some(next) = entry_gate(state, g) {
        return next;
    }
    let (id, gap) = (g.id.clone(), Some(g.id.clone()));
    if g.status == GapStatus::Open
        && g.source == "UnprovenWire"
        && let Some(w) = &g.wire
    {
        return match state.wires.get(w).filter(|ws| ws.reopened.len() as u32 >= thrash) {
            Some(ws) => Next {
                action: Action::Decide,
                gap,
                detail: format!(
                    "escalation: {w} has reopened {} times (threshold {thrash}) and is the constraint; the loop stops re-proving it: find why its surface keeps changing and propose a fix for `{id}`, or a person defers it",
                    ws.reopened.len()
                ),
            },
            None => Next {
                action: Action::Budget,
                gap,
                detail: format!(
                    "the loop proves {w} itself and stopped at its pass budget: run `andon loop` again to go on"
                ),
            },
        };
    }
    next_by_status(records, g)
}

/// Ingest mode: a stage with an unconfirmed entry gate is worked only after a person confirms
/// it (R57); the andon rule refuses any advance there until then.
pub(super) fn entry_gate(state: &State, g: &GapState) -> Option<Next> {
    let c = state.context.get(&g.stage).filter(|c| !c.open_gates().is_empty())?;
    let gates: Vec<String> = c
        .open_gates()
        .iter()
        .map(|o| format!("`{}` ({}, {} confidence: {})", o.id, o.priority, o.confidence, o.rule))
        .collect();
    Some(Next {
        action: Action::Confirm,
        gap: Some(g.id.clone()),
        detail: format!(
            "stage `{}` has entry gate(s) a person confirms before its work starts: {}; `andon confirm {} --rule {} --by WHO --reason WHY`",
            g.stage,
            gates.join("; "),
            g.stage,
            c.open_gates()[0].id
        ),
    })
}

/// The next action for a picked gap, by its status (and, when halted, by the condition it was
/// halted on).
fn next_by_status(records: &[Record], g: &GapState) -> Next {
    let id = g.id.clone();
    let gap = Some(id.clone());
    match g.status {
        GapStatus::Open => Next {
            action: Action::Propose,
            gap,
            detail: format!(
                "propose a fix for `{id}` ({}): one blast-radius tag, one verification approach with its reason, a description and the files it will write",
                g.summary
            ),
        },
        GapStatus::Proposed => Next {
            action: Action::ApplyAndVerify,
            gap,
            detail: format!("apply the proposed fix for `{id}` with your own tools, then verify it"),
        },
        GapStatus::HaltedAwaitingAuthorization => Next {
            action: Action::Decide,
            gap,
            detail: format!("a person decides `{id}`: raise the authority for this fix, or defer or skip it"),
        },
        GapStatus::BlockedByEnvironment => {
            let (name, command) =
                g.blocked.as_ref().map_or((String::new(), String::new()), |c| (c.name.clone(), c.command.clone()));
            Next {
                action: Action::Decide,
                gap,
                detail: format!(
                    "gap `{id}` is blocked by the environment: its proof cannot run here (`{name}`, needed by `{command}`, is not available); make it available and `andon verify --gap {id}` runs the proof again (until then verify refuses to re-run it), or a person defers it with `andon defer {id} --by WHO --reason WHY` (the cycle then converges except this wire, never hardened)"
                ),
            }
        }
        GapStatus::Halted => {
            let (cond, why) = recorded_halt(records, &id).unwrap_or((None, String::new()));
            match cond {
                // the loop's own proof of a wire could not show it: a proof by a check is proposed
                Some(Condition::Unproven) if g.blast_radius.is_none() && g.kind == crate::ledger::GapKind::Wire => {
                    Next {
                        action: Action::Propose,
                        gap,
                        detail: format!(
                            "the loop could not prove the wire of `{id}` itself ({why}): propose a proof of it, `andon propose --gap {id} --approach executed ...` with a check that exercises the handoff (a fix of nothing is still a proposal: its write-set names the test it adds)"
                        ),
                    }
                }
                Some(Condition::Refuted | Condition::Tier1Hold | Condition::Unproven) => Next {
                    action: Action::FixTheCode,
                    gap,
                    detail: format!(
                        "gap `{id}` halted ({why}): change the fix, then `andon verify --gap {id}` (the proposal holds while the fix stays in its write-set; to write other files, `andon propose --gap {id} …` first)"
                    ),
                },
                // the loop's own finding, no fix proposed: the code changes, or a person overrides
                Some(Condition::Tier2Hold) if g.blast_radius.is_none() => Next {
                    action: Action::Decide,
                    gap,
                    detail: format!(
                        "gap `{id}` halted on a tier-2 contradiction the loop found itself ({why}): to change the code, propose the fix first (`andon propose --gap {id} --approach structural ...` with the files it changes), change the code, then `andon verify --gap {id}`; or, where the finding is the extractor's mistake, a person overrides it with `andon override {id} --evidence E --basis extractor-limitation --by WHO --reason R` (E: the evidence named above)"
                    ),
                },
                Some(Condition::Tier2Hold) => Next {
                    action: Action::Decide,
                    gap,
                    detail: format!(
                        "gap `{id}` halted on a tier-2 contradiction ({why}): change the fix, then `andon verify --gap {id}`; or a person overrides it with `andon override {id} --evidence E --basis B --by WHO --reason R`"
                    ),
                },
                // a proof that passes without the fix, or with a trivial body: the test changes
                Some(Condition::NeedsHuman) if let Some(next) = undecided(records, &id) => {
                    Next { action: Action::FixTheCode, gap, detail: format!("gap `{id}` halted ({why}): {next}") }
                }
                _ => Next {
                    action: Action::Decide,
                    gap,
                    detail: format!("gap `{id}` is halted ({why}): a person decides (`andon defer` or `andon skip`)"),
                },
            }
        }
        _ => Next { action: Action::Decide, gap, detail: format!("gap `{id}` is {}", g.status.name()) },
    }
}

/// What is next for gap `id` when its last evidence is a proof that could not decide and the
/// agent can do something about it: tests that do not tell the fix apart (they pass without it,
/// or with a trivial body in its place), or an approach that asks for input. `None` otherwise
/// (a person decides).
fn undecided(records: &[Record], id: &str) -> Option<String> {
    use crate::ledger::{Reason, Verdict};
    let last = records.iter().rev().find_map(|r| match &r.event {
        Event::EvidenceRecorded { evidence } if evidence.gap.as_deref() == Some(id) => Some(evidence),
        _ => None,
    })?;
    match (last.verdict, last.reason) {
        (_, Some(Reason::NotPinning | Reason::NotDiscriminating)) => Some(undecided_next(id)),
        (Verdict::Unknown, None) if last.approach != crate::ledger::AUTHORIZATION_NOTE => Some(needs_input_next(id)),
        _ => None,
    }
}

/// The one next step after a proof whose approach asks for input (exit 14), as `loop`,
/// `status` and `verify` all give it.
pub fn needs_input_next(id: &str) -> String {
    format!(
        "give the approach what it asks for (its evidence says what), then `andon verify --gap {id}` again with it; or a person decides the gap (`andon defer` or `andon skip`, at a terminal)"
    )
}

/// The one next step after a proof that could not decide (exit 14), as `loop`, `status` and
/// `verify` all give it.
pub fn undecided_next(id: &str) -> String {
    format!(
        "change the test (so it fails without the fix and asserts what the fix does) or the fix, then `andon verify --gap {id}` again; or a person defers the gap (`andon defer {id} --by WHO --reason WHY`, at a terminal)"
    )
}

/// The next step for gap `id` as the ledger stands (what `loop` and `status` say when it is picked).
pub fn next_of_gap(state: &State, records: &[Record], id: &str, thrash: u32) -> Option<Next> {
    Some(next_for(state, records, state.gaps.get(id)?, thrash))
}

/// The condition gap `id` was last halted on, as recorded, with its reason.
pub fn recorded_halt(records: &[Record], id: &str) -> Option<(Option<Condition>, String)> {
    records.iter().rev().find_map(|r| match &r.event {
        Event::Halted { gap, condition, reason } if gap == id => {
            Some((Condition::from_recorded(condition), reason.clone()))
        }
        _ => None,
    })
}
