//! The walk of a step: scan the cursor's stage, record the gaps that are new, moved or gone,
//! derive the cursor and the constraint, prove the wires that need no change, pick one gap and say
//! what is next; at a cycle's close, what limited it and what comes next.

use std::collections::{BTreeMap, BTreeSet};

use super::super::book::Book;
use super::super::recorded::recorded_proposal;
use super::super::scan::{Candidate, command_gap, command_gap_as, command_id, command_key};
use super::super::verify::commands::{self};
use super::super::verify::fix;
use super::super::{ingest, surface};
use super::artifacts::wire_status;
use super::setup::{Plan, PlanPort, Setup};
use crate::ledger::andon_rule::Ruling;
use crate::ledger::{self, Event, GapKind, GapState, GapStatus, LedgerError, State, Verdict, Wire, WireStatus};
use crate::status::Action;
use crate::status::Constraint;

/// Phase 4: the walk. Each pass scans the cursor's stage (or every stage until one has open
/// work) and records what it finds; the agenda of the ledger ([`crate::status::agenda`], the one
/// `andon status` shows) picks the gap. A wire that needs no change the loop proves itself and
/// walks on, up to `max_passes` proofs; anything else stops the walk with the agenda's next step.
pub(super) fn walk(
    setup: &Setup,
    book: &mut Book,
    repo: &mut dyn PlanPort,
    plan: &mut Plan,
) -> Result<(), LedgerError> {
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
pub(super) fn agenda_options(setup: &Setup) -> crate::status::Options {
    crate::status::Options { thrash: setup.cfg.settings.thrash_threshold.value, ingest: setup.brief.is_some() }
}

/// The walk's working state: command runs cached for the step, gaps recorded, proofs the loop
/// made, and what it noted, in order.
pub(super) struct Walker<'s, 'a> {
    setup: &'s Setup<'a>,
    runs: BTreeMap<String, commands::Run>,
    /// Per command run in this step: whether its command line is that of its previous recorded
    /// run (a command redefined since cannot show that a fix made it pass).
    unchanged: BTreeMap<String, bool>,
    recorded: usize,
    self_passes: u32,
    notes: Vec<String>,
}

/// The open gap of id `id` or of one of its reopenings (`id.2`, …).
fn open_gap_of<'s>(state: &'s State, id: &str) -> Option<&'s ledger::GapState> {
    state.gaps.values().find(|g| g.id.split('.').next() == Some(id) && !g.status.finished())
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
    fn scan_to_cursor(&mut self, book: &mut Book, repo: &mut dyn PlanPort) -> Result<Vec<Candidate>, LedgerError> {
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
        repo: &mut dyn PlanPort,
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
                estimated_radius: Some(super::super::scan::estimated_radius(c)),
            })
            .collect();
        self.recorded += new.len();
        book.record(&new)?;
        book.record(&super::super::scan::restated(state, &cands))?;
        Ok(cands)
    }

    /// What the scan finds in `stage`: the brief's work items (and the phase's contract once they
    /// are done) in ingest mode, else the index's gaps; failing configured commands in both (R18,
    /// R49: the fast lane on every pass, the slow one on request).
    fn candidates(&mut self, repo: &mut dyn PlanPort, state: &State, stage: &str) -> Vec<Candidate> {
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
            } else {
                // exit 0 is not a pass when the run shows its tests did not pass: the gap stands,
                // still naming the tests that failed
                let summary =
                    open_gap_of(state, &command_id(&spec.name)).map(|g| g.summary.clone()).unwrap_or_default();
                if let Some(how) = super::super::scan::hollow_pass(&spec.run, &summary, &repo.output_of(r)) {
                    let mut hollow = r.clone();
                    hollow.failing = super::super::scan::failed_in(&summary);
                    cands.push(command_gap_as(&setup.config_path, stage, &hollow, Some(how)));
                }
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
    fn converge(&mut self, book: &mut Book, repo: &dyn PlanPort, action: Action) -> Result<(), LedgerError> {
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
    fn converged(&mut self, book: &Book, repo: &dyn PlanPort, in_cycle: u32, hardened: bool) -> Event {
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
            sub_cycles: state.sub_cycles,
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
    fn prove_wire(&mut self, book: &mut Book, repo: &dyn PlanPort, id: &str) -> Result<bool, LedgerError> {
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
        repo: &dyn PlanPort,
        g: &GapState,
        wire: &Wire,
    ) -> Result<(Vec<Event>, Ruling, Option<u8>), LedgerError> {
        let setup = self.setup;
        let ceiling = setup.cfg.settings.authorization_level.value;
        let (verdict, tier, hold, claim, refs) = repo.structural(g).map_err(|e| LedgerError::Io(e.to_string()))?;
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
        let after = book.after(&events).map_err(|e| LedgerError::Refused(e.to_string()))?;
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
pub(super) fn cycle_overrides(records: &[ledger::Record]) -> Vec<ledger::CycleOverride> {
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
pub(super) fn environment_blocked_wires(state: &State) -> Vec<Wire> {
    let mut wires: Vec<Wire> = state.environment_blocked().into_iter().map(|(_, w)| w).collect();
    wires.sort();
    wires.dedup();
    wires
}

/// Settles the ids of what the scan found against the ledger: a contradiction a person overrode
/// stays overridden while it is the same (same fact, place and wording: the same id); a brief's
/// work item once closed is done; a closed gap found again is a new generation (`id.2`); a
/// recorded gap that only moved (its line changed) keeps its id.
pub(super) fn settle_ids(cands: &mut Vec<Candidate>, state: &State, ingest: bool) {
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
pub(super) fn removing_fix(state: &State, records: &[ledger::Record], g: &GapState, tree: &str) -> Option<String> {
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
pub(super) fn cycle_report(
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
