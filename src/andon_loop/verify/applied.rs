//! Verifying the applied fix of a loop gap (issue 5 item 6; R71–R87, R106–R113): the fix is
//! the working tree against the proposal's base commit, or a given unified diff. Before
//! anything is proven, files outside the declared write-set are refused, and the blast radius
//! is re-rated from the actual diff and held against the ceiling again. Then verify routes the
//! proof itself and runs it; it writes an evidence artifact, never the ledger (a halt is
//! recorded at once by [`crate::andon_loop::record_verified`], as the loop records it).

use std::path::Path;

use super::super::error::Error;
use super::super::own::own_paths;
use super::super::recorded::{recorded_judging, recorded_proposal, recorded_proposer};
use super::super::surface;
use super::{commands, fix, judged, pin, proof, prove, red, request, routing};
use crate::config::{BlastRadius, Config};
use crate::datalog;
use crate::evidence::route::Approach;
use crate::extract::lang::references_name_packages;
use crate::facts::rel;
use crate::index::Index;
use crate::ledger::andon_rule::Condition;
use crate::ledger::{self, GapStatus, LedgerError, State, Verdict, Wire};

/// The applied change, checked before anything is proven: the working tree against `base` (or a
/// given unified diff, which must then describe the tree), no file outside `write_set` (R113),
/// and its blast radius re-rated (R75): a change to how it is judged ([`judged`]) rates hard to
/// reverse. With git, the tree decides the hash and counts in the
/// rating even when a diff is given, so a diff cannot describe a smaller change than the one made.
/// `Err` is a refusal's message.
pub(crate) fn checked_change(
    root: &Path,
    cfg: &Config,
    base: &str,
    write_set: &[String],
    diff_text: Option<&str>,
    recorded: Option<&judged::Judging>,
) -> Result<Result<Checked, VerifyStop>, Error> {
    let own = own_paths(cfg);
    let tree = if base != "none" { Some(fix::change(root, base, &own)) } else { None };
    let (change, tree) = match (diff_text, tree) {
        (Some(text), tree) => (fix::change_from_diff(text, base, &own)?, tree),
        (None, Some(t)) => {
            let t = t?;
            (t.clone(), Some(Ok(t)))
        }
        (None, None) => (fix::change(root, base, &own)?, None),
    };
    if change.files.is_empty() {
        return Err(Error::NoChange);
    }
    let (mut rerated, mut because) = fix::rerate(&change);
    let mut change = change;
    if diff_text.is_some()
        && let Some(Ok(tree)) = tree
    {
        let given: std::collections::BTreeSet<&str> = change.files.iter().map(|(_, p)| p.as_str()).collect();
        let missing: Vec<String> =
            tree.files.iter().map(|(_, p)| p.clone()).filter(|p| !given.contains(p.as_str())).collect();
        if !missing.is_empty() {
            return Err(Error::DiffLeavesOut { missing });
        }
        let (r, b) = fix::rerate(&tree);
        if r > rerated {
            (rerated, because) = (r, format!("{b} (in the working tree)"));
        }
        change = fix::AppliedChange { files: change.files, ..tree };
    }
    let outside: Vec<String> = change.files.iter().map(|(_, p)| p.clone()).filter(|p| !write_set.contains(p)).collect();
    if !outside.is_empty() {
        return Ok(Err(VerifyStop::Scope(outside)));
    }
    if let Some((r, b)) = reach(root, cfg, base, &change)
        && r > rerated
    {
        (rerated, because) = (r, b);
    }
    let mut judged = judged::of_change(root, cfg, base, &change);
    if let Some(recorded) = recorded.filter(|r| !r.is_empty()) {
        judged.add_drift(&judged::drift(recorded, &judged::fingerprint(root, cfg)));
    }
    if !judged.is_empty() && BlastRadius::HardToReverse > rerated {
        (rerated, because) = (BlastRadius::HardToReverse, judged.reason());
    }
    Ok(Ok(Checked { change, radius: rerated, because, judged }))
}

