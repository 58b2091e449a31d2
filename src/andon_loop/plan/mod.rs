//! The loop's step as a plan: from what the step read (the ledger in a [`Book`], the stream, the
//! artifacts `andon propose`, `andon verify` and `andon verify --audit` left, the fresh index
//! behind a [`Repo`]), compute every event the step records and the next action, in named
//! phases:
//! 1. `topology`: the stream's stages, recorded when new or changed (R27, R35);
//! 2. `proposals`, `evidence` and `audits`: the artifacts recorded by the one writer;
//! 3. `stale`: proofs whose surface changed since are reopened (R82);
//! 4. `walk`: scan the cursor's stage, record gaps that are new, moved or gone, derive the
//!    cursor and the constraint, let the loop prove the wires that need no change, pick one gap
//!    and say what is next;
//! 5. `halt_of`: the condition the picked gap stands halted on.
//!
//! Planning never touches the file system: everything it asks of the repository goes through
//! [`Repo`], and nothing is written until the step records the book's planned events in one write.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::book::Book;
use super::recorded::recorded_proposal;
use super::scan::{Candidate, command_gap, command_id, command_key, stage_events};
use super::verify::applied::VerifyStop;
use super::verify::commands::{self, CommandSpec};
use super::verify::{audit, fix};
use super::{ingest, proposal, surface};
use crate::config::{BlastRadius, Config};
use crate::ledger::andon_rule::{Condition, Ruling};
use crate::ledger::{self, Event, GapKind, GapState, GapStatus, LedgerError, State, Verdict, Wire, WireStatus};
use crate::ops::StreamReport;
use crate::status::Constraint;
use crate::status::{Action, Next};

/// What the plan asks of the repository: the fresh index, the working tree and the configured
/// commands. The step answers from the repository; a test answers without a file system.
pub trait Repo {
    /// The gaps the fresh index shows in `stage` and its outgoing wires.
    fn scan(&self, state: &State, stage: &str) -> Vec<Candidate>;
    /// The structural proof of a gap's wire (or file) on the fresh index.
    fn structural(&self, gap: &GapState) -> Result<fix::StructuralProof, String>;
    /// Runs a configured command on the working tree (cached by `fingerprint`).
    fn run_command(&mut self, spec: &CommandSpec, fingerprint: &str) -> commands::Run;
    /// The last recorded run of command `name`, if any.
    fn last_run(&self, name: &str) -> Option<commands::Run>;
    /// The working tree's change against `base`, checked against `write_set` and re-rated.
    fn applied_change(
        &self,
        base: &str,
        write_set: &[String],
    ) -> Result<Result<(fix::AppliedChange, BlastRadius, String), VerifyStop>, String>;
    /// Whether the working tree changes the public surface of a proven wire.
    fn surface_changed(&self, state: &State) -> Result<bool, String>;
}

/// What the step read and the plan works from, fixed for the whole step.
pub struct Setup<'a> {
    pub cfg: &'a Config,
    pub stream: &'a StreamReport,
    /// Ingest mode's brief; `None` in self-scan mode.
    pub brief: Option<&'a crate::ingest::Brief>,
    /// The surface of every wire on the fresh index.
    pub surfaces: &'a BTreeMap<Wire, surface::Surface>,
    /// The fingerprint of the indexed tree.
    pub tree: &'a str,
    /// The configuration file, repo-relative (where a failing command's gap is located).
    pub config_path: String,
    /// The brief's Markdown file, as a phase contract names it.
    pub brief_md: String,
    pub max_passes: u32,
    pub slow: bool,
    /// The ledger existed before this step.
    pub had_ledger: bool,
}

/// The artifacts waiting to be recorded, each with the file it came from.
#[derive(Default)]
pub struct Pending {
    pub proposals: Vec<(PathBuf, Result<proposal::Proposal, String>)>,
    pub evidence: Vec<(PathBuf, Result<fix::VerifyOutcome, String>)>,
    pub audits: Vec<(PathBuf, Result<audit::AuditOutcome, String>)>,
}

/// What the step decided, besides the events in the book.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The stream was recorded for the first time, or its topology changed.
    pub stream_changed: bool,
    pub cursor: Option<String>,
    pub found: Vec<Candidate>,
    /// Of `found`, how many gaps were new to the ledger.
    pub recorded: usize,
    pub picked: Option<(String, String)>,
    pub next: Next,
    pub constraint: Option<Constraint>,
    pub halt: Option<Condition>,
    pub notes: Vec<String>,
    /// Artifact files the step consumed: removed once the events are written.
    pub consumed: Vec<PathBuf>,
}

