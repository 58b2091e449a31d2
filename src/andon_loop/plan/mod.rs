//! The loop's step as a plan: from what the step read (the ledger in a [`Book`], the stream, the
//! artifacts `andon propose`, `andon verify` and `andon verify --audit` left, the fresh index
//! behind a [`PlanPort`]), compute every event the step records and the next action, in named
//! phases:
//! 1. `topology`: the stream's stages, recorded when new or changed (R27, R35);
//! 2. `proposals` and `audits` ([`artifacts`]): the artifacts recorded by the one writer; evidence
//!    files are refused (`andon verify` records its evidence itself, through [`record_evidence`]);
//! 3. `judging`: what changed how fixes are judged since the base holds the step for a person
//!    ([`super::judging`]); commits that change nothing about it move the base;
//! 4. [`stale`]: proofs whose surface changed since are reopened (R82);
//! 5. [`walk`]: scan the cursor's stage, record gaps that are new, moved or gone, derive the
//!    cursor and the constraint, let the loop prove the wires that need no change, pick one gap
//!    and say what is next;
//! 6. `halt_of`: the condition the picked gap stands halted on.
//!
//! Planning never touches the file system: everything it asks of the repository goes through
//! [`PlanPort`], and nothing is written until the step records the book's planned events in one write.

mod artifacts;
mod setup;
mod stale;
mod walk;

use artifacts::{audits, evidence, proposals};
pub use setup::{Pending, Plan, PlanPort, Setup};
use stale::stale;
use walk::walk;

use super::book::Book;
use super::ingest;
use super::judging::Drift;
use super::scan::stage_events;
use crate::ledger::andon_rule::Condition;
use crate::ledger::{Event, LedgerError};
use crate::status::{Action, Next};

/// Plans one step of the loop on `book` (see the module documentation for the phases).
pub fn plan(setup: &Setup, pending: Pending, book: &mut Book, repo: &mut dyn PlanPort) -> Result<Plan, LedgerError> {
    let mut plan = Plan { stream_changed: topology(setup, book)?, ..Plan::default() };
    proposals(setup, pending.proposals, book, &mut plan)?;
    unrecorded_evidence(pending.evidence, &mut plan);
    audits(pending.audits, book, &mut plan)?;
    if judging(book, repo, &mut plan)? {
        return Ok(plan);
    }
    stale(setup, book, &mut plan.notes)?;
    walk(setup, book, repo, &mut plan)?;
    plan.halt = halt_of(book, &plan);
    Ok(plan)
}

/// Phase 2b: evidence is recorded by `andon verify` itself, as it proves ([`record_evidence`]);
/// an evidence file the step finds was not (written by hand, copied, or left by a verification
/// whose recording failed), and no file is taken for a proof: it is removed, and said.
fn unrecorded_evidence(
    pending: Vec<(std::path::PathBuf, Result<super::verify::fix::VerifyOutcome, super::error::Error>)>,
    plan: &mut Plan,
) {
    for (file, outcome) in pending {
        let gap = outcome.as_ref().map(|o| o.gap.clone()).unwrap_or_else(|_| "G".into());
        plan.notes.push(format!(
            "{}: not recorded, removed: evidence reaches the ledger only as `andon verify` proves (this file was written otherwise, or its recording failed); verify again: `andon verify --gap {gap}`",
            file.display()
        ));
        plan.consumed.push(file);
    }
}

/// Phase 2b alone, for `andon verify` recording its proof at once: the evidence artifacts
/// given, recorded as a step would. Returns the notes and the artifacts consumed.
pub fn record_evidence(
    setup: &Setup,
    pending: Vec<(std::path::PathBuf, Result<super::verify::fix::VerifyOutcome, super::error::Error>)>,
    book: &mut Book,
    repo: &mut dyn PlanPort,
) -> Result<(Vec<String>, Vec<std::path::PathBuf>), LedgerError> {
    let mut plan = Plan::default();
    evidence(setup, pending, book, repo, &mut plan)?;
    Ok((plan.notes, plan.consumed))
}

/// Phase 3a: how fixes are judged, against the base (the tree last proved or recorded). No base
/// yet: HEAD becomes it. Commits that change nothing about judging: the base moves to HEAD. A
/// change to judging (commits included): held for a person, recorded once; the step stops there,
/// so no gap vanishes and no wire is proven on it. Returns whether the step stops.
fn judging(book: &mut Book, repo: &dyn PlanPort, plan: &mut Plan) -> Result<bool, LedgerError> {
    match repo.judging(&book.state, &book.records) {
        Drift::Clean => {}
        Drift::NoBase { head } => {
            book.record(&[Event::BaseRecorded { commit: head, why: "the tree the loop first saw".into() }])?;
        }
        Drift::Moved { head, commits } => {
            plan.notes.push(format!(
                "commit(s) since the base change nothing about how fixes are judged ({}); fixes are judged from HEAD",
                commits.join("; ")
            ));
            book.record(&[Event::BaseRecorded {
                commit: head,
                why: format!("commits that change nothing about judging: {}", commits.join("; ")),
            }])?;
        }
        Drift::Changed(c) => {
            if book.state.judging.as_ref().is_none_or(|j| j.fingerprint != c.fingerprint) {
                book.record(&[c.event()])?;
            }
            plan.notes.push(format!("halted: {}", c.summary()));
            let j = book.state.judging.as_ref().expect("just recorded");
            plan.next =
                Next { action: Action::Decide, gap: Some(c.id.clone()), detail: crate::status::judging_detail(j) };
            plan.halt = Some(Condition::Authorization);
            return Ok(true);
        }
    }
    // undone since it was held: the hold lapses
    if let Some(j) = &book.state.judging {
        let id = j.id.clone();
        plan.notes.push(format!("judging change `{id}` is undone: the hold lapses"));
        book.record(&[Event::JudgingUndone { id }])?;
    }
    Ok(false)
}

/// Phase 1: the stream's stages, recorded when new or changed; in ingest mode the brief's stage
/// context too. Returns whether the topology changed.
fn topology(setup: &Setup, book: &mut Book) -> Result<bool, LedgerError> {
    let recorded = book.state.stages.clone();
    let changed: Vec<Event> = stage_events(setup.stream)
        .into_iter()
        .filter(|e| match e {
            Event::StageRecorded { stage, root, confidence, source, incoming, outgoing } => {
                recorded.get(stage).is_none_or(|r| {
                    (&r.root, &r.confidence, &r.source, &r.incoming, &r.outgoing)
                        != (root, confidence, source, incoming, outgoing)
                })
            }
            _ => true,
        })
        .collect();
    if !setup.had_ledger && changed.is_empty() {
        return Err(LedgerError::Io("the ledger was not written".into()));
    }
    book.record(&changed)?;
    if let Some(b) = setup.brief {
        let context = ingest::context_events(b, &book.state);
        book.record(&context)?;
    }
    Ok(!setup.had_ledger || !changed.is_empty())
}

/// Phase 6: a picked gap that is halted stops the step on its recorded condition; a stage behind
/// an entry gate stops it on that (the rule `andon status` reads too: [`crate::status::standing_halt`]).
fn halt_of(book: &Book, plan: &Plan) -> Option<Condition> {
    let picked = plan.picked.as_ref().map(|(id, _)| id.as_str());
    crate::status::standing_halt(&book.state, &book.records, picked, &plan.next)
}

#[cfg(test)]
mod tests;