/// What the change reaches beyond one stage's insides (decision 5), from the base and the working
/// tree alone, so no later step can rate it lower: files of more than one stage written, a public
/// function or class the base had deleted, or its signature changed. Each is hard to reverse.
fn reach(root: &Path, cfg: &Config, base: &str, change: &fix::AppliedChange) -> Option<(BlastRadius, String)> {
    let stages = ledger::load(&ledger::dir_of(root, &cfg.settings)).ok().flatten().map(|(_, s, _)| s.stages);
    if let Some(stages) = stages {
        let stage_of = |p: &str| {
            stages
                .iter()
                .filter(|(_, s)| !s.root.is_empty() && (p == s.root || p.starts_with(&format!("{}/", s.root))))
                .max_by_key(|(_, s)| s.root.len())
                .map(|(n, _)| n.clone())
        };
        let written: std::collections::BTreeSet<String> =
            change.files.iter().filter(|(_, p)| !red::test_path(p)).filter_map(|(_, p)| stage_of(p)).collect();
        if written.len() > 1 {
            let names: Vec<String> = written.iter().map(|s| format!("`{s}`")).collect();
            return Some((
                BlastRadius::HardToReverse,
                format!("it writes files of {} stages ({})", names.len(), names.join(", ")),
            ));
        }
    }
    if base == "none" {
        return None;
    }
    let (mut deleted, mut changed) = (Vec::new(), Vec::new());
    for (status, path) in change.files.iter().filter(|(st, p)| st != "A" && !red::test_path(p)) {
        let Some(before) = judged::at_base(root, base, path) else { continue };
        let text = if status == "D" { String::new() } else { judged::read(root, path) };
        let now = crate::extract::public::public_signatures(path, &text);
        let bound = crate::extract::public::bound_names(path, &text);
        for ((kind, name), was) in crate::extract::public::public_signatures(path, &before) {
            match now.get(&(kind.clone(), name.clone())) {
                // moved elsewhere and imported back: the name is still there for its callers
                None if bound.contains(&name) => {}
                None => deleted.push(format!("{kind} `{name}` from `{path}`")),
                Some(is) if *is != was => changed.push(format!("`{was}` → `{is}` in `{path}`")),
                Some(_) => {}
            }
        }
    }
    if !deleted.is_empty() {
        return Some((BlastRadius::HardToReverse, format!("it deletes public {}", deleted.join(", "))));
    }
    (!changed.is_empty())
        .then(|| (BlastRadius::HardToReverse, format!("it changes the public signature {}", changed.join(", "))))
}

/// An applied change that passed the checks: the change, its blast radius and the rule that
/// rated it, and what it alters in how it is judged.
pub(crate) struct Checked {
    pub change: fix::AppliedChange,
    pub radius: BlastRadius,
    pub because: String,
    pub judged: judged::Judged,
}

/// Does the working tree change a public surface — what crosses a proven wire, as its proof
/// recorded it? Such a change is hard to reverse: every consumer rests on it. Says
/// which wires and what crosses them now. A wire with a broken import open across it does not
/// stand proven: the fix that adds the missing name is not judged against its proof.
pub(crate) fn surface_change(root: &Path, idx: &Index, state: &State) -> Result<Option<String>, Error> {
    let proven: Vec<(Wire, &ledger::Evidence)> = state
        .wires
        .iter()
        .filter(|(w, _)| crate::status::stands_proven(state, w))
        .filter_map(|(w, ws)| state.evidence.get(&ws.evidence).filter(|e| e.surface.is_some()).map(|e| (w.clone(), e)))
        .collect();
    if proven.is_empty() {
        return Ok(None);
    }
    let prog = datalog::builtin_program();
    let need = prog.needed(&[rel::WIRE_IMPORT.0 as usize, rel::MISSING_NAME.0 as usize, rel::IN_STAGE.0 as usize]);
    let mut store = datalog::load_with(&prog, idx, Some(&need), &references_name_packages)
        .map_err(|e| Error::Facts(e.to_string()))?;
    datalog::run_runtime(&prog, &mut store, Some(&need));
    let wires: Vec<Wire> = proven.iter().map(|(w, _)| w.clone()).collect();
    let now = surface::surfaces(root, idx, &store, &wires);
    // a lone stage's own wire counts every exported name, helpers too: a change there reopens
    // its contract for the loop to prove again, but rates no fix (no other stage rests on it)
    let changed: Vec<String> = proven
        .iter()
        .filter(|(w, _)| w.producer != w.consumer)
        .filter(|(w, e)| now.get(w).is_some_and(|s| Some(&s.fingerprint) != e.surface.as_ref()))
        .map(|(w, e)| format!("{w} ({})", surface::what_changed(&e.crossing, &now[w])))
        .collect();
    Ok((!changed.is_empty()).then(|| format!("changes the public surface of {}", changed.join("; "))))
}

