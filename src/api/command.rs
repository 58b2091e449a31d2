//! The front door: one function per command, for every front end. Each takes the command's
//! inputs, loads the settings, brings the index up to date where the command needs it, runs the
//! library, writes the command's reports under `output_dir` (their names are here and nowhere
//! else), and returns an [`Outcome`]: the typed result, the exit code it gives, the notes a
//! person should see, and the files written. The command line parses and renders around it; the
//! MCP server deserializes and serializes around it; neither holds a default, a file name or a
//! sequence of library calls of its own.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::structure::{self, Answered, BudgetFlags, FactList, IndexCheck, Initialized};
use super::work::{self, Audited, Decided, LedgerCheck, LedgerRepair, LoopStep, Preflight, Proposed, Status};
use super::work::{RequestVerified, Verified, VerifyAsk, VerifyResult};
use super::{Error, Freshness, WalkOverrides};
use crate::check::CheckReport;
use crate::config::Config;
use crate::exit::Exit;
use crate::index::{Index, IndexOptions, IndexReport};
use crate::ops::{StreamReport, WhyReport};

/// The loop's pass budget when the caller names none.
pub const DEFAULT_MAX_PASSES: u32 = 100;

/// What a command did.
pub struct Outcome<T> {
    /// The command's typed result: its serde serialization is the JSON document.
    pub result: T,
    /// The exit code the command gives.
    pub exit: Exit,
    /// What else a person should know (a report that could not be written, a warning).
    pub notes: Vec<String>,
    /// The files the command wrote, in the order it wrote them.
    pub written: Vec<PathBuf>,
}

impl<T> Outcome<T> {
    fn new(result: T, exit: Exit) -> Outcome<T> {
        Outcome { result, exit, notes: Vec::new(), written: Vec::new() }
    }
}

/// How a front end hears about long work while a command runs.
pub trait Progress: Sync {
    /// `done` of `total` files parsed.
    fn files(&self, _done: u64, _total: u64) {}
    /// A phase of the work starts.
    fn phase(&self, _what: &str) {}
    /// A warning a person should see before the command ends (a query that may run long).
    fn warning(&self, _what: &str) {}
}

/// No progress is reported.
pub struct Quiet;
impl Progress for Quiet {}

/// A front end's [`Progress`] as an index run reports to it: files parsed, and a wait for another
/// writer as a warning.
pub struct Watched<'a>(pub &'a dyn Progress);

impl crate::index::Watch for Watched<'_> {
    fn files(&self, done: u64, total: u64) {
        self.0.files(done, total)
    }

    fn waiting(&self, what: &str) {
        self.0.warning(what)
    }
}

