//! The loop (R27, R35–R37, R48–R50, R61–R65, R117): one step detects or resumes the
//! stream, scans the cursor's stage and its outgoing wire for gaps, records the new ones, picks
//! one by priority naming the rule that decided, and says what is needed next. A step reads the
//! state ([`step`]), plans every event and the next action without touching the file system
//! ([`plan`]), then records the plan in one write of the one writer. Proposals, verification and
//! a person's decisions live beside it.
//!
//! The modules, bottom-up (each imports only modules before it, never this file or a later one):
//! 1. [`error`], [`book`], [`packet`], [`surface`], [`own`] (andon's own paths and artifacts);
//! 2. [`verify`], in its own order (its module doc), up to `request`: `commands`, `diff`,
//!    `proof`, `fix`, `judged`, `audit`, `executed`, `red`, `routing`, `panel`, `prove`, `request`;
//! 3. [`recorded`]: what the ledger recorded for a gap (its proposal, judging, proposer);
//! 4. [`verify::applied`]: a loop gap's fix verified (it reads `recorded`, `surface`, `own`);
//! 5. [`scan`], [`ingest`], [`proposal`];
//! 6. [`plan`]; then this file, which runs a step and records a person's decisions.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{BlastRadius, Config};
use crate::datalog::{self, Store};
use crate::index::Index;
use crate::ledger::{self, Event, GapState, Header, LedgerError, State, Wire, WireStatus};
use crate::ops::StreamReport;

pub mod book;
pub mod decision;
pub mod error;
pub mod ingest;
pub mod judging;
pub mod own;
pub mod packet;
pub mod plan;
pub mod proposal;
pub mod recorded;
pub mod scan;
pub mod surface;
pub mod verify;

pub use decision::{Decision, Presence, record_decision, record_pending};
pub use error::Error;
pub(crate) use own::own_paths;
pub use own::pending;
pub use scan::{Candidate, estimated_radius, scan};
pub use verify::applied::{VerifyStop, verify};
use verify::applied::{checked_change, surface_change};
pub use verify::{applied, audit, commands, diff, fix, judged, prove, red, request};

pub use crate::status::{Action, Next};

/// The verdict of one step: the halt condition it stopped on, or what it waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepVerdict {
    /// The picked gap stands halted on this condition.
    Halted(ledger::andon_rule::Condition),
    AwaitingProposal,
    AwaitingVerification,
    /// A person decides.
    NeedsHuman,
    /// The code contradicts a wire the loop tried to prove: change the code.
    FixTheCode,
    /// The pass budget is spent.
    Budget,
    Hardened,
    Converged,
    /// Nothing stands in the way.
    Clear,
}

impl StepVerdict {
    /// The token of the `andon: verdict` line and of `verdict.outcome`.
    pub fn token(self) -> &'static str {
        match self {
            StepVerdict::Halted(c) => c.token(),
            StepVerdict::AwaitingProposal => "awaiting-proposal",
            StepVerdict::AwaitingVerification => "awaiting-verification",
            StepVerdict::NeedsHuman => "needs-human",
            StepVerdict::FixTheCode => "halted",
            StepVerdict::Budget => "budget",
            StepVerdict::Hardened => "hardened",
            StepVerdict::Converged => "converged",
            StepVerdict::Clear => "clear",
        }
    }
}

impl Session {
    /// The step's verdict: the halt condition of the picked gap, else what the next action waits for.
    pub fn verdict(&self) -> StepVerdict {
        if let Some(c) = self.halt {
            return StepVerdict::Halted(c);
        }
        match self.next.action {
            Action::Propose => StepVerdict::AwaitingProposal,
            Action::ApplyAndVerify => StepVerdict::AwaitingVerification,
            Action::Decide => StepVerdict::NeedsHuman,
            Action::FixTheCode => StepVerdict::FixTheCode,
            Action::Budget => StepVerdict::Budget,
            Action::Hardened => StepVerdict::Hardened,
            Action::Converged => StepVerdict::Converged,
            Action::Confirm | Action::None => StepVerdict::Clear,
        }
    }
}