/// Why `andon verify` stopped before or after proving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyStop {
    /// Files outside the declared write-set (R113): listed, nothing proven.
    Scope(Vec<String>),
    /// The actual diff rates above the ceiling and no authority covers this diff (R75).
    Authorization(BlastRadius, String),
    /// The fix changes how it is judged (its proof's definition, or tests it had at the base):
    /// a person's decision, which `andon authorize` binds to this diff. The level, and what
    /// changes.
    Judged(BlastRadius, String),
    /// Bad request: no such gap, no proposal, no base commit, missing command.
    Refused(String),
    /// The gap is blocked by the environment and nothing changed since (decision 8): the
    /// capability resolves as it did, and a check still needs it. Not retried.
    Blocked(ledger::Capability),
}

/// Verifies the applied fix of `gap` on the fresh index `idx`; writes the evidence artifact for
/// the loop to record (never the ledger).
pub fn verify(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    gap: &str,
    inputs: &proof::Inputs,
    diff_text: Option<&str>,
) -> Result<Result<fix::VerifyOutcome, VerifyStop>, LedgerError> {
    let dir = ledger::dir_of(root, &cfg.settings);
    let Some((_, state, records)) = ledger::load(&dir)? else {
        return Ok(Err(VerifyStop::Refused("the loop has never run here: no ledger".into())));
    };
    let proposed = match ProposedGap::of(&state, &records, gap, inputs) {
        Ok(p) => p,
        Err(m) => return Ok(Err(VerifyStop::Refused(m.to_string()))),
    };
    if let Some(cap) = still_blocked(root, cfg, proposed.gap, inputs.command.as_deref()) {
        return Ok(Err(VerifyStop::Blocked(cap)));
    }
    let file = fix::artifact_path(&cfg.settings.output_path(root), gap);
    if let Some(m) = unrecorded_verdict(&file) {
        return Ok(Err(VerifyStop::Refused(m)));
    }
    let ask = Verification { root, cfg, idx, state: &state, inputs: &proposed.inputs, diff_text };
    let rated = match ask.rated_change(&proposed)? {
        Ok(r) => r,
        Err(stop) => return Ok(Err(stop)),
    };
    let mut outcome = match ask.prove(&proposed, rated)? {
        Ok(o) => o,
        Err(stop) => return Ok(Err(stop)),
    };
    if outcome.evidence.verdict == Verdict::Proven && proposed.base != "none" {
        match keep_proven_tree(root, cfg, &proposed.base, &outcome) {
            Ok(commit) => outcome.evidence.commit = Some(commit),
            Err(m) => outcome.evidence.references.push(format!("the proven tree is not kept: {m}")),
        }
    }
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| LedgerError::Io(format!("{}: {e}", parent.display())))?;
    }
    crate::text::write_atomic(&file, &serde_json::to_vec_pretty(&outcome).expect("json"))
        .map_err(|e| LedgerError::Io(format!("{}: {e}", file.display())))?;
    Ok(Ok(outcome))
}

/// Why verify must not write over the evidence artifact at `file`: an earlier verification that
/// refuted the fix, held it or could not finish, not yet recorded (overwriting it would erase a
/// refutation from the ledger, and from the count of a wire's reopenings). One that waits for
/// input (unknown) is asked again.
fn unrecorded_verdict(file: &Path) -> Option<String> {
    let earlier: fix::VerifyOutcome = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
    let failed = matches!(
        crate::ledger::andon_rule::condition_of(&earlier.evidence),
        Some(
            Condition::Refuted
                | Condition::Unproven
                | Condition::Tier1Hold
                | Condition::Tier2Hold
                | Condition::BlockedByEnvironment
        )
    );
    failed.then(|| {
        format!(
            "the last verification of `{}` ({}) is not recorded (its recording failed): run `andon loop`, which removes it, then verify again",
            earlier.gap,
            crate::text::short(&earlier.evidence.claim)
        )
    })
}

/// The capability gap `g` is blocked by, if nothing changed since its proof could not run here:
/// it resolves as it did then, and the check asked for (`--command`, else a configured one) still
/// runs the command that needed it. A
/// blocked proof is not retried until the capability changes (decision 8).
fn still_blocked(root: &Path, cfg: &Config, g: &ledger::GapState, command: Option<&str>) -> Option<ledger::Capability> {
    let cap =
        g.blocked.as_ref().filter(|_| matches!(g.status, GapStatus::BlockedByEnvironment | GapStatus::Deferred))?;
    // a capability the command resolves its own way (after a `cd`, on a `PATH` it sets) cannot
    // be watched from here: never refuse its re-run
    if !crate::capabilities::watchable(&cap.name, &cap.command) {
        return None;
    }
    let now = crate::capabilities::fingerprint(&cap.name, root, std::env::var_os("PATH").as_deref());
    let needed = match command {
        Some(c) => c == cap.command,
        None => cfg.commands.iter().any(|c| c.run == cap.command),
    };
    (now == cap.fingerprint && needed).then(|| cap.clone())
}

