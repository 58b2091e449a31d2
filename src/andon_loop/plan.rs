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
use super::commands::{self, CommandSpec};
use super::scan::{Candidate, command_gap, command_id, command_key, on_constraint, pick, stage_events};
use super::{Action, Next, VerifyStop, audit, fix, ingest, proposal, surface};
use crate::config::{BlastRadius, Config};
use crate::ledger::andon_rule::{Condition, Ruling};
use crate::ledger::{self, Event, GapKind, GapState, GapStatus, LedgerError, State, Verdict, Wire, WireStatus};
use crate::ops::StreamReport;
use crate::status::Constraint;

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
    plan.constraint = brief_constraint(setup, plan.cursor.as_deref(), plan.constraint.take());
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
        }];
        if p.blast_radius > ceiling {
            events.push(Event::Halted {
                gap: p.gap.clone(),
                condition: "authorization".into(),
                reason: format!("the proposal is {} and the ceiling is {}", p.blast_radius.name(), ceiling.name()),
            });
            plan.notes.push(format!(
                "proposal for `{}` recorded; halted: {} exceeds the ceiling {}",
                p.gap,
                p.blast_radius.name(),
                ceiling.name()
            ));
        } else {
            plan.notes.push(format!("proposal for `{}` recorded ({}, {})", p.gap, p.blast_radius.name(), p.approach));
        }
        book.record(&events)?;
        plan.consumed.push(file);
    }
    Ok(())
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
        let refused = if !super::applied::verifiable(g.status) {
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
    let Some((base, write_set, _, _)) = super::recorded_proposal(&book.records, &g.id).filter(|p| p.0 != "none") else {
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
        if verdict != Verdict::Proven {
            let detail = "the fresh index".into();
            ev = fix::evidence(g, "structural", verdict, tier, hold, claim, detail, refs, None, "00000000");
            ev.id = book.next_evidence_id(&g.id);
        }
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
        out.push(Event::WireStatusChanged { wire: wire.clone(), status: WireStatus::BrokenOrUnproven, evidence: id });
        let reopens = ws.reopened.len() as u32 + 1;
        let backtrack = fixed.filter(|g| upstream.contains_key(&w.consumer) || w.producer == g.stage);
        if reopens >= thrash {
            notes.push(format!(
                "thrash: {wire} has reopened {reopens} times (threshold {thrash}); backtracking stops and it is the stream's constraint: find why its surface keeps changing"
            ));
        } else if let Some(g) = backtrack {
            out.push(Event::SubCycle {
                from_stage: g.stage.clone(),
                to_stage: w.producer.clone(),
                reason: format!("{wire}: its surface changed ({crossing})"),
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
        verdict: Verdict::Unproven,
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
    }
}

/// What one pass of the walk over the stream ended on.
struct Stop {
    cursor: Option<String>,
    picked: Option<(String, String)>,
    next: Next,
}

/// Phase 4: the walk. Each pass scans the cursor's stage (or every stage until one has open
/// work), picks one gap and either stops with the next action or, for a wire that needs no
/// change, proves it and walks on, up to `max_passes` proofs.
fn walk(setup: &Setup, book: &mut Book, repo: &mut dyn Repo, plan: &mut Plan) -> Result<(), LedgerError> {
    let mut walker = Walker { setup, runs: BTreeMap::new(), recorded: 0, self_passes: 0, notes: Vec::new() };
    let stop = loop {
        let board = crate::status::board(&book.state, setup.cfg.settings.thrash_threshold.value, setup.brief.is_some());
        plan.constraint = board.constraint.clone();
        if walker.close_overridden(book)? {
            continue;
        }
        let (cursor, found) = walker.scan_to_cursor(book, repo, &board)?;
        plan.found = found;
        let Some((id, rule)) = walker.pick(book, cursor.as_deref(), &plan.found, &board) else {
            let next = walker.converge(book, repo)?;
            break Stop { cursor, picked: None, next };
        };
        match walker.next_for(book, repo, &id)? {
            Some(next) => break Stop { cursor, picked: Some((id, rule)), next },
            None => continue,
        }
    };
    plan.notes.append(&mut walker.notes);
    plan.cursor = stop.cursor;
    plan.picked = stop.picked;
    plan.next = stop.next;
    plan.recorded = walker.recorded;
    Ok(())
}

/// The walk's working state: command runs cached for the step, gaps recorded, proofs the loop
/// made, and what it noted, in order.
struct Walker<'s, 'a> {
    setup: &'s Setup<'a>,
    runs: BTreeMap<String, commands::Run>,
    recorded: usize,
    self_passes: u32,
    notes: Vec<String>,
}

impl Walker<'_, '_> {
    /// A halted gap whose hold a person has since cleared (a tier-2 override) passes the andon
    /// rule now: it closes on that evidence and the cursor advances.
    fn close_overridden(&mut self, book: &mut Book) -> Result<bool, LedgerError> {
        let ceiling = self.setup.cfg.settings.authorization_level.value;
        let Some(g) = in_progress(&book.state).filter(|g| g.status == GapStatus::Halted) else { return Ok(false) };
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

    /// The cursor (R37) and what the scan found there: the stage of a gap in progress, else the
    /// first stage in stream order with an outgoing wire that is not proven, else the first stage
    /// with open gaps. In ingest mode the phases' wires are not proven by the loop: the cursor is
    /// the earliest phase with open work (R59).
    fn scan_to_cursor(
        &mut self,
        book: &mut Book,
        repo: &mut dyn Repo,
        board: &crate::status::Board,
    ) -> Result<(Option<String>, Vec<Candidate>), LedgerError> {
        let state = book.state.clone();
        let stream = self.setup.stream;
        let unproven = |stage: &str| {
            stream.wires.iter().any(|w| {
                w.producer == stage
                    && state
                        .wires
                        .get(&Wire { producer: w.producer.clone(), consumer: w.consumer.clone() })
                        .is_none_or(|s| s.status != WireStatus::Proven)
            })
        };
        let cursor = in_progress(&state).map(|g| g.stage.clone()).or_else(|| {
            if self.setup.brief.is_some() { None } else { stream.order.iter().find(|s| unproven(s)).cloned() }
        });
        if let Some(stage) = cursor {
            let found = self.record_scan(book, repo, board, &state, &stage)?;
            return Ok((Some(stage), found));
        }
        for stage in &stream.order {
            let cands = self.record_scan(book, repo, board, &state, stage)?;
            // a candidate is open when it was just recorded, or is recorded as open
            if cands.iter().any(|c| state.gaps.get(&c.id).is_none_or(|g| g.status == GapStatus::Open)) {
                return Ok((Some(stage.clone()), cands));
            }
        }
        Ok((None, Vec::new()))
    }

    /// Records what the scan finds in `stage` against `state` (the ledger as the pass began): gaps
    /// gone from the code close, new ones open (a closed gap found again is a new generation).
    fn record_scan(
        &mut self,
        book: &mut Book,
        repo: &mut dyn Repo,
        board: &crate::status::Board,
        state: &State,
        stage: &str,
    ) -> Result<Vec<Candidate>, LedgerError> {
        let mut cands = self.candidates(repo, state, stage);
        settle_ids(&mut cands, state, self.setup.brief.is_some());
        let gone = self.gone(state, stage, &cands);
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
                    None => on_constraint(board.constraint.as_ref(), c),
                },
                summary: c.summary.clone(),
                source: c.source.into(),
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
            let r = self.runs.entry(spec.name.clone()).or_insert_with(|| repo.run_command(spec, &fingerprint));
            if !r.passed() {
                cands.push(command_gap(&setup.config_path, stage, r));
            }
        }
        cands
    }

    /// The open gaps of `stage` the scan no longer finds: gone from the code, each closes on that
    /// evidence (tier 1: the fresh index). Wire proofs and commands that did not run now are not
    /// judged here.
    fn gone(&mut self, state: &State, stage: &str, cands: &[Candidate]) -> Vec<Event> {
        let setup = self.setup;
        let found: BTreeSet<&str> = cands.iter().map(|c| c.id.as_str()).collect();
        let passed: Vec<String> = commands::applicable(&setup.cfg.commands, stage, setup.slow)
            .iter()
            .filter(|spec| self.runs.get(&spec.name).is_some_and(commands::Run::passed))
            .map(|spec| command_id(&spec.name))
            .collect();
        let mut events = Vec::new();
        for g in state.gaps.values().filter(|g| g.stage == stage && g.status == GapStatus::Open) {
            let base = g.id.split('.').next().unwrap_or(&g.id);
            let judged = match g.source.as_str() {
                // a brief's work item or phase contract closes through a proof, never by
                // leaving the brief (nothing was proven about it)
                "WorkItem" | "PhaseContract" => false,
                "UnprovenWire" => g
                    .wire
                    .as_ref()
                    .is_some_and(|w| state.wires.get(w).is_some_and(|ws| ws.status == WireStatus::Proven)),
                "FailingCommand" => passed.iter().any(|p| p == base),
                _ => true,
            };
            if !judged || found.contains(g.id.as_str()) {
                continue;
            }
            let ev = gone_evidence(state, g, stage, setup.tree);
            self.notes.push(format!("gap `{}` is gone from the code ({}); it closes", g.id, g.summary));
            events.push(Event::EvidenceRecorded { evidence: ev.clone() });
            events.push(Event::GapClosed { gap: g.id.clone(), evidence: ev.id });
        }
        events
    }
    /// The gap to work on: a gap in progress is finished before another is picked; else the
    /// pick order among the open gaps found, on the constraint as it is now (R63), not as it was
    /// when the gap was opened. In ingest mode the constraint is the phase the cursor stands on
    /// (R59).
    fn pick(
        &self,
        book: &Book,
        cursor: Option<&str>,
        found: &[Candidate],
        board: &crate::status::Board,
    ) -> Option<(String, String)> {
        if let Some(g) = in_progress(&book.state) {
            return Some((g.id.clone(), "in progress: a gap is finished before another is picked".into()));
        }
        let ingest_constraint = self.setup.brief.and(cursor);
        let on_constraint = |c: &Candidate| match ingest_constraint {
            Some(stage) => c.stage == stage,
            None => on_constraint(board.constraint.as_ref(), c),
        };
        let open: Vec<&Candidate> =
            found.iter().filter(|c| book.state.gaps.get(&c.id).is_some_and(|g| g.status == GapStatus::Open)).collect();
        pick(&open, &on_constraint).map(|(c, rule)| (c.id.clone(), rule))
    }

    /// Nothing open in any stage: the cycle converges when every wire is proven too (recording
    /// its constraint and the next cycle's intent once), and is hardened when it needed no fix.
    fn converge(&mut self, book: &mut Book, repo: &dyn Repo) -> Result<Next, LedgerError> {
        let setup = self.setup;
        let state = &book.state;
        let all_proven = setup.stream.wires.iter().all(|w| {
            state
                .wires
                .get(&Wire { producer: w.producer.clone(), consumer: w.consumer.clone() })
                .is_some_and(|s| s.status == WireStatus::Proven)
        });
        if !all_proven {
            let detail = if setup.brief.is_some() {
                "every work item of the brief is settled; the phases' wires and their Behavior Contract obligations are not proven by the loop in this version".into()
            } else {
                "no open gap the scan can see, but some wire is not proven".into()
            };
            return Ok(Next { action: Action::None, gap: None, detail });
        }
        let in_cycle = state.passes - state.passes_at_convergence;
        // gaps closed since the last convergence (a pass, or a gap gone from the code)
        let closed_since = book
            .records
            .iter()
            .rev()
            .take_while(|r| !matches!(r.event, Event::CycleConverged { .. }))
            .any(|r| matches!(r.event, Event::GapClosed { .. }));
        if !matches!(book.records.last().map(|r| &r.event), Some(Event::CycleConverged { .. })) {
            let event = self.converged(book, repo, in_cycle);
            book.record(&[event])?;
        }
        // gaps a person set aside are not done: such a cycle is never hardened
        let set_aside =
            book.state.gaps.values().filter(|g| matches!(g.status, GapStatus::Skipped | GapStatus::Deferred)).count();
        Ok(if in_cycle == 0 && !closed_since && set_aside == 0 {
            Next {
                action: Action::Hardened,
                gap: None,
                detail: "a cycle converged without a single fix: the stream is hardened".into(),
            }
        } else {
            Next {
                action: Action::Converged,
                gap: None,
                detail: if set_aside > 0 {
                    format!(
                        "the cycle converged after {in_cycle} pass(es), except {set_aside} gap(s) skipped or deferred by a person; it cannot be hardened while they stand"
                    )
                } else {
                    format!(
                        "the cycle converged after {in_cycle} pass(es): run `andon loop` again to confirm it is hardened"
                    )
                },
            }
        })
    }

    /// The cycle's convergence record (R64, R65): the wires proven, its constraint and the next
    /// cycle's intent.
    fn converged(&mut self, book: &Book, repo: &dyn Repo, in_cycle: u32) -> Event {
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
        let (constraint, intent) = super::cycle_report(state, &book.records, &slow_pending);
        self.notes.push(format!(
            "cycle {} converged after {in_cycle} pass(es); constraint: {}; next cycle: {} ({})",
            state.cycles + 1,
            constraint.as_deref().unwrap_or("none"),
            intent.next,
            intent.because
        ));
        Event::CycleConverged {
            cycle: state.cycles + 1,
            passes: in_cycle,
            backtracks: state.backtracks,
            proven,
            constraint,
            intent: Some(intent),
        }
    }

    /// What is next for the picked gap `id`, or `None` when the loop proved its wire itself and
    /// walks on.
    fn next_for(&mut self, book: &mut Book, repo: &dyn Repo, id: &str) -> Result<Option<Next>, LedgerError> {
        let g = book.state.gaps[id].clone();
        if let Some(next) = entry_gate(book, &g) {
            return Ok(Some(next));
        }
        // A wire that needs no change is proven by the loop itself, one pass per wire.
        if g.status == GapStatus::Open && g.source == "UnprovenWire" && g.wire.is_some() {
            return self.prove_wire(book, repo, &g);
        }
        Ok(Some(next_by_status(book, &g)))
    }

    /// The loop proves a wire that needs no change, structurally on the fresh index: a
    /// thrashing wire is escalated instead (R83), and the pass budget bounds the proofs.
    fn prove_wire(&mut self, book: &mut Book, repo: &dyn Repo, g: &GapState) -> Result<Option<Next>, LedgerError> {
        let id = g.id.clone();
        let thrash = self.setup.cfg.settings.thrash_threshold.value;
        let wire = g.wire.clone().expect("a wire gap");
        if let Some(ws) = book.state.wires.get(&wire).filter(|ws| ws.reopened.len() as u32 >= thrash) {
            return Ok(Some(Next {
                action: Action::Decide,
                gap: Some(id.clone()),
                detail: format!(
                    "escalation: {wire} has reopened {} times (threshold {thrash}) and is the constraint; the loop stops re-proving it: find why its surface keeps changing and propose a fix for `{id}`, or a person defers it",
                    ws.reopened.len()
                ),
            }));
        }
        let max_passes = self.setup.max_passes;
        if self.self_passes >= max_passes {
            return Ok(Some(Next {
                action: Action::Budget,
                gap: Some(id),
                detail: format!("the pass budget ({max_passes}) is spent; run `andon loop` again to go on"),
            }));
        }
        let (events, decision, tier) = self.self_proof(book, repo, g, &wire)?;
        book.record(&events)?;
        self.self_passes += 1;
        let pass = book.state.passes;
        self.notes.push(match &decision {
            Ruling::Advance => {
                format!("pass {pass}: {wire} proven structurally (tier {}); the cursor advances", tier.unwrap_or(0))
            }
            Ruling::Halt(c, why) => format!("pass {pass}: {wire}: {} ({why})", c.token()),
        });
        if decision == Ruling::Advance {
            return Ok(None);
        }
        Ok(Some(Next {
            action: Action::FixTheCode,
            gap: Some(id),
            detail: format!("the wire {wire} is contradicted: fix the code, propose and verify"),
        }))
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
            Event::WireStatusChanged { wire: wire.clone(), status: wire_status(verdict), evidence: ev.id.clone() },
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
            verdict,
            advanced,
            ceiling,
            diff_hash: None,
        });
        Ok((events, decision, tier))
    }
}