/// One step of the loop, as it is reported.
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

/// What one step is asked to do.
#[derive(Clone, Copy, Debug)]
pub struct StepOptions {
    /// Seconds since the Unix epoch, stamped on every record.
    pub now: u64,
    /// The most passes the loop proves wires itself in this step.
    pub max_passes: u32,
    /// Run the slow lane of configured commands too.
    pub slow: bool,
    /// The ledger's last record at the end of the previous run (the report's delta starts after it).
    pub since: Option<u64>,
}

/// One step of the loop on the repository at `root`, on the fresh index `idx`: read the state,
/// plan, record the plan in one write, and report.
pub fn step(root: &Path, cfg: &Config, idx: &Index, opts: StepOptions) -> Result<Session, LedgerError> {
    if let Some(why) = ledger::leads_out(root, &cfg.settings) {
        return Err(LedgerError::Refused(why));
    }
    let dir = ledger::dir_of(root, &cfg.settings);
    // One step at a time per ledger: a second `andon loop` waits for the first to finish, so
    // two runs never record the same stage or gap twice.
    let mut step_lock = lock_steps(&dir)?;
    let read = read_state(root, cfg, idx, &dir)?;
    let before = ledger::load(&dir)?;
    check_identity(root, cfg, &dir, before.as_ref(), &read.header, &read.stream)?;
    let last_seq = before.as_ref().and_then(|(_, _, r)| r.last()).map_or(0, |r| r.seq);
    let since = last_step(&mut step_lock, last_seq).or(opts.since);
    let had_ledger = before.is_some();
    let (state, records) = before.map(|(_, s, r)| (s, r)).unwrap_or_default();
    let mut book = book::Book::new(state, records, opts.now);
    let out_dir = cfg.settings.output_path(root);
    let pending = plan::Pending {
        proposals: proposal::pending(&out_dir),
        evidence: pending(&out_dir.join("evidence")),
        audits: pending(&out_dir.join("audits")),
    };
    let read_as = contents(&pending);
    let mut pending = pending;
    let already = drop_taken(&mut pending, &read_as, &book.state.taken);
    let setup = setup_of(root, cfg, &read, opts, had_ledger);
    let mut repo = LiveRepo { root, cfg, idx, store: &read.store, stream: &read.stream };
    let mut planned = plan::plan(&setup, pending, &mut book, &mut repo)?;
    took(&mut book, &planned.consumed, &read_as)?;
    for f in &already {
        planned.notes.push(format!(
            "{}: already taken in by a run that stopped before it removed the file; removed, not recorded again",
            f.display()
        ));
    }
    planned.consumed.extend(already);
    // The step's records end with the last it wrote. With nothing to write, it still renders a
    // view an interrupted writer left behind the log.
    let (end, records) = if book.planned().is_empty() {
        ledger::refresh_view(&dir)?;
        (last_seq, std::mem::take(&mut book.records))
    } else {
        let end = ledger::append(&dir, &read.header, book.planned(), opts.now)?.last().map_or(last_seq, |r| r.seq);
        let mut records = ledger::load(&dir)?.map(|(_, _, r)| r).unwrap_or_default();
        records.retain(|r| r.seq <= end);
        (end, records)
    };
    mark_step(&mut step_lock, end);
    planned.notes.extend(own_notes(root, cfg, &dir, had_ledger));
    if let Some(stage) = &planned.cursor {
        planned.notes.extend(scan::advisories(&read.store, stage));
    }
    // An artifact is removed only as the step read it: one written again while the step ran (a
    // new proposal for the same gap) waits for the next step.
    for f in &planned.consumed {
        if read_as.get(f).is_some_and(|bytes| std::fs::read(f).ok().as_ref() == Some(bytes)) {
            let _ = std::fs::remove_file(f);
        }
    }
    Ok(session(planned, read.stream, &book.state, &records, since))
}