/// Plans one step of the loop on `book` (see the module documentation for the phases).
pub fn plan(setup: &Setup, pending: Pending, book: &mut Book, repo: &mut dyn Repo) -> Result<Plan, LedgerError> {
    let mut plan = Plan { stream_changed: topology(setup, book)?, ..Plan::default() };
    proposals(setup, pending.proposals, book, &mut plan)?;
    evidence(setup, pending.evidence, book, repo, &mut plan)?;
    audits(pending.audits, book, &mut plan)?;
    stale(setup, book, &mut plan.notes)?;
    walk(setup, book, repo, &mut plan)?;
    plan.halt = halt_of(book, &plan);
    Ok(plan)
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

/// Phase 2a: proposals written by `andon propose`, recorded by the one writer; one over the
/// authorization ceiling halts at once (condition 2, at proposal).
fn proposals(
    setup: &Setup,
    pending: Vec<(PathBuf, Result<proposal::Proposal, String>)>,
    book: &mut Book,
    plan: &mut Plan,
) -> Result<(), LedgerError> {
    let ceiling = setup.cfg.settings.authorization_level.value;
    for (file, p) in pending {
        let p = match p.map_err(|e| vec![e]).and_then(|p| proposal::validate(&p).map(|_| p)) {
            Ok(p) => p,
            Err(errs) => {
                plan.notes.push(format!("{}: refused, not recorded: {}", file.display(), errs.join("; ")));
                continue;
            }
        };
        if !book.state.gaps.get(&p.gap).is_some_and(|g| g.status.takes_proposal()) {
            plan.notes.push(format!("{}: refused: gap `{}` is not open", file.display(), p.gap));
            continue;
        }
        let mut events = vec![Event::ProposalRecorded {
            gap: p.gap.clone(),
            blast_radius: p.blast_radius,
            approach: p.approach.clone(),
            reason: p.reason.clone(),
            description: p.description.clone(),
            write_set: p.write_set.clone(),
            base_commit: p.base_commit.clone().unwrap_or_else(|| "none".into()),
            proposer: p.proposer.clone(),
            judging: p.judging.clone(),
            interview: p.interview.clone(),
        }];
        if p.blast_radius > ceiling {
            // every stop writes an evidence record (R80): here, the authorization note
            let g = book.state.gaps[&p.gap].clone();
            events.push(Event::EvidenceRecorded { evidence: authorization_note(book, &g, &p, ceiling) });
            events.push(Event::Halted {
                gap: p.gap.clone(),
                condition: "authorization".into(),
                reason: format!("the proposal is {} and the ceiling is {}", p.blast_radius.name(), ceiling.name()),
            });
            plan.notes.push(format!(
                "proposal for `{}` recorded; halted: {} exceeds the ceiling {}. The proposal: {} (writes {}; blast radius {}). Two options: raise the authority for this one fix (`andon authorize {} --by WHO --reason WHY`), or skip to another gap (`andon skip {} --by WHO --reason WHY`)",
                p.gap,
                p.blast_radius.name(),
                ceiling.name(),
                crate::text::short(&p.description),
                p.write_set.join(", "),
                p.blast_radius.name(),
                p.gap,
                p.gap
            ));
        } else {
            plan.notes.push(format!("proposal for `{}` recorded ({}, {})", p.gap, p.blast_radius.name(), p.approach));
        }
        book.record(&events)?;
        plan.consumed.push(file);
    }
    Ok(())
}

/// The evidence record of a proposal halted on authorization (R80): nothing was proven; it says
/// what the proposal would do and the two ways on.
fn authorization_note(book: &Book, g: &GapState, p: &proposal::Proposal, ceiling: BlastRadius) -> ledger::Evidence {
    let claim = format!(
        "halted on authorization: the proposal is {} and the ceiling is {}",
        p.blast_radius.name(),
        ceiling.name()
    );
    let detail = format!(
        "nothing was proven. The proposal: {} (writes {}; blast radius {}). A person raises the authority for this one fix (`andon authorize {}`), or skips to another gap (`andon skip {}`)",
        p.description,
        p.write_set.join(", "),
        p.blast_radius.name(),
        p.gap,
        p.gap
    );
    let mut ev = fix::evidence(
        g,
        ledger::AUTHORIZATION_NOTE,
        Verdict::Unknown,
        None,
        false,
        claim,
        detail,
        vec![],
        None,
        "none",
    );
    ev.id = book.next_evidence_id(&g.id);
    ev.radius = Some(p.blast_radius);
    ev
}

/// Phase 2b: evidence artifacts from `andon verify` (the loop's half of verify): the evidence,
/// the wire's status, the gap's closing, and the pass with the andon rule's decision.
fn evidence(
    setup: &Setup,
    pending: Vec<(PathBuf, Result<fix::VerifyOutcome, String>)>,
    book: &mut Book,
    repo: &mut dyn Repo,
    plan: &mut Plan,
) -> Result<(), LedgerError> {
    for (file, outcome) in pending {
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                plan.notes.push(format!("{}: not recorded: {e}", file.display()));
                continue;
            }
        };
        let Some(g) = book.state.gaps.get(&outcome.gap).cloned() else {
            plan.notes.push(format!("{}: not recorded: no gap `{}`", file.display(), outcome.gap));
            continue;
        };
        let refused = if !super::verify::applied::verifiable(&g) {
            Some(format!("gap `{}` is {}", g.id, g.status.name()))
        } else {
            match still_applied(book, repo, &g, &outcome)? {
                Ok(radius) => record_proof(setup, book, repo, &g, &outcome, radius, &mut plan.notes)?.err(),
                Err(m) => Some(m),
            }
        };
        if let Some(m) = refused {
            plan.notes.push(format!("{}: not recorded: {m}", file.display()));
        }
        plan.consumed.push(file);
    }
    Ok(())
}

/// What verify saw must still be the working tree: the same change, in scope, re-rated here.
/// Returns the blast radius to record, or why the evidence is not recorded.
fn still_applied(
    book: &Book,
    repo: &dyn Repo,
    g: &GapState,
    outcome: &fix::VerifyOutcome,
) -> Result<Result<BlastRadius, String>, LedgerError> {
    let Some((base, write_set, _, _)) = recorded_proposal(&book.records, &g.id).filter(|p| p.0 != "none") else {
        return Ok(Ok(outcome.rerated));
    };
    Ok(match repo.applied_change(&base, &write_set) {
        Ok(Ok((c, r, _))) if c.hash == outcome.change.hash => {
            let surface = repo.surface_changed(&book.state).map_err(LedgerError::Io)?;
            Ok(if surface { r.max(BlastRadius::HardToReverse) } else { r })
        }
        Ok(Ok(_)) => Err("the working tree changed after `andon verify`; verify it again".to_string()),
        Ok(Err(VerifyStop::Scope(out))) => Err(format!("files outside the write-set: {}", out.join(", "))),
        Ok(Err(_)) => Err("the change cannot be checked".to_string()),
        Err(m) => Err(m),
    })
}