/// The human reports a command writes beside its JSON sidecar: rendered by the presentation
/// layer, written here.
pub enum Human<'a> {
    Loop(&'a LoopStep),
    Status(&'a Status),
    Preflight(&'a Preflight),
    Proposal(&'a Proposed),
    Evidence(&'a Verified),
}

/// The presentation layer, as the commands that write a human report need it.
pub trait Render {
    fn human(&self, report: Human<'_>, w: &mut dyn Write) -> std::io::Result<()>;
}

/// The repository a command works on and how the front end shapes its walk.
pub struct Repo<'a> {
    pub root: &'a Path,
    pub walk: &'a WalkOverrides,
    pub progress: &'a dyn Progress,
}

impl Repo<'_> {
    fn options(&self, rebuild: bool) -> Result<IndexOptions, Error> {
        super::index_options(self.root, self.walk, rebuild)
    }

    /// The fresh index (or, with `require`, the stored one if it is fresh).
    fn index(&self, require: bool) -> Result<Index, Error> {
        let opts = self.options(false)?;
        let files = Watched(self.progress);
        let how = if require { Freshness::Require } else { Freshness::Update(&files) };
        super::fresh_index(self.root, &opts, how)
    }
}

/// `andon index`.
pub fn index(repo: &Repo, rebuild: bool) -> Result<Outcome<IndexReport>, Error> {
    let opts = repo.options(rebuild)?;
    let files = Watched(repo.progress);
    Ok(Outcome::new(structure::index(repo.root, &opts, &files)?, Exit::Success))
}

/// `andon index --check`: stale is exit 3.
pub fn index_check(repo: &Repo) -> Result<Outcome<IndexCheck>, Error> {
    let check = structure::index_check(repo.root, &repo.options(false)?)?;
    let exit = if check.fresh() { Exit::Success } else { Exit::StaleIndex };
    Ok(Outcome::new(check, exit))
}

/// `andon facts`: of one relation and one file when named.
pub fn facts(repo: &Repo, relation: Option<&str>, file: Option<&str>) -> Result<Outcome<FactList>, Error> {
    if let Some(r) = relation {
        structure::relation(r)?;
    }
    let opts = repo.options(false)?;
    let files = Watched(repo.progress);
    let list = structure::facts(repo.root, &opts, Freshness::Update(&files), relation, file)?;
    Ok(Outcome::new(list, Exit::Success))
}

/// `andon facts --schema`: the relations of the built-in rules.
pub fn facts_schema() -> Outcome<structure::Schema> {
    Outcome::new(structure::Schema, Exit::Success)
}

/// What `andon query` is asked.
pub struct QueryAsk {
    /// The rule body to answer.
    pub query: String,
    /// Rule files as (name, text), read by the front end.
    pub rules: Vec<(String, String)>,
    pub explain: bool,
    pub budget: BudgetFlags,
    /// Refuse a stale index instead of updating it.
    pub no_index: bool,
}

/// `andon query --schema`: the relations a query can name with these rule files.
pub fn query_schema(query: Option<&str>, rules: &[(String, String)]) -> Result<Outcome<structure::QuerySchema>, Error> {
    let prepared = structure::prepare(query.unwrap_or("File(_, _)"), rules)?;
    Ok(Outcome::new(structure::QuerySchema::of(&prepared.prog), Exit::Success))
}

/// `andon query`: the answers, with their explanation when asked (the first
/// [`structure::EXPLAIN_LIMIT`]).
pub fn query(repo: &Repo, ask: &QueryAsk) -> Result<Outcome<Answered>, Error> {
    let prepared = structure::prepare(&ask.query, &ask.rules)?;
    let opts = repo.options(false)?;
    let files = Watched(repo.progress);
    let how = if ask.no_index { Freshness::Require } else { Freshness::Update(&files) };
    let stamp = super::freshen(repo.root, &opts, how)?;
    // before the evaluation, which a cartesian product may take to its budget
    for w in prepared.cartesian_products() {
        repo.progress.warning(&w.to_string());
    }
    let load = || super::load_fresh(repo.root, &opts, how).map_err(Into::into);
    let facts = crate::datalog::Facts::Stored { stamp, load: &load };
    let answered = structure::query(repo.root, &facts, &prepared, ask.explain, &ask.budget)?;
    let mut out = Outcome::new(answered, Exit::Success);
    let n = out.result.answer.rows.len();
    if ask.explain && n > structure::EXPLAIN_LIMIT {
        out.notes.push(format!("explaining the first {} of {n} answers", structure::EXPLAIN_LIMIT));
    }
    Ok(out)
}

/// `andon stream`; `within` a stage, also the modules inside it.
pub fn stream(repo: &Repo, within: Option<&str>) -> Result<Outcome<StreamReport>, Error> {
    let idx = repo.index(false)?;
    let mut r = structure::stream(&idx)?;
    if let Some(stage) = within {
        r.within = Some(crate::check::inner::view(&idx, stage)?);
    }
    Ok(Outcome::new(r, Exit::Success))
}

/// `andon why`: no chain is a finding.
pub fn why(repo: &Repo, from: &str, to: &str) -> Result<Outcome<WhyReport>, Error> {
    let idx = repo.index(false)?;
    let r = structure::why(&idx, from, to)?;
    let exit = if r.chain.is_some() { Exit::Success } else { Exit::Findings };
    Ok(Outcome::new(r, exit))
}

/// What `andon check` is asked.
#[derive(Default)]
pub struct CheckAsk {
    /// Judge the contracts on this git revision too, marking findings new.
    pub base: Option<String>,
    pub budget: BudgetFlags,
    /// Refuse a stale index instead of updating it.
    pub no_index: bool,
    /// Also derive the stream (the pull-request summary's chart).
    pub with_stream: bool,
}

/// `andon check` and, when asked, the stream of the same index.
pub struct Checked {
    pub report: CheckReport,
    pub stream: Option<StreamReport>,
}

/// `andon check`: a stale exception is a configuration to fix (2), a blocking finding fails the
/// gate (1).
pub fn check(repo: &Repo, ask: &CheckAsk) -> Result<Outcome<Checked>, Error> {
    let opts = repo.options(false)?;
    let cfg = super::config(repo.root)?;
    let idx = repo.index(ask.no_index)?;
    if let Some(base) = &ask.base {
        repo.progress.phase(&format!("judging the contracts on the base revision {base}"));
    }
    let report = structure::check(repo.root, &cfg, &opts, &idx, ask.base.as_deref(), &ask.budget)?;
    let stream = if ask.with_stream { structure::stream(&idx).ok() } else { None };
    let exit = if !report.stale_exceptions.is_empty() || !report.unjudged.is_empty() {
        Exit::Error
    } else if report.blocking() > 0 {
        Exit::Findings
    } else {
        Exit::Success
    };
    Ok(Outcome::new(Checked { report, stream }, exit))
}

/// `andon config show`.
pub fn config_show(root: &Path) -> Result<Outcome<Config>, Error> {
    Ok(Outcome::new(structure::config_show(root)?, Exit::Success))
}

/// `andon init`: the drawn settings, written unless `print`.
pub fn init(repo: &Repo, print: bool) -> Result<Outcome<Initialized>, Error> {
    let files = Watched(repo.progress);
    let r = structure::init(repo.root, repo.walk, print, &files)?;
    Ok(Outcome::new(r, Exit::Success))
}

/// What `andon report` draws: the stream, the check when there are contracts, the status board.
pub struct ReportInputs {
    pub name: String,
    pub stream: StreamReport,
    pub check: Option<CheckReport>,
    pub status: Result<Status, Error>,
    /// The modules inside each stage of two or more (`andon stream --within`), opened on the page.
    pub modules: Vec<crate::ops::WithinView>,
    /// Where the page goes.
    pub file: PathBuf,
}

/// `andon report`: what the page shows and where it is written (the front end renders it and
/// hands the bytes to [`write_report`]).
pub fn report(repo: &Repo, output: Option<&Path>) -> Result<Outcome<ReportInputs>, Error> {
    let cfg = super::config(repo.root)?;
    let opts = repo.options(false)?;
    let idx = repo.index(false)?;
    let stream = structure::stream(&idx)?;
    let check = if cfg.contracts.is_empty() {
        None
    } else {
        Some(structure::check(repo.root, &cfg, &opts, &idx, None, &BudgetFlags::default())?)
    };
    let root = std::fs::canonicalize(repo.root).map_err(|e| Error::io(repo.root, "", e))?;
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let status = work::status(repo.root);
    let file = output.map(Path::to_path_buf).unwrap_or_else(|| cfg.settings.output_path(repo.root).join("report.html"));
    let modules = crate::check::inner::views(&idx)?;
    Ok(Outcome::new(ReportInputs { name, stream, check, status, modules, file }, Exit::Success))
}

/// Writes the rendered page of [`report`] whole.
pub fn write_report(file: &Path, bytes: &[u8]) -> Result<(), Error> {
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "", e))?;
    }
    crate::text::write_named(file, bytes).map_err(|e| Error::io(file, "cannot write the report: ", e))?;
    Ok(())
}