/// What the step says of andon's own files: the scratch ignore file it wrote, and, on the first
/// run (no ledger before it), that the ledger is meant to be committed.
fn own_notes(root: &Path, cfg: &Config, ledger_dir: &Path, had_ledger: bool) -> Vec<String> {
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/");
    let mut notes = Vec::new();
    if let Some(file) = own::ignore_scratch(root, &cfg.settings) {
        notes.push(format!(
            "wrote {}: what andon writes under {} is scratch, ignored by git",
            rel(&file),
            rel(file.parent().unwrap_or(root))
        ));
    }
    if !had_ledger {
        notes.push(format!(
            "the ledger {} is the loop's memory: commit it (with its view ledger.md)",
            rel(&ledger_dir.join("ledger.jsonl"))
        ));
    }
    notes
}

/// What a plan works from, fixed for the step, from what the step read.
fn setup_of<'a>(root: &Path, cfg: &'a Config, read: &'a Read, opts: StepOptions, had_ledger: bool) -> plan::Setup<'a> {
    plan::Setup {
        cfg,
        stream: &read.stream,
        brief: read.brief.as_ref(),
        surfaces: &read.surfaces,
        tree: &read.tree,
        config_path: config_path(root, cfg),
        brief_md: cfg
            .settings
            .self_assess_output_dir
            .value
            .join(crate::ingest::BRIEF_FILE)
            .to_string_lossy()
            .replace('\\', "/"),
        max_passes: opts.max_passes,
        slow: opts.slow,
        had_ledger,
    }
}

/// What `andon verify` recorded of its own proof, at once.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// What was recorded or refused.
    pub notes: Vec<String>,
    /// The gap stands halted after it: the next step `loop` and `status` give, and the halt.
    pub next: Option<crate::status::Next>,
    pub halt: Option<ledger::andon_rule::Condition>,
    /// The proof closed the gap.
    pub closed: bool,
}

/// Records at once, under the step lock, the verification of gap `gap` that `andon verify` just
/// left as an artifact: the loop's half of verify (the evidence re-checked on the fresh index and
/// the tree, the wire's status, the andon rule's decision, the pass), as a step would record it.
/// So a halt stands in the ledger from the moment verify finds it, and no evidence reaches the
/// ledger except by a verification andon ran: the loop takes no evidence file in.
pub fn record_verified(root: &Path, cfg: &Config, idx: &Index, gap: &str, now: u64) -> Result<Recorded, LedgerError> {
    if let Some(why) = ledger::leads_out(root, &cfg.settings) {
        return Err(LedgerError::Refused(why));
    }
    let dir = ledger::dir_of(root, &cfg.settings);
    let _step_lock = lock_steps(&dir)?;
    let file = verify::fix::artifact_path(&cfg.settings.output_path(root), gap);
    let evidence: Vec<_> =
        pending::<verify::fix::VerifyOutcome>(&file.parent().map(Path::to_path_buf).unwrap_or_default())
            .into_iter()
            .filter(|(f, o)| f == &file && o.is_ok())
            .collect();
    if evidence.is_empty() {
        return Ok(Recorded::default());
    }
    let read = read_state(root, cfg, idx, &dir)?;
    let Some((_, state, records)) = ledger::load(&dir)? else { return Ok(Recorded::default()) };
    let read_as = std::fs::read(&file).ok();
    let mut book = book::Book::new(state, records, now);
    let opts = StepOptions { now, max_passes: 0, slow: false, since: None };
    let setup = setup_of(root, cfg, &read, opts, true);
    let mut repo = LiveRepo { root, cfg, idx, store: &read.store, stream: &read.stream };
    let (notes, consumed) = plan::record_evidence(&setup, evidence, &mut book, &mut repo)?;
    if let Some(bytes) = &read_as {
        took(&mut book, &consumed, &BTreeMap::from([(file.clone(), bytes.clone())]))?;
    }
    if !book.planned().is_empty() {
        ledger::append(&dir, &read.header, book.planned(), now)?;
    }
    if consumed.contains(&file) && read_as.is_some() && std::fs::read(&file).ok() == read_as {
        let _ = std::fs::remove_file(&file);
    }
    let status = book.state.gaps.get(gap).map(|g| g.status);
    let halted = status.is_some_and(|s| !s.finished() && s != ledger::GapStatus::Proposed);
    let thrash = cfg.settings.thrash_threshold.value;
    let next = halted.then(|| crate::status::next_of_gap(&book.state, &book.records, gap, thrash)).flatten();
    let halt = crate::status::gap_halt(&book.state, &book.records, gap);
    Ok(Recorded { notes, next, halt, closed: status == Some(ledger::GapStatus::Closed) })
}

