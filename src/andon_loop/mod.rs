//! The loop's step (design §7; R27, R35–R37, R48–R50, R61–R65, R117): detect or resume the
//! stream, scan the cursor's stage and its outgoing wire for gaps, record the new ones, pick one by
//! priority and name the rule that decided, and say what is needed next. The ledger is written only
//! here (stage records, opened gaps), through the one writer.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{BlastRadius, Config};
use crate::datalog::{self, Store};
use crate::facts::rel;
use crate::index::Index;
use crate::ledger::{self, Event, GapKind, GapStatus, Header, LedgerError, Location, State, Verdict, Wire, WireStatus};
use crate::ops::StreamReport;

pub mod audit;
pub mod commands;
pub mod diff;
pub mod fix;
pub mod ingest;
pub mod proposal;
pub mod prove;
pub mod request;
pub mod surface;

/// A gap the scan found, before it is recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub id: String,
    pub kind: GapKind,
    pub stage: String,
    pub wire: Option<Wire>,
    pub location: Location,
    pub summary: String,
    /// The fact that produced it (`BrokenImport`, `StageMarker`, ...).
    pub source: &'static str,
}

/// What the person or agent driving the loop does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Next {
    /// `propose`, `apply-and-verify`, `decide`, `fix-the-code`, `none`.
    pub action: &'static str,
    pub gap: Option<String>,
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// The stream was recorded for the first time, or its topology changed.
    pub stream_changed: bool,
    pub stream: StreamReport,
    pub cursor: Option<String>,
    /// Gaps the scan found in the cursor's stage and outgoing wire (new and already recorded).
    pub found: Vec<Candidate>,
    /// Of those, how many were new to the ledger.
    pub recorded: usize,
    pub picked: Option<(String, String)>,
    pub next: Next,
    pub passes: u32,
    pub cycles: u32,
    pub wires: Vec<(Wire, &'static str)>,
    pub constraint: Option<crate::status::Constraint>,
    /// What this step recorded or refused besides gaps (proposals, halts).
    pub notes: Vec<String>,
    /// The ledger's changes since the previous loop run (events by kind, wire status changes).
    pub delta: Vec<String>,
    /// The last record of the ledger after this step.
    pub ledger_seq: u64,
    /// The condition the picked gap is halted on, if it is (its verdict token and exit code).
    pub halt: Option<ledger::andon_rule::Condition>,
}

fn short_hash(parts: &[&str]) -> String {
    format!("{:08x}", xxhash_rust::xxh3::xxh3_64(parts.join("\0").as_bytes()) as u32)
}

fn kind_letter(k: GapKind) -> &'static str {
    match k {
        GapKind::Bug => "B",
        GapKind::Feature => "F",
        GapKind::Wire => "W",
    }
}

/// The gaps of `stage` and of its outgoing wires (`stage` is their producer), from the derived
/// relations; wires without proof in the ledger are gaps too.
pub fn scan(store: &Store, stream: &StreamReport, state: &State, stage: &str) -> Vec<Candidate> {
    let s = |v: u32| store.syms.str(v).to_string();
    let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
    let mut out: Vec<Candidate> = Vec::new();
    let mut push = |kind: GapKind,
                    stage: &str,
                    wire: Option<Wire>,
                    path: String,
                    line: Option<u32>,
                    summary: String,
                    source: &'static str| {
        let id = format!(
            "{}-{}",
            kind_letter(kind),
            short_hash(&[source, stage, &path, &line.map(|l| l.to_string()).unwrap_or_default(), &summary])
        );
        out.push(Candidate {
            id,
            kind,
            stage: stage.to_string(),
            wire,
            location: Location { path, line },
            summary,
            source,
        });
    };
    for r in rows(rel::BROKEN_IMPORT) {
        if store.syms.str(r[3]) == stage {
            let consumer = rows(rel::IN_STAGE).find(|x| x[0] == r[0]).map(|x| s(x[1])).unwrap_or_default();
            push(
                GapKind::Wire,
                stage,
                Some(Wire { producer: stage.into(), consumer }),
                s(r[0]),
                Some(r[1]),
                format!("`{}` is imported from stage `{stage}` but not defined or exported there", s(r[2])),
                "BrokenImport",
            );
        }
    }
    for r in rows(rel::STUB_HANDOFF) {
        if store.syms.str(r[0]) == stage {
            push(
                GapKind::Wire,
                stage,
                Some(Wire { producer: stage.into(), consumer: s(r[1]) }),
                s(r[3]),
                Some(r[4]),
                format!("`{}` crosses to `{}` but its body is a stub ({})", s(r[2]), s(r[1]), s(r[5])),
                "StubHandoff",
            );
        }
    }
    for r in rows(rel::STAGE_MARKER) {
        if store.syms.str(r[0]) == stage {
            let kind = if s(r[3]) == "FIXME" { GapKind::Bug } else { GapKind::Feature };
            push(kind, stage, None, s(r[1]), Some(r[2]), format!("{} marker", s(r[3])), "StageMarker");
        }
    }
    let mut undeclared: BTreeMap<String, (String, u32)> = BTreeMap::new();
    for r in rows(rel::UNDECLARED_IMPORT) {
        if store.syms.str(r[0]) == stage {
            let site = (s(r[2]), r[3]);
            let e = undeclared.entry(s(r[1])).or_insert(site.clone());
            if site < *e {
                *e = site;
            }
        }
    }
    for (pkg, (path, line)) in undeclared {
        push(
            GapKind::Bug,
            stage,
            None,
            path,
            Some(line),
            format!("`{pkg}` is imported but the manifest does not declare it"),
            "UndeclaredImport",
        );
    }
    for r in rows(rel::UNUSED_DEPENDENCY_AT) {
        if store.syms.str(r[0]) == stage {
            let (dep, kind) = (s(r[1]), s(r[2]));
            push(
                GapKind::Bug,
                stage,
                None,
                s(r[3]),
                None,
                format!("`{dep}` is declared ({kind}) but no code of the stage imports it"),
                "UnusedDependency",
            );
        }
    }
    // Missing tests (R49): no test file or test reaches the stage; the gap sits at its first file.
    if let Some(first) = rows(rel::UNTESTED_STAGE).filter(|r| store.syms.str(r[0]) == stage).map(|r| s(r[1])).min() {
        push(
            GapKind::Feature,
            stage,
            None,
            first,
            None,
            format!("stage `{stage}` has no tests: no test file or test reaches it"),
            "MissingTests",
        );
    }
    // Outgoing wires without a proof (R49: no evidence, or refuted/unknown).
    for w in stream.wires.iter().filter(|w| w.producer == stage) {
        let wire = Wire { producer: w.producer.clone(), consumer: w.consumer.clone() };
        if state.wires.get(&wire).is_some_and(|ws| ws.status == WireStatus::Proven) {
            continue;
        }
        let site = rows(rel::WIRE_IMPORT)
            .filter(|x| store.syms.str(x[0]) == stage && store.syms.str(x[1]) == w.consumer)
            .map(|x| (s(x[2]), x[3]))
            .min();
        let (path, line) = site.map(|(p, l)| (p, Some(l))).unwrap_or_else(|| (w.consumer.clone(), None));
        push(
            GapKind::Wire,
            stage,
            Some(wire.clone()),
            path,
            line,
            format!("the handoff {wire} has no proof"),
            "UnprovenWire",
        );
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out.dedup_by(|a, b| a.id == b.id);
    out
}

/// A hash of every indexed file's path and content: configured commands re-run when it changes.
fn tree_fingerprint(idx: &Index) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for f in &idx.files {
        h.update(f.path.as_bytes());
        h.update(&f.hash.to_le_bytes());
    }
    format!("{:016x}", h.digest())
}

/// A hash of a command's own settings, so changing them re-runs it.
fn command_key(spec: &commands::CommandSpec) -> u64 {
    xxhash_rust::xxh3::xxh3_64(format!("{}\0{}\0{:?}", spec.run, spec.timeout_secs, spec.stages).as_bytes())
}

/// The gap id of configured command `name`: one gap per command, wherever the scan first meets it.
fn command_id(name: &str) -> String {
    format!("B-{}", short_hash(&["FailingCommand", name]))
}

/// The gap of a configured command that does not pass, located at its `[[command]]` entry.
fn command_gap(cfg: &Config, root: &Path, stage: &str, r: &commands::Run) -> Candidate {
    let config = cfg
        .source
        .as_ref()
        .map(|p| p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|| "andon.toml".into());
    let how = match (r.exit, r.timed_out, &r.error) {
        (_, true, _) => "times out".to_string(),
        (Some(code), _, _) => format!("exits {code}"),
        (None, _, Some(e)) => format!("does not run ({e})"),
        (None, _, None) => "does not finish".to_string(),
    };
    let id = command_id(&r.name);
    Candidate {
        id,
        kind: GapKind::Bug,
        stage: stage.to_string(),
        wire: None,
        location: Location { path: config, line: Some(r.line) },
        summary: format!("command `{}` ({} lane) {how}; its output is in {}", r.name, r.lane.name(), r.artifact),
        source: "FailingCommand",
    }
}