/// `andon status`: the board, with `status.md` and `status.json` under `output_dir`.
pub fn status(root: &Path, render: &dyn Render) -> Result<Outcome<Status>, Error> {
    let status = work::status(root)?;
    let cfg = super::config(root)?;
    // the halt the loop stands on, with its code, as `andon loop` reports it
    let exit = status.board.as_ref().and_then(|b| b.halt).map_or(Exit::Success, Exit::halt);
    let mut out = Outcome::new(status, exit);
    reports(&mut out, &cfg.settings.output_path(root), "status.md", "status.json", render, |s| Human::Status(s));
    Ok(out)
}

/// `andon loop`: one step, with `loop.txt` and `loop.json` under `output_dir`.
pub fn loop_step(
    repo: &Repo,
    max_passes: Option<u32>,
    slow: bool,
    render: &dyn Render,
) -> Result<Outcome<LoopStep>, Error> {
    let cfg = super::config(repo.root)?;
    work::loop_preconditions(repo.root, &cfg)?;
    let idx = repo.index(false)?;
    let step = work::loop_step(repo.root, &cfg, &idx, max_passes.unwrap_or(DEFAULT_MAX_PASSES), slow)?;
    let exit = Exit::of_step(step.session.verdict());
    let mut out = Outcome::new(step, exit);
    reports(&mut out, &cfg.settings.output_path(repo.root), "loop.txt", "loop.json", render, |s| Human::Loop(s));
    Ok(out)
}