/// Keeps the working tree verify proved as a commit object on `base` (the next proposal's base
/// once the loop records the proof); `Err` when the tree is no longer the change verify proved.
fn keep_proven_tree(root: &Path, cfg: &Config, base: &str, outcome: &fix::VerifyOutcome) -> Result<String, Error> {
    let snap = super::diff::Snapshot::take(root, &own_paths(cfg))?;
    if snap.hash(base)? != outcome.change.hash {
        return Err(Error::TreeChanged);
    }
    snap.keep(base, &format!("andon: the tree proven for gap {}", outcome.gap))
}

/// May gap `g` be verified: proposed, or halted on the proof of its last fix (refuted, a hold,
/// unproven, awaiting a person, blocked by the environment): the fix is changed and verified
/// again, with the same proposal while its scope holds. A gap a person deferred because its proof
/// could not run here is verified again once it can (decision 8).
pub(crate) fn verifiable(g: &ledger::GapState) -> bool {
    matches!(
        g.status,
        GapStatus::Proposed
            | GapStatus::Halted
            | GapStatus::HaltedAwaitingAuthorization
            | GapStatus::BlockedByEnvironment
    ) || (g.status == GapStatus::Deferred && g.blocked.is_some())
}

/// A proposed gap as the ledger recorded it, with the inputs verify proves it with.
struct ProposedGap<'s> {
    gap: &'s ledger::GapState,
    base: String,
    write_set: Vec<String>,
    approach: String,
    radius: BlastRadius,
    /// What defined how the fix is judged when it was proposed.
    judging: judged::Judging,
    /// The caller's inputs, the proposer the one the ledger recorded.
    inputs: proof::Inputs,
}

impl<'s> ProposedGap<'s> {
    /// Gap `gap`, proposed: its recorded proposal, and the proposer the ledger recorded (a
    /// `--proposer` naming someone else is refused). `Err` is why verify refuses.
    fn of(state: &'s State, records: &[ledger::Record], gap: &str, inputs: &proof::Inputs) -> Result<Self, Error> {
        let Some(g) = state.gaps.get(gap) else { return Err(Error::NoGap { gap: gap.into() }) };
        if !verifiable(g) {
            return Err(Error::NotVerifiable { gap: gap.into(), status: g.status.name().to_string() });
        }
        let Some((base, write_set, approach, radius)) = recorded_proposal(records, gap) else {
            return Err(Error::NoProposal { gap: gap.into() });
        };
        let proposer = match (&inputs.proposer, recorded_proposer(records, gap)) {
            (Some(given), Some(rec)) if !crate::panel::same_producer(given, &rec) => {
                return Err(Error::OtherProposer {
                    gap: gap.into(),
                    recorded: crate::text::short(&rec).to_string(),
                    given: crate::text::short(given).to_string(),
                });
            }
            (given, rec) => given.clone().or(rec),
        };
        let inputs = proof::Inputs { proposer, ..inputs.clone() };
        let judging = recorded_judging(records, gap);
        Ok(ProposedGap { gap: g, base, write_set, approach, radius, judging, inputs })
    }
}

/// The applied change, re-rated.
type Rated = Checked;

/// What one verification works with.
struct Verification<'a> {
    root: &'a Path,
    cfg: &'a Config,
    idx: &'a Index,
    state: &'a State,
    inputs: &'a proof::Inputs,
    diff_text: Option<&'a str>,
}

