//! The loop and its ledger: `loop`, `preflight`, `propose`, `verify` (a gap's fix, a request,
//! an audit), a person's decisions, `ledger check` and `ledger repair`, each a typed result
//! serialized as its JSON document.
//!
//! `verify` holds `andon verify`'s asks and results; `ledger_check` holds `ledger check` and
//! `ledger repair`.

mod ledger_check;
mod verify;

pub use ledger_check::*;
use std::path::{Path, PathBuf};
pub use verify::*;

use serde_json::{Value, json};

use super::{Error, SCHEMA_VERSION, json_document, next};
use crate::andon_loop::packet::{self, Packet};
use crate::andon_loop::proposal::{self, Proposal};

use crate::andon_loop::{self, Session, StepOptions};
use crate::config::Config;
use crate::index::Index;
use crate::ledger::{self, LedgerError};
use crate::ops::Injection;

/// The suspected injections (R123) as JSON: `[{path, line, text}]` in their sorted order, plain
/// strings (JSON encoding escapes them).
pub fn injections_json(list: &[Injection]) -> Value {
    Value::Array(
        list.iter().map(|i| json!({ "path": i.path, "line": i.line, "text": i.text, "words": i.words })).collect(),
    )
}

/// A gap kind's name in reports: `bug`, `feature` or `wire`.
pub fn gap_kind_name(k: ledger::GapKind) -> &'static str {
    match k {
        ledger::GapKind::Bug => "bug",
        ledger::GapKind::Feature => "feature",
        ledger::GapKind::Wire => "wire",
    }
}

/// One step of `andon loop`, with the suspected injections of the index it ran on.
pub struct LoopStep {
    pub session: Session,
    /// Reported from the index the step ran on; they change nothing the step decided (R123).
    pub injections: Vec<Injection>,
    /// The proposer's packet of the gap the step picked, or why it could not be read.
    pub packet: Option<Result<Packet, Error>>,
}

/// In ingest mode an absent or invalid brief stops the loop before anything is indexed or
/// written (R52: never a scan); the step reads it again under its lock.
pub fn loop_preconditions(root: &Path, cfg: &Config) -> Result<(), Error> {
    if cfg.settings.gap_source.value == crate::config::GapSource::Ingest {
        andon_loop::ingest::load_brief(root, &cfg.settings.self_assess_output_dir.value)
            .map_err(|e| LedgerError::Refused(e.to_string()).to_string())?;
    }
    Ok(())
}