/// The ledger's last record when the previous step ended, as that step left it in the step lock
/// (read under the lock, so a step that ran meanwhile counts as the previous one); `None` when no
/// step left one, or one beyond the ledger (it was removed or repaired since).
fn last_step(lock: &mut std::fs::File, last_seq: u64) -> Option<u64> {
    use std::io::{Read, Seek};
    let mut text = String::new();
    lock.seek(std::io::SeekFrom::Start(0)).ok()?;
    lock.read_to_string(&mut text).ok()?;
    text.trim().parse().ok().filter(|s| *s <= last_seq)
}

/// Leaves `end`, the ledger's last record as this step leaves it, in the step lock for the next
/// step; a failure only makes the next step's delta longer.
fn mark_step(lock: &mut std::fs::File, end: u64) {
    use std::io::{Seek, Write};
    let _ = lock
        .set_len(0)
        .and_then(|_| lock.seek(std::io::SeekFrom::Start(0)))
        .and_then(|_| lock.write_all(format!("{end}\n").as_bytes()));
}

/// Takes out of `pending` every file whose bytes (as read, `read_as`) a write already took in
/// (`taken`): a run killed after its write and before it removed its inputs. Returns those files.
fn drop_taken(
    pending: &mut plan::Pending,
    read_as: &BTreeMap<std::path::PathBuf, Vec<u8>>,
    taken: &std::collections::BTreeSet<String>,
) -> Vec<std::path::PathBuf> {
    let is_taken =
        |f: &std::path::PathBuf| read_as.get(f).is_some_and(|b| taken.contains(&ledger::chain::input_digest(b)));
    let mut out = Vec::new();
    let mut keep = |f: &std::path::PathBuf| {
        if is_taken(f) {
            out.push(f.clone());
            false
        } else {
            true
        }
    };
    pending.proposals.retain(|(f, _)| keep(f));
    pending.evidence.retain(|(f, _)| keep(f));
    pending.audits.retain(|(f, _)| keep(f));
    out
}

/// Plans, with the events a step planned from the input files `consumed` (their bytes as read,
/// `read_as`), the record of their digests: in the same write, so an input is taken in once.
fn took(
    book: &mut book::Book,
    consumed: &[std::path::PathBuf],
    read_as: &BTreeMap<std::path::PathBuf, Vec<u8>>,
) -> Result<(), LedgerError> {
    if book.planned().is_empty() {
        return Ok(());
    }
    let mut digests: Vec<String> =
        consumed.iter().filter_map(|f| read_as.get(f)).map(|b| ledger::chain::input_digest(b)).collect();
    digests.sort();
    digests.dedup();
    if digests.is_empty() {
        return Ok(());
    }
    book.record(&[Event::InputsTaken { digests }])
}

/// The bytes of every pending artifact file, as the step read them.
fn contents(p: &plan::Pending) -> BTreeMap<std::path::PathBuf, Vec<u8>> {
    let files = p
        .proposals
        .iter()
        .map(|(f, _)| f)
        .chain(p.evidence.iter().map(|(f, _)| f))
        .chain(p.audits.iter().map(|(f, _)| f));
    files.filter_map(|f| Some((f.clone(), std::fs::read(f).ok()?))).collect()
}

