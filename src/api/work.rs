//! The loop and its ledger: `loop`, `preflight`, `propose`, `verify` (a gap's fix, a request,
//! an audit), a person's decisions, `ledger check` and `ledger repair`, each a typed result
//! serialized as its JSON document.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Error, SCHEMA_VERSION, json_document, next};
use crate::andon_loop::audit::AuditOutcome;
use crate::andon_loop::packet::{self, Packet};
use crate::andon_loop::proposal::{self, Proposal};
use crate::andon_loop::request::{RequestOutcome, Stop};
use crate::andon_loop::{self, Session, StepOptions, VerifyStop, fix};
use crate::config::Config;
use crate::index::Index;
use crate::ledger::andon_rule::Condition;
use crate::ledger::{self, LedgerError, Verdict};
use crate::ops::Injection;

/// The suspected injections (R123) as JSON: `[{path, line, text}]` in their sorted order, plain
/// strings (JSON encoding escapes them).
pub fn injections_json(list: &[Injection]) -> Value {
    Value::Array(list.iter().map(|i| json!({ "path": i.path, "line": i.line, "text": i.text })).collect())
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
            "decisions": b.decisions.iter().map(|d| json!({ "seq": d.seq, "gap": d.gap, "action": d.action, "by": d.by, "reason": d.reason })).collect::<Vec<_>>(),
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

/// A person's decision, recorded (the message says what), or refused with why (nothing written).
pub enum Decided {
    Recorded(String),
    Refused(String),
}

/// A person's decision on `gap` (authorize, defer, skip, override, confirm), recorded by the
/// loop's writer; refused under `unattended`.
pub fn decide(root: &Path, gap: &str, d: &andon_loop::Decision, unattended: bool) -> Result<Decided, Error> {
    if unattended {
        return Ok(Decided::Refused("human decisions are not taken under --unattended".into()));
    }
    let cfg = super::config(root)?;
    Ok(match andon_loop::record_decision(root, &cfg, gap, d, super::now()) {
        Ok(recorded) => Decided::Recorded(recorded),
        Err(e) => Decided::Refused(e.to_string()),
    })
}

impl Decided {
    /// `recorded` or `refused`, and what was said.
    pub fn said(&self) -> (&'static str, &str) {
        match self {
            Decided::Recorded(t) => ("recorded", t),
            Decided::Refused(t) => ("refused", t),
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

/// What `andon verify` is asked: the gap whose applied fix it proves (or a `{wire, contract,
/// fixDiff}` request), the fix as a unified diff instead of the working tree, and the inputs of
/// the approaches.
#[derive(Clone, Debug, Default)]
pub struct VerifyAsk {
    pub gap: Option<String>,
    /// The unified diff of the fix (`--diff`).
    pub diff: Option<String>,
    pub command: Option<String>,
    pub rubric: Option<PathBuf>,
    pub process: Option<PathBuf>,
    pub panel: Option<PathBuf>,
    pub proposer: Option<String>,
    /// The approach a person picked to settle a routing tie.
    pub approach: Option<String>,
}

/// The approach a person named to settle a routing tie, or an error listing the approaches.
pub fn approach(s: Option<&str>) -> Result<Option<crate::evidence::route::Approach>, Error> {
    use crate::evidence::route::Approach;
    s.map(|s| {
        Approach::parse(s)
            .ok_or_else(|| Error::Failed(format!("unknown approach `{s}` (one of: {})", Approach::ids().join(", "))))
    })
    .transpose()
}

/// What `andon verify` answered.
pub enum VerifyResult {
    Gap(Verified),
    Request(RequestVerified),
}

/// A request as `andon verify --request` reads it; a malformed one is refused before any work.
pub fn parse_request(text: &str) -> Result<crate::andon_loop::request::Request, RequestVerified> {
    crate::andon_loop::request::parse(text).map_err(|errs| RequestVerified {
        result: Err(Stop::Refused(format!("the request is malformed: {}", errs.join("; ")))),
    })
}

/// `andon verify --audit`: the proof-strength audit of a recorded evidence record.
pub fn audit(root: &Path, cfg: &Config, evidence: &str, path_var: Option<&std::ffi::OsStr>) -> Audited {
    Audited { result: andon_loop::audit::audited(root, cfg, evidence, path_var) }
}

/// `andon verify`: proves the applied fix of `ask.gap` on the fresh index `idx` (the working
/// tree against the proposal's base, or `ask.diff`), or, given `request`, the request's
/// obligations. A request that names a gap is that gap's fix, proven and persisted the loop's
/// way (R112), and its wire must be the gap's; a standalone request persists nothing.
pub fn verify(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    ask: &VerifyAsk,
    request: Option<crate::andon_loop::request::Request>,
) -> Result<VerifyResult, Error> {
    let chosen = approach(ask.approach.as_deref())?;
    let mut inputs = crate::andon_loop::prove::Inputs {
        command: ask.command.clone(),
        rubric: ask.rubric.clone(),
        process: ask.process.clone(),
        panel: ask.panel.clone(),
        proposer: ask.proposer.clone(),
        chosen,
        artifacts: None,
        rules: Vec::new(),
        declared: Vec::new(),
    };
    let mut diff = ask.diff.clone();
    match (request, &ask.gap) {
        (Some(req), Some(gap)) => {
            if let Some(m) = request_for_gap(root, cfg, &req, gap) {
                return Ok(VerifyResult::Request(RequestVerified { result: Err(Stop::Refused(m)) }));
            }
            diff = Some(req.diff.clone());
            inputs.rules = req.rules.clone();
            inputs.declared = req.files.clone();
        }
        (Some(req), None) => return Ok(VerifyResult::Request(standalone(root, cfg, idx, &req, inputs))),
        (None, _) => {}
    }
    let gap = ask.gap.clone().unwrap_or_default();
    let result = andon_loop::verify(root, cfg, idx, &gap, &inputs, diff.as_deref())?;
    let injections = changed_injections(idx, &result);
    Ok(VerifyResult::Gap(Verified { gap, result, injections }))
}

/// The suspected injections in the files a gap's fix changed (or wrote outside its write-set).
fn changed_injections(idx: &Index, result: &Result<fix::VerifyOutcome, VerifyStop>) -> Vec<Injection> {
    match result {
        Ok(o) => crate::ops::injections_in(idx, o.change.files.iter().map(|(_, p)| p.as_str())),
        Err(VerifyStop::Scope(files)) => crate::ops::injections_in(idx, files.iter().map(String::as_str)),
        Err(_) => Vec::new(),
    }
}

/// A request reached from the loop: its wire must be the gap's, and the gap routes it (no `kind`).
fn request_for_gap(root: &Path, cfg: &Config, req: &crate::andon_loop::request::Request, gap: &str) -> Option<String> {
    let dir = ledger::dir_of(root, &cfg.settings);
    let gap_wire = match ledger::load(&dir) {
        Ok(loaded) => loaded.and_then(|(_, state, _)| state.gaps.get(gap).and_then(|g| g.wire.clone())),
        Err(e) => return Some(e.to_string()),
    };
    let asked = match &req.wire {
        crate::andon_loop::request::WireRef::Stages { from, to } => {
            Some(ledger::Wire { producer: from.clone(), consumer: to.clone() })
        }
        crate::andon_loop::request::WireRef::Site { .. } => None,
    };
    if asked.is_some() && asked != gap_wire {
        return Some(format!(
            "the request's wire is not gap `{gap}`'s ({}): a request reached from the loop proves that gap's fix",
            gap_wire.map(|w| w.to_string()).unwrap_or_else(|| "no wire".into())
        ));
    }
    if !req.kinds.is_empty() {
        return Some("a request for a loop gap is routed by the gap; give `kind` only to a standalone request".into());
    }
    None
}

/// A standalone request: proven in a scratch directory; nothing of the run is kept in the
/// repository (R112).
fn standalone(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    req: &crate::andon_loop::request::Request,
    mut inputs: crate::andon_loop::prove::Inputs,
) -> RequestVerified {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let scratch = std::env::temp_dir().join(format!("andon-request-{}-{nanos:x}", std::process::id()));
    inputs.artifacts = Some(scratch.clone());
    let result = crate::andon_loop::request::verify(root, cfg, idx, req, &inputs);
    let _ = std::fs::remove_dir_all(&scratch);
    RequestVerified { result }
}

/// `andon verify --gap`: the proof of a gap's applied fix, or why verify stopped.
pub struct Verified {
    pub gap: String,
    pub result: Result<fix::VerifyOutcome, VerifyStop>,
    /// The suspected injections of the changed files (R123: listed, never obeyed).
    pub injections: Vec<Injection>,
}

impl Verified {
    /// The verdict token, never mistaken for cleared unless `proven`.
    pub fn token(&self) -> String {
        match &self.result {
            Ok(o) => condition_of(&o.evidence).map_or("proven", Condition::token).to_string(),
            Err(VerifyStop::Scope(_)) => "refused:scope".into(),
            Err(VerifyStop::Authorization(..) | VerifyStop::Judged(..)) => Condition::Authorization.token().into(),
            Err(VerifyStop::Refused(_)) => "refused".into(),
            Err(VerifyStop::Blocked(_)) => Condition::BlockedByEnvironment.token().into(),
        }
    }

    /// What the proof showed, or why verify stopped, and what to do next.
    pub fn detail_and_next(&self) -> (String, String) {
        let gap = &self.gap;
        match &self.result {
            Ok(o) => {
                let e = &o.evidence;
                let next = if e.verdict == Verdict::Proven {
                    "run `andon loop`: it records the evidence and advances".to_string()
                } else if e.hold {
                    format!(
                        "run `andon loop` to record the hold, change the code (only changed code clears a tier-1 hold), then `andon verify --gap {gap}` again"
                    )
                } else if let Some(cap) =
                    e.capability.as_ref().filter(|_| e.reason == Some(ledger::Reason::UnprovableHere))
                {
                    format!(
                        "the proof cannot run here: `{}` is not available. Run `andon loop` to record it (the gap becomes blocked-by-environment and is not retried until that changes); make `{}` available and verify again, or a person defers the gap",
                        cap.name, cap.name
                    )
                } else if e.verdict == Verdict::Unknown {
                    format!(
                        "give the approach what it asks for (above), then `andon verify --gap {gap}` again with it; or run `andon loop` and a person decides the gap (`andon defer` or `andon skip`)"
                    )
                } else {
                    format!(
                        "run `andon loop` to record the evidence, change the fix, then `andon verify --gap {gap}` again"
                    )
                };
                (e.claim.clone(), next)
            }
            Err(VerifyStop::Scope(files)) => (
                format!("the diff writes files the proposal did not declare: {}", files.join(", ")),
                "undo those changes, or propose again with them in the write-set".into(),
            ),
            Err(VerifyStop::Authorization(level, because)) => (
                format!("the applied diff rates {} ({because}), above the ceiling", level.name()),
                format!("a person raises the authority for this diff: `andon authorize {gap} --by WHO --reason ...`"),
            ),
            Err(VerifyStop::Judged(_, what)) => (
                format!("{what}; no proof rests on that without a person"),
                format!(
                    "undo that part of the change (the proof is defined as it was at the proposal's base), or a person decides: `andon authorize {gap} --by WHO --reason ...` binds it to this diff"
                ),
            ),
            Err(VerifyStop::Refused(m)) => (m.clone(), refused_next(gap)),
            Err(VerifyStop::Blocked(cap)) => (
                format!(
                    "gap `{gap}` is blocked by the environment: `{}` (needed by `{}`) resolves here as it did when its proof could not run; the proof is not run again",
                    cap.name, cap.command
                ),
                format!(
                    "make `{}` available (install it on PATH), or change the check that needs it, then `andon verify --gap {gap}`; or a person defers it: `andon defer {gap} --by WHO --reason WHY`",
                    cap.name
                ),
            ),
        }
    }

    fn document(&self) -> Value {
        let (token, gap) = (self.token(), &self.gap);
        let (detail, next) = self.detail_and_next();
        let mut v = json!({ "schema_version": SCHEMA_VERSION, "gap": gap, "detail": detail,
                            "next": { "action": if token == "proven" { "loop" } else { "fix" }, "gap": gap, "detail": next },
                            "verdict": { "outcome": token } });
        if let Ok(o) = &self.result {
            v["evidence"] = json!({ "approach": o.evidence.approach, "verdict": format!("{:?}", o.evidence.verdict).to_lowercase(),
                "rung": o.evidence.rung, "tier": o.evidence.tier, "hold": o.evidence.hold, "claim": o.evidence.claim, "evidence": o.evidence.evidence,
                "references": o.evidence.references, "artifact": o.evidence.artifact,
                "red_first": o.evidence.red_first, "reason": o.evidence.reason, "capability": o.evidence.capability });
            v["diff"] = json!({ "base": o.change.base, "files": o.change.files, "hash": o.change.hash,
                "rerated": o.rerated.name(), "because": o.rerated_because });
            v["routing"] = serde_json::to_value(&o.routing).expect("json");
        }
        if let Err(VerifyStop::Scope(files)) = &self.result {
            v["outside_write_set"] = json!(files);
        }
        v["suspected_injections"] = injections_json(&self.injections);
        v
    }
}

/// The next step after `andon verify --gap` refused: nothing was proven or recorded.
fn refused_next(gap: &str) -> String {
    format!(
        "nothing was verified: do what the refusal says (`andon loop` names the next step for `{gap}`), then run `andon verify --gap {gap}` again"
    )
}

/// `andon verify --request`: the verdict a caller cannot mistake for cleared (R111).
pub struct RequestVerified {
    pub result: Result<RequestOutcome, Stop>,
}

impl RequestVerified {
    /// The verdict token and its detail.
    pub fn token_and_detail(&self) -> (String, String) {
        match &self.result {
            Ok(o) => match o.condition {
                None => ("proven".to_string(), format!("every obligation ({}) is proven", o.obligations.len())),
                Some(c) => (c.token().to_string(), o.unmet.first().cloned().unwrap_or_default()),
            },
            Err(Stop::Scope(files, why)) => ("refused:scope".into(), format!("{why}: {}", files.join(", "))),
            Err(Stop::Refused(m)) => ("refused".into(), m.clone()),
        }
    }

    fn document(&self) -> Value {
        let (token, detail) = self.token_and_detail();
        let cleared = token == "proven";
        let mut v = json!({ "schema_version": SCHEMA_VERSION, "persisted": false, "cleared": cleared,
                            "verdict": { "outcome": token, "proven": cleared, "detail": detail } });
        match &self.result {
            Ok(o) => {
                v["wire"] = serde_json::to_value(&o.wire).expect("json");
                v["obligations"] = serde_json::to_value(&o.obligations).expect("json");
                v["holds"] = json!(o.holds);
                v["unmet"] = json!(o.unmet);
                v["suspected_injections"] = injections_json(&o.injections);
                v["diff"] = json!({ "files": o.change.files, "hash": o.change.hash,
                    "rerated": o.rerated.name(), "because": o.rerated_because });
            }
            Err(Stop::Scope(files, _)) => v["outside_scope"] = json!(files),
            Err(Stop::Refused(_)) => {}
        }
        v
    }
}

/// `andon verify --audit`: the strength of an audited proof, or why it was refused.
pub struct Audited {
    pub result: Result<AuditOutcome, andon_loop::Error>,
}

impl Audited {
    /// The verdict token: `audit:<strength>` or `refused`.
    pub fn token(&self) -> String {
        match &self.result {
            Ok(o) => format!("audit:{}", o.strength),
            Err(_) => "refused".to_string(),
        }
    }

    fn document(&self) -> Value {
        let mut v = json!({ "schema_version": SCHEMA_VERSION, "verdict": { "outcome": self.token() } });
        match &self.result {
            Ok(o) => v["audit"] = serde_json::to_value(o).expect("json"),
            Err(e) => v["verdict"]["detail"] = json!(e.to_string()),
        }
        v
    }
}

/// `andon ledger check` or `andon ledger repair`: the ledger's log file, `/`-separated.
fn log_shown(dir: &Path) -> String {
    dir.join(ledger::LOG_FILE).to_string_lossy().replace('\\', "/")
}

/// Each problem of the ledger in `dir`: where (`ledger.jsonl:LINE`, or `ledger.md`) and what.
fn issue_rows(dir: &Path, issues: &[ledger::Issue]) -> Vec<(String, String)> {
    let (log, human) = (log_shown(dir), dir.join(ledger::HUMAN_FILE).to_string_lossy().replace('\\', "/"));
    issues
        .iter()
        .map(|x| (if x.line == 0 { human.clone() } else { format!("{log}:{}", x.line) }, x.message.clone()))
        .collect()
}

/// `andon ledger check`: every problem with its line, or the state's counts; `None` when there
/// is no ledger.
pub struct LedgerCheck {
    pub dir: PathBuf,
    pub result: Option<(Vec<ledger::Issue>, Option<ledger::State>)>,
    /// The log is valid and only `ledger.md` lags behind it (or is missing).
    pub stale: bool,
}

/// `andon ledger check` on the repository at `root`.
pub fn ledger_check(root: &Path) -> Result<LedgerCheck, Error> {
    if !root.exists() {
        return Err(Error::no_such_directory(root, ""));
    }
    let cfg = super::config(root)?;
    let dir = ledger::dir_of(root, &cfg.settings);
    if !dir.join(ledger::LOG_FILE).exists() {
        return Ok(LedgerCheck { dir, result: None, stale: false });
    }
    let found = ledger::inspect(&dir).map_err(Error::Ledger)?;
    let stale = found.stale();
    Ok(LedgerCheck { dir, result: Some((found.issues, found.state)), stale })
}

impl LedgerCheck {
    /// `absent`, `valid`, `stale` (the log is valid, its view lags) or `invalid`.
    pub fn outcome(&self) -> &'static str {
        match &self.result {
            None => "absent",
            Some((issues, _)) if issues.is_empty() => "valid",
            Some(_) if self.stale => "stale",
            Some(_) => "invalid",
        }
    }

    /// Each problem: where (`ledger.jsonl:LINE`, or `ledger.md`) and what.
    pub fn issues(&self) -> Vec<(String, String)> {
        self.result.as_ref().map(|(i, _)| issue_rows(&self.dir, i)).unwrap_or_default()
    }

    fn document(&self) -> Value {
        let issues = self.issues();
        let state = self.result.as_ref().and_then(|(_, s)| s.as_ref());
        json!({
            "schema_version": SCHEMA_VERSION,
            "ledger": log_shown(&self.dir),
            "issues": issues.iter().map(|(at, m)| json!({ "at": at, "message": m })).collect::<Vec<_>>(),
            "state": state.map(|s| json!({ "stages": s.stages.len(), "gaps": s.gaps.len(),
                "evidence": s.evidence.len(), "wires": s.wires.len(), "passes": s.passes, "cycles": s.cycles })),
            "next": match self.outcome() {
                "invalid" => next("repair-ledger", None,
                    "an interrupted last write: `andon ledger repair`; any other problem: restore the ledger from a copy or version control"),
                "stale" => next("repair-ledger", None,
                    "`andon ledger repair`, or the next `andon loop`, renders ledger.md again from the log"),
                _ => next("loop", None, "run `andon loop`"),
            },
            "verdict": { "outcome": self.outcome(), "issues": issues.len() },
        })
    }
}

/// `andon ledger repair`: what was repaired, or why nothing was.
pub struct LedgerRepair {
    pub dir: PathBuf,
    pub result: Result<ledger::Repaired, LedgerError>,
    /// There is no ledger (the loop never ran, or was stopped creating it).
    pub absent: bool,
    /// When the repair was refused: every problem of the ledger, as `andon ledger check` lists them.
    pub issues: Vec<(String, String)>,
}

/// `andon ledger repair` on the repository at `root`.
pub fn ledger_repair(root: &Path) -> Result<LedgerRepair, Error> {
    let cfg = super::config(root)?;
    let dir = ledger::dir_of(root, &cfg.settings);
    let absent = !dir.join(ledger::LOG_FILE).exists();
    let result = ledger::repair(&dir, super::now());
    let issues = match &result {
        Err(_) => ledger::check(&dir).map(|(i, _)| issue_rows(&dir, &i)).unwrap_or_default(),
        Ok(_) => Vec::new(),
    };
    Ok(LedgerRepair { dir, result, absent, issues })
}

/// A path as reports show it, `/`-separated.
fn shown(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// What was done to `ledger.md`, in words.
fn view_repaired(v: &ledger::View) -> String {
    match v {
        ledger::View::Behind { shown, total } => {
            format!("{} was behind the log, showing {shown} of its {total} records: rendered again", ledger::HUMAN_FILE)
        }
        _ => format!("{} was missing: rendered from the log", ledger::HUMAN_FILE),
    }
}

impl LedgerRepair {
    /// `repaired`, `unchanged` or `refused`, and what happened.
    pub fn outcome(&self) -> (&'static str, String) {
        let log = log_shown(&self.dir);
        let r = match &self.result {
            Ok(r) => r,
            Err(e) => return ("refused", e.to_string()),
        };
        let mut done = Vec::new();
        if let Some(a) = &r.set_aside {
            done.push(format!(
                "lines {}-{} of {log} were an interrupted write; they are kept in {}",
                a.lines.0,
                a.lines.1,
                shown(&a.kept_in)
            ));
        }
        done.extend(r.view.as_ref().map(view_repaired));
        if !r.removed.is_empty() {
            done.push(format!("{} temporary file(s) of stopped writers removed", r.removed.len()));
        }
        match (done.is_empty(), self.absent) {
            (true, true) => return ("unchanged", format!("no ledger at {log}: nothing to repair")),
            (true, false) => {
                return (
                    "unchanged",
                    format!("{log} has no interrupted write and {} agrees with it", ledger::HUMAN_FILE),
                );
            }
            _ => {}
        }
        ("repaired", done.join("; "))
    }

    fn document(&self) -> Value {
        let (outcome, detail) = self.outcome();
        let r = self.result.as_ref().ok();
        json!({
            "schema_version": SCHEMA_VERSION,
            "ledger": log_shown(&self.dir),
            "set_aside": r.and_then(|r| r.set_aside.as_ref()).map(|a| json!({ "first_line": a.lines.0,
                "last_line": a.lines.1, "kept_in": shown(&a.kept_in) })),
            "view": r.and_then(|r| r.view.as_ref()).map(view_repaired),
            "removed": r.map(|r| r.removed.iter().map(|p| shown(p)).collect::<Vec<_>>()).unwrap_or_default(),
            "issues": self.issues.iter().map(|(at, m)| json!({ "at": at, "message": m })).collect::<Vec<_>>(),
            "next": if outcome == "refused" {
                next("restore-ledger", None, "restore the ledger from a copy or version control; `andon ledger check` lists each problem")
            } else {
                next("loop", None, "run `andon loop`")
            },
            "verdict": { "outcome": outcome, "detail": detail },
        })
    }
}

json_document!(
    LoopStep,
    Packet,
    Status,
    Preflight,
    Proposed,
    Decided,
    Verified,
    RequestVerified,
    Audited,
    LedgerCheck,
    LedgerRepair
);

#[cfg(test)]
mod tests {
    use super::*;

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
        ] {
            assert_eq!(condition_of(&unknown(Some(r))), Some(c), "{r:?}");
        }
        assert_eq!(condition_of(&evidence((Verdict::Proven, Some(1), false))), None);
        assert!(approach(Some("structurl")).is_err());
        assert_eq!(approach(None).unwrap(), None);
    }
}