/// `andon loop`: one step on the fresh index `idx` (see [`andon_loop::step`]). The delta starts
/// after the ledger's last record at the end of the previous run, from that run's sidecar.
pub fn loop_step(root: &Path, cfg: &Config, idx: &Index, max_passes: u32, slow: bool) -> Result<LoopStep, Error> {
    let since = std::fs::read(cfg.settings.output_path(root).join("loop.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v["ledger_seq"].as_u64());
    let opts = StepOptions { now: super::now(), max_passes, slow, since };
    let session = andon_loop::step(root, cfg, idx, opts).map_err(Error::from)?;
    let packet = session.picked.as_ref().map(|(gap, _)| packet(root, cfg, gap));
    Ok(LoopStep { session, injections: crate::ops::suspected_injections(idx), packet })
}

/// `andon propose --packet GAP`: what the proposer of `gap` needs (R66), read from the ledger and
/// the repository's conventions; writes nothing, so it serves any gap of the ledger, whichever
/// one the loop picked.
pub fn packet(root: &Path, cfg: &Config, gap: &str) -> Result<Packet, Error> {
    let dir = ledger::dir_of(root, &cfg.settings);
    let Some((_, state, _)) = ledger::load(&dir).map_err(Error::from)? else {
        return Err("the loop has never run here: run `andon loop` first".into());
    };
    andon_loop::packet::packet(root, &cfg.settings, &state, gap).map_err(Error::from)
}

/// A gap of the ledger as JSON.
fn gap_json(g: &ledger::GapState) -> Value {
    json!({
        "id": g.id,
        "kind": gap_kind_name(g.kind),
        "status": g.status.name(),
        "stage": g.stage,
        "wire": g.wire.as_ref().map(|w| json!({ "producer": w.producer, "consumer": w.consumer })),
        "path": g.location.path,
        "line": g.location.line,
        "summary": g.summary,
        "source": g.source,
        "on_constraint": g.on_constraint,
        "blast_radius": g.blast_radius.map(|r| r.name()),
        "estimated_radius": g.estimated_radius.map(|r| r.name()),
        "resolved_by": g.resolved_by,
    })
}

impl Packet {
    fn document(&self) -> Value {
        let h = &self.house_rules;
        let rules = |list: &[packet::HouseRule]| -> Vec<Value> {
            list.iter().map(|r| json!({ "line": r.line, "text": r.text })).collect()
        };
        json!({
            "schema_version": SCHEMA_VERSION,
            "gap": gap_json(&self.gap),
            "stage": self.stage.as_ref().map(|s| json!({ "name": self.gap.stage, "root": s.root,
                "confidence": s.confidence, "source": s.source, "incoming": s.incoming, "outgoing": s.outgoing })),
            "wire": self.gap.wire.as_ref().map(|w| json!({ "producer": w.producer, "consumer": w.consumer })),
            "earlier_gaps": self.earlier_gaps.iter().map(gap_json).collect::<Vec<_>>(),
            "evidence": self.evidence,
            "house_rules": {
                "source": h.source,
                "summary": h.label(),
                "rules": rules(&h.rules),
                "skipped": h.skipped,
                "suspected_injections": rules(&h.suspected_injections),
            },
            "verdict": { "outcome": "packet", "detail": self.gap.id },
        })
    }
}

impl LoopStep {
    fn document(&self) -> Value {
        let (s, kind) = (&self.session, gap_kind_name);
        json!({
            "schema_version": SCHEMA_VERSION,
            "stream_changed": s.stream_changed,
            "stream": {
                "stages": s.stream.stages.iter().map(|x| json!({ "name": x.name, "root": x.root,
                    "confidence": x.confidence, "source": x.source })).collect::<Vec<_>>(),
                "wires": s.stream.wires.iter().map(|w| json!({ "producer": w.producer, "consumer": w.consumer,
                    "confidence": w.confidence })).collect::<Vec<_>>(),
                "order": s.stream.order,
            },
            "ledger": { "passes": s.passes, "cycles": s.cycles,
                "wires": s.wires.iter().map(|(w, st)| json!({ "producer": w.producer, "consumer": w.consumer, "status": st })).collect::<Vec<_>>() },
            "constraint": s.constraint.as_ref().map(|c| json!({ "producer": c.wire.producer, "consumer": c.wire.consumer, "rule": c.rule, "detail": c.detail })),
            "cursor": s.cursor,
            "gaps": s.found.iter().map(|c| json!({ "id": c.id, "kind": kind(c.kind), "stage": c.stage,
                "wire": c.wire.as_ref().map(|w| json!({ "producer": w.producer, "consumer": w.consumer })),
                "path": c.location.path, "line": c.location.line, "summary": c.summary, "source": c.source })).collect::<Vec<_>>(),
            "recorded": s.recorded,
            "notes": s.notes,
            "delta": s.delta,
            "ledger_seq": s.ledger_seq,
            "picked": s.picked.as_ref().map(|(g, rule)| json!({ "gap": g, "rule": rule })),
            "packet": match &self.packet {
                Some(Ok(p)) => p.document(),
                Some(Err(e)) => json!({ "error": e.to_string() }),
                None => Value::Null,
            },
            "suspected_injections": injections_json(&self.injections),
            "next": { "action": s.next.action.token(), "gap": s.next.gap, "detail": s.next.detail },
            "verdict": { "outcome": s.verdict().token() },
        })
    }
}

/// `andon status`: the board from the ledger (`None` when the loop never ran here), the ledger's
/// log file, and the suspected injections of the stored index.
pub struct Status {
    pub board: Option<crate::status::Board>,
    pub ledger: String,
    pub injections: crate::status::Injections,
}

/// `andon status`: read-only; the stored index as it is: status neither walks nor updates it
/// (R114).
pub fn status(root: &Path) -> Result<Status, Error> {
    if !root.exists() {
        return Err(Error::no_such_directory(root, ""));
    }
    let cfg = super::config(root)?;
    let dir = ledger::dir_of(root, &cfg.settings);
    let loaded = match ledger::load(&dir) {
        Ok(s) => s,
        Err(e) => return Err(Error::InvalidLedger { dir: Some(dir), message: e.to_string() }),
    };
    let board = loaded.as_ref().map(|(_, s, records)| crate::status::board(s, records, agenda_options(&cfg)));
    let injections = crate::status::Injections::of_stored_index(root);
    Ok(Status { board, ledger: log_shown(&dir), injections })
}

/// How the agenda reads the ledger under configuration `cfg`.
fn agenda_options(cfg: &Config) -> crate::status::Options {
    crate::status::Options {
        thrash: cfg.settings.thrash_threshold.value,
        ingest: cfg.settings.gap_source.value == crate::config::GapSource::Ingest,
    }
}

/// `suspected_injections` and the state of the index they come from.
fn injections_fields(inj: &crate::status::Injections) -> (Value, Value) {
    use crate::status::Injections;
    let (state, error, list) = match inj {
        Injections::Listed(l) => ("stored", None, &l[..]),
        Injections::NoIndex => ("missing", None, &[][..]),
        Injections::Unreadable(why) => ("unreadable", Some(why.as_str()), &[][..]),
    };
    (injections_json(list), json!({ "state": state, "error": error }))
}

impl Status {
    fn document(&self) -> Value {
        let (b, ledger) = (self.board.as_ref(), &self.ledger);
        let (suspected, index) = injections_fields(&self.injections);
        let Some(b) = b else {
            return json!({
                "schema_version": SCHEMA_VERSION, "ledger": ledger, "never_run": true,
                "suspected_injections": suspected, "index": index,
                "next": { "action": "loop", "gap": null, "detail": "run `andon loop`: the loop has never run here" },
                "verdict": { "outcome": "never-run" },
            });
        };
        json!({
            "schema_version": SCHEMA_VERSION,
            "ledger": ledger,
            "never_run": false,
            "holds": b.holds.iter().map(|h| json!({ "wire": { "producer": h.wire.producer, "consumer": h.wire.consumer },
                "evidence": h.evidence, "claim": h.claim, "references": h.references })).collect::<Vec<_>>(),
            "stages": b.stages.iter().map(|s| json!({ "name": s.name, "confidence": s.confidence, "source": s.source, "lane": s.lane,
                "wires": s.wires.iter().map(|w| json!({ "producer": w.wire.producer, "consumer": w.wire.consumer,
                    "status": w.status, "evidence": w.evidence, "reopened": w.reopened })).collect::<Vec<_>>(),
                "advisory": s.advisory, "open_entry_gates": s.open_gates })).collect::<Vec<_>>(),
            "counters": { "passes": b.passes, "cycles": b.cycles, "sub_cycles": b.sub_cycles },
            "constraint": b.constraint.as_ref().map(|c| json!({ "producer": c.wire.producer, "consumer": c.wire.consumer,
                "rule": c.rule, "detail": c.detail })),
            "gaps": { "by_status": b.gaps_by_status, "open_by_kind": b.open_by_kind, "open_by_blast_radius": b.open_by_radius },
            "approaches": b.approaches,
            "decisions": b.decisions.iter().map(|d| json!({ "seq": d.seq, "gap": d.gap, "action": d.action, "by": d.by, "reason": d.reason,
                "witness": d.witness.as_ref().map(|w| json!({ "user": w.user, "terminal": w.terminal })) })).collect::<Vec<_>>(),
            "pending_decisions": b.pending_decisions.iter().map(|d| json!({ "seq": d.seq, "gap": d.gap, "action": d.action, "by": d.by, "reason": d.reason, "why": d.why })).collect::<Vec<_>>(),
            "audits": b.audits.iter().map(|(e, t, s, d)| json!({ "evidence": e, "tool": t, "strength": s, "detail": d })).collect::<Vec<_>>(),
            "suspected_injections": suspected,
            "index": index,
            "vanished": b.vanished.iter().map(|g| json!({ "id": g.id, "kind": gap_kind_name(g.kind), "stage": g.stage,
                "path": g.location.path, "line": g.location.line, "summary": g.summary })).collect::<Vec<_>>(),
            "next": { "action": b.next.action.token(), "gap": b.next.gap, "detail": b.next.detail },
            "verdict": { "outcome": if b.holds.is_empty() { "shown" } else { "holding" }, "holds": b.holds.len() },
        })
    }
}

/// `andon preflight`: every check with its readiness level and fix.
pub struct Preflight {
    pub items: Vec<crate::preflight::PreflightItem>,
}

/// `andon preflight` on the repository at `root`, with the stream when the index could be built
/// and the executable search path `path_var` for the external tools.
pub fn preflight(root: &Path, cfg: &Config, idx: Option<&Index>, path_var: Option<&std::ffi::OsStr>) -> Preflight {
    let stream = idx.and_then(|i| crate::ops::stream_read_only(i).ok());
    let languages: Option<Vec<String>> =
        idx.map(|i| i.header.summary.files_by_lang.iter().map(|(l, _)| l.clone()).collect());
    Preflight { items: crate::preflight::run(root, cfg, stream.as_ref(), languages.as_deref(), path_var) }
}

impl Preflight {
    /// The lowest readiness of any check.
    pub fn worst(&self) -> crate::preflight::Readiness {
        self.items.iter().map(|i| i.level).max().unwrap_or(crate::preflight::Readiness::Ready)
    }

    fn document(&self) -> Value {
        json!({
            "schema_version": SCHEMA_VERSION,
            "checks": self.items.iter().map(|i| json!({ "capability": i.capability, "level": i.level.name(),
                "found": i.found, "fix": i.fix })).collect::<Vec<_>>(),
            "next": match self.items.iter().find(|i| i.level == crate::preflight::Readiness::NotReady) {
                Some(i) => next("fix-setup", None, &format!("{}: {}", i.capability, i.fix.clone().unwrap_or_default())),
                None => next("loop", None, "run `andon loop`"),
            },
            "verdict": { "outcome": self.worst().name() },
        })
    }
}

/// `andon propose`: the proposal written for the loop to record, or every problem with it.
pub enum Proposed {
    /// Nothing written; `gated` when a stage's entry gate nobody confirmed refused it, `picked`
    /// when the loop works on another gap.
    Refused {
        problems: Vec<String>,
        gated: bool,
        picked: Option<String>,
    },
    Written {
        proposal: Proposal,
        file: PathBuf,
        over_ceiling: bool,
    },
}

/// `andon propose`: checks a proposed fix (its fields, the gap's status, the stage's entry
/// gates) and writes it under `output_dir/proposals/` with the base commit; never the ledger.
pub fn propose(root: &Path, cfg: &Config, mut p: Proposal) -> Result<Proposed, Error> {
    let mut problems = proposal::validate(&p).err().unwrap_or_default();
    let own = andon_loop::own_paths(cfg);
    for f in p.write_set.iter().filter(|f| f.starts_with(".andon/") || own.iter().any(|o| f.starts_with(o.as_str()))) {
        problems.push(format!("write-set entry `{f}` is andon's own state: a fix never writes it"));
    }
    let gated = gap_problems(root, cfg, &p.gap, &mut problems);
    let picked = if problems.is_empty() { another_pick(root, cfg, &p.gap) } else { None };
    if let Some((id, why)) = &picked {
        problems.push(why.clone());
        return Ok(Proposed::Refused { problems, gated, picked: Some(id.clone()) });
    }
    if !problems.is_empty() {
        return Ok(Proposed::Refused { problems, gated, picked: None });
    }
    p.base_commit = andon_loop::proposal_base(root, cfg);
    p.judging = andon_loop::judged::fingerprint(root, cfg);
    let ns = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    p.written = Some(format!("{ns}-{}", std::process::id()));
    let file = proposal::artifact_path(&cfg.settings.output_path(root), &p.gap);
    std::fs::create_dir_all(file.parent().expect("proposals dir")).map_err(|e| Error::io(&file, "", e))?;
    crate::text::write_atomic(&file, &serde_json::to_vec_pretty(&p).expect("json"))
        .map_err(|e| Error::io(&file, "cannot write the proposal: ", e))?;
    let over_ceiling = p.blast_radius > cfg.settings.authorization_level.value;
    Ok(Proposed::Written { proposal: p, file, over_ceiling })
}

/// What stands against a proposal for `gap` in the ledger: no such gap, a gap that takes no
/// proposal, or a stage behind an entry gate nobody confirmed (R57). Returns whether a gate did.
fn gap_problems(root: &Path, cfg: &Config, gap: &str, problems: &mut Vec<String>) -> bool {
    let dir = ledger::dir_of(root, &cfg.settings);
    let state = match ledger::load(&dir) {
        Ok(Some((_, state, _))) => state,
        Ok(None) => {
            problems.push("the loop has never run here: run `andon loop` first".into());
            return false;
        }
        Err(e) => {
            problems.push(e.to_string());
            return false;
        }
    };
    let Some(g) = state.gaps.get(gap) else {
        problems.push(format!("no gap `{gap}` in the ledger; `andon loop` lists the open gaps"));
        return false;
    };
    if !g.status.takes_proposal() {
        problems.push(format!("gap `{gap}` is {}; it takes no proposal", g.status.name()));
        return false;
    }
    let Some(c) = state.context.get(&g.stage).filter(|c| !c.open_gates().is_empty()) else { return false };
    for o in c.open_gates() {
        problems.push(format!(
            "stage `{}` is behind entry gate `{}` ({}, {} confidence): a person confirms it first: `andon confirm {} --rule {} --by NAME --reason WHY`",
            g.stage, o.id, o.priority, o.confidence, g.stage, o.id
        ));
    }
    true
}

/// The gap the loop works on, when it is not `gap`, and why a proposal for `gap` is refused: the
/// ledger's agenda (what `andon loop` and `andon status` name) picked another, in progress or
/// next. A gap a person skipped or deferred is never the pick.
fn another_pick(root: &Path, cfg: &Config, gap: &str) -> Option<(String, String)> {
    let (_, state, records) = ledger::load(&ledger::dir_of(root, &cfg.settings)).ok()??;
    let agenda = crate::status::agenda(&state, &records, agenda_options(cfg));
    let (picked, _) = agenda.picked.filter(|(id, _)| id != gap)?;
    let why = format!(
        "the loop works on gap `{picked}` ({}): finish it first, as `andon loop` says, or a person skips or defers it (`andon skip {picked} --by WHO --reason WHY`); then the loop picks the next gap",
        agenda.next.action.token()
    );
    Some((picked, why))
}

impl Proposed {
    /// What happens next, in words.
    pub fn next_detail(&self) -> String {
        match self {
            Proposed::Refused { picked: Some(id), .. } => {
                format!("work on gap `{id}`, the loop's pick: `andon loop` says what is next for it")
            }
            Proposed::Refused { .. } => "fix the proposal and propose again".into(),
            Proposed::Written { proposal: p, over_ceiling: true, .. } => format!(
                "run `andon loop`: it records the proposal and halts, because {} exceeds the authorization ceiling",
                p.blast_radius.name()
            ),
            Proposed::Written { proposal: p, .. } => format!(
                "run `andon loop` to record it, apply the fix to {} yourself, then verify it",
                p.write_set.join(", ")
            ),
        }
    }

    fn document(&self) -> Value {
        match self {
            Proposed::Refused { problems, picked, .. } => {
                json!({ "schema_version": SCHEMA_VERSION, "problems": problems, "picked": picked,
                "next": { "action": "propose", "detail": self.next_detail() },
                "verdict": { "outcome": "refused" } })
            }
            Proposed::Written { proposal: p, file, over_ceiling } => json!({ "schema_version": SCHEMA_VERSION,
                "gap": p.gap, "artifact": file.to_string_lossy(),
                "blast_radius": p.blast_radius.name(), "over_ceiling": over_ceiling, "base_commit": p.base_commit,
                "next": next("loop", Some(&p.gap), &self.next_detail()),
                "verdict": { "outcome": "proposed" } }),
        }
    }
}

/// A person's decision, recorded (the message says what), refused with why (nothing written),
/// or refused because no person stood behind it (recorded as pending where the gap is known).
pub enum Decided {
    Recorded(String),
    Refused(String),
    Unwitnessed(String),
}

/// A person's decision on `gap` (authorize, defer, skip, override, confirm), recorded by the
/// loop's writer only with a person at a terminal who typed the gap id back ([`andon_loop::Presence`]).
pub fn decide(
    root: &Path,
    gap: &str,
    d: &andon_loop::Decision,
    presence: &andon_loop::Presence,
) -> Result<Decided, Error> {
    let cfg = super::config(root)?;
    let witness = match presence.witness(gap) {
        Ok(w) => w,
        Err(why) => {
            if let andon_loop::Presence::Absent(absent) = presence {
                andon_loop::record_pending(root, &cfg, gap, d, absent, super::now()).map_err(Error::from)?;
            }
            return Ok(Decided::Unwitnessed(why.to_string()));
        }
    };
    Ok(match andon_loop::record_decision(root, &cfg, gap, d, witness, super::now()) {
        Ok(recorded) => Decided::Recorded(recorded),
        Err(e) => Decided::Refused(e.to_string()),
    })
}

impl Decided {
    /// `recorded` or `refused`, and what was said.
    pub fn said(&self) -> (&'static str, &str) {
        match self {
            Decided::Recorded(t) => ("recorded", t),
            Decided::Refused(t) | Decided::Unwitnessed(t) => ("refused", t),
        }
    }

    fn document(&self) -> Value {
        let (outcome, text) = self.said();
        json!({ "schema_version": SCHEMA_VERSION, "message": text,
                "next": { "action": "loop", "detail": "run `andon loop`" },
                "verdict": { "outcome": outcome } })
    }
}

pub use crate::ledger::andon_rule::condition_of;

json_document!(LoopStep, Packet, Status, Preflight, Proposed, Decided);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Verdict;
    use crate::ledger::andon_rule::Condition;

    /// The two mappings between evidence and the andon rule's conditions agree: a proof that
    /// stands on a condition reads back as that condition.
    #[test]
    fn a_condition_and_the_evidence_it_makes_read_each_other_back() {
        let evidence = |(verdict, tier, hold): (Verdict, Option<u8>, bool)| ledger::Evidence {
            id: "E-1".into(),
            gap: None,
            wire: ledger::Wire { producer: "a".into(), consumer: "b".into() },
            approach: "structural".into(),
            verdict,
            hold,
            tier,
            artifact: None,
            claim: String::new(),
            evidence: String::new(),
            fix: None,
            references: Vec::new(),
            surface: None,
            crossing: Default::default(),
            radius: None,
            tree: None,
            rung: None,
            commit: None,
            red_first: None,
            reason: None,
            capability: None,
        };
        for c in [Condition::Tier1Hold, Condition::Tier2Hold, Condition::Refuted, Condition::Unproven] {
            assert_eq!(condition_of(&evidence(c.verdict())), Some(c), "{c:?}");
        }
        for c in
            [Condition::NeedsHuman, Condition::Authorization, Condition::EntryGate, Condition::BlockedByEnvironment]
        {
            assert_eq!(condition_of(&evidence(c.verdict())), Some(Condition::NeedsHuman), "{c:?}");
        }
        // an unknown verdict stands on its reason's condition
        let unknown = |reason| ledger::Evidence { reason, ..evidence((Verdict::Unknown, None, false)) };
        use ledger::Reason;
        for (r, c) in [
            (Reason::UnprovableHere, Condition::BlockedByEnvironment),
            (Reason::TimedOut, Condition::Unproven),
            (Reason::NotShown, Condition::Unproven),
            (Reason::Contested, Condition::Unproven),
            (Reason::NotDiscriminating, Condition::NeedsHuman),
            (Reason::NotPinning, Condition::NeedsHuman),
        ] {
            assert_eq!(condition_of(&unknown(Some(r))), Some(c), "{r:?}");
        }
        assert_eq!(condition_of(&evidence((Verdict::Proven, Some(1), false))), None);
        assert!(approach(Some("structurl")).is_err());
        assert_eq!(approach(None).unwrap(), None);
    }
}