/// Takes the step lock of the ledger in `dir`, held until the returned file is dropped.
fn lock_steps(dir: &Path) -> Result<std::fs::File, LedgerError> {
    std::fs::create_dir_all(dir).map_err(|e| LedgerError::Io(format!("{}: {e}", dir.display())))?;
    let lock_path = dir.join("step.lock");
    let step_lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&lock_path)
        .map_err(|e| LedgerError::Io(format!("{}: {e}", lock_path.display())))?;
    step_lock.lock().map_err(|e| LedgerError::Io(format!("{}: {e}", lock_path.display())))?;
    Ok(step_lock)
}

/// What a step reads before it plans: the brief (ingest mode), the stream, the header this andon
/// writes, the derived relations the scan reads, every wire's surface and the tree's fingerprint.
struct Read {
    brief: Option<crate::ingest::Brief>,
    stream: StreamReport,
    header: Header,
    store: Store,
    surfaces: BTreeMap<Wire, surface::WireSurface>,
    tree: String,
}

/// Reads what the step plans from (see [`Read`]); a configured command naming a stage the stream
/// does not have is a configuration error.
fn read_state(root: &Path, cfg: &Config, idx: &Index, _dir: &Path) -> Result<Read, LedgerError> {
    // Ingest mode takes the stream and the gaps from the brief; an absent brief stops here (R52).
    let brief = match cfg.settings.gap_source.value {
        crate::config::GapSource::Ingest => Some(
            ingest::load_brief(root, &cfg.settings.self_assess_output_dir.value)
                .map_err(|e| LedgerError::Refused(e.to_string()))?,
        ),
        crate::config::GapSource::SelfScan => None,
    };
    let stream = match &brief {
        Some(b) => ingest::stream(b),
        None => lone_stage_contract(crate::ops::stream(idx).map_err(|e| LedgerError::Io(e.to_string()))?),
    };
    check_command_stages(cfg, &stream)?;
    let repo = std::fs::canonicalize(root)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "repository".into());
    let header = Header {
        andon_ledger: ledger::FORMAT,
        andon: env!("CARGO_PKG_VERSION").into(),
        rules: format!("{:016x}", crate::facts::EXTRACT_DIGEST),
        repo,
        root_commit: ledger::repo_identity(root, ""),
    };
    let prog = datalog::builtin_program();
    let store = datalog::kept::derive(&prog, idx, &scan::VIEW, true, datalog::Budget::UNLIMITED)
        .map_err(|e| LedgerError::Io(e.to_string()))?;
    let wires: Vec<Wire> =
        stream.wires.iter().map(|w| Wire { producer: w.producer.clone(), consumer: w.consumer.clone() }).collect();
    let surfaces = surface::surfaces(root, idx, &store, &wires);
    Ok(Read { brief, stream, header, store, surfaces, tree: tree_fingerprint(idx) })
}

/// A stream of one stage and no wire (R31) is valid, and the loop still has a contract to prove:
/// the stage's own wire (`S -> S`), whose surface is the stage's public API. Its proof goes stale
/// when that API changes, as a wire's does; the first cycle is not hardened until it is proven.
fn lone_stage_contract(mut stream: StreamReport) -> StreamReport {
    if let ([stage], []) = (stream.stages.as_slice(), stream.wires.as_slice()) {
        stream.wires.push(crate::ops::WireRow {
            producer: stage.name.clone(),
            consumer: stage.name.clone(),
            imports: 0,
            symbols: Vec::new(),
            confidence: crate::facts::vocab::Confidence::Contract,
            kinds: vec!["public-api".into()],
            used_for: crate::ops::WireUse::RunTime,
        });
    }
    stream
}

/// Every configured command names only stages the stream has.
fn check_command_stages(cfg: &Config, stream: &StreamReport) -> Result<(), LedgerError> {
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
    Ok(())
}