/// Records one verified proof of gap `g`: the evidence (a wire gap re-checked on the fresh
/// index first), the wire's status, the andon rule's decision, the pass, and the proofs the fix
/// made stale. `Err` inside is why it was not recorded.
fn record_proof(
    setup: &Setup,
    book: &mut Book,
    repo: &dyn Repo,
    g: &GapState,
    outcome: &fix::VerifyOutcome,
    radius: BlastRadius,
    notes: &mut Vec<String>,
) -> Result<Result<(), String>, LedgerError> {
    let mut ev = outcome.evidence.clone();
    ev.id = book.next_evidence_id(&g.id);
    // Whatever approach proved it, a wire gap is re-checked on the fresh index: a contradiction
    // across the wire (a tier-1 hold, or a tier-2 refutation only an override clears) outranks
    // any other proof.
    if g.wire.is_some() {
        let (verdict, tier, hold, claim, refs) = repo.structural(g).map_err(LedgerError::Io)?;
        // the index that cannot decide (a declared wire no import carries) contradicts nothing:
        // the verdict of the checks stands; a refutation or a hold replaces it
        let silent = ledger::spec_verdict(verdict, None).0 == Verdict::Unknown && !hold;
        if silent {
            ev.references.push(format!("the fresh index alone: {claim}"));
        } else if verdict != Verdict::Proven {
            let detail = "the fresh index".into();
            ev = fix::evidence(g, "structural", verdict, tier, hold, claim, detail, refs, None, "00000000");
            ev.id = book.next_evidence_id(&g.id);
        }
    } else if ev.verdict == Verdict::Proven && still_found(book, repo, g) {
        // the checks pass, but the fact the gap stands on is still in the code: nothing was fixed
        ev.verdict = Verdict::Unknown;
        ev.reason = Some(ledger::Reason::NotShown);
        ev.claim = format!("the checks pass, but the scan still finds the gap: {}", g.summary);
        ev.commit = None;
    }
    ev.tree = Some(setup.tree.to_string());
    ev.radius = Some(radius);
    if ev.verdict == Verdict::Proven && g.wire.is_some() {
        surface::stamp(&mut ev, g.wire.as_ref().and_then(|w| setup.surfaces.get(w)));
    }
    let mut events = vec![Event::EvidenceRecorded { evidence: ev.clone() }];
    // a brief's work item is about its phase's wire, but only the phase contract proves it
    if let Some(w) = g.wire.as_ref().filter(|_| g.source != "WorkItem") {
        let status = wire_status(ev.verdict);
        let state = &book.state;
        let held = state.wires.get(w).is_some_and(|ws| state.evidence.get(&ws.evidence).is_some_and(|e| e.hold));
        // a standing hold is replaced only by a proof (or by a new hold)
        if !held || status == WireStatus::Proven || ev.hold {
            events.push(Event::WireStatusChanged { wire: ev.wire.clone(), status, evidence: ev.id.clone() });
        }
    }
    // decide on the state as it will be after the evidence
    let after = match book.after(&events) {
        Ok(a) => a,
        Err(m) => return Ok(Err(m)),
    };
    let ceiling = setup.cfg.settings.authorization_level.value;
    let decision = ledger::andon_rule::rule_on(&after, &g.id, ceiling, Some(&outcome.change.hash));
    let advanced = decision == Ruling::Advance;
    if advanced && ev.verdict == Verdict::Proven {
        events.push(Event::GapClosed { gap: g.id.clone(), evidence: ev.id.clone() });
    }
    if let Ruling::Halt(c, why) = &decision {
        let condition =
            if *c == Condition::Authorization { "authorization".to_string() } else { c.token().to_string() };
        events.push(Event::Halted { gap: g.id.clone(), condition, reason: why.clone() });
        notes.push(format!("gap `{}`: {} ({why})", g.id, c.token()));
    } else {
        notes.push(format!("gap `{}`: proven by {}; the cursor advances", g.id, ev.approach));
    }
    events.push(Event::PassClosed {
        pass: book.state.passes + 1,
        stage: g.stage.clone(),
        wire: g.wire.clone(),
        gap: g.id.clone(),
        approach: ev.approach.clone(),
        verdict: ev.verdict,
        advanced,
        ceiling,
        diff_hash: Some(outcome.change.hash.clone()),
    });
    if advanced {
        let settings = &setup.cfg.settings;
        let reach =
            Reach { fixed: Some(g), depth: settings.backtrack_depth.value, thrash: settings.thrash_threshold.value };
        events.extend(reopen_stale(&after, setup.stream, setup.surfaces, &reach, notes));
    }
    book.record(&events)?;
    Ok(Ok(()))
}

/// Does the scan of the gap's stage, on the fresh index, still find gap `g` (the same fact, by
/// its id)? A failing command is judged by its run, not by the scan.
fn still_found(book: &Book, repo: &dyn Repo, g: &GapState) -> bool {
    let id = g.id.split('.').next().unwrap_or(&g.id);
    g.source != "FailingCommand" && repo.scan(&book.state, &g.stage).iter().any(|c| c.id == id)
}

/// The wire status a verdict gives.
fn wire_status(v: Verdict) -> WireStatus {
    match v {
        Verdict::Proven => WireStatus::Proven,
        Verdict::Unknown => WireStatus::Unknown,
        _ => WireStatus::BrokenOrUnproven,
    }
}

/// Phase 2c: proof-strength audits, each added to the evidence it audits (R99).
fn audits(
    pending: Vec<(PathBuf, Result<audit::AuditOutcome, String>)>,
    book: &mut Book,
    plan: &mut Plan,
) -> Result<(), LedgerError> {
    for (file, outcome) in pending {
        let a = match outcome {
            Err(e) => {
                plan.notes.push(format!("{}: not recorded: {e}", file.display()));
                continue;
            }
            Ok(a) => a,
        };
        if !book.state.evidence.contains_key(&a.evidence) {
            plan.notes.push(format!("{}: not recorded: no evidence `{}`", file.display(), a.evidence));
        } else {
            book.record(&[Event::EvidenceAudited {
                evidence: a.evidence.clone(),
                tool: a.tool.clone(),
                strength: a.strength.clone(),
                detail: a.detail.clone(),
                artifact: a.artifact.clone(),
            }])?;
            plan.notes.push(format!("evidence `{}` audited by {}: {} ({})", a.evidence, a.tool, a.strength, a.detail));
        }
        plan.consumed.push(file);
    }
    Ok(())
}

/// Phase 3: proofs whose surface changed since (edits made outside the loop) are stale.
fn stale(setup: &Setup, book: &mut Book, notes: &mut Vec<String>) -> Result<(), LedgerError> {
    let reach = Reach { fixed: None, depth: 0, thrash: setup.cfg.settings.thrash_threshold.value };
    let events = reopen_stale(&book.state, setup.stream, setup.surfaces, &reach, notes);
    book.record(&events)
}