/// `andon preflight`, with the executable search path `path_var` for the external tools, and
/// `preflight.md` and `preflight.json` under `output_dir`. A capability not ready is a finding.
pub fn preflight(
    repo: &Repo,
    path_var: Option<&std::ffi::OsStr>,
    render: &dyn Render,
) -> Result<Outcome<Preflight>, Error> {
    let cfg = super::config(repo.root)?;
    let idx = repo.index(false).ok();
    let p = work::preflight(repo.root, &cfg, idx.as_ref(), path_var);
    let exit = if p.worst() == crate::preflight::Readiness::NotReady { Exit::Findings } else { Exit::Success };
    let mut out = Outcome::new(p, exit);
    reports(&mut out, &cfg.settings.output_path(repo.root), "preflight.md", "preflight.json", render, |p| {
        Human::Preflight(p)
    });
    Ok(out)
}

/// `andon propose --packet GAP`.
pub fn packet(root: &Path, gap: &str) -> Result<Outcome<crate::andon_loop::packet::Packet>, Error> {
    let cfg = super::config(root)?;
    Ok(Outcome::new(work::packet(root, &cfg, gap)?, Exit::Success))
}

/// `andon propose`: written 0; another gap than the loop's picked one is a usage error; an entry
/// gate awaits a person; any other refusal is a finding. The proposal's human report is written
/// beside it.
pub fn propose(
    root: &Path,
    p: crate::andon_loop::proposal::Proposal,
    render: &dyn Render,
) -> Result<Outcome<Proposed>, Error> {
    let cfg = super::config(root)?;
    let proposed = work::propose(root, &cfg, p)?;
    let exit = match &proposed {
        Proposed::Refused { picked: Some(_), .. } => Exit::Error,
        Proposed::Refused { gated: true, .. } => Exit::halt(crate::ledger::andon_rule::Condition::EntryGate),
        Proposed::Refused { .. } => Exit::Findings,
        Proposed::Written { .. } => Exit::Success,
    };
    let file = match &proposed {
        Proposed::Written { file, .. } => Some(file.with_extension("md")),
        Proposed::Refused { .. } => None,
    };
    let mut out = Outcome::new((), exit);
    if let Some(file) = file {
        human_report(&mut out, &file, render, Human::Proposal(&proposed));
    }
    Ok(Outcome { result: proposed, exit, notes: out.notes, written: out.written })
}