/// A ledger outside the repository may be shared by mistake: it must be this repository's. Its
/// identity is never the directory's name alone, which a rename or a move changes: the ledger is
/// another repository's only when the name it was created with differs and no stage it recorded
/// is in this repository's stream (same name, same root). One inside the repository belongs to
/// it by place (a clone, a rename or a move carries it along).
fn check_identity(
    root: &Path,
    cfg: &Config,
    dir: &Path,
    before: Option<&(Header, State, Vec<ledger::Record>)>,
    header: &Header,
    stream: &StreamReport,
) -> Result<(), LedgerError> {
    let outside = cfg.settings.ledger_dir.value.is_absolute()
        && std::fs::canonicalize(dir).ok().zip(std::fs::canonicalize(root).ok()).is_none_or(|(d, r)| !d.starts_with(r));
    let Some((h, state, _)) = before.filter(|_| outside) else { return Ok(()) };
    let shares_a_stage =
        stream.stages.iter().any(|s| state.stages.get(&s.name).is_some_and(|recorded| recorded.root == s.root));
    if h.repo == header.repo || shares_a_stage {
        return Ok(());
    }
    Err(LedgerError::Refused(format!(
        "the ledger in {} belongs to repository `{}`, not `{}` (no stage the ledger recorded is in this repository): set `repo_id` in each repository sharing this `ledger_dir` (under git its root commit names it), or give each its own `ledger_dir`",
        dir.display(),
        h.repo,
        header.repo
    )))
}

/// The configuration file, repo-relative (`andon.toml` when there is none).
fn config_path(root: &Path, cfg: &Config) -> String {
    cfg.source
        .as_ref()
        .map(|p| p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|| "andon.toml".into())
}

/// The report of a step: the plan, with the wires' statuses and counters of the state it left
/// and the ledger's delta since the previous run.
fn session(
    plan: plan::Plan,
    stream: StreamReport,
    state: &State,
    records: &[ledger::Record],
    since: Option<u64>,
) -> Session {
    let wires: Vec<(Wire, &'static str)> = stream
        .wires
        .iter()
        .map(|w| {
            let wire = Wire { producer: w.producer.clone(), consumer: w.consumer.clone() };
            let st = crate::status::wire_status_name(state, &wire);
            (wire, st)
        })
        .collect();
    Session {
        stream_changed: plan.stream_changed,
        stream,
        cursor: plan.cursor,
        found: plan.found,
        recorded: plan.recorded,
        picked: plan.picked,
        next: plan.next,
        passes: state.passes,
        cycles: state.cycles,
        wires,
        constraint: plan.constraint,
        notes: plan.notes,
        delta: delta(records, since.unwrap_or(0)),
        ledger_seq: records.last().map_or(0, |r| r.seq),
        halt: plan.halt,
    }
}

/// The repository as the plan sees it: the fresh index, its derived relations, the working tree
/// and the configured commands.
struct LiveRepo<'a> {
    root: &'a Path,
    cfg: &'a Config,
    idx: &'a Index,
    store: &'a Store,
    stream: &'a StreamReport,
}