impl Verification<'_> {
    /// The applied change, checked and re-rated (a changed public surface is hard to reverse),
    /// and held against the ceiling again unless authority covers this very diff (R75).
    fn rated_change(&self, p: &ProposedGap) -> Result<Result<Rated, VerifyStop>, LedgerError> {
        let Checked { change, radius: mut rerated, mut because, judged } =
            match checked_change(self.root, self.cfg, &p.base, &p.write_set, self.diff_text, Some(&p.judging)) {
                Ok(Ok(c)) => c,
                Ok(Err(stop)) => return Ok(Err(stop)),
                Err(m) => return Ok(Err(VerifyStop::Refused(m.to_string()))),
            };
        if let Some(what) =
            surface_change(self.root, self.idx, self.state).map_err(|e| LedgerError::Io(e.to_string()))?
            && BlastRadius::HardToReverse > rerated
        {
            (rerated, because) = (BlastRadius::HardToReverse, what);
        }
        let level = rerated.max(p.radius);
        if level > self.cfg.settings.authorization_level.value && !self.covered(&p.gap.id, &change.hash, level) {
            return Ok(Err(VerifyStop::Authorization(level, because)));
        }
        // whatever the ceiling and the approach: how a fix is judged is a person's decision
        if !judged.is_empty() && !self.covered(&p.gap.id, &change.hash, level) {
            return Ok(Err(VerifyStop::Judged(level, judged.reason())));
        }
        Ok(Ok(Checked { change, radius: rerated, because, judged }))
    }

    /// Is authority raised for this very diff at `level` or above?
    fn covered(&self, g: &str, hash: &str, level: BlastRadius) -> bool {
        self.state.authority.get(g).is_some_and(|a| a.iter().any(|(h, l)| *h == hash && *l >= level))
    }

    /// What the proof of gap `g` is about: its stages, wire, claim and criterion, and the diff.
    fn target(&self, p: &ProposedGap, checks: &[commands::CommandSpec]) -> proof::ProofTarget {
        let g = p.gap;
        proof::ProofTarget {
            stages: vec![g.stage.clone()],
            wire: g.wire.clone(),
            path: g.location.path.clone(),
            summary: g.summary.clone(),
            id: g.id.clone(),
            claim: format!("the applied change fixes {}: {}", g.id, g.summary),
            criteria: vec![prove::criterion(
                "fix",
                &format!("the applied change resolves the gap and changes no other behavior: {}", g.summary),
                true,
                checks,
            )],
            diff: match self.diff_text {
                Some(t) => t.to_string(),
                None => fix::diff_text(self.root, &p.base, &own_paths(self.cfg)).unwrap_or_default(),
            },
            proposer: self.inputs.proposer.clone().unwrap_or_default(),
        }
    }

    /// Routes the proof of the gap itself (R89: the proposal's approach is only compared with
    /// it), runs it, adds a request's Behavior Contract rules as obligations, and builds the
    /// outcome.
    fn prove(&self, p: &ProposedGap, rated: Rated) -> Result<Result<fix::VerifyOutcome, VerifyStop>, LedgerError> {
        let (g, inputs) = (p.gap, self.inputs);
        let Checked { change, radius: rerated, because, judged } = rated;
        let stages = vec![g.stage.clone()];
        let checks = routing::checks(self.cfg, &stages, inputs.command.as_deref());
        // the stage's own `[[command]]`s: a command given to verify adds to them, never replaces them
        let configured = routing::checks(self.cfg, &stages, None);
        let said_nothing =
            self.state.gap_evidence.get(&g.id).into_iter().flatten().filter_map(|id| self.state.evidence.get(id)).any(
                |e| e.approach == "structural" && e.radius.is_none() && e.reason == Some(ledger::Reason::NotShown),
            );
        let subject = routing::subject_of(g, !checks.is_empty(), said_nothing);
        // where the scratch runs write their output, and andon's own directories they never copy
        let (out, own) = (proof::output_dir(self.cfg, self.inputs), own_paths(self.cfg));
        let handoff = g.wire.as_ref().filter(|_| said_nothing && g.source == "UnprovenWire");
        // a phase contract routes each obligation itself (a choice applies to its ties)
        let chosen = if g.source == "PhaseContract" { None } else { inputs.chosen };
        let route = match routing::route_one(&subject, chosen) {
            Ok(r) => r,
            Err(m) => return Ok(Err(VerifyStop::Refused(m.to_string()))),
        };
        let routing = routing::routing_record(&route, Some(p.approach.as_str()));
        let target = self.target(p, &checks);
        // a request handed in for this gap: its declared files bound the change (R113)
        if !inputs.declared.is_empty() {
            let outside: Vec<String> =
                change.files.iter().map(|(_, p)| p.clone()).filter(|p| !inputs.declared.contains(p)).collect();
            if !outside.is_empty() {
                return Ok(Err(VerifyStop::Scope(outside)));
            }
        }
        let mut red_first = None;
        let (mut proof, label) = if g.source == "PhaseContract" {
            // ingest mode: the phase's exit criteria and Behavior Contract rules, each routed on its own
            let Some(ctx) = self.state.context.get(&g.stage) else {
                return Ok(Err(VerifyStop::Refused(format!("stage `{}` has no recorded contract", g.stage))));
            };
            let (root, cfg, idx) = (self.root, self.cfg, self.idx);
            let (proof, approaches, rung) =
                phase_contract(root, cfg, idx, g, ctx, target.clone(), &checks, inputs, &change)
                    .map_err(|e| LedgerError::Io(e.to_string()))?;
            (proof, Some((approaches, rung)))
        } else {
            let proof = match route.approach {
                None => routing::tie(&route),
                // a proof of a handoff no import carries writes a test, fixes nothing: no red first
                // the repository's own checks, never a command given to verify: nothing else
                // shows the handoff's test runs where the repository's tests run
                Some(_) if handoff.is_some() && configured.is_empty() => proof::Proof {
                    reason: Some(ledger::Reason::NotDiscriminating),
                    ..proof::Proof::unknown(
                        "a handoff is proven by the repository's own checks (a `[[command]]` of the stage), not by a command given to verify: declare the check that runs the handoff's test".into(),
                        "no check ran",
                    )
                },
                Some(a) if handoff.is_some() => self
                    .prove_handoff(a, p, handoff, &target, &configured, &change)
                    .map_err(|e| LedgerError::Io(e.to_string()))?,
                Some(a) if red::applies(a, &g.source) => {
                    let (mut proof, record) = self.red_first(a, p, &target, &checks, &change, judged.is_empty());
                    red_first = record;
                    if configured.is_empty() && inputs.command.is_some() {
                        self.given_command_runs_a_test(p, &checks, &change, &mut proof)
                            .map_err(|e| LedgerError::Io(e.to_string()))?;
                    }
                    proof
                }
                Some(a) => prove::run(a, self.root, self.cfg, self.idx, &target, inputs, &change.hash)
                    .map_err(|e| LedgerError::Io(e.to_string()))?,
            };
            (proof, None)
        };
        // a proof blocked by the environment, whatever route it took: the environment, or the fix?
        red::environment_or_fix(self.root, &p.base, &checks, &out, &change.hash, &own, &mut proof);
        self.with_rules(&mut proof, target, &checks, &change.hash)?;
        let (reason, capability) = (proof.reason, proof.capability.take());
        let mut ev = fix::evidence(
            g,
            route.approach.map_or("none", |a| a.id()),
            proof.verdict,
            proof.tier,
            proof.hold,
            proof.claim,
            proof.detail,
            proof.references,
            proof.artifact,
            &change.hash,
        );
        ev.red_first = red_first;
        ev.reason = ledger::spec_verdict(proof.verdict, reason.or(ev.reason)).1;
        if ev.reason == Some(ledger::Reason::UnprovableHere) {
            ev.capability = capability;
        }
        if !judged.is_empty() {
            // the evidence says what changed in how the gap is judged, and who let it
            ev.evidence =
                format!("{}; {} (a person authorized this diff: `andon authorize`)", ev.evidence, judged.reason());
            ev.references.extend(judged.tests.iter().cloned());
        }
        let phase = label.is_some();
        if let Some((approaches, rung)) = label {
            ev.approach = approaches;
            ev.rung = rung;
        } else if let Some(d) = &routing.disagreement {
            ev.evidence = format!("{}; {d}", ev.evidence);
        }
        Ok(Ok(fix::VerifyOutcome {
            gap: g.id.clone(),
            change,
            outside_write_set: Vec::new(),
            rerated,
            rerated_because: because,
            evidence: ev,
            // a phase contract routes each of its obligations; the evidence lists them
            routing: (!phase).then_some(routing),
        }))
    }

    /// The proof of a handoff no import carries: approach `a` run, shown only where a test the
    /// change writes exercises both ends of the `handoff` wire, that test probed unloadable in a scratch copy.
    fn prove_handoff(
        &self,
        a: Approach,
        p: &ProposedGap,
        handoff: Option<&Wire>,
        target: &proof::ProofTarget,
        checks: &[commands::CommandSpec],
        change: &fix::AppliedChange,
    ) -> Result<proof::Proof, Error> {
        let mut proof = prove::run(a, self.root, self.cfg, self.idx, target, self.inputs, &change.hash)?;
        let files: Vec<String> = change.files.iter().map(|(_, p)| p.clone()).collect();
        if let Some(wire) = handoff {
            let tests = prove::handoff_exercised(self.idx, &files, wire, &mut proof)?;
            let (out, own) = (proof::output_dir(self.cfg, self.inputs), own_paths(self.cfg));
            red::handoff_probe(self.root, &p.base, &change.files, &tests, checks, &out, &change.hash, &own, &mut proof);
        }
        Ok(proof)
    }

    /// Where the stage configures no check, a command given to verify speaks for the change only
    /// by running a test that imports the changed code: with those tests made unloadable, some
    /// check must fail. Otherwise the proof is unknown (not discriminating).
    fn given_command_runs_a_test(
        &self,
        p: &ProposedGap,
        checks: &[commands::CommandSpec],
        change: &fix::AppliedChange,
        proof: &mut proof::Proof,
    ) -> Result<(), Error> {
        if proof.verdict != ledger::Verdict::Proven {
            return Ok(());
        }
        let files: Vec<String> = change.files.iter().map(|(_, p)| p.clone()).collect();
        let tests = prove::tests_importing(self.idx, &files)?;
        if tests.is_empty() {
            proof.verdict = ledger::Verdict::Unknown;
            proof.reason = Some(ledger::Reason::NotDiscriminating);
            proof.claim = "a command given to verify proves a fix only by running a test that imports the changed code, and no test imports it: add one, or declare the stage's check as a `[[command]]`".into();
            return Ok(());
        }
        let (out, own) = (proof::output_dir(self.cfg, self.inputs), own_paths(self.cfg));
        red::handoff_probe(self.root, &p.base, &change.files, &tests, checks, &out, &change.hash, &own, proof);
        Ok(())
    }

    /// The proof by the stage's checks, red first ([`red`]): without the fix, in a scratch copy
    /// of the base tree with the fix's test files over it, then with it. Without checks (or a
    /// property tool) the approach says it cannot run, as it always does; without a base tree
    /// nothing shows the fix was needed: unknown.
    fn red_first(
        &self,
        a: Approach,
        p: &ProposedGap,
        target: &proof::ProofTarget,
        checks: &[commands::CommandSpec],
        change: &fix::AppliedChange,
        judged_as_proposed: bool,
    ) -> (proof::Proof, Option<ledger::RedFirst>) {
        let tools = crate::evidence::property::detect(self.root);
        if checks.is_empty() || (a == Approach::Property && tools.is_empty()) {
            let run = prove::run(a, self.root, self.cfg, self.idx, target, self.inputs, &change.hash);
            return (run.unwrap_or_else(|e| proof::Proof::unknown(e.to_string(), "the checks could not run")), None);
        }
        let (idx, root) = (self.idx, self.root);
        // a deleted file has no facts: its path tells
        let is_test = |path: &str| red::test_file(idx, path) || (!root.join(path).exists() && red::test_path(path));
        let scratch = match p.base.as_str() {
            "none" => Err(Error::NoHistory),
            base => red::base_tree(self.root, base, &change.files, &is_test, &own_paths(self.cfg)),
        };
        let scratch = match scratch {
            Ok(s) => s,
            Err(e) => {
                let claim = format!("the checks could not run without the fix, so nothing shows they need it: {e}");
                return (proof::Proof::unknown(claim, "unknown: red first could not run"), None);
            }
        };
        let out = proof::output_dir(self.cfg, self.inputs);
        // a failing command is red without the fix by definition, while the fix leaves how it is
        // judged (the command among it) as it was
        let failing = (p.gap.source == "FailingCommand" && judged_as_proposed)
            .then(|| format!("the loop saw it fail: {}", p.gap.summary));
        let ask = red::RedFirstRun {
            approach: a,
            changed: &change.files,
            red_by_definition: failing.as_deref(),
            root: self.root,
            base: &p.base,
            specs: checks,
            out: &out,
            tools: &tools,
            nonce: &change.hash,
        };
        let (mut proof, mut record) = red::prove(&ask, &scratch);
        // the proof must pin what the changed functions do: trivial bodies must fail the checks
        let out = proof::output_dir(self.cfg, self.inputs);
        let (pinned, not_here) = pin::pin(
            self.root,
            &scratch.tree(),
            &p.base,
            &change.files,
            checks,
            &out,
            &change.hash,
            &record,
            &mut proof,
        );
        (record.pinned, record.not_pinned_here) = (pinned, not_here);
        (proof, Some(record))
    }

    /// A request's Behavior Contract rules are obligations too: the andon rule over them and the
    /// gap's own proof decides, and each rule's verdict is listed.
    fn with_rules(
        &self,
        proof: &mut proof::Proof,
        target: proof::ProofTarget,
        checks: &[commands::CommandSpec],
        hash: &str,
    ) -> Result<(), LedgerError> {
        let inputs = self.inputs;
        if inputs.rules.is_empty() {
            return Ok(());
        }
        let subjects: Vec<request::RoutedObligation> = inputs
            .rules
            .iter()
            .map(|r| (r.id.clone(), r.rule.clone(), Some(r.clone()), request::rule_subject(r, !checks.is_empty())))
            .collect();
        let results = request::prove_all(self.root, self.cfg, self.idx, subjects, target, checks, inputs, hash)
            .map_err(|e| LedgerError::Io(e.to_string()))?;
        let (unmet, condition) = request::judge(&results, &[]);
        if let Some((v, _, hold)) = condition.map(|c| c.verdict()) {
            if proof.verdict == Verdict::Proven || v == Verdict::Refuted {
                proof.verdict = v;
                proof.hold |= hold;
            }
            proof.detail = format!("{}; {}", proof.detail, unmet.join("; "));
        }
        for r in &results {
            let v =
                serde_json::to_value(r.verdict).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            proof.references.push(format!("rule {}: {v}: {}", crate::text::short(&r.id), crate::text::short(&r.claim)));
        }
        Ok(())
    }
}