/// At a cycle's close (R64, R65): the wire that limited it most — reopened most often, then
/// slowest to prove (most proof attempts) — and the next cycle's intent: `harden` when a wire
/// reopened, `split` when slow-lane commands have not passed on this tree, else `feature`.
fn cycle_report(
    state: &State,
    records: &[ledger::Record],
    slow_pending: &[String],
) -> (Option<String>, ledger::Intent) {
    let since = records.iter().rev().find(|r| matches!(r.event, Event::CycleConverged { .. })).map_or(0, |r| r.seq);
    let mut load: BTreeMap<&Wire, (usize, usize)> = BTreeMap::new();
    for (w, ws) in &state.wires {
        load.entry(w).or_default().0 = ws.reopened.iter().filter(|s| **s > since).count();
    }
    for r in records.iter().filter(|r| r.seq > since) {
        if let Event::EvidenceRecorded { evidence } = &r.event
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
        format!("{w} (reopened {reopens} time(s), {attempts} proof attempt(s) this cycle)")
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

/// A gap is on the constraint when it is about the constraint's wire or lies in its producer stage.
fn on_constraint(constraint: Option<&crate::status::Constraint>, c: &Candidate) -> bool {
    constraint.is_some_and(|k| Some(&k.wire) == c.wire.as_ref() || k.wire.producer == c.stage)
}

/// The estimated blast radius of fixing a gap, from where it is (design §7 decision 5).
pub fn estimated_radius(c: &Candidate) -> BlastRadius {
    let p = c.location.path.as_str();
    let name = p.rsplit('/').next().unwrap_or(p);
    if p.starts_with(".github/") || p.starts_with(".gitlab") || name == ".gitlab-ci.yml" || p.starts_with(".ci/") {
        BlastRadius::SharedStateVisible
    } else if matches!(name, "Cargo.toml" | "pyproject.toml" | "package.json" | "setup.py" | "setup.cfg")
        || c.kind == GapKind::Wire && c.source == "UnprovenWire"
    {
        BlastRadius::HardToReverse
    } else {
        BlastRadius::LocalReversible
    }
}

/// The pick order (R61–R65): on the constraint, then wire before bug before feature, then the
/// smallest estimated blast radius, then the id. Returns the pick and the rule that decided.
pub fn pick<'c>(open: &[&'c Candidate], on_constraint: &dyn Fn(&Candidate) -> bool) -> Option<(&'c Candidate, String)> {
    let kind_rank = |k: GapKind| match k {
        GapKind::Wire => 0,
        GapKind::Bug => 1,
        GapKind::Feature => 2,
    };
    let key = |c: &Candidate| (!on_constraint(c), kind_rank(c.kind), estimated_radius(c), c.id.clone());
    let mut v: Vec<&Candidate> = open.to_vec();
    v.sort_by_key(|c| key(c));
    let first = *v.first()?;
    let rule = match v.get(1) {
        None => "the only open gap".to_string(),
        Some(second) => {
            let (a, b) = (key(first), key(second));
            if a.0 != b.0 {
                "rule 1: it is on the constraint".into()
            } else if a.1 != b.1 {
                format!("rule 2: a {:?} gap comes before a {:?} gap", first.kind, second.kind).to_lowercase()
            } else if a.2 != b.2 {
                format!("rule 3: smallest estimated blast radius ({})", a.2.name())
            } else {
                "rule 4: stable tie-break by id".into()
            }
        }
    };
    Some((first, rule))
}

/// The stream's stages as ledger records.
fn stage_events(stream: &StreamReport) -> Vec<Event> {
    stream
        .stages
        .iter()
        .map(|s| Event::StageRecorded {
            stage: s.name.clone(),
            root: s.root.clone(),
            confidence: s.confidence.clone(),
            source: s.source.clone(),
            incoming: stream.wires.iter().filter(|w| w.consumer == s.name).map(|w| w.producer.clone()).collect(),
            outgoing: stream.wires.iter().filter(|w| w.producer == s.name).map(|w| w.consumer.clone()).collect(),
        })
        .collect()
}

/// The relations the scan reads.
const GOALS: &[crate::facts::RelId] = &[
    rel::BROKEN_IMPORT,
    rel::STUB_HANDOFF,
    rel::STAGE_MARKER,
    rel::UNDECLARED_IMPORT,
    rel::UNUSED_DEPENDENCY_AT,
    rel::UNTESTED_STAGE,
    rel::WIRE_IMPORT,
    rel::IN_STAGE,
];

/// One step of the loop on the repository at `root`.
/// The ledger's records after `since`, summarized: how many events of each kind, and every wire
/// status change.
fn delta(records: &[ledger::Record], since: u64) -> Vec<String> {
    let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.seq > since) {
        let k = match &r.event {
            Event::StageRecorded { .. } => "stage recorded",
            Event::GapOpened { .. } => "gap opened",
            Event::ProposalRecorded { .. } => "proposal recorded",
            Event::Halted { .. } => "halt",
            Event::AuthorizationRaised { .. } => "authority raised",
            Event::Overridden { .. } => "override",
            Event::GapDeferred { .. } => "gap deferred",
            Event::GapSkipped { .. } => "gap skipped",
            Event::StageContext { .. } => "stage context",
            Event::GateConfirmed { .. } => "entry gate confirmed",
            Event::EvidenceRecorded { .. } => "evidence recorded",
            Event::EvidenceAudited { .. } => "evidence audited",
            Event::WireStatusChanged { wire, status, .. } => {
                let st = match status {
                    WireStatus::Proven => "proven",
                    WireStatus::BrokenOrUnproven => "broken/unproven",
                    WireStatus::Unknown => "unknown",
                };
                out.push(format!("wire {wire}: {st} (event {})", r.seq));
                "wire status changed"
            }
            Event::GapClosed { .. } => "gap closed",
            Event::SubCycle { .. } => "sub-cycle",
            Event::PassClosed { .. } => "pass closed",
            Event::CycleConverged { .. } => "cycle converged",
        };
        *kinds.entry(k).or_default() += 1;
    }
    let mut lines: Vec<String> = kinds.into_iter().map(|(k, n)| format!("{n} × {k}")).collect();
    lines.extend(out);
    lines
}