/// `andon verify` (a gap's applied fix, or a `{wire, contract, fixDiff}` request). The gap's
/// evidence report is written beside its artifact.
pub fn verify(
    repo: &Repo,
    ask: &VerifyAsk,
    request: Option<&str>,
    render: &dyn Render,
) -> Result<Outcome<VerifyResult>, Error> {
    let cfg = super::config(repo.root)?;
    // a bad approach is refused before any work
    work::approach(ask.approach.as_deref())?;
    let request = match request.map(work::parse_request) {
        // a bad request is refused before any work
        Some(Err(refused)) => {
            let exit = request_exit(&refused);
            return Ok(Outcome::new(VerifyResult::Request(refused), exit));
        }
        Some(Ok(r)) => Some(r),
        None => None,
    };
    let idx = repo.index(false)?;
    let mut result = work::verify(repo.root, &cfg, &idx, ask, request)?;
    let mut out = match &mut result {
        VerifyResult::Request(r) => Outcome::new((), request_exit(r)),
        VerifyResult::Gap(v) => {
            use crate::andon_loop::VerifyStop;
            // a halt for authority is recorded when it happens: loop and status stand on it
            if let Err(VerifyStop::Authorization(_, why) | VerifyStop::Judged(_, why)) = &v.result {
                crate::andon_loop::record_authorization_halt(repo.root, &cfg, &v.gap, why, super::now())
                    .map_err(Error::from)?;
            }
            // so is the proof itself, under the ledger's lock: a halt (refuted, a hold, unproven,
            // undecided, blocked) stands from now on, and a proof closes the gap
            if v.result.is_ok() {
                let recorded = crate::andon_loop::record_verified(repo.root, &cfg, &idx, &v.gap, super::now())
                    .map_err(Error::from)?;
                v.recorded = Some(recorded);
            }
            let mut out = Outcome::new((), verified_exit(v));
            out.notes.extend(v.recorded.as_mut().map(|r| std::mem::take(&mut r.notes)).unwrap_or_default());
            if let Some(file) = evidence_file(&cfg, repo.root, v) {
                human_report(&mut out, &file, render, Human::Evidence(v));
            }
            out
        }
    };
    Ok(Outcome { result, exit: out.exit, notes: std::mem::take(&mut out.notes), written: out.written })
}

/// Where a gap's evidence report goes: beside its artifact; none when verify stopped before
/// proving.
fn evidence_file(cfg: &Config, root: &Path, v: &Verified) -> Option<PathBuf> {
    let o = v.result.as_ref().ok()?;
    Some(crate::andon_loop::fix::artifact_path(&cfg.settings.output_path(root), &o.gap).with_extension("md"))
}

/// The exit code of `andon verify --gap`: the halt condition its evidence stands on.
fn verified_exit(v: &Verified) -> Exit {
    use crate::andon_loop::VerifyStop;
    use crate::ledger::andon_rule::Condition;
    match &v.result {
        // the halt the ledger records stands over what the checks alone showed
        Ok(_) if let Some(c) = v.recorded.as_ref().and_then(|r| r.halt) => Exit::halt(c),
        Ok(o) => work::condition_of(&o.evidence).map_or(Exit::Success, Exit::halt),
        Err(VerifyStop::Scope(_)) => Exit::Findings,
        Err(VerifyStop::Authorization(..) | VerifyStop::Judged(..)) => Exit::halt(Condition::Authorization),
        Err(VerifyStop::Refused(_)) => Exit::Error,
        Err(VerifyStop::Blocked(_)) => Exit::halt(Condition::BlockedByEnvironment),
    }
}

/// The exit code of `andon verify --request`.
fn request_exit(r: &RequestVerified) -> Exit {
    use crate::andon_loop::request::Stop;
    match &r.result {
        Ok(o) => o.condition.map_or(Exit::Success, Exit::halt),
        Err(Stop::Scope(..)) => Exit::Findings,
        Err(Stop::Refused(_)) => Exit::Error,
    }
}