/// Where a stale proof sends the cursor: the gap whose fix changed the surface (none for edits
/// made outside the loop), how many stages upstream of its stage a sub-cycle reaches, and the
/// reopen count at which a wire thrashes.
struct Reach<'g> {
    fixed: Option<&'g GapState>,
    depth: u32,
    thrash: u32,
}

/// The stages within `depth` hops upstream of the fixed gap's stage (the stage itself at 0).
fn upstream(stream: &StreamReport, reach: &Reach) -> BTreeMap<String, u32> {
    let mut out: BTreeMap<String, u32> = BTreeMap::new();
    let Some(g) = reach.fixed else { return out };
    out.insert(g.stage.clone(), 0);
    let mut frontier = vec![g.stage.clone()];
    for d in 1..reach.depth {
        let mut next = Vec::new();
        for s in &frontier {
            for w in stream.wires.iter().filter(|w| &w.consumer == s) {
                if !out.contains_key(&w.producer) {
                    out.insert(w.producer.clone(), d);
                    next.push(w.producer.clone());
                }
            }
        }
        frontier = next;
    }
    out
}

/// Reopens every proven wire whose surface changed since its proof (design §3, R82): the proof
/// is stale, so the wire gets an `unproven` evidence record naming what crosses it now. When the
/// change is the fix for `reach.fixed` and the wire lies within `reach.depth` stages upstream of
/// the fixed stage (or leaves it), this is a sub-cycle: the cursor goes back to re-prove it. A
/// wire that has reopened `reach.thrash` times stops the backtracking: it is the stream's
/// constraint, and the escalation is said (R83).
fn reopen_stale(
    state: &State,
    stream: &StreamReport,
    surfaces: &BTreeMap<Wire, surface::Surface>,
    reach: &Reach,
    notes: &mut Vec<String>,
) -> Vec<Event> {
    let upstream = upstream(stream, reach);
    let (fixed, thrash) = (reach.fixed, reach.thrash);
    let mut out = Vec::new();
    let mut k = state.evidence.len();
    for w in &stream.wires {
        let wire = Wire { producer: w.producer.clone(), consumer: w.consumer.clone() };
        let Some(ws) = state.wires.get(&wire).filter(|s| s.status == WireStatus::Proven) else { continue };
        let Some(proven) = state.evidence.get(&ws.evidence) else { continue };
        let Some(proof) = proven.surface.as_deref() else { continue };
        let Some(now) = surfaces.get(&wire) else { continue };
        if now.fingerprint == proof || fixed.is_some_and(|g| g.wire.as_ref() == Some(&wire)) {
            continue;
        }
        k += 1;
        let id = format!("E-stale-{k}");
        let crossing = surface::what_changed(&proven.crossing, now);
        out.push(Event::EvidenceRecorded { evidence: stale_evidence(&id, &wire, proven, now, fixed) });
        // reopened: nothing is known of it until it is proven again (R82)
        out.push(Event::WireStatusChanged { wire: wire.clone(), status: WireStatus::Unknown, evidence: id });
        let reopens = ws.reopened.len() as u32 + 1;
        let backtrack = fixed.filter(|g| upstream.contains_key(&w.consumer) || w.producer == g.stage);
        if reopens >= thrash {
            out.push(Event::Thrashing {
                wire: wire.clone(),
                reopens,
                thrash_threshold: thrash,
                backtrack_depth: reach.depth,
            });
            notes.push(format!(
                "thrash: {wire} has reopened {reopens} times (threshold {thrash}); backtracking stops and it is the stream's constraint: find why its surface keeps changing"
            ));
        } else if let Some(g) = backtrack {
            out.push(Event::SubCycle {
                from_stage: g.stage.clone(),
                to_stage: w.producer.clone(),
                reason: format!("{wire}: its surface changed ({crossing})"),
                backtrack_depth: Some(reach.depth),
                thrash_threshold: Some(thrash),
            });
            notes.push(format!("sub-cycle: {wire} reopened, its surface changed ({crossing})"));
        } else {
            notes.push(format!("stale: {wire} reopened, its surface changed since its proof ({crossing})"));
        }
    }
    out
}

/// The `unproven` evidence that a wire's proof `proven` went stale: its surface is now `now`; the
/// references are the names whose contract changed, came or went.
fn stale_evidence(
    id: &str,
    wire: &Wire,
    proven: &ledger::Evidence,
    now: &surface::Surface,
    fixed: Option<&GapState>,
) -> ledger::Evidence {
    let proof = proven.surface.as_deref().unwrap_or_default();
    let changed = surface::Delta::of(&proven.crossing, now).names();
    ledger::Evidence {
        id: id.to_string(),
        gap: None,
        wire: wire.clone(),
        approach: "structural".into(),
        verdict: Verdict::Unknown,
        hold: false,
        tier: None,
        artifact: None,
        claim: match fixed {
            Some(g) => format!("the fix for `{}` changed the surface {wire} was proven on; its proof is stale", g.id),
            None => format!("the surface {wire} was proven on has changed; its proof is stale"),
        },
        evidence: format!(
            "surface {proof} is now {}: {}",
            now.fingerprint,
            surface::what_changed(&proven.crossing, now)
        ),
        fix: None,
        references: if proven.crossing.is_empty() { now.names.clone() } else { changed },
        surface: Some(now.fingerprint.clone()),
        crossing: Default::default(),
        radius: None,
        tree: None,
        rung: Some(2),
        commit: None,
        red_first: None,
        reason: None,
        capability: None,
    }
}