pub fn step(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    now: u64,
    max_passes: u32,
    slow: bool,
    since: Option<u64>,
) -> Result<Session, LedgerError> {
    let dir = ledger::dir_of(root, &cfg.settings);
    // One step at a time per ledger: a second `andon loop` waits for the first to finish, so
    // two runs never record the same stage or gap twice.
    std::fs::create_dir_all(&dir).map_err(|e| LedgerError::Io(format!("{}: {e}", dir.display())))?;
    let lock_path = dir.join("step.lock");
    let step_lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| LedgerError::Io(format!("{}: {e}", lock_path.display())))?;
    fs4::fs_std::FileExt::lock_exclusive(&step_lock)
        .map_err(|e| LedgerError::Io(format!("{}: {e}", lock_path.display())))?;
    // Ingest mode takes the stream and the gaps from the brief; an absent brief stops here (R52).
    let brief = match cfg.settings.gap_source.value {
        crate::config::GapSource::Ingest => {
            Some(ingest::load(root, &cfg.settings.self_assess_output_dir.value).map_err(LedgerError::Refused)?)
        }
        crate::config::GapSource::SelfScan => None,
    };
    let stream = match &brief {
        Some(b) => ingest::stream(b),
        None => crate::ops::stream(idx).map_err(LedgerError::Io)?,
    };
    for c in &cfg.commands {
        if let Some(bad) = c.stages.iter().find(|s| !stream.stages.iter().any(|x| &x.name == *s)) {
            let known: Vec<&str> = stream.stages.iter().map(|x| x.name.as_str()).collect();
            return Err(LedgerError::Io(format!(
                "{}:{}: command `{}` names stage `{bad}`, which the stream does not have (stages: {})",
                cfg.source.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
                c.line,
                c.name,
                known.join(", ")
            )));
        }
    }
    let mut command_runs: BTreeMap<String, commands::Run> = BTreeMap::new();
    let repo = std::fs::canonicalize(root)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "repository".into());
    let header = Header {
        andon_ledger: ledger::FORMAT,
        andon: env!("CARGO_PKG_VERSION").into(),
        rules: format!("{:016x}", crate::facts::EXTRACT_DIGEST),
        repo,
    };
    // Initialize, or record a changed topology (R27, R35).
    let before = ledger::load(&dir)?;
    // A ledger outside the repository may be shared by mistake; one inside belongs to it by place
    // (a clone may well have another directory name).
    let outside = cfg.settings.ledger_dir.value.is_absolute()
        && std::fs::canonicalize(&dir)
            .ok()
            .zip(std::fs::canonicalize(root).ok())
            .is_none_or(|(d, r)| !d.starts_with(r));
    if let Some((h, _, _)) = &before
        && outside
        && h.repo != header.repo
    {
        return Err(LedgerError::Refused(format!(
            "the ledger in {} belongs to repository `{}`, not `{}`: give each repository its own `ledger_dir`",
            dir.display(),
            h.repo,
            header.repo
        )));
    }
    let recorded_stages = before.as_ref().map(|(_, s, _)| s.stages.clone()).unwrap_or_default();
    let changed: Vec<Event> = stage_events(&stream)
        .into_iter()
        .filter(|e| match e {
            Event::StageRecorded { stage, root, confidence, source, incoming, outgoing } => {
                recorded_stages.get(stage).is_none_or(|r| {
                    (&r.root, &r.confidence, &r.source, &r.incoming, &r.outgoing)
                        != (root, confidence, source, incoming, outgoing)
                })
            }
            _ => true,
        })
        .collect();
    let stream_changed = before.is_none() || !changed.is_empty();
    if !changed.is_empty() {
        ledger::append(&dir, &header, &changed, now)?;
    }
    let (_, mut state, _) = ledger::load(&dir)?.ok_or_else(|| LedgerError::Io("the ledger was not written".into()))?;
    if let Some(b) = &brief {
        let context = ingest::context_events(b, &state);
        if !context.is_empty() {
            ledger::append(&dir, &header, &context, now)?;
            state = ledger::load(&dir)?.ok_or_else(|| LedgerError::Io("no ledger".into()))?.1;
        }
    }
    // Proposals written by `andon propose` are recorded here, by the one writer; one over the
    // authorization ceiling halts at once (condition 2, at proposal).
    let mut notes = Vec::new();
    let out_dir = cfg.settings.output_path(root);
    let ceiling = cfg.settings.authorization_level.value;
    for (file, p) in proposal::pending(&out_dir) {
        let p = match p.map_err(|e| vec![e]).and_then(|p| proposal::validate(&p).map(|_| p)) {
            Ok(p) => p,
            Err(errs) => {
                notes.push(format!("{}: refused, not recorded: {}", file.display(), errs.join("; ")));
                continue;
            }
        };
        let takes = state.gaps.get(&p.gap).is_some_and(|g| g.status.takes_proposal());
        if !takes {
            notes.push(format!("{}: refused: gap `{}` is not open", file.display(), p.gap));
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
            notes.push(format!(
                "proposal for `{}` recorded; halted: {} exceeds the ceiling {}",
                p.gap,
                p.blast_radius.name(),
                ceiling.name()
            ));
        } else {
            notes.push(format!("proposal for `{}` recorded ({}, {})", p.gap, p.blast_radius.name(), p.approach));
        }
        ledger::append(&dir, &header, &events, now)?;
        let _ = std::fs::remove_file(&file);
    }
    let prog = datalog::builtin_program();
    let goals: Vec<usize> = GOALS.iter().map(|r| r.0 as usize).collect();
    let need = prog.needed(&goals);
    // identifiers (`References`) count as a dependency's use only for Rust paths used without
    // `use`; decoding them for every other file would cost the step most of its time
    let mut store = datalog::load_with(&prog, idx, Some(&need), &|lang| lang == "rust").map_err(LedgerError::Io)?;
    datalog::run_runtime(&prog, &mut store, Some(&need));
    let wires: Vec<Wire> =
        stream.wires.iter().map(|w| Wire { producer: w.producer.clone(), consumer: w.consumer.clone() }).collect();
    let surfaces = surface::surfaces(root, idx, &store, &wires);
    let tree = tree_fingerprint(idx);
    record_evidence(root, cfg, idx, &dir, &header, now, &stream, &surfaces, &tree, &mut notes)?;
    record_audits(root, cfg, &dir, &header, now, &mut notes)?;
    // proofs whose surface changed since (edits made outside the loop) are stale
    {
        let (_, state, _) = ledger::load(&dir)?.ok_or_else(|| LedgerError::Io("no ledger".into()))?;
        let stale = reopen_stale(&state, &stream, &surfaces, None, 0, cfg.settings.thrash_threshold.value, &mut notes);
        if !stale.is_empty() {
            ledger::append(&dir, &header, &stale, now)?;
        }
    }
    let ceiling = cfg.settings.authorization_level.value;
    let mut self_passes = 0u32;
    let mut found: Vec<Candidate>;
    let mut recorded = 0;
    let (cursor, picked, next, state, constraint) = loop {
        let (_, state, records) =
            ledger::load(&dir)?.ok_or_else(|| LedgerError::Io("the ledger was not written".into()))?;
        let board = crate::status::board(&state, cfg.settings.thrash_threshold.value, brief.is_some());
        // Record what the scan finds in `stage` (a closed gap found again is a new generation).
        let mut record_scan = |stage: &str, state: &State| -> Result<Vec<Candidate>, LedgerError> {
            let mut cands = match brief.as_ref().and_then(|b| Some((b, b.phases.iter().find(|p| p.id == stage)?))) {
                Some((b, phase)) => {
                    let mut c = ingest::candidates(b, phase);
                    // the phase's contract, once its work items are all done
                    let done = c.iter().all(|c| state.gaps.get(&c.id).is_some_and(|g| g.status.set_aside()));
                    let md = cfg.settings.self_assess_output_dir.value.join(crate::ingest::BRIEF_FILE);
                    if done
                        && let Some(k) = ingest::contract_candidate(b, phase, &md.to_string_lossy().replace('\\', "/"))
                    {
                        c.push(k);
                    }
                    c
                }
                None if brief.is_some() => Vec::new(),
                None => scan(&store, &stream, state, stage),
            };
            // Failing configured commands (R18, R49): the fast lane on every pass, the slow one on request.
            for spec in commands::applicable(&cfg.commands, stage, slow) {
                let r = command_runs.entry(spec.name.clone()).or_insert_with(|| {
                    commands::run(
                        root,
                        &cfg.settings.output_dir.value,
                        spec,
                        &format!("{tree}-{:016x}", command_key(spec)),
                    )
                });
                if !r.passed() {
                    cands.push(command_gap(cfg, root, stage, r));
                }
            }
            cands.sort_by(|a, b| a.id.cmp(&b.id));
            cands.dedup_by(|a, b| a.id == b.id);
            // A contradiction a person overrode stays overridden while it is the same (same fact,
            // place and wording: the same id); it is not reopened.
            cands.retain(|c| {
                !state.gaps.values().any(|g| {
                    (g.id == c.id || g.id.strip_prefix(c.id.as_str()).is_some_and(|r| r.starts_with('.')))
                        && g.status == GapStatus::Closed
                        && g.resolved_by
                            .as_ref()
                            .is_some_and(|e| state.overrides.get(&g.id).is_some_and(|o| o.contains(e)))
                })
            });
            // A brief is a plan, not a scan: a work item (or phase contract) once closed is done,
            // not found again.
            if brief.is_some() {
                cands.retain(|c| {
                    !(matches!(c.source, "WorkItem" | "PhaseContract")
                        && state.gaps.get(&c.id).is_some_and(|g| g.status == GapStatus::Closed))
                });
            }
            for c in &mut cands {
                let mut n = 1;
                let base = c.id.clone();
                while state.gaps.get(&c.id).is_some_and(|g| g.status == GapStatus::Closed) {
                    n += 1;
                    c.id = format!("{base}.{n}");
                }
            }
            // A recorded gap that only moved (its line changed) keeps its id.
            let ids: std::collections::BTreeSet<String> = cands.iter().map(|c| c.id.clone()).collect();
            let mut taken = std::collections::BTreeSet::new();
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
            // An open gap of this stage the scan no longer finds is gone from the code: it closes
            // on that evidence (tier 1: the fresh index). Wire proofs and commands that did not
            // run now are not judged here.
            let found: std::collections::BTreeSet<&str> = cands.iter().map(|c| c.id.as_str()).collect();
            let passed: Vec<String> = commands::applicable(&cfg.commands, stage, slow)
                .iter()
                .filter(|spec| command_runs.get(&spec.name).is_some_and(commands::Run::passed))
                .map(|spec| command_id(&spec.name))
                .collect();
            let mut gone = Vec::new();
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
                let ev = ledger::Evidence {
                    id: format!("E-{}-{}", g.id, state.gap_evidence.get(&g.id).map_or(0, Vec::len) + 1),
                    gap: Some(g.id.clone()),
                    wire: g.wire.clone().unwrap_or(Wire { producer: g.stage.clone(), consumer: g.stage.clone() }),
                    approach: if g.source == "FailingCommand" { "executed" } else { "structural" }.into(),
                    verdict: Verdict::Proven,
                    hold: false,
                    tier: (g.source != "FailingCommand").then_some(1),
                    artifact: None,
                    claim: format!("the scan of stage `{stage}` no longer finds: {}", g.summary),
                    evidence: if g.source == "FailingCommand" {
                        "the command passes on this tree".into()
                    } else {
                        "the fresh index".into()
                    },
                    fix: None,
                    references: vec![match g.location.line {
                        Some(l) => format!("{}:{l}", g.location.path),
                        None => g.location.path.clone(),
                    }],
                    surface: None,
                    radius: None,
                    tree: Some(tree.clone()),
                    rung: Some(if g.source == "FailingCommand" { 3 } else { 2 }),
                };
                notes.push(format!("gap `{}` is gone from the code ({}); it closes", g.id, g.summary));
                gone.push(Event::GapClosed { gap: g.id.clone(), evidence: ev.id.clone() });
                gone.insert(gone.len() - 1, Event::EvidenceRecorded { evidence: ev });
            }
            if !gone.is_empty() {
                ledger::append(&dir, &header, &gone, now)?;
            }
            // in ingest mode the constraint is the earliest phase with open work, counting what
            // this scan is about to open (R59)
            let brief_constraint = brief.as_ref().and_then(|b| {
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
            recorded += new.len();
            if !new.is_empty() {
                ledger::append(&dir, &header, &new, now)?;
            }
            Ok(cands)
        };
        // The cursor (R37): the stage of a gap in progress, else the first stage in stream order
        // with an outgoing wire that is not proven, else the first stage with open gaps.
        let in_progress = state
            .gaps
            .values()
            .find(|g| {
                matches!(g.status, GapStatus::Proposed | GapStatus::HaltedAwaitingAuthorization | GapStatus::Halted)
            })
            .cloned();
        // A halted gap whose hold a person has since cleared (a tier-2 override) passes the andon
        // rule now: it closes on that evidence and the cursor advances.
        if let Some(g) = in_progress.as_ref().filter(|g| g.status == GapStatus::Halted) {
            let diff_hash = records.iter().rev().find_map(|r| match &r.event {
                Event::PassClosed { gap, diff_hash, .. } if gap == &g.id => diff_hash.clone(),
                _ => None,
            });
            let latest = state.gap_evidence.get(&g.id).and_then(|v| v.last()).cloned();
            if let (ledger::andon_rule::Decision::Advance, Some(ev)) =
                (ledger::andon_rule::decide(&state, &g.id, ceiling, diff_hash.as_deref()), latest)
            {
                let verdict = state.evidence[&ev].verdict;
                let mut events = vec![Event::GapClosed { gap: g.id.clone(), evidence: ev.clone() }];
                // the overridden contradiction no longer holds the wire
                if let Some(w) = &g.wire {
                    events.push(Event::WireStatusChanged {
                        wire: w.clone(),
                        status: WireStatus::Proven,
                        evidence: ev.clone(),
                    });
                }
                events.push(Event::PassClosed {
                    pass: state.passes + 1,
                    stage: g.stage.clone(),
                    wire: g.wire.clone(),
                    gap: g.id.clone(),
                    approach: state.evidence[&ev].approach.clone(),
                    verdict,
                    advanced: true,
                    ceiling,
                    diff_hash,
                });
                ledger::append(&dir, &header, &events, now)?;
                notes.push(format!("gap `{}`: the hold was overridden; it closes and the cursor advances", g.id));
                continue;
            }
        }
        let unproven = |stage: &str| {
            stream.wires.iter().any(|w| {
                w.producer == stage
                    && state
                        .wires
                        .get(&Wire { producer: w.producer.clone(), consumer: w.consumer.clone() })
                        .is_none_or(|s| s.status != WireStatus::Proven)
            })
        };
        // in ingest mode the phases' wires are not proven by the loop: the cursor is the earliest
        // phase with open work (R59)
        let mut cursor = in_progress
            .as_ref()
            .map(|g| g.stage.clone())
            .or_else(|| if brief.is_some() { None } else { stream.order.iter().find(|s| unproven(s)).cloned() });
        found = Vec::new();
        if let Some(stage) = &cursor {
            found = record_scan(stage, &state)?;
        } else {
            for stage in &stream.order {
                let cands = record_scan(stage, &state)?;
                // a candidate is open when it was just recorded, or is recorded as open
                if cands.iter().any(|c| state.gaps.get(&c.id).is_none_or(|g| g.status == GapStatus::Open)) {
                    cursor = Some(stage.clone());
                    found = cands;
                    break;
                }
            }
        }
        let (_, state, records) =
            ledger::load(&dir)?.ok_or_else(|| LedgerError::Io("the ledger was not written".into()))?;
        // the constraint as it is now (R63), not as it was when the gap was opened; in ingest mode
        // the phase the cursor stands on, the earliest with open work (R59)
        let ingest_constraint = brief.as_ref().and(cursor.as_ref());
        let on_constraint = |c: &Candidate| match ingest_constraint {
            Some(stage) => &c.stage == stage,
            None => on_constraint(board.constraint.as_ref(), c),
        };
        let picked: Option<(String, String)> = match &in_progress {
            Some(g) => Some((g.id.clone(), "in progress: a gap is finished before another is picked".into())),
            None => {
                let open: Vec<&Candidate> = found
                    .iter()
                    .filter(|c| state.gaps.get(&c.id).is_some_and(|g| g.status == GapStatus::Open))
                    .collect();
                pick(&open, &on_constraint).map(|(c, rule)| (c.id.clone(), rule))
            }
        };
        let Some((id, rule)) = picked else {
            // Nothing open in any stage: the cycle converges when every wire is proven too.
            let all_proven = stream.wires.iter().all(|w| {
                state
                    .wires
                    .get(&Wire { producer: w.producer.clone(), consumer: w.consumer.clone() })
                    .is_some_and(|s| s.status == WireStatus::Proven)
            });
            let in_cycle = state.passes - state.passes_at_convergence;
            // gaps closed since the last convergence (a pass, or a gap gone from the code)
            let closed_since = records
                .iter()
                .rev()
                .take_while(|r| !matches!(r.event, Event::CycleConverged { .. }))
                .any(|r| matches!(r.event, Event::GapClosed { .. }));
            let next = if all_proven {
                let already = matches!(records.last().map(|r| &r.event), Some(Event::CycleConverged { .. }));
                if !already {
                    let proven: Vec<Wire> = state
                        .wires
                        .iter()
                        .filter(|(_, s)| s.status == WireStatus::Proven)
                        .map(|(w, _)| w.clone())
                        .collect();
                    let slow_pending: Vec<String> = cfg
                        .commands
                        .iter()
                        .filter(|c| c.lane == commands::Lane::Slow)
                        .filter(|c| {
                            let fp = format!("{tree}-{:016x}", command_key(c));
                            !commands::last(root, &cfg.settings.output_dir.value, &c.name)
                                .is_some_and(|r| r.fingerprint == fp && r.passed())
                        })
                        .map(|c| c.name.clone())
                        .collect();
                    let (constraint, intent) = cycle_report(&state, &records, &slow_pending);
                    notes.push(format!(
                        "cycle {} converged after {in_cycle} pass(es); constraint: {}; next cycle: {} ({})",
                        state.cycles + 1,
                        constraint.as_deref().unwrap_or("none"),
                        intent.next,
                        intent.because
                    ));
                    ledger::append(
                        &dir,
                        &header,
                        &[Event::CycleConverged {
                            cycle: state.cycles + 1,
                            passes: in_cycle,
                            backtracks: state.backtracks,
                            proven,
                            constraint,
                            intent: Some(intent),
                        }],
                        now,
                    )?;
                }
                // gaps a person set aside are not done: such a cycle is never hardened
                let set_aside = state
                    .gaps
                    .values()
                    .filter(|g| matches!(g.status, GapStatus::Skipped | GapStatus::Deferred))
                    .count();
                if in_cycle == 0 && !closed_since && set_aside == 0 {
                    Next {
                        action: "hardened",
                        gap: None,
                        detail: "a cycle converged without a single fix: the stream is hardened".into(),
                    }
                } else {
                    Next {
                        action: "converged",
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
                }
            } else {
                Next {
                    action: "none",
                    gap: None,
                    detail: if brief.is_some() {
                        "every work item of the brief is settled; the phases' wires and their Behavior Contract obligations are not proven by the loop in this version".into()
                    } else {
                        "no open gap the scan can see, but some wire is not proven".into()
                    },
                }
            };
            let (_, state, _) = ledger::load(&dir)?.ok_or_else(|| LedgerError::Io("no ledger".into()))?;
            break (cursor, None, next, state, board.constraint.clone());
        };
        let g = state.gaps[&id].clone();
        // Ingest mode: a stage with an unconfirmed entry gate is worked only after a person
        // confirms it (R57); the andon rule refuses any advance there until then.
        if let Some(c) = state.context.get(&g.stage)
            && !c.open_gates().is_empty()
        {
            let gates: Vec<String> = c
                .open_gates()
                .iter()
                .map(|o| format!("`{}` ({}, {} confidence: {})", o.id, o.priority, o.confidence, o.rule))
                .collect();
            let next = Next {
                action: "confirm",
                gap: Some(id.clone()),
                detail: format!(
                    "stage `{}` has entry gate(s) a person confirms before its work starts: {}; `andon confirm {} --rule RULE --by WHO --reason WHY`",
                    g.stage,
                    gates.join("; "),
                    g.stage
                ),
            };
            break (cursor, Some((id, rule)), next, state, board.constraint.clone());
        }
        // A wire that needs no change is proven by the loop itself, one pass per wire.
        if g.status == GapStatus::Open && g.source == "UnprovenWire" && g.wire.is_some() {
            // A thrashing wire is not re-proven by the loop: backtracking stops and a person looks (R83).
            let thrash = cfg.settings.thrash_threshold.value;
            if let Some(w) = &g.wire
                && let Some(ws) = state.wires.get(w).filter(|ws| ws.reopened.len() as u32 >= thrash)
            {
                let next = Next {
                    action: "decide",
                    gap: Some(id.clone()),
                    detail: format!(
                        "escalation: {w} has reopened {} times (threshold {thrash}) and is the constraint; the loop stops re-proving it: find why its surface keeps changing and propose a fix for `{id}`, or a person defers it",
                        ws.reopened.len()
                    ),
                };
                break (cursor, Some((id, rule)), next, state, board.constraint.clone());
            }
            if self_passes >= max_passes {
                let next = Next {
                    action: "budget",
                    gap: Some(id.clone()),
                    detail: format!("the pass budget ({max_passes}) is spent; run `andon loop` again to go on"),
                };
                break (cursor, Some((id, rule)), next, state, board.constraint.clone());
            }
            let (verdict, tier, hold, claim, refs) = fix::structural(idx, &g).map_err(LedgerError::Io)?;
            let mut ev = fix::evidence(
                &g,
                "structural",
                verdict,
                tier,
                hold,
                claim,
                "the index, no change applied".into(),
                refs,
                None,
                "00000000",
            );
            ev.id = format!("E-{}-{}", g.id, state.gap_evidence.get(&g.id).map_or(0, Vec::len) + 1);
            let Some(wire) = g.wire.clone() else { unreachable!("checked above") };
            if verdict == Verdict::Proven {
                ev.surface = surfaces.get(&wire).map(|s| s.fingerprint.clone());
            }
            ev.tree = Some(tree.clone());
            let status = match verdict {
                Verdict::Proven => WireStatus::Proven,
                Verdict::Unknown => WireStatus::Unknown,
                _ => WireStatus::BrokenOrUnproven,
            };
            let mut events = vec![
                Event::EvidenceRecorded { evidence: ev.clone() },
                Event::WireStatusChanged { wire: wire.clone(), status, evidence: ev.id.clone() },
            ];
            let mut after = state.clone();
            for e in &events {
                ledger::apply(&mut after, u64::MAX - 4, e).map_err(LedgerError::Refused)?;
            }
            let decision = ledger::andon_rule::decide(&after, &g.id, ceiling, None);
            let advanced = decision == ledger::andon_rule::Decision::Advance;
            if advanced {
                // the proof of the wire settles every open gap on it
                for other in state.gaps.values().filter(|o| {
                    o.wire.as_ref() == Some(&wire) && o.kind == GapKind::Wire && o.status == GapStatus::Open
                }) {
                    if other.id == g.id || other.source == "UnprovenWire" {
                        events.push(Event::GapClosed { gap: other.id.clone(), evidence: ev.id.clone() });
                    }
                }
            } else if let ledger::andon_rule::Decision::Halt(c, why) = &decision {
                events.push(Event::Halted { gap: g.id.clone(), condition: c.token().into(), reason: why.clone() });
            }
            events.push(Event::PassClosed {
                pass: state.passes + 1,
                stage: g.stage.clone(),
                wire: Some(wire.clone()),
                gap: g.id.clone(),
                approach: "structural".into(),
                verdict,
                advanced,
                ceiling,
                diff_hash: None,
            });
            ledger::append(&dir, &header, &events, now)?;
            self_passes += 1;
            notes.push(match &decision {
                ledger::andon_rule::Decision::Advance => format!(
                    "pass {}: {wire} proven structurally (tier {}); the cursor advances",
                    state.passes + 1,
                    tier.unwrap_or(0)
                ),
                ledger::andon_rule::Decision::Halt(c, why) => {
                    format!("pass {}: {wire}: {} ({why})", state.passes + 1, c.token())
                }
            });
            if advanced {
                continue;
            }
            let (_, state, _) = ledger::load(&dir)?.ok_or_else(|| LedgerError::Io("no ledger".into()))?;
            let next = Next {
                action: "fix-the-code",
                gap: Some(g.id.clone()),
                detail: format!("the wire {wire} is contradicted: fix the code, propose and verify"),
            };
            break (cursor, Some((g.id, rule)), next, state, board.constraint.clone());
        }
        let next = match g.status {
            GapStatus::Open => Next {
                action: "propose",
                gap: Some(id.clone()),
                detail: format!(
                    "propose a fix for `{id}` ({}): one blast-radius tag, one verification approach with its reason, a description and the files it will write",
                    g.summary
                ),
            },
            GapStatus::Proposed => Next {
                action: "apply-and-verify",
                gap: Some(id.clone()),
                detail: format!("apply the proposed fix for `{id}` with your own tools, then verify it"),
            },
            GapStatus::HaltedAwaitingAuthorization => Next {
                action: "decide",
                gap: Some(id.clone()),
                detail: format!("a person decides `{id}`: raise the authority for this fix, or defer or skip it"),
            },
            GapStatus::Halted => {
                use ledger::andon_rule::Condition;
                let cond = records.iter().rev().find_map(|r| match &r.event {
                    Event::Halted { gap, condition, reason } if gap == &id => {
                        Some((Condition::from_recorded(condition), reason.clone()))
                    }
                    _ => None,
                });
                let why = cond.as_ref().map(|(_, r)| r.clone()).unwrap_or_default();
                match cond.and_then(|(c, _)| c) {
                    Some(Condition::Refuted | Condition::Tier1Hold | Condition::Unproven) => Next {
                        action: "fix-the-code",
                        gap: Some(id.clone()),
                        detail: format!(
                            "gap `{id}` halted ({why}): change the fix, `andon propose` it again if its scope changes, then `andon verify`"
                        ),
                    },
                    Some(Condition::Tier2Hold) => Next {
                        action: "decide",
                        gap: Some(id.clone()),
                        detail: format!(
                            "gap `{id}` halted on a tier-2 contradiction ({why}): change the fix, or a person overrides it with `andon override {id} --evidence E --basis B --by WHO --reason R`"
                        ),
                    },
                    _ => Next {
                        action: "decide",
                        gap: Some(id.clone()),
                        detail: format!(
                            "gap `{id}` is halted ({why}): a person decides (`andon defer` or `andon skip`)"
                        ),
                    },
                }
            }
            _ => Next { action: "decide", gap: Some(id.clone()), detail: format!("gap `{id}` is {}", g.status.name()) },
        };
        break (cursor, Some((id, rule)), next, state, board.constraint.clone());
    };
    let records_after = ledger::load(&dir)?.map(|(_, _, r)| r).unwrap_or_default();
    // A picked gap that is halted stops the step on its recorded condition.
    let gated = next.action == "confirm";
    let halt = picked.as_ref().filter(|_| !gated).and_then(|(id, _)| {
        let g = state.gaps.get(id)?;
        match g.status {
            GapStatus::HaltedAwaitingAuthorization => Some(ledger::andon_rule::Condition::Authorization),
            GapStatus::Halted => records_after.iter().rev().find_map(|r| match &r.event {
                Event::Halted { gap, condition, .. } if gap == id => {
                    ledger::andon_rule::Condition::from_recorded(condition)
                }
                _ => None,
            }),
            _ => None,
        }
    });
    let wires: Vec<(Wire, &'static str)> = stream
        .wires
        .iter()
        .map(|w| {
            let wire = Wire { producer: w.producer.clone(), consumer: w.consumer.clone() };
            let st = match state.wires.get(&wire).map(|s| s.status) {
                Some(WireStatus::Proven) => "proven",
                Some(WireStatus::Unknown) => "unknown",
                _ => "broken/unproven",
            };
            (wire, st)
        })
        .collect();
    // In ingest mode the constraint is the brief's: the earliest phase with open work (R59), on
    // the phase's own wire (the one its contract proves, `ingest::phase_wire`), as status shows it.
    let constraint = match (&brief, &cursor) {
        (Some(_), Some(stage)) => Some(crate::status::Constraint {
            wire: stream
                .wires
                .iter()
                .find(|w| &w.producer == stage)
                .map(|w| Wire { producer: w.producer.clone(), consumer: w.consumer.clone() })
                .unwrap_or(Wire { producer: stage.clone(), consumer: stage.clone() }),
            rule: "brief-order",
            detail: format!("`{stage}` is the earliest phase of the brief with open work"),
        }),
        (Some(_), None) => None,
        (None, _) => constraint,
    };
    Ok(Session {
        stream_changed,
        stream,
        cursor,
        found,
        recorded,
        picked,
        next,
        passes: state.passes,
        cycles: state.cycles,
        wires,
        constraint,
        notes,
        delta: delta(&records_after, since.unwrap_or(0)),
        ledger_seq: records_after.last().map_or(0, |r| r.seq),
        halt: if gated { Some(ledger::andon_rule::Condition::EntryGate) } else { halt },
    })
}

/// Reopens every proven wire whose surface changed since its proof (design §3, R82): the proof
/// is stale, so the wire gets an `unproven` evidence record naming what crosses it now. When the
/// change is the fix for `fixed` and the wire lies within `depth` stages upstream of the fixed
/// stage (or leaves it), this is a sub-cycle: the cursor goes back to re-prove it. A wire that has
/// reopened `thrash` times stops the backtracking: it is the stream's constraint, and the
/// escalation is said (R83).
#[allow(clippy::too_many_arguments)]
fn reopen_stale(
    state: &State,
    stream: &StreamReport,
    surfaces: &BTreeMap<Wire, surface::Surface>,
    fixed: Option<&ledger::GapState>,
    depth: u32,
    thrash: u32,
    notes: &mut Vec<String>,
) -> Vec<Event> {
    // stages within `depth` hops upstream of the fixed stage (the stage itself at 0)
    let mut reach: BTreeMap<String, u32> = BTreeMap::new();
    if let Some(g) = fixed {
        reach.insert(g.stage.clone(), 0);
        let mut frontier = vec![g.stage.clone()];
        for d in 1..depth {
            let mut next = Vec::new();
            for s in &frontier {
                for w in stream.wires.iter().filter(|w| &w.consumer == s) {
                    if !reach.contains_key(&w.producer) {
                        reach.insert(w.producer.clone(), d);
                        next.push(w.producer.clone());
                    }
                }
            }
            frontier = next;
        }
    }
    let mut out = Vec::new();
    let mut k = state.evidence.len();
    for w in &stream.wires {
        let wire = Wire { producer: w.producer.clone(), consumer: w.consumer.clone() };
        let Some(ws) = state.wires.get(&wire).filter(|s| s.status == WireStatus::Proven) else { continue };
        let Some(proof) = state.evidence.get(&ws.evidence).and_then(|e| e.surface.as_deref()) else { continue };
        let Some(now) = surfaces.get(&wire) else { continue };
        if now.fingerprint == proof || fixed.is_some_and(|g| g.wire.as_ref() == Some(&wire)) {
            continue;
        }
        k += 1;
        let id = format!("E-stale-{k}");
        let crossing = if now.names.is_empty() { "nothing".to_string() } else { now.names.join(", ") };
        out.push(Event::EvidenceRecorded {
            evidence: ledger::Evidence {
                id: id.clone(),
                gap: None,
                wire: wire.clone(),
                approach: "structural".into(),
                verdict: Verdict::Unproven,
                hold: false,
                tier: None,
                artifact: None,
                claim: match fixed {
                    Some(g) => {
                        format!("the fix for `{}` changed the surface {wire} was proven on; its proof is stale", g.id)
                    }
                    None => format!("the surface {wire} was proven on has changed; its proof is stale"),
                },
                evidence: format!("surface {proof} is now {}", now.fingerprint),
                fix: None,
                references: now.names.clone(),
                surface: Some(now.fingerprint.clone()),
                radius: None,
                tree: None,
                rung: Some(2),
            },
        });
        out.push(Event::WireStatusChanged { wire: wire.clone(), status: WireStatus::BrokenOrUnproven, evidence: id });
        let reopens = ws.reopened.len() as u32 + 1;
        let backtrack = fixed.filter(|g| reach.contains_key(&w.consumer) || w.producer == g.stage);
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

/// A person's decision on a gap (the loop's human-decision actions; R71–R76). `by` names the
/// person who decided (the approver).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Raise the authority for this gap's fix, bound to the diff as it is now.
    Authorize {
        by: String,
        reason: String,
    },
    Defer {
        by: String,
        reason: String,
    },
    Skip {
        by: String,
        reason: String,
    },
    /// Confirm an entry gate (a P0 brief rule below High confidence) of a stage (R57); the
    /// decision's subject is the stage, not a gap.
    Confirm {
        rule: String,
        by: String,
        reason: String,
    },
    /// Override a tier-2 contradiction (never a tier-1 hold), on a basis from the closed list,
    /// optionally with a counter-artifact (a file in the repository).
    Override {
        evidence: String,
        basis: ledger::OverrideBasis,
        artifact: Option<String>,
        by: String,
        reason: String,
    },
}

/// Records a person's decision on `gap` through the one writer. Returns what was recorded.
pub fn decide(root: &Path, cfg: &Config, gap: &str, d: &Decision, now: u64) -> Result<String, LedgerError> {
    let dir = ledger::dir_of(root, &cfg.settings);
    let (header, state, records) =
        ledger::load(&dir)?.ok_or_else(|| LedgerError::Refused("the loop has never run here: no ledger".into()))?;
    if let Decision::Confirm { rule, by, reason } = d {
        let event =
            Event::GateConfirmed { stage: gap.into(), rule: rule.clone(), by: by.clone(), reason: reason.clone() };
        ledger::append(&dir, &header, std::slice::from_ref(&event), now)?;
        return Ok(format!("entry gate `{rule}` of stage `{gap}` confirmed"));
    }
    if !state.gaps.contains_key(gap) {
        return Err(LedgerError::Refused(format!("no gap `{gap}` in the ledger")));
    }
    let event = match d {
        Decision::Confirm { .. } => unreachable!("handled above"),
        Decision::Authorize { by, reason } => {
            let (base, write_set, _, radius) = recorded_proposal(&records, gap)
                .ok_or_else(|| LedgerError::Refused(format!("gap `{gap}` has no proposal")))?;
            // bound to the diff as it is now, at the radius that diff rates (never below the proposal's)
            let own = own_paths(cfg);
            let (hash, mut level) = match fix::change(root, &base, &write_set, &own) {
                Ok(c) => (c.hash.clone(), radius.max(fix::rerate(&c).0)),
                Err(_) => (diff::hash(root, Some(&base), &write_set, &own), radius),
            };
            // a changed public surface rates the diff hard to reverse (as verify rated it)
            if let Ok(Some(idx)) = crate::index::load(root)
                && surface_change(root, &idx, &state).map_err(LedgerError::Io)?.is_some()
            {
                level = level.max(BlastRadius::HardToReverse);
            }
            Event::AuthorizationRaised {
                gap: gap.into(),
                diff_hash: hash,
                level,
                by: by.clone(),
                reason: reason.clone(),
            }
        }
        Decision::Defer { by, reason } => {
            Event::GapDeferred { gap: gap.into(), by: by.clone(), reason: reason.clone() }
        }
        Decision::Skip { by, reason } => Event::GapSkipped { gap: gap.into(), by: by.clone(), reason: reason.clone() },
        Decision::Override { evidence, basis, artifact, by, reason } => {
            if let Some(a) = artifact
                && !root.join(a).is_file()
            {
                return Err(LedgerError::Refused(format!(
                    "the counter-artifact `{a}` is not a file in the repository"
                )));
            }
            Event::Overridden {
                gap: gap.into(),
                evidence: evidence.clone(),
                basis: *basis,
                by: by.clone(),
                reason: reason.clone(),
                artifact: artifact.clone(),
            }
        }
    };
    ledger::append(&dir, &header, std::slice::from_ref(&event), now)?;
    Ok(match event {
        Event::AuthorizationRaised { level, diff_hash, .. } => {
            format!("authority raised to {} for `{gap}`, bound to diff {}", level.name(), &diff_hash[..12])
        }
        Event::GapDeferred { .. } => format!("gap `{gap}` deferred"),
        Event::GapSkipped { .. } => format!("gap `{gap}` skipped; the loop picks another"),
        _ => format!("tier-2 evidence on `{gap}` overridden"),
    })
}

/// andon's own reports and ledger, as repo-relative `dir/` prefixes: never part of a fix.
pub(crate) fn own_paths(cfg: &Config) -> Vec<String> {
    [cfg.settings.output_dir.value.clone(), cfg.settings.ledger_dir.value.clone()]
        .iter()
        .filter(|p| p.is_relative())
        .map(|p| {
            let p = p.to_string_lossy().replace('\\', "/");
            format!("{}/", p.trim_start_matches("./").trim_end_matches('/'))
        })
        .collect()
}

/// The applied change, checked before anything is proven: the working tree against `base` (or a
/// given unified diff, which must then describe the tree), no file outside `write_set` (R113),
/// and its blast radius re-rated (R75). With git, the tree decides the hash and counts in the
/// rating even when a diff is given, so a diff cannot describe a smaller change than the one made.
/// `Err` is a refusal's message.
fn checked_change(
    root: &Path,
    cfg: &Config,
    base: &str,
    write_set: &[String],
    diff_text: Option<&str>,
) -> Result<Result<(fix::Change, BlastRadius, String), VerifyStop>, String> {
    let own = own_paths(cfg);
    let tree = if base != "none" { Some(fix::change(root, base, write_set, &own)) } else { None };
    let change = match (diff_text, &tree) {
        (Some(text), _) => fix::change_from_diff(text, base, &own)?,
        (None, Some(t)) => t.clone()?,
        (None, None) => fix::change(root, base, write_set, &own)?,
    };
    if change.files.is_empty() {
        return Err(
            "the applied change touches no file: apply the fix first (a hold is cleared only by changed code)".into()
        );
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
            return Err(format!("the diff does not describe the working tree: it leaves out {}", missing.join(", ")));
        }
        let (r, b) = fix::rerate(&tree);
        if r > rerated {
            (rerated, because) = (r, format!("{b} (in the working tree)"));
        }
        change = fix::Change { files: change.files, ..tree };
    }
    let outside: Vec<String> = change.files.iter().map(|(_, p)| p.clone()).filter(|p| !write_set.contains(p)).collect();
    if !outside.is_empty() {
        return Ok(Err(VerifyStop::Scope(outside)));
    }
    Ok(Ok((change, rerated, because)))
}

/// Does the working tree change a public surface — what crosses a proven wire, as its proof
/// recorded it (design §3)? Such a change is hard to reverse: every consumer rests on it. Says
/// which wires and what crosses them now.
fn surface_change(root: &Path, idx: &Index, state: &State) -> Result<Option<String>, String> {
    let proven: Vec<(Wire, &str)> = state
        .wires
        .iter()
        .filter(|(_, ws)| ws.status == WireStatus::Proven)
        .filter_map(|(w, ws)| Some((w.clone(), state.evidence.get(&ws.evidence)?.surface.as_deref()?)))
        .collect();
    if proven.is_empty() {
        return Ok(None);
    }
    let prog = datalog::builtin_program();
    let need = prog.needed(&[rel::WIRE_IMPORT.0 as usize]);
    let mut store = datalog::load_with(&prog, idx, Some(&need), &|lang| lang == "rust")?;
    datalog::run_runtime(&prog, &mut store, Some(&need));
    let wires: Vec<Wire> = proven.iter().map(|(w, _)| w.clone()).collect();
    let now = surface::surfaces(root, idx, &store, &wires);
    let changed: Vec<String> = proven
        .iter()
        .filter(|(w, fp)| now.get(w).is_some_and(|s| s.fingerprint != *fp))
        .map(|(w, _)| format!("{w} ({})", now[w].names.join(", ")))
        .collect();
    Ok((!changed.is_empty()).then(|| format!("changes the public surface of {}", changed.join("; "))))
}

/// The proposal recorded for `gap`: (base commit, write-set, approach, blast radius).
fn recorded_proposal(records: &[ledger::Record], gap: &str) -> Option<(String, Vec<String>, String, BlastRadius)> {
    records.iter().rev().find_map(|r| match &r.event {
        Event::ProposalRecorded { gap: g, base_commit, write_set, approach, blast_radius, .. } if g == gap => {
            Some((base_commit.clone(), write_set.clone(), approach.clone(), *blast_radius))
        }
        _ => None,
    })
}

/// Who the proposal recorded for `gap` names as its proposer, if anyone.
fn recorded_proposer(records: &[ledger::Record], gap: &str) -> Option<String> {
    records.iter().rev().find_map(|r| match &r.event {
        Event::ProposalRecorded { gap: g, proposer, .. } if g == gap => Some(proposer.clone()),
        _ => None,
    })?
}

/// Why `andon verify` stopped before or after proving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyStop {
    /// Files outside the declared write-set (R113): listed, nothing proven.
    Scope(Vec<String>),
    /// The actual diff rates above the ceiling and no authority covers this diff (R75).
    Authorization(BlastRadius, String),
    /// Bad request: no such gap, no proposal, no base commit, missing command.
    Refused(String),
}

/// Verifies the applied fix of `gap` on the fresh index `idx`; writes the evidence artifact for
/// the loop to record (never the ledger).
pub fn verify(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    gap: &str,
    inputs: &prove::Inputs,
    diff_text: Option<&str>,
) -> Result<Result<fix::Outcome, VerifyStop>, LedgerError> {
    let dir = ledger::dir_of(root, &cfg.settings);
    let refuse = |m: String| Ok(Err(VerifyStop::Refused(m)));
    let Some((_, state, records)) = ledger::load(&dir)? else {
        return refuse("the loop has never run here: no ledger".into());
    };
    let Some(g) = state.gaps.get(gap) else { return refuse(format!("no gap `{gap}` in the ledger")) };
    if g.status != GapStatus::Proposed {
        return refuse(format!("gap `{gap}` is {}; only a proposed gap is verified", g.status.name()));
    }
    let Some((base, write_set, approach, radius)) = recorded_proposal(&records, gap) else {
        return refuse(format!("gap `{gap}` has no recorded proposal"));
    };
    // the proposer is the one the ledger recorded; a flag naming someone else is refused
    let proposer = match (&inputs.proposer, recorded_proposer(&records, gap)) {
        (Some(given), Some(rec)) if !crate::panel::same_producer(given, &rec) => {
            return refuse(format!(
                "gap `{gap}` was proposed by `{}` (recorded with the proposal); --proposer `{}` names someone else",
                crate::text::short(&rec),
                crate::text::short(given)
            ));
        }
        (given, rec) => given.clone().or(rec),
    };
    let with_proposer;
    let inputs = if proposer != inputs.proposer {
        with_proposer = prove::Inputs { proposer, ..inputs.clone() };
        &with_proposer
    } else {
        inputs
    };
    let (change, mut rerated, mut because) = match checked_change(root, cfg, &base, &write_set, diff_text) {
        Ok(Ok(c)) => c,
        Ok(Err(stop)) => return Ok(Err(stop)),
        Err(m) => return refuse(m),
    };
    if let Some(what) = surface_change(root, idx, &state).map_err(LedgerError::Io)?
        && BlastRadius::HardToReverse > rerated
    {
        (rerated, because) = (BlastRadius::HardToReverse, what);
    }
    let ceiling = cfg.settings.authorization_level.value;
    let level = rerated.max(radius);
    if level > ceiling {
        let covered = state.authority.get(gap).is_some_and(|a| a.iter().any(|(h, l)| *h == change.hash && *l >= level));
        if !covered {
            return Ok(Err(VerifyStop::Authorization(level, because)));
        }
    }
    let out_dir = cfg.settings.output_path(root);
    // routing is verify's own (R89): the proposal's approach is only compared with it
    let stages = vec![g.stage.clone()];
    let has_checks = !prove::checks(cfg, &stages, inputs.command.as_deref()).is_empty();
    let subject = prove::subject_of_gap(g, has_checks);
    // a phase contract routes each obligation itself (a choice applies to its ties)
    let chosen = if g.source == "PhaseContract" { None } else { inputs.chosen };
    let route = match prove::decide(&subject, chosen) {
        Ok(r) => r,
        Err(m) => return refuse(m),
    };
    let routing = prove::routing_record(&route, Some(approach.as_str()));
    let checks = prove::checks(cfg, &stages, inputs.command.as_deref());
    let target = prove::Target {
        stages,
        wire: g.wire.clone(),
        path: g.location.path.clone(),
        summary: g.summary.clone(),
        id: g.id.clone(),
        claim: format!("the applied change fixes {}: {}", g.id, g.summary),
        criteria: vec![prove::criterion(
            "fix",
            &format!("the applied change resolves the gap and changes no other behavior: {}", g.summary),
            true,
            &checks,
        )],
        diff: match diff_text {
            Some(t) => t.to_string(),
            None => fix::diff_text(root, &base, &own_paths(cfg)).unwrap_or_default(),
        },
        proposer: inputs.proposer.clone().unwrap_or_default(),
    };
    // a request handed in for this gap: its declared files bound the change (R113)
    if !inputs.declared.is_empty() {
        let outside: Vec<String> =
            change.files.iter().map(|(_, p)| p.clone()).filter(|p| !inputs.declared.contains(p)).collect();
        if !outside.is_empty() {
            return Ok(Err(VerifyStop::Scope(outside)));
        }
    }
    let extra_target = target.clone();
    let mut label: Option<(String, Option<u8>)> = None;
    let proof = if g.source == "PhaseContract" {
        // ingest mode: the phase's exit criteria and Behavior Contract rules, each routed on its own
        let Some(ctx) = state.context.get(&g.stage) else {
            return refuse(format!("stage `{}` has no recorded contract", g.stage));
        };
        let (proof, approaches, rung) =
            phase_contract(root, cfg, idx, g, ctx, target, &checks, inputs, &change).map_err(LedgerError::Io)?;
        label = Some((approaches, rung));
        proof
    } else {
        match route.approach {
            None => prove::tie(&route),
            Some(a) => prove::run(a, root, cfg, idx, &target, inputs, &change.hash).map_err(LedgerError::Io)?,
        }
    };
    // ...and its Behavior Contract rules are obligations too: the andon rule over them and the
    // gap's own proof
    let mut proof = proof;
    if !inputs.rules.is_empty() {
        let subjects: Vec<request::Obligation> = inputs
            .rules
            .iter()
            .map(|r| (r.id.clone(), r.rule.clone(), Some(r.clone()), request::rule_subject(r, !checks.is_empty())))
            .collect();
        let results = request::prove_all(root, cfg, idx, subjects, extra_target, &checks, inputs, &change.hash)
            .map_err(LedgerError::Io)?;
        let (unmet, condition) = request::judge(&results, &[]);
        use crate::ledger::andon_rule::Condition;
        let worse = match condition {
            None => None,
            Some(Condition::Tier1Hold) => Some((Verdict::Refuted, true)),
            Some(Condition::Refuted | Condition::Tier2Hold) => Some((Verdict::Refuted, false)),
            Some(Condition::Unproven) => Some((Verdict::Unproven, false)),
            Some(_) => Some((Verdict::Unknown, false)),
        };
        if let Some((v, hold)) = worse {
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
    }
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
    let phase = label.is_some();
    if let Some((approaches, rung)) = label {
        ev.approach = approaches;
        ev.rung = rung;
    } else if let Some(d) = &routing.disagreement {
        ev.evidence = format!("{}; {d}", ev.evidence);
    }
    let outcome = fix::Outcome {
        gap: gap.into(),
        change,
        outside_write_set: Vec::new(),
        rerated,
        rerated_because: because,
        evidence: ev,
        // a phase contract routes each of its obligations; the evidence lists them
        routing: (!phase).then_some(routing),
    };
    let file = fix::artifact_path(&out_dir, gap);
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| LedgerError::Io(format!("{}: {e}", parent.display())))?;
    }
    let tmp = file.with_extension(format!("json.{}.tmp", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec_pretty(&outcome).expect("json"))
        .and_then(|_| std::fs::rename(&tmp, &file))
        .map_err(|e| LedgerError::Io(format!("{}: {e}", file.display())))?;
    Ok(Ok(outcome))
}

/// The JSON artifacts waiting in `dir` for the loop to record (proposals, evidence, audits),
/// sorted by file name, each read or with why it cannot be.
pub fn pending<T: serde::de::DeserializeOwned>(dir: &Path) -> Vec<(std::path::PathBuf, Result<T, String>)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let r = std::fs::read_to_string(&f)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<T>(&t).map_err(|e| e.to_string()));
            (f, r)
        })
        .collect()
}