/// Ingest mode: a stage with an unconfirmed entry gate is worked only after a person confirms
/// it (R57); the andon rule refuses any advance there until then.
fn entry_gate(book: &Book, g: &GapState) -> Option<Next> {
    let c = book.state.context.get(&g.stage).filter(|c| !c.open_gates().is_empty())?;
    let gates: Vec<String> = c
        .open_gates()
        .iter()
        .map(|o| format!("`{}` ({}, {} confidence: {})", o.id, o.priority, o.confidence, o.rule))
        .collect();
    Some(Next {
        action: Action::Confirm,
        gap: Some(g.id.clone()),
        detail: format!(
            "stage `{}` has entry gate(s) a person confirms before its work starts: {}; `andon confirm {} --rule RULE --by WHO --reason WHY`",
            g.stage,
            gates.join("; "),
            g.stage
        ),
    })
}

/// The next action for a picked gap, by its status (and, when halted, by the condition it was
/// halted on).
fn next_by_status(book: &Book, g: &GapState) -> Next {
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
        GapStatus::Halted => {
            let (cond, why) = recorded_halt(book, &id).unwrap_or((None, String::new()));
            match cond {
                Some(Condition::Refuted | Condition::Tier1Hold | Condition::Unproven) => Next {
                    action: Action::FixTheCode,
                    gap,
                    detail: format!(
                        "gap `{id}` halted ({why}): change the fix, then `andon verify --gap {id}` (the proposal holds while the fix stays in its write-set; to write other files, `andon propose --gap {id} …` first)"
                    ),
                },
                Some(Condition::Tier2Hold) => Next {
                    action: Action::Decide,
                    gap,
                    detail: format!(
                        "gap `{id}` halted on a tier-2 contradiction ({why}): change the fix, then `andon verify --gap {id}`; or a person overrides it with `andon override {id} --evidence E --basis B --by WHO --reason R`"
                    ),
                },
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

/// The condition gap `id` was last halted on, as recorded, with its reason.
fn recorded_halt(book: &Book, id: &str) -> Option<(Option<Condition>, String)> {
    book.records.iter().rev().find_map(|r| match &r.event {
        Event::Halted { gap, condition, reason } if gap == id => {
            Some((Condition::from_recorded(condition), reason.clone()))
        }
        _ => None,
    })
}

/// A gap in progress: proposed, or halted (awaiting authority or on a condition).
fn in_progress(state: &State) -> Option<&GapState> {
    state
        .gaps
        .values()
        .find(|g| matches!(g.status, GapStatus::Proposed | GapStatus::HaltedAwaitingAuthorization | GapStatus::Halted))
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
        GapStatus::Halted => recorded_halt(book, id).and_then(|(c, _)| c),
        _ => None,
    }
}

/// In ingest mode the constraint is the brief's: the earliest phase with open work (R59), on the
/// phase's own wire (the one its contract proves, `ingest::phase_wire`), as status shows it.
fn brief_constraint(setup: &Setup, cursor: Option<&str>, board: Option<Constraint>) -> Option<Constraint> {
    let Some(_) = setup.brief else { return board };
    let stage = cursor?;
    let wire = setup
        .stream
        .wires
        .iter()
        .find(|w| w.producer == stage)
        .map(|w| Wire { producer: w.producer.clone(), consumer: w.consumer.clone() })
        .unwrap_or(Wire { producer: stage.to_string(), consumer: stage.to_string() });
    Some(Constraint {
        wire,
        rule: "brief-order",
        detail: format!("`{stage}` is the earliest phase of the brief with open work"),
    })
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
        while state.gaps.get(&c.id).is_some_and(|g| g.status == GapStatus::Closed) {
            n += 1;
            c.id = format!("{base}.{n}");
        }
    }
    let ids: BTreeSet<String> = cands.iter().map(|c| c.id.clone()).collect();
    let mut taken = BTreeSet::new();
    for c in cands.iter_mut().filter(|c| !state.gaps.contains_key(&c.id)) {
        if let Some(g) = state.gaps.values().find(|g| {
            g.status != GapStatus::Closed
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

/// The evidence that gap `g` is gone from the code: the fresh index (or, for a failing command,
/// the command passing on this tree).
fn gone_evidence(state: &State, g: &GapState, stage: &str, tree: &str) -> ledger::Evidence {
    let command = g.source == "FailingCommand";
    ledger::Evidence {
        id: format!("E-{}-{}", g.id, state.gap_evidence.get(&g.id).map_or(0, Vec::len) + 1),
        gap: Some(g.id.clone()),
        wire: g.wire.clone().unwrap_or(Wire { producer: g.stage.clone(), consumer: g.stage.clone() }),
        approach: if command { "executed" } else { "structural" }.into(),
        verdict: Verdict::Proven,
        hold: false,
        tier: (!command).then_some(1),
        artifact: None,
        claim: format!("the scan of stage `{stage}` no longer finds: {}", g.summary),
        evidence: if command { "the command passes on this tree".into() } else { "the fresh index".into() },
        fix: None,
        references: vec![match g.location.line {
            Some(l) => format!("{}:{l}", g.location.path),
            None => g.location.path.clone(),
        }],
        surface: None,
        crossing: Default::default(),
        radius: None,
        tree: Some(tree.to_string()),
        rung: Some(if command { 3 } else { 2 }),
        commit: None,
    }
}

#[cfg(test)]
mod tests;