/// Phase 4: the walk. Each pass scans the cursor's stage (or every stage until one has open
/// work) and records what it finds; the agenda of the ledger ([`crate::status::agenda`], the one
/// `andon status` shows) picks the gap. A wire that needs no change the loop proves itself and
/// walks on, up to `max_passes` proofs; anything else stops the walk with the agenda's next step.
fn walk(setup: &Setup, book: &mut Book, repo: &mut dyn Repo, plan: &mut Plan) -> Result<(), LedgerError> {
    let mut walker = Walker {
        setup,
        runs: BTreeMap::new(),
        unchanged: BTreeMap::new(),
        recorded: 0,
        self_passes: 0,
        notes: Vec::new(),
    };
    let opts = agenda_options(setup);
    loop {
        if walker.close_overridden(book)? {
            continue;
        }
        plan.found = walker.scan_to_cursor(book, repo)?;
        let agenda = crate::status::agenda(&book.state, &book.records, opts);
        match agenda.picked {
            None => {
                walker.converge(book, repo, agenda.next.action)?;
                break;
            }
            Some((id, _)) if walker.proves_itself(book, &id) => {
                if !walker.prove_wire(book, repo, &id)? {
                    break;
                }
            }
            Some(_) => break,
        }
    }
    let agenda = crate::status::agenda(&book.state, &book.records, opts);
    plan.notes.append(&mut walker.notes);
    plan.cursor = agenda.cursor;
    plan.picked = agenda.picked;
    plan.next = agenda.next;
    plan.constraint = agenda.constraint;
    plan.recorded = walker.recorded;
    Ok(())
}

/// How the agenda reads the ledger in this configuration.
fn agenda_options(setup: &Setup) -> crate::status::Options {
    crate::status::Options { thrash: setup.cfg.settings.thrash_threshold.value, ingest: setup.brief.is_some() }
}

/// The walk's working state: command runs cached for the step, gaps recorded, proofs the loop
/// made, and what it noted, in order.
struct Walker<'s, 'a> {
    setup: &'s Setup<'a>,
    runs: BTreeMap<String, commands::Run>,
    /// Per command run in this step: whether its command line is that of its previous recorded
    /// run (a command redefined since cannot show that a fix made it pass).
    unchanged: BTreeMap<String, bool>,
    recorded: usize,
    self_passes: u32,
    notes: Vec<String>,
}

impl Walker<'_, '_> {
    /// A halted gap whose hold a person has since cleared (a tier-2 override) passes the andon
    /// rule now: it closes on that evidence and the cursor advances.
    fn close_overridden(&mut self, book: &mut Book) -> Result<bool, LedgerError> {
        let ceiling = self.setup.cfg.settings.authorization_level.value;
        let Some(g) = crate::status::in_progress(&book.state).filter(|g| g.status == GapStatus::Halted) else {
            return Ok(false);
        };
        let g = g.clone();
        let diff_hash = book.records.iter().rev().find_map(|r| match &r.event {
            Event::PassClosed { gap, diff_hash, .. } if gap == &g.id => diff_hash.clone(),
            _ => None,
        });
        let latest = book.state.gap_evidence.get(&g.id).and_then(|v| v.last()).cloned();
        let (Ruling::Advance, Some(ev)) =
            (ledger::andon_rule::rule_on(&book.state, &g.id, ceiling, diff_hash.as_deref()), latest)
        else {
            return Ok(false);
        };
        let verdict = book.state.evidence[&ev].verdict;
        let mut events = vec![Event::GapClosed { gap: g.id.clone(), evidence: ev.clone() }];
        // the overridden contradiction no longer holds the wire
        if let Some(w) = &g.wire {
            events.push(Event::WireStatusChanged { wire: w.clone(), status: WireStatus::Proven, evidence: ev.clone() });
        }
        events.push(Event::PassClosed {
            pass: book.state.passes + 1,
            stage: g.stage.clone(),
            wire: g.wire.clone(),
            gap: g.id.clone(),
            approach: book.state.evidence[&ev].approach.clone(),
            verdict,
            advanced: true,
            ceiling,
            diff_hash,
        });
        book.record(&events)?;
        self.notes.push(format!("gap `{}`: the hold was overridden; it closes and the cursor advances", g.id));
        Ok(true)
    }

    /// Scans where the cursor is (R37, [`crate::status::scan_order`]) and records what the scan
    /// finds: the held cursor's stage, or every stage in stream order until one has open gaps in
    /// the ledger after its scan. Returns what the scan found in the last stage it scanned.
    fn scan_to_cursor(&mut self, book: &mut Book, repo: &mut dyn Repo) -> Result<Vec<Candidate>, LedgerError> {
        let state = book.state.clone();
        let opts = agenda_options(self.setup);
        let constraint = crate::status::agenda(&state, &book.records, opts).constraint;
        match crate::status::scan_order(&state, opts.ingest) {
            Ok(stage) => self.record_scan(book, repo, constraint.as_ref(), &state, &stage),
            Err(order) => {
                for stage in &order {
                    let found = self.record_scan(book, repo, constraint.as_ref(), &state, stage)?;
                    if crate::status::open_in(&book.state, stage) {
                        return Ok(found);
                    }
                }
                Ok(Vec::new())
            }
        }
    }

    /// Records what the scan finds in `stage` against `state` (the ledger as the pass began): gaps
    /// gone from the code close, new ones open (a closed gap found again is a new generation).
    fn record_scan(
        &mut self,
        book: &mut Book,
        repo: &mut dyn Repo,
        constraint: Option<&Constraint>,
        state: &State,
        stage: &str,
    ) -> Result<Vec<Candidate>, LedgerError> {
        let mut cands = self.candidates(repo, state, stage);
        settle_ids(&mut cands, state, self.setup.brief.is_some());
        let gone = self.gone(state, &book.records, stage, &cands);
        book.record(&gone)?;
        let setup = self.setup;
        // in ingest mode the constraint is the earliest phase with open work, counting what
        // this scan is about to open (R59)
        let brief_constraint = setup.brief.and_then(|b| {
            b.phases.iter().map(|p| p.id.as_str()).find(|p| {
                (*p == stage && !cands.is_empty())
                    || state.gaps.values().any(|g| g.stage == *p && !g.status.set_aside())
            })
        });
        let new: Vec<Event> = cands
            .iter()
            .filter(|c| !state.gaps.contains_key(&c.id))
            .map(|c| Event::GapOpened {
                gap: c.id.clone(),
                gap_kind: c.kind,
                stage: c.stage.clone(),
                wire: c.wire.clone(),
                location: c.location.clone(),
                on_constraint: match brief_constraint {
                    Some(p) => p == c.stage,
                    None => crate::status::on_constraint(constraint, &c.stage, c.wire.as_ref()),
                },
                summary: c.summary.clone(),
                source: c.source.into(),
                estimated_radius: Some(super::scan::estimated_radius(c)),
            })
            .collect();
        self.recorded += new.len();
        book.record(&new)?;
        book.record(&super::scan::restated(state, &cands))?;
        Ok(cands)
    }