/// Records pending proof-strength audits, each added to the evidence it audits (R99).
fn record_audits(
    root: &Path,
    cfg: &Config,
    dir: &Path,
    header: &Header,
    now: u64,
    notes: &mut Vec<String>,
) -> Result<(), LedgerError> {
    for (file, outcome) in pending::<audit::AuditOutcome>(&cfg.settings.output_path(root).join("audits")) {
        match outcome {
            Err(e) => notes.push(format!("{}: not recorded: {e}", file.display())),
            Ok(a) => {
                let (_, state, _) = ledger::load(dir)?.ok_or_else(|| LedgerError::Io("no ledger".into()))?;
                if !state.evidence.contains_key(&a.evidence) {
                    notes.push(format!("{}: not recorded: no evidence `{}`", file.display(), a.evidence));
                } else {
                    let event = Event::EvidenceAudited {
                        evidence: a.evidence.clone(),
                        tool: a.tool.clone(),
                        strength: a.strength.clone(),
                        detail: a.detail.clone(),
                        artifact: a.artifact.clone(),
                    };
                    ledger::append(dir, header, &[event], now)?;
                    notes.push(format!(
                        "evidence `{}` audited by {}: {} ({})",
                        a.evidence, a.tool, a.strength, a.detail
                    ));
                }
                let _ = std::fs::remove_file(&file);
            }
        }
    }
    Ok(())
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
    target: prove::Target,
    checks: &[commands::CommandSpec],
    inputs: &prove::Inputs,
    change: &fix::Change,
) -> Result<(prove::Proof, String, Option<u8>), String> {
    let hash = change.hash.as_str();
    use crate::evidence::route::{self, Object, Subject};
    use crate::ingest::{Confidence, Priority};
    let has_checks = !checks.is_empty();
    let mut subjects: Vec<request::Obligation> = Vec::new();
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
        let rule = request::Rule {
            id: o.id.clone(),
            rule: o.rule.clone(),
            validation: o.validation.clone(),
            priority: Priority::parse(&o.priority)?,
            confidence: Confidence::parse(&o.confidence)?,
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
    use crate::ledger::andon_rule::Condition;
    let (verdict, tier, hold) = match condition {
        None => (Verdict::Proven, None, false),
        Some(Condition::Tier1Hold) => (Verdict::Refuted, Some(1), true),
        Some(Condition::Tier2Hold) => (Verdict::Refuted, Some(2), false),
        Some(Condition::Refuted) => (Verdict::Refuted, None, false),
        Some(Condition::Unproven) => (Verdict::Unproven, None, false),
        Some(_) => (Verdict::Unknown, None, false),
    };
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
    let proof = prove::Proof {
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
    };
    Ok((proof, approaches.join("+"), rung))
}

/// Records pending evidence artifacts (the loop's half of verify): the evidence, the wire's
/// status, the gap's closing, and the pass with the andon rule's decision.
#[allow(clippy::too_many_arguments)]
fn record_evidence(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    dir: &Path,
    header: &Header,
    now: u64,
    stream: &StreamReport,
    surfaces: &BTreeMap<Wire, surface::Surface>,
    tree: &str,
    notes: &mut Vec<String>,
) -> Result<(), LedgerError> {
    let out_dir = cfg.settings.output_path(root);
    for (file, outcome) in pending::<fix::Outcome>(&out_dir.join("evidence")) {
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                notes.push(format!("{}: not recorded: {e}", file.display()));
                continue;
            }
        };
        let (_, state, records) = ledger::load(dir)?.ok_or_else(|| LedgerError::Io("no ledger".into()))?;
        let Some(g) = state.gaps.get(&outcome.gap) else {
            notes.push(format!("{}: not recorded: no gap `{}`", file.display(), outcome.gap));
            continue;
        };
        if g.status != GapStatus::Proposed {
            notes.push(format!("{}: not recorded: gap `{}` is {}", file.display(), g.id, g.status.name()));
            let _ = std::fs::remove_file(&file);
            continue;
        }
        // What verify saw must still be the working tree: the same change, in scope, re-rated here.
        let mut radius = outcome.rerated;
        if let Some((base, write_set, _, _)) = recorded_proposal(&records, &g.id)
            && base != "none"
        {
            let refused = match checked_change(root, cfg, &base, &write_set, None) {
                Ok(Ok((c, r, _))) if c.hash == outcome.change.hash => {
                    radius = r;
                    if surface_change(root, idx, &state).map_err(LedgerError::Io)?.is_some() {
                        radius = radius.max(BlastRadius::HardToReverse);
                    }
                    None
                }
                Ok(Ok(_)) => Some("the working tree changed after `andon verify`; verify it again".to_string()),
                Ok(Err(VerifyStop::Scope(out))) => Some(format!("files outside the write-set: {}", out.join(", "))),
                Ok(Err(_)) => Some("the change cannot be checked".to_string()),
                Err(m) => Some(m),
            };
            if let Some(m) = refused {
                notes.push(format!("{}: not recorded: {m}", file.display()));
                let _ = std::fs::remove_file(&file);
                continue;
            }
        }
        let mut ev = outcome.evidence.clone();
        ev.id = format!("E-{}-{}", g.id, state.gap_evidence.get(&g.id).map_or(0, Vec::len) + 1);
        // Whatever approach proved it, a wire gap is re-checked on the fresh index: a contradiction
        // across the wire (a tier-1 hold, or a tier-2 refutation only an override clears) outranks
        // any other proof.
        if g.wire.is_some() {
            let (verdict, tier, hold, claim, refs) = fix::structural(idx, g).map_err(LedgerError::Io)?;
            if verdict != ledger::Verdict::Proven {
                ev = fix::evidence(
                    g,
                    "structural",
                    verdict,
                    tier,
                    hold,
                    claim,
                    "the fresh index".into(),
                    refs,
                    None,
                    "00000000",
                );
                ev.id = format!("E-{}-{}", g.id, state.gap_evidence.get(&g.id).map_or(0, Vec::len) + 1);
            }
        }
        ev.tree = Some(tree.to_string());
        ev.radius = Some(radius);
        if ev.verdict == ledger::Verdict::Proven && g.wire.is_some() {
            ev.surface = g.wire.as_ref().and_then(|w| surfaces.get(w)).map(|s| s.fingerprint.clone());
        }
        let mut events = vec![Event::EvidenceRecorded { evidence: ev.clone() }];
        // a brief's work item is about its phase's wire, but only the phase contract proves it
        if let Some(w) = g.wire.as_ref().filter(|_| g.source != "WorkItem") {
            let status = match ev.verdict {
                ledger::Verdict::Proven => WireStatus::Proven,
                ledger::Verdict::Unknown => WireStatus::Unknown,
                _ => WireStatus::BrokenOrUnproven,
            };
            let held = state.wires.get(w).is_some_and(|ws| state.evidence.get(&ws.evidence).is_some_and(|e| e.hold));
            // a standing hold is replaced only by a proof (or by a new hold)
            if !held || status == WireStatus::Proven || ev.hold {
                events.push(Event::WireStatusChanged { wire: ev.wire.clone(), status, evidence: ev.id.clone() });
            }
        }
        // decide on the state as it will be after the evidence
        let mut after = state.clone();
        let mut refused = None;
        for (i, e) in events.iter().enumerate() {
            if let Err(m) = ledger::apply(&mut after, u64::MAX - 10 + i as u64, e) {
                refused = Some(m);
                break;
            }
        }
        if let Some(m) = refused {
            notes.push(format!("{}: not recorded: {m}", file.display()));
            let _ = std::fs::remove_file(&file);
            continue;
        }
        let ceiling = cfg.settings.authorization_level.value;
        let decision = ledger::andon_rule::decide(&after, &g.id, ceiling, Some(&outcome.change.hash));
        let advanced = decision == ledger::andon_rule::Decision::Advance;
        if advanced && ev.verdict == ledger::Verdict::Proven {
            events.push(Event::GapClosed { gap: g.id.clone(), evidence: ev.id.clone() });
        }
        if let ledger::andon_rule::Decision::Halt(c, why) = &decision {
            let condition = if *c == ledger::andon_rule::Condition::Authorization {
                "authorization".to_string()
            } else {
                c.token().to_string()
            };
            events.push(Event::Halted { gap: g.id.clone(), condition, reason: why.clone() });
            notes.push(format!("gap `{}`: {} ({why})", g.id, c.token()));
        } else {
            notes.push(format!("gap `{}`: proven by {}; the cursor advances", g.id, ev.approach));
        }
        events.push(Event::PassClosed {
            pass: state.passes + 1,
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
            events.extend(reopen_stale(
                &after,
                stream,
                surfaces,
                Some(g),
                cfg.settings.backtrack_depth.value,
                cfg.settings.thrash_threshold.value,
                notes,
            ));
        }
        ledger::append(dir, header, &events, now)?;
        let _ = std::fs::remove_file(&file);
    }
    Ok(())
}