/// Proves the contract of a phase (ingest mode, R54–R57): every exit criterion and Behavior
/// Contract rule routed and run on its own; the andon rule over all of them is the verdict.
#[allow(clippy::too_many_arguments)]
fn phase_contract(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    g: &ledger::GapState,
    ctx: &ledger::StageContextState,
    target: proof::ProofTarget,
    checks: &[commands::CommandSpec],
    inputs: &proof::Inputs,
    change: &fix::AppliedChange,
) -> Result<(proof::Proof, String, Option<u8>), Error> {
    let hash = change.hash.as_str();
    use crate::evidence::route::{self, Object, Subject};
    use crate::ingest::{Priority, RuleConfidence};
    let has_checks = !checks.is_empty();
    let mut subjects: Vec<request::RoutedObligation> = Vec::new();
    for (i, text) in ctx.exit_criteria.iter().enumerate() {
        let mut s = Subject { has_checks, ..Subject::default() };
        for o in route::objects_in(text) {
            s = s.with(o.0, format!("the exit criterion: {}", o.1));
        }
        if s.objects.is_empty() {
            s = s.with(Object::Behavior, "the exit criterion is about what the code does");
        }
        subjects.push((format!("exit-{}", i + 1), text.clone(), None, s));
    }
    for o in &ctx.obligations {
        let rule = request::RequestRule {
            id: o.id.clone(),
            rule: o.rule.clone(),
            validation: o.validation.clone(),
            priority: Priority::parse(&o.priority).map_err(|e| Error::Obligation(e.to_string()))?,
            confidence: RuleConfidence::parse(&o.confidence).map_err(|e| Error::Obligation(e.to_string()))?,
        };
        let s = request::rule_subject(&rule, has_checks);
        subjects.push((o.id.clone(), o.rule.clone(), Some(rule), s));
    }
    let mut results = request::prove_all(root, cfg, idx, subjects, target, checks, inputs, hash)?;
    for r in results.iter_mut() {
        // a confirmed entry gate is an ordinary obligation (R57)
        if ctx.confirmed.contains(&r.id) {
            r.entry_gate = false;
        }
    }
    // condition 3 over the changed files, whatever the obligations showed
    let changed: Vec<String> = change.files.iter().map(|(_, p)| p.clone()).collect();
    let holds = fix::tier1_at(idx, &changed)?;
    let (unmet, condition) = request::judge(&results, &holds);
    let (verdict, tier, hold) = condition.map_or((Verdict::Proven, None, false), |c| c.verdict());
    let references = results
        .iter()
        .map(|r| {
            let how = match (&r.routing.approach, r.routing.rung) {
                (Some(a), Some(n)) => format!("{a}, rung {n}"),
                _ => format!("tie: {}", r.routing.candidates.join(" or ")),
            };
            let v =
                serde_json::to_value(r.verdict).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            format!("{} [{how}]: {v}: {}", crate::text::short(&r.id), crate::text::short(&r.claim))
        })
        .collect();
    let mut approaches: Vec<&str> = results.iter().filter_map(|r| r.routing.approach.as_deref()).collect();
    approaches.sort();
    approaches.dedup();
    let rung = results.iter().filter_map(|r| r.routing.rung).max();
    let proof = proof::Proof {
        verdict,
        tier,
        hold,
        claim: format!(
            "the {} obligation(s) of the contract of {} hold on the applied change",
            results.len(),
            g.wire.as_ref().map(|w| w.to_string()).unwrap_or_default()
        ),
        detail: if unmet.is_empty() { "every obligation is proven".into() } else { unmet.join("; ") },
        references,
        artifact: None,
        per_criterion: Vec::new(),
        // the worst obligation cannot run here: the contract is blocked by the environment
        reason: (condition == Some(Condition::BlockedByEnvironment)).then_some(ledger::Reason::UnprovableHere),
        capability: results
            .iter()
            .find_map(|r| r.capability.clone())
            .filter(|_| condition == Some(Condition::BlockedByEnvironment)),
    };
    Ok((proof, approaches.join("+"), rung))
}