    /// What the scan finds in `stage`: the brief's work items (and the phase's contract once they
    /// are done) in ingest mode, else the index's gaps; failing configured commands in both (R18,
    /// R49: the fast lane on every pass, the slow one on request).
    fn candidates(&mut self, repo: &mut dyn Repo, state: &State, stage: &str) -> Vec<Candidate> {
        let setup = self.setup;
        let phase = setup.brief.and_then(|b| Some((b, b.phases.iter().find(|p| p.id == stage)?)));
        let mut cands = match phase {
            Some((b, phase)) => {
                let mut c = ingest::candidates(b, phase);
                // the phase's contract, once its work items are all done
                let done = c.iter().all(|c| state.gaps.get(&c.id).is_some_and(|g| g.status.set_aside()));
                if done && let Some(k) = ingest::contract_candidate(b, phase, &setup.brief_md) {
                    c.push(k);
                }
                c
            }
            None if setup.brief.is_some() => Vec::new(),
            None => repo.scan(state, stage),
        };
        for spec in commands::applicable(&setup.cfg.commands, stage, setup.slow) {
            let fingerprint = format!("{}-{:016x}", setup.tree, command_key(spec));
            if !self.runs.contains_key(&spec.name) {
                let same = repo.last_run(&spec.name).is_some_and(|r| r.run == spec.run);
                self.unchanged.insert(spec.name.clone(), same);
            }
            let r = self.runs.entry(spec.name.clone()).or_insert_with(|| repo.run_command(spec, &fingerprint));
            if !r.passed() {
                cands.push(command_gap(&setup.config_path, stage, r));
            }
        }
        cands
    }

    /// The open gaps of `stage` the scan no longer finds: a wire gap on a wire proven since closes
    /// on that proof, a gap a verified fix removed closes on the fix's proof ([`removing_fix`]),
    /// and any other vanishes (never proven). Wire proofs and commands that did not run now are
    /// not judged here.
    fn gone(&mut self, state: &State, records: &[ledger::Record], stage: &str, cands: &[Candidate]) -> Vec<Event> {
        let setup = self.setup;
        let found: BTreeSet<&str> = cands.iter().map(|c| c.id.as_str()).collect();
        let passed: Vec<(String, bool)> = commands::applicable(&setup.cfg.commands, stage, setup.slow)
            .iter()
            .filter(|spec| self.runs.get(&spec.name).is_some_and(commands::Run::passed))
            .map(|spec| (command_id(&spec.name), self.unchanged.get(&spec.name).copied().unwrap_or(false)))
            .collect();
        let mut events = Vec::new();
        for g in state.gaps.values().filter(|g| g.stage == stage && g.status == GapStatus::Open) {
            let base = g.id.split('.').next().unwrap_or(&g.id);
            let proof = g.wire.as_ref().and_then(|w| state.wires.get(w)).filter(|ws| ws.status == WireStatus::Proven);
            let judged = match g.source.as_str() {
                // a brief's work item or phase contract closes through a proof, never by
                // leaving the brief (nothing was proven about it)
                "WorkItem" | "PhaseContract" => false,
                "UnprovenWire" => proof.is_some(),
                "FailingCommand" => passed.iter().any(|(p, _)| p == base),
                _ => true,
            };
            if !judged || found.contains(g.id.as_str()) {
                continue;
            }
            // a command redefined since its failing run passes on its new definition, not the fix
            let redefined = g.source == "FailingCommand" && !passed.iter().any(|(p, same)| p == base && *same);
            let by = match proof.filter(|_| g.source == "UnprovenWire") {
                Some(ws) => Some(ws.evidence.clone()),
                None if redefined => None,
                None => removing_fix(state, records, g, setup.tree),
            };
            match by {
                Some(evidence) => {
                    self.notes.push(format!(
                        "gap `{}` is gone from the code ({}); it closes on `{evidence}`",
                        g.id, g.summary
                    ));
                    events.push(Event::GapClosed { gap: g.id.clone(), evidence });
                }
                None => {
                    self.notes.push(format!(
                        "gap `{}` vanished from the scan ({}) with no verified fix that removed it: set aside as vanished, not proven",
                        g.id, g.summary
                    ));
                    events.push(Event::GapVanished { gap: g.id.clone(), tree: setup.tree.to_string() });
                }
            }
        }
        events
    }

    /// Nothing to pick: when every wire is proven (the agenda says converged or hardened) the
    /// cycle converges, recorded once with its constraint and the next cycle's intent; a cycle
    /// that needed nothing (no pass, no gap closed or vanished, none skipped or deferred) is
    /// recorded hardened, by the step that reports it so.
    fn converge(&mut self, book: &mut Book, repo: &dyn Repo, action: Action) -> Result<(), LedgerError> {
        if !matches!(action, Action::Converged | Action::Hardened) {
            return Ok(());
        }
        let state = &book.state;
        let in_cycle = state.passes - state.passes_at_convergence;
        let set_aside = state.gaps.values().any(|g| matches!(g.status, GapStatus::Skipped | GapStatus::Deferred));
        let hardened = in_cycle == 0 && state.settled_since_convergence == 0 && !set_aside;
        let last = book.records.last().map(|r| &r.event);
        let recorded = match last {
            Some(Event::CycleConverged { hardened: h, .. }) => *h || !hardened,
            _ => false,
        };
        if !recorded {
            let event = self.converged(book, repo, in_cycle, hardened);
            book.record(&[event])?;
        }
        Ok(())
    }