/// `andon verify --audit`: strong 0, weak 1, inconclusive needs a person.
pub fn audit(
    root: &Path,
    evidence: &str,
    approach: Option<&str>,
    path_var: Option<&std::ffi::OsStr>,
) -> Result<Outcome<Audited>, Error> {
    let cfg = super::config(root)?;
    // a bad approach is refused before any work, an audit's included
    work::approach(approach)?;
    let audited = work::audit(root, &cfg, evidence, path_var);
    let exit = match &audited.result {
        Ok(o) if o.strength == "strong" => Exit::Success,
        Ok(o) if o.strength == "weak" => Exit::Findings,
        Ok(_) => Exit::halt(crate::ledger::andon_rule::Condition::NeedsHuman),
        Err(_) => Exit::Error,
    };
    Ok(Outcome::new(audited, exit))
}

/// A person's decision (authorize, defer, skip, confirm, override): a refusal is a finding; a
/// decision no person stood behind (no terminal, `--unattended`) could not run (exit 2).
pub fn decide(
    root: &Path,
    gap: &str,
    d: &crate::andon_loop::Decision,
    presence: &crate::andon_loop::Presence,
) -> Result<Outcome<Decided>, Error> {
    let decided = work::decide(root, gap, d, presence)?;
    let exit = match decided {
        Decided::Recorded(_) => Exit::Success,
        Decided::Refused(_) => Exit::Findings,
        // no person stood behind it: it could not run here
        Decided::Unwitnessed(_) => Exit::Error,
    };
    Ok(Outcome::new(decided, exit))
}

/// `andon ledger check`: an invalid or stale ledger is a finding.
pub fn ledger_check(root: &Path) -> Result<Outcome<LedgerCheck>, Error> {
    let check = work::ledger_check(root)?;
    let exit = if matches!(check.outcome(), "invalid" | "stale") { Exit::Findings } else { Exit::Success };
    Ok(Outcome::new(check, exit))
}

/// `andon ledger repair`: a refusal is a finding.
pub fn ledger_repair(root: &Path) -> Result<Outcome<LedgerRepair>, Error> {
    let repair = work::ledger_repair(root)?;
    let exit = if repair.result.is_ok() { Exit::Success } else { Exit::Findings };
    Ok(Outcome::new(repair, exit))
}

/// Writes a command's human report and its JSON sidecar under `out_dir`, whole, through a
/// rename; a failure is a note of the outcome, since the command's result does not depend on
/// them.
fn reports<T: serde::Serialize>(
    out: &mut Outcome<T>,
    out_dir: &Path,
    human_name: &str,
    sidecar_name: &str,
    render: &dyn Render,
    human: for<'h> fn(&'h T) -> Human<'h>,
) {
    let mut text = Vec::new();
    let written = std::fs::create_dir_all(out_dir)
        .map_err(|e| Error::io(out_dir, "", e))
        .and_then(|_| render.human(human(&out.result), &mut text).map_err(|e| Error::io(out_dir, "", e)))
        .and_then(|_| atomic(&out_dir.join(human_name), &text))
        .and_then(|_| {
            let doc = serde_json::to_string_pretty(&out.result).expect("a document serializes");
            atomic(&out_dir.join(sidecar_name), crate::text::json(&doc).as_bytes())
        });
    match written {
        Ok(()) => out.written.extend([out_dir.join(human_name), out_dir.join(sidecar_name)]),
        Err(e) => out.notes.push(format!("the report was not written under {}: {e}", out_dir.display())),
    }
}

/// Writes one human report at `file`; a failure is a note of the outcome.
fn human_report(out: &mut Outcome<()>, file: &Path, render: &dyn Render, human: Human<'_>) {
    let mut text = Vec::new();
    let written = render.human(human, &mut text).map_err(|e| Error::io(file, "", e)).and_then(|_| atomic(file, &text));
    match written {
        Ok(()) => out.written.push(file.to_path_buf()),
        Err(e) => out.notes.push(e.to_string()),
    }
}

fn atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    crate::text::write_atomic(path, bytes).map_err(|e| Error::io(path, "cannot write the report: ", e))
}