impl plan::PlanPort for LiveRepo<'_> {
    fn scan(&self, state: &State, stage: &str) -> Vec<Candidate> {
        scan::scan(self.store, self.stream, state, stage)
    }

    fn structural(&self, gap: &GapState) -> Result<fix::StructuralProof, Error> {
        fix::structural(self.idx, gap)
    }

    fn run_command(&mut self, spec: &commands::CommandSpec, fingerprint: &str) -> commands::Run {
        commands::run(self.root, &self.cfg.settings.output_dir.value, spec, fingerprint)
    }

    fn last_run(&self, name: &str) -> Option<commands::Run> {
        commands::last(self.root, &self.cfg.settings.output_dir.value, name)
    }

    fn output_of(&self, run: &commands::Run) -> String {
        std::fs::read(self.root.join(&run.artifact))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    fn applied_change(
        &self,
        base: &str,
        write_set: &[String],
    ) -> Result<Result<(fix::AppliedChange, BlastRadius, String), VerifyStop>, Error> {
        Ok(checked_change(self.root, self.cfg, base, write_set, None, None)?.map(|c| (c.change, c.radius, c.because)))
    }

    fn surface_changed(&self, state: &State) -> Result<bool, Error> {
        Ok(surface_change(self.root, self.idx, state)?.is_some())
    }

    fn judging(&self, state: &State, records: &[ledger::Record]) -> judging::Drift {
        judging::drift(self.root, self.cfg, state, records)
    }
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

/// The ledger's records after `since`, summarized: how many events of each kind, and every wire
/// status change.
fn delta(records: &[ledger::Record], since: u64) -> Vec<String> {
    let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.seq > since) {
        let k = match &r.event {
            Event::StageRecorded { .. } => "stage recorded",
            Event::GapOpened { .. } => "gap opened",
            Event::GapRestated { .. } => "gap restated",
            Event::ProposalRecorded { .. } => "proposal recorded",
            Event::Halted { .. } => "halt",
            Event::AuthorizationRaised { .. } => "authority raised",
            Event::Overridden { .. } => "override",
            Event::GapDeferred { .. } => "gap deferred",
            Event::GapSkipped { .. } => "gap skipped",
            Event::DecisionPending { .. } => "decision pending",
            Event::LedgerChained { .. } => "ledger chained",
            Event::InputsTaken { .. } => "inputs taken",
            Event::BaseRecorded { .. } => "base recorded",
            Event::JudgingChanged { .. } => "judging change held",
            Event::JudgingAccepted { .. } => "judging change accepted",
            Event::JudgingUndone { .. } => "judging change undone",
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
            Event::GapVanished { .. } => "gap vanished",
            Event::SubCycle { .. } => "sub-cycle",
            Event::Thrashing { .. } => "thrashing",
            Event::PassClosed { .. } => "pass closed",
            Event::CycleConverged { .. } => "cycle converged",
        };
        *kinds.entry(k).or_default() += 1;
    }
    let mut lines: Vec<String> = kinds.into_iter().map(|(k, n)| format!("{n} × {k}")).collect();
    lines.extend(out);
    lines
}

/// Records that `andon verify` stopped gap `gap` for a person's authority (`why`), under the
/// ledger's lock, so `loop` and `status` stand on it (exit 11) until a person raises the
/// authority for the diff: re-running them cannot talk the gap past it. Nothing is recorded for a
/// gap the ledger does not hold in progress, or already holds halted for authority.
pub fn record_authorization_halt(root: &Path, cfg: &Config, gap: &str, why: &str, now: u64) -> Result<(), LedgerError> {
    let dir = ledger::dir_of(root, &cfg.settings);
    let Some((header, state, _)) = ledger::load(&dir)? else { return Ok(()) };
    if state.gaps.get(gap).is_none_or(|g| g.status != ledger::GapStatus::Proposed) {
        return Ok(());
    }
    let event = Event::Halted { gap: gap.into(), condition: "authorization".into(), reason: why.into() };
    ledger::append(&dir, &header, std::slice::from_ref(&event), now)?;
    Ok(())
}

/// The base a new proposal's fix is applied on: the tree fixes are judged from
/// ([`judging::base_of`]: the tree the loop last proved, or the base it recorded), whatever was
/// committed since, so the change judged is everything since; HEAD where the loop never ran (or
/// the base is no commit here); `None` outside git. A proven fix need not be committed.
pub fn proposal_base(root: &Path, cfg: &Config) -> Option<String> {
    let dir = ledger::dir_of(root, &cfg.settings);
    let base =
        ledger::load(&dir).ok().flatten().and_then(|(_, state, records)| judging::base_of(root, cfg, &state, &records));
    diff::proposal_base(root, base.as_deref())
}