    /// The cycle's convergence record (R64, R65): the wires proven, its constraint and the next
    /// cycle's intent.
    fn converged(&mut self, book: &Book, repo: &dyn Repo, in_cycle: u32, hardened: bool) -> Event {
        let (setup, state) = (self.setup, &book.state);
        let proven: Vec<Wire> =
            state.wires.iter().filter(|(_, s)| s.status == WireStatus::Proven).map(|(w, _)| w.clone()).collect();
        let slow_pending: Vec<String> = setup
            .cfg
            .commands
            .iter()
            .filter(|c| c.lane == commands::Lane::Slow)
            .filter(|c| {
                let fp = format!("{}-{:016x}", setup.tree, command_key(c));
                !repo.last_run(&c.name).is_some_and(|r| r.fingerprint == fp && r.passed())
            })
            .map(|c| c.name.clone())
            .collect();
        let (limit, intent) = cycle_report(state, &book.records, &slow_pending);
        let (constraint_wire, constraint) = limit.map_or((None, None), |(w, c)| (Some(w), Some(c)));
        let overrides = cycle_overrides(&book.records);
        let overridden: Vec<String> =
            overrides.iter().map(|o| format!("`{}` ({}, by {})", o.gap, o.basis.name(), o.by)).collect();
        self.notes.push(format!(
            "cycle {} {} after {in_cycle} pass(es); constraint: {}; next cycle: {} ({}){}",
            state.cycles + 1,
            if hardened { "hardened" } else { "converged" },
            constraint.as_deref().unwrap_or("none"),
            intent.next,
            intent.because,
            if overridden.is_empty() { String::new() } else { format!("; overrides: {}", overridden.join(", ")) }
        ));
        Event::CycleConverged {
            cycle: state.cycles + 1,
            passes: in_cycle,
            backtracks: state.backtracks,
            proven,
            constraint,
            intent: Some(intent),
            constraint_wire,
            hardened,
            environment_blocked: environment_blocked_wires(state),
            overrides,
        }
    }

    /// Whether the loop proves the picked gap `id` itself now: an open wire with no proof
    /// ([`crate::status::proven_by_the_loop`]), with passes left in this step's budget.
    fn proves_itself(&self, book: &Book, id: &str) -> bool {
        let thrash = self.setup.cfg.settings.thrash_threshold.value;
        self.self_passes < self.setup.max_passes
            && book.state.gaps.get(id).is_some_and(|g| crate::status::proven_by_the_loop(&book.state, g, thrash))
    }

    /// The loop proves a wire that needs no change, structurally on the fresh index (one pass).
    /// Returns whether it advanced (the walk goes on).
    fn prove_wire(&mut self, book: &mut Book, repo: &dyn Repo, id: &str) -> Result<bool, LedgerError> {
        let g = book.state.gaps[id].clone();
        let wire = g.wire.clone().expect("a wire gap");
        let (events, decision, tier) = self.self_proof(book, repo, &g, &wire)?;
        book.record(&events)?;
        self.self_passes += 1;
        let pass = book.state.passes;
        self.notes.push(match &decision {
            Ruling::Advance => {
                format!("pass {pass}: {wire} proven structurally (tier {}); the cursor advances", tier.unwrap_or(0))
            }
            Ruling::Halt(c, why) => format!("pass {pass}: {wire}: {} ({why})", c.token()),
        });
        Ok(decision == Ruling::Advance)
    }

    /// The events of the loop's own structural proof of `wire`: the evidence, the wire's status,
    /// the gaps it settles or the halt, and the pass; with the andon rule's decision and the tier.
    fn self_proof(
        &self,
        book: &Book,
        repo: &dyn Repo,
        g: &GapState,
        wire: &Wire,
    ) -> Result<(Vec<Event>, Ruling, Option<u8>), LedgerError> {
        let setup = self.setup;
        let ceiling = setup.cfg.settings.authorization_level.value;
        let (verdict, tier, hold, claim, refs) = repo.structural(g).map_err(LedgerError::Io)?;
        let detail = "the index, no change applied".into();
        let mut ev = fix::evidence(g, "structural", verdict, tier, hold, claim, detail, refs, None, "00000000");
        ev.id = book.next_evidence_id(&g.id);
        if verdict == Verdict::Proven {
            surface::stamp(&mut ev, setup.surfaces.get(wire));
        }
        ev.tree = Some(setup.tree.to_string());
        let mut events = vec![
            Event::EvidenceRecorded { evidence: ev.clone() },
            Event::WireStatusChanged { wire: wire.clone(), status: wire_status(ev.verdict), evidence: ev.id.clone() },
        ];
        let after = book.after(&events).map_err(LedgerError::Refused)?;
        let decision = ledger::andon_rule::rule_on(&after, &g.id, ceiling, None);
        let advanced = decision == Ruling::Advance;
        if advanced {
            // the proof of the wire settles every open gap on it
            for other in book
                .state
                .gaps
                .values()
                .filter(|o| o.wire.as_ref() == Some(wire) && o.kind == GapKind::Wire && o.status == GapStatus::Open)
            {
                if other.id == g.id || other.source == "UnprovenWire" {
                    events.push(Event::GapClosed { gap: other.id.clone(), evidence: ev.id.clone() });
                }
            }
        } else if let Ruling::Halt(c, why) = &decision {
            events.push(Event::Halted { gap: g.id.clone(), condition: c.token().into(), reason: why.clone() });
        }
        events.push(Event::PassClosed {
            pass: book.state.passes + 1,
            stage: g.stage.clone(),
            wire: Some(wire.clone()),
            gap: g.id.clone(),
            approach: "structural".into(),
            verdict: ev.verdict,
            advanced,
            ceiling,
            diff_hash: None,
        });
        Ok((events, decision, tier))
    }
}

/// The tier-2 overrides recorded since the last convergence (decision 7), in record order.
fn cycle_overrides(records: &[ledger::Record]) -> Vec<ledger::CycleOverride> {
    let since = records.iter().rev().find(|r| matches!(r.event, Event::CycleConverged { .. })).map_or(0, |r| r.seq);
    records
        .iter()
        .filter(|r| r.seq > since)
        .filter_map(|r| match &r.event {
            Event::Overridden { gap, evidence, basis, by, .. } => Some(ledger::CycleOverride {
                gap: gap.clone(),
                evidence: evidence.clone(),
                basis: *basis,
                by: by.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// The wires a cycle converges past only by a person's deferral of a proof that cannot run here.
fn environment_blocked_wires(state: &State) -> Vec<Wire> {
    let mut wires: Vec<Wire> = state.environment_blocked().into_iter().map(|(_, w)| w).collect();
    wires.sort();
    wires.dedup();
    wires
}

/// Phase 5: a picked gap that is halted stops the step on its recorded condition; a stage behind
/// an entry gate stops it on that.
fn halt_of(book: &Book, plan: &Plan) -> Option<Condition> {
    if plan.next.action == Action::Confirm {
        return Some(Condition::EntryGate);
    }
    let (id, _) = plan.picked.as_ref()?;
    match book.state.gaps.get(id)?.status {
        GapStatus::HaltedAwaitingAuthorization => Some(Condition::Authorization),
        GapStatus::BlockedByEnvironment => Some(Condition::BlockedByEnvironment),
        GapStatus::Halted => crate::status::recorded_halt(&book.records, id).and_then(|(c, _)| c),
        _ => None,
    }
}

/// Settles the ids of what the scan found against the ledger: a contradiction a person overrode
/// stays overridden while it is the same (same fact, place and wording: the same id); a brief's
/// work item once closed is done; a closed gap found again is a new generation (`id.2`); a
/// recorded gap that only moved (its line changed) keeps its id.
fn settle_ids(cands: &mut Vec<Candidate>, state: &State, ingest: bool) {
    cands.sort_by(|a, b| a.id.cmp(&b.id));
    cands.dedup_by(|a, b| a.id == b.id);
    cands.retain(|c| {
        !state.gaps.values().any(|g| {
            (g.id == c.id || g.id.strip_prefix(c.id.as_str()).is_some_and(|r| r.starts_with('.')))
                && g.status == GapStatus::Closed
                && g.resolved_by.as_ref().is_some_and(|e| state.overrides.get(&g.id).is_some_and(|o| o.contains(e)))
        })
    });
    // A brief is a plan, not a scan: a work item (or phase contract) once closed is done, not
    // found again.
    if ingest {
        cands.retain(|c| {
            !(matches!(c.source, "WorkItem" | "PhaseContract")
                && state.gaps.get(&c.id).is_some_and(|g| g.status == GapStatus::Closed))
        });
    }
    for c in cands.iter_mut() {
        let mut n = 1;
        let base = c.id.clone();
        while state.gaps.get(&c.id).is_some_and(|g| g.status.finished()) {
            n += 1;
            c.id = format!("{base}.{n}");
        }
    }
    let ids: BTreeSet<String> = cands.iter().map(|c| c.id.clone()).collect();
    let mut taken = BTreeSet::new();
    for c in cands.iter_mut().filter(|c| !state.gaps.contains_key(&c.id)) {
        if let Some(g) = state.gaps.values().find(|g| {
            !g.status.finished()
                && g.stage == c.stage
                && g.source == c.source
                && g.location.path == c.location.path
                && g.summary == c.summary
                && !ids.contains(&g.id)
                && !taken.contains(&g.id)
        }) {
            taken.insert(g.id.clone());
            c.id = g.id.clone();
        }
    }
}

/// The proof of the verified fix that removed open gap `g` from the scan of `tree`: a fix proven
/// on this very tree (its evidence's tree) and closed on that proof, whose write-set holds the
/// gap's file, or whose gap is on the same wire; a failing command that passes now passes on the
/// fix's tree. The latest such proof, if any.
fn removing_fix(state: &State, records: &[ledger::Record], g: &GapState, tree: &str) -> Option<String> {
    records.iter().rev().find_map(|r| {
        let Event::EvidenceRecorded { evidence: ev } = &r.event else { return None };
        let fixed = state.gaps.get(ev.gap.as_deref()?)?;
        let proof = ev.verdict == Verdict::Proven
            && ev.radius.is_some()
            && ev.tree.as_deref() == Some(tree)
            && fixed.id != g.id
            && fixed.status == GapStatus::Closed
            && fixed.resolved_by.as_deref() == Some(ev.id.as_str());
        if !proof {
            return None;
        }
        let write_set = recorded_proposal(records, &fixed.id).map(|p| p.1).unwrap_or_default();
        let removed = g.source == "FailingCommand"
            || (g.wire.is_some() && g.wire == fixed.wire)
            || write_set.iter().any(|f| f.trim_start_matches("./") == g.location.path);
        removed.then(|| ev.id.clone())
    })
}

/// At a cycle's close (R64, R65): the wire that limited it most — reopened most often, then
/// slowest to prove (most proof attempts) — and the next cycle's intent: `harden` when a wire
/// reopened, `split` when slow-lane commands have not passed on this tree, else `feature`.
fn cycle_report(
    state: &State,
    records: &[ledger::Record],
    slow_pending: &[String],
) -> (Option<(Wire, String)>, ledger::Intent) {
    let since = records.iter().rev().find(|r| matches!(r.event, Event::CycleConverged { .. })).map_or(0, |r| r.seq);
    let mut load: BTreeMap<&Wire, (usize, usize)> = BTreeMap::new();
    for (w, ws) in &state.wires {
        load.entry(w).or_default().0 = ws.reopened.iter().filter(|s| **s > since).count();
    }
    for r in records.iter().filter(|r| r.seq > since) {
        if let Event::EvidenceRecorded { evidence } = &r.event
            && evidence.is_proof_attempt()
            && let Some(e) = load.get_mut(&evidence.wire)
        {
            e.1 += 1;
        }
    }
    let worst = load
        .iter()
        .filter(|(_, (reopens, attempts))| *reopens > 0 || *attempts > 1)
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)));
    let constraint = worst.map(|(w, (reopens, attempts))| {
        ((*w).clone(), format!("{w} (reopened {reopens} time(s), {attempts} proof attempt(s) this cycle)"))
    });
    let intent = match worst {
        Some((w, (reopens, _))) if *reopens > 0 => {
            ledger::Intent { next: "harden".into(), because: format!("{w} reopened {reopens} time(s) this cycle") }
        }
        _ if !slow_pending.is_empty() => ledger::Intent {
            next: "split".into(),
            because: format!(
                "the fast lane passes but the slow lane has not passed on this tree ({}): run `andon loop --slow`",
                slow_pending.join(", ")
            ),
        },
        _ => ledger::Intent {
            next: "feature".into(),
            because: "every wire is proven and stable, and no check is pending".into(),
        },
    };
    (constraint, intent)
}

#[cfg(test)]
mod tests;
